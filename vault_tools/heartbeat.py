"""The maintenance bot: promote what matters from the daily notes into MEMORY.md, prune what is stale.

Design
------
A run (:func:`run_heartbeat`) reads the daily notes of the window (the last ``days`` days up to
``as_of``), keeps the entries it has not processed yet (state in ``.vault-tools/heartbeat/``, keyed
by the entry's content hash: an edited entry is new again, an unchanged one is not), turns them into
scored insights (the offline rules of :mod:`vault_tools.insights`, or one request to a language
model through :mod:`vault_tools.llm` with the rules as fallback), and plans *changes*:

* **promote** an insight scoring at or above the threshold: a new item
  ``- 2026-03-10: text [importance:: 0.9] [source:: [[2026-03-10]]] ^m-3f9a2c`` under the section of
  its category (Decisions, Preferences, Lessons, Facts; an existing heading is found through a
  bilingual synonym table, so ``## 决定`` or ``## 经验`` are used as they are; a missing one is added
  in the vault's language). The block id is a hash of the sources' content hashes, so the same
  insight always gets the same id. ``todo`` insights are never promoted.
* **merge** an insight that is a near-duplicate of an existing item (see
  :func:`vault_tools.insights.near_duplicate`): its dates are added to the item's ``[source:: …]``
  field (``[source:: [[2026-03-10]], [[2026-03-12]]]``) instead of adding a line.
* **prune** an item past its ``[expires:: …]``, one superseded by a newer item
  (``[supersedes:: m-…]``), or a ``#temporary`` one older than ``temporary_max_age_days``: the item
  moves to ``memory/archive/YYYY-MM.md`` with ``[archived:: date] [reason:: …]``. Nothing is deleted.
  A run prunes at most ``prune_max_share`` of the items (rounded down); the rest is reported as held
  back, in order superseded, expired, temporary.

An insight is skipped when a person deleted the item the bot once promoted for it (or a
near-duplicate of it): the state remembers every block id the bot promoted, and one that is in
neither MEMORY.md nor the archive was removed by a person. When the state is lost it is rebuilt from
the bot's commits.

Every change is a list of :class:`Op` — line splices that find their place by content and are
idempotent (applying one twice changes nothing) — and is its own git commit (:mod:`vault_tools.gitops`)
with the bot's identity, a message ``memory: promote "…"`` and trailers (Source, Score, Rule or Model,
Block). The commit holds HEAD's version of each file plus only the change, so a person's uncommitted
edits to MEMORY.md stay uncommitted (the report says so); a change that cannot be applied to HEAD's
version (it touches lines a person has not committed) is skipped and tried again next run. When
MEMORY.md has uncommitted edits saved less than ``quiet_seconds`` ago, the run first waits (at most
that long) for the person to finish. A repository in the middle of a merge, rebase, cherry-pick,
revert or bisect is not touched at all: the run stops with :class:`GitError`.

Crash safety: before writing anything the run records its plan in a journal
(``.vault-tools/heartbeat/journal.json``); then each file is written once with all the changes
(atomic, conflict-checked splices; the archive before MEMORY.md, so a pruned item is never lost),
each change is committed, and at the end the state is saved and the journal removed. The next run
replays a journal it finds: ops are idempotent and "already committed" is seen by comparing with
HEAD, so a run killed at any point is finished without duplicates. Changes that could not be
committed (a detached HEAD) stay in the journal and are committed by the
next run. One heartbeat at a time: the ``heartbeat`` lock.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import difflib
import json
import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from vault_tools import insights, locks, notes, privacy
from vault_tools.config import Config, HeartbeatConfig
from vault_tools.errors import ConflictError, GitError, LLMError, UsageError, VaultError
from vault_tools.insights import Candidate, Insight, Rules

if TYPE_CHECKING:  # git is imported only when a run needs it
    from vault_tools.gitops import BotCommit, VaultRepo

HEARTBEAT_DIR = "heartbeat"
STATE_FILE = "state.json"
JOURNAL_FILE = "journal.json"
LAST_RUN_FILE = "last-run.json"
RUNS_LOG = "runs.jsonl"
STATE_VERSION = 1
MEMORY_PATH = "MEMORY.md"
LOCK_NAME = "heartbeat"
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

Progress = Callable[[str], None]
ChangeKind = Literal["promote", "merge", "prune"]


# ---------------------------------------------------------------------------------------------
# Reports


@dataclass
class ChangeReport:
    kind: str
    text: str
    block_id: str
    section: str | None = None
    score: float | None = None
    sources: list[str] = field(default_factory=list)  # path:line of each source entry
    reason: str | None = None
    rule: str | None = None
    commit: str | None = None
    files: list[str] = field(default_factory=list)


@dataclass
class Skip:
    source: str  # path:line
    text: str
    reason: str


@dataclass
class HeartbeatReport:
    vault: str
    as_of: str
    window: list[str]
    mode: str = "rules"
    model: str | None = None
    fallback: str | None = None
    dry_run: bool = False
    ran: bool = True
    new_entries: int = 0
    promoted: list[ChangeReport] = field(default_factory=list)
    merged: list[ChangeReport] = field(default_factory=list)
    pruned: list[ChangeReport] = field(default_factory=list)
    held_back: list[ChangeReport] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)
    commits: list[str] = field(default_factory=list)
    pending_commits: int = 0
    resumed: int = 0
    requests: int = 0
    tokens: dict[str, int] = field(default_factory=lambda: {"prompt": 0, "completion": 0})
    warnings: list[str] = field(default_factory=list)
    diff: str = ""
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        if not self.ran:
            return f"not due: {self.warnings[-1] if self.warnings else 'ran recently'}"
        changes = len(self.promoted) + len(self.merged) + len(self.pruned)
        commits = f"would make {changes} commit(s)" if self.dry_run else f"made {len(self.commits)} commit(s)"
        mode = f"{self.mode}, {self.model}" if self.model else self.mode
        return (
            f"{self.as_of} ({mode}): {self.new_entries} new entries, {len(self.promoted)} promoted, "
            f"{len(self.merged)} merged, {len(self.pruned)} pruned; {commits}"
        )

    def render(self) -> str:
        """The report for people: what changed, why, and what was skipped (counted by reason)."""
        lines = [f"heartbeat {self.window[0]}..{self.window[1]}: {self.summary()}"]
        if not self.ran:
            return lines[0]
        for label, changes in (("promoted", self.promoted), ("merged", self.merged), ("pruned", self.pruned)):
            for change in changes:
                where = f"[{change.section}] " if change.section else ""
                extra = (
                    f" ({change.reason})" if change.reason else f" ({change.score:g})" if change.score else ""
                )
                commit = f"  {change.commit[:10]}" if change.commit else ""
                lines.append(
                    f"  {label:9}{where}{insights.short(change.text, 80)}{extra} ^{change.block_id}{commit}"
                )
        for change in self.held_back:
            lines.append(
                f"  held back {insights.short(change.text, 70)} ({change.reason}) ^{change.block_id}"
            )
        counts: dict[str, int] = {}
        for skip in self.skipped:
            key = re.sub(r"score [0-9.]+ ", "score ", skip.reason.split(" (")[0])
            counts[key] = counts.get(key, 0) + 1
        for reason, count in sorted(counts.items(), key=lambda kv: -kv[1]):
            lines.append(f"  skipped  {count:4} {reason}")
        if self.requests:
            lines.append(
                f"  llm      {self.requests} request(s), {self.tokens['prompt']} prompt + "
                f"{self.tokens['completion']} completion tokens"
            )
        lines += [f"warning: {w}" for w in self.warnings]
        if self.diff:
            lines += ["", self.diff.rstrip("\n")]
        return "\n".join(lines)


@dataclass
class Options:
    days: int | None = None
    threshold: float | None = None
    as_of: dt.date | None = None
    dry_run: bool = False
    use_llm: bool = True
    if_due: bool = False


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
        return notes.insert_under_section(heading, [self.line])(lines)

    def _add_sources(self, lines: list[str]) -> list[str]:
        index = line_with_block(lines, self.block_id) if self.block_id else None
        if index is None and self.lines:
            with contextlib.suppress(ConflictError):
                index = notes.find_block(lines, [self.lines[0]])
        if index is None:
            raise ConflictError("the item to add a source to is no longer in MEMORY.md")
        updated = add_source_dates(lines[index], self.dates)
        return [*lines[:index], updated, *lines[index + 1 :]] if updated != lines[index] else lines

    def _remove(self, lines: list[str]) -> list[str]:
        try:
            index = notes.find_block(lines, list(self.lines))
        except ConflictError:
            if self.block_id and line_with_block(lines, self.block_id) is not None:
                raise ConflictError("the item to prune was edited since it was read; left as it is") from None
            return lines  # already removed
        return [*lines[:index], *lines[index + len(self.lines) :]]

    def _append(self, lines: list[str]) -> list[str]:
        wanted = self.lines[0] if self.lines else ""
        if any(notes.strip_eol(line) == wanted for line in lines):
            return lines
        return notes.append_lines(list(self.lines))(lines)

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


# ---------------------------------------------------------------------------------------------
# State and journal (disposable: the files are the truth; the state is rebuilt from git if lost)


def heartbeat_dir(config: Config) -> Path:
    return config.state_dir / HEARTBEAT_DIR


def read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def last_run(config: Config) -> dict[str, Any]:
    """The record of the last run (what ``status`` shows); empty when there was none."""
    return read_json(heartbeat_dir(config) / LAST_RUN_FILE) or {}


def write_json(path: Path, data: dict[str, Any]) -> None:
    notes.atomic_write(path, (json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True) + "\n").encode())


@dataclass
class State:
    processed: dict[str, str] = field(default_factory=dict)  # content hash -> entry date
    registry: dict[str, dict[str, Any]] = field(default_factory=dict)  # block id -> what was promoted
    kept: list[str] = field(default_factory=list)  # block ids a person restored with undo: never pruned
    last_success: str | None = None
    fresh: bool = True  # no state file was found

    @classmethod
    def load(cls, config: Config) -> State:
        data = read_json(heartbeat_dir(config) / STATE_FILE)
        if not data or data.get("version") != STATE_VERSION:
            return cls()
        return cls(
            processed=dict(data.get("processed", {})),
            registry=dict(data.get("registry", {})),
            kept=list(data.get("kept", [])),
            last_success=data.get("last_success"),
            fresh=False,
        )

    def save(self, config: Config, *, keep_after: dt.date) -> None:
        cutoff = keep_after.isoformat()
        processed = {h: d for h, d in self.processed.items() if not d or d >= cutoff}
        data = {
            "version": STATE_VERSION,
            "processed": processed,
            "registry": self.registry,
            "kept": sorted(set(self.kept)),
            "last_success": self.last_success,
        }
        write_json(heartbeat_dir(config) / STATE_FILE, data)


def rebuild_registry(repo: VaultRepo | None, state: State) -> None:
    """When the state was lost, recover what the bot promoted from its commits (trailer ``Block``)."""
    if repo is None or not state.fresh:
        return
    from vault_tools.gitops import parse_trailers

    for _sha, message in reversed(repo.bot_messages()):
        if not message.startswith("memory: promote "):
            continue
        trailers = parse_trailers(message)
        for block in trailers.get("Block", []):
            item = next((line for line in message.splitlines() if line.startswith("- ")), "")
            state.registry.setdefault(block, {"text": item_text(item), "sources": [], "status": "active"})


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


# ---------------------------------------------------------------------------------------------
# Planning


@dataclass
class Context:
    config: Config
    vault: Path
    as_of: dt.date
    days: int
    threshold: float
    rules: Rules
    settings: HeartbeatConfig
    use_llm: bool

    @property
    def start(self) -> dt.date:
        return self.as_of - dt.timedelta(days=self.days - 1)


@dataclass
class MemoryItem:
    key: str
    block_id: str | None
    text: str
    category: str | None
    first_line: str
    tokens: frozenset[str]


class MemoryView:
    """The items of MEMORY.md (as planned so far) for deduplication and supersede decisions."""

    def __init__(self, entries: Sequence[notes.Entry], rules: Rules) -> None:
        self.rules = rules
        self.items: dict[str, MemoryItem] = {}
        self.index = insights.SimilarityIndex()
        self.block_ids: set[str] = set()
        for entry in entries:
            if not is_item(entry):
                continue
            first = entry.raw.splitlines()[0]
            key = entry.block_id or f"line-{entry.content_hash[:10]}"
            self.add(
                MemoryItem(
                    key,
                    entry.block_id,
                    entry.text,
                    heading_category(entry.section),
                    first,
                    insights.tokens(entry.text),
                )
            )

    def add(self, item: MemoryItem) -> None:
        self.items[item.key] = item
        self.index.add(item.key, item.tokens)
        if item.block_id:
            self.block_ids.add(item.block_id)

    def duplicate_of(self, insight: Insight) -> MemoryItem | None:
        if insight.duplicate_of and insight.duplicate_of in self.items:
            return self.items[insight.duplicate_of]
        for key, _score in self.index.near(insights.tokens(insight.text), self.rules):
            return self.items[key]
        return None

    def superseded_by(self, insight: Insight) -> MemoryItem | None:
        if insight.supersedes:
            item = self.items.get(insight.supersedes)
            return item if item is not None and item.block_id else None
        if insight.model is not None or not insights.changes_something(insight.text):
            return None
        for key, _score in self.index.related(insights.tokens(insight.text), self.rules):
            item = self.items[key]
            if item.block_id and item.category == insight.category:
                return item
        return None


@dataclass
class Plan:
    changes: list[Change] = field(default_factory=list)
    processed: dict[str, str] = field(default_factory=dict)
    registry: dict[str, dict[str, Any]] = field(default_factory=dict)


def window_entries(ctx: Context, warnings: list[str]) -> list[notes.Entry]:
    """The entries of the daily notes dated within the window, in date order (unreadable: warned)."""
    found: list[tuple[dt.date, str, notes.Entry]] = []
    for path in notes.iter_note_paths(ctx.vault):
        rel = notes.relative_posix(path, ctx.vault)
        kind, date = notes.classify(rel)
        if kind != "daily" or date is None or not ctx.start <= date <= ctx.as_of:
            continue
        try:
            note = notes.read_note(path, ctx.vault)
        except OSError as exc:
            if not isinstance(exc, FileNotFoundError):
                warnings.append(
                    f"{path}: could not be read ({exc.strerror or exc}); its entries were not considered"
                )
            continue
        found.extend((date, rel, e) for e in note.entries)
    found.sort(key=lambda t: (t[0], t[1], t[2].start_line))
    return [e for _d, _r, e in found]


def where(entry: notes.Entry) -> str:
    return f"{entry.rel_path}:{entry.start_line}"


def gather(
    ctx: Context, state: State, entries: Sequence[notes.Entry], plan: Plan, report: HeartbeatReport
) -> tuple[list[Candidate], list[Candidate]]:
    """(new candidates, all candidates of the window); skips and processed marks go to the plan."""
    new: list[Candidate] = []
    window: list[Candidate] = []
    if all(entry.content_hash in state.processed for entry in entries):
        return new, window  # nothing new: no insight is possible, and no need to read anything
    for entry in entries:
        is_new = entry.content_hash not in state.processed
        if is_new:
            report.new_entries += 1
            plan.processed[entry.content_hash] = entry.date.isoformat() if entry.date else ""
        reason = insights.skip_reason(entry)
        if reason is None:
            allowed, why = privacy.may_promote(entry)
            reason = None if allowed else why
        if reason is not None:
            if is_new:
                report.skipped.append(Skip(where(entry), insights.short(entry.text, 80), reason))
            continue
        candidate = insights.analyse(entry, ctx.rules)
        window.append(candidate)
        if is_new:
            new.append(candidate)
    return new, window


def find_insights(
    ctx: Context,
    new: list[Candidate],
    window: list[Candidate],
    view: MemoryView,
    headings: list[str],
    report: HeartbeatReport,
) -> list[Insight]:
    llm_settings = ctx.config.llm
    if not (ctx.use_llm and llm_settings.configured) or not new:
        found, _scores = insights.rules_insights(new, window, ctx.rules)
        return found
    from vault_tools import llm

    by_id = {c.entry.id: c for c in new}
    memory = related_items(new, view, ctx.rules)
    try:
        result = llm.propose(
            llm_settings, [c.entry for c in new], memory, headings, today=ctx.as_of, rules=ctx.rules
        )
    except LLMError as exc:
        usage = getattr(exc, "usage", None)
        if usage is not None:
            record_usage(report, usage)
        report.fallback = str(exc)
        report.warnings.append(f"language model not used ({exc}); used the offline rules")
        found, _scores = insights.rules_insights(new, window, ctx.rules)
        return found
    report.mode, report.model = "llm", result.model
    record_usage(report, result.usage)
    report.warnings += [f"model insight dropped: {reason}" for reason in result.dropped]
    found = [proposal_insight(p, by_id, result.model) for p in result.proposals]
    held = [by_id[e.id] for e in result.held if e.id in by_id]
    if held:
        rules_found, _scores = insights.rules_insights(held, window, ctx.rules)
        found += rules_found
        report.warnings.append(
            f"{len(held)} entries scored by the offline rules (private, or over the token cap)"
        )
    return found


def record_usage(report: HeartbeatReport, usage: Any) -> None:
    report.requests += usage.requests
    report.tokens["prompt"] += usage.prompt_tokens
    report.tokens["completion"] += usage.completion_tokens


def related_items(new: Sequence[Candidate], view: MemoryView, rules: Rules, per_entry: int = 2) -> list[Any]:
    """The MEMORY.md items most related to the new entries, for the model to dedupe against.

    At most ``per_entry`` per entry and one per new entry in all (the most similar first), so a
    request grows with the number of new entries, never with the size of MEMORY.md.
    """
    from vault_tools.llm import MemoryRef

    best: dict[str, float] = {}
    for candidate in new:
        for key, score in view.index.related(candidate.tokens, rules)[:per_entry]:
            best[key] = max(score, best.get(key, 0.0))
    chosen = sorted(best, key=lambda k: (-best[k], k))[: max(10, len(new))]
    return [MemoryRef(key, view.items[key].category or "", view.items[key].text) for key in sorted(chosen)]


def proposal_insight(proposal: Any, by_id: dict[str, Candidate], model: str) -> Insight:
    sources = tuple(by_id[s].entry for s in proposal.sources if s in by_id)
    text = proposal.text
    if proposal.redacted:
        # the model saw a redacted entry: keep its judgement, take the words from the note itself
        text = by_id[proposal.sources[0]].key_text
    return Insight(
        text=text,
        category=proposal.category,
        score=proposal.importance,
        sources=sources,
        rule=f"model {model}",
        model=model,
        supersedes=proposal.supersedes,
        duplicate_of=proposal.duplicate_of,
        expires=proposal.expires,
    )


def memory_headings(lines: list[str]) -> list[str]:
    return [text for _i, level, text in body_headings(lines) if level >= 2]


def vault_language(lines: list[str], entries: Sequence[notes.Entry]) -> str:
    headings = [text for _i, _level, text in body_headings(lines)]
    if headings:
        chinese = sum(insights.is_chinese(h) for h in headings)
        return "zh" if chinese * 2 > len(headings) else "en"
    sample = " ".join(e.text for e in entries[:200])
    return "zh" if insights.is_chinese(sample) else "en"


def plan_run(
    ctx: Context, state: State, sim: Simulation, report: HeartbeatReport, pending: Sequence[Change]
) -> Plan:
    plan = Plan()
    entries = window_entries(ctx, report.warnings)
    memory_lines = sim.lines(MEMORY_PATH)
    view = MemoryView(parse_lines(memory_lines, ctx.vault, MEMORY_PATH), ctx.rules)
    refresh_registry(ctx, state, view, pending)
    new, window = gather(ctx, state, entries, plan, report)
    found = find_insights(ctx, new, window, view, memory_headings(memory_lines), report)
    language = vault_language(memory_lines, entries)
    tombstones = insights.SimilarityIndex()
    for block, record in state.registry.items():
        if record.get("status") == "deleted":
            tombstones.add(block, insights.tokens(str(record.get("text", ""))))
    found.sort(key=lambda i: (i.date or dt.date.min, -i.score, i.text))
    for insight in found:
        decide(ctx, insight, state, plan, sim, view, tombstones, language, report)
    plan_prunes(ctx, state, sim, plan, report)
    return plan


def refresh_registry(ctx: Context, state: State, view: MemoryView, pending: Sequence[Change]) -> None:
    """Mark each promoted block id active, archived, or deleted (by a person)."""
    archived: set[str] = set()
    archive_dir = ctx.vault / "memory" / "archive"
    if archive_dir.is_dir():
        for path in archive_dir.rglob("*.md"):
            with contextlib.suppress(OSError, UnicodeDecodeError):
                archived.update(BLOCK_ANYWHERE.findall(path.read_text(encoding="utf-8")))
    waiting = {c.block_id for c in pending}
    for block, record in state.registry.items():
        if block in view.block_ids:
            record["status"] = "active"
        elif block in waiting:
            continue
        elif block in archived:
            record["status"] = "archived"
        else:
            record["status"] = "deleted"


def decide(
    ctx: Context,
    insight: Insight,
    state: State,
    plan: Plan,
    sim: Simulation,
    view: MemoryView,
    tombstones: insights.SimilarityIndex,
    language: str,
    report: HeartbeatReport,
) -> None:
    """Promote, merge or skip one insight."""
    lead = insight.sources[-1] if insight.sources else None
    skip_at = where(lead) if lead else ""

    def skip(reason: str) -> None:
        report.skipped.append(Skip(skip_at, insights.short(insight.text, 80), reason))

    if insight.category == "todo":
        return skip("a todo (todos are not promoted)")
    if not insights.within(insight.score, ctx.threshold):
        return skip(
            f"score {insights.format_score(insight.score)} below the threshold {ctx.threshold:g} ({insight.rule})"
        )
    if not insight.sources:
        return skip("no source entry")
    block = choose_block_id(insight, state, plan, view)
    if block in view.block_ids:
        return skip(f"already in MEMORY.md as ^{block}")
    if state.registry.get(block, {}).get("status") == "deleted" or tombstones.near(
        insights.tokens(insight.text), ctx.rules
    ):
        return skip("a person removed this item from MEMORY.md; not promoted again")
    duplicate = view.duplicate_of(insight)
    if duplicate is not None:
        return plan_merge(ctx, insight, duplicate, plan, sim, skip)
    plan_promote(ctx, insight, block, plan, sim, view, language, skip)
    return None


def choose_block_id(insight: Insight, state: State, plan: Plan, view: MemoryView) -> str:
    hashes = insight.source_hashes
    planned = {c.block_id: c.report.text for c in plan.changes if c.kind == "promote"}
    for length in (6, 8, 10, 12):
        block = insights.block_id_for(hashes, length=length)
        record = state.registry.get(block)
        if record is not None and record.get("sources") and sorted(record["sources"]) != list(hashes):
            continue  # the same id for other sources: take a longer one
        if block in planned and planned[block] != insight.text:
            return insights.block_id_for(hashes, salt=insight.category + insight.text, length=length)
        return block
    return insights.block_id_for(hashes, salt=insight.text, length=12)


def plan_merge(
    ctx: Context, insight: Insight, item: MemoryItem, plan: Plan, sim: Simulation, skip: Callable[[str], None]
) -> None:
    dates = tuple(sorted({e.date.isoformat() for e in insight.sources if e.date}))
    op = Op("add_sources", MEMORY_PATH, block_id=item.block_id or "", lines=(item.first_line,), dates=dates)
    before = sim.working.get(MEMORY_PATH)
    problem = sim.try_apply([op])
    if problem:
        return skip(f"not merged into ^{item.key}: {problem}")
    if sim.working.get(MEMORY_PATH) == before:
        return skip(f"already in MEMORY.md as ^{item.key} (with this source)")
    block = item.block_id or item.key
    sources = [where(e) for e in insight.sources]
    trailers = [("Source", s) for s in sources]
    trailers += [("Score", insights.format_score(insight.score)), rule_trailer(insight), ("Block", block)]
    body = f"Added {source_links(e.date for e in insight.sources if e.date)} as a source of ^{block} in MEMORY.md."
    report = ChangeReport(
        "merge",
        item.text,
        block,
        item.category,
        insight.score,
        sources,
        None,
        insight.rule,
        None,
        [MEMORY_PATH],
    )
    plan.changes.append(
        Change(
            "merge",
            block,
            [op],
            commit_message("merge", item.text, body, trailers),
            hashes_of(insight),
            report,
        )
    )
    return None


def rule_trailer(insight: Insight) -> tuple[str, str]:
    return ("Model", insight.model) if insight.model else ("Rule", insight.rule)


def hashes_of(insight: Insight) -> list[str]:
    return [e.content_hash for e in insight.sources]


def plan_promote(
    ctx: Context,
    insight: Insight,
    block: str,
    plan: Plan,
    sim: Simulation,
    view: MemoryView,
    language: str,
    skip: Callable[[str], None],
) -> None:
    superseded = view.superseded_by(insight)
    date = insight.date or ctx.as_of
    expires = insight.expires
    if expires is None and insight.temporary:
        expires = date + dt.timedelta(days=ctx.settings.temporary_max_age_days)
    line = item_line(insight, date, block, expires, superseded.block_id if superseded else None)
    category = insight.category
    heading = find_heading(sim.lines(MEMORY_PATH), category) or DEFAULT_HEADINGS[language][category]
    op = Op(
        "insert",
        MEMORY_PATH,
        line=line,
        block_id=block,
        category=category,
        heading=heading,
        initial=MEMORY_INITIAL,
    )
    problem = sim.try_apply([op])
    if problem:
        return skip(f"not promoted: {problem}")
    sources = [where(e) for e in insight.sources]
    trailers = [("Source", s) for s in sources]
    trailers += [("Score", insights.format_score(insight.score)), rule_trailer(insight), ("Block", block)]
    if superseded is not None and superseded.block_id:
        trailers.append(("Supersedes", superseded.block_id))
    body = f'Added to MEMORY.md under "{heading}":\n{line}'
    report = ChangeReport(
        "promote",
        insight.text,
        block,
        heading,
        insight.score,
        sources,
        None,
        insight.rule,
        None,
        [MEMORY_PATH],
    )
    plan.changes.append(
        Change(
            "promote",
            block,
            [op],
            commit_message("promote", insight.text, body, trailers),
            hashes_of(insight),
            report,
        )
    )
    view.add(MemoryItem(block, block, insight.text, category, line, insights.tokens(insight.text)))
    plan.registry[block] = {
        "text": insight.text,
        "sources": list(insight.source_hashes),
        "status": "active",
        "promoted": ctx.as_of.isoformat(),
    }
    return None


def item_line(
    insight: Insight, date: dt.date, block: str, expires: dt.date | None, supersedes: str | None
) -> str:
    text = clean_item_text(insight.text)
    if any(e.visibility == "private" for e in insight.sources) and "#private" not in text:
        text += " #private"  # a private entry promoted by consent stays private
    parts = [f"- {date.isoformat()}: {text}", f"[importance:: {insights.format_score(insight.score)}]"]
    parts.append(f"[source:: {source_links(e.date for e in insight.sources if e.date)}]")
    if expires is not None:
        parts.append(f"[expires:: {expires.isoformat()}]")
    if supersedes:
        parts.append(f"[supersedes:: {supersedes}]")
    parts.append(f"^{block}")
    return " ".join(parts)


def clean_item_text(text: str) -> str:
    """One line, no inline fields, no trailing block id, no leading list marker."""
    text = notes.FIELD.sub("", " ".join(text.split()))
    text = BLOCK_AT_END.sub("", " " + text).strip()
    return notes.BULLET.sub("", text, count=1).strip() or "(empty)"


def plan_prunes(ctx: Context, state: State, sim: Simulation, plan: Plan, report: HeartbeatReport) -> None:
    lines = sim.lines(MEMORY_PATH)
    entries = [e for e in parse_lines(lines, ctx.vault, MEMORY_PATH) if is_item(e)]
    present = {e.block_id for e in entries if e.block_id}
    superseders: dict[str, str] = {}
    for entry in entries:
        target = entry.fields.get("supersedes", "").strip().lstrip("^")
        if target in present and target != entry.block_id and entry.block_id:
            superseders.setdefault(target, entry.block_id)
    due: list[tuple[int, str, notes.Entry, str]] = []
    for entry in entries:
        if entry.block_id and entry.block_id in state.kept:
            continue
        reason = prune_reason(ctx, entry, superseders)
        if reason is not None:
            order = {"superseded": 0, "expired": 1, "temporary": 2}[reason[0]]
            due.append((order, entry.fields.get("expires", "") or str(entry.date), entry, reason[1]))
    due.sort(key=lambda d: (d[0], d[1], d[2].start_line))
    allowance = int(ctx.settings.prune_max_share * len(entries) + 1e-9)
    for number, (_order, _key, entry, why) in enumerate(due):
        kind = why.split(" ")[0]
        if number >= allowance:
            report.held_back.append(ChangeReport("prune", entry.text, entry.block_id or "", reason=why))
            continue
        plan_prune(ctx, entry, kind, why, lines, plan, sim, report)
    if len(due) > allowance:
        report.warnings.append(
            f"prune cap reached: {len(due)} items are due but a run prunes at most "
            f"{ctx.settings.prune_max_share:.0%} of {len(entries)} items ({allowance}); stopped there. "
            "Check the items held back, then prune by hand or raise heartbeat.prune_max_share."
        )


def prune_reason(ctx: Context, entry: notes.Entry, superseders: dict[str, str]) -> tuple[str, str] | None:
    if entry.block_id and entry.block_id in superseders:
        return "superseded", f"superseded by ^{superseders[entry.block_id]}"
    expires = entry.fields.get("expires", "").strip()
    with contextlib.suppress(ValueError):
        if expires and dt.date.fromisoformat(expires[:10]) < ctx.as_of:
            return "expired", f"expired {expires[:10]}"
    temporary = entry.has_tag("temporary") or entry.fields.get("temporary", "").lower() in ("true", "yes")
    age_limit = ctx.as_of - dt.timedelta(days=ctx.settings.temporary_max_age_days)
    if temporary and entry.date is not None and entry.date < age_limit:
        return "temporary", f"temporary, older than {ctx.settings.temporary_max_age_days} days"
    return None


def plan_prune(
    ctx: Context,
    entry: notes.Entry,
    kind: str,
    why: str,
    lines: list[str],
    plan: Plan,
    sim: Simulation,
    report: HeartbeatReport,
) -> None:
    exact = tuple(notes.strip_eol(x).lstrip(notes.BOM) for x in lines[entry.start_line - 1 : entry.end_line])
    while exact and not exact[-1].strip():
        exact = exact[:-1]
    month = ctx.as_of.strftime("%Y-%m")
    archive = f"memory/archive/{month}.md"
    archived_first = archive_line(exact[0], ctx.as_of, kind, why)
    ops = [
        Op(
            "append", archive, lines=(archived_first, *exact[1:]), initial=ARCHIVE_INITIAL.format(month=month)
        ),
        Op("remove", MEMORY_PATH, lines=exact, block_id=entry.block_id or ""),
    ]
    problem = sim.try_apply(ops)
    block = entry.block_id or f"line-{entry.content_hash[:10]}"
    if problem:
        report.skipped.append(Skip(where(entry), insights.short(entry.text, 80), f"not pruned: {problem}"))
        return
    trailers = [("Reason", kind), ("Block", block), ("Archive", archive)]
    body = f"Moved from MEMORY.md to {archive} ({why})."
    change_report = ChangeReport(
        "prune",
        entry.text,
        block,
        entry.section,
        entry.importance,
        [],
        why,
        None,
        None,
        [MEMORY_PATH, archive],
    )
    plan.changes.append(
        Change("prune", block, ops, commit_message("prune", entry.text, body, trailers), [], change_report)
    )


def archive_line(first: str, day: dt.date, kind: str, why: str) -> str:
    extra = f"[archived:: {day.isoformat()}] [reason:: {kind}]"
    if kind == "superseded":
        extra += f" [superseded_by:: {why.rsplit('^', 1)[-1]}]"
    block = BLOCK_AT_END.search(first)
    if block:
        return first[: block.start()] + f" {extra}" + first[block.start() :]
    return f"{first.rstrip()} {extra}"


# ---------------------------------------------------------------------------------------------
# Executing: write, commit, record


class Committer:
    """Commits changes around a person's uncommitted edits; knows when it must not commit."""

    def __init__(
        self, repo: VaultRepo | None, vault: Path, report: HeartbeatReport, blocker: str | None
    ) -> None:
        self.repo = repo
        self.vault = vault
        self.report = report
        self.blocker = blocker
        self.touched: set[str] = set()
        self.baselined = False

    @property
    def can_commit(self) -> bool:
        return self.repo is not None and self.blocker is None

    def head(self, path: str) -> bytes | None:
        """HEAD's version of ``path``; None when HEAD lacks it (an untracked file is baselined as it is)."""
        return self.repo.read_head(path) if self.repo is not None else None

    def baseline(self, changes: Sequence[Change]) -> None:
        """Before the first bot commit: commit untracked files it touches (all memory files when the
        branch has no commit yet) as they are, so each bot commit shows only the bot's change."""
        if self.baselined or not self.can_commit or not changes:
            return
        assert self.repo is not None
        self.baselined = True
        paths = {p for c in changes for p in c.paths()}
        if self.repo.head_sha() is None:
            paths |= {notes.relative_posix(p, self.vault) for p in notes.iter_note_paths(self.vault)}
            paths |= {".gitignore"} if (self.vault / ".gitignore").is_file() else set()
            archive = self.vault / "memory" / "archive"
            if archive.is_dir():
                paths |= {notes.relative_posix(p, self.vault) for p in archive.rglob("*.md")}
        created = {p for c in changes for p in c.paths() if all(op.initial for op in c.ops if op.path == p)}
        created -= {MEMORY_PATH}  # MEMORY.md has a person's content too; an archive file is the bot's own
        untracked = sorted(
            p for p in paths - created if (self.vault / p).is_file() and not self.repo.tracked(p)
        )
        if not untracked:
            return
        sha = self.repo.baseline(untracked, baseline_message(untracked))
        if sha:
            self.report.commits.append(sha)
            self.report.warnings.append(
                f"committed {len(untracked)} file(s) that git did not track yet, as they were, before the "
                f"bot's changes ({', '.join(untracked[:3])}{', …' if len(untracked) > 3 else ''})"
            )

    def report_around(self) -> None:
        """After the last commit: a touched file that still differs from HEAD holds a person's edits."""
        if self.repo is None:
            return
        for path in sorted(self.touched):
            file = self.vault / path
            if file.is_file() and file.read_bytes() != self.repo.read_head(path):
                self.report.warnings.append(
                    f"committed around uncommitted edits in {path}: the bot's commits hold only its own "
                    "changes; your edits stay uncommitted"
                )

    def commit(self, change: Change) -> str | None:
        if not self.can_commit:
            return None
        assert self.repo is not None
        contents: dict[str, bytes | None] = {}
        for path in change.paths():
            head = self.repo.read_head(path)
            new = apply_ops(change.ops, path, head)
            if new == (head or b""):
                continue
            contents[path] = new
            self.touched.add(path)
        if not contents:
            return None

        def restage(path: str, staged: bytes) -> bytes | None:
            try:
                return apply_ops(change.ops, path, staged)
            except ConflictError:
                return None

        return self.repo.commit(contents, change.message, restage=restage)


def baseline_message(paths: Sequence[str]) -> str:
    listed = "\n".join(f"- {p}" for p in paths[:50])
    more = f"\n- … and {len(paths) - 50} more" if len(paths) > 50 else ""
    return (
        "memory: start tracking the vault\n\n"
        "These files were not in git yet; committed as they were, before the bot's first change,\n"
        f"so that every bot commit shows only what the bot changed.\n\n{listed}{more}\n"
    )


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
            notes.apply_edit(vault / path, splice, create=True)
        except VaultError as exc:
            for number, _change in touching:
                failed.setdefault(number, str(exc))
        progress(f"wrote {path}")
    for number, why in sorted(failed.items()):
        change = changes[number]
        report.warnings.append(f"{change.kind} ^{change.block_id} not written: {why}")
    return set(failed)


def execute(
    changes: Sequence[Change],
    committer: Committer,
    vault: Path,
    report: HeartbeatReport,
    progress: Progress,
) -> tuple[list[Change], list[Change]]:
    """Write the changes, then commit each one; returns (changes not committed, changes that failed)."""
    uncommitted: list[Change] = []
    committer.baseline(changes)
    failed = write_all(vault, changes, report, progress)
    for number, change in enumerate(changes):
        if number in failed:
            continue
        sha = committer.commit(change) if committer.can_commit else None
        if sha:
            change.report.commit = sha
            report.commits.append(sha)
        elif committer.repo is not None and not committer.can_commit:
            uncommitted.append(change)
        progress(f"committed {change.kind} {change.block_id}")
        bucket = {"promote": report.promoted, "merge": report.merged, "prune": report.pruned}[change.kind]
        bucket.append(change.report)
    return uncommitted, [changes[n] for n in sorted(failed)]


# ---------------------------------------------------------------------------------------------
# The run


def make_context(config: Config, options: Options, warnings: list[str] | None = None) -> Context:
    settings = config.heartbeat
    days = options.days if options.days is not None else settings.days
    threshold = options.threshold if options.threshold is not None else settings.threshold
    if days < 1:
        raise UsageError(f"--days must be at least 1, got {days}")
    if not 0 <= threshold <= 1:
        raise UsageError(f"--threshold must be between 0 and 1, got {threshold}")
    return Context(
        config=config,
        vault=config.vault,
        as_of=options.as_of or config.today(),
        days=days,
        threshold=threshold,
        rules=load_rules(config, warnings),
        settings=settings,
        use_llm=options.use_llm,
    )


def load_rules(config: Config, warnings: list[str] | None = None) -> Rules:
    """The ``[rules]`` table of ``.vault-tools/config.toml`` (see :class:`vault_tools.insights.Rules`)."""
    from vault_tools.config import CONFIG_FILE, read_config_file

    data, _warnings = read_config_file(config.state_dir / CONFIG_FILE)
    table = data.get("rules")
    return Rules.from_mapping(table, warnings) if isinstance(table, dict) else Rules()


def not_due(config: Config, state: State, now: dt.datetime) -> str | None:
    if not state.last_success:
        return None
    try:
        last = dt.datetime.fromisoformat(state.last_success)
    except ValueError:
        return None
    if last.tzinfo is None:
        last = last.astimezone()
    age = now - last
    interval = dt.timedelta(hours=config.heartbeat.interval_hours)
    if age >= interval:
        return None
    hours = age.total_seconds() / 3600
    return f"last successful run {hours:.1f} h ago; runs every {config.heartbeat.interval_hours:g} h"


def run_heartbeat(
    config: Config, options: Options | None = None, progress: Progress | None = None
) -> HeartbeatReport:
    """One heartbeat over ``config.vault`` (see the module docstring); returns what it did.

    ``progress`` is called with a short step name as the run goes (plan, each write and commit).
    Raises LockedError when another heartbeat runs, GitError when the repository is mid-merge.
    """
    options = options or Options()
    rule_warnings: list[str] = []
    ctx = make_context(config, options, rule_warnings)
    report = HeartbeatReport(
        vault=str(config.vault),
        as_of=ctx.as_of.isoformat(),
        window=[ctx.start.isoformat(), ctx.as_of.isoformat()],
    )
    report.dry_run = options.dry_run
    report.warnings += rule_warnings
    started = time.monotonic()
    step = progress or (lambda _name: None)
    notes_dir = config.vault / "memory"
    if not notes_dir.is_dir() and not (config.vault / MEMORY_PATH).is_file():
        raise VaultError(f"{config.vault}: no MEMORY.md or memory/ here; is this the vault? (--vault PATH)")
    if options.dry_run:
        return dry_run(ctx, report, started)
    with locks.hold(config, LOCK_NAME, timeout=0, what="heartbeat"):
        state = State.load(config)
        if options.if_due:
            reason = not_due(config, state, config.now())
            if reason:
                report.ran = False
                report.warnings.append(reason)
                return report
        run_locked(ctx, state, report, step)
    report.seconds = round(time.monotonic() - started, 3)
    write_run_records(config, report)
    return report


def run_locked(ctx: Context, state: State, report: HeartbeatReport, step: Progress) -> None:
    for folder in (ctx.vault, ctx.vault / "memory", ctx.vault / "memory" / "archive"):
        for leftover in notes.remove_dead_temps(folder):
            report.warnings.append(f"removed {leftover}: a write that was killed left it")
    repo, blocker = open_repo(ctx.vault, report, ctx.settings)
    try:
        rebuild_registry(repo, state)
        committer = Committer(repo, ctx.vault, report, blocker)
        pending = resume(ctx, state, committer, report, step)
        sync_if_configured(ctx, repo, report, "before the run")
        wait_quiet(ctx, repo, report)
        sim = Simulation(ctx.vault, committer.head)
        plan = plan_run(ctx, state, sim, report, pending)
        step("planned")
        journal_changes = [*pending, *plan.changes]
        if plan.changes:
            write_journal(ctx.config, journal_changes, plan)
            step("journal")
        uncommitted, failed = execute(plan.changes, committer, ctx.vault, report, step)
        for change in failed:
            for source in change.sources:
                plan.processed.pop(source, None)
            plan.registry.pop(change.block_id, None)
        if not pending and not uncommitted:
            committer.report_around()
        finish(ctx, state, plan.processed, plan.registry, [*pending, *uncommitted], report)
        step("state")
        if report.commits:
            sync_if_configured(ctx, repo, report, "after the commits")
    finally:
        if repo is not None:
            repo.close()


def open_repo(
    vault: Path, report: HeartbeatReport, settings: HeartbeatConfig
) -> tuple[VaultRepo | None, str | None]:
    from vault_tools import gitops

    try:
        repo = gitops.VaultRepo.open(vault)
    except GitError as exc:
        report.warnings.append(f"{exc}; changes are written without commits")
        return None, None
    if repo is None:
        repo = gitops.init_repo(vault)
        report.warnings.append(f"{vault} was not a git repository: initialised one")
    problem = repo.in_progress()
    if problem:
        repo.close()
        raise GitError(problem)
    try:
        repo.clear_locks(
            wait_seconds=settings.lock_wait_seconds,
            grace_seconds=settings.lock_grace_seconds,
            warn=report.warnings.append,
        )
    except VaultError:
        repo.close()
        raise
    blocker = repo.commit_blocker()
    if blocker:
        report.warnings.append(blocker)
    return repo, blocker


def resume(
    ctx: Context, state: State, committer: Committer, report: HeartbeatReport, step: Progress
) -> list[Change]:
    """Finish what an interrupted run planned; returns the changes still waiting for a commit."""
    journal = read_json(heartbeat_dir(ctx.config) / JOURNAL_FILE)
    if not journal:
        return []
    changes = [Change.from_dict(c) for c in journal.get("changes", [])]
    processed = dict(journal.get("processed", {}))
    registry = dict(journal.get("registry", {}))
    report.resumed = len(changes)
    if changes:
        report.warnings.append(f"finished {len(changes)} change(s) of an earlier run that did not complete")
    uncommitted, failed = execute(changes, committer, ctx.vault, report, step)
    for change in failed:
        for source in change.sources:
            processed.pop(source, None)
        registry.pop(change.block_id, None)
    finish(ctx, state, processed, registry, uncommitted, report, success=False)
    step("resumed")
    return uncommitted


def finish(
    ctx: Context,
    state: State,
    processed: dict[str, str],
    registry: dict[str, dict[str, Any]],
    uncommitted: Sequence[Change],
    report: HeartbeatReport,
    *,
    success: bool = True,
) -> None:
    """Save the state, then drop the journal (or keep the changes that wait for a commit)."""
    state.processed.update(processed)
    state.registry.update(registry)
    if success:
        state.last_success = ctx.config.now().isoformat(timespec="seconds")
    state.save(ctx.config, keep_after=ctx.start - dt.timedelta(days=31))
    journal = heartbeat_dir(ctx.config) / JOURNAL_FILE
    if uncommitted:
        write_json(journal, {"version": STATE_VERSION, "changes": [c.to_dict() for c in uncommitted]})
        report.pending_commits = len(uncommitted)
    else:
        with contextlib.suppress(FileNotFoundError):
            journal.unlink()


def write_journal(config: Config, changes: Sequence[Change], plan: Plan) -> None:
    write_json(
        heartbeat_dir(config) / JOURNAL_FILE,
        {
            "version": STATE_VERSION,
            "changes": [c.to_dict() for c in changes],
            "processed": plan.processed,
            "registry": plan.registry,
        },
    )


def wait_quiet(ctx: Context, repo: VaultRepo | None, report: HeartbeatReport) -> None:
    """When a person has uncommitted edits to MEMORY.md saved moments ago, wait until they settle."""
    quiet = ctx.settings.quiet_seconds
    path = ctx.vault / MEMORY_PATH
    if quiet <= 0 or repo is None or not path.is_file():
        return
    head = repo.read_head(MEMORY_PATH)
    if head is None or head == path.read_bytes():
        return
    waited = 0.0
    while waited < quiet:
        age = time.time() - path.stat().st_mtime
        if age >= quiet:
            break
        pause = min(quiet - age, quiet - waited, 1.0)
        time.sleep(max(pause, 0.05))
        waited += max(pause, 0.05)
    if waited:
        report.warnings.append(f"waited {waited:.0f} s for recent edits to MEMORY.md to settle")


def sync_if_configured(ctx: Context, repo: VaultRepo | None, report: HeartbeatReport, when: str) -> None:
    """With ``[heartbeat] push = true``: bring the remote's commits in and push (:mod:`vault_tools.sync`).

    A failure (offline, a person's edits in the way) is a warning: the run works on, and the next
    sync pushes the local commits.
    """
    if not ctx.settings.push or repo is None:
        return
    from vault_tools import sync

    result = sync.SyncReport()
    try:
        sync.recover(repo, ctx.config, report.warnings)
        sync.sync_repo(repo, ctx.config, result)
    except GitError as exc:
        report.warnings.append(f"sync {when}: {exc}")
    report.warnings += [f"sync {when}: dropped {why}" for why in result.dropped] + result.warnings


def write_run_records(config: Config, report: HeartbeatReport) -> None:
    folder = heartbeat_dir(config)
    record = {
        "at": config.now().isoformat(timespec="seconds"),
        "as_of": report.as_of,
        "mode": report.mode,
        "model": report.model,
        "fallback": report.fallback,
        "requests": report.requests,
        "prompt_tokens": report.tokens["prompt"],
        "completion_tokens": report.tokens["completion"],
        "new_entries": report.new_entries,
        "promoted": len(report.promoted),
        "merged": len(report.merged),
        "pruned": len(report.pruned),
        "commits": len(report.commits),
        "seconds": report.seconds,
    }
    with contextlib.suppress(OSError):
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / RUNS_LOG, "a", encoding="utf-8") as log:
            log.write(json.dumps(record, ensure_ascii=False) + "\n")
        write_json(folder / LAST_RUN_FILE, {**record, "summary": report.summary()})


def dry_run(ctx: Context, report: HeartbeatReport, started: float) -> HeartbeatReport:
    """Plan as a run would and print the diff; write nothing (no state, no journal, no commit)."""
    from vault_tools import gitops

    state = State.load(ctx.config)
    repo = None
    try:
        repo = gitops.VaultRepo.open(ctx.vault)
    except GitError as exc:
        report.warnings.append(str(exc))
    try:
        if repo is None:
            report.warnings.append("not a git repository: a real run would initialise one")
        else:
            problem = repo.in_progress() or repo.commit_blocker()
            if problem:
                report.warnings.append(problem)
        rebuild_registry(repo, state)
        journal = read_json(heartbeat_dir(ctx.config) / JOURNAL_FILE)
        pending = [Change.from_dict(c) for c in (journal or {}).get("changes", [])]
        sim = Simulation(ctx.vault, lambda path: repo.read_head(path) if repo is not None else None)
        for change in pending:
            sim.try_apply(change.ops)
        plan = plan_run(ctx, state, sim, report, pending)
    finally:
        if repo is not None:
            repo.close()
    for change in plan.changes:
        {"promote": report.promoted, "merge": report.merged, "prune": report.pruned}[change.kind].append(
            change.report
        )
    report.diff = sim.diff()
    report.seconds = round(time.monotonic() - started, 3)
    return report


# ---------------------------------------------------------------------------------------------
# Undo


@dataclass
class UndoReport:
    reverted: str
    subject: str
    commit: str | None
    files: list[str]
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def render(self) -> str:
        made = f"as {self.commit[:10]}" if self.commit else "(nothing to commit)"
        lines = [f"undid {self.reverted[:10]} {self.subject} {made}", *(f"  {f}" for f in self.files)]
        return "\n".join([*lines, *(f"warning: {w}" for w in self.warnings)])


def reverse_splice(before: list[str], after: list[str]) -> notes.Splice:
    """A splice that turns the lines a commit wrote (``after``) back into ``before`` wherever they are now."""
    matcher = difflib.SequenceMatcher(None, after, before, autojunk=False)
    opcodes = [op for op in matcher.get_opcodes() if op[0] != "equal"]

    def splice(lines: list[str]) -> list[str]:
        result = list(lines)
        newline = notes.detect_newline(result) if result else "\n"
        for _tag, i1, i2, j1, j2 in reversed(opcodes):
            old = [notes.strip_eol(x) for x in after[i1:i2]]
            new = [notes.strip_eol(x) + newline for x in before[j1:j2]]
            if old:
                index = locate(result, after, i1, i2)
                result[index : index + len(old)] = new
            else:
                anchor = [notes.strip_eol(x) for x in after[max(0, i1 - 2) : i1]]
                index = notes.find_block(result, anchor, hint=i1) + len(anchor) if anchor else 0
                if index and index <= len(result) and not result[index - 1].endswith("\n"):
                    result[index - 1] += newline
                result[index:index] = new
        return result

    return splice


def locate(lines: list[str], after: list[str], i1: int, i2: int) -> int:
    """Where ``after[i1:i2]`` is in ``lines`` now: with a line of context when it is ambiguous."""
    old = [notes.strip_eol(x) for x in after[i1:i2]]
    before_ctx = [notes.strip_eol(x) for x in after[max(0, i1 - 1) : i1]]
    with contextlib.suppress(ConflictError):
        return notes.find_block(lines, before_ctx + old, hint=i1) + len(before_ctx)
    if any(x.strip() for x in old):
        return notes.find_block(lines, old, hint=i1)
    raise ConflictError("the lines the commit changed are no longer there")


UNDOABLE = ("memory: promote ", "memory: merge ", "memory: prune ", "memory: undo ")


def undo(config: Config, rev: str) -> UndoReport:
    """Revert one bot change (promote, merge, prune, or an undo) with a new bot commit.

    Line by line: the lines the commit added are removed and the lines it removed come back, found
    by content wherever they are now, so everything else a person changed since stays as it is.
    """
    from vault_tools import gitops

    with locks.hold(config, LOCK_NAME, timeout=0, what="undo"):
        repo = gitops.VaultRepo.open(config.vault)
        if repo is None:
            raise UsageError(f"{config.vault}: not a git repository; nothing to undo")
        with repo:
            problem = repo.in_progress() or repo.commit_blocker()
            if problem:
                raise GitError(problem)
            info = repo.bot_commit(rev)
            if not info.subject.startswith(UNDOABLE):
                raise UsageError(
                    f"{info.sha[:10]} ({info.subject}) is not a promote, merge or prune; "
                    "undo reverts only those (use git revert for anything else)"
                )
            contents, splices = undo_contents(repo, config.vault, info)
            for path, (splice, created) in splices.items():
                write_reverted(config.vault / path, splice, created)
            message = commit_message(
                "undo", info.subject.removeprefix("memory: "), f"Reverts {info.sha}.", [("Reverts", info.sha)]
            )
            sha = repo.commit(contents, message) if contents else None
        report = UndoReport(info.sha, info.subject, sha, sorted(contents))
        remember_undo(config, info)
        return report


def write_reverted(target: Path, splice: notes.Splice, created: bool) -> None:
    """Apply an undo splice to a working file (conflict-checked); a file the commit created goes."""
    result = notes.apply_edit(target, splice, create=True)
    if created and not result.data.strip():
        with contextlib.suppress(FileNotFoundError):
            target.unlink()


def undo_contents(
    repo: VaultRepo, vault: Path, info: BotCommit
) -> tuple[dict[str, bytes | None], dict[str, tuple[notes.Splice, bool]]]:
    """(what to commit, the splice for each working file that still needs it) to revert ``info``."""
    contents: dict[str, bytes | None] = {}
    splices: dict[str, tuple[notes.Splice, bool]] = {}
    for change in info.files:
        before = notes.split_lines(change.before.decode("utf-8")) if change.before else []
        after = notes.split_lines(change.after.decode("utf-8")) if change.after else []
        splice = reverse_splice(before, after)
        head = repo.read_head(change.path)
        try:
            reverted_head = "".join(splice(notes.split_lines((head or b"").decode("utf-8")))).encode()
        except ConflictError:
            raise ConflictError(
                f"{change.path} changed since {info.sha[:10]} in the lines it touched; undo it by hand"
            ) from None
        created = change.before is None
        if reverted_head != (head or b""):
            contents[change.path] = None if created and not reverted_head.strip() else reverted_head
        file = vault / change.path
        current = file.read_bytes() if file.is_file() else b""
        try:
            splice(notes.split_lines(current.decode("utf-8")))
        except ConflictError:
            continue  # the working file no longer has the commit's lines: already reverted there
        splices[change.path] = (splice, created)
    return contents, splices


def remember_undo(config: Config, info: BotCommit) -> None:
    """An undone prune was a person's wish to keep the item: never prune it again."""
    if not info.subject.startswith("memory: prune"):
        return
    state = State.load(config)
    state.kept.extend(info.trailers.get("Block", []))
    state.save(config, keep_after=dt.date.min)
