"""Which documents an append to a note changes, from what the last update of it wrote.

:mod:`vault_tools.notes.tail` reads only the end of a note that was appended to: the entries
before its old last one are kept as they were. Their documents are too, but for the last
:data:`NEIGHBOURS_AFTER` of them, whose neighbours after them are now other entries. So the
documents to compare are those of the entries from ``reread - NEIGHBOURS_AFTER`` on (the
*window*), and each needs its neighbours before it: :data:`TAIL_ENTRIES` entries are kept from a
note's end. :func:`plan_append` compares the window's fingerprints with what the update that
wrote them remembered (:class:`vault_tools.index.writer.KnownFile`), as a full read would
(:func:`vault_tools.index.documents.entry_fingerprints`) but without looking at the entries
before the window: of identical entries the first is indexed, and an entry before the window is
the first of its id exactly when its id is indexed and was not first seen in the window.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from vault_tools.index.documents import (
    NEIGHBOURS_AFTER,
    NEIGHBOURS_BEFORE,
    Firsts,
    entry_fingerprint,
    entry_neighbours,
    next_entry_id,
)
from vault_tools.notes import model as notes
from vault_tools.notes.tail import Appended

#: Entries kept from a note's end: the last one, read again after an append, those before it
#: whose neighbours after them it may change, and their neighbours before them.
TAIL_ENTRIES = NEIGHBOURS_BEFORE + NEIGHBOURS_AFTER + 1

#: Entry id → (fingerprint, start line, end line of its live document): KnownFile.rows.
Rows = dict[str, tuple[int, int, int]]


@dataclass(frozen=True)
class AppendPlan:
    """What an update writes for an append (positions are in ``Appended.entries``)."""

    stale: list[str]  # the ids whose documents go
    write: Firsts  # the documents to write: (position, neighbours before, neighbours after)
    rows: Rows  # the file's rows once written
    moved: dict[str, list[int]]  # its line-table rows (index_lines)
    end_firsts: tuple[int, ...]  # per entry of the new end's tail: where its id is first (-1: early)


def plan_append(
    appended: Appended, rows: Rows, moved: Mapping[str, list[int]], end_firsts: Sequence[int]
) -> AppendPlan:
    """Compare the window of ``appended`` with the ``rows`` and line-table rows ``moved`` the last
    update wrote; ``end_firsts``: per entry of the old end's tail, where its id was first seen."""
    entries, base = appended.entries, appended.first
    start = max(base, appended.reread - NEIGHBOURS_AFTER)
    window_ids = _first_in_window(appended.old.tail, base, start, end_firsts)
    firsts: dict[str, tuple[int, int]] = {}  # id → (position in entries, fingerprint)
    chosen: Firsts = []
    for i in range(start - base, len(entries)):
        entry_id = entries[i].id
        if entry_id in firsts or (entry_id in rows and entry_id not in window_ids):
            continue  # indexed as an earlier entry
        before, after = entry_neighbours(entries, i)
        firsts[entry_id] = (i, _fingerprint(entries, i, before, after))
        chosen.append((i, before, after))
    changed = {entry_id for entry_id, (_i, fp) in firsts.items() if rows.get(entry_id, (None,))[0] != fp}
    stale = [entry_id for entry_id in window_ids if entry_id not in firsts or entry_id in changed]
    new_rows, new_moved = _rows_after(entries, firsts, changed, stale, rows, moved, window_ids)
    return AppendPlan(
        stale=stale,
        write=[first for first in chosen if entries[first[0]].id in changed],
        rows=new_rows,
        moved=new_moved,
        end_firsts=_end_firsts(appended, start, firsts, end_firsts),
    )


def _first_in_window(
    tail: Sequence[notes.Entry], base: int, start: int, end_firsts: Sequence[int]
) -> set[str]:
    """The ids of the old tail's entries from ``start`` on that were first seen there."""
    return {
        entry.id
        for position, (entry, first) in enumerate(zip(tail, end_firsts, strict=True), start=base)
        if position >= start and first >= start
    }


def _fingerprint(entries: Sequence[notes.Entry], i: int, before: list[int], after: list[int]) -> int:
    return hash(
        entry_fingerprint(
            entries[i],
            [entries[j].id for j in before],
            [entries[j].id for j in after],
            next_entry_id(entries, i, after),
        )
    )


def _rows_after(
    entries: Sequence[notes.Entry],
    firsts: Mapping[str, tuple[int, int]],
    changed: set[str],
    stale: Sequence[str],
    rows: Rows,
    moved: Mapping[str, list[int]],
    window_ids: set[str],
) -> tuple[Rows, dict[str, list[int]]]:
    """The file's rows and line-table rows once the plan is written: those of the entries before
    the window as they were, the window's from its entries."""
    new_rows = dict(rows)
    for entry_id in stale:
        del new_rows[entry_id]
    new_moved = {entry_id: row for entry_id, row in moved.items() if entry_id not in window_ids}
    for entry_id, (i, fingerprint) in firsts.items():
        entry = entries[i]
        if entry_id in changed:
            new_rows[entry_id] = (fingerprint, entry.start_line, entry.end_line)
            continue
        _fp, start, end = new_rows[entry_id]
        if (start, end) != (entry.start_line, entry.end_line):
            new_moved[entry_id] = [start, entry.start_line, entry.end_line]
    return new_rows, new_moved


def _end_firsts(
    appended: Appended, start: int, firsts: Mapping[str, tuple[int, int]], old: Sequence[int]
) -> tuple[int, ...]:
    """Per entry of the new end's tail (the last TAIL_ENTRIES), where its id is first seen; -1
    for an id first seen before the window (all that the next append needs to know of it)."""
    base = appended.first
    out: list[int] = []
    for i in range(max(0, len(appended.entries) - TAIL_ENTRIES), len(appended.entries)):
        if base + i < start:
            out.append(old[i])  # before the window: unchanged, and so is where its id is first
        else:
            found = firsts.get(appended.entries[i].id)
            out.append(base + found[0] if found is not None else -1)
    return tuple(out)
