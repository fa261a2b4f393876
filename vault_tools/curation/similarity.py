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

import math
import re
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from vault_tools.chinese import fold_cjk
from vault_tools.curation.anchors import ANCHOR


class Thresholds(Protocol):
    """The thresholds of the measures (:class:`vault_tools.curation.insights.Rules` has them)."""

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
    text = fold_cjk(unicodedata.normalize("NFKC", TAG_WORD.sub(" ", ANCHOR.sub("", text)))).lower()
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
# Finding similar texts fast: an inverted index with prefix filtering and a bounded scan

#: How many entries of one posting list a query reads at most (the most recently added ones). Lists
#: this long only occur for words shared by thousands of distinct texts; below it a search is exact.
SCAN_CAP = 48


@dataclass(frozen=True)
class _Defaults:
    near_duplicate: float = 0.7
    containment: float = 0.9
    related: float = 0.3


#: Related sets: the containment that counts, and the smallest set it counts for (fixed, see related()).
RELATED_CONTAINMENT = 0.5


def _needed(fraction: float, size: int) -> int:
    """The fewest shared tokens a set of ``size`` tokens needs for ``fraction`` of it (at least one)."""
    return max(1, math.ceil(fraction * size - 1e-9))


class SimilarityIndex:
    """Token sets by key; finds the near-duplicates or related sets of a query without comparing all.

    The answers are exactly those of :func:`near_duplicate` and :func:`related` against every set
    (see :class:`ExhaustiveIndex`) as long as no posting list read is longer than ``scan_cap``; the
    work per query is bounded either way, so a search over many similar texts stays near-linear.

    How: identical token sets are stored once. A match must share enough of the query's tokens
    (``o >= t*|q|`` for Jaccard ``t``, ``o >= c*|q|`` for containment ``c`` when the query is the
    smaller set), so by pigeonhole it shares one of the query's ``|q| - o + 1`` rarest tokens: only
    those tokens' posting lists are read (prefix filtering). A smaller set contained in the query
    shares one of *its own* rarest ``|y| - ceil(c*|y|) + 1`` tokens with it, so each set is also
    listed under that prefix, and the query reads those short lists for all its tokens. The prefixes
    are for the ``thresholds`` the index is made with; a query with looser ones reads the full lists.
    Every candidate is then checked exactly.
    """

    def __init__(self, thresholds: Thresholds | None = None, *, scan_cap: int = SCAN_CAP) -> None:
        self.thresholds: Thresholds = thresholds if thresholds is not None else _Defaults()
        self.scan_cap = scan_cap
        self.sets: dict[str, frozenset[str]] = {}
        self.keys_of: dict[frozenset[str], list[str]] = {}  # identical sets, stored once
        self.postings: dict[str, list[frozenset[str]]] = defaultdict(list)
        self.near_prefix: dict[str, list[frozenset[str]]] = defaultdict(list)
        self.related_prefix: dict[str, list[frozenset[str]]] = defaultdict(list)
        self._unlisted: list[frozenset[str]] = []  # added, not yet listed under their prefixes
        self.truncated = 0  # posting lists read only in part (longer than scan_cap)

    def add(self, key: str, token_set: frozenset[str]) -> None:
        if key in self.sets:
            return
        self.sets[key] = token_set
        keys = self.keys_of.get(token_set)
        if keys is not None:
            keys.append(key)
            return
        self.keys_of[token_set] = [key]
        for token in token_set:
            self.postings[token].append(token_set)
        self._unlisted.append(token_set)

    def _list_prefixes(self) -> None:
        """List the sets added since the last query under their rarest tokens (rarity as known now)."""
        for token_set in self._unlisted:
            size = len(token_set)
            if size < 3:
                continue  # containment counts only for sets of three tokens or more
            rarest = self._rarest(token_set)
            if size >= 4:
                length = size - _needed(self.thresholds.containment, size) + 1
                for token in rarest[:length]:
                    self.near_prefix[token].append(token_set)
            length = size - _needed(RELATED_CONTAINMENT, size) + 1
            for token in rarest[:length]:
                self.related_prefix[token].append(token_set)
        self._unlisted.clear()

    def _rarest(self, token_set: frozenset[str]) -> list[str]:
        postings = self.postings
        return sorted(token_set, key=lambda t: (len(postings[t]) if t in postings else 0, t))

    def _read(self, listing: list[frozenset[str]], into: set[frozenset[str]]) -> None:
        if len(listing) > self.scan_cap:
            self.truncated += 1
            into.update(listing[-self.scan_cap :])
        else:
            into.update(listing)

    def candidates(self, token_set: frozenset[str], rules: Thresholds, *, near: bool) -> set[frozenset[str]]:
        """The stored sets that may match ``token_set`` (a superset of the matches, unless truncated)."""
        self._list_prefixes()
        size = len(token_set)
        found: set[frozenset[str]] = {token_set} if token_set in self.keys_of else set()
        if near:
            own = min(rules.near_duplicate, rules.containment)
            looser = rules.containment < self.thresholds.containment
            prefixes = self.near_prefix
        else:
            own = min(rules.related, RELATED_CONTAINMENT)
            looser = False
            prefixes = self.related_prefix
        rarest = self._rarest(token_set)
        for token in rarest[: size - _needed(own, size) + 1]:
            if token in self.postings:
                self._read(self.postings[token], found)
        # smaller sets contained in the query: listed under their own rarest tokens
        smaller = self.postings if looser else prefixes
        for token in rarest:
            if token in smaller:
                self._read(smaller[token], found)
        return found

    def near(self, token_set: frozenset[str], rules: Thresholds) -> list[tuple[str, float]]:
        """Keys that are near-duplicates of ``token_set``, best first."""
        return self._matching(token_set, rules, near=True)

    def related(self, token_set: frozenset[str], rules: Thresholds) -> list[tuple[str, float]]:
        """Keys related to ``token_set`` (near-duplicates included), best first."""
        return self._matching(token_set, rules, near=False)

    def near_each(
        self, keys: Sequence[str], rules: Thresholds, on_each: Callable[[], None] | None = None
    ) -> dict[str, list[str]]:
        """The near-duplicates of each stored key's set, best first; asked once per distinct set.

        ``on_each`` is called after each key (a progress bar)."""
        answers: dict[frozenset[str], list[str]] = {}
        out: dict[str, list[str]] = {}
        for key in keys:
            if on_each is not None:
                on_each()
            token_set = self.sets[key]
            if token_set not in answers:
                answers[token_set] = [other for other, _score in self.near(token_set, rules)]
            out[key] = answers[token_set]
        return out

    def _matching(
        self, token_set: frozenset[str], rules: Thresholds, *, near: bool
    ) -> list[tuple[str, float]]:
        if not token_set:
            return []
        found: list[tuple[str, float]] = []
        size = len(token_set)
        jaccard_min = rules.near_duplicate if near else rules.related
        contained_min = rules.containment if near else RELATED_CONTAINMENT
        contained_size = 4 if near else 3
        for other_set in self.candidates(token_set, rules, near=near):
            # match_score, inlined: this loop is the heartbeat's hottest
            common = len(token_set & other_set)
            if not common:
                continue
            other = len(other_set)
            smaller = size if size < other else other
            jac = common / (size + other - common)
            cont = common / smaller
            if jac >= jaccard_min or (smaller >= contained_size and cont >= contained_min):
                score = max(jac, cont if smaller >= 4 else jac)
                found.extend((key, score) for key in self.keys_of[other_set])
        found.sort(key=lambda kv: (-kv[1], kv[0]))
        return found


def match_score(
    query: frozenset[str], other: frozenset[str], common: int, rules: Thresholds, *, near: bool
) -> float | None:
    """How well ``other`` matches ``query`` (sharing ``common`` tokens), or None when it does not."""
    if not common:
        return None
    size, other_size = len(query), len(other)
    smaller = min(size, other_size)
    jac = common / (size + other_size - common)
    cont = common / smaller
    if near:
        ok = jac >= rules.near_duplicate or (smaller >= 4 and cont >= rules.containment)
    else:
        ok = jac >= rules.related or (smaller >= 3 and cont >= RELATED_CONTAINMENT)
    return max(jac, cont if smaller >= 4 else jac) if ok else None


class ExhaustiveIndex:
    """The reference: counts the overlap of the query with every set that shares a token.

    Quadratic on many similar texts; kept for the equivalence tests and the benchmark only.
    """

    def __init__(self, thresholds: Thresholds | None = None) -> None:
        self.sets: dict[str, frozenset[str]] = {}
        self.postings: dict[str, list[str]] = defaultdict(list)
        self.truncated = 0

    def add(self, key: str, token_set: frozenset[str]) -> None:
        if key in self.sets:
            return
        self.sets[key] = token_set
        for token in token_set:
            self.postings[token].append(key)

    def near(self, token_set: frozenset[str], rules: Thresholds) -> list[tuple[str, float]]:
        return self._matching(token_set, rules, near=True)

    def near_each(
        self, keys: Sequence[str], rules: Thresholds, on_each: Callable[[], None] | None = None
    ) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for key in keys:
            if on_each is not None:
                on_each()
            out[key] = [other for other, _score in self.near(self.sets[key], rules)]
        return out

    def related(self, token_set: frozenset[str], rules: Thresholds) -> list[tuple[str, float]]:
        return self._matching(token_set, rules, near=False)

    def _matching(
        self, token_set: frozenset[str], rules: Thresholds, *, near: bool
    ) -> list[tuple[str, float]]:
        counts: dict[str, int] = defaultdict(int)
        for token in token_set:
            for key in self.postings.get(token, ()):
                counts[key] += 1
        found: list[tuple[str, float]] = []
        for key, common in counts.items():
            score = match_score(token_set, self.sets[key], common, rules, near=near)
            if score is not None:
                found.append((key, score))
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
