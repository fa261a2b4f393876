"""vault_tools.index.whoosh_private.bulk_segment_writer: a full build's segment, written faster, is byte for byte Whoosh's own."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from helpers import write
from whoosh import fields
from whoosh import index as wi
from whoosh.codec.base import Segment
from whoosh.writing import SegmentWriter

from vault_tools.index.documents import F_TEXT, note_documents, schema
from vault_tools.index.whoosh_private import bulk_segment_writer
from vault_tools.notes import model as notes

SAMPLE = Path(__file__).resolve().parent.parent / "vault"


def sample_documents(tmp_path: Path) -> list[dict[str, Any]]:
    """The sample vault's entries, plus a note whose common word has postings over many blocks
    (Whoosh writes 128 a block) and documents that give the counted fields a plain string."""
    vault = tmp_path / "vault"
    shutil.copytree(SAMPLE, vault)
    lines = [
        f"- 0{i % 10}:00 word{i} common 花生{i % 7} **Ana**: line {i} #tag{i % 5} [k:: v{i}]"
        for i in range(300)
    ]
    write(vault / "memory" / "2026-01-05.md", "\n".join(lines) + "\n")
    docs = [
        doc for path in notes.iter_note_paths(vault) for doc in note_documents(notes.read_note(path, vault))
    ]
    docs.append(
        {
            "id": "plain#1",
            "path": "plain.md",
            F_TEXT: "A plain text, analysed by the field 花生酱",
            "before": "common words",
        }
    )
    docs.append({"id": "plain#2", "path": "plain.md", F_TEXT: "", "after": "common"})
    return docs


def segment_files(
    tmp_path: Path, name: str, writer_class: Any, docs: list[dict[str, Any]]
) -> dict[str, bytes]:
    """The files of the one segment ``writer_class`` writes for ``docs``, by name.

    One file per part (a compound file lists its parts in the order the folder lists them), and
    always the same segment name (a random one would be written into the files)."""
    folder = tmp_path / name
    folder.mkdir()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Segment, "_random_id", classmethod(lambda cls, size=16: "samesegmentid0"))
        writer = writer_class(wi.create_in(str(folder), schema()), compound=False)
    for doc in docs:
        writer.add_document(**doc)
    writer.commit()
    return {p.name: p.read_bytes() for p in folder.iterdir() if "samesegmentid0" in p.name}


def test_a_bulk_segment_is_byte_for_byte_what_whoosh_writes(tmp_path: Path) -> None:
    docs = sample_documents(tmp_path)
    whoosh_files = segment_files(tmp_path, "whoosh", SegmentWriter, docs)
    bulk_files = segment_files(tmp_path, "bulk", bulk_segment_writer, docs)
    assert {Path(name).suffix for name in whoosh_files} >= {".pst", ".trm", ".col"}
    assert bulk_files.keys() == whoosh_files.keys()
    assert [name for name in whoosh_files if bulk_files[name] != whoosh_files[name]] == []


def test_fields_it_cannot_write_are_refused(tmp_path: Path) -> None:
    ix = wi.create_in(str(tmp_path), fields.Schema(title=fields.TEXT(vector=True)))
    with pytest.raises(ValueError, match="title"):
        bulk_segment_writer(ix)
