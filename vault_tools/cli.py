"""The `vault-tools` command: parse arguments, make one library call, print the result.

Errors a person can act on are :class:`VaultError`: one line on stderr (``{"error": ...}`` on
stdout under ``--json``) and the error's exit code. Libraries are imported inside the commands so
``vault-tools --help`` stays fast.
"""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import gc
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, is_dataclass
from pathlib import Path

from vault_tools import __version__
from vault_tools.config import Config, load_config, require_vault, resolve_vault
from vault_tools.errors import NotWritableError, UsageError, VaultError

TYPE_CHECKING = False  # typing is not imported on the served path (see config.py)
if TYPE_CHECKING:
    from typing import Any, NoReturn

    from vault_tools.recall.when import Role

Handler = Callable[[argparse.Namespace, "Output"], int]


class Output:
    """Where a command's result goes: text for people, JSON for programs; warnings on stderr."""

    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json

    def result(self, data: Any, text: str | Callable[[], str]) -> None:
        if self.as_json:
            print(json.dumps(to_jsonable(data), ensure_ascii=False, indent=2))
        else:
            rendered = text() if callable(text) else text
            if rendered:
                print(rendered)

    def warn(self, message: str) -> None:
        print(f"warning: {message}", file=sys.stderr)

    def result_warnings(self, warnings: Sequence[str]) -> None:
        """A result's own warnings: on stderr for people; under --json they are in the document."""
        if not self.as_json:
            for message in warnings:
                self.warn(message)

    def error(self, message: str) -> None:
        if self.as_json:
            print(json.dumps({"error": message}, ensure_ascii=False))
        else:
            print(f"Error: {message}", file=sys.stderr)


def to_jsonable(data: Any) -> Any:
    if hasattr(data, "to_dict"):
        return to_jsonable(data.to_dict())
    if is_dataclass(data) and not isinstance(data, type):
        return to_jsonable(asdict(data))
    if isinstance(data, dict):
        return {str(k): to_jsonable(v) for k, v in data.items()}
    if isinstance(data, (list, tuple, set)):
        return [to_jsonable(v) for v in data]
    if isinstance(data, (dt.date, dt.time, Path)):
        return data.isoformat() if not isinstance(data, Path) else data.as_posix()
    return data


def config_for(args: argparse.Namespace, out: Output) -> Config:
    vault = resolve_vault(getattr(args, "vault", None))
    require_vault(vault)
    config = load_config(vault)
    for warning in config.warnings:
        out.warn(warning)
    return config


AS_OF_HELP = "treat this day as today: YYYY-MM-DD, yesterday, 3 days ago, 上周五; a period (last week, 三月): its last day"


def when_type(role: Role) -> Callable[[str], str]:
    """The argparse ``type`` of a WHEN option: a form no day can be read from is a usage error at
    once (exit 2, before any vault is opened); the text is resolved later, against the vault's today."""

    def check(value: str) -> str:
        from vault_tools.recall.when import parse_day

        try:
            parse_day(value, dt.date.today(), role, option="")
        except UsageError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
        return value

    return check


def when(value: str | None, config: Config, role: Role, today: dt.date | None = None) -> dt.date | None:
    """A WHEN argument as a day (:mod:`vault_tools.recall.when`), relative to ``today`` (the vault's)."""
    if value is None:
        return None
    from vault_tools.recall.when import parse_day

    return parse_day(value, today or config.today(), role)


# ---------------------------------------------------------------------------------------------
# Commands


def cmd_init(args: argparse.Namespace, out: Output) -> int:
    from vault_tools.agents.vault import init_vault

    report = init_vault(Path(args.path).expanduser().absolute(), sample=args.sample)

    def text() -> str:
        lines = [f"Created vault at {report.vault}"]
        lines += [f"  {name}" for name in report.created]
        if report.sample:
            lines.append(f"  sample notes re-dated by {report.shifted_days:+d} days to end today")
        if report.git_initialised:
            lines.append("  initialised a git repository")
        if report.commit:
            lines.append(f"  committed them ({report.commit[:10]})")
        return "\n".join(lines)

    out.result(report, text)
    return 0


def cmd_note(args: argparse.Namespace, out: Output) -> int:
    from vault_tools.agents.vault import add_note

    config = config_for(args, out)
    visibility = "private" if args.private else "shared" if args.shared else None
    report = add_note(
        config,
        " ".join(args.text),
        tags=args.tag,
        visibility=visibility,
        remember=args.remember,
        day=when(args.date, config, "date"),
    )
    out.result(report, f"{report.absolute_path}:{report.line}: {report.text}")
    return 0


def cmd_status(args: argparse.Namespace, out: Output) -> int:
    from vault_tools.agents.vault import vault_status

    report = vault_status(config_for(args, out))

    def text() -> str:
        index = report.index
        lines = [
            f"vault:        {report.vault}",
            f"daily notes:  {report.daily_notes}",
            f"MEMORY items: {report.memory_items}",
            f"entries:      {report.entries}",
            f"summaries:    {summaries_line(report.summaries)}",
            f"index:        {index.get('summary', index.get('state', 'unknown'))}",
            f"watcher:      {report.watcher.get('summary', 'not running') if report.watcher else 'not running'}",
            f"heartbeat:    {report.heartbeat.get('summary', 'never run') if report.heartbeat else 'never run'}",
            f"git:          {report.git.get('summary', 'unknown')}",
        ]
        if report.embeddings:
            lines.append(f"embeddings:   {report.embeddings.get('summary', '')}")
        lines += [f"warning: {w}" for w in report.warnings]
        return "\n".join(lines)

    out.result(report, text)
    return 0


def summaries_line(summaries: dict[str, Any]) -> str:
    """``3 (latest week 2026-W48, month 2026-11)`` for status."""
    latest = [
        f"{kind} {summaries[key]}"
        for kind, key in (("week", "latest_week"), ("month", "latest_month"))
        if summaries.get(key)
    ]
    return f"{summaries.get('count', 0)}" + (f" (latest {', '.join(latest)})" if latest else "")


def without_cycle_collection(handler: Handler) -> Handler:
    """Run a one-shot command with Python's cycle collector paused, as Mercurial's ``nogc`` does.

    Importing Whoosh and our modules and scoring a query allocate enough container objects to
    set off ~50 collections, 20-40 ms of a fresh ``recall`` that find almost nothing: what a
    short process allocates is freed by reference counting or by its exit. Restored after, so a
    caller of :func:`main` in a long-lived process keeps its collector.
    """

    @functools.wraps(handler)
    def run(args: argparse.Namespace, out: Output) -> int:
        enabled = gc.isenabled()
        gc.disable()
        try:
            return handler(args, out)
        finally:
            if enabled:
                gc.enable()

    return run


@without_cycle_collection
def cmd_recall(args: argparse.Namespace, out: Output) -> int:
    config = config_for(args, out)
    query = " ".join(args.query)
    params: dict[str, Any] = {
        "query": query,
        "limit": args.limit if args.limit is not None else config.recall.limit,
        "since": args.since,
        "until": args.until,
        "tags": list(args.tag),
        "chat": args.chat if args.chat is not None else config.recall.chat,
        "max_tokens": args.max_tokens if args.max_tokens is not None else config.recall.max_tokens,
        "explain": args.explain,
        "include_private": args.include_private,
        "mode": args.mode,
    }
    color = sys.stdout.isatty()
    today = when(args.as_of, config, "as_of")
    served_as_of = (today or config.today()).isoformat()
    if served(config, out, "recall", {**params, "as_of": served_as_of, "render": {"color": color}}):
        return 0
    from vault_tools.recall.recall import recall

    result = recall(config, **params, as_of=today)
    out.result_warnings(result.warnings)
    out.result(result, lambda: result.render(color=color, explain=args.explain))
    start_service(config)
    return 0


@without_cycle_collection
def cmd_context(args: argparse.Namespace, out: Output) -> int:
    config = config_for(args, out)
    chat = args.chat if args.chat is not None else config.recall.chat
    params: dict[str, Any] = {"chat": chat, "max_tokens": args.max_tokens}
    today = when(args.as_of, config, "as_of")
    if served(config, out, "context", {**params, "as_of": (today or config.today()).isoformat()}):
        return 0
    from vault_tools.agents.context import build_context

    result = build_context(config, **params, as_of=today)
    out.result_warnings(result.warnings)
    out.result(result, result.render)
    start_service(config)
    return 0


def served(config: Config, out: Output, op: str, params: dict[str, Any]) -> bool:
    """Print the running watcher's answer (vault_tools.watch.service); False when there is none."""
    if not config.recall.service:
        return False
    from vault_tools.watch.service import ask

    answer = ask(config, op, params)
    if answer is None:
        return False
    out.result_warnings(answer["warnings"])
    out.result(answer["result"], answer["text"])
    return True


def start_service(config: Config) -> None:
    """After an in-process answer: start a watcher so the next calls are served (service.py)."""
    if config.recall.service and config.recall.autostart_minutes > 0:
        sys.stdout.flush()
        from vault_tools.watch.service import start_in_background

        start_in_background(config)


def cmd_index(args: argparse.Namespace, out: Output) -> int:
    from vault_tools.index.index import Index

    idx = Index(config_for(args, out))
    progress = not out.as_json and not getattr(args, "quiet", False)
    report = (
        idx.rebuild(progress=progress) if args.rebuild else idx.reconcile(progress=progress, optimize=True)
    )
    config = idx.config
    if config.embeddings.configured:
        from vault_tools.vectors.fill import fill_vault

        vectors = fill_vault(config, progress=progress)
        if vectors.error:
            report.warnings.append(f"embeddings: {vectors.summary()}")
        elif not out.as_json:
            print(f"embeddings: {vectors.summary()}", file=sys.stderr)
    out.result_warnings(report.warnings)
    out.result(report, report.summary)
    return 0


def cmd_doctor(args: argparse.Namespace, out: Output) -> int:
    from vault_tools.index.index import Index

    config = config_for(args, out)
    report = Index(config).doctor(fix=args.fix)
    if not config.embeddings.configured:
        out.result(report, report.summary)
        return 0 if report.ok else 1
    from vault_tools.vectors.status import vector_doctor

    vectors = vector_doctor(config, fix=args.fix, index_readable=report.problem is None)
    out.result(
        {**report.to_dict(), "embeddings": vectors.to_dict()},
        lambda: f"{report.summary()}\n{vectors.summary()}",
    )
    return 0 if report.ok and vectors.ok else 1


def cmd_watch(args: argparse.Namespace, out: Output) -> int:
    import logging

    from vault_tools.config import check_positive
    from vault_tools.watch.watcher import WatchOptions, run_watch

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)
    check_positive("--reconcile-seconds", args.reconcile_seconds)
    if args.idle_exit and not args.serve:
        raise UsageError("--idle-exit counts recall requests, so it cannot go with --no-serve")
    options = WatchOptions(
        reconcile_seconds=args.reconcile_seconds,
        debounce_ms=max(0, args.debounce_ms),
        serve=args.serve,
        idle_exit_seconds=max(0.0, args.idle_exit),
    )
    state = run_watch(config_for(args, out), options=options)
    out.result(state, "stopped")
    return 0


def cmd_mcp(args: argparse.Namespace, out: Output) -> int:
    from vault_tools.agents.mcp import serve
    from vault_tools.privacy.rules import parse_chat

    serve(config_for(args, out), parse_chat(args.chat))
    return 0


def cmd_export(args: argparse.Namespace, out: Output) -> int:
    from vault_tools.agents.export import export_entries, write_export

    if out.as_json and args.jsonl:
        raise UsageError("choose one of --json (one document) and --jsonl (one entry per line)")
    config = config_for(args, out)
    since, until = when(args.since, config, "since"), when(args.until, config, "until")
    result = export_entries(config, since=since, until=until, chat=args.chat)
    for warning in result.warnings:
        out.warn(warning)
    if args.output:
        write_export(result, Path(args.output), as_json=out.as_json)
        print(f"exported {len(result.entries)} entries to {args.output}", file=sys.stderr)
    elif out.as_json:
        out.result(result, "")
    else:
        for line in result.jsonl():
            print(line)
    return 0


def cmd_import(args: argparse.Namespace, out: Output) -> int:
    from vault_tools.agents.importer import import_file

    roles = [r for r in args.roles.split(",") if r.strip()]
    report = import_file(
        config_for(args, out), args.file, roles=roles, dry_run=args.dry_run, commit=not args.no_commit
    )
    out.result_warnings(report.warnings)
    out.result(report, report.summary)
    return 0


def cmd_heartbeat(args: argparse.Namespace, out: Output) -> int:
    from vault_tools.feedback import Feedback
    from vault_tools.heartbeat.run import Options, run_heartbeat

    config = config_for(args, out)
    options = Options(
        days=args.days,
        threshold=args.threshold,
        as_of=when(args.as_of, config, "as_of"),
        dry_run=args.dry_run,
        use_llm=not args.no_llm,
        if_due=args.if_due,
    )
    options.feedback = Feedback.for_command(as_json=out.as_json, quiet=getattr(args, "quiet", False))
    report = run_heartbeat(config, options)
    out.result(report, report.render)
    return 0


def cmd_summarize(args: argparse.Namespace, out: Output) -> int:
    from vault_tools.summaries.text import Period
    from vault_tools.summaries.write import Options, summarize

    period = Period.parse(args.week or args.month) if (args.week or args.month) else None
    config = config_for(args, out)
    as_of = when(args.as_of, config, "as_of")
    options = Options(period=period, as_of=as_of, use_llm=not args.no_llm, dry_run=args.dry_run)
    report = summarize(config, options)
    out.result(report, report.render)
    return 0


def cmd_upcoming(args: argparse.Namespace, out: Output) -> int:
    from vault_tools.recall.upcoming import find_upcoming

    config = config_for(args, out)
    as_of = when(args.as_of, config, "as_of")
    result = find_upcoming(
        config, days=args.days, as_of=as_of, chat=args.chat, include_private=args.include_private
    )
    out.result_warnings(result.warnings)
    out.result(result, result.render)
    return 0


def cmd_sync(args: argparse.Namespace, out: Output) -> int:
    from vault_tools.git.sync import run_sync

    report = run_sync(config_for(args, out))
    out.result(report, report.render)
    return 0


def cmd_undo(args: argparse.Namespace, out: Output) -> int:
    from vault_tools.heartbeat.undo import undo

    report = undo(config_for(args, out), args.commit)
    out.result(report, report.render)
    return 0


def cmd_schedule(args: argparse.Namespace, out: Output) -> int:
    from vault_tools.heartbeat.schedule import render

    config = config_for(args, out)
    text = render(args.print, config.vault, interval_hours=config.heartbeat.interval_hours)
    out.result({"kind": args.print, "text": text}, text.rstrip("\n"))
    return 0


# ---------------------------------------------------------------------------------------------
# Parser


class CommandLineError(UsageError):
    """What argparse would print and exit 2 for, raised so ``main`` can say it as JSON too."""

    def __init__(self, parser: argparse.ArgumentParser, message: str) -> None:
        super().__init__(message)
        self.parser = parser


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is raised (:class:`CommandLineError`), not printed and exited."""

    def error(self, message: str) -> NoReturn:
        raise CommandLineError(self, message)


def wants_json(argv: Sequence[str]) -> bool:
    """Whether --json was given (before a ``--``): how to report a command line that did not parse."""
    words = list(argv)
    return "--json" in (words[: words.index("--")] if "--" in words else words)


def common_options() -> Parser:
    """--vault, --json and --quiet, accepted before or after the command name."""
    parent = Parser(add_help=False)
    parent.add_argument("--vault", default=argparse.SUPPRESS, help="the vault folder (default: see README)")
    parent.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print JSON")
    parent.add_argument(
        "--quiet", action="store_true", default=argparse.SUPPRESS, help="no progress bars or waiting notices"
    )
    return parent


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line, or (``only``) the top level and that one command.

    Making every command's parser is a few ms of an agent's served ``recall``, which needs one.
    """
    common = common_options()
    parser = Parser(
        prog="vault-tools",
        description="Long-term memory for AI agents as a Markdown vault a person can read and edit.",
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"vault-tools {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    unused = argparse.ArgumentParser(add_help=False, conflict_handler="resolve")  # takes the others' options

    def add(name: str, summary: str, handler: Handler) -> argparse.ArgumentParser:
        if only is not None and name != only:
            return unused
        command = sub.add_parser(name, help=summary, description=summary, parents=[common])
        command.set_defaults(handler=handler)
        return command

    init = add("init", "create a vault (MEMORY.md, memory/, .gitignore, git repo)", cmd_init)
    init.add_argument("path", help="folder to create the vault in")
    init.add_argument("--sample", action="store_true", help="copy the sample vault, re-dated to end today")

    note = add("note", "append an entry to today's daily note (how an agent writes memory)", cmd_note)
    note.add_argument("text", nargs="+", help="what to remember")
    note.add_argument("--tag", action="append", default=[], metavar="T", help="add #T (repeatable)")
    who = note.add_mutually_exclusive_group()
    who.add_argument("--private", action="store_true", help="mark #private: never leaves this machine")
    who.add_argument("--shared", action="store_true", help="mark #shared: may be recalled in group chats")
    note.add_argument(
        "--remember", action="store_true", help="mark #remember: may be promoted even if sensitive"
    )
    note.add_argument(
        "--date",
        type=when_type("date"),
        metavar="WHEN",
        help="the day's note to append to: YYYY-MM-DD, yesterday, 3 days ago, 昨天 (one day, not a period)",
    )

    add("status", "show the vault, its counts, index, watcher, heartbeat and git state", cmd_status)
    recall = add("recall", "find the entries that answer a question about the past", cmd_recall)
    recall.add_argument("query", nargs="*", help="the question or keywords; may hold #tags and time words")
    recall.add_argument("--limit", type=int, metavar="N", help="at most N results (default: config, 10)")
    # recall reads its own --since/--until (against its --as-of, the same served or in-process)
    recall.add_argument(
        "--since",
        metavar="WHEN",
        help="from this date: 2026-03-01, 7d, yesterday, last week, 上周 (a period: its first day)",
    )
    recall.add_argument(
        "--until",
        metavar="WHEN",
        help="up to this date (same forms; a period: its last day)",
    )
    recall.add_argument("--tag", action="append", default=[], metavar="T", help="only #T and tags under it")
    recall.add_argument("--max-tokens", type=int, metavar="N", help="fit the results into N tokens")
    recall.add_argument("--explain", action="store_true", help="show each score's parts")
    recall.add_argument(
        "--mode",
        choices=("keyword", "semantic", "hybrid"),
        help="keyword, semantic or hybrid (default: hybrid with [embeddings] configured, else keyword)",
    )
    recall.add_argument(
        "--include-private",
        action="store_true",
        help="also show #private entries (direct chat, for a person at this machine; never for an agent)",
    )
    context = add(
        "context", "what an agent loads at session start: MEMORY.md and the last two days", cmd_context
    )
    context.add_argument("--max-tokens", type=int, default=2000, metavar="N", help="budget (default 2000)")
    for command in (recall, context):
        command.add_argument(
            "--chat",
            metavar="CHAT",
            help="direct, group or unknown (default: $VAULT_TOOLS_CHAT, else direct)",
        )
        command.add_argument("--as-of", type=when_type("as_of"), metavar="WHEN", help=AS_OF_HELP)
    index = add("index", "bring the search index up to date with the notes (only what changed)", cmd_index)
    index.add_argument("--rebuild", action="store_true", help="start from nothing")
    doctor = add("doctor", "compare the notes on disk with the index; --fix repairs", cmd_doctor)
    doctor.add_argument("--fix", action="store_true", help="rebuild or re-index what is wrong")
    watch = add("watch", "keep the index current while the vault is edited (Ctrl-C stops)", cmd_watch)
    watch.add_argument(
        "--reconcile-seconds", type=float, default=120.0, metavar="N", help="full check every N s (120)"
    )
    watch.add_argument("--debounce-ms", type=int, default=150, metavar="N", help="quiet time before indexing")
    watch.add_argument(
        "--no-serve",
        dest="serve",
        action="store_false",
        help="do not answer recall/context from a warm searcher on .vault-tools/recall.sock",
    )
    watch.add_argument(
        "--idle-exit",
        type=float,
        default=0.0,
        metavar="N",
        help="exit after N s without a recall request (how recall starts one; 0: never)",
    )
    mcp = add("mcp", "serve memory to an agent over MCP (stdio): search, get, note, context", cmd_mcp)
    mcp.add_argument(
        "--chat",
        required=True,
        choices=("direct", "group", "unknown"),
        help="the chat this server answers for, fixed for its life: group/unknown see only #shared",
    )
    export = add("export", "write every entry as JSON lines (or one JSON document with --json)", cmd_export)
    export.add_argument("--jsonl", action="store_true", help="one JSON object per line (the default)")
    export.add_argument(
        "--since",
        type=when_type("since"),
        metavar="WHEN",
        help="only entries on or after: 2026-03-01, 7d, last week, 上周 (a period: its first day)",
    )
    export.add_argument(
        "--until",
        type=when_type("until"),
        metavar="WHEN",
        help="only entries on or before (same forms; a period: its last day)",
    )
    export.add_argument(
        "--chat", metavar="CHAT", help="only what this chat may see (default: everything, #private included)"
    )
    export.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    imp = add(
        "import", "add entries from JSON lines (export, mem0, lancedb, chat logs); one commit", cmd_import
    )
    imp.add_argument("file", metavar="FILE", help="the file to import, or - for standard input")
    imp.add_argument(
        "--roles", default="user", metavar="R,R", help="chat-log roles to import (default: user)"
    )
    imp.add_argument("--dry-run", action="store_true", help="say what would be imported; write nothing")
    imp.add_argument("--no-commit", action="store_true", help="write the notes but do not commit them")
    beat = add(
        "heartbeat", "promote what matters from recent notes into MEMORY.md; prune; commit", cmd_heartbeat
    )
    beat.add_argument("--days", type=int, metavar="N", help="look at the last N days (default 7)")
    beat.add_argument("--threshold", type=float, metavar="X", help="promote at or above this score (0.7)")
    beat.add_argument(
        "--as-of",
        type=when_type("as_of"),
        metavar="WHEN",
        help="the last day of the window (today): " + AS_OF_HELP.split(": ", 1)[1],
    )
    beat.add_argument("--dry-run", action="store_true", help="print the diff it would make; change nothing")
    beat.add_argument("--no-llm", action="store_true", help="use the offline rules even if a model is set up")
    beat.add_argument(
        "--if-due", action="store_true", help="run only if the last run is older than the interval"
    )
    summary = add(
        "summarize", "write the summary of a closed week or month (memory/summaries/); commit", cmd_summarize
    )
    which = summary.add_mutually_exclusive_group()
    which.add_argument(
        "--week", metavar="YYYY-Www", help="the week to summarize, e.g. 2026-W10 (default: last week)"
    )
    which.add_argument("--month", metavar="YYYY-MM", help="the month to summarize, e.g. 2026-03")
    summary.add_argument("--as-of", type=when_type("as_of"), metavar="WHEN", help=AS_OF_HELP)
    summary.add_argument(
        "--no-llm", action="store_true", help="use the offline rules even if a model is set up"
    )
    summary.add_argument(
        "--dry-run", action="store_true", help="print the summary it would write; change nothing"
    )
    upcoming = add(
        "upcoming",
        "items whose date is still ahead (tomorrow, next Wednesday, 3月14日), soonest first",
        cmd_upcoming,
    )
    upcoming.add_argument("--days", type=int, default=14, metavar="N", help="look N days ahead (default 14)")
    upcoming.add_argument("--as-of", type=when_type("as_of"), metavar="WHEN", help=AS_OF_HELP)
    upcoming.add_argument(
        "--chat", metavar="CHAT", help="direct, group or unknown (default: $VAULT_TOOLS_CHAT, else direct)"
    )
    upcoming.add_argument(
        "--include-private",
        action="store_true",
        help="also show #private items (direct chat, for a person at this machine; never for an agent)",
    )
    add("sync", "fetch the remote's commits, bring them in (your text wins), push; never forces", cmd_sync)
    undo = add("undo", "revert one heartbeat commit with a new commit", cmd_undo)
    undo.add_argument("commit", metavar="COMMIT", help="the bot commit to revert (sha or ref)")
    schedule = add(
        "schedule", "print a cron line, systemd units or a launchd agent that run the heartbeat", cmd_schedule
    )
    schedule.add_argument(
        "--print",
        choices=("cron", "systemd", "launchd"),
        required=True,
        help="which to print (systemd: Linux; launchd: macOS; cron: both)",
    )
    # Commands of the other modules register here.
    if only is not None and only not in sub.choices:
        return build_parser()  # not a command: the whole parser says which ones there are
    return parser


def command_named(argv: Sequence[str]) -> str | None:
    """The command word of ``argv`` (the first word that is not an option or --vault's value)."""
    words = iter(argv)
    for word in words:
        if word == "--vault":
            next(words, None)
        elif word == "--":
            return next(words, None)
        elif not word.startswith("-"):
            return word
    return None


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(only=command_named(argv))
    try:
        args = parser.parse_args(argv)
    except CommandLineError as exc:
        if wants_json(argv):
            Output(as_json=True).error(str(exc))
        else:  # as argparse says it
            exc.parser.print_usage(sys.stderr)
            print(f"{exc.parser.prog}: error: {exc}", file=sys.stderr)
        return exc.exit_code
    out = Output(getattr(args, "json", False))
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        if out.as_json:
            out.error("no command given; `vault-tools --help` lists them")
        else:
            parser.print_help()
        return 2
    try:
        return handler(args, out)
    except VaultError as exc:
        out.error(str(exc))
        return exc.exit_code
    except KeyboardInterrupt:
        out.error("interrupted")
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:  # a write the checks up front did not foresee (a folder made read-only since)
        refused = NotWritableError.from_os_error(exc, f"`vault-tools {args.command}`")
        if refused is None:
            raise
        out.error(str(refused))
        return refused.exit_code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
