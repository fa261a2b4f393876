"""A question that says only "recently" / "最近": its window ranks and never hides a strong match."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterator

import pytest
from helpers import hit_texts, indexed_vault, warm_recaller

from vault_tools.config import Config
from vault_tools.recall.filters import resolve_window
from vault_tools.recall.query import is_vague, parse_query
from vault_tools.recall.recall import Recaller
from vault_tools.recall.tuning import DEFAULT_TUNING

AS_OF = dt.date(2026, 3, 12)  # "recently" reaches back to 2026-02-26

DAYS = {
    "2026-01-20": "- 18:00 Ana painted a watercolour of the harbour at dusk.\n"
    "- 18:30 安娜画了一幅港口黄昏的水彩画。\n",
    "2026-01-21": "- 09:00 Ana painted a portrait of her grandmother for the hallway.\n",
    "2026-03-02": "- 12:00 Lunch with Ana at the Vietnamese place.\n- 12:30 和安娜一起吃了越南粉。\n",
    "2026-03-05": "- 19:00 Called Ana about the weekend.\n- 19:30 给安娜打了电话，聊周末的安排。\n",
    "2026-03-09": "- 08:00 Ana is tired, the new job keeps Ana busy.\n- 08:30 安娜最近很累，安娜的新工作很忙。\n",
    "2026-03-10": "- 20:00 Ana painted the garden fence blue.\n",
}


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Config:
    return indexed_vault(tmp_path_factory.mktemp("recently"), DAYS)


@pytest.fixture(scope="module")
def session(config: Config) -> Iterator[Recaller]:
    with warm_recaller(config) as warm:
        yield warm


def texts(session: Recaller, query: str) -> list[str]:
    return hit_texts(session, query, AS_OF)


@pytest.mark.parametrize("phrase", ["recently", "lately", "of late", "Recently", "最近", "近来", "近期"])
def test_recently_alone_is_vague(phrase: str) -> None:
    assert is_vague(phrase)


@pytest.mark.parametrize("phrase", ["last week", "in March", "最近3天", "最近两周", "上周", "yesterday"])
def test_a_period_is_not_vague(phrase: str) -> None:
    assert not is_vague(phrase)


@pytest.mark.parametrize(
    ("query", "vague"),
    [
        ("What did Ana paint recently?", True),
        ("安娜最近画了什么？", True),
        ("安娜最近畫了什麼？", True),  # Traditional script reads as Simplified
        ("What did Ana paint last week?", False),
        ("安娜上周画了什么？", False),
        ("What did she bake recently, in May 2022?", False),  # the dated phrase wins
    ],
)
def test_a_query_knows_when_its_window_is_only_recently(query: str, vague: bool) -> None:
    parsed = parse_query(query, AS_OF)
    assert parsed.window is not None
    assert parsed.vague is vague


def test_a_vague_window_ranks_and_never_filters() -> None:
    parsed = parse_query("What did Ana paint recently?", AS_OF)
    window = resolve_window(None, None, parsed.window, DEFAULT_TUNING, vague=parsed.vague)
    assert (window.since, window.until) == (None, None)
    assert (window.core_since, window.core_until) == (dt.date(2026, 2, 26), AS_OF)
    assert window.vague and not window.weak and not window.wide


def test_recently_does_not_hide_a_strong_match_told_weeks_ago(session: Recaller) -> None:
    # Inside the window Ana has lunch, calls and a busy job; what she painted was told in January
    # (and once on the 10th): every painting beats every line that only names her.
    found = texts(session, "What did Ana paint recently?")
    assert found[0] == "Ana painted the garden fence blue."  # inside the window: still first
    assert set(found[1:3]) == {
        "Ana painted a watercolour of the harbour at dusk.",
        "Ana painted a portrait of her grandmother for the hallway.",
    }


def test_recently_in_chinese_does_not_hide_a_strong_match_told_weeks_ago(session: Recaller) -> None:
    found = texts(session, "安娜最近画了什么？")
    assert found[0] == "安娜画了一幅港口黄昏的水彩画。"


def test_the_window_says_it_is_vague(session: Recaller) -> None:
    result = session.recall("安娜最近画了什么？", as_of=AS_OF)
    assert result.filters["window"]["mode"] == "vague"
    assert result.filters["window"]["searched_since"] is None


def test_a_lower_floor_would_hide_the_january_painting(session: Recaller) -> None:
    """The floor is what keeps a strong match far outside: at the dated windows' floor it sinks."""
    session.tuning = dataclasses.replace(DEFAULT_TUNING, vague_outside_floor=DEFAULT_TUNING.outside_floor)
    try:
        assert texts(session, "安娜最近画了什么？")[0] != "安娜画了一幅港口黄昏的水彩画。"
        assert (
            "Ana painted a portrait of her grandmother for the hallway."
            not in texts(session, "What did Ana paint recently?")[:3]
        )
    finally:
        session.tuning = DEFAULT_TUNING
