"""Time words in a MEMORY.md item, anchored to the day they were written.

A daily note says "New teammate next week: Lena" or "昨天去了医院"; in the note that is clear, because
the note is that day's. MEMORY.md is read months later, at every session start, and "next week"
there reads as the week after today. An item keeps the person's words and gets the days they named
beside them: "New teammate next week (2026-12-07–2026-12-13): Lena", "昨天（2026-11-30）去了医院".

Three readers find the phrases: :func:`vault_tools.recall.named_dates.dates_named` (days a note
names ahead: "tomorrow", "on Friday", "下周三"), :func:`vault_tools.recall.ahead.ahead_spans`
(weeks and months ahead: "next week", "下个月") and
:func:`vault_tools.recall.timewords.relative_spans` (counted back: "yesterday", "last month",
"三天前"). A calendar date needs nothing ("on 2026-12-09", "March 14"), and a weekday alone that
may be last week's or next week's ("we met on Friday") is left as written.
"""

from __future__ import annotations

import datetime as dt
import re

from vault_tools.chinese import fold_cjk
from vault_tools.recall.ahead import ahead_spans
from vault_tools.recall.named_dates import dates_named
from vault_tools.recall.timewords import relative_spans
from vault_tools.recall.upcoming import is_calendar

__all__ = ["ANCHOR", "anchor_time_words"]

_Mention = tuple[int, int, dt.date, dt.date]

# Words that make a phrase counted back from the note's day. A weekday or a month alone ("on
# Friday", "in March") is not one: a note may mean the coming one.
_COUNTED_BACK = re.compile(
    r"\b(?:yesterday|ago|last|past|previous|earlier)\b|昨|前天|[0-9一二两三四五六七八九十几]\s*(?:天|周|个?星期|个?月|年)前|上个?|去年|前年",
    re.IGNORECASE,
)
# Already anchored: a date in brackets right after the phrase.
_DATE_AFTER = re.compile(r"\s*[(（]\s*[0-9]{4}")
_ISO = r"[0-9]{4}(?:-[0-9]{2}(?:-[0-9]{2})?)?"
#: An anchor as :func:`anchor_time_words` writes it: not content when items are compared.
ANCHOR = re.compile(rf"\s?[(（]{_ISO}(?:–{_ISO})?[)）]")
_CJK = re.compile(r"[\u3400-\u9fff]")
# "feels like just yesterday", "仿佛昨天": a figure of speech names no day.
_FIGURATIVE = re.compile(
    r"(?:\blike|\bas\s+if\s+it\s+was)\s+(?:just\s+|only\s+)?$|(?:仿佛|好像|就像)(?:就是|就|是)?$",
    re.IGNORECASE,
)


def anchor_time_words(text: str, written: dt.date | None) -> str:
    """``text`` with the days its relative time words name, read from ``written``, beside them."""
    if written is None:
        return text
    for start, end, since, until in reversed(_mentions(text, written)):
        if _DATE_AFTER.match(text, end) or _FIGURATIVE.search(text, 0, start):
            continue
        text = text[:end] + _bracketed(_days(since, until), text[start:end]) + text[end:]
    return text


def _mentions(text: str, written: dt.date) -> list[_Mention]:
    text = fold_cjk(text)  # 上個月 is 上个月; one character for one, so the offsets hold
    ahead: list[_Mention] = [
        (m.start, m.end, m.day, m.day) for m in dates_named(text, written) if not is_calendar(m.phrase)
    ]
    ahead += ahead_spans(text, written)
    back = [m for m in relative_spans(text, written) if _COUNTED_BACK.search(text, m[0], m[1])]
    kept: list[_Mention] = []
    # The earliest phrase wins, then the longest ("the day after tomorrow" over "tomorrow").
    for mention in sorted([*ahead, *back], key=lambda m: (m[0], m[0] - m[1])):
        if all(mention[1] <= k[0] or k[1] <= mention[0] for k in kept):
            kept.append(mention)
    return kept


def _days(since: dt.date, until: dt.date) -> str:
    if since == until:
        return since.isoformat()
    if since.day == 1 and (until + dt.timedelta(days=1)).day == 1 and since.month == until.month:
        return since.strftime("%Y-%m")
    if (since.month, since.day, until.month, until.day) == (1, 1, 12, 31) and since.year == until.year:
        return str(since.year)
    if since.day == 1 and (until + dt.timedelta(days=1)).day == 1:
        return f"{since:%Y-%m}–{until:%Y-%m}"
    return f"{since.isoformat()}–{until.isoformat()}"


def _bracketed(days: str, phrase: str) -> str:
    return f"（{days}）" if _CJK.search(phrase) else f" ({days})"
