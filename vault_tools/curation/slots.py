"""Facts with one value at a time: where someone lives, where they work.

MEMORY.md is loaded at every session start, so an item that went stale misleads every session:
"Lives in Friedrichshain" after "Moved into the new flat in Prenzlauer Berg today!". The two share
no words, so similarity never pairs them. :func:`slot_of` reads which such fact a text states
(``home``: lives in, moved to/into, a new flat in, 住在, 搬到; ``work``: works at/for, a new job
at, joined <Name>, 在…工作/上班, 入职, 跳槽到) and whose it is: the speaker of a turn
(``**Ana**: …``), a name that opens the text ("Ana moved to Porto"), else the vault's owner
(None). A new insight that states a slot supersedes the item that states the same slot of the
same person (:meth:`vault_tools.heartbeat.memory_view.MemoryView.superseded_by`).
"""

from __future__ import annotations

import re

from vault_tools.notes.model import SPEAKER

__all__ = ["slot_of"]

_SLOTS = {
    "home": re.compile(
        r"(?i:\b(?:lives?|living)\s+in\b|\bmov(?:ed|ing)\s+(?:in)?to\b|\bnew\s+(?:flat|apartment|house|home)\s+in\b)"
        r"|住在|搬到|搬进|搬去了?"
    ),
    "work": re.compile(
        r"(?i:\bworks?\s+(?:at|for)\b|\bworking\s+(?:at|for)\b|\bnew\s+job\s+(?:at|with)\b)"
        r"|\b[Jj]oin(?:ed|s)\s+[A-Z][\w&.-]+(?!\s+(?:for|on|in)\b)"
        r"|(?<![现正实存所自])在\S{1,12}(?:工作|上班)|入职|跳槽到"
    ),
}


#: What may stand before the slot's words when the text states it of its subject ("I just moved
#: to", "We finally live in", "Ana moved to", "我们搬到"): anything else is someone else's ("my
#: friend lives in Paris", "爸爸妈妈住在上海").
_SUBJECT_WORDS = frozenset(
    [
        "i",
        "we",
        "i've",
        "we've",
        "i'm",
        "we're",
        "i'd",
        "just",
        "finally",
        "now",
        "recently",
        "already",
        "also",
        "have",
        "has",
        "had",
        "and",
        "so",
        "then",
        "still",
        "is",
        "was",
        "are",
        "were",
        "will",
        "be",
        "been",
        "'s",
        "'ll",
        # and when: "Last week I moved to", "In May we moved into"
        *[
            "last",
            "this",
            "next",
            "week",
            "weekend",
            "month",
            "year",
            "yesterday",
            "today",
            "tonight",
            "in",
            "on",
            "ago",
        ],
    ]
)
_SUBJECT_ZH = re.compile(
    r"我们|我|现在|已经|终于|刚刚|刚|也|还|目前|一直|上上?周|上个?月|下个?月|下周|去年|今年|明年|昨天|今天|前天|最近"
)


def slot_of(text: str) -> tuple[str, str | None] | None:
    """(the slot ``text`` states, whose: a name, or None for the vault's owner), or None."""
    turn = SPEAKER.match(text.strip())
    speaker = (turn[1] or turn[2]).strip() if turn else None
    body = text.strip()[turn.end() :].lstrip() if turn else text.strip()
    for slot, pattern in _SLOTS.items():
        m = pattern.search(body)
        if m is None:
            continue
        subject = _subject(body[: m.start()])
        if subject is False:
            continue
        return slot, (subject if isinstance(subject, str) else None) or speaker
    return None


def _subject(before: str) -> str | bool | None:
    """The name the slot's words are said of ("Ana" in "Ana moved to Porto"), None when they are
    said of the speaker or the owner ("I just moved to", "Lives in", "我们搬到"), False when they
    are said of someone else ("my friend lives in Paris", "爸爸妈妈住在上海")."""
    clause = re.split(r"[.!?;。！？；,，:：]", before)[-1]
    if before.strip() and not clause.strip():
        return False  # "Lena, backend, joins from Zalando": the subject is further back
    words = re.findall(r"[A-Za-z']+", clause)
    name = None
    if words and words[0][:1].isupper() and words[0].lower() not in _SUBJECT_WORDS:
        name, words = words[0], words[1:]
    if any(w.lower() not in _SUBJECT_WORDS for w in words):
        return False
    if _SUBJECT_ZH.sub("", "".join(re.findall(r"[\u4e00-\u9fff]", clause))):
        return False
    return name
