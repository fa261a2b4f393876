"""``vault-tools watch``: keep the index current while people and agents edit the vault.

Design. The event source and the handler are separate. A watchdog observer feeds raw events to a
:class:`ChangeBatcher`, which keeps only paths that can matter (notes, and folders that may hold
notes: both ends of a move; nothing under ``.git/``, ``.obsidian/``, ``.trash/``,
``.vault-tools/``; no editor temp or swap files) and releases them as one batch after
``debounce`` seconds of quiet, or ``max_latency`` seconds after the first event under a steady
stream, or at once when a served recall waits for it. :func:`apply_changes` hands a batch to :meth:`Index.update`, which re-reads exactly those
files, by content, in one commit. That covers every way a file gets saved (in place,
temp file + rename, backup-rename, ``sed -i``, ``cp`` over, delete + recreate, moves in and out, a
``git checkout`` of hundreds of files) without caring which one it was: the batch says *which*
paths to look at, the files say what is true.

Nothing here trusts events to be complete. On start the watcher reconciles (stat-based) with
everything that changed while it was down, and again every ``reconcile_seconds``, so a missed
event (inotify overflow, a folder renamed before it was watched) is repaired within minutes.

The heartbeat ``.vault-tools/watch.json`` (written atomically after each batch, each reconcile
and every ``heartbeat_seconds``) tells readers a watcher is alive, so ``recall`` can say so, and
tells ``status`` the last event, last reconcile and files indexed vs on disk. One watcher per
vault: it holds the ``watch`` lock for its life. While it runs it also answers ``recall`` and
``context`` from a warm searcher on a socket (:mod:`vault_tools.watch.service`).

SIGINT/SIGTERM set the stop event: the current batch stops between files, its writer is
cancelled, and because the manifest is only written after a commit, whatever was not committed
is found again by the next start's reconcile.
"""

from __future__ import annotations

import contextlib
import fnmatch
import logging
import math
import os
import signal
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from vault_tools import locks
from vault_tools.config import Config, holds_memory
from vault_tools.errors import LockedError, VaultError
from vault_tools.index.index import Index
from vault_tools.index.manifest import (
    LOCK_NAME,
    is_note_dir_rel,
    is_note_rel,
    load_manifest,
    read_json,
    write_json_atomic,
)
from vault_tools.index.status import watch_state_path
from vault_tools.index.writer import UpdateReport
from vault_tools.notes.edit import pid_alive
from vault_tools.watch.service import RecallService

if TYPE_CHECKING:
    from vault_tools.vectors.fill import VectorWorker

log = logging.getLogger("vault_tools.watch.watcher")

IGNORED_DIRS = frozenset({".git", ".obsidian", ".trash", ".vault-tools"})
#: Editor temp, swap and backup files: vim (.swp .swx 4913 and ~), Emacs (.#lock, ~, #auto-save#),
#: atomic-save temp files (.tmp, Obsidian's and agents'), JetBrains (___jb_tmp___).
IGNORED_NAMES = ("*.swp", "*.swx", "*.swo", "*~", ".#*", "#*#", "4913", "*.tmp", "*___jb_*___", ".~*")

#: Segment merges wait until no event came for this long (a save never waits for a merge).
IDLE_MAINTAIN_SECONDS = 5.0
#: A batch still not indexed after this long, with another process holding the index lock, is
#: waiting for that process: a served recall stops waiting for it (see Watcher.wait_indexed).
LOCK_WAIT_SECONDS = 0.5


@dataclass(frozen=True)
class WatchOptions:
    reconcile_seconds: float = 120.0
    debounce_ms: int = 150
    max_latency_ms: int = 2000
    heartbeat_seconds: float = 10.0
    lock_timeout: float = 5.0
    serve: bool = True  # answer recall/context on the socket (vault_tools.watch.service)
    idle_exit_seconds: float = 0.0  # > 0: exit after this long without a recall request (autostart)


def ignored(rel: str, *, is_dir: bool) -> bool:
    """Whether a vault-relative POSIX path can never change what is indexed."""
    parts = rel.split("/")
    if any(p in IGNORED_DIRS for p in parts):
        return True
    if is_dir:
        return rel in ("", ".") or not is_note_dir_rel(rel)
    name = parts[-1]
    if any(fnmatch.fnmatchcase(name, pattern) for pattern in IGNORED_NAMES):
        return True
    return not is_note_rel(rel)


class ChangeBatcher:
    """Collects changed paths and hands them out in debounced batches. Thread-safe."""

    def __init__(
        self,
        vault: Path,
        *,
        debounce: float = 0.25,
        max_latency: float = 2.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.vault = vault
        # FSEvents (macOS) names the real path: /private/var/… for a vault under /var/…, the
        # target for a vault reached through a symlink. Such a path is mapped back under `vault`.
        self.real_vault = Path(os.path.realpath(vault))
        self.debounce = debounce
        self.max_latency = max_latency
        self._clock = clock  # seconds, monotonic: when events came and batches are due
        self._paths: set[Path] = set()
        self._first: float | None = None
        self._last: float | None = None
        self._hurry = False  # somebody waits for what is pending: release it now
        self._cond = threading.Condition()
        self.last_event: float | None = None  # wall-clock time of the last kept event
        self.events = 0
        self.taken_through = 0  # the events the last batch taken covers

    def add(self, path: str | os.PathLike[str], *, is_dir: bool = False) -> bool:
        """Note a path an event touched. False when it is ignored."""
        candidate = self.in_vault(Path(os.fsdecode(path)))
        if candidate is None:
            return False  # outside the vault (the far end of a move out): the near end counts
        if ignored(candidate.relative_to(self.vault).as_posix(), is_dir=is_dir):
            return False
        now = self._clock()
        with self._cond:
            self._paths.add(candidate)
            self._first = self._first if self._first is not None else now
            self._last = now
            self.last_event = time.time()
            self.events += 1
            self._cond.notify_all()
        return True

    def in_vault(self, path: Path) -> Path | None:
        """``path`` under the vault as it was given (an event's real path mapped back); None outside it."""
        for root in (self.vault, self.real_vault):
            try:
                return self.vault / path.relative_to(root)
            except ValueError:
                continue
        return None

    def requeue(self, paths: set[Path]) -> None:
        """Put back a batch that could not be applied (it goes out again after the debounce)."""
        if not paths:
            return
        now = self._clock()
        with self._cond:
            self._paths |= paths
            self._first = self._first if self._first is not None else now
            self._last = now
            self._cond.notify_all()

    def hurry(self) -> None:
        """Release what is pending without waiting for quiet (a served recall is waiting for it)."""
        with self._cond:
            if self._paths:
                self._hurry = True
                self._cond.notify_all()

    def idle_for(self) -> float:
        """Seconds since the last kept event (infinite before the first), 0 while paths wait."""
        with self._cond:
            if self._paths:
                return 0.0
            return float("inf") if self.last_event is None else max(0.0, time.time() - self.last_event)

    def pending(self) -> int:
        with self._cond:
            return len(self._paths)

    def take(self, stop: threading.Event, timeout: float) -> set[Path]:
        """Wait up to ``timeout`` s for a batch to be ready; the batch, or an empty set."""
        deadline = self._clock() + max(0.0, timeout)
        with self._cond:
            while not stop.is_set():
                now = self._clock()
                if self._paths and self._first is not None and self._last is not None:
                    ready_at = min(self._last + self.debounce, self._first + self.max_latency)
                    if now >= ready_at or self._hurry:
                        batch, self._paths = self._paths, set()
                        self._first = self._last = None
                        self._hurry = False
                        self.taken_through = self.events
                        return batch
                    wake = min(ready_at, deadline)
                else:
                    wake = deadline
                if now >= deadline:
                    return set()
                # Short waits so a stop (set without notify, e.g. from a signal handler) is seen.
                self._cond.wait(min(wake - now, 0.2))
        return set()


def make_handler(batcher: ChangeBatcher) -> Any:
    """A watchdog event handler that feeds ``batcher`` (both ends of a move)."""
    from watchdog.events import FileSystemEventHandler

    class Handler(FileSystemEventHandler):  # type: ignore[misc]
        def on_any_event(self, event: Any) -> None:
            if event.event_type in ("opened", "closed_no_write"):
                return  # reads, ours included: never a change
            if event.event_type == "modified" and event.is_directory:
                return  # a folder's mtime: the file events say which file
            batcher.add(event.src_path, is_dir=event.is_directory)
            dest = getattr(event, "dest_path", "")
            if dest:
                batcher.add(dest, is_dir=event.is_directory)

    return Handler()


def event_types() -> list[Any]:
    from watchdog import events as ev

    return [
        ev.FileCreatedEvent,
        ev.FileModifiedEvent,
        ev.FileDeletedEvent,
        ev.FileMovedEvent,
        ev.FileClosedEvent,
        ev.DirCreatedEvent,
        ev.DirDeletedEvent,
        ev.DirMovedEvent,
    ]


def apply_changes(
    index: Index, paths: set[Path], *, should_stop: Callable[[], bool] | None = None
) -> UpdateReport:
    """Re-index exactly ``paths`` (notes or folders; paths that no longer exist are removed)."""
    return index.update(paths, should_stop=should_stop)


@dataclass
class WatchState:
    """What ``watch.json`` says: the heartbeat readers and ``status`` look at."""

    pid: int = field(default_factory=os.getpid)
    started: float = field(default_factory=time.time)
    heartbeat: float = field(default_factory=time.time)
    heartbeat_seconds: float = 10.0
    reconcile_seconds: float = 120.0
    last_event: float | None = None
    last_batch: float | None = None
    last_batch_files: int = 0
    last_reconcile: float | None = None
    batches: int = 0
    reconciles: int = 0
    errors: int = 0
    last_error: str | None = None
    files_on_disk: int = 0
    files_indexed: int = 0
    entries: int = 0
    idle_exit_seconds: float = 0.0
    stopped: float | None = None

    def summary(self) -> str:
        if self.stopped:
            return "stopped"
        started_by = (
            f", exits after {self.idle_exit_seconds / 60:g} min without a recall request"
            if self.idle_exit_seconds
            else ""
        )
        return (
            f"running (pid {self.pid}{started_by}): {self.files_indexed}/{self.files_on_disk} files indexed, "
            f"{self.entries} entries; last event {_ago(self.last_event)}, "
            f"last reconcile {_ago(self.last_reconcile)}"
        )

    def write(self, config: Config) -> None:
        self.heartbeat = time.time()
        data = {**self.__dict__, "summary": self.summary()}
        with contextlib.suppress(OSError):
            config.make_state_dir()
            write_json_atomic(watch_state_path(config), data)


def _ago(stamp: float | None) -> str:
    return "never" if stamp is None else f"{max(0.0, time.time() - stamp):.0f} s ago"


class Watcher:
    """One watch session: observer + batcher + index, driven by :meth:`run` until ``stop`` is set."""

    def __init__(
        self,
        config: Config,
        options: WatchOptions,
        stop: threading.Event,
        on_batch: Callable[[UpdateReport], None] | None = None,
    ) -> None:
        self.config = config
        self.options = options
        self.stop = stop
        self.on_batch = on_batch
        self.index = Index(config, lock_timeout=options.lock_timeout)
        self.batcher = ChangeBatcher(
            config.vault, debounce=options.debounce_ms / 1000, max_latency=options.max_latency_ms / 1000
        )
        self.state = WatchState(
            heartbeat_seconds=options.heartbeat_seconds,
            reconcile_seconds=options.reconcile_seconds,
            idle_exit_seconds=options.idle_exit_seconds,
        )
        self.observer: Any = None
        self.handler: Any = None
        self.memory_watch: Any = None
        self.memory_inode: int | None = None
        self._indexed = threading.Condition()
        self._indexed_through = 0  # the events whose changes the index holds
        self._failing = False  # the last batch or reconcile failed (and is retried)
        self._gone = False  # the vault folder was deleted: said once, then the watcher exits
        self._applying_since: float | None = None  # monotonic start of the batch being indexed

    def wait_indexed(self, timeout: float) -> str | None:
        """Wait until every change observed so far is indexed; None then, else why not.

        What the recall service asks before a search, so an edit saved just before the question
        is found (at 100k entries indexing a batch takes a few hundred ms). The wait ends early
        when indexing fails: the retry would fail the same way, and the caller is told so.
        """
        target = self.batcher.events
        deadline = time.monotonic() + timeout
        with self._indexed:
            if self._indexed_through < target:
                self.batcher.hurry()
            while self._indexed_through < target:
                if self._failing:
                    return (
                        f"the watcher could not index the latest edits ({self.state.last_error}); see its log"
                    )
                holder = self._blocked_by()
                if holder is not None:
                    return f"{holder} is writing the index; the latest edits are indexed once it is done"
                left = deadline - time.monotonic()
                if left <= 0:
                    return f"the watcher is still indexing edits saved in the last {timeout:g} s"
                self._indexed.wait(min(left, 0.1))
        return None

    def _blocked_by(self) -> str | None:
        """Who holds the index lock that this watcher's batch has been waiting for (None: nobody).

        Another process writing the index (a rebuild, ``doctor --fix``) can keep a batch waiting
        for its whole lock timeout; a served recall is not held up behind that.
        """
        since = self._applying_since
        if since is None or time.monotonic() - since < LOCK_WAIT_SECONDS:
            return None
        pid = locks.owner(self.config, LOCK_NAME).get("pid")
        if not isinstance(pid, int) or pid == os.getpid() or not pid_alive(pid):
            return None  # this watcher holds it (it is indexing), or nobody does
        return locks.describe_owner(self.config, LOCK_NAME)

    # -- observer -----------------------------------------------------------------------------

    def start_observer(self) -> None:
        """Watch the vault's top level (MEMORY.md, ``memory/`` coming and going) and ``memory/`` deeply.

        Only those: ``.git/`` (thousands of object folders), ``.vault-tools/`` (our own writes)
        and the agent's other folders never cost a watch or an event.
        """
        from watchdog.observers import Observer

        # watchdog warns when a folder created during its recursive scan is added twice; the
        # callback is the same one, so it is harmless, but under `-W error` the warning would
        # kill watchdog's shared inotify thread and every observer with it.
        warnings.filterwarnings("ignore", message="Callback with id", category=RuntimeWarning)
        observer = Observer()
        self.handler = make_handler(self.batcher)
        observer.schedule(self.handler, str(self.config.vault), recursive=False, event_filter=event_types())
        observer.daemon = True
        observer.start()
        self.observer = observer
        self.memory_watch = None
        self.memory_inode = None
        self.watch_memory()

    def watch_memory(self) -> None:
        """(Re)watch ``memory/`` when it appeared or was replaced since it was watched."""
        memory = self.config.vault / "memory"
        try:
            inode: int | None = memory.stat().st_ino if memory.is_dir() else None
        except OSError:
            inode = None
        if inode == self.memory_inode or self.observer is None:
            return
        if self.memory_watch is not None:
            with contextlib.suppress(Exception):
                self.observer.unschedule(self.memory_watch)
            self.memory_watch = None
        self.memory_inode = inode
        if inode is None:
            return
        try:
            self.memory_watch = self.observer.schedule(
                self.handler, str(memory), recursive=True, event_filter=event_types()
            )
        except OSError as exc:  # e.g. out of inotify watches: the timer reconcile still works
            log.warning(
                "cannot watch %s (%s); relying on the %g s reconcile",
                memory,
                exc,
                self.options.reconcile_seconds,
            )
            return
        self.batcher.requeue({memory})  # whatever happened in it before the watch started

    def stop_observer(self) -> None:
        if self.observer is not None:
            self.observer.stop()
            with contextlib.suppress(RuntimeError):
                self.observer.join(timeout=5)
            self.observer = None

    # -- loop ---------------------------------------------------------------------------------

    def vault_gone(self) -> bool:
        """Whether the vault folder was deleted (said once, in the log); the watcher then exits."""
        if not self._gone and not self.config.vault.is_dir():
            self._gone = True
            log.error("%s was deleted; the watcher exits", self.config.vault)
        return self._gone

    def observe(self) -> bool:
        """(Re)start the observer; False when the vault is gone (then the watcher exits)."""
        try:
            if self.vault_gone():  # e.g. while the recall service started
                return False
            self.stop_observer()
            self.start_observer()
        except OSError:
            if self.vault_gone():
                return False
            raise
        return True

    def run(self) -> WatchState:
        """Observe, reconcile once, then apply batches and reconcile on the timer until stopped."""
        if not self.observe():  # first, so edits made during the first reconcile are not missed
            return self.state
        self.state.write(self.config)
        next_reconcile = time.monotonic() + self.reconcile_delay(self.reconcile())
        next_heartbeat = time.monotonic() + self.options.heartbeat_seconds
        while not self.stop.is_set():
            now = time.monotonic()
            batch = self.batcher.take(self.stop, min(next_reconcile, next_heartbeat) - now)
            if self.stop.is_set() or self.vault_gone():
                break
            if batch:
                self.apply(batch, self.batcher.taken_through)
            self.watch_memory()
            if self.observer is None or not self.observer.is_alive():
                log.warning("the file observer stopped; restarting it and reconciling")
                if not self.observe():
                    break
                next_reconcile = 0.0
            now = time.monotonic()
            if now >= next_reconcile:
                next_reconcile = time.monotonic() + self.reconcile_delay(self.reconcile())
            if now >= next_heartbeat or batch:
                if not batch and self.batcher.idle_for() >= IDLE_MAINTAIN_SECONDS:
                    self.maintain()  # idle: merge what the batches left, off the latency path
                self.refresh_state()
                next_heartbeat = time.monotonic() + self.options.heartbeat_seconds
        return self.state

    def apply(self, batch: set[Path], through: int) -> None:
        """Index ``batch``, which holds the changes of the first ``through`` events."""
        started = self._applying_since = time.monotonic()
        try:
            report = apply_changes(self.index, batch, should_stop=self.stop.is_set)
        except (LockedError, OSError, VaultError) as exc:
            self.fail(exc, batch)
            return
        except Exception as exc:  # a bug must not kill the watcher; the timer reconcile repairs
            log.exception("indexing a batch failed")
            self.fail(exc, batch)
            return
        finally:
            self._applying_since = None
        if report.interrupted:
            return
        with self._indexed:
            self._indexed_through = max(self._indexed_through, through)
            self._failing = False
            self._indexed.notify_all()
        self.state.batches += 1
        self.state.last_batch = time.time()
        self.state.last_batch_files = len(batch)
        self.state.last_event = self.batcher.last_event
        for warning in report.warnings:
            log.warning("%s", warning)
        log.info(
            "%d path(s): %s (%.0f ms)", len(batch), report.summary(), (time.monotonic() - started) * 1000
        )
        if self.on_batch is not None:
            self.on_batch(report)

    def maintain(self) -> None:
        try:
            if self.index.maintain():
                log.info("merged small index segments")
        except Exception as exc:  # never fatal: the next commit past MAX_SEGMENTS merges anyway
            log.warning("merging segments failed: %s", exc)

    def reconcile_delay(self, succeeded: bool) -> float:
        """Seconds to the next reconcile: the interval, or soon again after a failed one."""
        return self.options.reconcile_seconds if succeeded else min(5.0, self.options.reconcile_seconds)

    def reconcile(self) -> bool:
        """A full stat-based sync (the safety net for missed events). False when it failed."""
        self._applying_since = time.monotonic()
        try:
            report = self.index.reconcile(should_stop=self.stop.is_set, merge=False)  # merges wait for idle
        except (LockedError, OSError, VaultError) as exc:
            self.fail(exc, set())
            return False
        except Exception as exc:
            log.exception("reconciling failed")
            self.fail(exc, set())
            return False
        finally:
            self._applying_since = None
        if report.interrupted:
            return False
        for warning in report.warnings:
            log.warning("%s", warning)
        if report.changed or report.rebuilt:
            log.info("reconciled: %s", report.summary())
        self.state.reconciles += 1
        self.state.last_reconcile = time.time()
        self.state.files_on_disk = report.files_on_disk
        self.refresh_state()
        if self.on_batch is not None:
            self.on_batch(report)
        return True

    def fail(self, exc: BaseException, batch: set[Path]) -> None:
        if self.vault_gone():
            return  # not an error to retry: the loop ends
        self.state.errors += 1
        self.state.last_error = f"{type(exc).__name__}: {exc}"
        log.warning("will retry: %s", self.state.last_error)
        with self._indexed:
            self._failing = True
            self._indexed.notify_all()
        self.batcher.requeue(batch)
        self.stop.wait(1.0)  # back off a little before the requeued batch comes out again

    def refresh_state(self) -> None:
        manifest = load_manifest(self.index.dir)
        if manifest is not None:
            self.state.files_indexed = len(manifest)
            self.state.entries = sum(r.entries for r in manifest.values())
        self.state.last_event = self.batcher.last_event
        self.state.write(self.config)


@contextlib.contextmanager
def _stop_on_signals(stop: threading.Event, enabled: bool) -> Iterator[None]:
    """SIGINT/SIGTERM set ``stop`` (only possible from the main thread); old handlers restored after."""
    if not enabled or threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        del frame
        log.info("received %s; stopping", signal.Signals(signum).name)
        stop.set()

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def run_watch(
    config: Config,
    *,
    stop_event: threading.Event | None = None,
    on_batch: Callable[[UpdateReport], None] | None = None,
    options: WatchOptions | None = None,
    handle_signals: bool = True,
) -> WatchState:
    """Watch the vault until ``stop_event`` is set or SIGINT/SIGTERM arrives; the final state.

    Runs in a thread (tests: pass ``stop_event``) or as the main program (the CLI). ``on_batch``
    is called after each applied batch and each reconcile with its report. Raises
    :class:`LockedError` when another watcher already runs on this vault.
    """
    options = options or WatchOptions()
    if options.idle_exit_seconds and not options.serve:
        raise ValueError("an idle exit counts recall requests, so it needs the recall service")
    stop = stop_event or threading.Event()
    lock = locks.try_hold(config, locks.WATCH_LOCK, what=_lock_role(options))
    if lock is None and not options.idle_exit_seconds:
        lock = _take_over(config)
    if lock is None:
        raise LockedError(
            f"a watcher is already running on {config.vault} "
            f"({locks.describe_owner(config, locks.WATCH_LOCK)}); one is enough"
        )
    embedder = _vector_worker(config)
    if embedder is not None:
        on_batch = _also(embedder.wake, on_batch)
    watcher = Watcher(config, options, stop, on_batch)
    service = RecallService(config, settle=watcher.wait_indexed) if options.serve else None
    try:
        if embedder is not None:
            embedder.start()
        if service is not None:
            service.start()
            if options.idle_exit_seconds:
                _exit_when_idle(config, service, stop, options.idle_exit_seconds)
        with _stop_on_signals(stop, handle_signals):
            return watcher.run()
    finally:
        if service is not None:
            service.stop()
        if embedder is not None:
            embedder.stop()
        watcher.stop_observer()
        watcher.state.stopped = time.time()
        watcher.state.write(config)
        lock.release()


def _vector_worker(config: Config) -> VectorWorker | None:
    """The thread that embeds what the watcher indexed (``[embeddings]`` configured), else None."""
    if not config.embeddings.configured:
        return None
    from vault_tools.vectors.fill import VectorWorker

    return VectorWorker(config)


def _also(
    first: Callable[[UpdateReport], None], then: Callable[[UpdateReport], None] | None
) -> Callable[[UpdateReport], None]:
    def both(report: UpdateReport) -> None:
        first(report)
        if then is not None:
            then(report)

    return both


#: What a watcher writes as the watch lock's owner (locks.write_owner), from the moment it holds
#: the lock: a watcher someone started is never replaced, one that recall started always is.
WATCHING = "watching"
WATCHING_UNTIL_IDLE = "watching until idle (started by recall)"
#: How long an explicit ``watch`` waits for a background watcher to hand over the lock, and after
#: how long of that it stops asking (SIGTERM) and kills it (the index survives a kill -9).
TAKE_OVER_SECONDS = 20.0
KILL_AFTER_SECONDS = 10.0


def _lock_role(options: WatchOptions) -> str:
    return WATCHING_UNTIL_IDLE if options.idle_exit_seconds else WATCHING


def _take_over(config: Config) -> Any:
    """Take the watch lock from a background watcher at any stage of its life; None when a
    watcher someone started holds it.

    The lock's owner record says which kind holds it, from the moment it is held, so a watcher
    still starting (no ``watch.json`` yet) or healing the index is recognised as well as one
    serving. It is asked to stop (SIGTERM), and killed when it has not let go after
    :data:`KILL_AFTER_SECONDS`. Anyone else holding the lock briefly (a ``recall`` checking for a
    watcher, a holder that has not written its record yet) is waited for.
    """
    deadline = time.monotonic() + TAKE_OVER_SECONDS
    asked: dict[int, float] = {}
    while time.monotonic() < deadline:
        holder = locks.owner(config, locks.WATCH_LOCK)
        pid, role = holder.get("pid"), holder.get("what")
        if isinstance(pid, int) and (pid == os.getpid() or _is_our_process(pid)):
            background = role == WATCHING_UNTIL_IDLE or (role == WATCHING and _says_idle_exit(config, pid))
            if not background and role == WATCHING:
                return None
            if background and pid != os.getpid():
                _ask_to_stop(pid, asked)
        lock = locks.try_hold(config, locks.WATCH_LOCK, what=WATCHING, timeout=0.2)
        if lock is not None:
            return lock
    return None


def _says_idle_exit(config: Config, pid: int) -> bool:
    """Whether ``watch.json`` says watcher ``pid`` exits when idle (how an earlier version, whose
    lock record says only "watching", is known as recall's)."""
    info = read_json(watch_state_path(config))
    return info.get("pid") == pid and bool(info.get("idle_exit_seconds")) and not info.get("stopped")


def _ask_to_stop(pid: int, asked: dict[int, float]) -> None:
    """SIGTERM ``pid`` the first time; SIGKILL once it has had KILL_AFTER_SECONDS to stop."""
    now = time.monotonic()
    if pid not in asked:
        log.info("stopping the watcher recall started (pid %d); this one takes over", pid)
        sig: int | None = signal.SIGTERM
        asked[pid] = now
    elif now - asked[pid] >= KILL_AFTER_SECONDS:
        log.warning("the watcher recall started (pid %d) did not stop; killing it", pid)
        sig = getattr(signal, "SIGKILL", signal.SIGTERM)
        asked[pid] = math.inf
    else:
        sig = None
    if sig is not None:
        with contextlib.suppress(OSError):
            os.kill(pid, sig)


#: Where Linux shows each process (its command line); macOS has none, and ``ps`` answers there.
PROC = Path("/proc")


def command_line(pid: int) -> bytes | None:
    """Process ``pid``'s command line: from ``/proc`` where there is one, else from ``ps`` (macOS,
    the BSDs); None when it cannot be read (the process is gone, or neither is available)."""
    if PROC.is_dir():
        try:
            return (PROC / str(pid) / "cmdline").read_bytes()
        except OSError:
            return None
    import subprocess

    try:
        shown = subprocess.run(
            ["ps", "-ww", "-o", "args=", "-p", str(pid)], capture_output=True, check=False, timeout=5
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return shown.stdout if shown.returncode == 0 and shown.stdout.strip() else None


def _is_our_process(pid: int) -> bool:
    """Alive and running vault-tools: a stale record's pid, reused by another program, is not, and
    neither is a process whose command line cannot be read (it is never signalled)."""
    if not pid_alive(pid):
        return False
    command = command_line(pid)
    return command is not None and (b"vault_tools" in command or b"vault-tools" in command)


def _exit_when_idle(config: Config, service: RecallService, stop: threading.Event, seconds: float) -> None:
    """Set ``stop`` once no request came for ``seconds``, or the vault is gone (a thread)."""

    def check() -> None:
        while not stop.wait(min(5.0, max(0.1, seconds / 4))):
            if service.idle_for() >= seconds:
                log.info("no recall request for %g s; exiting", seconds)
                stop.set()
            elif not holds_memory(config.vault):
                log.info("%s is gone (no MEMORY.md or memory/ left); exiting", config.vault)
                stop.set()

    threading.Thread(target=check, name="vault-tools-idle-exit", daemon=True).start()
