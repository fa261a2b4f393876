"""Named inter-process locks under ``<vault>/.vault-tools/locks/``, with who holds them.

A lock is an OS file lock (``filelock``: ``flock`` on POSIX), so it is released when its holder
dies, ``kill -9`` included. Next to ``NAME.lock`` the holder writes ``NAME.owner`` (pid, what it
is doing, since when) so a process that times out can say who it waited for. The owner file is
advisory: it may be stale after a crash, and nothing relies on it for correctness.

Two lock objects exclude each other even inside one process and one thread, so never take the
same lock twice in a nested way: it would wait for itself.

A dead holder's lock can outlive it by a moment. ``flock`` belongs to the open file, and a child
the holder was starting (every git command) shares that open file from ``fork`` until its
``exec`` closes it (close-on-exec). When the holder is killed in that window, the child still
holds the lock for a few milliseconds after the holder was reaped, longer on a loaded machine, and
a heartbeat started right then would report "another process holds it" while none runs. So a
lock that is taken while its recorded owner is dead is waited for, up to
:data:`DEAD_HOLDER_GRACE_SECONDS`, before giving up.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vault_tools.config import Config
from vault_tools.errors import LockedError

if TYPE_CHECKING:
    from filelock import FileLock

LOCKS_DIR = "locks"
#: Held by a watcher for its whole life: one watcher per vault.
WATCH_LOCK = "watch"
#: Held by a heartbeat or a sync while it runs: one of them at a time.
HEARTBEAT_LOCK = "heartbeat"
#: Held while the index is written (an update, a rebuild, a merge).
INDEX_LOCK = "index"
#: How long a lock whose recorded owner has died is waited for (see the module docstring).
DEAD_HOLDER_GRACE_SECONDS = 5.0


def lock_path(config: Config, name: str) -> Path:
    return config.state_dir / LOCKS_DIR / f"{name}.lock"


def owner(config: Config, name: str) -> dict[str, Any]:
    """What the last holder of lock ``name`` wrote about itself (empty when unknown)."""
    path = lock_path(config, name).with_suffix(".owner")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def owner_alive(config: Config, name: str) -> bool:
    """Whether the process the owner file of lock ``name`` names still runs (True when unknown)."""
    pid = owner(config, name).get("pid")
    if not isinstance(pid, int) or pid <= 0:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True


def _acquire(config: Config, name: str, lock: FileLock, timeout: float, poll: float) -> bool:
    """Take ``lock`` within ``timeout`` s, or within the grace when its recorded owner is dead."""
    from filelock import Timeout

    try:
        lock.acquire(timeout=timeout, poll_interval=poll)
        return True
    except Timeout:
        if owner_alive(config, name):
            return False
    try:  # a child of the dead holder between fork and exec: gone in a moment
        lock.acquire(timeout=max(timeout, DEAD_HOLDER_GRACE_SECONDS), poll_interval=poll)
        return True
    except Timeout:
        return False


def describe_owner(config: Config, name: str) -> str:
    info = owner(config, name)
    if not info:
        return "another vault-tools process"
    return f"another vault-tools process (pid {info.get('pid', '?')}, {info.get('what', 'working')})"


#: What a person waiting for a lock may want to know about how long it is held.
_WHEN_FREE = {
    INDEX_LOCK: " (a watcher holds the index lock only while it indexes)",
    HEARTBEAT_LOCK: " (a heartbeat or a sync holds it for its run)",
}


@contextlib.contextmanager
def hold(config: Config, name: str, *, timeout: float, what: str) -> Iterator[None]:
    """Hold lock ``name`` for the ``with`` block, waiting up to ``timeout`` seconds (0: don't wait).

    Raises :class:`LockedError` naming the holder when the lock stays taken.
    """
    from filelock import FileLock  # imported here: a search that writes nothing never needs it

    path = lock_path(config, name)
    config.make_state_dir(LOCKS_DIR)
    lock = FileLock(str(path), timeout=timeout)
    if not _acquire(config, name, lock, timeout, 0.02):
        raise LockedError(
            f"{describe_owner(config, name)} holds {path}; waited {timeout:g} s. "
            f"Try again when it has finished{_WHEN_FREE.get(name, '')}."
        )
    try:
        write_owner(path.with_suffix(".owner"), what)
        yield
    finally:
        lock.release()


def write_owner(path: Path, what: str) -> None:
    """Best effort: the owner file only explains who holds a lock; failing to write it is harmless."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps({"pid": os.getpid(), "what": what, "since": time.time()}), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()


def try_hold(config: Config, name: str, *, what: str, timeout: float = 0) -> FileLock | None:
    """Take lock ``name`` (waiting up to ``timeout`` s) and keep it until ``release``; None when
    it stays taken.

    For long-lived holders (the watcher holds ``watch`` for its whole life).
    """
    from filelock import FileLock

    path = lock_path(config, name)
    config.make_state_dir(LOCKS_DIR)
    lock = FileLock(str(path), timeout=timeout)
    if not _acquire(config, name, lock, timeout, 0.05):
        return None
    write_owner(path.with_suffix(".owner"), what)
    return lock
