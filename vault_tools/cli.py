"""The `vault-tools` command: parse arguments, make one library call, print the result.

Errors a person can act on are :class:`VaultError`: one line on stderr (``{"error": ...}`` on
stdout under ``--json``) and the error's exit code. Libraries are imported inside the commands so
``vault-tools --help`` stays fast.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any

from vault_tools import __version__
from vault_tools.config import Config, load_config, require_vault, resolve_vault
from vault_tools.errors import VaultError

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


def config_for(args: argparse.Namespace, out: Output, *, must_exist: bool = True) -> Config:
    vault = resolve_vault(getattr(args, "vault", None))
    if must_exist:
        require_vault(vault)
    config = load_config(vault)
    for warning in config.warnings:
        out.warn(warning)
    return config


def parse_date(value: str) -> dt.date:
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a date; use YYYY-MM-DD") from None


# ---------------------------------------------------------------------------------------------
# Commands


def cmd_init(args: argparse.Namespace, out: Output) -> int:
    from vault_tools.vault import init_vault

    report = init_vault(Path(args.path).expanduser().absolute(), sample=args.sample)

    def text() -> str:
        lines = [f"Created vault at {report.vault}"]
        lines += [f"  {name}" for name in report.created]
        if report.sample:
            lines.append(f"  sample notes re-dated by {report.shifted_days:+d} days to end today")
        if report.git_initialised:
            lines.append("  initialised a git repository")
        return "\n".join(lines)

    out.result(report, text)
    return 0


def cmd_note(args: argparse.Namespace, out: Output) -> int:
    from vault_tools.vault import add_note

    config = config_for(args, out, must_exist=False)
    visibility = "private" if args.private else "shared" if args.shared else None
    report = add_note(
        config,
        " ".join(args.text),
        tags=args.tag,
        visibility=visibility,
        remember=args.remember,
        day=args.date,
    )
    out.result(report, f"{report.path}:{report.line}: {report.text}")
    return 0


def cmd_status(args: argparse.Namespace, out: Output) -> int:
    from vault_tools.vault import vault_status

    report = vault_status(config_for(args, out))

    def text() -> str:
        index = report.index
        lines = [
            f"vault:        {report.vault}",
            f"daily notes:  {report.daily_notes}",
            f"MEMORY items: {report.memory_items}",
            f"entries:      {report.entries}",
            f"index:        {index.get('summary', index.get('state', 'unknown'))}",
            f"watcher:      {report.watcher.get('summary', 'not running') if report.watcher else 'not running'}",
            f"heartbeat:    {report.heartbeat.get('summary', 'never run') if report.heartbeat else 'never run'}",
            f"git:          {report.git.get('summary', 'unknown')}",
        ]
        lines += [f"warning: {w}" for w in report.warnings]
        return "\n".join(lines)

    out.result(report, text)
    return 0


# ---------------------------------------------------------------------------------------------
# Parser


def common_options() -> argparse.ArgumentParser:
    """--vault and --json, accepted before or after the command name."""
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument("--vault", default=argparse.SUPPRESS, help="the vault folder (default: see README)")
    parent.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print JSON")
    return parent


def build_parser() -> argparse.ArgumentParser:
    common = common_options()
    parser = argparse.ArgumentParser(
        prog="vault-tools",
        description="Long-term memory for AI agents as a Markdown vault a person can read and edit.",
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"vault-tools {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def add(name: str, summary: str, handler: Handler) -> argparse.ArgumentParser:
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
    note.add_argument("--date", type=parse_date, help="the day's note to append to (YYYY-MM-DD)")

    add("status", "show the vault, its counts, index, watcher, heartbeat and git state", cmd_status)
    # Commands of the other modules register here.
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    out = Output(getattr(args, "json", False))
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
