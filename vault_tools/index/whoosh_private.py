"""Every use of Whoosh's private API, in one module: what it relies on and why.

whoosh-reloaded is pinned exactly (``==2.7.5`` in pyproject.toml) because of this module.
``tests/test_whoosh_private.py`` names every private name used here, with its kind and
parameters, and fails on a Whoosh that changed one; it also fails when another module of
vault_tools touches a private name of Whoosh's, imports its codec or file internals, or patches
it. The rest of the code uses Whoosh's public API only.

Importing (:func:`import_whoosh`). While ``whoosh.compat``, ``whoosh.query`` and ``whoosh.reading``
import, ``sys.modules`` holds stand-ins for ``urllib.request``, ``whoosh.lang.morph_en`` and the
``cached_property`` backport (~65 ms of a fresh ``recall`` that buys nothing). Then
``whoosh.util.numeric.split_ranges`` is replaced: Whoosh's wraps past zero, and
``NumericRange("day", 4, 5)`` matched every dated entry.

Whoosh's file layer (:func:`patch_whoosh`, once per process):

- ``BufferFile.__init__`` (it sets ``_buf`` and ``file``) copied each part of a mapped segment
  into a ``BytesIO`` (80 MB and ~75 ms for a cold recall at 100k entries) and kept a memoryview
  of the map that nothing released, so ``CompoundStorage.close()`` could not unmap the segment:
  a watcher held dozens of segments open, merged-away ones included. :class:`ViewFile` reads
  the map in place and releases its view when closed, so closing a reader closes its segment.
- ``FileIndex._reader`` (what ``Searcher.refresh()`` calls with ``reuse``) added the old
  reader's segments to the new list, merged-away ones included, and reused a segment reader
  even when the segment had new deletions: a warm searcher returned edited or deleted entries.
  :func:`_refresh_correctly` reuses a reader only for a segment with the same deletions.
- ``W3PerDocReader._cached_reader`` re-checked on disk, for every posting written, whether a
  segment has a length column for an unscored field (400k ``stat`` calls in a 10k build); the
  miss is cached in its ``_readers``.

Reading postings and columns (:mod:`vault_tools.index.scorer`, a term at a time in C-level
loops instead of a tree of matchers a posting at a time): a ``SegmentReader``'s ``_terms``
(``W3TermsReader``) and its ``_postfile``, read in the Whoosh 3 block layout
(``WHOOSH3_HEADER_MAGIC``, :func:`posting_blocks`); the field lengths column through
``_perdoc._cached_reader``, ``_lenfield`` and ``LENGTHS_COLUMN``, and a numeric column's bytes
through its reader's ``_dbfile``, ``_basepos``, ``_count`` and ``_default`` and the column
type's ``_typecode``; ``BM25F``'s per-field ``_field_B``; ``SegmentReader.deleted_docs_set``.

Writing a full build's segment (:func:`bulk_segment_writer`, below): a ``SegmentWriter`` whose
``add_document`` keeps postings by term (``_check_state``, ``_doc_boost``, ``_field_boost``,
``_check_fields``, ``_added``) and whose ``_flush_segment`` hands them to the codec's
``_postwriter`` a block at a time (``_blocklimit``, ``_ids``, ``_weights``, ``_maxweight``,
``_values``, ``_minlength``, ``_maxlength``, ``_write_block``). Build workers write their segment
without committing (``_lk``, ``_finalize_segment``, ``_finish``) and the parent lists them in one
table of contents (``whoosh.index.TOC``, ``clean_files``). ``Index.maintain`` reads the segments
a writer would start from through ``FileIndex._segments`` (:func:`toc_segments`): opening a writer
to find there is nothing to merge left three files behind each time.

Matchers (:func:`safe_require`, :func:`safe_and_not`, for :mod:`vault_tools.recall.filters`):
``RequireMatcher`` and ``AndNotMatcher`` after a block-quality skip, through ``_find_next`` and
``_find_first``; Whoosh's trip an assertion or let an excluded first match through.
"""

from __future__ import annotations

import array
import functools
import importlib
import io
import pickle
import struct
import sys
import types
import zlib
from collections.abc import Iterator, Sequence
from itertools import accumulate
from typing import Any

_PATCHED = False


def import_whoosh() -> None:
    """Import Whoosh's core modules, leaving out ~65 ms of a fresh ``recall`` that buys nothing.

    ``whoosh.compat`` imports ``urllib.request`` (and with it ``http.client`` and ``ssl``) for a
    ``urlretrieve`` nothing calls; ``whoosh.query.terms`` imports the English morphology table
    (11 ms of regular expressions) for the ``Variations`` query we never build; and
    ``whoosh.reading`` takes ``cached_property`` from the PyPI backport, which imports
    ``asyncio``. While Whoosh imports, ``urlretrieve`` and ``variations`` are stand-ins that load
    the real ones when called, and ``cached_property`` is the standard library's (the same
    descriptor). The stand-ins leave ``sys.modules`` afterwards, so other code still gets the
    real modules. Harmless when Whoosh is already imported. Then :func:`split_ranges` replaces
    Whoosh's.
    """
    if "whoosh.query" not in sys.modules or "whoosh.reading" not in sys.modules:
        _import_without_unused_modules()
    _fix_numeric_ranges()


def _import_without_unused_modules() -> None:
    stand_ins = {
        "urllib.request": _lazy_function_module("urllib.request", "urlretrieve"),
        "whoosh.lang.morph_en": _lazy_function_module("whoosh.lang.morph_en", "variations"),
        "cached_property": _cached_property_stand_in(),
    }
    added = [name for name in stand_ins if name not in sys.modules]
    for name in added:
        sys.modules[name] = stand_ins[name]
    try:
        import whoosh.compat
        import whoosh.query
        import whoosh.reading  # noqa: F401
    finally:
        for name in added:
            if sys.modules.get(name) is stand_ins[name]:
                del sys.modules[name]


def _fix_numeric_ranges() -> None:
    """Make Whoosh's ``NumericRange`` match exactly its range (``split_ranges`` below)."""
    import whoosh.util.numeric

    whoosh.util.numeric.split_ranges = split_ranges  # tiered_ranges looks it up at each call


def split_ranges(intsize: int, step: int, start: int, end: int) -> Iterator[tuple[int, int, int]]:
    """``start..end`` as trie ranges ``(start, end, shift)``, as Lucene's ``splitRange``.

    Whoosh's own masks ``end - diff`` to ``intsize + 1`` bits, so once that goes below zero
    the next bound wraps to a huge number and the loop goes on: ``NumericRange("day", 4, 5)``
    took in every value from 4096 up, every dated entry, and any window ending before day
    4096 (1911-03-20) could match too much. Python integers do not wrap, so a negative bound
    simply ends the split.
    """
    shift = 0
    while True:
        diff = 1 << (shift + step)
        mask = ((1 << step) - 1) << shift
        low_bits = (1 << shift) - 1
        has_lower = (start & mask) != 0
        has_upper = (end & mask) != mask
        next_start = (start + diff if has_lower else start) & ~mask
        next_end = (end - diff if has_upper else end) & ~mask
        if shift + step >= intsize or next_start > next_end:
            yield start, end | low_bits, shift
            return
        if has_lower:
            yield start, start | mask | low_bits, shift
        if has_upper:
            yield end & ~mask, end | low_bits, shift
        start, end = next_start, next_end
        shift += step


def _lazy_function_module(name: str, function: str) -> types.ModuleType:
    """A stand-in for module ``name`` whose ``function`` imports the real module when called."""
    module = types.ModuleType(name)

    def call_real(*args: Any, **kwargs: Any) -> Any:
        real = getattr(importlib.import_module(name), function)
        return real(*args, **kwargs)

    setattr(module, function, call_real)
    return module


def _cached_property_stand_in() -> types.ModuleType:
    module = types.ModuleType("cached_property")
    module.cached_property = functools.cached_property  # type: ignore[attr-defined]
    return module


class ViewFile(io.RawIOBase):
    """A read-only, seekable file over a memoryview, without copying it."""

    def __init__(self, view: memoryview) -> None:
        super().__init__()
        self._view = view
        self._pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: len(self._view)}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def read(self, size: int | None = -1) -> bytes:
        end = len(self._view) if size is None or size < 0 else self._pos + size
        data = bytes(self._view[self._pos : end])
        self._pos += len(data)
        return data

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(memoryview(buffer)))
        memoryview(buffer)[: len(data)] = data
        return len(data)

    def readline(self, size: int | None = -1) -> bytes:
        end = len(self._view) if size is None or size < 0 else min(len(self._view), self._pos + size)
        stop = self._pos
        while stop < end:
            chunk = bytes(self._view[stop : min(end, stop + 4096)])
            newline = chunk.find(b"\n")
            if newline >= 0:
                stop += newline + 1
                break
            stop += len(chunk)
        return self.read(stop - self._pos)

    def close(self) -> None:
        if not self.closed:
            self._view.release()
        super().close()


def patch_whoosh() -> None:
    """Apply the file-layer changes described in the module docstring (idempotent)."""
    global _PATCHED
    if _PATCHED:
        return
    _read_segment_parts_in_place()
    _refresh_correctly()
    _cache_missing_length_columns()
    _PATCHED = True


def _read_segment_parts_in_place() -> None:
    from whoosh.filedb.structfile import BufferFile

    original_init = BufferFile.__init__

    def init(self: Any, buf: Any, name: str | None = None, onclose: Any = None) -> None:
        original_init(self, b"", name=name, onclose=onclose)
        self._buf = buf
        # bytes: BytesIO shares them without a copy; a memoryview (of the map) it would copy
        self.file = ViewFile(buf) if isinstance(buf, memoryview) else io.BytesIO(buf)

    BufferFile.__init__ = init


def _refresh_correctly() -> None:
    from whoosh.index import FileIndex
    from whoosh.reading import EmptyReader, MultiReader, SegmentReader

    def open_reader(
        cls: Any, storage: Any, schema: Any, segments: list[Any], generation: int, reuse: Any = None
    ) -> Any:
        # Deletions only ever grow within a segment, so an equal count means equal deletions.
        reusable = {
            (reader.segment().segment_id(), reader.segment().deleted_count()): reader
            for reader, _offset in (reuse.leaf_readers() if reuse else [])
            if reader.segment() is not None
        }
        reused: set[Any] = set()
        opened: list[Any] = []

        def segment_reader(segment: Any) -> Any:
            key = (segment.segment_id(), segment.deleted_count())
            if key in reusable:
                reused.add(key)
                return reusable[key]
            opened.append(SegmentReader(storage, schema, segment, generation=generation))
            return opened[-1]

        try:
            if not segments:
                reader = EmptyReader(schema)
            elif len(segments) == 1:
                reader = segment_reader(segments[0])
            else:
                reader = MultiReader([segment_reader(s) for s in segments], generation=generation)
        except BaseException:  # the old reader stays whole, for its owner to close
            for new in opened:
                new.close()
            raise
        for key, old in reusable.items():
            if key not in reused:
                old.close()
        return reader

    FileIndex._reader = classmethod(open_reader)


def _cache_missing_length_columns() -> None:
    """Remember that a segment has no length column for a field (Whoosh re-checks on disk).

    While a segment is written, Whoosh asks the field length of every posting of every field;
    for unscored fields (IDs, keywords, numbers) the column does not exist and Whoosh stats
    the file each time: 400k ``stat`` calls, over half the build time of 10k entries. A segment
    is immutable, so caching the miss is safe.
    """
    from whoosh.codec import whoosh3

    original = whoosh3.W3PerDocReader._cached_reader

    def cached_reader(self: Any, fieldname: str, column: Any) -> Any:
        reader = original(self, fieldname, column)
        if reader is None:
            self._readers[fieldname] = None
        return reader

    whoosh3.W3PerDocReader._cached_reader = cached_reader


# ---------------------------------------------------------------------------------------------
# Reading a segment's postings and columns in Whoosh 3's format (vault_tools.index.scorer)


def reads_whoosh3_postings(reader: Any) -> bool:
    """Whether a segment reader's terms are in the Whoosh 3 format :func:`posting_blocks` reads."""
    from whoosh.codec.whoosh3 import W3TermsReader

    return isinstance(getattr(reader, "_terms", None), W3TermsReader)


def bm25f_field_b(weighting: Any) -> dict[str, float]:
    """The per-field ``B`` of a ``BM25F`` weighting (``BM25F(text_B=0.5)``), by field name."""
    return dict(getattr(weighting, "_field_B", {}))


def deleted_docs(reader: Any) -> frozenset[int]:
    """A segment reader's deleted document numbers (``SegmentReader``'s cached set)."""
    return frozenset(reader.deleted_docs_set)


def posting_blocks(reader: Any, fieldname: str, tbytes: bytes) -> Iterator[tuple[Sequence[int], Any]]:
    """(ids, weights) of each posting block of a term in one segment; none if it is absent.

    ``weights`` is None (all 1.0), one float (all the same) or a sequence, as Whoosh stores them.
    The block layout is ``W3LeafMatcher._goto``'s: a signed int (the block's length, negative for
    the last block), the pickled block info, then the (maybe zlib-compressed) pickled data tuple
    of delta-encoded ids, weights and values. Read here in one slice per block instead of the
    ~20 small reads of Whoosh's ``read_pickle``.
    """
    from whoosh.codec.whoosh3 import WHOOSH3_HEADER_MAGIC
    from whoosh.reading import TermNotFound

    terms = reader._terms
    try:
        info = terms.term_info(fieldname, tbytes)
    except TermNotFound:
        return
    if info.is_inlined():
        ids, weights, _values = info.inlined_postings()
        yield ids, weights
        return
    postfile = terms._postfile
    start, _length = info.extent()
    if bytes(postfile.get(start, 4)) != WHOOSH3_HEADER_MAGIC:
        raise ValueError(f"not a Whoosh 3 posting list at {start} of {fieldname}:{tbytes!r}")
    position = start + 4
    while True:
        (length,) = BLOCK_LENGTH.unpack(bytes(postfile.get(position, 4)))
        chunk = bytes(postfile.get(position + 4, abs(length)))
        stream = io.BytesIO(chunk)
        compression = pickle.load(stream)[3]
        data = chunk[stream.tell() :]
        ids, weights, _values = pickle.loads(zlib.decompress(data) if compression else data)
        yield list(accumulate(ids)), weights
        if length < 0:
            return
        position += 4 + length


BLOCK_LENGTH = struct.Struct("!i")


def length_bytes(reader: Any, fieldname: str) -> bytes:
    """Whoosh's one-byte encoded length of ``fieldname`` for each document of a segment."""
    from whoosh.codec.whoosh3 import LENGTHS_COLUMN, _lenfield
    from whoosh.util.numeric import length_to_byte

    doccount = int(reader.doc_count_all())
    column = reader._perdoc._cached_reader(_lenfield(fieldname), LENGTHS_COLUMN)
    if column is None:  # Whoosh scores such a field with length 1
        return bytes([length_to_byte(1)]) * doccount
    stored = bytes(column._dbfile.get(column._basepos, column._count))
    return stored + bytes(doccount - len(stored))


def column_values(reader: Any, fieldname: str) -> array.array[int]:
    """A fixed-width numeric column of a segment as the stored (sortable) integers."""
    doccount = int(reader.doc_count_all())
    column = reader.column_reader(fieldname, translate=False)
    raw = array.array(reader.schema[fieldname].column_type._typecode)
    if hasattr(column, "_dbfile"):  # a segment where no document has the field stores no column
        raw.frombytes(bytes(column._dbfile.get(column._basepos, column._count * raw.itemsize)))
        if sys.byteorder == "little":  # columns are stored big-endian ("!")
            raw.byteswap()
    raw.extend([int(column._default)] * (doccount - len(raw)))
    return raw


# ---------------------------------------------------------------------------------------------
# Writing a whole new segment at once (full builds, vault_tools.index.builder)
#
# Writing a whole new segment at once (full builds): Whoosh's segment writer, with a faster posting path.
#
# Whoosh's ``SegmentWriter`` puts every posting into a sorting pool as a tuple, sorts them all at
# commit (spilling sorted runs to disk past ``limitmb``), and then hands them to the codec one at a
# time, looking up the document's field length in the segment's length column for each. That is a
# dozen Python calls per posting, and an entry has ~60 postings once its neighbours' words are in
# it: most of a full build. A build adds documents in order to one new segment, so
# :class:`BulkSegmentWriter` keeps each term's postings together as they arrive (already in
# document order), keeps each document's field lengths as it computes them, and at the end gives
# the codec's posting writer a block of postings at a time (:func:`_add_postings`).
#
# The segment's files are byte for byte the ones Whoosh's writer makes (tests/test_index_segment.py
# compares them), so what is indexed, and how it ranks, do not change. The price is memory: the
# postings of the segment stay in memory until it is written (~60 bytes a posting), where Whoosh's
# pool spills to disk; builds split large vaults over worker processes, one segment each.
# Updates and merges keep Whoosh's own writer.

#: How many analysed field values a writer remembers (see BulkSegmentWriter._analysed).
ANALYSED_VALUES_KEPT = 50_000

#: A term's postings as they arrive: document numbers, weights and encoded values.
Postings = tuple["array.array[int]", list[Any], list[Any]]

_BULK_WRITER_CLASS: Any = None


def bulk_segment_writer(ix: Any, *, lock: bool = True, **options: Any) -> Any:
    """A ``BulkSegmentWriter`` (below) on ``ix``, with ``SegmentWriter``'s ``options``
    (``limitmb``, ``compound``); ``lock=False`` for a build worker, whose parent holds the
    index lock (Whoosh's private ``_lk`` argument)."""
    global _BULK_WRITER_CLASS
    if _BULK_WRITER_CLASS is None:
        _BULK_WRITER_CLASS = _bulk_writer_class()
    return _BULK_WRITER_CLASS(ix, _lk=lock, **options)


def finish_worker_segment(writer: Any) -> Any:
    """Write a build worker's segment without committing it to the index; the segment (None
    when the worker indexed nothing). The parent lists every worker's segment in one table of
    contents (:func:`write_segments`)."""
    return writer._finalize_segment() if writer.doc_count() else None


def close_worker_writer(writer: Any) -> None:
    """Release a build worker's writer after :func:`finish_worker_segment` (no commit)."""
    writer._finish()


def toc_segments(ix: Any) -> list[Any]:
    """The segments of ``ix``'s current table of contents, as a new writer would read them
    (without opening one: a cancelled writer leaves its empty segment's files behind)."""
    return list(ix._segments())


def write_segments(ix: Any, schema: Any, segments: list[Any]) -> None:
    """Make ``segments`` (the build workers') the index's first generation, as Whoosh's
    ``MpWriter`` does with ``multisegment=True``, and delete files no segment uses."""
    from whoosh import index as wi

    wi.TOC(schema, segments, 1).write(ix.storage, ix.indexname)
    wi.clean_files(ix.storage, ix.indexname, 1, segments)


def _bulk_writer_class() -> Any:  # noqa: C901 (one class, built on first use: see bulk_segment_writer)
    from whoosh.util.numeric import byte_to_length, length_to_byte
    from whoosh.writing import SegmentWriter

    class BulkSegmentWriter(SegmentWriter):  # type: ignore[misc]
        """A ``SegmentWriter`` for a segment written in one go: ``add_document`` then ``commit``
        (or ``_finalize_segment``). No deletions, no merges, no spelling or vector fields."""

        def __init__(self, ix: Any, **kwargs: Any) -> None:
            unsupported = [
                name for name, field in ix.schema.items() if field.separate_spelling() or field.vector
            ]
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
            if type(value) is dict and getattr(field, "takes_counts", False):  # analysis.CountedText
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
                    postings = terms[tbytes] = (array.array("I"), [], [])
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
            self,
            terms: dict[bytes, Postings],
            fieldname: str,
            field: Any,
            counts: dict[str, int],
            boost: float,
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
                    postings = terms[tbytes] = (array.array("I"), [], [])
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
                    _add_postings(
                        writer._postwriter, docs, weights, values, [lengths.get(d, 0) for d in docs]
                    )
                    writer.finish_term()
                writer.finish_field()
            writer.close()
            self._postings.clear()
            self._lengths.clear()

    return BulkSegmentWriter


def _add_postings(
    postwriter: Any, docs: array.array[int], weights: list[Any], values: list[Any], lengths: list[int]
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


# ---------------------------------------------------------------------------------------------
# Matchers that fix Whoosh's (vault_tools.recall.filters)

_REQUIRE_CLASS: Any = None


def safe_require(scored: Any, required: Any) -> Any:
    """Whoosh's ``Require(scored, required)``, whose matcher survives a block-quality skip that
    lands both sides on the same document (Whoosh's trips an assertion)."""
    global _REQUIRE_CLASS
    if _REQUIRE_CLASS is None:
        _REQUIRE_CLASS = _require_class()
    return _REQUIRE_CLASS(scored, required)


def _require_class() -> Any:
    from whoosh.matching.wrappers import RequireMatcher
    from whoosh.query import Require

    class SafeRequireMatcher(RequireMatcher):  # type: ignore[misc]
        def skip_to_quality(self, minquality: float) -> int:
            skipped = int(self.a.skip_to_quality(minquality))
            if self.a.is_active() and self.b.is_active() and self.a.id() != self.b.id():
                self.child._find_next()
            return skipped

    class SafeRequire(Require):  # type: ignore[misc]
        def matcher(self, searcher: Any, context: Any = None) -> Any:
            scored_m = self.a.matcher(searcher, context)
            if not scored_m.is_active():
                return scored_m  # nothing to restrict: do not read a year of date postings
            required_m = self.b.matcher(searcher, searcher.boolean_context())
            return SafeRequireMatcher(scored_m, required_m)

    return SafeRequire


_AND_NOT_CLASS: Any = None


def safe_and_not(positive: Any, negative: Any) -> Any:
    """Whoosh's ``AndNot(positive, negative)``, whose matcher checks a first positive match
    against the exclusion and stops at an exhausted positive side after a block-quality skip."""
    global _AND_NOT_CLASS
    if _AND_NOT_CLASS is None:
        _AND_NOT_CLASS = _and_not_class()
    return _AND_NOT_CLASS(positive, negative)


def _and_not_class() -> Any:
    from whoosh.matching.binary import AndNotMatcher
    from whoosh.query import AndNot

    class SafeAndNotMatcher(AndNotMatcher):  # type: ignore[misc]
        # Whoosh's _find_first only looks at the exclusion side when both sides happen to start
        # on the same document, so a first positive match that is excluded leaked through.
        def _find_first(self) -> None:
            if self.a.is_active() and self.b.is_active():
                self._find_next()

        def _find_next(self) -> bool:
            if not self.a.is_active():
                return False
            return bool(super()._find_next())

        def skip_to_quality(self, minquality: float) -> int:
            skipped = int(self.a.skip_to_quality(minquality))
            if self.a.is_active():
                self._find_next()
            return skipped

    class SafeAndNot(AndNot):  # type: ignore[misc]
        def matcher(self, searcher: Any, context: Any = None) -> Any:
            positive = self.a.matcher(searcher, context)
            if not positive.is_active():
                return positive
            negative = self.b.matcher(searcher, searcher.boolean_context())
            return SafeAndNotMatcher(positive, negative)

    return SafeAndNot
