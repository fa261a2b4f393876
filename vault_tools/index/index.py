"""The search index: one Whoosh document per entry, kept current from the files by a manifest.

Design. The Markdown files are the truth; ``<vault>/.vault-tools/index/`` is a disposable cache of
them. It holds the Whoosh index, ``meta.json`` (schema and analyzer versions) and
``manifest.json``: for every indexed file its size, mtime, sha256, entry count and read
warnings. The manifest is the truth about what is indexed, and it is written (atomically) only
after the index commit it describes, so a crash at any point leaves files that look changed and
are re-indexed on the next update: nothing is ever lost, at worst re-done. Documents that no
manifest entry accounts for (a crash between the two) are found by their ``path`` and removed
by the next full update.

An update stats every note (:func:`scan_note_stats`, the same files as
:func:`vault_tools.notes.model.iter_note_paths` in a few milliseconds): same size and mtime → skipped;
otherwise the file is hashed, and only a changed hash re-parses it; the entries whose documents
differ (:func:`vault_tools.index.documents.entry_fingerprints`) are written again. A long note that
only grew at its end is read from its old last entry on (:mod:`vault_tools.notes.tail`,
:mod:`vault_tools.index.tail`), so an append costs the same however long the note is; any doubt
(not a prefix, read warnings, front matter) takes the full read. A file whose mtime is within
:data:`RACY_SECONDS` of when it was recorded is re-hashed next time (an edit in the same clock
tick with the same size would otherwise be missed). All the changes of one update go into one
commit. A rebuild writes a new index next to the old one (in parallel worker processes for
large vaults) and swaps it in, so readers keep working during it.

Concurrency. Writers hold the ``index`` lock (:mod:`vault_tools.locks`) with a timeout; readers
never take it. A reader that hits a transient error (a segment merged away under it, the
directory swapped by a rebuild) retries. Only a process that holds the lock decides that an
index is broken: it re-checks, moves it to ``.vault-tools/index.broken-<time>/`` (the last two
are kept), rebuilds and reports one warning. A reader that cannot get the lock quickly searches
what is there and reports ``stale`` instead; a missing or broken index that another process is
rebuilding raises :class:`IndexBusyError`.

Public API (what ``recall``, ``heartbeat`` and the CLI use)::

    idx = Index(config)                  # cheap; not thread-safe (one per thread)
    report = idx.ensure_current()        # reading commands: heal + stat-based catch-up
    if report.stale: say "results may be stale: " + report.stale_reason
    for w in report.warnings: warn(w)    # a healed index says so here, once
    with idx.searcher() as s:            # a whoosh Searcher (the one ensure_current opened)
        hits = s.search(query, filter=date_filter(since, until), limit=50)
        entries = [IndexedEntry.from_fields(h.fields()) for h in hits]
    idx.read(lambda s: ...)              # the same, retried once via recover() if reading fails
    idx.recover()                        # after an unexpected search error: deep check, heal
    idx.warnings                         # heal warnings from searcher()/read()/recover()
    idx.update([path, ...])              # re-read exactly these files (watcher, heartbeat)
    idx.reconcile()                      # full stat-based sync, waits for the lock
    idx.rebuild()                        # from nothing
    idx.doctor(fix=False) -> DoctorReport;  status(config) -> IndexStatus
    idx.close()                          # or ``with Index(config) as idx:``

Field names are the ``F_*`` constants; :func:`date_filter`, :func:`tag_filter` and
:func:`visibility_filter` build the filter queries the schema is designed for (dates are
16-bit NUMERIC day numbers, :func:`day_number`; tags match by hierarchical prefix with one
Term on ``tagpath``). ``day`` is sortable (``sortedby=F_DAY``).

Where the parts live (:class:`Index` ties them together; every public name is also importable
from here):

* :mod:`vault_tools.index.documents`: fields, schema, an entry's document, filters, neighbours
* :mod:`vault_tools.index.manifest`: the manifest, the index folder's files, scanning the notes
* :mod:`vault_tools.index.writer`: incremental updates, the batch writer, segment merges
* :mod:`vault_tools.index.builder`: full builds (parallel workers), swapping a new index in
* :mod:`vault_tools.index.healing`: is the index usable; quarantine and rebuild when not
* :mod:`vault_tools.index.doctor`: ``doctor``: disk against index, document by document
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypeVar

from vault_tools import locks
from vault_tools.config import Config
from vault_tools.errors import LockedError, VaultError
from vault_tools.index import storage
from vault_tools.index.builder import (
    BUILD_LIMIT_MB,
    KEEP_BROKEN,
    MAX_BUILD_WORKERS,
    PARALLEL_BUILD_BYTES,
    build_worker_main,
)
from vault_tools.index.doctor import DoctorReport, IndexDoctor
from vault_tools.index.documents import (
    DAY_EPOCH,
    F_AFTER,
    F_BEFORE,
    F_BLOCK_ID,
    F_DATETIME,
    F_DAY,
    F_END,
    F_FIELDS,
    F_FILE_HASH,
    F_ID,
    F_IMPORTANCE,
    F_KIND,
    F_LINKS,
    F_NEIGHBOURS,
    F_NEXT,
    F_PATH,
    F_SECTION,
    F_SPEAKER,
    F_START,
    F_TAGPATH,
    F_TAGS,
    F_TEXT,
    F_VISIBILITY,
    NEIGHBOUR_FIELDS,
    NEIGHBOURS_AFTER,
    NEIGHBOURS_BEFORE,
    SCHEMA_VERSION,
    IndexedEntry,
    date_filter,
    day_from_number,
    day_number,
    entry_document,
    make_schema,
    neighbours,
    schema,
    tag_filter,
    tag_prefixes,
    visibility_filter,
)
from vault_tools.index.healing import TRANSIENT_RETRIES, IndexBusyError
from vault_tools.index.manifest import (
    INDEX_DIR,
    LOCK_NAME,
    MANIFEST_FILE,
    MANIFEST_VERSION,
    META_FILE,
    RACY_SECONDS,
    FileRecord,
    Scan,
    is_note_dir_rel,
    is_note_rel,
    load_manifest,
    read_json,
    save_manifest,
    scan_note_stats,
    scan_notes,
    write_json_atomic,
)
from vault_tools.index.writer import (
    MAX_SEGMENTS,
    MERGE_FACTOR,
    KnownFile,
    UpdateReport,
    merge_group,
    tiered_merge,
)
from vault_tools.notes import edit as note_edit
from vault_tools.notes import model as notes

T = TypeVar("T")
log = logging.getLogger("vault_tools.index.index")


WATCH_STATE_FILE = "watch.json"
#: ``maintain(optimize=True)`` rewrites the index when this share of its documents is deleted.
MAINTAIN_DELETED_SHARE = 0.3


@dataclass
class WatcherInfo:
    pid: int
    alive: bool  # the process runs and its heartbeat is fresh
    heartbeat: float  # unix time of its last heartbeat
    last_event: float | None
    last_reconcile: float | None
    summary: str


@dataclass
class IndexStatus:
    state: str  # ok | stale | missing | broken | old
    summary: str
    problem: str | None
    entries: int
    files_indexed: int
    files_on_disk: int
    changed_files: list[str]  # by stat: new, modified or deleted since the last update
    last_update: str | None  # ISO time the manifest was written
    size_bytes: int
    segments: int
    deleted_docs: int
    schema_version: int | None
    analyzer_version: int | None
    watcher: dict[str, Any] | None
    bad_files: list[str]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# ---------------------------------------------------------------------------------------------
# The index


class Index(IndexDoctor):
    """The entry index of one vault. Cheap to create; every method opens what it needs.

    ``lock_timeout`` is how long writing methods (update, reconcile, rebuild, doctor --fix) wait
    for another writer; ``ensure_current`` waits ``read_lock_timeout`` and then reports stale.
    """

    def __init__(
        self,
        config: Config,
        *,
        lock_timeout: float = 30.0,
        read_lock_timeout: float = 2.0,
        build_workers: int | None = None,
    ) -> None:
        self.config = config
        self.vault = config.vault
        self.lock_timeout = lock_timeout
        self.read_lock_timeout = read_lock_timeout
        self.dir = config.state_dir / INDEX_DIR
        #: Processes for a full build; None: decided by the vault's size (see PARALLEL_BUILD_BYTES).
        self.build_workers: int | None = build_workers
        #: Warnings from healing that happened outside a report (in ``searcher``/``read``/``recover``).
        self.warnings: list[str] = []
        self._ix: Any = None
        self._primed: Any = None  # a searcher opened (and so validated) by ensure_current
        self._known: dict[str, KnownFile] = {}
        self._known_stamp: tuple[int, int] | None = None

    def close(self) -> None:
        """Close the searcher ``ensure_current`` opened, if ``searcher()`` did not take it."""
        primed, self._primed = self._primed, None
        if primed is not None:
            try:  # not contextlib.suppress: this also runs from __del__ at interpreter exit
                primed.close()
            except Exception:
                return

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()

    # -- reading ------------------------------------------------------------------------------

    @contextlib.contextmanager
    def searcher(self) -> Iterator[Any]:
        """A Whoosh ``Searcher`` over the current index, closed at the end of the block.

        Opening it heals a missing or broken index first (under the lock; see ``warnings``).
        An error *inside* the block is the caller's: call :meth:`recover` and search again,
        or use :meth:`read`, which does that.
        """
        s = self.open_searcher()
        try:
            yield s
        finally:
            s.close()

    def open_searcher(self) -> Any:
        """What :meth:`searcher` yields, for a caller that keeps it open and closes it itself.

        Keep it current with ``s = s.refresh()`` (then close only the new one: it reuses the
        old one's open segments, and the old one's others are closed by the refresh).
        """
        s = self._take_primed()
        if s is None:
            report = UpdateReport()
            s = self._open_searcher(report)
            self.warnings += report.warnings
        return s

    def read(self, fn: Callable[[Any], T]) -> T:
        """``fn(searcher)``, retried once if reading fails mid-way.

        A concurrent merge or rebuild can delete files an open reader still wants, and damage
        can hide in a part of the index only a search touches: before the retry,
        :meth:`recover` checks the index thoroughly and rebuilds it when it is broken.
        """
        try:
            with self.searcher() as s:
                return fn(s)
        except VaultError:
            raise
        except Exception as exc:
            log.warning(
                "%s: a search failed (%s: %s); checking the index, then once more",
                self.dir,
                type(exc).__name__,
                exc,
            )
            time.sleep(TRANSIENT_RETRIES[0])
            self.recover()
        with self.searcher() as s:
            return fn(s)

    def recover(self) -> UpdateReport | None:
        """After an unexpected error from a search: check the index thoroughly, rebuild it if broken.

        Returns the rebuild's report (its warning is also added to ``warnings``), or None when
        the index is fine (the error was transient). Raises :class:`IndexBusyError` when it is
        broken and another process holds the lock.
        """
        self.close()
        self._ix = None
        report = UpdateReport()
        if not self._heal_if_needed(report, progress=False, timeout=self.read_lock_timeout, deep=True):
            return None
        self.warnings += report.warnings
        return report

    def entry_count(self) -> int:
        return int(self.read(lambda s: s.doc_count()))

    # -- writing ------------------------------------------------------------------------------

    def ensure_current(self, *, progress: bool = False) -> UpdateReport:
        """What a reading command calls first: heal if needed, then catch up on changed files.

        Cheap when nothing changed (a stat of every note, no lock). When something changed it
        takes the lock for up to ``read_lock_timeout`` seconds and indexes it; if another writer
        keeps the lock, nothing is written and the report says ``stale`` with why. It ends by
        opening the searcher that the next ``searcher()`` call hands out, so a broken index is
        found (and healed, with a warning in the report) here rather than mid-search.
        """
        started = time.monotonic()
        report = UpdateReport(watcher=watcher_alive(self.config))
        self.close()
        if not self._heal_if_needed(report, progress=progress, timeout=self.read_lock_timeout):
            self._catch_up(report, progress=progress)
        self._primed = self._open_searcher(report, checked=True)
        report.seconds = time.monotonic() - started
        return report

    def _catch_up(self, report: UpdateReport, *, progress: bool) -> None:
        manifest = load_manifest(self.dir) or {}
        on_disk = self._scan(report)
        changed, deleted = self._diff(manifest, on_disk, hash_check=True)
        report.files_on_disk = len(on_disk)
        report.entries = sum(r.entries for r in manifest.values())
        if not changed and not deleted:
            return
        try:
            with locks.hold(self.config, LOCK_NAME, timeout=self.read_lock_timeout, what="catching up"):
                self._guarded(report, progress, None, lambda: self._reconcile_locked(report, progress, None))
        except LockedError:
            report.stale = True
            report.stale_reason = (
                f"{len(changed) + len(deleted)} changed file(s) not indexed yet; "
                f"{locks.describe_owner(self.config, LOCK_NAME)} is writing the index"
            )

    def reconcile(
        self,
        *,
        progress: bool = False,
        should_stop: Callable[[], bool] | None = None,
        merge: bool = True,
        optimize: bool = False,
    ) -> UpdateReport:
        """Bring the index in line with every note on disk (what ``vault-tools index`` does).

        Then, with ``merge``, merges the small segments updates left (and with ``optimize``
        drops a large share of deleted documents; see :meth:`maintain`).
        """
        started = time.monotonic()
        report = UpdateReport(watcher=watcher_alive(self.config))

        def body() -> None:
            self._reconcile_locked(report, progress, should_stop)
            if (merge or optimize) and not report.interrupted:
                self._maintain_locked(max_docs=2**62 if optimize else 4096, optimize=optimize)

        with locks.hold(self.config, LOCK_NAME, timeout=self.lock_timeout, what="updating the index"):
            if not self._heal_locked(report, progress=progress, should_stop=should_stop):
                self._guarded(report, progress, should_stop, body)
        report.seconds = time.monotonic() - started
        return report

    def update(self, paths: Iterable[Path], *, should_stop: Callable[[], bool] | None = None) -> UpdateReport:
        """Re-read exactly ``paths`` (files or folders; gone ones are removed from the index).

        Paths that are not notes (outside ``memory/``, not ``.md``, in ``.git/`` …) are ignored.
        Each file is hashed, so a save that kept size and mtime is still seen.
        """
        started = time.monotonic()
        report = UpdateReport()

        def body() -> None:
            manifest = load_manifest(self.dir) or {}
            self._apply(report, manifest, self._expand(paths, manifest), should_stop=should_stop)

        with locks.hold(self.config, LOCK_NAME, timeout=self.lock_timeout, what="updating the index"):
            if not self._heal_locked(report, progress=False, should_stop=should_stop):
                self._guarded(report, False, should_stop, body)
        report.seconds = time.monotonic() - started
        return report

    def rebuild(
        self, *, progress: bool = False, should_stop: Callable[[], bool] | None = None
    ) -> UpdateReport:
        """Index every note from nothing (into a new folder, swapped in when complete)."""
        started = time.monotonic()
        report = UpdateReport()
        with locks.hold(self.config, LOCK_NAME, timeout=self.lock_timeout, what="rebuilding the index"):
            self._rebuild_locked(report, progress=progress, should_stop=should_stop, quarantine=None)
        report.seconds = time.monotonic() - started
        return report

    def maintain(self, *, max_docs: int = 4096, optimize: bool = False, lock_timeout: float = 0.0) -> bool:
        """Merge one size class of the small segments updates leave; True when it merged.

        The watcher calls it when idle (a class of up to ``max_docs`` documents: ~1 s), and
        ``vault-tools index`` after updating. With ``optimize`` the index is instead rewritten
        as one segment when more than :data:`MAINTAIN_DELETED_SHARE` of its documents are
        deleted ones (edits of old notes leave them in the big segments; a rewrite takes as
        long as a build). Returns False at once when another process holds the lock beyond
        ``lock_timeout``.
        """
        try:
            with locks.hold(self.config, LOCK_NAME, timeout=lock_timeout, what="merging segments"):
                return self.problem() is None and self._maintain_locked(max_docs=max_docs, optimize=optimize)
        except LockedError:
            return False

    def _maintain_locked(self, *, max_docs: int, optimize: bool) -> bool:
        self._ix = None
        ix = self._open_ix()
        remembered = self._known_stamp == self._index_stamp(ix)
        writer = ix.writer(timeout=5.0)
        segments = list(writer.segments)
        total = sum(seg.doc_count_all() for seg in segments)
        deleted = total - sum(seg.doc_count() for seg in segments)
        if optimize and total and deleted > MAINTAIN_DELETED_SHARE * total:
            writer.commit(optimize=True)
        elif merge_group(segments, max_docs) is not None:
            writer.commit(mergetype=tiered_merge(max_docs))
        else:
            writer.cancel()
            return False
        self._ix = None
        if remembered:  # a merge moves documents and changes none: what this process wrote still holds
            self._known_stamp = self._index_stamp(self._open_ix())
        return True

    # -- checks -------------------------------------------------------------------------------

    def status(self) -> IndexStatus:
        """A read-only description: counts, what changed on disk since the last update, the watcher."""
        problem = self._settled_problem()
        manifest = load_manifest(self.dir) or {}
        warnings: list[notes.Warning_] = []
        on_disk = scan_note_stats(self.vault, warnings)
        changed, deleted = self._diff(manifest, on_disk, hash_check=True)
        entries = segments = deleted_docs = 0
        if problem is None:
            with contextlib.suppress(Exception), self._open_ix().reader() as r:
                entries = r.doc_count()
                deleted_docs = r.doc_count_all() - entries
                segments = len(list(r.leaf_readers()))
        meta = read_json(self.dir / META_FILE)
        watcher = watcher_info(self.config)
        state = "ok"
        if problem == "missing":
            state = "missing"
        elif problem is not None:
            state = (
                "old" if problem.startswith(("its schema", "its analyzer", "it has no meta")) else "broken"
            )
        elif changed or deleted:
            state = "stale"
        stale_paths = sorted(changed + deleted)
        if state == "ok":
            summary = f"{entries} entries from {len(manifest)} files, up to date"
        elif state == "stale":
            summary = f"{entries} entries; {len(stale_paths)} file(s) changed since the last update"
        elif state == "missing":
            summary = "not built yet (any search builds it; or run `vault-tools index`)"
        else:
            summary = f"unusable: {problem}; the next command rebuilds it"
        if watcher is not None:
            summary += f"; watcher {'running' if watcher.alive else 'not running'} (pid {watcher.pid})"
        bad = [f"{rel}: {w}" for rel, rec in sorted(manifest.items()) for w in rec.warnings]
        bad += [str(w) for w in warnings]
        return IndexStatus(
            state=state,
            summary=summary,
            problem=problem,
            entries=entries,
            files_indexed=len(manifest),
            files_on_disk=len(on_disk),
            changed_files=stale_paths,
            last_update=_iso_mtime(self.dir / MANIFEST_FILE),
            size_bytes=_dir_size(self.dir),
            segments=segments,
            deleted_docs=deleted_docs,
            schema_version=meta.get("schema_version"),
            analyzer_version=meta.get("analyzer_version"),
            watcher=asdict(watcher) if watcher is not None else None,
            bad_files=bad,
        )

    def doctor(self, *, fix: bool = False) -> DoctorReport:
        """Compare the files on disk (hashed) with the index document by document; ``fix`` repairs."""
        if fix:
            with locks.hold(self.config, LOCK_NAME, timeout=self.lock_timeout, what="doctor --fix"):
                before = self._examine()
                fixed = UpdateReport()
                started = time.monotonic()
                if not self._heal_locked(fixed, progress=False, should_stop=None):
                    self._repair_locked(before, fixed)
                fixed.seconds = time.monotonic() - started
                after = self._examine()
            after.fixed = fixed
            return after
        return self._examine()

    # -- internals: opening -------------------------------------------------------------------

    def _take_primed(self) -> Any:
        primed, self._primed = self._primed, None
        if primed is None:
            return None
        try:
            if primed.up_to_date():
                return primed
        except Exception:
            pass
        with contextlib.suppress(Exception):
            primed.close()
        return None

    def _open_searcher(self, report: UpdateReport, *, checked: bool = False) -> Any:
        """Open a searcher, healing first if needed (``checked``: the caller just did).

        Whoosh itself retries a missing file for half a second (a merge or swap in another
        process); an open that still fails has the index checked deeply and rebuilt when
        broken. Warnings go to ``report``.
        """
        if not checked:
            self._heal_if_needed(report, progress=False, timeout=self.read_lock_timeout)
        searcher = self._try_searcher()
        if searcher is not None:
            return searcher
        self._heal_if_needed(report, progress=False, timeout=self.read_lock_timeout, deep=True)
        searcher = self._try_searcher()
        if searcher is None:
            self._ix = None
            return self._open_ix().searcher()  # still failing: let the error through
        return searcher

    def _try_searcher(self) -> Any:
        self._ix = None
        files = storage.tracking_storage(self.dir)
        try:
            searcher = files.open_index(schema=schema()).searcher()
        except Exception:
            files.close_all()
            return None
        files.stop_tracking()  # the searcher owns its files now (and refresh() opens more)
        return searcher


def _iso_mtime(path: Path) -> str | None:
    try:
        stamp = path.stat().st_mtime
    except OSError:
        return None
    return dt.datetime.fromtimestamp(stamp).astimezone().isoformat(timespec="seconds")


def _dir_size(path: Path) -> int:
    total = 0
    with contextlib.suppress(OSError):
        for child in path.iterdir():
            with contextlib.suppress(OSError):
                total += child.stat().st_size
    return total


# ---------------------------------------------------------------------------------------------
# The watcher's heartbeat (written by vault_tools.watch.watcher, read here without importing watchdog)


def watch_state_path(config: Config) -> Path:
    return config.state_dir / WATCH_STATE_FILE


pid_alive = note_edit.pid_alive


def watcher_info(config: Config) -> WatcherInfo | None:
    """The watcher's last heartbeat, and whether it is alive (process runs, heartbeat fresh)."""
    data = read_json(watch_state_path(config))
    if not data or "pid" not in data:
        return None
    try:
        pid = int(data["pid"])
        heartbeat = float(data.get("heartbeat", 0.0))
        freshness = 3 * float(data.get("heartbeat_seconds", 10.0)) + 5.0
    except (TypeError, ValueError):
        return None
    alive = not data.get("stopped") and pid_alive(pid) and time.time() - heartbeat < freshness
    return WatcherInfo(
        pid=pid,
        alive=alive,
        heartbeat=heartbeat,
        last_event=data.get("last_event"),
        last_reconcile=data.get("last_reconcile"),
        summary=str(data.get("summary", "")) if alive else "not running",
    )


def watcher_alive(config: Config) -> bool:
    info = watcher_info(config)
    return info is not None and info.alive


# ---------------------------------------------------------------------------------------------
# Module-level entry points


def status(config: Config) -> IndexStatus:
    """``Index(config).status()``: what ``vault-tools status`` shows about the index."""
    return Index(config).status()


def open_current(config: Config, *, progress: bool = False) -> tuple[Index, UpdateReport]:
    """An index caught up with the files, and the report of catching up (check ``stale``)."""
    idx = Index(config)
    return idx, idx.ensure_current(progress=progress)


__all__ = [
    "BUILD_LIMIT_MB",
    "DAY_EPOCH",
    "F_AFTER",
    "F_BEFORE",
    "F_BLOCK_ID",
    "F_DATETIME",
    "F_DAY",
    "F_END",
    "F_FIELDS",
    "F_FILE_HASH",
    "F_ID",
    "F_IMPORTANCE",
    "F_KIND",
    "F_LINKS",
    "F_NEIGHBOURS",
    "F_NEXT",
    "F_PATH",
    "F_SECTION",
    "F_SPEAKER",
    "F_START",
    "F_TAGPATH",
    "F_TAGS",
    "F_TEXT",
    "F_VISIBILITY",
    "INDEX_DIR",
    "KEEP_BROKEN",
    "LOCK_NAME",
    "MAINTAIN_DELETED_SHARE",
    "MANIFEST_FILE",
    "MANIFEST_VERSION",
    "MAX_BUILD_WORKERS",
    "MAX_SEGMENTS",
    "MERGE_FACTOR",
    "META_FILE",
    "NEIGHBOURS_AFTER",
    "NEIGHBOURS_BEFORE",
    "NEIGHBOUR_FIELDS",
    "PARALLEL_BUILD_BYTES",
    "RACY_SECONDS",
    "SCHEMA_VERSION",
    "WATCH_STATE_FILE",
    "DoctorReport",
    "FileRecord",
    "Index",
    "IndexBusyError",
    "IndexStatus",
    "IndexedEntry",
    "Scan",
    "UpdateReport",
    "WatcherInfo",
    "build_worker_main",
    "date_filter",
    "day_from_number",
    "day_number",
    "entry_document",
    "is_note_dir_rel",
    "is_note_rel",
    "load_manifest",
    "make_schema",
    "merge_group",
    "neighbours",
    "open_current",
    "pid_alive",
    "read_json",
    "save_manifest",
    "scan_note_stats",
    "scan_notes",
    "schema",
    "status",
    "tag_filter",
    "tag_prefixes",
    "tiered_merge",
    "visibility_filter",
    "watch_state_path",
    "watcher_alive",
    "watcher_info",
    "write_json_atomic",
]
