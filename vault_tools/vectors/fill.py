"""Filling the vector cache: embed what the index holds without a vector yet.

:func:`fill` finds the index's documents whose key has no vector and embeds their
:func:`vault_tools.vectors.embeddings.sendable_text` in batches (``[embeddings] batch_size``); what
may not be sent stays keyword-only. A failure leaves the rest pending: the next fill (``vault-tools
index``, the watcher's :class:`VectorWorker` after its next batch or back-off) picks them up.
Nothing here runs on the watcher's indexing path: it only wakes the worker.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from vault_tools.config import Config
from vault_tools.vectors.embeddings import Embedder, EmbeddingError, sendable_text

if TYPE_CHECKING:
    pass
from vault_tools.vectors.cache import (
    FillReport,
    VectorStore,
    deleted_docs,
    doc_keys,
    key_text,
    log,
    turns_before,
)
from vault_tools.vectors.search import VectorIndex

#: The watcher's worker retries a failed fill after this, doubling up to the maximum.
FILL_RETRY_SECONDS = 5.0
FILL_RETRY_MAX_SECONDS = 300.0


def fill(
    config: Config,
    searcher: Any,
    store: VectorStore,
    embedder: Embedder,
    *,
    unsendable: set[str] | None = None,
    should_stop: Callable[[], bool] | None = None,
    progress: Callable[[int], object] | None = None,
) -> FillReport:
    """Embed every document of ``searcher`` whose key has no vector yet (see the module doc).

    ``unsendable`` collects (and skips) the keys that may not be sent, across calls.
    """
    settings = config.embeddings
    if store.previous_turn and not _has_numpy():
        return FillReport(error="semantic recall needs numpy: pip install 'vault-tools[embeddings]'")
    unsendable = set() if unsendable is None else unsendable
    have = store.keys()
    deleted = set(deleted_docs(searcher))
    todo: dict[str, int] = {}
    previous: dict[int, int] = {}
    if store.previous_turn:
        from vault_tools.index.index import Index
        from vault_tools.index.lines import load_lines

        codes, before = turns_before(searcher, store, load_lines(Index(config).dir))
        keys = [key_text(int(code)) for code in codes]
        previous = {int(d): int(p) for d, p in enumerate(before) if p >= 0}
    else:
        keys = doc_keys(searcher, store)
    for docnum, key in enumerate(keys):
        if key and key not in have and key not in unsendable and docnum not in deleted:
            todo.setdefault(key, docnum)
    report = FillReport()
    batch: list[tuple[str, str]] = []
    pending = list(todo.items())
    for position, (key, docnum) in enumerate(pending):
        if should_stop is not None and should_stop():
            report.pending = len(pending) - position
            return report
        stored = searcher.stored_fields(docnum)
        raw = str(stored.get("text", ""))
        if docnum in previous:  # the turn before (no more private than this one: neighbour rule)
            raw = f"{searcher.stored_fields(previous[docnum]).get('text', '')}\n{raw}"
        text = sendable_text(raw, str(stored.get("visibility", "")), settings)
        if text is None:
            unsendable.add(key)
            report.kept_local += 1
        else:
            batch.append((key, text))
        if len(batch) >= max(1, settings.batch_size) or (position == len(pending) - 1 and batch):
            try:
                vectors = embedder.embed([t for _k, t in batch])
            except EmbeddingError as exc:
                report.error = str(exc)
                report.pending = len(pending) - position - 1 + len(batch)
                return report
            store.add(zip([k for k, _t in batch], vectors, strict=True))
            report.embedded += len(batch)
            if progress is not None:
                progress(len(batch))
            batch = []
    return report


def _has_numpy() -> bool:
    try:
        import numpy  # noqa: F401
    except ImportError:
        return False
    return True


class VectorWorker:
    """The watcher's embedding thread: fills the cache after each batch, never in its way.

    :meth:`wake` is all the watcher calls (after a batch or a reconcile); a fill that fails is
    tried again after a back-off (doubling from :data:`FILL_RETRY_SECONDS`), so an endpoint that
    is down costs the watcher nothing and its entries are embedded once it is back.
    """

    def __init__(self, config: Config) -> None:
        self.config = config
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="vault-tools-embeddings", daemon=True)
        self._unsendable: set[str] = set()
        self.fills = 0  # completed fill passes (tests wait on it)
        self.last: FillReport | None = None

    def start(self) -> VectorWorker:
        self._wake.set()  # fill once at start: entries indexed while no worker ran
        self._thread.start()
        return self

    def wake(self, *_args: object) -> None:
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        from vault_tools.index.index import Index

        retry = FILL_RETRY_SECONDS
        failing: str | None = None
        store: VectorStore | None = None
        with Index(self.config) as index, Embedder(self.config.embeddings) as embedder:
            while not self._stop.is_set():
                self._wake.wait(retry if failing else None)  # woken, or time to try again
                self._wake.clear()
                if self._stop.is_set():
                    break
                try:
                    store = store or VectorStore(self.config)
                    report = self._fill_once(index, store, embedder)
                except Exception as exc:  # never fatal: the next wake tries again
                    report = FillReport(error=f"{type(exc).__name__}: {exc}")
                if report.error is not None and report.error != failing:
                    log.warning("embeddings: %s", report.summary())
                elif report.embedded:
                    log.info("embeddings: %s", report.summary())
                retry = (
                    min(retry * 2, FILL_RETRY_MAX_SECONDS) if failing and report.error else FILL_RETRY_SECONDS
                )
                failing = report.error
                self.last = report
                if store is not None:
                    with contextlib.suppress(sqlite3.Error):
                        store.record_fill(report, "watcher")
                self.fills += 1
        if store is not None:
            store.close()

    def _fill_once(self, index: Any, store: VectorStore, embedder: Embedder) -> FillReport:
        searcher = index.open_searcher()
        try:
            return fill(
                self.config,
                searcher,
                store,
                embedder,
                unsendable=self._unsendable,
                should_stop=self._stop.is_set,
            )
        finally:
            searcher.close()


def fill_vault(config: Config, *, progress: bool = False) -> FillReport:
    """Embed what the vault's index holds without a vector yet (``vault-tools index``)."""
    from vault_tools.index.index import Index

    with Index(config) as index, VectorStore(config) as store, Embedder(config.embeddings) as embedder:
        searcher = index.open_searcher()
        try:
            bar = None
            if progress:
                from tqdm import tqdm

                bar = tqdm(desc="embedding", unit=" entries", leave=False, disable=None)
            report = fill(config, searcher, store, embedder, progress=bar.update if bar is not None else None)
            if bar is not None:
                bar.close()
        finally:
            searcher.close()
        store.record_fill(report, "index")
        if report.embedded:
            with contextlib.suppress(ImportError):  # numpy: the matrix file, for the next recall
                VectorIndex(store).refresh()
    return report
