"""Fusion: one ranking from the keyword score and the vector similarity of each candidate.

Recall's candidates are the best keyword hits and the most similar entries, both within the same
filters. Each gets both signals: its keyword score (BM25F x coordination x the priors of
:func:`vault_tools.recall.ranking.rescore`; 0 when no query word is in it) and its *semantic* score, the
cosine of its vector with the question's times the same priors (recency, importance, source, the
word window), so a time phrase ranks vector hits as it ranks keyword hits.

``hybrid`` fuses the two linearly: ``0.7 x keyword / best keyword + 0.3 x semantic / best
semantic`` over the question's candidates, or 0.6 and 0.4 when the vectors single out an entry
(the best cosine 2.5 standard deviations or more above the candidates' median,
:func:`_vectors_sure`). The semantic score starts from the cosine *above the lowest cosine among
the candidates* (:func:`_spread`): a sentence model's cosines crowd into a narrow band, and
measured from zero an unrelated candidate kept half the semantic share. An entry's similarity is
at least 0.9 x that of a neighbour (the two entries before and after it in its file and section,
within the same privacy boundary as the keyword neighbours): in notes and conversations the line
after a question answers it in other words.

Chosen on ``bench/embeddings_bench.py`` with all-MiniLM-L6-v2, each entry embedded after the turn
before it, the question without the names of who says entries
(:func:`vault_tools.recall.query.vector_text`). LoCoMo dev half, R@10 of all 997 questions (keyword alone
0.801): 0.7 always 0.821, 0.6 always 0.826, 0.7 or 0.6 when sure 0.825; cosine / best at 0.8 (the
last release's mix) 0.814; reciprocal-rank fusion (k = 60) 0.781. Our own set (keyword 0.964,
Chinese 0.954): 0.7 always and 0.7 or 0.6 when sure 0.980, Chinese 0.967; 0.6 always 0.974,
Chinese 0.954, and its keyword-style slice below the keywords'. MiniLM is an English model: its
cosines single out an entry for 67 of our set's 98 English questions and 22 of its 76 Chinese
ones, so the sure rule mostly keeps the keywords' larger share where the model reads poorly.
RRF gives a retriever much weaker than the keywords an equal say in every question; the linear
mix lets the vectors break ties and bring in paraphrases without pushing out what the words found.
``semantic`` ranks by the semantic score alone (the neighbours included).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vault_tools.recall.ranking import Candidate

__all__ = ["DEFAULT_FUSION", "MODES", "Fusion", "fuse"]

MODES = ("keyword", "semantic", "hybrid")


@dataclass(frozen=True)
class Fusion:
    """How ``hybrid`` combines the two signals (``bench/embeddings_bench.py`` sweeps these)."""

    method: str = "linear"  # "linear" | "rrf"
    rrf_k: float = 60.0
    keyword_weight: float = 0.7  # linear: the keyword share of the mix
    sure_keyword_weight: float = 0.6  # ... when the vectors single out an entry (see _vectors_sure)
    sure_z: float = 2.5  # ... that is, when the best cosine is this many deviations over the median
    spread: bool = True  # linear: cosines measured from the candidates' lowest (see _spread)
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


def _spread(cosines: Sequence[float | None]) -> list[float]:
    """Each cosine above the lowest cosine among the candidates that have a vector (0 without one).

    A sentence model's cosines sit in a narrow band (all-MiniLM-L6-v2: 0.1-0.6 for anything in a
    vault), so divided by the best alone even an unrelated candidate keeps half the semantic share
    and the vector side adds mostly noise. Measured from the floor, the band spreads over 0-1 like
    the keyword side does."""
    known = [max(c, 0.0) for c in cosines if c is not None]
    floor = min(known) if len(known) > 1 else 0.0
    return [max(c - floor, 0.0) if c is not None else 0.0 for c in cosines]


def _vectors_sure(cosines: Sequence[float | None], z: float) -> bool:
    """Whether the best cosine stands ``z`` standard deviations or more above the candidates' median.

    A model that reads the question well singles out a few entries; one that does not (MiniLM on
    a Chinese question) gives every candidate about the same cosine. Measured in deviations, the
    rule does not depend on where a model's cosines sit."""
    known = sorted(c for c in cosines if c is not None)
    if len(known) < 3 or z <= 0:
        return False
    deviation = statistics.pstdev(known)
    return deviation > 0 and (known[-1] - known[len(known) // 2]) / deviation >= z


def fuse(candidates: Sequence[Candidate], cosines: Sequence[float | None], mode: str, fusion: Fusion) -> None:
    """Set ``score`` and ``parts`` of each candidate (already rescored by keywords) for ``mode``."""
    keyword = [c.score for c in candidates]
    linear = mode != "semantic" and fusion.method == "linear"
    lifted = _spread(cosines) if linear and fusion.spread else [max(c or 0.0, 0.0) for c in cosines]
    semantic = [s * _priors(c) for s, c in zip(lifted, candidates, strict=True)]
    if mode == "semantic":
        fused = semantic
    elif linear:
        top_k, top_s = max(keyword, default=0.0) or 1.0, max(semantic, default=0.0) or 1.0
        w = fusion.keyword_weight
        if _vectors_sure(cosines, fusion.sure_z):
            w = fusion.sure_keyword_weight
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
