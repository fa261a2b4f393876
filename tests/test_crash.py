"""kill -9 of a syncing heartbeat at seeded moments, inside git too, then a normal run that finishes.

Each seed copies a pristine setup (a bare remote and the bot's clone with `push = true`), starts a
heartbeat in its own session with `git` wrapped by a script that logs each git command's start and
end, and kills the whole session (the heartbeat and its git children, as systemd or the OOM killer
would): either after a seeded delay, or from inside the wrapper while the seeded n-th git command
runs. A git command that started and never ended proves the kill landed inside git. Then a normal
run must exit 0 and leave everything consistent. `VAULT_TOOLS_LONG=1` runs 60 seeds (the figures in
the README and notes come from that run); the default run takes a few.
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest
from test_sync import git, head, setup

LONG = os.environ.get("VAULT_TOOLS_LONG") == "1"
SEEDS = range(60) if LONG else range(6)
CONFIG = """[heartbeat]
push = true
quiet_seconds = 0
prune_max_share = 1.0
lock_grace_seconds = 0.2
lock_wait_seconds = 20
"""
DAILY = "- Decided to keep the monorepo for the web app.\n- I prefer tea over coffee after lunch.\n"
WRAPPER = """#!/bin/sh
echo x >> "$VT_GIT_COUNT"
n=$(wc -l < "$VT_GIT_COUNT")
echo "start $$ $1" >> "$VT_GIT_LOG"
if [ -n "$VT_KILL_AT" ] && [ "$n" -eq "$VT_KILL_AT" ]; then
  "$VT_REAL_GIT" "$@" &
  sleep "$VT_KILL_DELAY"
  echo "kill $n $1" >> "$VT_GIT_LOG"
  kill -9 0
fi
"$VT_REAL_GIT" "$@"
rc=$?
echo "end $$" >> "$VT_GIT_LOG"
exit $rc
"""


@dataclass
class Outcome:
    killed: bool
    inside_git: list[str]  # the git commands the kill interrupted (not the long-lived cat-file reader)


def pristine(tmp_path: Path) -> tuple[Path, Path]:
    remote, _person, bot = setup(tmp_path)
    (bot / "memory" / "2026-11-30.md").write_text(DAILY, encoding="utf-8")
    git(bot, "add", "-A")
    git(bot, "commit", "-qm", "a note typed on the server")
    git(bot, "push", "-q")
    (bot / ".vault-tools").mkdir()
    (bot / ".vault-tools" / "config.toml").write_text(CONFIG)
    return remote, bot


def copy(remote: Path, bot: Path, into: Path) -> tuple[Path, Path]:
    into.mkdir()
    shutil.copytree(remote, into / "remote.git")
    shutil.copytree(bot, into / "server", symlinks=True)
    git(into / "server", "remote", "set-url", "origin", str(into / "remote.git"))
    return into / "remote.git", into / "server"


def command(vault: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "vault_tools",
        "--vault",
        str(vault),
        "heartbeat",
        "--no-llm",
        "--as-of",
        "2026-12-01",
    ]


def wrapped_env(folder: Path, **extra: str) -> dict[str, str]:
    bin_dir = folder / "bin"
    bin_dir.mkdir(exist_ok=True)
    wrapper = bin_dir / "git"
    wrapper.write_text(WRAPPER)
    wrapper.chmod(0o755)
    real = shutil.which("git")
    assert real is not None
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", VT_REAL_GIT=real)
    env.update(VT_GIT_LOG=str(folder / "git.log"), VT_GIT_COUNT=str(folder / "git.count"), **extra)
    env["GIT_PYTHON_GIT_EXECUTABLE"] = str(wrapper)
    return env


def interrupted(log: Path) -> list[str]:
    starts: dict[str, str] = {}
    for line in log.read_text().splitlines() if log.exists() else []:
        kind, pid, *rest = line.split()
        if kind == "start":
            starts[pid] = rest[0] if rest else ""
        elif kind == "end":
            starts.pop(pid, None)
    return [name for name in starts.values() if name != "cat-file"]


def kill_run(folder: Path, vault: Path, rng: random.Random, calls: int, seconds: float) -> Outcome:
    if rng.random() < 0.5:  # from inside the n-th git command, a few milliseconds into it
        env = wrapped_env(
            folder, VT_KILL_AT=str(rng.randint(1, calls)), VT_KILL_DELAY=f"{rng.uniform(0, 0.01):.4f}"
        )
        process = subprocess.run(command(vault), env=env, capture_output=True, start_new_session=True)
        code = process.returncode
    else:  # at a seeded moment of the run
        env = wrapped_env(folder)
        with subprocess.Popen(
            command(vault),
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        ) as running:
            time.sleep(rng.uniform(0.05, seconds))
            with contextlib.suppress(ProcessLookupError):  # it may have finished first
                os.killpg(running.pid, signal.SIGKILL)
            code = running.wait()
    return Outcome(code == -signal.SIGKILL, interrupted(folder / "git.log"))


def assert_consistent(remote: Path, vault: Path, expected: bytes) -> None:
    result = subprocess.run(command(vault), capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    text = (vault / "MEMORY.md").read_text(encoding="utf-8")
    ids = [word for word in text.split() if word.startswith("^m-")]
    assert len(ids) == len(set(ids)), "duplicate items"
    assert (vault / "MEMORY.md").read_bytes() == expected
    assert "<<<<<<<" not in text and ">>>>>>>" not in text
    assert git(vault, "status", "--porcelain", "--ignored=no") == "", "leftover or uncommitted files"
    fsck = subprocess.run(["git", "fsck", "--strict"], cwd=vault, capture_output=True, text=True)
    assert fsck.returncode == 0 and "error" not in fsck.stderr, fsck.stderr
    assert not list((vault / ".git").glob("*.lock")) and not list((vault / ".git" / "refs").rglob("*.lock"))
    assert not (vault / ".vault-tools" / "heartbeat" / "journal.json").exists()
    assert not (vault / ".vault-tools" / "sync.json").exists()
    assert head(vault) == head(remote, "main"), "not pushed"


@pytest.mark.timeout(1200 if LONG else 150)  # 13 heartbeats: 17-24 s alone, over 60 s in a loaded full run
def test_kill_9_at_seeded_points_of_a_syncing_heartbeat_then_a_normal_run(tmp_path: Path) -> None:
    remote, bot = pristine(tmp_path / "pristine")
    ref_remote, reference = copy(remote, bot, tmp_path / "reference")
    started = time.monotonic()
    done = subprocess.run(
        command(reference), env=wrapped_env(tmp_path / "reference"), capture_output=True, text=True
    )
    seconds = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    expected = (reference / "MEMORY.md").read_bytes()
    calls = len((tmp_path / "reference" / "git.count").read_text().splitlines())
    assert head(reference) == head(ref_remote, "main") and expected.count(b"^m-") >= 4
    tally: Counter[str] = Counter()
    for seed in SEEDS:
        folder = tmp_path / f"seed-{seed}"
        seed_remote, vault = copy(remote, bot, folder)
        outcome = kill_run(folder, vault, random.Random(seed), calls, seconds)
        tally["killed" if outcome.killed else "finished before the kill"] += 1
        tally["inside git"] += bool(outcome.inside_git)
        assert_consistent(seed_remote, vault, expected)
        tally["consistent"] += 1
        shutil.rmtree(folder)
    print(
        f"\nkill -9 over a syncing heartbeat: {dict(tally)} of {len(SEEDS)} seeds, {calls} git calls per run"
    )
    assert tally["consistent"] == len(SEEDS)
    assert tally["inside git"] >= len(SEEDS) // 3  # the kills really land inside git
