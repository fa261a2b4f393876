"""fusion: the keyword and semantic scores of each candidate become one ranking."""

from __future__ import annotations

import pytest

from vault_tools.recall.fusion import DEFAULT_FUSION, Fusion, fuse
from vault_tools.recall.ranking import Candidate


def candidate(keyword: float, recency: float = 1.0) -> Candidate:
    c = Candidate({"path": "memory/2026-03-01.md"}, keyword)
    c.score = keyword * recency
    c.parts = {"bm25": keyword, "recency": recency, "importance": 1.0, "source": 1.0, "window": 1.0}
    return c


def test_hybrid_mixes_the_max_normalised_scores_with_the_keywords_leading() -> None:
    words, meaning, both = candidate(10.0), candidate(0.0), candidate(5.0)
    fuse([words, meaning, both], [0.1, 0.8, 0.4], "hybrid", Fusion(keyword_weight=0.8, spread=False))
    assert words.score == pytest.approx(0.8 + 0.2 * 0.1 / 0.8)
    assert meaning.score == pytest.approx(0.2)
    assert both.score == pytest.approx(0.8 * 0.5 + 0.2 * 0.5)
    assert words.parts["keyword"] == 10.0 and meaning.parts["cosine"] == 0.8


def test_hybrid_measures_cosines_from_the_lowest_candidates_so_a_weak_match_adds_nothing() -> None:
    words, meaning, both = candidate(10.0), candidate(0.0), candidate(5.0)
    fuse([words, meaning, both], [0.1, 0.8, 0.4], "hybrid", Fusion(keyword_weight=0.7))
    assert words.score == pytest.approx(0.7)  # the lowest cosine: no semantic share at all
    assert meaning.score == pytest.approx(0.3)
    assert both.score == pytest.approx(0.7 * 0.5 + 0.3 * 0.3 / 0.7)
    assert meaning.parts["cosine"] == 0.8 and meaning.parts["semantic"] == pytest.approx(0.7)


def test_the_vectors_get_a_larger_share_when_they_single_out_an_entry() -> None:
    standout, *rest = [candidate(0.0)] + [candidate(1.0) for _ in range(9)]
    fuse([standout, *rest], [0.7] + [0.3] * 9, "hybrid", DEFAULT_FUSION)  # 3.3 deviations over
    assert standout.score == pytest.approx(1 - DEFAULT_FUSION.sure_keyword_weight)
    assert rest[0].score == pytest.approx(DEFAULT_FUSION.sure_keyword_weight)
    spread_out = [candidate(0.0)] + [candidate(1.0) for _ in range(9)]
    fuse(spread_out, [0.7, 0.65, 0.6, 0.55, 0.5, 0.45, 0.4, 0.35, 0.3, 0.3], "hybrid", DEFAULT_FUSION)
    assert spread_out[0].score == pytest.approx(1 - DEFAULT_FUSION.keyword_weight)


def test_an_entry_without_a_vector_does_not_lower_the_floor() -> None:
    private, near, far = candidate(1.0), candidate(1.0), candidate(1.0)
    fuse([private, near, far], [None, 0.5, 0.3], "hybrid", Fusion(keyword_weight=0.5))
    assert private.score == far.score == pytest.approx(0.5)
    assert near.score == pytest.approx(1.0)


def test_semantic_ranks_by_cosine_times_the_same_priors() -> None:
    old, new = candidate(9.0, recency=0.5), candidate(0.0, recency=1.0)
    fuse([old, new], [0.9, 0.6], "semantic", DEFAULT_FUSION)
    assert old.score == pytest.approx(0.45) and new.score == pytest.approx(0.6)


def test_an_entry_without_a_vector_or_with_a_negative_cosine_gets_no_semantic_part() -> None:
    none, negative = candidate(1.0), candidate(1.0)
    fuse([none, negative], [None, -0.3], "hybrid", DEFAULT_FUSION)
    assert none.parts["semantic"] == negative.parts["semantic"] == 0.0
    assert none.score == negative.score == pytest.approx(DEFAULT_FUSION.keyword_weight)


def test_reciprocal_rank_fusion_adds_the_inverse_ranks() -> None:
    first, second = candidate(2.0), candidate(1.0)
    fuse([first, second], [0.2, 0.9], "hybrid", Fusion(method="rrf", rrf_k=60))
    assert first.score == pytest.approx(1 / 61 + 1 / 62)
    assert second.score == pytest.approx(1 / 62 + 1 / 61)
