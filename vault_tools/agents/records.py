"""Records to import: JSON lines (or one JSON document) of vault-tools, mem0, memory-lancedb-pro and
chat logs, each read into a :class:`Record` (text, date, time, tags, visibility, fields).

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
warning.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vault_tools.config import Config
from vault_tools.errors import UsageError, VaultError

MAX_CHAT_CHARS = 2000
OPENNESS = {"private": 0, "personal": 1, "shared": 2}
TAG_CHARS = re.compile(r"[^\w\-/]+", re.UNICODE)
WHITESPACE = re.compile(r"\s+")
CONTAINER_KEYS = ("entries", "results", "memories", "messages")


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
