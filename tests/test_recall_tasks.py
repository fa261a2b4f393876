"""recall of what is still to do: a question about the to-do list gets the open tasks, in English
and Chinese, never the ticked ones, within the chat's privacy rule."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import hit_texts, indexed_vault, warm_recaller, write

from vault_tools.config import Config
from vault_tools.notes.model import read_note
from vault_tools.recall.recall import Recaller
from vault_tools.recall.tasks import open_task_question

AS_OF = dt.date(2026, 3, 12)

DAYS = {
    "2026-03-02": "- [x] Book the moving van for Saturday #moving\n"
    "- [ ] Cancel the old internet contract (three months' notice) #moving\n"
    "- 10:00 The migration task went fine, the old cluster is off.\n",
    "2026-03-05": "- [ ] 周五前把搬家的纸箱买好 #搬家\n"
    "- [/] Draft the onboarding checklist for Lena\n"
    "- [-] Call the old landlord about the deposit\n"
    "- 14:00 The billing database question is still open, Jonas decides on Friday.\n",
    "2026-03-09": "- [ ] Renew the passport before the Lisbon trip #private\n"
    "- [x] 给妈妈订生日蛋糕\n"
    "- [ ] Shared: order pizza for the team offsite #shared\n",
    "2026-03-11": "- [ ] 周三在家等装网络的师傅\n- 09:00 Moving boxes arrived, the hallway is full of them.\n",
}


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Config:
    return indexed_vault(
        tmp_path_factory.mktemp("tasks"),
        DAYS,
        memory="# Memory\n\n- [ ] Ask Priya about the conference talk\n",
        head="## Today\n\n",
    )


@pytest.fixture(scope="module")
def session(config: Config) -> Iterator[Recaller]:
    with warm_recaller(config) as warm:
        yield warm


def texts(session: Recaller, query: str, **options: object) -> list[str]:
    return hit_texts(session, query, AS_OF, **options)


OPEN_IN_DIRECT_CHAT = {
    "周三在家等装网络的师傅",
    "Shared: order pizza for the team offsite #shared",
    "周五前把搬家的纸箱买好 #搬家",
    "Draft the onboarding checklist for Lena",
    "Cancel the old internet contract (three months' notice) #moving",
    "Ask Priya about the conference talk",
}


@pytest.mark.parametrize(
    "question",
    ["What is on my to-do list?", "what tasks are still open", "我还有哪些待办？", "我的待辦事項有哪些"],
)
def test_a_question_about_the_list_gets_the_open_tasks_newest_first(session: Recaller, question: str) -> None:
    found = texts(session, question, chat="direct")
    assert set(found) == OPEN_IN_DIRECT_CHAT  # no ticked or cancelled task, no "still open" line
    daily = [text for text in found if text != "Ask Priya about the conference talk"]
    assert daily[:2] == ["周三在家等装网络的师傅", "Shared: order pizza for the team offsite #shared"]


def test_a_topic_ranks_its_open_tasks_first(session: Recaller) -> None:
    found = texts(session, "what do I still need to do for the move?", chat="direct")
    assert found[0] == "Cancel the old internet contract (three months' notice) #moving"
    boxes = found.index("Moving boxes arrived, the hallway is full of them.")  # no task: it competes
    assert found.index("周五前把搬家的纸箱买好 #搬家") < boxes  # 搬家 is the move in the other language
    assert texts(session, "还没做完的搬家的事", chat="direct")[0] == "周五前把搬家的纸箱买好 #搬家"


def test_is_it_still_on_my_list_finds_the_line_that_says_it_was_done(session: Recaller) -> None:
    assert texts(session, "Is booking the moving van still on my list?", chat="direct")[0] == (
        "Book the moving van for Saturday #moving"
    )


def test_a_topic_with_no_open_task_finds_what_the_notes_say(session: Recaller) -> None:
    found = texts(session, "what is still left to do on the billing database?", chat="direct")
    assert found and "billing database" in found[0]


def test_the_list_keeps_the_chats_privacy_rule(session: Recaller) -> None:
    assert texts(session, "what is on my to-do list?", chat="group") == [
        "Shared: order pizza for the team offsite #shared"
    ]
    owner = texts(session, "what is on my to-do list?", chat="direct", include_private=True)
    assert "Renew the passport before the Lisbon trip #private" in owner


def test_a_task_named_in_a_story_is_no_question_about_the_list(session: Recaller) -> None:
    assert open_task_question("how did the migration task go?")[0] is False
    assert "migration task went fine" in texts(session, "how did the migration task go?", chat="direct")[0]


def test_task_states_as_people_write_them(tmp_path: Path) -> None:
    path = tmp_path / "memory" / "2026-03-05.md"
    write(
        path, "---\ndate: 2026-03-05\n---\n- [ ] a\n- [x] b\n- [X] c\n- [/] d\n- [-] e\n- f [ ] g\n1. [ ] h\n"
    )
    states = {entry.text: entry.task for entry in read_note(path, tmp_path).entries}
    assert states == {
        "a": "open",
        "b": "done",
        "c": "done",
        "d": "open",
        "e": "done",
        "f [ ] g": None,
        "h": "open",
    }
