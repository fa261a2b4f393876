"""BM25F top-k for an OR of terms, scored a term at a time over Whoosh's posting blocks.

Whoosh scores an OR query a document at a time through a tree of Python matcher objects, several
method calls per posting. A question with one common word ("atlas", on a quarter of 100k entries)
walks 25k postings that way: 70-150 ms, most of a warm recall. Whoosh's block-max skipping does
not help: a common word's blocks all hold some short entry that scores near the top-k threshold.

Here each term's postings are read a block at a time in Whoosh's own format (a pickled tuple of
delta-encoded ids and weights, see ``whoosh.codec.whoosh3``) and scored with C-level ``map`` and
``zip`` over a per-segment table of field lengths, then summed into one dict of scores. The filters
are applied to that dict: excluded documents are dropped, a date window is checked on the ``day``
column, any other requirement is a set of document numbers. One dict serves both searches of a
question with time words (the padded window and the unwindowed one).

Scores are Whoosh's BM25F (``whoosh.scoring.bm25``, the same operations in the same order, so
equal up to the order of the final sum), ties keep Whoosh's order (lower document number first),
and deleted documents are left out as Whoosh's ``FilterMatcher`` does. The tests check the top-k
against ``searcher.search`` on the same query. Anything this module cannot score exactly (another
weighting model, an unscorable field) makes :meth:`BlockScorer.for_searcher` return None and the
caller uses Whoosh's matchers.
"""

from __future__ import annotations

import array
import heapq
import itertools
import operator
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from vault_tools.index import whoosh_private

Scores = dict[int, float]


@dataclass(frozen=True)
class Clause:
    """One OR branch: ``boost`` x the summed BM25F of ``texts`` in ``field``.

    One text is a ``Term``; several are a ``PreloadedOr`` (a CJK character and its bigrams).
    """

    field: str
    texts: tuple[str, ...]
    boost: float = 1.0
    unless: str | None = None  # count only for documents without these texts in this field


@dataclass(frozen=True)
class DocFilter:
    """Which documents a top-k may return."""

    excluded: frozenset[int] = frozenset()
    required: frozenset[int] | None = None  # None: no requirement beyond the others
    days: tuple[int | None, int | None] | None = None  # inclusive ``day`` column range


class _Tables(dict[float, list[float]]):
    """Term-frequency weight -> the score of that weight at each of Whoosh's 256 length bytes."""

    def __init__(self, table: Callable[[float], list[float]]) -> None:
        super().__init__()
        self._table = table

    def __missing__(self, weight: float) -> list[float]:
        table = self[weight] = self._table(weight)
        return table


@dataclass
class _Leaf:
    reader: Any  # whoosh.reading.SegmentReader
    offset: int  # its first global document number
    key: tuple[str, int]  # (segment id, document count): what its column tables depend on


class BlockScorer:
    """Scores :class:`Clause` lists over one Whoosh searcher (see the module docstring).

    Per-segment tables (field lengths, the ``day`` column) are read once and handed on to the
    scorer of a refreshed searcher for the segments the two share.
    """

    def __init__(self, searcher: Any, weighting: Any, previous: BlockScorer | None = None) -> None:
        self.searcher = searcher
        self.b_default = float(weighting.B)
        self.b_fields: dict[str, float] = whoosh_private.bm25f_field_b(weighting)
        self.k1 = float(weighting.K1)
        self.leaves = [_leaf(reader, offset) for reader, offset in _leaf_readers(searcher)]
        keys = {leaf.key for leaf in self.leaves}
        old = previous._tables if previous is not None else {}
        self._tables: dict[tuple[tuple[str, int], str], Any] = {k: v for k, v in old.items() if k[0] in keys}
        self._days: array.array[int] | None = None
        self._matching: dict[str, frozenset[int]] = {}
        self._norms: dict[str, list[float]] = {}  # field -> BM25's length norm at each length byte

    @classmethod
    def for_searcher(
        cls, searcher: Any, fields: Iterable[str], previous: BlockScorer | None = None
    ) -> BlockScorer | None:
        """A scorer for ``searcher``, or None when its weighting or fields are not plain BM25F."""
        from whoosh.scoring import BM25F

        weighting = searcher.weighting
        if type(weighting) is not BM25F:
            return None
        if any(not searcher.schema[name].scorable for name in fields):
            return None
        readers = [reader for reader, _offset in _leaf_readers(searcher)]
        if not all(whoosh_private.reads_whoosh3_postings(r) for r in readers):
            return None
        return cls(searcher, weighting, previous)

    # -- scoring -----------------------------------------------------------------------------

    def scores(
        self, clauses: Sequence[Clause], *, backoff_terms: int = 1, backoff_floor: float = 0.0
    ) -> Scores:
        """Global document number -> summed score over ``clauses`` (deleted documents left out).

        A document that only back-off clauses (``unless``) match is kept when they match at
        least ``backoff_terms`` different texts (one word shared with a neighbour says little)
        and it scores at least ``backoff_floor`` times the best document matched directly.
        """
        total: Scores = {}
        direct: set[int] = set()
        backed: dict[int, set[tuple[str, ...]]] = {}
        # The documents holding each back-off's texts: taken from the direct clause that scores
        # them anyway (the entry's own text), read only when there is none.
        needed = {(c.unless, c.texts) for c in clauses if c.unless is not None}
        holders: dict[tuple[str, tuple[str, ...]], set[int]] = {}
        for clause in clauses:
            scores = self._clause_scores(clause)
            if clause.unless is None:
                direct.update(scores)
                if (clause.field, clause.texts) in needed:
                    holders[(clause.field, clause.texts)] = set(scores)  # before _summed reuses it
            else:
                key = (clause.unless, clause.texts)
                have = holders.get(key)
                if have is None:
                    have = holders[key] = set(self._clause_scores(Clause(clause.unless, clause.texts)))
                scores = {docnum: score for docnum, score in scores.items() if docnum not in have}
                for docnum in scores:
                    backed.setdefault(docnum, set()).add(clause.texts)
            total = _summed(total, scores)
        if backoff_terms > 1 or backoff_floor > 0:
            floor = backoff_floor * max((total[docnum] for docnum in direct), default=0.0)
            for docnum, texts in backed.items():
                if docnum not in direct and (len(texts) < backoff_terms or total[docnum] < floor):
                    del total[docnum]
        for leaf in self.leaves:
            if leaf.reader.has_deletions():
                for docnum in whoosh_private.deleted_docs(leaf.reader):
                    total.pop(docnum + leaf.offset, None)
        return total

    def _clause_scores(self, clause: Clause) -> Scores:
        scores: Scores = {}
        for text in clause.texts:
            scores = _summed(scores, self._term_scores(clause.field, text))
        if clause.boost != 1.0:
            boost = clause.boost
            scores = {docnum: score * boost for docnum, score in scores.items()}
        return scores

    def _term_scores(self, fieldname: str, text: str) -> Scores:
        searcher = self.searcher
        tables = _Tables(self._bm25(fieldname, float(searcher.idf(fieldname, text))))
        tbytes = searcher.schema[fieldname].to_bytes(text)
        scores: Scores = {}
        for leaf in self.leaves:
            lengths = self._lengths(leaf, fieldname)
            for ids, weights in whoosh_private.posting_blocks(leaf.reader, fieldname, tbytes):
                lbytes = map(lengths.__getitem__, ids)
                if weights is None:
                    values: Iterable[float] = map(tables[1.0].__getitem__, lbytes)
                elif isinstance(weights, float):
                    values = map(tables[weights].__getitem__, lbytes)
                else:
                    values = map(operator.getitem, map(tables.__getitem__, weights), lbytes)
                docnums: Iterable[int] = map(leaf.offset.__add__, ids) if leaf.offset else ids
                scores.update(zip(docnums, values, strict=True))
        return scores

    def _bm25(self, fieldname: str, idf: float) -> Callable[[float], list[float]]:
        """Whoosh's ``bm25(idf, tf, fl, avgfl, B, K1)`` of one weight at each length byte."""
        k1 = self.k1
        norms = self._norms.get(fieldname)
        if norms is None:  # per field, not per term: a long query has many terms
            from whoosh.util.numeric import byte_to_length

            avgfl = self.searcher.avg_field_length(fieldname) or 1
            b = self.b_fields.get(fieldname, self.b_default)
            # The same operations in the same order as Whoosh, so the floats come out equal.
            norms = [k1 * ((1 - b) + b * byte_to_length(byte) / avgfl) for byte in range(256)]
            self._norms[fieldname] = norms

        def table(tf: float) -> list[float]:
            return [idf * ((tf * (k1 + 1)) / (tf + norm)) for norm in norms]

        return table

    # -- top-k -------------------------------------------------------------------------------

    def top(self, scores: Scores, limit: int, doc_filter: DocFilter = DocFilter()) -> list[tuple[int, float]]:
        """The ``limit`` best (docnum, score) pairs that pass ``doc_filter``, best first.

        Ties go to the lower document number, as in Whoosh's ``TopCollector``. A requirement
        that holds fewer documents than ``scores`` (a rare tag, a group chat's shared entries) is
        walked itself. A date window is checked on every scored document: it may keep only a
        few of them, and checking them all (~0.1 us each) beats sorting the ``day`` column of a
        fresh process's segments. Without either, the best candidates are tested, and all of
        them when too few pass.
        """
        required = doc_filter.required
        if required is not None and len(required) < len(scores):
            docs = self._passing(filter(scores.__contains__, required), doc_filter, required_checked=True)
        elif doc_filter.days is not None:
            docs = self._passing(scores, doc_filter)
        else:
            best = _best(scores, limit)
            passing = set(self._passing([docnum for docnum, _score in best], doc_filter))
            kept = [pair for pair in best if pair[0] in passing]
            if len(kept) >= limit or len(best) >= len(scores):
                return kept[:limit]
            docs = self._passing(scores, doc_filter)
        return _best({docnum: scores[docnum] for docnum in docs}, limit)[:limit]

    def passes(self, docnum: int, doc_filter: DocFilter) -> bool:
        """Whether one document passes ``doc_filter``."""
        return bool(self._passing([docnum], doc_filter))

    def _passing(
        self, docs: Iterable[int], doc_filter: DocFilter, *, required_checked: bool = False
    ) -> list[int]:
        """The documents of ``docs`` that pass ``doc_filter`` (the requirement skipped if checked)."""
        if doc_filter.excluded:
            docs = itertools.filterfalse(doc_filter.excluded.__contains__, docs)
        if doc_filter.required is not None and not required_checked:
            docs = filter(doc_filter.required.__contains__, docs)
        if doc_filter.days is not None:
            docs = filter(self._day_test(*doc_filter.days), docs)
        return list(docs)

    def _day_bounds(self, low: int | None, high: int | None) -> tuple[int, int]:
        """The range in column values; the column's 0 (no date) is outside every range."""
        field = self.searcher.schema["day"]
        lo = int(field.to_column_value(max(low, 1))) if low is not None else 1
        hi = int(field.to_column_value(high)) if high is not None else 1 << 64
        return lo, hi

    def _day_test(self, low: int | None, high: int | None) -> Callable[[int], bool]:
        """A test of a global document number against an inclusive range of ``day`` values."""
        days = self.days()
        lo, hi = self._day_bounds(low, high)
        return lambda docnum: lo <= days[docnum] <= hi

    def matching(self, query: Any) -> frozenset[int]:
        """The global document numbers ``query`` matches (deleted ones left out), kept per query."""
        key = repr(query)
        docs = self._matching.get(key)
        if docs is None:
            docs = self._matching[key] = frozenset(self.searcher.docs_for_query(query))
        return docs

    # -- per-segment tables ------------------------------------------------------------------

    def _segment_table(self, leaf: _Leaf, name: str, read: Callable[[Any, str], Any]) -> Any:
        """``read(reader, name)`` for the segment of ``leaf``, read once per segment."""
        key = (leaf.key, name)
        table = self._tables.get(key)
        if table is None:
            table = self._tables[key] = read(leaf.reader, name)
        return table

    def _lengths(self, leaf: _Leaf, fieldname: str) -> bytes:
        return self._segment_table(leaf, fieldname, whoosh_private.length_bytes)  # type: ignore[no-any-return]

    def _day_column(self, leaf: _Leaf) -> array.array[int]:
        return self._segment_table(leaf, "day", whoosh_private.column_values)  # type: ignore[no-any-return]

    def days(self) -> array.array[int]:
        """The ``day`` column of every document, indexed by global document number."""
        if self._days is None:
            columns = [self._day_column(leaf) for leaf in self.leaves]
            days = array.array(columns[0].typecode if columns else "L")
            for column in columns:
                days.extend(column)
            self._days = days
        return self._days


def _summed(a: Scores, b: Scores) -> Scores:
    """``a`` and ``b`` added per document, in whichever of the two is larger (it is reused)."""
    if len(b) > len(a):
        a, b = b, a
    get = a.get
    for docnum, score in b.items():
        a[docnum] = get(docnum, 0.0) + score
    return a


def _best(scores: Scores, count: int) -> list[tuple[int, float]]:
    """The ``count`` highest scores (with every tie of the lowest), best and lowest docnum first."""
    if count < len(scores):
        threshold = heapq.nlargest(count, scores.values())[-1]
        pairs = [(-score, docnum) for docnum, score in scores.items() if score >= threshold]
    else:
        pairs = [(-score, docnum) for docnum, score in scores.items()]
    pairs.sort()
    return [(docnum, -negative) for negative, docnum in pairs]


def _leaf_readers(searcher: Any) -> list[tuple[Any, int]]:
    return [(reader, int(offset)) for reader, offset in searcher.reader().leaf_readers()]


def _leaf(reader: Any, offset: int) -> _Leaf:
    return _Leaf(reader, offset, (str(reader.segment().segment_id()), int(reader.doc_count_all())))
