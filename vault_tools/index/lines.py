"""The line table: where an entry whose document an update kept is now.

An update keeps the document of an entry that did not change (:mod:`vault_tools.index.writer`),
but a line added or removed above the entry moves it, and Whoosh cannot change a stored field in
place. Writing the document again only for its new line numbers made an edit near the top of a
2,000-item MEMORY.md (a heartbeat's prune or promotion, a person's new item) rewrite every item
below it: about 0.9 s of CPU per save, the tail of the watcher's save-to-searchable.

So a kept document keeps the lines it was written with, and ``lines.json`` next to the manifest
lists the entries that moved since: ``{path: {entry id: [stored start, start, end]}}``. A row
applies only to a document that still says ``stored start``, so a reader whose table is newer
than its searcher never moves a document written since. Readers fix the stored fields of what
they show (:class:`LineTable`). An update recomputes a file's rows whenever it reads the file,
and writes the table after the index commit and before the manifest: a crash in between leaves
the manifest naming the old content, so the next update reads the file again and puts the rows
right. A full build starts without a table; ``doctor`` checks documents at their table's lines.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping, MutableMapping
from pathlib import Path
from typing import Any, TypeVar

from vault_tools.index.documents import F_END, F_ID, F_PATH, F_START
from vault_tools.index.manifest import write_json_atomic

LINES_FILE = "lines.json"
LINES_VERSION = 1

M = TypeVar("M", bound=MutableMapping[str, Any])

#: path → entry id → [the start line its document holds, its start line now, its end line now]
Table = dict[str, dict[str, list[int]]]


def load_lines(index_dir: Path) -> Table:
    """The line table of the index in ``index_dir`` (empty when there is none or it is unreadable)."""
    try:
        data = json.loads((index_dir / LINES_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("version") != LINES_VERSION:
        return {}
    files = data.get("files")
    return files if isinstance(files, dict) else {}


def save_lines(index_dir: Path, table: Mapping[str, Mapping[str, list[int]]]) -> None:
    """Write the table (atomically), or remove the file when no entry has moved."""
    path = index_dir / LINES_FILE
    if not any(table.values()):
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        return
    files = {rel: dict(table[rel]) for rel in sorted(table) if table[rel]}
    write_json_atomic(path, {"version": LINES_VERSION, "files": files})


def moved_entries(stored: Mapping[str, Any], doc: Mapping[str, Any]) -> list[int] | None:
    """The line-table row of a kept document (``stored``) whose entry is now where ``doc`` says;
    None when its stored lines are right."""
    start, end = int(doc[F_START]), int(doc[F_END])
    if int(stored.get(F_START, 0)) == start and int(stored.get(F_END, 0)) == end:
        return None
    return [int(stored.get(F_START, 0)), start, end]


def fix_lines(table: Mapping[str, Mapping[str, list[int]]], stored: M) -> M:
    """``stored`` (a hit's stored fields) with the entry's current lines when it moved (in place)."""
    row = table.get(str(stored.get(F_PATH)), {}).get(str(stored.get(F_ID)))
    if row is not None and int(stored.get(F_START, 0)) == row[0]:
        stored[F_START], stored[F_END] = row[1], row[2]
    return stored


class LineTable:
    """A reader's copy of ``lines.json``, read again when the file changes (a stat per refresh)."""

    def __init__(self, index_dir: Path) -> None:
        self.path = index_dir / LINES_FILE
        self.index_dir = index_dir
        self._stamp: tuple[int, int, int] | None = None
        self.table: Table = {}

    def refresh(self) -> LineTable:
        try:
            st = os.stat(self.path)
        except OSError:
            self._stamp, self.table = None, {}
            return self
        stamp = (st.st_ino, st.st_size, st.st_mtime_ns)
        if stamp != self._stamp:
            self._stamp, self.table = stamp, load_lines(self.index_dir)
        return self

    @property
    def stamp(self) -> tuple[int, int, int] | None:
        """The version of ``lines.json`` read last (None: there is none)."""
        return self._stamp

    def fix(self, stored: M) -> M:
        """``stored`` with the entry's current lines (changed in place)."""
        return fix_lines(self.table, stored) if self.table else stored
