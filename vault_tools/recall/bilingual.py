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


def translated_terms(question: str, terms: tuple[str, ...]) -> list[str]:
    """The other language's terms for the words of ``question`` (analyzed as ``terms``), in the
    order found, without the terms it already has."""
    from vault_tools.index.analysis import query_terms

    have = set(terms)
    found: list[str] = []
    chinese_in_question = [w for _e, words in glossary() for w in words if w in question]
    for english, words in glossary():
        if all(t in have for t in english):  # an English phrase of the question
            found += [t for w in words if len(w) > 1 for t in query_terms(w) if len(t) > 1]
        named = [w for w in words if w in question]
        if any(not _inside_longer(w, chinese_in_question) for w in named):
            found += english
    return [t for t in dict.fromkeys(found) if t not in have]


def _inside_longer(word: str, words: list[str]) -> bool:
    """Whether ``word`` is only there as part of a longer word of the glossary (车 in 火车)."""
    return any(len(other) > len(word) and word in other for other in words)
