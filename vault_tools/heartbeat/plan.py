"""Planning a heartbeat run: which insights to promote or merge, which items to prune.

Nothing is written here: each decision becomes a :class:`vault_tools.heartbeat.edits.Change`
that applies to both the working tree and HEAD (see :class:`Simulation`), or a skip with a reason.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import itertools
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from vault_tools.config import Config, HeartbeatConfig
from vault_tools.curation import insights, similarity
from vault_tools.curation.anchors import anchor_time_words
from vault_tools.curation.insights import Candidate, Insight, Rules
from vault_tools.errors import LLMError
from vault_tools.feedback import SILENT, Feedback
from vault_tools.heartbeat.edits import (
    ARCHIVE_INITIAL,
    BLOCK_ANYWHERE,
    BLOCK_AT_END,
    DEFAULT_HEADINGS,
    MEMORY_INITIAL,
    MEMORY_PATH,
    Change,
    Op,
    Simulation,
    body_headings,
    commit_message,
    find_heading,
    is_item,
    parse_lines,
    source_links,
)
from vault_tools.heartbeat.memory_view import MemoryItem, MemoryView
from vault_tools.heartbeat.report import ChangeReport, HeartbeatReport, Skip
from vault_tools.heartbeat.state import State
from vault_tools.notes import model as notes
from vault_tools.privacy import rules as privacy
from vault_tools.recall.upcoming import next_date
from vault_tools.tokens import count_words

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
    feedback: Feedback = SILENT  # waits said at once, progress bars on a terminal

    @property
    def start(self) -> dt.date:
        return self.as_of - dt.timedelta(days=self.days - 1)


@dataclass
class Plan:
    changes: list[Change] = field(default_factory=list)
    processed: dict[str, str] = field(default_factory=dict)
    registry: dict[str, dict[str, Any]] = field(default_factory=dict)
    promoted_texts: dict[str, str] = field(default_factory=dict)  # block id -> text, of planned promotes


def window_entries(ctx: Context, warnings: list[str]) -> list[notes.Entry]:
    """The entries of the daily notes dated within the window, in date order (unreadable: warned)."""
    found: list[tuple[dt.date, str, notes.Entry]] = []
    in_window: list[tuple[Path, str, dt.date]] = []
    for path in notes.iter_note_paths(ctx.vault):
        rel = notes.relative_posix(path, ctx.vault)
        kind, date = notes.classify(rel)
        if kind == "daily" and date is not None and ctx.start <= date <= ctx.as_of:
            in_window.append((path, rel, date))
    bar = ctx.feedback.bar(len(in_window), "reading notes", "note")
    for path, rel, date in in_window:
        bar.set_description(f"reading {rel}")
        bar.update(1)
        try:
            note = notes.read_note(path, ctx.vault)
        except OSError as exc:
            if not isinstance(exc, FileNotFoundError):
                warnings.append(
                    f"{path}: could not be read ({exc.strerror or exc}); its entries were not considered"
                )
            continue
        found.extend((date, rel, e) for e in note.entries)
    bar.close()
    found.sort(key=lambda t: (t[0], t[1], t[2].start_line))
    return [e for _d, _r, e in found]


def where(entry: notes.Entry) -> str:
    return f"{entry.rel_path}:{entry.start_line}"


def gather(
    ctx: Context, state: State, entries: Sequence[notes.Entry], plan: Plan, report: HeartbeatReport
) -> tuple[list[Candidate], list[Candidate]]:
    """(new candidates, all candidates of the window); skips and processed marks go to the plan.

    A run reads at most ``max_new_entries`` new entries (the earliest), and as many already seen
    ones (the latest) to find repeats: the rest of a huge note is left unprocessed for the next runs,
    each of which takes the next piece, with a warning naming the files.
    """
    new: list[Candidate] = []
    window: list[Candidate] = []
    if all(entry.content_hash in state.processed for entry in entries):
        return new, window  # nothing new: no insight is possible, and no need to read anything
    cap = max(1, ctx.settings.max_new_entries)
    taken, seen = piece(entries, state, cap)
    taken_hashes = {e.content_hash for e in taken}
    rest = [
        e for e in entries if e.content_hash not in state.processed and e.content_hash not in taken_hashes
    ]
    left = Counter(e.rel_path for e in rest)
    resume_at: dict[str, int] = {}
    for entry in rest:
        resume_at.setdefault(entry.rel_path, entry.start_line)
    chosen = {id(e) for e in [*seen, *taken]}
    bar = ctx.feedback.bar(len(chosen), "reading entries", "entry")
    for entry in (e for e in entries if id(e) in chosen):
        bar.update(1)
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
    bar.close()
    report.deferred = sum(left.values())
    if report.deferred:
        files = ", ".join(
            f"{path} ({count:,} from line {resume_at[path]:,})" for path, count in sorted(left.items())
        )
        report.warnings.append(
            f"more new entries than one run curates (heartbeat.max_new_entries = {cap:,}): this run "
            f"took {len(taken):,}, the next runs take the other {report.deferred:,}: {files}"
        )
    return new, window


def piece(
    entries: Sequence[notes.Entry], state: State, cap: int
) -> tuple[list[notes.Entry], list[notes.Entry]]:
    """The new entries this run curates (the first ``cap``) and the seen ones it compares them with
    (the last ``cap``, in window order): a run's work is bounded however large the notes are."""
    unseen = [e for e in entries if e.content_hash not in state.processed]
    taken: list[notes.Entry] = []
    hashes: set[str] = set()
    for entry in unseen:
        if len(hashes) >= cap and entry.content_hash not in hashes:
            break
        hashes.add(entry.content_hash)
        taken.append(entry)
    seen = [e for e in entries if e.content_hash in state.processed]
    return taken, seen if len(seen) <= cap else seen[-cap:]


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
        bar = ctx.feedback.bar(len(new), "finding repeats", "entry")
        found, _scores = insights.rules_insights(new, window, ctx.rules, lambda: bar.update(1))
        bar.close()
        return found
    from vault_tools.curation import llm

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
    from vault_tools.curation.llm import MemoryRef

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
    found = anchored(
        with_context(find_insights(ctx, new, window, view, memory_headings(memory_lines), report), entries)
    )
    language = vault_language(memory_lines, entries)
    tombstones = similarity.SimilarityIndex()
    for block, record in state.registry.items():
        if record.get("status") == "deleted":
            tombstones.add(block, similarity.tokens(str(record.get("text", ""))))
    over = over_budget(ctx, found, view)
    found.sort(key=lambda i: (i.date or dt.date.min, -i.score, i.text))
    bar = ctx.feedback.bar(len(found), "planning", "insight")
    for insight in found:
        bar.update(1)
        if id(insight) in over:
            report.skipped.append(
                Skip(where(insight.sources[-1]), insights.short(insight.text, 80), over[id(insight)])
            )
            continue
        decide(ctx, insight, state, plan, sim, view, tombstones, language, report)
    bar.close()
    plan_prunes(ctx, state, sim, plan, report)
    return plan


def with_context(found: list[Insight], entries: Sequence[notes.Entry]) -> list[Insight]:
    """Fragments given the line before them in their note (the neighbour recall reads too)."""
    before = {e.id: p for p, e in itertools.pairwise(entries) if p.rel_path == e.rel_path}
    return [
        insights.in_context(i, before[i.lead.id]) if i.fragment and i.lead and i.lead.id in before else i
        for i in found
    ]


def anchored(found: list[Insight]) -> list[Insight]:
    """The rules' items with their relative time words dated from the day their line was written
    (a model writes its own dates)."""
    return [
        replace(i, text=anchor_time_words(i.text, i.lead.date))
        if i.lead is not None and i.model is None
        else i
        for i in found
    ]


def over_budget_items(
    ctx: Context, entries: Sequence[notes.Entry], due: Sequence[tuple[int, str, notes.Entry, str]]
) -> list[tuple[int, str, notes.Entry, str]]:
    """The bot's items to archive when MEMORY.md holds more than its budget (a lowered budget, an
    old vault): the weakest first, the oldest among equals; never an item that names a day ahead."""
    budget = memory_budget(ctx)
    if budget is None:
        return []
    left, since = budget
    leaving = {id(d[2]) for d in due}
    mine = [
        e
        for e in entries
        if e.block_id and is_bot_block(e.block_id) and id(e) not in leaving and counts_against(e.date, since)
    ]
    left -= sum(item_words(e.text) for e in mine)
    found: list[tuple[int, str, notes.Entry, str]] = []
    why = f"over the MEMORY.md budget ({ctx.settings.budget_words_per_month:g} words a month of notes)"
    for entry in sorted(mine, key=lambda e: (e.importance or 0.0, e.date or dt.date.min, e.start_line)):
        if left >= 0:
            break
        if next_date(entry, ctx.as_of) is None:
            found.append((3, str(entry.date), entry, why))
            left += item_words(entry.text)
    return found


def memory_budget(ctx: Context) -> tuple[float, dt.date] | None:
    """How many words the bot's items dated since the oldest daily note may hold today, and that
    day; None without a budget.

    Items older than the oldest note came from notes deleted or moved away since, under the budget
    of their own months: they neither count against it nor are archived as over it.
    """
    per_month = ctx.settings.budget_words_per_month
    if per_month <= 0:
        return None
    first = first_note_day(ctx.vault) or ctx.start
    return per_month * max(DAYS_PER_MONTH, (ctx.as_of - first).days + 1) / DAYS_PER_MONTH, first


def counts_against(day: dt.date | None, since: dt.date) -> bool:
    return day is None or day >= since


def over_budget(ctx: Context, found: Sequence[Insight], view: MemoryView) -> dict[int, str]:
    """The insights that would take MEMORY.md past its budget, by ``id()``, with the reason.

    The budget is ``budget_words_per_month`` for every month from the first daily note to the
    run's day, less the words the bot's items dated since that note already hold (Chinese counted
    by :func:`vault_tools.tokens.count_words`). The strongest new items take it first; an insight
    that merges into an existing item costs nothing.
    """
    budget = memory_budget(ctx)
    if budget is None:
        return {}
    per_month = ctx.settings.budget_words_per_month
    words, since = budget
    held = sum(
        item_words(item.text)
        for item in view.items.values()
        if item.block_id and is_bot_block(item.block_id) and counts_against(item.day, since)
    )
    left = words - held
    over: dict[int, str] = {}
    promotable = [
        i for i in found if i.category != "todo" and i.sources and insights.within(i.score, ctx.threshold)
    ]
    for insight in sorted(promotable, key=lambda i: (-i.score, -i.strength, -len(i.sources), i.text)):
        if view.duplicate_of(insight) is not None:
            continue
        cost = item_words(insight.text)
        if cost > left:
            over[id(insight)] = (
                f"over the MEMORY.md budget ({per_month:g} words a month of notes; "
                f"{max(0, round(left))} words left this run)"
            )
        else:
            left -= cost
    return over


DAYS_PER_MONTH = 30.44


def item_words(text: str) -> int:
    return count_words(clean_item_text(text))


def is_bot_block(block_id: str) -> bool:
    return block_id.startswith("m-")


def first_note_day(vault: Path) -> dt.date | None:
    """The date of the oldest daily note (from file names alone)."""
    days = [
        date
        for path in notes.iter_note_paths(vault)
        for kind, date in [notes.classify(notes.relative_posix(path, vault))]
        if kind == "daily" and date
    ]
    return min(days) if days else None


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
    tombstones: similarity.SimilarityIndex,
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
    if insight.fragment:
        return skip("a fragment: what it is about is in another line")
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
        similarity.tokens(insight.text), ctx.rules
    ):
        return skip("a person removed this item from MEMORY.md; not promoted again")
    duplicate = view.duplicate_of(insight)
    if duplicate is not None:
        return plan_merge(ctx, insight, duplicate, plan, sim, skip)
    plan_promote(ctx, insight, block, plan, sim, view, language, skip)
    return None


def choose_block_id(insight: Insight, state: State, plan: Plan, view: MemoryView) -> str:
    hashes = insight.source_hashes
    planned = plan.promoted_texts  # kept as promotes are planned: not rebuilt for every insight
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
    view.add(MemoryItem(block, block, insight.text, category, line, similarity.tokens(insight.text)))
    plan.promoted_texts[block] = insight.text
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
    due += over_budget_items(ctx, [e for e in entries if e.block_id not in state.kept], due)
    due.sort(key=lambda d: (d[0], d[1], d[2].start_line))
    allowance = int(ctx.settings.prune_max_share * len(entries) + 1e-9)
    for number, (_order, _key, entry, why) in enumerate(due):
        kind = "budget" if why.startswith("over the") else why.split(" ")[0]
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
    reason = stale_reason(ctx, entry, superseders)
    # A birthday comes back every year: it is never stale for its age or expiry, but a corrected
    # one ("Mom's birthday is March 15, not 14") is superseded like any other item.
    yearly = reason is not None and reason[0] != "superseded"
    if reason is not None and next_date(entry, ctx.as_of, yearly=yearly) is not None:
        return None  # it names a day still ahead ("dentist on 2026-03-14"): never pruned before it
    return reason


def stale_reason(ctx: Context, entry: notes.Entry, superseders: dict[str, str]) -> tuple[str, str] | None:
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
