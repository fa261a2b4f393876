"""A question about days still ahead: "what do I have tomorrow?", "明天有什么安排？", "what is
coming up next week?", "what's happening on Saturday?".

Recall reads the time words of a question backwards (:mod:`vault_tools.recall.timewords`): most
questions are about the past, and "on Friday" is the Friday before today. Some words only point
ahead ("tomorrow", "next week", "coming up", 明天, 下周, 接下来), and a weekday in a question that
tells nothing as done ("what is happening on Saturday?", "周六有什么安排？") is the coming one.
No note is written on those days yet: what answers is a line written before that names one of
them ("Hamburg demo confirmed for Thursday 10:00", "明天早上十点和客户开会"), which is what
:mod:`vault_tools.recall.upcoming` reads. :func:`ahead_window` finds such a phrase and returns the
days it spans and the question without it; recall then lists the upcoming items dated in those
days, soonest first, what is left of the question as their topic
(:func:`vault_tools.recall.upcoming.items_ahead`).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass

from dateutil.relativedelta import relativedelta

from vault_tools.recall.dates import _month, _week, _weekend

__all__ = ["UPCOMING_DAYS", "AheadWindow", "ahead_spans", "ahead_window", "without_plan_words"]

#: "What is coming up?", "接下来有什么安排": the days :command:`vault-tools upcoming` looks at.
UPCOMING_DAYS = 14


@dataclass(frozen=True)
class AheadWindow:
    """The days from ``since`` through ``until`` (both on or after today), and the words naming them."""

    since: dt.date
    until: dt.date
    phrase: str


_Days = Callable[[re.Match[str], dt.date], tuple[dt.date, dt.date]]


def _in(days: int) -> _Days:
    return lambda _m, today: (today + dt.timedelta(days=days), today + dt.timedelta(days=days))


def _week_of(today: dt.date, weeks: int) -> tuple[dt.date, dt.date]:
    monday, sunday = _week(today + dt.timedelta(weeks=weeks))
    return max(monday, today), sunday


def _weekend_of(today: dt.date, weeks: int) -> tuple[dt.date, dt.date]:
    saturday, sunday = _weekend(today + dt.timedelta(weeks=weeks))
    return max(saturday, today), sunday


def _next_month(_m: re.Match[str], today: dt.date) -> tuple[dt.date, dt.date]:
    return _month(today.replace(day=1) + relativedelta(months=1))


def _next_days(m: re.Match[str], today: dt.date) -> tuple[dt.date, dt.date]:
    count = (m.group("n") or m.group("zn") or "").strip()
    days = int(count) if count.isdigit() else {"couple of": 2}.get(count, 3)  # "few", 几
    return today, today + dt.timedelta(days=min(days, 366))


def _upcoming(_m: re.Match[str], today: dt.date) -> tuple[dt.date, dt.date]:
    return today, today + dt.timedelta(days=UPCOMING_DAYS)


# Words that only ever point ahead, whatever the tense of the question ("what did I plan for
# tomorrow?" asks about tomorrow). Longest first where one is inside another.
_ALWAYS_AHEAD: list[tuple[re.Pattern[str], _Days]] = [
    (re.compile(r"大后天"), _in(3)),
    (re.compile(r"\bthe\s+day\s+after\s+tomorrow\b|后天", re.I), _in(2)),
    (re.compile(r"\btomorrow\b|明天|明日|明早|明晚", re.I), _in(1)),
    (re.compile(r"\bnext\s+weekend\b|下个?周末", re.I), lambda _m, t: _weekend_of(t, 1)),
    (
        re.compile(r"\bnext\s+week\b|下个?(?:周|星期|礼拜)(?![一二三四五六日天末])", re.I),
        lambda _m, t: _week_of(t, 1),
    ),
    (re.compile(r"\bnext\s+month\b|下个?月", re.I), _next_month),
    (
        re.compile(
            r"\b(?:in|within|over|during)\s+the\s+(?:next|coming)\s+(?P<n>\d{1,3}|few|couple\s+of)\s+days\b"
            r"|未来(?P<zn>\d{1,3}|几)天",
            re.I,
        ),
        _next_days,
    ),
]
# Days ahead with no span of their own ("what is coming up?"): taken when nothing more exact is named
# ("what's coming up this weekend?" asks about the weekend).
_SOME_DAYS_AHEAD = re.compile(
    r"\b(?:coming\s+up|upcoming|on\s+my\s+calendar|on\s+the\s+agenda)\b|接下来|日程", re.I
)
# Words that point ahead only in a question that tells nothing as done ("what is on this weekend?"
# but "what did we do this weekend?").
_AHEAD_UNLESS_PAST: list[tuple[re.Pattern[str], _Days]] = [
    (re.compile(r"\btonight\b|\blater\s+today\b|今晚|今天晚上", re.I), _in(0)),
    (re.compile(r"\bthis\s+weekend\b|这个?周末|本周末", re.I), lambda _m, t: _weekend_of(t, 0)),
    (
        re.compile(
            r"\bthis\s+week\b|这个?(?:周|星期|礼拜)(?![一二三四五六日天末])|本周(?![一二三四五六日天末])",
            re.I,
        ),
        lambda _m, t: _week_of(t, 0),
    ),
]
_PAST = re.compile(
    r"\b(?:did|was|were|went|happened|had|ago|last|yesterday|earlier)\b|过|了(?!解)|昨天|上周|上个月|刚才|已经",
    re.I,
)


def ahead_window(question: str, today: dt.date) -> tuple[AheadWindow | None, str]:
    """The days ahead ``question`` asks about, and the question without the words that name them.

    ``(None, question)`` when it names none: then it is a question about the past, read by
    :func:`vault_tools.recall.timewords.extract_time_window`.
    """
    rules = list(_ALWAYS_AHEAD)
    past = bool(_PAST.search(question))
    if not past:
        rules += _AHEAD_UNLESS_PAST
    for pattern, days in rules:
        m = pattern.search(question)
        if m is not None:
            since, until = days(m, today)
            return AheadWindow(since, until, m[0].strip()), _without(question, m.start(), m.end())
    if not past:
        named = _named_day(question, today)
        if named is not None:
            return named
    some = _SOME_DAYS_AHEAD.search(question)
    if some is not None:
        since, until = _upcoming(some, today)
        return AheadWindow(since, until, some[0].strip()), _without(question, some.start(), some.end())
    return None, question


# In a note, not in a question: "what is planned next year?" is too wide for the days-ahead answer.
# Not 说明年度 ("explain the annual…"), 声明, 证明, 发明…
_NEXT_YEAR = re.compile(r"\bnext\s+year\b|(?<![证表声发透聪文英光简鲜分精])明年(?![度级份])", re.I)


def ahead_spans(text: str, written: dt.date) -> list[tuple[int, int, dt.date, dt.date]]:
    """Where ``text`` names days after the day it was written by words that only point ahead
    ("next week", "tomorrow", "下个月", "next year"), and the days each names: ``(start, end, since, until)``."""
    rules = [*_ALWAYS_AHEAD, (_NEXT_YEAR, _next_year)]
    return sorted(
        (m.start(), m.end(), *days(m, written)) for pattern, days in rules for m in pattern.finditer(text)
    )


def _next_year(_m: re.Match[str], written: dt.date) -> tuple[dt.date, dt.date]:
    return dt.date(written.year + 1, 1, 1), dt.date(written.year + 1, 12, 31)


def _named_day(question: str, today: dt.date) -> tuple[AheadWindow, str] | None:
    from vault_tools.recall.named_dates import dates_named

    # A day the question names as a note would ("on Saturday", "next Wednesday", "下周三", "3月14日").
    for mention in dates_named(question, today):
        if mention.day >= today:
            window = AheadWindow(mention.day, mention.day, mention.phrase)
            return window, _without(question, mention.start, mention.end)
    # A bare weekday in a question about plans ("周五有什么安排？", "anything planned Friday?").
    weekday = _BARE_WEEKDAY.search(question)
    generic = weekday is not None and _ANY_WEEK.search(question, 0, weekday.start()) is not None
    if (
        weekday is not None
        and not generic
        and _PLAN_WORDS.search(_without(question, weekday.start(), weekday.end()))
    ):
        name = (weekday["en"] or weekday["zh"]).lower()
        number = (
            _EN_WEEKDAYS.index(name[:3]) if weekday["en"] else "一二三四五六日".find(name.replace("天", "日"))
        )
        day = today + dt.timedelta(days=(number - today.weekday()) % 7)
        return AheadWindow(day, day, weekday[0].strip()), _without(question, weekday.start(), weekday.end())
    return None


_EN_WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
# A weekday of any week, not the coming one: "on a Friday afternoon", "every Monday", 每周五.
_ANY_WEEK = re.compile(r"(?i:\b(?:a|any|every|each)\s+$)|每个?$")
_BARE_WEEKDAY = re.compile(
    r"(?i:\b(?P<en>monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b)"
    r"|(?:周|星期|礼拜)(?P<zh>[一二三四五六日天])"
)


def _without(text: str, start: int, end: int) -> str:
    return re.sub(r"\s+", " ", f"{text[:start]} {text[end:]}").strip(" ,，")


# Once a question names days ahead, these ask what is planned and say nothing of a topic.
_PLAN_WORDS = re.compile(
    r"(?i:\b(?:have|has|got|happening|happens|happen|planned|plans?|scheduled|schedule|on|for|do|doing"
    r"|going|coming|up|anything|something|any|events?|appointments?|meetings?)\b)"
    r"|有什么|有啥|安排|计划|要做|做什么|干什么|事情|事|呢|吗"
)


def without_plan_words(text: str) -> str:
    """``text`` without the words that only ask what is planned ("what do I have", "有什么安排")."""
    return re.sub(r"\s+", " ", _PLAN_WORDS.sub(" ", text)).strip()
