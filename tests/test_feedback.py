"""Long work is not silent: a wait is said at once on stderr, progress bars show on a terminal only."""

from __future__ import annotations

import fcntl
import io
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path
from typing import Any

import pytest
from test_heartbeat import MEMORY_EN, committed, make_vault

from vault_tools import feedback
from vault_tools.feedback import Feedback, NoBar
from vault_tools.heartbeat import run as heartbeat


def test_bars_only_for_a_terminal_without_json_or_quiet() -> None:
    main, secondary = pty.openpty()
    with os.fdopen(secondary, "w") as terminal, open(os.devnull, "w") as pipe_like:
        assert feedback.wants_bars(terminal, as_json=False, quiet=False)
        assert not feedback.wants_bars(terminal, as_json=True, quiet=False)
        assert not feedback.wants_bars(terminal, as_json=False, quiet=True)
        assert not feedback.wants_bars(pipe_like, as_json=False, quiet=False)
        assert not feedback.wants_bars(io.StringIO(), as_json=False, quiet=False)
        assert Feedback.for_command(as_json=False, quiet=False, stream=terminal).bars
        assert not isinstance(
            Feedback.for_command(as_json=False, quiet=False, stream=terminal).bar(3, "x"), NoBar
        )
        assert isinstance(
            Feedback.for_command(as_json=False, quiet=False, stream=pipe_like).bar(3, "x"), NoBar
        )
    os.close(main)


def test_quiet_says_nothing() -> None:
    out = io.StringIO()
    Feedback(out, quiet=True).say("waiting")
    Feedback(out, bars=True, quiet=True).bar(3, "x").update(1)
    assert out.getvalue() == ""


class FakeTime:
    def __init__(self, now: float, stream: io.StringIO) -> None:
        self.now = now
        self.stream = stream
        self.said_before_first_sleep: str | None = None

    def time(self) -> float:
        return self.now

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        if self.said_before_first_sleep is None:
            self.said_before_first_sleep = self.stream.getvalue()
        self.now += seconds


def test_the_wait_for_a_quiet_memory_md_is_said_before_it_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = committed(make_vault(tmp_path))
    (vault / "MEMORY.md").write_text(MEMORY_EN + "- 2026-11-30: Just typed\n")
    saved = (vault / "MEMORY.md").stat().st_mtime
    out = io.StringIO()
    clock = FakeTime(saved + 3.0, out)
    monkeypatch.setattr(heartbeat, "time", clock)
    report = heartbeat.run_heartbeat(
        run_config(vault, quiet_seconds=60.0), heartbeat.Options(as_of=AS_OF, feedback=Feedback(out))
    )
    assert clock.said_before_first_sleep == (
        "waiting for MEMORY.md to be quiet: saved 3 s ago and not committed yet; "
        "the heartbeat writes once it has been quiet for 60 s (up to 57 s more)…\n"
    )
    assert out.getvalue().count("waiting for MEMORY.md") == 1  # said once, not every second
    assert report.promoted


def test_no_wait_no_word(tmp_path: Path) -> None:
    vault = committed(make_vault(tmp_path))
    out = io.StringIO()
    heartbeat.run_heartbeat(
        run_config(vault, quiet_seconds=60.0), heartbeat.Options(as_of=AS_OF, feedback=Feedback(out))
    )
    assert out.getvalue() == ""


class Recording(Feedback):
    """Counts what each progress bar was told."""

    def __init__(self) -> None:
        super().__init__(io.StringIO(), bars=True)
        self.bars_made: dict[str, list[int]] = {}

    def bar(self, total: int | None, what: str, unit: str = "it", *, delay: float = 0.5) -> Any:
        counts = self.bars_made.setdefault(what, [])
        counts.append(0)

        class Counting(NoBar):
            def update(self, n: int = 1) -> None:
                counts[-1] += n

        return Counting()


def test_the_heartbeat_shows_progress_through_its_phases(tmp_path: Path) -> None:
    vault = committed(make_vault(tmp_path))
    recording = Recording()
    report = heartbeat.run_heartbeat(run_config(vault), heartbeat.Options(as_of=AS_OF, feedback=recording))
    bars = recording.bars_made
    assert bars["reading notes"] == [2]  # the two daily notes of the window
    assert bars["reading entries"][0] >= report.new_entries > 0
    assert bars["planning"][0] > 0
    assert 0 < bars["finding repeats"][0] <= report.new_entries  # each candidate among the new entries
    assert bars["committing"] == [len(report.commits)] and report.commits


AS_OF = heartbeat.dt.date(2026, 12, 1)


def run_config(vault: Path, **settings: Any) -> Any:
    from test_heartbeat import config

    return config(vault, **settings)


def heartbeat_on_a_terminal(vault: Path, *flags: str, terminal: bool = True) -> tuple[str, str]:
    """``vault-tools heartbeat`` with stderr on a pseudo-terminal (or a pipe); (stdout, stderr)."""
    (vault / ".vault-tools").mkdir(exist_ok=True)
    (vault / ".vault-tools" / "config.toml").write_text(
        "[heartbeat]\nquiet_seconds = 3.0\nsummaries = false\n"
    )
    (vault / "MEMORY.md").write_text(MEMORY_EN + "- 2026-11-30: Just typed\n")
    # saved "now" whenever the command starts, however slow the machine is: it waits the whole 3 s
    later = time.time() + 60
    os.utime(vault / "MEMORY.md", (later, later))
    command = [
        sys.executable,
        "-m",
        "vault_tools",
        "--vault",
        str(vault),
        "heartbeat",
        "--as-of",
        "2026-12-01",
    ]
    if not terminal:
        done = subprocess.run([*command, *flags], capture_output=True, text=True, timeout=60)
        return done.stdout, done.stderr
    main, secondary = pty.openpty()
    # a terminal has a size (tqdm draws nothing on one of zero columns)
    fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    process = subprocess.Popen([*command, *flags], stdout=subprocess.PIPE, stderr=secondary, text=True)
    os.close(secondary)
    seen = b""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([main], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(main, 4096)
            except OSError:  # the process closed its end
                break
            if not chunk:
                break
            seen += chunk
        elif process.poll() is not None:
            break
    os.close(main)
    stdout, _ = process.communicate(timeout=30)
    return stdout, seen.decode("utf-8", "replace")


@pytest.mark.parametrize(
    ("flags", "terminal", "bar", "said"),
    [
        ((), True, True, True),
        (("--json",), True, False, True),
        (("--quiet",), True, False, False),
        ((), False, False, True),
    ],
)
def test_the_command_waits_out_loud_and_draws_a_bar_only_on_a_terminal(
    tmp_path: Path, flags: tuple[str, ...], terminal: bool, bar: bool, said: bool
) -> None:
    vault = committed(make_vault(tmp_path))
    stdout, stderr = heartbeat_on_a_terminal(vault, *flags, terminal=terminal)
    assert ("waiting for MEMORY.md to be quiet: saved" in stderr) is said
    assert ("waiting for MEMORY.md:" in stderr) is bar  # tqdm's bar: "waiting for MEMORY.md:  50%|…"
    assert "promoted" in stdout


class RecordingBar(NoBar):
    def __init__(self, total: int) -> None:
        self.total = total
        self.steps: list[int] = []

    def update(self, n: int = 1) -> None:
        if n:
            self.steps.append(n)


@pytest.mark.parametrize("workers", [1, 2])
def test_indexing_one_huge_note_moves_the_bar_through_its_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    """One note of 3,000 entries (serial build, and workers reporting through their pipes): the bar
    counts bytes and moves several times inside the note, ending at the vault's size."""
    from vault_tools.config import load_config
    from vault_tools.index import builder as index_builder
    from vault_tools.index.index import Index

    vault = tmp_path / "vault"
    (vault / "memory").mkdir(parents=True)
    lines = "".join(
        f"- {n:05d} Decided to use tool{n} for the part{n} service 决定用{n}号方案\n" for n in range(3000)
    )
    (vault / "memory" / "2026-11-28.md").write_text(f"---\ndate: 2026-11-28\n---\n{lines}", encoding="utf-8")
    (vault / "memory" / "2026-11-29.md").write_text("- a small note of one entry here\n", encoding="utf-8")
    (vault / "MEMORY.md").write_text("# Long-term memory\n", encoding="utf-8")
    size = sum(p.stat().st_size for p in [*(vault / "memory").glob("*.md"), vault / "MEMORY.md"])
    bars: list[RecordingBar] = []

    def recording(total: int, enabled: bool, what: str, unit: str = "file") -> RecordingBar:
        assert enabled and unit == "B"
        bars.append(RecordingBar(total))
        return bars[-1]

    monkeypatch.setattr(index_builder, "progress_bar", recording)
    Index(load_config(vault), build_workers=workers).rebuild(progress=True)
    (bar,) = bars
    assert bar.total == size and sum(bar.steps) == size
    assert len(bar.steps) >= 3000 // 500  # moves inside the big note, not once per file


def test_a_wait_for_a_git_lock_is_said_at_once(tmp_path: Path) -> None:
    from test_heartbeat import HOLD_SCRIPT

    from vault_tools.errors import LockedError

    vault = committed(make_vault(tmp_path))
    lock = vault / ".git" / "index.lock"
    lock.write_text("")
    release = tmp_path / "release"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_SCRIPT, str(lock), str(release)], stdout=subprocess.PIPE, text=True
    )
    out = io.StringIO()
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        with pytest.raises(LockedError):
            heartbeat.run_heartbeat(
                run_config(vault, lock_wait_seconds=0.3, lock_grace_seconds=0.0),
                heartbeat.Options(as_of=AS_OF, feedback=Feedback(out)),
            )
    finally:
        release.write_text("x")
        holder.wait(timeout=20)
        assert holder.stdout is not None
        holder.stdout.close()
    said = out.getvalue()
    assert said.startswith(f"waiting for git: {lock} is in use (") and said.endswith("up to 0.3 s…\n")
    assert f"pid {holder.pid}" in said and said.count("\n") == 1
