"""How the index's Whoosh files are opened, read and closed: Whoosh's file layer, adapted.

Whoosh maps each segment file into memory and reads its parts through ``BufferFile``. Three
things in that layer cost us, and :func:`patch_whoosh` changes them (once per process):

- ``BufferFile`` copied each part it opened into a ``BytesIO`` (80 MB and ~75 ms for a cold
  recall at 100k entries) and kept a memoryview of the map that nothing released, so
  ``CompoundStorage.close()`` could not unmap the segment. The map, and its file descriptor,
  lived until the garbage collector found the reader's reference cycles: a watcher held dozens
  of segments open, merged-away ones included. :class:`ViewFile` reads the map in place and
  releases its view when closed, so closing a reader closes its segment.
- ``Searcher.refresh()`` (``FileIndex._reader(reuse=...)``) added the old reader's segments
  to the new list, merged-away ones included, and reused an open segment reader even when the
  segment had new deletions: a warm searcher kept returning entries that were edited or
  deleted, and held every segment it had ever seen. :func:`_refresh_correctly` reuses a
  reader only for a segment that is in the new table of contents with the same deletions,
  and closes the others.
- A segment with no length column for a field was re-checked on disk for every posting.
- Build workers shared one temp folder (see :func:`worker_storage`).

:func:`import_whoosh` imports Whoosh without three modules it loads and never uses here, and
replaces its numeric range split, which made some date windows match every dated entry.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import io
import sys
import types
from collections.abc import Iterator
from pathlib import Path
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


def worker_storage(folder: Path, n: int) -> Any:
    """The index folder as one build worker sees it: with a temp folder of its own.

    Whoosh names a writer's temp folder after the index (``MAIN.tmp``) and deletes it whole when
    the writer finishes, so workers sharing it deleted each other's sort runs mid-merge.
    """
    from whoosh.filedb.filestore import FileStorage

    class WorkerStorage(FileStorage):  # type: ignore[misc]
        def temp_storage(self, name: str | None = None) -> Any:
            return super().temp_storage(f"{name or 'build'}-worker{n}")

    return WorkerStorage(str(folder))


def tracking_storage(folder: Path) -> Any:
    """A Whoosh FileStorage that can close every file it opened (see ``Index.problem``)."""
    from whoosh.filedb.filestore import FileStorage

    class TrackingStorage(FileStorage):  # type: ignore[misc]
        def __init__(self, path: str) -> None:
            super().__init__(path)
            self.opened: list[Any] | None = []

        def open_file(self, name: str, **kwargs: Any) -> Any:
            handle = super().open_file(name, **kwargs)
            if self.opened is not None:
                self.opened.append(handle)
            return handle

        def close_all(self) -> None:
            for handle in self.opened or ():
                with contextlib.suppress(Exception):
                    handle.close()
            self.opened = []

        def stop_tracking(self) -> None:
            """What was opened is in use now: forget it, and track nothing more."""
            self.opened = None

    return TrackingStorage(str(folder))
