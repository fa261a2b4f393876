"""Recall: find the entries that answer a question about the past, fast, within a chat's rights.

Design. A query goes through four steps, each in its own module.

1. *Reading the query* (:mod:`vault_tools.recall.query`): tags, the first time phrase as a *word window*
   (:mod:`vault_tools.recall.timewords`), keywords without stop and question words, or why it is noise.
   A query of nothing but filters ("yesterday", "#atlas") *browses*: every entry that passes the
   filters, newest and most important first.
2. *What a hit may be* (:mod:`vault_tools.recall.filters`): the chat's privacy rule, ``--since`` /
   ``--until``, the word window and the tags, applied inside the search before the top-k is taken.
3. *Ranking* (:mod:`vault_tools.recall.ranking`): the terms OR-ed over an entry's text, its neighbours'
   text, section, tags and speaker (BM25F, scored a term at a time by :mod:`vault_tools.index.scorer`,
   Whoosh's matchers the fallback), then ``bm25 × coordination × recency × importance × source ×
   window`` over the best :data:`Tuning.pool` hits.
   With ``[embeddings]`` configured (``--mode semantic|hybrid``), the entries most similar to the
   question within the same filters join the candidates (:mod:`vault_tools.recall.semantic`) and
   :mod:`vault_tools.recall.fusion` ranks them; when the endpoint fails the answer is the keyword
   one, with a warning, after at most ``query_timeout_seconds``.
4. *Shaping* (:mod:`vault_tools.recall.results`): near-duplicates collapse into the better hit, and hits
   are added in rank order while their estimated tokens fit ``max_tokens``.

This module runs the steps: :class:`Recaller` (a warm session) and :func:`recall` (one call).

Word windows. People write events down a day or two later ("…dinner last night"), and a time
word in a question does not always say when the answer was written ("the rent from July" was
noted in May). So a window read from the question is a ranking preference with a safety net,
not a plain filter (``window_mode="pad+rank"``): one search is filtered by the window padded by
:data:`Tuning.pad_before`/:data:`Tuning.pad_after` days, a second one by the hard limits only;
a hit ``d`` days outside the window keeps ``max(outside_floor, outside_window ** d)`` of its
score. On ``bench/retrieval_set.py`` this beats the exact window, padding alone and ranking
alone (see ``bench/recall_bench.py``). Explicit ``--since``/``--until`` are hard limits of both
searches and are never padded.

Warm use. :class:`Recaller` keeps one Whoosh searcher open across calls
(:class:`vault_tools.recall.warm.WarmSearcher`) and refreshes it when the index has new commits
(``s = s.refresh()``); the MCP server holds one. :func:`recall` is the one-shot form the CLI
uses: it catches the index up with the files first and says ``stale`` when it could not.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from vault_tools.config import Config
from vault_tools.errors import UsageError
from vault_tools.recall.filters import Filters, Window, filter_query, resolve_window
from vault_tools.recall.query import ParsedQuery, parse_query, vector_text
from vault_tools.recall.ranking import (
    Candidate,
    KeywordPart,
    demote_superseded,
    keyword_clauses,
    keyword_parts,
    keyword_query,
    lend_to_answers,
    matched_share,
    prefer_latest,
    prefer_open_tasks,
    rank_order,
    rescore,
    spread_days,
    term_weight,
)
from vault_tools.recall.results import Hit, RecallResult, highlight_spans, shape
from vault_tools.recall.semantic import SemanticBranch, checked_mode
from vault_tools.recall.tuning import DEFAULT_TUNING, Tuning
from vault_tools.recall.upcoming import ahead_described, items_ahead
from vault_tools.recall.warm import WarmSearcher

if TYPE_CHECKING:
    from vault_tools.index.index import Index
    from vault_tools.index.scorer import BlockScorer
    from vault_tools.privacy.rules import Chat
    from vault_tools.recall.fusion import Fusion

__all__ = [
    "DEFAULT_TUNING",
    "Hit",
    "RecallResult",
    "Recaller",
    "Tuning",
    "highlight_spans",
    "parse_query",
    "recall",
]


def _as_date(value: str | dt.date | None, as_of: dt.date, *, end: bool) -> dt.date | None:
    from vault_tools.recall.timewords import parse_when

    if value is None or isinstance(value, dt.date):
        return value
    if not value.strip():
        return None
    return parse_when(value, as_of, end=end)


def _described(
    chat: Chat,
    since: dt.date | None,
    until: dt.date | None,
    tags: tuple[str, ...],
    parsed: ParsedQuery,
    window: Window,
    tuning: Tuning,
) -> dict[str, Any]:
    """The filters a search applied, as ``--json`` reports them."""
    words = parsed.window
    return {
        "chat": chat,
        "since": since.isoformat() if since else None,
        "until": until.isoformat() if until else None,
        "tags": list(tags),
        "task": "open" if parsed.open_tasks and not parsed.terms else None,
        "time_phrase": words.phrase if words else None,
        "window": (
            {
                "since": words.since.isoformat() if words.since else None,
                "until": words.until.isoformat() if words.until else None,
                "searched_since": window.since.isoformat() if window.since else None,
                "searched_until": window.until.isoformat() if window.until else None,
                "mode": "weak" if window.weak else "vague" if window.vague else tuning.window_mode,
            }
            if words
            else None
        ),
        "keywords": list(parsed.terms),
    }


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
        fusion: Fusion | None = None,
    ) -> None:
        from vault_tools.index.index import Index

        self.config = config
        self.tuning = tuning
        self.semantic = SemanticBranch(config, fusion)
        self.warm = WarmSearcher(index if index is not None else Index(config), catch_up, self.semantic.close)
        self._used_mode = "keyword"

    def __enter__(self) -> Recaller:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.semantic.close()
        self.warm.close()

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
        mode: str | None = None,
    ) -> RecallResult:
        """See :func:`recall`."""
        from vault_tools.privacy.rules import parse_chat

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
        window = window_of(parsed, since_, until_, self.tuning)
        filters = _described(chat_, since_, until_, wanted_tags, parsed, window, self.tuning)
        filters.update(as_of=today.isoformat(), limit=limit_, max_tokens=budget)
        mode_ = checked_mode(mode, self.config.embeddings.configured)
        if self.config.embeddings.configured:
            filters["mode"] = mode_
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
        result.stale = self.warm.prepare(result.warnings, self.tuning)
        if parsed.ahead is not None:
            task = "open" if parsed.open_tasks else None
            fetch = self._fetcher(filter_query(chat_, None, None, wanted_tags, include_private, task))
            ahead = items_ahead(self.config, fetch, parsed, chat_, today, include_private)
            if ahead:
                filters["ahead"] = ahead_described(parsed.ahead)
                result.results = shape(
                    ahead, limit_, budget, explain, result.warnings, self.tuning, secrets=include_private
                )
                return result
            # Nothing dated then: what the notes say with those words, as for any question.
            parsed = parse_query(query, today, filtered=bool(tags or since_ or until_), look_ahead=False)
            window = window_of(parsed, since_, until_, self.tuning)
            filters.update(_described(chat_, since_, until_, wanted_tags, parsed, window, self.tuning))
            result.terms = list(parsed.terms)
        # "What is on my to-do list?" lists the open tasks; with a topic ("is renewing the car
        # insurance still on my list?") the line that says it was done answers too, so open tasks
        # only rank higher.
        task = "open" if parsed.open_tasks and not parsed.terms else None
        ranked = self._search(
            parsed, chat_, window, wanted_tags, today, limit_, include_private, mode_, result.warnings, task
        )
        if parsed.open_tasks and parsed.terms:
            ranked = prefer_open_tasks(ranked, self.tuning)
        if not ranked and parsed.terms and not task and window.shorter_than(self.tuning.event_match_days):
            # Nothing anywhere says those words: the entries of the time asked about (a day, a
            # week, a month, as for event time: a year's newest entries say nothing of it).
            browse = dataclasses.replace(parsed, terms=(), words=())
            asked = window.as_asked(since_, until_)
            ranked = self._search(browse, chat_, asked, wanted_tags, today, limit_, include_private)
            if ranked:
                result.warnings.append(nothing_said(parsed))
        if self.config.embeddings.configured and mode_ != "keyword":
            filters["mode"] = self._used_mode
            result.warnings.extend(self.semantic.warnings)
            self.semantic.warnings.clear()
        hits = shape(ranked, limit_, budget, explain, result.warnings, self.tuning, secrets=include_private)
        result.results = hits
        return result

    def _search(
        self,
        parsed: ParsedQuery,
        chat: Chat,
        window: Window,
        tags: Sequence[str],
        as_of: dt.date,
        limit: int,
        include_private: bool = False,
        mode: str = "keyword",
        warnings: list[str] | None = None,
        task: str | None = None,
    ) -> list[Candidate]:
        from vault_tools.index import documents as ix

        tuning = self.tuning
        searcher = self.warm.searcher
        parts = keyword_parts(parsed, tuning, searcher)
        self._used_mode = "keyword"
        query_vector = None
        if mode != "keyword" and parts:
            query_vector = self.semantic.query_vector(
                vector_text(parsed.focus_text or parsed.keywords or parsed.text, self.warm.speakers()),
                warnings if warnings is not None else [],
            )
        filters = filter_query(chat, window.since, window.until, tags, include_private, task)
        pool = max(tuning.pool, 2 * limit + 10)
        if not parts:
            results = searcher.search(
                filters.restrict(None), limit=max(tuning.browse_pool, limit), sortedby=ix.F_DAY, reverse=True
            )
            candidates = [Candidate(self.warm.lines.fix(dict(hit.fields())), 1.0) for hit in results]
            if window.core_since is not None and window.core_until is not None:
                candidates += self._period_summaries(filters, {hit.docnum for hit in results})
        else:
            wide = (
                filter_query(chat, window.wide_since, window.wide_until, tags, include_private, task)
                if window.wide
                else None
            )
            scorer = self.warm.block_scorer()
            every: dict[int, float] = {}
            if scorer is not None:
                found = self._score_in_blocks(scorer, parts, filters, wide, pool, limit, every)
            else:
                found = self._score_with_matchers(keyword_query(parts), filters, wide, pool, limit)
            cosines: dict[int, float] | None = None
            if query_vector is not None and scorer is not None:
                cosines = self.semantic.similar(
                    self.warm, scorer, query_vector, filters, wide, pool, limit, mode, found, every
                )
            candidates = [
                Candidate(self.warm.lines.fix(dict(searcher.stored_fields(d))), score)
                for d, score in found.items()
            ]
            # Only with candidates: Whoosh's idf takes log(0) in an empty index (a fresh `init`).
            weights = (
                {
                    t: max(float(searcher.idf(ix.F_TEXT, t)), 0.01) * term_weight(parsed, t, tuning)
                    for t in parsed.terms
                }
                if candidates
                else {}
            )
            for candidate in candidates:
                candidate.matched = matched_share(candidate.fields, weights)
        half_life = max(self.config.recall.half_life_days, 0.01)
        for candidate in candidates:
            rescore(
                candidate, as_of=as_of, half_life=half_life, window=window, tuning=tuning, question=parsed
            )
        if parts and cosines is not None:
            self.semantic.fuse(candidates, cosines, mode)
            self._used_mode = mode
        # Ties (a browse scores every hit alike) go newest first, then in file order.
        candidates.sort(
            key=lambda c: (-c.score, str(c.fields.get("path"))[::-1], int(c.fields.get("start_line", 0)))
        )
        candidates.sort(key=rank_order)
        if parts:
            demote_superseded(candidates, tuning)
            candidates.sort(key=rank_order)
            if parsed.present:
                candidates = prefer_latest(candidates, parsed.terms, tuning)
            candidates = lend_to_answers(candidates, self._fetcher(filters), tuning, replies=parsed.reaction)
            if parsed.across_days:
                candidates = spread_days(candidates, tuning)
            elif parsed.several:
                candidates = spread_days(candidates, tuning, tuning.several_day_repeat)
        return candidates

    def _period_summaries(self, filters: Filters, seen: set[int]) -> list[Candidate]:
        """The summaries within a browsed window (a busy week has more entries than the browse
        pool, and its summary must compete however many there are)."""
        from whoosh.query import Term

        from vault_tools.index import documents as ix

        results = self.warm.searcher.search(filters.restrict(Term(ix.F_KIND, "summary")), limit=None)
        return [
            Candidate(self.warm.lines.fix(dict(hit.fields())), 1.0)
            for hit in results
            if hit.docnum not in seen
        ]

    def _fetcher(self, filters: Filters) -> Callable[[str], dict[str, Any] | None]:
        """The stored fields of an entry by id, None when it is gone or ``filters`` leave it out."""
        searcher = self.warm.searcher
        scorer = self.warm.block_scorer()
        doc_filter = filters.doc_filter(scorer) if scorer is not None else None

        def fetch(entry_id: str) -> dict[str, Any] | None:
            docnum = searcher.document_number(id=entry_id)
            if docnum is None:
                return None
            if scorer is not None and doc_filter is not None:
                if not scorer.passes(docnum, doc_filter):
                    return None
            elif not searcher.search(filters.restrict(_id_query(entry_id)), limit=1):
                return None
            return self.warm.lines.fix(dict(searcher.stored_fields(docnum)))

        return fetch

    def _score_in_blocks(
        self,
        scorer: BlockScorer,
        parts: Sequence[KeywordPart],
        filters: Filters,
        wide: Filters | None,
        pool: int,
        limit: int,
        every: dict[int, float] | None = None,
    ) -> dict[int, float]:
        """Docnum -> BM25F of the best ``pool`` hits in the window, then (``wide``) the best
        ``limit + 5`` without it, from one pass over the postings (all of them into ``every``)."""
        tuning = self.tuning
        clauses = keyword_clauses(parts, self.warm.searcher)
        scores = scorer.scores(
            clauses, backoff_terms=tuning.context_terms, backoff_floor=tuning.context_floor
        )
        if every is not None:
            every.update(scores)
        found = dict(scorer.top(scores, pool, filters.doc_filter(scorer)))
        if wide is not None:
            for docnum, score in scorer.top(
                scores, max(tuning.wide_pool, limit + 5), wide.doc_filter(scorer)
            ):
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
        found = dict(_top_hits(self.warm.searcher, filters.restrict(keywords), pool))
        if wide is not None:
            for docnum, score in _top_hits(
                self.warm.searcher, wide.restrict(keywords), max(self.tuning.wide_pool, limit + 5)
            ):
                found.setdefault(docnum, score)  # only strong outside matches can rank
        return found


def window_of(parsed: ParsedQuery, since: dt.date | None, until: dt.date | None, tuning: Tuning) -> Window:
    """The dates a search of ``parsed`` may return and ranks by (:func:`resolve_window`)."""
    return resolve_window(since, until, parsed.window, tuning, weak=parsed.long, vague=parsed.vague)


def nothing_said(parsed: ParsedQuery) -> str:
    """The warning of a search whose words no entry holds, answered with the entries of its time."""
    phrase = parsed.window.phrase if parsed.window else ""
    return (
        f"no entry says {', '.join(parsed.terms)}; these are the entries of {phrase!r}, newest first "
        "(ask with other words to narrow them)"
    )


def _id_query(entry_id: str) -> Any:
    from whoosh.query import Term

    from vault_tools.index import documents as ix

    return Term(ix.F_ID, entry_id)


def _top_hits(searcher: Any, query: Any, limit: int) -> list[tuple[int, float]]:
    """The ``limit`` best (docnum, score) of ``query``, every match scored (see above)."""
    from whoosh.collectors import TopCollector

    collector = TopCollector(limit=limit, usequality=False, replace=0)
    searcher.search_with_collector(query, collector)
    return [(hit.docnum, float(hit.score)) for hit in collector.results()]


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
    mode: str | None = None,
) -> RecallResult:
    """Find the entries of the vault that answer ``query``, best first.

    ``limit`` and ``max_tokens`` default to the config's ``[recall]`` settings, ``chat`` to
    ``recall.chat`` (``$VAULT_TOOLS_CHAT``, else ``direct``). ``since``/``until`` take a date or
    anything :func:`vault_tools.recall.timewords.parse_when` reads (``2026-03-01``, ``7d``, ``last week``)
    and are hard limits. ``as_of`` is "today" for every relative date (default: today in the
    vault's timezone). ``explain`` adds each hit's score parts. ``#private`` entries are left out
    unless ``include_private`` (a person at this machine, direct chat only: they never go to a model).
    ``mode`` is ``keyword``, ``semantic`` or ``hybrid`` (the default when ``[embeddings]`` is
    configured, else ``keyword``; the other two need it). The index is caught up with the
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
            mode=mode,
        )
