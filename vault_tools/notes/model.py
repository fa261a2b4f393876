"""Markdown notes read into entries: the model every other part of vault-tools reads.

A note is read once into :class:`Note`: its exact text split into lines that keep their own line
endings, its front matter (metadata, never body text) and its entries (:class:`Entry`: a bullet, a
paragraph or a task with its time, tags, inline fields, speaker and visibility). Reading never
fails on bad input: broken YAML, invalid UTF-8, huge files and symlinks out of the vault become a
:class:`Warning_` naming the file and line. Changing a note is :mod:`vault_tools.notes.edit`.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import hashlib
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NamedTuple

from vault_tools.chinese import fold_cjk

Kind = Literal["daily", "memory", "note", "summary"]
Visibility = Literal["personal", "private", "shared"]

BOM = "\ufeff"
MAX_NOTE_BYTES = 5 * 1024 * 1024
MEMORY_FILE_NAMES = ("MEMORY.md", "memory.md")
IGNORED_DIRS = frozenset({".git", ".obsidian", ".trash", ".vault-tools", "archive"})

DAILY_NAME = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:-[^/\\]*)?\.md$")
MONTH_NAMES = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip
SUMMARIES_DIR = "memory/summaries/"
# memory/summaries/2026-W10.md (an ISO week) and memory/summaries/2026-03.md (a month)
SUMMARY_NAME = re.compile(r"^(\d{4})-(?:W(\d{2})|(\d{2}))\.md$")
HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t#]*$")
BULLET = re.compile(r"^([-*+]|\d{1,9}[.)])[ \t]+")
TASK_BOX = re.compile(r"^\[[ xX/-]\][ \t]+")
# "- [ ] call Ana" is an open task and "- [x] call Ana" a done one; Obsidian's "[/]" (in progress)
# is still open, "[-]" (cancelled) is closed.
TASK_LINE = re.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+\[([ xX/-])\](?=[ \t])")
FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")
LEADING_TIME = re.compile(r"^\**(\d{1,2}):(\d{2})\**(?=[\s:：\-—]|$)[ \t]*[-—:：]?[ \t]*")
LEADING_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:[ \t]+(\d{1,2}):(\d{2}))?[ \t]*[:：\-—]?[ \t]*")
# Obsidian tags: '#' after start/space/bracket/CJK punctuation (Chinese writers leave no space), then letters, digits, _, -, / (nested), any script.
TAG = re.compile(
    r"(?:(?<=^)|(?<=[\s(\[（【。，；：！？、]))#([^\s#\[\](){}<>,.;:!?'\"`，。；：！？、（）【】《》「」]+)"
)
# Dataview inline fields, [key:: value] or (key:: value); a value may hold [[links]] and (parentheses).
FIELD = re.compile(
    r"[\[(]([^\[\]():]{1,40}?)::[ \t]*((?:\[\[[^\]]*\]\]|\([^\[\]()]*\)|[^\[\]()])*?)[ \t]*[\])]"
)
BLOCK_ID = re.compile(r"[ \t]\^([A-Za-z0-9][A-Za-z0-9-]*)[ \t]*$", re.MULTILINE)
WIKILINK = re.compile(r"\[\[([^\[\]|#^]+)(?:[#^][^\[\]|]*)?(?:\|[^\[\]]*)?\]\]")
INLINE_CODE = re.compile(r"`[^`]*`")
# Who speaks in a chat-log line or a transcript: "**Alice**: ..." or "**妈妈**：..." (bold, then a colon).
SPEAKER = re.compile(r"^\*\*([^*\n:：]{1,40}?)\*\*[ \t]*[:：]|^\*\*([^*\n:：]{1,40}?)[:：]\*\*")


@dataclass(frozen=True)
class Warning_:
    """Something wrong with one file that was skipped or read as plain text."""

    path: Path
    message: str
    line: int | None = None

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else str(self.path)
        return f"{where}: {self.message}"


@dataclass(frozen=True)
class Entry:
    """One memory: a top-level bullet with its continuation lines, or a paragraph."""

    path: Path
    rel_path: str
    start_line: int  # 1-based, inclusive
    end_line: int  # 1-based, inclusive
    raw: str  # the entry's lines exactly as in the file, line endings normalised to \n
    text: str  # the readable text: bullet marker, leading time/date, fields and block id removed
    kind: Kind
    date: dt.date | None
    time: dt.time | None
    section: str
    tags: tuple[str, ...]
    fields: dict[str, str]
    block_id: str | None
    links: tuple[str, ...]
    visibility: Visibility

    @functools.cached_property
    def id(self) -> str:
        """Stable across edits elsewhere in the file: the file plus a hash of this entry's content."""
        return f"{self.rel_path}#{self.content_hash[:12]}"

    @functools.cached_property
    def content_hash(self) -> str:
        return hashlib.sha256(self.raw.strip().encode("utf-8")).hexdigest()

    @property
    def speaker(self) -> str | None:
        """Who says this line, when it is written as ``**Name**: text`` (a transcript, a chat log)."""
        match = SPEAKER.match(self.text)
        if match is None:
            return None
        return (match.group(1) or match.group(2)).strip() or None

    @property
    def task(self) -> Literal["open", "done"] | None:
        """``open`` for a task still to do (``- [ ]``, ``- [/]``), ``done`` for a ticked or cancelled
        one (``- [x]``, ``- [-]``), None for anything that is not a task."""
        match = TASK_LINE.match(self.raw)
        if match is None:
            return None
        return "open" if match.group(1) in " /" else "done"

    @property
    def importance(self) -> float | None:
        value = self.fields.get("importance")
        try:
            return float(value) if value is not None else None
        except ValueError:
            return None

    @property
    def datetime(self) -> dt.datetime | None:
        if self.date is None:
            return None
        return dt.datetime.combine(self.date, self.time or dt.time(0, 0))

    def has_tag(self, tag: str) -> bool:
        """True for the tag itself or any nested tag under it (``#a`` matches ``#a/b``), in either
        Chinese script (``#决定`` matches ``#決定``)."""
        wanted = fold_cjk(tag.lstrip("#").lower())
        return any(
            folded == wanted or folded.startswith(wanted + "/")
            for folded in (fold_cjk(t.lower()) for t in self.tags)
        )


@dataclass
class Note:
    """A Markdown file as read: exact lines, front matter, entries, and what was wrong with it."""

    path: Path
    rel_path: str
    kind: Kind
    date: dt.date | None
    lines: list[str]  # exact lines with their endings; the first keeps a BOM if the file had one
    front_matter: dict[str, Any]
    body_start: int  # 0-based index of the first line after the front matter
    entries: list[Entry]
    warnings: list[Warning_] = field(default_factory=list)
    digest: str = ""  # sha256 of the bytes as read

    @property
    def text(self) -> str:
        return "".join(self.lines)

    @property
    def newline(self) -> str:
        return "\r\n" if any(line.endswith("\r\n") for line in self.lines[:50]) else "\n"


# ---------------------------------------------------------------------------------------------
# Reading


def split_lines(text: str) -> list[str]:
    """Split on ``\\n`` only, keeping each line's ending (``str.splitlines`` also splits on \\x0c…)."""
    lines = text.split("\n")
    out = [line + "\n" for line in lines[:-1]]
    if lines[-1]:
        out.append(lines[-1])
    return out


def strip_eol(line: str) -> str:
    return line.rstrip("\r\n")


def classify(rel_path: str) -> tuple[Kind, dt.date | None]:
    """Kind and date of a vault file from its path relative to the vault (POSIX)."""
    name = rel_path.rsplit("/", 1)[-1]
    if "/" not in rel_path and name in MEMORY_FILE_NAMES:
        return "memory", None
    if rel_path.startswith(SUMMARIES_DIR) and rel_path.count("/") == 2:
        end = summary_period_end(name)
        if end is not None:
            return "summary", end
    match = DAILY_NAME.match(name)
    if match and rel_path.startswith("memory/"):
        try:
            return "daily", dt.date(int(match[1]), int(match[2]), int(match[3]))
        except ValueError:
            return "note", None
    return "note", None


def summary_period_end(name: str) -> dt.date | None:
    """The last day of the week or month a summary file is named after (its entries' date)."""
    match = SUMMARY_NAME.match(name)
    if match is None:
        return None
    year = int(match[1])
    try:
        if match[2]:
            return dt.date.fromisocalendar(year, int(match[2]), 7)
        month = int(match[3])
        if not 1 <= month <= 12:
            return None
        return dt.date(year + month // 12, month % 12 + 1, 1) - dt.timedelta(days=1)
    except ValueError:
        return None


def decode(data: bytes, path: Path, warnings: list[Warning_]) -> str | None:
    """UTF-8 text of a file, or None for a binary one; invalid bytes become U+FFFD with a warning."""
    if b"\x00" in data[:8192]:
        warnings.append(Warning_(path, "looks like a binary file (NUL bytes); skipped"))
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        warnings.append(
            Warning_(path, "is not valid UTF-8; read with the bad bytes replaced (re-save it as UTF-8)", line)
        )
        return data.decode("utf-8", errors="replace")


def undated_name_warning(name: str) -> str:
    """Why a note in memory/ counts as undated: no date in its name, or a day that does not exist."""
    match = DAILY_NAME.match(name)
    if match is None:
        return "name is not a date (YYYY-MM-DD.md); indexed as an undated note"
    why = impossible_date(int(match[1]), int(match[2]), int(match[3]))
    return f"name is not a real date ({why}); indexed as an undated note. Rename it to the day it means."


def impossible_date(year: int, month: int, day: int) -> str:
    """What is wrong with a year-month-day that ``dt.date`` refuses: ``February 2026 has no 30th``."""
    if year < dt.MINYEAR:
        return f"there is no year {year:04d}"
    if not 1 <= month <= 12:
        return f"there is no month {month:02d}"
    if day < 1:
        return f"there is no day {day:02d}"
    return f"{MONTH_NAMES[month - 1]} {year} has no {ordinal(day)}"


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st, 30th, 31st."""
    suffix = "th" if 11 <= n % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def size_label(size: int) -> str:
    """``5 MB``, ``5.5 MB``, ``300 KB``, ``12 bytes``: one decimal, shown only where it is not 0."""
    for unit, scale in (("MB", 1024 * 1024), ("KB", 1024)):
        if size >= scale:
            return f"{round(size / scale, 1):g} {unit}"
    return f"{size} bytes"


def over_the_limit(size: int, limit: int) -> str:
    """``5.5 MB, over the 5 MB limit``; in bytes when the rounded sizes would read the same."""
    if size_label(size) == size_label(limit):
        return f"{size:,} bytes, over the {limit:,}-byte limit"
    return f"{size_label(size)}, over the {size_label(limit)} limit"


def read_note(path: Path, vault: Path, *, max_bytes: int = MAX_NOTE_BYTES) -> Note:
    """Read one Markdown file into a :class:`Note`. Never raises for bad content: see ``warnings``."""
    return parse_note(path, vault, path.read_bytes(), max_bytes=max_bytes)


def parse_note(path: Path, vault: Path, data: bytes, *, max_bytes: int = MAX_NOTE_BYTES) -> Note:
    """The :class:`Note` of ``path`` when it holds ``data`` (what :func:`read_note` read)."""
    rel_path = relative_posix(path, vault)
    kind, date = classify(rel_path)
    warnings: list[Warning_] = []
    if kind == "note" and rel_path.startswith("memory/") and not rel_path.startswith("memory/archive/"):
        warnings.append(Warning_(path, undated_name_warning(path.name)))
    note = Note(path, rel_path, kind, date, [], {}, 0, [], warnings, hashlib.sha256(data).hexdigest())
    if len(data) > max_bytes:
        warnings.append(Warning_(path, f"is {over_the_limit(len(data), max_bytes)}; skipped"))
        return note
    text = decode(data, path, warnings)
    if text is None:
        return note
    note.lines = split_lines(text)
    note.front_matter, note.body_start = parse_front_matter(note.lines, path, warnings)
    note.entries = list(parse_entries(note))
    return note


def relative_posix(path: Path, vault: Path) -> str:
    try:
        return path.relative_to(vault).as_posix()
    except ValueError:
        return path.resolve().relative_to(vault.resolve()).as_posix()


def front_matter_span(lines: list[str]) -> tuple[int, int] | None:
    """(first YAML line, closing line) indexes when the note starts with a ``---`` block."""
    if not lines or strip_eol(lines[0]).lstrip(BOM).rstrip() != "---":
        return None
    for index in range(1, len(lines)):
        if strip_eol(lines[index]).rstrip() in ("---", "..."):
            return 1, index
    return None


def parse_front_matter(lines: list[str], path: Path, warnings: list[Warning_]) -> tuple[dict[str, Any], int]:
    span = front_matter_span(lines)
    if span is None:
        return {}, 0
    start, end = span
    source = "".join(lines[start:end])
    # python-frontmatter's YAML handler reads the block (libyaml's safe loader when PyYAML was
    # built with it: the pure-Python one is most of a large build). Only the block: the
    # delimiters, BOM and line endings are found above, and the body's lines are kept as read,
    # where frontmatter.loads() would strip them. Imported here: a recall that parses no file
    # should not pay ~25 ms for it.
    import yaml
    from frontmatter.default_handlers import YAMLHandler

    try:
        loaded = YAMLHandler().load(source) if source.strip() else {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = start + mark.line + 1 if mark is not None else start + 1
        problem = getattr(exc, "problem", None) or "invalid YAML"
        warnings.append(Warning_(path, f"front matter is not valid YAML ({problem}); read as empty", line))
        return {}, end + 1
    if not isinstance(loaded, dict):
        warnings.append(Warning_(path, "front matter is not a mapping of keys; read as empty", start + 1))
        return {}, end + 1
    return {str(k): normalise_value(v) for k, v in loaded.items()}, end + 1


def normalise_value(value: Any) -> Any:
    """YAML turns 2026-03-10 into a date and yes into True: give callers strings and lists of strings."""
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if isinstance(value, list):
        return [normalise_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): normalise_value(v) for k, v in value.items()}
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return None
    return value if isinstance(value, str) else str(value)


def front_matter_tags(front_matter: dict[str, Any]) -> list[str]:
    raw = front_matter.get("tags", front_matter.get("tag"))
    if raw is None:
        return []
    items = raw if isinstance(raw, list) else re.split(r"[,\s]+", str(raw))
    return [str(item).lstrip("#") for item in items if str(item).strip("# ")]


def note_visibility(front_matter: dict[str, Any]) -> Visibility:
    value = str(front_matter.get("visibility", "")).strip().lower()
    if value in ("private", "shared"):
        return value  # type: ignore[return-value]
    return "personal"


# ---------------------------------------------------------------------------------------------
# Entries


def block_spans(lines: list[str], body_start: int, section: str = "") -> Iterable[tuple[int, int, str]]:
    """Yield (start, end exclusive, section) for every entry block in the body (from ``body_start``,
    which is in ``section``)."""
    index = body_start
    while index < len(lines):
        line = strip_eol(lines[index]).lstrip(BOM)
        if not line.strip():
            index += 1
            continue
        heading = HEADING.match(line)
        if heading:
            section = heading.group(2).strip()
            index += 1
            continue
        end = block_end(lines, index)
        yield index, end, section
        index = end


def block_end(lines: list[str], start: int) -> int:
    """Where the block starting at ``start`` ends: a bullet and its continuation, a fence, a paragraph."""
    first = strip_eol(lines[start])
    fence = FENCE.match(first)
    is_bullet = bool(BULLET.match(first))
    index = start + 1
    while index < len(lines):
        line = strip_eol(lines[index])
        if fence:
            index += 1
            if line.strip().startswith(fence.group(1)):
                return index
            continue
        if not line.strip():
            if is_bullet and continues_after_blank(lines, index):
                index += 1
                continue
            return index
        if HEADING.match(line) or (not line[:1].isspace() and BULLET.match(line)):
            return index
        if FENCE.match(line) and not line[:1].isspace():
            return index
        if FENCE.match(line) and line[:1].isspace():
            index = skip_fence(lines, index)
            continue
        index += 1
    return index


def continues_after_blank(lines: list[str], index: int) -> bool:
    """A bullet goes on past blank lines when the next non-blank line is indented."""
    while index < len(lines) and not strip_eol(lines[index]).strip():
        index += 1
    return index < len(lines) and strip_eol(lines[index])[:1] in (" ", "\t")


def skip_fence(lines: list[str], index: int) -> int:
    fence = FENCE.match(strip_eol(lines[index]).strip())
    marker = fence.group(1) if fence else "```"
    index += 1
    while index < len(lines):
        if strip_eol(lines[index]).strip().startswith(marker):
            return index + 1
        index += 1
    return index


def parse_entries(note: Note) -> Iterable[Entry]:
    return parse_blocks(note, note.lines, note.body_start)


def parse_blocks(
    note: Note, lines: list[str], start: int, *, first_line: int = 0, section: str = ""
) -> Iterator[Entry]:
    """The entries of ``note`` in ``lines`` from index ``start`` (in ``section``) on, where
    ``lines`` are the note's lines from its line index ``first_line`` on (all of them: 0)."""
    base_tags = front_matter_tags(note.front_matter)
    base_visibility = note_visibility(note.front_matter)
    for begin, end, in_section in block_spans(lines, start, section):
        raw_lines = [
            strip_eol(line).lstrip(BOM) if i == 0 else strip_eol(line)
            for i, line in enumerate(lines[begin:end])
        ]
        yield make_entry(
            note, first_line + begin + 1, first_line + end, raw_lines, in_section, base_tags, base_visibility
        )


def make_entry(
    note: Note,
    start_line: int,
    end_line: int,
    raw_lines: list[str],
    section: str,
    base_tags: list[str],
    base_visibility: Visibility,
) -> Entry:
    facts = _entry_facts(tuple(raw_lines), note.date)
    tags = tuple(dict.fromkeys([*base_tags, *facts.inline_tags]))
    fields = dict(facts.fields)
    return Entry(
        path=note.path,
        rel_path=note.rel_path,
        start_line=start_line,
        end_line=end_line,
        raw=facts.raw,
        text=facts.text,
        kind=note.kind,
        date=facts.date,
        time=facts.time,
        section=section,
        tags=tags,
        fields=fields,
        block_id=facts.block_id,
        links=facts.links,
        visibility=entry_visibility(base_visibility, tags, fields),
    )


class _EntryFacts(NamedTuple):
    """What an entry's own lines say, whatever file and section they are in."""

    raw: str
    text: str
    date: dt.date | None
    time: dt.time | None
    fields: tuple[tuple[str, str], ...]
    block_id: str | None
    inline_tags: tuple[str, ...]
    links: tuple[str, ...]


# The watcher parses a long note again on every save of it; the same lines give the same facts.
# Bounded, so a long-running watcher's memory stays flat (~10 MB at most).
@functools.lru_cache(maxsize=16_384)
def _entry_facts(raw_lines: tuple[str, ...], note_date: dt.date | None) -> _EntryFacts:
    raw = "\n".join(raw_lines).rstrip()
    searchable = INLINE_CODE.sub(" ", raw)
    first = BULLET.sub("", raw_lines[0].lstrip(), count=1)
    first = TASK_BOX.sub("", first, count=1)
    date, time, first = leading_date_time(first, note_date)
    body = "\n".join([first, *[line.strip() for line in raw_lines[1:]]])
    fields = {m.group(1).strip().lower(): m.group(2).strip() for m in FIELD.finditer(searchable)}
    block = BLOCK_ID.search(searchable)
    inline_tags = [m.group(1).rstrip("/") for m in TAG.finditer(searchable) if not m.group(1).isdigit()]
    text = BLOCK_ID.sub("", FIELD.sub("", body)).strip()
    return _EntryFacts(
        raw=raw,
        text=re.sub(r"[ \t]+\n", "\n", text),
        date=date,
        time=time,
        fields=tuple(fields.items()),
        block_id=block.group(1) if block else None,
        inline_tags=tuple(inline_tags),
        links=tuple(dict.fromkeys(m.group(1).strip() for m in WIKILINK.finditer(searchable))),
    )


def leading_date_time(text: str, note_date: dt.date | None) -> tuple[dt.date | None, dt.time | None, str]:
    """A daily entry's ``HH:MM`` or a MEMORY.md item's ``YYYY-MM-DD:`` prefix, and the rest of the line."""
    match = LEADING_DATE.match(text)
    if match:
        with contextlib.suppress(ValueError):
            date = dt.date(int(match[1]), int(match[2]), int(match[3]))
            time = dt.time(int(match[4]), int(match[5])) if match[4] else None
            return date, time, text[match.end() :]
    match = LEADING_TIME.match(text)
    if match:
        with contextlib.suppress(ValueError):
            return note_date, dt.time(int(match[1]), int(match[2])), text[match.end() :]
    return note_date, None, text


def entry_visibility(base: Visibility, tags: tuple[str, ...], fields: dict[str, str]) -> Visibility:
    """Most restrictive wins for private; an entry may opt in to shared in a personal note."""
    lowered = {t.lower() for t in tags}
    declared = fields.get("visibility", "").lower()
    if base == "private" or "private" in lowered or declared == "private":
        return "private"
    if base == "shared" or "shared" in lowered or declared == "shared":
        return "shared"
    return "personal"


# ---------------------------------------------------------------------------------------------
# Vault files


def iter_note_paths(vault: Path, warnings: list[Warning_] | None = None) -> Iterable[Path]:
    """Every Markdown file that holds memory: MEMORY.md/memory.md and memory/**/*.md (not the archive).

    Symlinks that point outside the vault are skipped with a warning; OpenClaw's bootstrap files
    (AGENTS.md, SOUL.md, ...) and anything else at the top level are left alone.
    """
    root = vault.resolve()
    yield from memory_file_paths(vault, warnings)
    memory_dir = vault / "memory"
    if not memory_dir.is_dir():
        return
    for dirpath, dirnames, filenames in os.walk(memory_dir):
        dirnames[:] = sorted(d for d in dirnames if d not in IGNORED_DIRS and not d.startswith("."))
        for name in sorted(filenames):
            if name.endswith(".md") and not name.startswith("."):
                candidate = Path(dirpath) / name
                if candidate.is_file() and inside_vault(candidate, root, warnings):
                    yield candidate


def memory_file_paths(vault: Path, warnings: list[Warning_] | None = None) -> list[Path]:
    """The vault's curated memory: MEMORY.md and OpenClaw's memory.md, each distinct file once.

    One file under two names (a case-insensitive filesystem, a symlink, a hard link) is listed
    once; a symlink out of the vault is skipped with a warning.
    """
    root = vault.resolve()
    found: list[Path] = []
    for name in MEMORY_FILE_NAMES:
        candidate = vault / name
        if (
            candidate.is_file()
            and inside_vault(candidate, root, warnings)
            and not any(os.path.samefile(candidate, seen) for seen in found)
        ):
            found.append(candidate)
    return found


def inside_vault(path: Path, root: Path, warnings: list[Warning_] | None) -> bool:
    try:
        path.resolve().relative_to(root)
    except ValueError:
        if warnings is not None:
            warnings.append(Warning_(path, "is a symlink that points outside the vault; skipped"))
        return False
    return True


def read_vault(vault: Path) -> tuple[list[Note], list[Warning_]]:
    """Every memory note of the vault, read; the warnings of all of them."""
    warnings: list[Warning_] = []
    notes: list[Note] = []
    for path in iter_note_paths(vault, warnings):
        try:
            note = read_note(path, vault)
        except OSError as exc:
            warnings.append(Warning_(path, f"could not be read ({exc.strerror}); skipped"))
            continue
        notes.append(note)
        warnings.extend(note.warnings)
    return notes, warnings
