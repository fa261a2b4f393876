"""The watcher: batching rules, and a real watchdog observer against every way a file gets saved.

Every wait polls with a deadline; nothing sleeps for a fixed time and hopes.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from helpers import wait_for, watch_in_thread, write

from vault_tools.config import Config, load_config
from vault_tools.errors import LockedError
from vault_tools.index import index as ix
from vault_tools.index import manifest as index_manifest
from vault_tools.index import status as index_status
from vault_tools.index.documents import F_TEXT, IndexedEntry
from vault_tools.index.index import Index
from vault_tools.index.writer import UpdateReport
from vault_tools.watch.watcher import ChangeBatcher, WatchOptions, apply_changes, ignored, run_watch


def found(config: Config, word: str) -> list[IndexedEntry]:
    """Search without catching up: only what the watcher indexed counts."""
    from whoosh.query import Term

    from vault_tools.index.analysis import tokenize

    (term,) = tokenize(word)
    return Index(config).read(
        lambda s: [IndexedEntry.from_fields(h.fields()) for h in s.search(Term(F_TEXT, term), limit=50)]
    )


def delete_folder(path: Path) -> None:
    """``rm -rf`` until it is gone (a watcher writing its state meanwhile makes one pass fail)."""

    def deleted() -> bool:
        shutil.rmtree(path, ignore_errors=True)
        return not path.exists()

    wait_for(deleted, f"{path} deleted")


def paths_with(config: Config, word: str) -> set[str]:
    return {e.path for e in found(config, word)}


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    write(root / "MEMORY.md", "# Memory\n\n## Facts\n- 2026-01-01: The cat is called Miso\n")
    write(root / "memory" / "2026-03-10.md", "# 2026-03-10\n\n- 09:00 started the aardvark project\n")
    write(root / "memory" / "2026-03-11.md", "# 2026-03-11\n\n- 10:00 fed the badger\n")
    return root


@pytest.fixture
def config(vault: Path) -> Config:
    return load_config(vault)


@dataclass
class Running:
    config: Config
    stop: threading.Event
    thread: threading.Thread
    reports: list[UpdateReport] = field(default_factory=list)
    errors: list[BaseException] = field(default_factory=list)

    def state(self) -> dict[str, object]:
        return index_manifest.read_json(index_status.watch_state_path(self.config))


FAST = WatchOptions(reconcile_seconds=3600, debounce_ms=60, max_latency_ms=600, heartbeat_seconds=0.5)


@pytest.fixture
def watcher(config: Config) -> Iterator[Running]:
    """A watcher running in a thread with a real observer; stopped (and checked) after the test."""
    with start_watcher(config, FAST) as running:
        yield running


@contextlib.contextmanager
def start_watcher(config: Config, options: WatchOptions) -> Iterator[Running]:
    stop = threading.Event()
    running = Running(config, stop, threading.Thread())

    def target() -> None:
        try:
            run_watch(config, stop_event=stop, on_batch=running.reports.append, options=options)
        except BaseException as exc:
            running.errors.append(exc)

    started = time.time()
    running.thread = threading.Thread(target=target, daemon=True)
    running.thread.start()

    def reconciled() -> bool:
        state = running.state()
        fresh = float(state.get("started") or 0) >= started  # type: ignore[arg-type]
        return bool(running.errors) or (fresh and bool(state.get("last_reconcile")))

    wait_for(reconciled, "the first reconcile")
    assert not running.errors
    yield running
    stop.set()
    running.thread.join(10)
    assert not running.thread.is_alive(), "the watcher did not stop"
    assert not running.errors
    assert running.state().get("stopped")


# ---------------------------------------------------------------------------------------------
# Batching rules (no observer)


@pytest.mark.parametrize(
    ("rel", "is_dir", "expected"),
    [
        ("memory/2026-03-10.md", False, False),
        ("MEMORY.md", False, False),
        ("memory/sub/2026-03-10.md", False, False),
        ("memory", True, False),
        ("memory/sub", True, False),
        ("AGENTS.md", False, True),
        ("memory/2026-03-10.md.swp", False, True),
        ("memory/.2026-03-10.md.swx", False, True),
        ("memory/2026-03-10.md~", False, True),
        ("memory/.#2026-03-10.md", False, True),
        ("memory/4913", False, True),
        ("memory/.2026-03-10.md.abc123.tmp", False, True),
        ("memory/notes.txt", False, True),
        ("memory/archive/2025-01-01.md", False, True),
        (".git/index", False, True),
        (".git/refs", True, True),
        (".obsidian/workspace.json", False, True),
        (".trash/2026-03-10.md", False, True),
        (".vault-tools/index/manifest.json", False, True),
        ("memory/.obsidian/x.md", False, True),
        ("", True, True),
        ("other", True, True),
    ],
)
def test_ignored(rel: str, is_dir: bool, expected: bool) -> None:
    assert ignored(rel, is_dir=is_dir) is expected


def test_batcher_keeps_notes_and_drops_noise(vault: Path) -> None:
    batcher = ChangeBatcher(vault, debounce=0.0)
    assert batcher.add(vault / "memory" / "2026-03-10.md")
    assert not batcher.add(vault / ".git" / "index")
    assert not batcher.add(vault / "memory" / "2026-03-10.md.swp")
    assert not batcher.add("/elsewhere/2026-03-10.md")
    assert batcher.add(str(vault / "memory" / "sub"), is_dir=True)
    stop = threading.Event()
    assert batcher.take(stop, 1.0) == {vault / "memory" / "2026-03-10.md", vault / "memory" / "sub"}
    assert batcher.take(stop, 0.01) == set()


class FakeClock:
    """A monotonic clock that moves only when told (binary fractions keep the sums exact)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def test_batcher_waits_for_quiet(vault: Path) -> None:
    clock = FakeClock()
    batcher = ChangeBatcher(vault, debounce=0.25, max_latency=4.0, clock=clock)
    stop = threading.Event()
    batcher.add(vault / "MEMORY.md")
    clock.advance(0.125)
    assert batcher.take(stop, 0.0) == set()  # not quiet long enough yet
    batcher.add(vault / "MEMORY.md")  # a new event starts the quiet period again
    clock.advance(0.1875)
    assert batcher.take(stop, 0.0) == set()  # 0.3125 s after the first, 0.1875 after the last
    clock.advance(0.0625)
    assert batcher.take(stop, 0.0) == {vault / "MEMORY.md"}  # 0.25 s quiet: due
    assert batcher.take(stop, 0.0) == set()


def test_batcher_releases_a_continuous_stream_at_max_latency(vault: Path) -> None:
    clock = FakeClock()
    batcher = ChangeBatcher(vault, debounce=0.25, max_latency=0.5, clock=clock)
    stop = threading.Event()
    days = [vault / "memory" / f"2026-01-{i + 1:02d}.md" for i in range(9)]
    for day in days[:8]:  # an event every 1/16 s, never 0.25 s quiet
        batcher.add(day)
        assert batcher.take(stop, 0.0) == set()
        clock.advance(0.0625)
    batcher.add(days[8])  # 0.5 s after the first event: the batch goes out without the quiet
    assert batcher.take(stop, 0.0) == set(days)


def test_batcher_hurries_when_somebody_waits(vault: Path) -> None:
    batcher = ChangeBatcher(vault, debounce=30.0, max_latency=60.0)
    stop = threading.Event()
    batcher.hurry()  # nothing pending: nothing to hurry, and no later batch hurried by it
    batcher.add(vault / "MEMORY.md")
    assert batcher.take(stop, 0.05) == set()
    batcher.hurry()
    assert batcher.take(stop, 20.0) == {vault / "MEMORY.md"}


def test_batcher_take_returns_when_stopped(vault: Path) -> None:
    clock = FakeClock()  # never moves: neither the batch nor the timeout can come due
    batcher = ChangeBatcher(vault, clock=clock)
    batcher.add(vault / "MEMORY.md")
    stop = threading.Event()
    threading.Timer(0.05, stop.set).start()
    assert batcher.take(stop, 30.0) == set()  # only the stop can have ended the wait
    assert stop.is_set() and batcher.pending() == 1  # and the waiting path is kept


def test_requeued_paths_come_back(vault: Path) -> None:
    batcher = ChangeBatcher(vault, debounce=0.0)
    batcher.requeue({vault / "MEMORY.md"})
    assert batcher.pending() == 1
    assert batcher.take(threading.Event(), 1.0) == {vault / "MEMORY.md"}


# ---------------------------------------------------------------------------------------------
# The handler, called directly


def test_apply_changes_reindexes_exactly_the_given_files(vault: Path, config: Config) -> None:
    idx = Index(config)
    idx.ensure_current()
    write(vault / "memory" / "2026-03-10.md", "- 09:00 started the pangolin project\n")
    write(vault / "memory" / "2026-03-11.md", "- 09:00 not named: quokka\n")
    report = apply_changes(idx, {vault / "memory" / "2026-03-10.md", vault / "memory" / "gone.md"})
    assert (report.added, report.updated, report.removed) == (0, 1, 0)
    assert paths_with(config, "pangolin") == {"memory/2026-03-10.md"}
    assert found(config, "quokka") == []


# ---------------------------------------------------------------------------------------------
# Save styles, through a real observer


def test_in_place_write(vault: Path, watcher: Running) -> None:
    path = vault / "memory" / "2026-03-11.md"
    with path.open("a", encoding="utf-8") as handle:
        handle.write("- 11:00 in place: echidna\n")
    wait_for(lambda: paths_with(watcher.config, "echidna") == {"memory/2026-03-11.md"}, "an in-place write")


def test_temp_file_and_rename(vault: Path, watcher: Running) -> None:
    """What Obsidian, most agents and notes.atomic_write do."""
    path = vault / "memory" / "2026-03-11.md"
    tmp = path.with_name(f".{path.name}.x1y2.tmp")
    tmp.write_text("- 11:00 renamed into place: wombat\n", encoding="utf-8")
    os.replace(tmp, path)
    wait_for(lambda: paths_with(watcher.config, "wombat") == {"memory/2026-03-11.md"}, "a temp+rename save")
    wait_for(lambda: found(watcher.config, "badger") == [], "the old text gone")


def test_vim_style_save(vault: Path, watcher: Running) -> None:
    """vim: probe file 4913, rename the original to a ~ backup, write a new file, delete the backup."""
    folder = vault / "memory"
    path = folder / "2026-03-11.md"
    probe = folder / "4913"
    probe.write_text("")
    probe.unlink()
    backup = folder / "2026-03-11.md~"
    os.rename(path, backup)
    path.write_text("- 11:00 vim wrote this: numbat\n", encoding="utf-8")
    backup.unlink()
    wait_for(lambda: paths_with(watcher.config, "numbat") == {"memory/2026-03-11.md"}, "a vim save")


def test_emacs_backup_rename(vault: Path, watcher: Running) -> None:
    folder = vault / "memory"
    path = folder / "2026-03-11.md"
    os.rename(path, folder / "2026-03-11.md~")
    path.write_text("- 11:00 emacs wrote this: quoll\n", encoding="utf-8")
    (folder / ".#2026-03-11.md").write_text("lock")
    wait_for(lambda: paths_with(watcher.config, "quoll") == {"memory/2026-03-11.md"}, "an emacs save")
    assert found(watcher.config, "badger") == []  # the ~ backup is never indexed


def test_sed_in_place(vault: Path, watcher: Running) -> None:
    sed = shutil.which("sed")
    if sed is None:
        pytest.skip("no sed")
    in_place = ["-i", ""] if sys.platform == "darwin" else ["-i"]  # BSD sed takes the backup suffix apart
    subprocess.run([sed, *in_place, "s/badger/dingo/", str(vault / "memory" / "2026-03-11.md")], check=True)
    wait_for(lambda: paths_with(watcher.config, "dingo") == {"memory/2026-03-11.md"}, "a sed -i edit")


def test_cp_over_a_file(vault: Path, tmp_path: Path, watcher: Running) -> None:
    source = write(tmp_path / "outside.md", "- 12:00 copied over: bilby\n")
    shutil.copyfile(source, vault / "memory" / "2026-03-11.md")
    wait_for(lambda: paths_with(watcher.config, "bilby") == {"memory/2026-03-11.md"}, "cp over a file")


def test_delete_and_recreate(vault: Path, watcher: Running) -> None:
    path = vault / "memory" / "2026-03-11.md"
    path.unlink()
    path.write_text("- 12:00 recreated: wallaby\n", encoding="utf-8")
    wait_for(lambda: paths_with(watcher.config, "wallaby") == {"memory/2026-03-11.md"}, "delete + recreate")


def test_delete(vault: Path, watcher: Running) -> None:
    (vault / "memory" / "2026-03-11.md").unlink()
    wait_for(lambda: found(watcher.config, "badger") == [], "a deletion")


def test_moves_in_out_and_within(vault: Path, tmp_path: Path, watcher: Running) -> None:
    outside = write(tmp_path / "incoming" / "2026-03-12.md", "- 13:00 moved in: kookaburra\n")
    shutil.move(outside, vault / "memory" / "2026-03-12.md")
    wait_for(lambda: paths_with(watcher.config, "kookaburra") == {"memory/2026-03-12.md"}, "a move in")
    os.rename(vault / "memory" / "2026-03-12.md", vault / "memory" / "2026-03-13.md")
    wait_for(lambda: paths_with(watcher.config, "kookaburra") == {"memory/2026-03-13.md"}, "a rename")
    shutil.move(vault / "memory" / "2026-03-13.md", tmp_path / "gone.md")
    wait_for(lambda: found(watcher.config, "kookaburra") == [], "a move out")


def test_folder_moves_in_and_out(vault: Path, tmp_path: Path, watcher: Running) -> None:
    incoming = tmp_path / "2025"
    for day in range(1, 6):
        write(incoming / f"2025-01-{day:02d}.md", f"- 08:00 archived koala {day}\n")
    shutil.move(incoming, vault / "memory" / "2025")
    wait_for(lambda: len(found(watcher.config, "koala")) == 5, "a folder moved in")
    shutil.move(vault / "memory" / "2025", tmp_path / "out")
    wait_for(lambda: found(watcher.config, "koala") == [], "a folder moved out")


def test_memory_folder_replaced(vault: Path, tmp_path: Path, watcher: Running) -> None:
    """``rm -rf memory`` and a new ``memory/``: the old notes go, the new folder is watched."""
    shutil.rmtree(vault / "memory")
    wait_for(lambda: found(watcher.config, "badger") == [], "the folder's notes removed")
    write(vault / "memory" / "2026-04-01.md", "- 08:00 in the new folder: pademelon\n")
    wait_for(lambda: bool(found(watcher.config, "pademelon")), "a note in the recreated folder")
    write(vault / "memory" / "2026-04-02.md", "- 08:00 later in the new folder: potoroo\n")
    wait_for(lambda: bool(found(watcher.config, "potoroo")), "the recreated folder to be watched")


def test_noise_never_reaches_the_index(vault: Path, watcher: Running) -> None:
    batches = len(watcher.reports)
    write(vault / ".git" / "objects" / "ab" / "cdef", "blob")
    write(vault / ".obsidian" / "workspace.json", "{}")
    write(vault / "memory" / "2026-03-11.md.swp", "swap")
    write(vault / "AGENTS.md", "- agent instructions: platypus\n")
    write(
        vault / "memory" / "2026-03-12.md", "- 08:00 a real note: emu\n"
    )  # the marker that we waited long enough
    wait_for(lambda: bool(found(watcher.config, "emu")), "the real note")
    assert found(watcher.config, "platypus") == []
    assert all(r.changed <= 1 for r in watcher.reports[batches:])


def test_burst_of_500_files(vault: Path, watcher: Running) -> None:
    before = len(watcher.reports)
    folder = vault / "memory" / "burst"
    folder.mkdir()
    for i in range(500):
        (folder / f"2026-{i // 28 % 12 + 1:02d}-{i % 28 + 1:02d}-{i}.md").write_text(
            f"- 08:00 burst entry {i} of the galah flock\n", encoding="utf-8"
        )
    wait_for(lambda: len(found(watcher.config, "galah")) == 50, "the first results")  # limit=50
    wait_for(lambda: Index(watcher.config).entry_count() == 503, "all 500 files")
    applied = lambda: [r for r in watcher.reports[before:] if r.added]  # noqa: E731
    wait_for(lambda: sum(r.added for r in applied()) == 500, "the last batch's report")
    assert len(applied()) < 60, "a burst should be indexed in a few batches, not one per file"


def test_git_checkout_rewriting_many_files(vault: Path, watcher: Running) -> None:
    git = shutil.which("git")
    if git is None:
        pytest.skip("no git")

    def run(*args: str) -> None:
        subprocess.run(
            [git, "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
            cwd=vault,
            check=True,
            capture_output=True,
        )

    run("init", "-q", "-b", "one")
    write(vault / ".gitignore", ".vault-tools/\n")
    for i in range(200):
        write(
            vault / "memory" / f"2025-{i // 28 + 1:02d}-{i % 28 + 1:02d}.md",
            f"- 08:00 branch one note {i} cassowary\n",
        )
    run("add", "-A")
    run("commit", "-q", "-m", "one")
    wait_for(lambda: Index(watcher.config).entry_count() == 203, "branch one indexed")
    run("checkout", "-q", "-b", "two")
    for i in range(200):
        write(
            vault / "memory" / f"2025-{i // 28 + 1:02d}-{i % 28 + 1:02d}.md",
            f"- 08:00 branch two note {i} lyrebird\n",
        )
    run("commit", "-q", "-am", "two")
    run("checkout", "-q", "one")
    wait_for(lambda: len(found(watcher.config, "lyrebird")) == 0, "branch one content back")
    wait_for(lambda: len(found(watcher.config, "cassowary")) == 50, "branch one searchable")
    run("checkout", "-q", "two")
    wait_for(lambda: found(watcher.config, "cassowary") == [], "branch two checked out")
    # A file git rewrote can still be in the next batch when the last old entry is gone.
    wait_for(lambda: Index(watcher.config).entry_count() == 203, "every branch two entry indexed")
    assert len(found(watcher.config, "lyrebird")) == 50


def test_cjk_edit_is_searchable(vault: Path, watcher: Running) -> None:
    write(vault / "memory" / "2026-03-12.md", "- 09:00 决定把数据库迁移到 Postgres\n")
    wait_for(lambda: paths_with(watcher.config, "迁移") == {"memory/2026-03-12.md"}, "a Chinese note")


# ---------------------------------------------------------------------------------------------
# Lifecycle


def test_heartbeat_and_reader_awareness(vault: Path, watcher: Running) -> None:
    wait_for(lambda: index_status.watcher_alive(watcher.config), "a live heartbeat")
    info = index_status.watcher_info(watcher.config)
    assert info is not None and info.pid == os.getpid() and "running" in info.summary
    assert Index(watcher.config).ensure_current().watcher
    state = watcher.state()
    assert state["files_indexed"] == state["files_on_disk"] == 3
    status = ix.status(watcher.config)
    assert status.watcher is not None and status.watcher["alive"]


def test_an_in_process_recall_finds_an_edit_a_non_serving_watcher_has_not_indexed_yet(
    vault: Path, config: Config
) -> None:
    """Inside the watcher's debounce window the index lags the file; recall catches up itself."""
    from vault_tools.recall.recall import recall

    slow = WatchOptions(reconcile_seconds=3600, debounce_ms=60_000, max_latency_ms=60_000, serve=False)
    with start_watcher(config, slow):
        wait_for(lambda: index_status.watcher_alive(config), "a live heartbeat")
        with (vault / "memory" / "2026-03-11.md").open("a", encoding="utf-8") as handle:
            handle.write("- 21:00 Booked the zebrafinch lecture, 量子纠缠 for Friday\n")
        assert not found(config, "zebrafinch"), "the watcher's batch is still waiting"
        result = recall(config, "zebrafinch 量子纠缠")
        assert [hit.text for hit in result.results] == ["Booked the zebrafinch lecture, 量子纠缠 for Friday"]
        assert result.stale is False


def test_one_watcher_per_vault(config: Config, watcher: Running) -> None:
    with pytest.raises(LockedError, match="already running"):
        run_watch(config, stop_event=threading.Event(), options=FAST)


def test_start_reconciles_what_changed_while_down(vault: Path, config: Config) -> None:
    with start_watcher(config, FAST):
        pass
    write(vault / "memory" / "2026-03-12.md", "- 08:00 written while down: tuatara\n")
    (vault / "memory" / "2026-03-10.md").unlink()
    with start_watcher(config, FAST) as running:
        assert paths_with(running.config, "tuatara") == {"memory/2026-03-12.md"}
        assert found(running.config, "aardvark") == []


def test_timer_reconcile_repairs_a_missed_event(
    vault: Path, config: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vault_tools.watch import watcher as watch

    real = watch.ignored
    monkeypatch.setattr(
        watch, "ignored", lambda rel, is_dir: rel.endswith("missed.md") or real(rel, is_dir=is_dir)
    )
    options = WatchOptions(reconcile_seconds=0.3, debounce_ms=50, heartbeat_seconds=0.5)
    with start_watcher(config, options) as running:
        write(vault / "memory" / "missed.md", "- an event nobody saw: kiwi\n")
        wait_for(lambda: bool(found(running.config, "kiwi")), "the timer reconcile")


def test_stop_mid_batch_is_clean_and_caught_up_later(vault: Path, config: Config) -> None:
    idx = Index(config)
    idx.ensure_current()
    write(vault / "memory" / "2026-03-12.md", "- 08:00 half-done: kakapo\n")
    report = apply_changes(idx, {vault / "memory" / "2026-03-12.md"}, should_stop=lambda: True)
    assert report.interrupted
    assert found(config, "kakapo") == []
    with start_watcher(config, FAST) as running:
        assert paths_with(running.config, "kakapo") == {"memory/2026-03-12.md"}


WATCH_CMD = [
    sys.executable,
    "-W",
    "error",
    "-m",
    "vault_tools",
    "watch",
    "--reconcile-seconds",
    "600",
    "--debounce-ms",
    "50",
]


def start_watch_process(vault: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [*WATCH_CMD, "--vault", str(vault)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    config = load_config(vault)

    def ready() -> bool:
        assert proc.poll() is None, proc.communicate()[1]
        state = index_manifest.read_json(index_status.watch_state_path(config))
        return state.get("pid") == proc.pid and bool(state.get("last_reconcile"))

    wait_for(ready, "the watch process to start")
    return proc


def test_kill_9_then_restart_catches_up(vault: Path, config: Config) -> None:
    proc = start_watch_process(vault)
    write(vault / "memory" / "2026-03-12.md", "- 08:00 before the kill: possum\n")
    wait_for(lambda: bool(found(config, "possum")), "the watch process to index")
    proc.kill()
    proc.communicate(timeout=10)
    assert not index_status.watcher_alive(config)
    write(vault / "memory" / "2026-03-13.md", "- 08:00 while dead: bandicoot\n")
    (vault / "memory" / "2026-03-12.md").unlink()
    restarted = start_watch_process(vault)
    try:
        assert paths_with(config, "bandicoot") == {"memory/2026-03-13.md"}
        assert found(config, "possum") == []
        assert Index(config).doctor().ok
    finally:
        restarted.send_signal(signal.SIGTERM)
        restarted.communicate(timeout=15)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signals_stop_the_watcher_cleanly(vault: Path, config: Config, sig: signal.Signals) -> None:
    proc = start_watch_process(vault)
    proc.send_signal(sig)
    _out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    state = index_manifest.read_json(index_status.watch_state_path(config))
    assert state.get("stopped") and not index_status.watcher_alive(config)


def test_sigterm_during_a_long_first_reconcile(vault: Path, config: Config) -> None:
    for i in range(300):
        write(
            vault / "memory" / f"2024-{i // 28 % 12 + 1:02d}-{i % 28 + 1:02d}-{i}.md", f"- 08:00 {i} okapi\n"
        )
    proc = subprocess.Popen(
        [*WATCH_CMD, "--vault", str(vault)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    wait_for(
        lambda: index_manifest.read_json(index_status.watch_state_path(config)).get("pid") == proc.pid,
        "the watcher to start",
    )
    proc.send_signal(signal.SIGTERM)
    _out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    report = Index(config).ensure_current()  # whatever was not committed is simply done now
    assert not report.healed and Index(config).doctor().ok


READER_SCRIPT = """
import sys, time
from pathlib import Path
from typing import Any
from vault_tools.config import load_config
from vault_tools.recall.recall import recall
config = load_config(Path(sys.argv[1]))
deadline = time.monotonic() + float(sys.argv[2])
runs = errors = 0
while time.monotonic() < deadline:
    try:
        result = recall(config, "Miso")
        assert any("Miso" in hit.text for hit in result.results), result
        runs += 1
    except Exception as exc:
        errors += 1
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
print(runs, errors)
"""


def test_watcher_readers_and_a_writer_together(vault: Path, config: Config, tmp_path: Path) -> None:
    """A watch process, 4 `recall` processes and an indexing writer at once: zero errors."""
    watch_proc = start_watch_process(vault)
    readers = [
        subprocess.Popen(
            [sys.executable, "-W", "error", "-c", READER_SCRIPT, str(vault), "6"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    try:
        writer = Index(config, lock_timeout=20)
        for i in range(20):
            write(vault / "memory" / f"2026-05-{i + 1:02d}.md", f"- 08:00 concurrent note {i}: quokka\n")
            if i % 5 == 4:
                writer.reconcile()
            if i == 10:
                writer.rebuild()
        for proc in readers:
            out, err = proc.communicate(timeout=40)
            runs, errors = map(int, out.split())
            assert proc.returncode == 0 and errors == 0 and runs > 0, err
        wait_for(lambda: len(found(config, "quokka")) == 20, "every note indexed")
        assert watch_proc.poll() is None
    finally:
        watch_proc.send_signal(signal.SIGTERM)
        _out, err = watch_proc.communicate(timeout=20)
    assert watch_proc.returncode == 0, err
    assert "Traceback" not in err
    state = json.loads(index_status.watch_state_path(config).read_text())
    assert state["errors"] == 0, state


def test_a_watcher_started_by_hand_exits_once_when_its_vault_folder_is_deleted(
    config: Config, caplog: pytest.LogCaptureFixture
) -> None:
    started = time.time()
    thread, stop, errors = watch_in_thread(config, FAST)
    wait_for(
        lambda: (
            float(index_manifest.read_json(index_status.watch_state_path(config)).get("last_reconcile") or 0)
            >= started
        ),
        "the first reconcile",
    )
    delete_folder(config.vault)
    wait_for(lambda: not thread.is_alive(), "the watcher to exit")
    stop.set()
    assert not errors and not config.vault.exists()  # exited without re-creating the vault
    gone = [r for r in caplog.records if "was deleted; the watcher exits" in r.getMessage()]
    assert len(gone) == 1


@pytest.mark.parametrize(
    "stage", ["before the recall service", "before the observer", "in the first reconcile"]
)
def test_a_vault_deleted_while_the_watcher_starts_ends_it_with_one_message(
    config: Config, stage: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """No traceback, no endless warnings, and the vault is not re-created (not even .vault-tools/)."""
    from vault_tools.watch import service
    from vault_tools.watch import watcher as watch

    Index(config).rebuild()  # so the recall service's warm-up only opens it (no build to cut short)

    def deleting_first(real: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            delete_folder(config.vault)
            return real(*args, **kwargs)

        return wrapper

    if stage == "before the recall service":
        monkeypatch.setattr(service.RecallService, "start", deleting_first(service.RecallService.start))
    elif stage == "before the observer":
        monkeypatch.setattr(watch.Watcher, "start_observer", deleting_first(watch.Watcher.start_observer))
    else:
        monkeypatch.setattr(Index, "reconcile", deleting_first(Index.reconcile))
    thread, stop, errors = watch_in_thread(config, FAST)
    wait_for(lambda: not thread.is_alive(), "the watcher to exit")
    stop.set()
    said = [
        f"{r.levelname} {r.name}: {r.getMessage()}" for r in caplog.records
    ]  # for a rare failure under load
    assert not errors, (errors, said)
    assert not config.vault.exists(), (sorted(p.name for p in config.vault.rglob("*")), said)
    gone = [r for r in caplog.records if "was deleted; the watcher exits" in r.getMessage()]
    assert len(gone) == 1, said
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING and r not in gone], said
