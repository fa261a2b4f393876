"""tokens: the offline token estimate and truncation."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vault_tools.tokens import count_tokens, count_words, truncate_to_tokens


@pytest.mark.parametrize(
    ("text", "low", "high"),
    [
        ("", 0, 0),
        ("hello world", 2, 2),
        ("Invoice numbers must be gapless per tenant.", 7, 10),  # cl100k: 9
        ("你好世界", 4, 6),  # cl100k: 5
        ("2026-03-10", 5, 7),  # cl100k: 5
        ("Bürgeramt Pankow", 3, 6),
        ("👍", 1, 3),
    ],
)
def test_estimates_are_near_a_real_tokenizer(text: str, low: int, high: int) -> None:
    assert low <= count_tokens(text) <= high


def test_cjk_costs_more_per_character_than_english() -> None:
    assert count_tokens("数据库迁移") > count_tokens("datab")


def test_truncate_fits_and_marks_the_cut() -> None:
    text = "The billing service runs on PostgreSQL 16 in staging and production since March."
    cut = truncate_to_tokens(text, 6)
    assert cut.endswith("…") and count_tokens(cut) <= 6 and text.startswith(cut[:-1])
    assert truncate_to_tokens(text, 1000) == text
    assert truncate_to_tokens(text, 0) == ""


def test_truncate_cuts_cjk_inside_a_run() -> None:
    cut = truncate_to_tokens("学了设计模式里的观察者模式主题维护订阅者列表", 6)
    assert cut.endswith("…") and 2 <= len(cut) <= 6 and count_tokens(cut) <= 6


@given(st.text(max_size=200), st.integers(min_value=1, max_value=60))
def test_truncate_never_exceeds_the_budget(text: str, budget: int) -> None:
    cut = truncate_to_tokens(text, budget)
    assert count_tokens(cut) <= max(budget, count_tokens("…"))
    if count_tokens(text) <= budget:
        assert cut == text  # what fits is left whole
    else:  # a prefix of the text, marked as cut
        assert cut.endswith("…") and text.startswith(cut[: -len("…")])


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("Moved into the new flat in Prenzlauer Berg today!", 9),
        ("我上个月搬到了杭州，在西湖边租了房子。", 11),  # 17 characters, not one "word"
        ("I prefer dark roast coffee, 浅烘的太酸了。", 9),
        ("", 0),
    ],
)
def test_words_count_chinese_by_its_characters(text: str, words: int) -> None:
    assert count_words(text) == words
