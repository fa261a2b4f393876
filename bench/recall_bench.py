"""Recall quality and speed, side by side with plain BM25 (SQLite FTS5) and ripgrep.

    python bench/recall_bench.py                      # quality on the judged set (about a minute)
    python bench/recall_bench.py --latency            # + latency on a 100k-entry vault (slow first run)
    python bench/recall_bench.py --latency --entries 20000 --queries 100

Quality: ``bench/retrieval_set.py`` (a generated background vault with planted, judged facts).
Every row runs the same 175+ queries over the same entries; recall@k counts the share of a
query's answering facts found in the top k (a fact written in two places counts once, found
through either place or a hit's ``also_in``); MRR is of the first answering fact. Rows:

* ``recall`` as shipped (``vault_tools.recall.recall``, word windows padded);
* the word-window alternatives: ``exact`` window, ``rank`` (no filter, ranked by distance),
  ``ignore`` (time words left in the keywords);
* ``BM25 (FTS5)``: SQLite FTS5 ``bm25()`` over the same entries, OR of every query term, no
  filters; ``BM25 (FTS5) -stop``: the same with stop and question words dropped. Both index the
  terms of our analyzer (stemmed words, CJK bigrams): FTS5's own tokenizers lose Chinese
  (``docs/research``), and the comparison is of ranking and filtering, not of tokenizing.

Latency: ``--entries`` (default 100,000) entries from ``bench/genvault.py`` in ``bench/out/``
(kept between runs; the index is built once). 200 queries (the judged set's questions and
generated probe markers): the ``recall`` CLI as a fresh process per query, the Python API with a
warm searcher, SQLite FTS5 (warm, and a fresh process per query), and ripgrep (a process per
query; the row is skipped when ``rg`` is not installed).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import datetime as dt
import json
import os
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import retrieval_set as rs  # noqa: E402
from locomo_bench import tuning_with  # noqa: E402

from vault_tools.config import Config, load_config  # noqa: E402
from vault_tools.index.analysis import query_terms, tokenize  # noqa: E402
from vault_tools.index.index import Index  # noqa: E402
from vault_tools.notes.model import read_vault  # noqa: E402
from vault_tools.recall.recall import Recaller  # noqa: E402
from vault_tools.recall.tuning import DEFAULT_TUNING, Tuning  # noqa: E402
from vault_tools.watch import service  # noqa: E402

K = 10
SLICES = (
    "all", "core", "en", "zh", "question", "keyword", "time", "late", "tag", "dup",
    "trad", "dialogue", "log", "changed", "days", "phrase", "morph", "noun", "task", "ahead", "cross",
)  # fmt: skip

Ranker = Callable[[rs.Query], list[set[str]]]  # a ranked list; each item: the places it stands for


# ---------------------------------------------------------------------------------------------
# Baseline: SQLite FTS5


class Fts5:
    """Plain BM25 over the vault's entries: one FTS5 row per entry, our analyzer's terms."""

    def __init__(self, vault: Path, path: str = ":memory:") -> None:
        self.db = sqlite3.connect(path)
        self.db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS e USING fts5(terms, place UNINDEXED)")
        if not self.db.execute("SELECT count(*) FROM e").fetchone()[0]:
            loaded, _ = read_vault(vault)
            rows = [
                (" ".join(tokenize(entry.text)), f"{entry.rel_path}:{entry.start_line}")
                for note in loaded
                for entry in note.entries
            ]
            self.db.executemany("INSERT INTO e (terms, place) VALUES (?, ?)", rows)
            self.db.commit()

    def search(self, terms: Sequence[str], limit: int = K) -> list[str]:
        if not terms:
            return []
        match = " OR ".join('"' + t.replace('"', '""') + '"' for t in dict.fromkeys(terms))
        rows = self.db.execute(
            "SELECT place FROM e WHERE e MATCH ? ORDER BY bm25(e) LIMIT ?", (match, limit)
        ).fetchall()
        return [r[0] for r in rows]


# ---------------------------------------------------------------------------------------------
# Quality


def evaluate(built: rs.Built, rank: Ranker) -> dict[str, tuple[float, float, float, int]]:
    """recall@5, recall@10, MRR and query count per slice."""
    per: dict[str, list[tuple[float, float, float]]] = defaultdict(list)
    for query in rs.QUERIES:
        groups = built.relevant(query)
        ranked = rank(query)[:K]
        found_at: list[int | None] = []
        for group in groups:
            first = next((i for i, places in enumerate(ranked) if places & group), None)
            found_at.append(first)
        r5 = sum(1 for f in found_at if f is not None and f < 5) / len(groups)
        r10 = sum(1 for f in found_at if f is not None) / len(groups)
        firsts = [f for f in found_at if f is not None]
        mrr = 1 / (min(firsts) + 1) if firsts else 0.0
        for s in ("all", *query.slices):
            per[s].append((r5, r10, mrr))
    return {
        s: (
            statistics.fmean(v[0] for v in rows),
            statistics.fmean(v[1] for v in rows),
            statistics.fmean(v[2] for v in rows),
            len(rows),
        )
        for s, rows in per.items()
    }


def recall_ranker(config: object, tuning: Tuning) -> tuple[Ranker, Recaller]:
    session = Recaller(config, catch_up="never", tuning=tuning)  # type: ignore[arg-type]

    def rank(query: rs.Query) -> list[set[str]]:
        result = session.recall(query.text, limit=K, max_tokens=100_000, as_of=rs.AS_OF)
        return [{f"{h.path}:{h.line}", *h.also_in} for h in result.results]

    return rank, session


def fts_ranker(fts: Fts5, terms: Callable[[str], list[str]]) -> Ranker:
    def rank(query: rs.Query) -> list[set[str]]:
        return [{place} for place in fts.search(terms(query.text))]

    return rank


def quality(out: Path, verbose: bool, extra: dict[str, Tuning] | None = None, ablation: bool = True) -> None:
    started = time.perf_counter()
    vault = out / "quality-vault"
    if vault.exists():
        shutil.rmtree(vault)
    built = rs.build(vault)
    config = load_config(vault)
    report = Index(config).rebuild()
    print(
        f"## Quality: {rs.summary()}\n\nVault: {built.entries:,} entries ({report.entries:,} indexed), "
        f"as of {rs.AS_OF}; built in {time.perf_counter() - started:.1f} s.\n"
    )
    fts = Fts5(vault)
    rows: dict[str, Ranker] = {}
    sessions = []
    variants = {
        "recall (shipped)": DEFAULT_TUNING,
        "recall, exact word window": dataclasses.replace(DEFAULT_TUNING, window_mode="exact"),
        "recall, padded word window": dataclasses.replace(DEFAULT_TUNING, window_mode="pad"),
        "recall, padded + unwindowed search, ranked by window": dataclasses.replace(
            DEFAULT_TUNING, window_mode="pad+rank"
        ),
        "recall, rank by window (no filter)": dataclasses.replace(DEFAULT_TUNING, window_mode="rank"),
        "recall, shipped without in-window preference": dataclasses.replace(
            DEFAULT_TUNING, outside_window=1.0, outside_floor=1.0
        ),
        "recall, no recency/importance": dataclasses.replace(
            DEFAULT_TUNING, recency_weight=0.0, importance_weight=0.0, memory_boost=1.0
        ),
        "recall, no coordination": dataclasses.replace(DEFAULT_TUNING, coordination=0.0),
    }
    if not ablation:
        variants = {"recall (shipped)": DEFAULT_TUNING}
    variants.update(extra or {})
    for name, tuning in variants.items():
        rank, session = recall_ranker(config, tuning)
        rows[name] = rank
        sessions.append(session)
    rows["BM25 (FTS5), all query words"] = fts_ranker(fts, tokenize)
    rows["BM25 (FTS5), stop words dropped"] = fts_ranker(fts, query_terms)
    results = {name: evaluate(built, rank) for name, rank in rows.items()}
    present = [s for s in SLICES if s in results["recall (shipped)"]]
    counts = results["recall (shipped)"]
    header = " | ".join(f"{s} ({counts[s][3]})" for s in present)
    for metric, index in (("recall@5", 0), ("recall@10", 1), ("MRR", 2)):
        print(f"### {metric}\n\n| system | {header} |\n|---|{'---|' * len(present)}")
        for name, res in results.items():
            cells = " | ".join(f"{res[s][index]:.3f}" for s in present)
            print(f"| {name} | {cells} |")
        print()
    shipped = results["recall (shipped)"]
    baseline = results["BM25 (FTS5), all query words"]
    behind = [
        f"{s} {m}"
        for s in present
        for m, i in (("R@5", 0), ("R@10", 1), ("MRR", 2))
        if shipped[s][i] < baseline[s][i]
    ]
    print(f"Shipped recall behind plain BM25 on: {', '.join(behind) if behind else 'nothing'}.")
    print(f"Shipped recall@10 over all queries: {shipped['all'][1]:.3f} (target >= 0.9).\n")
    if verbose:
        rank = rows["recall (shipped)"]
        print("### Misses of the shipped recall (answer not in the top 10)\n")
        for query in rs.QUERIES:
            ranked = rank(query)
            for fid, group in zip(query.facts, built.relevant(query), strict=True):
                if not any(places & group for places in ranked[:K]):
                    print(f"- {query.text!r}: {fid} {sorted(group)}")
        print()
    for session in sessions:
        session.close()


# ---------------------------------------------------------------------------------------------
# Latency


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def latency_queries(vault_info: object, count: int) -> list[str]:
    texts = [q.text for q in rs.QUERIES]
    probes = [" ".join(p.markers) for p in getattr(vault_info, "probes", [])]
    pool = texts + probes
    return (pool * (count // len(pool) + 1))[:count]


def big_vault(out: Path, entries: int) -> tuple[Path, list[str]]:
    from genvault import generate

    vault = out / f"vault-{entries}"
    stamp = vault / ".vault-tools" / "bench-complete"
    if not stamp.exists():
        if vault.exists():
            shutil.rmtree(vault)
        print(f"generating {entries:,} entries into {vault} and indexing them (once) ...", file=sys.stderr)
        info = generate(vault, entries=entries)
        started = time.perf_counter()
        Index(load_config(vault)).rebuild()
        print(f"indexed in {time.perf_counter() - started:.0f} s", file=sys.stderr)
        markers = [" ".join(p.markers) for p in info.probes]
        (vault / ".vault-tools").mkdir(exist_ok=True)
        (vault / ".vault-tools" / "probes.txt").write_text("\n".join(markers), encoding="utf-8")
        stamp.write_text("ok", encoding="utf-8")
    markers = (vault / ".vault-tools" / "probes.txt").read_text(encoding="utf-8").splitlines()
    return vault, markers


def time_each(run: Callable[[str], object], queries: list[str]) -> list[float]:
    samples = []
    for query in queries:
        started = time.perf_counter()
        run(query)
        samples.append((time.perf_counter() - started) * 1000)
    return samples


@contextlib.contextmanager
def running_watcher(vault: Path, config: Config) -> Iterator[None]:
    """``vault-tools watch`` on ``vault``, until its recall service answers; stopped after."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "vault_tools", "watch", "--vault", str(vault)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    probe = {"query": "warm up", "limit": 1, "render": {}}
    try:
        deadline = time.monotonic() + 300
        while service.ask(config, "recall", probe) is None:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("the watcher did not start answering recall requests")
            time.sleep(0.2)
        yield
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)


@contextlib.contextmanager
def autostarted_watcher(config: Config) -> Iterator[None]:
    """No watcher and no recent start; afterwards, the watcher the first call started is stopped."""
    (config.state_dir / service.AUTOSTART_MARKER).unlink(missing_ok=True)
    try:
        yield
    finally:
        state = json.loads((config.state_dir / "watch.json").read_text(encoding="utf-8"))
        pid = state["pid"]
        if not state.get("idle_exit_seconds") or state.get("stopped"):
            raise SystemExit("the first recall call did not start a watcher")
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 60
        while service.ask(config, "recall", {"query": "x", "limit": 1, "render": {}}) is not None:
            if time.monotonic() > deadline:
                raise SystemExit(f"the auto-started watcher (pid {pid}) did not stop")
            time.sleep(0.2)


def latency(out: Path, entries: int, count: int) -> None:
    vault, markers = big_vault(out, entries)
    texts = [q.text for q in rs.QUERIES]
    pool = texts + markers[: max(0, count - len(texts))]
    queries = (pool * (count // max(1, len(pool)) + 1))[:count]
    config = load_config(vault)
    as_of = "2026-12-01"
    rows: list[tuple[str, list[float]]] = []
    # Any value of PYTHONDONTWRITEBYTECODE, "0" too, keeps Python from caching bytecode: every
    # fresh process would compile our modules again, which no installed copy does.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["VAULT_TOOLS_SERVICE"] = "off"

    def cli(query: str, environment: dict[str, str] = env) -> None:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "vault_tools",
                "recall",
                "--vault",
                str(vault),
                "--json",
                "--as-of",
                as_of,
                query,
            ],
            check=True,
            stdout=subprocess.DEVNULL,
            env=environment,
        )

    cli("warm the page cache")
    rows.append(("recall CLI, fresh process per query (in-process search)", time_each(cli, queries)))
    with running_watcher(vault, config):
        served_env = {**env, "VAULT_TOOLS_SERVICE": "on"}
        cli("warm the client", served_env)
        rows.append(
            (
                "recall CLI, fresh process per query, served by a running watcher",
                time_each(lambda q: cli(q, served_env), queries),
            )
        )
    auto_env = {k: v for k, v in env.items() if k not in ("VAULT_TOOLS_SERVICE", "VAULT_TOOLS_AUTOSTART")}
    with autostarted_watcher(config):
        auto = time_each(lambda q: cli(q, auto_env), queries)
    rows.append(("recall CLI, fresh process per query, the first one starts the watcher (default)", auto))
    rows.append(
        (
            "floor: `python -c pass`, fresh process per query",
            time_each(lambda q: subprocess.run([sys.executable, "-c", "pass"], check=True), queries),
        )
    )

    with Recaller(config, catch_up="never") as session:
        session.recall("warm up", as_of=rs.AS_OF)
        rows.append(
            (
                "recall Python API, warm searcher",
                time_each(lambda q: session.recall(q, as_of=rs.AS_OF), queries),
            )
        )
    with Recaller(config, catch_up="always") as session:
        session.recall("warm up", as_of=rs.AS_OF)
        rows.append(
            (
                "recall Python API, warm, catch-up check per call",
                time_each(lambda q: session.recall(q, as_of=rs.AS_OF), queries),
            )
        )

    db_path = out / f"fts5-{entries}.sqlite"
    fts = Fts5(vault, str(db_path))
    rows.append(("SQLite FTS5, warm connection", time_each(lambda q: fts.search(query_terms(q)), queries)))
    fts.db.close()
    script = (
        "import sqlite3,sys\n"
        "from vault_tools.index.analysis import query_terms\n"
        "db=sqlite3.connect(sys.argv[1]);t=query_terms(sys.argv[2])\n"
        "m=' OR '.join('\"'+x.replace('\"','\"\"')+'\"' for x in t)\n"
        "db.execute('SELECT place FROM e WHERE e MATCH ? ORDER BY bm25(e) LIMIT 10',(m,)).fetchall()\n"
    )
    rows.append(
        (
            "SQLite FTS5, fresh process per query",
            time_each(
                lambda q: subprocess.run([sys.executable, "-c", script, str(db_path), q], check=True), queries
            ),
        )
    )
    rg = shutil.which("rg")
    if rg:

        def ripgrep(query: str) -> None:
            words = [w for w in query.replace("?", " ").replace("？", " ").split() if len(w) > 2] or [query]
            args = [rg, "-i", "-F", "-c", "--no-messages"]
            for w in words:
                args += ["-e", w]
            subprocess.run(
                [*args, str(vault / "memory"), str(vault / "MEMORY.md")], stdout=subprocess.DEVNULL
            )

        rows.append(("ripgrep, process per query (no ranking)", time_each(ripgrep, queries)))
    else:
        print("ripgrep (rg) is not installed: its row is skipped (apt-get install ripgrep)\n")

    print(f"## Latency: {entries:,} entries, {len(queries)} queries, ms\n")
    base = percentiles(rows[0][1])
    print("| what | p50 | p95 | p95 vs CLI |\n|---|---|---|---|")
    for name, samples in rows:
        p50, p95 = percentiles(samples)
        print(f"| {name} | {p50:.1f} | {p95:.1f} | {p95 / base[1]:.2f}x |")
    print("\nTargets: CLI p95 < 300 ms; warm API p95 < 30 ms.")
    print(
        "\nWith the default settings the first calls run in-process while the watcher they started warms up: "
        + ", ".join(f"{ms:.0f}" for ms in auto[:8])
        + " ms, ..."
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--latency", action="store_true", help="also measure latency on a big vault")
    parser.add_argument("--no-quality", action="store_true", help="skip the quality tables")
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--out", type=Path, default=HERE / "out", help="where vaults are kept (bench/out)")
    parser.add_argument("--verbose", action="store_true", help="list the shipped recall's misses")
    parser.add_argument("--no-ablation", action="store_true", help="only the shipped row and the baselines")
    parser.add_argument(
        "--tune",
        action="append",
        default=[],
        metavar="NAME:K=V,K=V",
        help="an extra row with these Tuning fields changed (repeatable)",
    )
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    if not args.no_quality:
        with tempfile.TemporaryDirectory(dir=args.out) as tmp:
            extra = {}
            for spec in args.tune:
                name, _, pairs = spec.partition(":")
                extra[name] = tuning_with(DEFAULT_TUNING, pairs)
            quality(Path(tmp), args.verbose, extra, not args.no_ablation)
    if args.latency:
        latency(args.out, args.entries, args.queries)
    print(f"\n(run on {dt.date.today()}, Python {sys.version.split()[0]}, {os.cpu_count()} cores)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
