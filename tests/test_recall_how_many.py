"""A question that asks how many or how much ("How many turtles does Nate have?", "小林养了几只乌龟？")
prefers the entry that gives a number ("the 2 turtles", "两只") over one that only shares more words."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterator

import pytest
from helpers import indexed_vault, warm_recaller

from vault_tools.config import Config
from vault_tools.recall.query import parse_query
from vault_tools.recall.ranking import names_number
from vault_tools.recall.recall import Recaller
from vault_tools.recall.tuning import DEFAULT_TUNING

AS_OF = dt.date(2026, 6, 30)

DAYS = {
    "2026-05-04": """- 18:00 **Nate**: My turtles love the new tank, the turtles swim all day, happy turtles.
- 18:01 **Jo**: Cute!
- 18:02 **小林**：我的乌龟喜欢新鱼缸，乌龟整天游来游去，乌龟很开心。
- 18:03 **阿杰**：真可爱！
""",
    "2026-05-20": """- 18:00 **Nate**: I got my turtles at the pet shop, I have 3 now.
- 18:01 **Jo**: Nice.
- 18:02 **小林**：我在宠物店买的乌龟，现在有三只了。
- 18:03 **阿杰**：不错。
""",
}
QUESTIONS = {"en": "How many turtles has Nate had?", "zh": "小林养了几只乌龟？"}
ANSWERS = {
    "en": "**Nate**: I got my turtles at the pet shop, I have 3 now.",
    "zh": "**小林**：我在宠物店买的乌龟，现在有三只了。",
}


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Config:
    return indexed_vault(tmp_path_factory.mktemp("how-many"), DAYS, head="# {day}\n\n## Chat\n\n")


@pytest.fixture(scope="module")
def session(config: Config) -> Iterator[Recaller]:
    with warm_recaller(config) as warm:
        yield warm


@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("I have 3 now.", True),
        ("We went twice.", True),
        ("Two of them are shy.", True),
        ("止损设在5%。", True),
        ("现在有三只了。", True),
        ("現在有三隻了。", True),  # Traditional script
        ("**Nate2**: My turtles love the new tank.", False),  # a name's digit is no number
        ("My turtles love the new tank.", False),
        ("三月去了上海。", False),  # a month, not a count
    ],
)
def test_a_number_is_read(text: str, number: bool) -> None:
    assert names_number(text) is number


@pytest.mark.parametrize(
    ("question", "how_many"),
    [
        ("How many turtles does Nate have?", True),
        ("How much did the crown cost?", True),
        ("小林养了几只乌龟？", True),
        ("房租多少钱？", True),
        ("小林養了幾隻烏龜？", True),  # Traditional script
        ("What turtles does Nate have?", False),
        ("小林养了什么？", False),
    ],
)
def test_a_question_that_asks_how_many_is_known(question: str, how_many: bool) -> None:
    assert parse_query(question, AS_OF).asks_how_many is how_many


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_entry_that_gives_a_number_ranks_first(session: Recaller, language: str) -> None:
    result = session.recall(QUESTIONS[language], as_of=AS_OF, explain=True)
    assert result.results[0].text == ANSWERS[language]
    assert result.results[0].explain is not None
    assert result.results[0].explain["names_number"] == DEFAULT_TUNING.how_many_told


@pytest.mark.parametrize("language", ["en", "zh"])
def test_without_the_rule_the_entry_with_more_shared_words_wins(session: Recaller, language: str) -> None:
    session.tuning = dataclasses.replace(DEFAULT_TUNING, how_many_told=1.0)
    try:
        assert session.recall(QUESTIONS[language], as_of=AS_OF).results[0].text != ANSWERS[language]
    finally:
        session.tuning = DEFAULT_TUNING
