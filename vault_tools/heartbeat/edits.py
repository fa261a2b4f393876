"""How the heartbeat edits MEMORY.md and the archive: sections, items and line splices.

A change is a list of :class:`Op` — line splices that find their place by content and are
idempotent (applying one twice changes nothing). :class:`Simulation` applies planned changes to
the working tree's and HEAD's version of each file; :func:`write_all` writes them to the working
files (atomic, conflict-checked; the archive before MEMORY.md, so a pruned item is never lost).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import difflib
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from vault_tools.curation import insights
from vault_tools.errors import ConflictError, VaultError
from vault_tools.heartbeat.report import ChangeReport, HeartbeatReport, Progress
from vault_tools.notes import edit as note_edit
from vault_tools.notes import model as notes

MEMORY_PATH = "MEMORY.md"
SUBJECT_CHARS = 60


SECTION_SYNONYMS: dict[str, tuple[str, ...]] = {
    "decision": ("decisions", "decision", "decisions made", "决定", "决策", "已做决定", "决定事项"),
    "preference": ("preferences", "preference", "likes", "偏好", "喜好", "习惯"),
    "lesson": ("lessons", "lesson", "lessons learned", "learnings", "教训", "经验", "经验教训"),
    "fact": ("facts", "fact", "about me", "事实", "关于我", "基本信息", "信息"),
}
DEFAULT_HEADINGS: dict[str, dict[str, str]] = {
    "en": {"decision": "Decisions", "preference": "Preferences", "lesson": "Lessons", "fact": "Facts"},
    "zh": {"decision": "决定", "preference": "偏好", "lesson": "教训", "fact": "事实"},
}
MEMORY_INITIAL = "---\ntitle: Long-term memory\ntype: memory\n---\n# Long-term memory\n"
ARCHIVE_INITIAL = (
    "---\ntitle: Archive {month}\ntype: archive\n---\n# Archive {month}\n\n"
    "Items the heartbeat moved out of MEMORY.md (expired, superseded or temporary). Nothing is deleted.\n\n"
)
BLOCK_AT_END = re.compile(r"[ \t]\^([A-Za-z0-9][A-Za-z0-9-]*)[ \t]*$")
BLOCK_ANYWHERE = re.compile(r"\^(m-[0-9a-f]{6,})\b")


ChangeKind = Literal["promote", "merge", "prune"]


# ---------------------------------------------------------------------------------------------
# Sections and items


def normalise_heading(text: str) -> str:
    return re.sub(r"[\W_]+", "", text.lower())


SYNONYM_INDEX = {normalise_heading(name): cat for cat, names in SECTION_SYNONYMS.items() for name in names}


def heading_category(heading: str) -> str | None:
    return SYNONYM_INDEX.get(normalise_heading(heading))


def body_headings(lines: list[str]) -> list[tuple[int, int, str]]:
    """(index, level, text) of the headings after the front matter."""
    span = notes.front_matter_span(lines)
    start = span[1] + 1 if span else 0
    found = []
    for index in range(start, len(lines)):
        if not lines[index].lstrip(notes.BOM).startswith("#"):
            continue
        match = notes.HEADING.match(notes.strip_eol(lines[index]).lstrip(notes.BOM))
        if match:
            found.append((index, len(match.group(1)), match.group(2).strip()))
    return found


def find_heading(lines: list[str], category: str) -> str | None:
    for _index, _level, text in body_headings(lines):
        if heading_category(text) == category:
            return text
    return None


def block_ids(lines: Iterable[str]) -> set[str]:
    found = set()
    for line in lines:
        match = BLOCK_AT_END.search(notes.strip_eol(line))
        if match:
            found.add(match.group(1))
    return found


def line_with_block(lines: list[str], block_id: str) -> int | None:
    for index, line in enumerate(lines):
        match = BLOCK_AT_END.search(notes.strip_eol(line))
        if match and match.group(1) == block_id:
            return index
    return None


def parse_lines(lines: list[str], vault: Path, rel_path: str) -> list[notes.Entry]:
    """The entries of a file's lines as :func:`notes.read_note` would read them."""
    path = vault / rel_path
    kind, date = notes.classify(rel_path)
    note = notes.Note(path, rel_path, kind, date, lines, {}, 0, [])
    note.front_matter, note.body_start = notes.parse_front_matter(lines, path, note.warnings)
    return list(notes.parse_entries(note))


def is_item(entry: notes.Entry) -> bool:
    return bool(notes.BULLET.match(entry.raw))


def source_links(dates: Iterable[dt.date]) -> str:
    return ", ".join(f"[[{d.isoformat()}]]" for d in sorted(set(dates)))


SOURCE_FIELD = re.compile(r"\[source::[ \t]*((?:\[\[[^\]]*\]\]|[^\[\]()])*?)[ \t]*\]", re.IGNORECASE)


def add_source_dates(line: str, dates: Sequence[str]) -> str:
    """``line`` with ``[[date]]`` links added to its source field (created when missing)."""
    body = notes.strip_eol(line)
    ending = line[len(body) :]
    match = SOURCE_FIELD.search(body)
    if match:
        links = [m.group(0) for m in re.finditer(r"\[\[[^\]]*\]\]", match.group(1))]
        present = {notes.WIKILINK.sub(lambda m: m.group(1), link).strip() for link in links}
        missing = [d for d in dates if d not in present]
        if not missing:
            return line
        value = ", ".join([*links, *(f"[[{d}]]" for d in missing)])
        return body[: match.start()] + f"[source:: {value}]" + body[match.end() :] + ending
    field_text = f"[source:: {', '.join(f'[[{d}]]' for d in dates)}]"
    block = BLOCK_AT_END.search(body)
    if block:
        return body[: block.start()] + f" {field_text}" + body[block.start() :] + ending
    return body.rstrip() + f" {field_text}" + ending


# ---------------------------------------------------------------------------------------------
# Ops: idempotent, content-anchored splices that can be recorded in the journal


@dataclass(frozen=True)
class Op:
    """One edit of one file. ``apply`` is idempotent and raises ConflictError when it cannot apply."""

    kind: Literal["insert", "add_sources", "remove", "append"]
    path: str
    line: str = ""  # insert: the item line
    block_id: str = ""
    category: str = ""  # insert: the section's category
    heading: str = ""  # insert: the heading to add when no section of the category exists
    lines: tuple[str, ...] = ()  # remove/append: the exact lines; add_sources: the item's first line
    dates: tuple[str, ...] = ()  # add_sources
    initial: str = ""  # the content of the file when it does not exist yet

    def apply(self, lines: list[str]) -> list[str]:
        if not lines and self.initial and self.kind in ("insert", "append"):
            lines = notes.split_lines(self.initial)
        if self.kind == "insert":
            return self._insert(lines)
        if self.kind == "add_sources":
            return self._add_sources(lines)
        if self.kind == "remove":
            return self._remove(lines)
        return self._append(lines)

    def _insert(self, lines: list[str]) -> list[str]:
        if f"^{self.block_id}" in "".join(lines) and self.block_id in block_ids(lines):
            return lines
        heading = find_heading(lines, self.category) or self.heading
        return note_edit.insert_under_section(heading, [self.line])(lines)

    def _add_sources(self, lines: list[str]) -> list[str]:
        index = line_with_block(lines, self.block_id) if self.block_id else None
        if index is None and self.lines:
            with contextlib.suppress(ConflictError):
                index = note_edit.find_block(lines, [self.lines[0]])
        if index is None:
            raise ConflictError("the item to add a source to is no longer in MEMORY.md")
        updated = add_source_dates(lines[index], self.dates)
        return [*lines[:index], updated, *lines[index + 1 :]] if updated != lines[index] else lines

    def _remove(self, lines: list[str]) -> list[str]:
        try:
            index = note_edit.find_block(lines, list(self.lines))
        except ConflictError:
            if self.block_id and line_with_block(lines, self.block_id) is not None:
                raise ConflictError("the item to prune was edited since it was read; left as it is") from None
            return lines  # already removed
        return [*lines[:index], *lines[index + len(self.lines) :]]

    def _append(self, lines: list[str]) -> list[str]:
        wanted = self.lines[0] if self.lines else ""
        if any(notes.strip_eol(line) == wanted for line in lines):
            return lines
        return note_edit.append_lines(list(self.lines))(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items() if v not in ("", ())
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Op:
        values = dict(data)
        for key in ("lines", "dates"):
            if key in values:
                values[key] = tuple(values[key])
        return cls(**values)


def apply_ops(ops: Iterable[Op], path: str, data: bytes | None) -> bytes:
    lines = notes.split_lines(data.decode("utf-8")) if data else []
    for op in ops:
        if op.path == path:
            lines = op.apply(lines)
    return "".join(lines).encode("utf-8")


@dataclass
class Change:
    kind: ChangeKind
    block_id: str
    ops: list[Op]
    message: str
    sources: list[str]  # content hashes this change consumes (marked processed once it is written)
    report: ChangeReport

    def paths(self) -> list[str]:
        return list(dict.fromkeys(op.path for op in self.ops))

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "block_id": self.block_id,
            "ops": [op.to_dict() for op in self.ops],
            "message": self.message,
            "sources": self.sources,
            "report": asdict(self.report),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Change:
        return cls(
            kind=data["kind"],
            block_id=data["block_id"],
            ops=[Op.from_dict(op) for op in data["ops"]],
            message=data["message"],
            sources=list(data.get("sources", [])),
            report=ChangeReport(**data["report"]),
        )


def commit_message(kind: str, text: str, body: str, trailers: Sequence[tuple[str, str]]) -> str:
    subject = insights.short(" ".join(text.split()), SUBJECT_CHARS).replace('"', "'")
    lines = "\n".join(f"{key}: {value}" for key, value in trailers)
    return f'memory: {kind} "{subject}"\n\n{body}\n\n{lines}\n'


def item_text(line: str) -> str:
    """The readable text of an item line: no marker, date, fields or block id."""
    text = notes.BULLET.sub("", line.strip(), count=1)
    text = notes.LEADING_DATE.sub("", text, count=1)
    return BLOCK_AT_END.sub("", notes.FIELD.sub("", text)).strip()


# ---------------------------------------------------------------------------------------------
# Simulation: the files as the plan changes them, in the working tree and at HEAD


class Simulation:
    """File contents as planned changes leave them, both in the working tree and at HEAD.

    A change is planned only when its ops apply to both: then it can be written and committed
    around whatever a person has not committed.
    """

    def __init__(self, vault: Path, head: Callable[[str], bytes | None]) -> None:
        self.vault = vault
        self._head_reader = head
        self.working: dict[str, bytes] = {}
        self.head: dict[str, bytes] = {}
        self.original: dict[str, bytes] = {}

    def _load(self, path: str) -> None:
        if path in self.working:
            return
        file = self.vault / path
        data = file.read_bytes() if file.is_file() else b""
        self.original[path] = data
        self.working[path] = data
        head = self._head_reader(path)
        self.head[path] = data if head is None else head

    def lines(self, path: str) -> list[str]:
        self._load(path)
        return notes.split_lines(self.working[path].decode("utf-8"))

    def try_apply(self, ops: Sequence[Op]) -> str | None:
        """Apply ``ops`` to both versions; on a conflict change nothing and say why."""
        working: dict[str, bytes] = {}
        head: dict[str, bytes] = {}
        for path in dict.fromkeys(op.path for op in ops):
            self._load(path)
            try:
                working[path] = apply_ops(ops, path, self.working[path])
            except ConflictError as exc:
                return str(exc)
            try:
                same = self.head[path] == self.working[path]
                head[path] = working[path] if same else apply_ops(ops, path, self.head[path])
            except ConflictError:
                return f"it touches lines of {path} that have uncommitted edits; left for a later run"
        self.working.update(working)
        self.head.update(head)
        return None

    def diff(self) -> str:
        out: list[str] = []
        for path in sorted(self.working):
            before = self.original[path].decode("utf-8").splitlines(keepends=True)
            after = self.working[path].decode("utf-8").splitlines(keepends=True)
            out.extend(difflib.unified_diff(before, after, fromfile=f"a/{path}", tofile=f"b/{path}"))
        return "".join(line if line.endswith("\n") else line + "\n" for line in out)


def file_order(changes: Sequence[Change]) -> list[str]:
    """Every file the changes touch, MEMORY.md last: an archived item is written to the archive
    before it leaves MEMORY.md, so a crash in between never loses it (at worst it is in both)."""
    paths = list(dict.fromkeys(p for c in changes for p in c.paths()))
    return sorted(paths, key=lambda p: p == MEMORY_PATH)


def write_all(
    vault: Path, changes: Sequence[Change], report: HeartbeatReport, progress: Progress
) -> set[int]:
    """Write the changes' ops to the working files, each file once (atomic, conflict-checked).

    A change whose ops no longer apply (a person edited those lines meanwhile) is left out of every
    file and reported; returns the indexes of those changes.
    """
    failed: dict[int, str] = {}
    for path in file_order(changes):
        touching = [(n, c) for n, c in enumerate(changes) if path in c.paths()]

        def splice(
            lines: list[str], touching: list[tuple[int, Change]] = touching, path: str = path
        ) -> list[str]:
            for number, change in touching:
                if number in failed:
                    continue
                try:
                    updated = lines
                    for op in change.ops:
                        if op.path == path:
                            updated = op.apply(updated)
                    lines = updated
                except ConflictError as exc:
                    failed[number] = str(exc)
            return lines

        try:
            note_edit.apply_edit(vault / path, splice, create=True)
        except VaultError as exc:
            for number, _change in touching:
                failed.setdefault(number, str(exc))
        progress(f"wrote {path}")
    for number, why in sorted(failed.items()):
        change = changes[number]
        report.warnings.append(f"{change.kind} ^{change.block_id} not written: {why}")
    return set(failed)
