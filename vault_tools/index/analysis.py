"""Text analysis for the index: English words stemmed, CJK text cut into overlapping bigrams.

Design. One regular expression walks the text once and finds two kinds of runs: *word runs*
(letters and digits of any script that writes with spaces, with ``3.14``/``2.7.5`` kept whole)
and *CJK runs* (Han, kana, hangul, bopomofo). A word run is lower-cased (NFKC first if it is not
ASCII, so full-width ``ＡＢＣ１２`` reads as ``abc12``) and stemmed (Porter2), so "decided" and
"decide" meet at ``decid``. Porter2 leaves irregular forms apart ("bought"/"buy", "went"/"go",
"children"/"child"), so the index adds the lemma's stem beside such a form, at its position
(see *Irregular forms* below). A CJK run has no spaces to split on and we ship no dictionary (jieba
costs 0.5-1.1 s per process), so it becomes overlapping character bigrams: 花生和坚果过敏 gives
花生 生和 和坚 坚果 果过 过敏, which any two-character word of the run matches, mid-sentence or
not. A script change is a boundary: ``gen-itgc后`` gives ``gen itgc 后`` and ``用Python写``
gives ``用 python 写``. Punctuation, symbols, emoji and control characters separate tokens and
are never tokens themselves.

One-character queries (猫, 牙). A lone CJK character is a term of its own. At index time the
last character of every longer run is added as well, so every occurrence of a character is
either the start of a bigram or such a unigram: :func:`term_query` searches a one-character
term as the character OR any bigram starting with it (:class:`CjkCharQuery`). Indexing every
character instead (Lucene's ``outputUnigrams``) finds the same notes but triples the build
time (100k generated entries, text field alone: 59 s instead of 20 s). At query time only bigrams are produced,
so a two-character query never turns into two common single characters.

Queries. A query whose words are split in a note (花生过敏 against 花生和坚果过敏) shares 花生 and
过敏 but not 生过: search the terms with OR and ranking, not AND. :func:`query_terms` drops the
stop and question words of both languages, which otherwise become noise terms (什么, 那个, what).

Irregular forms. People ask in one form and wrote in another: "What did she buy?" against "I
bought…", "How did he feel?" against "I felt…". ``english_irregular.tsv`` (generated from
lemminflect by ``bench/irregular_forms.py``; 1.4k forms) lists the forms Porter2 does not stem
like their verb or noun lemma. At index time such a form yields its own stem *and* its lemmas'
stems at the same position, so a question in the base form, which is how English questions ask
("did she buy", "did they go"), finds every tense. A query keeps the form it was given: "bought"
searches ``bought`` only, and "saw" (the tool) does not become "see"; merging both ways made
rarer forms ("won", "written") as common as their lemma and lost more than it found on LoCoMo
(README, "Search for English and Chinese"). Lemmas that are query stop words ("was" -> be,
"said" -> say) are not added: nothing searches them. A form that is also a word of its own
("saw", "left", "felt") gets the lemma too; the cost is that "see" also finds a saw.

Traditional script. A CJK run is folded to Simplified characters before it is cut
(:func:`vault_tools.chinese.fold_cjk`: OpenCC's character table),
at index and at query time: 什麼 is the stop word 什么, 陽明山 meets 阳明山. One character for one,
so offsets point into the text as written, which is what is stored and shown.

Positions: each word is one position; a CJK run of n characters takes n-1 positions (one per
bigram; the trailing unigram shares the last one), identically at index and query time, so phrase
queries work across scripts. Character offsets point into the original text.

The analyzer is pickled into the index schema by class path: keep :class:`BilingualAnalyzer`
importable under this name, and bump :data:`ANALYZER_VERSION` whenever its output changes so the
index is rebuilt.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from functools import lru_cache
from importlib import resources
from typing import Any

from vault_tools.chinese import fold_cjk, fold_run
from vault_tools.index.whoosh_private import import_whoosh

import_whoosh()  # before the imports below: it leaves out what Whoosh imports and never uses

from whoosh import matching  # noqa: E402
from whoosh.analysis import Analyzer, Token  # noqa: E402
from whoosh.fields import TEXT  # noqa: E402
from whoosh.lang.porter2 import stem as _porter2_stem  # noqa: E402
from whoosh.query import Prefix, Query, Term  # noqa: E402
from whoosh.query.compound import PreloadedOr  # noqa: E402
from whoosh.system import pack_uint as _pack_uint  # noqa: E402

__all__ = [
    "ANALYZER_VERSION",
    "CJK_QUERY_STOP_WORDS",
    "ENGLISH_QUERY_STOP_WORDS",
    "BilingualAnalyzer",
    "CjkCharQuery",
    "CountedText",
    "cjk_char_terms",
    "fold_cjk",
    "index_term_counts",
    "is_cjk_char",
    "query_terms",
    "term_query",
    "text_analyzer",
    "tokenize",
]

#: Bump when the terms the analyzer produces change; the index stores it and rebuilds on mismatch.
ANALYZER_VERSION = 3

# Han (incl. extension A, compatibility ideographs, the supplementary planes), 々 〇 and
# the Hangzhou numerals, kana (without the ・ middle dot, a separator), half-width katakana,
# hangul (syllables and jamo), bopomofo.
_CJK_CLASS = (
    "\u3005\u3007\u3021-\u3029\u3038-\u303b"
    "\u3040-\u309f\u30a1-\u30fa\u30fc-\u30ff\u31f0-\u31ff\uff66-\uff9f"
    "\u3100-\u312f\u31a0-\u31bf"
    "\u1100-\u11ff\u3130-\u318f\ua960-\ua97f\uac00-\ud7a3\ud7b0-\ud7ff"
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
)
# A word: letters/digits of any other script (\w without "_" and without CJK), with dotted
# numbers kept whole ("3.14", "v2.7.5"). Group 1 is a word, group 2 a CJK run.
_TOKEN_RE = re.compile(
    rf"([^\W_{_CJK_CLASS}]+(?:(?<=\d)\.\d+)*)|([{_CJK_CLASS}]+)",
)
_CJK_CHAR_RE = re.compile(f"[{_CJK_CLASS}]")


def _word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: English words dropped from keyword queries: articles, pronouns, auxiliaries, prepositions,
#: question words and the verbs people use to ask a memory ("remember", "told", "called").
#: Compared with the lower-cased word before stemming.
ENGLISH_QUERY_STOP_WORDS: frozenset[str] = _word_set(
    """
    a about above after again all also am an and any anything are as at be been before being
    both but by can could d did do does doing done during each ever for from had has have having
    he her here hers him his how i if in into is it its itself just ll m me might mine must my
    no nor of on once only or other our ours ourselves out over re s said say says shall she
    should so some something such t tell than that the their theirs them then there these they
    this those through to told too under until up us ve very was we were what whats when where
    which while who whom whose why will with would you your yours yourself
    remember remembered recall recalled mention mentioned called named know knew thing things
    stuff many much often times
    """
)

#: Chinese words dropped from keyword queries: particles, pronouns, copulas, question words and
#: asking verbs (来着, 记得, 说过). They are cut out of the query text before it is split into
#: bigrams, so they also stop junk bigrams across them (学的, 的那). Longest match wins.
CJK_QUERY_STOP_WORDS: frozenset[str] = _word_set(
    """
    什么时候 为什么 是不是 有没有 怎么样 怎么办 怎么做 怎么回事 是什么 多少 什么 怎么 怎样 如何
    那个 这个 那些 这些 哪个 哪些 哪里 哪儿 哪天 这里 那里 这儿 那儿 这样 那样 其他 其它
    之前 以前 曾经 已经 我们 你们 他们 她们 咱们 自己 来着 一下 一个 一些 关于 有关
    记得 说过 提过 提到 告诉 叫做 但是 还是 就是 可是 只是 不是 是否 的确 为了 除了 那么 这么 多么
    几次 多少次 几回 几天 几个 多少个
    的 了 吗 呢 吧 啊 呀 嘛 哦 我 你 他 她 它 是 叫 在 和 与 也 那 这 哪 谁 啥 几
    """
)

# Ordinary words that contain a one-character stop word and must survive query clean-up.
_CJK_KEEP_WORDS: frozenset[str] = _word_set(
    """
    目的 的士 了解 了不起 吗啡 酒吧 网吧 自我 现在 存在 实在 在线 所在 和平 总和 温和 暖和 和谐 茶几
    """
)


def _alternation(words: frozenset[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=lambda w: (-len(w), w)))


# Group 1: a word to keep; otherwise a stop word to cut out. Alternatives are tried in order at
# each position, so a kept word (了解) shadows the stop word inside it (了).
_CJK_STOP_RE = re.compile(
    f"({_alternation(_CJK_KEEP_WORDS)})|(?:{_alternation(CJK_QUERY_STOP_WORDS)})",
)


#: Single CJK characters a question uses around what it asks about: common verbs, particles,
#: pronouns and measure words. Left alone in a query with longer terms, one of them is dropped
#: (see :func:`query_terms`); any other lone character is kept, since Chinese names many things
#: in one character (茶, 猫, 药, 书, 车, 房).
WEAK_CJK_CHARS = frozenset(
    "用写学做去来看说想要会能让给把被对在和与跟从到向于为了过着的地得是有个这那些都也还就才又再很太最"
    "更已叫开送买拿找问告诉讲听带放弄搞觉算像比当等请"
)

# How many single CJK characters the index side adds (see BilingualAnalyzer).
_NONE, _FINAL, _ALL = 0, 1, 2
_UNIGRAM_MODES = {"none": _NONE, "final": _FINAL, "all": _ALL}


@lru_cache(maxsize=65536)
def _normalize_word(word: str) -> str:
    """Lower-case and stem one word run (cached: vocabularies are Zipfian).

    Porter2 (Snowball English), not ``whoosh.lang.porter``: the latter leaves doubled
    consonants ("stopped" -> "stopp", "running" -> "runn"), so "stop" would miss "stopped".
    """
    word = _folded(word)
    if word.isdigit() or not word.isascii():
        return word
    return str(_porter2_stem(word))


def _folded(word: str) -> str:
    """NFKC (only when not ASCII: full-width ``ＡＢＣ`` reads as ``abc``) and lower case."""
    if not word.isascii():
        word = unicodedata.normalize("NFKC", word)
    return word.lower()


@lru_cache(maxsize=1)
def _irregular_lemmas() -> dict[str, tuple[str, ...]]:
    """Irregular English form -> its lemmas (``english_irregular.tsv``), stop-word lemmas left out."""
    table: dict[str, tuple[str, ...]] = {}
    text = resources.files("vault_tools.index").joinpath("english_irregular.tsv").read_text(encoding="utf-8")
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        form, _, lemmas = line.partition("\t")
        kept = tuple(lemma for lemma in lemmas.split() if lemma not in ENGLISH_QUERY_STOP_WORDS)
        if kept:
            table[form] = kept
    return table


@lru_cache(maxsize=65536)
def _index_forms(word: str) -> tuple[str, ...]:
    """The terms a word run is indexed as: its own (:func:`_normalize_word`), then its lemmas' stems."""
    own = _normalize_word(word)
    lemmas = _irregular_lemmas().get(_folded(word), ())
    if not lemmas:
        return (own,)
    stems = [str(_porter2_stem(lemma)) for lemma in lemmas]
    return (own, *(s for s in dict.fromkeys(stems) if s != own))


def _terms(
    text: str, *, unigrams: int, drop: frozenset[str] = frozenset(), lemmas: bool = False
) -> Iterator[tuple[str, int, int, int]]:
    """Yield ``(term, position, startchar, endchar)`` for every term of ``text``.

    ``unigrams`` adds single CJK characters of runs longer than one: ``_FINAL`` the last
    character of each run, ``_ALL`` every character, ``_NONE`` none. ``lemmas`` adds the stems
    of an irregular form's lemmas at its position (the index side). A word whose lower-cased
    form is in ``drop`` is skipped without taking a position.
    """
    pos = 0
    norm = _normalize_word
    fold = fold_run
    for m in _TOKEN_RE.finditer(text):
        word = m.group(1)
        if word is not None:
            if drop and word.lower() in drop:
                continue
            if lemmas:
                for form in _index_forms(word):
                    yield form, pos, m.start(), m.end()
            else:
                yield norm(word), pos, m.start(), m.end()
            pos += 1
            continue
        run = fold(m.group(2))
        start = m.start()
        n = len(run)
        if n == 1:
            yield run, pos, start, start + 1
            pos += 1
            continue
        if unigrams == _ALL:
            for i in range(n - 1):
                yield run[i : i + 2], pos + i, start + i, start + i + 2
                yield run[i], pos + i, start + i, start + i + 1
        else:
            for i in range(n - 1):
                yield run[i : i + 2], pos + i, start + i, start + i + 2
        if unigrams:
            yield run[-1], pos + n - 2, start + n - 1, start + n
        pos += n - 1


class BilingualAnalyzer(Analyzer):  # type: ignore[misc]
    """Whoosh analyzer for English + CJK text: stemmed words, CJK bigrams (see the module doc).

    ``cjk_unigrams`` says which single CJK characters of runs longer than one are indexed on top
    of the bigrams: ``"final"`` (the default) the last of each run, ``"all"`` every one,
    ``"none"`` none. It applies only when Whoosh calls with ``mode="index"``.
    """

    # Class-level defaults, so an instance unpickled from an older schema still has them.
    cjk_unigrams = "final"
    version = ANALYZER_VERSION

    def __init__(self, *, cjk_unigrams: str = "final") -> None:
        if cjk_unigrams not in _UNIGRAM_MODES:
            raise ValueError(f"cjk_unigrams must be one of {sorted(_UNIGRAM_MODES)}, not {cjk_unigrams!r}")
        self.cjk_unigrams = cjk_unigrams
        self.version = ANALYZER_VERSION

    def __repr__(self) -> str:
        return f"{type(self).__name__}(cjk_unigrams={self.cjk_unigrams!r}, version={self.version})"

    def __call__(
        self,
        value: str,
        positions: bool = False,
        chars: bool = False,
        keeporiginal: bool = False,
        removestops: bool = True,
        start_pos: int = 0,
        start_char: int = 0,
        tokenize: bool = True,
        mode: str = "",
        **kwargs: Any,
    ) -> Iterator[Token]:
        t = Token(positions, chars, removestops=removestops, mode=mode, **kwargs)
        t.boost = 1.0
        t.stopped = False
        if not tokenize:
            # Whoosh asks for the value untokenized for wildcard/prefix/range terms.
            t.original = value
            t.text = value.lower()
            if positions:
                t.pos = start_pos
            if chars:
                t.startchar = start_char
                t.endchar = start_char + len(value)
            yield t
            return
        unigrams = _UNIGRAM_MODES[self.cjk_unigrams] if mode == "index" else _NONE
        for text, pos, startchar, endchar in _terms(value, unigrams=unigrams, lemmas=mode == "index"):
            t.text = text
            if keeporiginal:
                t.original = value[startchar:endchar]
            if positions:
                t.pos = start_pos + pos
            if chars:
                t.startchar = start_char + startchar
                t.endchar = start_char + endchar
            yield t


def index_term_counts(text: str) -> dict[str, int]:
    """Term -> frequency of ``text`` as the index analyzes it (``mode="index"``: final unigrams,
    irregular forms' lemmas)."""
    counts: dict[str, int] = {}
    for term, _pos, _start, _end in _terms(text, unigrams=_FINAL, lemmas=True):
        counts[term] = counts.get(term, 0) + 1
    return counts


class CountedText(TEXT):  # type: ignore[misc]
    """A ``TEXT`` field that also takes its terms already counted (:func:`index_term_counts`).

    An entry's text is indexed in its own field and in its neighbours' fields (up to four
    times over): analysing it once and handing the counts on keeps the build from paying for
    that. A plain string is analyzed as by ``TEXT``; the postings are the same either way. Keep
    it importable under this name (the schema is pickled into the index).
    """

    #: What the bulk segment writer (:mod:`vault_tools.index.whoosh_private`) looks for.
    takes_counts = True

    def index(self, value: Any, **kwargs: Any) -> Iterator[tuple[bytes, int, float, bytes]]:
        if not isinstance(value, dict):
            yield from super().index(value, **kwargs)
            return
        boost = float(self.format.field_boost)
        for term, frequency in value.items():
            yield term.encode("utf-8"), frequency, frequency * boost, _pack_uint(frequency)


def text_analyzer() -> Analyzer:
    """The analyzer of the ``text`` field, used at index and at query time.

    Whoosh passes ``mode="index"`` when indexing and ``mode="query"`` when parsing; only the
    former adds single CJK characters (see :func:`term_query`) and the lemmas of irregular
    English forms.
    """
    return BilingualAnalyzer()


def tokenize(text: str) -> list[str]:
    """The terms the analyzer produces for ``text`` at query time, in order, duplicates kept.

    Words are lower-cased and stemmed, CJK runs become overlapping bigrams (a lone CJK character
    stays itself). Use it for highlighting and near-duplicate detection.

    >>> tokenize("Decided: 用Python写止损脚本 v2.7")
    ['decid', '用', 'python', '写止', '止损', '损脚', '脚本', 'v2.7']
    """
    return [term for term, _, _, _ in _terms(text, unigrams=_NONE)]


def query_terms(text: str) -> list[str]:
    """The terms of a keyword query: stop and question words removed, duplicates dropped.

    English words in :data:`ENGLISH_QUERY_STOP_WORDS` and Chinese words in
    :data:`CJK_QUERY_STOP_WORDS` are removed before analysis (the Chinese ones are cut out of
    the text, so no bigram spans them); the rest is analyzed as by :func:`tokenize`. A lone CJK
    character left over is often the very thing asked about (茶 in 我喜欢喝什么茶, 猫 in
    我的猫叫什么名字, 药, 书, 车): it stays. Only the common verbs and particles of
    :data:`WEAK_CJK_CHARS` (用 and 写 in 用Python写的爬虫, 学 in 我之前学的那个设计模式) are dropped
    when the query has longer terms: they say little, and :func:`term_query` must search a lone
    character through every bigram it starts, which takes 0.1 s for a common one in 20k notes.
    If nothing is left (the query was only such words, "what is it" / "什么"), the terms of the
    whole query are returned instead, so a query with any word in it never yields an empty list.

    >>> query_terms("我之前学的那个设计模式叫什么")
    ['设计', '计模', '模式']
    >>> query_terms("what did we decide about the database?")
    ['decid', 'databas']
    >>> query_terms("猫和狗")
    ['猫', '狗']
    >>> query_terms("我喜欢喝什么茶")
    ['喜欢', '欢喝', '茶']
    """
    cleaned = _CJK_STOP_RE.sub(lambda m: m.group(1) or " ", fold_cjk(text))
    terms = [term for term, _, _, _ in _terms(cleaned, unigrams=_NONE, drop=ENGLISH_QUERY_STOP_WORDS)]
    if any(not is_cjk_char(t) for t in terms):
        terms = [t for t in terms if t not in WEAK_CJK_CHARS]
    elif not terms:
        terms = tokenize(text)
    return list(dict.fromkeys(terms))


class CjkCharQuery(Prefix):  # type: ignore[misc]
    """Notes containing one CJK character: the character as a term, or any bigram it starts.

    That is a ``Prefix`` query (the character is a prefix of itself), but Whoosh ORs a prefix's
    terms as a binary tree of union matchers, which takes seconds for a common character with
    hundreds of bigrams (的: 277 bigrams, 2.9 s on 20k notes). This one unions them through
    Whoosh's preloading array matcher instead (110 ms) and scores them (BM25 summed over the
    bigrams), so a note that mentions the character more often ranks higher.
    """

    def __init__(self, fieldname: str, text: str, boost: float = 1.0) -> None:
        super().__init__(fieldname, text, boost=boost, constantscore=False)

    def matcher(self, searcher: Any, context: Any = None) -> Any:
        terms = [
            Term(self.fieldname, text)
            for text in cjk_char_terms(searcher.reader(), self.fieldname, self.text)
        ]
        if not terms:
            return matching.NullMatcher()
        return PreloadedOr(terms, boost=self.boost).matcher(searcher, context)


def cjk_char_terms(reader: Any, fieldname: str, char: str) -> list[str]:
    """The indexed terms a one-character CJK query stands for: the character and its bigrams."""
    decode = reader.schema[fieldname].from_bytes
    return [decode(text) for text in reader.expand_prefix(fieldname, char) if text]


def is_cjk_char(text: str) -> bool:
    """Whether ``text`` is one CJK character (searched as itself or any bigram it starts)."""
    return len(text) == 1 and bool(_CJK_CHAR_RE.match(text))


def term_query(term: str, fieldname: str = "text") -> Query:
    """The Whoosh query that finds one term of :func:`query_terms` in a :func:`text_analyzer` field.

    A plain ``Term``, except a single CJK character, which is indexed as such only where it ends
    a run: :class:`CjkCharQuery` finds it also where it starts a bigram.
    """
    if is_cjk_char(term):
        return CjkCharQuery(fieldname, term)
    return Term(fieldname, term)
