"""scorer: the block scorer returns what Whoosh's own matchers return, hit for hit.

The vault is generated (seeded): English and Chinese words with repeats (term frequencies above
one), sections and tags, private and shared entries, 80 days. It is indexed in several commits
with edits and deletions between them, so the searcher has several segments with deleted
documents. Every query then runs through both paths of ``Recaller._search`` under each chat, with
and without a time window, and the top-k must be the same documents with the same scores.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import random
from collections.abc import Iterator

import pytest
from helpers import write

from vault_tools.config import Config, load_config
from vault_tools.index import documents as index_documents
from vault_tools.index.index import Index
from vault_tools.index.scorer import BlockScorer, Clause, DocFilter
from vault_tools.recall.filters import filter_query, resolve_window
from vault_tools.recall.query import parse_query
from vault_tools.recall.ranking import keyword_parts, keyword_query
from vault_tools.recall.recall import Recaller

AS_OF = dt.date(2026, 3, 31)
START = dt.date(2026, 1, 10)
ENGLISH = [
    "atlas",
    "deploy",
    "staging",
    "cluster",
    "billing",
    "service",
    "auth",
    "keycloak",
    "release",
    "rollback",
    "climbing",
    "gym",
    "maria",
    "frontend",
    "library",
    "dinner",
    "budget",
    "invoice",
    "migration",
    "tenants",
    "review",
    "pull",
    "request",
    "grafana",
    "alert",
]
CHINESE = [
    "部署",
    "前端",
    "组件库",
    "设计模式",
    "观察者",
    "晚饭",
    "同事",
    "网络",
    "搬家",
    "预算",
    "发票",
    "迁移",
    "告警",
    "发布",
    "回滚",
    "登山",
]
COMMON = ["atlas", "部署"]  # on a large share of the entries: the slow case this module is for
TAGS = ["atlas", "技术/前端/React", "work", "家"]
QUERIES = [
    "atlas",
    "atlas deploy",
    "What happened with Atlas yesterday?",
    "Atlas 什么时候可以部署？",
    "部署",
    "部",  # one CJK character: itself or any bigram it starts
    "How big should a pull request be?",
    "grafana alert last week",
    "上周 前端 组件库",
    "rollback release in February",
    "billing billing billing",  # a repeated query word
    "maria climbing gym #atlas",
    "tag:技术 设计模式",
    "nothingmatchesthis",
]


def _entry(rng: random.Random, i: int) -> str:
    words = [rng.choice(COMMON)] if rng.random() < 0.4 else []
    words += rng.choices(ENGLISH, k=rng.randint(2, 9)) + rng.choices(CHINESE, k=rng.randint(0, 4))
    if rng.random() < 0.2:
        words += [words[0]] * rng.randint(1, 3)  # term frequency above one
    rng.shuffle(words)
    tags = [f"#{rng.choice(TAGS)}"] if rng.random() < 0.3 else []
    roll = rng.random()
    tags += ["#private"] if roll < 0.08 else ["#shared"] if roll < 0.2 else []
    return f"- {9 + i % 10:02d}:{i % 60:02d} {' '.join(words + tags)} n{i}"


def _daily(rng: random.Random, day: dt.date, entries: int) -> str:
    lines = [f"---\ndate: {day.isoformat()}\n---"]
    for i in range(entries):
        if i % 9 == 0:
            lines.append(f"## {rng.choice(['Work', 'Atlas', '家里', 'Review'])}")
        lines.append(_entry(rng, i))
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Config]:
    rng = random.Random(20261203)
    vault = tmp_path_factory.mktemp("scorer") / "vault"
    days = [START + dt.timedelta(days=n) for n in range(80)]
    for day in days[:40]:
        write(vault / "memory" / f"{day}.md", _daily(rng, day, rng.randint(10, 30)))
    write(vault / "MEMORY.md", "# Long-term memory\n\n" + "\n".join(_entry(rng, i) for i in range(40)) + "\n")
    config = load_config(vault, env={})
    index = Index(config)
    index.rebuild()
    for batch in (days[40:55], days[55:70], days[70:]):  # more segments
        paths = [write(vault / "memory" / f"{d}.md", _daily(rng, d, rng.randint(10, 30))) for d in batch]
        index.update(paths)
    edited = [vault / "memory" / f"{d}.md" for d in rng.sample(days[:40], 8)]
    for path in edited:  # deletions in the old segments
        write(path, _daily(rng, dt.date.fromisoformat(path.stem), rng.randint(5, 15)))
    removed = vault / "memory" / f"{days[3]}.md"
    removed.unlink()
    index.update([*edited, removed])
    # A segment where no entry has a date stores no day column: date filters must still work.
    undated = "".join(f"- Atlas 部署 idea {i} without a date\n" for i in range(12))
    index.update([write(vault / "memory" / "notes" / "ideas.md", undated)])
    index.close()
    yield config


@pytest.fixture(scope="module")
def session(config: Config) -> Iterator[Recaller]:
    with Recaller(config, catch_up="never") as recaller:
        recaller.recall("warm up", as_of=AS_OF)
        yield recaller


def test_the_fixture_has_several_segments_with_deletions(session: Recaller) -> None:
    readers = [reader for reader, _offset in session.warm.searcher.reader().leaf_readers()]
    assert len(readers) >= 2
    assert any(reader.has_deletions() for reader in readers)
    assert any(not reader.has_column(index_documents.F_DAY) for reader in readers), (
        "no segment without a day column"
    )
    assert session.warm.block_scorer() is not None


@pytest.mark.parametrize("chat", ["direct", "group", "unknown"])
@pytest.mark.parametrize("query", QUERIES)
def test_blocks_and_matchers_find_the_same_hits(session: Recaller, query: str, chat: str) -> None:
    searcher = session.warm.searcher
    scorer = session.warm.block_scorer()
    assert scorer is not None
    parsed = parse_query(query, AS_OF)
    window = resolve_window(None, None, parsed.window, session.tuning)
    filters = filter_query(chat, window.since, window.until, parsed.tags)  # type: ignore[arg-type]
    wide = filter_query(chat, None, None, parsed.tags) if window.wide else None  # type: ignore[arg-type]
    # Whoosh's matchers leave the neighbours out (their back-off rule is the block scorer's).
    own_words = dataclasses.replace(session.tuning, before_boost=0.0, after_boost=0.0)
    parts = keyword_parts(parsed, own_words, searcher)
    keywords = keyword_query(parts)
    assert keywords is not None
    for pool in (1, 5, 30, 400):
        blocks = session._score_in_blocks(scorer, parts, filters, wide, pool, pool)
        matchers = session._score_with_matchers(keywords, filters, wide, pool, pool)
        assert list(blocks) == list(matchers), f"{query!r} in a {chat} chat, pool {pool}"
        for docnum, score in blocks.items():
            assert score == pytest.approx(matchers[docnum], rel=1e-12, abs=1e-12)


@pytest.mark.parametrize(
    "since,until",
    [("2026-02-01", "2026-02-03"), ("2026-01-01", "2026-12-31"), (None, "2026-01-15"), ("2026-03-25", None)],
)
def test_date_windows_match_the_numeric_range(
    session: Recaller, since: str | None, until: str | None
) -> None:
    """Open and closed windows, narrow and wide, keep what Whoosh's NumericRange keeps."""
    searcher = session.warm.searcher
    scorer = session.warm.block_scorer()
    assert scorer is not None
    lo = dt.date.fromisoformat(since) if since else None
    hi = dt.date.fromisoformat(until) if until else None
    filters = filter_query("direct", lo, hi, ())
    scores = scorer.scores(
        [Clause(index_documents.F_TEXT, ("atlas",)), Clause(index_documents.F_TEXT, ("部署",), 0.5)]
    )
    found = scorer.top(scores, 10_000, filters.doc_filter(scorer))
    expected = set(searcher.docs_for_query(filters.restrict(None))) & set(scores)  # Whoosh's NumericRange
    assert {docnum for docnum, _score in found} == expected
    assert expected, "the window should hold some hits"


def test_ties_go_to_the_lower_document_number(session: Recaller) -> None:
    scorer = session.warm.block_scorer()
    assert scorer is not None
    scores = {7: 1.0, 3: 1.0, 9: 2.0, 5: 1.0, 1: 0.5}
    assert scorer.top(scores, 3) == [(9, 2.0), (3, 1.0), (5, 1.0)]
    assert scorer.top(scores, 3, DocFilter(excluded=frozenset({3}))) == [(9, 2.0), (5, 1.0), (7, 1.0)]
    assert scorer.top(scores, 9, DocFilter(required=frozenset({1, 7}))) == [(7, 1.0), (1, 0.5)]


def test_a_filter_that_rejects_the_best_still_fills_the_top(session: Recaller) -> None:
    """Only the lowest-scored documents pass: the top-k must look past the first candidates."""
    scorer = session.warm.block_scorer()
    assert scorer is not None
    scores = {d: float(d) for d in range(1000)}
    kept = frozenset(range(5))
    excluded = frozenset(range(5, 1000))
    assert [d for d, _s in scorer.top(scores, 5, DocFilter(excluded=excluded))] == [4, 3, 2, 1, 0]
    assert [d for d, _s in scorer.top(scores, 3, DocFilter(required=kept))] == [4, 3, 2]


def test_other_weightings_fall_back_to_the_matchers(session: Recaller) -> None:
    from whoosh.scoring import TF_IDF

    searcher = session.warm.searcher
    original = searcher.weighting
    try:
        searcher.weighting = TF_IDF()
        assert BlockScorer.for_searcher(searcher, [index_documents.F_TEXT]) is None
    finally:
        searcher.weighting = original


def test_the_scorer_is_rebuilt_for_a_new_searcher_and_reuses_segment_tables(config: Config) -> None:
    with Recaller(config, catch_up="never") as recaller:
        recaller.recall("atlas last week", as_of=AS_OF)
        first = recaller.warm.block_scorer()
        assert first is not None and first._tables
        path = config.vault / "memory" / "2026-03-31.md"
        write(path, "---\ndate: 2026-03-31\n---\n- 10:00 atlas zyzzyva brand new entry\n")
        with Index(config) as index:
            index.update([path])
        result = recaller.recall("zyzzyva", as_of=AS_OF)
        assert [hit.text for hit in result.results] == ["atlas zyzzyva brand new entry"]
        second = recaller.warm.block_scorer()
        assert second is not None and second is not first
        shared = set(first._tables) & set(second._tables)
        assert shared, "tables of unchanged segments should carry over"
        assert all(first._tables[key] is second._tables[key] for key in shared)
