"""Whom a note is about: the person a third-person note opens with, in English and Chinese.

Design
------
An agent's short notes say what happened to someone in the third person: "Melanie ran a charity
race", "小林搬到了杭州。", "妈妈下周三过生日". A summary groups such notes into one bullet per
person (:mod:`vault_tools.summaries.text`), so it needs the name a note opens with as its subject.

* **English**: a capitalised first word followed by a verb ("Melanie ran", "Jonas is") or a
  possessive ("Jonas's team"), that is not a stop word, a pleasantry, or a verb itself
  ("Decided to …").
* **Chinese** has no capitals and no spaces, so a name is read by its shape and what follows it:
  a family word (妈妈、老公、女儿、老板 …), a familiar form (小林、老王、阿杰: 小/老/阿 and one
  character), or a common family name and one or two characters (张伟、李小龙), followed by a
  word that starts a predicate (说、在、搬、开始、下周 …) or by a possessive 的. Words that share
  a name's shape (小时、老是、马上、周末) are not names. The rule lives in
  :func:`vault_tools.curation.salience.chinese_subject`: curation reads such a sentence as a
  disclosure, as it reads "Melanie ran …".

:func:`people_of` keeps only names that open two entries or more of the period, so a sentence that
merely starts like a name ("高铁晚点了") does not make a person of it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from vault_tools.curation import insights, salience
from vault_tools.notes import model as notes

#: "Melanie ran …", "Jonas's team is …": a capitalised first word followed by a verb or a possessive.
NAME_FIRST = re.compile(
    r"^([A-Z][a-z]+)(?:(?:'s|’s)\s|\s+(is|was|are|were|has|had|will|would|can|could|and|[a-z]+)\b)"
)
AUXILIARIES = frozenset("is was are were has had will would can could and".split())  # noqa: SIM905
NOT_A_NAME = frozenset(salience.STOPWORDS | salience.PLEASANTRY | salience.ARTICLES)


def subject_name(text: str) -> str | None:
    """The name ``text`` opens with as its subject ("Melanie ran a race" -> Melanie, "小林搬到了杭州"
    -> 小林), or None."""
    flat = insights.plain(text)
    return english_subject(flat) or salience.chinese_subject(flat)


def english_subject(text: str) -> str | None:
    match = NAME_FIRST.match(text)
    if match is None:
        return None
    name, verb = match[1], match[2]
    low = name.lower()
    if low in NOT_A_NAME or low.endswith(("ed", "ing", "ly")):
        return None
    if verb is None or verb in AUXILIARIES:
        return name
    return name if verb.endswith(("s", "ed")) or verb in salience.PAST_IRREGULAR else None


def people_of(entries: Sequence[notes.Entry]) -> frozenset[str]:
    """Names that are the subject of two entries or more (notes about people: "Melanie ran …",
    "小林搬到了杭州")."""
    counts: dict[str, int] = {}
    for entry in entries:
        if not entry.speaker:
            name = subject_name(insights.spoken_text(entry))
            if name:
                counts[name] = counts.get(name, 0) + 1
    return frozenset(name for name, count in counts.items() if count >= 2)


def names_in(text: str, people: frozenset[str]) -> list[str]:
    """The ``people`` that ``text`` names anywhere (a Chinese name has no word boundary around it)."""
    return sorted(
        name
        for name in people
        if (name in text if insights.is_chinese(name) else re.search(rf"\b{re.escape(name)}\b", text))
    )
