"""Salience: what a sentence of a note says about someone's life, read from general signals.

Design
------
The heartbeat keeps what an agent should know without searching. Cue words ("important",
"always", "love") say little about that: people use them for pleasantries as much as for facts.
This module reads a sentence for signals that hold across people, languages and topics, each a
pure function of text (no files, no clock):

* **Against** — a *question* (ends in ``?``/``？``, or ``吗``/``呢``), *chatter* (greetings, thanks,
  exclamations and generic sentiment: no content word once stop words and the vocabulary of
  pleasantries are left out, "That's so cool!", "Taking time for yourself is so important."),
  *address* (a sentence about the listener, "you…", with nothing about the speaker, or whose
  subject is the listener, "You've found the courage…", or that advises them, "Don't forget…":
  praise and advice in a conversation), a *reaction* (an interjection's exclamation with no news of the
  speaker, "Wow, what an amazing pic!"), a *maxim* (an evaluation of no one in particular,
  "Unconditional love is so important."), and a *fragment* (a sentence whose subject is a pronoun
  that points into another line, "They brighten up our day.", with no name of its own).
  Questions, chatter, address, reactions and maxims are never an item's text; a fragment scores
  lower, and the heartbeat promotes it only with the line before it as context.
* **Disclosure** — the sentence is about a person: the speaker ("I", "my", "we", 我), someone
  close ("my sister", 我女儿), or someone named as its subject ("Caroline is…"; in Chinese, which
  has no capitals, a name read by its shape and the predicate after it: 小林搬到了杭州、妈妈下周三
  过生日, see :func:`chinese_subject`).
* **Event** — something happened or is planned: a verb in the past tense or of a change of
  state (started, joined, moved, adopted, lost, finished; 开始、加入、搬到、换了; a verb with
  了/过), or a plan with intent or a date ("going to", "next month", 打算, 下周).
* **Content** — the sentence's content words (stemmed, stop words and pleasantries out; CJK
  bigrams), from which the caller measures *specificity* against the rest of the vault (rare
  words weigh more), plus proper names, numbers and dates found here.

:func:`sentences` splits text into sentences without cutting at abbreviations ("Dr. Okafor",
"e.g. pears", "No. 5") or initials, and keeps a lone label such as "Important!" with the
sentence before it rather than as a sentence of its own.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

from vault_tools.chinese import fold_cjk
from vault_tools.curation.similarity import CJK_RUN, stem

WORD = re.compile(r"[A-Za-z][A-Za-z'’]*|\d+(?:[.,:]\d+)*")

ABBREVIATIONS = frozenset(
    """mr mrs ms mx dr prof sr jr st mt ave rd no nos vs etc e.g i.e eg ie cf al approx dept est fig
    inc ltd co corp jan feb mar apr jun jul aug sep sept oct nov dec mon tue tues wed thu thur thurs
    fri sat sun a.m p.m am pm u.s u.k ph.d""".split()  # noqa: SIM905
)
BREAK = re.compile(r"[.!?…]+[\"'”’)\]]*\s+(?=\S)|(?<=[。！？；])")
LONE_LABEL = re.compile(
    r"^(?i:important|remember|note|noted|fyi|always|never|update|reminder|done|true)[!.]*$"
    r"|^(?:重要|记住|注意|提醒)[!！。]*$"
)


def sentences(text: str) -> list[str]:
    """``text`` cut into sentences, line by line, never at an abbreviation or an initial."""
    out: list[str] = []
    for line in text.splitlines():
        start = 0
        for match in BREAK.finditer(line):
            if _is_abbreviation(line[: match.start() + 1]):
                continue
            part = line[start : match.end()].strip()
            if part:
                _append(out, part)
            start = match.end()
        rest = line[start:].strip()
        if rest:
            _append(out, rest)
    return out


def _is_abbreviation(before: str) -> bool:
    """Whether the period that ends ``before`` belongs to an abbreviation or an initial."""
    if not before.endswith("."):
        return False
    token = before.rsplit(None, 1)[-1].lstrip("(\"'“‘[").lower()
    word = token[:-1]
    return word in ABBREVIATIONS or (len(word) == 1 and word.isalpha())


def _append(out: list[str], part: str) -> None:
    if out and LONE_LABEL.match(fold_cjk(part)):
        out[-1] = f"{out[-1]} {part}"
        return
    statement, dash, question = part.rpartition(" - ")
    if not dash:
        statement, dash, question = part.rpartition(" — ")
    if dash and statement and question.rstrip().endswith(("?", "？")):
        out += [statement.strip(), question.strip()]  # "I finished it - want to see?": two things
    else:
        out.append(part)


# ---------------------------------------------------------------------------------------------
# What a sentence is

QUESTION = re.compile(r"[?？]\s*[\"'”’)）]*\s*$|[吗呢吧][\s。.!！]*$")
STOPWORDS = frozenset(
    """a an the to of in on at for and or but is are was were be been being am it its it's my me we our us
    i i'm i've i'd i'll you you're you've you'd you'll your yours he she his her him they them their this
    that that's these those with by as from so do does did done not no yes if then than too very just also
    again still about into over after before up out what when where who whom which how why there here
    have has had having will would could should can may might must shall one ones some any all more most
    much many such own same other another each every both either neither few lot lots kind sort bit
    thing things stuff something anything everything nothing someone anyone everyone way ways get got
    getting make made makes go going gone went come came let lets let's i'm im dont don't can't cant
    won't didn't doesn't isn't aren't wasn't weren't haven't hasn't wouldn't couldn't shouldn't""".split()  # noqa: SIM905
)
#: Words of pleasantries and generic sentiment: a sentence made only of these (and stop words)
#: says nothing specific. English and Chinese; stems are matched by prefix.
PLEASANTRY = frozenset(
    """hi hey hello wow aw aww awww oh ooh yay haha hahaha lol omg yeah yep yup ok okay sure thanks
    thank thx congrats congratulations cheers bye glad happy sorry cool great nice good awesome amazing
    incredible fantastic wonderful lovely beautiful gorgeous sweet cute fun funny exciting excited super
    totally really truly so such absolutely definitely totally pretty quite real true right love loved
    loving like liked likes enjoy enjoyed feel feeling felt feels think thought know knew see seen sound
    sounds sounded look looks looked seem seems important special proud inspiring inspired inspiration
    powerful meaningful rewarding grateful thankful blessed appreciate appreciated agree means mean
    always never ever forever keep keeping hope hoping wish best better well welcome hear heard glad
    tell told say said talk talking chat catch care take taking time times day days life people friend
    friends moment moments stuff lot today yesterday week weekend tonight now soon later again agreed
    doubt doubts fingers crossed luck enough impressive bet yum yummy""".split()  # noqa: SIM905
)
PLEASANTRY_ZH = re.compile(
    r"坚持下去|坚持|不会放弃|放弃|好起来|梦想成真|梦想|努力|希望|相信|一切|不管多难|不管|每天|"  # resolve and hope
    r"哈+|嘿+|哇+|嗯+|哦+|啊+|呀|吧|呢|啦|嘛|真的|真是|太|好|棒|厉害|开心|高兴|谢谢|感谢|多谢|加油|恭喜|"
    r"不错|可以|喜欢|爱|觉得|感觉|特别|非常|很|超|挺|也|都|就|还|是|的|了|我|你|他|她|们|这|那|个|吗|在|有|没|和|"
    r"一下|一起|知道|明白|当然|没错|对|确实|同意|重要|总是|永远|一直|今天|昨天|现在|时候|事情|东西|"
    r"嗨|嘿|好久不见|不见|最近|怎么样|关心|可爱|漂亮|美|酷|牛|赞|羡慕|佩服|辛苦|注意身体|保重|"
    r"放心|没事|没关系|不客气|借你吉言|好嘞|拜拜|再见|晚安"
)
#: A wish or a goodbye, said as one sentence: "替我祝阿姨生日快乐！", "我们改天再聊", "早日康复".
WISH_OR_GOODBYE_ZH = re.compile(
    r"^\W*(?:(?:替我|帮我)?(?:祝|祝福)[\u4e00-\u9fff]{0,6}?(?:生日快乐|快乐|顺利|健康|成功|好运|康复|平安)"
    r"|(?:我们)?(?:改天|回头|下次|有空)再?(?:聊|说|约)|早日康复|一路顺风|一切顺利)\W*$"
)
SECOND_PERSON = re.compile(
    r"(?i:(?<![a-z'])(?:you|your|yours|yourself|you're|you've|you'd|you'll|ya)(?![a-z']))|[你您]"
)
FIRST_PERSON = re.compile(
    r"(?i:(?<![a-z'])(?:i|i'm|i've|i'd|i'll|me|my|mine|myself|we|we're|we've|our|ours|us)(?![a-z']))|我"
)
#: Family and the people around someone, as the subject of a sentence (妈妈下周三过生日).
KIN_ZH = (
    "妈妈|爸爸|老妈|老爸|母亲|父亲|老婆|老公|妻子|丈夫|太太|先生|女儿|儿子|孩子|哥哥|姐姐|弟弟|妹妹|奶奶|爷爷|"
    "外婆|外公|姥姥|姥爷|舅舅|舅妈|叔叔|阿姨|婶婶|姑姑|姑妈|表哥|表姐|表弟|表妹|堂哥|堂姐|女朋友|男朋友|"
    "老板|老师|同事|室友|邻居|房东"
)
#: The most common family names (one character each).
SURNAMES_ZH = (
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任"
    "沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤"
)
#: How a predicate starts after a subject: a verb of saying, being or doing, an adverb of time or
#: manner, a preposition; or the possessive 的.
PREDICATE_START_ZH = (
    "说|是|在|正在|把|被|和|跟|与|的|要|想|会|能|已|刚|才|今|明|昨|前|后|下|上|这|那|去|来|回|到|从|对|给|"
    "让|请|叫|找|带|送|买|卖|换|搬|开|关|学|考|拿|做|当|生|结|离|加|退|住|病|过|也|都|还|又|再|就|终|一|不|没|"
    "很|最|每|周|星|打|约|报|参|收|领|辞|入|毕|订|怀|出|准|计|决|喜|爱|觉|感|发|得|有"
)
CJK_NAME_CHAR = r"[\u4e00-\u9fff]"
NAME_ZH = re.compile(
    rf"^(?:(?P<kin>{KIN_ZH})|(?P<familiar>[小老阿]{CJK_NAME_CHAR})"
    rf"|[{SURNAMES_ZH}](?P<doubled>{CJK_NAME_CHAR})(?P=doubled)"  # 王明明: not 王明 before 明天
    rf"|(?P<full>[{SURNAMES_ZH}]{CJK_NAME_CHAR}{{1,2}}?))(?=(?:{PREDICATE_START_ZH}))"
)
#: Words shaped like a name that are not one ("小时候", "老是", "马上", "周末", "高兴").
NAME_SHAPED_WORDS_ZH = (
    "小时 小区 小说 小心 小组 小孩 小学 小吃 老是 老家 老实 阿里 马上 高兴 高铁 高速 方便 方面 方法 于是 "
    "任何 白天 周末 周围 金额 钱包 向来 程序 黄金 江湖 石头 万一 毛病 孔子 史上 龙年 石油 雷雨 严重 "
    "武汉 江苏 江西 黄山 金华 余杭 苏州 温州"
)
NOT_A_NAME_ZH = frozenset(NAME_SHAPED_WORDS_ZH.split())
KIN = re.compile(
    r"(?i:(?<![a-z])(?:my|our|his|her|their) (?:\w+ )?(?:wife|husband|partner|girlfriend|boyfriend|kids?|"
    r"children|daughters?|sons?|mom|mum|mother|dad|father|parents|sisters?|brothers?|family|grandma|grandpa|"
    r"grandmother|grandfather|aunt|uncle|cousin|niece|nephew|friends?|boss|dog|cat|pets?)(?![a-z]))"
    rf"|(?:我|我们)(?:的)?(?:{KIN_ZH}|父母|家人|朋友|狗|猫)"
)
#: In a turn of a conversation, a sentence whose subject is the listener ("You've found the courage…", "Your kids are lucky",
#: 你做得太好了) or that tells them what to do ("Don't forget to…", 记得…): praise and advice,
#: whatever first-person words ride along ("…that's important for our health").
TO_THE_LISTENER = re.compile(
    r"(?i:^\W*(?:(?:wow|oh|aw+|yeah|yes|hey|well|so|and|but|honestly|seriously)\W+)*(?:[A-Z][a-z]+,\s*)?"
    r"(?:(?!you know\b|you see\b)(?:you|your|you're|you've|you'll|you'd|ya)(?![a-z'])"
    r"|(?:don't|do not|never) (?:forget|give up|stop|worry|hesitate)|make sure|remember to|keep it up"
    r"|keep (?:going|pushing|up)|take care|stay (?:strong|positive|safe)))"
    r"|^\W*(?:(?!你知道|你看)你|您|别忘了|记得|一定要|千万|加油)"
)
ANAPHORA = re.compile(
    r"(?i:^(?:and |but |so |yeah,? |yes,? |oh,? )?(?:it|that|this|they|those|these|he|she|there)(?![a-z]))|^(?:它|这|那|他们|她们)"
)
NAMED_SUBJECT = re.compile(r"^(?:[A-Z][a-z]+(?:'s)? )(?:(?:and|&) [A-Z][a-z]+ )?[a-z]")
PAST_IRREGULAR = frozenset(
    """went got took made ran bought saw met won began found gave wrote built left came became sold drew
    had did told felt kept lost paid read sent spent taught thought brought caught fought held heard
    led lent meant put quit rode rose sang sat slept spoke stood swam threw understood woke wore
    flew grew knew drove ate fell forgot""".split()  # noqa: SIM905
)
#: -ed words that are mostly adjectives of feeling, not events.
FEELING_ED = frozenset(
    """excited interested tired bored amazed inspired blessed scared stressed thrilled pleased
    surprised overwhelmed relieved worried motivated touched moved impressed delighted obsessed
    exhausted amused annoyed concerned determined devoted dedicated experienced talented skilled
    related needed used supposed named titled based located""".split()  # noqa: SIM905
)
CHANGE_EN = re.compile(
    r"(?i:(?<![a-z])(?:start(?:ed|ing)?|join(?:ed|ing)?|mov(?:ed|ing) (?:to|into|out|in)|adopt(?:ed|ing)?|"
    r"finish(?:ed|ing)?|quit|graduat(?:ed|ing)|married|engaged|divorced|retired|hired|fired|promoted|"
    r"signed up|enrolled|launched|opened|closed|broke up|gave birth|passed away|got (?:a|an|my|our|into)|"
    r"bought|sold|lost|won|ran|visited|travel(?:l)?ed|took up|picked up|learned|learnt|"
    r"going to|gonna|plans? to|planning to|planned|will be|i'll|we'll|about to|next (?:week|month|year|weekend|"
    r"summer|spring|fall|autumn|winter|time|monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
    r"|this (?:weekend|summer|fall|winter|spring))(?![a-z]))"
)
CHANGE_ZH = re.compile(
    r"开始|加入|搬到|搬家|搬进|换了|换成|买了|卖了|参加|报名|领养|收养|完成|辞职|离职|入职|毕业|结婚|订婚|离婚|分手|"
    r"退休|生了|怀孕|去世|出生|学会|考上|拿到|赢了|输了|丢了|去了|回了|见了|打算|计划|准备|下周|下个月|明年|下次|"
    r"[\u4e00-\u9fff][了过](?![解])"
)
NUMBER_OR_DATE = re.compile(
    r"\d|(?<![A-Za-z])(?:January|February|March|April|May|June|July|August|September|October|November|"
    r"December|Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)(?![a-z])"
    r"|[一二三四五六七八九十两]+[年月日号岁个次天周]|星期|周[一二三四五六日末]"
)

INTERJECTION = re.compile(
    r"(?i)^\W*(?:wow|whoa|aw+|oh+|ooh|omg|haha\w*|yay|congrats|awesome|amazing|cool|nice|great)\b"
)
EVALUATION = re.compile(
    r"(?i)\b(?:is|are|was|were|'s|feels?|sounds?|looks?|seems?)\s+(?:(?:so|really|very|super|truly|such|"
    r"pretty|just|always|incredibly|absolutely)\s+)*(?:an?\s+|(?:one of )?the (?:most |best )?)?(?:important|amazing|special|great|key|vital|"
    r"essential|awesome|wonderful|beautiful|inspiring|powerful|rewarding|meaningful|fun|cool|nice|lovely|"
    r"incredible|fantastic|huge|everything|priceless|precious)\b"
)
#: The same in Chinese, closing the sentence: "…真的太重要了", "…是最珍贵的", "…是人生中最宝贵的财富".
EVALUATION_ZH = re.compile(
    r"(?:是|真的|真是|实在|太|很|非常|特别|最|多么|多)(?:重要|珍贵|宝贵|美好|难得|幸福|有意义|值得|了不起|温暖|治愈|美妙)"
    r"(?:的事情?|的东西|的财富|的)?(?:了|啊|呀|呢)?[！!。.~～]*$"
)
CAPITALISED = re.compile(r"\b[A-Z][a-z]+\b")
#: "<3", ":)", ";-D", "xD" standing alone: a face, not a word ("8:30" and "(see 8)" are no faces).
EMOTICON = re.compile(r"(?<!\S)(?:<3+|[:;=][-']?[)(DPpO3/\\|*]+|[xX]D+)(?!\S)")
#: "gonna keep pushing", "will keep going", "gonna make it": resolve to go on, not a plan.
KEEP_GOING = re.compile(
    r"(?i:(?<![a-z])(?:gonna|going to|will|'ll|’ll) (?:keep (?:on )?(?:\w+ing|going|at it|it up)|make it|get through"
    r" (?:it|this)|be (?:fine|ok|okay|alright))(?![a-z]))"
)
ARTICLES = frozenset({"the", "a", "an", "some", "every", "each", "our", "my", "his", "her"})


@dataclass(frozen=True)
class Sentence:
    """One sentence read for its salience signals (see the module docstring)."""

    text: str
    question: bool
    chatter: bool
    address: bool
    fragment: bool
    disclosure: bool
    event: bool
    dated: bool
    names: int  # proper names that are not the first word
    content: frozenset[str]  # content words (stems) and CJK bigrams

    @property
    def usable(self) -> bool:
        """A statement worth an item's text: not a question, chatter or words to the listener."""
        return not (self.question or self.chatter or self.address)

    @property
    def strength(self) -> float:
        """A rough order of the sentences of one entry: which ones carry what it says."""
        return (
            len(self.content)
            + 3 * self.event
            + 2 * self.disclosure
            + 2 * self.dated
            + 2 * self.names
            - 4 * self.fragment
        )


@functools.lru_cache(maxsize=8192)
def read(sentence: str, turn: bool = False) -> Sentence:
    """The salience signals of one sentence (a line of a note, without its markup).

    ``turn``: the sentence is said to someone (a turn of a conversation), so one whose subject is
    the listener or that advises them is address; in a person's own note, "Don't forget to call
    the landlord" is a reminder to themselves."""
    flat = fold_cjk(unicodedata.normalize("NFKC", sentence).strip())  # 謝謝 reads as 谢谢
    flat = EMOTICON.sub(" ", flat).strip()
    content = content_words(flat)
    if content and greeting(flat):
        content = content_words(CAPITALISED.sub(" ", flat))  # "Hey Ben!": a name is no content
    first = bool(FIRST_PERSON.search(flat))
    event = has_event(flat)
    names = proper_names(flat)
    dated = bool(NUMBER_OR_DATE.search(flat))
    if (
        content
        and not names
        and not dated
        and (
            reaction(flat, event and first)
            or maxim(flat, first or event)
            or (not first and EVALUATION_ZH.search(flat) is not None and chinese_subject(flat) is None)
        )
    ) or WISH_OR_GOODBYE_ZH.match(flat):
        content = frozenset()  # "Wow, what an amazing pic!", "Unconditional love is so important."
    return Sentence(
        text=sentence,
        question=bool(QUESTION.search(flat)),
        chatter=not content,
        address=(bool(SECOND_PERSON.search(flat)) and not first)
        or (turn and bool(TO_THE_LISTENER.match(flat))),
        fragment=bool(ANAPHORA.match(flat)) and not proper_names(flat),
        disclosure=first or bool(KIN.search(flat)) or named_subject(flat),
        event=event,
        dated=dated,
        names=names,
        content=content,
    )


def greeting(text: str) -> bool:
    """Whether ``text`` opens with a pleasantry ("Hey", "Wow", "Thanks"): a name after it is no content."""
    first = WORD.match(text.lstrip("\"'“‘(*_ "))
    return first is not None and first.group(0).lower() in PLEASANTRY


def reaction(text: str, news: bool) -> bool:
    """An exclamation that reacts ("Wow, what an amazing pic!"), unless it tells news of the speaker."""
    return not news and bool(INTERJECTION.match(text)) and text.rstrip().endswith(("!", "！"))


def maxim(text: str, personal: bool) -> bool:
    """Generic sentiment: something 'is so important' or 'amazing', said of no one in particular."""
    return not personal and bool(EVALUATION.search(text))


def named_subject(text: str) -> bool:
    """Whether ``text`` opens with a name as its subject ("Caroline is…", "小林搬到了杭州", "妈妈下周
    三过生日"), not "The plumber…"."""
    match = NAMED_SUBJECT.match(text)
    if match is not None and match.group(0).split()[0].lower() not in STOPWORDS | ARTICLES:
        return True
    return chinese_subject(text) is not None


def chinese_subject(text: str) -> str | None:
    """The Chinese name ``text`` opens with, as written (Traditional characters are read as
    Simplified: 媽媽、張偉 as 妈妈、张伟)."""
    folded = fold_cjk(text)
    match = NAME_ZH.match(folded)
    if match is None:
        return None
    name = match.group(0)
    if name in NOT_A_NAME_ZH or NUMBER_OR_DATE.search(name):
        return None
    return text[: len(name)]


def content_words(text: str) -> frozenset[str]:
    """Stems of the words that carry content, and the CJK bigrams left once pleasantries are out."""
    out: set[str] = set()
    for run in CJK_RUN.findall(text):
        rest = PLEASANTRY_ZH.sub(" ", run)
        for piece in rest.split():
            if len(piece) >= 2:
                out.update(piece[i : i + 2] for i in range(len(piece) - 1))
    for word in WORD.findall(CJK_RUN.sub(" ", text)):
        low = word.lower().replace("’", "'")
        if low in STOPWORDS or low in PLEASANTRY or (len(low) < 3 and not low.isdigit()):
            continue
        base = low[:-2] if low.endswith("'s") else low
        if base in PLEASANTRY or base in STOPWORDS:
            continue
        out.add(stem(base))
    return frozenset(out)


def proper_names(text: str) -> int:
    """Capitalised words that do not start a sentence or a clause: names of people, places, works."""
    count = 0
    for match in re.finditer(r"(?<=[a-z0-9,;] )[A-Z][A-Za-z]+", text):
        if match.group(0).lower() not in STOPWORDS and match.group(0) != "I":
            count += 1
    return count


def has_event(text: str) -> bool:
    """Something happened or is planned: a past tense, a change of state, an intent with a date
    (not the resolve to go on: "gonna keep pushing")."""
    text = KEEP_GOING.sub(" ", text)
    if CHANGE_EN.search(text) or CHANGE_ZH.search(text):
        return True
    for word in re.findall(r"[A-Za-z]+", text):
        low = word.lower()
        if low in PAST_IRREGULAR or (len(low) > 4 and low.endswith("ed") and low not in FEELING_ED):
            return True
    return False
