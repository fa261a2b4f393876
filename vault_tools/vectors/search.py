"""Semantic search over the vector cache: the vectors as float32 blocks and the top-k of a question.

Search (numpy, an optional extra, imported only here and only when embeddings are configured):
the vectors are one float32 matrix (:mod:`vault_tools.vectors.matrix`, then the rows added since);
a question is one matrix-vector product, then the same filters as the keyword search (privacy,
dates, tags, deleted documents) mask the similarities before the top-k is taken
(:meth:`VectorIndex.top`). At 100k entries of 384 dimensions that is ~150 MB and a few ms
(``bench/embeddings_bench.py`` has the numbers and the alternatives).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from vault_tools.config import Config
from vault_tools.vectors.embeddings import Embedder, EmbeddingError

if TYPE_CHECKING:
    from vault_tools.index.lines import LineTable
    from vault_tools.index.scorer import BlockScorer, DocFilter
from vault_tools.vectors.cache import (
    Columns,
    SegmentDocs,
    VectorStore,
    deleted_docs,
    key_code,
    neighbour_table_of,
    paired_codes,
    segment_docs,
    segment_leaves,
    segment_name,
)

#: The matrix file is written again once this many rows (or a twentieth of it, when more) were
#: added after it: those are read from SQLite by every fresh process until then.
MATRIX_MIN_TAIL = 512
#: After a failed question, how long recall leaves the endpoint alone (keyword results meanwhile).
QUERY_BACKOFF_SECONDS = 30.0


class VectorIndex:
    """A store's vectors as float32 blocks (the memory-mapped matrix file, then the rows added
    since), and the row of each document of a searcher."""

    def __init__(self, store: VectorStore) -> None:
        import numpy as np

        self.store = store
        self._np = np
        self.blocks: list[Any] = []  # float32 matrices of one width; rows in the cache's order
        self.keys: Any = np.zeros(0, dtype=np.uint64)  # the key code of each row
        self._dim = 0
        self._last_rowid = 0
        self._on_disk = 0  # rows the matrix file holds
        self._loaded = False
        self._lookup: tuple[Any, Any] | None = None  # (row order by key, keys in that order)
        self._doc_rows: dict[str, Any] = {}  # segment name -> rows of its documents (-1: none)
        self._neighbours: tuple[Any, Any] | None = None
        self._paired_rows: tuple[Any, Any] | None = None  # previous_turn: (stamp, rows)
        self._docs: dict[str, SegmentDocs] = {}  # segment name -> its documents

    @property
    def rows(self) -> int:
        return int(self.keys.shape[0])

    def refresh(self) -> None:
        """Load the vectors added since the last call (the first: the matrix file, then the rows
        after it), and write the matrix file again when many rows are not in it."""
        from vault_tools.vectors.matrix import load_matrix

        if not self._loaded:
            self._loaded = True
            matrix = load_matrix(self.store)
            if matrix is not None and matrix.vectors.shape[0]:
                self.blocks, self.keys = [matrix.vectors], matrix.keys
                self._dim, self._last_rowid = int(matrix.vectors.shape[1]), matrix.last_rowid
                self._on_disk = self.rows
        self._append(self.store.rows_after(self._last_rowid))
        if self.rows - self._on_disk >= max(MATRIX_MIN_TAIL, self._on_disk // 20):
            self._write_matrix()

    def _append(self, new: list[tuple[int, str, bytes]]) -> None:
        np = self._np
        if not new:
            return
        dim = len(new[0][2]) // 4
        rows = [r for r in new if len(r[2]) == dim * 4]
        block = np.frombuffer(b"".join(v for _r, _k, v in rows), dtype=np.float32).reshape(-1, dim)
        codes = np.fromiter((key_code(k) for _r, k, _v in rows), np.uint64, len(rows))
        if self.rows and self._dim != dim:  # the model now answers in another width
            self.blocks, self.keys, self._on_disk = [], np.zeros(0, dtype=np.uint64), 0
            self._doc_rows = {}
        self._dim = dim
        if len(self.blocks) > 1:  # keep one block of rows read since the matrix file
            block = np.vstack([self.blocks.pop(), block])
        self.blocks.append(block)
        self.keys = np.concatenate([self.keys, codes])
        self._last_rowid = new[-1][0]
        self._lookup = None
        self._doc_rows = {name: rows for name, rows in self._doc_rows.items() if (rows >= 0).all()}

    def _write_matrix(self) -> None:
        from vault_tools.vectors.matrix import save_matrix

        if not self.rows:
            return
        matrix = save_matrix(self.store, self.blocks, self.keys, self._last_rowid)
        if matrix is not None:
            self.blocks, self.keys, self._on_disk = [matrix.vectors], matrix.keys, self.rows

    def _rows_of(self, codes: Any) -> Any:
        """The row of each key code (-1: no vector)."""
        np = self._np
        if self._lookup is None:
            order = np.argsort(self.keys, kind="stable")
            self._lookup = (order, self.keys[order])
        order, ordered = self._lookup
        if not ordered.shape[0]:
            return np.full(codes.shape[0], -1, dtype=np.int64)
        at = np.minimum(np.searchsorted(ordered, codes), ordered.shape[0] - 1)
        found = (ordered[at] == codes) & (codes != 0)
        return np.where(found, order[at], -1).astype(np.int64)

    def doc_rows(self, searcher: Any, lines: LineTable | None = None) -> Any:
        """The row of each document of ``searcher`` (-1: no vector), per global docnum."""
        np = self._np
        if self.store.previous_turn:  # a vector per entry and the turn before it: see paired_codes
            table = self.neighbours(searcher, lines)
            stamp = (self._neighbours[0] if self._neighbours else None, self.rows)
            if self._paired_rows is None or self._paired_rows[0] != stamp:
                codes = np.concatenate([np.frombuffer(d.keys, dtype=np.uint64) for d in self._docs.values()])
                self._paired_rows = (stamp, self._rows_of(paired_codes(codes, table[0])))
            return self._paired_rows[1]
        leaves = segment_leaves(searcher)
        live = [segment_name(reader) for reader, _offset in leaves]
        parts = []
        for (reader, _offset), name in zip(leaves, live, strict=True):
            rows = self._doc_rows.get(name)
            if rows is None:
                docs = self._segment(reader, name, live)
                rows = self._doc_rows[name] = self._rows_of(np.frombuffer(docs.keys, dtype=np.uint64))
            parts.append(rows)
        self._doc_rows = {name: self._doc_rows[name] for name in live}
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)

    def _segment(self, reader: Any, name: str, live: Sequence[str]) -> SegmentDocs:
        if name not in self._docs:
            self._docs[name] = segment_docs(reader, name, live, self.store)
        return self._docs[name]

    def neighbours(self, searcher: Any, lines: LineTable | None = None) -> Any:
        """:func:`neighbour_table` of ``searcher`` as one int array per slot (kept per searcher and
        version of the line table ``lines``)."""
        deleted = deleted_docs(searcher)
        leaves = segment_leaves(searcher)
        live = [segment_name(reader) for reader, _offset in leaves]
        key = (tuple(live), len(deleted), None if lines is None else lines.stamp)
        if self._neighbours is None or self._neighbours[0] != key:
            moved = None if lines is None else lines.table
            segments = [
                self._segment(reader, name, live) for (reader, _o), name in zip(leaves, live, strict=True)
            ]
            self._docs = {name: self._docs[name] for name in live}
            self._neighbours = (key, neighbour_table_of(Columns.of(segments), deleted, moved=moved))
        return self._neighbours[1]

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

    def similarities(self, searcher: Any, query: Sequence[float], lines: LineTable | None = None) -> Any:
        """Cosine of ``query`` with every document of ``searcher`` (NaN: no vector)."""
        np = self._np
        rows = self.doc_rows(searcher, lines)
        sims = np.full(rows.shape[0], np.nan, dtype=np.float32)
        if not self.rows:
            return sims
        vector = np.asarray(query, dtype=np.float32)
        if vector.shape[0] != self._dim:
            return sims  # another model answered: nothing comparable
        by_row = np.concatenate([block @ vector for block in self.blocks])
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
