"""Reading only what was appended to a note gives what reading it all gives (note_tail)."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from appends import base_note, crlf, random_append, random_edit
from helpers import write

from vault_tools.notes import model as notes
from vault_tools.notes import tail as note_tail

#: Seeds of random save sequences (``VAULT_TOOLS_LONG=1``: many more).
SEEDS = range(200 if os.environ.get("VAULT_TOOLS_LONG") == "1" else 12)

KEEP = 5


def read(path: Path, vault: Path) -> tuple[notes.Note, int]:
    data = path.read_bytes()
    return notes.parse_note(path, vault, data), len(data)


def same_entries(got: list[notes.Entry], want: list[notes.Entry]) -> None:
    assert [(e.id, e.start_line, e.end_line, e.section, e) for e in got] == [
        (e.id, e.start_line, e.end_line, e.section, e) for e in want
    ]


def same_end(got: note_tail.NoteEnd | None, want: note_tail.NoteEnd | None) -> None:
    assert (got is None) == (want is None)
    if got is not None and want is not None:
        assert (got.size, got.digest, got.count, got.rest) == (want.size, want.digest, want.count, want.rest)
        same_entries(list(got.tail), list(want.tail))


@pytest.mark.parametrize("seed", SEEDS)
def test_an_append_read_from_the_last_entry_on_gives_the_entries_of_a_full_read(
    tmp_path: Path, seed: int
) -> None:
    rng = random.Random(seed)
    vault = tmp_path / "vault"
    newline, bom = seed % 3 == 1, "\ufeff" if seed % 4 == 2 else ""
    text = bom + base_note(rng, rng.randrange(1, 12), front_matter=seed % 5 != 3)
    path = write(vault / "memory" / "2026-03-20.md", crlf(text) if newline else text)
    note, size = read(path, vault)
    end = note_tail.note_end(note, size, KEEP)
    tails = 0
    for n in range(60):
        shape, text = random_edit(rng, text, n) if rng.random() < 0.1 else random_append(rng, text, n)
        path.write_bytes((crlf(text) if newline else text).encode("utf-8"))
        note, size = read(path, vault)
        appended = None if end is None else note_tail.read_appended(end, path.read_bytes())
        if appended is not None:
            tails += 1
            assert appended.digest == note.digest and appended.count == len(note.entries), shape
            same_entries(appended.entries, note.entries[appended.first :])
            if appended.read:
                same_end(note_tail.appended_end(appended, KEEP), note_tail.note_end(note, size, KEEP))
            else:  # the old last entry became a heading: its end is not known, the next read is full
                assert note_tail.appended_end(appended, KEEP) is None
        end = note_tail.note_end(note, size, KEEP)
    assert tails >= 30


def test_an_edit_that_is_not_an_append_is_not_read_as_one(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    path = write(vault / "memory" / "2026-03-20.md", "# Day\n- one\n- two\n")
    note, size = read(path, vault)
    end = note_tail.note_end(note, size, KEEP)
    assert end is not None
    for edited in ("# Day\n- one\n- 2\n- three\n", "# Day\n- one\n- two\n", "# Day\n- one\n- tw"):
        assert note_tail.read_appended(end, edited.encode("utf-8")) is None


@pytest.mark.parametrize(
    ("before", "appended"),
    [
        ("---\ntitle: open\n- one\n", b"---\n- two\n"),  # the append closes a front matter block
        ("# Day\n- one\n", b"- two \xff\n"),  # not UTF-8: the full read warns
        ("# Day\n- one\n", b"- two \x00\n"),  # a NUL byte early in the file: binary
    ],
)
def test_an_append_that_may_change_more_than_the_end_is_read_in_full(
    tmp_path: Path, before: str, appended: bytes
) -> None:
    vault = tmp_path / "vault"
    path = write(vault / "memory" / "2026-03-20.md", before)
    note, size = read(path, vault)
    end = note_tail.note_end(note, size, KEEP)
    assert end is None or note_tail.read_appended(end, before.encode("utf-8") + appended) is None


def test_a_note_with_warnings_or_no_entries_has_no_end(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    undated = write(vault / "memory" / "notes.md", "- one\n")  # warned: not a date
    empty = write(vault / "memory" / "2026-03-21.md", "---\ntags: [a]\n---\n# Only a heading\n")
    for path in (undated, empty):
        assert note_tail.note_end(*read(path, vault), KEEP) is None
