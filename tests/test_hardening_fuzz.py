"""Input fuzzing: the note parser and the query parsers never raise, and parsing never changes bytes."""

from __future__ import annotations

import datetime as dt
import os
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vault_tools.errors import UsageError
from vault_tools.index import analysis
from vault_tools.notes import edit as note_edit
from vault_tools.notes import model as notes
from vault_tools.recall import recall, timewords
from vault_tools.recall.query import parse_query

LONG = os.environ.get("VAULT_TOOLS_LONG") == "1"
EXAMPLES = 2000 if LONG else 150
AS_OF = dt.date(2026, 12, 1)

FRAGMENTS = [
    "---\n",
    "---\r\n",
    "\ufeff",
    "\r\n",
    "\n",
    "\x00",
    "- ",
    "* ",
    "1. ",
    "## Heading\n",
    "# ",
    "```\n",
    "~~~\n",
    "title: x\n",
    "tags: [a, b\n",
    "visibility: shared\n",
    "visibility: private\n",
    "date: 2026-02-30\n",
    "#private",
    "#shared",
    "#remember",
    "[importance:: 0.9]",
    "[expires:: 2026-13-01]",
    "(source:: [[2026-03-10]])",
    "^m-3f9a2c",
    "[[link|alias]]",
    "09:30 ",
    "2026-03-10: ",
    "  continuation\n",
    "\t",
    "- [ ] task\n",
    "上周我们决定 #项目/子项\n",
    ": \n",
    "{{",
    "\x0c",
    "\u2028",
]

texts = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=20)), max_size=40).map("".join)
raw_bytes = st.one_of(
    st.binary(max_size=400),
    texts.map(lambda t: t.encode("utf-8")),
    st.tuples(texts, st.binary(max_size=8), texts).map(lambda p: p[0].encode() + p[1] + p[2].encode()),
)
NAMES = ["MEMORY.md", "memory/2026-03-10.md", "memory/notes.md", "memory/archive/2026-03.md", "other.md"]


def _read(root: Path, rel: str, data: bytes) -> notes.Note:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return notes.read_note(path, root)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=raw_bytes, rel=st.sampled_from(NAMES))
def test_read_note_never_raises_and_round_trips(tmp_path: Path, data: bytes, rel: str) -> None:
    note = _read(tmp_path, rel, data)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None and b"\x00" not in data[:8192]:
        # parse-then-write is byte identical for decodable text
        assert "".join(note.lines).encode("utf-8") == data
        assert note.text == text
    for entry in note.entries:
        assert 1 <= entry.start_line <= entry.end_line <= len(note.lines)
        assert entry.visibility in ("personal", "private", "shared")
    # a no-op splice through apply_edit writes nothing and changes nothing
    if text is not None:
        result = note_edit.apply_edit(tmp_path / rel, lambda lines: lines)
        assert not result.changed and (tmp_path / rel).read_bytes() == data


def assert_window_is_sound(query: str, window: timewords.DateWindow | None, rest: str) -> None:
    """What extract_time_window promises: an ordered window whose phrase was in the query."""
    if window is None:
        assert rest == query  # no phrase found: the query comes back unchanged
        return
    assert window.phrase and window.phrase in query
    assert window.since is None or window.until is None or window.since <= window.until


@settings(max_examples=EXAMPLES, deadline=None)
@given(query=st.one_of(st.text(max_size=80), texts))
def test_query_parsers_never_raise(query: str) -> None:
    parsed = parse_query(query, AS_OF)
    assert parsed.text == query.strip()
    if parsed.noise is not None:  # noise: nothing is searched
        assert parsed.terms == () and parsed.window is None
    if parsed.window is not None and None not in (parsed.window.since, parsed.window.until):
        assert parsed.window.since <= parsed.window.until  # type: ignore[operator]
    if parsed.terms:  # the terms are those of the keywords, the query less its tags and time phrase,
        # then the names of the period the phrase named ("summer"), searched as weak terms
        own = tuple(t for t in parsed.terms if t not in parsed.time_terms)
        assert own == tuple(t for t in analysis.query_terms(parsed.keywords) if t)
    assert all(tag and not tag.endswith("/") and tag == tag.lower() for tag in parsed.tags)
    parse_query(query, AS_OF, filtered=True)
    window, rest = timewords.extract_time_window(query, AS_OF)
    assert_window_is_sound(query, window, rest)
    terms = analysis.query_terms(query)
    assert len(terms) == len(set(terms))  # duplicates dropped
    assert all(t and not any(c.isspace() for c in t) for t in terms)


TIME_WORDS = ["last week", "yesterday", "in March", "上周", "昨天", "三月", "7d", "since 2026-02-30", "去年"]
NOT_WINDOWS = {"7d", "since 2026-02-30"}  # a --since form, not a query's time word; no such day
#: Noise that holds no word: it must not change which window a time word gives.
NOISE = st.text(alphabet=" \t!?.,;:()\"'-…。，？！👋🙂", max_size=20)


@settings(max_examples=EXAMPLES, deadline=None)
@given(prefix=NOISE, word=st.sampled_from(TIME_WORDS), suffix=NOISE, other=st.text(max_size=20))
def test_time_words_in_noise_keep_their_window(prefix: str, word: str, suffix: str, other: str) -> None:
    alone, _ = timewords.extract_time_window(word, AS_OF)
    assert (alone is None) == (word in NOT_WINDOWS)
    query = f"{prefix} {word} {suffix}"
    window, rest = timewords.extract_time_window(query, AS_OF)
    assert_window_is_sound(query, window, rest)
    assert (window and (window.since, window.until)) == (alone and (alone.since, alone.until)), query
    parsed = parse_query(query, AS_OF)
    assert (parsed.window and (parsed.window.since, parsed.window.until)) == (
        alone and (alone.since, alone.until)
    ), query
    # next to arbitrary text it still never raises, and what it finds is sound
    for mixed in (f"{other} {word}", f"{word} {other}"):
        found, left = timewords.extract_time_window(mixed, AS_OF)
        assert_window_is_sound(mixed, found, left)
        parse_query(mixed, AS_OF)
        analysis.query_terms(mixed)


WORDS = [
    "atlas",
    "deploy",
    "咖啡",
    "部署",
    "coffee",
    "设计模式",
    "python",
    "#work",
    "#private",
    "#shared",
    "#技术/前端",
]
QUERY_WORDS = [*WORDS, "last week", "上周", "in March", "昨天", "2026-03", "what did we", "?", "👋"]
WHEN = ["2026-03-01", "7d", "last month", "1900-01-01", "9999-01-01", "2026-06-01", "yesterday"]


def _random_edit(rng: random.Random, vault: Path) -> Path:
    """Write, empty or delete one note: dated, undated (memory/notes/) or MEMORY.md."""

    def lines(count: int) -> str:
        return "".join(
            f"- {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d} "
            + " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 5)))
            + f" n{i}\n"
            for i in range(count)
        )

    choice = rng.random()
    if choice < 0.5:
        path = vault / "memory" / f"{dt.date(2026, 1, 1) + dt.timedelta(days=rng.randint(0, 330))}.md"
    elif choice < 0.65:
        path = vault / "memory" / "notes" / f"n{rng.randint(0, 3)}.md"
    elif choice < 0.75:
        path = vault / "MEMORY.md"
    else:
        existing = sorted((vault / "memory").rglob("*.md"))
        if existing:
            path = rng.choice(existing)
            path.unlink()
            return path
        path = vault / "memory" / "2026-02-02.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(lines(rng.randint(0, 6)), encoding="utf-8")
    return path


@pytest.mark.parametrize("seed", range(12 if LONG else 2))
def test_recall_keeps_its_date_limits_over_an_index_edited_into_every_segment_shape(
    tmp_path: Path, seed: int
) -> None:
    """Each edit is its own segment (empty, undated only, deletions only): no error, and
    explicit --since/--until stay hard limits.

    It found that a segment without a dated entry has no day column (which broke every date
    filter of the block scorer), and that Whoosh's NumericRange matched every dated entry for a
    window ending before 1911 (whoosh_private.split_ranges).
    """
    from vault_tools.config import load_config
    from vault_tools.index.index import Index

    rng = random.Random(seed)
    vault = tmp_path / "vault"
    (vault / "memory").mkdir(parents=True)
    (vault / "MEMORY.md").write_text("# M\n\n## Facts\n- 2026-01-02: atlas 咖啡 fact\n", encoding="utf-8")
    config = load_config(vault, env={})
    index = Index(config)
    index.rebuild()
    for _step in range(40 if LONG else 20):
        index.update([_random_edit(rng, vault)])
        with recall.Recaller(config, catch_up="never", index=index) as session:
            for _query in range(10):
                query = " ".join(rng.choice(QUERY_WORDS) for _ in range(rng.randint(0, 4)))
                since = rng.choice([None, None, *WHEN])
                until = rng.choice([None, None, *WHEN])
                chat = rng.choice(["direct", "group", "unknown"])
                try:
                    result = session.recall(
                        query,
                        chat=chat,
                        limit=rng.choice([1, 3, 10]),
                        since=since,
                        until=until,
                        tags=[rng.choice(["work", "技术", "nope"])] if rng.random() < 0.2 else (),
                        as_of=AS_OF,
                    )
                except UsageError:  # since after until
                    continue
                lo, hi = result.filters["since"], result.filters["until"]
                for hit in result.results:
                    assert "#private" not in hit.text, (query, hit)
                    if (
                        result.filters["chat"] != "direct"
                    ):  # only #shared daily entries (no front matter here)
                        assert hit.source != "memory" and "#shared" in hit.text, (query, hit)
                    assert hit.date is not None or (lo is None and hi is None), (query, since, until, hit)
                    assert (lo is None or hit.date >= lo) and (hi is None or hit.date <= hi), (
                        query,
                        since,
                        until,
                    )
    index.close()
