"""The heartbeat's state, journal and run records under ``.vault-tools/heartbeat/``.

Disposable: the files are the truth, and the state is rebuilt from the bot's commits when lost.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vault_tools.config import Config, heartbeat_dir
from vault_tools.heartbeat.edits import item_text
from vault_tools.heartbeat.report import HeartbeatReport
from vault_tools.locks import HEARTBEAT_LOCK
from vault_tools.notes import edit as note_edit

if TYPE_CHECKING:  # git is imported only when a run needs it
    from vault_tools.git.repository import VaultRepo


STATE_FILE = "state.json"
LAST_RUN_FILE = "last-run.json"
RUNS_LOG = "runs.jsonl"
STATE_VERSION = 1
LOCK_NAME = HEARTBEAT_LOCK


# ---------------------------------------------------------------------------------------------
# State and journal (disposable: the files are the truth; the state is rebuilt from git if lost)


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
    note_edit.atomic_write(
        path, (json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True) + "\n").encode()
    )


@dataclass
class State:
    processed: dict[str, str] = field(default_factory=dict)  # content hash -> entry date
    registry: dict[str, dict[str, Any]] = field(default_factory=dict)  # block id -> what was promoted
    kept: list[str] = field(default_factory=list)  # block ids a person restored with undo: never pruned
    last_success: str | None = None
    backlog: int = 0  # new entries the last run left for the next (a note too large for one run)
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
            backlog=int(data.get("backlog", 0) or 0),
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
            "backlog": self.backlog,
        }
        write_json(heartbeat_dir(config) / STATE_FILE, data)


def rebuild_registry(repo: VaultRepo | None, state: State) -> None:
    """When the state was lost, recover what the bot promoted from its commits (trailer ``Block``)."""
    if repo is None or not state.fresh:
        return
    from vault_tools.git.repository import parse_trailers

    for _sha, message in reversed(repo.bot_messages()):
        if not message.startswith("memory: promote "):
            continue
        trailers = parse_trailers(message)
        for block in trailers.get("Block", []):
            item = next((line for line in message.splitlines() if line.startswith("- ")), "")
            state.registry.setdefault(block, {"text": item_text(item), "sources": [], "status": "active"})


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
