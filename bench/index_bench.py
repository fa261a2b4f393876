"""Index benchmark: Whoosh (vault_tools.index.index) side by side with SQLite FTS5, in one run.

    python bench/index_bench.py [--sizes 10000,100000] [--quick] [--saves 50] [--work DIR]
                                [--baseline-src DIR] [--rounds N]

For each size it generates the vault deterministically (``bench/genvault.py``: daily notes over
three years, 40% English / 30% Chinese / 30% mixed, plus a MEMORY.md of 2,000 items) and measures:

* full build: time, CPU time (the process and its build workers), index size and peak RSS of a
  fresh process, for ``Index.rebuild()`` and for
  SQLite FTS5 over the same entries (parsed by the same ``notes`` code, timed in), twice:
  ``unicode61`` on the raw text, and ``unicode61`` on text pre-tokenized by
  ``analysis.tokenize`` (CJK bigrams, stemmed words: the same terms Whoosh indexes);
* incremental update with nothing changed: ``Index.reconcile()`` in a warm process and
  ``vault-tools index`` as a fresh process; ``Index.ensure_current()`` (what every reading command
  runs first) in a warm process;
* the watcher (``vault-tools watch`` as a subprocess): peak RSS (VmHWM) over the run;
* save-to-searchable latency over ``--saves`` saves that cycle through in-place, temp + rename,
  ``sed -i``, ``cp`` over, and delete + recreate, each adding an entry with a unique marker word.
  Two readers poll in other processes: *watcher* searches the index only (the watcher alone makes
  the edit searchable), *recall* calls ``vault_tools.recall.recall.recall()`` (it also catches up by
  itself, as the CLI does).

Prints Markdown tables (times, sizes, ratios to FTS5, targets). Numbers from a shared machine are
noisy: the load average is printed with them. ``--baseline-src DIR`` builds each vault also with the
``vault_tools`` of another checkout (``git worktree add /tmp/before REV``), alternating with this one
``--rounds`` times (medians; the ratio column is then to that build): a before/after comparison
that a busy machine slows down alike.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from genvault import generate  # noqa: E402

PY = sys.executable
STYLES = ("in-place", "tmp+rename", "sed -i", "cp over", "delete+recreate")

BUILD_WHOOSH = """
import json, resource, sys, time
from pathlib import Path
from vault_tools.config import load_config
from vault_tools.index.index import Index
started = time.perf_counter()
report = Index(load_config(Path(sys.argv[1])), lock_timeout=600).rebuild()
seconds = time.perf_counter() - started
rss = max(resource.getrusage(who).ru_maxrss for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
cpu = sum(getattr(resource.getrusage(who), part) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
          for part in ("ru_utime", "ru_stime"))
print(json.dumps({"seconds": seconds, "cpu": cpu, "entries": report.entries, "rss_mb": rss / 1024}))
"""

BUILD_FTS = """
import json, resource, sqlite3, sys, time
from pathlib import Path
from vault_tools.notes import model as notes
from vault_tools.index.analysis import tokenize
vault, db, mode = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
db.unlink(missing_ok=True)
started = time.perf_counter()
con = sqlite3.connect(db)
con.execute("CREATE VIRTUAL TABLE entries USING fts5(id UNINDEXED, path UNINDEXED, day UNINDEXED, "
            "kind UNINDEXED, visibility UNINDEXED, section, tags, text, tokenize='unicode61')")
rows = []
for path in notes.iter_note_paths(vault):
    note = notes.read_note(path, vault)
    for e in note.entries:
        text = " ".join(tokenize(e.text)) if mode == "pretokenized" else e.text
        day = e.date.year * 10000 + e.date.month * 100 + e.date.day if e.date else 0
        rows.append((e.id, e.rel_path, day, e.kind, e.visibility, e.section, ",".join(e.tags), text))
con.executemany("INSERT INTO entries VALUES (?,?,?,?,?,?,?,?)", rows)
con.commit()
con.close()
seconds = time.perf_counter() - started
print(json.dumps({"seconds": seconds, "entries": len(rows),
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

POLLER = """
import sys, time
from pathlib import Path
from vault_tools.config import load_config
config = load_config(Path(sys.argv[1]))
mode = sys.argv[2]
if mode == "watcher":
    from whoosh.query import Term
    from vault_tools.index.analysis import tokenize
    from vault_tools.index.index import Index
    idx = Index(config)
    def present(marker):
        term = tokenize(marker)[0]
        return idx.read(lambda s: len(s.search(Term("text", term), limit=1))) > 0
else:
    from vault_tools.recall.recall import recall
    def present(marker):
        return any(marker in hit.text for hit in recall(config, marker, limit=3).results)
print("ready", flush=True)
for line in sys.stdin:
    marker = line.strip()
    if not marker:
        break
    polls = 0
    deadline = time.monotonic() + 30
    while not present(marker) and time.monotonic() < deadline:
        polls += 1
    print(marker, repr(time.time()), polls, flush=True)
"""


@dataclass
class SizeResult:
    size: int
    entries: int = 0
    files: int = 0
    builds: dict[str, dict[str, float]] = field(default_factory=dict)
    noop_lib: float = 0.0
    noop_cli: float = 0.0
    ensure_current: float = 0.0
    watch_hwm_mb: float = 0.0
    watch_rss_mb: float = 0.0
    latency: dict[str, list[float]] = field(default_factory=dict)  # reader -> seconds per save
    by_style: dict[str, list[float]] = field(default_factory=dict)
    misses: int = 0


def run_json(args: list[str], source: Path | None = None) -> dict[str, Any]:
    """Run a measuring script; ``source``: the checkout whose ``vault_tools`` it imports (its
    folder is also the working directory: ``python -c`` looks there first)."""
    env = None if source is None else {**os.environ, "PYTHONPATH": str(source)}
    out = subprocess.run(args, check=True, capture_output=True, text=True, env=env, cwd=source).stdout
    return dict(json.loads(out.strip().splitlines()[-1]))


def dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def p95(values: list[float]) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def measure_builds(
    vault: Path, work: Path, result: SizeResult, baseline: Path | None = None, rounds: int = 1
) -> None:
    """Whoosh builds (this checkout's, and ``baseline``'s alternating with it: medians of
    ``rounds``), then the FTS5 builds once."""
    sources: dict[str, Path | None] = {"this checkout": None}
    if baseline is not None:
        sources[f"baseline {baseline}"] = baseline
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in sources}
    for _round in range(rounds):
        for name, source in sources.items():
            shutil.rmtree(vault / ".vault-tools", ignore_errors=True)
            build = run_json([PY, "-c", BUILD_WHOOSH, str(vault)], source)
            build["bytes"] = dir_size(vault / ".vault-tools" / "index")
            meta = json.loads((vault / ".vault-tools" / "index" / "meta.json").read_text())
            build["workers"] = meta.get("build_workers", 1)
            runs[name].append(build)
    for name, builds in runs.items():
        whoosh = {
            key: median([float(b[key]) for b in builds]) for key in ("seconds", "cpu", "rss_mb", "bytes")
        }
        label = f"Whoosh ({name}, {builds[0]['workers']} build processes)"
        result.builds[label] = whoosh
        result.entries = int(builds[0]["entries"])
    for mode, label in (
        ("raw", "SQLite FTS5 unicode61, raw text"),
        ("pretokenized", "SQLite FTS5 unicode61, pre-tokenized"),
    ):
        db = work / f"fts-{result.size}-{mode}.sqlite"
        fts = run_json([PY, "-c", BUILD_FTS, str(vault), str(db), mode])
        fts["bytes"] = db.stat().st_size
        result.builds[label] = fts


def measure_noop(vault: Path, result: SizeResult) -> None:
    from vault_tools.config import load_config
    from vault_tools.index.index import Index

    config = load_config(vault)
    lib, ensure = [], []
    for _ in range(5):
        started = time.perf_counter()
        Index(config).reconcile()
        lib.append(time.perf_counter() - started)
        started = time.perf_counter()
        report = Index(config).ensure_current()
        ensure.append(time.perf_counter() - started)
        assert report.changed == 0 and not report.rebuilt, report
    cli = []
    for _ in range(3):
        started = time.perf_counter()
        subprocess.run(
            [PY, "-m", "vault_tools", "index", "--vault", str(vault)], check=True, capture_output=True
        )
        cli.append(time.perf_counter() - started)
    result.noop_lib, result.ensure_current, result.noop_cli = median(lib), median(ensure), median(cli)
    result.files = len(list((vault / "memory").glob("*.md"))) + 1


def proc_status(pid: int) -> dict[str, float]:
    values = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmHWM", "VmRSS"):
            values[key] = int(rest.split()[0]) / 1024
    return values


def save(path: Path, style: str, line: str, scratch: Path) -> None:
    old = path.read_text(encoding="utf-8")
    new = old + ("" if old.endswith("\n") else "\n") + line + "\n"
    if style == "in-place":
        with path.open("w", encoding="utf-8") as handle:
            handle.write(new)
    elif style == "tmp+rename":
        tmp = path.with_name(f".{path.name}.bench.tmp")
        tmp.write_text(new, encoding="utf-8")
        os.replace(tmp, path)
    elif style == "sed -i":
        subprocess.run(["sed", "-i", "-e", f"$a {line}", str(path)], check=True)
    elif style == "cp over":
        source = scratch / "copy-source.md"
        source.write_text(new, encoding="utf-8")
        subprocess.run(["cp", str(source), str(path)], check=True)
    elif style == "delete+recreate":
        path.unlink()
        path.write_text(new, encoding="utf-8")
    else:
        raise ValueError(style)


def start_poller(vault: Path, mode: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [PY, "-c", POLLER, str(vault), mode], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    return proc


def wait_watch_ready(vault: Path, pid: int, timeout: float = 600) -> None:
    state_file = vault / ".vault-tools" / "watch.json"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            state = json.loads(state_file.read_text())
            if state.get("pid") == pid and state.get("last_reconcile"):
                return
        except (OSError, ValueError):
            pass
        time.sleep(0.05)
    raise RuntimeError("the watcher did not start")


def measure_watch(vault: Path, work: Path, result: SizeResult, saves: int) -> None:
    watch = subprocess.Popen(
        [PY, "-m", "vault_tools", "watch", "--vault", str(vault)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_watch_ready(vault, watch.pid)
        rng = random.Random(11)
        run = f"{time.time_ns() // 1_000_000 % 10**9:09d}"
        days = sorted((vault / "memory").glob("*.md"))
        for mode in ("watcher", "recall"):
            poller = start_poller(vault, mode)
            assert poller.stdin is not None and poller.stdout is not None
            times: list[float] = []
            for i in range(saves):
                style = STYLES[i % len(STYLES)]
                marker = f"zqbench{run}{mode[0]}{result.size}n{i:03d}"  # unique even in a reused vault
                path = rng.choice(days)
                started = time.time()
                save(path, style, f"- 23:59 benchmark save {marker}", work)
                poller.stdin.write(marker + "\n")
                poller.stdin.flush()
                echoed, found_at, _polls = poller.stdout.readline().split()
                assert echoed == marker
                latency = float(found_at) - started
                if latency > 29:
                    result.misses += 1
                times.append(latency)
                result.by_style.setdefault(f"{mode} / {style}", []).append(latency)
                time.sleep(rng.uniform(0.05, 0.3))  # saves are not back to back
            poller.stdin.write("\n")
            poller.stdin.flush()
            poller.wait(30)
            result.latency[mode] = times
        status = proc_status(watch.pid)
        result.watch_hwm_mb, result.watch_rss_mb = status["VmHWM"], status["VmRSS"]
    finally:
        watch.terminate()
        watch.wait(60)


def load_average() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def render(results: list[SizeResult]) -> str:
    lines = []
    if any(r.builds for r in results):
        lines += render_builds(results)
    if any(r.noop_lib for r in results):
        lines += render_incremental(results)
    if any(r.latency for r in results):
        lines += render_latency(results)
    return "\n".join(lines)


def render_builds(results: list[SizeResult]) -> list[str]:
    lines = ["### Full build (fresh process each; parsing the notes included)", ""]
    baseline = next((label for r in results for label in r.builds if "(baseline " in label), None)
    against = "the baseline build" if baseline else "FTS5 pre-tokenized"
    lines.append(f"Ratios are to {against} of the same size, measured in the same run.")
    lines.append("")
    lines.append(
        "| entries | engine | build s | ratio | CPU s | index MB | ratio | peak RSS MB (largest process) |"
    )
    lines.append("|---:|---|---:|---:|---:|---:|---:|---:|")
    for r in results:
        name = next((label for label in r.builds if "(baseline " in label), None)
        base = r.builds[name or "SQLite FTS5 unicode61, pre-tokenized"]
        for label, b in r.builds.items():
            cpu = f"{b['cpu']:.1f}" if "cpu" in b else "–"
            lines.append(
                f"| {r.entries:,} | {label} | {b['seconds']:.2f} | {b['seconds'] / base['seconds']:.2f}× | {cpu} "
                f"| {b['bytes'] / 1e6:.1f} | {b['bytes'] / base['bytes']:.2f}× | {b['rss_mb']:.0f} |"
            )
    return [*lines, ""]


def render_incremental(results: list[SizeResult]) -> list[str]:
    lines = ["### Incremental and watcher", ""]
    lines.append(
        "| entries | files | no-change `reconcile()` | no-change `vault-tools index` (process) | "
        "`ensure_current()` | watch VmHWM MB | watch RSS MB |"
    )
    lines.append("|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        lines.append(
            f"| {r.entries or r.size:,} | {r.files:,} | {r.noop_lib * 1000:.0f} ms | {r.noop_cli * 1000:.0f} ms | "
            f"{r.ensure_current * 1000:.0f} ms | {r.watch_hwm_mb:.0f} | {r.watch_rss_mb:.0f} |"
        )
    return [*lines, ""]


def render_latency(results: list[SizeResult]) -> list[str]:
    lines = ["### Save-to-searchable (save in this process → found by a reader in another)", ""]
    lines.append("| entries | reader | saves | p50 ms | p95 ms | max ms | target p95 < 1000 ms |")
    lines.append("|---:|---|---:|---:|---:|---:|---|")
    for r in results:
        for mode, times in r.latency.items():
            ok = "yes" if p95(times) < 1.0 else "NO"
            lines.append(
                f"| {r.entries or r.size:,} | {mode} | {len(times)} | {median(times) * 1000:.0f} | "
                f"{p95(times) * 1000:.0f} | {max(times) * 1000:.0f} | {ok} |"
            )
    lines += ["", "| entries | reader / save style | p50 ms | max ms |", "|---:|---|---:|---:|"]
    for r in results:
        for key, times in sorted(r.by_style.items()):
            lines.append(
                f"| {r.entries or r.size:,} | {key} | {median(times) * 1000:.0f} | {max(times) * 1000:.0f} |"
            )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--sizes", default="10000,100000", help="daily entries per vault, comma-separated")
    parser.add_argument("--quick", action="store_true", help="10k only, 20 saves")
    parser.add_argument("--saves", type=int, default=50)
    parser.add_argument("--work", type=Path, help="folder for the vaults (default: a temp folder, removed)")
    parser.add_argument(
        "--baseline-src",
        type=Path,
        help="a checkout whose vault_tools builds each vault too, alternating with this one (before/after)",
    )
    parser.add_argument("--rounds", type=int, default=1, help="builds of each kind (medians are shown)")
    parser.add_argument(
        "--phases",
        default="build,incremental,watch",
        help="what to measure (build,incremental,watch); without build, --work must hold built vaults",
    )
    args = parser.parse_args(argv)
    sizes = [10_000] if args.quick else [int(s) for s in args.sizes.split(",") if s]
    saves = 20 if args.quick else args.saves
    phases = set(args.phases.split(","))
    work = args.work or Path(tempfile.mkdtemp(prefix="index-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    results = []
    try:
        for size in sizes:
            vault = work / f"vault-{size}"
            result = SizeResult(size)
            if "build" in phases:
                generate(vault, size, force=True)
                print(f"[{size}] building (load {load_average()})", file=sys.stderr, flush=True)
                measure_builds(vault, work, result, args.baseline_src, args.rounds)
            if "incremental" in phases:
                print(f"[{size}] incremental (load {load_average()})", file=sys.stderr, flush=True)
                measure_noop(vault, result)
            if "watch" in phases:
                print(f"[{size}] watcher, {saves} saves × 2 readers (load {load_average()})", file=sys.stderr)
                measure_watch(vault, work, result, saves)
            results.append(result)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    print(
        f"Machine: {os.cpu_count()} cores, load average at the end {load_average()}, Python {sys.version.split()[0]}, "
        f"SQLite {sqlite3.sqlite_version}\n"
    )
    print(render(results))
    if any(r.misses for r in results):
        print("\nsaves never found within 30 s:", sum(r.misses for r in results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
