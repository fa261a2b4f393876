"""What ``vault-tools status`` says about the index (counts, what changed on disk since the last
update) and about the watcher (its heartbeat, written by :mod:`vault_tools.watch.watcher` and read
here without importing watchdog)."""

from __future__ import annotations

import contextlib
import datetime as dt
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from vault_tools.config import Config
from vault_tools.index.manifest import MANIFEST_FILE, META_FILE, read_json, scan_note_stats
from vault_tools.index.state import IndexState
from vault_tools.index.writer import IndexWriter
from vault_tools.notes import edit as note_edit
from vault_tools.notes import model as notes

WATCH_STATE_FILE = "watch.json"


@dataclass
class WatcherInfo:
    pid: int
    alive: bool  # the process runs and its heartbeat is fresh
    heartbeat: float  # unix time of its last heartbeat
    last_event: float | None
    last_reconcile: float | None
    summary: str


@dataclass
class IndexStatus:
    state: str  # ok | stale | missing | broken | old
    summary: str
    problem: str | None
    entries: int
    files_indexed: int
    files_on_disk: int
    changed_files: list[str]  # by stat: new, modified or deleted since the last update
    last_update: str | None  # ISO time the manifest was written
    size_bytes: int
    segments: int
    deleted_docs: int
    schema_version: int | None
    analyzer_version: int | None
    watcher: dict[str, Any] | None
    bad_files: list[str]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def describe(state: IndexState, writer: IndexWriter, problem: str | None) -> IndexStatus:
    """A read-only description of the index, whose usability ``problem`` the caller checked."""
    manifest = state.manifest()
    warnings: list[notes.Warning_] = []
    on_disk = scan_note_stats(state.vault, warnings)
    changed, deleted = writer.diff(manifest, on_disk, hash_check=True)
    entries = segments = deleted_docs = 0
    if problem is None:
        with contextlib.suppress(Exception), state.open_ix().reader() as r:
            entries = r.doc_count()
            deleted_docs = r.doc_count_all() - entries
            segments = len(list(r.leaf_readers()))
    meta = read_json(state.dir / META_FILE)
    watcher = watcher_info(state.config)
    stale_paths = sorted(changed + deleted)
    condition = _condition(problem, bool(stale_paths))
    summary = _summary(condition, problem, entries, len(manifest), len(stale_paths))
    if watcher is not None:
        summary += f"; watcher {'running' if watcher.alive else 'not running'} (pid {watcher.pid})"
    bad = [f"{rel}: {w}" for rel, rec in sorted(manifest.items()) for w in rec.warnings]
    bad += [str(w) for w in warnings]
    return IndexStatus(
        state=condition,
        summary=summary,
        problem=problem,
        entries=entries,
        files_indexed=len(manifest),
        files_on_disk=len(on_disk),
        changed_files=stale_paths,
        last_update=_iso_mtime(state.dir / MANIFEST_FILE),
        size_bytes=_dir_size(state.dir),
        segments=segments,
        deleted_docs=deleted_docs,
        schema_version=meta.get("schema_version"),
        analyzer_version=meta.get("analyzer_version"),
        watcher=asdict(watcher) if watcher is not None else None,
        bad_files=bad,
    )


def _condition(problem: str | None, stale: bool) -> str:
    if problem == "missing":
        return "missing"
    if problem is not None:
        return "old" if problem.startswith(("its schema", "its analyzer", "it has no meta")) else "broken"
    return "stale" if stale else "ok"


def _summary(condition: str, problem: str | None, entries: int, files: int, stale: int) -> str:
    if condition == "ok":
        return f"{entries} entries from {files} files, up to date"
    if condition == "stale":
        return f"{entries} entries; {stale} file(s) changed since the last update"
    if condition == "missing":
        return "not built yet (any search builds it; or run `vault-tools index`)"
    return f"unusable: {problem}; the next command rebuilds it"


def _iso_mtime(path: Path) -> str | None:
    try:
        stamp = path.stat().st_mtime
    except OSError:
        return None
    return dt.datetime.fromtimestamp(stamp).astimezone().isoformat(timespec="seconds")


def _dir_size(path: Path) -> int:
    total = 0
    with contextlib.suppress(OSError):
        for child in path.iterdir():
            with contextlib.suppress(OSError):
                total += child.stat().st_size
    return total


# ---------------------------------------------------------------------------------------------
# The watcher's heartbeat


def watch_state_path(config: Config) -> Path:
    return config.state_dir / WATCH_STATE_FILE


def watcher_info(config: Config) -> WatcherInfo | None:
    """The watcher's last heartbeat, and whether it is alive (process runs, heartbeat fresh)."""
    data = read_json(watch_state_path(config))
    if not data or "pid" not in data:
        return None
    try:
        pid = int(data["pid"])
        heartbeat = float(data.get("heartbeat", 0.0))
        freshness = 3 * float(data.get("heartbeat_seconds", 10.0)) + 5.0
    except (TypeError, ValueError):
        return None
    alive = not data.get("stopped") and note_edit.pid_alive(pid) and time.time() - heartbeat < freshness
    return WatcherInfo(
        pid=pid,
        alive=alive,
        heartbeat=heartbeat,
        last_event=data.get("last_event"),
        last_reconcile=data.get("last_reconcile"),
        summary=str(data.get("summary", "")) if alive else "not running",
    )


def watcher_alive(config: Config) -> bool:
    info = watcher_info(config)
    return info is not None and info.alive
