"""Git's lock files (``index.lock``, ``HEAD.lock``, ref locks): waiting for a live one, clearing a stale one.

Git takes a lock by creating ``<file>.lock`` with ``O_EXCL`` and renames it over the file when done.
A git process killed in between (``kill -9``, a power cut, the OOM killer) leaves the lock behind,
and every later git command that needs it fails with "Another git process seems to be running".

When is a lock stale? Git does not ``flock`` its lock files, and it does not keep them open for
its whole life either: ``git commit`` writes ``index.lock``, closes it and only then runs the hooks
and the editor, which can take minutes. So "no process has the file open" is not enough. A lock is
held, and never removed, when any of these is true:

* some process has it open (Linux: a ``/proc/PID/fd/*`` link to it; elsewhere: ``lsof``), any
  process, not only git;
* a ``git`` process runs in this repository (its working directory is inside the work tree or the
  git directory, or its ``GIT_DIR`` / ``GIT_INDEX_FILE`` points there): it may be between writing
  the lock and committing it;
* we cannot tell (no ``/proc`` and no ``lsof``, or a git process of another user whose working
  directory we may not read: with ``lsof``, any other user's git process unless we are root).

A lock that nobody holds is removed only when it is also older than a grace period (10 s by
default): a git process that has just started may not have shown up in the scan yet, and a lock
that young is waited for like a held one. The removal re-checks the file's identity (inode and
mtime) right before unlinking it, so a lock that was replaced meanwhile is not the one removed.
A held lock is waited for (90 s by default, ``[heartbeat] lock_wait_seconds``), then the command
stops with :class:`LockedError` naming the lock and its holder.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from vault_tools.errors import LockedError

POLL_SECONDS = 0.05
#: Linux's view of every process (open files, working directory, environment). Where there is
#: none (macOS), ``lsof`` answers the same questions but for the environment.
PROC = Path("/proc")


@dataclass(frozen=True)
class LockCheck:
    path: Path
    holders: tuple[str, ...]  # who holds it (empty: nobody)
    age: float
    identity: tuple[int, int, int]  # (device, inode, mtime in ns): the file judged


def lock_files(git_dir: Path) -> list[Path]:
    """The lock files git would leave in ``git_dir``: the index, HEAD, packed refs and any ref."""
    found = [git_dir / name for name in ("index.lock", "HEAD.lock", "packed-refs.lock", "config.lock")]
    found = [path for path in found if path.exists()]
    refs = git_dir / "refs"
    if refs.is_dir():
        found += sorted(refs.rglob("*.lock"))
    return found


def check(lock: Path, roots: tuple[Path, ...], ignore: frozenset[int] = frozenset()) -> LockCheck | None:
    """Who holds ``lock`` and how old it is; None when it is gone."""
    try:
        stat = lock.stat()
    except FileNotFoundError:
        return None
    identity = (stat.st_dev, stat.st_ino, stat.st_mtime_ns)
    return LockCheck(lock, tuple(holders(lock, roots, ignore)), time.time() - stat.st_mtime, identity)


def holders(lock: Path, roots: tuple[Path, ...], ignore: frozenset[int] = frozenset()) -> list[str]:
    """Live processes that hold ``lock`` or may be about to commit it (see the module docstring);
    ``ignore``: this process's own helpers (its ``git cat-file`` reader), besides itself."""
    ignore = ignore | {os.getpid()}
    if (PROC / "self" / "fd").is_dir():
        return proc_holders(lock.resolve(), roots, ignore)
    if shutil.which("lsof"):
        return lsof_holders(lock, roots, ignore)
    return ["a process we cannot see (no /proc and no lsof on this system)"]


def _inside(path: str, roots: tuple[Path, ...]) -> bool:
    return any(path == str(root) or path.startswith(str(root) + os.sep) for root in roots)


def proc_holders(lock: Path, roots: tuple[Path, ...], ignore: frozenset[int]) -> list[str]:
    found: list[str] = []
    target = str(lock)
    for entry in PROC.iterdir():
        if not entry.name.isdigit() or int(entry.name) in ignore:
            continue
        try:
            name = (entry / "comm").read_text().strip()
        except OSError:
            continue  # gone meanwhile
        with contextlib.suppress(OSError):
            if any(os.readlink(fd) == target for fd in (entry / "fd").iterdir()):
                found.append(f"pid {entry.name} ({name}) has it open")
                continue
        if name == "git" or name.startswith("git-"):
            try:
                cwd = os.readlink(entry / "cwd")
                environ = (entry / "environ").read_bytes().split(b"\0")
            except PermissionError:
                found.append(f"pid {entry.name} (git, another user's: cannot check where it runs)")
                continue
            except OSError:
                continue  # it exited while we looked
            git_env = [
                v.split(b"=", 1)[1].decode("utf-8", "replace") for v in environ if v.startswith(b"GIT_")
            ]
            if _inside(cwd, roots) or any(_inside(value, roots) for value in git_env):
                found.append(f"pid {entry.name} (git) runs in this repository")
    return found


def lsof_holders(lock: Path, roots: tuple[Path, ...], ignore: frozenset[int]) -> list[str]:
    """macOS and other systems without /proc: ``lsof`` for open files and git's working directories."""
    found: list[str] = []
    opened = subprocess.run(["lsof", "-t", "--", str(lock)], capture_output=True, text=True, check=False)
    found += [f"pid {pid} has it open" for pid in opened.stdout.split() if int(pid) not in ignore]
    gits = subprocess.run(["lsof", "-a", "-c", "git", "-d", "cwd", "-Fpn"], capture_output=True, text=True)
    pid = ""
    for line in gits.stdout.splitlines():
        if line.startswith("p"):
            pid = line[1:]
        elif (
            line.startswith("n")
            and pid
            and _inside(os.path.realpath(line[1:]), roots)
            and int(pid) not in ignore
        ):
            found.append(f"pid {pid} (git) runs in this repository")
    return found + other_users_gits(ignore)


def other_users_gits(ignore: frozenset[int]) -> list[str]:
    """Without root, ``lsof`` cannot see where another user's process runs: each of their git
    processes may be committing here, so each holds the lock, as ``/proc`` judges it on Linux."""
    if os.geteuid() == 0:
        return []  # root's lsof saw every process
    try:
        listed = subprocess.run(
            ["ps", "-A", "-o", "pid=,uid=,comm="], capture_output=True, text=True, check=False, timeout=10
        )
    except (OSError, subprocess.TimeoutExpired):
        return ["a process we cannot see (ps failed)"]
    found = []
    for line in listed.stdout.splitlines():
        fields = line.split(None, 2)
        if len(fields) != 3 or not (fields[0].isdigit() and fields[1].isdigit()):
            continue
        pid, uid, name = int(fields[0]), int(fields[1]), os.path.basename(fields[2].strip())
        if pid in ignore or uid == os.geteuid():
            continue
        if name == "git" or name.startswith("git-"):
            found.append(f"pid {pid} (git, another user's: cannot check where it runs)")
    return found


def remove_if_unchanged(found: LockCheck) -> bool:
    """Unlink the lock when it is still the file that was judged stale."""
    try:
        stat = found.path.stat()
        if (stat.st_dev, stat.st_ino, stat.st_mtime_ns) != found.identity:
            return False
        found.path.unlink()
    except FileNotFoundError:
        return False
    return True


def clear(
    git_dir: Path,
    work_tree: Path,
    *,
    wait_seconds: float,
    grace_seconds: float,
    warn: Callable[[str], None],
    sleep: Callable[[float], None] = time.sleep,
    ignore: frozenset[int] = frozenset(),
    waiting: Callable[[str], None] | None = None,
) -> None:
    """Remove stale git locks (with a warning naming each) and wait for held ones.

    ``waiting`` hears once, as a wait begins, which lock is waited for and for how long at most.
    Raises :class:`LockedError` naming the lock when one is still held after ``wait_seconds``.
    """
    said = False
    roots = (work_tree.resolve(), git_dir.resolve())
    deadline = time.monotonic() + wait_seconds
    while True:
        pending: list[LockCheck] = []
        for lock in lock_files(git_dir):
            found = check(lock, roots, ignore)
            if found is None:
                continue
            if not found.holders and found.age >= grace_seconds:
                with contextlib.suppress(OSError):
                    if remove_if_unchanged(found):
                        warn(
                            f"removed {lock}: a git command that crashed left it {describe_age(found.age)} "
                            "ago and no process holds it"
                        )
                continue
            pending.append(found)
        if not pending:
            return
        if waiting is not None and not said:  # before the deadline: a slow first look is a wait too
            waiting(waiting_message(pending[0], wait_seconds))
            said = True
        if time.monotonic() >= deadline:
            raise LockedError(held_message(pending[0], wait_seconds))
        sleep(POLL_SECONDS)


def waiting_message(found: LockCheck, wait_seconds: float) -> str:
    who = "; ".join(found.holders) or f"{found.age:.0f} s old, no process seen holding it yet"
    return f"waiting for git: {found.path} is in use ({who}); up to {wait_seconds:g} s…"


def held_message(found: LockCheck, waited: float) -> str:
    who = (
        "; ".join(found.holders) or f"it is only {found.age:.0f} s old (a git command may have just started)"
    )
    return (
        f"{found.path} is in use ({who}); waited {waited:g} s. Try again when that git command has "
        "finished; if none is running, remove the file"
    )


def describe_age(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} minutes"
    return f"{seconds / 3600:.0f} hours"
