"""What the index holds for an entry: the fields, the Whoosh schema, an entry's document.

An entry of a note becomes one Whoosh document (:func:`note_documents`): its own text, and,
weighted lower at search time, the text of its :func:`neighbours` in the ``before``/``after``
fields. :class:`IndexedEntry` is a stored document read back; :func:`date_filter`,
:func:`tag_filter` and :func:`visibility_filter` build the filter queries the schema is designed
for (dates are 16-bit NUMERIC day numbers, :func:`day_number`; tags match by hierarchical prefix
with one Term on ``tagpath``). ``day`` is sortable (``sortedby=F_DAY``). Whoosh is imported only
where a schema or query is built.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import math
from collections.abc import Container, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from vault_tools.chinese import fold_cjk
from vault_tools.index import whoosh_private
from vault_tools.index.analysis import CountedText, index_term_counts, text_analyzer
from vault_tools.notes import model as notes

#: Bump whenever the fields or what goes into them change: the index is rebuilt on mismatch.
#: 3: text and section keep no positions (nothing runs phrase queries, and unpickling the
#: positions was ~95% of the time Whoosh spent reading a posting block). 7: start/end lines are
#: the lines a document was written with; index_lines.LINES_FILE says where a kept entry is now.
#: 8: tasks are marked open or done (F_TASK), so "what is still on my list?" can ask for the open ones.
#: 9: tag paths are folded to Simplified Chinese (#決定 and #决定 are one tag).
SCHEMA_VERSION = 9


# Field names. Stored fields come back in ``hit.fields()``; see IndexedEntry.
F_ID = "id"  # ID unique stored: Entry.id ("memory/2026-03-10.md#3f9a2c1b0d4e")
F_PATH = "path"  # ID stored: the file, relative to the vault, POSIX
F_START = "start_line"  # STORED int, 1-based inclusive, when written (see index_lines: it may move)
F_END = "end_line"  # STORED int, 1-based inclusive, when written
F_DAY = "day"  # NUMERIC 16-bit day number (see day_number), sortable (0 when undated): date filters
F_DATETIME = "datetime"  # STORED ISO "YYYY-MM-DD" or "YYYY-MM-DDTHH:MM": for display
F_KIND = "kind"  # ID stored: daily | memory | note
F_VISIBILITY = "visibility"  # ID stored: personal | private | shared
F_SECTION = "section"  # TEXT stored: the heading the entry is under
F_TAGS = "tags"  # KEYWORD: comma-separated, stored as written, matched lower-cased (nested "a/b")
F_TAGPATH = "tagpath"  # KEYWORD: every prefix of every tag ("a", "a/b"): filter with one Term
F_IMPORTANCE = "importance"  # NUMERIC float stored, untiered: few distinct values (absent when unset)
F_TEXT = "text"  # TEXT stored, no positions: Entry.text (front matter is never body text)
F_SPEAKER = "speaker"  # KEYWORD lower-cased: who says the entry ("**Name**: text"), see Entry.speaker
F_BEFORE = "before"  # TEXT, not stored: the text of the entries before it (see neighbours)
F_AFTER = "after"  # TEXT, not stored: the text of the entries after it
NEIGHBOUR_FIELDS = (F_BEFORE, F_AFTER)  # what an entry's neighbours' text is indexed in
F_NEIGHBOURS = "neighbours"  # STORED: a hash of the ids of the entries before|after it (what they hold)
F_NEXT = "next"  # STORED: the id of the entry right after it, when that is a neighbour
F_FILE_HASH = "file_hash"  # STORED: sha256 of the file the entry was read from (doctor compares it)
F_BLOCK_ID = "block_id"  # ID stored: the Obsidian ^block-id
F_FIELDS = "fields"  # STORED: JSON object of the entry's [key:: value] inline fields
F_LINKS = "links"  # KEYWORD stored, comma-separated [[wikilink]] targets
F_TASK = "task"  # ID stored: open | done for a "- [ ]" / "- [x]" task (absent otherwise), see Entry.task


def make_schema() -> Any:
    """The Whoosh schema of an entry document (see the F_* constants)."""
    from whoosh import fields as wf

    analyzer = text_analyzer()
    return wf.Schema(
        **{
            F_ID: wf.ID(stored=True, unique=True),
            F_PATH: wf.ID(stored=True),
            F_START: wf.STORED(),
            F_END: wf.STORED(),
            F_DAY: wf.NUMERIC(int, bits=16, signed=False, stored=True, sortable=True, default=0),
            F_DATETIME: wf.STORED(),
            F_KIND: wf.ID(stored=True),
            F_VISIBILITY: wf.ID(stored=True),
            F_SECTION: wf.TEXT(analyzer=analyzer, stored=True, phrase=False),
            F_TAGS: wf.KEYWORD(stored=True, lowercase=True, commas=True, scorable=True),
            F_TAGPATH: wf.KEYWORD(lowercase=True, commas=True),
            F_IMPORTANCE: wf.NUMERIC(float, stored=True, shift_step=0),
            F_TEXT: CountedText(analyzer=analyzer, stored=True, phrase=False),
            F_SPEAKER: wf.KEYWORD(lowercase=True, scorable=True),
            F_BEFORE: CountedText(analyzer=analyzer, phrase=False),
            F_AFTER: CountedText(analyzer=analyzer, phrase=False),
            F_NEIGHBOURS: wf.STORED(),
            F_NEXT: wf.STORED(),
            F_FILE_HASH: wf.STORED(),
            F_BLOCK_ID: wf.ID(stored=True),
            F_FIELDS: wf.STORED(),
            F_LINKS: wf.KEYWORD(stored=True, commas=True),
            F_TASK: wf.ID(stored=True),
        }
    )


_SCHEMA: Any = None


def schema() -> Any:
    """The schema, built once per process (an immutable description)."""
    global _SCHEMA
    if _SCHEMA is None:
        whoosh_private.patch_whoosh()
        _SCHEMA = make_schema()
    return _SCHEMA


# ---------------------------------------------------------------------------------------------
# Documents and query helpers


DAY_EPOCH = dt.date(1900, 1, 1)
_DAY_MAX = 2**16 - 1


def day_number(day: dt.date) -> int:
    """The ``day`` field value of a date: days since 1900-01-01 (2026-03-10 → 46089).

    Sixteen bits (1900 … 2079; dates outside are clamped) index as 4 numeric terms per entry
    where a 32-bit YYYYMMDD takes 8: a date is in every entry, so this is ~10% of a build.
    Sorts like the dates; ``IndexedEntry.date`` has the exact date. 0 is never a date's number:
    it is what the ``day`` column holds for an undated entry, which no date filter matches.
    """
    return max(1, min(_DAY_MAX, (day - DAY_EPOCH).days))


def day_from_number(number: int) -> dt.date:
    """The date of a ``day`` field value (inverse of :func:`day_number` inside its range)."""
    return DAY_EPOCH + dt.timedelta(days=number)


def tag_prefixes(tag: str) -> list[str]:
    """``技术/前端/React`` → ``["技术", "技术/前端", "技术/前端/react"]`` (lower-cased, and Traditional
    Chinese folded: ``#決定`` is ``#决定``, as a note reads it with :meth:`Entry.has_tag`)."""
    parts = [p for p in fold_cjk(tag.strip().lstrip("#").lower()).split("/") if p]
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def _keyword(values: Iterable[str]) -> str:
    return ",".join(v.replace(",", " ").strip() for v in values if v.strip())


def entry_document(
    entry: notes.Entry,
    file_hash: str,
    before: str | Mapping[str, int] = "",
    after: str | Mapping[str, int] = "",
    *,
    text_terms: Mapping[str, int] | None = None,
    neighbour_ids: tuple[Sequence[str], Sequence[str]] | None = None,
    next_id: str | None = None,
) -> dict[str, Any]:
    """The Whoosh document of one entry; ``before``/``after``: its neighbours' text or term
    counts (see :func:`neighbours`); ``text_terms``: the counts of its own text, when the
    caller analysed it already; ``neighbour_ids``: the entry ids ``before``/``after`` came from,
    stored so that an update can tell an unchanged document from one whose neighbours moved;
    ``next_id``: the entry right after it, when that is one of them."""
    doc: dict[str, Any] = {
        F_ID: entry.id,
        F_PATH: entry.rel_path,
        F_START: entry.start_line,
        F_END: entry.end_line,
        F_KIND: entry.kind,
        F_VISIBILITY: entry.visibility,
        F_SECTION: entry.section,
        F_TEXT: entry.text,
        F_FILE_HASH: file_hash,
    }
    if text_terms is not None:
        doc[F_TEXT] = dict(text_terms)
        doc["_stored_" + F_TEXT] = entry.text
    if neighbour_ids is not None and any(neighbour_ids):
        joined = "|".join(",".join(ids) for ids in neighbour_ids)
        doc[F_NEIGHBOURS] = hashlib.blake2b(joined.encode("utf-8"), digest_size=8).hexdigest()
    if next_id:
        doc[F_NEXT] = next_id
    speaker = entry.speaker
    if speaker:
        doc[F_SPEAKER] = speaker
    if before:
        doc[F_BEFORE] = before if isinstance(before, str) else dict(before)
    if after:
        doc[F_AFTER] = after if isinstance(after, str) else dict(after)
    if entry.date is not None:
        doc[F_DAY] = day_number(entry.date)
        doc[F_DATETIME] = (
            f"{entry.date.isoformat()}T{entry.time.strftime('%H:%M')}"
            if entry.time
            else entry.date.isoformat()
        )
    if entry.tags:
        doc[F_TAGS] = _keyword(entry.tags)
        doc[F_TAGPATH] = _keyword(dict.fromkeys(p for t in entry.tags for p in tag_prefixes(t)))
    importance = entry.importance
    if importance is not None and math.isfinite(importance):
        doc[F_IMPORTANCE] = importance
    if entry.block_id:
        doc[F_BLOCK_ID] = entry.block_id
    if entry.fields:
        doc[F_FIELDS] = json.dumps(entry.fields, ensure_ascii=False)
    if entry.links:
        doc[F_LINKS] = _keyword(entry.links)
    task = entry.task
    if task is not None:
        doc[F_TASK] = task
    return doc


@dataclass(frozen=True)
class IndexedEntry:
    """An entry as stored in the index (what a search hit carries), typed."""

    id: str
    path: str
    start_line: int
    end_line: int
    kind: str
    visibility: str
    section: str
    text: str
    tags: tuple[str, ...]
    date: dt.date | None
    time: dt.time | None
    importance: float | None
    block_id: str | None
    file_hash: str
    fields: dict[str, str]
    links: tuple[str, ...]

    @property
    def datetime(self) -> dt.datetime | None:
        if self.date is None:
            return None
        return dt.datetime.combine(self.date, self.time or dt.time(0, 0))

    @classmethod
    def from_fields(cls, stored: Mapping[str, Any]) -> IndexedEntry:
        """Build from ``hit.fields()`` or ``searcher.stored_fields(docnum)``."""
        when = str(stored.get(F_DATETIME) or "")
        date: dt.date | None = None
        time_: dt.time | None = None
        if when:
            with contextlib.suppress(ValueError):
                date = dt.date.fromisoformat(when[:10])
                if len(when) > 10:
                    time_ = dt.time.fromisoformat(when[11:])
        try:
            fields = json.loads(stored.get(F_FIELDS) or "{}")
        except ValueError:
            fields = {}
        importance = stored.get(F_IMPORTANCE)
        return cls(
            id=str(stored.get(F_ID, "")),
            path=str(stored.get(F_PATH, "")),
            start_line=int(stored.get(F_START, 0)),
            end_line=int(stored.get(F_END, 0)),
            kind=str(stored.get(F_KIND, "note")),
            visibility=str(stored.get(F_VISIBILITY, "personal")),
            section=str(stored.get(F_SECTION, "")),
            text=str(stored.get(F_TEXT, "")),
            tags=tuple(t for t in str(stored.get(F_TAGS) or "").split(",") if t),
            date=date,
            time=time_,
            importance=float(importance) if importance is not None else None,
            block_id=stored.get(F_BLOCK_ID) or None,
            file_hash=str(stored.get(F_FILE_HASH, "")),
            fields=fields if isinstance(fields, dict) else {},
            links=tuple(t for t in str(stored.get(F_LINKS) or "").split(",") if t),
        )


def date_filter(since: dt.date | None, until: dt.date | None) -> Any:
    """A query matching entries dated ``since``..``until`` inclusive (either end open); None if both are."""
    if since is None and until is None:
        return None
    from whoosh.query import NumericRange

    return NumericRange(
        F_DAY,
        day_number(since) if since else None,
        day_number(until) if until else None,
        constantscore=True,
    )


def tag_filter(tag: str) -> Any:
    """Entries tagged ``tag`` or any tag nested under it (``#a`` matches ``#a/b``; not ``#ab``)."""
    from whoosh.query import Term

    prefixes = tag_prefixes(tag)
    return Term(F_TAGPATH, prefixes[-1] if prefixes else "")


def visibility_filter(allowed: Iterable[str]) -> Any:
    """Entries whose visibility is one of ``allowed`` (e.g. ``["shared"]`` in a group chat)."""
    from whoosh.query import NullQuery, Or, Term

    terms = [Term(F_VISIBILITY, v) for v in allowed]
    return Or(terms) if terms else NullQuery


#: (position, neighbours before, neighbours after) of the entries that get a document.
Firsts = list[tuple[int, list[int], list[int]]]


def note_documents(
    note: notes.Note, only: Container[int] | None = None, firsts: Firsts | None = None
) -> Iterator[dict[str, Any]]:
    """The documents of ``note``'s entries (of identical entries, the first), or of those at the
    positions ``only`` lists. Each text is analysed once, and only when a document needs it.
    ``firsts``: :func:`first_entries` of the note, when the caller has it."""
    entries = note.entries
    chosen = first_entries(entries) if firsts is None else firsts
    if only is not None:
        chosen = [first for first in chosen if first[0] in only]
    return entry_documents(entries, note.digest, chosen)


def entry_documents(
    entries: Sequence[notes.Entry], file_hash: str, firsts: Firsts
) -> Iterator[dict[str, Any]]:
    """The documents of the entries ``firsts`` names (positions in ``entries``, a note's entries
    or a run of them that holds every neighbour named), read from a file with hash ``file_hash``."""
    counts: dict[int, dict[str, int]] = {}

    def counted(i: int) -> dict[str, int]:
        found = counts.get(i)
        if found is None:
            found = counts[i] = index_term_counts(entries[i].text)
        return found

    for i, before, after in firsts:
        entry = entries[i]
        yield entry_document(
            entry,
            file_hash,
            _summed_counts([counted(j) for j in before]),
            _summed_counts([counted(j) for j in after]),
            text_terms=counted(i),
            neighbour_ids=([entries[j].id for j in before], [entries[j].id for j in after]),
            next_id=next_entry_id(entries, i, after),
        )


def first_entries(entries: Sequence[notes.Entry]) -> Firsts:
    """(position, neighbours before, neighbours after) of each entry but a repeat of an earlier
    identical one (same id, same content: indexed once)."""
    seen: set[str] = set()
    out: Firsts = []
    for i, (before, after) in enumerate(neighbours(entries)):
        entry_id = entries[i].id
        if entry_id not in seen:
            seen.add(entry_id)
            out.append((i, before, after))
    return out


def next_entry_id(entries: Sequence[notes.Entry], i: int, after: Sequence[int]) -> str | None:
    """The id of the entry right after entry ``i``, when it is one of its neighbours ``after``."""
    return entries[i + 1].id if after and after[0] == i + 1 else None


def entry_fingerprints(note: notes.Note, firsts: Firsts | None = None) -> dict[str, tuple[int, int]]:
    """Entry id → (position, fingerprint) of each entry :func:`note_documents` makes a document of.

    The fingerprint is everything an entry's document is made of but its lines and the file
    hash, without analysing any text: the same id and fingerprint make the same document (what
    ``same_document(lines=False)`` says), so an update that remembers them need not read the
    stored documents to find the entries that changed. Kept as its hash (this process's), so
    what a watcher remembers is small next to the text.
    """
    entries = note.entries
    return {
        entries[i].id: (
            i,
            hash(
                entry_fingerprint(
                    entries[i],
                    [entries[j].id for j in before],
                    [entries[j].id for j in after],
                    next_entry_id(entries, i, after),
                )
            ),
        )
        for i, before, after in (first_entries(entries) if firsts is None else firsts)
    }


def entry_fingerprint(
    entry: notes.Entry, before_ids: Sequence[str], after_ids: Sequence[str], next_id: str | None = None
) -> tuple[Any, ...]:
    """See :func:`entry_fingerprints`; ``entry.id`` stands for its raw text (a hash of it)."""
    return (
        entry.text,
        entry.kind,
        entry.visibility,
        entry.section,
        entry.date,
        entry.time,
        entry.tags,
        tuple(sorted(entry.fields.items())),
        entry.block_id,
        entry.links,
        tuple(before_ids),
        tuple(after_ids),
        next_id,
    )


#: Indexed, not stored, and computed from stored fields only: tagpath from tags, speaker from
#: the text, the neighbours' fields from the neighbours (their ids are stored in F_NEIGHBOURS).
_DERIVED_FIELDS = frozenset({F_TAGPATH, F_SPEAKER, *NEIGHBOUR_FIELDS})
_STORED_AS = "_stored_"


def same_document(stored: Mapping[str, Any], doc: Mapping[str, Any], *, lines: bool = True) -> bool:
    """Whether ``doc`` indexes exactly what the live document with ``stored`` fields does.

    The file hash aside (it changes with any edit of the file), and with ``lines=False`` the
    line numbers (an update keeps a document whose entry only moved: see
    :mod:`vault_tools.index.lines`). A field given as term counts compares by its stored text. A
    field that is neither stored nor derived from stored ones cannot be compared, so a document
    with one is never the same.
    """
    ignored = {F_FILE_HASH} if lines else {F_FILE_HASH, F_START, F_END}
    mine: dict[str, Any] = {}
    for key, value in doc.items():
        if key.startswith(_STORED_AS):
            mine[key[len(_STORED_AS) :]] = value
        elif key not in ignored and key not in _DERIVED_FIELDS and f"{_STORED_AS}{key}" not in doc:
            mine[key] = value
    return mine == {k: v for k, v in stored.items() if k not in ignored}


def _summed_counts(counts: Iterable[Mapping[str, int]]) -> dict[str, int]:
    total: dict[str, int] = {}
    for each in counts:
        for term, frequency in each.items():
            total[term] = total.get(term, 0) + frequency
    return total


#: How many entries before and after an entry count as its neighbours (two each way beat one
#: and three on LoCoMo's dev half: an answer often comes two turns after its question).
NEIGHBOURS_BEFORE = 2
NEIGHBOURS_AFTER = 2

_VISIBILITY_RANK = {"shared": 0, "personal": 1, "private": 2}


def neighbours(entries: Sequence[notes.Entry]) -> list[tuple[list[int], list[int]]]:
    """(indexes before, indexes after) of each entry's neighbours: up to
    :data:`NEIGHBOURS_BEFORE` and :data:`NEIGHBOURS_AFTER` in the same file and section.

    In a conversation or a person's notes one line names the topic and the next answers it
    ("Any tips?" / "Do your research first"), so a neighbour's words are part of an entry's
    meaning; recall matches them with less weight than the entry's own. MEMORY.md items and
    summary bullets have none: each stands alone, and its neighbours are other facts. A neighbour counts only
    when every chat that may see the entry may see it too: a #private line never makes a
    personal one match, a personal line never makes a shared one match.
    """
    return [entry_neighbours(entries, i) for i in range(len(entries))]


def entry_neighbours(entries: Sequence[notes.Entry], i: int) -> tuple[list[int], list[int]]:
    """(indexes before, indexes after) of the neighbours of ``entries[i]`` (see :func:`neighbours`)."""
    entry = entries[i]
    if entry.kind == "memory":
        return [], []
    before = range(max(0, i - NEIGHBOURS_BEFORE), i)
    after = range(i + 1, min(len(entries), i + 1 + NEIGHBOURS_AFTER))
    return (
        [j for j in before if _is_neighbour(entry, entries[j])],
        [j for j in after if _is_neighbour(entry, entries[j])],
    )


def _is_neighbour(entry: notes.Entry, other: notes.Entry) -> bool:
    if other.section != entry.section or entry.kind in ("memory", "summary"):
        return False
    return _VISIBILITY_RANK.get(other.visibility, 2) <= _VISIBILITY_RANK.get(entry.visibility, 2)
