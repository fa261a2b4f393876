"""The clause of a line that carries its news: media annotations, openers, reactions, hedges, who."""

from __future__ import annotations

import pytest

from vault_tools.curation import clauses


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The stories were so inspiring! [shared image: a photo of a dog]", "The stories were so inspiring!"),
        ("Look at this [image: sunset.jpg] from the lake", "Look at this from the lake"),
        ("<Media omitted>", ""),
        ("[voice message] call me back", "call me back"),
        ("看我新家的阳台 [图片]", "看我新家的阳台"),
        ("[表情][表情] 太好了", "太好了"),
    ],
)
def test_media_annotations_a_chat_export_leaves_are_dropped(text: str, expected: str) -> None:
    assert clauses.strip_media(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "See [[2026-03-10]] and [importance:: 0.9]",  # a wikilink and an inline field
        "- [x] booked the [hotel](https://example.com)",  # a task box and a Markdown link
        "He said [sic] it was fine; see [1] and [the image we discussed]",  # text in brackets
    ],
)
def test_brackets_that_hold_text_stay(text: str) -> None:
    assert clauses.strip_media(text) == text


@pytest.mark.parametrize(
    ("sentence", "subject", "expected"),
    [
        # the reaction after the news goes; the speaker's "I" goes when the bullet names them
        (
            "I went to a support group yesterday and it was so powerful.",
            "Ana",
            "went to a support group yesterday",
        ),
        (
            "Gonna check out career options, which is pretty exciting!",
            "Ana",
            "Gonna check out career options",
        ),
        # an interjection and the name it addresses, a question back after a dash
        ("Wow, Melanie! I just signed up for a pottery class.", "Mel", "signed up for a pottery class"),
        (
            "FYI, I finished another pottery project - want to see a pic?",
            "Mel",
            "finished another pottery project",
        ),
        # a time phrase in front goes after the news
        (
            "Last weekend I joined a mentorship program - it's so rewarding.",
            "Ana",
            "joined a mentorship program last weekend",
        ),
        ("I'll start the new job in May.", "Ana", "will start the new job in May"),
        # notes about a person: their name is the bullet's; a feeling added after the news goes
        ("Melanie ran a charity race last Saturday.", "Melanie", "ran a charity race last Saturday"),
        ("Ana attended a council meeting and found it moving.", "Ana", "attended a council meeting"),
        # a clause that says something on its own stays after the news; a fragment does not
        (
            "Decided to keep the photos on the NAS; its hostname is nas-2",
            None,
            "Decided to keep the photos on the NAS, its hostname is nas-2",
        ),
        ("I joined a choir - it's so rewarding to sing with them.", "Ana", "joined a choir"),
        # without a subject the sentence keeps its "I"
        ("Honestly, I really moved the standup to 9:30.", None, "I moved the standup to 9:30"),
        # Chinese: openers, chatter clauses and the leading 我 go; the clauses with the news stay
        ("哈哈，对了，我下周搬到上海。", "小林", "下周搬到上海"),
        ("周末去了杭州，见了老同学，吃得很开心。", "小林", "周末去了杭州，见了老同学"),
        ("我对花生过敏，吃了会起荨麻疹", None, "我对花生过敏，吃了会起荨麻疹"),
        # nothing but a pleasantry: returned tidied, never empty
        ("That's so cool!", "Ana", "That's so cool"),
    ],
)
def test_the_gist_keeps_the_news(sentence: str, subject: str | None, expected: str) -> None:
    assert clauses.gist(sentence, subject) == expected


@pytest.mark.parametrize(
    ("text", "recent", "ongoing"),
    [
        ("Yesterday I took the kids to the museum", True, False),
        ("I just signed up for a pottery class", True, False),
        ("I'm researching adoption agencies", False, True),
        ("We've been building a website for the shop", False, True),
        ("I'm feeling great about it", False, False),
        ("昨天去了医院复查", True, False),
        ("我最近在学钢琴", True, True),
        ("我在想要不要换工作", False, False),
        ("I love painting sunsets", False, False),
    ],
)
def test_news_of_the_last_days_and_what_someone_is_in_the_middle_of(
    text: str, recent: bool, ongoing: bool
) -> None:
    assert (clauses.recent(text), clauses.ongoing(text)) == (recent, ongoing)


@pytest.mark.parametrize(
    ("sentence", "subject", "expected"),
    [
        ("Thanks for asking, Priya!", "Tomas", ""),  # thanks, and what for: no news
        ("Thank you so much, I booked the ferry to Hydra.", "Tomas", "booked the ferry to Hydra"),
        ("That bake sale sounds great, Pri!", "Tomas", ""),  # praise, to the listener by a short name
        ("Priya, I finally sold the old van.", "Tomas", "finally sold the old van"),
        ("I moved to Porto, Portugal.", "Tomas", "moved to Porto, Portugal"),  # a place, not a listener
        ("Unfortunately, I lost my keys at the market.", "Tomas", "lost my keys at the market"),
        ("Congrats on the bakery, Priya!", "Tomas", ""),  # what the listener did, not the speaker
        ("Congratulations, Priya! I sold the old van.", "Tomas", "sold the old van"),
        ("No problem, Priya!", "Tomas", ""),
        ("Cheers for asking! I passed the driving test.", "Tomas", "passed the driving test"),
        ("As for me, I adopted a kitten.", "Tomas", "adopted a kitten"),
        ("Plus, I joined the rowing club.", "Tomas", "joined the rowing club"),
        ("After that, we drove to Whitby.", "Tomas", "we drove to Whitby"),
        ("After that match I quit the team.", "Tomas", "After that match I quit the team"),
        ("不过，我下周要去昆明出差。", "阿梅", "下周要去昆明出差"),
        ("还有三天就搬家了。", "阿梅", "还有三天就搬家了"),  # 还有 without a comma is no opener
        ("對了，我上週搬到了高雄！", "阿梅", "上週搬到了高雄"),  # Traditional: 对了 as written there
        ("對了我下個月去台南出差。", "阿梅", "下個月去台南出差"),
        ("谢谢关心，小周！", "阿梅", ""),
        ("你的画太好看了，小周！", "阿梅", ""),
        ("小周，我下个月要去昆明出差。", "阿梅", "下个月要去昆明出差"),
        ("我搬到了上海，浦东。", "阿梅", "搬到了上海，浦东"),
    ],
)
def test_what_is_said_leaves_out_thanks_and_whom_it_is_said_to(
    sentence: str, subject: str, expected: str
) -> None:
    assert clauses.said(sentence, subject, frozenset({"Priya", "Tomas", "小周", "阿梅"})) == expected


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("Just wanted to let you know I joined the rowing club!", "joined the rowing club"),
        ("Wanted to let you know that I'm moving to Leeds.", "moving to Leeds"),
        (
            "Just wanted to give you the heads up on what's been happening lately- I sold the old van.",
            "sold the old van",
        ),
        ("Great news - I passed the driving test!", "passed the driving test"),
        ("Not much has changed for me, but I adopted a kitten.", "adopted a kitten"),
        ("I'm doing well, I just booked the ferry to Hydra.", "booked the ferry to Hydra"),
        ("Things have been great since we last talked, I sold the old van.", "sold the old van"),
        ("Haven't talked in a few days, wanted to let you know I quit the team.", "quit the team"),
        ("Things have been wild!", ""),  # how things are going, and nothing else
        ("Some pretty cool stuff happened since we talked.", ""),
        ("Something exciting happened recently for me!", ""),
        (
            "Last week was wild, something incredible happened - I got a deal with an outdoor gear company.",
            "got a deal with an outdoor gear company",
        ),
        ("That's impressive, I bet.", ""),
        ("Haven't seen you since we last talked.", ""),
        ("That is great Priya!", ""),  # praise and the listener's name, no comma
        ("I met Priya.", "met Priya"),  # a name after a verb is no vocative
        ("Meet me at the bakery at 8:30 :)", "Meet me at the bakery at 8:30"),
        ("So much has happened since we last talked, I moved to Leeds!", "moved to Leeds"),
        ("Crazy things happened at work: I got promoted.", "Crazy things happened at work: I got promoted"),
        # the preface stays when what it announces is in it
        ("I want to tell you about my trip to Rome.", "want to tell you about my trip to Rome"),
        ("Things are good between us now.", "Things are good between us now"),
        ("跟你说个好消息，我下个月搬到杭州。", "下个月搬到杭州"),
        ("我最近挺好的，刚开始学瑜伽。", "刚开始学瑜伽"),
        ("告訴你個好消息，我下個月搬到高雄。", "下個月搬到高雄"),  # Traditional
        ("我这边也有个消息，我报名了下个月的苏州半程马拉松！", "报名了下个月的苏州半程马拉松"),
        ("我妈下周三过六十岁生日。", "我妈下周三过六十岁生日"),  # 我妈 is who, not the speaker
    ],
)
def test_the_words_that_announce_news_or_say_how_things_are_going_are_left_out(
    sentence: str, expected: str
) -> None:
    assert clauses.said(sentence, "Tomas", frozenset({"Priya", "Tomas"})) == expected


def test_the_gist_of_a_sentence_with_no_news_is_the_sentence_itself() -> None:
    assert clauses.gist("Thanks for asking, Priya!", None, frozenset({"Priya"})) == "Thanks for asking, Priya"


@pytest.mark.parametrize(
    ("text", "ongoing"),
    [
        ("Priya is researching bakeries in Leeds", True),  # a note about someone
        ("She has been training for the Leeds marathon", True),
        ("They are building a shed", True),
        ("Priya is amazing", False),  # a judgement, not an activity
        ("It is raining", False),
        ("Tomas is feeling great", False),
        ("小周最近在学游泳", True),
        ("小周在杭州买了房", False),  # 在 a place
        ("我最近在学游泳", True),
        ("小周現在在學游泳", True),  # Traditional
        ("Still working on opening the bakery", True),  # the speaker left unsaid, as in a chat
        ("Currently training for the Leeds marathon", True),
        ("Still thinking about it", False),
        ("Working out is good for you", False),  # no "still", "currently": an -ing subject
    ],
)
def test_what_someone_else_is_in_the_middle_of(text: str, ongoing: bool) -> None:
    assert clauses.ongoing(text) is ongoing
