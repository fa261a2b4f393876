"""Calendar arithmetic and the words of dates, shared by the two readers of time words.

:mod:`vault_tools.recall.timewords` reads a question's time words backwards from ``as_of``;
:mod:`vault_tools.recall.named_dates` reads the days a note names forwards from the day it was
written. Both count weeks, months, seasons and "N units ago" here, and read numbers, weekdays,
months and units written in English or Chinese with the tables below. Names keep their leading
underscore: they are the time-word readers' internals, not an API.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable

from dateutil.relativedelta import relativedelta

__all__: list[str] = []

_Span = tuple[datetime.date, datetime.date]
_DAY = datetime.timedelta(days=1)


# --- calendar arithmetic ------------------------------------------------------------------------


def _day(d: datetime.date) -> _Span:
    return d, d


def _week(d: datetime.date) -> _Span:
    start = d - d.weekday() * _DAY
    return start, start + 6 * _DAY


def _weekend(d: datetime.date) -> _Span:
    sunday = _week(d)[1]
    return sunday - _DAY, sunday


def _month(d: datetime.date) -> _Span:
    start = d.replace(day=1)
    return start, start + relativedelta(months=1, days=-1)


def _year(d: datetime.date) -> _Span:
    return datetime.date(d.year, 1, 1), datetime.date(d.year, 12, 31)


_PERIOD: dict[str, Callable[[datetime.date], _Span]] = {
    "day": _day,
    "week": _week,
    "weekend": _weekend,
    "month": _month,
    "year": _year,
}


def _ago(as_of: datetime.date, n: int, unit: str) -> datetime.date:
    if unit == "day":
        return as_of - relativedelta(days=n)
    if unit in ("week", "weekend"):
        return as_of - relativedelta(weeks=n)
    if unit == "month":
        return as_of - relativedelta(months=n)
    return as_of - relativedelta(years=n)


def _calendar(unit: str, as_of: datetime.date, back: int) -> _Span:
    """The calendar ``unit`` ``back`` periods before the one containing ``as_of``."""
    return _PERIOD[unit](_ago(as_of, back, unit))


def _rolling(as_of: datetime.date, n: int, unit: str) -> _Span:
    return _ago(as_of, n, unit), as_of


def _recent_year(as_of: datetime.date, month: int, *, strict: bool = False) -> int:
    """The year of the most recent ``month`` not after ``as_of`` (strictly before its month if ``strict``)."""
    if month < as_of.month or (month == as_of.month and not strict):
        return as_of.year
    return as_of.year - 1


def _recent_date(as_of: datetime.date, month: int, day: int) -> datetime.date:
    """The most recent month/day on or before ``as_of`` (a 29 February may be years back)."""
    for year in range(as_of.year, as_of.year - 9, -1):
        try:
            candidate = datetime.date(year, month, day)
        except ValueError:
            continue
        if candidate <= as_of:
            return candidate
    raise ValueError(f"no {month}/{day} before {as_of}")


def _month_or_day(as_of: datetime.date, month: int, day: int | None, year: int | None, strict: bool) -> _Span:
    if year is None and day is not None and not strict:
        return _day(_recent_date(as_of, month, day))
    if year is None:
        year = _recent_year(as_of, month, strict=strict)
    if day is None:
        return _month(datetime.date(year, month, 1))
    return _day(datetime.date(year, month, day))


def _last_weekday(as_of: datetime.date, weekday: int) -> datetime.date:
    """The most recent ``weekday`` strictly before ``as_of``."""
    return as_of - ((as_of.weekday() - weekday - 1) % 7 + 1) * _DAY


def _week_day(as_of: datetime.date, weekday: int, back: int) -> datetime.date:
    """``weekday`` of the calendar week ``back`` weeks before the one containing ``as_of``."""
    return _calendar("week", as_of, back)[0] + weekday * _DAY


# --- numbers and names ----------------------------------------------------------------------------

_EN_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
}  # fmt: skip
_EN_NUM = r"(?:a\s+)?couple(?:\s+of)?|[0-9]{1,3}|" + "|".join(sorted(_EN_NUMBERS, key=len, reverse=True))
_CN_DIGITS = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_CN_NUM = r"[0-9]{1,3}|[一二两三四五六七八九十]{1,3}"
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_WEEKDAY_NAMES = "|".join(_WEEKDAYS)
_CN_WEEKDAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_MONTHS = {
    name: number
    for number, name in enumerate(
        ("january", "february", "march", "april", "may", "june", "july",
         "august", "september", "october", "november", "december"),
        start=1,
    )
}  # fmt: skip
_MONTH_ABBREVIATIONS = {name[:3]: number for name, number in _MONTHS.items() if name != "may"} | {"sept": 9}
_MONTH_NAMES = "|".join(sorted([*_MONTHS, *_MONTH_ABBREVIATIONS], key=len, reverse=True))
_CN_MONTH = r"1[0-2]|0?[1-9]|十[一二]?|[一二三四五六七八九]"
_CN_MONTH_DAY = r"[12][0-9]|3[01]|0?[1-9]|[一二三]?十[一二三四五六七八九]?|[一二三四五六七八九]"
_EN_UNITS = {"day": "day", "week": "week", "weekend": "weekend", "month": "month", "year": "year"}
_CN_UNITS = {
    "天": "day",
    "日": "day",
    "周": "week",
    "星期": "week",
    "礼拜": "week",
    "月": "month",
    "年": "year",
}
# Characters that make 上/本 part of another word: 晚上, 马上, 网上, 成本, 日本, ...
_NOT_BEFORE_SHANG = "(?<![晚早马以往路身手网线楼会加之向跟赶遇看爱北])"
_NOT_BEFORE_BEN = "(?<![日基成根资课书剧样版脚文账副原])"
_CN_REL = f"(?:{_NOT_BEFORE_SHANG}上上|{_NOT_BEFORE_SHANG}上|这|{_NOT_BEFORE_BEN}本)"
# 一 after 周 often starts another word: 周一直 is "all week", not "Monday".
_NOT_A_WORD_AFTER_WEEKDAY = "(?!直|起|样|般|些|切|定|点|下|次|个|致|共|向|边|旦|度|时)"


def _en_int(text: str) -> int:
    word = " ".join(text.lower().split())
    if word.isascii() and word.isdigit():
        return int(word)
    return 2 if "couple" in word else _EN_NUMBERS[word]


def _cn_digit(text: str) -> int:
    if text not in _CN_DIGITS:
        raise ValueError(f"not a Chinese digit: {text!r}")
    return _CN_DIGITS[text]


def _cn_int(text: str) -> int:
    """1..99 written with ASCII digits or Chinese numerals (三, 十二, 二十一, 两)."""
    if text.isascii() and text.isdigit():
        return int(text)
    tens, ten, ones = text.partition("十")
    if not ten:
        return _cn_digit(text)
    return (_cn_digit(tens) if tens else 1) * 10 + (_cn_digit(ones) if ones else 0)


def _cn_unit(text: str) -> str:
    return _CN_UNITS[text.removeprefix("个")]


def _back(rel: str | None) -> int:
    return {"上上": 2, "上": 1}.get(rel or "", 0)


def _is_cjk(ch: str) -> bool:
    return "\u2e80" <= ch <= "\u9fff" or "\uf900" <= ch <= "\ufaff" or "\uff00" <= ch <= "\uffef"
