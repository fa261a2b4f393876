"""A question about how someone took what was said finds their reply, in English and Chinese.

"What did Ben think about the piano?" is answered by Ben's line after Ana's "I sold the old
piano…", which shares no word with the question: the line that tells it lends its score to the
reply, as a line that asks does to its answer.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterator

import pytest
from helpers import hit_texts, indexed_vault, warm_recaller

from vault_tools.config import Config
from vault_tools.recall.query import asks_for_a_reaction, parse_query
from vault_tools.recall.recall import Recaller
from vault_tools.recall.tuning import DEFAULT_TUNING

AS_OF = dt.date(2026, 6, 30)

DAYS = {
    "2026-05-04": """- 18:00 **Ana**: I finally sold the old piano to the music school.
- 18:01 **Ben**: That's wonderful, it deserves to be played every day!
- 18:02 **Ana**: The movers come on Friday.
- 18:03 **Ben**: My sister wants to learn the violin, any teacher you know?
- 18:04 **Ana**: Ask at the music school, they have good teachers.
""",
    "2026-05-11": """- 19:00 **Ben**: I think the new bakery on our street is overpriced.
- 19:01 **Ana**: Maybe, their bread is good though.
- 19:02 **Ben**: The train to Lyon leaves at nine.
- 19:03 **Ben**: Rain is coming, take an umbrella.
""",
    "2026-05-18": """- 20:00 **小林**：我终于把旧钢琴卖给了音乐学校。
- 20:01 **阿杰**：太好了，它应该每天都有人弹！
- 20:02 **小林**：搬运工周五来。
- 20:03 **阿杰**：我觉得街角那家面包店太贵了。
- 20:04 **小林**：也许吧，不过他们的面包很好吃。
- 20:05 **阿杰**：去里昂的火车九点出发。
- 20:06 **阿杰**：要下雨了，记得带伞。
""",
}


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Config:
    return indexed_vault(tmp_path_factory.mktemp("replies"), DAYS, head="# {day}\n\n## Chat\n\n")


@pytest.fixture(scope="module")
def session(config: Config) -> Iterator[Recaller]:
    with warm_recaller(config) as warm:
        yield warm


def texts(session: Recaller, query: str) -> list[str]:
    return hit_texts(session, query, AS_OF)


@pytest.mark.parametrize(
    "question",
    [
        "What did Ben think about Ana selling the piano?",
        "How did Ben react when Ana sold the piano?",
        "What does Ben say about the piano?",
        "阿杰觉得小林卖掉旧钢琴怎么样？",
        "阿杰对卖钢琴有什么看法？",
        "阿杰覺得小林賣鋼琴這件事怎麼樣？",  # Traditional script
    ],
)
def test_a_question_about_a_reaction_is_known(question: str) -> None:
    assert asks_for_a_reaction(question)
    assert parse_query(question, AS_OF).reaction


@pytest.mark.parametrize(
    "question", ["What did Ana sell?", "Where did the piano go?", "小林把钢琴卖给了谁？", "钢琴卖了多少钱？"]
)
def test_other_questions_are_not(question: str) -> None:
    assert not parse_query(question, AS_OF).reaction


CASES = [
    (
        "What did Ben think about Ana selling the piano?",
        "**Ben**: That's wonderful, it deserves to be played every day!",
        "**Ben**: I think the new bakery on our street is overpriced.",
    ),
    (
        "阿杰觉得小林卖掉旧钢琴怎么样？",
        "**阿杰**：太好了，它应该每天都有人弹！",
        "**阿杰**：我觉得街角那家面包店太贵了。",
    ),
]


@pytest.mark.parametrize(("question", "reply", "opinion"), CASES)
def test_the_reply_ranks_right_after_the_line_that_tells_it(
    session: Recaller, question: str, reply: str, opinion: str
) -> None:
    found = texts(session, question)
    assert found[0].endswith(
        ("I finally sold the old piano to the music school.", "我终于把旧钢琴卖给了音乐学校。")
    )
    assert found[1] == reply  # above Ben's other opinion, which only shares "think" / 觉得


@pytest.mark.parametrize(("question", "reply", "opinion"), CASES)
def test_without_the_rule_an_opinion_on_something_else_ranks_above_the_reply(
    session: Recaller, question: str, reply: str, opinion: str
) -> None:
    session.tuning = dataclasses.replace(DEFAULT_TUNING, reply_factor=0.0)
    try:
        found = texts(session, question)
        assert found.index(opinion) < found.index(reply)
    finally:
        session.tuning = DEFAULT_TUNING


def test_a_question_that_asks_for_no_reaction_lends_only_from_lines_that_ask(session: Recaller) -> None:
    result = session.recall("Who bought the old piano?", as_of=AS_OF, explain=True)
    for hit in result.results:
        if hit.explain and "answers" in hit.explain:
            lender = next(
                h for h in result.results if h.score == pytest.approx(hit.explain["answers"], rel=1e-3)
            )
            assert "?" in lender.text or "？" in lender.text
