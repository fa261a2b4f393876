"""The clause of a sentence that carries its news: what a summary bullet keeps of a line.

Design
------
A weekly summary states what happened to whom in a fraction of the notes' words. A line of a note
or a chat says its news in one clause and wraps it in others: a greeting ("Hey Mel!"), an
interjection ("Wow,"), a reaction ("and it was so powerful", "which is pretty exciting"), a
question back ("want to see?"), hedges and intensifiers ("really", "just", "kinda").
:func:`gist` keeps the clauses with the news and drops the rest, in English and Chinese:

1. Media annotations that a chat export leaves in place of an attachment (``[shared image: a
   photo of …]``, ``[voice message]``, ``<Media omitted>``, ``[图片]``) are not words anyone said:
   :func:`strip_media` drops them (from MEMORY.md items too).
2. Openers go: greetings, interjections, discourse markers and the name they address ("Hey Mel!",
   "Wow, Melanie!", "Guess what?", "By the way,", "哈哈，", "对了，"), and the preface that announces
   news instead of telling it ("Wanted to let you know", "Great news:", "Not much has changed,
   but", 跟你说个好消息).
3. The sentence is cut into clauses at dashes and semicolons and before "which", "and it",
   "but", "so" (Chinese: at ，；); a clause that says nothing specific (see
   :mod:`vault_tools.curation.salience`: chatter, a maxim, a question, words to the listener) goes.
   A clause that only says how things are going ("I'm doing well", "Things have been wild",
   "Haven't talked in a while", 最近挺好的) goes too. At most :data:`MAX_CLAUSES` stay: the
   clauses that tell an event (someone did, started, changed or plans something) first, then
   others that stand on their own (not a fragment whose subject is the clause before: "it's so
   rewarding").
4. Hedges and intensifiers go ("really", "just", "kinda"; 真的、其实).
5. With ``subject`` (the bullet names who, as "**Caroline**: …"), a leading first person ("I",
   "I'm", "I've", 我) or that name itself goes: "**Caroline**: went to an LGBTQ support group
   yesterday".

Every step is a pure function of text; a sentence with nothing left after them is returned as
it was (tidied), so a caller never loses a line it chose.
"""

from __future__ import annotations

import re

from vault_tools.chinese import fold_cjk
from vault_tools.curation import salience
from vault_tools.curation.similarity import CJK_RUN

MAX_CLAUSES = 2

MEDIA_NOTE = re.compile(
    r"\[(?i:(?:shared|sent|attached|forwarded)\s+)?(?i:image|photo|picture|video|audio|voice(?: message| note)?"
    r"|sticker|gif|file|attachment|document|media)(?::[^\]\n]*)?\]"
    r"|<(?i:media omitted|image omitted|video omitted|attachment omitted)>"
    r"|\[(?:图片|照片|语音|视频|表情|动画表情|文件|链接|位置|红包)\]"
)

#: Words that open a line without saying anything ...
_INTERJECTIONS = (
    r"hey|hi|hello|wow|whoa|woah|oh|ooh|aw+|yeah|yes|yep|yup|well|so|and|but|actually|anyway|anyways|"
    r"honestly|btw|fyi|by the way|guess what|oh man|omg|haha\w*|lol|"
    r"unfortunately|fortunately|luckily|sadly|thankfully|also|plus|yo|hiya|heya|howdy|"
    r"um+|uh+|hmm+|ah+|aha|yay|woohoo|you know what|oh my"
)
#: ... and words that do only when a comma or an exclamation follows ("Great, I …", not "Great Falls").
_REACTIONS = (
    r"ok|okay|sure|sorry|cool|great|nice|awesome|amazing|totally|true|right|no way|look|listen|however|"
    r"as for me|on a different note|on another note|after that|anyway"
)
OPENER = re.compile(
    rf"^\s*(?:(?i:{_INTERJECTIONS})(?![A-Za-z'’-])|(?i:{_REACTIONS})(?=[,!.]))"
    r"(?:[\s,!.…:;?~-]+(?:[A-Z][a-z]+(?=[!,.?]))?)*[\s,!.…:;?~-]*"
)
#: "Thanks!", "Thank you so much for asking, Gina!", "Congrats on the new job!": thanks and
#: congratulations, and what for, say no news (of the one who says them).
THANKS = re.compile(
    r"^\s*(?i:thanks|thank you|thx|ty|cheers|congrats|congratulations|no prob(?:lem)?|no worries|you're welcome)"
    r"(?:\s+(?i:so much|a lot|a ton|again))?"
    r"(?:\s+(?i:for|on)\s+[^,.!?;:]*)?(?:[\s,!.…:;?~-]+(?:[A-Z][a-z]+(?=[!,.?]|$))?)*[\s,!.…:;?~-]*"
)
#: "…, Gina!", "…, Mel.": the name of the person spoken to, closing a sentence (a vocative).
VOCATIVE = re.compile(r"[,，]\s*([A-Z][a-z]+|[\u4e00-\u9fff]{2,3})[\s!！.。?？…~]*$")
#: "That's great Jon!": the listener's name after praise or thanks, no comma.
VOCATIVE_BARE = re.compile(
    r"(?i:great|awesome|cool|nice|amazing|wonderful|fantastic|incredible|thanks|thank you|congrats)"
    r"\s+([A-Z][a-z]+)[\s!！.。?？…~]*$"
)
#: "Mel, I …", "小林，我…": the name of the person spoken to, opening a sentence.
VOCATIVE_FIRST = re.compile(r"^([A-Z][a-z]+|[\u4e00-\u9fff]{2,3})[,，]\s*")
OPENER_ZH = re.compile(
    r"^\s*(?:(?:哈+|嘿+|哇+|嗯+|哦+|啊+|诶|哎+|呀|嗨|对了|话说|其实|说实话|顺便说一下|顺便说|顺便|那个|好吧|好的|是的|对|"
    r"你知道吗|(?:告诉你|跟你说|和你说)(?:一?个)?(?:好消息|事)?|(?:想)?(?:跟|和)你分享一下|好消息"
    r"|(?:我)?(?:这边|这里)?也?有(?:一)?个(?:好)?消息)[\s，,！!。~、…]*|(?:另外|不过|而且|总之|话说回来)[，,]\s*)"
)
#: "(I) just wanted to let you know (that)", "Not much has changed for me, but": the words that
#: announce news before telling it.
PREFACE = re.compile(
    r"^\s*(?i:(?:i\s+)?(?:just\s+)?(?:wanted|want|had|have|needed|need)\s+to\s+(?:let you know|tell you|share"
    r"(?: with you)?|give you (?:a|the) heads[- ]up|fill you in|update you|catch you up)"
    r"(?:\s+(?:on|about)\s+(?:what(?:'s|’s| has) (?:been )?(?:happening|going on|happened|up)|my (?:week|day|weekend|news)"
    r"|some news|something|things|everything)(?:\s+(?:lately|recently|with me))?)?(?!\s+(?:about|on|of)\b)(?:\s+that)?"
    r"|(?:great|good|big|exciting|some|happy) news(?=\s*[-–—:,!])"
    r"|not (?:much|a lot) (?:new|has changed|going on|happening)(?: (?:with|for) me)?(?:,?\s+but)?)"
    r"(?=[\s,.;:!?–—-]|$)[\s,.;:!?–—-]*"
)
#: What says only how things are going: "I'm doing well", "Things have been wild lately",
#: "Haven't talked in a while", 最近挺好的.
_STATUS = (
    r"(?i:(?:(?:lately|recently|honestly),?\s+)?(?:(?:i'm|i’m|i am|i've been|i’ve been|we're|we’re|we've been|been"
    r"|things (?:have been|are|were)|life (?:has been|is)|it's been|it’s been|all (?:is|good))\s+"
    r"(?:(?:really|so|pretty|very|quite|super|a bit)\s+)?(?:doing\s+)?(?:good|great|well|fine|ok|okay|alright|wild|crazy"
    r"|busy|hectic|nuts|awesome|amazing|a (?:wild ride|while|blast))(?:\s+(?:lately|recently|here|too|as well|overall"
    r"|since (?:we|our) last (?:talked|spoke|chatted|chat)))?"
    r"|(?:(?:will|'ll|’ll) )?keep you (?:posted|updated|in the loop)"
    r"|(?:haven't|haven’t|have not) (?:seen you|talked|chatted|spoken|caught up)(?: in (?:a (?:while|few days|bit)|ages|forever"
    r"|some time))?(?: since (?:we|our) last (?:talked|spoke|chatted|chat))?|long time no (?:see|talk|chat)|it's been a while|it’s been a while"
    r"|(?:a lot|(?:so )?much|lots|something(?: \w+)?|(?:(?:some|a few) )?(?:\w+ ){0,2}(?:stuff|things))"
    r" (?:has |have )?(?:been )?happen(?:ed|ing)"
    r"(?: (?:lately|recently|this week|last week|since (?:we|our)(?: last)? (?:talked|spoke|chatted|chat)))?"
    r"(?: (?:for|to|with) me)?"
    r"|(?:last week|this week|the (?:last|past) (?:few )?(?:days|weeks)|life|work|school|everything) (?:was|has been|is)"
    r" (?:(?:so|pretty|really|super) )?(?:wild|crazy|busy|hectic|nuts|intense|a blast|a whirlwind)))"
    r"|(?:我|我们)?(?:最近|这阵子|这段时间)?(?:都|还)?(?:挺|很|蛮|还)?(?:好|不错|忙)的?"
)
STATUS = re.compile(rf"^(?:{_STATUS})[\s.!！。,，]*$")
#: The same opening a sentence whose news follows ("I'm doing well, I just had a picnic").
STATUS_FIRST = re.compile(rf"^\s*(?:{_STATUS})(?:\s*[,;:，；!！]|\s+[-–—])\s*(?=\S)")
CLAUSE_BREAK = re.compile(
    r"(?<=[a-z])-\s+|\s+[-–—]+\s+|;\s+|\s*[；]\s*|，|,?\s+(?=(?:which|and it(?:'s| was| is))\s)|,\s+(?=(?:but|so|because)\s)"
)
#: "… and found it inspiring", "… and is excited about it": how the news felt, after the news.
AFTERTHOUGHT = re.compile(
    r",?\s+and\s+(?:(?:she|he|they|i|we)\s+)?(?:found|finds|felt|feels|enjoyed|enjoys|loved|loves|is|was|are|were|am"
    r"|expresses|expressed|appreciates|appreciated|values|valued|had a (?:great|good|blast|lovely|wonderful))\b.*$"
)
#: "Last weekend I joined X" -> "joined X last weekend": the time after the news, no "I".
TIME_FIRST = re.compile(
    r"^((?i:(?:last|this|next|past|earlier this|over the) (?:\w+ )?(?:week|weekend|month|year|night|summer|spring|fall|"
    r"autumn|winter|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|yesterday|today|tonight|"
    r"recently|lately|earlier|a few days ago|the other day|since (?:we|our) last (?:talked|spoke|chatted|chat)))"
    r",?\s+(?:I|I've|I’ve|I'm|I’m)\s+(.+)$"
)
HEDGE = re.compile(
    r"(?<![A-Za-z'])(?:really|just|also|totally|actually|kinda|kind of|sort of|basically|literally|definitely"
    r"|honestly|truly|super|so so|pretty much)\s+(?=[A-Za-z])"
    r"|(?:真的|其实|就是|确实|挺|非常|特别)(?=[\u4e00-\u9fff])"
)
FIRST_PERSON_EN = re.compile(r"^(?:I|I'm|I’m|I've|I’ve|I am)\s+")
FIRST_PERSON_WILL = re.compile(r"^(?:I'll|I’ll)\s+")
FIRST_PERSON_ZH = re.compile(r"^我(?![们的妈爸哥姐弟妹家老女儿婆公奶爷姥舅叔姑姨媳])")  # "我妈" stays whole
#: After a Chinese name, what makes it more than the subject alone: 和、跟 (and someone), 的 (theirs).
JOINED_ZH = frozenset("和跟与及、的")


#: News of the last days: "yesterday", "last Friday", "I just …", "since we last talked"; 昨天、上周、刚.
RECENT = re.compile(
    r"(?i:(?<![a-z])(?:yesterday|last (?:night|week|weekend|month|monday|tuesday|wednesday|thursday|friday|"
    r"saturday|sunday|mon|tue|tues|wed|thu|thurs|fri|sat|sun)|(?:this|past) (?:week|weekend|morning)|"
    r"(?:i|we) (?:just|finally|recently)|recently|the other day|(?:two|three|a few|couple of) days ago|"
    r"since (?:we|our) last (?:talked|spoke|chatted|chat|talk))(?![a-z]))"
    r"|昨天|前天|昨晚|上周|上个?星期|上个月|这周|本周|刚刚|刚才|(?:我|我们)(?:刚|终于)|最近"
)


#: What someone is in the middle of: "I'm researching adoption agencies", "we've been building a
#: website", a note's "Ana is researching adoption agencies", 我在学钢琴、小林最近在找房子 (not a
#: feeling: "I'm loving it", "I'm feeling great", "Ana is amazing").
ONGOING = re.compile(
    r"(?:(?i:(?<![a-z'’])(?:i'm|i’m|i am|we're|we’re|we are|i've been|i’ve been|we've been|we’ve been|been))"
    r"|^(?:(?!(?:It|This|That|There|Here|What|Everything|Nothing|Life|Work)\b)[A-Z][a-z]+|(?i:he|she|they))"
    r"\s+(?:is|are|has been|have been))"
    r"(?i:\s+(?:(?:also|still|now|currently|finally|really|busy|slowly)\s+)?"
    r"(?!(?:feeling|loving|hoping|thinking|wondering|going to|gonna|doing (?:good|great|well|ok|okay|fine))\b)"
    r"(?!(?:amazing|interesting|exciting|inspiring|boring|relaxing|rewarding|challenging|caring|charming"
    r"|surprising|encouraging|fascinating|overwhelming|refreshing|satisfying|promising|outgoing|loving)\b)"
    r"[a-z]{3,}ing(?![a-z]))"
    r"|^(?i:(?:still|currently|now|also)\s+)+(?!(?:feeling|loving|hoping|thinking|wondering)\b)[a-z]{3,}ing(?![a-z])"
    r"|(?:我|我们)(?:最近|现在|一直|还)?(?:在|正在)(?!想|考虑)[\u4e00-\u9fff]"
    r"|(?:正在|(?:最近|现在|一直)在)(?!想|考虑)[\u4e00-\u9fff]"
)


def ongoing(text: str) -> bool:
    """Whether ``text`` tells what someone is in the middle of (see :data:`ONGOING`)."""
    return bool(ONGOING.search(fold_cjk(text)))  # 現在在學 reads as 现在在学


def recent(text: str) -> bool:
    """Whether ``text`` tells of the last days (see :data:`RECENT`): news, not a standing fact."""
    return bool(RECENT.search(fold_cjk(text)))


def strip_media(text: str) -> str:
    """``text`` without the media annotations a chat export leaves (see the module docstring)."""
    if "[" not in text and "<" not in text:
        return text
    return re.sub(r"[ \t]{2,}", " ", MEDIA_NOTE.sub("", text)).strip()


def gist(sentence: str, subject: str | None = None, listeners: frozenset[str] = frozenset()) -> str:
    """The clauses of ``sentence`` that carry its news (see the module docstring); the sentence
    tidied when none does."""
    text = strip_media(sentence).strip()
    return said(text, subject, listeners) or tidy(drop_openers(text) or text)


def said(sentence: str, subject: str | None = None, listeners: frozenset[str] = frozenset()) -> str:
    """The clauses of ``sentence`` that carry its news, "" when none does. ``listeners``: the
    people it may be said to, whose name closing the sentence is a vocative ("…, Gina!")."""
    text = salience.EMOTICON.sub("", strip_media(sentence)).strip()
    opened = drop_vocative(drop_openers(text), listeners)
    parts = [p.strip(" ,，") for p in CLAUSE_BREAK.split(opened) if p and p.strip(" ,，")]
    kept = telling(parts)
    if not kept:
        return ""
    joiner = "，" if any(CJK_RUN.search(p) for p in kept) else ", "
    told = joiner.join(HEDGE.sub("", cut_afterthought(p)).strip() for p in kept)
    if subject:
        told = drop_subject(told, subject)
    return tidy(told)


def drop_vocative(text: str, listeners: frozenset[str]) -> str:
    """``text`` without the name of one of ``listeners`` that opens or closes it ("Mel, I …",
    "That race sounds great, Mel!"): whom it is said to, not what it says."""
    closing = VOCATIVE.search(text) or VOCATIVE_BARE.search(text)
    if closing and called(closing.group(1), listeners):
        text = text[: closing.start(1)]
    opening = VOCATIVE_FIRST.match(text)
    if opening and called(opening.group(1), listeners):
        text = text[opening.end() :]
    return text


def called(name: str, listeners: frozenset[str]) -> bool:
    """Whether ``name`` is one of ``listeners`` or the short form of one ("Mel" for Melanie)."""
    return name in listeners or (
        name.isascii() and len(name) >= 3 and any(p.startswith(name) for p in listeners)
    )


def time_last(text: str) -> str:
    """A leading time phrase moved after the news, the "I" before it dropped (see TIME_FIRST)."""
    match = TIME_FIRST.match(text)
    if match is None:
        return text
    rest = match[2].rstrip(" .!")
    return f"{rest} {match[1][0].lower()}{match[1][1:]}"


def cut_afterthought(clause: str) -> str:
    """``clause`` without a feeling added after its news (see :data:`AFTERTHOUGHT`), when some
    news is left: "attended a council meeting, and found it inspiring" -> "attended a council meeting"."""
    match = AFTERTHOUGHT.search(clause)
    if match is None or match.start() == 0:
        return clause
    head = clause[: match.start()]
    return head if salience.read(head).event else clause


def drop_openers(text: str) -> str:
    """``text`` without its greetings, interjections and the name they address."""
    while True:
        before = text
        text = OPENER.sub("", text, count=1)
        text = THANKS.sub("", text, count=1)
        text = PREFACE.sub("", text, count=1)
        text = STATUS_FIRST.sub("", text, count=1)
        opener = OPENER_ZH.match(fold_cjk(text))  # 對了 as 对了; one character for one: the offset holds
        text = text[opener.end() :] if opener else text
        if text == before:
            break
    return text


def telling(parts: list[str]) -> list[str]:
    """The clauses worth keeping, in the order said: the event clauses first, then others that say
    something on their own (not chatter, a question or a fragment: "it was so powerful")."""
    said = [(p, r) for p in parts if (r := salience.read(p)).usable and not STATUS.match(fold_cjk(p))]
    events = [p for p, r in said if r.event and (r.disclosure or r.names or r.dated)]
    if events and not CJK_RUN.search(events[0]):  # a Chinese clause leans on the next one
        rest = [p for p, r in said if p not in events and not r.fragment]
        return [p for p in parts if p in (events + rest)[:MAX_CLAUSES]]
    return [p for p, _r in said][:MAX_CLAUSES]


def drop_subject(text: str, subject: str) -> str:
    """``text`` without a leading first person or ``subject``'s own name (the bullet names them)."""
    if text.startswith(subject + " ") and not text.startswith(subject + " and "):
        return text[len(subject) + 1 :]
    if (
        CJK_RUN.match(subject)
        and text.startswith(subject)
        and fold_cjk(text[len(subject) : len(subject) + 1]) not in JOINED_ZH
    ):
        return text[len(subject) :]  # "小林搬到了杭州" -> "搬到了杭州", not "小林和阿杰…" nor "小林的猫…"
    text = time_last(text)
    will = FIRST_PERSON_WILL.match(text)
    if will:
        return "will " + text[will.end() :]
    return FIRST_PERSON_ZH.sub("", FIRST_PERSON_EN.sub("", text, count=1), count=1)


def tidy(text: str) -> str:
    """One line, no trailing comma or exclamation, a full stop where the clause ended."""
    text = re.sub(r"\s+", " ", text).strip(" ,;:，；：-–—")
    text = re.sub(r"[!！]+$", "", text).rstrip()
    text = re.sub(r"[.。]+$", "", text).rstrip()
    return text
