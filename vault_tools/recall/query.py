"""Reading a recall query: its tags, its time phrase, its keywords, or why it is not worth searching.

``tag:T`` and ``#T`` words become tag filters; the first time phrase ("last week", "in March",
"上周", "2026年3月") becomes a *word window* and is cut out (:mod:`vault_tools.recall.timewords`); the rest
is cut into terms with the stop and question words of both languages dropped
(:func:`vault_tools.index.analysis.query_terms`). An empty query, or one that is only a greeting or
emoji, is *noise*: nothing is searched, and the reason goes to ``warnings``. A query of nothing
but filters ("yesterday", "#atlas") *browses*: every entry that passes the filters.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vault_tools.recall.ahead import AheadWindow
    from vault_tools.recall.timewords import DateWindow

__all__ = [
    "LONG_WORDS",
    "ParsedQuery",
    "dialogue_turns",
    "has_topic",
    "noise_reason",
    "parse_query",
    "vector_text",
]


# Words that carry no topic in a question about the past. With nothing else left the query
# browses its filters ("what happened yesterday?").
GENERIC_WORDS = frozenset(
    str.split(
        """happen happened happens going go went doing do did done up new news anything everything
    something stuff last recently lately time times day days
    write wrote written writing note notes noted log logged jot jotted record recorded entry entries"""
    )
)
# ... and in Chinese: 记 (记了什么), 写 (写了什么), 记录, 笔记 ask what was written down.
GENERIC_TERMS_ZH = (
    "发生", "做了", "干了", "干嘛", "情况", "事情", "事", "做", "干", "记录", "笔记", "记下", "写下", "记", "写",
)  # fmt: skip

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
    # The dialogue so far as the query (several turns, or a long text): its time words are weak
    # evidence, and the terms of its last turn (``focus``) count more than the rest (chatter).
    long: bool = False
    focus: frozenset[str] = frozenset()
    focus_text: str = ""  # the last turn's keywords (what the question's vector is asked for)
    # Words of the time phrase that notes write too ("summer" in "I took it last summer"): searched
    # as weak terms, since a note written later tells of the time in words, not by its date.
    time_terms: frozenset[str] = frozenset()
    present: bool = False  # asks about now ("what is my coffee order?"): the latest statement wins
    open_tasks: bool = False  # asks what is still to do ("what is on my to-do list?"): open tasks only
    ahead: AheadWindow | None = None  # days still ahead it asks about ("what do I have tomorrow?")
    across_days: bool = False  # gathers across days ("how often…", "几次"): spread the hits over days
    several: bool = False  # asks for several things ("what books has…", "哪些"): spread them gently
    vague: bool = False  # the window is only "recently" / "最近": it ranks, never filters
    reaction: bool = False  # asks how someone took what was said ("what did Ben think about…")
    asks_when: bool = False  # asks when something happened ("when did…", "什么时候"): the answer names a time
    asks_how_long: bool = False  # asks how long ("how long has…", "多久"): the answer names a duration
    asks_how_many: bool = (
        False  # asks how many or how much ("how many…", "几只", "多少"): the answer gives a number
    )


def parse_query(
    query: str, as_of: dt.date, *, filtered: bool = False, look_ahead: bool = True
) -> ParsedQuery:
    """Take a recall query apart (see the module docstring, step 1).

    ``filtered``: the caller passed filters (``--tag``, ``--since``...), so an empty query
    browses them instead of being noise. ``look_ahead``: read words that name days still ahead
    ("tomorrow", 下周) as such (:mod:`vault_tools.recall.ahead`); off, they are keywords.
    """
    from vault_tools.index.analysis import fold_cjk, query_terms
    from vault_tools.recall.ahead import ahead_window, without_plan_words
    from vault_tools.recall.tasks import open_task_question
    from vault_tools.recall.timewords import extract_time_window

    text = query.strip()
    folded = fold_cjk(text)  # 什麼, 上週: the stop and time words are read in Simplified
    found = [m for m in _TAG_IN_QUERY.finditer(text) if not m.group(1).isdigit()]  # "#1" is no tag
    tags = tuple(dict.fromkeys(m.group(1).rstrip("/").lower() for m in found))
    rest = folded  # tags as written, the rest folded (the same length: the offsets hold)
    for m in reversed(found):
        rest = rest[: m.start()] + " " + rest[m.end() :]
    rest = rest.strip()
    open_tasks, rest = open_task_question(rest)
    filtered = filtered or open_tasks  # "what is on my to-do list?" browses the open tasks
    noise = noise_reason(rest) if not tags and not open_tasks and not (filtered and not rest) else None
    if noise is not None and not _has_time_word(rest, as_of):
        return ParsedQuery(text, "", (), (), tags, None, noise)
    turns = dialogue_turns(rest)
    if len(turns) > 1 or len(_WORD.findall(rest)) + len(_HAN.findall(rest)) // 2 >= LONG_WORDS:
        return _parse_long(text, turns or [rest], tags, as_of)
    ahead, before = ahead_window(rest, as_of) if look_ahead else (None, rest)
    if ahead is not None:
        at = folded.find(ahead.phrase)  # shown as the question wrote it: 下週, not 下周 (offsets hold)
        if at >= 0:
            ahead = replace(ahead, phrase=text[at : at + len(ahead.phrase)])
        return _parse_ahead(text, without_plan_words(before), tags, ahead, open_tasks)
    window, keywords = extract_time_window(rest, as_of) if rest else (None, "")
    terms: tuple[str, ...] = ()
    if keywords and has_topic(keywords):
        terms = tuple(t for t in query_terms(keywords) if t)
    elif window is None and not tags and not filtered:
        # Nothing to search and nothing to browse: every entry would do ("the", "的", "what is it?").
        return ParsedQuery(text, "", (), (), tags, None, STOP_WORDS_ONLY)
    words = tuple(w.lower() for w in _WORD.findall(keywords))
    time_terms = [t for t in named_periods(window.phrase) if t not in terms] if window and terms else []
    terms = (*terms, *time_terms)
    return ParsedQuery(
        text,
        keywords,
        terms,
        words,
        tags,
        window,
        time_terms=frozenset(time_terms),
        present=window is None and asks_about_now(rest),
        across_days=gathers_across_days(rest),
        several=asks_for_several(rest),
        open_tasks=open_tasks,
        vague=window is not None and is_vague(window.phrase),
        reaction=asks_for_a_reaction(rest),
        asks_when=asks_when(rest),
        asks_how_long=_HOW_LONG.search(rest) is not None,
        asks_how_many=_HOW_MANY.search(rest) is not None,
    )


_HOW_MANY = re.compile(r"\bhow\s+(?:many|much)\b|多少|几个|几只|几次|几本|几位|几家|几辆|几岁", re.IGNORECASE)
_HOW_LONG = re.compile(r"\bhow\s+long\b(?!\s+ago)|多久|多长时间|多少年|几年了|多少个月", re.IGNORECASE)


_WHEN = re.compile(
    r"^\W*when\b|\bwhen\s+(?:did|does|do|was|were|is|are|will|would|has|have|had)\b|\bhow\s+long\s+ago\b"
    r"|什么时候|啥时候|哪天|哪一天|何时|几号|几月几日|哪一年|哪年",
    re.IGNORECASE,
)


def asks_when(text: str) -> bool:
    """Whether a question asks when something happened ("When did Ana sell the piano?",
    "小林什么时候卖的钢琴？"): the entry that answers names a time ("yesterday", "上周")."""
    from vault_tools.index.analysis import fold_cjk

    return _WHEN.search(fold_cjk(text)) is not None


# What someone thought, said or felt about something, or how they reacted: in a conversation, the
# reply to the line that tells it.
_REACTION = re.compile(
    r"\b(?:think|thinks|thought|say|says|said|feel|feels|felt|react|reacts|reacted|respond|responds"
    r"|responded|reply|replies|replied)\b|觉得|认为|看法|怎么看|怎么说|说了什么|说过什么|什么反应|反应如何|回应|回复",
    re.IGNORECASE,
)


def asks_for_a_reaction(text: str) -> bool:
    """Whether a question asks how someone took what was said ("What did Ben think about the
    piano?", "How did she react?", "阿杰觉得这件事怎么样？"): its answer is a reply."""
    from vault_tools.index.analysis import fold_cjk

    return _REACTION.search(fold_cjk(text)) is not None


# "Recently" has no bounds of its own: what a person calls recent may be from a week ago or from
# two months ago (they ask "what did she paint recently?" of a painting told of in July).
_VAGUE = re.compile(r"recently|lately|of\s+late|最近|近来|近期|近日", re.IGNORECASE)


def is_vague(phrase: str) -> bool:
    """Whether a time phrase is only a vague "recently" ("lately", "最近", "近来"), not a period."""
    return _VAGUE.fullmatch(phrase.strip()) is not None


_NAMED_PERIOD = re.compile(
    r"\b(?:january|february|march|april|may|june|july|august|september|october|november|december"
    r"|spring|summer|autumn|fall|winter|christmas|easter|halloween|thanksgiving|birthday)\b"
    r"|春节|国庆|中秋|圣诞|元旦|[春夏秋冬][天季]",
    re.IGNORECASE,
)


def named_periods(phrase: str) -> tuple[str, ...]:
    """The analyzed terms of the names of periods in a time phrase ("summer 2021" -> ``summer``)."""
    from vault_tools.index.analysis import tokenize

    return tuple(dict.fromkeys(t for m in _NAMED_PERIOD.finditer(phrase) for t in tokenize(m.group(0))))


# A question about how things are now: a present-tense verb or a word for now, and no past.
_NOW = re.compile(
    r"\b(?:is|are|am|do|does|still|currently|current|now|nowadays|anymore|these\s+days)\b"
    r"|现在|目前|如今|还在|仍然|依然|还是|当前",
    re.IGNORECASE,
)
_PAST = re.compile(
    r"\b(?:did|was|were|had|went|used\s+to|before|ago|first|last|ever|once)\b|\b[a-z]{3,}ed\b|过|了|当时|以前|之前|曾经",
    re.IGNORECASE,
)
# A question that gathers across days: how often, how many times, which month most, each time.
_ACROSS_DAYS = re.compile(
    r"\bhow\s+(?:often|many\s+times|many\s+days|frequently)\b|\bevery\s+time\b|\beach\s+time\b"
    r"|\bwhich\s+(?:month|week|day|weekday|year)s?\b.*\bmost\b|\bin\s+which\s+months?\b"
    r"|每次|几次|多少次|几回|哪个月|哪几个月|哪一个月|哪天.*最|频率|经常",
    re.IGNORECASE,
)


def asks_about_now(text: str) -> bool:
    """Whether a question asks how things are now, not how they were ("what is my coffee order?")."""
    return bool(_NOW.search(text)) and not _PAST.search(text)


# "How often does he work out?" asks about a habit, told once, not about the days it happened.
_HABIT = re.compile(
    r"\bhow\s+(?:often|frequently|many\s+times)\s+(?:does|do|is|are|can|will|would)\b|平时|一般|通常",
    re.IGNORECASE,
)


# A question that asks for several things: "What books has Ana read?", "Which cities did they
# visit?", "What kinds of music…", "小林去过哪些城市？" (a plural noun asked about, then its verb).
_SEVERAL = re.compile(
    r"^\W*(?:what|which)\s+(?:(?:kinds?|types?|sorts?)\s+of\s+)?(?:[a-z-]+\s+)?[a-z-]+s"
    r"\s+(?:has|have|had|does|do|did|are|were)\b|^\W*(?:what|which)\s+(?:kinds|types|sorts)\s+of\b|哪些",
    re.IGNORECASE,
)


def asks_for_several(text: str) -> bool:
    """Whether a question asks for several things ("What books has Ana read?", "去过哪些城市？"):
    they were told on different days more often than on one. (哪些 is the same in Traditional.)"""
    return _SEVERAL.search(text) is not None


def gathers_across_days(text: str) -> bool:
    """Whether a question gathers what many days say ("how often did I swim?", "九月跑了几次步？"),
    not a habit told once ("how often does he work out?", "平时多久跑一次？")."""
    return bool(_ACROSS_DAYS.search(text)) and not _HABIT.search(text)


STOP_WORDS_ONLY = (
    "the query has only stop or question words, nothing to search for; "
    "name a topic, a #tag or a time (such as 'yesterday')"
)

#: A query of this many words (two CJK characters count as one) is the dialogue so far, not a question.
LONG_WORDS = 40
# "User:", "Assistant：", "**Maria**:", "- 用户：" at the start of a turn: who speaks, not what about.
_TURN_LABEL = re.compile(r"^\s*(?:[-*>]\s+)?(?:\*\*)?[^\s:：*]{1,24}(?:\*\*)?\s*[:：]\s*")


def dialogue_turns(text: str) -> list[str]:
    """The non-empty lines of ``text`` without a leading speaker label ("User: ...")."""
    turns = []
    for line in text.splitlines():
        line = _TURN_LABEL.sub("", line, count=1).strip()
        if line:
            turns.append(line)
    return turns


def _parse_ahead(
    text: str, keywords: str, tags: tuple[str, ...], ahead: AheadWindow, open_tasks: bool
) -> ParsedQuery:
    """A question about days still ahead: what is left of it is the topic of the items dated then."""
    from vault_tools.index.analysis import query_terms

    terms = tuple(t for t in query_terms(keywords) if t) if keywords and has_topic(keywords) else ()
    words = tuple(w.lower() for w in _WORD.findall(keywords))
    return ParsedQuery(text, keywords, terms, words, tags, None, ahead=ahead, open_tasks=open_tasks)


def _without_time_words(text: str, as_of: dt.date) -> str:
    from vault_tools.recall.timewords import extract_time_window

    for _ in range(8):
        window, rest = extract_time_window(text, as_of)
        if window is None:
            break
        text = rest
    return text


def _without_pleasantries(text: str) -> str:
    """``text`` without greetings and thanks ("hey, good morning!", "你好"): chatter of a dialogue."""
    kept = [w for w in text.split() if w.strip(",.!?;:'\"").lower() not in GREETINGS]
    return _GREETING_ZH_RE.sub(" ", " ".join(kept))


def _parse_long(text: str, turns: list[str], tags: tuple[str, ...], as_of: dt.date) -> ParsedQuery:
    """A long query: the last turn is the question, the turns before it are context.

    A time phrase of the last turn is the window (weak: it ranks, never filters); time words of
    the other turns ("today" in a greeting) are dropped. The terms of the last turn are the
    ``focus``; when it has no topic of its own ("and what about her?"), every turn is.
    """
    from vault_tools.index.analysis import query_terms
    from vault_tools.recall.timewords import extract_time_window

    last = turns[-1]
    window, focus_text = extract_time_window(last, as_of)
    earlier = _without_pleasantries(_without_time_words("\n".join(turns[:-1]), as_of))
    focus = [t for t in query_terms(focus_text) if t] if has_topic(focus_text) else []
    keywords = "\n".join(part for part in (focus_text, earlier) if part)
    terms = tuple(t for t in query_terms(keywords) if t) if has_topic(keywords) else ()
    words = tuple(w.lower() for w in _WORD.findall(keywords))
    return ParsedQuery(
        text,
        keywords,
        terms,
        words,
        tags,
        window,
        long=True,
        focus=frozenset(focus or terms),
        focus_text=focus_text if focus else keywords,
    )


def _has_time_word(text: str, as_of: dt.date) -> bool:
    from vault_tools.recall.timewords import extract_time_window

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
    from vault_tools.index.analysis import CJK_QUERY_STOP_WORDS, ENGLISH_QUERY_STOP_WORDS

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
