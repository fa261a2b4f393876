"""recall on kinds of data it was not tuned on: the time of an event, long dialogue as the query,
Traditional script, user-assistant logs, facts that changed, questions across days, a new week."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import hit_texts, indexed_vault, warm_recaller, write

from vault_tools.config import Config, load_config
from vault_tools.index.index import Index
from vault_tools.recall.query import STOP_WORDS_ONLY, parse_query
from vault_tools.recall.recall import Recaller
from vault_tools.recall.tuning import DEFAULT_TUNING

AS_OF = dt.date(2026, 3, 12)  # a Thursday

MEMORY = """---
title: Long-term memory
---
# Long-term memory

## Facts

- 2026-01-05: Drinks two espressos every morning [importance:: 0.6] ^m-old111
- 2026-03-01: Gave up coffee, drinks green tea every morning now [supersedes:: m-old111] [importance:: 0.6] ^m-new222
"""

DAYS = {
    "2026-01-10": "- 09:00 Coffee order at work: a flat white with oat milk.\n",
    "2026-02-01": "- 10:00 Swimming at the pool before work: 2 km, the pool was quiet.\n"
    "- 10:05 Pool swim: bought a ten-visit swimming card for the pool.\n"
    "- 10:10 Swimming goggles leak at the pool, need new ones for the pool.\n",
    "2026-02-08": "- 10:00 Swimming again at the pool, 1.5 km.\n",
    "2026-02-15": "- 10:00 Short swim, the pool was crowded.\n",
    "2026-03-05": "- 14:00 Need to fix the fence sometime, it keeps falling over.\n"
    "- 14:30 记下来：周末去买猫粮。\n"
    "- 15:00 Quarterly planning notes for the platform team.\n",
    "2026-03-06": "- 11:00 Groceries: leeks, rice, eggs.\n",
    "2026-03-09": "- 20:01 **Assistant**: What genres of music do you enjoy?\n"
    "- 20:02 **User**: Mostly jazz piano, Bill Evans above all.\n",
    "2026-03-10": "- 09:00 Ordered a new desk lamp.\n- 21:00 爸爸的降压药是氨氯地平，每天早上吃一片。\n",
    "2026-03-11": "- 08:00 Read two chapters of the novel on the train.\n"
    "- 12:00 Lunch with Priya at the Vietnamese place.\n"
    "- 18:00 Last Friday we finally fixed the boiler, the flat is warm again.\n"
    "- 19:00 Back in 2019 I lived in Leipzig and repaired bikes at a shop in Plagwitz.\n",
    "2026-03-12": "- 08:30 Coffee order changed: now a cortado, no more flat whites.\n",
}


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Config:
    return indexed_vault(tmp_path_factory.mktemp("kinds"), DAYS, memory=MEMORY)


@pytest.fixture(scope="module")
def session(config: Config) -> Iterator[Recaller]:
    with warm_recaller(config) as warm:
        yield warm


def texts(session: Recaller, query: str, **options: object) -> list[str]:
    return hit_texts(session, query, AS_OF, **options)


# --- the time of the event, not of the note ----------------------------------------------------


def test_a_note_written_later_that_tells_of_the_asked_day_counts_as_inside_it(session: Recaller) -> None:
    result = session.recall("What did we fix on March 6?", as_of=AS_OF, explain=True)
    boiler = next(h for h in result.results if "boiler" in h.text)
    assert boiler.explain is not None and boiler.explain["window"] == 1.0  # "last Friday" of 03-11
    assert result.results[0].text == boiler.text
    session.tuning = dataclasses.replace(DEFAULT_TUNING, event_time=False)
    try:
        later = session.recall("What did we fix on March 6?", as_of=AS_OF, explain=True)
        boiler = next(h for h in later.results if "boiler" in h.text)
        assert boiler.explain is not None and boiler.explain["window"] < 1.0
    finally:
        session.tuning = DEFAULT_TUNING


def test_a_year_long_before_any_note_does_not_hide_the_note_that_tells_of_it(session: Recaller) -> None:
    assert "Leipzig" in texts(session, "Where did I live in 2019?")[0]


def test_time_words_in_a_pasted_dialogue_are_weak_evidence(session: Recaller) -> None:
    dialogue = (
        "User: good morning! today is a busy day, lots to do today.\n"
        "Assistant: Good morning! How can I help you today?\n"
        "User: I want to plan the weekend, maybe something active.\n"
        "Assistant: Sounds good. Anything in mind?\n"
        "User: where do I swim, and did I buy a card for the pool?"
    )
    result = session.recall(dialogue, as_of=AS_OF)
    assert result.filters["window"] is None  # "today" of a greeting is no window
    assert "ten-visit swimming card" in result.results[0].text


# --- Traditional script ----------------------------------------------------------------------


def test_a_question_in_traditional_script_finds_the_simplified_note(session: Recaller) -> None:
    result = session.recall("爸爸吃的降壓藥叫什麼？", as_of=AS_OF)
    assert "氨氯地平" in result.results[0].text
    assert "什么" not in result.filters["keywords"] and "什麼" not in result.filters["keywords"]


# --- user-assistant logs, changed facts, questions across days ---------------------------------


def test_the_users_answer_ranks_above_the_assistants_question(session: Recaller) -> None:
    found = texts(session, "What genres of music do I enjoy?")
    assert found[0] == "**User**: Mostly jazz piano, Bill Evans above all."
    assert found[1] == "**Assistant**: What genres of music do you enjoy?"


def test_a_question_about_now_ranks_the_latest_statement_first(session: Recaller) -> None:
    found = texts(session, "What is my coffee order?")
    assert found[0].startswith("Coffee order changed: now a cortado")
    assert found.index("Coffee order at work: a flat white with oat milk.") > 0


def test_an_item_the_heartbeat_marked_superseded_loses(session: Recaller) -> None:
    result = session.recall("what do I drink every morning", as_of=AS_OF, explain=True)
    assert result.results[0].text.startswith("Gave up coffee")
    old = next(h for h in result.results if h.text.startswith("Drinks two espressos"))
    assert old.explain is not None and old.explain["superseded"] == DEFAULT_TUNING.superseded_factor


def test_a_question_across_days_spreads_the_top_hits_over_days(session: Recaller) -> None:
    result = session.recall("How often did I go swimming at the pool?", as_of=AS_OF, limit=3)
    assert len({hit.date for hit in result.results}) == 3
    session.tuning = dataclasses.replace(DEFAULT_TUNING, day_repeat=1.0)
    try:
        stacked = session.recall("How often did I go swimming at the pool?", as_of=AS_OF, limit=3)
        assert len({hit.date for hit in stacked.results}) < 3
    finally:
        session.tuning = DEFAULT_TUNING


# --- a new user's week ---------------------------------------------------------------------------


@pytest.mark.parametrize("query", ["what did I write yesterday", "what happened yesterday?", "昨天记了什么"])
def test_asking_what_was_written_yesterday_lists_yesterdays_entries(session: Recaller, query: str) -> None:
    result = session.recall(query, as_of=AS_OF)
    assert result.filters["keywords"] == []  # nothing to match: it browses the day
    assert [hit.date for hit in result.results[:4]] == ["2026-03-11"] * 4
    assert all("猫粮" not in hit.text for hit in result.results)


@pytest.mark.parametrize("query", ["the", "的", "what is it?", "什么是"])
def test_a_query_of_stop_words_only_warns_and_returns_nothing(session: Recaller, query: str) -> None:
    result = session.recall(query, as_of=AS_OF)
    assert result.results == []
    assert STOP_WORDS_ONLY in result.warnings


def test_stop_words_with_a_filter_still_browse(session: Recaller) -> None:
    assert session.recall("the", as_of=AS_OF, since="2026-03-11").results


# --- an entry that names a time inside the asked period -----------------------------------------

EVENTS = {
    "2026-02-20": "- 10:00 **Ana**: Finished the quilt last Sunday, it took all winter.\n"
    "- 10:05 **Ana**: Ana will finish the quilt border.\n"
    "- 11:00 上周日终于把被子缝好了，花了一个冬天。\n"
    "- 11:05 被子缝好以后要洗一下。\n",
}


@pytest.fixture(scope="module")
def events(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Recaller]:
    vault = tmp_path_factory.mktemp("events") / "vault"
    for day, body in EVENTS.items():
        write(vault / "memory" / f"{day}.md", f"---\ndate: {day}\n---\n{body}")
    config = load_config(vault, env={})
    Index(config).rebuild()
    with Recaller(config, catch_up="never") as warm:
        yield warm


@pytest.mark.parametrize(
    ("question", "told", "written"),
    [
        (
            "What did Ana finish in February 2026?",
            "**Ana**: Finished the quilt last Sunday, it took all winter.",
            "**Ana**: Ana will finish the quilt border.",
        ),
        ("2026年2月被子缝好了吗？", "上周日终于把被子缝好了，花了一个冬天。", "被子缝好以后要洗一下。"),
    ],
)
def test_an_entry_that_names_a_day_inside_the_asked_month_ranks_above_one_only_written_in_it(
    events: Recaller, question: str, told: str, written: str
) -> None:
    result = events.recall(question, as_of=AS_OF, explain=True)
    assert result.results[0].text == told
    assert result.results[0].explain is not None
    assert result.results[0].explain["event"] == DEFAULT_TUNING.event_match
    events.tuning = dataclasses.replace(DEFAULT_TUNING, event_match=1.0)
    try:  # the other entry matches better on its words alone
        assert texts(events, question)[0] == written
    finally:
        events.tuning = DEFAULT_TUNING


def test_a_year_is_too_long_a_period_for_the_event_bonus(events: Recaller) -> None:
    result = events.recall("What did Ana finish in 2026?", as_of=AS_OF, explain=True)
    assert all(hit.explain is not None and "event" not in hit.explain for hit in result.results)


SEVERAL = {
    "2026-03-07": "- 10:00 **Ana**: I read two books on the train this week, both thrillers.\n"
    "- 10:01 **Ana**: The books were from the library sale, I read them fast.\n"
    "- 10:02 **Ana**: I read books in the evening now, no phone.\n",
    "2026-04-11": "- 10:00 **Ana**: I read Middlemarch in April, the longest of my books this year.\n",
    "2026-03-14": "- 10:00 **小林**: 这次出差去过的城市有杭州和宁波。\n"
    "- 10:01 **小林**: 两个城市都很漂亮，城市很干净。\n"
    "- 10:02 **小林**: 下次还想去这两个城市。\n",
    "2026-04-18": "- 10:00 **小林**: 五一假期去过成都，吃了很多火锅。\n",
}


@pytest.mark.parametrize(("query", "limit"), [("What books has Ana read?", 2), ("小林去过哪些城市？", 3)])
def test_a_question_for_several_things_reaches_past_one_days_near_copies(
    tmp_path: Path, query: str, limit: int
) -> None:
    """Several books, several cities: told on different days, so one day's lines on the topic
    give way, gently, to another day's."""
    config = indexed_vault(tmp_path, SEVERAL)
    with Recaller(config, catch_up="never") as session:
        spread = session.recall(query, as_of=AS_OF, limit=limit).results
        assert len({hit.date for hit in spread}) == 2
        session.tuning = dataclasses.replace(DEFAULT_TUNING, several_day_repeat=1.0)
        stacked = session.recall(query, as_of=AS_OF, limit=limit).results
        assert len({hit.date for hit in stacked}) == 1


@pytest.mark.parametrize(
    ("question", "several"),
    [
        ("What books has Ana read?", True),
        ("Which cities did they visit?", True),
        ("What kinds of music does Ben like?", True),
        ("小林去过哪些城市？", True),
        ("小林去過哪些城市？", True),
        ("What book did Ana read last?", False),
        ("What does Ana do for work?", False),
        ("How many books has Ana read?", False),
        ("小林去过哪个城市？", False),
    ],
)
def test_questions_that_ask_for_several_things(question: str, several: bool) -> None:
    assert parse_query(question, AS_OF).several is several
