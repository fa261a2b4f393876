"""Heartbeat speed and cost: rules mode over a busy week, and what LLM mode sends as the vault grows.

    python bench/heartbeat_bench.py [--entries 1000] [--seed 11] [--keep DIR] [--parts rules,llm,scale]
        [--sizes 1000,10000,77000] [--baseline REF] [--baseline-timeout 300]

1. Rules mode: a deterministic busy week (``--entries`` entries over 7 days, English and Chinese:
   decisions, preferences, lessons, facts, repeated preferences, temporary plans, todos, the
   assistant's boilerplate, secrets, #private entries) in a git repository, with a MEMORY.md of 200
   items (some expired, some about to be superseded). The first heartbeat is timed with every
   commit it makes; then a second run with nothing new (target: under 5 s and under 1 s).
2. LLM mode against the OpenAI-compatible test server (``tests/llm_server.py``, 127.0.0.1): the same
   200 new entries in a small vault and in a vault with 20x the history and 20x the MEMORY.md
   items, then 2x the new entries; requests, prompt and completion tokens per run (target: they
   follow the new entries, not the vault's size).

3. Scale (``--parts scale``): one daily note of 1k, 10k and 77k entries (``--sizes``), *similar* ones
   (a few templates: thousands of near-duplicates) and *varied* ones (the busy week's mix), one
   heartbeat each in a fresh process: seconds, peak RSS, entries curated and left for later runs.
   With ``--baseline REF`` the same vaults also run with the code at REF (a temporary git worktree),
   side by side, stopped after ``--baseline-timeout`` seconds; ratios printed.

Prints a Markdown table with the ratios.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from llm_server import LLMServer, Reply, user_payload  # type: ignore[import-not-found]  # noqa: E402

from vault_tools.config import LLMConfig, load_config  # noqa: E402
from vault_tools.heartbeat import run as heartbeat  # noqa: E402

END = dt.date(2026, 12, 1)
TOOLS = [
    "PostgreSQL",
    "SQLite",
    "Redis",
    "Kafka",
    "pnpm",
    "Bun",
    "Vite",
    "Rust",
    "Go",
    "FastAPI",
    "Django",
    "Terraform",
    "Ansible",
    "Nix",
]
PARTS = [
    "billing",
    "ingest",
    "search",
    "reports",
    "auth",
    "dashboard",
    "exporter",
    "scheduler",
    "gateway",
    "notifier",
]
THINGS = [
    "tea",
    "coffee",
    "oat-milk",
    "trains",
    "bikes",
    "paper-books",
    "e-books",
    "mornings",
    "evenings",
    "vim",
    "emacs",
    "dark-mode",
]
PEOPLE = ["Maria", "Tom", "Jonas", "Wei", "Priya", "Lena", "Ada", "Sven"]
PLACES = ["café", "office", "library", "park", "bakery", "station"]
ZH_PARTS = ["账单", "导入", "搜索", "报表", "登录", "看板", "导出", "调度", "网关", "通知"]
ZH_THINGS = ["绿茶", "黑咖啡", "燕麦奶", "火车", "自行车", "纸质书", "早起", "夜跑", "辣的菜", "甜点"]
BOILERPLATE = [
    "HEARTBEAT_OK",
    "Good morning! How can I help you today?",
    "早上好",
    "I'm sorry, I can't help with that.",
    "Sure! Here's a summary of your notes from today.",
]


class Week:
    """A deterministic busy week of notes plus a MEMORY.md, written into a folder."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.serial = 0

    def pick(self, items: list[str]) -> str:
        return self.rng.choice(items)

    def entry(self) -> str:
        self.serial += 1
        n = self.serial
        roll = self.rng.random()
        makers: list[tuple[float, Callable[[], str]]] = [
            (
                0.035,
                lambda: f"Decided to use {self.pick(TOOLS)} for the {self.pick(PARTS)} service, ticket {n}.",
            ),
            (0.02, lambda: f"决定以后{self.pick(ZH_PARTS)}模块都用 {self.pick(TOOLS)}，编号 {n}。"),
            (0.03, lambda: f"I prefer {self.pick(THINGS)} over {self.pick(THINGS)} for task {n}."),
            (0.015, lambda: f"我更喜欢{self.pick(ZH_THINGS)}，第 {n} 次这么觉得。"),
            (0.02, lambda: f"Lesson: always check the {self.pick(PARTS)} dashboards before release {n}."),
            (0.01, lambda: f"教训：发布{self.pick(ZH_PARTS)}之前一定要先备份，第 {n} 次提醒。"),
            (0.03, lambda: "I prefer dark roast coffee over light roast."),  # repeated across days
            (
                0.45,
                lambda: (
                    f"Met {self.pick(PEOPLE)} at the {self.pick(PLACES)} about the {self.pick(PARTS)} work {n}."
                ),
            ),
            (
                0.12,
                lambda: f"Tomorrow at {self.rng.randint(8, 18)} the {self.pick(PARTS)} review {n} happens.",
            ),
            (0.09, lambda: f"[ ] Follow up on the {self.pick(PARTS)} ticket {n}"),
            (0.12, lambda: self.pick(BOILERPLATE)),
            (0.01, lambda: f"The {self.pick(PARTS)} API key is sk-proj-{self.token(40)}"),
            (0.05, lambda: f"Talked with the therapist about the {self.pick(PARTS)} stress {n}. #private"),
        ]
        total = 0.0
        for weight, make in makers:
            total += weight
            if roll < total:
                return make()
        return makers[7][1]()

    def token(self, length: int) -> str:
        alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
        return "".join(self.rng.choice(alphabet) for _ in range(length))

    def write_days(self, vault: Path, entries: int, days: int, end: dt.date) -> None:
        per_day = [entries // days + (1 if d < entries % days else 0) for d in range(days)]
        for offset, count in enumerate(per_day):
            day = end - dt.timedelta(days=days - 1 - offset)
            lines = [f"---\ndate: {day.isoformat()}\ntags: [daily]\n---\n# {day.isoformat()}\n\n"]
            for index in range(count):
                minute = index * 1439 // max(1, count)
                lines.append(f"- {minute // 60:02d}:{minute % 60:02d} {self.entry()}\n")
            path = vault / "memory" / f"{day.isoformat()}.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("".join(lines), encoding="utf-8")

    def write_memory(self, vault: Path, items: int) -> None:
        sections: dict[str, list[str]] = {"Decisions": [], "Preferences": [], "Lessons": [], "Facts": []}
        for n in range(items):
            day = dt.date(2026, 1, 1) + dt.timedelta(days=n % 300)
            name = list(sections)[n % 4]
            if n < 10:
                text = f"The {PARTS[n]} demo is on {day.isoformat()} [expires:: 2026-11-{10 + n:02d}]"
            elif n < 15:
                text = f"Use {TOOLS[n - 10]} for the {PARTS[n - 10]} service"
            else:
                text = f"Item {n} about {self.pick(PEOPLE)} and the {self.pick(PARTS)} {self.pick(PLACES)}"
            sections[name].append(f"- {day.isoformat()}: {text} [importance:: 0.6] ^m-{n:06x}\n")
        body = "---\ntitle: Long-term memory\n---\n# Long-term memory\n"
        for name, lines in sections.items():
            body += f"\n## {name}\n\n" + "".join(lines)
        (vault / "MEMORY.md").write_text(body, encoding="utf-8")


def git_commit_all(vault: Path) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "Lin",
        "GIT_AUTHOR_EMAIL": "lin@example.com",
        "GIT_COMMITTER_NAME": "Lin",
        "GIT_COMMITTER_EMAIL": "lin@example.com",
    }
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "notes", "--no-gpg-sign"]):
        subprocess.run(["git", *args], cwd=vault, env=env, check=True, capture_output=True)


def make_vault(
    folder: Path,
    *,
    seed: int,
    entries: int,
    memory_items: int,
    history_days: int = 0,
    history_per_day: int = 0,
) -> Path:
    folder.mkdir(parents=True)
    (folder / ".vault-tools").mkdir()
    # the budget is measured by bench/curate_bench.py; here its 200 items would be pruned over it
    (folder / ".vault-tools" / "config.toml").write_text(
        "[heartbeat]\nquiet_seconds = 0\nbudget_words_per_month = 0\n"
    )
    (folder / ".gitignore").write_text(".vault-tools/\n")
    if history_days:
        Week(seed + 1).write_days(
            folder, history_days * history_per_day, history_days, END - dt.timedelta(days=7)
        )
    week = Week(seed)
    week.write_days(folder, entries, 7, END)
    week.write_memory(folder, memory_items)
    git_commit_all(folder)
    return folder


def count_commits(vault: Path) -> int:
    out = subprocess.run(["git", "rev-list", "--count", "HEAD"], cwd=vault, capture_output=True, text=True)
    return int(out.stdout.strip())


def rules_rows(base: Path, entries: int, seed: int) -> list[dict[str, Any]]:
    vault = make_vault(base / "rules", seed=seed, entries=entries, memory_items=200)
    config = load_config(vault)
    rows = []
    for label in ("first run", "second run, nothing new"):
        before = count_commits(vault)
        started = time.perf_counter()
        report = heartbeat.run_heartbeat(config, heartbeat.Options(as_of=END, use_llm=False))
        seconds = time.perf_counter() - started
        rows.append(
            {
                "run": label,
                "new": report.new_entries,
                "promoted": len(report.promoted),
                "merged": len(report.merged),
                "pruned": len(report.pruned),
                "commits": count_commits(vault) - before,
                "seconds": seconds,
            }
        )
    return rows


def simulated_model(request: dict[str, Any]) -> str:
    """Answers like a cooperative model: the entries that state a decision, preference or lesson."""
    found = []
    for entry in user_payload(request).get("entries", []):
        text = entry["text"]
        category = next(
            (
                c
                for keys, c in (
                    (("Decided", "决定"), "decision"),
                    (("prefer", "喜欢"), "preference"),
                    (("Lesson", "教训"), "lesson"),
                )
                if any(k in text for k in keys)
            ),
            None,
        )
        if category:
            found.append({"text": text, "sources": [entry["id"]], "category": category, "importance": 0.8})
    return json.dumps({"insights": found}, ensure_ascii=False)


def llm_rows(base: Path, seed: int) -> list[dict[str, Any]]:
    scenarios = [
        ("small vault: 100 items, 30 days of history", 200, 100, 30),
        ("20x vault: 2,000 items, 600 days of history", 200, 2000, 600),
        ("100x vault: 10,000 items, 3,000 days of history", 200, 10000, 3000),
        ("20x vault, 2x new entries", 400, 2000, 600),
    ]
    rows = []
    with LLMServer() as server:
        server.default = Reply(responder=simulated_model)
        for number, (label, new, items, history) in enumerate(scenarios):
            vault = make_vault(
                base / f"llm-{number}",
                seed=seed,
                entries=new,
                memory_items=items,
                history_days=history,
                history_per_day=10,
            )
            loaded = load_config(vault)
            config = dataclasses.replace(
                loaded,
                llm=LLMConfig(base_url=server.base_url, model="bench-model", max_tokens_per_run=200_000),
            )
            size = sum(p.stat().st_size for p in vault.rglob("*.md"))
            started = time.perf_counter()
            report = heartbeat.run_heartbeat(config, heartbeat.Options(as_of=END))
            rows.append(
                {
                    "scenario": label,
                    "vault_kb": size // 1024,
                    "new": report.new_entries,
                    "requests": report.requests,
                    "prompt": report.tokens["prompt"],
                    "completion": report.tokens["completion"],
                    "promoted": len(report.promoted),
                    "seconds": time.perf_counter() - started,
                    "mode": report.mode,
                }
            )
    return rows


def rules_table(rules: list[dict[str, Any]], entries: int) -> str:
    lines = [
        f"### Rules mode: a busy week ({entries} entries over 7 days, MEMORY.md of 200 items)",
        "",
        "| run | new entries | promoted | merged | pruned | commits | seconds | target |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    targets = ["< 5 s", "< 1 s, no commit"]
    for row, target in zip(rules, targets, strict=True):
        lines.append(
            f"| {row['run']} | {row['new']} | {row['promoted']} | {row['merged']} | {row['pruned']} | "
            f"{row['commits']} | {row['seconds']:.2f} | {target} |"
        )
    first, second = rules
    lines += [
        "",
        f"Per commit: {1000 * first['seconds'] / max(1, first['commits']):.1f} ms; "
        f"second run / first run: {second['seconds'] / first['seconds']:.2f}x.",
    ]
    return "\n".join(lines)


def llm_table(llm: list[dict[str, Any]]) -> str:
    lines = [
        "",
        "### LLM mode against tests/llm_server.py (one batched request per run)",
        "",
        "| scenario | vault size | new entries | requests | prompt tokens | completion tokens | promoted | seconds |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in llm:
        lines.append(
            f"| {row['scenario']} | {row['vault_kb']} KB | {row['new']} | {row['requests']} | {row['prompt']} | "
            f"{row['completion']} | {row['promoted']} | {row['seconds']:.2f} |"
        )
    small, big, huge, double = llm
    lines += [
        "",
        "Prompt tokens with the same 200 new entries: 20x vault / small vault "
        f"{big['prompt'] / small['prompt']:.2f}x (vault {big['vault_kb'] / max(1, small['vault_kb']):.0f}x larger), "
        f"100x / small {huge['prompt'] / small['prompt']:.2f}x "
        f"(vault {huge['vault_kb'] / max(1, small['vault_kb']):.0f}x larger); "
        f"2x new entries / 1x (20x vault): {double['prompt'] / big['prompt']:.2f}x.",
    ]
    return "\n".join(lines)


SIMILAR_ZH = ["账单", "导入", "搜索", "报表"]


def similar_line(rng: random.Random, n: int) -> str:
    """Lines from three templates with few choices: each has hundreds of near-duplicates."""
    roll = rng.random()
    if roll < 0.5:
        return f"Decided to use {rng.choice(TOOLS)} for the {rng.choice(PARTS)} service, ticket {n}."
    if roll < 0.8:
        return f"I prefer {rng.choice(THINGS)} over {rng.choice(THINGS)} for the {rng.choice(PARTS)} work."
    return f"决定以后{rng.choice(SIMILAR_ZH)}模块都用 {rng.choice(TOOLS)}，编号 {n}。"


def scale_vault(folder: Path, entries: int, kind: str, seed: int) -> Path:
    """One daily note of ``entries`` lines (as an import of a long log would make) and a MEMORY.md."""
    folder.mkdir(parents=True)
    (folder / ".vault-tools").mkdir()
    config = "[heartbeat]\nquiet_seconds = 0\nsummaries = false\n"
    (folder / ".vault-tools" / "config.toml").write_text(config)
    (folder / ".gitignore").write_text(".vault-tools/\n")
    rng = random.Random(seed)
    week = Week(seed)
    lines = [f"---\ndate: {END.isoformat()}\n---\n# {END.isoformat()}\n\n"]
    for n in range(entries):
        lines.append(f"- {similar_line(rng, n) if kind == 'similar' else week.entry()}\n")
    (folder / "memory").mkdir()
    (folder / "memory" / f"{END.isoformat()}.md").write_text("".join(lines), encoding="utf-8")
    week.write_memory(folder, 200)
    git_commit_all(folder)
    return folder


CHILD = """
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
import datetime as dt
from pathlib import Path
from vault_tools.heartbeat import run as heartbeat
from vault_tools.config import load_config
config = load_config(Path(sys.argv[2]))
own = resource.getrusage(resource.RUSAGE_SELF)
cpu_before = own.ru_utime + own.ru_stime  # imports and config: not the heartbeat's
started = time.perf_counter()
runs, promoted, commits = 0, 0, 0
while True:  # with a fourth argument: run after run until no entry is left for the next (at most 40)
    report = heartbeat.run_heartbeat(config, heartbeat.Options(as_of=dt.date.fromisoformat(sys.argv[3]), use_llm=False))
    runs, promoted, commits = runs + 1, promoted + len(report.promoted), commits + len(report.commits)
    if len(sys.argv) < 5 or not getattr(report, "deferred", 0) or runs >= 40:
        break
own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({
    "seconds": time.perf_counter() - started,
    "cpu": own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime - cpu_before,
    "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "new": report.new_entries,
    "left": getattr(report, "deferred", 0),
    "promoted": promoted,
    "commits": commits,
    "runs": runs,
}))
"""


def run_child(
    code_root: Path, template: Path, work: Path, timeout: float, *, until_done: bool = False
) -> dict[str, Any]:
    """One heartbeat over a fresh copy of ``template`` with the code at ``code_root``, in its own
    process; ``until_done``: run after run in that process until no entry is left for later."""
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(template, work, symlinks=True)
    command = [sys.executable, "-c", CHILD, str(code_root), str(work), END.isoformat()]
    if until_done:
        command.append("until-done")
    started = time.perf_counter()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"timeout": timeout}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if done.returncode != 0:
        return {
            "error": (done.stderr.strip().splitlines() or ["failed"])[-1],
            "seconds": time.perf_counter() - started,
        }
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def baseline_tree(base: Path, ref: str) -> Path:
    tree = base / "baseline-code"
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), ref],
        check=True,
        capture_output=True,
    )
    return tree


def scale_rows(
    base: Path, sizes: list[int], seed: int, baseline: str | None, timeout: float
) -> list[dict[str, Any]]:
    rows = []
    old_code = baseline_tree(base, baseline) if baseline else None
    try:
        for size in sizes:
            for kind in ("similar", "varied"):
                template = scale_vault(base / f"scale-{kind}-{size}", size, kind, seed)
                row: dict[str, Any] = {"size": size, "kind": kind}
                row["after"] = run_child(ROOT, template, base / "work", timeout=3600)
                if row["after"].get("left"):
                    row["done"] = run_child(ROOT, template, base / "work", timeout=7200, until_done=True)
                if old_code is not None:
                    row["before"] = run_child(old_code, template, base / "work", timeout=timeout)
                shutil.rmtree(template, ignore_errors=True)
                rows.append(row)
                print(f"scale: {size} {kind}: {row}", file=sys.stderr)
    finally:
        if old_code is not None:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(old_code)],
                check=False,
                capture_output=True,
            )
    return rows


def cell(result: dict[str, Any] | None) -> tuple[str, str, str]:
    """(wall seconds, CPU seconds with git's, peak RSS MB) of one run."""
    if result is None:
        return "", "", ""
    if "timeout" in result:
        return f"> {result['timeout']:.0f} (stopped)", "", ""
    if "error" in result:
        return f"error: {result['error'][:60]}", "", ""
    return f"{result['seconds']:.1f}", f"{result['cpu']:.1f}", f"{result['rss_mb']:.0f}"


def speedup(before: dict[str, Any] | None, after: dict[str, Any]) -> str:
    """before / after in CPU seconds (a loaded machine stretches wall time, not CPU time)."""
    if before is None or "cpu" not in after:
        return ""
    if "cpu" in before:
        return f"{before['cpu'] / after['cpu']:.1f}x"
    if "timeout" in before:
        return f"> {before['timeout'] / after['seconds']:.0f}x (wall)"
    return ""


def scale_table(rows: list[dict[str, Any]], baseline: str | None) -> str:
    lines = [
        "### Scale: one daily note of N entries, one heartbeat (rules), a fresh process each",
        "",
        "CPU: the process's and its git commands' user + system seconds (what a loaded machine does not stretch).",
        "A note over heartbeat.max_new_entries (5,000) takes several runs: 'all pieces' is every run until",
        "nothing is left, in one process; the ratio compares the same work (all entries curated).",
        "",
        "| entries | kind | curated / left | promoted | seconds | CPU s | peak RSS MB | all pieces: runs, CPU s |"
        + (
            f" seconds at {baseline} | CPU s at {baseline} | peak RSS MB at {baseline} | CPU before / after |"
            if baseline
            else ""
        ),
        "|---:|---|---:|---:|---:|---:|---:|---:|" + ("---:|---:|---:|---:|" if baseline else ""),
    ]
    for row in rows:
        after, before = row["after"], row.get("before")
        seconds, cpu, rss = cell(after)
        curated = f"{after.get('new', '?')} / {after.get('left', '?')}"
        done = row.get("done")
        pieces = f"{done['runs']}, {done['cpu']:.1f}" if done and "cpu" in done else "1 (all in one)"
        line = (
            f"| {row['size']:,} | {row['kind']} | {curated} | {after.get('promoted', '?')} | {seconds} | {cpu} "
            f"| {rss} | {pieces} |"
        )
        if baseline:
            old_seconds, old_cpu, old_rss = cell(before)
            line += f" {old_seconds} | {old_cpu} | {old_rss} | {speedup(before, done or after)} |"
        lines.append(line)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--entries", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--keep", type=Path, help="build the vaults here and keep them")
    parser.add_argument(
        "--parts",
        default="rules,llm",
        help="which tables: rules, llm, scale (1k/10k/77k entries), comma-separated",
    )
    parser.add_argument("--sizes", default="1000,10000,77000", help="entries per scale vault")
    parser.add_argument("--baseline", metavar="REF", help="run the scale vaults with the code at REF too")
    parser.add_argument("--baseline-timeout", type=float, default=300.0, metavar="S")
    args = parser.parse_args(argv)
    home = tempfile.TemporaryDirectory(prefix="hb-bench-")
    base = args.keep or Path(home.name)
    os.environ.setdefault("GIT_CONFIG_NOSYSTEM", "1")
    sizes = [int(size) for size in args.sizes.split(",")]
    parts = set(args.parts.split(","))
    try:
        if "rules" in parts:
            print(rules_table(rules_rows(base, args.entries, args.seed), args.entries))
        if "llm" in parts:
            print(llm_table(llm_rows(base, args.seed)))
        if "scale" in parts:
            rows = scale_rows(base, sizes, args.seed, args.baseline, args.baseline_timeout)
            print("\n" + scale_table(rows, args.baseline))
    finally:
        if args.keep is None:
            home.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
