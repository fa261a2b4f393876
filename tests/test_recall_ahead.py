"""recall of days still ahead: "what do I have tomorrow?" lists the lines written before that name
that day, in English and Chinese, within the chat's privacy rule; a question about the past is
read as before."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import hit_texts, indexed_vault, warm_recaller

from vault_tools.config import Config
from vault_tools.recall.ahead import ahead_window
from vault_tools.recall.recall import Recaller

TODAY = dt.date(2026, 3, 11)  # a Wednesday; tomorrow is Thursday 03-12, next week 03-16..03-22

MEMORY = """# Memory

## Facts

- 2026-02-20: The Hamburg customer demo is on 2026-03-12 ^m-demo01
- 2026-02-21: The annual review is on 2026-04-20 ^m-review
"""

DAYS = {
    "2026-03-06": "- 09:00 We met the landlord on Friday at 10am about the boiler.\n",
    "2026-03-09": "- 09:00 Dentist appointment on Friday at 9am, Dr. Okafor.\n"
    "- 10:00 Therapy session next Tuesday at 18:00. #private\n"
    "- 11:00 Team offsite planning: the offsite is next Thursday in Potsdam. #shared\n",
    "2026-03-11": "- 08:00 明天早上十点和汉堡客户开合同会。\n"
    "- 09:00 Pick up the parcel tomorrow, it is at the kiosk.\n"
    "- 10:00 Next month I want to start running again.\n",
}


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Config:
    return indexed_vault(tmp_path_factory.mktemp("ahead"), DAYS, memory=MEMORY, head="## Today\n\n")


@pytest.fixture(scope="module")
def session(config: Config) -> Iterator[Recaller]:
    with warm_recaller(config) as warm:
        yield warm


def texts(session: Recaller, query: str, **options: object) -> list[str]:
    return hit_texts(session, query, TODAY, **options)


TOMORROW = {
    "明天早上十点和汉堡客户开合同会。",
    "Pick up the parcel tomorrow, it is at the kiosk.",
    "The Hamburg customer demo is on 2026-03-12",
}


@pytest.mark.parametrize("question", ["What do I have tomorrow?", "明天有什么安排？", "what's on tomorrow"])
def test_tomorrow_lists_what_was_written_about_it(session: Recaller, question: str) -> None:
    assert set(texts(session, question, chat="direct")) == TOMORROW


def test_a_weekday_in_a_question_about_what_is_planned_is_the_coming_one(session: Recaller) -> None:
    assert texts(session, "What is happening on Friday?", chat="direct") == [
        "Dentist appointment on Friday at 9am, Dr. Okafor."
    ]
    assert texts(session, "周五有什么安排？", chat="direct") == [
        "Dentist appointment on Friday at 9am, Dr. Okafor."
    ]


def test_a_question_about_the_past_reads_its_weekday_backwards(session: Recaller) -> None:
    found = texts(session, "What did we do on Friday?", chat="direct")
    assert found and "landlord" in found[0]


def test_next_week_soonest_first_within_the_chats_rule(session: Recaller) -> None:
    assert texts(session, "what is coming up next week?", chat="direct") == [
        "Team offsite planning: the offsite is next Thursday in Potsdam. #shared"
    ]
    owner = texts(session, "what is coming up next week?", chat="direct", include_private=True)
    assert owner == [
        "Therapy session next Tuesday at 18:00. #private",
        "Team offsite planning: the offsite is next Thursday in Potsdam. #shared",
    ]
    assert texts(session, "下周有什么安排？", chat="group") == [
        "Team offsite planning: the offsite is next Thursday in Potsdam. #shared"
    ]


def test_the_rest_of_the_question_is_the_topic(session: Recaller) -> None:
    assert texts(session, "anything about the parcel tomorrow?", chat="direct") == [
        "Pick up the parcel tomorrow, it is at the kiosk."
    ]
    result = session.recall("when is the demo tomorrow?", as_of=TODAY, chat="direct")
    assert [hit.text for hit in result.results] == ["The Hamburg customer demo is on 2026-03-12"]
    assert result.filters["ahead"] == {"since": "2026-03-12", "until": "2026-03-12", "phrase": "tomorrow"}
    assert result.render().startswith("Noted for 2026-03-12 (tomorrow), soonest first:\nMEMORY.md:5")


def test_with_nothing_dated_then_the_words_are_searched_as_before(session: Recaller) -> None:
    result = session.recall("what will I start next month?", as_of=TODAY, chat="direct")
    assert "ahead" not in result.filters
    assert result.results and "running again" in result.results[0].text


@pytest.mark.parametrize(
    ("question", "since", "until"),
    [
        ("what do I have tomorrow", "2026-03-12", "2026-03-12"),
        ("the day after tomorrow?", "2026-03-13", "2026-03-13"),
        ("后天呢", "2026-03-13", "2026-03-13"),
        ("大后天有什么", "2026-03-14", "2026-03-14"),
        ("what is on this weekend", "2026-03-14", "2026-03-15"),
        ("what's coming up this weekend?", "2026-03-14", "2026-03-15"),
        ("what is coming up?", "2026-03-11", "2026-03-25"),
        ("接下来有什么安排", "2026-03-11", "2026-03-25"),
        ("下周三有什么", "2026-03-18", "2026-03-18"),
        ("what's coming up next week", "2026-03-16", "2026-03-22"),
        ("下个月要做什么", "2026-04-01", "2026-04-30"),
        ("anything in the next 3 days?", "2026-03-11", "2026-03-14"),
        ("未来几天有什么事", "2026-03-11", "2026-03-14"),
    ],
)
def test_days_ahead_as_people_ask(question: str, since: str, until: str) -> None:
    window, _rest = ahead_window(question, TODAY)
    assert window is not None
    assert (window.since.isoformat(), window.until.isoformat()) == (since, until)


@pytest.mark.parametrize(
    "question",
    [
        "what did we do this weekend?",
        "What did I do on Friday?",
        "上周五做了什么",
        "周五有什么事发生了",
        "what did I have planned on Friday?",
        "What should I never do on a Friday afternoon?",
        "每周五有什么安排",
        "when is the demo?",
        "昨天吃了什么",
    ],
)
def test_questions_about_the_past_or_no_day_look_back(question: str) -> None:
    assert ahead_window(question, TODAY) == (None, question)


@pytest.mark.parametrize("question", ["What did I learn on Monday?", "周一学到了什么？"])
def test_words_no_entry_holds_leave_the_entries_of_the_time_asked_about(
    session: Recaller, question: str
) -> None:
    result = session.recall(question, as_of=TODAY, chat="direct")
    assert [hit.date for hit in result.results] == ["2026-03-09", "2026-03-09"]  # the #private one stays out
    assert any(w.startswith("no entry says ") for w in result.warnings)
    matched = session.recall("What did I plan on Monday?", as_of=TODAY, chat="direct")
    assert not any(w.startswith("no entry says ") for w in matched.warnings)
    # a year's newest entries say nothing of a question about it, and listing them is slow
    assert session.recall("What did I learn this year?", as_of=TODAY, chat="direct").results == []


def test_with_nothing_ahead_the_time_words_still_window_the_search(session: Recaller) -> None:
    result = session.recall("what's on tonight?", as_of=TODAY, chat="direct")
    assert "ahead" not in result.filters and result.filters["time_phrase"] == "tonight"
    assert result.results and {hit.date for hit in result.results} == {"2026-03-11"}


def test_a_note_in_traditional_chinese_answers_a_question_about_the_days_ahead(tmp_path: Path) -> None:
    days = {"2026-03-10": "- 09:00 下週三和房東交接鑰匙，記得帶合約。\n- 10:00 上週三開了部門會議。\n"}
    config = indexed_vault(tmp_path, days)
    with warm_recaller(config) as warm:
        for question in ("下週有什麼安排？", "下周有什么安排？", "what is on next week?"):
            assert texts(warm, question)[:1] == ["下週三和房東交接鑰匙，記得帶合約。"], question


def test_the_days_ahead_are_named_as_the_question_wrote_them() -> None:
    from vault_tools.recall.query import parse_query

    for question, phrase in (
        ("下週有什麼安排？", "下週"),
        ("下周有什么安排？", "下周"),
        ("what is on next week?", "next week"),
    ):
        parsed = parse_query(question, TODAY)
        assert parsed.ahead is not None and parsed.ahead.phrase == phrase
