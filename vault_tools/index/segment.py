"""Writing a whole new segment at once (full builds): Whoosh's segment writer, with a faster posting path.

Whoosh's ``SegmentWriter`` puts every posting into a sorting pool as a tuple, sorts them all at
commit (spilling sorted runs to disk past ``limitmb``), and then hands them to the codec one at a
time, looking up the document's field length in the segment's length column for each. That is a
dozen Python calls per posting, and an entry has ~60 postings once its neighbours' words are in
it: most of a full build. A build adds documents in order to one new segment, so
:class:`BulkSegmentWriter` keeps each term's postings together as they arrive (already in
document order), keeps each document's field lengths as it computes them, and at the end gives
the codec's posting writer a block of postings at a time (:func:`_add_postings`).

The segment's files are byte for byte the ones Whoosh's writer makes (tests/test_index_segment.py
compares them), so what is indexed, and how it ranks, do not change. The price is memory: the
postings of the segment stay in memory until it is written (~60 bytes a posting), where Whoosh's
pool spills to disk; builds split large vaults over worker processes, one segment each.
Updates and merges keep Whoosh's own writer.
"""

from __future__ import annotations

from array import array
from typing import Any

from whoosh.util.numeric import byte_to_length, length_to_byte
from whoosh.writing import SegmentWriter

from vault_tools.index.analysis import CountedText

#: How many analysed field values a writer remembers (see BulkSegmentWriter._analysed).
ANALYSED_VALUES_KEPT = 50_000

#: A term's postings as they arrive: document numbers, weights and encoded values.
Postings = tuple["array[int]", list[Any], list[Any]]


class BulkSegmentWriter(SegmentWriter):  # type: ignore[misc]
    """A ``SegmentWriter`` for a segment written in one go: ``add_document`` then ``commit``
    (or ``_finalize_segment``). No deletions, no merges, no spelling or vector fields."""

    def __init__(self, ix: Any, **kwargs: Any) -> None:
        unsupported = [name for name, field in ix.schema.items() if field.separate_spelling() or field.vector]
        if unsupported:
            raise ValueError(f"fields with spelling or vectors are not supported: {unsupported}")
        super().__init__(ix, **kwargs)
        self._postings: dict[str, dict[bytes, Postings]] = {}
        #: field → document number → the field length as the length column gives it back
        self._lengths: dict[str, dict[int, int]] = {}
        #: (field, value type, value) → what ``field.index(value)`` yields (see _analysed)
        self._analysed_values: dict[tuple[str, type, Any], list[tuple[bytes, int, Any, bytes]]] = {}
        #: (field, boost) → frequency → (weight, value) of a posting of a counted field
        self._counted: dict[tuple[str, float], dict[int, tuple[Any, bytes]]] = {}

    def add_document(self, **fields: Any) -> None:
        """As ``SegmentWriter.add_document``, with the postings kept by term instead of pooled."""
        self._check_state()
        perdocwriter = self.perdocwriter
        schema = self.schema
        docnum = self.docnum
        docboost = self._doc_boost(fields)
        fieldnames = sorted(name for name in fields if not name.startswith("_"))
        self._check_fields(schema, fieldnames)
        perdocwriter.start_doc(docnum)
        try:
            for fieldname in fieldnames:
                value = fields.get(fieldname)
                if value is None:
                    continue
                field = schema[fieldname]
                length = 0
                if field.indexed:
                    length = self._index_field(fieldname, field, value, fields, docboost)
                stored = fields.get(f"_stored_{fieldname}", value)
                perdocwriter.add_field(fieldname, field, stored if field.stored else None, length)
                column = field.column_type
                if column and stored is not None:
                    perdocwriter.add_column_value(fieldname, column, field.to_column_value(stored))
        except Exception:
            perdocwriter.cancel_doc()
            raise
        perdocwriter.finish_doc()
        self._added = True
        self.docnum += 1

    def _index_field(
        self, fieldname: str, field: Any, value: Any, fields: dict[str, Any], docboost: float
    ) -> int:
        """Keep the postings of one field of the current document; its length (0: not scored)."""
        boost = self._field_boost(fields, fieldname, docboost)
        terms = self._postings.setdefault(fieldname, {})
        if type(value) is dict and isinstance(field, CountedText):
            length = self._add_counted(terms, fieldname, field, value, boost)
        else:
            length = self._add_analysed(terms, fieldname, field, value, boost)
        if length and field.scorable:
            self._lengths.setdefault(fieldname, {})[self.docnum] = byte_to_length(length_to_byte(length))
        return length if field.scorable else 0

    def _add_analysed(
        self, terms: dict[bytes, Postings], fieldname: str, field: Any, value: Any, boost: float
    ) -> int:
        docnum = self.docnum
        length = 0
        for tbytes, freq, weight, vbytes in self._analysed(fieldname, field, value):
            length += freq
            postings = terms.get(tbytes)
            if postings is None:
                postings = terms[tbytes] = (array("I"), [], [])
            postings[0].append(docnum)
            postings[1].append(weight * boost)
            postings[2].append(vbytes)
        return length

    def _analysed(self, fieldname: str, field: Any, value: Any) -> list[tuple[bytes, int, Any, bytes]]:
        """``field.index(value)``, remembered for a string or number seen before: the entries of a
        note share their path, day and kind, often their section and tags, and analysis is a
        function of the value alone."""
        if not isinstance(value, (str, int, float)):
            return list(field.index(value))
        key = (fieldname, type(value), value)
        found = self._analysed_values.get(key)
        if found is None:
            if len(self._analysed_values) >= ANALYSED_VALUES_KEPT:
                self._analysed_values.clear()
            found = self._analysed_values[key] = list(field.index(value))
        return found

    def _add_counted(
        self, terms: dict[bytes, Postings], fieldname: str, field: Any, counts: dict[str, int], boost: float
    ) -> int:
        """Terms already counted (:class:`CountedText`): a posting's weight and value depend only on
        the term's frequency, so they are asked of the field once per frequency and shared."""
        docnum = self.docnum
        made = self._counted.setdefault((fieldname, boost), {})
        length = 0
        for term, freq in counts.items():
            length += freq
            posting = made.get(freq)
            if posting is None:
                _tbytes, _freq, weight, vbytes = next(iter(field.index({term: freq})))
                posting = made[freq] = (weight * boost, vbytes)
            tbytes = term.encode("utf-8")
            postings = terms.get(tbytes)
            if postings is None:
                postings = terms[tbytes] = (array("I"), [], [])
            postings[0].append(docnum)
            postings[1].append(posting[0])
            postings[2].append(posting[1])
        return length

    def _flush_segment(self) -> None:
        """Write the postings, field by field and term by term in order (as the sorted pool
        would have handed them to ``FieldWriter.add_postings``)."""
        self.perdocwriter.close()
        writer = self.fieldwriter
        for fieldname in sorted(self._postings):
            terms = self._postings[fieldname]
            if not terms:
                continue
            lengths = self._lengths.get(fieldname, {})
            writer.start_field(fieldname, self.schema[fieldname])
            for tbytes in sorted(terms):
                docs, weights, values = terms[tbytes]
                writer.start_term(tbytes)
                _add_postings(writer._postwriter, docs, weights, values, [lengths.get(d, 0) for d in docs])
                writer.finish_term()
            writer.finish_field()
        writer.close()
        self._postings.clear()
        self._lengths.clear()


def _add_postings(
    postwriter: Any, docs: array[int], weights: list[Any], values: list[Any], lengths: list[int]
) -> None:
    """``postwriter.add_posting(doc, weight, value, length)`` for each posting, a block at a time.

    Leaves the posting writer's block buffers and statistics exactly as the calls one by one
    would (a full block is written when the next posting arrives).
    """
    limit = postwriter._blocklimit
    for start in range(0, len(docs), limit):
        if len(postwriter._ids) >= limit:
            postwriter._write_block()
        end = start + limit
        postwriter._ids.extend(docs[start:end])
        block_weights = weights[start:end]
        postwriter._weights.extend(block_weights)
        heaviest = max(block_weights)
        if heaviest > postwriter._maxweight:
            postwriter._maxweight = heaviest
        postwriter._values.extend(v for v in values[start:end] if v)
        lengths_set = [n for n in lengths[start:end] if n]
        if lengths_set:
            shortest, longest = min(lengths_set), max(lengths_set)
            if postwriter._minlength is None or shortest < postwriter._minlength:
                postwriter._minlength = shortest
            if longest > postwriter._maxlength:
                postwriter._maxlength = longest
