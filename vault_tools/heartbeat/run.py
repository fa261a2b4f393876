"""The maintenance bot: promote what matters from the daily notes into MEMORY.md, prune what is stale.

Design
------
A run (:func:`run_heartbeat`) reads the daily notes of the window (the last ``days`` days up to
``as_of``), keeps the entries it has not processed yet (state in ``.vault-tools/heartbeat/``, keyed
by the entry's content hash: an edited entry is new again, an unchanged one is not), turns them into
scored insights (the offline rules of :mod:`vault_tools.curation.insights`, or one request to a language
model through :mod:`vault_tools.curation.llm` with the rules as fallback), and plans *changes*:

* **promote** an insight scoring at or above the threshold: a new item
  ``- 2026-03-10: text [importance:: 0.9] [source:: [[2026-03-10]]] ^m-3f9a2c`` under the section of
  its category (Decisions, Preferences, Lessons, Facts; an existing heading is found through a
  bilingual synonym table, so ``## 决定`` or ``## 经验`` are used as they are; a missing one is added
  in the vault's language). The block id is a hash of the sources' content hashes, so the same
  insight always gets the same id. ``todo`` insights are never promoted.
* **merge** an insight that is a near-duplicate of an existing item (see
  :func:`vault_tools.curation.similarity.near_duplicate`): its dates are added to the item's ``[source:: …]``
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
idempotent (applying one twice changes nothing) — and is its own git commit (:mod:`vault_tools.git.repository`)
with the bot's identity, a message ``memory: promote "…"`` and trailers (Source, Score, Rule or Model,
Block). The commit holds HEAD's version of each file plus only the change, so a person's uncommitted
edits to MEMORY.md stay uncommitted (the report says so); a change that cannot be applied to HEAD's
version (it touches lines a person has not committed) is skipped and tried again next run. When
MEMORY.md has uncommitted edits saved less than ``quiet_seconds`` ago, the run first waits (at most
that long) for the person to finish. A run curates at most ``max_new_entries`` new entries (the
earliest); the rest of a huge note waits for the next runs (``State.backlog``, a warning names the
files), so a run's time and memory stay bounded. A repository in the middle of a merge, rebase, cherry-pick,
revert or bisect is not touched at all: the run stops with :class:`GitError`.

Crash safety: before writing anything the run records its plan in a journal
(``.vault-tools/heartbeat/journal.json``); then each file is written once with all the changes
(atomic, conflict-checked splices; the archive before MEMORY.md, so a pruned item is never lost),
each change is committed, and at the end the state is saved and the journal removed. The next run
replays a journal it finds: ops are idempotent and "already committed" is seen by comparing with
HEAD, so a run killed at any point is finished without duplicates. Changes that could not be
committed (a detached HEAD) stay in the journal and are committed by the
next run. One heartbeat at a time: the ``heartbeat`` lock.

Where the parts live (every public name is also importable from here):

* :mod:`vault_tools.heartbeat.plan`: what to promote, merge and prune (insights, decisions)
* :mod:`vault_tools.heartbeat.edits`: MEMORY.md's sections and items, the line splices, writing them
* :mod:`vault_tools.heartbeat.commits`: one git commit per change, around a person's edits
* :mod:`vault_tools.heartbeat.state`: state, journal and run records under ``.vault-tools/heartbeat/``
* :mod:`vault_tools.heartbeat.report`: what a run reports
* :mod:`vault_tools.heartbeat.undo`: ``vault-tools undo``
* this module: the run itself (lock, resume, plan, write, commit, finish) and the dry run
"""

from __future__ import annotations

import contextlib
import datetime as dt
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vault_tools import locks
from vault_tools.config import (
    HEARTBEAT_JOURNAL,
    Config,
    HeartbeatConfig,
    bot_folders,
    heartbeat_dir,
    require_writable,
)
from vault_tools.curation import insights
from vault_tools.errors import GitError, UsageError, VaultError
from vault_tools.feedback import SILENT, Bar, Feedback
from vault_tools.heartbeat.commits import (
    Committer,
    execute,
)
from vault_tools.heartbeat.edits import (
    MEMORY_PATH,
    Change,
    Simulation,
)
from vault_tools.heartbeat.plan import (
    Context,
    Plan,
    plan_run,
)
from vault_tools.heartbeat.report import (
    HeartbeatReport,
    Progress,
)
from vault_tools.heartbeat.state import (
    LOCK_NAME,
    STATE_VERSION,
    State,
    read_json,
    rebuild_registry,
    write_json,
    write_run_records,
)
from vault_tools.notes import edit as note_edit

if TYPE_CHECKING:  # git is imported only when a run needs it
    from vault_tools.git.repository import VaultRepo


@dataclass
class Options:
    days: int | None = None
    threshold: float | None = None
    as_of: dt.date | None = None
    dry_run: bool = False
    use_llm: bool = True
    if_due: bool = False
    feedback: Feedback = SILENT  # waits said at once, progress bars (the command: on a terminal)


# ---------------------------------------------------------------------------------------------
# The run


def make_context(
    config: Config, options: Options, warnings: list[str] | None = None, feedback: Feedback = SILENT
) -> Context:
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
        rules=insights.load_rules(config, warnings),
        settings=settings,
        use_llm=options.use_llm,
        feedback=feedback,
    )


def not_due(config: Config, state: State, now: dt.datetime) -> str | None:
    if not state.last_success or state.backlog:
        return None  # never ran, or the last run left new entries for the next: due now
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
    ``options.feedback`` hears at once of a wait, and draws the bars (reading, planning, committing).
    Raises LockedError when another heartbeat runs, GitError when the repository is mid-merge.
    """
    options = options or Options()
    rule_warnings: list[str] = []
    ctx = make_context(config, options, rule_warnings, options.feedback)
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
        require_writable("`vault-tools heartbeat`", *bot_folders(config.vault))
        run_locked(ctx, state, report, CommitCounter(step, ctx.feedback))
    report.seconds = round(time.monotonic() - started, 3)
    write_run_records(config, report)
    return report


class CommitCounter:
    """``step`` that also advances a "committing" bar for each commit step it hears."""

    def __init__(self, step: Progress, feedback: Feedback) -> None:
        self.step = step
        self.feedback = feedback
        self.bar: Bar | None = None

    def __call__(self, name: str) -> None:
        self.step(name)
        if name == "journal" or (self.bar is None and name.startswith("committed ")):
            self.close()
            self.bar = self.feedback.bar(None, "committing", "commit")
        if self.bar is not None and name.startswith("committed "):
            self.bar.update(1)
        elif name == "state":
            self.close()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def run_locked(ctx: Context, state: State, report: HeartbeatReport, step: Progress) -> None:
    for folder in (ctx.vault, ctx.vault / "memory", ctx.vault / "memory" / "archive"):
        for leftover in note_edit.remove_dead_temps(folder):
            report.warnings.append(f"removed {leftover}: a write that was killed left it")
    repo, blocker = open_repo(ctx.vault, report, ctx.settings, ctx.feedback)
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
        if ctx.settings.summaries:
            summarize_closed(ctx, repo if committer.can_commit else None, report, step)
        if report.commits:
            sync_if_configured(ctx, repo, report, "after the commits")
    finally:
        if repo is not None:
            repo.close()


def summarize_closed(
    ctx: Context,
    repo: VaultRepo | None,
    report: HeartbeatReport,
    step: Progress,
    *,
    dry_run: bool = False,
    history: VaultRepo | None = None,
) -> None:
    """Write the summary of every closed week and month that has none yet, each its own commit.

    Without a commit possible (no repository, a detached HEAD) none is written: the next run
    writes and commits them. A model shares what the run has left of ``llm.max_tokens_per_run``.
    A summary failing is a warning; the run's other work stands.
    """
    from vault_tools.summaries import write as summaries

    if repo is None and not dry_run:
        return
    spent = report.tokens["prompt"] + report.tokens["completion"]
    try:
        backlog = summaries.write_missing(
            ctx.config,
            ctx.as_of,
            repo=repo,
            use_llm=ctx.use_llm,
            dry_run=dry_run,
            rules=ctx.rules,
            token_budget=ctx.config.llm.max_tokens_per_run - spent,
            history=history,
        )
    except VaultError as exc:  # a conflict, git, a summaries folder linked out of the vault
        report.warnings.append(f"summaries not written: {exc}")
        return
    report.requests += backlog.requests
    report.tokens["prompt"] += backlog.prompt_tokens
    report.tokens["completion"] += backlog.completion_tokens
    for written in backlog.reports:
        keys = ("period", "path", "action", "entries", "bullets", "visibility", "mode", "model", "commit")
        report.summaries.append({key: getattr(written, key) for key in keys})
        report.warnings += [f"summary {written.period}: {w}" for w in written.warnings]
        if written.commit:
            report.commits.append(written.commit)
        step(f"summarized {written.period}")
    if backlog.tokens_spent:
        report.warnings.append(
            "the run's token cap (llm.max_tokens_per_run) ran out: later summaries are offline"
        )
    if backlog.waiting:
        report.warnings.append(
            f"{backlog.waiting} more closed week(s)/month(s) may still need a summary; the next runs write them"
        )


def open_repo(
    vault: Path, report: HeartbeatReport, settings: HeartbeatConfig, feedback: Feedback = SILENT
) -> tuple[VaultRepo | None, str | None]:
    from vault_tools.git import repository as gitops

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
            waiting=feedback.say,
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
    journal = read_json(heartbeat_dir(ctx.config) / HEARTBEAT_JOURNAL)
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
        state.backlog = report.deferred
    state.save(ctx.config, keep_after=ctx.start - dt.timedelta(days=31))
    journal = heartbeat_dir(ctx.config) / HEARTBEAT_JOURNAL
    if uncommitted:
        write_json(journal, {"version": STATE_VERSION, "changes": [c.to_dict() for c in uncommitted]})
        report.pending_commits = len(uncommitted)
    else:
        with contextlib.suppress(FileNotFoundError):
            journal.unlink()


def write_journal(config: Config, changes: Sequence[Change], plan: Plan) -> None:
    write_json(
        heartbeat_dir(config) / HEARTBEAT_JOURNAL,
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
    shown = 0  # whole seconds the bar shows
    bar: Bar | None = None
    while waited < quiet:
        age = time.time() - path.stat().st_mtime
        if age >= quiet:
            break
        if bar is None:
            ctx.feedback.say(quiet_wait_message(age, quiet))
            bar = ctx.feedback.bar(round(quiet), "waiting for MEMORY.md", "s", delay=0)
        pause = min(quiet - age, quiet - waited, 1.0)
        time.sleep(max(pause, 0.05))
        waited += max(pause, 0.05)
        bar.update(round(waited) - shown)
        shown = round(waited)
    if bar is not None:
        bar.close()
    if waited:
        report.warnings.append(f"waited {waited:.0f} s for recent edits to MEMORY.md to settle")


def quiet_wait_message(age: float, quiet: float) -> str:
    """What the heartbeat says when it starts waiting for a person's edit of MEMORY.md to settle."""
    age = max(0.0, age)  # a clock set back, or a file saved "in the future"
    left = max(1, math.ceil(quiet - age))
    return (
        f"waiting for MEMORY.md to be quiet: saved {age:.0f} s ago and not committed yet; "
        f"the heartbeat writes once it has been quiet for {quiet:g} s (up to {left} s more)…"
    )


def sync_if_configured(ctx: Context, repo: VaultRepo | None, report: HeartbeatReport, when: str) -> None:
    """With ``[heartbeat] push = true``: bring the remote's commits in and push (:mod:`vault_tools.git.sync`).

    A failure (offline, a person's edits in the way) is a warning: the run works on, and the next
    sync pushes the local commits.
    """
    if not ctx.settings.push or repo is None:
        return
    from vault_tools.git import sync

    result = sync.SyncReport()
    try:
        sync.recover(repo, ctx.config, report.warnings)
        sync.sync_repo(repo, ctx.config, result)
    except GitError as exc:
        report.warnings.append(f"sync {when}: {exc}")
    report.warnings += [f"sync {when}: dropped {why}" for why in result.dropped] + result.warnings


def dry_run(ctx: Context, report: HeartbeatReport, started: float) -> HeartbeatReport:
    """Plan as a run would and print the diff; write nothing (no state, no journal, no commit)."""
    from vault_tools.git import repository as gitops

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
        journal = read_json(heartbeat_dir(ctx.config) / HEARTBEAT_JOURNAL)
        pending = [Change.from_dict(c) for c in (journal or {}).get("changes", [])]
        sim = Simulation(ctx.vault, lambda path: repo.read_head(path) if repo is not None else None)
        for change in pending:
            sim.try_apply(change.ops)
        plan = plan_run(ctx, state, sim, report, pending)
        if ctx.settings.summaries:
            summarize_closed(ctx, None, report, lambda _name: None, dry_run=True, history=repo)
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
