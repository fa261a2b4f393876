"""An update that reads only what was appended to a note leaves the index as a full build would:
the same documents, fields, ids, line numbers, postings and field lengths (index_tail)."""

from __future__ import annotations

import os
import random
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from appends import base_note, crlf, random_append, random_edit
from helpers import write

from vault_tools.config import load_config
from vault_tools.index import writer as index_writer
from vault_tools.index.documents import F_FILE_HASH, F_ID, F_PATH, schema
from vault_tools.index.index import Index
from vault_tools.index.lines import fix_lines, load_lines
from vault_tools.index.manifest import load_manifest
from vault_tools.notes import model as notes
from vault_tools.notes import tail as note_tail

#: Seeds of random save sequences (``VAULT_TOOLS_LONG=1``: many more).
SEEDS = range(60 if os.environ.get("VAULT_TOOLS_LONG") == "1" else 6)

#: What a reader sees of a file's live documents: per entry id, its stored fields (lines fixed by
#: the line table, the file hash left out), its postings and its field lengths.
Seen = dict[str, tuple[dict[str, Any], dict[tuple[str, bytes], float], dict[str, int]]]


def seen(reader: Any, rel: str, table: Any) -> Seen:
    if (F_PATH, rel) not in reader:
        return {}
    docs = {
        d: fix_lines(table, dict(reader.stored_fields(d))) for d in reader.postings(F_PATH, rel).all_ids()
    }
    postings: dict[int, dict[tuple[str, bytes], float]] = {d: {} for d in docs}
    for field, term in reader.all_terms():
        matcher = reader.postings(field, term)
        while matcher.is_active():
            if matcher.id() in postings:
                postings[matcher.id()][(field, term)] = matcher.weight()
            matcher.next()
    scorable = [name for name, field in schema().items() if field.scorable]
    return {
        str(stored[F_ID]): (
            {k: v for k, v in stored.items() if k != F_FILE_HASH},
            postings[d],
            {name: reader.doc_field_length(d, name) or 0 for name in scorable},
        )
        for d, stored in docs.items()
    }


def built(path: Path, vault: Path) -> Seen:
    """What a full build of the file as it is indexes (in a folder of its own: RamStorage writes
    its temp files to one folder shared by every process)."""
    from whoosh.filedb.filestore import FileStorage

    folder = Path(tempfile.mkdtemp(dir=vault.parent))
    built = FileStorage(str(folder)).create_index(schema())
    with built.writer() as writer:
        index_writer.add_note(writer, notes.read_note(path, vault))
    with built.reader() as reader:
        found = seen(reader, notes.relative_posix(path, vault), {})
    shutil.rmtree(folder)
    return found


def indexed(idx: Index, rel: str) -> Seen:
    table = load_lines(idx.dir)
    return idx.read(lambda s: seen(s.reader(), rel, table))


@pytest.fixture
def appends_read(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files updates read only the appended end of (the test must see that path taken)."""
    read: list[str] = []
    real = note_tail.read_appended

    def counting(end: note_tail.NoteEnd, data: bytes) -> note_tail.Appended | None:
        appended = real(end, data)
        if appended is not None:
            read.append(end.note.rel_path)
        return appended

    monkeypatch.setattr(note_tail, "read_appended", counting)
    monkeypatch.setattr(index_writer, "KNOWN_MIN_ENTRIES", 1)  # so that short files are remembered
    return read


@pytest.mark.parametrize("seed", SEEDS)
def test_updates_that_read_only_what_was_appended_index_what_a_build_would(
    tmp_path: Path, seed: int, appends_read: list[str]
) -> None:
    rng = random.Random(seed)
    vault = tmp_path / "vault"
    name = "MEMORY.md" if seed % 6 == 5 else "memory/2026-03-20.md"  # MEMORY.md items have no neighbours
    newline = seed % 3 == 2
    text = base_note(rng, rng.randrange(3, 9), front_matter=seed % 6 != 4)
    path = write(vault / name, crlf(text) if newline else text)
    idx = Index(load_config(vault))
    idx.ensure_current()
    appends = 0
    for n in range(30):
        edit = rng.random() < 0.1
        shape, text = random_edit(rng, text, n) if edit else random_append(rng, text, n)
        path.write_bytes((crlf(text) if newline else text).encode("utf-8"))
        before = len(appends_read)
        idx.update([path])
        appends += not edit
        assert len(appends_read) == before or not edit, shape  # an edit is never read as an append
        live = indexed(idx, name)
        assert live == built(path, vault), f"after {n}: {shape}"
        assert set(load_lines(idx.dir).get(name, {})) <= set(live)  # no row for a document gone
        record = (load_manifest(idx.dir) or {})[name]
        assert (record.sha256, record.entries) == (notes.read_note(path, vault).digest, len(live))
    assert len(appends_read) >= appends * 2 // 3  # most appends take the short path
    assert idx.doctor().ok


def test_a_note_another_process_wrote_to_meanwhile_is_read_in_full(
    tmp_path: Path, appends_read: list[str]
) -> None:
    """What this process remembers of a note is only good while nobody else commits."""
    vault = tmp_path / "vault"
    path = write(vault / "memory" / "2026-03-20.md", "# Day\n- one\n- two\n")
    watcher, other = Index(load_config(vault)), Index(load_config(vault))
    watcher.ensure_current()
    for writer, text in [
        (watcher, "# Day\n- one\n- 2\n"),  # read in full (a build remembers nothing), remembered
        (watcher, "# Day\n- one\n- 2\n- three\n"),  # an append to what it remembers
        (other, "# Day\n- one\n- 2\n- three\n- four\n"),  # an append, but other remembers nothing
        (watcher, "# Day\n- one\n- 2\n- three\n- four\n- five\n"),  # an append, after other's commit
    ]:
        path.write_text(text, encoding="utf-8")
        writer.update([path])
    assert appends_read == ["memory/2026-03-20.md"]
    assert indexed(watcher, "memory/2026-03-20.md") == built(path, vault)


def test_a_merge_this_process_made_keeps_what_it_remembers(tmp_path: Path, appends_read: list[str]) -> None:
    """The watcher merges segments when idle: the next append is still read from the end."""
    vault = tmp_path / "vault"
    text = "# Day\n- one\n"
    path = write(vault / "memory" / "2026-03-20.md", text)
    idx = Index(load_config(vault))
    idx.ensure_current()
    for n in range(8):
        text += f"- line {n}\n"
        path.write_text(text, encoding="utf-8")
        idx.update([path])
    assert idx.maintain(optimize=True)  # the appends deleted many documents: rewritten as one segment
    read = len(appends_read)
    path.write_text(text + "- after the merge\n", encoding="utf-8")
    idx.update([path])
    assert len(appends_read) == read + 1
    assert indexed(idx, "memory/2026-03-20.md") == built(path, vault)
