"""How many of LoCoMo's annotated events an extractive weekly summary can state at all.

    python bench/summary_ceiling.py                       # dev half, both forms
    python bench/summary_ceiling.py --transcript-share 0.25 --facts-share 0.5

The shared scorer (``curate_score.py``) counts an event as stated when at least half of its
content-word stems (names aside) are in ONE bullet line of that week's summary. Many events are
told in words the notes never use ("Melanie takes her family camping" over a note "went camping
with her family"), so no summary made of the notes' own words states them. This bench measures
that ceiling on the scorer's own vaults, with the scorer's own stems, for summaries that copy
whole lines of the notes:

* **one line**: some single line of the week's notes states the event (a bullet per line);
* **a person's week**: one bullet holding every line of the person's week (a transcript's
  speaker; in the facts form, the lines that name them) states it;
* **the whole week**: one bullet holding every line of the week (a copy: compress ~1);
* **oracle at a share**: a greedy pick that KNOWS the events, adds whole lines to their person's
  bullet (the line that states most events per word first) and stops at the share of the week's
  words the goal allows (``--transcript-share``, ``--facts-share``; the summary's title, overview
  and links counted as :data:`OVERHEAD` words a week). What the best extractive summary of whole
  lines could reach at that size: a bound, not a method.

The data is licensed for non-commercial use and is never copied into this repository.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from locomo_bench import DEFAULT_LOCOMO, load_module  # noqa: E402

#: Words a summary spends on its title, overview and section heading.
OVERHEAD = 16
TIME_AND_SPEAKER = re.compile(r"^- \d\d:\d\d (?:\*\*[^*]+\*\*: )?")


@dataclass
class Week:
    lines: list[str] = field(default_factory=list)
    words: int = 0
    events: list[tuple[str, set[str]]] = field(default_factory=list)  # (person, stems)


@dataclass
class Tally:
    events: int = 0
    line: int = 0
    person: int = 0
    week: int = 0
    oracle: int = 0
    note_words: int = 0
    oracle_words: int = 0


def weeks_of(scorer: Any, sample: dict[str, Any], root: Path, names: set[str]) -> dict[str, Week]:
    weeks: dict[str, Week] = {}
    for note in sorted((root / "memory").glob("*.md")):
        year, number, _ = dt.date.fromisoformat(note.stem).isocalendar()
        week = weeks.setdefault(f"{year}-W{number:02d}", Week())
        week.lines += [
            line for line in note.read_text(encoding="utf-8").splitlines() if line.startswith("- ")
        ]
        week.words += scorer.body_words(note)
    for n, when, _turns in scorer.sessions(sample):
        year, number, _ = when.isocalendar()
        for person, events in sample.get("event_summary", {}).get(f"events_session_{n}", {}).items():
            if person != "date":
                for event in events:
                    if want := scorer.stems(event, names):
                        weeks[f"{year}-W{number:02d}"].events.append((person, want))
    return weeks


def states(want: set[str], bullet: set[str]) -> bool:
    """The scorer's rule: half of the event's stems in one bullet."""
    return len(want & bullet) * 2 >= len(want)


def oracle(week: Week, lines: list[tuple[str, set[str], int]], budget: float) -> tuple[int, int]:
    """Greedy: whole lines into their person's bullet, most events stated per word first, while
    the words fit ``budget``. Returns (events stated, words spent)."""
    held: dict[str, set[str]] = {}

    def stated(bullets: dict[str, set[str]]) -> int:
        return sum(1 for person, want in week.events if states(want, bullets.get(person, set())))

    spent = OVERHEAD
    left = list(lines)
    while True:
        best: tuple[float, int] | None = None
        for i, (person, stems, cost) in enumerate(left):
            if spent + cost > budget:
                continue
            trial = {**held, person: held.get(person, set()) | stems}
            gain = stated(trial) - stated(held)
            partial = sum(
                len(want & stems - held.get(person, set())) / len(want)
                for who, want in week.events
                if who == person and not states(want, held.get(person, set()))
            )
            value = (gain + 0.3 * partial) / cost
            if value > 0 and (best is None or value > best[0]):
                best = (value, i)
        if best is None:
            return stated(held), spent
        person, stems, cost = left.pop(best[1])
        held[person] = held.get(person, set()) | stems
        spent += cost


def measure(scorer: Any, sample: dict[str, Any], form: str, root: Path, share: float, tally: Tally) -> None:
    names: set[str] = {t["speaker"] for _n, _w, turns in scorer.sessions(sample) for t in turns}

    def whose(line: str) -> list[str]:
        """The transcript's speaker; in the facts form, everyone the line names."""
        return [p for p in sorted(names) if ((f"**{p}**" in line) if form == "transcript" else (p in line))]

    for week in weeks_of(scorer, sample, root, names).values():
        if not week.events:
            continue
        read = [
            (whose(line), scorer.stems(TIME_AND_SPEAKER.sub("", line), names), len(line.split()) - 1)
            for line in week.lines
        ]
        everything = set().union(*(stems for _p, stems, _c in read)) if read else set()
        for person, want in week.events:
            tally.events += 1
            tally.line += any(states(want, stems) for _p, stems, _c in read)
            mine = set().union(*(stems for p, stems, _c in read if person in p)) if read else set()
            tally.person += states(want, mine)
            tally.week += states(want, everything)
        lines: list[tuple[str, set[str], int]] = [
            (p, stems, cost) for people, stems, cost in read for p in people
        ]
        hit, spent = oracle(week, lines, share * week.words)
        tally.oracle += hit
        tally.note_words += week.words
        tally.oracle_words += spent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--locomo", type=Path, default=DEFAULT_LOCOMO)
    parser.add_argument("--transcript-share", type=float, default=0.25)
    parser.add_argument("--facts-share", type=float, default=0.50)
    args = parser.parse_args(argv)
    path = args.locomo.resolve() / "curate_score.py"
    if not path.exists():
        raise SystemExit(f"{path} not found: pass --locomo with the LoCoMo folder")
    scorer = load_module(path, "curate_score")
    data = args.locomo.resolve() / "locomo-dev.json"
    samples = json.loads(data.read_text(encoding="utf-8"))
    shares = {"transcript": args.transcript_share, "facts": args.facts_share}
    writers: dict[str, Callable[[dict[str, Any], Path], Any]] = {
        "transcript": lambda sample, root: scorer.write_transcript_vault(sample, data, root),
        "facts": scorer.write_facts_vault,
    }
    workdir = Path(tempfile.mkdtemp(prefix="summary-ceiling-"))
    tallies = {form: Tally() for form in shares}
    try:
        for sample in samples:
            for form, share in shares.items():
                root = workdir / f"{sample['sample_id']}-{form}"
                writers[form](sample, root)
                measure(scorer, sample, form, root, share, tallies[form])
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print("| form | events | one line | a person's week | the whole week | oracle at share | its compress |")
    print("|---|---|---|---|---|---|---|")
    for form, t in tallies.items():
        n = max(1, t.events)
        print(
            f"| {form} (share {shares[form]:.2f}) | {t.events} | {t.line / n:.3f} | {t.person / n:.3f} | "
            f"{t.week / n:.3f} | {t.oracle / n:.3f} | {t.oracle_words / max(1, t.note_words):.3f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
