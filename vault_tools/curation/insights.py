"""The heartbeat's offline rules: which entries are candidates, what they say, and how much they matter.

Design
------
Everything here is a pure function of text: no files, no network, no clock. The heartbeat feeds it
the entries of the daily notes in its window and gets back scored :class:`Insight` objects.

*Candidates.* Every entry of a daily note is a candidate unless :func:`skip_reason` names why not:
HEARTBEAT-style acks (``HEARTBEAT_OK``, ``NO_REPLY``), greetings and bare acknowledgements ("Good
morning", "好的", "收到"), the assistant's own boilerplate ("Sure! Here's a summary…", "How can I
help?"), refusals ("I'm sorry, I can't help with that", "抱歉，我无法…"), text that looks like
instructions to a model ("ignore all previous instructions", "忽略之前的指令": a prompt injection
is never promoted nor sent to a model), code-only blocks, ``[persist:: false]`` and entries too short
to mean anything (fewer than three words or four CJK characters). Front matter is never an entry.

*What an entry says.* The entry is cut into sentences; the sentences that match a *kind* pattern or
an explicit signal are its key text (the whole entry when none match), with labels such as
"Lesson:", "Note to self:", "记住：" taken off. That key text becomes the MEMORY.md item, in the
entry's own language. Kinds, matched in English and Chinese (see ``KIND_PATTERNS``):

==========================  ======  ==================================================
kind                        weight  e.g.
==========================  ======  ==================================================
identity, health, safety    1.0     "my name is", "allergic", "过敏", "紧急联系人"
preference, relationship,   0.8     "I prefer", "不吃香菜", "is my sister", "搬到",
status change                       "switched to", "started going", "辞职"
decision, lesson            0.7     "decided", "决定", "lesson", "教训", "turns out"
general fact                0.5     anything else
temporary                   0.2     "today", "tomorrow", "今晚", "暂时" — only when no kind
                                    above matched
==========================  ======  ==================================================

The *category* (the MEMORY.md section) follows: a task (``- [ ]``, "TODO", "待办") is ``todo`` and
is never promoted; otherwise ``decision``, ``lesson`` or ``preference`` when that kind matched (the
heavier wins), else ``fact``.

*Score* = the heaviest kind's weight
  + 0.2 per explicit signal ("remember", "important", "always", "never", "note to self", "记住",
    "重要", "以后都", "决定", "一定要"…), at most +0.3
  + 0.3 when the person marked the entry (``#remember`` or ``[persist:: true]``)
  − 0.2 when it is an aside ("by the way", "btw", "顺便说一下")
  + 0.1 per other day in the window with a near-duplicate entry, at most +0.2,
clamped to [0, 1] and rounded to two decimals. An ``[importance:: x]`` field on the entry replaces
the score. The heartbeat promotes what scores at or above its threshold (0.7 by default).

*Near-duplicates* (:mod:`vault_tools.curation.similarity`). Texts are compared as sets of tokens: lower-cased words (English stop words
dropped, a light plural/tense stemmer) plus character bigrams of CJK runs, so the measure works for
Chinese without a dictionary. Two texts are near-duplicates when their Jaccard similarity is at least
0.7, or when one contains at least 90% of the other's tokens and the smaller has four or more
tokens ("I prefer dark roast coffee" inside "Still true: I prefer dark roast coffee, 浅烘的太酸了").

*Supersede.* A new insight supersedes an existing item of the same category when the two are
related but not duplicates (Jaccard ≥ 0.3, or containment ≥ 0.5) and the new one says that
something changed ("switched to", "instead of", "no longer", "改用", "换成", "不再"…). An entry may
also say so itself with ``[supersedes:: m-3f9a2c]``.

All of it is configurable through the ``[rules]`` table of ``.vault-tools/config.toml`` (see
:meth:`Rules.from_mapping`): kind weights, extra signal and aside words, steps, caps and thresholds.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal

from vault_tools.chinese import fold_cjk
from vault_tools.config import CONFIG_FILE, STATE_DIR, Config, read_config_file
from vault_tools.curation import clauses, salience
from vault_tools.curation.similarity import (
    CJK_CHAR,
    CJK_RUN,
    TAG_WORD,
    WORD,
    SimilarityIndex,
    tokens,
    union_near_duplicates,
)
from vault_tools.notes.model import FIELD, SPEAKER, TAG, Entry

Category = Literal["decision", "preference", "lesson", "fact", "todo"]
CATEGORIES: tuple[Category, ...] = ("decision", "preference", "lesson", "fact", "todo")
PROMOTABLE: tuple[Category, ...] = ("decision", "preference", "lesson", "fact")

KINDS = (
    "identity",
    "health",
    "safety",
    "preference",
    "relationship",
    "status",
    "decision",
    "lesson",
    "fact",
    "temporary",
)
DEFAULT_WEIGHTS: dict[str, float] = {
    "identity": 1.0,
    "health": 1.0,
    "safety": 1.0,
    "preference": 0.8,
    "relationship": 0.8,
    "status": 0.8,
    "decision": 0.7,
    "lesson": 0.7,
    "fact": 0.5,
    "temporary": 0.2,
}

LATIN_LETTER = re.compile(r"[A-Za-z]")


def _en(pattern: str) -> str:
    """An English alternative, matched as whole words, case-insensitively."""
    return rf"(?i:(?<![A-Za-z])(?:{pattern})(?![A-Za-z]))"


def _either(english: str, chinese: str) -> re.Pattern[str]:
    return re.compile(f"{_en(english)}|{chinese}")


KIND_PATTERNS: dict[str, re.Pattern[str]] = {
    "identity": _either(
        r"my name is|call me|i was born|my birthday|i live in|i'?m from|i grew up in|my pronouns"
        r"|my native language|i work (?:at|as|for)|i'?m a \w+ (?:developer|engineer|designer|teacher)",
        r"我叫|我的名字|我出生|我的生日|我住在|我来自|我老家|我的母语|我的工作是",
    ),
    "health": _either(
        r"allerg\w*|asthma|diabet\w*|blood type|medication|prescri\w+|surgery|diagnos\w+|epipen"
        r"|intoleran\w+|chronic|migraines?|pregnan\w+",
        r"过敏|哮喘|糖尿病|血型|药物|处方|手术|确诊|诊断|不耐受|慢性病|偏头痛|怀孕|病史",
    ),
    "safety": _either(
        r"emergency contact|in case of emergency|never (?:give|share|send) (?:out )?(?:my|the)",
        r"紧急联系人|紧急情况|千万不要把|安全起见",
    ),
    "preference": _either(
        r"prefers?|preferred|preference|favou?rite|dislikes?|can'?t stand|would rather|rather than"
        r"|i (?:really )?(?:like|love|hate|enjoy)|(?:doesn'?t|don'?t) (?:like|eat|drink)",
        r"喜欢|偏好|更爱|讨厌|爱吃|爱喝|不吃|不喝|习惯用|受不了|最爱",
    ),
    "relationship": _either(
        r"(?:is|are) my (?:wife|husband|partner|girlfriend|boyfriend|daughter|son|mother|father|sister"
        r"|brother|best friend|friend|colleague|boss|manager)|my (?:wife|husband|partner|girlfriend"
        r"|boyfriend|daughter|son|sister|brother) (?:is|'s)|(?:got )?(?:married|engaged|divorced)"
        r"|broke up|(?:her|his|their) partner is|close friend",
        r"是我的(?:妻子|老婆|丈夫|老公|女朋友|男朋友|女儿|儿子|姐姐|妹妹|哥哥|弟弟|朋友|同事|老板)"
        r"|(?:妈妈|爸爸|母亲|父亲|老婆|老公|女儿|儿子)的生日|结婚|订婚|离婚|分手",
    ),
    "status": _either(
        r"moved (?:to|into|out)|moving (?:to|into|out)|started (?:a |my |working|at |going|to )"
        r"|switched (?:to|from)|quit (?:my|the)|resigned|joined|joins|got (?:a )?(?:promoted|hired|fired)"
        r"|new job|no longer|changed (?:my|to|from)|retired|graduated",
        r"搬到|搬进|搬家到|入职了|离职|辞职|跳槽|换工作|升职|毕业|退休|不再",
    ),
    "decision": _either(
        r"decided|decide to|made (?:a|the) decision|the decision is|we'?ll go with|going with|chose|choose to|agreed (?:to|on)"
        r"|settled on|opted for|standardi[sz]ed? on",
        r"决定|决策|选定|商定|确定用|最终选|拍板",
    ),
    "lesson": _either(
        r"lessons?|learned|learnt|turns out|turned out|realized|realised|mistake|next time|takeaway"
        r"|gotcha|should have|never again",
        r"教训|学到|经验|原来|下次|吸取|踩坑|踩了坑|坑了我|千万别",
    ),
    "temporary": _either(
        r"today|tonight|this (?:morning|afternoon|evening|week)|tomorrow|right now|for now"
        r"|at the moment",
        r"今天|今晚|明天|明早|今早|这周|本周|暂时|眼下",
    ),
}
TASK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\[[ xX]\]")
TODO = _either(r"^(?:todo|to-do|to do)\b|^(?:need to|remind me to)", r"^(?:待办|提醒我|要做)")
DEFAULT_SIGNALS = (
    "remember",
    "important",
    "always",
    "never",
    "note to self",
    "keep in mind",
    "don't forget",
    "记住",
    "记一下",
    "重要",
    "以后都",
    "决定",
    "一定要",
    "别忘了",
)
DEFAULT_ASIDES = ("by the way", "btw", "fwiw", "顺便说一下", "顺便说", "顺便提一下")
CHANGE_MARKERS = _either(
    r"switch(?:ed|ing)?|instead of|instead|no longer|now (?:use|uses|prefer|prefers|live|lives)|changed"
    r"|replaced|moved (?:to|from)|from \S+(?: \S+)? to",
    r"改用|换成|改成|改为|不再|现在用|换到",
)
LABEL = re.compile(
    r"^(?i:lesson(?: learned)?|decision|note to self|note|remember|important|fyi|update|still true"
    r"|reminder|todo)\s*[:：\-—]\s*"
    r"|^(?:教训|决定|记住|重要|记一下|备注|提醒|经验|注意)\s*[:：]\s*"
)
CODE_FENCE = re.compile(r"^\s*(?:```|~~~)")

# What is never a candidate. Greetings and acks must be the whole entry; the rest may be anywhere.
ACK = re.compile(
    r"^(?:(?:(?i:hi|hello|hey|good (?:morning|afternoon|evening|night)|morning|thanks|thank you|thx|ok"
    r"|okay|got it|sure|noted|done|yes|no|yep|nope|cool|great|nice|bye|see you)"
    r"|你好|您好|早|早上好|早安|中午好|下午好|晚上好|晚安|谢谢|多谢|好的|好|嗯|收到|明白|明白了"
    r"|知道了|没问题|再见|拜拜)[\s!！.。~,，、?？]*)+$"
)
HEARTBEAT = re.compile(r"(?<![A-Za-z_])(?:HEARTBEAT_OK|HEARTBEAT|NO_REPLY)(?![A-Za-z_])")
ASSISTANT = re.compile(
    r"^(?i:(?:hi|hello|hey|good (?:morning|afternoon|evening))\s*[!,.]"
    r"|(?:sure|certainly|of course|absolutely|okay|ok|got it)\s*[!,.]\s+(?:here|i'?ll|let me))"
    + "|"
    + _en(
        r"how (?:can|may) i (?:help|assist)|what would you like (?:to|me)|is there anything else"
        r"|let me know if you|as an ai|i'?ve (?:read|reviewed|checked) (?:today'?s|your) notes"
        r"|here are (?:\w+ )?things from your notes"
    )
    + r"|^(?:好的|当然|没问题)[!！,，。]\s*(?:以下|这是|我来)|有什么(?:可以|能|需要)(?:帮|为)|需要我(?:帮|做)"
    r"|作为(?:一个)?(?:AI|人工智能)"
    r"|^(?i:session (?:started|ended)|context (?:compacted|compaction)|(?:pre-?compaction )?memory flush"
    r"|no new (?:memories|notes)|nothing (?:new )?to (?:remember|note|save))"
)
REFUSAL = re.compile(
    _en(
        r"i'?m sorry,? (?:but )?i (?:can'?t|cannot|am unable|won'?t)|i (?:can'?t|cannot) (?:help|assist) with"
        r"|i'?m (?:not able|unable) to (?:help|assist)"
    )
    + r"|(?:抱歉|对不起)[，,]?\s*我(?:无法|不能|没法)|我无法(?:帮助|协助|回答)"
)
INJECTION = re.compile(
    _en(
        r"(?:ignore|disregard|forget) (?:all |any )?(?:of )?(?:the |your )?(?:previous|prior|above|earlier)"
        r" (?:instructions|rules|prompts?|messages)|system prompt|you are now|new instructions"
        r"|(?:promote|add|write) (?:this|the following)(?: \w+)? (?:to|into) (?:your |the )?"
        r"(?:long-term )?memory|memory\.md"
    )
    + r"|忽略(?:之前|以上|前面|上面)(?:的)?(?:所有)?(?:指令|指示|说明|规则)|系统提示|你现在是|写入(?:长期)?记忆"
)


@dataclass(frozen=True)
class Rules:
    """Every knob of the offline rules; ``Rules()`` is the documented default."""

    weights: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    signals: tuple[str, ...] = DEFAULT_SIGNALS
    asides: tuple[str, ...] = DEFAULT_ASIDES
    signal_step: float = 0.2
    signal_cap: float = 0.3
    marked_boost: float = 0.3
    aside_penalty: float = 0.2
    repeat_step: float = 0.1
    repeat_cap: float = 0.2
    near_duplicate: float = 0.7
    containment: float = 0.9
    related: float = 0.3
    max_item_chars: int = 300
    # salience (see vault_tools.curation.salience): what a plain statement earns beyond its kind
    event_boost: float = 0.15  # someone did, started, changed or plans something
    specific_cap: float = 0.3  # rare words, names, numbers and dates, measured against the window
    fragment_penalty: float = 0.2  # its subject is in another line

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], warnings: list[str] | None = None) -> Rules:
        """Rules from the ``[rules]`` table of config.toml.

        ``weights`` is a table of kind → weight; ``extra_signals`` / ``extra_asides`` add words to
        the built-in lists; every other key sets the number of the same name.
        """
        warnings = warnings if warnings is not None else []
        rules = cls()
        numbers = {f.name for f in fields(cls)} - {"weights", "signals", "asides"}
        changes: dict[str, Any] = {}
        for key, value in data.items():
            if key == "weights" and isinstance(value, Mapping):
                weights = dict(rules.weights)
                for kind, weight in value.items():
                    if kind in KINDS and isinstance(weight, (int, float)):
                        weights[kind] = float(weight)
                    else:
                        warnings.append(
                            f"config.toml: rules.weights.{kind} ignored (kinds: {', '.join(KINDS)})"
                        )
                changes["weights"] = weights
            elif key in ("extra_signals", "extra_asides") and isinstance(value, list):
                name = "signals" if key == "extra_signals" else "asides"
                changes[name] = (*getattr(rules, name), *(str(v) for v in value))
            elif key in numbers and isinstance(value, (int, float)) and not isinstance(value, bool):
                changes[key] = type(getattr(rules, key))(value)
            else:
                warnings.append(f"config.toml: rules.{key} ignored (unknown key or wrong type)")
        return replace(rules, **changes)

    def word_pattern(self, words: tuple[str, ...]) -> re.Pattern[str]:
        return word_pattern(words)


@functools.lru_cache(maxsize=64)
def word_pattern(words: tuple[str, ...]) -> re.Pattern[str]:
    """One pattern for a list of signal words: English ones as whole words, others anywhere."""
    latin = [re.escape(w) for w in words if LATIN_LETTER.search(w)]
    other = [re.escape(w) for w in words if not LATIN_LETTER.search(w)]
    parts = ([_en("|".join(latin))] if latin else []) + other
    return re.compile("|".join(parts) or r"(?!x)x")


@dataclass(frozen=True)
class Candidate:
    """A daily-note entry read for what it says: key text, kinds, signals, category, salience."""

    entry: Entry
    key_text: str  # the sentences that carry the insight, one line, in the entry's language
    kinds: frozenset[str]
    signals: tuple[str, ...]
    aside: bool
    marked: bool
    category: Category
    tokens: frozenset[str]
    # salience of the key sentences (see vault_tools.curation.salience)
    event: bool = False  # someone did, started, changed or plans something
    fragment: bool = False  # its subject is in another line
    content: frozenset[str] = frozenset()  # content words, for specificity against the window
    names: int = 0  # proper names, numbers and dates
    speaker: str | None = None

    @property
    def day(self) -> dt.date | None:
        return self.entry.date


@dataclass(frozen=True)
class Insight:
    """Something worth keeping, from one or more entries, scored, ready to be placed in MEMORY.md."""

    text: str
    category: Category
    score: float
    sources: tuple[Entry, ...]
    rule: str  # how the score came about, for the commit trailer
    model: str | None = None
    supersedes: str | None = None  # a MEMORY.md item's block id (or item key)
    duplicate_of: str | None = None  # set by a model that recognised an existing item
    expires: dt.date | None = None
    temporary: bool = False
    strength: float = 0.0  # orders insights of equal score (the budget takes the strongest first)
    fragment: bool = False  # what it is about is in another line: not an item on its own
    lead: Entry | None = None  # the entry whose words the text is

    @property
    def date(self) -> dt.date | None:
        days = [e.date for e in self.sources if e.date is not None]
        return min(days) if days else None

    @property
    def source_hashes(self) -> tuple[str, ...]:
        return tuple(sorted({e.content_hash for e in self.sources}))


# ---------------------------------------------------------------------------------------------
# Text


def is_chinese(text: str) -> bool:
    """Mostly Chinese: at least one CJK character for every three Latin letters."""
    cjk = len(CJK_CHAR.findall(text))
    return cjk > 0 and cjk * 3 >= len(LATIN_LETTER.findall(text))


def sentences(text: str) -> list[str]:
    return salience.sentences(text)


def plain(text: str) -> str:
    """Text without #tags, inline fields and repeated whitespace, on one line."""
    text = TAG_WORD.sub("", FIELD.sub("", text))
    return re.sub(r"\s+", " ", text).strip()


def strip_label(text: str) -> str:
    label = LABEL.match(fold_cjk(text))  # 記一下： is 记一下：, one character for one
    stripped = text[label.end() :].strip() if label else text
    if stripped and stripped != text and stripped[0].isascii():
        stripped = stripped[0].upper() + stripped[1:]
    return stripped or text


def short(text: str, limit: int) -> str:
    """``text`` cut at a word or character boundary to ``limit`` characters, with an ellipsis."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if not CJK_CHAR.search(cut[-1:]) and " " in cut[limit // 2 :]:
        cut = cut[: cut.rfind(" ")]
    return cut.rstrip(" ,;:，；：") + "…"


# ---------------------------------------------------------------------------------------------
# Candidates


def body_text(entry: Entry) -> str:
    """The entry's text without code fences (their content is not an insight)."""
    lines: list[str] = []
    fenced = False
    for line in entry.text.splitlines():
        if CODE_FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(line)
    return "\n".join(lines).strip()


def skip_reason(entry: Entry) -> str | None:
    """Why ``entry`` is not a candidate at all, or None when it is one."""
    text = fold_cjk(body_text(entry))  # every pattern reads Simplified: 謝謝 is 谢谢
    flat = plain(text)
    reason = None
    if entry.kind != "daily":
        reason = "not a daily-note entry"
    elif not flat:
        reason = "code or markup only"
    elif HEARTBEAT.search(text):
        reason = "heartbeat acknowledgement"
    elif ACK.match(flat):
        reason = "greeting or acknowledgement"
    elif REFUSAL.search(flat):
        reason = "the assistant's refusal"
    elif ASSISTANT.search(flat):
        reason = "the assistant's own boilerplate"
    elif INJECTION.search(flat):
        reason = "reads as instructions to a model (possible prompt injection)"
    elif entry.fields.get("persist", "").strip().lower() in ("false", "no", "0", "off"):
        reason = "marked [persist:: false]"
    elif len(CJK_CHAR.findall(flat)) < 4 and len(WORD.findall(CJK_RUN.sub(" ", flat))) < 3:
        reason = "too short to be an insight"
    else:
        reason = statement_reason(entry_sentences(entry))
    return reason


def statement_reason(read: Sequence[salience.Sentence]) -> str | None:
    """Why sentences that passed the other checks still state nothing worth keeping, or None."""
    if not read or any(s.usable for s in read):
        return None
    if all(s.question for s in read):
        return "a question, not a statement"
    if any(s.question for s in read):
        return "a question and pleasantries, not a statement"
    if any(s.address for s in read):
        return "addressed to the listener (praise, thanks or advice)"
    return "pleasantries with nothing specific"


def spoken_text(entry: Entry) -> str:
    """The entry's text without code, labels' markup and the ``**Speaker**:`` that starts a turn."""
    return SPEAKER.sub("", body_text(entry), count=1).strip()


@functools.lru_cache(maxsize=4096)
def read_sentences(text: str, turn: bool = False) -> tuple[salience.Sentence, ...]:
    return tuple(salience.read(s, turn) for s in sentences(plain_lines(text)))


def entry_sentences(entry: Entry) -> tuple[salience.Sentence, ...]:
    """The sentences of what the entry says, read as a turn of a conversation when it has a speaker."""
    return read_sentences(spoken_text(entry), bool(entry.speaker))


def matched_kinds(text: str) -> set[str]:
    folded = fold_cjk(text)
    return {kind for kind, pattern in KIND_PATTERNS.items() if pattern.search(folded)}


def key_sentences(read: Sequence[salience.Sentence], signal_re: re.Pattern[str]) -> list[salience.Sentence]:
    """The sentences an item is made of: those of a kind or signal, else the strongest statements.

    Questions, chatter and words to the listener are never among them; neither is a sentence
    that introduces what follows ("What I should have done:"). At most :data:`KEY_SENTENCES`.
    """
    statements = [s for s in read if s.usable and not s.text.endswith((":", "："))]
    marked = [
        s for s in statements if matched_kinds(s.text) - {"temporary"} or signal_re.search(fold_cjk(s.text))
    ]
    if marked:
        return marked[:KEY_SENTENCES]
    best = sorted(statements, key=lambda s: -s.strength)[:KEY_SENTENCES]
    return [s for s in statements if s in best]


KEY_SENTENCES = 2


def opened(sentence: str) -> str:
    """``sentence`` without the greeting, thanks or preface it opens with ("Guess what? ",
    "跟你说个好消息，"): an item says the news, not how it was announced."""
    rest = clauses.drop_openers(sentence).strip()
    if not rest or rest == sentence.strip():
        return sentence  # nothing opened it ("iPhone 15 arrived" keeps its case)
    return rest[:1].upper() + rest[1:]


def analyse(entry: Entry, rules: Rules) -> Candidate:
    """Read one entry: its key sentences, kinds, signals and category (see the module docstring)."""
    text = body_text(entry)
    signal_re = rules.word_pattern(rules.signals)
    aside_re = rules.word_pattern(rules.asides)
    read = entry_sentences(entry)
    chosen = key_sentences(read, signal_re)
    kinds: set[str] = set()
    for sentence in read:
        kinds |= matched_kinds(sentence.text)
    said = " ".join(opened(s.text) for s in chosen) if chosen else spoken_text(entry)
    key = strip_label(plain(clauses.strip_media(said)) or plain(said))
    speaker = entry.speaker
    shown = short(key, rules.max_item_chars)
    if speaker:
        shown = f"**{speaker}**: {shown}"
    signals = tuple(
        sorted(
            {
                m.group(0).lower()
                for m in signal_re.finditer(fold_cjk(plain(" ".join(s.text for s in chosen))))
            }
        )
    )
    marked = entry.has_tag("remember") or entry.fields.get("persist", "").strip().lower() in (
        "true",
        "yes",
        "1",
        "on",
    )
    if entry.has_tag("decision") or entry.has_tag("决定"):
        kinds.add("decision")
    if entry.has_tag("lesson") or entry.has_tag("教训"):
        kinds.add("lesson")
    category = categorise(entry, text, kinds)
    return Candidate(
        entry=entry,
        key_text=shown,
        kinds=frozenset(kinds),
        signals=signals,
        aside=bool(aside_re.search(fold_cjk(plain(text)))),
        marked=marked,
        category=category,
        tokens=tokens(key),
        event=any(s.event and s.disclosure for s in chosen),
        fragment=bool(chosen) and all(s.fragment for s in chosen),
        content=frozenset().union(*(s.content for s in chosen)) if chosen else frozenset(),
        names=sum(s.names + s.dated for s in chosen),
        speaker=speaker,
    )


def plain_lines(text: str) -> str:
    return "\n".join(plain(line) for line in text.splitlines())


def categorise(entry: Entry, text: str, kinds: set[str]) -> Category:
    first = entry.raw.splitlines()[0] if entry.raw else ""
    if TASK.match(first) or TODO.search(fold_cjk(plain(text))):
        return "todo"
    ranked = [k for k in ("preference", "decision", "lesson") if k in kinds]
    if not ranked:
        return "fact"
    best = max(ranked, key=lambda k: DEFAULT_WEIGHTS[k])
    return best  # type: ignore[return-value]


def score(
    candidate: Candidate, rules: Rules, *, days_mentioned: int = 1, specificity: float = 0.0
) -> tuple[float, str]:
    """The candidate's score and a one-line account of how it came about.

    ``specificity`` (0-1, see :func:`specificity`) is how much of what the candidate says is rare
    in its window; it is 0 where there is no window to compare with.
    """
    explicit = candidate.entry.importance
    if explicit is not None:
        return round(min(1.0, max(0.0, explicit)), 2), f"importance field {explicit:g}"
    weights = rules.weights
    strong = candidate.kinds - {"temporary", "fact"}
    if strong:
        kind = max(strong, key=lambda k: (weights.get(k, 0.5), k))
    else:
        kind = "temporary" if "temporary" in candidate.kinds else "fact"
    total = weights.get(kind, 0.5)
    parts = [f"{kind} {total:g}"]

    def add(value: float, why: str) -> None:
        nonlocal total
        if value:
            total += value
            parts.append(f"{why} {value:+g}")

    if candidate.signals and not candidate.fragment:  # emphasis does not give a fragment its subject
        add(
            min(rules.signal_cap, rules.signal_step * len(candidate.signals)),
            f"signal {'/'.join(candidate.signals)}",
        )
    if candidate.marked:
        add(rules.marked_boost, "marked #remember")
    if candidate.aside:
        add(-rules.aside_penalty, "aside")
    if days_mentioned > 1:
        add(
            min(rules.repeat_cap, rules.repeat_step * (days_mentioned - 1)),
            f"repeated on {days_mentioned} days",
        )
    if candidate.event and not strong:
        add(rules.event_boost, "event")
    # in steps of 0.1, rounded down: the score stays readable and a small window adds nothing
    add(math.floor(rules.specific_cap * specificity * 10 + 1e-9) / 10, "specific")
    if candidate.fragment:
        add(-rules.fragment_penalty, "fragment")
    value = round(min(1.0, max(0.0, total)) + 1e-9, 2)
    return value, " ".join(parts)


def specificity(candidate: Candidate, document_frequency: Mapping[str, int], documents: int) -> float:
    """How specific the candidate is against ``documents`` others (0-1).

    Each content word counts by its inverse document frequency in the window (a word in every
    entry counts 0, one in this entry alone counts 1); names, numbers and dates count 1 each.
    Twelve such units or more are fully specific. A small window says little about which words
    are rare, so the figure is scaled down below :data:`SPECIFIC_WINDOW` entries.
    """
    if documents < 2:
        return 0.0
    scale = math.log(documents)
    units = float(candidate.names)
    for word in candidate.content:
        units += max(0.0, math.log(documents / max(1, document_frequency.get(word, 1)))) / scale
    confidence = min(1.0, scale / math.log(SPECIFIC_WINDOW))
    return min(1.0, units / SPECIFIC_UNITS) * confidence


SPECIFIC_WINDOW = 64
SPECIFIC_UNITS = 12


# ---------------------------------------------------------------------------------------------
# From candidates to insights


def rules_insights(
    new: Sequence[Candidate],
    window: Sequence[Candidate],
    rules: Rules,
    on_each: Callable[[], None] | None = None,
) -> tuple[list[Insight], dict[str, tuple[float, str]]]:
    """Insights from the new candidates, by the offline rules.

    ``window`` is every candidate of the window (processed ones too): a near-duplicate on another
    day raises the score (repetition) and becomes a source. New candidates that are near-duplicates
    of each other become one insight. Returns the insights (todo ones included: the caller decides
    what to promote) and, for every new candidate, its own (score, rule).
    """
    index = SimilarityIndex(rules)
    by_key: dict[str, Candidate] = {}
    for candidate in [*window, *new]:
        key = candidate.entry.id
        by_key[key] = candidate
        index.add(key, candidate.tokens)
    new_keys = [c.entry.id for c in new]
    near = index.near_each(new_keys, rules, on_each)  # on_each: a progress bar's step per new entry
    same_thing = {k: near[k] + same_thing_said(by_key[k], index, by_key, rules) for k in new_keys}
    group = union_near_duplicates(new_keys, same_thing, by_key)
    frequency = Counter(word for candidate in by_key.values() for word in candidate.content)
    scores: dict[str, tuple[float, str]] = {}
    insights: list[Insight] = []
    for members in group:
        related_keys = {k for m in members for k in near[m]}
        related_keys = {k for k in related_keys if by_key[k].category == by_key[members[0]].category}
        days = {by_key[k].day for k in related_keys | set(members) if by_key[k].day is not None}
        ranked: list[tuple[float, int, str, str, Candidate]] = []
        strength = 0.0
        for key in members:
            specific = specificity(by_key[key], frequency, len(by_key))
            value, rule = score(by_key[key], rules, days_mentioned=max(1, len(days)), specificity=specific)
            strength = max(strength, value + specific / 10)
            scores[key] = (value, rule)
            candidate = by_key[key]
            # The best score leads; among equals the crispest (shortest), then the first said.
            ranked.append((-value, len(candidate.key_text), str(candidate.day), rule, candidate))
        ranked.sort(key=lambda r: r[:3])
        negative, _length, _day, rule, lead = ranked[0]
        value = -negative
        sources = sorted(
            {k: by_key[k].entry for k in related_keys | set(members)}.values(),
            key=lambda e: (e.date or dt.date.min, e.rel_path, e.start_line),
        )
        temporary = lead.kinds <= {"temporary", "fact"} and "temporary" in lead.kinds
        insights.append(
            Insight(
                text=lead.key_text,
                category=lead.category,
                score=value,
                sources=tuple(sources),
                rule=rule,
                supersedes=lead.entry.fields.get("supersedes", "").strip().lstrip("^") or None,
                temporary=temporary,
                strength=strength,
                fragment=lead.fragment and not lead.marked and lead.entry.importance is None,
                lead=lead.entry,
            )
        )
    return insights, scores


def in_context(insight: Insight, before: Entry) -> Insight:
    """A fragment's insight made to stand alone with what the line before it said ("**Mel** (re:
    "How was the museum?"): It was amazing…"), or unchanged when that line says nothing usable."""
    said = [s.text for s in entry_sentences(before) if s.question or s.usable]
    if not said:
        return insight
    context = f"(re: “{short(plain(said[-1]), CONTEXT_CHARS)}”)"
    speaker, colon, rest = insight.text.partition("**: ")
    text = (
        f"{speaker}** {context}: {rest}"
        if colon and speaker.startswith("**")
        else f"{context} {insight.text}"
    )
    return replace(insight, text=text, fragment=False)


CONTEXT_CHARS = 60


def same_thing_said(
    candidate: Candidate, index: SimilarityIndex, by_key: Mapping[str, Candidate], rules: Rules
) -> list[str]:
    """Other lines of the same speaker on the same day about the same thing (a conversation
    comes back to a thing over several turns): one item, citing them all."""
    if candidate.speaker is None:
        return []
    return [
        key
        for key, _score in index.related(candidate.tokens, rules)
        if by_key[key].speaker == candidate.speaker
        and by_key[key].day == candidate.day
        and len(by_key[key].content & candidate.content) >= 2
    ]


def changes_something(text: str) -> bool:
    """Whether ``text`` says that something changed (a condition for superseding an item)."""
    return bool(CHANGE_MARKERS.search(text))


def block_id_for(source_hashes: Iterable[str], *, salt: str = "", length: int = 6) -> str:
    """The deterministic block id of an insight: a hash of its sources' content hashes."""
    digest = hashlib.sha256(("\n".join(sorted(source_hashes)) + salt).encode("utf-8")).hexdigest()
    return f"m-{digest[:length]}"


def format_score(value: float) -> str:
    text = f"{value:.2f}".rstrip("0")
    return text + "0" if text.endswith(".") else text


def within(value: float, threshold: float) -> bool:
    """``value`` at or above ``threshold``, robust to float noise (scores have two decimals)."""
    return value + 1e-9 >= threshold or math.isclose(value, threshold)


def inline_tags(raw: str) -> list[str]:
    return [m.group(1) for m in TAG.finditer(raw)]


def load_rules(config: Config, warnings: list[str] | None = None) -> Rules:
    """The ``[rules]`` table of ``.vault-tools/config.toml`` (see :class:`Rules`)."""
    # The vault's own settings, also when its state lives in the cache (a read-only vault).
    data, _warnings = read_config_file(config.vault / STATE_DIR / CONFIG_FILE)
    table = data.get("rules")
    return Rules.from_mapping(table, warnings) if isinstance(table, dict) else Rules()
