"""Context: what an agent loads at the start of a session, within a token budget.

Design. Four sections, read straight from the files (they are the truth and there are only
a few of them, so no index and nothing stale):

* **Long-term memory** (``MEMORY.md``), in a direct chat only: the items that have not expired
  (``[expires:: 2026-04-01]`` before today drops an item), grouped under their headings, most
  important first (``[importance:: 0.8]``; 0.5 when unset; newer first on ties).
* **Coming up**: items of the daily notes and MEMORY.md whose date is in the next
  :data:`UPCOMING_DAYS` days ("tomorrow", "next Wednesday", "下周三", ``2026-03-14``), soonest
  first (:mod:`vault_tools.recall.upcoming`).
* **Open tasks**: the tasks still to do (``- [ ]``) of the daily notes of the :data:`OPEN_TASK_DAYS`
  days before yesterday, newest first, unless "Coming up" lists them already: what was left to
  do last week is as much the start of a session as what is due.
* **Today** and **Yesterday**: the gist of the two daily notes. Each entry's weight is its
  importance field when it has one, else 0.5 raised by decision/lesson/preference words and
  tags (``#decision``, ``决定``, "prefer", ``#remember``...) and lowered for chatter (greetings,
  ``HEARTBEAT_OK``). Most important first.

Every entry passes :func:`vault_tools.privacy.rules.entry_visible` for the chat, so a group or unknown
chat sees only ``shared`` daily entries and never MEMORY.md. The budget is shared out as
:data:`SHARES` (memory / coming up / today / yesterday); what one section leaves unused goes to the others,
and the rendered Markdown is checked against the budget with :func:`vault_tools.tokens.count_tokens`.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vault_tools.config import Config
from vault_tools.errors import UsageError
from vault_tools.notes import model as notes
from vault_tools.tokens import count_tokens, truncate_to_tokens

if TYPE_CHECKING:
    from vault_tools.privacy.rules import Chat

__all__ = ["ContextItem", "ContextResult", "ContextSection", "build_context"]

#: Share of the budget each section may use before the others have had theirs.
SHARES = {"memory": 0.5, "upcoming": 0.15, "tasks": 0.1, "today": 0.3, "yesterday": 0.2}
#: How far ahead the "Coming up" section looks.
UPCOMING_DAYS = 7
#: How far back, before yesterday, the "Open tasks" section looks.
OPEN_TASK_DAYS = 14
MIN_BUDGET = 50

_WEIGHTY_TAGS = {
    "decision": 0.25,
    "lesson": 0.2,
    "remember": 0.3,
    "important": 0.3,
    "preference": 0.15,
    "todo": 0.05,
    "决定": 0.25,
    "教训": 0.2,
    "重要": 0.3,
}
_WEIGHTY_WORDS = re.compile(
    r"\b(decided|decision|agreed|chose|lesson|learned|never|always|prefer|prefers|must|deadline|"
    r"important|remember|todo)\b|决定|教训|以后|一定要|必须|记住|重要|偏好|喜欢|不要|截止",
    re.IGNORECASE,
)
_CHATTER = re.compile(r"^\s*(HEARTBEAT_OK|早上好|晚安|你好|hi|hello|good (morning|night))\W*$", re.IGNORECASE)


@dataclass
class ContextItem:
    """One entry in the context."""

    path: str
    line: int
    text: str
    date: str | None
    time: str | None
    section: str
    tags: list[str]
    weight: float
    when: str | None = None  # a "Coming up" item's day, as shown ("2026-03-14 Sat, tomorrow")


@dataclass
class ContextSection:
    """A block of the context: long-term memory, today or yesterday."""

    key: str  # "memory" | "upcoming" | "tasks" | "today" | "yesterday"
    title: str
    path: str | None
    date: str | None
    items: list[ContextItem] = field(default_factory=list)
    omitted: int = 0  # entries left out to fit the budget


@dataclass
class ContextResult:
    """The context for a chat, ready to load (:meth:`render`)."""

    chat: str
    max_tokens: int
    tokens: int
    sections: list[ContextSection]
    warnings: list[str]
    stale: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "chat": self.chat,
            "max_tokens": self.max_tokens,
            "tokens": self.tokens,
            "stale": self.stale,
            "warnings": list(self.warnings),
            "sections": [asdict(s) for s in self.sections],
            "markdown": self.render(),
        }

    def render(self) -> str:
        """The Markdown an agent loads: a heading per section, one bullet per entry."""
        return render_sections(self.sections, self.chat)


def render_sections(sections: list[ContextSection], chat: str) -> str:
    blocks = [f"# Memory context ({chat} chat)"]
    for section in sections:
        if not section.items:
            continue
        lines = [f"## {section.title}"]
        if section.key == "memory":
            lines += _render_memory(section.items)
        elif section.key == "upcoming":
            lines += [_upcoming_bullet(item) for item in section.items]
        elif section.key == "tasks":
            lines += [_bullet(item, dated=True) for item in section.items]
        else:
            lines += [_bullet(item) for item in section.items]
        if section.omitted:
            where = "upcoming" if section.key == "upcoming" else "recall"
            lines.append(f"- … {section.omitted} more not shown (use {where})")
        blocks.append("\n".join(lines))
    if len(blocks) == 1:
        blocks.append("Nothing to load for this chat.")
    return "\n\n".join(blocks) + "\n"


def _render_memory(items: list[ContextItem]) -> list[str]:
    groups: dict[str, list[ContextItem]] = {}
    for item in items:
        groups.setdefault(item.section or "Memory", []).append(item)
    lines: list[str] = []
    for name, members in groups.items():
        lines.append(f"### {name}")
        lines += [_bullet(item, dated=True) for item in members]
    return lines


def _upcoming_bullet(item: ContextItem) -> str:
    """``- 2026-03-14 Sat, tomorrow: text``: the day first, then what is due."""
    return f"- {item.when}: {item.text}"


def _bullet(item: ContextItem, *, dated: bool = False) -> str:
    """One entry as a bullet: ``HH:MM`` first when it has one; ``(date)`` after a MEMORY item."""
    if item.when is not None:
        return _upcoming_bullet(item)
    prefix = f"{item.time} " if item.time else ""
    suffix = f" ({item.date})" if dated and item.date else ""
    body = "\n  ".join(line for line in item.text.splitlines() if line.strip())
    return f"- {prefix}{body}{suffix}"


# ---------------------------------------------------------------------------------------------
# Weights


def entry_weight(entry: notes.Entry) -> float:
    """How much an entry matters for a session's start (0..~1.5; see the module docstring)."""
    importance = entry.importance
    if importance is not None:
        return importance
    text = entry.text.strip()
    if not text or _CHATTER.match(text):
        return 0.0
    weight = 0.5
    for tag in entry.tags:
        weight += _WEIGHTY_TAGS.get(tag.lower().split("/")[0], 0.0)
    if _WEIGHTY_WORDS.search(text):
        weight += 0.15
    if len(text) < 8:
        weight -= 0.2
    return weight


def _expired(entry: notes.Entry, as_of: dt.date) -> bool:
    value = entry.fields.get("expires", "")
    try:
        return bool(value) and dt.date.fromisoformat(value[:10]) < as_of
    except ValueError:
        return False


# ---------------------------------------------------------------------------------------------
# Building


def _read(path: Path, vault: Path, warnings: list[str]) -> notes.Note | None:
    try:
        note = notes.read_note(path, vault)
    except OSError as exc:
        warnings.append(f"{path}: could not be read ({exc.strerror}); left out")
        return None
    warnings.extend(str(w) for w in note.warnings)
    return note


def daily_paths(vault: Path, day: dt.date, warnings: list[notes.Warning_] | None = None) -> list[Path]:
    """The daily notes of ``day``: ``memory/YYYY-MM-DD.md`` and ``YYYY-MM-DD-<suffix>.md`` anywhere in memory/.

    A symlink out of the vault is skipped with a warning, as the index skips it.
    """
    folder = vault / "memory"
    if not folder.is_dir():
        return []
    root = vault.resolve()
    found = []
    for path in sorted(folder.rglob(f"{day.isoformat()}*.md")):
        rel = notes.relative_posix(path, vault)
        if any(part in notes.IGNORED_DIRS or part.startswith(".") for part in rel.split("/")[1:-1]):
            continue
        if notes.classify(rel) == ("daily", day) and notes.inside_vault(path, root, warnings):
            found.append(path)
    return found


def _item(entry: notes.Entry, weight: float) -> ContextItem:
    return ContextItem(
        path=entry.rel_path,
        line=entry.start_line,
        text=entry.text,
        date=entry.date.isoformat() if entry.date else None,
        time=entry.time.strftime("%H:%M") if entry.time else None,
        section=entry.section,
        tags=list(entry.tags),
        weight=round(weight, 3),
    )


def _candidates(config: Config, chat: Chat, as_of: dt.date, warnings: list[str]) -> list[ContextSection]:
    from vault_tools.privacy.rules import entry_visible

    vault = config.vault
    sections: list[ContextSection] = []
    memory = ContextSection("memory", "Long-term memory", None, None)
    file_warnings: list[notes.Warning_] = []  # symlinks out of the vault
    entries: list[notes.Entry] = []
    for path in notes.memory_file_paths(vault, file_warnings):  # MEMORY.md, then memory.md
        memory.path = memory.path or notes.relative_posix(path, vault)
        note = _read(path, vault, warnings)
        entries += [
            e
            for e in (note.entries if note else [])
            if entry_visible(e, chat) and not _expired(e, as_of) and e.text.strip()
        ]
    ranked = sorted(entries, key=lambda e: (-entry_weight(e), -(e.date or dt.date.min).toordinal()))
    memory.items = [_item(e, entry_weight(e)) for e in ranked]
    sections.append(memory)
    upcoming = _upcoming(config, chat, as_of, warnings)
    sections.append(upcoming)
    listed = {(item.path, item.line) for item in upcoming.items}
    sections.append(_open_tasks(config, chat, as_of, warnings, file_warnings, listed))
    for key, title, day in (
        ("today", "Today", as_of),
        ("yesterday", "Yesterday", as_of - dt.timedelta(days=1)),
    ):
        first, entries = _day_entries(vault, day, chat, warnings, file_warnings)
        section = ContextSection(key, f"{title}, {day.isoformat()}", first, day.isoformat())
        weighted = [(entry_weight(e), e) for e in entries]
        weighted = [(w, e) for w, e in weighted if w > 0]
        weighted.sort(key=lambda pair: (-pair[0], pair[1].time or dt.time(0, 0), pair[1].start_line))
        section.items = [_item(e, w) for w, e in weighted]
        sections.append(section)
    warnings.extend(str(w) for w in file_warnings)
    return sections


def _upcoming(config: Config, chat: Chat, as_of: dt.date, warnings: list[str]) -> ContextSection:
    from vault_tools.recall.upcoming import find_upcoming

    result = find_upcoming(config, days=UPCOMING_DAYS, as_of=as_of, chat=chat)
    section = ContextSection("upcoming", "Coming up", None, None)
    for found in result.items:
        section.items.append(
            ContextItem(
                path=found.path,
                line=found.line,
                text=found.text,
                date=found.date,
                time=None,
                section="",
                tags=[],
                weight=1.0,
                when=found.when,
            )
        )
    warnings.extend(w for w in result.warnings if w not in warnings)
    return section


def _open_tasks(
    config: Config,
    chat: Chat,
    as_of: dt.date,
    warnings: list[str],
    file_warnings: list[notes.Warning_],
    listed: set[tuple[str, int]],
) -> ContextSection:
    """The open tasks of the days before yesterday, newest first, but those "Coming up" lists."""
    section = ContextSection("tasks", "Open tasks", None, None)
    for back in range(2, OPEN_TASK_DAYS + 2):
        _first, entries = _day_entries(
            config.vault, as_of - dt.timedelta(days=back), chat, warnings, file_warnings
        )
        section.items += [
            _item(e, entry_weight(e))
            for e in entries
            if e.task == "open" and (e.rel_path, e.start_line) not in listed
        ]
    return section


def _day_entries(
    vault: Path, day: dt.date, chat: Chat, warnings: list[str], file_warnings: list[notes.Warning_]
) -> tuple[str | None, list[notes.Entry]]:
    """The entries of ``day``'s daily notes that ``chat`` may see, and the first note's path."""
    from vault_tools.privacy.rules import entry_visible

    first = None
    entries: list[notes.Entry] = []
    for path in daily_paths(vault, day, file_warnings):
        first = first or notes.relative_posix(path, vault)
        note = _read(path, vault, warnings)
        entries += [e for e in (note.entries if note else []) if entry_visible(e, chat)]
    return first, entries


def _fit(sections: list[ContextSection], chat: str, budget: int) -> None:
    """Keep the most important items of each section that fit ``budget`` (in place), their
    secrets withheld: only the items weighed for a place are scanned, not every candidate."""
    from vault_tools.privacy.sensitive import redact

    pools = {s.key: list(s.items) for s in sections}
    for section in sections:
        section.items = []
    spent = count_tokens(render_sections([], chat))
    heading = 8  # a section's heading and "more not shown" note, paid with its first item
    shares = {k: SHARES[k] for k in pools if pools[k]}
    total_share = sum(shares.values()) or 1.0
    by_key = {s.key: s for s in sections}
    for final_pass in (False, True):
        for key, share in shares.items():
            section = by_key[key]
            allowance = budget if final_pass else int(budget * share / total_share)
            dated = key in ("memory", "tasks")
            used = sum(count_tokens(_bullet(i, dated=dated)) + 1 for i in section.items)
            while pools[key]:
                item = pools[key][0]
                item.text = redact(item.text, secrets_only=True)  # what an agent loads goes to its model
                cost = count_tokens(_bullet(item, dated=dated)) + 1
                first = 0 if section.items else heading
                if spent + first + cost > budget or (not final_pass and used + cost > allowance):
                    room = budget - spent - first - 4
                    if final_pass and not section.items and room >= 16:
                        item.text = truncate_to_tokens(item.text, room)
                        section.items.append(pools[key].pop(0))
                        spent += first + count_tokens(_bullet(item, dated=dated)) + 1
                    break
                section.items.append(pools[key].pop(0))
                spent += first + cost
                used += cost
    for section in sections:
        section.omitted = len(pools[section.key])
    # The estimate of the parts can differ from the whole by a few tokens: trim until it fits.
    while count_tokens(render_sections(sections, chat)) > budget:
        fullest = max(reversed(sections), key=lambda s: len(s.items))  # ties: the later section
        if not fullest.items:
            break
        fullest.items.pop()
        fullest.omitted += 1


def build_context(
    config: Config, *, chat: str | None = None, max_tokens: int = 2000, as_of: dt.date | None = None
) -> ContextResult:
    """The session-start context for ``chat`` (default: ``config.recall.chat``) within ``max_tokens``.

    ``as_of`` is today (default: today in the vault's timezone). A direct chat gets MEMORY.md and
    the gist of today and yesterday; a group or unknown chat only their ``shared`` entries.
    """
    from vault_tools.privacy.rules import parse_chat

    chat_ = parse_chat(chat if chat is not None else config.recall.chat)
    if max_tokens < MIN_BUDGET:
        raise UsageError(f"--max-tokens must be at least {MIN_BUDGET} for a context, got {max_tokens}")
    today = as_of or config.today()
    warnings: list[str] = []
    sections = _candidates(config, chat_, today, warnings)
    _fit(sections, chat_, max_tokens)
    result = ContextResult(chat_, max_tokens, 0, sections, warnings, stale=False)
    omitted = sum(s.omitted for s in sections)
    if omitted:
        warnings.append(f"{omitted} entr{'y' if omitted == 1 else 'ies'} left out to fit {max_tokens} tokens")
    result.tokens = count_tokens(result.render())
    return result
