"""Tests for vault_tools.recall.timewords: time phrases in recall queries and --since/--until values."""

from __future__ import annotations

import datetime
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vault_tools.errors import UsageError, VaultError
from vault_tools.recall.timewords import RECENT_DAYS, DateWindow, extract_time_window, parse_when

D = datetime.date.fromisoformat
WED = "2026-03-11"  # a Wednesday; its week is Mon 2026-03-09 .. Sun 2026-03-15


def case(query: str, as_of: str, since: str | None, until: str | None, rest: str = "") -> object:
    return pytest.param(query, as_of, since, until, rest, id=f"{query}@{as_of}")


CASES = [
    # --- English: days
    case("today", WED, WED, WED),
    case("What did we decide yesterday?", WED, "2026-03-10", "2026-03-10", "What did we decide?"),
    case("yesterday", "2026-03-01", "2026-02-28", "2026-02-28"),
    case("yesterday", "2024-03-01", "2024-02-29", "2024-02-29"),
    case("the day before yesterday", "2026-03-01", "2026-02-27", "2026-02-27"),
    case("day before yesterday deploy", "2026-01-01", "2025-12-30", "2025-12-30", "deploy"),
    case("last night", "2026-01-01", "2025-12-31", "2025-12-31"),
    case("this morning standup", WED, WED, WED, "standup"),
    case("earlier today", WED, WED, WED),
    # --- English: N units ago (a day, or the calendar period holding that day)
    case("notes from 3 days ago", "2026-03-02", "2026-02-27", "2026-02-27", "notes"),
    case("five days ago", "2026-01-03", "2025-12-29", "2025-12-29"),
    case("a couple of days ago", "2026-03-01", "2026-02-27", "2026-02-27"),
    case("a week ago", WED, "2026-03-02", "2026-03-08"),
    case("2 weeks ago", "2026-01-07", "2025-12-22", "2025-12-28"),
    case("two months ago", "2026-01-15", "2025-11-01", "2025-11-30"),
    case("a year ago", "2024-02-29", "2023-01-01", "2023-12-31"),
    # --- English: calendar periods and rolling windows
    case("last week", WED, "2026-03-02", "2026-03-08"),
    case("last week", "2026-01-01", "2025-12-22", "2025-12-28"),
    case("this week", "2026-01-01", "2025-12-29", "2026-01-04"),
    case("previous week", WED, "2026-03-02", "2026-03-08"),
    case("the week before last", WED, "2026-02-23", "2026-03-01"),
    case("in the past week", WED, "2026-03-04", WED),
    case("last weekend", WED, "2026-03-07", "2026-03-08"),
    case("last month", "2026-01-05", "2025-12-01", "2025-12-31"),
    case("last month", "2024-03-31", "2024-02-01", "2024-02-29"),
    case("this month", "2024-02-10", "2024-02-01", "2024-02-29"),
    case("last year", "2026-01-01", "2025-01-01", "2025-12-31"),
    case("this year", WED, "2026-01-01", "2026-12-31"),
    case("in the last 7 days", WED, "2026-03-04", WED),
    case("past 3 days auth", "2026-03-02", "2026-02-27", "2026-03-02", "auth"),
    case("over the last two weeks", WED, "2026-02-25", WED),
    case("recently", WED, "2026-02-25", WED),
    case("what changed lately?", WED, "2026-02-25", WED, "what changed?"),
    # --- English: weekdays (most recent strictly before as_of unless 'this')
    case("on Monday", WED, "2026-03-09", "2026-03-09"),
    case("on Monday", "2026-03-09", "2026-03-02", "2026-03-02"),
    case("last Friday", "2026-03-14", "2026-03-13", "2026-03-13"),
    case("this Monday", WED, "2026-03-09", "2026-03-09"),
    case("Sunday", "2026-01-01", "2025-12-28", "2025-12-28"),
    # --- English: months (a bare month is the most recent one not in the future)
    case("in March", "2026-02-10", "2025-03-01", "2025-03-31"),
    case("in March", "2026-03-15", "2026-03-01", "2026-03-31"),
    case("decisions in March 2024", WED, "2024-03-01", "2024-03-31", "decisions"),
    case("last March", "2026-03-15", "2025-03-01", "2025-03-31"),
    case("March last year", "2026-05-01", "2025-03-01", "2025-03-31"),
    case("May 3", "2026-03-13", "2025-05-03", "2025-05-03"),
    case("in May", "2026-05-20", "2026-05-01", "2026-05-31"),
    case("February 29", "2026-03-01", "2024-02-29", "2024-02-29"),
    case("Feb 29, 2024", WED, "2024-02-29", "2024-02-29"),
    case("what happened in December", "2026-01-05", "2025-12-01", "2025-12-31", "what happened"),
    case("auth decisions march", WED, "2026-03-01", "2026-03-31", "auth decisions"),
    # --- English: day-first dates, and a span right before or after a date
    case("what did she bake on 31 July, 2023?", WED, "2023-07-31", "2023-07-31", "what did she bake?"),
    case("16 November 2023", WED, "2023-11-16", "2023-11-16"),
    case("the 5th of March deploy", WED, "2026-03-05", "2026-03-05", "deploy"),
    case("on 3rd May", WED, "2025-05-03", "2025-05-03"),
    case("where was he the week before 16 November 2023?", WED, "2023-11-09", "2023-11-15", "where was he?"),
    case("the day after 2026-02-28 deploy", WED, "2026-03-01", "2026-03-01", "deploy"),
    case("a month before 2024-03-01", WED, "2024-01-31", "2024-02-29"),
    case("2023年11月16日的前一周在哪里", WED, "2023-11-09", "2023-11-15", "在哪里"),
    case("3月10日后一天做了什么", WED, "2026-03-11", "2026-03-11", "做了什么"),
    # --- English: ISO dates and open/closed ranges
    case("what did we ship on 2026-03-10", WED, "2026-03-10", "2026-03-10", "what did we ship"),
    case("since 2026-03-01 auth", WED, "2026-03-01", None, "auth"),
    case("before 2026-04-01 deploy", "2026-04-15", None, "2026-03-31", "deploy"),
    case("after 2026-02-28", WED, "2026-03-01", None),
    case("until yesterday", WED, None, "2026-03-10"),
    case("between 2026-02-20 and 2026-03-05 auth", WED, "2026-02-20", "2026-03-05", "auth"),
    case("between 2026-03-05 and 2026-02-20", WED, "2026-02-20", "2026-03-05"),
    case("from Monday to Wednesday", "2026-03-13", "2026-03-09", "2026-03-11"),
    case("between March and May", "2026-06-01", "2026-03-01", "2026-05-31"),
    case("2024-02 budget", WED, "2024-02-01", "2024-02-29", "budget"),
    case("since Monday", WED, "2026-03-09", None),
    case("during 2025", WED, "2025-01-01", "2025-12-31"),
    case("since 2025 auth", WED, "2025-01-01", None, "auth"),
    # --- English: case, punctuation, possessives
    case("LAST WEEK?", WED, "2026-03-02", "2026-03-08"),
    case("last week's decisions about auth", WED, "2026-03-02", "2026-03-08", "decisions about auth"),
    case("auth, last week, decisions", WED, "2026-03-02", "2026-03-08", "auth, decisions"),
    case("Yesterday: what broke?", WED, "2026-03-10", "2026-03-10", "what broke?"),
    # --- Chinese: days
    case("今天", WED, WED, WED),
    case("昨天的会议", "2026-03-01", "2026-02-28", "2026-02-28", "会议"),
    case("前天", "2026-01-01", "2025-12-30", "2025-12-30"),
    case("大前天", "2026-03-01", "2026-02-26", "2026-02-26"),
    case("今早说了什么", WED, WED, WED, "说了什么"),
    case("今天早上", WED, WED, WED),
    case("昨晚", "2026-01-01", "2025-12-31", "2025-12-31"),
    case("昨天晚上聊了什么", WED, "2026-03-10", "2026-03-10", "聊了什么"),
    # --- Chinese: weeks, months, years
    case("我上周决定了什么", WED, "2026-03-02", "2026-03-08", "我决定了什么"),
    case("上星期", "2026-01-01", "2025-12-22", "2025-12-28"),
    case("上个星期", WED, "2026-03-02", "2026-03-08"),
    case("上个礼拜讨论的方案", WED, "2026-03-02", "2026-03-08", "讨论的方案"),
    case("上礼拜", WED, "2026-03-02", "2026-03-08"),
    case("这周", WED, "2026-03-09", "2026-03-15"),
    case("本周的待办", WED, "2026-03-09", "2026-03-15", "待办"),
    case("这个星期", WED, "2026-03-09", "2026-03-15"),
    case("上周一直在忙什么", WED, "2026-03-02", "2026-03-08", "一直在忙什么"),
    case("上个月", "2026-01-05", "2025-12-01", "2025-12-31"),
    case("上月", "2024-03-15", "2024-02-01", "2024-02-29"),
    case("本月", "2024-02-10", "2024-02-01", "2024-02-29"),
    case("这个月", WED, "2026-03-01", "2026-03-31"),
    case("今年", WED, "2026-01-01", "2026-12-31"),
    case("去年", "2026-01-01", "2025-01-01", "2025-12-31"),
    case("前年", WED, "2024-01-01", "2024-12-31"),
    case("上周末", WED, "2026-03-07", "2026-03-08"),
    # --- Chinese: N units ago, recent, last N
    case("三天前", "2026-03-02", "2026-02-27", "2026-02-27"),
    case("3天前", "2026-01-02", "2025-12-30", "2025-12-30"),
    case("两周前", WED, "2026-02-23", "2026-03-01"),
    case("一个月前", "2026-03-31", "2026-02-01", "2026-02-28"),
    case("三个月前的讨论", "2026-01-15", "2025-10-01", "2025-10-31", "讨论"),
    case("十天前", "2026-03-05", "2026-02-23", "2026-02-23"),
    case("最近", WED, "2026-02-25", WED),
    case("最近有什么进展", WED, "2026-02-25", WED, "有什么进展"),
    case("最近三天", WED, "2026-03-08", WED),
    case("过去7天的笔记", WED, "2026-03-04", WED, "笔记"),
    # --- Chinese: months and dates
    case("三月", "2026-03-15", "2026-03-01", "2026-03-31"),
    case("三月", "2026-02-10", "2025-03-01", "2025-03-31"),
    case("十二月", "2026-01-05", "2025-12-01", "2025-12-31"),
    case("12月的计划", "2026-01-05", "2025-12-01", "2025-12-31", "计划"),
    case("三月份的计划", WED, "2026-03-01", "2026-03-31", "计划"),
    case("2026年3月", "2026-05-01", "2026-03-01", "2026-03-31"),
    case("2026年3月10日的决定", WED, "2026-03-10", "2026-03-10", "决定"),
    case("3月10日", "2026-03-05", "2025-03-10", "2025-03-10"),
    case("3月10号", WED, "2026-03-10", "2026-03-10"),
    case("三月十日", WED, "2026-03-10", "2026-03-10"),
    case("2月29日", "2026-03-01", "2024-02-29", "2024-02-29"),
    case("去年三月", "2026-05-01", "2025-03-01", "2025-03-31"),
    case("2025年", WED, "2025-01-01", "2025-12-31"),
    # --- Chinese: weekdays (上周五 is Friday of last calendar week; a bare 周五 the most recent Friday)
    case("上周五", WED, "2026-03-06", "2026-03-06"),
    case("上周五的会议", "2026-03-14", "2026-03-06", "2026-03-06", "会议"),
    case("周五", "2026-03-14", "2026-03-13", "2026-03-13"),
    case("星期五", "2026-03-13", "2026-03-06", "2026-03-06"),
    case("礼拜五", WED, "2026-03-06", "2026-03-06"),
    case("这周一", WED, "2026-03-09", "2026-03-09"),
    case("星期天", WED, "2026-03-08", "2026-03-08"),
    # --- Chinese: open and closed ranges
    case("从上周开始的bug", WED, "2026-03-02", None, "bug"),
    case("上周之前的bug", WED, None, "2026-03-01", "bug"),
    case("3月1日以来", WED, "2026-03-01", None),
    case("三月起草的文档", WED, "2026-03-01", "2026-03-31", "起草的文档"),  # 起草 is "draft", not 起 "since"
    case("3月1日到3月10日的部署", WED, "2026-03-01", "2026-03-10", "部署"),
    # --- the state up to a date, seasons, and parts of a month, season or year
    case(
        "how many plants did I have as of June 2025?", WED, None, "2025-06-30", "how many plants did I have?"
    ),
    case("what was the plan as of 2025-11-03", WED, None, "2025-11-03", "what was the plan"),
    case("how much had I saved by October 2, 2025?", WED, None, "2025-10-02", "how much had I saved?"),
    case("where did we hike in summer 2024?", WED, "2024-06-01", "2024-08-31", "where did we hike?"),
    case("the lake trip last summer", WED, "2025-06-01", "2025-08-31", "the lake trip"),
    case("last summer", "2026-07-20", "2025-06-01", "2025-08-31"),
    case("this winter", "2026-01-10", "2025-12-01", "2026-02-28"),
    case("what did I read in the fall", WED, "2025-09-01", "2025-11-30", "what did I read"),
    case(
        "what did I paint the last weekend of May 2025", WED, "2025-05-31", "2025-06-01", "what did I paint"
    ),
    case("the first weekend of February", WED, "2026-02-07", "2026-02-08"),
    case("the last week of January", WED, "2026-01-25", "2026-01-31"),
    case("who visited in the second week of November 2025", WED, "2025-11-08", "2025-11-14", "who visited"),
    case("the first half of September 2025 at work", WED, "2025-09-01", "2025-09-15", "at work"),
    case("a concert towards the end of summer 2025", WED, "2025-08-02", "2025-08-31", "a concert"),
    case("at the beginning of 2025", WED, "2025-01-01", "2025-05-01"),
    case("roof repairs in early 2025", WED, "2025-01-01", "2025-05-01", "roof repairs"),
    case("mid-July 2025 trip", WED, "2025-07-11", "2025-07-21", "trip"),
    case("2025 年 5 月以前 我在哪里工作", WED, None, "2025-04-30", "我在哪里工作"),
    case("2025 年 5 月 3 日", WED, "2025-05-03", "2025-05-03"),
    case("2024年夏天去了哪里", WED, "2024-06-01", "2024-08-31", "去了哪里"),
    case("去年秋天的照片", WED, "2025-09-01", "2025-11-30", "照片"),
    case("5月初的体检", WED, "2025-05-01", "2025-05-10", "体检"),
    case("2025年底的计划", WED, "2025-09-02", "2025-12-31", "计划"),
    case("一月下旬在忙什么", WED, "2026-01-22", "2026-01-31", "在忙什么"),
    # --- mixed language
    case(
        "what did we decide 上周 about auth", WED, "2026-03-02", "2026-03-08", "what did we decide about auth"
    ),
    case("auth 决定 昨天", WED, "2026-03-10", "2026-03-10", "auth 决定"),
    case("昨天 we talked about auth", WED, "2026-03-10", "2026-03-10", "we talked about auth"),
    case("三月 roadmap", "2026-02-10", "2025-03-01", "2025-03-31", "roadmap"),
    case("我们 last week 讨论了什么", WED, "2026-03-02", "2026-03-08", "我们讨论了什么"),
    # --- a day of the month alone: the latest such day up to today
    case("What did I do on the 15th?", WED, "2026-02-15", "2026-02-15", "What did I do?"),
    case("what happened on the 3rd?", WED, "2026-03-03", "2026-03-03", "what happened?"),
    case("the 31st?", WED, "2026-01-31", "2026-01-31"),
    case("我15号做了什么", WED, "2026-02-15", "2026-02-15", "我做了什么"),
    case("三号那天吃了什么", WED, "2026-03-03", "2026-03-03", "那天吃了什么"),
    # --- a calendar date wins over a phrase counted from today: the question was put as of then
    case(
        "what did I fix last Friday, on 14 November 2025?",
        WED,
        "2025-11-14",
        "2025-11-14",
        "what did I fix last Friday?",
    ),
    case("the talk two days ago, in March 2025", WED, "2025-03-01", "2025-03-31", "the talk two days ago"),
    case("between June 3 and June 9 2025 the move", WED, "2025-06-03", "2025-06-09", "the move"),
    case("上周五在2025年11月14日修了什么", WED, "2025-11-14", "2025-11-14", "上周五在修了什么"),
]


@pytest.mark.parametrize(("query", "as_of", "since", "until", "rest"), CASES)
def test_extract_time_window(query: str, as_of: str, since: str | None, until: str | None, rest: str) -> None:
    window, remainder = extract_time_window(query, D(as_of))
    assert window is not None
    assert (window.since, window.until) == (since and D(since), until and D(until))
    assert remainder == rest
    assert window.phrase and window.phrase in query


def test_table_is_big_enough() -> None:
    assert len(CASES) >= 60


@pytest.mark.parametrize(
    ("query", "phrase"),
    [
        ("what did we decide last week?", "last week"),
        ("我上周决定了什么", "上周"),
        ("notes from 3 days ago", "from 3 days ago"),
        ("Between 2026-03-01 and 2026-03-10 auth", "Between 2026-03-01 and 2026-03-10"),
        ("on 2026-03-10T10:00 deploy", "on 2026-03-10T10:00"),
    ],
)
def test_phrase_is_the_words_that_produced_the_window(query: str, phrase: str) -> None:
    window, _ = extract_time_window(query, D(WED))
    assert window is not None
    assert window.phrase == phrase


def test_first_phrase_wins_and_the_rest_stays_in_the_query() -> None:
    window, remainder = extract_time_window("yesterday and today", D(WED))
    assert window == DateWindow(D("2026-03-10"), D("2026-03-10"), "yesterday")
    assert remainder == "and today"
    again, rest = extract_time_window(remainder, D(WED))
    assert again == DateWindow(D(WED), D(WED), "today")
    assert rest == "and"


def test_recently_reaches_back_recent_days() -> None:
    window, _ = extract_time_window("recently", D(WED))
    assert window is not None and window.since is not None
    assert (D(WED) - window.since).days == RECENT_DAYS


@pytest.mark.parametrize(
    "query",
    [
        "tell me about auth",
        "march forward with the plan",
        "it may rain",
        "this may be wrong",
        "we 2 may go",
        "may",
        "the sun rises on sat",
        "weekly sync",
        "周报怎么写",
        "每周一开会",
        "一周一次的例会",
        "晚上周报",
        "成本月报",
        "几个月前",
        "2025 budget",
        "port 8080 and 2026 plans",
        "version v2026-03",
        "spring cleaning checklist",
        "did I fall off the bike",
        "the summer dress I bought",
        "a hot spring in Iceland",
        "stand by me",
        "the 3rd time we met",
        "坐1号线去公司",
        "几号搬家",
        "3号楼的快递",
        "",
        "   ",
    ],
)
def test_queries_without_time_words_come_back_unchanged(query: str) -> None:
    assert extract_time_window(query, D(WED)) == (None, query)


@pytest.mark.parametrize(
    "query",
    [
        "what happened on 2026-02-30",
        "2026-13-01 notes",
        "Feb 29, 2025 deploy",
        "2月30日的会议",
        "3月32日",
        "2026年13月",
        "next week plan",
        "plans for next Friday",
        "next March",
        "下周五的会议",
        "下个月",
        "明年三月",
        "after 9999-12-31",
    ],
)
def test_unresolvable_phrases_leave_the_query_intact(query: str) -> None:
    assert extract_time_window(query, D(WED)) == (None, query)


@pytest.mark.parametrize(
    ("query", "rest"),
    [
        ("yesterday auth", "auth"),
        ("auth yesterday", "auth"),
        ("in March: budget", "budget"),
        ("上周 x", "x"),
        ("上周的决定", "决定"),
        ("last week, a", "a"),
        ("? yesterday 1 ?", "1?"),
    ],
)
def test_remainder_keeps_content(query: str, rest: str) -> None:
    window, remainder = extract_time_window(query, D(WED))
    assert window is not None
    assert remainder == rest


@pytest.mark.parametrize("query", ["yesterday", "  Yesterday?! ", "上周？", "in the last 7 days.", "上周的"])
def test_only_a_time_phrase_leaves_an_empty_remainder(query: str) -> None:
    window, remainder = extract_time_window(query, D(WED))
    assert window is not None
    assert remainder == ""


PARSE_CASES = [
    ("2026-03-01", WED, False, "2026-03-01"),
    ("2026-03-01", WED, True, "2026-03-01"),
    ("2026-03", WED, False, "2026-03-01"),
    ("2026-03", WED, True, "2026-03-31"),
    ("2024-02", WED, True, "2024-02-29"),
    ("2026", WED, False, "2026-01-01"),
    ("2026", WED, True, "2026-12-31"),
    ("7d", WED, False, "2026-03-04"),
    ("7d", WED, True, "2026-03-04"),
    (" 7 days ago ", WED, False, "2026-03-04"),
    ("2w", WED, False, "2026-02-25"),
    ("3m", WED, False, "2025-12-11"),
    ("1m", "2024-03-31", False, "2024-02-29"),
    ("1y", "2024-02-29", False, "2023-02-28"),
    ("today", WED, True, WED),
    ("yesterday", "2026-01-01", False, "2025-12-31"),
    ("last week", WED, False, "2026-03-02"),
    ("last week", WED, True, "2026-03-08"),
    ("this week", WED, True, "2026-03-15"),
    ("this month", WED, False, "2026-03-01"),
    ("this month", "2024-02-10", True, "2024-02-29"),
    ("last month", "2026-01-05", False, "2025-12-01"),
    ("last month", "2026-01-05", True, "2025-12-31"),
    ("this year", WED, True, "2026-12-31"),
    ("Last Week", WED, False, "2026-03-02"),
    ("may", WED, False, "2025-05-01"),
    ("March", "2026-02-10", True, "2025-03-31"),
    ("上周", WED, False, "2026-03-02"),
    ("本周", WED, True, "2026-03-15"),
    ("本月", WED, True, "2026-03-31"),
    ("上个月", "2026-01-05", False, "2025-12-01"),
    ("昨天", WED, False, "2026-03-10"),
    ("三月", "2026-02-10", False, "2025-03-01"),
    ("去年", WED, True, "2025-12-31"),
    ("今年", WED, False, "2026-01-01"),
    ("最近", WED, False, "2026-02-25"),
]


@pytest.mark.parametrize(("value", "as_of", "end", "expected"), PARSE_CASES)
def test_parse_when(value: str, as_of: str, end: bool, expected: str) -> None:
    assert parse_when(value, D(as_of), end=end) == D(expected)


@pytest.mark.parametrize(
    "value",
    ["", "   ", "bogus", "2026-02-30", "2026-13", "0000", "7x", "last", "next week", "auth last week"],
)
def test_parse_when_rejects_bad_input_with_usage_error(value: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_when(value, D(WED))
    message = str(caught.value)
    assert "2026-03-01" in message and "7d" in message and "last week" in message and "上周" in message
    assert isinstance(caught.value, VaultError) and caught.value.exit_code == 2


# Time words, near-misses and edge dates for the fuzz test to glue together with random text.
_WORDS = """
today yesterday last this past previous week weekend month year ago days weeks in on since before after
until between and from to the a couple of recently march may monday friday 2026-03-10 2024-02-29
2026-02-30 9999-12-31 0001-01-01 2026 2026-03 3 12 next night morning 's ? , .
今天 昨天 前天 大前天 上周 上上周 这周 本周 上个月 本月 今年 去年 前年 天前 周前 个月前 最近 三月 十二月
2026年 3月 10日 号 上周五 周五 星期天 礼拜 周 月 以来 之前 之后 到 从 自从 的 下周 明年 一 两 十
"""
_VOCABULARY = _WORDS.split()
_TEXT = st.lists(st.sampled_from(_VOCABULARY) | st.text(max_size=4), max_size=10).flatmap(
    lambda parts: st.sampled_from([" ".join(parts), "".join(parts)])
)


def _alnum(text: str) -> int:
    return sum(ch.isalnum() for ch in text)


@settings(max_examples=400, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(query=_TEXT | st.text(), as_of=st.dates())
def test_extract_time_window_never_raises_and_windows_are_ordered(query: str, as_of: datetime.date) -> None:
    window, remainder = extract_time_window(query, as_of)
    if window is None:
        assert remainder == query
        return
    assert window.since is not None or window.until is not None
    if window.since is not None and window.until is not None:
        assert window.since <= window.until
    assert window.phrase and window.phrase in query
    # Only the phrase (and at most a possessive 's / 的 glued to it) leaves, and the vague words
    # ("recently", "最近") beside a phrase that won over them; no other content is lost.
    content_left = _alnum(query) - _alnum(window.phrase)
    vague = re.compile(r"\b(?:recently|lately|of\s+late)\b|最近|近来|近期|近日|这几天|这些天", re.IGNORECASE)
    content_left -= sum(_alnum(m.group()) for m in vague.finditer(query.replace(window.phrase, " ", 1)))
    assert content_left - _alnum(remainder) in (0, 1)
    assert (remainder == "") == (_alnum(remainder) == 0)


# --- Traditional Chinese: read as Simplified, kept as written ----------------------------------


def test_traditional_time_words_are_read_and_the_rest_kept_as_written() -> None:
    from vault_tools.recall.timewords import mentioned_spans

    as_of = datetime.date(2026, 12, 1)
    window, rest = extract_time_window("上週做了什麼", as_of)
    assert window == DateWindow(datetime.date(2026, 11, 23), datetime.date(2026, 11, 29), "上週")
    assert rest == "做了什麼"  # not 做了什么: the words as the person wrote them
    assert extract_time_window("這個禮拜天氣很好", as_of)[1] != ""
    assert mentioned_spans("我上個月搬到了台北", as_of) == [
        (datetime.date(2026, 11, 1), datetime.date(2026, 11, 30))
    ]
    assert parse_when("上個月", as_of) == datetime.date(2026, 11, 1)
