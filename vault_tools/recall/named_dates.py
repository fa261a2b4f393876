"""The days a line of a note names, read forward from the day the note was written.

Used by :mod:`vault_tools.recall.upcoming` for reminders and dated items still ahead; the
question's own time words are read backwards by :mod:`vault_tools.recall.timewords`.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable
from dataclasses import dataclass

from vault_tools.chinese import fold_cjk
from vault_tools.recall.dates import (
    _CN_MONTH,
    _CN_MONTH_DAY,
    _CN_NUM,
    _CN_WEEKDAYS,
    _DAY,
    _EN_NUM,
    _MONTH_ABBREVIATIONS,
    _MONTH_NAMES,
    _MONTHS,
    _WEEKDAY_NAMES,
    _WEEKDAYS,
    _cn_int,
    _en_int,
    _is_cjk,
    _week,
)

__all__ = ["DateMention", "dates_named"]


# --- dates a note names, read forward from the day it was written -------------------------------
#
# Recall reads time words backwards ("on Friday" in a question is the Friday before today); a note
# that says "dentist on Friday" means the Friday after the day it was written. These rules read a
# line of a note for the days it names, resolved against the note's own date (:func:`dates_named`).
# A weekday alone names a day of every week ("Friday deploys are banned", "周五不发版"), not a date:
# it becomes one only with a word that points at one week ("next/this/coming Friday", "下周三",
# "本周五"), a preposition that makes it an appointment or a deadline ("on/by/before/until Friday",
# "周五前"), a clock time right after it ("Friday at 3pm", "周六早上八点"; "周五下午不要部署" and
# "Thursday evenings are quiet" name no clock, so they stay rules), or when the line is an open
# task ("- [ ] 周三在家等装网络的师傅"). A plural or "every" ("on Fridays", "每周五") is a habit.
#
# Aspect. A weekday in a clause told as done is the past, not a reminder (:func:`_told_as_done`):
# English by a past-tense verb ("we met", "reviewed the budget", "have sent", "already"); Chinese
# by a completion marker after the weekday: a verb's 了 or 过 ("周五下午三点开了会", "去过医院") or
# 已经/已/曾/刚/刚才 ("周五已经交了"). Two things keep it a reminder: a future or modal word
# anywhere in the clause ("will", "going to", "need to"; 要/就要/快要/将/打算/准备/记得/别/再), which
# moves the point the 了 is measured from into the future ("周五要开会了", "开了会再说"), and a
# weekday that is the goal of an act rather than its time ("booked the dentist for Friday at 9am",
# "moved to Friday", "约了周五下午三点看牙", "改到周五下午三点了", "下周三前把报告交了").


@dataclass(frozen=True)
class DateMention:
    """A day named in a line of a note: when, and the words that name it."""

    day: datetime.date
    phrase: str
    start: int
    end: int


_FWD_PAST = re.compile(
    r"\b(?:was|were|did|had|went|happened|got|met|saw|ate|spent|yesterday|ago|last|than|since|already"
    # a regular past after its subject ("we reviewed"), or opening a clause before its object, as
    # notes are written ("Reviewed the budget on Friday"); not "need"/"speed" (-eed), not "Wed"
    r"|(?:i|we|he|she|they|you|it)\s+(?:\w+ly\s+)?[a-z]{2,}(?<!e)ed"
    r"|(?:have|has|'ve)\s+(?:just\s+)?[a-z]{2,}(?:ed|en|t))\b"
    r"|(?:^|[:,\u2013\u2014]|\d:\d\d)\s*[a-z]{2,}(?<!e)ed\s+(?:the|a|an|my|our|his|her|their|its|it|him|them|me|us"
    r"|up|out|with|to|in|on|off|over|back|about)\b",
    re.IGNORECASE,
)
_FWD_FUTURE = re.compile(
    r"\b(?:will|shall|going\s+to|gonna|need\s+to|needs\s+to|have\s+to|has\s+to|must|should|plan\s+to"
    r"|remember\s+to|don'?t\s+forget|let'?s)\b|'ll\b",
    re.IGNORECASE,
)
_FWD_GOAL = re.compile(r"\b(?:for|to)\s+(?:(?:next|this|coming)\s+)?$", re.IGNORECASE)
_CN_CLAUSE_END = "，,。；;！!？?：:\n"
# A verb's 了 (not 了解, 为了, 除了, 不了), a verb's 过 (not 过敏, 过年, 不过, 经过, or a 过 that opens
# the predicate, "周六过生日"), or 已经/已/曾/刚/刚才 (not 刚好).
_CN_DONE = re.compile(
    r"(?<![为除不罢算未明])了(?![解不结却然])"
    r"|(?<=[\u4e00-\u9fff])(?<![不通经超难路越穿胜改反度跳放闪透点午])过(?![敏期于分程度夜年节生来去日河桥马滤渡半多早晚])"
    r"|已|曾|刚(?!好)"
)
# Future and modal words, and a deadline (前) right after the weekday and its time.
_CN_NOT_YET = re.compile(r"(?<![重主只])要|将(?!军)|打算|准备|计划|记得|别|再|该|必须|需")
_CN_DEADLINE = re.compile(
    r"(?:早上|上午|中午|下午|晚上|傍晚)?[0-9一二两三四五六七八九十点半:：]*(?:之前|以前|前|截止|为止)"
)
_CN_GOAL = re.compile(r"(?:到|至|[定约改挪放排]在)\s*(?:下下|下|这|本)?个?$")
_CLOCK_AFTER = re.compile(
    r"\s*,?\s*(?:(?:at|from)\s+)?(?:[0-9]{1,2}(?::[0-9]{2})?\s*(?:am|pm|h\b|o'?clock)|[0-9]{1,2}:[0-9]{2})",
    re.IGNORECASE,
)
_CN_CLOCK_AFTER = re.compile(
    r"\s*(?:早上|上午|中午|下午|晚上|傍晚|早|晚)?\s*(?:[0-9]{1,2}|[一二两三四五六七八九十]{1,3})\s*(?:点|:|：|[–\-~到至])"
    r"|\s*(?:之?前|截止)"
)
_OPEN_TASK = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+\[ \]")


def _nearest(month: int, day: int, year: int | None, written: datetime.date) -> datetime.date | None:
    """``month``/``day`` in ``year``, or without one the occurrence nearest the note's date
    ("March 2" written on March 10 is the one eight days before, not next year's)."""
    if year is not None:
        return datetime.date(year, month, day)
    found = []
    for candidate_year in (written.year - 1, written.year, written.year + 1):
        try:
            found.append(datetime.date(candidate_year, month, day))
        except ValueError:
            continue
    return min(found, key=lambda d: (abs((d - written).days), d)) if found else None


def _on_or_after(written: datetime.date, weekday: int, *, strictly: bool = False) -> datetime.date:
    ahead = (weekday - written.weekday()) % 7
    return written + (ahead or (7 if strictly else 0)) * _DAY


def _fwd_iso(m: re.Match[str], written: datetime.date, line: str) -> datetime.date | None:
    return datetime.date(int(m["y"]), int(m["m"]), int(m["d"]))


def _fwd_month_day(m: re.Match[str], written: datetime.date, line: str) -> datetime.date | None:
    name = m["mon"].lower().rstrip(".")
    month = _MONTHS.get(name) or _MONTH_ABBREVIATIONS[name]
    return _nearest(month, int(m["day"]), int(m["year"]) if m["year"] else None, written)


def _fwd_relative_day(m: re.Match[str], written: datetime.date, line: str) -> datetime.date | None:
    words = m[0].lower()
    if "after" in words or words in ("后天",):
        return written + 2 * _DAY
    if words == "大后天":
        return written + 3 * _DAY
    return written + _DAY


def _fwd_in_n(m: re.Match[str], written: datetime.date, line: str) -> datetime.date | None:
    number = _en_int(m["n"]) if m["n"] else _cn_int(m["cn"])
    unit = (m["u"] or m["cu"] or "day").lower()
    return written + number * (7 if unit.startswith(("week", "周", "星期", "礼拜")) else 1) * _DAY


def _fwd_weekday_word(m: re.Match[str], written: datetime.date, line: str) -> datetime.date | None:
    if _told_as_done(line, m.start(), m.end()):
        return None
    weekday = _WEEKDAYS.index(m["wd"].lower())
    mod = " ".join(m["mod"].lower().split())
    if mod == "next":
        return _week(written)[0] + 7 * _DAY + weekday * _DAY
    if mod == "this":
        return _week(written)[0] + weekday * _DAY
    return _on_or_after(written, weekday, strictly=True)  # coming, this coming


def _sentence_at(line: str, start: int, end: int) -> str:
    left = max(line.rfind(c, 0, start) for c in ".!?;。！？；")
    rights = [i for i in (line.find(c, end) for c in ".!?;。！？；") if i >= 0]
    return line[left + 1 : min(rights) if rights else len(line)]


def _told_as_done(line: str, start: int, end: int) -> bool:
    """Whether the weekday at ``line[start:end]`` is the time of something told as done (see the
    comment on aspect above), so it names a past day, not a reminder."""
    if _is_cjk(line[start]) or _is_cjk(line[end - 1]):
        left = max(line.rfind(c, 0, start) for c in _CN_CLAUSE_END)
        rights = [i for i in (line.find(c, end) for c in _CN_CLAUSE_END) if i >= 0]
        before, after = line[left + 1 : start], line[end : min(rights) if rights else len(line)]
        if _CN_GOAL.search(before) or _CN_DEADLINE.match(after):
            return False
        return bool(_CN_DONE.search(after)) and not _CN_NOT_YET.search(before + after)
    if _FWD_GOAL.search(line, 0, start):
        return False
    sentence = _sentence_at(line, start, end)
    return bool(_FWD_PAST.search(sentence)) and not _FWD_FUTURE.search(sentence)


def _fwd_weekday_plain(m: re.Match[str], written: datetime.date, line: str) -> datetime.date | None:
    """ "on/by/before Friday", "Friday at 3pm", or a bare weekday in an open task."""
    if re.search(r"\bevery\s+$", line[: m.start()], re.IGNORECASE):
        return None
    prep = (m["prep"] or "").lower()
    timed = bool(_CLOCK_AFTER.match(line, m.end()))
    if not prep and not timed and not _OPEN_TASK.match(line):
        return None
    if _told_as_done(line, m.start(), m.end()):
        return None  # "On Friday we had a great dinner": told afterwards, not planned
    return _on_or_after(written, _WEEKDAYS.index(m["wd"].lower()))


def _fwd_zh_date(m: re.Match[str], written: datetime.date, line: str) -> datetime.date | None:
    year: int | None = int(m["y"]) if m["y"] else None
    if m["ry"]:
        year = written.year + ("今年", "明年", "后年").index(m["ry"])
    return _nearest(_cn_int(m["m"]), _cn_int(m["d"]), year, written)


def _fwd_zh_week(m: re.Match[str], written: datetime.date, line: str) -> datetime.date | None:
    if _told_as_done(line, m.start(), m.end()):
        return None
    weeks = {"下下": 2, "下": 1}.get((m["rel"] or "").removesuffix("个"), 0)
    return _week(written)[0] + (7 * weeks + _CN_WEEKDAYS[m["d"]]) * _DAY


def _fwd_zh_weekday_plain(m: re.Match[str], written: datetime.date, line: str) -> datetime.date | None:
    if not _CN_CLOCK_AFTER.match(line, m.end()) and not _OPEN_TASK.match(line):
        return None
    if _told_as_done(line, m.start(), m.end()):
        return None
    return _on_or_after(written, _CN_WEEKDAYS[m["d"]])


_FwdResolver = Callable[[re.Match[str], datetime.date, str], "datetime.date | None"]
_CN_WEEKDAY_WORD = r"(?:周|星期|礼拜)(?P<d>[一二三四五六日天])"
# As _NOT_A_WORD_AFTER_WEEKDAY, but 下午 after a weekday is its afternoon ("周五下午三点").
_NOT_A_WORD_AFTER_WEEKDAY_FWD = "(?!直|起|样|般|些|切|定|点|次|个|致|共|向|边|旦|度|时|下(?!午))"
_FORWARD_RULES: tuple[tuple[re.Pattern[str], _FwdResolver], ...] = (
    (
        re.compile(r"(?<![0-9A-Za-z])(?P<y>[0-9]{4})([-/])(?P<m>[0-9]{1,2})\2(?P<d>[0-9]{1,2})(?![0-9])"),
        _fwd_iso,
    ),
    (
        re.compile(
            rf"\b(?P<mon>{_MONTH_NAMES})\.?\s+(?P<day>[0-9]{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(?P<year>[0-9]{{4}})\b)?",
            re.IGNORECASE,
        ),
        _fwd_month_day,
    ),
    (
        re.compile(
            rf"\b(?P<day>[0-9]{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<mon>{_MONTH_NAMES})\b\.?(?:,?\s+(?P<year>[0-9]{{4}})\b)?",
            re.IGNORECASE,
        ),
        _fwd_month_day,
    ),
    (re.compile(r"\b(?:the\s+)?day\s+after\s+tomorrow\b|\btomorrow\b", re.IGNORECASE), _fwd_relative_day),
    (re.compile(r"大后天|(?<![今明先落])后天|明天|明早|明晚|明日(?!香)"), _fwd_relative_day),
    (
        re.compile(
            rf"\bin\s+(?P<n>{_EN_NUM})\s+(?P<u>day|week)s?\b|(?P<cn>{_CN_NUM})\s*(?P<cu>天|周|个?星期|个?礼拜)(?:以|之)?后",
            re.IGNORECASE,
        ),
        _fwd_in_n,
    ),
    (
        re.compile(rf"\b(?P<mod>next|this\s+coming|this|coming)\s+(?P<wd>{_WEEKDAY_NAMES})\b", re.IGNORECASE),
        _fwd_weekday_word,
    ),
    (
        re.compile(
            rf"(?:\b(?P<prep>on|by|before|until|till|due)\s+)?\b(?P<wd>{_WEEKDAY_NAMES})\b", re.IGNORECASE
        ),
        _fwd_weekday_plain,
    ),
    (
        re.compile(
            r"(?:(?<![0-9])(?P<y>[0-9]{4})年|(?P<ry>今年|明年|后年))?"
            rf"(?<![0-9一二两三四五六七八九十])(?P<m>{_CN_MONTH})月(?P<d>{_CN_MONTH_DAY})[日号]"
        ),
        _fwd_zh_date,
    ),
    (re.compile(rf"(?P<rel>下下个?|下个?|这个?|本){_CN_WEEKDAY_WORD}"), _fwd_zh_week),
    (
        re.compile(
            rf"(?<![上下这本每个0-9一二两三四五六七八九十]){_CN_WEEKDAY_WORD}{_NOT_A_WORD_AFTER_WEEKDAY_FWD}"
        ),
        _fwd_zh_weekday_plain,
    ),
)


# Every phrase a forward rule reads has one of these: most lines have none and are skipped at once.
_MAYBE_A_DAY = re.compile(
    rf"[0-9]|\b(?:tomorrow|{_WEEKDAY_NAMES}|{_MONTH_NAMES})\b|\bin\s+\w+(?:\s+of)?\s+(?:day|week)s?\b"
    r"|明|后天|周|星期|礼拜|月|天",
    re.IGNORECASE,
)


def dates_named(line: str, written: datetime.date | None) -> list[DateMention]:
    """The days ``line`` names, read forward from ``written`` (the note's date), in line order.

    ``2026-03-14``, ``March 14``, ``14 March 2027``, ``3月14日`` are read as written (without a
    year, the occurrence nearest ``written``); "tomorrow", "in 3 days", "next Wednesday",
    "on Friday", "明天", "下周三", "3天后" are resolved against ``written`` and are skipped when it
    is None (an undated note). A weekday alone is not a date (see the comment above). Of phrases
    that overlap, the one that starts first (then the longer) wins; a phrase that names no real day is left out.
    """
    # 下週三 is 下周三, one character for one: each phrase is cut from the line as written
    written_as, line = line, fold_cjk(line)
    if not _MAYBE_A_DAY.search(line):
        return []
    found: list[DateMention] = []
    for pattern, resolve in _FORWARD_RULES:
        for m in pattern.finditer(line):
            if written is None and not (m.groupdict().get("y") or m.groupdict().get("year")):
                continue  # an undated note: only a date with its year means a day
            try:
                day = resolve(m, written or datetime.date.min, line)
            except (ValueError, OverflowError, KeyError):
                continue
            if day is not None:
                found.append(DateMention(day, written_as[m.start() : m.end()].strip(), m.start(), m.end()))
    found.sort(key=lambda d: (d.start, -(d.end - d.start)))
    kept: list[DateMention] = []
    for mention in found:
        if any(mention.start < k.end and k.start < mention.end for k in kept):
            continue
        kept.append(mention)
    return kept
