"""Input fuzzing: the note parser and the query parsers never raise, and parsing never changes bytes."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vault_tools import analysis, notes, recall, timewords

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

CASES = {"notes": 0, "queries": 0}


def _read(root: Path, rel: str, data: bytes) -> notes.Note:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return notes.read_note(path, root)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=raw_bytes, rel=st.sampled_from(NAMES))
def test_read_note_never_raises_and_round_trips(tmp_path: Path, data: bytes, rel: str) -> None:
    CASES["notes"] += 1
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
        result = notes.apply_edit(tmp_path / rel, lambda lines: lines)
        assert not result.changed and (tmp_path / rel).read_bytes() == data


@settings(max_examples=EXAMPLES, deadline=None)
@given(query=st.one_of(st.text(max_size=80), texts))
def test_query_parsers_never_raise(query: str) -> None:
    CASES["queries"] += 1
    parsed = recall.parse_query(query, AS_OF)
    assert parsed is not None
    recall.parse_query(query, AS_OF, filtered=True)
    _window, rest = timewords.extract_time_window(query, AS_OF)
    assert isinstance(rest, str)
    terms = analysis.query_terms(query)
    assert all(isinstance(t, str) for t in terms)


TIME_WORDS = ["last week", "yesterday", "in March", "上周", "昨天", "三月", "7d", "since 2026-02-30", "去年"]


@settings(max_examples=EXAMPLES, deadline=None)
@given(prefix=st.text(max_size=20), word=st.sampled_from(TIME_WORDS), suffix=st.text(max_size=20))
def test_time_words_in_noise_never_raise(prefix: str, word: str, suffix: str) -> None:
    CASES["queries"] += 1
    query = f"{prefix} {word} {suffix}"
    timewords.extract_time_window(query, AS_OF)
    recall.parse_query(query, AS_OF)
    analysis.query_terms(query)


def test_report_case_counts() -> None:
    # runs last in this module (definition order): prints how many cases were tried
    print(f"fuzz cases tried: {CASES}")
    if CASES["notes"] == 0:
        pytest.skip("run with the rest of the module to count cases")
