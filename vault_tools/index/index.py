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

Where the parts live. :class:`Index` is a facade: it reads (searchers) itself and hands writing,
building, healing and checking to parts with one job each, which share one
:class:`~vault_tools.index.state.IndexState` (the paths, the lock, the open Whoosh index, what
this process wrote):

* :mod:`vault_tools.index.writer`: :class:`IndexWriter`: incremental updates, the batch, merges
* :mod:`vault_tools.index.builder`: :class:`IndexBuilder`: full builds (parallel workers), swap-in
* :mod:`vault_tools.index.healing`: :class:`IndexHealer`: is the index usable; quarantine, rebuild
* :mod:`vault_tools.index.doctor`: :class:`IndexDoctor`: disk against index, document by document
* :mod:`vault_tools.index.status`: what ``vault-tools status`` shows; the watcher's heartbeat
* :mod:`vault_tools.index.documents`: fields, schema, an entry's document, filters, neighbours
* :mod:`vault_tools.index.manifest`: the manifest, the index folder's files, scanning the notes
* :mod:`vault_tools.index.whoosh_private`: every use of Whoosh's private API
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from vault_tools.config import Config
from vault_tools.errors import LockedError, VaultError
from vault_tools.index.builder import IndexBuilder
from vault_tools.index.doctor import DoctorReport, IndexDoctor
from vault_tools.index.healing import TRANSIENT_RETRIES, IndexHealer
from vault_tools.index.state import IndexState
from vault_tools.index.status import IndexStatus, describe, watcher_alive
from vault_tools.index.writer import IndexWriter, UpdateReport

T = TypeVar("T")
log = logging.getLogger("vault_tools.index.index")


class Index:
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
        self._state = IndexState(config, lock_timeout, read_lock_timeout, build_workers)
        self._writer = IndexWriter(self._state)
        self._builder = IndexBuilder(self._state)
        self._healer = IndexHealer(self._state, self._builder)
        self._doctor = IndexDoctor(self._state, self._writer, self._healer)
        #: Warnings from healing that happened outside a report (in ``searcher``/``read``/``recover``).
        self.warnings: list[str] = []
        self._primed: Any = None  # a searcher opened (and so validated) by ensure_current

    @property
    def config(self) -> Config:
        return self._state.config

    @property
    def vault(self) -> Path:
        return self._state.vault

    @property
    def dir(self) -> Path:
        return self._state.dir

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
            if not self.config.vault.is_dir():
                raise  # the vault was deleted under the search: nothing to check (the watcher says so)
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
        self._state.forget_ix()
        report = UpdateReport()
        if not self._heal_if_needed(report, deep=True):
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
        if not self._heal_if_needed(report, progress=progress):
            self._catch_up(report, progress=progress)
        self._primed = self._open_searcher(report, checked=True)
        report.seconds = time.monotonic() - started
        return report

    def _catch_up(self, report: UpdateReport, *, progress: bool) -> None:
        manifest = self._state.manifest()
        on_disk = self._writer.scan(report)
        changed, deleted = self._writer.diff(manifest, on_disk, hash_check=True)
        report.files_on_disk = len(on_disk)
        report.entries = sum(r.entries for r in manifest.values())
        if not changed and not deleted:
            return
        try:
            with self._state.lock("catching up", timeout=self._state.read_lock_timeout):
                self._healer.guarded(
                    report, progress, None, lambda: self._writer.reconcile_locked(report, progress, None)
                )
        except LockedError:
            report.stale = True
            report.stale_reason = (
                f"{len(changed) + len(deleted)} changed file(s) not indexed yet; "
                f"{self._state.lock_owner()} is writing the index"
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
            self._writer.reconcile_locked(report, progress, should_stop)
            if (merge or optimize) and not report.interrupted:
                self._writer.maintain_locked(max_docs=2**62 if optimize else 4096, optimize=optimize)

        with self._state.lock("updating the index"):
            if not self._healer.heal_locked(report, progress=progress, should_stop=should_stop):
                self._healer.guarded(report, progress, should_stop, body)
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
            manifest = self._state.manifest()
            self._writer.apply(
                report, manifest, self._writer.expand(paths, manifest), should_stop=should_stop
            )

        with self._state.lock("updating the index"):
            if not self._healer.heal_locked(report, progress=False, should_stop=should_stop):
                self._healer.guarded(report, False, should_stop, body)
        report.seconds = time.monotonic() - started
        return report

    def rebuild(
        self, *, progress: bool = False, should_stop: Callable[[], bool] | None = None
    ) -> UpdateReport:
        """Index every note from nothing (into a new folder, swapped in when complete)."""
        started = time.monotonic()
        report = UpdateReport()
        with self._state.lock("rebuilding the index"):
            self._builder.rebuild_locked(report, progress=progress, should_stop=should_stop, quarantine=None)
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
            with self._state.lock("merging segments", timeout=lock_timeout):
                return self.problem() is None and self._writer.maintain_locked(
                    max_docs=max_docs, optimize=optimize
                )
        except LockedError:
            return False

    # -- checks -------------------------------------------------------------------------------

    def problem(self, *, deep: bool = False) -> str | None:
        """Why the index cannot be used as it is (missing, corrupt, schema-old), or None
        (:meth:`IndexHealer.problem`)."""
        return self._healer.problem(deep=deep)

    def status(self) -> IndexStatus:
        """A read-only description: counts, what changed on disk since the last update, the watcher."""
        return describe(self._state, self._writer, self._healer.settled_problem())

    def doctor(self, *, fix: bool = False) -> DoctorReport:
        """Compare the files on disk (hashed) with the index document by document; ``fix`` repairs."""
        return self._doctor.run(fix=fix)

    # -- internals: opening -------------------------------------------------------------------

    def _heal_if_needed(self, report: UpdateReport, *, progress: bool = False, deep: bool = False) -> bool:
        """Heal a missing or broken index, waiting ``read_lock_timeout`` for the lock; True when rebuilt."""
        timeout = self._state.read_lock_timeout
        return self._healer.heal_if_needed(report, progress=progress, timeout=timeout, deep=deep)

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
            self._heal_if_needed(report)
        searcher = self._state.try_searcher()
        if searcher is not None:
            return searcher
        self._heal_if_needed(report, deep=True)
        searcher = self._state.try_searcher()
        if searcher is None:
            self._state.forget_ix()
            return self._state.open_ix().searcher()  # still failing: let the error through
        return searcher


# ---------------------------------------------------------------------------------------------
# Module-level entry points


def status(config: Config) -> IndexStatus:
    """``Index(config).status()``: what ``vault-tools status`` shows about the index."""
    return Index(config).status()


def open_current(config: Config, *, progress: bool = False) -> tuple[Index, UpdateReport]:
    """An index caught up with the files, and the report of catching up (check ``stale``)."""
    idx = Index(config)
    return idx, idx.ensure_current(progress=progress)
