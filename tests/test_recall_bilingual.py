"""recall across English and Chinese: a question in one language finds the note written in the
other, and a note in the question's own language that holds its words still ranks first."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterator

import pytest
from helpers import hit_texts, indexed_vault, warm_recaller

from vault_tools.config import Config
from vault_tools.index.analysis import query_terms
from vault_tools.recall.bilingual import glossary, translated_terms
from vault_tools.recall.recall import Recaller
from vault_tools.recall.tuning import DEFAULT_TUNING

AS_OF = dt.date(2026, 3, 12)

DAYS = {
    "2026-03-01": "- 和妈妈视频，妈妈的生日是 5 月 3 日，想早点订机票回去。\n"
    "- 去跳蚤市场花十欧买了一个旧台灯。\n",
    "2026-03-02": "- Lives in Friedrichshain now, the flat is on the fourth floor.\n"
    "- Dentist said the wisdom tooth has to come out in July.\n",
    "2026-03-03": "- Mom's birthday dinner is booked at the Sichuan place.\n",
}


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Config:
    return indexed_vault(tmp_path_factory.mktemp("bilingual"), DAYS, memory="# Memory\n", head="## Notes\n\n")


@pytest.fixture(scope="module")
def session(config: Config) -> Iterator[Recaller]:
    with warm_recaller(config) as warm:
        yield warm


def texts(session: Recaller, query: str) -> list[str]:
    return hit_texts(session, query, AS_OF, chat="direct")


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("how much was the lamp from the flea market?", "去跳蚤市场花十欧买了一个旧台灯。"),
        ("我现在住哪？", "Lives in Friedrichshain now, the flat is on the fourth floor."),
        ("牙医说了什么？", "Dentist said the wisdom tooth has to come out in July."),
    ],
)
def test_a_question_finds_the_note_written_in_the_other_language(
    session: Recaller, question: str, answer: str
) -> None:
    assert texts(session, question)[0] == answer
    session.tuning = dataclasses.replace(DEFAULT_TUNING, translation_weight=0.0)
    try:
        assert answer not in texts(session, question)
    finally:
        session.tuning = DEFAULT_TUNING


def test_the_notes_own_language_ranks_first(session: Recaller) -> None:
    found = texts(session, "when is mom's birthday?")
    assert found[:2] == [
        "Mom's birthday dinner is booked at the Sichuan place.",
        "和妈妈视频，妈妈的生日是 5 月 3 日，想早点订机票回去。",
    ]


def test_translations_are_the_other_languages_words() -> None:
    assert translated_terms("what's my mom's birthday?", tuple(query_terms("what's my mom's birthday?"))) == [
        "妈妈",
        "母亲",
        "老妈",
        "生日",
    ]
    assert translated_terms("我坐火车去", tuple(query_terms("我坐火车去"))) == [
        "railway"
    ]  # 车 of 火车 is no car
    # an English question never searches a lone character (住 would search every bigram it starts)
    assert all(len(t) > 1 for t in translated_terms("where do I live", tuple(query_terms("where do I live"))))


def test_every_line_of_the_glossary_pairs_words_of_both_languages() -> None:
    assert len(glossary()) > 150
    for english, chinese in glossary():
        assert all(term.isascii() for term in english)
        assert all(not word.isascii() for word in chinese)
