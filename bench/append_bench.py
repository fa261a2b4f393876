"""Append benchmark: one update of a growing note, read from its end (note_tail) and read in full.

    python bench/append_bench.py [--appends 2000] [--start 0] [--window 400] [--memory]

Two vaults hold the same note; a watcher-like ``Index`` per vault indexes it after every save.
Each save appends one line, as ``vault-tools note`` does (``- HH:MM text``; with ``--memory``, a
MEMORY.md item, which has no neighbours), to both notes, alternating which goes first, so that the
machine's load slows both alike. One vault's index reads only what was appended (this checkout);
the other's is the baseline: the same code with ``note_tail.read_appended`` switched off, which
is the full read every save took before (parse, fingerprint and compare every entry).

Prints, per window of ``--window`` saves, the CPU time of one update (``time.process_time``:
the process's own CPU, which other processes move little) p50 / p95 for both, and the ratio, then
the index segment count and whether both indexes hold the same documents.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from contextlib import nullcontext
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from vault_tools.config import load_config
from vault_tools.index.index import Index
from vault_tools.notes import tail as note_tail

DAY = "2026-12-04"
WORDS = ("deploy", "postgres", "tea", "meeting", "部署", "数据库", "lesson", "otter", "上周", "billing")


def line(n: int, memory: bool) -> str:
    words = " ".join(WORDS[(n * k) % len(WORDS)] for k in (1, 3, 7))
    if memory:
        return f"- 2026-12-01: soak person's line {words} zq{n}y\n"
    return f"- {n // 60 % 24:02d}:{n % 60:02d} soak edit {words} zq{n}y\n"


def make_vault(root: Path, start: int, memory: bool) -> Path:
    vault = root / "vault"
    (vault / "memory").mkdir(parents=True)
    head = "# Memory\n\n## Facts\n" if memory else f"---\ndate: {DAY}\ntags: [daily]\n---\n# {DAY}\n\n"
    body = "".join(line(n, memory) for n in range(start))
    (vault / ("MEMORY.md" if memory else f"memory/{DAY}.md")).write_text(head + body, encoding="utf-8")
    other = "MEMORY.md" if not memory else f"memory/{DAY}.md"
    (vault / other).write_text("# Other\n\n- 2026-11-01: an item that stays\n", encoding="utf-8")
    return vault


def never(end: note_tail.NoteEnd, data: bytes) -> None:
    return None


def timed_update(idx: Index, path: Path, text: str, full: bool) -> float:
    """Append ``text`` to ``path`` and index it; the update's CPU seconds."""
    with path.open("a", encoding="utf-8") as handle:
        handle.write(text)
    switched_off = mock.patch.object(note_tail, "read_appended", never) if full else nullcontext()
    with switched_off:
        started = time.process_time()
        idx.update([path])
        return time.process_time() - started


def documents(idx: Index) -> set[tuple[str, str]]:
    return idx.read(lambda s: {(f["id"], f["text"]) for f in s.all_stored_fields()})


def segments(idx: Index) -> int:
    return len(list(idx.dir.glob("*.seg")))


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))]


def run(args: argparse.Namespace) -> int:
    work = Path(tempfile.mkdtemp(prefix="append-bench-"))
    modes = {"full read": True, "appended end": False}
    indexes: dict[str, tuple[Index, Path]] = {}
    for mode in modes:
        vault = make_vault(work / mode.replace(" ", "-"), args.start, args.memory)
        idx = Index(load_config(vault))
        idx.rebuild()
        indexes[mode] = (idx, vault / ("MEMORY.md" if args.memory else f"memory/{DAY}.md"))
    times: dict[str, list[float]] = {mode: [] for mode in modes}
    print(
        f"{'MEMORY.md' if args.memory else 'daily note'}: {args.start} entries, then {args.appends} appends"
    )
    print(f"load average {os.getloadavg()[0]:.1f}; CPU ms of one update (time.process_time)\n")
    print("| entries | full read p50 / p95 | appended end p50 / p95 | p50 ratio |")
    print("|---:|---:|---:|---:|")
    for n in range(args.start, args.start + args.appends):
        order = list(modes) if n % 2 == 0 else list(reversed(modes))
        for mode in order:
            idx, path = indexes[mode]
            times[mode].append(timed_update(idx, path, line(n, args.memory), modes[mode]))
        if (n - args.start + 1) % args.window == 0:
            row(n + 1, {mode: values[-args.window :] for mode, values in times.items()})
    same = documents(indexes["full read"][0]) == documents(indexes["appended end"][0])
    print(f"\nsegments: {', '.join(f'{m} {segments(i)}' for m, (i, _p) in indexes.items())}")
    print(f"same documents in both indexes: {same}")
    print(f"total CPU: {', '.join(f'{m} {sum(v):.1f} s' for m, v in times.items())}")
    shutil.rmtree(work, ignore_errors=True)
    return 0 if same else 1


def row(entries: int, window: dict[str, list[float]]) -> None:
    full, tail = window["full read"], window["appended end"]
    cells = [f"{pct(v, 0.5) * 1000:.1f} / {pct(v, 0.95) * 1000:.1f} ms" for v in (full, tail)]
    ratio = statistics.median(full) / max(statistics.median(tail), 1e-9)
    print(f"| {entries:,} | {cells[0]} | {cells[1]} | {ratio:.1f}x |", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--appends", type=int, default=2000, help="saves, one appended line each")
    parser.add_argument("--start", type=int, default=0, help="entries the note has before the first")
    parser.add_argument("--window", type=int, default=400, help="saves per table row")
    parser.add_argument("--memory", action="store_true", help="append items to MEMORY.md instead")
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
