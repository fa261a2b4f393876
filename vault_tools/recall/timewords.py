"""Time words in recall queries and ``--since``/``--until`` values, resolved to date windows.

Design: every expression is resolved against an explicit ``as_of`` date (today in the vault's
timezone), never the clock, so results are deterministic. A query is scanned by a table of regex
rules (English and Chinese); each match, or *hit*, resolves to a closed date range or to nothing
(an unresolvable phrase such as ``2026-02-30`` or ``next week``, which also hides any shorter hit
inside it so the query stays intact). A hit can then be widened by the words around it:
``since``/``after``/``before``/``until``, ``between X and Y``, ``from X to Y``, ``自从X``,
``X以来``/``之后``/``之前``, ``X到Y``. When several phrases occur, the first one (leftmost, then
longest) wins, except that one naming a calendar date ("on 14 November 2025") wins over one counted
from today ("last Friday", which then reads as said on that date), and a vague one ("recently",
"最近") loses to any other: only the winner's
words (and a vague one's) are removed, so calling :func:`extract_time_window` again on the
remainder finds the next. Conventions: a week is Monday..Sunday; "last week"/"上周" is the previous
calendar week while "the last week"/"the past week" is the rolling 7 days up to ``as_of``;
"in the last N days"/"过去N天" is ``as_of`` minus N days through ``as_of`` (as ``--since Nd``) and
"recently"/"最近" is the same with N = :data:`RECENT_DAYS`; "N weeks/months/years ago" is the calendar
period containing that day; "last Friday"/"on Friday"/"周五" is the most recent Friday strictly
before ``as_of`` while "上周五" is Friday of the previous calendar week; a bare month is the most
recent such month not in the future (the current month included).
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from dateutil.relativedelta import relativedelta

from vault_tools.chinese import fold_cjk
from vault_tools.errors import UsageError
from vault_tools.recall.dates import (
    _CN_MONTH,
    _CN_MONTH_DAY,
    _CN_NUM,
    _CN_REL,
    _CN_WEEKDAYS,
    _DAY,
    _EN_NUM,
    _MONTH_ABBREVIATIONS,
    _MONTH_NAMES,
    _MONTHS,
    _NOT_A_WORD_AFTER_WEEKDAY,
    _PERIOD,
    _WEEKDAY_NAMES,
    _WEEKDAYS,
    _ago,
    _back,
    _calendar,
    _cn_int,
    _cn_unit,
    _day,
    _en_int,
    _is_cjk,
    _last_weekday,
    _month,
    _month_or_day,
    _rolling,
    _Span,
    _week_day,
    _year,
)

__all__ = [
    "RECENT_DAYS",
    "DateWindow",
    "extract_time_window",
    "mentioned_spans",
    "parse_when",
    "relative_spans",
]

#: "recently", "lately", "最近" and friends mean ``as_of - RECENT_DAYS`` days through ``as_of``.
RECENT_DAYS = 14


@dataclass(frozen=True)
class DateWindow:
    """An inclusive date range; ``None`` on a side means open-ended on that side."""

    since: datetime.date | None
    until: datetime.date | None
    phrase: str


# --- guards: when an English word is really a date --------------------------------------------

_OPEN_WORDS = ("since", "after", "before", "until", "till", "from", "between")


def _previous_word(m: re.Match[str]) -> str:
    found = re.search(r"(\w+)(?:\s+|-)$", m.string[: m.start()])
    return found.group(1).lower() if found else ""


#: Words after which a month or a year is a date: a range word, or a part of the period
#: ("the end of May", "early 2023", "mid-2022", "as of May", "by 2024").
_DATE_BEFORE = (*_OPEN_WORDS, "of", "early", "late", "mid", "by")


def _at_end(m: re.Match[str]) -> bool:
    return not any(ch.isalnum() for ch in m.string[m.end() :])


def _month_guard(m: re.Match[str]) -> bool:
    """'March' in 'march forward' is a verb; 'may' is a month only in 'in May', 'May 3', 'May 2026'."""
    name = m["mon"].lower()
    if m["day"] or m["year"]:
        return True
    if m["dfirst"]:  # "3 May" is a date, "we 2 may go" is not
        return name != "may" or m["mon"][0] == "M"
    if name in _MONTH_ABBREVIATIONS:
        return False
    prep = (m["prep"] or "").lower()
    if prep in ("in", "during") or _previous_word(m) in _DATE_BEFORE:
        return True
    return name != "may" and bool(m["mod"] or m["rely"] or _at_end(m))


def _year_guard(m: re.Match[str]) -> bool:
    return bool(m["prep"]) or _previous_word(m) in _DATE_BEFORE


# --- resolvers: one per rule, match -> span (None when the phrase names no real date) -----------

_Resolver = Callable[[re.Match[str], datetime.date], "_Span | None"]


def _en_day(m: re.Match[str], as_of: datetime.date) -> _Span:
    if m["today"]:
        return _day(as_of)
    return _day(as_of - (1 if m["yesterday"] else 2) * _DAY)


def _en_ago(m: re.Match[str], as_of: datetime.date) -> _Span:
    unit = m["u"].lower()
    return _PERIOD[unit](_ago(as_of, _en_int(m["n"]), unit))


def _en_last_n(m: re.Match[str], as_of: datetime.date) -> _Span:
    return _rolling(as_of, _en_int(m["n"]), m["u"].lower())


def _en_period(m: re.Match[str], as_of: datetime.date) -> _Span:
    if m["before_last"]:
        return _calendar("week", as_of, 2)
    unit, mod = m["u"].lower(), " ".join(m["mod"].lower().split())
    rolling = mod in ("past", "this past") or (mod == "last" and m["the"])
    if rolling and unit != "weekend":
        return _rolling(as_of, 1, unit)
    return _calendar(unit, as_of, 0 if mod in ("this", "current") else 1)


def _recent(m: re.Match[str], as_of: datetime.date) -> _Span:
    return as_of - RECENT_DAYS * _DAY, as_of


def _en_weekday(m: re.Match[str], as_of: datetime.date) -> _Span:
    weekday = _WEEKDAYS.index(m["wd"].lower())
    if (m["mod"] or "").lower() == "this":
        return _day(_week_day(as_of, weekday, 0))
    return _day(_last_weekday(as_of, weekday))


def _en_month(m: re.Match[str], as_of: datetime.date) -> _Span | None:
    mod = (m["mod"] or "").lower()
    if mod == "next":
        return None
    name = m["mon"].lower()
    month = _MONTHS.get(name) or _MONTH_ABBREVIATIONS[name]
    year: int | None = int(m["year"]) if m["year"] else None
    if year is None and (mod == "this" or (m["rely"] or "").lower() == "this"):
        year = as_of.year
    elif year is None and m["rely"]:
        year = as_of.year - 1
    day = int(m["day"] or m["dfirst"]) if m["day"] or m["dfirst"] else None
    return _month_or_day(as_of, month, day, year, strict=mod == "last")


def _iso_day(m: re.Match[str], as_of: datetime.date) -> _Span:
    return _day(datetime.date(int(m["y"]), int(m["m"]), int(m["d"])))


def _iso_month(m: re.Match[str], as_of: datetime.date) -> _Span:
    return _month(datetime.date(int(m["y"]), int(m["m"]), 1))


def _year_number(m: re.Match[str], as_of: datetime.date) -> _Span:
    return _year(datetime.date(int(m["y"]), 1, 1))


def _day_of_month(m: re.Match[str], as_of: datetime.date) -> _Span:
    """ "on the 15th", "15号": the latest such day on or before ``as_of`` (a month that has it)."""
    day = _cn_int(m["dom"])
    month = as_of.replace(day=1)
    for _ in range(3):  # the 31st may skip a month or two
        if day <= (month + relativedelta(months=1, days=-1)).day and month.replace(day=day) <= as_of:
            return _day(month.replace(day=day))
        month -= relativedelta(months=1)
    raise ValueError(f"no day {day} in the months before {as_of}")


def _zh_day(m: re.Match[str], as_of: datetime.date) -> _Span:
    back = 0 if m["today"] else 1 if m["yesterday"] else 3 if m["d3"] else 2
    return _day(as_of - back * _DAY)


def _zh_ago(m: re.Match[str], as_of: datetime.date) -> _Span:
    unit = _cn_unit(m["u"])
    return _PERIOD[unit](_ago(as_of, _cn_int(m["n"]), unit))


def _zh_last_n(m: re.Match[str], as_of: datetime.date) -> _Span:
    return _rolling(as_of, _cn_int(m["n"]), _cn_unit(m["u"]))


def _zh_period(m: re.Match[str], as_of: datetime.date) -> _Span:
    unit = "weekend" if m["u"] == "周末" else _cn_unit(m["u"])
    return _calendar(unit, as_of, _back(m["rel"]))


def _zh_year_word(m: re.Match[str], as_of: datetime.date) -> _Span:
    return _calendar("year", as_of, ("今年", "去年", "前年", "大前年").index(m[0]))


def _zh_weekday(m: re.Match[str], as_of: datetime.date) -> _Span:
    weekday = _CN_WEEKDAYS[m["d"]]
    if m["rel"] is None:
        return _day(_last_weekday(as_of, weekday))
    return _day(_week_day(as_of, weekday, _back(m["rel"])))


def _zh_date(m: re.Match[str], as_of: datetime.date) -> _Span:
    year: int | None = int(m["y"]) if m["y"] else None
    if m["ry"]:
        year = as_of.year - ("今年", "去年", "前年", "大前年").index(m["ry"])
    day = _cn_int(m["d"]) if m["d"] else None
    return _month_or_day(as_of, _cn_int(m["m"]), day, year, strict=False)


def _unresolvable(m: re.Match[str], as_of: datetime.date) -> None:
    return None


#: Meteorological seasons (northern hemisphere): the month each starts in. A winter is named by
#: the year it starts in ("winter 2022" is December 2022 to February 2023).
_SEASON_START = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}
_CN_SEASONS = {"春": "spring", "夏": "summer", "秋": "autumn", "冬": "winter"}


def _season(name: str, year: int) -> _Span:
    start = datetime.date(year, _SEASON_START[name], 1)
    return start, start + relativedelta(months=3, days=-1)


def _recent_season(name: str, as_of: datetime.date, back: int) -> _Span:
    """The season ``name`` that started most recently on or before ``as_of``, ``back`` years earlier."""
    year = as_of.year if datetime.date(as_of.year, _SEASON_START[name], 1) <= as_of else as_of.year - 1
    return _season(name, year - back)


def _en_season(m: re.Match[str], as_of: datetime.date) -> _Span:
    name = m["season"].lower()
    if m["year"]:
        return _season(name, int(m["year"]))
    mod = " ".join((m["mod"] or "").lower().split())
    span = _recent_season(name, as_of, 0)
    if mod in ("last", "past", "previous") and span[1] >= as_of:
        return _recent_season(name, as_of, 1)  # we are in it: "last summer" is the one before
    return span


def _season_guard(m: re.Match[str]) -> bool:
    """ "spring" and "fall" are words too: a season only with a year, a modifier or a preposition."""
    if m["year"] or m["mod"] or m["prep"]:
        return True
    return _previous_word(m) in ("the", *_DATE_BEFORE)


def _zh_season(m: re.Match[str], as_of: datetime.date) -> _Span:
    name = _CN_SEASONS[m["s"]]
    if m["y"]:
        return _season(name, int(m["y"]))
    if m["ry"]:
        return _season(name, as_of.year - ("今年", "去年", "前年").index(m["ry"]))
    return _recent_season(name, as_of, 0)


# --- the rule table -----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Rule:
    pattern: re.Pattern[str]
    resolve: _Resolver
    guard: Callable[[re.Match[str]], bool] | None = None


def _rule(pattern: str, resolve: _Resolver, guard: Callable[[re.Match[str]], bool] | None = None) -> _Rule:
    return _Rule(re.compile(pattern, re.IGNORECASE), resolve, guard)


_IN = r"(?:(?:in|during|over|within|for)\s+)?"
_FULL_MONTH_NAMES = "|".join(_MONTHS)
_RULES: tuple[_Rule, ...] = (
    _rule(
        r"\b(?:(?P<today>today|tonight|this\s+(?:morning|afternoon|evening)|earlier\s+today)"
        r"|(?P<yesterday>yesterday(?:\s+(?:morning|afternoon|evening|night))?|last\s+night)"
        r"|(?:the\s+)?day\s+before\s+yesterday)\b",
        _en_day,
    ),
    _rule(rf"\b(?P<n>{_EN_NUM})\s+(?P<u>day|week|month|year)s?\s+ago\b", _en_ago),
    _rule(
        rf"\b{_IN}(?:the\s+)?(?:last|past|previous)\s+(?P<n>{_EN_NUM})\s+(?P<u>day|week|month|year)s?\b",
        _en_last_n,
    ),
    _rule(
        rf"\b{_IN}(?:(?P<before_last>(?:the\s+)?week\s+before\s+last)"
        r"|(?P<the>the\s+)?(?P<mod>last|this\s+past|this|past|previous|current)"
        r"\s+(?P<u>weekend|week|month|year))\b",
        _en_period,
    ),
    _rule(r"\b(?:recently|lately|of\s+late)\b", _recent),
    _rule(
        rf"\b(?:(?P<mod>on|last|this\s+past|this|past|previous)\s+)?(?P<wd>{_WEEKDAY_NAMES})\b", _en_weekday
    ),
    _rule(
        rf"\b(?:(?P<prep>in|during|on|for)\s+)?(?:(?P<mod>last|this|next)\s+)?"
        r"(?:(?:the\s+)?(?P<dfirst>[0-9]{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?)?"
        rf"(?P<mon>{_MONTH_NAMES})\b\.?"
        r"(?:\s+(?P<day>[0-9]{1,2})(?:st|nd|rd|th)?\b)?(?:,?\s+(?P<year>[0-9]{4})\b)?"
        r"(?:\s+(?:of\s+)?(?P<rely>last|this)\s+year\b)?",
        _en_month,
        _month_guard,
    ),
    _rule(
        r"\b(?:(?P<prep>in|during|over)\s+)?(?:(?P<mod>last|this\s+past|this|past|previous)\s+)?(?:the\s+)?"
        r"(?P<season>spring|summer|autumn|fall|winter)\b(?:\s+(?:of\s+)?(?P<year>(?:19|20)[0-9]{2})\b)?",
        _en_season,
        _season_guard,
    ),
    _rule(
        r"(?<![0-9A-Za-z])(?:on\s+)?(?P<y>[0-9]{4})([-/])(?P<m>[0-9]{1,2})\2(?P<d>[0-9]{1,2})(?![0-9])"
        r"(?:[T ][0-9]{2}:[0-9]{2}(?::[0-9]{2})?\b)?",
        _iso_day,
    ),
    _rule(
        r"(?<![0-9A-Za-z-])(?:(?:in|during)\s+)?(?P<y>[0-9]{4})-(?P<m>[0-9]{1,2})(?![0-9]|[-/][0-9])",
        _iso_month,
    ),
    _rule(r"\b(?:(?P<prep>in|during)\s+)?(?P<y>(?:19|20)[0-9]{2})\b(?![-/][0-9])", _year_number, _year_guard),
    # A day of the month alone, where it ends the phrase: "on the 15th?", not "the 3rd time".
    _rule(
        rf"\b(?:on\s+)?the\s+(?P<dom>[12][0-9]|3[01]|0?[1-9])(?:st|nd|rd|th)\b"
        rf"(?=\s*(?:[?.!,;:)]|$|(?:and|to|through|until|till)\b))(?!\s+(?:of\s+)?(?:{_MONTH_NAMES})\b)",
        _day_of_month,
    ),
    _rule(
        rf"\b(?:next|coming|upcoming)\s+(?:weekend|week|month|year|{_WEEKDAY_NAMES}|{_FULL_MONTH_NAMES})\b",
        _unresolvable,
    ),
    # Chinese: no word boundaries, so neighbours are checked with lookarounds instead.
    _rule(
        r"(?P<today>今天(?:早上|上午|中午|下午|晚上)?|今早|今晨|今日|今晚)"
        r"|(?P<yesterday>昨天(?:早上|上午|中午|下午|晚上|夜里)?|昨晚|昨夜|昨日)"
        r"|(?P<d3>大前天)|(?<![以之提目眼])前天",
        _zh_day,
    ),
    _rule(
        rf"(?<![0-9一二两三四五六七八九十百千几])(?P<n>{_CN_NUM})\s*(?P<u>天|周|个?星期|个?礼拜|个月|年)(?:以|之)?前",
        _zh_ago,
    ),
    _rule(
        rf"(?:最近|过去的?|(?<![接靠将附临亲])近)(?P<n>{_CN_NUM})\s*(?P<u>天|日|周|个?星期|个?礼拜|个月|年)"
        r"(?:之内|以来|内|里|来)?",
        _zh_last_n,
    ),
    _rule(r"最近|近来|近期|近日|这几天|这些天", _recent),
    _rule(rf"(?P<rel>{_CN_REL})个?(?P<u>周末|周|星期|礼拜|月)", _zh_period),
    _rule(r"大前年|前年|去年|今年", _zh_year_word),
    _rule(
        rf"(?:(?P<rel>{_CN_REL})个?|(?<![0-9一二两三四五六七八九十几每个上下]))(?:周|星期|礼拜)"
        rf"(?P<d>[一二三四五六日天]){_NOT_A_WORD_AFTER_WEEKDAY}",
        _zh_weekday,
    ),
    _rule(
        rf"(?:(?<![0-9])(?P<y>[0-9]{{4}})\s*年\s*|(?P<ry>大前年|今年|去年|(?<!大)前年)"
        rf"|(?<![0-9年一二两三四五六七八九十百千几个第上下这本每]))(?P<m>{_CN_MONTH})\s*月"
        rf"(?:\s*(?P<d>{_CN_MONTH_DAY})\s*[日号]|份|(?!\s*[0-9]))",
        _zh_date,
    ),
    _rule(r"(?<![0-9])(?P<y>[0-9]{4})\s*年(?!\s*[0-9一二两三四五六七八九十]|代)", _year_number),
    _rule(
        rf"(?<![0-9月一二两三四五六七八九十几第])(?P<dom>{_CN_MONTH_DAY})\s*号(?![线楼门床机位房店厅馆口车码])",
        _day_of_month,
    ),
    _rule(
        r"(?:(?<![0-9])(?P<y>[0-9]{4})\s*年\s*的?|(?P<ry>今年|去年|前年)的?)?(?P<s>[春夏秋冬])(?:天|季)",
        _zh_season,
    ),
    _rule(
        rf"下下?个?(?:周末?|星期|礼拜)[一二三四五六日天]?|下下?个?月|明年(?:(?:{_CN_MONTH})月)?|后年",
        _unresolvable,
    ),
)


# --- scanning, widening, choosing ----------------------------------------------------------------


@dataclass(frozen=True)
class _Hit:
    start: int
    end: int
    since: datetime.date | None
    until: datetime.date | None
    resolved: bool  # False: looks like a date but names none (2026-02-30, next week)
    primary: bool  # False: only a date next to a range word ("and May")
    vague: bool = False  # "recently", "最近": no bounds of its own, so any dated phrase wins over it
    relative: bool = False  # "last Friday", "上周": moves with as_of, so a calendar date wins over it


def _resolve(rule: _Rule, m: re.Match[str], as_of: datetime.date) -> _Span | None:
    try:
        span = rule.resolve(m, as_of)
    except (ValueError, OverflowError, KeyError):
        return None
    return span if span is not None and span[0] <= span[1] else None


#: How far :func:`_scan` moves ``as_of`` to tell a phrase that names a date from one that counts
#: from today: a few years and a few days, so weekdays, months and years all move.
_ANOTHER_DAY = datetime.timedelta(days=3 * 365 + 17)


def _another_day(as_of: datetime.date) -> datetime.date:
    try:
        return as_of - _ANOTHER_DAY
    except OverflowError:
        return as_of + _ANOTHER_DAY


def _scan(text: str, as_of: datetime.date) -> list[_Hit]:
    hits = []
    for rule in _RULES:
        for m in rule.pattern.finditer(text):
            span = _resolve(rule, m, as_of)
            primary = rule.guard is None or rule.guard(m)
            since, until = span if span else (None, None)
            vague = rule.resolve is _recent
            relative = span is not None and _resolve(rule, m, _another_day(as_of)) != span
            hits.append(_Hit(m.start(), m.end(), since, until, span is not None, primary, vague, relative))
    return hits


_PREFIX = re.compile(
    r"(?:\b(?:(?:the|a)\s+(?P<span>day|week|month)\s+(?=before|after))?"
    r"(?P<en>since|after|before|until|till|from|between|as\s+of|by)\s+|(?P<zh>自从|从)\s*)$",
    re.I,
)
#: A part of a month, season or year: "the last weekend of May", "the second week of November",
#: "the first half of September", "towards the end of summer 2022", "early 2023", "mid-July".
_PART = re.compile(
    r"(?:\b(?:towards?|at|near|around|in|during)\s+)?\b(?:(?:the\s+|an?\s+)?"
    r"(?:(?P<ord>first|second|third|fourth|last|final)\s+(?P<unit>week|weekend)"
    r"|(?P<half>first|second|latter)\s+half|(?P<edge>beginning|start|end|middle))\s+of\s+(?:the\s+)?"
    r"|(?P<early>early|late|mid)(?:\s+|-))$",
    re.I,
)
#: The same after a Chinese month or year: 5月初, 2022年底, 三月下旬, 2023年上半年.
_ZH_PART = re.compile(r"\s*的?(?P<p>上半年|下半年|上半月|下半月|上旬|中旬|下旬|初|底|末)")
_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4}
_PART_WORDS = {
    "beginning": "start", "start": "start", "early": "start", "初": "start", "上旬": "start",
    "middle": "middle", "mid": "middle", "中旬": "middle",
    "end": "end", "late": "end", "底": "end", "末": "end", "下旬": "end",
    "上半年": "first half", "上半月": "first half", "下半年": "second half", "下半月": "second half",
}  # fmt: skip
#: "the week before X", "X的前一周" is the seven days before X; a month is taken as thirty days.
_SPAN_DAYS = {"day": 1, "week": 7, "month": 30, "天": 1, "周": 7, "星期": 7, "礼拜": 7, "月": 30}
_ZH_SPAN = re.compile(r"\s*的?(?P<dir>前|后)一个?(?P<u>天|周|星期|礼拜|月)")
_CONNECTOR = re.compile(r"\s*(?P<c>and|to|until|till|through|thru|到|至|~|-|–)\s*", re.I)
_ZH_SUFFIX = re.compile(r"\s*(?P<s>以来|起(?![草床飞码身点诉])|开始|之后|以后|之前|以前)")
_RANGE_CONNECTORS = {
    "between": ("and",),
    "from": ("to", "until", "till", "through", "thru", "-", "–"),
    "从": ("到", "至", "-", "~"),
    "": ("到", "至", "~"),
}


def _open(hit: _Hit, start: int, end: int, word: str) -> _Hit | None:
    """``since X``, ``X以来``, ``before X``, ... : one side of X, the other side open."""
    if hit.since is None or hit.until is None:
        return None
    try:
        if word in ("since", "自从", "以来", "起", "开始"):
            return replace(hit, start=start, end=end, until=None)
        if word in ("after", "之后", "以后"):
            return replace(hit, start=start, end=end, since=hit.until + _DAY, until=None)
        if word in ("before", "之前", "以前"):
            return replace(hit, start=start, end=end, since=None, until=hit.since - _DAY)
    except OverflowError:
        return None
    return replace(hit, start=start, end=end, since=None)  # until, till


def _next_to(hit: _Hit, start: int, end: int, word: str, days: int) -> _Hit | None:
    """``the week before X``, ``X的后一天``: that many days right before or after X."""
    if hit.since is None or hit.until is None:
        return None
    try:
        if word == "before":
            return replace(hit, start=start, end=end, since=hit.since - days * _DAY, until=hit.since - _DAY)
        return replace(hit, start=start, end=end, since=hit.until + _DAY, until=hit.until + days * _DAY)
    except OverflowError:
        return None


def _range(hit: _Hit, text: str, word: str, starts: dict[int, _Hit]) -> _Hit | None:
    """``between X and Y``, ``from X to Y``, ``X到Y``: the smallest window holding both."""
    connector = _CONNECTOR.match(text, hit.end)
    if not connector or connector["c"].lower() not in _RANGE_CONNECTORS.get(word, ()):
        return None
    other = starts.get(connector.end())
    if other is None:
        return None
    dates = [d for d in (hit.since, hit.until, other.since, other.until) if d is not None]
    relative = hit.relative and other.relative  # "between August 11 and August 15 2023" names a year
    return replace(hit, end=other.end, since=min(dates), until=max(dates), relative=relative)


def _part_span(since: datetime.date, until: datetime.date, part: str) -> _Span | None:
    """The ``part`` of a period of a month or more ("start", "last week", "2 weekend", ...)."""
    days = (until - since).days + 1
    if days < 28:
        return None
    third = days // 3
    if part == "start":
        return since, since + (third - 1) * _DAY
    if part == "middle":
        return since + third * _DAY, until - third * _DAY
    if part == "end":
        return until - (third - 1) * _DAY, until
    if part == "first half":
        return since, since + (days // 2 - 1) * _DAY
    if part == "second half":
        return since + (days // 2) * _DAY, until
    nth, _, unit = part.partition(" ")
    if unit == "week":
        if nth == "last":
            return until - 6 * _DAY, until
        first = since + 7 * (int(nth) - 1) * _DAY
        return (first, min(until, first + 6 * _DAY)) if first <= until else None
    if nth == "last":  # the last Saturday in the period, and its Sunday
        saturday = until - ((until.weekday() - 5) % 7) * _DAY
        return saturday, saturday + _DAY
    saturday = since + ((5 - since.weekday()) % 7 + 7 * (int(nth) - 1)) * _DAY
    return (saturday, saturday + _DAY) if saturday <= until else None


def _part_of(hit: _Hit, text: str) -> _Hit:
    """``hit`` narrowed to the part of it the words around it name (see :data:`_PART`)."""
    if hit.since is None or hit.until is None:
        return hit
    before = _PART.search(text, 0, hit.start)
    after = _ZH_PART.match(text, hit.end)
    if before:
        if before["unit"]:
            nth = before["ord"].lower()
            nth = "last" if nth in ("last", "final") else str(_ORDINALS[nth])
            part = f"{nth} {before['unit'].lower()}"
        elif before["half"]:
            part = "first half" if before["half"].lower() == "first" else "second half"
        else:
            part = _PART_WORDS[(before["edge"] or before["early"]).lower()]
        start, end = before.start(), hit.end
    elif after:
        part, start, end = _PART_WORDS[after["p"]], hit.start, after.end()
    else:
        return hit
    span = _part_span(hit.since, hit.until, part)
    return replace(hit, start=start, end=end, since=span[0], until=span[1]) if span else hit


def _widen(hit: _Hit, text: str, starts: dict[int, _Hit]) -> _Hit | None:
    hit = _part_of(hit, text)
    prefix = _PREFIX.search(text, 0, hit.start)
    word = (prefix["en"] or prefix["zh"]).lower() if prefix else ""
    if word.startswith("as") or word == "by":
        word = "until"  # "as of May 2023", "by July 10": the state up to then
    start = prefix.start() if prefix else hit.start
    joined = _range(hit, text, word, starts)
    if joined:
        return replace(joined, start=start if word else hit.start)
    span = _ZH_SPAN.match(text, hit.end)
    if span:
        return _next_to(
            hit, start, span.end(), "before" if span["dir"] == "前" else "after", _SPAN_DAYS[span["u"]]
        )
    suffix = _ZH_SUFFIX.match(text, hit.end)
    if suffix:
        return _open(hit, start, suffix.end(), suffix["s"])
    if prefix and prefix["span"]:
        return _next_to(hit, start, hit.end, word, _SPAN_DAYS[prefix["span"].lower()])
    if word in ("since", "after", "before", "until", "till", "自从"):
        return _open(hit, start, hit.end, word)
    return replace(hit, start=start) if word == "from" else hit


def _first(text: str, hits: list[_Hit]) -> _Hit | None:
    """The leftmost (then longest) resolvable phrase, widened by the words around it. A phrase
    that names a calendar date wins over one counted from today ("what did she finish last Friday,
    on 23 January 2022?" asks about January: the question was put as of then), and a vague one
    ("recently") is taken only when there is no other ("what did she bake recently, in May 2022?")."""
    bad = [h for h in hits if not h.resolved]
    good = [
        h
        for h in hits
        if h.resolved
        and not any(b.start <= h.start and h.end <= b.end and b.end - b.start > h.end - h.start for b in bad)
    ]
    starts: dict[int, _Hit] = {}
    for hit in sorted(good, key=lambda h: h.end - h.start):
        starts[hit.start] = hit
    widened = [_widen(h, text, starts) for h in good if h.primary]
    return min((h for h in widened if h), key=lambda h: (h.vague, h.relative, h.start, -h.end), default=None)


# --- removing the phrase ---------------------------------------------------------------------


def _tidy(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r" (?=[,.;:!?，。；：！？、])", "", text)
    text = re.sub(r"([,;:，；：、])(?:\s*[,;:，；：、])+", r"\1", text)
    text = re.sub(r"[,;:，；：、]+(?=[?.!？。！])", "", text)
    text = re.sub(r"^[\s,.;:!?，。；：！？、\-–—]+", "", text)
    text = re.sub(r"[\s,;:，；：、\-–—]+$", "", text)
    return text if any(ch.isalnum() for ch in text) else ""


def _remove(text: str, start: int, end: int) -> str:
    """``text`` without ``text[start:end]`` (and a trailing possessive 's or 的), tidied."""
    left = text[:start].rstrip()
    right = re.sub(r"^(?:['’]s\b|的)", "", text[end:]).lstrip()
    cjk_seam = bool(left and right) and (_is_cjk(left[-1]) or _is_cjk(right[0]))
    return _tidy(left + ("" if cjk_seam else " ") + right)


def extract_time_window(query: str, as_of: datetime.date) -> tuple[DateWindow | None, str]:
    """Find the time phrase in a recall query; return its window and the query without it.

    ``extract_time_window("what did we decide last week?", date(2026, 3, 11))`` gives the window
    2026-03-02..2026-03-08 (phrase ``"last week"``) and ``"what did we decide?"``. Chinese is
    matched inside text: ``"我上周决定了什么"`` gives last week and ``"我决定了什么"``. Only the first
    phrase is used (see the module docstring); with no resolvable phrase the result is
    ``(None, query)`` with ``query`` unchanged. The remainder is ``""`` only when nothing but the
    time phrase and punctuation was there.
    """
    folded = fold_cjk(query)  # 上週 is 上周; one character for one, so the offsets hold in ``query``
    hits = _scan(folded, as_of)
    hit = _first(folded, hits)
    if hit is None:
        return None, query
    window = DateWindow(hit.since, hit.until, query[hit.start : hit.end].strip())
    rest = query
    # A vague word beside the phrase that won says nothing more: it leaves the keywords too
    # (blanked, so the winner's offsets still hold).
    for h in hits:
        if h.vague and h.resolved and (h.end <= hit.start or h.start >= hit.end):
            rest = rest[: h.start] + " " * (h.end - h.start) + rest[h.end :]
    return window, _remove(rest, hit.start, hit.end)


# --- the times a note tells of -----------------------------------------------------------------

# Every phrase the rules above read has one of these; most lines of a note have none.
_MAYBE_TIME = re.compile(
    rf"[0-9]|\b(?:yesterday|today|tonight|ago|last|this|past|previous|week|weekend|month|year"
    rf"|{_WEEKDAY_NAMES}|{_MONTH_NAMES}|spring|summer|autumn|fall|winter)\b"
    r"|[今昨前去上本这周月年天季]",
    re.IGNORECASE,
)


def _told(text: str, written: datetime.date) -> list[tuple[_Hit, datetime.date, datetime.date]]:
    """The phrases of a note written on ``written`` that name real days, with those days; vague
    words ("recently", "最近") left out. Traditional Chinese is read as Simplified (offsets hold)."""
    text = fold_cjk(text)
    if not _MAYBE_TIME.search(text):
        return []
    return [
        (hit, hit.since, hit.until)
        for hit in _scan(text, written)
        if hit.resolved and hit.primary and not hit.vague and hit.since is not None and hit.until is not None
    ]


def mentioned_spans(text: str, written: datetime.date) -> list[tuple[datetime.date, datetime.date]]:
    """The periods a note written on ``written`` tells of, read as a question would be on that day.

    "I went to the UK last Friday" written on 2023-11-16 tells of 2023-11-10; "上个月搬了家" of the
    month before. Vague words ("recently", "最近") and phrases that name no real date are left out.
    A question's time is often the time of the event, not of the note (:mod:`vault_tools.recall.ranking`).
    """
    return [(since, until) for _hit, since, until in _told(text, written)]


def relative_spans(text: str, written: datetime.date) -> list[tuple[int, int, datetime.date, datetime.date]]:
    """Where ``text`` counts back from the day it was written ("yesterday", "last week", "三天前",
    "上个月"), and the days each phrase names: ``(start, end, since, until)``, in text order.

    Only phrases that move with ``written``; calendar dates and vague words are left out.
    """
    return sorted(
        (hit.start, hit.end, since, until) for hit, since, until in _told(text, written) if hit.relative
    )


# --- --since / --until ---------------------------------------------------------------------------

_ISO = re.compile(r"(?P<y>[0-9]{4})(?:-(?P<m>[0-9]{1,2})(?:-(?P<d>[0-9]{1,2}))?)?")
_RELATIVE = re.compile(r"(?P<n>[0-9]{1,4})\s*(?P<u>d|w|m|y|days?|weeks?|months?|years?)(?:\s+ago)?", re.I)
_RELATIVE_UNITS = {"d": "day", "w": "week", "m": "month", "y": "year"}
_ACCEPTED = (
    "2026-03-01, 2026-03, 2026; 7d, 2w, 3m, 1y (days/weeks/months/years ago); today, yesterday, "
    "this/last week, this/last month, this/last year, last 7 days, recently, in March, last Friday; "
    "今天, 昨天, 前天, 上周, 本周, 上个月, 本月, 今年, 去年, 三天前, 最近, 三月, 2026年3月10日, 上周五"
)


def _iso_bound(m: re.Match[str], end: bool) -> datetime.date:
    year = int(m["y"])
    if m["d"]:
        return datetime.date(year, int(m["m"]), int(m["d"]))
    first, last = _month(datetime.date(year, int(m["m"]), 1)) if m["m"] else _year(datetime.date(year, 1, 1))
    return last if end else first


def _phrase_window(value: str, as_of: datetime.date) -> DateWindow | None:
    """A window when ``value`` is nothing but a time phrase; a bare month name counts too."""
    for text in (value, f"in {value}"):
        window, rest = extract_time_window(text, as_of)
        if window and not rest:
            return window
    return None


def parse_when(value: str, as_of: datetime.date, *, end: bool = False) -> datetime.date:
    """Read a ``--since``/``--until`` value as a date, relative to ``as_of``.

    Accepts ISO ``2026-03-01``, ``2026-03`` and ``2026``; ``7d``/``2w``/``3m``/``1y`` (that long
    before ``as_of``); and any phrase :func:`extract_time_window` understands on its own ("last
    week", "上周", "三月", ...). A month, year or other period gives its first day, or its last day
    when ``end`` is true. Raises :class:`~vault_tools.errors.UsageError` listing the accepted forms.
    """
    text = fold_cjk(value.strip())
    iso = _ISO.fullmatch(text)
    relative = _RELATIVE.fullmatch(text)
    try:
        if iso:
            return _iso_bound(iso, end)
        if relative:
            return _ago(as_of, int(relative["n"]), _RELATIVE_UNITS[relative["u"][0].lower()])
    except (ValueError, OverflowError) as exc:
        raise UsageError(f"{value!r} is not a real date ({exc}); accepted forms: {_ACCEPTED}") from None
    window = _phrase_window(text, as_of) if text else None
    bound = (window.until if end else window.since) if window else None
    if bound is None:
        raise UsageError(f"cannot read {value!r} as a date; accepted forms: {_ACCEPTED}")
    return bound
