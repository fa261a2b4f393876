"""Vectors: the disposable cache of entry vectors, keeping it filled, and the search over it.

Storage. One SQLite file per model under ``.vault-tools/vectors/`` (the model's name and
:data:`vault_tools.embeddings.RECIPE` in its name: another model, or another recipe for what is
sent, starts an empty file and the old one is deleted). A vector is keyed by the entry's content
hash (the 12 hex digits of its id, ``memory/2026-03-10.md#3f9a2c1b0d4e``), so an unchanged entry
is never embedded twice, an edited one is embedded again, and the same text in two files once.
Rows are only ever added, so a reader loads the new ones by ``rowid``. The file can be deleted at
any time; the next fill embeds everything again.

Which vector belongs to which search hit. Whoosh segments never change once written, so each
segment's list of entry keys (in document order) is kept in the same file, read from the stored
fields once per segment: a fresh process maps 100k documents to their vectors in milliseconds.

Filling. :func:`fill` finds the index's documents whose key has no vector and embeds their
:func:`vault_tools.embeddings.sendable_text` in batches (``[embeddings] batch_size``); what may not
be sent stays keyword-only. A failure leaves the rest pending: the next fill (``vault-tools
index``, the watcher's :class:`VectorWorker` after its next batch or back-off) picks them up.
Nothing here runs on the watcher's indexing path: it only wakes the worker.

Search (numpy, an optional extra, imported only here and only when embeddings are configured):
the vectors are one float32 matrix; a question is one matrix-vector product, then the same
filters as the keyword search (privacy, dates, tags, deleted documents) mask the similarities
before the top-k is taken (:meth:`VectorIndex.top`). At 100k entries of 384 dimensions that is
~150 MB and a few ms (``bench/embeddings_bench.py`` has the numbers and the alternatives).
"""

from __future__ import annotations

import array
import hashlib
import json
import logging
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from vault_tools.config import Config
from vault_tools.embeddings import RECIPE, Embedder, EmbeddingError, sendable_text

if TYPE_CHECKING:
    from vault_tools.index_lines import LineTable
    from vault_tools.scorer import BlockScorer, DocFilter

__all__ = [
    "FillReport",
    "SemanticSearch",
    "VectorIndex",
    "VectorStore",
    "VectorWorker",
    "doc_keys",
    "fill",
    "store_path",
]

log = logging.getLogger("vault_tools.vectors")

STORE_DIR = "vectors"
KEY_LENGTH = 12
#: After a failed question, how long recall leaves the endpoint alone (keyword results meanwhile).
QUERY_BACKOFF_SECONDS = 30.0
#: The watcher's worker retries a failed fill after this, doubling up to the maximum.
FILL_RETRY_SECONDS = 5.0
FILL_RETRY_MAX_SECONDS = 300.0


def store_path(config: Config) -> Path:
    """The cache file of the configured model (``[embeddings] model``)."""
    model = config.embeddings.model
    digest = hashlib.sha256(f"{model}\n{RECIPE}".encode()).hexdigest()[:12]
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", model).strip("-.")[:40] or "model"
    return config.state_dir / STORE_DIR / f"{slug}-{digest}.sqlite"


def key_of(entry_id: str) -> str:
    """The content-hash key of an entry id (``path#hash``); empty for an id without one."""
    _path, _sep, digest = str(entry_id).rpartition("#")
    return digest if len(digest) == KEY_LENGTH else ""


class VectorStore:
    """The vectors of one model, keyed by content hash, in one SQLite file (see the module doc).

    One connection per store; give each thread its own store. A file SQLite cannot read is
    deleted and started again (it is a cache).
    """

    def __init__(self, config: Config) -> None:
        self.path = store_path(config)
        self.warnings: list[str] = []
        self._db = self._open(config)

    def _open(self, config: Config) -> sqlite3.Connection:
        config.make_state_dir(STORE_DIR)
        for other in self.path.parent.glob("*.sqlite"):
            if other != self.path:  # another model or recipe: those vectors are of no use now
                for leftover in (other, Path(f"{other}-wal"), Path(f"{other}-shm")):
                    leftover.unlink(missing_ok=True)
        try:
            return self._connect()
        except sqlite3.DatabaseError as exc:
            self.warnings.append(f"{self.path}: unreadable vector cache ({exc}); starting it again")
            for leftover in (self.path, Path(f"{self.path}-wal"), Path(f"{self.path}-shm")):
                leftover.unlink(missing_ok=True)
            return self._connect()

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=10.0, check_same_thread=False, isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vector BLOB NOT NULL)")
        db.execute("DROP TABLE IF EXISTS segments")  # the first layout: keys only
        db.execute("CREATE TABLE IF NOT EXISTS segment_docs (segment TEXT PRIMARY KEY, docs TEXT NOT NULL)")
        db.execute("SELECT count(*) FROM vectors").fetchone()
        return db

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> VectorStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def keys(self) -> set[str]:
        return {key for (key,) in self._db.execute("SELECT key FROM vectors")}

    def count(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM vectors").fetchone()[0])

    def add(self, items: Iterable[tuple[str, Sequence[float]]]) -> None:
        rows = [(key, array.array("f", vector).tobytes()) for key, vector in items]
        with self._db:
            self._db.execute("BEGIN")
            self._db.executemany("INSERT OR IGNORE INTO vectors (key, vector) VALUES (?, ?)", rows)

    def rows_after(self, rowid: int) -> list[tuple[int, str, bytes]]:
        """(rowid, key, float32 bytes) of every vector added after ``rowid``, in order."""
        query = "SELECT rowid, key, vector FROM vectors WHERE rowid > ? ORDER BY rowid"
        return [(int(r), str(k), bytes(v)) for r, k, v in self._db.execute(query, (rowid,))]

    def segment_docs(self, segment: str) -> list[Doc] | None:
        row = self._db.execute("SELECT docs FROM segment_docs WHERE segment = ?", (segment,)).fetchone()
        if row is None:
            return None
        try:
            return [Doc(*d) for d in json.loads(row[0])]
        except (ValueError, TypeError):
            return None

    def save_segment_docs(self, segment: str, docs: Sequence[Doc], live: Iterable[str]) -> None:
        """Keep ``docs`` for ``segment`` and forget segments that are not ``live`` any more."""
        keep = set(live) | {segment}
        data = json.dumps([list(d) for d in docs], ensure_ascii=False)
        with self._db:
            self._db.execute("BEGIN")
            self._db.execute("INSERT OR REPLACE INTO segment_docs VALUES (?, ?)", (segment, data))
            known = [s for (s,) in self._db.execute("SELECT segment FROM segment_docs")]
            gone = [(s,) for s in known if s not in keep]
            self._db.executemany("DELETE FROM segment_docs WHERE segment = ?", gone)


def _leaves(searcher: Any) -> list[tuple[Any, int]]:
    return [(reader, int(offset)) for reader, offset in searcher.reader().leaf_readers()]


def _segment_name(reader: Any) -> str:
    return f"{reader.segment().segment_id()}:{reader.doc_count_all()}"


class Doc(NamedTuple):
    """What the vector side needs of an indexed entry: its key, and where it sits (neighbours)."""

    key: str
    path: str
    line: int
    section: str
    kind: str
    visibility: str


def doc_keys(searcher: Any, store: VectorStore) -> list[str]:
    """The content-hash key of every document of ``searcher``, by global document number."""
    return [doc.key for doc in all_docs(searcher, store)]


def all_docs(searcher: Any, store: VectorStore) -> list[Doc]:
    leaves = _leaves(searcher)
    live = [_segment_name(reader) for reader, _offset in leaves]
    docs: list[Doc] = []
    for (reader, _offset), name in zip(leaves, live, strict=True):
        docs.extend(segment_docs(reader, name, live, store))
    return docs


def segment_docs(reader: Any, name: str, live: Sequence[str], store: VectorStore) -> list[Doc]:
    """One segment's documents: kept in ``store``, read from the stored fields once."""
    found = store.segment_docs(name)
    if found is None or len(found) != reader.doc_count_all():
        found = [_doc(reader.stored_fields(d)) for d in range(reader.doc_count_all())]
        store.save_segment_docs(name, found, live)
    return found


def _doc(stored: dict[str, Any]) -> Doc:
    return Doc(
        key_of(stored.get("id", "")),
        str(stored.get("path", "")),
        int(stored.get("start_line", 0)),
        str(stored.get("section", "")),
        str(stored.get("kind", "")),
        str(stored.get("visibility", "")),
    )


#: A neighbour lends its similarity only to an entry that every chat seeing it may see it in too,
#: as the keyword index's neighbours do (vault_tools.index_documents.neighbours).
_VISIBILITY_RANK = {"shared": 0, "personal": 1, "private": 2}


def neighbour_table(
    docs: Sequence[Doc],
    deleted: Iterable[int],
    before: int = 2,
    after: int = 2,
    moved: Mapping[str, Mapping[str, list[int]]] | None = None,
) -> Any:
    """For each neighbour slot (``before`` entries before, nearest first, then ``after`` after), the
    docnum of that neighbour of every document in its file and section, -1 where there is none
    (a numpy array, one row per slot). ``moved``: the index's line table (index_lines), which
    says where an entry whose document kept older lines is now."""
    import numpy as np

    count = len(docs)
    paths: dict[str, int] = {}
    sections: dict[str, int] = {}
    path = np.fromiter((paths.setdefault(d.path, len(paths)) for d in docs), np.int64, count)
    section = np.fromiter((sections.setdefault(d.section, len(sections)) for d in docs), np.int64, count)
    line = np.fromiter(
        (_line_now(d, moved) for d in docs) if moved else (d.line for d in docs), np.int64, count
    )
    rank = np.fromiter((_VISIBILITY_RANK.get(d.visibility, 2) for d in docs), np.int64, count)
    alive = np.fromiter((d.kind != "memory" for d in docs), bool, count)
    gone = np.fromiter(deleted, np.int64)
    alive[gone[gone < count]] = False
    kept = np.flatnonzero(alive)
    order = kept[np.lexsort((line[kept], path[kept]))]
    table = np.full((before + after, count), -1, dtype=np.int64)
    for slot, step in [*((k, -(k + 1)) for k in range(before)), *((before + k, k + 1) for k in range(after))]:
        distance = abs(step)
        if distance >= order.shape[0]:
            continue
        here, there = (
            (order[distance:], order[:-distance]) if step < 0 else (order[:-distance], order[distance:])
        )
        ok = (path[here] == path[there]) & (section[here] == section[there]) & (rank[there] <= rank[here])
        table[slot, here[ok]] = there[ok]
    return table


def _line_now(doc: Doc, moved: Mapping[str, Mapping[str, list[int]]]) -> int:
    row = moved.get(doc.path, {}).get(f"{doc.path}#{doc.key}") if doc.key else None
    return row[1] if row is not None and row[0] == doc.line else doc.line


def deleted_docs(searcher: Any) -> list[int]:
    return [
        offset + d
        for reader, offset in _leaves(searcher)
        if reader.has_deletions()
        for d in reader.deleted_docs_set
    ]


# ---------------------------------------------------------------------------------------------
# Filling the cache


@dataclass
class FillReport:
    embedded: int = 0  # entries embedded now
    kept_local: int = 0  # entries that may not be sent (private): keyword-only
    pending: int = 0  # entries still without a vector (the endpoint failed)
    error: str | None = None

    def summary(self) -> str:
        text = f"{self.embedded} embedded"
        if self.kept_local:
            text += f", {self.kept_local} kept keyword-only (#private)"
        if self.pending:
            text += f", {self.pending} pending ({self.error}); they are embedded on the next index or watch"
        return text


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
    unsendable = set() if unsendable is None else unsendable
    have = store.keys()
    deleted = set(deleted_docs(searcher))
    todo: dict[str, int] = {}
    for docnum, key in enumerate(doc_keys(searcher, store)):
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
        text = sendable_text(str(stored.get("text", "")), str(stored.get("visibility", "")), settings)
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
        from vault_tools.index import Index

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


# ---------------------------------------------------------------------------------------------
# Search


class VectorIndex:
    """A store's vectors as one float32 matrix, and the row of each document of a searcher."""

    def __init__(self, store: VectorStore) -> None:
        import numpy as np

        self.store = store
        self._np = np
        self.matrix: Any = np.zeros((0, 0), dtype=np.float32)
        self.rows: dict[str, int] = {}
        self._last_rowid = 0
        self._doc_rows: dict[str, Any] = {}  # segment name -> rows of its documents (-1: none)
        self._neighbours: tuple[Any, Any] | None = None
        self._docs: dict[str, list[Doc]] = {}  # segment name -> its documents

    def refresh(self) -> None:
        """Load the vectors added since the last call."""
        np = self._np
        new = self.store.rows_after(self._last_rowid)
        if not new:
            return
        dim = len(new[0][2]) // 4
        block = np.frombuffer(b"".join(v for _r, _k, v in new if len(v) == dim * 4), dtype=np.float32)
        block = block.reshape(-1, dim)
        if self.matrix.shape[0] and self.matrix.shape[1] != dim:
            self.matrix = np.zeros((0, dim), dtype=np.float32)
            self.rows.clear()
        self.matrix = block if not self.matrix.shape[0] else np.vstack([self.matrix, block])
        start = self.matrix.shape[0] - block.shape[0]
        for offset, (_rowid, key, _v) in enumerate(r for r in new if len(r[2]) == dim * 4):
            self.rows[key] = start + offset
        self._last_rowid = new[-1][0]
        self._doc_rows = {name: rows for name, rows in self._doc_rows.items() if (rows >= 0).all()}

    def doc_rows(self, searcher: Any) -> Any:
        """The matrix row of each document of ``searcher`` (-1: no vector), per global docnum."""
        np = self._np
        leaves = _leaves(searcher)
        live = [_segment_name(reader) for reader, _offset in leaves]
        parts = []
        for (reader, _offset), name in zip(leaves, live, strict=True):
            rows = self._doc_rows.get(name)
            if rows is None:
                if name not in self._docs:
                    self._docs[name] = segment_docs(reader, name, live, self.store)
                docs, get = self._docs[name], self.rows.get
                rows = self._doc_rows[name] = np.fromiter((get(d.key, -1) for d in docs), np.int64, len(docs))
            parts.append(rows)
        self._doc_rows = {name: self._doc_rows[name] for name in live}
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)

    def neighbours(self, searcher: Any, lines: LineTable | None = None) -> Any:
        """:func:`neighbour_table` of ``searcher`` as one int array per slot (kept per searcher and
        version of the line table ``lines``)."""
        deleted = deleted_docs(searcher)
        key = (
            tuple(_segment_name(reader) for reader, _offset in _leaves(searcher)),
            len(deleted),
            None if lines is None else lines.stamp,
        )
        if self._neighbours is None or self._neighbours[0] != key:
            moved = None if lines is None else lines.table
            self._neighbours = (key, neighbour_table(self._all_docs(searcher), deleted, moved=moved))
        return self._neighbours[1]

    def _all_docs(self, searcher: Any) -> list[Doc]:
        """:func:`all_docs`, each segment's list kept while the segment lives."""
        leaves = _leaves(searcher)
        live = [_segment_name(reader) for reader, _offset in leaves]
        docs: list[Doc] = []
        for (reader, _offset), name in zip(leaves, live, strict=True):
            if name not in self._docs:
                self._docs[name] = segment_docs(reader, name, live, self.store)
            docs.extend(self._docs[name])
        self._docs = {name: self._docs[name] for name in live}
        return docs

    def with_neighbours(self, searcher: Any, sims: Any, weight: float, lines: LineTable | None = None) -> Any:
        """Each document's similarity, or ``weight`` x its nearest neighbour's when that is more:
        the line after a question is often its answer, and says it in other words."""
        np = self._np
        best = sims.copy()
        for slot in self.neighbours(searcher, lines):
            have = slot >= 0
            lent = np.full(sims.shape[0], np.nan, dtype=np.float32)
            lent[have] = sims[slot[have]] * weight
            best = np.fmax(best, lent)
        return best

    def similarities(self, searcher: Any, query: Sequence[float]) -> Any:
        """Cosine of ``query`` with every document of ``searcher`` (NaN: no vector)."""
        np = self._np
        rows = self.doc_rows(searcher)
        sims = np.full(rows.shape[0], np.nan, dtype=np.float32)
        if not self.matrix.shape[0]:
            return sims
        vector = np.asarray(query, dtype=np.float32)
        if vector.shape[0] != self.matrix.shape[1]:
            return sims  # another model answered: nothing comparable
        by_row = self.matrix @ vector
        have = rows >= 0
        sims[have] = by_row[rows[have]]
        return sims

    def top(
        self, sims: Any, scorer: BlockScorer, doc_filter: DocFilter, deleted: Sequence[int], limit: int
    ) -> list[tuple[int, float]]:
        """The ``limit`` most similar (docnum, cosine) that pass ``doc_filter``, best first."""
        np = self._np
        allowed = ~np.isnan(sims)
        if doc_filter.excluded:
            allowed[np.fromiter(doc_filter.excluded, np.int64, len(doc_filter.excluded))] = False
        if doc_filter.required is not None:
            required = np.zeros(sims.shape[0], dtype=bool)
            required[np.fromiter(doc_filter.required, np.int64, len(doc_filter.required))] = True
            allowed &= required
        if doc_filter.days is not None:
            lo, hi = scorer._day_bounds(*doc_filter.days)
            days = np.asarray(scorer.days(), dtype=np.uint64)
            allowed &= (days >= lo) & (days <= hi)
        if deleted:
            allowed[np.asarray(deleted, dtype=np.int64)] = False
        candidates = np.flatnonzero(allowed)
        if not candidates.shape[0]:
            return []
        values = sims[candidates]
        if candidates.shape[0] > limit:
            best = np.argpartition(-values, limit - 1)[:limit]
            candidates, values = candidates[best], values[best]
        order = np.lexsort((candidates, -values))
        return [(int(candidates[i]), float(values[i])) for i in order]


@dataclass
class SemanticSearch:
    """What recall keeps for the vector side: the endpoint's client and the loaded vectors.

    :meth:`query_vector` waits at most ``query_timeout_seconds``; after a failure it leaves the
    endpoint alone for :data:`QUERY_BACKOFF_SECONDS` (a warm session answers with keyword results
    at once meanwhile).
    """

    config: Config
    clock: Callable[[], float] = time.monotonic
    _embedder: Embedder | None = None
    _index: VectorIndex | None = None
    _failed_at: float | None = None
    _failure: str = ""
    warnings: list[str] = field(default_factory=list)

    def close(self) -> None:
        if self._embedder is not None:
            self._embedder.close()
            self._embedder = None
        if self._index is not None:
            self._index.store.close()
            self._index = None

    def query_vector(self, query: str) -> tuple[list[float] | None, str | None]:
        """(the question's vector, None) or (None, why there is none: a warning)."""
        now = self.clock()
        if self._failed_at is not None and now - self._failed_at < QUERY_BACKOFF_SECONDS:
            return None, f"{self._failure} {now - self._failed_at:.0f} s ago"
        if self._embedder is None:
            self._embedder = Embedder(self.config.embeddings)
        try:
            vector = self._embedder.embed_query(query)
        except EmbeddingError as exc:
            self._failed_at, self._failure = self.clock(), str(exc)
            return None, str(exc)
        self._failed_at = None
        return vector, None

    def index(self) -> VectorIndex:
        """The loaded vectors, with what was added since the last call."""
        if self._index is None:
            store = VectorStore(self.config)
            self.warnings.extend(store.warnings)
            self._index = VectorIndex(store)
        self._index.refresh()
        return self._index


def fill_vault(config: Config, *, progress: bool = False) -> FillReport:
    """Embed what the vault's index holds without a vector yet (``vault-tools index``)."""
    from vault_tools.index import Index

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
    return report
