"""Recall: find the entries that answer a question about the past, fast, within a chat's rights.

Design. A query goes through four steps.

1. *Reading the query.* ``tag:T`` and ``#T`` words become tag filters; the first time phrase
   ("last week", "in March", "上周", "2026年3月") becomes a *word window* and is cut out
   (:mod:`vault_tools.timewords`); the rest is cut into terms with the stop and question words
   of both languages dropped (:func:`vault_tools.analysis.query_terms`). An empty query, or one
   that is only a greeting or emoji, returns nothing at once, with the reason in ``warnings``.
   A query of nothing but filters ("yesterday", "#atlas") *browses*: every entry that passes
   the filters, newest and most important first.
2. *One index query.* The terms are OR-ed (a hit needs any of them, not all) over the entry text,
   its section heading and its tags (BM25F, with per-field boosts), and ``Require``-d to match the
   filters: the chat's privacy rule (:func:`vault_tools.privacy.visible_in` decides each
   kind × visibility pair), ``--since``/``--until``, the word window and the tags. Filters
   are applied before the top-k is taken, never to a top-k afterwards. The scoring runs a term
   at a time over the posting blocks (:mod:`vault_tools.scorer`, the same BM25F as Whoosh's
   matchers, which remain the fallback for an index it cannot read).
3. *Ranking.* The best :data:`Tuning.pool` hits by BM25F are re-scored:
   ``bm25 × recency × importance × source``. Recency decays exponentially with the configured
   half-life (``recall.half_life_days``) from 1 down to ``1 - recency_weight``; MEMORY.md items
   do not decay. Importance (``[importance:: 0.8]``, 0.5 when unset) moves a score by at most
   ±``importance_weight / 2``.
4. *Shaping.* Near-duplicates (the same fact in a daily note and in MEMORY.md, found by word
   overlap, helped by the MEMORY item's ``[source:: [[date]]]``) collapse into the better hit,
   which names the other places in ``also_in``. Hits are then added in rank order while their
   estimated tokens (:mod:`vault_tools.tokens`) fit ``max_tokens``.

Word windows. People write events down a day or two later ("…dinner last night"), and a time
word in a question does not always say when the answer was written ("the rent from July" was
noted in May). So a window read from the question is a ranking preference with a safety net,
not a plain filter (``window_mode="pad+rank"``): one search is filtered by the window padded by
:data:`Tuning.pad_before`/:data:`Tuning.pad_after` days, a second one by the hard limits only;
a hit ``d`` days outside the window keeps ``max(outside_floor, outside_window ** d)`` of its
score. On ``bench/retrieval_set.py`` this beats the exact window, padding alone and ranking
alone (see ``bench/recall_bench.py``). Explicit ``--since``/``--until`` are hard limits of both
searches and are never padded.

Warm use. :class:`Recaller` keeps one Whoosh searcher open across calls and refreshes it when
the index has new commits (``s = s.refresh()``); the MCP server holds one. :func:`recall` is the
one-shot form the CLI uses: it catches the index up with the files first and says ``stale``
when it could not.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from vault_tools.config import Config
from vault_tools.errors import UsageError
from vault_tools.tokens import count_tokens, truncate_to_tokens

if TYPE_CHECKING:
    from vault_tools.index import Index
    from vault_tools.privacy import Chat
    from vault_tools.scorer import BlockScorer, Clause, DocFilter
    from vault_tools.timewords import DateWindow

__all__ = ["Hit", "RecallResult", "Recaller", "Tuning", "highlight_spans", "parse_query", "recall"]


# ---------------------------------------------------------------------------------------------
# Results


@dataclass(frozen=True)
class Hit:
    """One recalled entry (or several places of the same fact, collapsed)."""

    id: str
    path: str  # relative to the vault, POSIX
    line: int
    end_line: int
    date: str | None  # ISO date
    source: str  # "daily" | "memory" | "note"
    section: str
    tags: list[str]
    score: float
    text: str
    also_in: list[str]  # other places ("path:line") of the same fact, collapsed into this hit
    explain: dict[str, float] | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.id,
            "path": self.path,
            "line": self.line,
            "end_line": self.end_line,
            "date": self.date,
            "source": self.source,
            "section": self.section,
            "tags": list(self.tags),
            "score": round(self.score, 4),
            "text": self.text,
            "also_in": list(self.also_in),
        }
        if self.explain is not None:
            data["explain"] = {k: round(v, 4) for k, v in self.explain.items()}
        return data


@dataclass
class RecallResult:
    """What :func:`recall` found, with the filters it applied and anything the caller should know."""

    query: str
    filters: dict[str, Any]
    stale: bool
    results: list[Hit]
    warnings: list[str]
    terms: list[str] = field(default_factory=list)  # the analyzed keywords, for highlighting

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` schema: query, filters, stale, results, warnings."""
        return {
            "query": self.query,
            "filters": dict(self.filters),
            "stale": self.stale,
            "results": [hit.to_dict() for hit in self.results],
            "warnings": list(self.warnings),
        }

    def render(self, *, color: bool = False, explain: bool = False) -> str:
        """Human output: ``path:line  date`` then the text with matched words highlighted."""
        on, off = ("\x1b[1;33m", "\x1b[0m") if color else ("**", "**")
        lines: list[str] = []
        for hit in self.results:
            head = f"{hit.path}:{hit.line}"
            if hit.date:
                head += f"  {hit.date}"
            if hit.section:
                head += f"  [{hit.section}]"
            lines.append(f"\x1b[36m{head}\x1b[0m" if color else head)
            lines += ["  " + row for row in mark(hit.text, self.terms, on, off).splitlines() or [""]]
            if hit.also_in:
                lines.append("  also in: " + ", ".join(hit.also_in))
            if explain and hit.explain:
                parts = ", ".join(f"{k} {v:.3g}" for k, v in hit.explain.items())
                lines.append(f"  score {hit.score:.4g} = {parts}")
        if not self.results:
            lines.append("No matching entries.")
        return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Tuning


@dataclass(frozen=True)
class Tuning:
    """Ranking constants (chosen on ``bench/retrieval_set.py``; the benchmark sweeps them).

    ``window_mode`` says what a time phrase in the question does: ``"exact"`` filters by the
    window as read; ``"pad"`` filters by the window widened by ``pad_before``/``pad_after`` days;
    ``"rank"`` does not filter; ``"pad+rank"`` (the default) merges a padded-window search with an
    unwindowed one. Every mode multiplies a hit ``d`` days outside the window by
    ``max(outside_floor, outside_window ** d)``.
    """

    pool: int = 30  # hits re-ranked per search: max(pool, 2 * limit + 10)
    bm25_b: float = 0.3  # length normalisation (Whoosh BM25F's B): entries are one-liners
    bm25_k1: float = 1.2
    text_boost: float = 1.0
    section_boost: float = 0.3
    before_boost: float = 0.4  # the entry before it (a question this entry answers)
    after_boost: float = 0.3  # the entry after it
    context_terms: int = 2  # query terms the neighbours must share for a hit that matches only through them
    context_floor: float = 0.35  # ... and the share of the best direct match's score it must reach
    speaker_boost: float = 1.0  # a name in the query that is who says an entry ("**Name**: ...")
    later_speaker: float = 0.5  # the speaker boost of every name after the first (the subject)
    speaker_text_factor: float = 0.3  # the other branches of such a name are scaled by this
    tag_boost: float = 0.6
    tag_max_share: float = 0.02
    coordination: float = 0.3  # weight of the share of the query's terms a hit has
    recency_weight: float = 0.25  # when the question has time words
    recency_weight_untimed: float = 0.05  # when it has none: most questions about the past are not about now
    importance_weight: float = 0.4
    memory_boost: float = 1.1
    window_mode: str = "pad+rank"
    pad_before: int = 1
    pad_after: int = 3
    outside_window: float = 0.8  # per day outside the word window
    outside_floor: float = 0.35  # the least a strong match far outside the word window keeps
    duplicate_overlap: float = 0.75
    duplicate_overlap_linked: float = 0.45
    hit_overhead_tokens: int = 16  # path, line, date and JSON keys around each hit's text
    browse_pool: int = 500


DEFAULT_TUNING = Tuning()

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


# ---------------------------------------------------------------------------------------------
# Reading the query


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


# ---------------------------------------------------------------------------------------------
# The index query


def privacy_parts(chat: Chat, include_private: bool = False) -> tuple[Any, Any]:
    """(what a hit must match, what it must not match) for ``chat``; either may be None.

    :func:`vault_tools.privacy.visible_in` decides every kind x visibility pair. When most pairs
    are allowed (a direct chat: all but ``#private``) the rule is applied as an exclusion of the
    few denied ones, which costs a rare term's postings instead of intersecting every document.
    """
    from whoosh.query import And, NullQuery, Or, Term

    from vault_tools import index as ix
    from vault_tools.privacy import ENTRY_KINDS, VISIBILITIES, visible_in

    pairs = [(k, v) for k in sorted(ENTRY_KINDS) for v in sorted(VISIBILITIES)]
    allowed = [(k, v) for k, v in pairs if visible_in(k, v, chat, include_private=include_private)]
    denied = [pair for pair in pairs if pair not in allowed]
    if not denied:
        return None, None
    if not allowed:
        return NullQuery, None
    chosen = allowed if len(allowed) <= len(denied) else denied
    parts = []
    for visibility in sorted({v for _k, v in chosen}):
        kinds = [k for k, v in chosen if v == visibility]
        rare = Term(ix.F_VISIBILITY, visibility)  # far fewer postings than a kind: it leads
        if chosen is denied and len(kinds) == len(ENTRY_KINDS):
            parts.append(rare)  # denied whatever the kind: no intersection with every daily entry
        else:
            parts.append(And([rare, Or([Term(ix.F_KIND, k) for k in kinds])]))
    query = parts[0] if len(parts) == 1 else Or(parts)
    return (query, None) if chosen is allowed else (None, query)


#: One OR branch of a query's keywords: (field, term, boost).
KeywordPart = tuple[str, str, float]

#: The fields that hold an entry's neighbours' text (see :func:`vault_tools.index.neighbour_texts`).
NEIGHBOUR_FIELDS = ("before", "after")


def keyword_parts(parsed: ParsedQuery, tuning: Tuning, searcher: Any = None) -> list[KeywordPart]:
    """(field, term, boost) of each OR branch of the query's keywords; empty when it only browses.

    The terms go over text, section and tags. With a ``searcher``, a term is matched against
    section headings and tag names only where it is on at most ``tag_max_share`` of the entries:
    a heading or tag on everything (``## Work``, ``#work``) ranks nothing and costs a long
    posting list.
    """
    from vault_tools import index as ix

    if not parsed.terms:
        return []
    most = tuning.tag_max_share * max(1, searcher.doc_count()) if searcher is not None else math.inf

    def useful(field: str, term: str) -> bool:
        return searcher is None or 0 < searcher.doc_frequency(field, term) <= most

    speakers = speaker_terms(parsed, searcher) if tuning.speaker_boost > 0 else {}
    parts: list[KeywordPart] = []
    for term in parsed.terms:
        factor = tuning.speaker_text_factor if term in speakers else 1.0
        parts.append((ix.F_TEXT, term, tuning.text_boost * factor))
        for field_name, boost in ((ix.F_BEFORE, tuning.before_boost), (ix.F_AFTER, tuning.after_boost)):
            if boost > 0:
                parts.append((field_name, term, boost * factor))
        if tuning.section_boost > 0 and (len(term) == 1 or useful(ix.F_SECTION, term)):
            parts.append((ix.F_SECTION, term, tuning.section_boost))
    for rank, word in enumerate(dict.fromkeys(speakers.values())):
        parts.append(
            (ix.F_SPEAKER, word, tuning.speaker_boost * (1.0 if rank == 0 else tuning.later_speaker))
        )
    if tuning.tag_boost > 0:
        words = [w for w in dict.fromkeys(parsed.words) if useful(ix.F_TAGS, w)]
        parts += [(ix.F_TAGS, word, tuning.tag_boost) for word in words]
    return parts


def speaker_terms(parsed: ParsedQuery, searcher: Any) -> dict[str, str]:
    """Analyzed term -> query word, for the query's words that name who says some entry."""
    from vault_tools import index as ix
    from vault_tools.analysis import tokenize

    if searcher is None:
        return {}
    found: dict[str, str] = {}
    for word in dict.fromkeys(parsed.words):
        if searcher.doc_frequency(ix.F_SPEAKER, word) > 0:
            for term in tokenize(word):
                found[term] = word
    return found


def keyword_query(parts: Sequence[KeywordPart]) -> Any:
    """:func:`keyword_parts` as one Whoosh ``Or`` query; None when the query only browses.

    The neighbours' fields are left out: their back-off rule (see :func:`keyword_clauses`) is
    the block scorer's, so Whoosh's matchers (the fallback) rank by the entry's own words.
    """
    from whoosh.query import Or, Term

    from vault_tools import index as ix
    from vault_tools.analysis import term_query

    own = [(field, term, boost) for field, term, boost in parts if field not in NEIGHBOUR_FIELDS]
    if not own:
        return None
    return Or(
        [
            Term(field, term, boost=boost)
            if field in (ix.F_TAGS, ix.F_SPEAKER)
            else term_query(term, field).with_boost(boost)
            for field, term, boost in own
        ]
    )


def keyword_clauses(parts: Sequence[KeywordPart], searcher: Any) -> list[Clause]:
    """:func:`keyword_parts` for :class:`vault_tools.scorer.BlockScorer`: the branches of
    :func:`keyword_query`.

    A single CJK character stands for itself and every bigram it starts, as in
    :class:`vault_tools.analysis.CjkCharQuery`. A neighbour's clause backs off: it counts only
    for entries whose own text lacks the term (see :meth:`vault_tools.scorer.BlockScorer.scores`).
    """
    from vault_tools import index as ix
    from vault_tools.analysis import cjk_char_terms, is_cjk_char
    from vault_tools.scorer import Clause

    reader = searcher.reader()
    clauses = []
    for field_name, term, boost in parts:
        texts: tuple[str, ...] = (term,)
        if field_name not in (ix.F_TAGS, ix.F_SPEAKER) and is_cjk_char(term):
            texts = tuple(cjk_char_terms(reader, field_name, term))
        unless = ix.F_TEXT if field_name in NEIGHBOUR_FIELDS else None
        clauses.append(Clause(field_name, texts, boost, unless))
    return clauses


_REQUIRE_CLASS: Any = None


def require(scored: Any, required: Any) -> Any:
    """``scored`` restricted to documents that match ``required``, scored by ``scored`` alone.

    Whoosh's own ``Require`` trips an assertion in ``RequireMatcher.skip_to_quality`` when the
    block-quality skip lands both sides on the same document; this one checks first.
    """
    global _REQUIRE_CLASS
    if _REQUIRE_CLASS is None:
        _REQUIRE_CLASS = _require_class()
    return _REQUIRE_CLASS(scored, required)


def _require_class() -> Any:
    from whoosh.matching.wrappers import RequireMatcher
    from whoosh.query import Require

    class SafeRequireMatcher(RequireMatcher):  # type: ignore[misc]
        def skip_to_quality(self, minquality: float) -> int:
            skipped = int(self.a.skip_to_quality(minquality))
            if self.a.is_active() and self.b.is_active() and self.a.id() != self.b.id():
                self.child._find_next()
            return skipped

    class SafeRequire(Require):  # type: ignore[misc]
        def matcher(self, searcher: Any, context: Any = None) -> Any:
            scored_m = self.a.matcher(searcher, context)
            if not scored_m.is_active():
                return scored_m  # nothing to restrict: do not read a year of date postings
            required_m = self.b.matcher(searcher, searcher.boolean_context())
            return SafeRequireMatcher(scored_m, required_m)

    return SafeRequire


_AND_NOT_CLASS: Any = None


def and_not(positive: Any, negative: Any) -> Any:
    """``positive`` without the documents of ``negative``, scored by ``positive`` alone.

    Whoosh's ``AndNotMatcher`` lets the first positive match through unchecked (it only compares
    the two sides when they start on the same document) and reads the id of an exhausted positive
    matcher after a block-quality skip (IndexError); this one fixes both.
    """
    global _AND_NOT_CLASS
    if _AND_NOT_CLASS is None:
        _AND_NOT_CLASS = _and_not_class()
    return _AND_NOT_CLASS(positive, negative)


def _and_not_class() -> Any:
    from whoosh.matching.binary import AndNotMatcher
    from whoosh.query import AndNot

    class SafeAndNotMatcher(AndNotMatcher):  # type: ignore[misc]
        # Whoosh's _find_first only looks at the exclusion side when both sides happen to start
        # on the same document, so a first positive match that is excluded leaked through.
        def _find_first(self) -> None:
            if self.a.is_active() and self.b.is_active():
                self._find_next()

        def _find_next(self) -> bool:
            if not self.a.is_active():
                return False
            return bool(super()._find_next())

        def skip_to_quality(self, minquality: float) -> int:
            skipped = int(self.a.skip_to_quality(minquality))
            if self.a.is_active():
                self._find_next()
            return skipped

    class SafeAndNot(AndNot):  # type: ignore[misc]
        def matcher(self, searcher: Any, context: Any = None) -> Any:
            positive = self.a.matcher(searcher, context)
            if not positive.is_active():
                return positive
            negative = self.b.matcher(searcher, searcher.boolean_context())
            return SafeAndNotMatcher(positive, negative)

    return SafeAndNot


@dataclass(frozen=True)
class Window:
    """The dates a search may return, and the word window it ranks by.

    ``since``/``until`` filter the main search (hard limits, padded word window). ``core_*`` is
    the word window as read, used to rank hits outside it lower. ``wide_*`` are the hard limits
    alone: the second, unwindowed search of ``pad+rank``/``rank`` (None when there is none).
    """

    since: dt.date | None
    until: dt.date | None
    core_since: dt.date | None = None
    core_until: dt.date | None = None
    wide: bool = False
    wide_since: dt.date | None = None
    wide_until: dt.date | None = None

    @property
    def empty(self) -> bool:
        return self.since is not None and self.until is not None and self.since > self.until


def resolve_window(
    since: dt.date | None, until: dt.date | None, words: DateWindow | None, tuning: Tuning
) -> Window:
    """Combine hard ``--since/--until`` with the word window under ``tuning.window_mode``."""
    if words is None:
        return Window(since, until)
    core_since, core_until = words.since, words.until
    mode = tuning.window_mode
    if mode == "rank":
        return Window(since, until, core_since, core_until)
    lo, hi = core_since, core_until
    if mode in ("pad", "pad+rank"):
        lo = lo - dt.timedelta(days=tuning.pad_before) if lo else None
        hi = hi + dt.timedelta(days=tuning.pad_after) if hi else None
    wide = mode == "pad+rank"
    return Window(_later(since, lo), _earlier(until, hi), core_since, core_until, wide, since, until)


def _later(a: dt.date | None, b: dt.date | None) -> dt.date | None:
    return max(a, b) if a and b else a or b


def _earlier(a: dt.date | None, b: dt.date | None) -> dt.date | None:
    return min(a, b) if a and b else a or b


@dataclass(frozen=True)
class Filters:
    """Everything a hit must match besides its words (privacy, dates, tags), and what it must not."""

    privacy: Any  # the chat's rule as a query a hit must match; None: no requirement
    excluded: Any  # what a hit must not match; None: nothing excluded
    since: dt.date | None = None
    until: dt.date | None = None
    tags: tuple[str, ...] = ()

    @property
    def required(self) -> Any:
        """The privacy rule, the dates and the tags as one query; None when there are none."""
        from whoosh.query import And

        from vault_tools import index as ix

        parts = [q for q in (self.privacy, ix.date_filter(self.since, self.until)) if q is not None]
        parts += [ix.tag_filter(tag) for tag in self.tags]
        return None if not parts else parts[0] if len(parts) == 1 else And(parts)

    def restrict(self, query: Any) -> Any:
        """``query`` (``None``: every entry) within these filters, scored by ``query`` alone.

        Exclusions stay a cheap AndNot on the outside instead of a match over every document.
        """
        from whoosh.query import Every

        required = self.required
        if query is None:
            query = required if required is not None else Every()
        elif required is not None:
            query = require(query, required)
        return query if self.excluded is None else and_not(query, self.excluded)

    def doc_filter(self, scorer: BlockScorer) -> DocFilter:
        """These filters for :meth:`BlockScorer.top`: the dates on the ``day`` column, the rest as
        sets of document numbers (read once per searcher)."""
        from vault_tools import index as ix
        from vault_tools.scorer import DocFilter

        excluded = scorer.matching(self.excluded) if self.excluded is not None else frozenset()
        required: frozenset[int] | None = None
        for query in [self.privacy, *(ix.tag_filter(tag) for tag in self.tags)]:
            if query is not None:
                docs = scorer.matching(query)
                required = docs if required is None else required & docs
        days = None
        if self.since is not None or self.until is not None:
            days = (
                ix.day_number(self.since) if self.since else None,
                ix.day_number(self.until) if self.until else None,
            )
        return DocFilter(excluded, required, days)


def filter_query(
    chat: Chat,
    since: dt.date | None,
    until: dt.date | None,
    tags: Sequence[str],
    include_private: bool = False,
) -> Filters:
    """The privacy rule of ``chat``, the date window and the tags, as index queries."""
    required, excluded = privacy_parts(chat, include_private)
    return Filters(required, excluded, since, until, tuple(tags))


# ---------------------------------------------------------------------------------------------
# Ranking


@dataclass
class _Candidate:
    fields: dict[str, Any]
    bm25: float
    matched: float = 1.0  # idf-weighted share of the query's terms this hit contains
    score: float = 0.0
    parts: dict[str, float] = field(default_factory=dict)
    also_in: list[str] = field(default_factory=list)
    words: frozenset[str] = frozenset()

    @property
    def place(self) -> str:
        return f"{self.fields.get('path', '')}:{self.fields.get('start_line', 0)}"


def _day_of(stored: dict[str, Any]) -> dt.date | None:
    value = str(stored.get("datetime") or "")
    try:
        return dt.date.fromisoformat(value[:10]) if value else None
    except ValueError:
        return None


def rescore(
    candidate: _Candidate, *, as_of: dt.date, half_life: float, window: Window, tuning: Tuning
) -> None:
    """Combine BM25F with recency, importance, source and the word window (see module doc)."""
    stored = candidate.fields
    kind = stored.get("kind", "note")
    day = _day_of(stored)
    weight = (
        tuning.recency_weight if window.core_since or window.core_until else tuning.recency_weight_untimed
    )
    if kind == "memory":
        recency = 1.0
    elif day is None:
        recency = 1.0 - weight / 2
    else:
        age = max(0, (as_of - day).days)
        recency = 1.0 - weight + weight * 0.5 ** (age / half_life)
    importance = stored.get("importance")
    value = float(importance) if importance is not None else 0.5
    value = min(1.0, max(0.0, value)) if math.isfinite(value) else 0.5
    importance_factor = 1.0 + tuning.importance_weight * (value - 0.5)
    source = tuning.memory_boost if kind == "memory" else 1.0
    outside = _days_outside(day, window)
    window_factor = max(tuning.outside_floor, tuning.outside_window**outside) if outside else 1.0
    coordination = 1.0 - tuning.coordination + tuning.coordination * candidate.matched
    candidate.parts = {
        "bm25": candidate.bm25,
        "coordination": coordination,
        "recency": recency,
        "importance": importance_factor,
        "source": source,
        "window": window_factor,
    }
    candidate.score = candidate.bm25 * coordination * recency * importance_factor * source * window_factor


def matched_share(stored: dict[str, Any], weights: dict[str, float]) -> float:
    """The share of the query's terms (weighted by idf) found in a hit's text, section or tags."""
    from vault_tools.analysis import tokenize

    total = sum(weights.values())
    if not total:
        return 1.0
    text = f"{stored.get('text', '')} {stored.get('section', '')} {str(stored.get('tags') or '').replace(',', ' ')}"
    have = set(tokenize(text))
    found = 0.0
    for term, weight in weights.items():
        if term in have or (len(term) == 1 and any(t.startswith(term) for t in have)):
            found += weight
    return found / total


def _sort_day(stored: dict[str, Any]) -> int:
    day = _day_of(stored)
    return day.toordinal() if day else 0


def _days_outside(day: dt.date | None, window: Window) -> int:
    """How many days ``day`` lies outside the word window (0 inside, or when there is none)."""
    if window.core_since is None and window.core_until is None:
        return 0
    if day is None:
        return 3  # an undated note cannot be placed in time: rank it like a near miss
    if window.core_since is not None and day < window.core_since:
        return (window.core_since - day).days
    if window.core_until is not None and day > window.core_until:
        return (day - window.core_until).days
    return 0


# ---------------------------------------------------------------------------------------------
# Near-duplicates


_LINK_DATE = re.compile(r"(\d{4}-\d{2}-\d{2})")


def content_words(text: str) -> frozenset[str]:
    """The analyzed terms of ``text`` without stop words: what two statements of a fact share."""
    from vault_tools.analysis import query_terms

    return frozenset(query_terms(text))


def overlap(a: frozenset[str], b: frozenset[str]) -> tuple[float, float]:
    """(containment of the smaller set in the larger, Jaccard) of two statements' words."""
    if not a or not b:
        return 0.0, 0.0
    common = len(a & b)
    return common / min(len(a), len(b)), common / len(a | b)


def same_fact(a: _Candidate, b: _Candidate, tuning: Tuning) -> bool:
    """Whether two hits state one fact: word for word, or most words shared (fewer when linked).

    A MEMORY item that names the other hit's day as its ``[source:: [[date]]]`` needs only
    ``duplicate_overlap_linked`` containment; otherwise both containment ``duplicate_overlap``
    and Jaccard 0.5 are needed, and at least four words, so two short notes that share a
    topic word are not folded into one.
    """
    if a.fields.get("text") == b.fields.get("text"):
        return True
    if a.fields.get("path") == b.fields.get("path"):
        return False  # two entries of one file are two things said
    contained, jaccard = overlap(a.words, b.words)
    if min(len(a.words), len(b.words)) < 4:
        return False
    if _linked(a, b):
        return contained >= tuning.duplicate_overlap_linked
    return contained >= tuning.duplicate_overlap and jaccard >= 0.5


def _linked(a: _Candidate, b: _Candidate) -> bool:
    """Whether a MEMORY item names the other hit's daily note as its source."""
    for item, other in ((a, b), (b, a)):
        if item.fields.get("kind") != "memory" or other.fields.get("kind") != "daily":
            continue
        source = _source_field(item.fields)
        day = _day_of(other.fields)
        if day is not None and day.isoformat() in _LINK_DATE.findall(source):
            return True
    return False


def _source_field(stored: dict[str, Any]) -> str:
    import json

    try:
        fields = json.loads(stored.get("fields") or "{}")
    except ValueError:
        return ""
    return str(fields.get("source", "")) if isinstance(fields, dict) else ""


def collapse_duplicates(ranked: list[_Candidate], tuning: Tuning) -> list[_Candidate]:
    """Fold each hit into a better-ranked one that states the same fact (``also_in`` names it)."""
    kept: list[_Candidate] = []
    for candidate in ranked:
        candidate.words = content_words(str(candidate.fields.get("text", "")))
        better = next((k for k in kept if same_fact(k, candidate, tuning)), None)
        if better is None:
            kept.append(candidate)
        else:
            better.also_in.append(candidate.place)
            better.also_in.extend(candidate.also_in)
    return kept


# ---------------------------------------------------------------------------------------------
# Highlighting


def highlight_spans(text: str, terms: Iterable[str]) -> list[tuple[int, int]]:
    """Character spans of ``text`` whose analyzed terms are among ``terms`` (merged, sorted)."""
    from vault_tools.analysis import text_analyzer

    wanted = set(terms)
    if not wanted or not text:
        return []
    spans: list[tuple[int, int]] = []
    for token in text_analyzer()(text, chars=True, mode="query"):
        if token.text in wanted or (len(token.text) == 2 and token.text[0] in wanted):
            spans.append((token.startchar, token.endchar))
    spans.sort()
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def mark(text: str, terms: Iterable[str], on: str, off: str) -> str:
    """``text`` with every matched span wrapped in ``on``/``off``."""
    out: list[str] = []
    last = 0
    for start, end in highlight_spans(text, terms):
        out += [text[last:start], on, text[start:end], off]
        last = end
    out.append(text[last:])
    return "".join(out)


# ---------------------------------------------------------------------------------------------
# Recalling


def _as_date(value: str | dt.date | None, as_of: dt.date, *, end: bool) -> dt.date | None:
    from vault_tools.timewords import parse_when

    if value is None or isinstance(value, dt.date):
        return value
    if not value.strip():
        return None
    return parse_when(value, as_of, end=end)


class Recaller:
    """A warm recall session over one vault: one Whoosh searcher kept open across calls.

    ``catch_up`` says when the index is brought up to date with the files before a search:
    ``"auto"`` (the default) and ``"always"`` (a stat of every note per call; with a live
    ``vault-tools watch`` it finds nothing to do except an edit the watcher has not indexed yet,
    still inside its debounce window, which it then indexes or waits for), ``"never"`` (new
    commits are still picked up by refreshing the searcher; for a caller the watcher itself
    keeps current), or a number of seconds between catch-ups. Use it as a context manager or call
    :meth:`close`. One thread at a time.
    """

    def __init__(
        self,
        config: Config,
        *,
        catch_up: str | float = "auto",
        tuning: Tuning = DEFAULT_TUNING,
        index: Index | None = None,
    ) -> None:
        from vault_tools.index import Index

        self.config = config
        self.tuning = tuning
        self.catch_up = catch_up
        self.index = index if index is not None else Index(config)
        self._searcher: Any = None
        self._scorer: BlockScorer | None = None
        self._last_catch_up = -math.inf
        self._stale_reason: str | None = None

    def __enter__(self) -> Recaller:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._scorer = None
        searcher, self._searcher = self._searcher, None
        if searcher is not None:
            searcher.close()

    def _due(self) -> bool:
        if self.catch_up in ("auto", "always"):
            # Also with a live watcher: trusting it missed an edit saved inside its debounce
            # window, and said stale: false (the served path waits for the watcher instead).
            return True
        if self.catch_up == "never":
            return False
        return time.monotonic() - self._last_catch_up >= float(self.catch_up)

    def _prepare(self, warnings: list[str]) -> bool:
        """Catch up (when due) and return a current searcher; True when results may be stale."""
        stale = False
        if self._due():
            report = self.index.ensure_current()
            self._last_catch_up = time.monotonic()
            warnings.extend(report.warnings)
            self._stale_reason = report.stale_reason if report.stale else None
            if report.changed or report.rebuilt:
                self.close()
        if self._stale_reason:
            stale = True
            warnings.append(f"results may be stale: {self._stale_reason}")
        if self._searcher is not None:
            try:
                self._searcher = self._searcher.refresh()
            except Exception:  # the index was swapped by a rebuild: open it again
                self.close()
        if self._searcher is None:
            from whoosh.scoring import BM25F

            self._searcher = self.index.open_searcher()
            # Whoosh reads the weighting from the top searcher for every query (refresh keeps it).
            self._searcher.weighting = BM25F(B=self.tuning.bm25_b, K1=self.tuning.bm25_k1)
        return stale

    def recall(
        self,
        query: str,
        *,
        limit: int | None = None,
        since: str | dt.date | None = None,
        until: str | dt.date | None = None,
        tags: Sequence[str] = (),
        chat: str | None = None,
        max_tokens: int | None = None,
        as_of: dt.date | None = None,
        explain: bool = False,
        include_private: bool = False,
    ) -> RecallResult:
        """See :func:`recall`."""
        from vault_tools.privacy import parse_chat

        settings = self.config.recall
        chat_ = parse_chat(chat if chat is not None else settings.chat)
        if include_private and chat_ != "direct":
            raise UsageError(f"#private entries are never shown in a {chat_} chat; drop --include-private")
        limit_ = settings.limit if limit is None else limit
        budget = settings.max_tokens if max_tokens is None else max_tokens
        if limit_ <= 0:
            raise UsageError(f"--limit must be positive, got {limit_}")
        if budget <= 0:
            raise UsageError(f"--max-tokens must be positive, got {budget}")
        today = as_of or self.config.today()
        since_ = _as_date(since, today, end=False)
        until_ = _as_date(until, today, end=True)
        parsed = parse_query(query, today, filtered=bool(tags or since_ or until_))
        wanted_tags = tuple(
            dict.fromkeys([*(t.lstrip("#").lower() for t in tags if t.strip("# ")), *parsed.tags])
        )
        window = resolve_window(since_, until_, parsed.window, self.tuning)
        filters = self._filters(chat_, since_, until_, wanted_tags, parsed, window, today, limit_, budget)
        result = RecallResult(query, filters, False, [], [], list(parsed.terms))
        if parsed.noise is not None:
            result.warnings.append(parsed.noise)
            return result
        if window.empty:
            result.warnings.append(
                f"no dates left: the window {window.since}..{window.until} is empty "
                "(check --since/--until against the time words in the query)"
            )
            return result
        result.stale = self._prepare(result.warnings)
        ranked = self._search(parsed, chat_, window, wanted_tags, today, limit_, include_private)
        hits = self._shape(ranked, limit_, budget, explain, result.warnings)
        result.results = hits
        return result

    def _filters(
        self,
        chat: Chat,
        since: dt.date | None,
        until: dt.date | None,
        tags: tuple[str, ...],
        parsed: ParsedQuery,
        window: Window,
        as_of: dt.date,
        limit: int,
        budget: int,
    ) -> dict[str, Any]:
        words = parsed.window
        return {
            "chat": chat,
            "since": since.isoformat() if since else None,
            "until": until.isoformat() if until else None,
            "tags": list(tags),
            "time_phrase": words.phrase if words else None,
            "window": (
                {
                    "since": words.since.isoformat() if words.since else None,
                    "until": words.until.isoformat() if words.until else None,
                    "searched_since": window.since.isoformat() if window.since else None,
                    "searched_until": window.until.isoformat() if window.until else None,
                    "mode": self.tuning.window_mode,
                }
                if words
                else None
            ),
            "keywords": list(parsed.terms),
            "as_of": as_of.isoformat(),
            "limit": limit,
            "max_tokens": budget,
        }

    def _search(
        self,
        parsed: ParsedQuery,
        chat: Chat,
        window: Window,
        tags: Sequence[str],
        as_of: dt.date,
        limit: int,
        include_private: bool = False,
    ) -> list[_Candidate]:
        from vault_tools import index as ix

        tuning = self.tuning
        searcher = self._searcher
        parts = keyword_parts(parsed, tuning, searcher)
        filters = filter_query(chat, window.since, window.until, tags, include_private)
        pool = max(tuning.pool, 2 * limit + 10)
        if not parts:
            results = searcher.search(
                filters.restrict(None), limit=max(tuning.browse_pool, limit), sortedby=ix.F_DAY, reverse=True
            )
            candidates = [_Candidate(dict(hit.fields()), 1.0) for hit in results]
        else:
            wide = (
                filter_query(chat, window.wide_since, window.wide_until, tags, include_private)
                if window.wide
                else None
            )
            scorer = self._block_scorer()
            if scorer is not None:
                found = self._score_in_blocks(scorer, parts, filters, wide, pool, limit)
            else:
                found = self._score_with_matchers(keyword_query(parts), filters, wide, pool, limit)
            candidates = [_Candidate(dict(searcher.stored_fields(d)), score) for d, score in found.items()]
            # Only with candidates: Whoosh's idf takes log(0) in an empty index (a fresh `init`).
            weights = (
                {t: max(float(searcher.idf(ix.F_TEXT, t)), 0.01) for t in parsed.terms} if candidates else {}
            )
            for candidate in candidates:
                candidate.matched = matched_share(candidate.fields, weights)
        half_life = max(self.config.recall.half_life_days, 0.01)
        for candidate in candidates:
            rescore(candidate, as_of=as_of, half_life=half_life, window=window, tuning=tuning)
        # Ties (a browse scores every hit alike) go newest first, then in file order.
        candidates.sort(
            key=lambda c: (-c.score, str(c.fields.get("path"))[::-1], int(c.fields.get("start_line", 0)))
        )
        candidates.sort(key=lambda c: (-round(c.score, 9), -_sort_day(c.fields)))
        return candidates

    def _block_scorer(self) -> BlockScorer | None:
        """The scorer of the current searcher (None: Whoosh's matchers must score this index)."""
        from vault_tools import index as ix
        from vault_tools.scorer import BlockScorer

        scorer = self._scorer
        if scorer is None or scorer.searcher is not self._searcher:
            fields = (ix.F_TEXT, ix.F_BEFORE, ix.F_AFTER, ix.F_SPEAKER, ix.F_SECTION, ix.F_TAGS)
            scorer = self._scorer = BlockScorer.for_searcher(self._searcher, fields, previous=scorer)
        return scorer

    def _score_in_blocks(
        self,
        scorer: BlockScorer,
        parts: Sequence[KeywordPart],
        filters: Filters,
        wide: Filters | None,
        pool: int,
        limit: int,
    ) -> dict[int, float]:
        """Docnum -> BM25F of the best ``pool`` hits in the window, then (``wide``) the best
        ``limit + 5`` without it, from one pass over the postings."""
        tuning = self.tuning
        clauses = keyword_clauses(parts, self._searcher)
        scores = scorer.scores(
            clauses, backoff_terms=tuning.context_terms, backoff_floor=tuning.context_floor
        )
        found = dict(scorer.top(scores, pool, filters.doc_filter(scorer)))
        if wide is not None:
            for docnum, score in scorer.top(scores, limit + 5, wide.doc_filter(scorer)):
                found.setdefault(docnum, score)
        return found

    def _score_with_matchers(
        self, keywords: Any, filters: Filters, wide: Filters | None, pool: int, limit: int
    ) -> dict[int, float]:
        """:meth:`_score_in_blocks` through Whoosh's own matchers (a document at a time).

        Every match is scored: Whoosh's collector swaps in cheaper matchers as its threshold
        rises, and ``AndNotMatcher.replace`` then drops an OR of many terms whose best single
        term is under the threshold (``CombinationMatcher.max_quality`` takes the max of the
        terms where a union's bound is their sum), losing the best multi-term hits.
        """
        found = dict(_top_hits(self._searcher, filters.restrict(keywords), pool))
        if wide is not None:
            for docnum, score in _top_hits(self._searcher, wide.restrict(keywords), limit + 5):
                found.setdefault(docnum, score)  # only strong outside matches can rank
        return found

    def _shape(
        self, ranked: list[_Candidate], limit: int, budget: int, explain: bool, warnings: list[str]
    ) -> list[Hit]:
        tuning = self.tuning
        # Collapse duplicates among the top of the list only: what can still be shown.
        head = collapse_duplicates(ranked[: limit * 2 + 5], tuning)
        hits: list[Hit] = []
        spent = 0
        left_out = 0
        for candidate in head[:limit]:
            hit = _to_hit(candidate, explain)
            cost = count_tokens(hit.text) + tuning.hit_overhead_tokens
            if spent + cost > budget:
                room = budget - spent - tuning.hit_overhead_tokens
                if room >= 24 or not hits:
                    hit = dataclasses.replace(hit, text=truncate_to_tokens(hit.text, max(room, 1)))
                    hits.append(hit)
                    spent += count_tokens(hit.text) + tuning.hit_overhead_tokens
                    left_out = len(head[:limit]) - len(hits)
                else:
                    left_out = len(head[:limit]) - len(hits)
                break
            hits.append(hit)
            spent += cost
        if left_out:
            warnings.append(
                f"{left_out} more result(s) left out to fit the token budget of {budget}; "
                "raise --max-tokens or narrow the query"
            )
        return hits


def _top_hits(searcher: Any, query: Any, limit: int) -> list[tuple[int, float]]:
    """The ``limit`` best (docnum, score) of ``query``, every match scored (see above)."""
    from whoosh.collectors import TopCollector

    collector = TopCollector(limit=limit, usequality=False, replace=0)
    searcher.search_with_collector(query, collector)
    return [(hit.docnum, float(hit.score)) for hit in collector.results()]


def _to_hit(candidate: _Candidate, explain: bool) -> Hit:
    stored = candidate.fields
    day = _day_of(stored)
    tags = [t for t in str(stored.get("tags") or "").split(",") if t]
    parts = dict(candidate.parts)
    parts["score"] = candidate.score
    return Hit(
        id=str(stored.get("id", "")),
        path=str(stored.get("path", "")),
        line=int(stored.get("start_line", 0)),
        end_line=int(stored.get("end_line", 0)),
        date=day.isoformat() if day else None,
        source=str(stored.get("kind", "note")),
        section=str(stored.get("section", "")),
        tags=tags,
        score=candidate.score,
        text=str(stored.get("text", "")),
        also_in=list(dict.fromkeys(candidate.also_in)),
        explain=parts if explain else None,
    )


def recall(
    config: Config,
    query: str,
    *,
    limit: int | None = None,
    since: str | dt.date | None = None,
    until: str | dt.date | None = None,
    tags: Sequence[str] = (),
    chat: str | None = None,
    max_tokens: int | None = None,
    as_of: dt.date | None = None,
    explain: bool = False,
    include_private: bool = False,
) -> RecallResult:
    """Find the entries of the vault that answer ``query``, best first.

    ``limit`` and ``max_tokens`` default to the config's ``[recall]`` settings, ``chat`` to
    ``recall.chat`` (``$VAULT_TOOLS_CHAT``, else ``direct``). ``since``/``until`` take a date or
    anything :func:`vault_tools.timewords.parse_when` reads (``2026-03-01``, ``7d``, ``last week``)
    and are hard limits. ``as_of`` is "today" for every relative date (default: today in the
    vault's timezone). ``explain`` adds each hit's score parts. ``#private`` entries are left out
    unless ``include_private`` (a person at this machine, direct chat only: they never go to a model). The index is caught up with the
    files first; ``stale`` is true when that was not possible. For many calls, keep a
    :class:`Recaller` instead.
    """
    with Recaller(config) as session:
        return session.recall(
            query,
            limit=limit,
            since=since,
            until=until,
            tags=tags,
            chat=chat,
            max_tokens=max_tokens,
            as_of=as_of,
            explain=explain,
            include_private=include_private,
        )
