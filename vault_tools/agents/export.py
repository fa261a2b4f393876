"""Export: memory goes out as JSON lines, one record per entry.

One exported record is one entry::

    {"id": "memory/2026-03-10.md#3f9a2c…", "kind": "daily", "date": "2026-03-10", "time": "14:05",
     "text": "Chose Postgres for billing", "tags": ["atlas", "daily"], "visibility": "personal",
     "section": "Work", "fields": {}, "block_id": null, "task": null,
     "source": "memory/2026-03-10.md", "line": 12}

``text`` is the entry's readable text without the run of ``#tags`` at its end (they are in
``tags``, sorted); ``tags`` leaves out ``shared`` and ``private``, which ``visibility`` carries.
That makes the record the same whichever file, section or front matter the entry came from, so
export → import (:mod:`vault_tools.agents.importer`) into an empty vault → export gives the same
records except ``id``, ``source`` and ``line`` (where it now lives).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vault_tools.config import Config, require_vault
from vault_tools.notes import edit as note_edit
from vault_tools.notes import model as notes
from vault_tools.privacy import rules as privacy

FORMAT_VERSION = 1
VISIBILITY_TAGS = frozenset({"shared", "private"})


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
        "task": entry.task,
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


def count(counter: dict[str, int], key: str) -> None:
    counter[key] = counter.get(key, 0) + 1
