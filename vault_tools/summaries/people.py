"""Whom a note is about: the person a third-person note opens with, in English and Chinese.

Design
------
An agent's short notes say what happened to someone in the third person: "Melanie ran a charity
race", "小林搬到了杭州。", "妈妈下周三过生日". A summary groups such notes into one bullet per
person (:mod:`vault_tools.summaries.text`), so it needs the name a note opens with as its subject.

* **English**: a capitalised first word followed by a verb ("Melanie ran", "Jonas is") or a
  possessive ("Jonas's team"), that is not a stop word, a pleasantry, or a verb itself
  ("Decided to …").
* **Chinese** has no capitals and no spaces, so a name is read by its shape and what follows it:
  a family word (妈妈、老公、女儿、老板 …), a familiar form (小林、老王、阿杰: 小/老/阿 and one
  character), or a common family name and one or two characters (张伟、李小龙), followed by a
  word that starts a predicate (说、在、搬、开始、下周 …, see :data:`PREDICATE_START_ZH`) or by
  a possessive 的. Words that share a name's shape (小时、老是、马上、周末) are not names.

:func:`people_of` keeps only names that open two entries or more of the period, so a sentence that
merely starts like a name ("高铁晚点了") does not make a person of it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from vault_tools.chinese import fold_cjk
from vault_tools.curation import insights, salience
from vault_tools.notes import model as notes

#: "Melanie ran …", "Jonas's team is …": a capitalised first word followed by a verb or a possessive.
NAME_FIRST = re.compile(
    r"^([A-Z][a-z]+)(?:(?:'s|’s)\s|\s+(is|was|are|were|has|had|will|would|can|could|and|[a-z]+)\b)"
)
AUXILIARIES = frozenset("is was are were has had will would can could and".split())  # noqa: SIM905
NOT_A_NAME = frozenset(salience.STOPWORDS | salience.PLEASANTRY | salience.ARTICLES)

#: Family and the people around someone, as the subject of a note.
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


def subject_name(text: str) -> str | None:
    """The name ``text`` opens with as its subject ("Melanie ran a race" -> Melanie, "小林搬到了杭州"
    -> 小林), or None."""
    flat = insights.plain(text)
    return english_subject(flat) or chinese_subject(flat)


def english_subject(text: str) -> str | None:
    match = NAME_FIRST.match(text)
    if match is None:
        return None
    name, verb = match[1], match[2]
    low = name.lower()
    if low in NOT_A_NAME or low.endswith(("ed", "ing", "ly")):
        return None
    if verb is None or verb in AUXILIARIES:
        return name
    return name if verb.endswith(("s", "ed")) or verb in salience.PAST_IRREGULAR else None


def chinese_subject(text: str) -> str | None:
    """The Chinese name ``text`` opens with, as written (Traditional characters are read as
    Simplified: 媽媽、張偉 as 妈妈、张伟)."""
    folded = fold_cjk(text)
    match = NAME_ZH.match(folded)
    if match is None:
        return None
    name = match.group(0)
    if name in NOT_A_NAME_ZH or salience.NUMBER_OR_DATE.search(name):
        return None
    return text[: len(name)]


def people_of(entries: Sequence[notes.Entry]) -> frozenset[str]:
    """Names that are the subject of two entries or more (notes about people: "Melanie ran …",
    "小林搬到了杭州")."""
    counts: dict[str, int] = {}
    for entry in entries:
        if not entry.speaker:
            name = subject_name(insights.spoken_text(entry))
            if name:
                counts[name] = counts.get(name, 0) + 1
    return frozenset(name for name, count in counts.items() if count >= 2)


def names_in(text: str, people: frozenset[str]) -> list[str]:
    """The ``people`` that ``text`` names anywhere (a Chinese name has no word boundary around it)."""
    return sorted(
        name
        for name in people
        if (name in text if insights.is_chinese(name) else re.search(rf"\b{re.escape(name)}\b", text))
    )
