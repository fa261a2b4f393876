"""A question in one language about a note written in the other: "what's my mom's birthday?"
against "妈妈的生日是 5 月 3 日", "我现在住哪" against "Lives in Friedrichshain".

People who write in English and Chinese write each note in whichever comes first, and ask in the
language of the conversation. Words never meet across scripts, so the question finds nothing.
``bilingual.tsv`` pairs the everyday words of personal memory (family, health, home, travel,
work, food, pastimes) that mean one thing in both languages. :func:`translated_terms` gives the
terms of the other language's words for a question: an English word's Chinese words (their
bigrams; one-character words are left out there, they would search every bigram they start), a
Chinese word's English stems. Recall searches them as extra keywords weighted low
(:attr:`vault_tools.recall.tuning.Tuning.translation_weight`), so a note in the question's own
language that holds the words still ranks first.
"""

from __future__ import annotations

import functools
import re
from importlib import resources

__all__ = ["glossary", "translated_terms"]


@functools.cache
def glossary() -> tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]:
    """(the English phrase's analyzed terms, its Chinese words) per line of ``bilingual.tsv``."""
    from vault_tools.index.analysis import query_terms

    text = resources.files("vault_tools.recall").joinpath("bilingual.tsv").read_text(encoding="utf-8")
    pairs = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        english, _tab, chinese = line.partition("\t")
        terms = tuple(query_terms(english))
        words = tuple(w.strip() for w in chinese.split(",") if w.strip())
        if terms and words:
            pairs.append((terms, words))
    return tuple(pairs)


@functools.cache
def _tables() -> tuple[
    list[tuple[frozenset[str], tuple[str, ...]]], dict[str, tuple[str, ...]], re.Pattern[str]
]:
    """What :func:`translated_terms` looks up, read once: English phrases with the Chinese terms of
    their longer words, each Chinese word with its English terms, and one pattern for them all."""
    from vault_tools.index.analysis import query_terms

    to_chinese: list[tuple[frozenset[str], tuple[str, ...]]] = []
    to_english: dict[str, tuple[str, ...]] = {}
    for english, words in glossary():
        chinese = tuple(t for w in words if len(w) > 1 for t in query_terms(w) if len(t) > 1)
        to_chinese.append((frozenset(english), chinese))
        for word in words:
            to_english[word] = tuple(dict.fromkeys([*to_english.get(word, ()), *english]))
    pattern = re.compile("|".join(map(re.escape, sorted(to_english, key=len, reverse=True))))
    return to_chinese, to_english, pattern


def translated_terms(question: str, terms: tuple[str, ...]) -> list[str]:
    """The other language's terms for the words of ``question`` (analyzed as ``terms``), in the
    order found, without the terms it already has."""
    to_chinese, to_english, pattern = _tables()
    have = set(terms)
    found = [t for english, chinese in to_chinese if english <= have for t in chinese]
    # Longest first, so 车 inside 火车 is the train, not a car.
    found += [t for m in pattern.finditer(question) for t in to_english[m[0]]]
    return [t for t in dict.fromkeys(found) if t not in have]
