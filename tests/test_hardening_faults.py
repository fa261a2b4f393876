"""Fault injection: kill -9, ENOSPC, read-only, files vanishing mid-index, corrupt index, git states.

Each test checks afterwards that no Markdown byte was lost (only the bot's additions and moves to
the archive are allowed), that the index converges to the files, and that the next run succeeds.
The cases already covered in test_heartbeat.py / test_index.py / test_watch.py are not repeated;
these are the combinations. ``VAULT_TOOLS_LONG=1`` runs more seeds.
"""

from __future__ import annotations

import errno
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import HEARTBEAT_STEPS, WATCH_BATCHES, read_steps, wait_for
from test_heartbeat import MEMORY_EN, committed, make_vault
from test_heartbeat import config as hb_config

from vault_tools.cli import main as cli_main
from vault_tools.config import Config, load_config
from vault_tools.errors import GitError, LockedError
from vault_tools.heartbeat import run as heartbeat
from vault_tools.heartbeat.run import Options
from vault_tools.index import documents as index_documents
from vault_tools.index import manifest as index_manifest
from vault_tools.index import status as index_status
from vault_tools.index.index import Index
from vault_tools.notes import edit as note_edit
from vault_tools.notes import model as notes
from vault_tools.recall.recall import recall

LONG = os.environ.get("VAULT_TOOLS_LONG") == "1"
SEEDS = range(8) if LONG else range(2)
AS_OF_ARGS = ["--as-of", "2026-12-01"]
FAULTS: dict[str, int] = {}
BLOCK_ID = re.compile(r"\^([A-Za-z0-9-]+)\s*$")


def count(kind: str) -> None:
    FAULTS[kind] = FAULTS.get(kind, 0) + 1


# ---------------------------------------------------------------------------------------------
# Helpers


def snapshot(vault: Path) -> dict[str, bytes]:
    return {
        p.relative_to(vault).as_posix(): p.read_bytes()
        for p in vault.rglob("*.md")
        if ".git" not in p.parts and ".vault-tools" not in p.parts
    }


def assert_nothing_lost(vault: Path, before: dict[str, bytes]) -> None:
    """Daily notes keep every byte (appends allowed); MEMORY.md keeps every line or archives it."""
    after = snapshot(vault)
    archived = "".join(
        t.decode("utf-8", "replace") for r, t in after.items() if r.startswith("memory/archive/")
    )
    for rel, data in before.items():
        assert rel in after, f"{rel} disappeared"
        if rel == "MEMORY.md":
            now = after[rel].decode("utf-8")
            for line in data.decode("utf-8").splitlines():
                if not line.strip() or line in now:
                    continue
                block = BLOCK_ID.search(line)
                assert block and (block[1] in now or block[1] in archived), f"MEMORY.md lost {line!r}"
        elif not rel.startswith("memory/archive/"):
            assert after[rel].startswith(data), f"{rel} lost bytes"
    leftovers = [p for p in vault.rglob(".*.tmp") if ".git" not in p.parts and ".vault-tools" not in p.parts]
    assert leftovers == [], leftovers


def assert_index_converges(vault: Path, marker: str | None = None) -> None:
    config = load_config(vault, env={})
    index = Index(config)
    index.ensure_current()
    report = index.doctor()
    assert report.ok, report.summary()
    if marker:
        hits = recall(config, marker, chat="direct", limit=5)
        assert any(marker in h.text for h in hits.results), marker


def beat_vault(tmp_path: Path, name: str = "vault") -> Path:
    vault = committed(make_vault(tmp_path, name=name))
    (vault / ".vault-tools").mkdir(exist_ok=True)
    (vault / ".vault-tools" / "config.toml").write_text(
        "[heartbeat]\nquiet_seconds = 0\nprune_max_share = 1.0\n"
    )
    return vault


def cli(vault: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "vault_tools", *args, "--vault", str(vault)]


def stepped_heartbeat(vault: Path, hold_at: int) -> list[str]:
    """The heartbeat command, printing its steps and held at step ``hold_at`` (helpers.HEARTBEAT_STEPS)."""
    command = ["heartbeat", "--no-llm", *AS_OF_ARGS, "--vault", str(vault)]
    return [sys.executable, "-c", HEARTBEAT_STEPS, str(hold_at), *command]


def git_head(vault: Path) -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=vault, capture_output=True, text=True).stdout


def git_status(vault: Path) -> str:
    return subprocess.run(["git", "status", "--porcelain"], cwd=vault, capture_output=True, text=True).stdout


def next_run_succeeds(vault: Path, human: str | None = None) -> None:
    done = subprocess.run(cli(vault, "heartbeat", "--no-llm", *AS_OF_ARGS), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    if human is None:
        assert git_status(vault) == "", git_status(vault)
    else:  # a person's uncommitted save stays theirs: the only change left in the tree
        diff = subprocess.run(["git", "diff", "-U0"], cwd=vault, capture_output=True, text=True).stdout
        added = [line for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")]
        removed = [line for line in diff.splitlines() if line.startswith("-") and not line.startswith("---")]
        assert removed == [] and all(human.strip() in line for line in added), diff


# ---------------------------------------------------------------------------------------------
# Disk full, read-only, failing replace: the atomic write path


def enospc(*_a: Any, **_k: Any) -> Any:
    raise OSError(errno.ENOSPC, "No space left on device")


def eacces(*_a: Any, **_k: Any) -> Any:
    raise PermissionError(errno.EACCES, "Permission denied")


def erofs(*_a: Any, **_k: Any) -> Any:
    raise OSError(errno.EROFS, "Read-only file system")


WRITE_FAULTS: dict[str, tuple[str, Callable[..., Any]]] = {
    "mkstemp-enospc": ("tempfile.mkstemp", enospc),
    "fsync-enospc": ("os.fsync", enospc),
    "mkstemp-readonly": ("tempfile.mkstemp", eacces),
    "replace-erofs": ("os.replace", erofs),
}


FAULT_ERRNO = {
    "mkstemp-enospc": errno.ENOSPC,
    "fsync-enospc": errno.ENOSPC,
    "mkstemp-readonly": errno.EACCES,
    "replace-erofs": errno.EROFS,
}


def inject(monkeypatch: pytest.MonkeyPatch, fault: str, after: int = 0) -> dict[str, int]:
    """Make the calls of the target (as seen from vault_tools.notes.edit) after the first ``after`` fail.

    Returns the counts: ``calls`` of the target, and how many of them ``failed``.
    """
    target, error = WRITE_FAULTS[fault]
    module_name, attr = target.split(".")
    module = getattr(note_edit, module_name)
    real = getattr(module, attr)
    calls = {"calls": 0, "failed": 0}

    def faulty(*args: Any, **kwargs: Any) -> Any:
        calls["calls"] += 1
        if calls["calls"] > after:
            calls["failed"] += 1
            count(fault)
            return error(*args, **kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, attr, faulty)
    return calls


@pytest.mark.parametrize("fault", list(WRITE_FAULTS))
def test_a_failing_atomic_write_keeps_the_original_and_leaves_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fault: str
) -> None:
    path = tmp_path / "vault" / "memory" / "2026-12-01.md"
    path.parent.mkdir(parents=True)
    original = "\ufeff---\ndate: 2026-12-01\n---\r\n- 09:00 keep me\r\n".encode()
    path.write_bytes(original)
    with monkeypatch.context() as patch:
        fired = inject(patch, fault)
        with pytest.raises(OSError) as raised:
            note_edit.apply_edit(path, note_edit.append_lines(["- 10:00 new line"]))
    assert fired["failed"] == 1 and raised.value.errno == FAULT_ERRNO[fault]
    assert path.read_bytes() == original
    assert list(path.parent.glob(".*.tmp")) == []
    result = note_edit.apply_edit(path, note_edit.append_lines(["- 10:00 new line"]))
    assert result.changed and path.read_bytes().startswith(original)


@pytest.mark.parametrize("fault", list(WRITE_FAULTS))
@pytest.mark.parametrize("after", [0, 1, 3])
def test_heartbeat_hit_by_a_write_fault_loses_nothing_and_the_next_run_succeeds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fault: str, after: int
) -> None:
    vault = beat_vault(tmp_path)
    before = snapshot(vault)
    with monkeypatch.context() as patch:
        fired = inject(patch, fault, after)
        # The injected error itself reaches the caller: nothing wraps it into another error or
        # swallows it, and nothing else (a TypeError from a half-done step) takes its place.
        steps: list[str] = []
        with pytest.raises(OSError) as raised:
            heartbeat.run_heartbeat(hb_config(vault), Options(as_of=AS_OF_DATE), steps.append)
    assert fired["calls"] > after and fired["failed"] >= 1, fired  # the fault struck
    assert raised.value.errno == FAULT_ERRNO[fault]
    journal = vault / ".vault-tools" / "heartbeat" / "journal.json"
    if after == 3:  # it struck after the plan was journaled, while the notes were being written
        assert "journal" in steps and "state" not in steps and journal.exists(), steps
    assert_nothing_lost(vault, before)
    heartbeat.run_heartbeat(hb_config(vault), Options(as_of=AS_OF_DATE))
    assert not journal.exists()
    assert_nothing_lost(vault, before)
    assert git_status(vault) == ""
    assert_index_converges(vault, "PostgreSQL")


def test_a_failing_lock_owner_write_leaves_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = beat_vault(tmp_path)
    with monkeypatch.context() as patch:
        fired = inject(patch, "replace-erofs")
        with pytest.raises(OSError) as raised:
            heartbeat.run_heartbeat(hb_config(vault), Options(as_of=AS_OF_DATE))
    assert fired["failed"] >= 1 and raised.value.errno == errno.EROFS
    assert list((vault / ".vault-tools").rglob("*.tmp")) == []


# A read-only vault (a read-only mount, chmod a-w), for root too: test_read_only.py.


# ---------------------------------------------------------------------------------------------
# A file deleted or renamed while it is being indexed


@pytest.mark.parametrize("what", ["delete", "rename"])
def test_a_file_vanishing_while_being_indexed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, what: str
) -> None:
    vault = make_vault(tmp_path)
    victim = vault / "memory" / "2026-11-28.md"
    moved = vault / "memory" / "2026-11-27.md"
    config = load_config(vault, env={})
    real = notes.read_note
    fired = {"done": False}

    def racing(path: Path, root: Path, **kwargs: Any) -> notes.Note:
        if not fired["done"] and Path(path).name == victim.name:
            fired["done"] = True
            count(f"vanish-{what}")
            if what == "delete":
                victim.unlink()
            else:
                victim.rename(moved)
        return real(path, root, **kwargs)

    monkeypatch.setattr(notes, "read_note", racing)
    Index(config).rebuild()
    assert fired["done"]
    monkeypatch.setattr(notes, "read_note", real)
    assert_index_converges(vault, "PostgreSQL" if what == "rename" else "拉面")
    paths = {h.path for h in recall(config, "PostgreSQL", chat="direct").results}
    assert paths == ({"memory/2026-11-27.md"} if what == "rename" else set())


# ---------------------------------------------------------------------------------------------
# kill -9 of the watcher in the middle of a burst of edits


def start_watch(vault: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        cli(vault, "watch", "--debounce-ms", "50"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    config = load_config(vault, env={})
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()[1]
        state = index_manifest.read_json(index_status.watch_state_path(config))
        if state.get("pid") == proc.pid and state.get("last_reconcile"):
            return proc
        time.sleep(0.05)
    raise AssertionError("watcher did not start")


def edit_burst(vault: Path, rng: random.Random, stop: threading.Event, written: list[str]) -> None:
    """Up to 400 edits a few ms apart, with a pause past the watcher's debounce every dozen or so:
    without one the debounce never ends and nothing is indexed until the burst is over."""
    n = 0
    pause_at = rng.randint(8, 16)
    while not stop.is_set() and n < 400:
        if n == pause_at:
            time.sleep(rng.uniform(0.1, 0.2))
            pause_at += rng.randint(8, 16)
        marker = f"wombat{rng.randrange(10**9):09d}x{n}"
        day = vault / "memory" / f"2026-11-{rng.randrange(1, 29):02d}.md"
        if rng.random() < 0.5:
            with day.open("a", encoding="utf-8") as handle:
                handle.write(f"- 10:00 edit {marker}\n")
        else:
            note_edit.apply_edit(day, note_edit.append_lines([f"- 11:00 saved {marker}"]), create=True)
        written.append(marker)
        n += 1
        time.sleep(rng.uniform(0, 0.01))


def indexed_markers(config: Config, markers: list[str]) -> set[str]:
    """The markers the index holds now, read without indexing anything (no catch-up, no heal)."""
    index = Index(config)
    try:
        with index.searcher() as s:
            found = {m for m in markers if any(m in h["text"] for h in s.search(ix_term(m), limit=5))}
        assert index.warnings == [], index.warnings  # it read the index as the watcher left it
        return found
    finally:
        index.close()


#: (seed, where inside an index batch the kill lands): every point, more seeds in the long run.
WATCH_KILLS = [(seed, ("parse", "commit", "manifest")[seed % 3]) for seed in range(9 if LONG else 3)]


def start_held_watch(vault: Path, arm: Path, point: str) -> subprocess.Popen[str]:
    """A watcher that holds its first batch after ``arm`` exists at ``point`` (helpers.WATCH_BATCHES)."""
    command = [sys.executable, "-c", WATCH_BATCHES, str(arm), point]
    return subprocess.Popen(
        [*command, *cli(vault, "watch", "--debounce-ms", "50")[3:]],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def follow(proc: subprocess.Popen[str]) -> list[str]:
    """The lines of ``proc``'s output as they come (read by a daemon thread)."""
    lines: list[str] = []

    def read() -> None:
        assert proc.stdout is not None
        lines.extend(proc.stdout)

    threading.Thread(target=read, daemon=True).start()
    return lines


@pytest.mark.parametrize(("seed", "point"), WATCH_KILLS)
def test_kill_9_of_the_watcher_while_it_indexes_an_edit_burst(tmp_path: Path, seed: int, point: str) -> None:
    rng = random.Random(seed)
    vault = make_vault(tmp_path)
    config = load_config(vault, env={})
    before = snapshot(vault)
    arm = tmp_path / "arm"
    proc = start_held_watch(vault, arm, point)
    wait_for(
        lambda: index_manifest.read_json(index_status.watch_state_path(config)).get("last_reconcile"),
        "the watcher's start",
    )
    stop = threading.Event()
    written: list[str] = []
    writer = threading.Thread(target=edit_burst, args=(vault, rng, stop, written))
    writer.start()
    lines = follow(proc)
    try:
        # once the burst's first edits are indexed, the next batch is held and the kill lands in it
        wait_for(lambda: bool(indexed_markers(config, list(written))), "a first batch of the burst", 30)
        arm.touch()
        wait_for(lambda: any(line.startswith("HELD ") for line in lines), "a batch held mid-indexing", 30)
        edits_at_kill = len(written)
        proc.send_signal(signal.SIGKILL)
        _out, err = proc.communicate(timeout=10)
        count(f"kill-9-watch-{point}")
        # let the burst go on while no watcher runs
        wait_for(lambda: len(written) >= edits_at_kill + 20 or not writer.is_alive(), "edits after the kill")
    finally:
        stop.set()
        writer.join()
        if proc.poll() is None:
            proc.kill()
    batches = [tuple(map(int, line.split()[1:])) for line in lines if line.startswith("BATCH ")]
    assert lines[-1] == f"HELD {point}\n", (lines, err)  # the kill landed inside a batch, at that point
    assert proc.returncode == -signal.SIGKILL  # killed mid-batch, not stopped by anything else
    assert batches[-1][1] >= 1, batches
    indexed_at_kill = indexed_markers(config, written[:edits_at_kill])  # as the watcher left it
    # earlier batches were indexed; the held one is in the index only past Whoosh's commit
    assert 0 < len(indexed_at_kill) <= edits_at_kill, (len(indexed_at_kill), edits_at_kill, batches)
    if point != "manifest":
        assert len(indexed_at_kill) < edits_at_kill, (len(indexed_at_kill), edits_at_kill, batches)
    after_kill = written[edits_at_kill:]
    assert after_kill, "no edit was made while the watcher was down"
    # Nothing but the restarted watcher indexes from here on: its start-up reconcile must find
    # the edits made while none ran (start_watch returns once it has reconciled, and no edit
    # has been made since), and its observer the edit made after it started.
    restarted = start_watch(vault)
    try:
        missing = set(written) - indexed_markers(config, written)
        assert not missing, f"{len(missing)} of {len(written)} edits not indexed after the restart"
        marker = f"final{seed}quokka"
        with (vault / "memory" / "2026-11-30.md").open("a", encoding="utf-8") as handle:
            handle.write(f"- 12:00 {marker}\n")
        wanted = [*written, marker]
        wait_for(
            lambda: indexed_markers(config, wanted) == set(wanted),
            "the restarted watcher to index every edit",
            30,
        )
    finally:
        restarted.send_signal(signal.SIGTERM)
        _out, err = restarted.communicate(timeout=20)
    assert restarted.returncode == 0, err
    assert "Traceback" not in err
    assert_nothing_lost(vault, before)
    text = "".join(p.read_text() for p in (vault / "memory").glob("*.md"))
    assert all(m in text for m in written)
    report = Index(load_config(vault, env={})).doctor()
    assert report.ok, report.summary()


def ix_term(word: str) -> Any:
    from whoosh.query import Term

    from vault_tools.index.analysis import tokenize

    (term,) = tokenize(word)
    return Term(index_documents.F_TEXT, term)


# ---------------------------------------------------------------------------------------------
# kill -9 of a heartbeat in each git state, with a person editing MEMORY.md meanwhile


def set_git_state(vault: Path, state: str) -> None:
    if state == "stale-lock":
        lock = vault / ".git" / "index.lock"
        lock.write_text("")
        old = time.time() - 3600
        os.utime(lock, (old, old))
    elif state == "detached":
        subprocess.run(["git", "checkout", "-q", "--detach"], cwd=vault, check=True)
    elif state == "merge":
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=vault, capture_output=True, text=True).stdout
        (vault / ".git" / "MERGE_HEAD").write_text(head)


def clear_git_state(vault: Path, state: str) -> None:
    """What a person would undo by hand; a stale lock is the bot's to remove, so it stays."""
    if state == "detached":
        branch = subprocess.run(
            ["git", "for-each-ref", "--format=%(refname:short)", "refs/heads/"],
            cwd=vault,
            capture_output=True,
            text=True,
        ).stdout.split()[0]
        subprocess.run(["git", "checkout", "-q", branch], cwd=vault, check=True)
    elif state == "merge":
        (vault / ".git" / "MERGE_HEAD").unlink(missing_ok=True)


#: The steps of a heartbeat over beat_vault: planned, journal, two writes, five commits, state.
HEARTBEAT_STEP_COUNT = 10


@pytest.mark.parametrize("state", ["clean", "stale-lock", "detached"])
def test_kill_9_of_a_heartbeat_in_a_git_state_with_a_person_saving(tmp_path: Path, state: str) -> None:
    rng = random.Random(state)
    vault = beat_vault(tmp_path)
    set_git_state(vault, state)
    with (vault / ".vault-tools" / "config.toml").open("a") as config:
        config.write("lock_wait_seconds = 5\n")  # a lock left in place fails the run in seconds
    kill_after = rng.randint(2, HEARTBEAT_STEP_COUNT - 2)  # after the journal, before the state
    proc = subprocess.Popen(
        stepped_heartbeat(vault, hold_at=kill_after + 1),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    human = "- 2026-12-01: a person's own line saved during the heartbeat\n"
    try:
        assert proc.stdout is not None
        steps = read_steps(proc.stdout, kill_after)
        assert len(steps) == kill_after, (steps, proc.communicate())
        note_edit.apply_edit(vault / "MEMORY.md", lambda lines: [*lines, human])  # an editor's save
        before = snapshot(vault)
        time.sleep(rng.uniform(0.0, 0.05))  # somewhere inside the next step, or held at its end
    finally:
        proc.send_signal(signal.SIGKILL)  # also when the test failed: the run is held for an hour
    _out, err = proc.communicate(timeout=20)
    count(f"kill-9-heartbeat-{state}")
    assert proc.returncode == -signal.SIGKILL, err  # killed, not finished or failed on its own
    assert "Traceback" not in err
    assert (vault / ".vault-tools" / "heartbeat" / "journal.json").exists()  # an unfinished run
    clear_git_state(vault, state)
    next_run_succeeds(vault, human)
    assert not (vault / ".git" / "index.lock").exists()  # a stale one: removed by a run, not the test
    assert not (vault / ".vault-tools" / "heartbeat" / "journal.json").exists()
    assert_nothing_lost(vault, before)
    assert human.strip() in (vault / "MEMORY.md").read_text()
    assert_index_converges(vault, "PostgreSQL")


def test_a_heartbeat_in_a_merge_touches_nothing_and_runs_after_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Mid-merge there is nothing to kill: the run stops before its first step, exit 6."""
    vault = beat_vault(tmp_path)
    set_git_state(vault, "merge")
    before = snapshot(vault)
    steps: list[str] = []
    real = heartbeat.run_heartbeat
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(heartbeat, "run_heartbeat", lambda c, o=None, _p=None: real(c, o, steps.append))
        code = cli_main(["heartbeat", "--no-llm", *AS_OF_ARGS, "--vault", str(vault)])
    assert code == GitError.exit_code and steps == []
    assert "in the middle of a merge" in capsys.readouterr().err
    assert snapshot(vault) == before and git_status(vault) == ""
    clear_git_state(vault, "merge")
    next_run_succeeds(vault)
    assert_nothing_lost(vault, before)
    assert_index_converges(vault, "PostgreSQL")


# ---------------------------------------------------------------------------------------------
# Two heartbeats at once while a watcher runs; a corrupt index under a running watcher


def test_two_heartbeat_processes_with_a_watcher_running(tmp_path: Path) -> None:
    vault = beat_vault(tmp_path)
    before = snapshot(vault)
    watcher = start_watch(vault)
    try:
        # one heartbeat held inside its run: a second one must stop at the lock, touching nothing
        held = subprocess.Popen(
            stepped_heartbeat(vault, hold_at=1), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        try:
            assert held.stdout is not None
            assert len(read_steps(held.stdout, 1)) == 1, held.communicate()
            head = git_head(vault)
            second = subprocess.run(
                cli(vault, "heartbeat", "--no-llm", *AS_OF_ARGS), capture_output=True, text=True, timeout=60
            )
            assert second.returncode == LockedError.exit_code, (second.returncode, second.stderr)
            assert "heartbeat" in second.stderr and "holds" in second.stderr, second.stderr
            assert snapshot(vault) == before and git_head(vault) == head
        finally:
            held.send_signal(signal.SIGKILL)
            held.communicate(timeout=20)
        # and two started together, while the watcher indexes what they write
        procs = [
            subprocess.Popen(
                cli(vault, "heartbeat", "--no-llm", *AS_OF_ARGS),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(2)
        ]
        results = [(p.wait(timeout=60), p.communicate()[1]) for p in procs]
        count("two-heartbeats")
    finally:
        watcher.send_signal(signal.SIGTERM)
        _out, err = watcher.communicate(timeout=20)
    assert "Traceback" not in err
    codes = sorted(code for code, _ in results)
    assert codes[0] == 0 and all("Traceback" not in e for _, e in results), results
    memory = (vault / "MEMORY.md").read_text()
    ids = [m[1] for line in memory.splitlines() if (m := BLOCK_ID.search(line))]
    assert len(ids) == len(set(ids)), "a duplicate promotion"
    assert_nothing_lost(vault, before)
    next_run_succeeds(vault)
    assert_index_converges(vault, "PostgreSQL")


@pytest.mark.parametrize("damage", ["garbage-toc", "deleted-segments"])
def test_a_corrupted_index_under_a_starting_watcher(tmp_path: Path, damage: str) -> None:
    vault = make_vault(tmp_path)
    config = load_config(vault, env={})
    Index(config).rebuild()
    index_dir = Index(config).dir
    if damage == "garbage-toc":
        for toc in index_dir.glob("*.toc"):
            toc.write_bytes(b"\x00garbage" * 10)
    else:
        for seg in index_dir.glob("*.seg"):
            seg.unlink()
    count(f"corrupt-index-{damage}")
    watcher = start_watch(vault)
    try:
        marker = f"narwhal{damage.replace('-', '')}"
        with (vault / "memory" / "2026-11-29.md").open("a", encoding="utf-8") as handle:
            handle.write(f"- 13:00 {marker}\n")
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if Index(config).read(lambda s: bool(list(s.search(ix_term(marker), limit=1)))):
                break
            time.sleep(0.05)
        else:
            raise AssertionError("marker never became searchable")
    finally:
        watcher.send_signal(signal.SIGTERM)
        _out, err = watcher.communicate(timeout=20)
    assert "Traceback" not in err
    assert_index_converges(vault, marker)


AS_OF_DATE = __import__("datetime").date(2026, 12, 1)


@pytest.fixture(scope="module", autouse=True)
def report_faults() -> Iterator[None]:
    yield
    print(f"\nfaults injected: {sum(FAULTS.values())} {dict(sorted(FAULTS.items()))}")


_ = (Config, MEMORY_EN)
