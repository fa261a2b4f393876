"""Fusion: one ranking from the keyword score and the vector similarity of each candidate.

Recall's candidates are the best keyword hits and the most similar entries, both within the same
filters. Each gets both signals: its keyword score (BM25F x coordination x the priors of
:func:`vault_tools.ranking.rescore`; 0 when no query word is in it) and its *semantic* score, the
cosine of its vector with the question's times the same priors (recency, importance, source, the
word window), so a time phrase ranks vector hits as it ranks keyword hits.

``hybrid`` fuses the two linearly: ``0.8 x keyword / best keyword + 0.2 x semantic / best
semantic`` over the question's candidates, where an entry's similarity is at least 0.9 x that of
a neighbour (the two entries before and after it in its file and section, within the same privacy
boundary as the keyword neighbours): in notes and conversations the line after a question answers
it in other words. Chosen on ``bench/embeddings_bench.py`` with all-MiniLM-L6-v2. LoCoMo dev half,
R@10 of all 997 questions (keyword alone 0.782): reciprocal-rank fusion (k = 60) 0.680, RRF with
neighbours 0.743, linear 0.8 0.788, linear 0.7 with neighbours 0.797, linear 0.8 with
neighbours 0.805. Our own set, R@10 of its Chinese questions (keyword 0.954): linear 0.7 with
neighbours 0.941, linear 0.8 with neighbours 0.954 (MiniLM is an English model). 0.8 with the
neighbours is the best mix that is no more than 0.01 below the keywords on any slice of either
set (the README has the tables). RRF gives a retriever much weaker
than the keywords an equal say in every question; the linear mix lets the vectors break ties and
bring in paraphrases without pushing out what the words found.
``semantic`` ranks by the semantic score alone (the neighbours included).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vault_tools.ranking import Candidate

__all__ = ["DEFAULT_FUSION", "MODES", "Fusion", "fuse"]

MODES = ("keyword", "semantic", "hybrid")


@dataclass(frozen=True)
class Fusion:
    """How ``hybrid`` combines the two signals (``bench/embeddings_bench.py`` sweeps these)."""

    method: str = "linear"  # "linear" | "rrf"
    rrf_k: float = 60.0
    keyword_weight: float = 0.8  # linear: the keyword share of the mix
    semantic_weight: float = 1.0  # rrf: the semantic list's weight (the keyword list's is 1)
    neighbour_weight: float = 0.9  # an entry's similarity is at least this x its neighbours' (0: off)


DEFAULT_FUSION = Fusion()


def _priors(candidate: Candidate) -> float:
    parts = candidate.parts
    product = 1.0
    for name in ("recency", "importance", "source", "window"):
        product *= parts.get(name, 1.0)
    return product


def _ranks(values: Sequence[float]) -> list[int | None]:
    """1-based rank of each positive value (ties by position), None for the rest."""
    order = sorted((i for i, v in enumerate(values) if v > 0), key=lambda i: (-values[i], i))
    ranks: list[int | None] = [None] * len(values)
    for rank, i in enumerate(order, start=1):
        ranks[i] = rank
    return ranks


def fuse(candidates: Sequence[Candidate], cosines: Sequence[float | None], mode: str, fusion: Fusion) -> None:
    """Set ``score`` and ``parts`` of each candidate (already rescored by keywords) for ``mode``."""
    keyword = [c.score for c in candidates]
    semantic = [max(cos or 0.0, 0.0) * _priors(c) for c, cos in zip(candidates, cosines, strict=True)]
    if mode == "semantic":
        fused = semantic
    elif fusion.method == "linear":
        top_k, top_s = max(keyword, default=0.0) or 1.0, max(semantic, default=0.0) or 1.0
        w = fusion.keyword_weight
        fused = [w * k / top_k + (1 - w) * s / top_s for k, s in zip(keyword, semantic, strict=True)]
    else:
        k_ranks, s_ranks = _ranks(keyword), _ranks(semantic)
        fused = [
            (1 / (fusion.rrf_k + kr) if kr else 0.0)
            + (fusion.semantic_weight / (fusion.rrf_k + sr) if sr else 0.0)
            for kr, sr in zip(k_ranks, s_ranks, strict=True)
        ]
    for candidate, cos, kw, sem, score in zip(candidates, cosines, keyword, semantic, fused, strict=True):
        candidate.parts = {
            **candidate.parts,
            "keyword": kw,
            "cosine": cos if cos is not None else 0.0,
            "semantic": sem,
        }
        candidate.score = score
