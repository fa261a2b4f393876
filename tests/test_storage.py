"""Whoosh's file layer as vault-tools adapts it: segments read in place and closed when done."""

from __future__ import annotations

import gc
import io
import mmap
import os
import pickle
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from vault_tools.config import load_config
from vault_tools.index.index import Index
from vault_tools.index.whoosh_private import ViewFile


def test_view_file_reads_seeks_and_unpickles_without_copying(tmp_path: Path) -> None:
    payload = b"header line\n" + pickle.dumps({"键": ["值", 1, 2.5]}) + b"tail without newline"
    path = tmp_path / "blob"
    path.write_bytes(payload)
    with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        f = ViewFile(memoryview(mapped)[5:])
        assert f.readline() == b"r line\n"
        assert pickle.load(f) == {"键": ["值", 1, 2.5]}  # type: ignore[arg-type]
        assert f.readline() == b"tail without newline"
        assert f.read() == b""
        f.seek(-7, io.SEEK_END)
        assert f.read(3) == b"new"
        assert f.tell() == len(payload) - 5 - 4
        f.seek(2, io.SEEK_CUR)
        assert f.read(100) == b"ne"
        f.seek(0)
        buffer = bytearray(4)
        assert f.readinto(buffer) == 4 and bytes(buffer) == b"r li"
        f.close()
        # the view is released: the map can be closed (Whoosh's BufferError case)


def open_index_files(index_dir: Path) -> tuple[int, int]:
    """Descriptors and memory maps of this process under ``index_dir``, and how many are deleted files."""
    targets = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            targets.append(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:
            continue
    maps = Path("/proc/self/maps").read_text().splitlines()
    targets += [line.split(maxsplit=5)[-1] for line in maps if str(index_dir) in line]
    ours = [t for t in targets if t.startswith(str(index_dir))]
    return len(ours), sum(t.endswith("(deleted)") for t in ours)


@pytest.fixture
def no_gc() -> Iterator[None]:
    """Only reference counting frees objects: what a file Whoosh forgot to release stays."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self")
def test_closed_readers_release_their_segments_across_commits_and_merges(tmp_path: Path, no_gc: None) -> None:
    vault = tmp_path / "vault"
    (vault / "memory").mkdir(parents=True)
    note = vault / "memory" / "2026-03-10.md"
    note.write_text("- 09:00 土拨鼠 marmot note\n", encoding="utf-8")
    idx = Index(load_config(vault))
    idx.ensure_current()
    index_dir = vault / ".vault-tools" / "index"
    for i in range(40):
        with note.open("a", encoding="utf-8") as handle:
            handle.write(f"- 10:00 edit {i} of the 土拨鼠 note\n")
        idx.update([note])
        if i % 8 == 7:
            idx.maintain()  # merges delete segment files that earlier readers had mapped
        hits = idx.read(lambda s: len(s.search(_marmot_query(), limit=5)))
        assert hits == 1
    idx.close()
    files, deleted = open_index_files(index_dir)
    assert deleted == 0, "segments merged away are still mapped"
    assert files == 0, "every reader was closed, yet segment files are still open"


def _marmot_query() -> object:
    from whoosh.query import Term

    return Term("text", "marmot")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self")
def test_a_warm_recaller_sees_edits_and_deletions_and_holds_only_live_segments(
    tmp_path: Path, no_gc: None
) -> None:
    """Whoosh's refresh() kept merged-away segments and stale deletions: edited text was still found."""
    from vault_tools.recall.recall import Recaller

    vault = tmp_path / "vault"
    (vault / "memory").mkdir(parents=True)
    for day in range(1, 9):
        (vault / "memory" / f"2026-03-{day:02d}.md").write_text(f"- 09:00 filler {day}\n", encoding="utf-8")
    note = vault / "memory" / "2026-03-10.md"
    note.write_text("- 09:00 土拨鼠 version0\n", encoding="utf-8")
    config = load_config(vault)
    idx = Index(config)
    idx.ensure_current()
    index_dir = vault / ".vault-tools" / "index"
    with Recaller(config, catch_up="never") as warm:
        for i in range(1, 30):
            note.write_text(f"- 09:00 土拨鼠 version{i}\n", encoding="utf-8")
            idx.update([note])
            if i % 7 == 0:
                idx.maintain()
            assert [hit.text for hit in warm.recall(f"version{i}").results] == [f"土拨鼠 version{i}"]
            assert not warm.recall(f"version{i - 1}").results, "an edited-away entry is still found"
            assert len(warm.recall("土拨鼠").results) == 1
        note.unlink()
        idx.update([note])
        assert not warm.recall("土拨鼠").results, "a deleted entry is still found"
        _files, deleted = open_index_files(index_dir)
        assert deleted == 0, "the warm searcher still maps segments merged away"
    idx.close()
    files, deleted = open_index_files(index_dir)
    assert (files, deleted) == (0, 0), "closing the Recaller left segment files open"


def test_whoosh_imports_without_its_unused_modules_and_the_stand_ins_call_the_real_ones() -> None:
    code = """
import sys
from vault_tools.index.whoosh_private import import_whoosh
import_whoosh()
import whoosh.query
left_out = [m for m in ("urllib.request", "whoosh.lang.morph_en", "asyncio", "cached_property") if m in sys.modules]
assert not left_out, left_out
from whoosh.query.terms import variations
assert {"rendering", "renders", "rendered"} <= set(variations("render"))
assert "whoosh.lang.morph_en" in sys.modules
import whoosh.compat, urllib.request, cached_property
assert whoosh.compat.urlretrieve.__name__ == "call_real" and urllib.request.urlretrieve.__name__ == "urlretrieve"
from whoosh.reading import cached_property as used
import functools
assert used is functools.cached_property
"""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr


def test_numeric_ranges_match_exactly_their_range(tmp_path: Path) -> None:
    """Whoosh's trie split wrapped below zero: a 1900 window matched every dated entry."""
    import random

    from whoosh import fields, index
    from whoosh.query import NumericRange

    from vault_tools.index.whoosh_private import import_whoosh, split_ranges

    import_whoosh()
    rng = random.Random(5)
    for _ in range(2000):
        start = rng.randint(0, 2**16 - 1)
        end = rng.randint(start, min(2**16 - 1, start + rng.choice([2, 60, 5000, 2**16])))
        covered: set[int] = set()
        for lo, hi, shift in split_ranges(16, 4, start, end):
            covered.update(range((lo >> shift) << shift, ((hi >> shift) + 1) << shift))
        assert covered == set(range(start, end + 1)), (start, end)
    ix = index.create_in(str(tmp_path), fields.Schema(n=fields.NUMERIC(bits=16, signed=False, stored=True)))
    values = [1, 4, 5, 6, 15, 16, 100, 191, 200, 4095, 4096, 46352]
    with ix.writer() as writer:
        for value in values:
            writer.add_document(n=value)
    with ix.searcher() as searcher:
        for lo, hi in [(4, 5), (1, 1), (100, 200), (None, 16), (4096, None), (46352, 46352)]:
            found = sorted(hit["n"] for hit in searcher.search(NumericRange("n", lo, hi), limit=None))
            assert found == [v for v in values if (lo is None or v >= lo) and (hi is None or v <= hi)]
