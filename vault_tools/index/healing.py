"""Whether the index can be used, and healing it when it cannot.

Only a process that holds the ``index`` lock decides that an index is broken: it re-checks,
moves it to ``.vault-tools/index.broken-<time>/`` (the last two are kept), rebuilds and reports
one warning. A missing or broken index that another process is rebuilding raises
:class:`IndexBusyError`.

:class:`IndexHealer` is the part of :class:`vault_tools.index.index.Index` that does this, on the
index's shared :class:`~vault_tools.index.state.IndexState`, rebuilding through its
:class:`~vault_tools.index.builder.IndexBuilder`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from vault_tools.errors import LockedError, VaultError
from vault_tools.index import storage
from vault_tools.index.analysis import ANALYZER_VERSION
from vault_tools.index.builder import IndexBuilder
from vault_tools.index.documents import F_PATH, SCHEMA_VERSION, schema
from vault_tools.index.manifest import META_FILE, load_manifest, read_json
from vault_tools.index.state import IndexState
from vault_tools.index.writer import UpdateReport


class IndexBusyError(LockedError):
    """The index cannot be used now: it is missing or broken and another process is rebuilding it."""


TRANSIENT_RETRIES = (0.05, 0.2)


class IndexHealer:
    """Checks and healing (see the module docstring); a part of :class:`vault_tools.index.index.Index`."""

    def __init__(self, state: IndexState, builder: IndexBuilder) -> None:
        self.state = state
        self.builder = builder

    def problem(self, *, deep: bool = False) -> str | None:
        """Why the index cannot be used as it is (missing, corrupt, schema-old), or None.

        The quick check reads the versions, the manifest and Whoosh's table of contents;
        ``deep`` also reads a little of every segment. Without the lock a reader may see a
        transient state; callers that act on the answer check again while holding the lock.
        """
        index_dir = self.state.dir
        if not index_dir.is_dir():
            return "missing" if not index_dir.exists() else f"{index_dir} is not a folder"
        meta = read_json(index_dir / META_FILE)
        if not meta:
            return "it has no meta.json (made by another version, or an interrupted build)"
        if meta.get("schema_version") != SCHEMA_VERSION:
            return (
                f"its schema is version {meta.get('schema_version')}, this vault-tools uses {SCHEMA_VERSION}"
            )
        if meta.get("analyzer_version") != ANALYZER_VERSION:
            return (
                f"its analyzer is version {meta.get('analyzer_version')}, "
                f"this vault-tools uses {ANALYZER_VERSION}"
            )
        if load_manifest(index_dir) is None:
            return "its manifest.json is missing or unreadable"
        files = storage.tracking_storage(index_dir)
        try:
            ix = files.open_index(schema=schema())
            if deep:
                _probe(ix)
        except Exception as exc:
            return f"it is corrupt ({type(exc).__name__}: {exc})"
        finally:
            files.close_all()  # Whoosh leaks the files it opened when reading fails
        return None

    def settled_problem(self, *, deep: bool = False) -> str | None:
        """``problem()``, asked again after short pauses so a concurrent commit or swap settles.

        A deep check is asked once: opening the segments already waits out a concurrent merge.
        """
        problem = self.problem(deep=deep)
        if deep:
            return problem
        for pause in TRANSIENT_RETRIES:
            if problem is None or (problem == "missing" and not self._lock_is_busy()):
                return problem
            time.sleep(pause)
            problem = self.problem(deep=deep)
        return problem

    def _lock_is_busy(self) -> bool:
        try:
            with self.state.lock("checking", timeout=0):
                return False
        except LockedError:
            return True

    def heal_if_needed(
        self, report: UpdateReport, *, progress: bool, timeout: float, deep: bool = False
    ) -> bool:
        """Rebuild a missing/broken/old index (under the lock). True when it rebuilt."""
        problem = self.settled_problem(deep=deep)
        if problem is None:
            return False
        try:
            with self.state.lock("rebuilding the index", timeout=timeout):
                return self.heal_locked(report, progress=progress, should_stop=None, deep=deep)
        except LockedError:
            pass
        raise IndexBusyError(
            f"the search index is not usable ({problem}) and {self.state.lock_owner()} "
            "is writing it (probably rebuilding). Try again in a minute."
        )

    def heal_locked(
        self,
        report: UpdateReport,
        *,
        progress: bool,
        should_stop: Callable[[], bool] | None,
        deep: bool = False,
    ) -> bool:
        """Under the lock: if the index is unusable, quarantine it and rebuild. True when it did."""
        self.builder.cleanup_leftovers()
        problem = self.problem(deep=deep)
        if problem is None:
            return False
        quarantine = problem != "missing"
        if quarantine:
            report.healed = problem
            report.warnings.append(
                f"the search index was unusable: {problem}; rebuilt it from the notes "
                f"(the old one is kept in {self.state.config.state_dir}/index.broken-*)"
            )
        self.builder.rebuild_locked(
            report, progress=progress, should_stop=should_stop, quarantine=problem if quarantine else None
        )
        return True

    def guarded(
        self,
        report: UpdateReport,
        progress: bool,
        should_stop: Callable[[], bool] | None,
        body: Callable[[], None],
    ) -> None:
        """Run a write under the lock; if it fails on a broken index, heal instead of failing."""
        try:
            body()
        except VaultError:
            raise
        except Exception:
            self.state.forget_ix()
            if not self.heal_locked(report, progress=progress, should_stop=should_stop, deep=True):
                raise


def _probe(ix: Any) -> None:
    """Read a little of every segment (terms, postings, stored fields) so damage shows now."""
    with ix.reader() as r:
        for leaf in r.leaf_readers():
            reader = leaf[0] if isinstance(leaf, tuple) else leaf
            if reader.doc_count() == 0:
                continue
            first = next(iter(reader.all_doc_ids()), None)
            if first is not None:
                reader.stored_fields(first)
            for rel in reader.field_terms(F_PATH):
                list(reader.postings(F_PATH, rel).all_ids())
                break
