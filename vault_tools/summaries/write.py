"""Summaries of closed weeks and months: ``memory/summaries/2026-W10.md`` and ``2026-03.md``.

Design
------
A summary is written by the bot for a person to skim and for an agent to read instead of a
hundred bullets. What it says is :mod:`vault_tools.summaries.text` (offline, extractive, with the
heartbeat's rules) or, with a language model configured, :mod:`vault_tools.summaries.llm`
(every bullet citing entries that were sent and supported by them; the rules version is written
when the model fails or nothing it wrote survives, and the report says why).

This module writes them. The front matter's ``generated_hash`` is a hash of everything the bot
wrote but that line: a file whose hash no longer matches was edited by a person and is never
rewritten; an unedited one is rewritten only when the notes changed what it says, so a second run
writes nothing and commits nothing. Each summary written is its own commit touching only its file.

The heartbeat (:func:`write_missing`) writes the summary of each closed week and month that has
daily notes and no summary, newest first, at most :data:`PER_RUN` a run (and none started after
:data:`PER_RUN_SECONDS`), sharing the run's token cap; it never writes again one that a person
deleted (the file is in the history but not in the folder), and commits one that a killed run
wrote but did not commit.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import time
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from vault_tools.config import bot_folders, require_writable
from vault_tools.curation import insights
from vault_tools.errors import ConflictError, GitError, LLMError, UsageError
from vault_tools.locks import HEARTBEAT_LOCK
from vault_tools.notes import edit as note_edit
from vault_tools.notes import model as notes
from vault_tools.notes.generated import edited_by_a_person
from vault_tools.summaries.llm import model_bullets
from vault_tools.summaries.text import (
    SUMMARY_DIR,
    Period,
    build_summary,
    closed_periods,
    last_closed,
    last_closed_week,
    period_entries,
    render_summary,
    select,
    usable,
)

if TYPE_CHECKING:
    from vault_tools.config import Config
    from vault_tools.git.repository import VaultRepo


LOCK_NAME = HEARTBEAT_LOCK  # one bot at a time: the heartbeat writes summaries too


# ---------------------------------------------------------------------------------------------
# Writing and committing


@dataclass
class SummaryReport:
    period: str
    path: str
    action: str = "unchanged"  # written | unchanged | kept (edited by a person) | empty | would write
    entries: int = 0
    bullets: int = 0
    visibility: str = "personal"
    mode: str = "rules"
    model: str | None = None
    fallback: str | None = None
    commit: str | None = None
    dry_run: bool = False
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    text: str = ""
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def render(self) -> str:
        what = {
            "written": "wrote",
            "would write": "would write",
            "unchanged": "unchanged:",
            "kept": "kept (edited by a person, not rewritten):",
            "empty": "nothing to summarize for",
        }[self.action]
        mode = f"{self.mode}, {self.model}" if self.model else self.mode
        line = (
            f"{what} {self.path} ({self.entries} entries, {self.bullets} bullets, {mode}, {self.visibility})"
        )
        if self.action == "empty":
            line = f"{what} {self.period}: no entries a summary may draw from"
        if self.commit:
            line += f"  {self.commit[:10]}"
        lines = [line, *(f"warning: {w}" for w in self.warnings)]
        if self.dry_run and self.text:
            lines += ["", self.text.rstrip("\n")]
        return "\n".join(lines)


@dataclass
class Options:
    period: Period | None = None
    as_of: dt.date | None = None
    use_llm: bool = True
    dry_run: bool = False


def compose(
    config: Config,
    period: Period,
    use_llm: bool,
    report: SummaryReport,
    rules: insights.Rules,
    budget: int | None = None,
) -> str | None:
    """The text of the period's summary (None when no entry may be summarized); a model may use
    ``budget`` tokens (default ``llm.max_tokens_per_run``)."""
    read = period_entries(config.vault, period, report.warnings)
    entries = [e for e in read if usable(e)]
    report.entries = len(entries)
    if not entries:
        return None
    summary = build_summary(config, period, entries, rules)
    if use_llm and config.llm.configured:
        cap = config.llm.max_tokens_per_run if budget is None else budget
        try:
            outcome = model_bullets(config, period, entries, summary.scores, rules, cap)
        except LLMError as exc:
            count_usage(report, getattr(exc, "usage", None))
            report.fallback = str(exc)
            report.warnings.append(f"language model not used ({exc}); wrote the offline summary")
        else:
            count_usage(report, outcome.usage)
            report.warnings += [f"model bullet dropped: {why}" for why in outcome.dropped]
            if outcome.bullets:
                summary = dataclasses.replace(
                    summary, bullets=select(outcome.bullets, period), generator=f"model {outcome.model}"
                )
                report.mode, report.model = "llm", outcome.model
            else:
                report.fallback = "no bullet of the model cited its entries"
                report.warnings.append(
                    "no bullet of the model survived the checks; wrote the offline summary"
                )
    report.bullets = len(summary.bullets)
    report.visibility = summary.visibility
    return render_summary(summary)


def count_usage(report: SummaryReport, usage: Any) -> None:
    if usage is not None:
        report.requests += usage.requests
        report.prompt_tokens += usage.prompt_tokens
        report.completion_tokens += usage.completion_tokens


def write_summary(
    config: Config,
    period: Period,
    *,
    use_llm: bool = True,
    dry_run: bool = False,
    repo: VaultRepo | None = None,
    only_missing: bool = False,
    rules: insights.Rules | None = None,
    token_budget: int | None = None,
) -> SummaryReport:
    """Write (and commit, with ``repo``) the summary of ``period``; see the module docstring.

    ``only_missing`` (the heartbeat): leave a period that has a summary file alone.
    ``token_budget``: what a model may use (default ``llm.max_tokens_per_run``).
    """
    report = SummaryReport(period.name, period.rel_path, dry_run=dry_run)
    target = config.vault / period.rel_path
    if not notes.inside_vault(target, config.vault.resolve(), None):
        raise UsageError(
            f"{target}: memory/summaries (or the file) is a link out of the vault; "
            "summaries are written only inside it"
        )
    current = target.read_text(encoding="utf-8", errors="replace") if target.is_file() else None
    if current is not None and only_missing:
        return report
    text = compose(config, period, use_llm, report, rules or insights.Rules(), token_budget)
    if text is None:
        report.action = "empty"
        return report
    report.text = text
    if current is not None and edited_by_a_person(current):
        report.action = "kept"
        return report
    if current == text:
        report.action = "unchanged"
        return report
    if dry_run:
        report.action = "would write"
        return report

    def splice(lines: list[str]) -> list[str]:
        now = "".join(lines)
        if now and now != current:
            raise ConflictError(f"{target}: changed while the summary was written; left as it is")
        return notes.split_lines(text)

    note_edit.apply_edit(target, splice, create=True)
    report.action = "written"
    if repo is not None:
        report.commit = commit_summary(repo, period, report, text)
    return report


def commit_summary(repo: VaultRepo, period: Period, report: SummaryReport, text: str) -> str | None:
    data = text.encode("utf-8")
    if repo.read_head(period.rel_path) == data:
        return None
    how = ("Model", report.model) if report.model else ("Rule", "extractive")
    message = (
        f"memory: summarize {period.name}\n\n"
        f"Wrote {period.rel_path}: {report.bullets} bullets from {report.entries} entries "
        f"({period.start.isoformat()}..{period.end.isoformat()}), {report.visibility}.\n\n"
        f"Period: {period.name}\nEntries: {report.entries}\n{how[0]}: {how[1]}\n"
    )
    return repo.commit({period.rel_path: data}, message)


def open_repo(config: Config, warnings: list[str]) -> VaultRepo | None:
    """The vault's repository, ready for a bot commit; None (with a warning) when it cannot take one."""
    from vault_tools.git import repository as gitops

    try:
        repo = gitops.VaultRepo.open(config.vault)
    except GitError as exc:
        warnings.append(f"{exc}; the summary is written without a commit")
        return None
    if repo is None:
        repo = gitops.init_repo(config.vault)
        warnings.append(f"{config.vault} was not a git repository: initialised one")
    problem = repo.in_progress()
    if problem:
        repo.close()
        raise GitError(problem)
    settings = config.heartbeat
    repo.clear_locks(
        wait_seconds=settings.lock_wait_seconds,
        grace_seconds=settings.lock_grace_seconds,
        warn=warnings.append,
    )
    blocker = repo.commit_blocker()
    if blocker:
        warnings.append(f"{blocker}; the summary is written without a commit")
        repo.close()
        return None
    return repo


#: How many summaries one heartbeat writes at most, and for how long it starts new ones: a vault's
#: first runs catch up on its history a little at a time (newest first) instead of one long run.
PER_RUN = 12
PER_RUN_SECONDS = 20.0
#: Below this many tokens left of the run's cap a summary is not worth a request: it is written offline.
MIN_MODEL_TOKENS = 2000


@dataclass
class Backlog:
    """What a heartbeat did about summaries: each period it wrote (or would) and how many wait."""

    reports: list[SummaryReport] = field(default_factory=list)
    waiting: int = 0
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    tokens_spent: bool = False  # the run's token cap ran out: later summaries were written offline


def missing_periods(config: Config, as_of: dt.date) -> list[Period]:
    """Closed weeks and months with daily notes and no summary file yet, newest first (names only)."""
    days: set[dt.date] = set()
    for path in notes.iter_note_paths(config.vault):
        kind, day = notes.classify(notes.relative_posix(path, config.vault))
        if kind == "daily" and day is not None:
            days.add(day)
    periods = closed_periods(sorted(days), as_of)
    missing = [p for p in periods if not (config.vault / p.rel_path).exists()]
    return sorted(missing, key=lambda p: (p.end, p.kind == "month"), reverse=True)


def commit_leftovers(config: Config, repo: VaultRepo) -> list[SummaryReport]:
    """Commit the bot's summaries that are written but not committed (a run killed in between)."""
    folder = config.vault / SUMMARY_DIR
    found: list[SummaryReport] = []
    for path in sorted(folder.glob("*.md")) if folder.is_dir() else []:
        kind, _day = notes.classify(notes.relative_posix(path, config.vault))
        data = path.read_bytes()
        text = data.decode("utf-8", errors="replace")
        if (
            kind != "summary"
            or edited_by_a_person(text)
            or repo.read_head(path.relative_to(config.vault).as_posix()) == data
        ):
            continue
        period = Period.parse(path.stem)
        report = SummaryReport(period.name, period.rel_path, action="written", text=text)
        front = notes.parse_front_matter(notes.split_lines(text), path, [])[0]
        report.entries = int(front.get("entries", 0) or 0)
        report.bullets = sum(1 for line in text.splitlines() if line.startswith("- "))
        report.visibility = str(front.get("visibility", "personal"))
        report.commit = commit_summary(repo, period, report, text)
        found.append(report)
    return found


def deleted_by_a_person(repo: VaultRepo, period: Period) -> bool:
    """A summary the history has but the folder has not was removed on purpose: not written again."""
    return bool(repo.run("log", "-1", "--format=%H", "--", period.rel_path, check=False).strip())


def write_missing(
    config: Config,
    as_of: dt.date,
    *,
    repo: VaultRepo | None,
    use_llm: bool,
    dry_run: bool = False,
    rules: insights.Rules | None = None,
    limit: int = PER_RUN,
    token_budget: int | None = None,
    history: VaultRepo | None = None,
) -> Backlog:
    """The heartbeat's part: the summary of each closed period that has none (at most ``limit``).

    A period with nothing a summary may draw from gets no file and is not counted. A model shares
    ``token_budget`` (what the run has left of ``llm.max_tokens_per_run``) across the summaries;
    once it is spent the rest are written offline. ``history`` (default ``repo``) is asked which
    summaries a person deleted.
    """
    backlog = Backlog()
    history = history or repo
    remaining = config.llm.max_tokens_per_run if token_budget is None else token_budget
    if repo is not None and not dry_run:
        backlog.reports += commit_leftovers(config, repo)
    periods = missing_periods(config, as_of)
    stop_at = time.monotonic() + PER_RUN_SECONDS
    for number, period in enumerate(periods):
        if len(backlog.reports) >= limit or (backlog.reports and time.monotonic() > stop_at):
            backlog.waiting = len(periods) - number  # an upper bound: some may be empty or deleted
            break
        if history is not None and deleted_by_a_person(history, period):
            continue
        model = use_llm and remaining >= MIN_MODEL_TOKENS
        if use_llm and config.llm.configured and not model and not backlog.tokens_spent:
            backlog.tokens_spent = True
        report = write_summary(
            config,
            period,
            use_llm=model,
            dry_run=dry_run,
            repo=repo,
            only_missing=True,
            rules=rules,
            token_budget=remaining,
        )
        remaining -= report.prompt_tokens + report.completion_tokens
        backlog.requests += report.requests
        backlog.prompt_tokens += report.prompt_tokens
        backlog.completion_tokens += report.completion_tokens
        if report.action in ("written", "would write"):
            backlog.reports.append(report)
    return backlog


def summarize(config: Config, options: Options | None = None) -> SummaryReport:
    """``vault-tools summarize``: the summary of one closed week or month (default: the last week)."""
    from vault_tools import locks
    from vault_tools.curation.insights import load_rules

    options = options or Options()
    as_of = options.as_of or config.today()
    period = options.period or last_closed_week(as_of)
    if not period.closed(as_of):
        raise UsageError(
            f"{period.name} runs until {period.end.isoformat()}; a summary is written once it is over "
            f"(the last closed {period.kind} is {last_closed(period.kind, as_of).name})"
        )
    if not (config.vault / "memory").is_dir():
        raise UsageError(f"{config.vault}: no memory/ folder here; is this the vault? (--vault PATH)")
    rule_warnings: list[str] = []
    rules = load_rules(config, rule_warnings)
    if options.dry_run:
        report = write_summary(config, period, use_llm=options.use_llm, dry_run=True, rules=rules)
        report.warnings[:0] = rule_warnings
        return report
    require_writable("`vault-tools summarize`", *bot_folders(config.vault))
    with locks.hold(config, LOCK_NAME, timeout=0, what="summarize"):
        warnings: list[str] = list(rule_warnings)
        repo = open_repo(config, warnings)
        try:
            report = write_summary(config, period, use_llm=options.use_llm, repo=repo, rules=rules)
        finally:
            if repo is not None:
                repo.close()
    report.warnings[:0] = warnings
    return report
