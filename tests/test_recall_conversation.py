"""recall on conversations: neighbours, speakers, time words that only rank, in English and Chinese.

The vault is a small transcript in the form ``- HH:MM **Name**: text`` (one turn a bullet) next
to ordinary notes. Each test pins one rule of the ranking and fails when the rule is gone: the
answer that shares no word with the question is found through the turn that asked it; a word
shared with a neighbour never makes a hit on its own; neighbours never carry words across a
privacy boundary; a name in the question prefers that speaker's lines.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import indexed_vault, write

from vault_tools.config import load_config
from vault_tools.index.documents import neighbours
from vault_tools.index.index import Index
from vault_tools.notes.model import read_note
from vault_tools.recall.recall import Recaller
from vault_tools.recall.tuning import DEFAULT_TUNING, Tuning

AS_OF = dt.date(2026, 6, 30)

TRANSCRIPT = """---
date: 2026-03-04
---
# 2026-03-04

## 18:00 · Session 1

- 18:00 **Ana**: I finally finished my first novella last week!
- 18:00 **Ben**: Congratulations! What is it about?
- 18:00 **Ana**: Thanks, Ben! It's a mix of drama and romance.
- 18:00 **Ben**: Sounds great. I went hiking at Lake Tahoe on Sunday.
- 18:00 **Ana**: Lovely, send me the photos.

## 20:00 · Session 2

- 20:00 **Ben**: 你最喜欢哪种咖啡？
- 20:00 **Ana**: 我每天早上都喝手冲的耶加雪菲。
- 20:00 **Ben**: I painted a lighthouse this weekend.
- 20:00 **Ana**: Ben, your lighthouse painting is beautiful!
"""

NOTES = """---
date: 2026-05-20
---
# 2026-05-20

- 09:00 Keycloak needs ops work before the auth migration.
- 10:00 Lunch with Dana at the ramen place.
- 11:00 Renewed the passport at the city office. #private
- 12:00 Team offsite agenda is ready #shared
- 13:00 The offsite hotel is in Lisbon #shared
"""


@pytest.fixture
def session(tmp_path: Path) -> Iterator[Recaller]:
    vault = tmp_path / "vault"
    write(
        vault / "MEMORY.md",
        "---\ntitle: memory\n---\n# Memory\n\n## Facts\n\n- Ana writes fiction\n- Ben likes painting\n",
    )
    write(vault / "memory" / "2026-03-04.md", TRANSCRIPT)
    write(vault / "memory" / "2026-05-20.md", NOTES)
    config = load_config(vault)
    Index(config).rebuild()
    with Recaller(config, catch_up="never") as warm:
        yield warm


def texts(session: Recaller, query: str, *, tuning: Tuning | None = None, **options: object) -> list[str]:
    if tuning is not None:
        session.tuning = tuning
    result = session.recall(query, as_of=AS_OF, **options)  # type: ignore[arg-type]
    return [hit.text for hit in result.results]


def test_an_answer_is_found_through_the_question_before_it(session: Recaller) -> None:
    found = texts(session, "What genre is Ana's novella?")
    assert found[:2] == [
        "**Ana**: I finally finished my first novella last week!",
        "**Ana**: Thanks, Ben! It's a mix of drama and romance.",
    ]
    without = dataclasses.replace(DEFAULT_TUNING, before_boost=0.0, after_boost=0.0, answer_factor=0.0)
    assert texts(session, "What genre is Ana's novella?", tuning=without)[1] != found[1]


def test_a_chinese_answer_is_found_through_its_question(session: Recaller) -> None:
    found = texts(session, "Ana 最喜欢哪种咖啡")
    assert set(found[:2]) == {"**Ana**: 我每天早上都喝手冲的耶加雪菲。", "**Ben**: 你最喜欢哪种咖啡？"}
    without = dataclasses.replace(DEFAULT_TUNING, before_boost=0.0, after_boost=0.0, answer_factor=0.0)
    assert (
        "**Ana**: 我每天早上都喝手冲的耶加雪菲。"
        not in texts(session, "Ana 最喜欢哪种咖啡", tuning=without)[:2]
    )


NO_LENDING = dataclasses.replace(DEFAULT_TUNING, answer_factor=0.0)


def rank_of(session: Recaller, query: str, text: str, **options: object) -> int | None:
    found = texts(session, query, **options)  # type: ignore[arg-type]
    return found.index(text) if text in found else None


def test_a_question_lends_its_score_to_the_answer_right_after_it(tmp_path: Path) -> None:
    """The answer shares no word with the question; other lines mention the topic in passing.

    Neighbours are off in both arms, so only the lent score can bring the answer up.
    """
    vault = tmp_path / "vault"
    chatter = "".join(f"- 09:{i:02d} **Ana**: The puppy chewed shoe number {i}\n" for i in range(6))
    write(
        vault / "memory" / "2026-04-02.md",
        "---\ndate: 2026-04-02\n---\n# 2026-04-02\n\n"
        + chatter
        + "- 10:00 **Ana**: What did you name the puppy?\n"
        + "- 10:01 **Ben**: Biscuit, after grandma's cookies.\n"
        + "- 10:02 **Ana**: Cute! The puppy looks like one.\n",
    )
    config = load_config(vault)
    Index(config).rebuild()
    query, answer = "What name did they give the puppy?", "**Ben**: Biscuit, after grandma's cookies."
    own_words = dataclasses.replace(DEFAULT_TUNING, before_boost=0.0, after_boost=0.0)
    with Recaller(config, catch_up="never", tuning=own_words) as session:
        result = session.recall(query, as_of=AS_OF, explain=True)
        # the line that only asks is no evidence: the answer it lends to ranks above it
        assert [hit.text for hit in result.results[:2]] == [answer, "**Ana**: What did you name the puppy?"]
        lent, asked = result.results[0], result.results[1]
        assert lent.explain is not None and lent.explain["score_lent"] == own_words.answer_factor
        assert asked.explain is not None and asked.explain["asks"] == own_words.question_factor
        unscaled = asked.score / own_words.question_factor
        assert lent.score == pytest.approx(unscaled * own_words.answer_factor)
        session.tuning = dataclasses.replace(own_words, answer_factor=0.0)
        assert answer not in [hit.text for hit in session.recall(query, as_of=AS_OF).results]


def test_a_line_that_asks_nothing_lends_nothing(session: Recaller) -> None:
    result = session.recall("Lake Tahoe hiking", as_of=AS_OF, explain=True)
    assert result.results[0].text == "**Ben**: Sounds great. I went hiking at Lake Tahoe on Sunday."
    assert all("score_lent" not in (hit.explain or {}) for hit in result.results)


def test_a_lent_score_never_shows_an_entry_the_filters_leave_out(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    write(
        vault / "memory" / "2026-04-02.md",
        "---\ndate: 2026-04-02\n---\n# 2026-04-02\n\n"
        "- 10:00 **Ana**: Which clinic did you pick for the knee surgery? #health #shared\n"
        "- 10:01 **Ben**: St. Mary's, next Tuesday. #shared\n"
        "- 10:02 **Ana**: 手术费用是多少？ #shared\n"
        "- 10:03 **Ben**: 大概三千块。 #private\n",
    )
    config = load_config(vault)
    Index(config).rebuild()
    with Recaller(config, catch_up="never") as session:
        answer = "**Ben**: St. Mary's, next Tuesday. #shared"
        assert answer in texts(session, "clinic knee surgery")
        assert answer not in texts(session, "clinic knee surgery", tags=["health"])
        assert "**Ben**: 大概三千块。 #private" in texts(session, "手术费用是多少", include_private=True)
        in_group = texts(session, "手术费用是多少", chat="group")
        assert in_group[0] == "**Ana**: 手术费用是多少？ #shared"
        assert "**Ben**: 大概三千块。 #private" not in in_group  # its lent score would show it


def test_a_neighbour_adds_nothing_where_the_entry_has_the_word_itself(session: Recaller) -> None:
    """Back-off: the lighthouse lines score by their own words, not once more through each other."""
    result = session.recall("lighthouse", as_of=AS_OF, explain=True)
    scores = {hit.text: hit.explain["bm25"] for hit in result.results if hit.explain}
    assert set(scores) == {
        "**Ben**: I painted a lighthouse this weekend.",
        "**Ana**: Ben, your lighthouse painting is beautiful!",
    }
    on_their_own = dataclasses.replace(DEFAULT_TUNING, before_boost=0.0, after_boost=0.0, answer_factor=0.0)
    session.tuning = on_their_own
    alone = session.recall("lighthouse", as_of=AS_OF, explain=True)
    assert {hit.text: hit.explain["bm25"] for hit in alone.results if hit.explain} == pytest.approx(scores)


def test_one_word_shared_with_a_neighbour_makes_no_hit(session: Recaller) -> None:
    assert texts(session, "Keycloak") == ["Keycloak needs ops work before the auth migration."]
    assert texts(session, "Keycloak", tuning=dataclasses.replace(DEFAULT_TUNING, context_terms=1)) == [
        "Keycloak needs ops work before the auth migration.",
        "Lunch with Dana at the ramen place.",
    ]


def test_neighbours_never_carry_words_across_privacy(session: Recaller) -> None:
    """A #private line never makes its personal neighbour match, a personal line never a shared one."""
    assert "Lunch with Dana at the ramen place." not in texts(session, "renewed passport office")
    group = texts(session, "ramen lunch Dana agenda", chat="group")
    assert group == ["Team offsite agenda is ready #shared"]
    # Shared neighbours do count for each other: the hotel line is found through the agenda line.
    assert "The offsite hotel is in Lisbon #shared" in texts(session, "offsite agenda ready", chat="group")


def test_neighbours_stay_inside_their_section_and_memory_items_have_none(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    path = write(vault / "memory" / "2026-03-04.md", TRANSCRIPT)
    note = read_note(path, vault)
    entries = note.entries

    def texts_of(which: list[int]) -> str:
        return " ".join(entries[i].text for i in which)

    pairs = {
        e.text: (texts_of(b), texts_of(a)) for e, (b, a) in zip(entries, neighbours(entries), strict=True)
    }
    before, after = pairs["**Ana**: Lovely, send me the photos."]
    assert "Lake Tahoe" in before and "novella" not in before and after == ""  # two back, not three
    assert pairs["**Ben**: 你最喜欢哪种咖啡？"][0] == ""  # the first turn of session 2
    memory = write(vault / "MEMORY.md", "# Memory\n\n- Ana writes fiction\n- Ben likes painting\n")
    items = read_note(memory, vault).entries
    assert neighbours(items) == [([], []), ([], [])]


def test_a_name_in_the_question_prefers_what_that_person_said(session: Recaller) -> None:
    """ "Ben" is who painted: his own line beats Ana's line that only names him."""
    found = texts(session, "What did Ben paint?")
    assert found[0] == "**Ben**: I painted a lighthouse this weekend."
    plain = dataclasses.replace(DEFAULT_TUNING, speaker_boost=0.0, speaker_text_factor=1.0)
    assert texts(session, "What did Ben paint?", tuning=plain)[0] != found[0]


def test_names_joined_by_and_are_both_subjects(tmp_path: Path) -> None:
    """ "Ana and Ben" asks about what each of them said; "Ana … Ben" otherwise is about Ana."""
    vault = tmp_path / "vault"
    write(
        vault / "memory" / "2026-03-04.md",
        "- 18:00 **Ana**: I painted a lighthouse at dawn.\n- 18:01 **Ben**: I painted a fox in the snow.\n",
    )
    config = load_config(vault)
    Index(config).rebuild()
    with Recaller(config, catch_up="never") as warm:

        def scores(query: str) -> dict[str, float]:
            return {hit.text[2:5]: hit.score for hit in warm.recall(query, as_of=AS_OF).results}

        both = scores("What have Ana and Ben painted?")
        assert both["Ben"] == pytest.approx(both["Ana"], rel=0.05)
        assert scores("What have both Ben & Ana painted?")["Ana"] == pytest.approx(both["Ana"], rel=0.05)
        told = scores("What did Ana tell Ben she painted?")
        assert told["Ana"] > 1.2 * told["Ben"]


def test_a_dated_phrase_wins_over_recently(session: Recaller) -> None:
    result = session.recall("what did Ana finish recently in March 2026?", as_of=AS_OF)
    assert result.filters["time_phrase"] == "in March 2026"
    assert "recent" not in result.filters["keywords"]
    assert result.results[0].text == "**Ana**: I finally finished my first novella last week!"


def test_without_time_words_age_barely_matters(tmp_path: Path) -> None:
    """Two equal lines months apart: without time words they score within a few percent."""
    vault = tmp_path / "v"
    write(vault / "memory" / "2026-01-05.md", "- 10:00 Bought a green kayak\n")
    write(vault / "memory" / "2026-06-29.md", "- 10:00 Bought a green kayak paddle\n")
    config = load_config(vault)
    Index(config).rebuild()
    with Recaller(config, catch_up="never") as warm:
        hits = warm.recall("green kayak", as_of=AS_OF, explain=True).results
        recency = {hit.date: hit.explain["recency"] for hit in hits if hit.explain}
        assert recency["2026-06-29"] > recency["2026-01-05"] >= 1 - DEFAULT_TUNING.recency_weight_untimed
        timed = warm.recall("green kayak this year", as_of=AS_OF, explain=True).results
        assert (
            min(hit.explain["recency"] for hit in timed if hit.explain)
            < 1 - DEFAULT_TUNING.recency_weight_untimed
        )


@pytest.mark.parametrize(
    "line,speaker",
    [
        ("- 10:00 **Ana**: hello", "Ana"),
        ("- **Mary Ann**: hi there", "Mary Ann"),
        ("- **妈妈**：记得吃药", "妈妈"),
        ("- **Ben:** colon inside the bold", "Ben"),
        ("- **bold** words: not a speaker", None),
        ("- Ana: plain names are not read as speakers", None),
    ],
)
def test_speaker_of_a_transcript_line(tmp_path: Path, line: str, speaker: str | None) -> None:
    path = write(tmp_path / "memory" / "2026-03-04.md", line + "\n")
    (entry,) = read_note(path, tmp_path).entries
    assert entry.speaker == speaker


@pytest.mark.parametrize(
    "query,phrase,rest",
    [
        ("what did she bake recently in May 2022?", "in May 2022", "what did she bake?"),
        ("最近三月我们讨论了什么", "三月", "我们讨论了什么"),
        ("what did we discuss recently?", "recently", "what did we discuss?"),
    ],
)
def test_a_vague_time_word_loses_to_a_dated_one(query: str, phrase: str, rest: str) -> None:
    from vault_tools.recall.timewords import extract_time_window

    window, remainder = extract_time_window(query, dt.date(2022, 11, 20))
    assert window is not None and window.phrase == phrase
    assert remainder == rest


def test_an_edit_updates_the_neighbours_of_the_entry_it_changed(tmp_path: Path) -> None:
    """An update rewrites only changed documents; a line whose neighbour changed is one of them."""
    vault = tmp_path / "v"
    path = write(
        vault / "memory" / "2026-03-04.md",
        "- 18:00 **Ben**: Which tea does Ana like?\n- 18:00 **Ana**: Sencha, every morning.\n",
    )
    config = load_config(vault)
    index = Index(config)
    index.rebuild()

    def found(query: str) -> list[str]:
        # Without lending: the question "Which coffee ...?" still matches "like" and would lend.
        with Recaller(config, catch_up="never", tuning=NO_LENDING) as warm:
            return [hit.text for hit in warm.recall(query, as_of=AS_OF).results]

    assert "**Ana**: Sencha, every morning." in found("tea like")
    write(path, "- 18:00 **Ben**: Which coffee does Ana like?\n- 18:00 **Ana**: Sencha, every morning.\n")
    index.update([path])
    assert "**Ana**: Sencha, every morning." in found("coffee like")
    assert "**Ana**: Sencha, every morning." not in found("tea like")


def test_a_speaker_already_in_bold_is_not_marked_twice() -> None:
    from vault_tools.recall.results import mark

    assert mark("**Ana**: Ana paints", ["ana", "paint"], "**", "**") == "**Ana**: **Ana** **paints**"
    assert mark("**Ana**: hi", ["ana"], "<b>", "</b>") == "**<b>Ana</b>**: hi"


ASKED_AND_TOLD = {
    "2026-05-02": "- 18:00 **Ben**: Good to see you! Did you plant the tomatoes in the garden yet?\n"
    "- 18:01 **Ana**: Busy week, the kids had exams.\n",
    "2026-05-09": "- 19:00 **Ana**: After a long week of rain we finally planted the tomatoes along the south "
    "fence of the garden on Sunday morning. Want some seedlings?\n"
    "- 19:01 **Ben**: Lovely.\n",
    "2026-05-16": "- 18:00 **阿杰**: 好久不见！你周末去钓鱼了吗？钓到鱼了吗？\n- 18:01 **小林**: 最近在忙搬家。\n",
    "2026-05-23": "- 19:00 **小林**: 这个周末和表哥一起开车去城北的水库钓鱼，钓到三条鲫鱼。\n- 19:01 **阿杰**: 厉害。\n",
}


@pytest.mark.parametrize(
    ("query", "told", "asked"),
    [
        (
            "Where did we plant the tomatoes in the garden?",
            "**Ana**: After a long week of rain",
            "**Ben**: Good to see you! Did you plant",
        ),
        ("周末钓鱼钓到了什么？", "**小林**: 这个周末和表哥", "**阿杰**: 好久不见"),
    ],
)
def test_a_line_that_holds_the_topic_only_in_a_question_ranks_below_one_that_tells_it(
    tmp_path: Path, query: str, told: str, asked: str
) -> None:
    """ "Good to see you! Did you plant the tomatoes…?" greets and asks: the words it shares with
    the question are in what it asks, so it is no evidence; the line that tells it wins, and a
    question at the end of a telling line ("Want some seedlings?") does not count against it."""
    config = indexed_vault(tmp_path, ASKED_AND_TOLD)
    with Recaller(config, catch_up="never") as session:
        for tuning, asked_first in ((DEFAULT_TUNING, False), (_ASKING_IS_EVIDENCE, True)):
            session.tuning = tuning
            hits = session.recall(query, as_of=AS_OF, explain=True).results
            ranks = {
                key: next(i for i, h in enumerate(hits) if h.text.startswith(key)) for key in (told, asked)
            }
            assert (ranks[asked] < ranks[told]) is asked_first
        session.tuning = DEFAULT_TUNING
        hits = session.recall(query, as_of=AS_OF, explain=True).results
        explained = {
            key: next(h.explain or {} for h in hits if h.text.startswith(key)) for key in (told, asked)
        }
        assert explained[asked]["asks"] == DEFAULT_TUNING.question_factor
        assert "asks" not in explained[told]


_ASKING_IS_EVIDENCE = dataclasses.replace(DEFAULT_TUNING, question_factor=1.0)


FOLLOW_UPS = {
    "2026-04-11": "- 18:00 **Ana**: Big news, I got promoted at work!\n"
    "- 18:01 **Ben**: Congrats! What's the new role?\n"
    "- 18:02 **Ana**: Team lead for the data platform, starting in June.\n"
    "- 18:03 **Ben**: Well deserved.\n",
    "2026-04-18": "- 19:00 **Ana**: The weather at work was awful all week.\n"
    "- 19:01 **Ana**: Ben, remember the bakery near the station? It closed.\n"
    "- 19:02 **Ana**: My sister visits in May, with her two dogs.\n"
    "- 19:03 **Ben**: Two people on my team got promoted, and one left.\n",
    "2026-04-25": "- 18:00 **小林**: 我上周换了新工作！\n"
    "- 18:01 **阿杰**: 恭喜！在哪家公司？\n"
    "- 18:02 **小林**: 一家做电动汽车的公司，在苏州。\n"
    "- 18:03 **阿杰**: 太好了。\n"
    "- 18:04 **小林**: 周末要去看房子。\n"
    "- 18:05 **小林**: 最近天气一直不好。\n"
    "- 18:06 **阿杰**: 我表哥也在找新工作，还没找到。\n",
    "2026-05-02": "- 18:00 **Dana**: I moved to Porto last month.\n"
    "- 18:01 **Eli**: Oh nice! Which part of town?\n"
    "- 18:02 **Fay**: Sorry I'm late, what did I miss?\n",
}


@pytest.mark.parametrize(
    ("query", "told", "answer"),
    [
        (
            "What was Ana promoted to?",
            "**Ana**: Big news, I got promoted at work!",
            "**Ana**: Team lead for the data platform, starting in June.",
        ),
        ("小林换了什么新工作？", "**小林**: 我上周换了新工作！", "**小林**: 一家做电动汽车的公司，在苏州。"),
    ],
)
def test_the_answer_to_a_follow_up_question_tells_more_of_the_hit(
    tmp_path: Path, query: str, told: str, answer: str
) -> None:
    """ "I got promoted!" / "Congrats! What's the new role?" / "Team lead for the data platform.":
    the answer to the other's follow-up shares no word with the question, and tells what it asks.

    Neighbours are off in both arms, so only the lent score can bring the answer up."""
    config = indexed_vault(tmp_path, FOLLOW_UPS)
    own_words = dataclasses.replace(DEFAULT_TUNING, before_boost=0.0, after_boost=0.0)
    no_follow_up = dataclasses.replace(own_words, follow_up_factor=0.0)
    with Recaller(config, catch_up="never", tuning=own_words) as session:
        hits = session.recall(query, as_of=AS_OF, explain=True).results
        assert [hit.text for hit in hits[:2]] == [told, answer]
        assert (
            hits[1].explain is not None and hits[1].explain["score_lent"] == DEFAULT_TUNING.follow_up_factor
        )
        session.tuning = no_follow_up
        assert answer not in [hit.text for hit in session.recall(query, as_of=AS_OF).results[:2]]


def test_a_follow_up_lends_only_to_the_first_speaker_telling_more(tmp_path: Path) -> None:
    """ "I moved to Porto" / "Which part of town?" / a third person arriving: no answer, nothing lent."""
    config = indexed_vault(tmp_path, FOLLOW_UPS)
    with Recaller(config, catch_up="never") as session:
        found = [hit.text for hit in session.recall("Where did Dana move?", as_of=AS_OF).results]
    assert found[0] == "**Dana**: I moved to Porto last month."
    assert "**Fay**: Sorry I'm late, what did I miss?" not in found
