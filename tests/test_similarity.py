"""The near-duplicate index: the same answers as the exhaustive check, with bounded work per query."""

from __future__ import annotations

import dataclasses
import datetime as dt
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vault_tools.curation import insights, similarity
from vault_tools.curation.insights import Rules
from vault_tools.notes import model as notes

ENGLISH = ["dark", "roast", "coffee", "tea", "billing", "PostgreSQL", "Maria", "prefers", "switched", "use"]
CHINESE = ["咖啡", "绿茶", "账单", "决定", "喜欢", "模块", "不再", "改用"]
WORDS = st.lists(st.sampled_from(ENGLISH + CHINESE + ["42", "7"]), min_size=0, max_size=9)
THRESHOLDS = st.builds(
    Rules,
    near_duplicate=st.sampled_from([0.5, 0.7, 0.75, 0.9, 1.0]),
    containment=st.sampled_from([0.5, 0.8, 0.9, 1.0]),
    related=st.sampled_from([0.2, 0.3, 0.5]),
)


def text_of(words: list[str]) -> str:
    # Chinese words run together (bigrams cross them), English ones are spaced: both as people write
    return "".join(w if w in CHINESE else f" {w} " for w in words)


def brute_force(
    query: frozenset[str], stored: dict[str, frozenset[str]], rules: Rules, *, near: bool
) -> set[str]:
    test = similarity.near_duplicate if near else similarity.related
    return {key for key, other in stored.items() if query and other and test(query, other, rules)}


@settings(max_examples=300, deadline=None)
@given(
    docs=st.lists(WORDS, min_size=1, max_size=25),
    queries=st.lists(WORDS, max_size=5),
    built_for=THRESHOLDS,
    asked=THRESHOLDS,
    interleave=st.integers(min_value=0, max_value=25),
)
def test_index_answers_exactly_what_the_exhaustive_check_answers(
    docs: list[list[str]], queries: list[list[str]], built_for: Rules, asked: Rules, interleave: int
) -> None:
    """Stored and new queries, English and Chinese, thresholds other than the index was made for,
    queries between adds: keys, scores and order as the exhaustive index, the set as brute force."""
    fast = similarity.SimilarityIndex(built_for)
    slow = similarity.ExhaustiveIndex()
    sets = {str(n): similarity.tokens(text_of(words)) for n, words in enumerate(docs)}
    probes = [similarity.tokens(text_of(words)) for words in queries]
    stored: dict[str, frozenset[str]] = {}
    for number, (key, token_set) in enumerate(sets.items()):
        fast.add(key, token_set)
        slow.add(key, token_set)
        stored[key] = token_set
        if number == interleave:  # a query before every set is in: prefixes are listed as sets come
            for probe in probes:
                assert fast.near(probe, asked) == slow.near(probe, asked)
    for probe in [*sets.values(), *probes]:
        for near in (True, False):
            answer = fast.near(probe, asked) if near else fast.related(probe, asked)
            assert answer == (slow.near(probe, asked) if near else slow.related(probe, asked))
            assert {key for key, _score in answer} == brute_force(probe, stored, asked, near=near)
    assert fast.truncated == 0
    assert fast.near_each(list(sets), asked) == {k: [o for o, _ in slow.near(sets[k], asked)] for k in sets}


def test_identical_texts_are_stored_once_and_all_found() -> None:
    index = similarity.SimilarityIndex()
    same = similarity.tokens("I prefer dark roast coffee over light roast")
    for n in range(500):
        index.add(f"k{n}", same)
    index.add("other", similarity.tokens("我更喜欢绿茶，不喝咖啡"))
    assert len(index.keys_of) == 2
    found = index.near(same, Rules())
    assert [key for key, _ in found] == sorted(f"k{n}" for n in range(500))
    assert {score for _, score in found} == {1.0}


def similar_line(rng: random.Random, number: int) -> str:
    if rng.random() < 0.5:
        tool = rng.choice(["PostgreSQL", "SQLite", "Redis", "Kafka", "pnpm", "Bun", "Vite"])
        return f"Decided to use {tool} for the {rng.choice(['billing', 'search', 'auth'])} service, ticket {number}."
    return f"决定以后{rng.choice(['账单', '导入', '搜索', '报表'])}模块都用 {rng.choice(['Redis', 'Kafka'])}，编号 {number}。"


def test_work_per_query_is_bounded_on_many_similar_texts() -> None:
    """Thousands of texts sharing most words: a query reads at most scan_cap sets per list it reads."""
    rng = random.Random(3)
    index = similarity.SimilarityIndex(Rules(), scan_cap=40)
    sets = [similarity.tokens(similar_line(rng, n)) for n in range(6000)]
    for number, token_set in enumerate(sets):
        index.add(str(number), token_set)
    for token_set in sets[::300]:
        lists_read = 2 * len(token_set) + 1
        assert len(index.candidates(token_set, Rules(), near=True)) <= lists_read * 40
        assert len(index.candidates(token_set, Rules(), near=False)) <= lists_read * 40
    assert index.truncated > 0
    # still finds near-duplicates among the sets it reads: the same ticket wording, another number
    query = similarity.tokens("Decided to use Redis for the auth service, ticket 99999.")
    assert len(index.near(query, Rules())) >= 5


def test_a_looser_containment_than_the_index_was_made_for_is_still_exact() -> None:
    index = similarity.SimilarityIndex(Rules(containment=0.9))
    small = similarity.tokens("billing service uses PostgreSQL daily")  # 5 tokens
    index.add("small", small)
    big = similarity.tokens("the billing service uses PostgreSQL daily and Redis nightly for caches")
    loose = Rules(containment=0.6, near_duplicate=0.95)
    assert [k for k, _ in index.near(big, loose)] == ["small"]
    assert index.near(big, Rules(containment=0.9, near_duplicate=0.95)) == [("small", 1.0)]


def entries_for(tmp_path: Path, lines: list[tuple[str, str]]) -> list[notes.Entry]:
    by_day: dict[str, list[str]] = {}
    for day, line in lines:
        by_day.setdefault(day, []).append(f"- {line}\n")
    found: list[notes.Entry] = []
    for day, body in sorted(by_day.items()):
        path = tmp_path / "memory" / f"{day}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"---\ndate: {day}\n---\n{''.join(body)}", encoding="utf-8")
        found += notes.read_note(path, tmp_path).entries
    return found


def insight_facts(found: list[insights.Insight]) -> list[tuple[object, ...]]:
    return [(i.text, i.category, i.score, i.rule, tuple(e.id for e in i.sources)) for i in found]


PHRASES = [
    "I prefer dark roast coffee over light roast",
    "I prefer dark roast coffee",
    "Decided to use PostgreSQL for the billing service",
    "Decided to switch billing from PostgreSQL to MySQL",
    "Lesson: always back up before a migration",
    "我更喜欢喝绿茶，不喝咖啡",
    "决定以后账单模块都用 PostgreSQL",
    "教训：发布之前一定要先备份",
    "Maria's partner Tom works at BMW in Munich",
]


@settings(max_examples=40, deadline=None)
@given(
    picks=st.lists(
        st.tuples(
            st.integers(0, 4), st.integers(0, len(PHRASES) - 1), st.sampled_from(["", " again", "，真的"])
        ),
        min_size=1,
        max_size=30,
    ),
    new_from=st.integers(0, 30),
)
def test_rules_insights_decide_as_with_the_exhaustive_search(
    tmp_path_factory: pytest.TempPathFactory, picks: list[tuple[int, int, str]], new_from: int
) -> None:
    """The heartbeat's grouping, repetition and sources are the same with either index."""
    tmp_path = tmp_path_factory.mktemp("vault")
    start = dt.date(2026, 11, 20)
    lines = [((start + dt.timedelta(days=d)).isoformat(), PHRASES[p] + tail) for d, p, tail in picks]
    rules = Rules()
    candidates = [insights.analyse(e, rules) for e in entries_for(tmp_path, lines)]
    window, new = candidates, candidates[min(new_from, len(candidates) - 1) :]
    fast, fast_scores = insights.rules_insights(new, window, rules)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(insights, "SimilarityIndex", similarity.ExhaustiveIndex)
        slow, slow_scores = insights.rules_insights(new, window, rules)
    assert insight_facts(fast) == insight_facts(slow)
    assert fast_scores == slow_scores


def test_thresholds_of_the_defaults_are_the_rules_defaults() -> None:
    defaults = similarity.SimilarityIndex().thresholds
    rules = Rules()
    assert (defaults.near_duplicate, defaults.containment, defaults.related) == (
        rules.near_duplicate,
        rules.containment,
        rules.related,
    )
    assert dataclasses.is_dataclass(defaults)
