"""Salience: sentences split where people end them, and read for what they say about someone."""

from __future__ import annotations

from pathlib import Path

import pytest

from vault_tools.curation import insights, salience
from vault_tools.curation.insights import Rules
from vault_tools.notes.model import read_note


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "The cat's vet is Dr. Okafor on Elm St. near the park. Call before noon.",
            ["The cat's vet is Dr. Okafor on Elm St. near the park.", "Call before noon."],
        ),
        (
            "Fruit, e.g. pears and plums, keeps well. Buy some.",
            ["Fruit, e.g. pears and plums, keeps well.", "Buy some."],
        ),
        ("Room No. 5 is ours. J. K. Rowling signed it.", ["Room No. 5 is ours.", "J. K. Rowling signed it."]),
        (
            "Peanuts are banned from now on. Important!",
            ["Peanuts are banned from now on. Important!"],
        ),
        ("我对花生过敏。别忘了带药！明天见？", ["我对花生过敏。", "别忘了带药！", "明天见？"]),
        (
            "FYI, I finished another pottery project - want to see a pic?",
            ["FYI, I finished another pottery project", "want to see a pic?"],
        ),
        (
            "Wow! I finished the marathon in 4:05. So tired.",
            ["Wow!", "I finished the marathon in 4:05.", "So tired."],
        ),
    ],
)
def test_sentences_end_where_people_end_them(text: str, expected: list[str]) -> None:
    assert salience.sentences(text) == expected


@pytest.mark.parametrize(
    ("sentence", "usable"),
    [
        ("What was your favorite part?", False),  # a question
        ("你最近在忙什么呢？", False),
        ("Taking time for yourself is so important.", False),  # generic sentiment
        ("Family support is the most precious thing.", False),
        ("My sister is the most important person to me.", True),  # of someone
        ("I love it!", False),
        ("That's so cool, thanks!", False),
        ("You'd be a great counselor!", False),  # words to the listener
        ("你真厉害！", False),
        ("Agreed!", False),  # assent, luck and hope: a reply, not news
        ("No doubts.", False),
        ("Keep those fingers crossed!", False),
        ("Good luck with that!", False),
        ("<3", False),  # a face, not a word
        ("Yum!", False),
        ("替我祝阿姨生日快乐！", False),  # a wish or a goodbye
        ("我们改天再聊。", False),
        ("放心吧，我会的。", False),
        ("我妈下周三过六十岁生日。", True),
        ("无条件的爱真的很重要。", False),  # generic sentiment, in Chinese too
        ("友谊是人生中最宝贵的财富。", False),
        ("小林的婚礼特别温暖。", True),  # of someone named
        ("不管多难都不会放弃的。", False),  # resolve and hope
        ("我相信一切都会好起来的。", False),
        ("我放弃了考研，准备直接工作。", True),
        ("I crossed the Alps on foot.", True),
        ("I ran a charity race for mental health last Saturday.", True),
        ("Caroline is researching adoption agencies.", True),
        ("我上个月搬到了杭州，离公司近多了。", True),
        ("The spare key is with the neighbour upstairs.", True),
    ],
)
def test_questions_chatter_and_praise_are_not_statements(sentence: str, usable: bool) -> None:
    assert salience.read(sentence).usable is usable


def test_events_disclosure_and_fragments() -> None:
    race = salience.read("I just signed up for a pottery class with my sister.")
    assert race.event and race.disclosure and not race.fragment
    moved = salience.read("我们下个月搬到杭州。")
    assert moved.event and moved.disclosure
    fact = salience.read("Melanie painted a sunset over the lake in 2022.")
    assert fact.event and fact.disclosure and fact.dated
    assert salience.read("They brighten up our day and always make us smile.").fragment
    assert not salience.read("Hey Ben!").usable and not salience.read("Thanks, Melanie!").usable
    assert not salience.read("It was Caroline's idea.").fragment  # a name of its own
    assert not salience.read("I was so excited.").event  # a feeling, not an event
    # a participle that describes is no event: a standing fact, not what happened this week
    assert not salience.read("Her dog is a beagle named Biscuit.").event
    assert not salience.read("The bakery is located on Kastanienallee.").event
    assert not salience.read("The plumber fixed the kitchen sink.").disclosure  # no one named


def entry_of(tmp_path: Path, line: str) -> insights.Candidate:
    path = tmp_path / "memory" / "2026-11-20.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\ndate: 2026-11-20\n---\n- {line}\n", encoding="utf-8")
    (entry,) = read_note(path, tmp_path).entries
    reason = insights.skip_reason(entry)
    assert reason is None, reason
    return insights.analyse(entry, Rules())


def test_a_transcript_item_says_who_and_keeps_the_statement(tmp_path: Path) -> None:
    line = (
        "13:56 **Melanie**: Wow, thanks! Yeah, I painted that lake sunrise last year! "
        "It's special to me. What do you paint?"
    )
    candidate = entry_of(tmp_path, line)
    assert candidate.key_text == "**Melanie**: I painted that lake sunrise last year!"  # no "Yeah,"
    assert candidate.speaker == "Melanie" and candidate.event


@pytest.mark.parametrize(
    ("line", "key_text"),
    [
        (
            "20:15 **Jie**: Just wanted to let you know I moved to Hangzhou last week!",
            "**Jie**: I moved to Hangzhou last week!",
        ),
        ("20:15 **阿杰**: 跟你说个好消息，我上周末搬到杭州了。", "**阿杰**: 我上周末搬到杭州了。"),
        (
            "20:15 **Jie**: iPhone 16 arrived at the shop in Hangzhou.",
            "**Jie**: iPhone 16 arrived at the shop in Hangzhou.",
        ),
    ],
)
def test_an_item_says_the_news_not_how_it_was_announced(tmp_path: Path, line: str, key_text: str) -> None:
    assert entry_of(tmp_path, line).key_text == key_text


def test_a_cut_abbreviation_is_never_an_item(tmp_path: Path) -> None:
    candidate = entry_of(tmp_path, "The cat's vet is Dr. Okafor on Elm St., open until six.")
    assert candidate.key_text == "The cat's vet is Dr. Okafor on Elm St., open until six."
    label = entry_of(tmp_path, "Peanuts are banned in the office kitchen from now on. Important!")
    assert label.key_text.startswith("Peanuts are banned")


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("**Caroline**: What was your favorite part of the trip?", "a question"),
        ("**Mel**: Aw, that is so sweet. I love it, really!", "pleasantries"),
        ("**阿明**: 哈哈，太好了，真的很开心！", "pleasantries"),
        ("**Mel**: You'd be a great counselor, you really care!", "addressed to the listener"),
        ("**小王**: 你最近怎么样？周末去哪儿玩了？", "a question"),
        # the listener is the subject or is advised, whatever first-person words ride along
        (
            "**Mel**: You've found the courage to be yourself, that's key for our health.",
            "addressed to the listener",
        ),
        (
            "**Caroline**: Don't forget to prepare emotionally, since the wait can be hard.",
            "addressed to the listener",
        ),
        ("**阿明**: 你做得太好了，我们都很佩服。", "addressed to the listener"),
        ("**阿明**: 记得周末多休息，我们下次再聊。", "addressed to the listener"),
    ],
)
def test_questions_and_pleasantries_are_never_candidates(tmp_path: Path, line: str, reason: str) -> None:
    path = tmp_path / "memory" / "2026-11-20.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\ndate: 2026-11-20\n---\n- {line}\n", encoding="utf-8")
    (entry,) = read_note(path, tmp_path).entries
    assert reason in (insights.skip_reason(entry) or "")


@pytest.mark.parametrize(
    "line",
    [
        "Don't forget to renew the passport before the Lisbon trip in May.",
        "Remember to call the landlord about the boiler on Monday.",
        "记得周五之前交房租给李老板。",
        "**Mel**: You know I love live music, I went to three concerts in Berlin this summer.",
        "**阿明**: 你知道吗，我上个月搬到杭州了。",
    ],
)
def test_a_reminder_to_oneself_and_a_you_know_are_statements(tmp_path: Path, line: str) -> None:
    """Advice is address only when said to someone: in a person's own note it is a reminder."""
    path = tmp_path / "memory" / "2026-11-20.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\ndate: 2026-11-20\n---\n- {line}\n", encoding="utf-8")
    (entry,) = read_note(path, tmp_path).entries
    assert insights.skip_reason(entry) is None


def test_specificity_weighs_rare_words_and_needs_a_window(tmp_path: Path) -> None:
    rare = entry_of(tmp_path, "I adopted a greyhound called Biscuit from the Oakland shelter.")
    common = entry_of(tmp_path, "I went to the park with the kids again.")
    frequency = {w: 1 for w in rare.content} | {w: 40 for w in common.content}
    assert insights.specificity(rare, frequency, 80) > insights.specificity(common, frequency, 80)
    assert insights.specificity(rare, frequency, 1) == 0.0
    small = insights.specificity(rare, frequency, 8)
    assert 0 < small < insights.specificity(rare, frequency, 80)


@pytest.mark.parametrize(
    ("sentence", "event"),
    [
        ("Gonna keep grinding and moving ahead.", False),  # resolve to go on, not a plan
        ("I will keep pushing forward.", False),
        ("It's been a wild ride but I'm gonna make it.", False),
        ("I'm gonna start training for the Leeds marathon.", True),
        ("I kept the receipts.", True),
    ],
)
def test_the_resolve_to_keep_going_is_no_event(sentence: str, event: bool) -> None:
    assert salience.read(sentence).event is event


@pytest.mark.parametrize(
    ("sentence", "disclosure"),
    [
        ("Caroline moved to Boston last month.", True),
        ("小林上个月搬到了杭州。", True),  # a name opening a Chinese sentence, no capitals to tell it by
        ("王芳报名了苏州半程马拉松。", True),
        ("妈妈下周三过生日。", True),
        ("我先生下周去上海出差。", True),  # someone close, after 我
        ("高铁晚点了。", False),  # shaped like a name, is not one
        ("周末去爬山了。", False),
    ],
)
def test_a_named_subject_is_a_disclosure_in_either_language(sentence: str, disclosure: bool) -> None:
    assert salience.read(sentence).disclosure is disclosure
