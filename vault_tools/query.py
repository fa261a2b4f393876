"""Reading a recall query: its tags, its time phrase, its keywords, or why it is not worth searching.

``tag:T`` and ``#T`` words become tag filters; the first time phrase ("last week", "in March",
"上周", "2026年3月") becomes a *word window* and is cut out (:mod:`vault_tools.timewords`); the rest
is cut into terms with the stop and question words of both languages dropped
(:func:`vault_tools.analysis.query_terms`). An empty query, or one that is only a greeting or
emoji, is *noise*: nothing is searched, and the reason goes to ``warnings``. A query of nothing
but filters ("yesterday", "#atlas") *browses*: every entry that passes the filters.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vault_tools.timewords import DateWindow

__all__ = ["ParsedQuery", "has_topic", "noise_reason", "parse_query", "vector_text"]


# Words that carry no topic in a question about the past. With nothing else left the query
# browses its filters ("what happened yesterday?").
GENERIC_WORDS = frozenset(
    str.split(
        """happen happened happens going go went doing do did done up new news anything everything
    something stuff last recently lately time times day days"""
    )
)
GENERIC_TERMS_ZH = ("发生", "做了", "干了", "干嘛", "情况", "事情", "事", "做", "干")

GREETINGS = frozenset(
    str.split(
        """hi hello hey hiya yo sup hallo morning evening afternoon night good gm gn thanks thank
    thx ty ok okay k cool nice great bye goodbye cheers please pls lol haha hmm ah oh test ping"""
    )
)
GREETINGS_ZH = (
    "你好", "您好", "早上好", "早安", "晚上好", "晚安", "午安", "下午好", "中午好", "谢谢", "多谢",
    "好的", "嗯", "哈哈", "哈喽", "嗨", "在吗", "再见", "拜拜", "好", "哦", "啊", "呀", "吧", "吗",
)  # fmt: skip
_GREETING_ZH_RE = re.compile("|".join(sorted(map(re.escape, GREETINGS_ZH), key=len, reverse=True)))

_TAG_IN_QUERY = re.compile(
    r"(?:(?<=^)|(?<=[\s(（]))(?:tag:|#)([^\s#,，。;；:：!?！？()（）\[\]]+)", re.IGNORECASE
)
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


@dataclass(frozen=True)
class ParsedQuery:
    """A query taken apart: keywords, terms, tags, the word window, or why it is noise."""

    text: str  # what was asked
    keywords: str  # the text without tags and the time phrase
    terms: tuple[str, ...]  # analyzed terms of ``keywords`` (empty: browse the filters)
    words: tuple[str, ...]  # lower-cased words of ``keywords``, for matching tag names
    tags: tuple[str, ...]
    window: DateWindow | None
    noise: str | None = None  # why nothing is searched


def parse_query(query: str, as_of: dt.date, *, filtered: bool = False) -> ParsedQuery:
    """Take a recall query apart (see the module docstring, step 1).

    ``filtered``: the caller passed filters (``--tag``, ``--since``...), so an empty query
    browses them instead of being noise.
    """
    from vault_tools.analysis import query_terms
    from vault_tools.timewords import extract_time_window

    text = query.strip()
    found = [m for m in _TAG_IN_QUERY.finditer(text) if not m.group(1).isdigit()]  # "#1" is no tag
    tags = tuple(dict.fromkeys(m.group(1).rstrip("/").lower() for m in found))
    rest = text
    for m in reversed(found):
        rest = rest[: m.start()] + " " + rest[m.end() :]
    rest = rest.strip()
    noise = noise_reason(rest) if not tags and not (filtered and not rest) else None
    if noise is not None and not _has_time_word(rest, as_of):
        return ParsedQuery(text, "", (), (), tags, None, noise)
    window, keywords = extract_time_window(rest, as_of) if rest else (None, "")
    terms: tuple[str, ...] = ()
    if keywords and has_topic(keywords):
        terms = tuple(t for t in query_terms(keywords) if t)
    words = tuple(w.lower() for w in _WORD.findall(keywords))
    return ParsedQuery(text, keywords, terms, words, tags, window)


def _has_time_word(text: str, as_of: dt.date) -> bool:
    from vault_tools.timewords import extract_time_window

    return bool(text) and extract_time_window(text, as_of)[0] is not None


def noise_reason(text: str) -> str | None:
    """Why ``text`` is not worth searching (empty, only punctuation/emoji, only a greeting), or None."""
    if not text.strip():
        return "the query is empty; ask about something (words, #tags or a time such as 'last week')"
    words = _WORD.findall(text)
    if not words:
        return "the query has no words (only punctuation or emoji); nothing to search for"
    leftover = [_GREETING_ZH_RE.sub("", w) for w in words if w.lower() not in GREETINGS]
    if not any(leftover):
        return "the query is only a greeting; nothing to search for"
    return None


_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def vector_text(keywords: str, speakers: Iterable[str]) -> str:
    """``keywords`` as the question's vector is asked for: without the names of who says entries.

    The keyword side matches such a name through the speaker field. In a sentence vector it
    makes every turn of that person look related and hides what is asked about ("what video
    games does Nate play?" is then mostly "Nate"). LoCoMo dev half, all-MiniLM-L6-v2: semantic
    R@10 0.583 -> 0.675, hybrid at a 0.7 keyword share 0.818 -> 0.821 (README). The names are kept when nothing of
    substance would be left ("who is Nate?"). Fewer names leave the machine too.
    """
    text = keywords
    for name in speakers:
        if _HAN.search(name):  # no spaces between Chinese words: the name wherever it stands,
            if len(name) < 2:  # but not one character ("**我**:"), which is in many other words
                continue
            pattern = re.escape(name)
        else:
            pattern = rf"(?<![^\W_]){re.escape(name)}(?:['\u2019]s)?(?![^\W_])"
        text = re.sub(pattern, " ", text, flags=re.IGNORECASE)
    text = " ".join(text.split())
    return text if text != keywords and has_topic(text) else keywords


def has_topic(keywords: str) -> bool:
    """Whether ``keywords`` holds a word beyond stop, question and generic words."""
    from vault_tools.analysis import CJK_QUERY_STOP_WORDS, ENGLISH_QUERY_STOP_WORDS

    cjk_stops = sorted((*CJK_QUERY_STOP_WORDS, *GENERIC_TERMS_ZH), key=len, reverse=True)
    for word in _WORD.findall(keywords):
        lowered = word.lower()
        if word.isascii():
            if lowered not in ENGLISH_QUERY_STOP_WORDS and lowered not in GENERIC_WORDS:
                return True
            continue
        rest = word
        for stop in cjk_stops:
            rest = rest.replace(stop, "")
        if rest.strip():
            return True
    return False
