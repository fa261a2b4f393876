"""LoCoMo evidence recall, in-process, side by side with plain BM25 over the same lines.

    python bench/locomo_bench.py                                  # dev half, shipped recall + BM25F
    python bench/locomo_bench.py --variants                       # + the ablation rows
    python bench/locomo_bench.py --conversations conv-26 --max-questions 50

LoCoMo (Maharana et al., ACL 2024) holds months-long two-person conversations whose questions
come with human-marked evidence turns. The data is licensed for non-commercial use and is never
copied into this repository: ``--locomo`` points at a folder holding ``locomo_to_vault.py``,
``score.py`` and the data (default ``../shared/locomo`` beside the checkout). The converter
writes one ordinary vault per conversation (a daily note per session date, a bullet per turn);
the scorer's own functions count how many evidence lines come back in the top k, so these
figures agree with ``score.py --retriever vault-tools`` (the CLI, a process per question)
while running in a few seconds per row: every question goes through :class:`Recaller` with a
warm searcher, as the CLI does with ``--limit 50 --chat direct --as-of <last session date>``.

Rows: the shipped recall; with ``--variants``, the same with one part of the ranking turned
off or changed (the ablation); ``BM25F`` is the scorer's plain Whoosh BM25F over the bullet
lines with an English stop list (``whoosh-stop``).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import functools
import importlib.util
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from vault_tools.config import load_config  # noqa: E402
from vault_tools.index.index import Index  # noqa: E402
from vault_tools.recall.recall import Recaller  # noqa: E402
from vault_tools.recall.tuning import DEFAULT_TUNING, Tuning  # noqa: E402

KS = [5, 10, 20, 50]
DEFAULT_LOCOMO = HERE.parent.parent / "shared" / "locomo"


def load_module(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


class RecallRetriever:
    """The scorer's retriever protocol over :class:`Recaller`, one warm searcher per vault."""

    def __init__(self, score: ModuleType, tuning: Tuning) -> None:
        self.score = score
        self.tuning = tuning
        self.session: Recaller | None = None
        self.as_of = dt.date.today()

    def prepare(self, vault: Path, workspace: Path, conv: dict[str, Any]) -> None:
        if self.session is not None:
            self.session.close()
        config = load_config(vault)
        Index(config).ensure_current()
        self.session = Recaller(config, catch_up="never", tuning=self.tuning)
        self.as_of = dt.date.fromisoformat(conv["last_session"][:10])

    def search(self, query: str, limit: int) -> list[Any]:
        assert self.session is not None
        result = self.session.recall(
            query, limit=limit, chat="direct", as_of=self.as_of, max_tokens=1_000_000
        )
        return [self.score.Hit(h.path, h.line, h.end_line) for h in result.results]


@dataclasses.dataclass
class DevHalf:
    """The LoCoMo dev half converted to vaults, with the shared scorer that scores runs over it."""

    score: ModuleType
    data: list[Any]
    manifest: dict[str, Any]
    vaults: Path
    only: set[str]  # conversation ids to run; empty: all

    @classmethod
    def load(cls, locomo: Path, vaults: Path, conversations: str = "") -> DevHalf:
        """Load the scorer from ``locomo`` and convert the data into ``vaults`` unless it is there."""
        locomo = locomo.resolve()
        if not (locomo / "score.py").exists():
            raise SystemExit(f"{locomo} has no score.py: pass --locomo with the LoCoMo folder")
        score = load_module(locomo / "score.py", "locomo_score")
        if not (vaults / "manifest.json").exists():
            subprocess.run(
                [sys.executable, str(locomo / "locomo_to_vault.py"), "--out", str(vaults)],
                check=True,
                stdout=subprocess.DEVNULL,
            )
        return cls(
            score=score,
            data=json.loads(Path(score.find_default_data()).read_text(encoding="utf-8")),
            manifest=json.loads((vaults / "manifest.json").read_text(encoding="utf-8")),
            vaults=vaults,
            only={s for s in conversations.split(",") if s},
        )

    def run(self, label: str, retriever: Any, max_questions: int, per_query: Any = None) -> dict[str, Any]:
        """The scorer's ``run_one`` loop with a retriever object instead of a name."""
        score = self.score
        original = score.make_retriever  # type: ignore[attr-defined]
        score.make_retriever = lambda name, args: retriever  # type: ignore[attr-defined]
        args = argparse.Namespace(
            label=label,
            vaults=str(self.vaults),
            conversations=",".join(sorted(self.only)),
            max_questions=max_questions,
            limit=max(KS),
        )
        rows = _Rows(per_query)
        try:
            started = time.perf_counter()
            result: dict[str, Any] = score.run_one(label, args, self.data, self.manifest, KS, rows)
            result["seconds"] = time.perf_counter() - started
            result["retriever"] = label
            result["temporal_split"] = rows.temporal_split()
            return result
        finally:
            score.make_retriever = original  # type: ignore[attr-defined]


class _Rows:
    """The scorer's per-question lines, kept (for the slices it does not print) and passed on."""

    def __init__(self, out: Any = None) -> None:
        self.out = out
        self.rows: list[dict[str, Any]] = []

    def write(self, line: str) -> None:
        self.rows.append(json.loads(line))
        if self.out is not None:
            self.out.write(line)

    def temporal_split(self) -> tuple[float, float]:
        """R@10 of the temporal questions with time words, and without."""
        temporal = [r for r in self.rows if r["category"] == 2]
        split = []
        for timed in (True, False):
            values = [r["R@10"] for r in temporal if r["time_words"] == timed]
            split.append(sum(values) / len(values) if values else float("nan"))
        return split[0], split[1]


def variants() -> dict[str, Tuning]:
    """The shipped tuning and the ablation: each part of the ranking off (or as before) alone."""
    base = DEFAULT_TUNING
    return {
        "recall (shipped)": base,
        "no neighbours": dataclasses.replace(base, before_boost=0.0, after_boost=0.0),
        "no answer lending": dataclasses.replace(base, answer_factor=0.0),
        "neighbours without the back-off gate": dataclasses.replace(base, context_terms=1, context_floor=0.0),
        "no speaker match": dataclasses.replace(base, speaker_boost=0.0, speaker_text_factor=1.0),
        "untimed recency as before (0.25)": dataclasses.replace(base, recency_weight_untimed=0.25),
        "BM25 b as before (0.75)": dataclasses.replace(base, bm25_b=0.75),
        "last release's ranking (all five off)": dataclasses.replace(
            base,
            answer_factor=0.0,
            before_boost=0.0,
            after_boost=0.0,
            speaker_boost=0.0,
            speaker_text_factor=1.0,
            recency_weight_untimed=0.25,
            bm25_b=0.75,
        ),
    }


def tuning_with(base: Tuning, pairs: str) -> Tuning:
    """``base`` with ``k=v,k=v`` changed (values parsed as the field's type)."""
    changes: dict[str, Any] = {}
    types = {f.name: type(getattr(base, f.name)) for f in dataclasses.fields(base)}
    for pair in filter(None, pairs.split(",")):
        key, _, value = pair.partition("=")
        if types[key] is bool:  # bool("False") is True
            changes[key] = value.strip().lower() in ("1", "true", "yes", "on")
        else:
            changes[key] = types[key](value)
    return dataclasses.replace(base, **changes)


def print_rows(score: ModuleType, results: list[dict[str, Any]]) -> None:
    cats = [4, 1, 2, 3, 5]
    names = score.CATEGORY_NAMES
    print("\n### R@10 by category (dev half); all 1-5 is the headline\n")
    head = ["system", *(f"{c} {names[c]}" for c in cats), "all 1-4", "all 1-5"]
    head += ["1-4 time words", "1-4 none", "temporal, time words", "temporal, none", "seconds"]
    print("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    for r in results:
        cells = [r["by_category"][names[c]].get("R@10", float("nan")) for c in cats]
        cells += [r["overall"]["R@10"], r["overall_incl_adversarial"]["R@10"]]
        cells += [r["slices"]["time_words"]["R@10"], r["slices"]["no_time_words"]["R@10"]]
        cells += list(r["temporal_split"])
        print(f"| {r['retriever']} | " + " | ".join(f"{x:.3f}" for x in cells) + f" | {r['seconds']:.0f} |")
    print("\n### all 1-5: R@5 / R@10 / R@50 / MRR\n")
    print("| system | R@5 | R@10 | R@50 | MRR |\n|---|---|---|---|---|")
    for r in results:
        a = r["overall_incl_adversarial"]
        print(f"| {r['retriever']} | {a['R@5']:.3f} | {a['R@10']:.3f} | {a['R@50']:.3f} | {a['MRR']:.3f} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--locomo", type=Path, default=DEFAULT_LOCOMO, help="folder with score.py, the converter and data"
    )
    parser.add_argument("--vaults", type=Path, help="converted vaults (default: a fresh temp folder)")
    parser.add_argument("--conversations", default="", help="comma list of sample ids (default: all)")
    parser.add_argument("--max-questions", type=int, default=0)
    parser.add_argument("--variants", action="store_true", help="also run the ablation rows")
    parser.add_argument("--no-baseline", action="store_true", help="skip the BM25F row")
    parser.add_argument("--no-shipped", action="store_true", help="only the --tune rows (and BM25F)")
    parser.add_argument(
        "--tune",
        action="append",
        default=[],
        metavar="NAME:K=V,K=V",
        help="an extra row with these Tuning fields changed (repeatable)",
    )
    parser.add_argument("--per-query", type=Path, help="one JSON line per question and row")
    parser.add_argument("--tables", type=Path, help="also write the scorer's full tables here")
    args = parser.parse_args(argv)

    dev = DevHalf.load(
        args.locomo, args.vaults or Path(tempfile.mkdtemp(prefix="locomo-")), args.conversations
    )
    score = dev.score

    rows: dict[str, Callable[[], Any]] = {}
    shipped = {} if args.no_shipped else {"recall (shipped)": DEFAULT_TUNING}
    for name, tuning in (variants() if args.variants else shipped).items():
        rows[name] = functools.partial(RecallRetriever, score, tuning)
    for spec in args.tune:
        name, _, pairs = spec.partition(":")
        rows[name] = functools.partial(RecallRetriever, score, tuning_with(DEFAULT_TUNING, pairs))
    if not args.no_baseline:
        rows["BM25F (whoosh-stop)"] = lambda: score.WhooshBM25F(stop=True)
    per_query = args.per_query.open("w", encoding="utf-8") if args.per_query else None
    try:
        results = [dev.run(name, make(), args.max_questions, per_query) for name, make in rows.items()]
    finally:
        if per_query:
            per_query.close()
    print(f"LoCoMo dev half, {dev.vaults}, {dt.date.today()}")
    print_rows(score, results)
    if args.tables:
        with args.tables.open("w", encoding="utf-8") as out:
            score.print_tables(results, KS, out=out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
