"""A note too large for one heartbeat is curated in bounded pieces, run after run, with a warning."""

from __future__ import annotations

import shutil
from pathlib import Path

from test_heartbeat import committed, make_vault, memory, run

from vault_tools.config import Config, load_config
from vault_tools.heartbeat.state import State

WORDS = ["zorblat", "quintex", "malvory", "pendrick", "salvane", "torquil", "vexmoor", "brindle", "calloway"]
NOTE_PATH = "memory/2026-11-28.md"


def big_note(count: int) -> str:
    """``count`` decisions about made-up tools, none a near-duplicate of another, English and Chinese."""
    lines = ["---\ndate: 2026-11-28\n---\n"]
    for n in range(count):
        word = f"{WORDS[n % len(WORDS)]}{n}"
        if n % 3 == 2:
            lines.append(f"- 决定以后{word}项目都用 {word}x 框架，第{n}号\n")
        else:
            lines.append(f"- Decided to use {word} for the {word}y service, ticket {n}.\n")
    return "".join(lines)


def items(vault: Path) -> list[str]:
    return sorted(line.split(" [importance")[0][14:] for line in memory(vault).splitlines() if " ^m-" in line)


def test_a_note_over_the_cap_is_curated_in_pieces_over_several_runs(tmp_path: Path) -> None:
    vault = committed(make_vault(tmp_path, memory=None, daily={"2026-11-28": big_note(25)}))
    whole = tmp_path / "whole"
    shutil.copytree(vault, whole)
    cap = {"max_new_entries": 10, "budget_words_per_month": 0}  # the budget would differ by run

    first = run(vault, settings=cap)
    assert (first.new_entries, first.deferred) == (10, 15)
    warning = next(w for w in first.warnings if "max_new_entries" in w)
    assert NOTE_PATH in warning and "15 from line 14" in warning  # the file, what is left, where
    assert State.load(first_config(vault)).backlog == 15

    # the next scheduled run is due at once while a backlog is left, then as usual
    second = run(vault, settings=cap, if_due=True)
    assert second.ran and (second.new_entries, second.deferred) == (10, 5)
    third = run(vault, settings=cap, if_due=True)
    assert third.ran and (third.new_entries, third.deferred) == (5, 0)
    assert not any("max_new_entries" in w for w in third.warnings)
    assert not run(vault, settings=cap, if_due=True).ran
    fourth = run(vault, settings=cap)
    assert fourth.new_entries == 0 and not fourth.promoted

    # the pieces end where one run without a cap ends: each entry promoted once
    alone = run(whole, settings={"budget_words_per_month": 0})
    assert alone.new_entries == 25 and alone.deferred == 0
    promoted = len(first.promoted) + len(second.promoted) + len(third.promoted)
    assert promoted == len(alone.promoted) == 25
    assert items(vault) == items(whole)


def test_copies_of_an_entry_go_with_the_first_copy(tmp_path: Path) -> None:
    """The state is keyed by content: copies further down are curated with the first, not counted again."""
    distinct = big_note(8).split("---\n")[-1].splitlines(keepends=True)
    coffee = "- I prefer dark roast coffee over light roast.\n"
    body = [*distinct[:4], coffee, distinct[4], coffee, *distinct[5:7], coffee, distinct[7]]
    vault = committed(
        make_vault(
            tmp_path, memory=None, daily={"2026-11-28": "---\ndate: 2026-11-28\n---\n" + "".join(body)}
        )
    )
    first = run(vault, settings={"max_new_entries": 5})
    assert (first.new_entries, first.deferred) == (5, 4)
    second = run(vault, settings={"max_new_entries": 5})
    assert (second.new_entries, second.deferred) == (4, 0)
    assert len([line for line in memory(vault).splitlines() if "dark roast" in line]) == 1


def first_config(vault: Path) -> Config:
    return load_config(vault)
