"""What a recall hit may be: the chat's privacy rule, the date limits and word window, the tags,
and for a question about what is still to do, open tasks only.

The rule of a chat (:func:`vault_tools.privacy.rules.visible_in` decides each kind x visibility pair)
and the dates and tags are applied inside the search, before the top-k is taken, never to a
top-k afterwards: as index queries for Whoosh's matchers (:meth:`Filters.restrict`) and as sets
of document numbers and a ``day`` range for the block scorer (:meth:`Filters.doc_filter`).
A time phrase in the question is a *word window*: the search is limited to it padded by a few
days, and a second search without it lets strong matches outside compete (:func:`resolve_window`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vault_tools.index.scorer import BlockScorer, DocFilter
    from vault_tools.privacy.rules import Chat
    from vault_tools.recall.timewords import DateWindow
    from vault_tools.recall.tuning import Tuning

__all__ = ["Filters", "Window", "and_not", "filter_query", "privacy_parts", "require", "resolve_window"]


def privacy_parts(chat: Chat, include_private: bool = False) -> tuple[Any, Any]:
    """(what a hit must match, what it must not match) for ``chat``; either may be None.

    :func:`vault_tools.privacy.rules.visible_in` decides every kind x visibility pair. When most pairs
    are allowed (a direct chat: all but ``#private``) the rule is applied as an exclusion of the
    few denied ones, which costs a rare term's postings instead of intersecting every document.
    """
    from whoosh.query import And, NullQuery, Or, Term

    from vault_tools.index import documents as ix
    from vault_tools.privacy.rules import ENTRY_KINDS, VISIBILITIES, visible_in

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


def require(scored: Any, required: Any) -> Any:
    """``scored`` restricted to documents that match ``required``, scored by ``scored`` alone.

    Whoosh's own ``Require`` trips an assertion in ``RequireMatcher.skip_to_quality`` when the
    block-quality skip lands both sides on the same document; this one checks first
    (:func:`vault_tools.index.whoosh_private.safe_require`).
    """
    from vault_tools.index import whoosh_private

    return whoosh_private.safe_require(scored, required)


def and_not(positive: Any, negative: Any) -> Any:
    """``positive`` without the documents of ``negative``, scored by ``positive`` alone.

    Whoosh's ``AndNotMatcher`` lets the first positive match through unchecked (it only compares
    the two sides when they start on the same document) and reads the id of an exhausted positive
    matcher after a block-quality skip (IndexError); this one fixes both
    (:func:`vault_tools.index.whoosh_private.safe_and_not`).
    """
    from vault_tools.index import whoosh_private

    return whoosh_private.safe_and_not(positive, negative)


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
    weak: bool = False  # the window of a long query: it ranks a little and never filters
    vague: bool = False  # "recently" / "最近" alone: it ranks (recency counts) and never filters

    @property
    def empty(self) -> bool:
        return self.since is not None and self.until is not None and self.since > self.until

    def shorter_than(self, days: int) -> bool:
        """Whether the word window is a closed period of fewer than ``days`` days."""
        lo, hi = self.core_since, self.core_until
        return lo is not None and hi is not None and (hi - lo).days < days

    def as_asked(self, since: dt.date | None, until: dt.date | None) -> Window:
        """The word window as read, unpadded and with no second search, within the hard limits."""
        return replace(
            self,
            since=_later(since, self.core_since),
            until=_earlier(until, self.core_until),
            wide=False,
        )


def resolve_window(
    since: dt.date | None,
    until: dt.date | None,
    words: DateWindow | None,
    tuning: Tuning,
    *,
    weak: bool = False,
    vague: bool = False,
) -> Window:
    """Combine hard ``--since/--until`` with the word window under ``tuning.window_mode``.

    ``weak``: the window of a long query (the dialogue so far), which ranks and never filters.
    ``vague``: the window is only "recently" / "最近", which has no bounds of its own: it ranks
    (by :attr:`Tuning.vague_outside_window`) and never filters.
    """
    if words is None:
        return Window(since, until)
    core_since, core_until = words.since, words.until
    if weak:
        return Window(since, until, core_since, core_until, weak=True)
    if vague:
        return Window(since, until, core_since, core_until, vague=True)
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
    task: str | None = None  # "open": only tasks still to do ("what is still on my list?")

    @property
    def required(self) -> Any:
        """The privacy rule, the dates, the tags and the task state as one query; None when none."""
        from whoosh.query import And

        from vault_tools.index import documents as ix

        parts = [q for q in (self.privacy, ix.date_filter(self.since, self.until)) if q is not None]
        parts += [ix.tag_filter(tag) for tag in self.tags]
        parts += self._task_filters()
        return None if not parts else parts[0] if len(parts) == 1 else And(parts)

    def _task_filters(self) -> list[Any]:
        from whoosh.query import Term

        from vault_tools.index import documents as ix

        return [Term(ix.F_TASK, self.task)] if self.task else []

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
        from vault_tools.index import documents as ix
        from vault_tools.index.scorer import DocFilter

        excluded = scorer.matching(self.excluded) if self.excluded is not None else frozenset()
        required: frozenset[int] | None = None
        for query in [self.privacy, *(ix.tag_filter(tag) for tag in self.tags), *self._task_filters()]:
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
    task: str | None = None,
) -> Filters:
    """The privacy rule of ``chat``, the date window, the tags and the task state, as index queries."""
    required, excluded = privacy_parts(chat, include_private)
    return Filters(required, excluded, since, until, tuple(tags), task)
