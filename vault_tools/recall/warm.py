"""A warm searcher: one Whoosh searcher kept open over an index across recall calls.

It catches the index up with the files when due (``catch_up``), refreshes the searcher when the
index has new commits (``s = s.refresh()``), opens it again when a rebuild swapped the index, and
keeps what is worth keeping per searcher: the term-at-a-time scorer
(:class:`vault_tools.index.scorer.BlockScorer`) and the names that say entries. The line table
(where entries whose documents were kept are now) is refreshed with it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vault_tools.index.index import Index
    from vault_tools.index.scorer import BlockScorer
    from vault_tools.recall.tuning import Tuning

__all__ = ["WarmSearcher"]


class WarmSearcher:
    """The searcher of one index, kept current; see :class:`vault_tools.recall.recall.Recaller`
    for what ``catch_up`` means. ``on_change`` runs when catching up changed the index (the
    searcher is then opened again)."""

    def __init__(self, index: Index, catch_up: str | float, on_change: Callable[[], None]) -> None:
        from vault_tools.index.lines import LineTable

        self.index = index
        self.catch_up = catch_up
        self.lines = LineTable(index.dir)  # where entries whose documents were kept are now
        self.searcher: Any = None
        self._on_change = on_change
        self._scorer: BlockScorer | None = None
        self._speaker_names: tuple[Any, list[str]] | None = None  # (searcher, who says entries)
        self._last_catch_up = -math.inf
        self._stale_reason: str | None = None

    def close(self) -> None:
        self._scorer = None
        searcher, self.searcher = self.searcher, None
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

    def prepare(self, warnings: list[str], tuning: Tuning) -> bool:
        """Catch up (when due) and make :attr:`searcher` current; True when results may be stale."""
        stale = False
        if self._due():
            report = self.index.ensure_current()
            self._last_catch_up = time.monotonic()
            warnings.extend(report.warnings)
            self._stale_reason = report.stale_reason if report.stale else None
            if report.changed or report.rebuilt:
                self.close()
                self._on_change()
        if self._stale_reason:
            stale = True
            warnings.append(f"results may be stale: {self._stale_reason}")
        if self.searcher is not None:
            try:
                self.searcher = self.searcher.refresh()
            except Exception:  # the index was swapped by a rebuild: open it again
                self.close()
                self._on_change()
        if self.searcher is None:
            from whoosh.scoring import BM25F

            self.searcher = self.index.open_searcher()
            # Whoosh reads the weighting from the top searcher for every query (refresh keeps it).
            self.searcher.weighting = BM25F(B=tuning.bm25_b, K1=tuning.bm25_k1)
        self.lines.refresh()  # after the searcher: a table newer than it moves nothing wrongly
        return stale

    def block_scorer(self) -> BlockScorer | None:
        """The scorer of the current searcher (None: Whoosh's matchers must score this index)."""
        from vault_tools.index import documents as ix
        from vault_tools.index.scorer import BlockScorer

        scorer = self._scorer
        if scorer is None or scorer.searcher is not self.searcher:
            fields = (ix.F_TEXT, ix.F_BEFORE, ix.F_AFTER, ix.F_SPEAKER, ix.F_SECTION, ix.F_TAGS)
            scorer = self._scorer = BlockScorer.for_searcher(self.searcher, fields, previous=scorer)
        return scorer

    def speakers(self) -> list[str]:
        """Who says entries in this index ("**Name**: ..."), as the speaker field holds them."""
        from vault_tools.index import documents as ix

        searcher = self.searcher
        if self._speaker_names is None or self._speaker_names[0] is not searcher:
            names = [str(t) for t in searcher.reader().field_terms(ix.F_SPEAKER)]
            self._speaker_names = (searcher, names)
        return self._speaker_names[1]
