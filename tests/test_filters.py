"""filters.py: the hard date limits and a question's time words combine, never widen each other."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

from vault_tools.recall.filters import resolve_window
from vault_tools.recall.timewords import DateWindow
from vault_tools.recall.tuning import Tuning

D = dt.date
WORDS = DateWindow(D(2026, 3, 9), D(2026, 3, 15), "last week")


@pytest.mark.parametrize(
    ("since", "until", "expected"),
    [
        # the word window, padded (1 day before, 3 after), inside wider hard limits
        (D(2026, 1, 1), D(2026, 12, 31), (D(2026, 3, 8), D(2026, 3, 18))),
        # hard limits inside the padded window win on each side
        (D(2026, 3, 10), D(2026, 3, 12), (D(2026, 3, 10), D(2026, 3, 12))),
        # one side each
        (D(2026, 3, 10), None, (D(2026, 3, 10), D(2026, 3, 18))),
        (None, D(2026, 3, 12), (D(2026, 3, 8), D(2026, 3, 12))),
        (None, None, (D(2026, 3, 8), D(2026, 3, 18))),
    ],
)
def test_hard_limits_and_the_word_window_combine_to_the_narrower(
    since: D | None, until: D | None, expected: tuple[D, D]
) -> None:
    window = resolve_window(since, until, WORDS, Tuning())
    assert (window.since, window.until) == expected
    assert (window.core_since, window.core_until) == (WORDS.since, WORDS.until)
    assert window.wide and (window.wide_since, window.wide_until) == (since, until)


def test_modes_without_padding_or_without_filtering() -> None:
    exact = resolve_window(D(2026, 3, 10), None, WORDS, dataclasses.replace(Tuning(), window_mode="exact"))
    assert (exact.since, exact.until, exact.wide) == (D(2026, 3, 10), D(2026, 3, 15), False)
    ranked = resolve_window(D(2026, 3, 10), None, WORDS, dataclasses.replace(Tuning(), window_mode="rank"))
    assert (ranked.since, ranked.until) == (D(2026, 3, 10), None)  # the words only rank
    assert resolve_window(D(2026, 3, 10), None, None, Tuning()).since == D(2026, 3, 10)
