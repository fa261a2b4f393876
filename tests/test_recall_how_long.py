"""A question that asks how long ("How long has Nate had the turtles?", "小林的乌龟养了多久？") prefers
the entry that names a duration ("for 3 years now", "三年了") over one that only shares more words."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterator

import pytest
from helpers import indexed_vault, warm_recaller

from vault_tools.config import Config
from vault_tools.recall.query import parse_query
from vault_tools.recall.ranking import names_duration
from vault_tools.recall.recall import Recaller
from vault_tools.recall.tuning import DEFAULT_TUNING

AS_OF = dt.date(2026, 6, 30)

DAYS = {
    "2026-04-01": """- 09:00 Long meeting about the budget.
- 10:00 A long walk by the river.
- 11:00 The queue at the post office was long.
- 12:00 Long lunch with the team.
""",
    "2026-05-04": """- 18:00 **Nate**: Long time no see! The turtles say hi.
- 18:01 **Jo**: Aww, hi turtles!
- 18:02 **小林**：好久不见！乌龟向你问好，乌龟很喜欢新鱼缸，乌龟又长大了。
- 18:03 **阿杰**：乌龟们好！
""",
    "2026-05-20": """- 18:00 **Nate**: I've had the turtles for 3 years now.
- 18:01 **Jo**: Wow.
- 18:02 **小林**：乌龟我已经养了三年了。
- 18:03 **阿杰**：哇。
""",
}
QUESTIONS = {"en": "How long has Nate had the turtles?", "zh": "小林的乌龟养了多久？"}
ANSWERS = {"en": "**Nate**: I've had the turtles for 3 years now.", "zh": "**小林**：乌龟我已经养了三年了。"}


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Config:
    return indexed_vault(tmp_path_factory.mktemp("how-long"), DAYS, head="# {day}\n\n## Chat\n\n")


@pytest.fixture(scope="module")
def session(config: Config) -> Iterator[Recaller]:
    with warm_recaller(config) as warm:
        yield warm


@pytest.mark.parametrize(
    ("text", "duration"),
    [
        ("I've had the turtles for 3 years now.", True),
        ("We have been married for five years.", True),
        ("I've played since I was a kid.", True),
        ("乌龟我已经养了三年了。", True),
        ("烏龜我已經養了三年了。", True),  # Traditional script
        ("整整两个月没下雨。", True),
        ("Long time no see!", False),
        ("I moved here in May 2023.", False),
        ("2023年5月搬的家。", False),
        ("三月去了上海。", False),
    ],
)
def test_a_duration_is_read(text: str, duration: bool) -> None:
    assert names_duration(text) is duration


@pytest.mark.parametrize(
    ("question", "how_long", "when"),
    [
        ("How long has Nate had the turtles?", True, False),
        ("小林的乌龟养了多久？", True, False),
        ("小林的烏龜養了多久？", True, False),
        ("How long ago was her birthday?", False, True),  # a time, not a duration
        ("What turtles does Nate have?", False, False),
    ],
)
def test_a_question_that_asks_how_long_is_known(question: str, how_long: bool, when: bool) -> None:
    parsed = parse_query(question, AS_OF)
    assert (parsed.asks_how_long, parsed.asks_when) == (how_long, when)


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_entry_that_names_a_duration_ranks_first(session: Recaller, language: str) -> None:
    result = session.recall(QUESTIONS[language], as_of=AS_OF, explain=True)
    assert result.results[0].text == ANSWERS[language]
    assert result.results[0].explain is not None
    assert result.results[0].explain["names_how_long"] == DEFAULT_TUNING.how_long_told


@pytest.mark.parametrize("language", ["en", "zh"])
def test_without_the_rule_the_entry_with_more_shared_words_wins(session: Recaller, language: str) -> None:
    session.tuning = dataclasses.replace(DEFAULT_TUNING, how_long_told=1.0)
    try:
        assert session.recall(QUESTIONS[language], as_of=AS_OF).results[0].text != ANSWERS[language]
    finally:
        session.tuning = DEFAULT_TUNING
