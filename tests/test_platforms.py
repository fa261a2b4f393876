"""What macOS does differently, exercised on Linux too (docs/platforms.md).

Where vault-tools reads Linux's ``/proc``, macOS has ``lsof`` and ``ps``: these tests take ``/proc``
away (the module's ``PROC`` pointed at a folder that does not exist) and check that the fallback
finds the same real processes the ``/proc`` probe finds. FSEvents names a changed file by its real
path, so the watcher's batcher gets such a path; launchd gets a property list; macOS's fsync gets
F_FULLFSYNC, refused by Linux, which shows the fallback.
"""

from __future__ import annotations

import fcntl
import os
import plistlib
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from vault_tools import cli
from vault_tools.errors import LockedError
from vault_tools.git import locks as gitlocks
from vault_tools.heartbeat.schedule import render
from vault_tools.notes import edit
from vault_tools.watch import watcher

ROOT = Path(__file__).resolve().parent.parent
needs_lsof = pytest.mark.skipif(shutil.which("lsof") is None, reason="lsof is not installed")


@pytest.fixture
def no_proc(tmp_path: Path) -> Path:
    return tmp_path / "no-proc"  # what PROC is on macOS: a path that is not there


def start(argv: list[str], cwd: Path | None = None) -> subprocess.Popen[bytes]:
    return subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=cwd)


def stop(*processes: subprocess.Popen[bytes]) -> None:
    for process in processes:
        process.kill()
        process.wait(timeout=10)
        for pipe in (process.stdin, process.stdout):
            if pipe is not None:
                pipe.close()


# ---------------------------------------------------------------------------------------------
# The background watcher's pid: /proc/PID/cmdline on Linux, ps elsewhere


def test_whether_a_pid_runs_vault_tools_is_read_with_ps_without_proc(
    monkeypatch: pytest.MonkeyPatch, no_proc: Path
) -> None:
    ours = start([sys.executable, "-c", "import sys; sys.stdin.read()", "-m", "vault_tools", "watch"])
    other = start(["cat"])
    try:
        with_proc = {pid: watcher._is_our_process(pid) for pid in (ours.pid, other.pid)}
        monkeypatch.setattr(watcher, "PROC", no_proc)
        command = watcher.command_line(ours.pid)
        assert command is not None and b"vault_tools watch" in command
        without_proc = {pid: watcher._is_our_process(pid) for pid in (ours.pid, other.pid)}
    finally:
        stop(ours, other)
    assert with_proc == without_proc == {ours.pid: True, other.pid: False}
    assert watcher.command_line(ours.pid) is None and not watcher._is_our_process(ours.pid)  # gone


def test_a_pid_whose_command_line_cannot_be_read_is_never_ours(
    monkeypatch: pytest.MonkeyPatch, no_proc: Path, tmp_path: Path
) -> None:
    """No /proc and no ps: the watcher is not signalled (a reused pid may be anyone's)."""
    ours = start([sys.executable, "-c", "import sys; sys.stdin.read()", "vault_tools"])
    try:
        monkeypatch.setattr(watcher, "PROC", no_proc)
        assert watcher._is_our_process(ours.pid)
        monkeypatch.setenv("PATH", str(tmp_path))  # no ps
        assert watcher.command_line(ours.pid) is None
        assert not watcher._is_our_process(ours.pid)
    finally:
        stop(ours)


# ---------------------------------------------------------------------------------------------
# Git's lock files: /proc on Linux, lsof on macOS


def make_repo(tmp_path: Path, name: str = "repo") -> Path:
    repo = tmp_path / name
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo


def stale_lock(repo: Path) -> Path:
    lock = repo / ".git" / "index.lock"
    lock.write_text("")
    old = time.time() - 3600
    os.utime(lock, (old, old))
    return lock


def holders_both_ways(
    monkeypatch: pytest.MonkeyPatch, no_proc: Path, lock: Path, repo: Path
) -> list[list[str]]:
    with_proc = gitlocks.holders(lock, (repo.resolve(), (repo / ".git").resolve()))
    with monkeypatch.context() as patched:
        patched.setattr(gitlocks, "PROC", no_proc)
        with_lsof = gitlocks.holders(lock, (repo.resolve(), (repo / ".git").resolve()))
    return [with_proc, with_lsof]


def until_seen(condition: object, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:  # type: ignore[operator]
        time.sleep(0.02)


@needs_lsof
def test_lsof_sees_a_process_that_holds_the_lock_open_as_proc_does(
    monkeypatch: pytest.MonkeyPatch, no_proc: Path, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path)
    lock = stale_lock(repo)
    holder = start(
        [
            sys.executable,
            "-c",
            "import sys; f = open(sys.argv[1]); print('open', flush=True); sys.stdin.read()",
            str(lock),
        ]
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"open\n"
        seen = holders_both_ways(monkeypatch, no_proc, lock, repo)
        monkeypatch.setattr(gitlocks, "PROC", no_proc)
        with pytest.raises(LockedError, match=f"pid {holder.pid} has it open"):
            gitlocks.clear(repo / ".git", repo, wait_seconds=0.2, grace_seconds=1, warn=lambda _w: None)
        assert lock.exists()
    finally:
        stop(holder)
    for found in seen:  # /proc also names the command: "pid 123 (python3) has it open"
        assert (
            len(found) == 1 and found[0].startswith(f"pid {holder.pid} ") and found[0].endswith("has it open")
        )


@needs_lsof
def test_lsof_sees_a_git_process_running_in_the_repository_as_proc_does(
    monkeypatch: pytest.MonkeyPatch, no_proc: Path, tmp_path: Path
) -> None:
    """git commit closes index.lock before its hooks and editor run: a live git there holds it."""
    repo = make_repo(tmp_path)
    lock = stale_lock(repo)
    waiting = start(["git", "hash-object", "--stdin"], cwd=repo)
    elsewhere = start(["git", "hash-object", "--stdin"], cwd=make_repo(tmp_path, "other"))
    try:
        monkeypatch.setattr(gitlocks, "PROC", no_proc)
        until_seen(lambda: gitlocks.holders(lock, (repo.resolve(),)))
        monkeypatch.undo()
        seen = holders_both_ways(monkeypatch, no_proc, lock, repo)
    finally:
        stop(waiting, elsewhere)
    assert seen == [[f"pid {waiting.pid} (git) runs in this repository"]] * 2
    monkeypatch.setattr(gitlocks, "PROC", no_proc)
    warnings: list[str] = []
    gitlocks.clear(repo / ".git", repo, wait_seconds=0.2, grace_seconds=1, warn=warnings.append)
    assert not lock.exists() and warnings[0].startswith(f"removed {lock}")  # nobody holds it now


AS_NOBODY = """
import sys
from pathlib import Path
from vault_tools.git import locks
locks.PROC = Path(sys.argv[3])
lock, repo = Path(sys.argv[1]), Path(sys.argv[2])
print("\\n".join(locks.holders(lock, (repo, repo / ".git"))))
"""


NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


@needs_lsof
@pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None,
    reason="runs the check as another user (root, setpriv)",
)
def test_without_root_lsof_cannot_see_where_another_users_git_runs_so_it_holds_the_lock(
    monkeypatch: pytest.MonkeyPatch, no_proc: Path, tmp_path: Path
) -> None:
    """As /proc judges it for a user who may not read another user's process: held, not stale."""
    probe = subprocess.run([*NOBODY, sys.executable, "-c", "pass"], capture_output=True, check=False, cwd="/")
    if probe.returncode != 0:  # e.g. a Python whose shared libpython is under /root
        pytest.skip(
            f"this Python cannot run as another user: {probe.stderr.decode(errors='replace').strip()}"
        )
    shared = Path(tempfile.mkdtemp(prefix="vault-tools-shared-"))  # a folder another user can read
    try:
        shared.chmod(0o755)
        repo = make_repo(shared)
        lock = stale_lock(repo)
        rootgit = start(["git", "hash-object", "--stdin"], cwd=make_repo(tmp_path, "roots"))
        try:
            monkeypatch.setattr(gitlocks, "PROC", no_proc)
            assert gitlocks.holders(lock, (repo, repo / ".git")) == []  # root's lsof sees it is elsewhere
            seen = subprocess.run(
                [*NOBODY, sys.executable, "-c", AS_NOBODY, str(lock), str(repo), str(shared / "no-proc")],
                capture_output=True,
                text=True,
                check=False,
                cwd=shared,
            )
        finally:
            stop(rootgit)
        assert seen.returncode == 0, seen.stderr
        assert (
            f"pid {rootgit.pid} (git, another user's: cannot check where it runs)" in seen.stdout.splitlines()
        )
    finally:
        shutil.rmtree(shared)


def test_with_neither_proc_nor_lsof_every_lock_is_held(
    monkeypatch: pytest.MonkeyPatch, no_proc: Path, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path)
    lock = stale_lock(repo)
    monkeypatch.setattr(gitlocks, "PROC", no_proc)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))  # no lsof
    with pytest.raises(LockedError, match="no /proc and no lsof"):
        gitlocks.clear(repo / ".git", repo, wait_seconds=0.1, grace_seconds=1, warn=lambda _w: None)
    assert lock.exists()


# ---------------------------------------------------------------------------------------------
# FSEvents names the real path of a vault reached through a symlink


@pytest.fixture
def linked_vault(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    real = tmp_path / "private" / "vault"
    (real / "memory").mkdir(parents=True)
    link = tmp_path / "vault"
    link.symlink_to(real, target_is_directory=True)
    yield link, real


def test_an_event_named_by_the_vaults_real_path_is_a_change_of_the_vault(
    linked_vault: tuple[Path, Path],
) -> None:
    from watchdog.events import FileModifiedEvent, FileMovedEvent

    link, real = linked_vault
    batcher = watcher.ChangeBatcher(link, debounce=0.0)
    handler = watcher.make_handler(batcher)
    handler.dispatch(FileModifiedEvent(str(real / "memory" / "2026-03-10.md")))  # as FSEvents says it
    handler.dispatch(FileMovedEvent(str(real / "memory" / ".x.md.swp"), str(real / "MEMORY.md")))
    handler.dispatch(FileModifiedEvent(str(real / ".git" / "index")))
    handler.dispatch(FileModifiedEvent(str(real.parent / "elsewhere.md")))
    batch = batcher.take(threading.Event(), timeout=1.0)
    assert batch == {link / "memory" / "2026-03-10.md", link / "MEMORY.md"}


# ---------------------------------------------------------------------------------------------
# launchd, the scheduler of macOS

VAULT = Path("/Users/you/vault")
EXE = "/Users/you/.local/bin/vault-tools"


def test_the_launchd_agent_runs_the_heartbeat_hourly_and_logs_beside_it() -> None:
    text = render("launchd", VAULT, interval_hours=24, executable=EXE)
    agent = plistlib.loads(text.encode("utf-8"))
    argv = agent["ProgramArguments"]
    assert argv[0] == EXE
    args = cli.build_parser().parse_args(argv[1:])
    assert (args.command, args.vault, args.if_due) == ("heartbeat", str(VAULT), True)
    assert agent["StartInterval"] == 3600 and agent["RunAtLoad"] is True
    assert agent["StandardOutPath"] == agent["StandardErrorPath"] == f"{VAULT}/.vault-tools/heartbeat.log"
    assert "launchctl bootstrap gui/$(id -u) ~/Library/LaunchAgents/org.vault-tools.heartbeat.plist" in text


def test_schedule_prints_the_launchd_agent(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault = tmp_path / "v"
    assert cli.main(["init", str(vault)]) == 0
    capsys.readouterr()
    assert cli.main(["--vault", str(vault), "schedule", "--print", "launchd"]) == 0
    agent = plistlib.loads(capsys.readouterr().out.encode("utf-8"))
    assert agent["ProgramArguments"][-4:] == ["--vault", str(vault), "heartbeat", "--if-due"]


def doc_blocks(lang: str) -> list[str]:
    import re

    text = (ROOT / "docs" / "integration.md").read_text(encoding="utf-8")
    return [m.group(2) for m in re.finditer(r"```(\w+)\n(.*?)```", text, re.DOTALL) if m.group(1) == lang]


def test_the_docs_launchd_agents_are_what_schedule_prints_and_a_watch() -> None:
    heartbeat, watch = (plistlib.loads(block.encode("utf-8")) for block in doc_blocks("xml"))
    printed = render("launchd", Path("/Users/you/vault"), interval_hours=24, executable=EXE)
    assert heartbeat == plistlib.loads(printed.encode("utf-8"))
    argv = watch["ProgramArguments"]
    assert argv[0] == EXE and cli.build_parser().parse_args(argv[1:]).command == "watch"
    assert watch["KeepAlive"] is True and watch["Label"] != heartbeat["Label"]


# ---------------------------------------------------------------------------------------------
# Durable writes: F_FULLFSYNC on macOS, fsync where it is refused


@pytest.mark.skipif(
    hasattr(fcntl, "F_FULLFSYNC"), reason="this system has F_FULLFSYNC (macOS): the next test"
)
def test_a_refused_full_fsync_falls_back_to_fsync(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    synced: list[int] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        synced.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(fcntl, "F_FULLFSYNC", 51, raising=False)  # macOS's number: Linux says EINVAL
    probe = os.open(tmp_path, os.O_RDONLY)
    try:
        with pytest.raises(OSError):
            fcntl.fcntl(probe, 51)
    finally:
        os.close(probe)
    note = tmp_path / "MEMORY.md"
    edit.atomic_write(note, "- 测试 durable\n".encode())
    assert note.read_text(encoding="utf-8") == "- 测试 durable\n"
    assert len(synced) == 2  # the file's data (after the refused F_FULLFSYNC), then the folder


@pytest.mark.skipif(not hasattr(fcntl, "F_FULLFSYNC"), reason="macOS's F_FULLFSYNC (Linux: the test above)")
def test_a_note_is_flushed_with_full_fsync_where_there_is_one(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    calls: list[str] = []
    real_fsync, real_fcntl = os.fsync, fcntl.fcntl
    full_fsync: int = fcntl.F_FULLFSYNC  # type: ignore[attr-defined,unused-ignore]

    def fsync(fd: int) -> None:
        calls.append("fsync")
        real_fsync(fd)

    def fcntl_call(fd: int, command: int, *rest: int) -> object:
        calls.append("F_FULLFSYNC" if command == full_fsync else str(command))
        return real_fcntl(fd, command, *rest)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(fcntl, "fcntl", fcntl_call)
    note = tmp_path / "MEMORY.md"
    edit.atomic_write(note, "- 测试 durable\n".encode())
    assert note.read_text(encoding="utf-8") == "- 测试 durable\n"
    flushes = [call for call in calls if call in ("F_FULLFSYNC", "fsync")]
    assert flushes == ["F_FULLFSYNC", "fsync"]  # the file's data all the way to the disk, then the folder
