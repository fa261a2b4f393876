"""The entry index: schema, incremental updates by manifest, self-healing, locking, doctor."""

from __future__ import annotations

import datetime as dt
import errno
import json
import logging
import os
import random
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import write

from vault_tools import locks
from vault_tools.config import Config, load_config
from vault_tools.errors import LockedError
from vault_tools.index import builder as index_builder
from vault_tools.index import documents as index_documents
from vault_tools.index import index as ix
from vault_tools.index import lines as index_lines
from vault_tools.index import manifest as index_manifest
from vault_tools.index import writer as index_writer
from vault_tools.index.documents import (
    F_DAY,
    F_PATH,
    F_TEXT,
    IndexedEntry,
    date_filter,
    tag_filter,
    visibility_filter,
)
from vault_tools.index.healing import IndexBusyError
from vault_tools.index.index import Index
from vault_tools.index.lines import LineTable
from vault_tools.notes import model as notes

DAY_ONE = """---
tags: [daily]
mood: frontmattersecretword
---
# 2026-03-10

## Work
- 09:30 Chose Postgres over MySQL for the billing service #decision #tech/db/Postgres
- 14:00 决定使用向量数据库做语义搜索 #技术/前端/React
  continuation line about pgvector

## Life
- Walked the dog in the park [importance:: 0.8] ^walk-1
- 朋友说他对花生和坚果过敏 #private
"""

DAY_TWO = """# 2026-03-11

- 10:00 Deployed the billing service to staging #shared
- Lunch with Alice, talked about [[Atlas]]
"""

MEMORY = """---
title: Long-term memory
---
# Memory

## Decisions
- 2026-03-10: Chose a vector database for semantic search [importance:: 0.9] [source:: [[2026-03-10]]] ^m-3f9a2c
- 2025-12-01 08:15: 喜欢喝乌龙茶 #preference
"""


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    write(root / "MEMORY.md", MEMORY)
    write(root / "memory" / "2026-03-10.md", DAY_ONE)
    write(root / "memory" / "2026-03-11.md", DAY_TWO)
    return root


@pytest.fixture
def config(vault: Path) -> Config:
    return load_config(vault)


@pytest.fixture
def idx(config: Config) -> Index:
    return Index(config, lock_timeout=5.0, read_lock_timeout=0.5)


def search(idx: Index, text: str, field: str = F_TEXT, filter_: object = None) -> list[IndexedEntry]:
    from whoosh.qparser import QueryParser

    def run(s: object) -> list[IndexedEntry]:
        query = QueryParser(field, idx_schema()).parse(text)
        return [IndexedEntry.from_fields(h.fields()) for h in s.search(query, limit=50, filter=filter_)]  # type: ignore[attr-defined]

    return idx.read(run)


def idx_schema() -> object:
    return index_documents.schema()


def filtered(idx: Index, query: object) -> list[IndexedEntry]:
    return idx.read(lambda s: [IndexedEntry.from_fields(h.fields()) for h in s.search(query, limit=50)])


# ---------------------------------------------------------------------------------------------
# Documents


def test_first_use_builds_one_document_per_entry(idx: Index) -> None:
    report = idx.ensure_current()
    assert report.rebuilt and report.healed is None and not report.warnings
    assert report.entries == idx.entry_count() == 8
    assert report.files_on_disk == 3


def test_document_fields(idx: Index) -> None:
    idx.ensure_current()
    (hit,) = search(idx, "mysql")
    assert hit.path == "memory/2026-03-10.md"
    assert (hit.start_line, hit.end_line) == (8, 8)
    assert hit.kind == "daily" and hit.section == "Work" and hit.visibility == "personal"
    assert hit.date == dt.date(2026, 3, 10) and hit.time == dt.time(9, 30)
    assert hit.datetime == dt.datetime(2026, 3, 10, 9, 30)
    assert set(hit.tags) == {"daily", "decision", "tech/db/Postgres"}  # stored as written
    assert hit.id.startswith("memory/2026-03-10.md#")
    assert hit.file_hash == index_manifest.load_manifest(idx.dir)["memory/2026-03-10.md"].sha256  # type: ignore[index]

    (dog,) = search(idx, "dog")
    assert dog.importance == 0.8 and dog.block_id == "walk-1" and dog.time is None
    (multi,) = search(idx, "pgvector")
    assert (multi.start_line, multi.end_line) == (9, 10)


def test_memory_items_carry_their_own_date_and_fields(idx: Index) -> None:
    idx.ensure_current()
    (item,) = search(idx, "semantic")
    assert item.kind == "memory" and item.path == "MEMORY.md"
    assert item.date == dt.date(2026, 3, 10) and item.importance == 0.9
    assert item.fields["source"] == "[[2026-03-10]]" and item.block_id == "m-3f9a2c"
    assert "2026-03-10" in item.links
    (tea,) = search(idx, "乌龙茶")
    assert tea.datetime == dt.datetime(2025, 12, 1, 8, 15)


def test_front_matter_is_never_body_text(idx: Index) -> None:
    idx.ensure_current()
    assert search(idx, "frontmattersecretword") == []
    assert search(idx, "title") == []


def test_cjk_and_mixed_queries(idx: Index) -> None:
    idx.ensure_current()
    (vector,) = search(idx, "向量数据库")
    assert vector.text.startswith("决定使用向量数据库")
    assert len(search(idx, "过敏")) == 1
    assert len(search(idx, "花生")) == 1
    assert len(search(idx, "茶")) == 1  # one-character query
    assert {e.path for e in search(idx, "数据库")} == {"memory/2026-03-10.md"}
    assert search(idx, "billing 数据库") == []  # AND across scripts, no entry has both


def test_section_is_searchable(idx: Index) -> None:
    idx.ensure_current()
    assert {e.section for e in search(idx, "life", field="section")} == {"Life"}


def test_tag_filter_matches_nested_tags_by_prefix(idx: Index) -> None:
    idx.ensure_current()
    assert len(filtered(idx, tag_filter("#tech"))) == 1
    assert len(filtered(idx, tag_filter("tech/db"))) == 1
    assert len(filtered(idx, tag_filter("tech/DB/postgres"))) == 1
    assert filtered(idx, tag_filter("te")) == []  # a prefix of a name is not a parent tag
    assert len(filtered(idx, tag_filter("技术"))) == 1
    assert len(filtered(idx, tag_filter("技术/前端/react"))) == 1
    assert (
        len(filtered(idx, tag_filter("#技術/前端"))) == 1
    )  # Traditional finds the tag written in Simplified
    assert len(filtered(idx, tag_filter("daily"))) == 4  # front-matter tags apply to every entry


def test_date_and_visibility_filters(idx: Index) -> None:
    idx.ensure_current()
    march_11 = filtered(idx, date_filter(dt.date(2026, 3, 11), dt.date(2026, 3, 11)))
    assert {e.path for e in march_11} == {"memory/2026-03-11.md"}
    assert len(filtered(idx, date_filter(None, dt.date(2025, 12, 31)))) == 1
    assert len(filtered(idx, date_filter(dt.date(2026, 3, 10), None))) == 7
    assert date_filter(None, None) is None
    assert {e.visibility for e in filtered(idx, visibility_filter(["shared"]))} == {"shared"}
    assert {e.visibility for e in filtered(idx, visibility_filter(["private"]))} == {"private"}


def test_tag_prefixes() -> None:
    assert index_documents.tag_prefixes("#技术/前端/React") == ["技术", "技术/前端", "技术/前端/react"]
    assert index_documents.tag_prefixes("a//b/") == ["a", "a/b"]
    assert index_documents.tag_prefixes("#決定") == index_documents.tag_prefixes("#决定") == ["决定"]


def test_identical_entries_in_one_file_are_indexed_once(vault: Path, idx: Index) -> None:
    write(vault / "memory" / "2026-03-12.md", "- same line\n- other\n- same line\n")
    report = idx.ensure_current()
    assert report.entries == 10
    assert len(search(idx, "same")) == 1


# ---------------------------------------------------------------------------------------------
# Incremental updates


def test_nothing_changed_does_nothing(idx: Index) -> None:
    idx.ensure_current()
    manifest_mtime = (idx.dir / index_manifest.MANIFEST_FILE).stat().st_mtime_ns
    report = Index(idx.config).ensure_current()
    assert not report.rebuilt and report.changed == 0 and report.touched == 0 and not report.stale
    assert (idx.dir / index_manifest.MANIFEST_FILE).stat().st_mtime_ns == manifest_mtime


def test_edit_add_delete_are_picked_up(vault: Path, idx: Index) -> None:
    idx.ensure_current()
    day_two = vault / "memory" / "2026-03-11.md"
    write(day_two, DAY_TWO.replace("staging", "production"))
    write(vault / "memory" / "2026-03-12.md", "- 08:00 Bought a zeppelin\n")
    (vault / "memory" / "2026-03-10.md").unlink()
    report = idx.ensure_current()
    assert (report.added, report.updated, report.removed) == (1, 1, 1)
    assert report.entries_removed == 4 + 2 and report.entries_added == 2 + 1
    assert search(idx, "staging") == [] and len(search(idx, "production")) == 1
    assert len(search(idx, "zeppelin")) == 1 and search(idx, "mysql") == []
    assert report.entries == idx.entry_count() == 5


def test_touch_without_change_only_refreshes_the_stat(vault: Path, idx: Index) -> None:
    idx.ensure_current()
    path = vault / "memory" / "2026-03-11.md"
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    report = idx.reconcile()
    assert report.touched == 1 and report.changed == 0, report
    assert index_manifest.load_manifest(idx.dir)["memory/2026-03-11.md"].mtime_ns == 1_000_000_000  # type: ignore[index]
    assert Index(idx.config).ensure_current().changed == 0


def test_same_size_same_mtime_edit_is_caught_by_hash(vault: Path, idx: Index) -> None:
    """An edit within the same mtime tick that keeps the size: the racy-file re-hash finds it."""
    path = vault / "memory" / "2026-03-11.md"
    idx.ensure_current()
    before = path.stat()
    write(path, DAY_TWO.replace("staging", "stagin2"))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size
    report = idx.ensure_current()
    assert report.updated == 1
    assert len(search(idx, "stagin2")) == 1


def test_rebuild_starts_from_nothing(idx: Index) -> None:
    idx.ensure_current()
    report = idx.rebuild()
    assert report.rebuilt and report.entries == 8 and report.healed is None
    assert not list(idx.config.state_dir.glob("index.*"))  # no temp, old or broken folders left


def test_update_given_paths_only(vault: Path, idx: Index) -> None:
    idx.ensure_current()
    write(vault / "memory" / "2026-03-11.md", "- replaced everything\n")
    write(vault / "memory" / "2026-03-12.md", "- not named in the update\n")
    report = idx.update([vault / "memory" / "2026-03-11.md", vault / "AGENTS.md", vault / ".git" / "x.md"])
    assert (report.added, report.updated, report.removed) == (0, 1, 0)
    assert search(idx, "named") == []
    (vault / "memory" / "2026-03-11.md").unlink()
    assert idx.update([Path("memory/2026-03-11.md")]).removed == 1


def test_update_of_a_folder_covers_what_is_in_it_and_what_was(vault: Path, idx: Index) -> None:
    write(vault / "memory" / "2025" / "2025-01-01.md", "- old year note\n")
    idx.ensure_current()
    assert len(search(idx, "year")) == 1
    shutil.move(vault / "memory" / "2025", vault / "elsewhere")
    assert idx.update([vault / "memory" / "2025"]).removed == 1
    shutil.move(vault / "elsewhere", vault / "memory" / "2026")
    assert idx.update([vault / "memory" / "2026"]).added == 1
    assert {e.path for e in search(idx, "year")} == {"memory/2026/2025-01-01.md"}


def test_archive_and_hidden_files_are_not_indexed(vault: Path, idx: Index) -> None:
    write(vault / "memory" / "archive" / "2024-01-01.md", "- archived wombat\n")
    write(vault / "memory" / ".2024-01-02.md.swp", "- hidden wombat\n")
    write(vault / "AGENTS.md", "- agents wombat\n")
    idx.ensure_current()
    assert search(idx, "wombat") == []


def test_bad_files_are_indexed_as_far_as_possible_and_never_crash(
    vault: Path, tmp_path: Path, idx: Index
) -> None:
    memory = vault / "memory"
    (memory / "2026-03-12.md").write_bytes(b"\x00\x01binary\x00")
    (memory / "2026-03-13.md").write_bytes("- caf\xe9 latin1 entry\n".encode("latin-1"))
    write(memory / "notes-about-things.md", "- undated note about kites\n")
    write(tmp_path / "outside.md", "- outside secret\n")
    (memory / "2026-03-14.md").symlink_to(tmp_path / "outside.md")
    (memory / "2026-03-15.md").write_bytes(b"- big\n" + b"x" * (6 * 1024 * 1024))
    report = idx.ensure_current()
    assert report.rebuilt
    text = "\n".join(report.warnings)
    assert "binary" in text and "UTF-8" in text and "not a date" in text
    assert "outside the vault" in text and "limit" in text
    assert len(search(idx, "latin1")) == 1
    (kite,) = search(idx, "kites")
    assert kite.kind == "note" and kite.date is None
    assert search(idx, "secret") == []
    status = idx.status()
    assert any("binary" in w for w in status.bad_files)
    assert Index(idx.config).ensure_current().changed == 0


def test_unreadable_file_is_reported_not_fatal(
    vault: Path, idx: Index, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vault_tools.notes import model as notes

    real_read_note = notes.read_note

    def read_note(path: Path, root: Path) -> notes.Note:
        if path.name == "2026-03-11.md":
            raise PermissionError(13, "Permission denied")
        return real_read_note(path, root)

    monkeypatch.setattr(notes, "read_note", read_note)
    report = idx.ensure_current()
    assert any("could not be read (Permission denied)" in w for w in report.warnings)
    assert report.entries == 6


def segment_count(idx: Index) -> int:
    from whoosh import index as wi

    with wi.open_dir(str(idx.dir), schema=index_documents.schema()).reader() as r:
        return len(list(r.leaf_readers()))


def test_updates_merge_small_classes_in_line_and_maintain_merges_by_size_class(
    vault: Path, idx: Index, monkeypatch: pytest.MonkeyPatch
) -> None:
    idx.ensure_current()
    path = vault / "memory" / "2026-03-12.md"
    lines = ""
    for i in range(9):
        # each under its own heading: no neighbours, so an update adds one document and rewrites none
        lines += f"## part {i}\n- 08:0{i} edit number {i} of the marmot note\n"
        write(path, lines)
        idx.update([path])
    # without merges: the build's and nine; the 5th update merged the four one-document segments
    # before it into its own, the next four each added one
    assert segment_count(idx) == 6
    assert len(search(idx, "marmot")) == 9

    monkeypatch.setattr(index_writer, "COMMIT_MERGE_DOCS", 0)  # commits merge nothing: maintain does
    for i in range(9, 18):
        lines += f"## part {i}\n- 09:{i} edit number {i} of the otter note\n"
        write(path, lines)
        idx.update([path])
    assert segment_count(idx) == 15
    assert idx.maintain()  # four one-document segments of the same size class become one
    assert segment_count(idx) < 15
    while idx.maintain():
        pass
    assert len(search(idx, "otter")) == 9
    assert idx.doctor().ok
    monkeypatch.setattr(index_writer, "MAX_SEGMENTS", segment_count(idx) + 1)
    for i in range(6):
        write(path, f"- 08:00 more edits {i} of the marmot note\n")
        idx.update([path])
        assert segment_count(idx) <= index_writer.MAX_SEGMENTS  # a commit past the limit merges in line
    assert [e.text for e in search(idx, "marmot")] == ["more edits 5 of the marmot note"]


class FakeSegment:
    def __init__(self, docs: int) -> None:
        self.docs = docs

    def doc_count_all(self) -> int:
        return self.docs


def test_a_stream_of_saves_copies_a_flat_number_of_documents_per_commit() -> None:
    """The merges a commit does in line (index_writer.commit_merge_group), replayed over 6,000
    one-document commits on an index shaped like the soak's: two build segments and 17 medium ones
    (a heartbeat's batch of summaries each). Merging the smallest segments whatever their size class
    at the segment cap re-copied the same medium segments, a little bigger each time: 58k documents
    in the first 1,000 commits, 162k in the last."""
    rng = random.Random(1)
    segments = [
        FakeSegment(5707),
        FakeSegment(6293),
        *(FakeSegment(rng.randint(330, 460)) for _ in range(17)),
    ]
    copied_per_thousand: list[int] = []
    copied = 0
    for commit in range(1, 6001):
        group = index_writer.commit_merge_group(list(segments)) or []
        merged = sum(seg.docs for seg in group)
        copied += merged
        segments = [seg for seg in segments if seg not in group] + [FakeSegment(1 + merged)]
        assert len(segments) <= index_writer.MAX_SEGMENTS + 1
        if commit % 1000 == 0:
            copied_per_thousand.append(copied)
            copied = 0
    assert max(copied_per_thousand) <= 12_000, copied_per_thousand  # ~7 documents per commit
    assert copied_per_thousand[-1] <= 1.3 * copied_per_thousand[1], copied_per_thousand


def test_an_update_writes_only_the_entries_that_changed(vault: Path, idx: Index) -> None:
    idx.ensure_current()
    memory = vault / "MEMORY.md"
    before = idx.read(lambda s: {f["id"]: f["file_hash"] for f in s.all_stored_fields()})
    memory.write_text(
        memory.read_text(encoding="utf-8") + "- 2026-03-12: 新的一条 about otters\n", encoding="utf-8"
    )
    idx.update([memory])
    after = idx.read(lambda s: {f["id"]: f["file_hash"] for f in s.all_stored_fields()})
    new_ids = set(after) - set(before)
    assert len(new_ids) == 1 and set(before) <= set(after)
    assert segment_count(idx) == 2  # the build's and one holding only the new entry
    assert {k: v for k, v in after.items() if k in before} == before  # kept documents were not rewritten
    assert [e.text for e in search(idx, "otters")] == ["新的一条 about otters"]
    assert idx.doctor().ok


def test_an_update_rewrites_an_entry_whose_lines_or_section_moved(vault: Path, idx: Index) -> None:
    idx.ensure_current()
    path = write(
        vault / "memory" / "2026-03-12.md", "## Morning\n- 08:00 walked the beagle\n- 09:00 fed the cat\n"
    )
    idx.update([path])
    write(path, "## Evening\n- 07:00 woke up early\n- 08:00 walked the beagle\n")
    idx.update([path])
    [beagle] = search(idx, "beagle")
    assert (beagle.start_line, beagle.section) == (3, "Evening")
    assert search(idx, "cat") == []
    assert idx.doctor().ok


def current_lines(idx: Index, rel: str) -> dict[str, tuple[int, int]]:
    """Entry id → (start, end) as a reader sees them: stored fields fixed by the line table."""
    table = LineTable(idx.dir).refresh()
    return idx.read(
        lambda s: {
            f["id"]: (f["start_line"], f["end_line"])
            for f in (table.fix(dict(stored)) for stored in s.documents(path=rel))
        }
    )


def lines_in_file(path: Path, vault: Path) -> dict[str, tuple[int, int]]:
    return {e.id: (e.start_line, e.end_line) for e in notes.read_note(path, vault).entries}


def test_entries_that_only_moved_keep_their_documents_and_read_at_their_new_lines(
    vault: Path, config: Config, idx: Index
) -> None:
    """A line added near the top of a long MEMORY.md rewrote every item below it (their line
    numbers are stored); now only the new item is written, and the line table says where the
    others are."""
    from vault_tools.recall.recall import recall

    items = "".join(
        f"- 2026-03-{1 + i % 28:02d}: fact {i} about walrus{i}\n  more on it\n" for i in range(40)
    )
    memory = write(vault / "MEMORY.md", "# Memory\n\n## Facts\n" + items)
    idx.update([memory])
    written = idx.read(lambda s: {f["id"]: f["file_hash"] for f in s.all_stored_fields()})
    head, tail = memory.read_text(encoding="utf-8").split("## Facts\n")
    for edit in ("- 2026-03-30: 新的第一条 about otters\n", "- 2026-03-30: two\n- 2026-03-31: lines\n", ""):
        memory.write_text(f"{head}## Facts\n{edit}{tail}", encoding="utf-8")
        idx.update([memory])
        kept = idx.read(lambda s: {f["id"]: f["file_hash"] for f in s.all_stored_fields()})
        assert {k: v for k, v in kept.items() if k in written} == written  # none rewritten
        assert current_lines(idx, "MEMORY.md") == lines_in_file(memory, vault)
        [hit] = recall(config, "walrus39").results
        assert (hit.line, hit.end_line) == lines_in_file(memory, vault)[hit.id]
        assert idx.doctor().ok
    assert not (idx.dir / index_lines.LINES_FILE).exists()  # back where they were written: no table


def test_a_line_table_a_crash_did_not_write_is_put_right_by_the_next_update(
    vault: Path, idx: Index, monkeypatch: pytest.MonkeyPatch
) -> None:
    idx.ensure_current()
    memory = vault / "MEMORY.md"
    head, tail = memory.read_text(encoding="utf-8").split("## Decisions\n")

    def crash(*args: object) -> None:
        raise OSError(errno.EIO, "killed after the commit")

    monkeypatch.setattr(index_writer, "save_lines", crash)
    memory.write_text(f"{head}## Decisions\n- 2026-03-30: on top of the others\n{tail}", encoding="utf-8")
    with pytest.raises(OSError):
        idx.update([memory])
    monkeypatch.undo()
    assert current_lines(idx, "MEMORY.md") != lines_in_file(memory, vault)  # the crash's damage
    idx.ensure_current()  # the manifest was not written either: the file is read again
    assert current_lines(idx, "MEMORY.md") == lines_in_file(memory, vault)
    assert idx.doctor().ok


def test_the_doctor_finds_a_kept_document_whose_move_the_line_table_lost(vault: Path, idx: Index) -> None:
    idx.ensure_current()
    memory = vault / "MEMORY.md"
    head, tail = memory.read_text(encoding="utf-8").split("## Decisions\n")
    memory.write_text(f"{head}## Decisions\n- 2026-03-30: on top of the others\n{tail}", encoding="utf-8")
    idx.update([memory])
    (idx.dir / index_lines.LINES_FILE).unlink()
    report = idx.doctor()
    assert not report.ok and report.stale_paths == ["MEMORY.md"]
    assert idx.doctor(fix=True).ok
    assert current_lines(idx, "MEMORY.md") == lines_in_file(memory, vault)


def test_updates_that_remember_what_they_wrote_leave_every_document_as_a_build_would(
    vault: Path, idx: Index, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Many edits of one file through one Index: after the first, each update compares the file
    with what it wrote last (no document is read), and the doctor, which compares every document
    and its lines with the file, finds nothing wrong after any of them."""
    import random

    reads: list[str] = []
    real_read = index_writer._Batch._put_read

    def counting(self: Any, rel: str, *args: Any) -> None:
        reads.append(rel)
        real_read(self, rel, *args)

    monkeypatch.setattr(index_writer._Batch, "_put_read", counting)
    monkeypatch.setattr(index_writer, "KNOWN_MIN_ENTRIES", 1)  # remembered however short
    rng = random.Random(5)
    path = vault / "memory" / "2026-03-20.md"
    lines = ["## Morning\n"] + [f"- 08:{i:02d} note {i} about the heron{i}\n" for i in range(30)]
    lines[10:10] = ["## Afternoon\n"]
    lines[20] = lines[20].rstrip("\n") + " #private\n"
    lines[25:25] = ["  a continuation line\n"]

    def save(front: str = "") -> None:
        write(path, front + "".join(lines))
        idx.update([path])
        assert idx.doctor().ok, f"after edit {n}"
        assert current_lines(idx, "memory/2026-03-20.md") == lines_in_file(path, vault)

    n = 0
    save()
    for n in range(1, 41):
        bullets = [i for i, line in enumerate(lines) if line.startswith("- ")]
        kind = n % 6
        if kind == 0:
            lines.insert(rng.randrange(len(lines) + 1), f"- 09:{n:02d} inserted ibis{n}\n")
        elif kind == 1 and len(bullets) > 5:
            del lines[rng.choice(bullets)]
        elif kind == 2:
            heading = next(i for i, line in enumerate(lines) if line.startswith("## "))
            lines[heading] = f"## Renamed {n}\n"
        elif kind == 3:
            i = rng.choice(bullets)
            lines[i] = lines[i].rstrip("\n") + f" edited{n}\n"
        elif kind == 4:
            i, j = rng.sample(bullets, 2)
            lines[i], lines[j] = lines[j], lines[i]
        else:
            lines.insert(0, "\n")
        save("---\nvisibility: shared\ntags: [birds]\n---\n" if n % 10 == 9 else "")
    assert len(reads) <= 10, reads  # the first update, front matter changes, big rewrites


def test_an_update_that_remembers_rewrites_an_entry_whose_next_entry_became_its_neighbour(
    vault: Path, idx: Index, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its neighbours stay the same (a #private line between was never one), but the entry right
    after it is now its answer (``next``): the fingerprint must say so."""
    monkeypatch.setattr(index_writer, "KNOWN_MIN_ENTRIES", 1)
    idx.ensure_current()
    path = write(
        vault / "memory" / "2026-03-21.md", "- 08:00 where is the kiwi?\n- 08:01 pin 4321 #private\n"
    )
    path.write_text(path.read_text(encoding="utf-8") + "- 08:02 under the kiwi tree\n", encoding="utf-8")
    idx.update([path])
    write(path, "- 08:00 where is the kiwi?\n- 08:02 under the kiwi tree\n")
    idx.update([path])
    assert idx.doctor().ok
    asking = idx.read(
        lambda s: next(f for f in s.documents(path="memory/2026-03-21.md") if "where" in f["text"])
    )
    assert asking["next"] == notes.read_note(path, vault).entries[1].id


def test_an_entry_fingerprint_covers_every_field_an_entry_has(vault: Path) -> None:
    """A new Entry field must be in the fingerprint (or listed here as not in documents), or an
    update that remembers what it wrote would keep a document that no longer matches."""
    import dataclasses

    from vault_tools.index.documents import entry_fingerprint

    not_in_fingerprint = {"path", "rel_path", "start_line", "end_line", "raw"}  # the file; lines; the id
    path = write(vault / "memory" / "2026-03-20.md", "## S\n- 09:00 hello #tag [k:: v] [[Link]] ^b-1\n")
    entry = notes.read_note(path, vault).entries[0]
    fingerprint = entry_fingerprint(entry, [], [])
    as_in_fingerprint = {"fields": tuple(sorted(entry.fields.items()))}
    for field in dataclasses.fields(entry):
        if field.name not in not_in_fingerprint:
            value = as_in_fingerprint.get(field.name, getattr(entry, field.name))
            assert value in fingerprint, field.name


def test_an_update_leaves_one_document_of_an_entry_indexed_twice(vault: Path, idx: Index) -> None:
    idx.ensure_current()
    from whoosh import index as wi

    stored = idx.read(lambda s: next(s.documents(path="memory/2026-03-10.md")))
    with wi.open_dir(str(idx.dir), schema=index_documents.schema()).writer() as writer:
        writer.add_document(**stored)  # a second copy, as a crash between two writers could leave
    day_one = vault / "memory" / "2026-03-10.md"
    day_one.write_text(day_one.read_text(encoding="utf-8") + "- 23:00 one more line\n", encoding="utf-8")
    idx.update([day_one])
    ids = idx.read(lambda s: [f["id"] for f in s.documents(path="memory/2026-03-10.md")])
    assert ids.count(stored["id"]) == 1
    assert idx.doctor().ok


def test_a_segment_whose_entries_were_all_replaced_is_dropped(vault: Path, idx: Index) -> None:
    idx.ensure_current()
    path = vault / "memory" / "2026-03-12.md"
    for i in range(6):
        write(path, f"- 08:00 rewrite {i} of the marmot note\n")
        idx.update([path])
        assert segment_count(idx) == 2  # the build's and the latest rewrite's
    assert [e.text for e in search(idx, "marmot")] == ["rewrite 5 of the marmot note"]


def test_doctor_finds_a_document_that_no_longer_matches_its_file(vault: Path, idx: Index) -> None:
    """With updates writing only changed entries, documents carry older file hashes; the doctor
    compares each document with what its file says now instead."""
    idx.ensure_current()
    from whoosh import index as wi

    ondisk = wi.open_dir(str(idx.dir), schema=index_documents.schema())
    stored = idx.read(lambda s: next(s.documents(path="memory/2026-03-10.md")))
    with ondisk.writer() as writer:
        writer.delete_by_term("id", stored["id"])
        writer.add_document(**{**stored, "start_line": stored["start_line"] + 40})
    report = idx.doctor()
    assert not report.ok and report.stale_paths == ["memory/2026-03-10.md"] and report.stale_entries == 1
    fixed = idx.doctor(fix=True)
    assert fixed.ok, fixed.summary()


def test_maintain_optimize_drops_deleted_documents(vault: Path, idx: Index) -> None:
    idx.ensure_current()
    day_one = vault / "memory" / "2026-03-10.md"
    write(day_one, "- 08:00 only one entry left\n")
    idx.update([day_one])
    from whoosh import index as wi

    with wi.open_dir(str(idx.dir), schema=index_documents.schema()).reader() as r:
        assert r.doc_count_all() - r.doc_count() == 4
    assert idx.maintain(optimize=True)
    with wi.open_dir(str(idx.dir), schema=index_documents.schema()).reader() as r:
        assert r.doc_count_all() == r.doc_count() == 5
    assert not idx.maintain(optimize=True)


# ---------------------------------------------------------------------------------------------
# Self-healing


def broken_dirs(config: Config) -> list[Path]:
    return sorted(config.state_dir.glob("index.broken-*"))


def segment_files(idx: Index) -> list[Path]:
    return [p for p in idx.dir.iterdir() if p.suffix == ".seg"]


@pytest.mark.parametrize(
    "damage",
    [
        "garbage-toc",
        "truncated-segments",
        "deleted-segments",
        "schema-old",
        "analyzer-old",
        "no-meta",
        "no-manifest",
    ],
)
def test_a_broken_index_is_quarantined_and_rebuilt_with_one_warning(idx: Index, damage: str) -> None:
    idx.ensure_current()
    if damage == "garbage-toc":
        for toc in idx.dir.glob("*.toc"):
            toc.write_bytes(b"garbage" * 10)
    elif damage == "truncated-segments":
        for seg in segment_files(idx):
            with seg.open("r+b") as handle:
                handle.truncate(seg.stat().st_size // 3)
    elif damage == "deleted-segments":
        for seg in segment_files(idx):
            seg.unlink()
    elif damage in ("schema-old", "analyzer-old"):
        meta = json.loads((idx.dir / index_manifest.META_FILE).read_text())
        meta["schema_version" if damage == "schema-old" else "analyzer_version"] = -1
        (idx.dir / index_manifest.META_FILE).write_text(json.dumps(meta))
    elif damage == "no-meta":
        (idx.dir / index_manifest.META_FILE).unlink()
    else:
        (idx.dir / index_manifest.MANIFEST_FILE).write_text("{not json")
    fresh = Index(idx.config, read_lock_timeout=0.5)
    assert fresh.problem(deep=True) is not None
    report = fresh.ensure_current()
    assert report.rebuilt and report.healed
    assert len(report.warnings) == 1 and "rebuilt" in report.warnings[0]
    assert len(broken_dirs(idx.config)) == 1
    assert len(search(fresh, "mysql")) == 1
    again = Index(idx.config).ensure_current()
    assert not again.rebuilt and not again.warnings


def test_a_missing_index_is_built_without_a_warning(idx: Index) -> None:
    idx.ensure_current()
    shutil.rmtree(idx.dir)
    report = Index(idx.config).ensure_current()
    assert report.rebuilt and not report.healed and not report.warnings
    assert broken_dirs(idx.config) == []


def test_searcher_heals_too(idx: Index) -> None:
    idx.ensure_current()
    for toc in idx.dir.glob("*.toc"):
        toc.write_bytes(b"x")
    assert len(search(Index(idx.config), "mysql")) == 1


def test_at_most_two_quarantined_indexes_are_kept(idx: Index) -> None:
    for _ in range(4):
        idx.ensure_current()
        (idx.dir / index_manifest.META_FILE).unlink()
        Index(idx.config).ensure_current()
    assert len(broken_dirs(idx.config)) == 2


def test_index_path_that_is_a_file_is_replaced(idx: Index) -> None:
    idx.config.state_dir.mkdir(parents=True)
    idx.dir.write_text("not a folder")
    report = idx.ensure_current()
    assert report.rebuilt and report.healed
    assert idx.dir.is_dir()


def test_leftovers_of_a_killed_rebuild_are_removed(idx: Index) -> None:
    idx.ensure_current()
    leftover = idx.config.state_dir / "index.tmp-99999"
    leftover.mkdir()
    (leftover / "junk").write_text("x")
    idx.rebuild()
    assert not leftover.exists()


# ---------------------------------------------------------------------------------------------
# Locking and concurrency


@pytest.fixture
def held_lock(config: Config) -> Iterator[None]:
    """The index lock held by another thread (a writer busy elsewhere) until the test ends."""
    taken = threading.Event()
    release = threading.Event()

    def hold() -> None:
        with locks.hold(config, index_manifest.LOCK_NAME, timeout=5, what="test writer"):
            taken.set()
            release.wait(30)

    thread = threading.Thread(target=hold, daemon=True)
    thread.start()
    assert taken.wait(5)
    yield
    release.set()
    thread.join(5)


def test_reader_reports_stale_instead_of_waiting_for_a_busy_writer(
    vault: Path, idx: Index, config: Config, request: pytest.FixtureRequest
) -> None:
    idx.ensure_current()
    write(vault / "memory" / "2026-03-12.md", "- 07:00 unindexed kangaroo\n")
    request.getfixturevalue("held_lock")
    report = Index(config, read_lock_timeout=0.2).ensure_current()
    assert report.stale and "test writer" in (report.stale_reason or "")
    assert "may be stale" in report.summary()
    assert search(idx, "mysql")  # the existing index still answers


def test_reader_with_nothing_changed_never_needs_the_lock(
    idx: Index, config: Config, request: pytest.FixtureRequest
) -> None:
    idx.ensure_current()
    request.getfixturevalue("held_lock")
    report = Index(config, read_lock_timeout=0.2).ensure_current()
    assert not report.stale and report.changed == 0
    assert len(search(Index(config, read_lock_timeout=0.2), "mysql")) == 1


def test_reader_does_not_rebuild_a_broken_index_while_a_writer_holds_the_lock(
    idx: Index, config: Config, request: pytest.FixtureRequest
) -> None:
    idx.ensure_current()
    (idx.dir / index_manifest.META_FILE).unlink()
    request.getfixturevalue("held_lock")
    with pytest.raises(IndexBusyError, match="test writer"):
        Index(config, read_lock_timeout=0.2).ensure_current()
    assert broken_dirs(config) == []


def test_writers_time_out_with_a_clear_error(config: Config, request: pytest.FixtureRequest) -> None:
    request.getfixturevalue("held_lock")
    with pytest.raises(LockedError, match="test writer"):
        Index(config, lock_timeout=0.1).reconcile()


def test_readers_keep_working_during_a_rebuild(vault: Path, idx: Index) -> None:
    for day in range(1, 29):
        write(
            vault / "memory" / f"2026-02-{day:02d}.md",
            "".join(f"- entry {i} about llamas\n" for i in range(20)),
        )
    idx.ensure_current()
    errors: list[BaseException] = []
    stop = threading.Event()

    def reader() -> None:
        reader_idx = Index(idx.config)
        while not stop.is_set():
            try:
                assert len(search(reader_idx, "mysql")) == 1
            except BaseException as exc:
                errors.append(exc)
                return

    threads = [threading.Thread(target=reader) for _ in range(2)]
    for thread in threads:
        thread.start()
    try:
        for _ in range(3):
            idx.rebuild()
    finally:
        stop.set()
        for thread in threads:
            thread.join(10)
    assert errors == []


def test_a_crash_between_commit_and_manifest_is_repaired(vault: Path, idx: Index) -> None:
    """Documents the manifest does not know about (commit done, manifest not written) go away."""
    idx.ensure_current()
    manifest_before = (idx.dir / index_manifest.MANIFEST_FILE).read_bytes()
    write(vault / "memory" / "2026-03-12.md", "- 08:00 ghostly platypus\n")
    idx.ensure_current()
    (idx.dir / index_manifest.MANIFEST_FILE).write_bytes(manifest_before)  # as if we died before writing it
    (vault / "memory" / "2026-03-12.md").unlink()
    assert len(search(idx, "platypus")) == 1
    idx.reconcile()
    assert search(idx, "platypus") == []
    assert idx.doctor().ok


def test_interrupted_update_writes_nothing(vault: Path, idx: Index) -> None:
    idx.ensure_current()
    manifest_before = (idx.dir / index_manifest.MANIFEST_FILE).read_bytes()
    write(vault / "memory" / "2026-03-12.md", "- 08:00 interrupted emu\n")
    report = idx.update([vault / "memory" / "2026-03-12.md"], should_stop=lambda: True)
    assert report.interrupted
    assert (idx.dir / index_manifest.MANIFEST_FILE).read_bytes() == manifest_before
    assert search(idx, "emu") == []
    assert idx.reconcile().added == 1


def test_interrupted_rebuild_leaves_the_old_index(idx: Index) -> None:
    idx.ensure_current()
    report = idx.rebuild(should_stop=lambda: True)
    assert report.interrupted and not report.rebuilt
    assert len(search(idx, "mysql")) == 1
    assert not list(idx.config.state_dir.glob("index.tmp-*"))


SEARCHER_SCRIPT = """
import sys
from pathlib import Path
from vault_tools.config import load_config
from vault_tools.index.index import Index
from whoosh.query import Term
idx = Index(load_config(Path(sys.argv[1])), read_lock_timeout=0.5)
for _ in range(int(sys.argv[2])):
    idx.ensure_current()
    assert idx.read(lambda s: len(s.search(Term("text", "mysql"), limit=5))) == 1
print("ok")
"""


def test_processes_reading_while_another_writes(vault: Path, idx: Index) -> None:
    idx.ensure_current()
    readers = [
        subprocess.Popen(
            [sys.executable, "-W", "error", "-c", SEARCHER_SCRIPT, str(vault), "15"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    for i in range(15):
        write(vault / "memory" / f"2026-04-{i + 1:02d}.md", f"- 08:00 write number {i}\n")
        idx.reconcile()
    for proc in readers:
        out, err = proc.communicate(timeout=50)
        assert proc.returncode == 0, err
        assert out.strip() == "ok"


# ---------------------------------------------------------------------------------------------
# Status and doctor


def test_status_describes_the_index(vault: Path, idx: Index, config: Config) -> None:
    missing = ix.status(config)
    assert missing.state == "missing" and "not built" in missing.summary
    idx.ensure_current()
    status = ix.status(config)
    assert status.state == "ok" and status.entries == 8 and status.files_indexed == status.files_on_disk == 3
    assert status.schema_version == index_documents.SCHEMA_VERSION and status.size_bytes > 0
    assert status.to_dict()["summary"].startswith("8 entries")
    write(vault / "memory" / "2026-03-12.md", "- new\n")
    stale = ix.status(config)
    assert stale.state == "stale" and stale.changed_files == ["memory/2026-03-12.md"]
    for toc in idx.dir.glob("*.toc"):
        toc.write_bytes(b"junk")
    assert ix.status(config).state == "broken"
    (idx.dir / index_manifest.META_FILE).unlink()
    assert ix.status(config).state == "old"


def add_ghost_document(idx: Index) -> None:
    """A document no file accounts for, written behind the manifest's back."""
    from whoosh import index as wi

    with wi.open_dir(str(idx.dir), schema=index_documents.schema()).writer() as writer:
        writer.add_document(id="ghost#1", path="memory/ghost.md", text="ghost entry", file_hash="x")


def test_doctor_reports_and_fixes(vault: Path, idx: Index) -> None:
    idx.ensure_current()
    assert idx.doctor().ok
    write(vault / "memory" / "2026-03-12.md", "- new file\n")
    (vault / "memory" / "2026-03-11.md").unlink()
    day_one = vault / "memory" / "2026-03-10.md"
    stat = day_one.stat()
    write(day_one, DAY_ONE.replace("MySQL", "MyXQL"))  # same size, same mtime: only a hash sees it
    os.utime(day_one, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    manifest = index_manifest.load_manifest(idx.dir)
    assert manifest is not None
    manifest["memory/2026-03-10.md"] = index_manifest.FileRecord(
        **{**manifest["memory/2026-03-10.md"].__dict__, "seen_ns": 0}
    )
    index_manifest.save_manifest(idx.dir, manifest)
    add_ghost_document(idx)
    report = idx.doctor()
    assert not report.ok
    assert report.not_indexed == ["memory/2026-03-12.md"]
    assert report.missing_files == ["memory/2026-03-11.md"]
    assert report.changed_files == ["memory/2026-03-10.md"]
    assert report.stale_paths == ["memory/ghost.md"] and report.stale_entries == 1
    assert "--fix" in report.summary()
    fixed = idx.doctor(fix=True)
    assert fixed.ok and fixed.fixed is not None, fixed.summary()
    assert len(search(idx, "myxql")) == 1 and search(idx, "ghost") == []


def test_doctor_fix_heals_a_broken_index(idx: Index) -> None:
    idx.ensure_current()
    for toc in idx.dir.glob("*.toc"):
        toc.write_bytes(b"junk")
    report = Index(idx.config).doctor()
    assert not report.ok and report.problem and "corrupt" in report.problem
    fixed = Index(idx.config).doctor(fix=True)
    assert fixed.ok and fixed.fixed is not None and fixed.fixed.rebuilt


def test_day_numbers_sort_like_dates() -> None:
    assert index_documents.day_number(dt.date(2026, 3, 10)) == 46089
    assert index_documents.day_from_number(46089) == dt.date(2026, 3, 10)
    assert index_documents.day_number(dt.date(2025, 12, 31)) < index_documents.day_number(dt.date(2026, 1, 1))
    assert (
        index_documents.day_number(dt.date(1850, 1, 1)) == 1
        and index_documents.day_number(dt.date(2200, 1, 1)) == 2**16 - 1
    )


def test_scan_finds_the_same_notes_as_iter_note_paths(vault: Path, tmp_path: Path) -> None:
    from vault_tools.notes import model as notes

    memory = vault / "memory"
    os.link(vault / "MEMORY.md", vault / "memory.md")  # one file, two names: read once
    write(memory / "sub" / "deeper" / "2026-01-01.md", "- deep\n")
    write(memory / "archive" / "2025-01-01.md", "- archived\n")
    write(memory / ".hidden" / "2025-01-02.md", "- hidden folder\n")
    write(memory / ".2025-01-03.md", "- hidden file\n")
    write(memory / "2025-01-04.txt", "- not markdown\n")
    write(tmp_path / "elsewhere" / "outside.md", "- outside\n")
    (memory / "2025-01-05.md").symlink_to(tmp_path / "elsewhere" / "outside.md")
    (memory / "2025-01-06.md").symlink_to(memory / "2026-03-11.md")
    (memory / "linked-folder").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (memory / "dangling.md").symlink_to(tmp_path / "nothing.md")
    (memory / "folder.md").mkdir()
    expected_warnings: list[notes.Warning_] = []
    expected = {notes.relative_posix(p, vault) for p in notes.iter_note_paths(vault, expected_warnings)}
    warnings: list[notes.Warning_] = []
    scanned = index_manifest.scan_note_stats(vault, warnings)
    assert set(scanned) == expected
    assert "memory/2025-01-06.md" in scanned and "memory/2025-01-05.md" not in scanned
    assert [str(w) for w in warnings] == [str(w) for w in expected_warnings]
    assert all(st.st_size == os.stat(path).st_size for path, st in scanned.values())


def test_parallel_build_gives_the_same_index(vault: Path, config: Config) -> None:
    for day in range(1, 21):
        write(
            vault / "memory" / f"2026-02-{day:02d}.md",
            "".join(f"- 0{i}:00 note {i} of day {day} 花生\n" for i in range(5)),
        )
    from whoosh.query import Term

    def all_ids(word: str) -> set[str]:
        return Index(config).read(lambda s: {h["id"] for h in s.search(Term(F_TEXT, word), limit=None)})

    serial = Index(config, build_workers=1).rebuild()
    serial_hits = all_ids("花生")
    parallel = Index(config, build_workers=3).rebuild()
    assert parallel.rebuilt and parallel.entries == serial.entries == 108
    assert all_ids("花生") == serial_hits and len(serial_hits) == 101
    assert json.loads((Index(config).dir / index_manifest.META_FILE).read_text())["build_workers"] == 3
    assert Index(config).doctor().ok
    assert not list(Index(config).dir.glob("*.pickle")) and not list(Index(config).dir.glob("job-*"))


def test_parallel_build_workers_keep_their_own_sort_runs(
    vault: Path, config: Config, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Workers whose postings spill to sort runs on disk must not delete each other's runs."""
    for day in range(1, 29):
        write(
            vault / "memory" / f"2026-02-{day:02d}.md",
            "".join(f"- 0{i % 10}:00 word{day}x{i} 花生{i} 汉堡 demo {i * day}\n" for i in range(60)),
        )
    monkeypatch.setattr(index_builder, "BUILD_LIMIT_MB", 0.02)  # a few hundred postings per run
    report = Index(config, build_workers=2).rebuild()
    assert "parallel build failed" not in caplog.text
    assert (
        report.rebuilt
        and json.loads((Index(config).dir / index_manifest.META_FILE).read_text())["build_workers"] == 2
    )
    assert Index(config).doctor().ok
    assert not [p for p in Index(config).dir.iterdir() if p.suffix == ".tmp" or "worker" in p.name]


def test_parallel_build_can_be_interrupted(vault: Path, config: Config) -> None:
    Index(config).ensure_current()
    report = Index(config, build_workers=2).rebuild(should_stop=lambda: True)
    assert report.interrupted and not list(config.state_dir.glob("index.tmp-*"))
    assert len(search(Index(config), "mysql")) == 1


def test_recover_rebuilds_what_only_a_search_finds(idx: Index) -> None:
    idx.ensure_current()
    idx.close()
    for seg in segment_files(idx):
        with seg.open("r+b") as handle:
            handle.truncate(seg.stat().st_size // 2)
    fresh = Index(idx.config)
    report = fresh.recover()
    assert report is not None and report.rebuilt and report.healed
    assert fresh.warnings == report.warnings and len(report.warnings) == 1
    assert fresh.recover() is None  # nothing wrong any more


def test_primed_searcher_is_handed_out_once(idx: Index) -> None:
    with Index(idx.config) as fresh:
        fresh.ensure_current()
        primed = fresh._primed
        with fresh.searcher() as s:
            assert s is primed
        with fresh.searcher() as s:
            assert s is not primed and s.doc_count() == 8


def test_schema_field_names_are_stable() -> None:
    names = set(index_documents.schema().names())
    assert {F_DAY, F_PATH, F_TEXT, "tagpath", "tags", "importance", "file_hash", "block_id"} <= names


# ---------------------------------------------------------------------------------------------
# CLI


def test_cli_index_doctor_and_rebuild(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from vault_tools.cli import main

    assert main(["index", "--vault", str(vault)]) == 0
    assert "rebuilt: 8 entries from 3 files" in capsys.readouterr().out
    assert main(["index", "--vault", str(vault), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["changed"] == 0 and data["entries"] == 8
    assert main(["index", "--rebuild", "--vault", str(vault)]) == 0
    capsys.readouterr()
    assert main(["doctor", "--vault", str(vault), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["ok"] is True
    (vault / "memory" / "2026-03-11.md").unlink()
    assert main(["doctor", "--vault", str(vault)]) == 1
    assert "deleted from disk, still indexed: 1" in capsys.readouterr().out
    assert main(["doctor", "--fix", "--vault", str(vault)]) == 0


# ---------------------------------------------------------------------------------------------
# What cannot be read is said, not silently skipped


def test_a_folder_that_cannot_be_read_is_named_in_the_warnings(
    vault: Path, idx: Index, monkeypatch: pytest.MonkeyPatch
) -> None:
    idx.rebuild()
    locked = vault / "memory" / "projects"
    write(locked / "atlas.md", "- the wombat plan\n")
    real_scandir = os.scandir

    def scandir(path: Any) -> Any:
        if Path(path) == locked:
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    expected = f"{locked}: could not be read (Permission denied); skipped"
    assert expected in idx.reconcile().warnings  # the watcher's way
    write(vault / "memory" / "2026-03-12.md", "- something new\n")
    assert expected in idx.ensure_current().warnings  # a reading command's catch-up
    from vault_tools.recall.recall import recall

    assert expected in recall(load_config(vault), "wombat").warnings  # and the person is told


def test_a_search_that_fails_is_logged_before_the_retry(idx: Index, caplog: pytest.LogCaptureFixture) -> None:
    idx.rebuild()
    calls: list[int] = []

    def flaky(s: Any) -> int:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("a segment vanished mid-read")
        return int(s.doc_count())

    with caplog.at_level(logging.WARNING, logger="vault_tools.index.index"):
        assert idx.read(flaky) == idx.entry_count() > 0
    assert len(calls) == 2
    assert f"{idx.dir}: a search failed (RuntimeError: a segment vanished mid-read)" in caplog.text


def test_a_search_cut_short_by_a_deleted_vault_is_not_retried_nor_warned_about(
    idx: Index, caplog: pytest.LogCaptureFixture
) -> None:
    # a watcher's warm-up search while its vault is deleted: the watcher says so, once, and exits
    idx.rebuild()

    def deleting(s: Any) -> int:
        shutil.rmtree(idx.config.vault)
        raise RuntimeError("a segment vanished mid-read")

    with caplog.at_level(logging.WARNING, logger="vault_tools.index.index"), pytest.raises(RuntimeError):
        idx.read(deleting)
    assert "a search failed" not in caplog.text and not idx.config.vault.exists()


def test_merging_nothing_leaves_no_files_in_the_index_folder(idx: Index) -> None:
    """A maintain() or reconcile() with nothing to merge opens no Whoosh writer: a cancelled
    writer left its new segment's three files until the next commit, and an idle watcher
    maintains every heartbeat (a quiet day: 26,000 files, each listed by every searcher open)."""
    idx.rebuild()
    before = sorted(path.name for path in idx.dir.iterdir())
    for _ in range(3):
        assert not idx.maintain()
        idx.reconcile()
    assert sorted(path.name for path in idx.dir.iterdir()) == before


def test_index_is_a_facade_over_parts_that_share_one_state(idx: Index) -> None:
    """Index inherits nothing: it hands writing, building, healing and checking to parts with one
    job each, and a part that opens or forgets the Whoosh index does so for all of them."""
    from vault_tools.index.builder import IndexBuilder
    from vault_tools.index.doctor import IndexDoctor
    from vault_tools.index.healing import IndexHealer
    from vault_tools.index.writer import IndexWriter

    assert Index.__bases__ == (object,)
    parts = [idx._writer, idx._builder, idx._healer, idx._doctor]
    assert [type(part) for part in parts] == [IndexWriter, IndexBuilder, IndexHealer, IndexDoctor]
    assert all(part.state is idx._state for part in parts)
    idx.rebuild()
    opened = idx._writer.state.open_ix()
    assert idx._doctor.state.open_ix() is opened
    idx._healer.state.forget_ix()
    assert idx._writer.state.open_ix() is not opened


def test_the_manifest_a_process_wrote_reads_back_as_a_fresh_parse_would(tmp_path: Path) -> None:
    """save_manifest seeds the parse cache with what it wrote; a read must give what parsing the
    file gives, and a caller's changes to what it got must not reach the next reader."""
    from vault_tools.index import manifest as index_manifest

    files = {
        "memory/b.md": index_manifest.FileRecord(10, 2, "beef", 3, 4, ("line 2: bad YAML",)),
        "MEMORY.md": index_manifest.FileRecord(5, 6, "cafe", 7, 8),
    }
    index_manifest.save_manifest(tmp_path, files)
    served = index_manifest.load_manifest(tmp_path)
    index_manifest._parsed_manifests.clear()
    parsed = index_manifest.load_manifest(tmp_path)
    assert served == parsed == files
    assert list(served or {}) == list(parsed or {})  # the same order too
    assert served is not None
    del served["MEMORY.md"]
    assert index_manifest.load_manifest(tmp_path) == files
