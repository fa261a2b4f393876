"""Small helpers the test modules share (importable because pytest puts tests/ on sys.path)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import datetime as dt

    from vault_tools.config import Config
    from vault_tools.recall.recall import Recaller


def write(path: Path, text: str) -> Path:
    """Write ``text`` as UTF-8, creating the folders; return ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def indexed_vault(
    root: Path, days: Mapping[str, str], *, memory: str | None = None, head: str = ""
) -> Config:
    """A vault under ``root`` of daily notes (``{"2026-03-01": "- a line\\n"}``, each after its front
    matter and ``head``, where ``{day}`` is the note's day) and ``memory`` as MEMORY.md, indexed."""
    from vault_tools.config import load_config
    from vault_tools.index.index import Index

    vault = root / "vault"
    if memory is not None:
        write(vault / "MEMORY.md", memory)
    for day, body in days.items():
        write(vault / "memory" / f"{day}.md", f"---\ndate: {day}\n---\n{head.replace('{day}', day)}{body}")
    config = load_config(vault, env={})
    Index(config).rebuild()
    return config


@contextmanager
def warm_recaller(config: Config) -> Iterator[Recaller]:
    """A :class:`Recaller` kept warm for a module's tests (no catch-up: the index is current)."""
    from vault_tools.recall.recall import Recaller

    with Recaller(config, catch_up="never") as warm:
        yield warm


def hit_texts(session: Recaller, query: str, as_of: dt.date, **options: Any) -> list[str]:
    """The texts of what ``session`` recalls for ``query`` as of ``as_of``, in rank order."""
    return [hit.text for hit in session.recall(query, as_of=as_of, **options).results]


def wait_for(predicate: Callable[[], bool], what: str, timeout: float = 15.0) -> None:
    """Poll ``predicate`` until it holds; fail naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")


#: Runs ``vault-tools ARGS...`` with each heartbeat step printed (``STEP name``) as it is reached,
#: and the run held (asleep) when it reaches step number HOLD_AT, so that a kill sent after a
#: step was seen always lands before the run ends: ``python -c HEARTBEAT_STEPS HOLD_AT ARGS...``.
HEARTBEAT_STEPS = """
import sys, time
from vault_tools import cli; from vault_tools.heartbeat import run as heartbeat
hold_at = int(sys.argv[1])
real = heartbeat.run_heartbeat
def reporting(config, options=None, progress=None):
    seen = []
    def step(name):
        seen.append(name)
        print("STEP", name, flush=True)
        if len(seen) == hold_at:
            time.sleep(3600)
    return real(config, options, step)
heartbeat.run_heartbeat = reporting
sys.exit(cli.main(sys.argv[2:]))
"""


#: Runs ``vault-tools ARGS...`` (a watcher) with each index batch announced (``BATCH n files``);
#: the first batch that starts once the file ARM exists is held (asleep) at POINT inside it,
#: announced ``HELD point``: ``parse`` (after the batch's first file was read and added, before the
#: next), ``commit`` (every file added, before Whoosh's commit) or ``manifest`` (Whoosh committed,
#: before the manifest is saved). ``python -c WATCH_BATCHES ARM POINT ARGS...``.
WATCH_BATCHES = """
import os, sys, time
from vault_tools import cli; from vault_tools.index import writer as index_writer
arm, point = sys.argv[1], sys.argv[2]
batches, held = [], []
def hold(where):
    if held and held[0] == len(batches):
        print("HELD", where, flush=True)
        time.sleep(3600)
real_apply = index_writer.IndexWriter.apply
def apply(self, report, manifest, work, **options):
    batches.append(len(work))
    if not held and os.path.exists(arm):
        held.append(len(batches))
    print("BATCH", len(batches), len(work), flush=True)
    return real_apply(self, report, manifest, work, **options)
real_one = index_writer.IndexWriter.apply_one
def apply_one(self, batch, rel, path, **options):
    if point == "parse" and getattr(batch, "held_files", 0) == 1:
        hold("parse")
    real_one(self, batch, rel, path, **options)
    batch.held_files = getattr(batch, "held_files", 0) + 1
real_commit = index_writer._Batch.commit
def commit(self, index_dir):
    if point == "commit":
        hold("commit")
    return real_commit(self, index_dir)
real_save = index_writer.save_manifest
def save_manifest(index_dir, manifest):
    if point == "manifest":
        hold("manifest")
    return real_save(index_dir, manifest)
index_writer.IndexWriter.apply = apply
index_writer.IndexWriter.apply_one = apply_one
index_writer._Batch.commit = commit
index_writer.save_manifest = save_manifest
sys.exit(cli.main(sys.argv[3:]))
"""


def read_steps(stdout: Iterable[str], wanted: int) -> list[str]:
    """Read ``STEP name`` lines until ``wanted`` were seen or the output ends; the names seen."""
    steps: list[str] = []
    for line in stdout:
        if line.startswith("STEP "):
            steps.append(line[5:].rstrip("\n"))
            if len(steps) >= wanted:
                break
    return steps


def watch_in_thread(
    config: Any, options: Any
) -> tuple[threading.Thread, threading.Event, list[BaseException]]:
    """``run_watch`` as a person's ``vault-tools watch`` in a daemon thread: (thread, stop, errors)."""
    from vault_tools.watch.watcher import run_watch

    stop = threading.Event()
    errors: list[BaseException] = []

    def target() -> None:
        try:
            run_watch(config, stop_event=stop, options=options, handle_signals=False)
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread, stop, errors
