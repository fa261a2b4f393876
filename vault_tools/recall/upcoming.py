"""Upcoming: the items of the daily notes and MEMORY.md whose date is still ahead, soonest first.

Design. A line names a day in one of three ways, all read by :func:`dates_of`:

* an inline field a person or a plugin set: ``[due:: 2026-03-14]`` (also ``date``, ``deadline``,
  ``scheduled``, ``when``, ``start``) or the Obsidian Tasks plugin's ``📅 2026-03-14``;
* a date written out: ``2026-03-14``, ``March 14``, ``14 March 2027``, ``3月14日``;
* words resolved against the note's own date (:func:`vault_tools.recall.named_dates.dates_named`):
  "tomorrow" written on 2026-03-09 is 2026-03-10, "next Wednesday", "on Friday", "明天", "下周三".

A weekday alone names a day of every week, not a date: "Friday deploys are banned" is a rule,
not a reminder. It becomes a date only with a word that picks one week ("next/this/coming
Friday", "下周三", "本周五"), a preposition of an appointment or deadline ("on/by/before Friday",
"周五前"), a time right after it ("Friday at 3pm", "周五下午三点"), or in an open task (``- [ ]``);
and it is the past when its clause tells it as done ("周五下午三点开了会", "we met on Friday at 3pm"),
unless a future word, a deadline or a goal keeps it ahead ("周五要开会了", "下周三前把报告交了").
A done task (``- [x]``), dates inside links and other fields (``[[2026-03-10]]``,
``[source:: …]``, ``[expires:: …]``), and ranges ("next week", "下个月") are not reminders.

Yearly dates. A MEMORY.md item that says it comes back every year — a birthday ("Mom's birthday is
March 14", "妈妈生日是3月14日", "born on 29 February 1996"), an anniversary, "every year", "每年",
"纪念日", "周年", or any item under a heading such as "Birthdays" or "生日" — names its calendar days
(``March 14``, ``14 March``, ``3月14日``, an ISO date) as a month and a day: its next occurrence on or
after ``as_of`` is what is upcoming, year after year (:func:`yearly_dates`), and the heartbeat never
prunes such an item for its age or expiry. A birthday on February 29 falls on February 28 in other
years. The words of a one-off event ("birthday party", "生日聚会", "birthday gift") do not make an
item yearly, and a daily note's dates never recur: a note is about its own days.

Daily notes dated from :data:`LOOKBACK_DAYS` days before ``as_of`` through ``as_of`` are read,
and MEMORY.md whole. Every item passes :func:`vault_tools.privacy.rules.entry_visible` for the chat: a group
chat sees only shared ones, and ``#private`` ones are listed only for the owner in a direct chat who
asks (``include_private``, ``upcoming --include-private``); they are never cached, and never in
``context`` (what an agent loads goes on to its model).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vault_tools.errors import UsageError
from vault_tools.notes import edit as note_edit
from vault_tools.notes import model as notes

if TYPE_CHECKING:
    from vault_tools.config import Config
    from vault_tools.privacy.rules import Chat
    from vault_tools.recall.ahead import AheadWindow
    from vault_tools.recall.query import ParsedQuery
    from vault_tools.recall.ranking import Candidate

__all__ = [
    "LOOKBACK_DAYS",
    "UpcomingItem",
    "UpcomingResult",
    "ahead_described",
    "dates_of",
    "find_upcoming",
    "items_ahead",
    "next_date",
    "next_occurrence",
    "yearly_dates",
]

LOOKBACK_DAYS = 92
DATE_FIELDS = ("due", "date", "deadline", "scheduled", "when", "start")
TASKS_EMOJI = re.compile(r"[📅⏳🛫]\ufe0f?\s*(\d{4}-\d{2}-\d{2})")
DONE_TASK = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+\[[xX]\]")
LINK_OR_CODE = re.compile(r"\[\[[^\]]*\]\]|`[^`]*`|https?://\S+")
WEEKDAY_NAMES = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
# What makes a MEMORY.md item's dates come back every year (see the module docstring).
ONE_OFF = r"(?!\s*(?:part(?:y|ies)|dinner|gift|present|cake|card|trip|plans?)\b)"
YEARLY = re.compile(
    rf"\b(?:birthday|bday|b-day|anniversary|every\s+year|each\s+year|annually|yearly|born){ONE_OFF}"
    r"|生日(?!派对|聚会|宴|礼物|蛋糕|会|趴)|纪念日|周年|每年|出生|忌日",
    re.IGNORECASE,
)
YEARLY_HEADING = re.compile(r"birthdays?|anniversar|生日|纪念日", re.IGNORECASE)
# A phrase that names a calendar day (not "tomorrow", "next Friday" or "in 3 days").
CN_NUMBER = "(?:[0-9]{1,2}|[一二三四五六七八九十]{1,3})"
CALENDAR_DAY = re.compile(rf"[0-9]{{4}}-[0-9]{{1,2}}-[0-9]{{1,2}}|{CN_NUMBER}\s*月\s*{CN_NUMBER}\s*[日号]")
MONTH_NAME = re.compile(r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b", re.IGNORECASE)
LEAP_YEAR = dt.date(2024, 7, 1)  # read a yearly date against a leap year, so "Feb 29" is a day


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
    id: str = ""  # the entry's id (notes.Entry.id), as the index knows it

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
    from vault_tools.recall.named_dates import dates_named

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
    yearly = is_yearly(entry)
    for line in _lines(entry):
        found += [
            (m.day, m.phrase) for m in dates_named(line, entry.date) if not (yearly and is_calendar(m.phrase))
        ]
    seen: set[dt.date] = set()
    unique = []
    for day, phrase in found:
        if day not in seen:
            seen.add(day)
            unique.append((day, phrase))
    return unique


def _lines(entry: notes.Entry) -> list[str]:
    """The lines of ``entry`` that dates are read from (links, code and Tasks dates left out)."""
    lines = LINK_OR_CODE.sub(" ", TASKS_EMOJI.sub(" ", entry.text)).split("\n")
    if lines and entry.raw.lstrip().startswith(("- [ ]", "* [ ]", "+ [ ]")):
        lines[0] = "- [ ] " + lines[0]  # the open-task rule of named_dates reads the marker
    return lines


def is_calendar(phrase: str) -> bool:
    """Whether ``phrase`` names a day of the calendar (``March 14``, ``3月14日``, ``2026-03-14``)."""
    if CALENDAR_DAY.search(phrase):
        return True
    return any(ch.isdigit() for ch in phrase) and MONTH_NAME.search(phrase) is not None


def is_yearly(entry: notes.Entry) -> bool:
    """Whether ``entry`` is a MEMORY.md item whose dates come back every year (a birthday, …)."""
    if entry.kind != "memory" or DONE_TASK.match(entry.raw.split("\n", 1)[0]):
        return False
    return YEARLY.search(entry.text) is not None or YEARLY_HEADING.search(entry.section or "") is not None


def yearly_dates(entry: notes.Entry) -> list[tuple[int, int, str]]:
    """(month, day, phrase) of each calendar day a yearly item names (see the module docstring)."""
    from vault_tools.recall.named_dates import dates_named

    if not is_yearly(entry):
        return []
    found: dict[tuple[int, int], str] = {}
    for line in _lines(entry):
        for mention in dates_named(line, LEAP_YEAR):
            if is_calendar(mention.phrase):
                found.setdefault((mention.day.month, mention.day.day), mention.phrase)
    return [(month, day, phrase) for (month, day), phrase in found.items()]


def next_occurrence(month: int, day: int, as_of: dt.date) -> dt.date:
    """The first ``month``/``day`` on or after ``as_of``; February 29 is February 28 in other years."""
    for year in (as_of.year, as_of.year + 1):
        try:
            found = dt.date(year, month, day)
        except ValueError:  # February 29 outside a leap year
            found = dt.date(year, month, day - 1)
        if found >= as_of:
            return found
    raise AssertionError("unreachable: next year's occurrence is always ahead")  # pragma: no cover


def next_date(entry: notes.Entry, as_of: dt.date, *, yearly: bool = True) -> dt.date | None:
    """The soonest day on or after ``as_of`` that ``entry`` names, or None (nothing ahead);
    a yearly item's next occurrence too, unless ``yearly`` is false."""
    ahead = [day for day, _phrase in dates_of(entry) if day >= as_of]
    if yearly:
        ahead += [next_occurrence(month, day, as_of) for month, day, _phrase in yearly_dates(entry)]
    return min(ahead) if ahead else None


def _one_line(text: str, limit: int = 300) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _paths(vault: Path, as_of: dt.date, warnings: list[notes.Warning_]) -> list[Path]:
    """MEMORY.md and the daily notes dated in the look-back, chosen by name before anything is read."""
    first = as_of - dt.timedelta(days=LOOKBACK_DAYS)
    root = vault.resolve()
    chosen = notes.memory_file_paths(vault, warnings)
    if not notes.inside_vault(vault / "memory", root, warnings):
        return chosen
    # The walk does not follow symlinked folders, so only a symlinked file can lead out of the vault.
    for dirpath, dirnames, filenames in os.walk(vault / "memory"):
        dirnames[:] = sorted(d for d in dirnames if d not in notes.IGNORED_DIRS and not d.startswith("."))
        for name in sorted(filenames):
            match = notes.DAILY_NAME.match(name)
            if match is None or not first.isoformat() <= name[:10] <= as_of.isoformat():
                continue
            path = Path(dirpath) / name
            kind, _day = notes.classify(notes.relative_posix(path, vault))
            if kind != "daily" or not path.is_file():
                continue
            if not path.is_symlink() or notes.inside_vault(path, root, warnings):
                chosen.append(path)
    return chosen


# The dated entries of each file, kept in .vault-tools/upcoming.json by the file's size and mtime, so
# that context (every session start) reads only the notes that changed. Disposable: rebuilt when lost.
CACHE_FILE = "upcoming.json"
# Bumped whenever the rules of what names a day change (2: a weekday told as done is the past; 3:
# yearly dates; 4: each entry's id), so a cache written by the old rules is read again rather than
# trusted until its note changes.
CACHE_VERSION = 4


# The last cache read, by its file's path, size and mtime: a warm recall server asks about the days
# ahead without parsing the file again while nothing changed.
_LOADED: dict[Path, tuple[tuple[int, int], dict[str, Any]]] = {}


def _load_cache(config: Config) -> dict[str, Any]:
    """The cached files as last read: shared, so a caller copies it before changing it."""
    path = config.state_dir / CACHE_FILE
    try:
        stat = path.stat()
        key = (stat.st_size, stat.st_mtime_ns)
        if path in _LOADED and _LOADED[path][0] == key:
            return _LOADED[path][1]
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("version") != CACHE_VERSION:
        return {}
    files = data.get("files")
    if not isinstance(files, dict):
        return {}
    _LOADED.clear()
    _LOADED[path] = (key, files)
    return files


def _save_cache(config: Config, files: dict[str, Any]) -> None:
    payload = json.dumps({"version": CACHE_VERSION, "files": files}, ensure_ascii=False)
    with contextlib.suppress(OSError):
        note_edit.atomic_write(config.make_state_dir() / CACHE_FILE, payload.encode("utf-8"))


def _dated_entries(note: notes.Note, *, private: bool = False) -> list[dict[str, Any]]:
    """Each entry of ``note`` that names a day, as the cache keeps it (a private one only when
    ``private``: those are never cached)."""
    found = []
    for entry in note.entries:
        if entry.visibility == "private" and not private:
            continue
        mentions = dates_of(entry)
        yearly = yearly_dates(entry)
        if mentions or yearly:
            found.append(
                {
                    "id": entry.id,
                    "line": entry.start_line,
                    "text": _one_line(entry.text),
                    "kind": entry.kind,
                    "visibility": entry.visibility,
                    "written": entry.date.isoformat() if entry.date else None,
                    "dates": [[day.isoformat(), phrase] for day, phrase in mentions],
                    "yearly": [[month, day, phrase] for month, day, phrase in yearly],
                }
            )
    return found


def _file_entries(
    config: Config, path: Path, cache: dict[str, Any], warnings: list[str], *, private: bool = False
) -> tuple[str, list[dict[str, Any]]] | None:
    """The dated entries of ``path``, from the cache while the file is unchanged; with ``private``
    read afresh, private ones included, and not cached."""
    rel = notes.relative_posix(path, config.vault)
    try:
        stat = path.stat()
        key = [stat.st_size, stat.st_mtime_ns]
        kept = cache.get(rel)
        if isinstance(kept, dict) and kept.get("key") == key and not private:
            return rel, list(kept.get("entries", []))
        note = notes.read_note(path, config.vault)
    except OSError as exc:
        warnings.append(f"{path}: could not be read ({exc.strerror}); left out")
        return None
    warnings += [str(w) for w in note.warnings]
    if private:
        return rel, _dated_entries(note, private=True)
    entries = _dated_entries(note)
    cache[rel] = {"key": key, "entries": entries}
    return rel, entries


def _days_of(entry: dict[str, Any], today: dt.date) -> list[tuple[dt.date, str]]:
    """(day, phrase) of a cached entry: its dates, and the next occurrence of its yearly ones."""
    days = [(dt.date.fromisoformat(iso), phrase) for iso, phrase in entry["dates"]]
    for month, day, phrase in entry.get("yearly", []):
        days.append((next_occurrence(month, day, today), f"{phrase}, every year"))
    return days


def find_upcoming(
    config: Config,
    *,
    days: int = 14,
    as_of: dt.date | None = None,
    chat: str | None = None,
    include_private: bool = False,
) -> UpcomingResult:
    """The items dated from ``as_of`` (today) through ``days`` days after it, soonest first.

    ``include_private``: ``#private`` items too, for their owner at this machine in a direct chat
    (a UsageError in any other chat).
    """
    from vault_tools.privacy.rules import parse_chat, visible_in

    if days < 0:
        raise UsageError(f"--days must be 0 or more, got {days}")
    chat_ = parse_chat(chat if chat is not None else config.recall.chat)
    if include_private and chat_ != "direct":
        raise UsageError(f"#private items are never shown in a {chat_} chat; drop --include-private")
    today = as_of or config.today()
    horizon = today + dt.timedelta(days=days)
    result = UpcomingResult(today.isoformat(), days, chat_)
    file_warnings: list[notes.Warning_] = []
    loaded = _load_cache(config)
    cache = dict(loaded)
    fresh: dict[str, Any] = {}
    found: list[tuple[dt.date, str, int, UpcomingItem]] = []
    for path in _paths(config.vault, today, file_warnings):
        read = _file_entries(config, path, cache, result.warnings, private=include_private)
        if read is None:
            continue
        rel, entries = read
        if rel in cache:
            fresh[rel] = cache[rel]
        for entry in entries:
            if not visible_in(entry["kind"], entry["visibility"], chat_, include_private=include_private):
                continue
            written = dt.date.fromisoformat(entry["written"]) if entry["written"] else None
            for day, phrase in _days_of(entry, today):
                if today <= day <= horizon and (written is None or day >= written):
                    item = UpcomingItem(
                        date=day.isoformat(),
                        days_ahead=(day - today).days,
                        phrase=phrase,
                        path=rel,
                        line=entry["line"],
                        text=entry["text"],
                        source=entry["kind"],
                        written=entry["written"],
                        id=str(entry.get("id", "")),
                    )
                    found.append((day, rel, entry["line"], item))
    # a note read again holds a new record; one left out or deleted is gone from ``fresh``
    changed = fresh.keys() != loaded.keys() or any(fresh[rel] is not loaded[rel] for rel in fresh)
    if not include_private and changed:
        _save_cache(config, fresh)
    result.warnings += [str(w) for w in file_warnings]
    found.sort(key=lambda t: (t[0], t[1] == notes.MEMORY_FILE_NAMES[0], t[1], t[2]))
    result.items = [item for *_key, item in found]
    return result


# --- a question about days ahead ------------------------------------------------------------------------------


def items_ahead(
    config: Config,
    fetch: Callable[[str], dict[str, Any] | None],
    parsed: ParsedQuery,
    chat: Chat,
    today: dt.date,
    include_private: bool,
) -> list[Candidate]:
    """The entries dated in the days ahead ``parsed`` asks about (:func:`find_upcoming`, within the
    chat's rule), on its topic when it has one, soonest first; ``[]`` when none. ``fetch`` gives
    an entry's stored fields by id, None when the search's filters (tags, open tasks) leave it out."""
    from vault_tools.index.analysis import tokenize
    from vault_tools.recall.ranking import Candidate

    window = parsed.ahead
    if window is None:
        return []
    days = (window.until - today).days
    items = find_upcoming(config, days=days, as_of=today, chat=chat, include_private=include_private).items
    found: list[tuple[int, Candidate]] = []
    seen: set[str] = set()
    for item in items:
        if not window.since.isoformat() <= item.date <= window.until.isoformat() or item.id in seen:
            continue
        seen.add(item.id)
        stored = fetch(item.id) if item.id else None
        if stored is None:
            continue
        matched = len(set(tokenize(str(stored.get("text", "")))) & set(parsed.terms))
        if parsed.terms and not matched:
            continue
        found.append((matched, Candidate(stored, float(matched))))
    found.sort(key=lambda pair: -pair[0])  # stable: soonest first among equals
    for rank, (_matched, candidate) in enumerate(found):
        candidate.score = 1.0 / (1 + rank)
        candidate.parts = {"ahead": 1.0, "score": candidate.score}
    return [candidate for _matched, candidate in found]


def ahead_described(window: AheadWindow) -> dict[str, str]:
    """The days ahead a search listed, as ``--json`` reports them."""
    return {"since": window.since.isoformat(), "until": window.until.isoformat(), "phrase": window.phrase}
