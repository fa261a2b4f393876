"""Reading a note again after something was appended to it: only what was appended is parsed.

An agent writes memory by appending a line to today's note, and the watcher read the whole note
again on every save: at 2,000 entries most of an update was parsing lines it had already read.
When the bytes a note held when it was last read are a prefix of what it holds now, every entry
but the last one it had is unchanged, with the same lines and the same section: a block ends
where the next block, heading or blank line begins, and all of those are in the old bytes,
except for the last block, which the appended lines may continue (a bullet's continuation line,
an indented line after blank lines, the rest of an unclosed code fence, the rest of a last line
that had no line ending). So the note is parsed again from the line its last entry starts on,
in that entry's section, and the entries before it are kept as they were.

Anything that could change more goes back to a full read (:func:`read_appended` returns None):
the old bytes are not a prefix (an edit mid-file, a rewrite), the note had read warnings, its
front matter was opened and not closed (an appended ``---`` would close it), or the new bytes
have a NUL byte, are not UTF-8 or are over the size limit.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass

from vault_tools.notes import model as notes

#: How much of a note's start decides whether it is read as a binary file (see notes.decode).
_BINARY_PROBE = 8192


@dataclass(frozen=True)
class NoteEnd:
    """What reading a note again after an append needs of how it was read last."""

    note: notes.Note  # the note without its lines and entries: path, kind, date, front matter
    size: int  # how many bytes it had
    digest: str  # their sha256
    count: int  # how many entries it had
    tail: tuple[notes.Entry, ...]  # its last entries; the last one is read again
    rest: tuple[str, ...]  # its lines from the one its last entry starts on, as read


@dataclass(frozen=True)
class Appended:
    """A note read again after an append: its entries from position ``first`` on."""

    digest: str  # sha256 of the note's bytes now
    size: int
    first: int  # the position of entries[0] in the note
    entries: list[notes.Entry]  # the old tail but its last entry, then the entries read again
    reread: int  # the position of the first entry read again (the old last entry's)
    count: int  # how many entries the note has now
    old: NoteEnd  # what it was read from
    lines: list[str]  # the note's lines from the old last entry's first line on

    @property
    def read(self) -> list[notes.Entry]:
        """The entries read again: the old last one (or what became of it) and the new ones."""
        return self.entries[self.reread - self.first :]


def note_end(note: notes.Note, size: int, keep: int) -> NoteEnd | None:
    """How ``note`` (read from ``size`` bytes) ends, keeping its last ``keep`` entries; None when
    an append could change more than its last entry (see the module docstring)."""
    if note.warnings or not note.entries or keep < 1 or _front_matter_open(note):
        return None
    last = note.entries[-1]
    return NoteEnd(
        note=dataclasses.replace(note, lines=[], entries=[]),
        size=size,
        digest=note.digest,
        count=len(note.entries),
        tail=tuple(note.entries[-keep:]),
        rest=tuple(note.lines[last.start_line - 1 :]),
    )


def _front_matter_open(note: notes.Note) -> bool:
    """Whether the note starts a front matter block it does not close (an append may close it)."""
    first = notes.strip_eol(note.lines[0]).lstrip(notes.BOM).rstrip() if note.lines else ""
    return note.body_start == 0 and first == "---"


def read_appended(end: NoteEnd, data: bytes) -> Appended | None:
    """The note ``end`` describes, now that it holds ``data``, when ``data`` is its old bytes
    with more appended; None when it is not, or when in doubt (then read it all again)."""
    if len(data) <= end.size or len(data) > notes.MAX_NOTE_BYTES or b"\x00" in data[:_BINARY_PROBE]:
        return None
    hasher = hashlib.sha256(data[: end.size])
    if hasher.hexdigest() != end.digest:
        return None
    added = data[end.size :]
    try:
        text = added.decode("utf-8")
    except UnicodeDecodeError:
        return None
    hasher.update(added)
    last = end.tail[-1]
    lines = notes.split_lines("".join(end.rest) + text)
    read = list(notes.parse_blocks(end.note, lines, 0, first_line=last.start_line - 1, section=last.section))
    first = end.count - len(end.tail)
    return Appended(
        digest=hasher.hexdigest(),
        size=len(data),
        first=first,
        entries=[*end.tail[:-1], *read],
        reread=end.count - 1,
        count=end.count - 1 + len(read),
        old=end,
        lines=lines,
    )


def appended_end(appended: Appended, keep: int) -> NoteEnd | None:
    """How the note ends now (what :func:`note_end` of a full read would say), keeping its last
    ``keep`` entries; None when the entries read again are none (an appended line made the old
    last entry a heading, say): the next read is a full one."""
    read = appended.read
    if not read or keep < 1:
        return None
    old = appended.old
    offset = old.tail[-1].start_line - 1
    return NoteEnd(
        note=old.note,
        size=appended.size,
        digest=appended.digest,
        count=appended.count,
        tail=tuple(appended.entries[-keep:]),
        rest=tuple(appended.lines[read[-1].start_line - 1 - offset :]),
    )
