"""Near-duplicate and related texts: comparison tokens, set measures, and a fast index to find them.

Texts are compared as sets of tokens: lower-cased words (English stop words dropped, a light
plural/tense stemmer) plus character bigrams of CJK runs, so the measure works for Chinese without a
dictionary. Two texts are *near-duplicates* when their Jaccard similarity is at least the rules'
``near_duplicate`` (0.7), or when one contains at least ``containment`` (90%) of the other's tokens
and the smaller has four or more tokens. They are *related* when Jaccard is at least ``related``
(0.3), or containment is at least 0.5 and the smaller has three or more tokens.

:class:`SimilarityIndex` finds the near-duplicates or related sets of a query among many without
comparing it with all of them.
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Protocol


class Thresholds(Protocol):
    """The thresholds of the measures (:class:`vault_tools.insights.Rules` has them)."""

    @property
    def near_duplicate(self) -> float: ...

    @property
    def containment(self) -> float: ...

    @property
    def related(self) -> float: ...


class Grouped(Protocol):
    """Something with a category: only members of one category are grouped together."""

    @property
    def category(self) -> str: ...


CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7a3"
CJK_RUN = re.compile(f"[{CJK}]+")
CJK_CHAR = re.compile(f"[{CJK}]")
WORD = re.compile(r"[^\W_]+")
TAG_WORD = re.compile(
    r"(?:(?<=^)|(?<=[\s(\[（【]))#[^\s#\[\](){}<>,.;:!?'\"`，。；：！？、（）【】《》「」]+"
)

STOPWORDS = frozenset(
    """a an the to of in on at for and or but is are was were be been it its my me we our us i you
    your he she his her they them their this that these those with by as from so do does did not no
    yes if then than too very just also again still about into over after before up out""".split()  # noqa: SIM905
)


def tokens(text: str) -> frozenset[str]:
    """The comparison tokens of ``text``: stemmed words without stop words, plus CJK bigrams."""
    text = unicodedata.normalize("NFKC", TAG_WORD.sub(" ", text)).lower()
    out: set[str] = set()
    for run in CJK_RUN.findall(text):
        if len(run) == 1:
            out.add(run)
        else:
            out.update(run[i : i + 2] for i in range(len(run) - 1))
    for word in WORD.findall(CJK_RUN.sub(" ", text)):
        if word in STOPWORDS or (len(word) < 2 and not word.isdigit()):
            continue
        out.add(stem(word))
    return frozenset(out)


def stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    common = len(a & b)
    return common / (len(a) + len(b) - common)


def containment(a: frozenset[str], b: frozenset[str]) -> float:
    """How much of the smaller set is inside the larger one."""
    if not a or not b:
        return 0.0
    return len(a & b) / min(len(a), len(b))


def near_duplicate(a: frozenset[str], b: frozenset[str], rules: Thresholds) -> bool:
    if jaccard(a, b) >= rules.near_duplicate:
        return True
    return min(len(a), len(b)) >= 4 and containment(a, b) >= rules.containment


def related(a: frozenset[str], b: frozenset[str], rules: Thresholds) -> bool:
    return jaccard(a, b) >= rules.related or (min(len(a), len(b)) >= 3 and containment(a, b) >= 0.5)


# ---------------------------------------------------------------------------------------------
# Finding similar texts fast: an inverted index over tokens


class SimilarityIndex:
    """Token sets by key; finds the near-duplicates or related sets of a query without comparing all."""

    def __init__(self) -> None:
        self.sets: dict[str, frozenset[str]] = {}
        self.postings: dict[str, list[str]] = defaultdict(list)

    def add(self, key: str, token_set: frozenset[str]) -> None:
        if key in self.sets:
            return
        self.sets[key] = token_set
        for token in token_set:
            self.postings[token].append(key)

    def overlaps(self, token_set: frozenset[str]) -> dict[str, int]:
        counts: dict[str, int] = defaultdict(int)
        for token in token_set:
            for key in self.postings.get(token, ()):
                counts[key] += 1
        return counts

    def near(self, token_set: frozenset[str], rules: Thresholds) -> list[tuple[str, float]]:
        """Keys that are near-duplicates of ``token_set``, best first."""
        return self._matching(token_set, rules, near=True)

    def related(self, token_set: frozenset[str], rules: Thresholds) -> list[tuple[str, float]]:
        """Keys related to ``token_set`` (near-duplicates included), best first."""
        return self._matching(token_set, rules, near=False)

    def _matching(
        self, token_set: frozenset[str], rules: Thresholds, *, near: bool
    ) -> list[tuple[str, float]]:
        found: list[tuple[str, float]] = []
        size = len(token_set)
        for key, common in self.overlaps(token_set).items():
            other = len(self.sets[key])
            jac = common / (size + other - common)
            cont = common / min(size, other)
            if near:
                ok = jac >= rules.near_duplicate or (min(size, other) >= 4 and cont >= rules.containment)
            else:
                ok = jac >= rules.related or (min(size, other) >= 3 and cont >= 0.5)
            if ok:
                found.append((key, max(jac, cont if min(size, other) >= 4 else jac)))
        found.sort(key=lambda kv: (-kv[1], kv[0]))
        return found


def union_near_duplicates(
    keys: Sequence[str], near: Mapping[str, list[str]], by_key: Mapping[str, Grouped]
) -> list[list[str]]:
    """Groups of new candidates (same category) that are near-duplicates of each other."""
    parent = {k: k for k in keys}

    def root(key: str) -> str:
        while parent[key] != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    for key in keys:
        for other in near[key]:
            if other in parent and other != key and by_key[other].category == by_key[key].category:
                parent[root(other)] = root(key)
    groups: dict[str, list[str]] = defaultdict(list)
    for key in keys:
        groups[root(key)].append(key)
    return list(groups.values())
