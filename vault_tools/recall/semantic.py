"""The semantic side of a search: the question's vector and the entries nearest it.

With ``[embeddings]`` configured (``--mode semantic|hybrid``), the entries most similar to the
question within the same filters join the keyword candidates, and
:mod:`vault_tools.recall.fusion` ranks them (the vectors: :mod:`vault_tools.vectors.search`). When
the endpoint fails the answer is the keyword one, with a warning.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vault_tools.errors import UsageError

if TYPE_CHECKING:
    from vault_tools.config import Config
    from vault_tools.index.scorer import BlockScorer
    from vault_tools.recall.filters import Filters
    from vault_tools.recall.fusion import Fusion
    from vault_tools.recall.ranking import Candidate
    from vault_tools.recall.warm import WarmSearcher
    from vault_tools.vectors.search import SemanticSearch

__all__ = ["SemanticBranch", "checked_mode"]


def checked_mode(mode: str | None, configured: bool) -> str:
    """The search mode to use: ``mode`` as asked (checked), else hybrid when embeddings are configured."""
    if mode is None:
        return "hybrid" if configured else "keyword"
    from vault_tools.recall.fusion import MODES

    if mode not in MODES:
        raise UsageError(f"--mode must be one of {', '.join(MODES)}, got {mode!r}")
    if mode != "keyword" and not configured:
        raise UsageError(
            f"--mode {mode} needs an embeddings endpoint: set [embeddings] model (and base_url) "
            "in .vault-tools/config.toml (see docs/semantic-recall.md)"
        )
    return mode


class SemanticBranch:
    """The embeddings client and vectors of a warm session, opened on first use.

    ``warnings`` gathers what the vector side had to say (the caller drains it into the result).
    """

    def __init__(self, config: Config, fusion: Fusion | None) -> None:
        self.config = config
        self.fusion = fusion
        self._search: SemanticSearch | None = None

    @property
    def warnings(self) -> list[str]:
        return self._search.warnings if self._search is not None else []

    def close(self) -> None:
        if self._search is not None:
            self._search.close()
            self._search = None

    def query_vector(self, text: str, warnings: list[str]) -> list[float] | None:
        """The question's vector, or None with a warning saying why these are keyword results."""
        from vault_tools.vectors.search import SemanticSearch

        if self._search is None:
            self._search = SemanticSearch(self.config)
        vector, problem = self._search.query_vector(text)
        if problem is not None:
            warnings.append(f"semantic search skipped: {problem}; these are keyword results")
        return vector

    def similar(
        self,
        warm: WarmSearcher,
        scorer: BlockScorer,
        query_vector: list[float],
        filters: Filters,
        wide: Filters | None,
        pool: int,
        limit: int,
        mode: str,
        found: dict[int, float],
        every: dict[int, float],
    ) -> dict[int, float] | None:
        """Add the most similar entries within the filters to ``found`` (their BM25F from
        ``every``, 0 without a query word); docnum -> cosine of every candidate, in ``found``'s order.
        None when there are no vectors to search (a warning says why)."""
        from vault_tools.recall.fusion import DEFAULT_FUSION
        from vault_tools.vectors.cache import deleted_docs

        assert self._search is not None
        try:
            vectors = self._search.index()
        except ImportError:
            self._search.warnings.append(
                "semantic search needs numpy: pip install 'vault-tools[embeddings]'; these are keyword results"
            )
            return None
        searcher = warm.searcher
        sims = vectors.similarities(searcher, query_vector, warm.lines)
        fusion = self.fusion or DEFAULT_FUSION
        if fusion.neighbour_weight > 0:
            sims = vectors.with_neighbours(searcher, sims, fusion.neighbour_weight, warm.lines)
        deleted = deleted_docs(searcher)
        if mode == "semantic":
            found.clear()
        near = vectors.top(sims, scorer, filters.doc_filter(scorer), deleted, pool)
        if wide is not None:
            near += vectors.top(sims, scorer, wide.doc_filter(scorer), deleted, limit + 5)
        for docnum, _cosine in near:
            found.setdefault(docnum, every.get(docnum, 0.0))
        return {d: (float(sims[d]) if sims[d] == sims[d] else 0.0) for d in found}

    def fuse(self, candidates: list[Candidate], cosines: dict[int, float], mode: str) -> None:
        """Rank ``candidates`` by their keyword score and ``cosines`` together (:mod:`fusion`)."""
        from vault_tools.recall.fusion import DEFAULT_FUSION, fuse

        fuse(candidates, list(cosines.values()), mode, self.fusion or DEFAULT_FUSION)
