"""Upcoming: the items of the daily notes and MEMORY.md whose date is still ahead, soonest first.

Design. A line names a day in one of three ways, all read by :func:`dates_of`:

* an inline field a person or a plugin set: ``[due:: 2026-03-14]`` (also ``date``, ``deadline``,
  ``scheduled``, ``when``, ``start``) or the Obsidian Tasks plugin's ``📅 2026-03-14``;
* a date written out: ``2026-03-14``, ``March 14``, ``14 March 2027``, ``3月14日``;
* words resolved against the note's own date (:func:`vault_tools.timewords.dates_named`):
  "tomorrow" written on 2026-03-09 is 2026-03-10, "next Wednesday", "on Friday", "明天", "下周三".

A weekday alone names a day of every week, not a date: "Friday deploys are banned" is a rule,
not a reminder. It becomes a date only with a word that picks one week ("next/this/coming
Friday", "下周三", "本周五"), a preposition of an appointment or deadline ("on/by/before Friday",
"周五前"), a time right after it ("Friday at 3pm", "周五下午三点"), or in an open task (``- [ ]``).
A done task (``- [x]``), dates inside links and other fields (``[[2026-03-10]]``,
``[source:: …]``, ``[expires:: …]``), and ranges ("next week", "下个月") are not reminders.

Daily notes dated from :data:`LOOKBACK_DAYS` days before ``as_of`` through ``as_of`` are read,
and MEMORY.md whole. Every item passes :func:`vault_tools.privacy.entry_visible` for the chat: a group
chat sees only shared ones, and ``#private`` ones are never listed.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vault_tools import notes
from vault_tools.errors import UsageError

if TYPE_CHECKING:
    from vault_tools.config import Config

__all__ = ["LOOKBACK_DAYS", "UpcomingItem", "UpcomingResult", "dates_of", "find_upcoming", "next_date"]

LOOKBACK_DAYS = 92
DATE_FIELDS = ("due", "date", "deadline", "scheduled", "when", "start")
TASKS_EMOJI = re.compile(r"[📅⏳🛫]\ufe0f?\s*(\d{4}-\d{2}-\d{2})")
DONE_TASK = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+\[[xX]\]")
LINK_OR_CODE = re.compile(r"\[\[[^\]]*\]\]|`[^`]*`|https?://\S+")
WEEKDAY_NAMES = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


@dataclass(frozen=True)
class UpcomingItem:
    """One dated item still ahead."""

    date: str  # ISO day it names
    days_ahead: int
    phrase: str  # the words (or field) that name the day
    path: str
    line: int
    text: str
    source: str  # daily | memory
    written: str | None  # the note's (or the MEMORY item's) date

    @property
    def when(self) -> str:
        day = dt.date.fromisoformat(self.date)
        relative = {0: "today", 1: "tomorrow"}.get(self.days_ahead, f"in {self.days_ahead} days")
        return f"{self.date} {WEEKDAY_NAMES[day.weekday()]}, {relative}"


@dataclass
class UpcomingResult:
    as_of: str
    days: int
    chat: str
    items: list[UpcomingItem] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "as_of": self.as_of,
            "days": self.days,
            "chat": self.chat,
            "items": [asdict(item) for item in self.items],
            "warnings": list(self.warnings),
        }

    def render(self) -> str:
        until = dt.date.fromisoformat(self.as_of) + dt.timedelta(days=self.days)
        if not self.items:
            return f"Nothing dated between {self.as_of} and {until.isoformat()}."
        lines: list[str] = []
        for item in self.items:
            lines.append(f"{item.when} ({item.phrase})  {item.path}:{item.line}")
            lines.append(f"  {item.text}")
        return "\n".join(lines)


def dates_of(entry: notes.Entry) -> list[tuple[dt.date, str]]:
    """Every (day, phrase) ``entry`` names (see the module docstring), in order, without repeats."""
    from vault_tools.timewords import dates_named

    first_line = entry.raw.split("\n", 1)[0]
    if DONE_TASK.match(first_line):
        return []
    found: list[tuple[dt.date, str]] = []
    for name in DATE_FIELDS:
        value = entry.fields.get(name, "").strip()
        try:
            found.append((dt.date.fromisoformat(value[:10]), f"[{name}:: {value[:10]}]"))
        except ValueError:
            continue
    for match in TASKS_EMOJI.finditer(entry.raw):
        try:
            found.append((dt.date.fromisoformat(match[1]), match[0]))
        except ValueError:
            continue
    text = LINK_OR_CODE.sub(" ", TASKS_EMOJI.sub(" ", entry.text))
    lines = text.split("\n")
    if lines and entry.raw.lstrip().startswith(("- [ ]", "* [ ]", "+ [ ]")):
        lines[0] = "- [ ] " + lines[0]  # the open-task rule of timewords reads the marker
    for line in lines:
        found += [(m.day, m.phrase) for m in dates_named(line, entry.date)]
    seen: set[dt.date] = set()
    unique = []
    for day, phrase in found:
        if day not in seen:
            seen.add(day)
            unique.append((day, phrase))
    return unique


def next_date(entry: notes.Entry, as_of: dt.date) -> dt.date | None:
    """The soonest day on or after ``as_of`` that ``entry`` names, or None (nothing ahead)."""
    ahead = [day for day, _phrase in dates_of(entry) if day >= as_of]
    return min(ahead) if ahead else None


def _one_line(text: str, limit: int = 300) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _paths(vault: Path, as_of: dt.date, warnings: list[notes.Warning_]) -> list[Path]:
    first = as_of - dt.timedelta(days=LOOKBACK_DAYS)
    chosen: list[Path] = []
    for path in notes.iter_note_paths(vault, warnings):
        kind, day = notes.classify(notes.relative_posix(path, vault))
        if kind == "memory" or (kind == "daily" and day is not None and first <= day <= as_of):
            chosen.append(path)
    return chosen


def find_upcoming(
    config: Config, *, days: int = 14, as_of: dt.date | None = None, chat: str | None = None
) -> UpcomingResult:
    """The items dated from ``as_of`` (today) through ``days`` days after it, soonest first."""
    from vault_tools.privacy import entry_visible, parse_chat

    if days < 0:
        raise UsageError(f"--days must be 0 or more, got {days}")
    chat_ = parse_chat(chat if chat is not None else config.recall.chat)
    today = as_of or config.today()
    horizon = today + dt.timedelta(days=days)
    result = UpcomingResult(today.isoformat(), days, chat_)
    file_warnings: list[notes.Warning_] = []
    found: list[tuple[dt.date, str, int, UpcomingItem]] = []
    for path in _paths(config.vault, today, file_warnings):
        try:
            note = notes.read_note(path, config.vault)
        except OSError as exc:
            result.warnings.append(f"{path}: could not be read ({exc.strerror}); left out")
            continue
        result.warnings += [str(w) for w in note.warnings]
        for entry in note.entries:
            if not entry_visible(entry, chat_):
                continue
            for day, phrase in dates_of(entry):
                if today <= day <= horizon and (entry.date is None or day >= entry.date):
                    item = UpcomingItem(
                        date=day.isoformat(),
                        days_ahead=(day - today).days,
                        phrase=phrase,
                        path=entry.rel_path,
                        line=entry.start_line,
                        text=_one_line(entry.text),
                        source=entry.kind,
                        written=entry.date.isoformat() if entry.date else None,
                    )
                    found.append((day, entry.rel_path, entry.start_line, item))
    result.warnings += [str(w) for w in file_warnings]
    found.sort(key=lambda t: (t[0], t[1] == notes.MEMORY_FILE_NAMES[0], t[1], t[2]))
    result.items = [item for *_key, item in found]
    return result
