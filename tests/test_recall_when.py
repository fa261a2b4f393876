"""A question that asks when ("When did Ana sell the piano?", "小林什么时候卖的旧钢琴？") prefers the
entry that names a time ("…yesterday", "昨天…") over one that only shares more of its words."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterator

import pytest
from helpers import indexed_vault, warm_recaller

from vault_tools.config import Config
from vault_tools.recall.query import asks_when, parse_query
from vault_tools.recall.recall import Recaller
from vault_tools.recall.tuning import DEFAULT_TUNING

AS_OF = dt.date(2026, 6, 30)

DAYS = {
    "2026-05-04": """- 18:00 **Ana**: Selling an old piano is hard, nobody wants an old piano these days.
- 18:01 **Ben**: Try the music school.
- 18:02 **小林**：旧钢琴很难卖，现在没人想要旧钢琴。
- 18:03 **阿杰**：试试音乐学校。
""",
    "2026-05-20": """- 18:00 **Ana**: I sold the old piano to the music school yesterday.
- 18:01 **Ben**: Great news.
- 18:02 **小林**：昨天把旧钢琴卖给了音乐学校。
- 18:03 **阿杰**：好消息。
""",
}
ANSWERS = {
    "en": "**Ana**: I sold the old piano to the music school yesterday.",
    "zh": "**小林**：昨天把旧钢琴卖给了音乐学校。",
}
QUESTIONS = {"en": "When did Ana sell the old piano?", "zh": "小林什么时候卖的旧钢琴？"}


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Config:
    return indexed_vault(tmp_path_factory.mktemp("when"), DAYS, head="# {day}\n\n## Chat\n\n")


@pytest.fixture(scope="module")
def session(config: Config) -> Iterator[Recaller]:
    with warm_recaller(config) as warm:
        yield warm


@pytest.mark.parametrize(
    "question",
    [
        "When did Ana sell the old piano?",
        "when was the boiler fixed?",
        "So, when does my passport expire?",
        "小林什么时候卖的旧钢琴？",
        "护照哪天到期？",
        "小林什麼時候賣的舊鋼琴？",  # Traditional script
    ],
)
def test_a_question_that_asks_when_is_known(question: str) -> None:
    assert asks_when(question)
    assert parse_query(question, AS_OF).asks_when


@pytest.mark.parametrize(
    "question",
    ["What did Ana sell?", "Who bought the piano when it was sold?", "小林卖了什么？", "钢琴卖给了谁？"],
)
def test_other_questions_do_not(question: str) -> None:
    assert not parse_query(question, AS_OF).asks_when


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_entry_that_says_when_ranks_first(session: Recaller, language: str) -> None:
    result = session.recall(QUESTIONS[language], as_of=AS_OF, explain=True)
    assert result.results[0].text == ANSWERS[language]
    assert (
        result.results[0].explain is not None
        and result.results[0].explain["names_when"] == DEFAULT_TUNING.when_told
    )


@pytest.mark.parametrize("language", ["en", "zh"])
def test_without_the_rule_the_entry_with_more_shared_words_wins(session: Recaller, language: str) -> None:
    session.tuning = dataclasses.replace(DEFAULT_TUNING, when_told=1.0)
    try:
        assert session.recall(QUESTIONS[language], as_of=AS_OF).results[0].text != ANSWERS[language]
    finally:
        session.tuning = DEFAULT_TUNING


def test_a_question_that_does_not_ask_when_gets_no_bonus(session: Recaller) -> None:
    result = session.recall("What happened with Ana's old piano?", as_of=AS_OF, explain=True)
    assert all(hit.explain is None or "names_when" not in hit.explain for hit in result.results)
