"""What the heartbeat keeps, on real conversations: LoCoMo curation figures, in-process.

    python bench/curate_bench.py                                  # dev half, both forms
    python bench/curate_bench.py --form transcript --conversations conv-26
    python bench/curate_bench.py --variants                       # + the ablation rows
    python bench/curate_bench.py --summary-variants               # + the weekly summaries' ablation
    python bench/curate_bench.py --summaries-only --summary-variants   # the summaries alone, in seconds

The shared scorer (``curate_score.py`` beside the LoCoMo data, default ``../shared/locomo``)
makes two vaults per conversation (verbatim transcripts, and the short facts an agent would
note), runs the heartbeat weekly as a scheduled job would (``--no-llm``) and compares MEMORY.md
and the weekly summaries with what was later asked and with the annotated events. This runner
uses the scorer's own functions for everything but the schedule, which it runs in this process
(:func:`vault_tools.heartbeat.run.run_heartbeat`, the CLI's ``heartbeat --as-of D --no-llm``) instead
of a process per run, so its figures agree with ``curate_score.py --vault-tools vault-tools``.
The data is licensed for non-commercial use and is never copied into this repository.

Rows: the shipped rules, and with ``--variants`` the same with one part of the salience model
turned off (the ablation; see :data:`VARIANTS`); with ``--summary-variants`` one part of the weekly
summaries' extraction off (:data:`SUMMARY_VARIANTS`: MEMORY.md is the same in those rows). Prints
one Markdown table; every row comes from this one run.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import os
import random
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from locomo_bench import DEFAULT_LOCOMO, load_module  # noqa: E402

from vault_tools.config import Config, load_config  # noqa: E402
from vault_tools.curation import clauses, insights  # noqa: E402
from vault_tools.heartbeat import run as heartbeat  # noqa: E402
from vault_tools.summaries import text as summary_text  # noqa: E402
from vault_tools.summaries import told  # noqa: E402
from vault_tools.summaries import write as summary_write  # noqa: E402

#: The ablation: each part of the salience model off alone (fields of insights.Rules).
VARIANTS: dict[str, dict[str, Any]] = {
    "no event boost": {"event_boost": 0.0},
    "no specificity": {"specific_cap": 0.0},
    "no fragment penalty": {"fragment_penalty": 0.0},
    "no repetition boost": {"repeat_step": 0.0},
}


def _no_news_rank(entry: Any, subject: str | None) -> tuple[str, int]:
    text, _value = ORIGINAL_NEWS(entry, subject)
    return text, 0


def _one_per_section(a: summary_text.Bullet, b: summary_text.Bullet) -> bool:
    return a.section == b.section and ORIGINAL_SAME_THING(a, b)


def _whole_sentence(
    sentence: str, subject: str | None = None, listeners: frozenset[str] = frozenset()
) -> str:
    return clauses.tidy(clauses.strip_media(sentence))


def _one_bullet_per_entry(
    insight: Any, period: Any, people: frozenset[str], listeners: frozenset[str], rarity: Any
) -> list[summary_text.Bullet]:
    """Before: an entry's bullet says its news in at most two sentences, ranked by the rules' score."""
    bullet = summary_text.rules_bullet(insight, period, people)
    return [] if bullet is None else [dataclasses.replace(bullet, worth=bullet.score)]


def _persons_notes_by_score(bullet: summary_text.Bullet) -> tuple[Any, ...]:
    """Before: a person's statements from notes taken by their entry's score, like a topic's."""
    if summary_text.said_in_a_chat(bullet) or not bullet.person:
        return ORIGINAL_BUDGET_ORDER(bullet)
    density = summary_text.density(bullet)
    return (
        bullet.section != "open",
        not bullet.news,
        -bullet.score,
        -density,
        summary_text.first_day(bullet),
    )


ORIGINAL_NEWS = summary_text.news
ORIGINAL_SAME_THING = summary_text.same_thing
ORIGINAL_BUDGET_ORDER = summary_text.budget_order
NEVER = re.compile(r"(?!)")
#: The weekly summaries' ablation: (module, attribute, stand-in) for each part off alone.
SUMMARY_VARIANTS: dict[str, list[tuple[Any, str, Any]]] = {
    "summary: whole sentences (no clause cut)": [
        (clauses, "said", _whole_sentence),
        (clauses, "gist", _whole_sentence),
    ],
    "summary: keeps thanks and vocatives": [
        (clauses, "THANKS", NEVER),
        (clauses, "drop_vocative", lambda text, listeners: text),
    ],
    "summary: one bullet per entry, by score (before)": [
        (summary_text, "rules_bullets", _one_bullet_per_entry),
        (summary_text, "density", lambda b: b.score),
    ],
    "summary: rules' score, not worth per word": [(summary_text, "density", lambda b: b.score)],
    "summary: no rarity (each word weighs 1)": [
        (told.Rarity, "weight", lambda self, words: float(len(list(words))))
    ],
    "summary: no event weight": [(told, "EVENT_WORTH", 0.0)],
    "summary: no chatter floor": [(summary_text, "LEAST_WORTH", 0.0)],
    "summary: no repeat check": [(summary_text, "NEW_SHARE", 0.0)],
    "summary: notes ranked as a chat (no news first)": [(summary_text, "said_in_a_chat", lambda b: True)],
    "summary: no news first (events, recency)": [(summary_text, "news", _no_news_rank)],
    "summary: no recency": [(clauses, "recent", lambda _text: False)],
    "summary: no ongoing activities": [(clauses, "ongoing", lambda _text: False)],
    "summary: a person's bullet per section": [(summary_text, "same_thing", _one_per_section)],
    "summary: keeps prefaces and how things are going": [
        (clauses, "PREFACE", NEVER),
        (clauses, "STATUS", NEVER),
        (clauses, "STATUS_FIRST", NEVER),
    ],
    "summary: keeps guesses about the listener": [(told, "STANCE", NEVER)],
    "summary: a person's notes by their entry's score": [
        (summary_text, "budget_order", _persons_notes_by_score)
    ],
}


@contextmanager
def patched(changes: list[tuple[Any, str, Any]]) -> Iterator[None]:
    """Attributes replaced for the duration of one row."""
    saved = [(module, name, getattr(module, name)) for module, name, _new in changes]
    for module, name, new in changes:
        setattr(module, name, new)
    try:
        yield
    finally:
        for module, name, old in saved:
            setattr(module, name, old)


def schedule(
    _command: list[str], root: Path, first: dt.date, last: dt.date, cadence: int
) -> dict[str, list[str]]:
    """The scorer's ``run_schedule`` signature, run in this process."""
    return in_process_schedule(root, first, last, cadence)


def in_process_schedule(root: Path, first: dt.date, last: dt.date, cadence: int) -> dict[str, list[str]]:
    """``curate_score.run_schedule`` without a process per run: block id -> source lines."""
    sources: dict[str, list[str]] = {}
    day = first + dt.timedelta(days=6)
    while day <= last + dt.timedelta(days=7):
        config = load_config(root)
        report = heartbeat.run_heartbeat(config, heartbeat.Options(as_of=day, use_llm=False))
        for change in [*report.promoted, *report.merged]:
            if change.block_id:
                sources.setdefault(change.block_id, []).extend(change.sources)
        day += dt.timedelta(days=cadence)
    return sources


@contextmanager
def rules_changed(overrides: dict[str, Any]) -> Iterator[None]:
    """The heartbeat's rules with ``overrides`` for the duration of one row (the heartbeat's
    run and its summaries both read them through ``load_rules``)."""
    original = insights.load_rules

    def changed(config: Config, warnings: list[str] | None = None) -> insights.Rules:
        return dataclasses.replace(original(config, warnings), **overrides)

    insights.load_rules = changed  # type: ignore[assignment]
    try:
        yield
    finally:
        insights.load_rules = original  # type: ignore[assignment]


def run_row(
    scorer: Any, samples: list[dict[str, Any]], forms: list[str], data: Path, cadence: int, keep: str
) -> dict[str, Any]:
    workdir = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="curate-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    rng = random.Random(20261204)  # the scorer's seed: the same random baselines
    rows = []
    started = time.perf_counter()
    try:
        for sample in samples:
            for form in forms:
                rows.append(scorer.score_one(sample, form, data, workdir, [], cadence, rng))
    finally:
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)
    result = {form: scorer.summarize([r for r in rows if r["form"] == form]) for form in forms}
    return {"summary": result, "rows": rows, "seconds": time.perf_counter() - started}


def summaries_row(
    scorer: Any, samples: list[dict[str, Any]], forms: list[str], data: Path, workdir: Path
) -> dict[str, Any]:
    """Only the weekly summaries: each week with a session summarized in this process (as the
    heartbeat's ``summarize`` would), scored by the scorer's ``score_summaries``. The vaults are
    made once in ``workdir`` and reused by every row."""
    started = time.perf_counter()
    totals = {form: {"events": 0, "events_hit": 0, "note_words": 0, "summary_words": 0} for form in forms}
    for sample in samples:
        names = {t["speaker"] for _n, _w, turns in scorer.sessions(sample) for t in turns}
        for form in forms:
            root = workdir / f"{sample['sample_id']}-{form}"
            if not root.exists():
                if form == "facts":
                    scorer.write_facts_vault(sample, root)
                else:
                    scorer.write_transcript_vault(sample, data, root)
                scorer.git(root, "init", "-q")
            shutil.rmtree(root / summary_text.SUMMARY_DIR, ignore_errors=True)
            (root / summary_text.SUMMARY_DIR).mkdir(parents=True)
            config = load_config(root)
            rules = insights.load_rules(config)
            weeks = {summary_text.Period.week_of(when.date()) for _n, when, _t in scorer.sessions(sample)}
            for period in weeks:
                report = summary_write.SummaryReport(period=period.name, path=period.rel_path)
                text = summary_write.compose(config, period, False, report, rules)
                if text:
                    (root / period.rel_path).write_text(text, encoding="utf-8")
            for key, value in scorer.score_summaries(sample, root, names).items():
                totals[form][key] += value
    summary = {
        form: {
            "event_recall": t["events_hit"] / max(1, t["events"]),
            "compress": t["summary_words"] / max(1, t["note_words"]),
            **t,
        }
        for form, t in totals.items()
    }
    return {"summary": summary, "seconds": time.perf_counter() - started}


def table_row(label: str, form: str, s: dict[str, Any]) -> str:
    return (
        f"| {label} | {form} | {s['items']} | {s['words_per_month']:.0f} | {s['precision']:.3f} | "
        f"{s['lift']:.2f} | {s['coverage']:.3f} | {s['random_cov']:.3f} | {s['cov_lift']:.2f} | "
        f"{s['named_share']:.2f} | {s['asks_share']:.2f} | {s['short_share']:.2f} | "
        f"{s['event_recall']:.2f} | {s['compress']:.2f} |"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--locomo", type=Path, default=DEFAULT_LOCOMO)
    parser.add_argument("--conversations", default="", help="comma-separated sample ids (default: all)")
    parser.add_argument("--form", choices=("transcript", "facts", "both"), default="both")
    parser.add_argument("--cadence", type=int, default=7)
    parser.add_argument("--variants", action="store_true", help="also run the ablation rows")
    parser.add_argument(
        "--summary-variants", action="store_true", help="also run the weekly summaries' ablation rows"
    )
    parser.add_argument(
        "--summaries-only",
        action="store_true",
        help="only the weekly summaries (no heartbeat schedule, no MEMORY.md figures): seconds, not minutes",
    )
    parser.add_argument("--keep", default="", help="make the vaults here and keep them (shipped row only)")
    parser.add_argument("--out", default="", help="write every row's figures as JSON here")
    args = parser.parse_args(argv)

    path = args.locomo.resolve() / "curate_score.py"
    if not path.exists():
        raise SystemExit(f"{path} not found: pass --locomo with the LoCoMo folder")
    scorer = load_module(path, "curate_score")
    scorer.run_schedule = schedule  # type: ignore[attr-defined]
    os.environ["VAULT_TOOLS_AUTOSTART"] = "off"
    data = args.locomo.resolve() / "locomo-dev.json"
    samples = json.loads(data.read_text(encoding="utf-8"))
    wanted = {s for s in args.conversations.split(",") if s}
    samples = [s for s in samples if not wanted or s["sample_id"] in wanted]
    forms = ["transcript", "facts"] if args.form == "both" else [args.form]

    if args.summaries_only:
        return summaries_table(scorer, samples, forms, data, args)
    rows: dict[str, dict[str, Any]] = {
        "shipped": run_row(scorer, samples, forms, data, args.cadence, args.keep)
    }
    if args.variants:
        for label, overrides in VARIANTS.items():
            with rules_changed(overrides):
                rows[label] = run_row(scorer, samples, forms, data, args.cadence, "")
    if args.summary_variants:
        for label, changes in SUMMARY_VARIANTS.items():
            with patched(changes):
                rows[label] = run_row(scorer, samples, forms, data, args.cadence, "")
    print(
        "| rules | form | items | words/month | precision | lift | coverage | random | cov lift | named "
        "| asks | short | weekly events | compress |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for label, row in rows.items():
        for form, summary in row["summary"].items():
            print(table_row(label, form, summary))
    for label, row in rows.items():
        print(f"{label}: {row['seconds']:.1f} s", file=sys.stderr)
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1, default=str), encoding="utf-8")
    return 0


def summaries_table(
    scorer: Any, samples: list[dict[str, Any]], forms: list[str], data: Path, args: argparse.Namespace
) -> int:
    """``--summaries-only``: the weekly summaries' figures, shipped and (``--summary-variants``) each
    part off, in one table."""
    workdir = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="curate-summaries-"))
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        rows = {"shipped": summaries_row(scorer, samples, forms, data, workdir)}
        if args.summary_variants:
            for label, changes in SUMMARY_VARIANTS.items():
                with patched(changes):
                    rows[label] = summaries_row(scorer, samples, forms, data, workdir)
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    print("| rules | form | weekly events | events stated | compress |")
    print("|---|---|---|---|---|")
    for label, row in rows.items():
        for form, s in row["summary"].items():
            print(f"| {label} | {form} | {s['events']} | {s['event_recall']:.3f} | {s['compress']:.3f} |")
    for label, row in rows.items():
        print(f"{label}: {row['seconds']:.1f} s", file=sys.stderr)
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1, default=str), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
