"""Relative time words in a MEMORY.md item get the days they named, read from the day the line was written."""

from __future__ import annotations

import datetime as dt

import pytest

from vault_tools.curation import similarity
from vault_tools.curation.anchors import anchor_time_words

WRITTEN = dt.date(2026, 12, 1)  # a Tuesday


@pytest.mark.parametrize(
    ("line", "anchored"),
    [
        (
            "New teammate next week: Lena joins from Zalando.",
            "New teammate next week (2026-12-07–2026-12-13): Lena joins from Zalando.",
        ),
        ("Dentist tomorrow at 9, bring the X-rays.", "Dentist tomorrow (2026-12-02) at 9, bring the X-rays."),
        ("Ben adopted a greyhound last Saturday.", "Ben adopted a greyhound last Saturday (2026-11-28)."),
        ("We moved into the flat two days ago.", "We moved into the flat two days ago (2026-11-29)."),
        (
            "Next month we fly to Lisbon, next year to Japan.",
            "Next month (2027-01) we fly to Lisbon, next year (2027) to Japan.",
        ),
        ("I quit my job last year.", "I quit my job last year (2025)."),
        ("下周三和房东交接钥匙。", "下周三（2026-12-09）和房东交接钥匙。"),
        (
            "我上个月辞职了，下周一开始去新公司。",
            "我上个月（2026-11）辞职了，下周一（2026-12-07）开始去新公司。",
        ),
        ("昨天去医院复查，医生说恢复得很好。", "昨天（2026-11-30）去医院复查，医生说恢复得很好。"),
        ("三天前丢了钱包。", "三天前（2026-11-28）丢了钱包。"),
        ("去年夏天去了日本。", "去年夏天（2025-06–2025-08）去了日本。"),
        ("护照明年三月到期。", "护照明年（2027）三月到期。"),
        (
            "我上個月辭職了，下週一開始去新公司。",
            "我上個月（2026-11）辭職了，下週一（2026-12-07）開始去新公司。",
        ),
    ],
)
def test_relative_time_words_get_their_days(line: str, anchored: str) -> None:
    assert anchor_time_words(line, WRITTEN) == anchored


@pytest.mark.parametrize(
    "line",
    [
        "The Hamburg demo is on 2026-12-09.",  # a calendar date needs nothing
        "Mom's birthday is March 14.",
        "妈妈的生日是3月14日。",
        "We met on Friday and talked for hours.",  # last Friday or next? left as written
        "Friday deploys are banned.",
        "周五不发版。",
        "请说明年度预算的来源。",  # 说明 + 年度, not 明年
        "I went there last Friday (2026-11-27).",  # already anchored
        "Prefers dark roast coffee.",
        "Time flies, feels like just yesterday I put this dress on!",  # a figure of speech
        "毕业典礼仿佛就是昨天的事。",
    ],
)
def test_what_names_no_relative_day_is_left_as_written(line: str) -> None:
    assert anchor_time_words(line, WRITTEN) == line


def test_an_undated_line_is_left_as_written() -> None:
    assert anchor_time_words("Dentist tomorrow at 9.", None) == "Dentist tomorrow at 9."


def test_anchors_are_not_content_when_items_are_compared() -> None:
    line = "Ben adopted a greyhound last Saturday."
    assert similarity.tokens(anchor_time_words(line, WRITTEN)) == similarity.tokens(line)
    zh = "我上个月辞职了。"
    assert similarity.tokens(anchor_time_words(zh, WRITTEN)) == similarity.tokens(zh)
