"""Soak test: a 10k-entry vault under a live watcher, periodic heartbeats, a recall loop and edits.

    python bench/soak.py --minutes 2 --entries 10000 [--seed 7] [--keep DIR]

Runs, all at once, for ``--minutes``:
- the watcher: ``python -m vault_tools watch --vault V`` (a subprocess; its RSS is sampled);
- a heartbeat every ``--heartbeat-every`` seconds: ``python -m vault_tools heartbeat --vault V --no-llm``;
- a recall loop in another process (vault_tools.recall.recall.Recaller, random words, direct and group);
- an editor saving a unique marker word about every ``--save-every`` seconds (default 1), in the
  usual save styles (SAVE_STYLES): ``python -m vault_tools note ...``, appends in place, a line
  inserted mid-file saved by rename over the file or by rewriting it in place, and appends to
  MEMORY.md (a person's save while the bot may be writing).

Reports errors (non-zero exits, tracebacks; must be 0), lost edits (markers written but not in the
files, or not searchable at the end; must be 0), save-to-searchable latency (how long until the
watcher's index has a marker, measured without catching up), and the watcher's RSS and open
descriptors first and last, and per ``--window`` minutes (default 5) the save-to-searchable
p50/p95/max of the edits written in it, the watcher's RSS, open files and index segments at its end,
its batches (count, p50/max ms, from its log) and the CPU time it used (deleted
segment files it still maps are a leak). ``--no-serve`` runs the watcher without its recall service.
Prints a Markdown table; exits 1 when errors or lost edits are not 0.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from genvault import generate  # noqa: E402

from vault_tools.config import load_config  # noqa: E402
from vault_tools.index import documents as index_documents  # noqa: E402
from vault_tools.index import index as ix  # noqa: E402
from vault_tools.index import manifest as index_manifest  # noqa: E402
from vault_tools.index import status as index_status  # noqa: E402

CONSONANTS = "bcdfghjklmnpqrstvwxz"

RECALL_LOOP = r"""
import random, sys, time, traceback
from pathlib import Path
from vault_tools.config import load_config
from vault_tools.recall.recall import Recaller
vault, stop = Path(sys.argv[1]), Path(sys.argv[2])
config = load_config(vault)
rng = random.Random(3)
words = ["decided", "postgres", "deploy", "tea", "meeting", "上周", "部署", "last week", "lesson", "#work"]
calls = errors = 0
with Recaller(config, catch_up="never") as session:  # the watcher keeps it current
    while not stop.exists():
        query = " ".join(rng.sample(words, 2))
        try:
            session.recall(query, chat=rng.choice(["direct", "group"]), limit=10)
        except Exception:
            errors += 1
            traceback.print_exc()
        calls += 1
        time.sleep(0.05)
print(f"{calls} {errors}")
"""


def word(n: int) -> str:
    out = ""
    while True:
        out += CONSONANTS[n % 20]
        n //= 20
        if n == 0:
            break
    return "zqsoak" + out + "y"


@dataclass
class Stats:
    errors: list[str] = field(default_factory=list)
    written: dict[str, float] = field(default_factory=dict)  # marker -> time written
    searchable: dict[str, float] = field(default_factory=dict)  # marker -> time first found
    heartbeats: int = 0
    styles: dict[str, int] = field(default_factory=dict)  # saves per style (SAVE_STYLES)
    rss: list[tuple[float, int]] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)  # the watcher's CPU seconds so far, at each sample
    fds: list[tuple[int, int]] = field(default_factory=list)  # (open descriptors, deleted files mapped)
    segments: list[int] = field(default_factory=list)  # index segments at each sample
    batches: list[tuple[float, float]] = field(default_factory=list)  # (when, ms): the watcher's log
    recall_calls: int = 0
    started: float = 0.0  # monotonic time the load started (windows count from it)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def error(self, what: str) -> None:
        with self.lock:
            self.errors.append(what)


def cli(vault: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "vault_tools", *args, "--vault", str(vault)]


def rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def cpu_seconds(pid: int) -> float:
    """User + system CPU time ``pid`` has used (what contention moves least, unlike wall time)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def open_files(pid: int) -> tuple[int, int]:
    """Open descriptors of ``pid``, and how many deleted files it still maps (a leaked segment)."""
    try:
        fds = len(os.listdir(f"/proc/{pid}/fd"))
        deleted = Path(f"/proc/{pid}/maps").read_text().count("(deleted)")
    except OSError:
        return 0, 0
    return fds, deleted


def found_terms(config: Any, markers: list[str]) -> set[str]:
    """The markers the watcher's index already holds (one searcher, no catching up)."""
    from whoosh.query import Term

    from vault_tools.index.analysis import tokenize

    wanted: dict[str, str] = {}
    for marker in markers:
        terms = tokenize(marker)
        if len(terms) != 1:
            raise SystemExit(f"marker {marker!r} tokenizes to {terms!r}")
        wanted[marker] = terms[0]

    def search(searcher: Any) -> set[str]:
        return {
            m for m, t in wanted.items() if len(searcher.search(Term(index_documents.F_TEXT, t), limit=1)) > 0
        }

    return set(ix.Index(config).read(search))


def start_watcher(vault: Path, log: Path, serve: bool = True) -> subprocess.Popen[bytes]:
    handle = log.open("wb")
    command = cli(vault, "watch") if serve else cli(vault, "watch", "--no-serve")
    proc = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT)
    config = load_config(vault)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"watcher exited early:\n{log.read_text()}")
        state = index_manifest.read_json(index_status.watch_state_path(config))
        if state.get("pid") == proc.pid and state.get("last_reconcile"):
            return proc
        time.sleep(0.2)
    raise SystemExit("watcher did not become ready")


#: How a save is made, and how often (the shares add up to 1). The person's styles go to the last
#: 30 daily notes before today (the bot writes today's note: a person rewriting a whole file the bot
#: just wrote would lose the bot's line in any editor) and to MEMORY.md (appends only).
SAVE_STYLES = (
    ("note CLI", 0.3),  # the bot: vault-tools note, an atomic splice into today's note
    ("append", 0.25),  # a person's editor appending in place (open "a")
    ("replace", 0.2),  # an editor saving to a temp file and renaming it over the note (VS Code, vim)
    ("rewrite", 0.15),  # an editor truncating the note and writing it again (nano, Obsidian)
    ("MEMORY.md", 0.1),  # a person's line appended to MEMORY.md while the heartbeat may write it
)


def editor(vault: Path, stats: Stats, stop: threading.Event, rng: random.Random, every: float) -> None:
    """One save about every ``every`` seconds (jittered ±50%), in the styles of SAVE_STYLES."""
    n = 0
    daily = sorted((vault / "memory").glob("20*.md"))[-30:]
    names = [name for name, _share in SAVE_STYLES]
    weights = [share for _name, share in SAVE_STYLES]
    while not stop.is_set():
        marker = word(n)
        n += 1
        style = rng.choices(names, weights)[0]
        stamp = time.monotonic()
        try:
            if not save(vault, style, marker, rng.choice(daily), rng, stats):
                continue
        except OSError as exc:
            stats.error(f"edit failed: {exc}")
            continue
        with stats.lock:
            stats.written[marker] = stamp
            stats.styles[style] = stats.styles.get(style, 0) + 1
        stop.wait(max(0.0, every * rng.uniform(0.5, 1.5) - (time.monotonic() - stamp)))


def save(vault: Path, style: str, marker: str, note: Path, rng: random.Random, stats: Stats) -> bool:
    """Write ``marker`` in ``style``; False (and an error recorded) when the bot's command failed."""
    if style == "note CLI":
        done = subprocess.run(cli(vault, "note", f"soak edit {marker}"), capture_output=True, text=True)
        if done.returncode != 0 or "Traceback" in done.stderr:
            stats.error(f"note exit {done.returncode}: {done.stderr.strip()[-300:]}")
            return False
        return True
    if style == "MEMORY.md":
        with (vault / "MEMORY.md").open("a", encoding="utf-8") as handle:
            handle.write(f"- 2026-12-01: soak person's line {marker}\n")
        return True
    line = f"- 23:59 soak {style} {marker}\n"
    if style == "append":
        with note.open("a", encoding="utf-8") as handle:
            handle.write(line)
        return True
    lines = note.read_text(encoding="utf-8").splitlines(keepends=True)
    bullets = [i for i, text in enumerate(lines) if text.startswith("- ")]
    at = rng.choice(bullets) + 1 if bullets else len(lines)  # after a bullet, mid-file
    text = "".join([*lines[:at], line, *lines[at:]])
    if style == "replace":
        temp = note.with_name(f".{note.name}.soak~")
        temp.write_text(text, encoding="utf-8")
        os.replace(temp, note)
    else:
        with note.open("w", encoding="utf-8") as handle:
            handle.write(text)
    return True


def checker(vault: Path, stats: Stats, stop: threading.Event) -> None:
    config = load_config(vault)
    while not stop.is_set():
        with stats.lock:
            pending = [(m, t) for m, t in stats.written.items() if m not in stats.searchable]
        try:
            hits = found_terms(config, [m for m, _t in pending]) if pending else set()
        except Exception as exc:  # a reader error is an error of the soak
            stats.error(f"checker: {exc!r}")
            hits = set()
        now = time.monotonic()
        with stats.lock:
            for marker in hits:
                stats.searchable.setdefault(marker, now)
        time.sleep(0.05)


def heartbeats(vault: Path, stats: Stats, stop: threading.Event, every: float) -> None:
    while not stop.wait(every):
        done = subprocess.run(cli(vault, "heartbeat", "--no-llm"), capture_output=True, text=True)
        stats.heartbeats += 1
        if done.returncode != 0 or "Traceback" in done.stderr:
            stats.error(f"heartbeat exit {done.returncode}: {(done.stderr or done.stdout).strip()[-300:]}")


def sampler(pid: int, stats: Stats, stop: threading.Event, started: float, index_dir: Path) -> None:
    while True:
        stats.rss.append((time.monotonic() - started, rss_kb(pid)))
        stats.cpu.append(cpu_seconds(pid))
        stats.fds.append(open_files(pid))
        stats.segments.append(len(list(index_dir.glob("*.seg"))))
        if stop.wait(5.0):
            return


BATCH_LINE = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3}) \d+ path\(s\): .* \((\d+) ms\)$")


def read_batches(log: str, stats: Stats, started_wall: float) -> None:
    """The watcher's batch lines (when, how long), for the per-window table."""
    for line in log.splitlines():
        match = BATCH_LINE.match(line)
        if match:
            stamp = (
                time.mktime(time.strptime(match.group(1), "%Y-%m-%d %H:%M:%S")) + int(match.group(2)) / 1000
            )
            stats.batches.append((stamp - started_wall, float(match.group(3))))


def windows(stats: Stats, minutes: float, window: float) -> list[str]:
    """One Markdown row per ``window``-minute stretch of the run: the save-to-searchable p50, p95 and
    max of the edits written in it, and the watcher's RSS and open files at its end (a rising column
    is a slowdown or a leak; the goal is a flat one)."""
    span = window * 60
    count = max(1, int(-(-minutes * 60 // span)))
    rows = []
    for w in range(count):
        lo, hi = w * span, (w + 1) * span
        lats = sorted(
            stats.searchable[m] - t
            for m, t in stats.written.items()
            if m in stats.searchable and lo <= t - stats.started < hi
        )
        lost = sum(
            1 for m, t in stats.written.items() if m not in stats.searchable and lo <= t - stats.started < hi
        )
        samples = [
            (r, fd, seg, cpu)
            for (at, r), (fd, _d), seg, cpu in zip(
                stats.rss, stats.fds, stats.segments, stats.cpu, strict=False
            )
            if at < hi
        ]
        rss, fds, segments, cpu_end = samples[-1] if samples else (0, 0, 0, 0.0)
        before = [cpu for (at, _r), cpu in zip(stats.rss, stats.cpu, strict=False) if at < lo]
        cpu_used = cpu_end - (before[-1] if before else 0.0)
        batch_ms = sorted(ms for at, ms in stats.batches if lo <= at < hi)
        cells = (
            [f"{_pct(lats, 0.5) * 1000:.0f}", f"{_pct(lats, 0.95) * 1000:.0f}", f"{lats[-1] * 1000:.0f}"]
            if lats
            else ["-", "-", "-"]
        )
        rows.append(
            f"| {lo / 60:g}-{min(hi, minutes * 60) / 60:g} min | {len(lats) + lost} | "
            + " | ".join(cells)
            + f" | {rss / 1024:.0f} | {fds} | {segments} | {len(batch_ms)} | "
            + (f"{_pct(batch_ms, 0.5):.0f} / {batch_ms[-1]:.0f}" if batch_ms else "-")
            + f" | {cpu_used:.1f} |"
        )
    return rows


def _pct(values: list[float], p: float) -> float:
    return values[min(len(values) - 1, int(p * len(values)))] if values else float("nan")


def report(vault: Path, stats: Stats, args: argparse.Namespace) -> int:
    """Print the Markdown table; return the number of lost edits."""
    text = "".join(
        p.read_text(encoding="utf-8", errors="replace")
        for p in vault.rglob("*.md")
        if ".git" not in p.parts and ".vault-tools" not in p.parts
    )
    missing_in_files = [m for m in stats.written if m not in text]
    not_searchable = [m for m in stats.written if m not in stats.searchable]
    latencies = sorted(stats.searchable[m] - t for m, t in stats.written.items() if m in stats.searchable)
    first_rss = stats.rss[0][1] if stats.rss else 0
    last_rss = stats.rss[-1][1] if stats.rss else 0
    peak_rss = max((r for _t, r in stats.rss), default=0)
    first_fds, last_fds = (stats.fds[0][0], stats.fds[-1][0]) if stats.fds else (0, 0)
    peak_fds = max((n for n, _d in stats.fds), default=0)
    peak_deleted = max((d for _n, d in stats.fds), default=0)

    def pct(p: float) -> float:
        return _pct(latencies, p)

    rows = [
        ("duration", f"{args.minutes:g} min, {args.entries} generated entries"),
        (
            "edits written (" + " / ".join(name for name, _share in SAVE_STYLES) + ")",
            f"{len(stats.written)} ("
            + " / ".join(str(stats.styles.get(name, 0)) for name, _ in SAVE_STYLES)
            + ")",
        ),
        ("heartbeat runs", str(stats.heartbeats)),
        ("recall calls (other process)", str(stats.recall_calls)),
        ("**errors** (non-zero exits, tracebacks)", f"**{len(stats.errors)}**"),
        ("**lost edits: not in the files**", f"**{len(missing_in_files)}**"),
        ("**lost edits: not searchable at the end**", f"**{len(not_searchable)}**"),
        ("save-to-searchable p50 / p95", f"{pct(0.5) * 1000:.0f} ms / {pct(0.95) * 1000:.0f} ms"),
        ("save-to-searchable max", f"{(latencies[-1] if latencies else float('nan')) * 1000:.0f} ms"),
        (
            "watcher RSS first / last / peak",
            f"{first_rss / 1024:.1f} MB / {last_rss / 1024:.1f} MB / {peak_rss / 1024:.1f} MB ({len(stats.rss)} samples)",
        ),
        ("watcher open files first / last / peak", f"{first_fds} / {last_fds} / {peak_fds}"),
        ("watcher deleted files still mapped (peak)", str(peak_deleted)),
    ]
    print("| measure | value |\n|---|---|")
    for name, value in rows:
        print(f"| {name} | {value} |")
    print(
        "\n| window | edits | save-to-searchable p50 ms | p95 ms | max ms | watcher RSS MB | open files "
        "| index segments | batches | batch ms p50 / max | watcher CPU s |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    print("\n".join(windows(stats, args.minutes, args.window)))
    for what in stats.errors[:20]:
        print(f"\nerror: {what}")
    for marker in (missing_in_files + not_searchable)[:20]:
        print(f"lost: {marker}")
    return len(missing_in_files) + len(not_searchable)


def run(args: argparse.Namespace) -> int:
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="vault-soak-"))
    vault = root / "vault"
    if vault.exists():
        shutil.rmtree(vault)
    t0 = time.monotonic()
    generate(vault, entries=args.entries, seed=args.seed)
    env = {**os.environ, "GIT_AUTHOR_NAME": "soak", "GIT_AUTHOR_EMAIL": "soak@example.com"}
    env.update(GIT_COMMITTER_NAME="soak", GIT_COMMITTER_EMAIL="soak@example.com")
    (vault / ".gitignore").write_text(".vault-tools/\n")
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "generated"]):
        subprocess.run(["git", *cmd], cwd=vault, check=True, env=env)
    (vault / ".vault-tools").mkdir(exist_ok=True)
    (vault / ".vault-tools" / "config.toml").write_text("[heartbeat]\nquiet_seconds = 0\n")
    print(f"generated {args.entries} entries in {time.monotonic() - t0:.1f} s: {vault}", file=sys.stderr)

    stats = Stats()
    watch_log = root / "watch.log"
    watcher = start_watcher(vault, watch_log, serve=not args.no_serve)
    print(f"watcher ready after {time.monotonic() - t0:.1f} s", file=sys.stderr)
    stop_file = root / "stop-recall"
    stop_file.unlink(missing_ok=True)
    recall_proc = subprocess.Popen(
        [sys.executable, "-c", RECALL_LOOP, str(vault), str(stop_file)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    stop, stop_checker = threading.Event(), threading.Event()
    started = stats.started = time.monotonic()
    started_wall = time.time()
    threads = [
        threading.Thread(target=editor, args=(vault, stats, stop, random.Random(args.seed), args.save_every)),
        threading.Thread(target=heartbeats, args=(vault, stats, stop, args.heartbeat_every)),
        threading.Thread(
            target=sampler, args=(watcher.pid, stats, stop_checker, started, vault / ".vault-tools" / "index")
        ),
        threading.Thread(target=checker, args=(vault, stats, stop_checker)),
    ]
    for thread in threads:
        thread.start()
    time.sleep(args.minutes * 60)
    stop.set()
    for thread in threads[:2]:
        thread.join()
    drain = time.monotonic() + 60
    while time.monotonic() < drain:
        with stats.lock:
            if len(stats.searchable) == len(stats.written):
                break
        time.sleep(0.2)
    stop_checker.set()
    for thread in threads[2:]:
        thread.join()
    stop_file.write_text("")
    recall_out, recall_err = recall_proc.communicate(timeout=120)
    if recall_proc.returncode != 0 or "Traceback" in recall_err:
        stats.error(f"recall loop exit {recall_proc.returncode}: {recall_err.strip()[-300:]}")
    else:
        calls, errors = (int(x) for x in recall_out.split())
        stats.recall_calls = calls
        if errors:
            stats.error(f"recall loop: {errors} errors")
    watcher.send_signal(signal.SIGTERM)
    watcher.wait(timeout=60)
    log = watch_log.read_text(errors="replace")
    read_batches(log, stats, started_wall)
    if watcher.returncode != 0 or "Traceback" in log:
        stats.error(f"watcher exit {watcher.returncode}: {log.strip()[-300:]}")

    lost = report(vault, stats, args)
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)
    return 1 if stats.errors or lost else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--minutes", type=float, default=2.0)
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--window", type=float, default=5.0, metavar="MIN", help="report per this many minutes"
    )
    parser.add_argument("--heartbeat-every", type=float, default=5.0, metavar="S")
    parser.add_argument(
        "--save-every",
        type=float,
        default=1.0,
        metavar="S",
        help="seconds between the editor's saves (jittered ±50%%); 0.15 is the old stress rate",
    )
    parser.add_argument("--no-serve", action="store_true", help="run the watcher without its recall service")
    parser.add_argument(
        "--keep", metavar="DIR", help="work in DIR and keep it (default: a temp dir, removed)"
    )
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
