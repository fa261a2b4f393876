"""Export and import: memory goes out as JSON lines and comes back in as daily-note entries.

Design. One exported record is one entry::

    {"id": "memory/2026-03-10.md#3f9a2c…", "kind": "daily", "date": "2026-03-10", "time": "14:05",
     "text": "Chose Postgres for billing", "tags": ["atlas", "daily"], "visibility": "personal",
     "section": "Work", "fields": {}, "block_id": null, "task": null,
     "source": "memory/2026-03-10.md", "line": 12}

``text`` is the entry's readable text without the run of ``#tags`` at its end (they are in
``tags``, sorted); ``tags`` leaves out ``shared`` and ``private``, which ``visibility`` carries.
That makes the record the same whichever file, section or front matter the entry came from, so
export → import into an empty vault → export gives the same records except ``id``, ``source`` and
``line`` (where it now lives).

Import reads JSON lines (or one JSON document holding a list, ``{"entries": [...]}``,
``{"results": [...]}`` or ``{"memories": [...]}``) and maps every record to an entry:

* vault-tools records (``text`` + ``date``): as exported. ``kind: memory`` goes back into
  MEMORY.md under its section, everything else into the daily note of its date, under its section
  (``section: ""`` means before the first heading; a missing section means at the end, like
  ``vault-tools note``).
* mem0 (``memory``, ``created_at``, ``metadata``, ``categories``): text from ``memory``, date and
  time from ``created_at`` (``updated_at`` when missing), tags from ``metadata.tags`` and
  ``categories``, ``metadata.visibility`` when it is personal/private/shared, ``importance`` kept
  as a field, ``[imported:: mem0]``.
* memory-lancedb-pro (``openclaw memory-pro export``: ``{"memories": [{text, category, scope,
  importance, timestamp}]}``): ``category`` becomes a tag (not ``other``), ``importance`` a
  field, the millisecond ``timestamp`` the date and time, ``[imported:: lancedb]``.
* chat logs (``role``, ``content``, ``timestamp``; OpenClaw session lines
  ``{"type": "message", "message": {...}}`` too): only the roles asked for (``user`` by
  default: what the person said is their memory; what an assistant said is not), one entry per
  message, ``[imported:: chat-log]``; messages over :data:`MAX_CHAT_CHARS` characters (pasted
  logs, code) are skipped and counted.

Aware timestamps are converted to the vault's timezone; naive ones are taken as written; epoch
numbers may be seconds or milliseconds. A record without a date goes to today's note, with a
warning. Everything is personal unless the record says otherwise, and an import never widens
what a chat sees: a record whose written line would come out more visible than it asked for
(``#shared`` in the text of a personal memory, a day note shared as a whole) is skipped with a
warning.

Deduplication: a record is skipped when an entry with the same key is already in the vault or
earlier in the same file. The key is the kind (MEMORY.md item or note entry), the date and time
(for note entries) and the text without its trailing tags, case-folded with whitespace collapsed.
Importing the same file twice is therefore a no-op.

Writes are line splices through :func:`vault_tools.notes.edit.apply_edit` (one per file; every other
byte of a note stays as it was), then one commit by the bot identity (:mod:`vault_tools.git.repository`)
that holds only the import's lines: each file as it is at HEAD plus the same splice, so a person's
uncommitted edits to those notes stay uncommitted. No import starts while a merge or rebase is in
progress; outside a git repository, or with a held ``index.lock``, the notes are written and the
report says why nothing was committed.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vault_tools.config import Config, bot_folders, require_vault, require_writable
from vault_tools.errors import GitError, UsageError, VaultError
from vault_tools.notes import edit as note_edit
from vault_tools.notes import model as notes
from vault_tools.privacy import rules as privacy

FORMAT_VERSION = 1
MAX_CHAT_CHARS = 2000
VISIBILITY_TAGS = frozenset({"shared", "private"})
OPENNESS = {"private": 0, "personal": 1, "shared": 2}
TAG_CHARS = re.compile(r"[^\w\-/]+", re.UNICODE)
WHITESPACE = re.compile(r"\s+")
CONTAINER_KEYS = ("entries", "results", "memories", "messages")


# ---------------------------------------------------------------------------------------------
# Export


def split_trailing_tags(text: str) -> tuple[str, list[str]]:
    """The text without the ``#tags`` that end it, and those tags (a text of only tags is kept)."""
    end = len(text.rstrip())
    found: list[str] = []
    for match in reversed(list(notes.TAG.finditer(text))):
        name = match.group(1).rstrip("/")
        if match.end() != end or name.isdigit() or not name:
            break
        found.insert(0, name)
        end = len(text[: match.start()].rstrip())
    if end == 0:
        return text.strip(), []
    return text[:end], found


def entry_task(entry: notes.Entry) -> str | None:
    """``open`` or ``done`` for a Markdown task (``- [ ]`` / ``- [x]``), else None."""
    first = entry.raw.split("\n", 1)[0].lstrip()
    marker = notes.BULLET.match(first)
    if not marker:
        return None
    box = notes.TASK_BOX.match(first[marker.end() :])
    if not box:
        return None
    return "open" if box.group(0).startswith("[ ]") else "done"


def entry_record(entry: notes.Entry) -> dict[str, Any]:
    """One entry as an export record (see the module docstring)."""
    text, _ = split_trailing_tags(entry.text)
    tags = sorted({t for t in entry.tags if t.lower() not in VISIBILITY_TAGS}, key=str.lower)
    return {
        "id": entry.id,
        "kind": entry.kind,
        "date": entry.date.isoformat() if entry.date else None,
        "time": entry.time.strftime("%H:%M") if entry.time else None,
        "text": text,
        "tags": tags,
        "visibility": entry.visibility,
        "section": entry.section,
        "fields": dict(entry.fields),
        "block_id": entry.block_id,
        "task": entry_task(entry),
        "source": entry.rel_path,
        "line": entry.start_line,
    }


@dataclass
class ExportResult:
    """The exported records, in file order (MEMORY.md first, then the notes by name)."""

    vault: str
    entries: list[dict[str, Any]]
    since: dt.date | None = None
    until: dt.date | None = None
    chat: str | None = None
    duplicates: int = 0
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": "vault-tools/export",
            "version": FORMAT_VERSION,
            "vault": self.vault,
            "filters": {
                "since": self.since.isoformat() if self.since else None,
                "until": self.until.isoformat() if self.until else None,
                "chat": self.chat,
            },
            "count": len(self.entries),
            "duplicates": self.duplicates,
            "entries": self.entries,
            "warnings": self.warnings,
        }

    def jsonl(self) -> Iterator[str]:
        """One JSON object per line, as ``vault-tools import`` reads them."""
        for record in self.entries:
            yield json.dumps(record, ensure_ascii=False)


def export_entries(
    config: Config,
    *,
    since: dt.date | None = None,
    until: dt.date | None = None,
    chat: str | None = None,
) -> ExportResult:
    """Every entry of the vault as a record, optionally only those dated in [since, until].

    ``chat`` None exports everything, ``#private`` included: the export is the owner's copy of
    their own files and is written locally. With a chat context, only what that chat may see is
    exported (:func:`vault_tools.privacy.rules.entry_visible`); a configured group or unknown chat
    (``recall.chat``, ``$VAULT_TOOLS_CHAT``) applies when ``chat`` is None, so an agent running in
    a group chat cannot dump personal memory through export. A MEMORY.md item that is also in
    ``memory.md`` (both files present, as in some OpenClaw workspaces) is exported once.
    """
    require_vault(config.vault)
    if chat is None and privacy.parse_chat(config.recall.chat) != "direct":
        chat = config.recall.chat
    allowed = privacy.parse_chat(chat) if chat is not None else None
    loaded, warnings = notes.read_vault(config.vault)
    result = ExportResult(str(config.vault), [], since, until, allowed, 0, [str(w) for w in warnings])
    seen_memory: set[str] = set()
    for note in loaded:
        for entry in note.entries:
            if not in_range(entry.date, since, until):
                continue
            if allowed is not None and not privacy.entry_visible(entry, allowed):
                continue
            if entry.kind == "memory":
                if entry.content_hash in seen_memory:
                    result.duplicates += 1
                    continue
                seen_memory.add(entry.content_hash)
            result.entries.append(entry_record(entry))
    return result


def write_export(result: ExportResult, path: Path, *, as_json: bool) -> None:
    """Write the export to ``path`` atomically: one JSON document, or JSON lines."""
    if as_json:
        text = json.dumps(result.to_dict(), ensure_ascii=False, indent=2) + "\n"
    else:
        text = "".join(line + "\n" for line in result.jsonl())
    note_edit.atomic_write(path.expanduser().absolute(), text.encode("utf-8"))


def in_range(day: dt.date | None, since: dt.date | None, until: dt.date | None) -> bool:
    if since is None and until is None:
        return True
    if day is None:
        return False
    return (since is None or day >= since) and (until is None or day <= until)


# ---------------------------------------------------------------------------------------------
# Import: reading records


@dataclass
class Record:
    """One entry to write, whatever format it came from."""

    kind: str  # "memory" or "daily"
    date: dt.date | None
    time: dt.time | None
    text: str
    tags: list[str]
    visibility: str
    section: str | None  # None: at the end of the note
    fields: dict[str, str]
    block_id: str | None
    task: str | None
    origin: str  # where in the input, for messages: "FILE:LINE"
    format: str


class Skip(Exception):
    """A record that is fine to leave out (counted by reason, not an error)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class ReadContext:
    config: Config
    roles: frozenset[str]
    today: dt.date


def read_input(source: str) -> tuple[str, str]:
    """The text to import and its display name; ``-`` reads standard input."""
    if source == "-":
        return sys.stdin.read(), "<stdin>"
    path = Path(source).expanduser()
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise UsageError(f"{source}: no such file") from None
    except OSError as exc:
        raise VaultError(f"{source}: could not be read ({exc.strerror})") from None
    try:
        return data.decode("utf-8-sig"), str(path)
    except UnicodeDecodeError:
        raise UsageError(f"{source}: is not UTF-8 text; convert it to UTF-8 JSON lines") from None


def raw_records(text: str, name: str) -> Iterator[tuple[str, Any]]:
    """(origin, value) for every record: a whole JSON document, or JSON lines."""
    stripped = text.strip()
    if not stripped:
        return
    if stripped[0] in "[{":
        try:
            document = json.loads(stripped)
        except ValueError:
            document = None  # JSON lines: each line is a document of its own
        else:
            items = document_items(document)
            if items is not None:
                for index, item in enumerate(items, 1):
                    yield f"{name}: item {index}", item
                return
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            yield f"{name}:{number}", json.loads(line)
        except ValueError as exc:
            raise UsageError(
                f"{name}:{number}: not JSON ({exc}); import reads JSON lines or one JSON document. "
                "Nothing was imported."
            ) from None


def document_items(document: Any) -> list[Any] | None:
    """The records of a whole-file JSON document, or None when it is a single JSON line."""
    if isinstance(document, list):
        return document
    if isinstance(document, dict):
        for key in CONTAINER_KEYS:
            if isinstance(document.get(key), list):
                return list(document[key])
    return None


def to_record(value: Any, origin: str, ctx: ReadContext) -> Record:
    """Map one input record to a :class:`Record`; raise :class:`Skip` or :class:`UsageError`."""
    if not isinstance(value, dict):
        raise Skip("not an object")
    message = value.get("message")
    if isinstance(message, dict) and "role" in message:
        merged = {**message, **{k: v for k, v in value.items() if k != "message"}}
        return chat_record(merged, origin, ctx)
    if "role" in value and "content" in value:
        return chat_record(value, origin, ctx)
    if isinstance(value.get("memory"), str):
        return mem0_record(value, origin, ctx)
    lancedb_keys = ("timestamp", "category", "scope", "createdAt")
    if isinstance(value.get("text"), str) and "date" not in value and any(k in value for k in lancedb_keys):
        return lancedb_record(value, origin, ctx)
    if isinstance(value.get("text"), str):
        return vault_record(value, origin, ctx)
    raise Skip("not a memory, entry or chat message")


def vault_record(value: dict[str, Any], origin: str, ctx: ReadContext) -> Record:
    if value.get("kind") == "summary":
        raise Skip("a summary: derived from other entries (the heartbeat writes this vault's own)")
    kind = "memory" if value.get("kind") == "memory" else "daily"
    day = parse_day(value.get("date"), origin)
    clock = parse_clock(value.get("time"), origin)
    visibility = str(value.get("visibility") or "personal").lower()
    if visibility not in OPENNESS:
        raise UsageError(f"{origin}: visibility {visibility!r} is not personal, private or shared")
    fields = value.get("fields") or {}
    if not isinstance(fields, dict):
        raise UsageError(f"{origin}: fields must be an object of strings")
    section = value.get("section")
    task = value.get("task")
    block = value.get("block_id")
    return Record(
        kind=kind,
        date=day,
        time=clock,
        text=clean_text(value["text"]),
        tags=clean_tags(value.get("tags")),
        visibility=visibility,
        section=section if isinstance(section, str) else None,
        fields={str(k).lower(): str(v) for k, v in fields.items() if v is not None},
        block_id=block
        if isinstance(block, str) and re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9-]*", block)
        else None,
        task=task if task in ("open", "done") else None,
        origin=origin,
        format="vault-tools",
    )


def mem0_record(value: dict[str, Any], origin: str, ctx: ReadContext) -> Record:
    metadata = value.get("metadata") if isinstance(value.get("metadata"), dict) else {}
    assert isinstance(metadata, dict)
    stamp = value.get("created_at") or value.get("updated_at") or metadata.get("created_at")
    when = parse_timestamp(stamp, ctx.config, origin)
    visibility = str(metadata.get("visibility", "personal")).lower()
    fields = {"imported": "mem0"}
    importance = number(metadata.get("importance"))
    if importance is not None:
        fields["importance"] = f"{importance:g}"
    tags = clean_tags(metadata.get("tags")) + clean_tags(
        value.get("categories") or metadata.get("categories")
    )
    return foreign_record(value["memory"], when, tags, visibility, fields, origin, "mem0")


def lancedb_record(value: dict[str, Any], origin: str, ctx: ReadContext) -> Record:
    when = parse_timestamp(value.get("timestamp") or value.get("createdAt"), ctx.config, origin)
    category = value.get("category")
    tags = clean_tags([category]) if isinstance(category, str) and category != "other" else []
    fields = {"imported": "lancedb"}
    importance = number(value.get("importance"))
    if importance is not None:
        fields["importance"] = f"{importance:g}"
    return foreign_record(value["text"], when, tags, "personal", fields, origin, "lancedb")


def chat_record(value: dict[str, Any], origin: str, ctx: ReadContext) -> Record:
    role = str(value.get("role", "")).lower()
    if role not in ctx.roles:
        raise Skip(f"{role or 'no'}-role message")
    text = content_text(value.get("content"))
    if len(text) > MAX_CHAT_CHARS:
        raise Skip(f"message over {MAX_CHAT_CHARS} characters")
    stamp = value.get("timestamp") or value.get("created_at") or value.get("time")
    when = parse_timestamp(stamp, ctx.config, origin)
    fields = {"imported": "chat-log", "role": role}
    return foreign_record(text, when, [], "personal", fields, origin, "chat-log")


def foreign_record(
    text: str,
    when: dt.datetime | None,
    tags: list[str],
    visibility: str,
    fields: dict[str, str],
    origin: str,
    fmt: str,
) -> Record:
    return Record(
        kind="daily",
        date=when.date() if when else None,
        time=when.time().replace(second=0, microsecond=0) if when else None,
        text=clean_text(text),
        tags=list(dict.fromkeys(tags)),
        visibility=visibility if visibility in OPENNESS else "personal",
        section=None,
        fields=fields,
        block_id=None,
        task=None,
        origin=origin,
        format=fmt,
    )


def content_text(content: Any) -> str:
    """A chat message's text: a string, or the text parts of a list of content blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            str(part.get("text", "")) if isinstance(part, dict) else str(part)
            for part in content
            if isinstance(part, str) or (isinstance(part, dict) and part.get("type", "text") == "text")
        ]
        return "\n".join(p for p in parts if p.strip())
    return ""


def clean_text(text: Any) -> str:
    value = str(text).replace("\r\n", "\n").replace("\r", "\n")
    lines = [line.rstrip() for line in value.strip().split("\n")]
    return "\n".join(lines)


def clean_tags(raw: Any) -> list[str]:
    """Tags as ``#tag`` names: spaces become ``-``, characters a tag cannot hold are dropped."""
    if raw is None:
        return []
    items = raw if isinstance(raw, list) else re.split(r"[,\s]+", str(raw))
    out: list[str] = []
    for item in items:
        name = TAG_CHARS.sub("", WHITESPACE.sub("-", str(item).strip().lstrip("#"))).strip("-/")
        if name and not name.isdigit() and name not in out:
            out.append(name)
    return out


def number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        result = float(value)
    except ValueError:
        return None
    return result if math.isfinite(result) else None


def parse_day(value: Any, origin: str) -> dt.date | None:
    if value in (None, ""):
        return None
    try:
        return dt.date.fromisoformat(str(value)[:10])
    except ValueError:
        raise UsageError(f"{origin}: date {value!r} is not YYYY-MM-DD") from None


def parse_clock(value: Any, origin: str) -> dt.time | None:
    if value in (None, ""):
        return None
    try:
        parsed = dt.time.fromisoformat(str(value))
    except ValueError:
        raise UsageError(f"{origin}: time {value!r} is not HH:MM") from None
    return parsed.replace(second=0, microsecond=0, tzinfo=None)


def parse_timestamp(value: Any, config: Config, origin: str) -> dt.datetime | None:
    """ISO 8601 text or epoch seconds/milliseconds, in the vault's timezone when it has one."""
    if value in (None, ""):
        return None
    tz = config.tzinfo
    seconds = number(value) if not isinstance(value, str) or re.fullmatch(r"\d+(\.\d+)?", value) else None
    if seconds is not None:
        if seconds > 1e11:
            seconds /= 1000
        try:
            stamp = dt.datetime.fromtimestamp(seconds, dt.timezone.utc)
        except (OverflowError, OSError, ValueError):
            raise UsageError(f"{origin}: timestamp {value!r} is out of range") from None
        return stamp.astimezone(tz) if tz else stamp.astimezone()
    text = str(value).strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        stamp = dt.datetime.fromisoformat(text)
    except ValueError:
        raise UsageError(f"{origin}: timestamp {value!r} is not ISO 8601 or epoch seconds") from None
    if stamp.tzinfo is None:
        return stamp
    return stamp.astimezone(tz) if tz else stamp.astimezone()


# ---------------------------------------------------------------------------------------------
# Import: writing


def dedupe_key(kind: str, day: dt.date | None, clock: dt.time | None, text: str) -> tuple[str, ...]:
    bare, _ = split_trailing_tags(text)
    norm = WHITESPACE.sub(" ", bare).strip().casefold()
    if kind == "memory":
        return ("memory", norm)
    return ("note", day.isoformat() if day else "", clock.strftime("%H:%M") if clock else "", norm)


def entry_key(entry: notes.Entry) -> tuple[str, ...]:
    return dedupe_key("memory" if entry.kind == "memory" else "note", entry.date, entry.time, entry.text)


def record_key(record: Record) -> tuple[str, ...]:
    return dedupe_key(record.kind, record.date, record.time, record.text)


def render_lines(record: Record, inherited: Iterable[str]) -> list[str]:
    """The Markdown lines of one entry: a bullet, its tags, fields and block id, then continuations."""
    first, *rest = record.text.split("\n")
    present = {
        m.group(1).rstrip("/").lower() for m in notes.TAG.finditer(notes.INLINE_CODE.sub(" ", record.text))
    }
    present |= {t.lower() for t in inherited}
    wanted = [*record.tags]
    if record.visibility in VISIBILITY_TAGS:
        wanted.append(record.visibility)
    suffix = "".join(f" #{t}" for t in dict.fromkeys(wanted) if t.lower() not in present)
    suffix += "".join(f" [{k}:: {v}]" for k, v in record.fields.items())
    if record.block_id:
        suffix += f" ^{record.block_id}"
    box = {"open": "[ ] ", "done": "[x] "}.get(record.task or "", "")
    if record.kind == "memory":
        stamp = record.date.isoformat() if record.date else ""
        if stamp and record.time:
            stamp += f" {record.time:%H:%M}"
        prefix = f"{stamp}: " if stamp else ""
    else:
        prefix = f"{record.time:%H:%M} " if record.time else ""
    lines = [f"- {box}{prefix}{first}".rstrip(), *(f"  {line}" if line else "" for line in rest)]
    lines[-1] += suffix  # after the text, where export finds trailing tags again
    return lines


def resulting_visibility(lines: list[str], base_tags: list[str], base_visibility: notes.Visibility) -> str:
    """The visibility the written lines will be read back with in the target note."""
    text = notes.INLINE_CODE.sub(" ", "\n".join(lines))
    tags = (*base_tags, *(m.group(1).rstrip("/") for m in notes.TAG.finditer(text)))
    fields = {m.group(1).strip().lower(): m.group(2).strip() for m in notes.FIELD.finditer(text)}
    return notes.entry_visibility(base_visibility, tuple(tags), fields)


def is_heading(line: str) -> bool:
    return bool(notes.HEADING.match(notes.strip_eol(line).lstrip(notes.BOM)))


def is_blank(line: str) -> bool:
    return not notes.strip_eol(line).strip()


def headings(lines: list[str], start: int) -> Iterator[int]:
    """Indexes of heading lines from ``start`` on, skipping fenced code blocks."""
    fence: str | None = None
    for index in range(start, len(lines)):
        line = notes.strip_eol(lines[index])
        match = notes.FENCE.match(line)
        if fence is not None:
            if line.strip().startswith(fence):
                fence = None
            continue
        if match:
            fence = match.group(1)
            continue
        if is_heading(line):
            yield index


def body_start(lines: list[str]) -> int:
    span = notes.front_matter_span(lines)
    return span[1] + 1 if span else 0


def insert_into_section(lines: list[str], section: str | None, new: list[str], level: int) -> list[str]:
    """Put ``new`` lines at the end of ``section``'s own entries (before its next heading).

    ``None`` appends at the end of the file; ``""`` means before the first heading; a section
    that is not there is added at the end as a heading of ``level``.
    """
    nl = note_edit.detect_newline(lines)
    added = [line + nl for line in new]
    if section is None:
        return [*note_edit.ensure_final_newline(lines), *added]
    start = body_start(lines)
    found = list(headings(lines, start))
    if section == "":
        return insert_region(lines, start, found[0] if found else len(lines), added, nl)
    names = [notes.HEADING.match(notes.strip_eol(lines[i]).lstrip(notes.BOM)) for i in found]
    titles = [m.group(2).strip() if m else "" for m in names]
    matches = [i for i, t in zip(found, titles, strict=True) if t == section] or [
        i for i, t in zip(found, titles, strict=True) if t.casefold() == section.casefold()
    ]
    if not matches:
        lines = note_edit.ensure_final_newline(lines)
        gap = [nl] if lines and not is_blank(lines[-1]) else []
        return [*lines, *gap, f"{'#' * level} {section}{nl}", nl, *added]
    heading = matches[0]
    following = [i for i in found if i > heading]
    return insert_region(lines, heading + 1, following[0] if following else len(lines), added, nl)


def insert_region(lines: list[str], start: int, stop: int, added: list[str], nl: str) -> list[str]:
    """Insert after the last non-blank line of lines[start:stop], keeping blank lines around headings."""
    end = stop
    while end > start and is_blank(lines[end - 1]):
        end -= 1
    before = lines[:end]
    if before and not before[-1].endswith("\n"):
        before = [*before[:-1], before[-1] + nl]
    lead = [nl] if end == start and start > 0 and is_heading(lines[start - 1]) else []
    after = lines[end:]
    trail = [nl] if after and is_heading(after[0]) else []
    return [*before, *lead, *added, *trail, *after]


def sections_splice(groups: list[tuple[str | None, int, list[str]]], initial: str) -> note_edit.Splice:
    def splice(lines: list[str]) -> list[str]:
        if not lines and initial:
            lines = notes.split_lines(initial)
        for section, level, new in groups:
            lines = insert_into_section(lines, section, new, level)
        return lines

    return splice


@dataclass
class ImportReport:
    file: str
    dry_run: bool = False
    read: int = 0
    imported: int = 0
    duplicates: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    formats: dict[str, int] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)
    commit: str | None = None
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "dry_run": self.dry_run,
            "read": self.read,
            "imported": self.imported,
            "duplicates": self.duplicates,
            "skipped": self.skipped,
            "formats": self.formats,
            "files": self.files,
            "commit": self.commit,
            "warnings": self.warnings,
        }

    def summary(self) -> str:
        verb = "Would import" if self.dry_run else "Imported"
        notes_word = "note" if len(self.files) == 1 else "notes"
        parts = [f"{verb} {self.imported} of {self.read} records into {len(self.files)} {notes_word}"]
        if self.duplicates:
            parts.append(f"{self.duplicates} already there")
        for reason, count in sorted(self.skipped.items()):
            parts.append(f"{count} skipped: {reason}")
        line = "; ".join(parts)
        if self.commit:
            line += f"\ncommitted {self.commit[:10]}"
        return line


@dataclass
class Target:
    """One file the import writes, and what to put where."""

    path: Path
    initial: str
    base_tags: list[str]
    base_visibility: notes.Visibility
    groups: list[tuple[str | None, int, list[str]]] = field(default_factory=list)


def import_file(
    config: Config,
    source: str,
    *,
    roles: Sequence[str] = ("user",),
    dry_run: bool = False,
    commit: bool = True,
) -> ImportReport:
    """Import the records of ``source`` (a path or ``-``) into the vault; see the module docstring."""
    require_vault(config.vault)
    text, name = read_input(source)
    report = ImportReport(file=name, dry_run=dry_run)
    ctx = ReadContext(config, frozenset(r.strip().lower() for r in roles if r.strip()), config.today())
    records = read_records(text, name, ctx, report)
    loaded, _warnings = notes.read_vault(config.vault)
    seen = {entry_key(e) for n in loaded for e in n.entries}
    by_path = {n.path: n for n in loaded}
    targets: dict[Path, Target] = {}
    refused: set[Path] = set()
    undated = 0
    for record in records:
        if record.kind == "daily" and record.date is None:
            record.date = ctx.today
            undated += 1
        key = record_key(record)
        if key in seen:
            report.duplicates += 1
            continue
        target = target_for(config, record, targets, by_path)
        if outside_vault(config, target.path):
            if target.path not in refused:
                refused.add(target.path)
                report.warnings.append(
                    f"{rel(config, target.path)}: skipped; it leads out of the vault (a symlink to "
                    f"{target.path.resolve()}) and import never writes through it"
                )
            count(report.skipped, "would write out of the vault")
            continue
        lines = render_lines(record, target.base_tags)
        if (
            OPENNESS[resulting_visibility(lines, target.base_tags, target.base_visibility)]
            > OPENNESS[record.visibility]
        ):
            report.warnings.append(
                f"{record.origin}: skipped; written into {rel(config, target.path)} it would be more "
                f"visible than {record.visibility} (a #shared tag in its text, or a note shared as a whole)"
            )
            count(report.skipped, "would widen its visibility")
            continue
        seen.add(key)
        add_to_group(target, record, lines)
        report.imported += 1
    if undated:
        report.warnings.append(f"{undated} records had no date; they go into today's note ({ctx.today})")
    written = [t for t in targets.values() if t.groups]
    report.files = sorted(rel(config, t.path) for t in written)
    if dry_run or not written:
        return report
    require_writable("`vault-tools import`", *bot_folders(config.vault))
    if commit:
        check_repository(config)
    for target in written:
        note_edit.apply_edit(target.path, sections_splice(target.groups, target.initial), create=True)
    if commit:
        report.commit, warning = commit_import(config, written, report)
        if warning:
            report.warnings.append(warning)
    return report


def read_records(text: str, name: str, ctx: ReadContext, report: ImportReport) -> list[Record]:
    records: list[Record] = []
    for origin, value in raw_records(text, name):
        report.read += 1
        try:
            record = to_record(value, origin, ctx)
        except Skip as skip:
            count(report.skipped, skip.reason)
            continue
        if not record.text.strip():
            count(report.skipped, "empty text")
            continue
        count(report.formats, record.format)
        records.append(record)
    if report.read and not records and not report.skipped.keys() - {"not a memory, entry or chat message"}:
        raise UsageError(
            f"{name}: no entries found; import reads vault-tools export lines (text, date), mem0 "
            "memories (memory, created_at), memory-lancedb-pro exports (text, timestamp) or chat "
            "logs (role, content, timestamp)"
        )
    foreign = [r for r in records if r.format in ("mem0", "lancedb")]
    if foreign:  # these stores list memories in no useful order: write each day chronologically
        order = sorted(foreign, key=lambda r: (r.date or dt.date.max, r.time or dt.time.min))
        iterator = iter(order)
        records = [next(iterator) if r.format in ("mem0", "lancedb") else r for r in records]
    return records


def count(counter: dict[str, int], key: str) -> None:
    counter[key] = counter.get(key, 0) + 1


def rel(config: Config, path: Path) -> str:
    return notes.relative_posix(path, config.vault)


def outside_vault(config: Config, path: Path) -> bool:
    """``path`` (or a folder on the way to it) is a symlink that resolves out of the vault."""
    vault = config.vault.resolve()
    return not path.resolve().is_relative_to(vault)


def target_for(
    config: Config, record: Record, targets: dict[Path, Target], by_path: dict[Path, notes.Note]
) -> Target:
    if record.kind == "memory":
        path = next(
            (config.vault / n for n in notes.MEMORY_FILE_NAMES if (config.vault / n).is_file()),
            config.vault / "MEMORY.md",
        )
        from vault_tools.agents.vault import MEMORY_TEMPLATE

        initial = MEMORY_TEMPLATE
    else:
        assert record.date is not None
        path = config.vault / "memory" / f"{record.date.isoformat()}.md"
        from vault_tools.agents.vault import daily_note_header

        initial = daily_note_header(record.date)
    if path in targets:
        return targets[path]
    note = by_path.get(path)
    if note is None and not path.exists():
        lines = notes.split_lines(initial)
        warnings: list[notes.Warning_] = []
        front, _ = notes.parse_front_matter(lines, path, warnings)
    else:
        front = note.front_matter if note is not None else notes.read_note(path, config.vault).front_matter
    target = Target(path, initial, notes.front_matter_tags(front), notes.note_visibility(front))
    targets[path] = target
    return target


def add_to_group(target: Target, record: Record, lines: list[str]) -> None:
    section = record.section
    level = 1 if record.date is not None and section == record.date.isoformat() else 2
    if target.groups and target.groups[-1][0] == section:
        target.groups[-1][2].extend(lines)
    else:
        target.groups.append((section, level, list(lines)))


def commit_import(
    config: Config, targets: list[Target], report: ImportReport
) -> tuple[str | None, str | None]:
    """One bot commit of exactly the import's lines in exactly the files written.

    What is committed is each file as it is at HEAD plus the import's splice (a new file: its
    header plus the entries), so a person's uncommitted edits to the same notes stay theirs and
    uncommitted (:mod:`vault_tools.git.repository`). Returns (sha, None), or (None, why nothing was
    committed): no repository, a held index.lock, a detached HEAD.
    """
    from vault_tools.git import repository as gitops

    try:
        repo = gitops.VaultRepo.open(config.vault)
    except VaultError as exc:
        return None, f"not committed: {exc}"
    if repo is None:
        return None, "not committed: the vault is not in a git repository (vault-tools init makes one)"
    with repo:
        blocker = repo.in_progress() or repo.commit_blocker()
        if blocker:
            return None, f"not committed: {blocker}"
        splices = {rel(config, t.path): sections_splice(t.groups, t.initial) for t in targets}

        def apply(path: str, base: bytes | None) -> bytes:
            text = base.decode("utf-8", errors="replace") if base is not None else ""
            return "".join(splices[path](notes.split_lines(text))).encode("utf-8")

        contents: dict[str, bytes | None] = {path: apply(path, repo.read_head(path)) for path in splices}
        formats = ", ".join(f"{fmt}: {n}" for fmt, n in sorted(report.formats.items()))
        message = (
            f"import: {report.imported} entr{'y' if report.imported == 1 else 'ies'} from {Path(report.file).name}\n\n"
            f"Read {report.read} records ({formats}); {report.duplicates} already in the vault.\n"
            f"Files: {', '.join(sorted(splices))}\n"
        )
        try:
            sha = repo.commit(contents, message, restage=apply)
        except VaultError as exc:
            return None, f"not committed: {exc}"
    return sha, None


def check_repository(config: Config) -> None:
    """Refuse to write while a merge, rebase, ... is in progress: the notes may hold conflict markers."""
    from vault_tools.git import repository as gitops

    try:
        repo = gitops.VaultRepo.open(config.vault)
    except VaultError:
        return
    if repo is None:
        return
    with repo:
        problem = repo.in_progress()
    if problem:
        raise GitError(problem.replace("the heartbeat skipped this run", "nothing was imported"))
