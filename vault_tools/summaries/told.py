"""What a person's entries tell a summary: their statements, each cut to its news and weighed.

Design
------
A week's summary gives each person one bullet that joins what happened to them as short clauses
(:mod:`vault_tools.summaries.text`). The words it may spend are few (a quarter of the notes or
so), so which clauses it keeps decides what it says. Each usable statement of a person's entry
(not a question, a pleasantry or words to the listener, see
:mod:`vault_tools.curation.salience`) becomes one :class:`Told`: the clauses that carry its news
(:func:`vault_tools.curation.clauses.said`: no greeting, thanks, vocative, reaction, hedge, nor
the "I" or name the bullet already says), and its **worth**, what a reader learns from it:

* **specific content**: its content words, each weighed by how rare it is among the period's
  entries (:class:`Rarity`, an inverse document frequency): "applied to three adoption agencies"
  says more than "it's been tough but worth it";
* worth more when it is **news**: an event (someone did, started, changed or plans something),
  so news with content ("started a pottery class") before resolve without it ("gonna make it");
* names, dates, and news of the last days ("yesterday", "last week").

The summary's budget then takes the clauses of most worth per word (see
:func:`vault_tools.summaries.text.within_budget`), so a bullet holds the week's events, decisions
and plans rather than its chatter.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

from vault_tools.chinese import fold_cjk
from vault_tools.curation import clauses, insights, salience
from vault_tools.curation.similarity import CJK_CHAR
from vault_tools.notes import model as notes

#: How much more a clause's specific content is worth when it tells an event (someone did,
#: started, changed or plans something): news with content, not "gonna make it".
EVENT_WORTH = 0.5
#: How much each rare content word weighs against the news signals.
SPECIFIC = 0.5


@dataclass(frozen=True)
class Rarity:
    """In how many of the period's entries each content word occurs: a word said in few of them
    is specific (a name, a place, what happened), one said in most is the period's small talk."""

    counts: dict[str, int]
    entries: int

    @classmethod
    def of(cls, entries: Iterable[notes.Entry]) -> Rarity:
        counts: dict[str, int] = {}
        total = 0
        for entry in entries:
            total += 1
            for word in salience.content_words(insights.spoken_text(entry)):
                counts[word] = counts.get(word, 0) + 1
        return cls(counts, total)

    def weight(self, words: Iterable[str]) -> float:
        """The summed inverse document frequency of ``words`` (a CJK bigram counts half: a
        two-character word is about two overlapping bigrams)."""
        return sum(
            math.log((self.entries + 1) / (self.counts.get(w, 0) + 1)) * (0.5 if CJK_CHAR.match(w) else 1.0)
            for w in words
        )


@dataclass(frozen=True)
class Told:
    """One statement of an entry as a summary says it."""

    text: str
    worth: float  # what a reader learns from it (see the module docstring)
    news: int  # 2 news of the last days, 1 an event, 0 a statement


def worth(text: str, event: bool, rarity: Rarity) -> float:
    """What a reader learns from ``text`` (see the module docstring)."""
    read = salience.read(text)
    return (
        SPECIFIC * rarity.weight(read.content) * (1 + EVENT_WORTH * event)
        + read.names
        + (read.dated or bool(AHEAD.search(fold_cjk(text))))
        + clauses.recent(text)
    )


#: A day ahead named in words ("next month", "tomorrow", 下个月、明天): a plan's date.
AHEAD = re.compile(
    r"(?i:(?<![a-z])(?:tomorrow|tonight|next (?:week|weekend|month|year|summer|spring|fall|autumn|winter|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday))(?![a-z]))"
    r"|明天|后天|下周|下个?星期|下个?月|明年|下次|这周[一二三四五六日末]"
)


#: "(I) bet you…", "can imagine all the work you…", 我猜你…: the speaker's guess about the
#: listener, whatever happened in it.
STANCE = re.compile(
    r"(?i:(?:i\s+)?(?:bet|can (?:only )?imagine|imagine|hope|guess|wish|am sure|'m sure|’m sure|know|trust"
    r"|believe|think|(?:so )?(?:glad|happy|sorry|good|nice|great) to (?:hear|see|know))(?![a-z]))"
    r"|^(?:我)?(?:猜|相信|希望|想|觉得|知道|估计|很高兴|真高兴)"
)


def is_event(sentence: salience.Sentence) -> bool:
    """Someone did, started, changed or plans something (and it says who or when), or is in the
    middle of something ("I'm researching adoption agencies")."""
    told = sentence.event and (sentence.disclosure or sentence.names or sentence.dated)
    return bool(told) or clauses.ongoing(sentence.text)


def statements_of(entry: notes.Entry, subject: str, listeners: frozenset[str], rarity: Rarity) -> list[Told]:
    """Every statement ``entry`` makes of ``subject`` (their events, and what they say of
    themselves, their people, a name or a date), each cut to its news, in the order said."""
    out: list[Told] = []
    for sentence in insights.entry_sentences(entry):
        if not sentence.usable or sentence.text.endswith((":", "：")):
            continue
        event = is_event(sentence)
        if not (event or says_of(sentence, subject)):
            continue  # "Dogs are the best.": not news of the person
        text = clauses.said(insights.strip_label(insights.plain(sentence.text)), subject, listeners)
        if (
            text
            and entry.speaker
            and (not event or STANCE.match(fold_cjk(text)))
            and salience.SECOND_PERSON.search(text)
        ):
            continue  # in a chat, about the listener: "so happy they gave you a warm welcome"
        if text:
            news = (1 + clauses.recent(sentence.text)) if event else 0
            out.append(Told(text, worth(text, event, rarity), news))
    return out


def says_of(sentence: salience.Sentence, person: str) -> bool:
    """Whether ``sentence`` tells something of ``person`` (who says it, or whom it names): their
    first person, their family, their name, another name or a date."""
    text = sentence.text
    return bool(
        salience.FIRST_PERSON.search(text)
        or salience.KIN.search(text)
        or person in text
        or sentence.names
        or sentence.dated
    )
