"""Tests for vault_tools.index.analysis: the bilingual analyzer, tokenize, query_terms, term_query."""

from __future__ import annotations

import importlib.util
import pickle
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from whoosh import fields, index, qparser
from whoosh.filedb.filestore import RamStorage
from whoosh.query import And, Or

from vault_tools.index.analysis import (
    ANALYZER_VERSION,
    CJK_QUERY_STOP_WORDS,
    ENGLISH_QUERY_STOP_WORDS,
    BilingualAnalyzer,
    CjkCharQuery,
    query_terms,
    term_query,
    text_analyzer,
    tokenize,
)

NOTES = {
    "health": "体检之后决定为了身体健康每天跑步。",
    "trade": "交易规则：止损设在买入价下方7%，绝不移动止损。",
    "allergy": "我对花生和坚果过敏，吃了会起疹子。",
    "tooth": "牙医说智齿要拔掉",
    "cat": "家里的猫最近不爱吃猫粮",
    "itgc": "gen-itgc后的数据要先去重再入库",
    "python": "用Python写了一个爬虫脚本",
    "db": "We decided to use PostgreSQL for billing; stopped using MongoDB.",
    "japanese": "東京に行きました。ラーメンを食べた",
    "korean": "한국어 공부 시작: 안녕하세요",
    "design": "学了设计模式里的观察者模式",
}


def make_index(notes: dict[str, str] = NOTES) -> Any:
    schema = fields.Schema(id=fields.ID(stored=True, unique=True), text=fields.TEXT(analyzer=text_analyzer()))
    ix = RamStorage().create_index(schema)
    with ix.writer() as writer:
        for note_id, text in notes.items():
            writer.add_document(id=note_id, text=text)
    return ix


@pytest.fixture(scope="module")
def ix() -> Any:
    return make_index()


def search_or(ix: Any, text: str) -> list[str]:
    """The recall module's intended use: OR of the query terms with a coordination bonus."""
    query = Or([term_query(t) for t in query_terms(text)], scale=0.9)
    with ix.searcher() as searcher:
        return [hit["id"] for hit in searcher.search(query, limit=10)]


def search_and(ix: Any, text: str) -> list[str]:
    with ix.searcher() as searcher:
        return [hit["id"] for hit in searcher.search(And([term_query(t) for t in query_terms(text)]))]


def index_terms(text: str) -> list[str]:
    return [t.text for t in text_analyzer()(text, mode="index")]


# --- requirements -------------------------------------------------------------------------


@pytest.mark.parametrize(("query", "note"), [("健康", "health"), ("止损", "trade"), ("过敏", "allergy")])
def test_two_character_chinese_query_matches_mid_sentence(ix: Any, query: str, note: str) -> None:
    assert search_or(ix, query)[:1] == [note]
    assert search_and(ix, query) == [note]


def test_split_words_rank_with_or_but_fail_with_and(ix: Any) -> None:
    # 花生过敏 shares 花生 and 过敏 with 花生和坚果过敏 but not 生过: OR finds it, AND cannot.
    assert query_terms("花生过敏") == ["花生", "生过", "过敏"]
    assert search_or(ix, "花生过敏")[:1] == ["allergy"]
    assert search_and(ix, "花生过敏") == []


@pytest.mark.parametrize(
    ("question", "noun"),
    [
        ("我喜欢喝什么茶", "茶"),
        ("我的猫叫什么名字", "猫"),
        ("医生给我开了什么药", "药"),
        ("Maria 送了我什么书", "书"),
    ],
)
def test_a_one_character_noun_stays_in_the_query(question: str, noun: str) -> None:
    """Chinese names many things in one character: the thing asked about is never dropped."""
    assert noun in query_terms(question)


def test_the_verbs_and_particles_around_a_question_are_dropped_beside_longer_terms() -> None:
    assert query_terms("用Python写的爬虫") == ["python", "爬虫"]
    assert query_terms("我之前学的那个设计模式叫什么") == ["设计", "计模", "模式"]
    assert query_terms("他开什么车") == ["开", "车"]  # only one-character terms: all of them stay


def test_ascii_glued_to_cjk_splits_at_the_script_boundary(ix: Any) -> None:
    assert tokenize("gen-itgc后") == ["gen", "itgc", "后"]
    assert tokenize("用Python写") == ["用", "python", "写"]
    assert search_or(ix, "itgc")[:1] == ["itgc"]
    assert search_or(ix, "python 爬虫")[:1] == ["python"]


def test_english_is_lowercased_and_stemmed(ix: Any) -> None:
    assert tokenize("Decided DECIDE deciding") == ["decid"] * 3
    assert search_or(ix, "decide")[:1] == ["db"]
    # Porter2, not whoosh's porter: that one stems "stopped" to "stopp".
    assert tokenize("stopped stop running run") == ["stop", "stop", "run", "run"]
    assert search_or(ix, "stop using mongo db")[:1] == ["db"]


def test_numbers_are_kept() -> None:
    assert tokenize("v2.7.5 在 3.14 和 2026-03-10, 15号 7%") == [
        "v2.7.5",
        "在",
        "3.14",
        "和",
        "2026",
        "03",
        "10",
        "15",
        "号",
        "7",
    ]


def test_full_width_latin_and_digits_read_as_ascii() -> None:
    assert tokenize("ＡＢＣ１２３用") == ["abc123", "用"]


@pytest.mark.parametrize(
    ("query", "note"),
    [("東京", "japanese"), ("ラーメン", "japanese"), ("한국어", "korean"), ("안녕하세요", "korean")],
)
def test_japanese_and_korean_are_searchable(ix: Any, query: str, note: str) -> None:
    assert search_or(ix, query)[:1] == [note]
    assert search_and(ix, query) == [note]


def test_katakana_middle_dot_separates() -> None:
    assert tokenize("ジョン・スミス") == ["ジョ", "ョン", "スミ", "ミス"]


@pytest.mark.parametrize(("query", "note"), [("猫", "cat"), ("牙", "tooth"), ("粮", "cat"), ("医", "tooth")])
def test_one_character_query_matches_anywhere_in_a_run(ix: Any, query: str, note: str) -> None:
    # 猫 starts a bigram in 猫粮 and ends the run in 家里的猫; 粮 only ends a run.
    assert search_or(ix, query)[:1] == [note]


def test_one_character_query_across_segments_and_deletions() -> None:
    schema = fields.Schema(id=fields.ID(stored=True, unique=True), text=fields.TEXT(analyzer=text_analyzer()))
    ix = RamStorage().create_index(schema)
    for batch in (
        {"start": "猫粮快吃完了", "end": "我的猫", "gone": "猫"},
        {"twice": "猫和猫粮", "none": "狗粮"},
    ):
        with ix.writer() as writer:
            for note_id, text in batch.items():
                writer.add_document(id=note_id, text=text)
    with ix.writer() as writer:
        writer.delete_by_term("id", "gone")
    assert isinstance(term_query("猫"), CjkCharQuery)
    with ix.searcher() as searcher:
        assert len(searcher.reader().leaf_readers()) == 2
        hits = [hit["id"] for hit in searcher.search(term_query("猫"))]
    assert sorted(hits) == ["end", "start", "twice"]
    assert hits[0] == "twice"  # two mentions score higher


def test_stop_words_in_the_note_still_index() -> None:
    # Only queries drop stop words; the index keeps every term (phrases stay exact).
    assert "the" not in query_terms("the database")
    assert "we" in index_terms("We decided")


def test_phrase_query_across_scripts() -> None:
    ix = make_index()
    parser = qparser.QueryParser("text", ix.schema)
    with ix.searcher() as searcher:
        assert [h["id"] for h in searcher.search(parser.parse('"python写了"'))] == ["python"]
        assert [h["id"] for h in searcher.search(parser.parse('"花生和坚果"'))] == ["allergy"]
        assert [h["id"] for h in searcher.search(parser.parse('"花生坚果"'))] == []


def test_token_positions_and_offsets() -> None:
    text = "止损abc花生和坚果"
    tokens = [
        (t.text, t.pos, t.startchar, t.endchar)
        for t in text_analyzer()(text, positions=True, chars=True, mode="index")
    ]
    assert tokens == [
        ("止损", 0, 0, 2),
        ("损", 0, 1, 2),
        ("abc", 1, 2, 5),
        ("花生", 2, 5, 7),
        ("生和", 3, 6, 8),
        ("和坚", 4, 7, 9),
        ("坚果", 5, 8, 10),
        ("果", 5, 9, 10),
    ]
    query = [(t.text, t.pos) for t in text_analyzer()(text, positions=True, mode="query")]
    assert query == [("止损", 0), ("abc", 1), ("花生", 2), ("生和", 3), ("和坚", 4), ("坚果", 5)]


def test_untokenized_value_is_one_lowercased_token() -> None:
    tokens = [t.text for t in text_analyzer()("Foo*Bar", tokenize=False)]
    assert tokens == ["foo*bar"]


def test_analyzer_survives_the_schema_pickle_and_a_reopened_index(tmp_path: Path) -> None:
    analyzer = text_analyzer()
    assert pickle.loads(pickle.dumps(analyzer)) == analyzer
    assert BilingualAnalyzer(cjk_unigrams="all") != analyzer
    schema = fields.Schema(id=fields.ID(stored=True), text=fields.TEXT(analyzer=analyzer))
    with index.create_in(tmp_path, schema).writer() as writer:
        writer.add_document(id="a", text="对青霉素过敏")
    reopened = index.open_dir(tmp_path)
    assert search_or(reopened, "过敏") == ["a"]


def test_unknown_unigram_mode_is_rejected() -> None:
    with pytest.raises(ValueError, match="cjk_unigrams"):
        BilingualAnalyzer(cjk_unigrams="some")


def test_analyzer_version_is_a_stable_int() -> None:
    assert ANALYZER_VERSION == 3
    assert text_analyzer().version == ANALYZER_VERSION


# --- Traditional script -----------------------------------------------------------------------


def test_traditional_and_simplified_script_meet() -> None:
    assert tokenize("跟朋友去陽明山爬山") == tokenize("跟朋友去阳明山爬山")
    assert set(query_terms("阳明山")) <= set(index_terms("跟朋友去陽明山爬山"))


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("我有沒有提過深蹲？", ["深蹲"]),
        ("爸爸吃的降壓藥叫什麼？", ["爸爸", "爸吃", "降压", "压药"]),
        ("哪個牌子的貓糧", ["牌子", "猫粮"]),
    ],
)
def test_traditional_question_words_are_stop_words(query: str, expected: list[str]) -> None:
    assert query_terms(query) == expected


def test_folding_keeps_offsets_into_the_text_as_written() -> None:
    from vault_tools.recall.results import highlight_spans

    text = "週末去陽明山爬山"
    spans = highlight_spans(text, query_terms("阳明山"))
    assert [text[a:b] for a, b in spans] == ["陽明山"]


def test_the_traditional_table_is_what_opencc_makes() -> None:
    import importlib.util
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    spec = importlib.util.spec_from_file_location(
        "traditional_chars", root / "bench" / "traditional_chars.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    shipped = (root / "vault_tools" / "cjk_traditional.tsv").read_text(encoding="utf-8")
    assert shipped == module.render(), "run bench/traditional_chars.py"


# --- irregular English forms ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "own", "lemmas"),
    [
        ("bought", "bought", ["buy"]),
        ("went", "went", ["go"]),
        ("ran", "ran", ["run"]),
        ("Children", "children", ["child"]),
        ("mice", "mice", ["mous"]),
        ("felt", "felt", ["feel"]),
        ("took", "took", ["take"]),
        ("lives", "live", ["life"]),  # the verb is Porter2's; the noun's lemma is added
        ("saw", "saw", ["see"]),  # also the tool: "see" finds it (a form that is a word too)
        ("ＷＥＮＴ", "went", ["go"]),  # full-width, as read after NFKC
        ("buy", "buy", []),
        ("decided", "decid", []),  # regular: Porter2 already meets "decide"
        ("was", "was", []),  # "be" is a query stop word: nothing would search it
        ("said", "said", []),
    ],
)
def test_irregular_forms_index_their_lemma_and_query_as_written(
    text: str, own: str, lemmas: list[str]
) -> None:
    assert index_terms(text) == [own, *lemmas]
    assert tokenize(text) == [own]


def test_a_lemma_shares_the_position_of_its_form() -> None:
    tokens = [
        (t.text, t.pos, t.startchar)
        for t in text_analyzer()("I bought bread", positions=True, chars=True, mode="index")
    ]
    assert tokens == [("i", 0, 0), ("bought", 1, 2), ("buy", 1, 2), ("bread", 2, 9)]


def test_chinese_is_untouched_by_english_lemmas() -> None:
    assert index_terms("我买了花生和坚果") == ["我买", "买了", "了花", "花生", "生和", "和坚", "坚果", "果"]
    assert index_terms("went 去了北京") == ["went", "go", "去了", "了北", "北京", "京"]
    assert tokenize("我买了花生") == ["我买", "买了", "了花", "花生"]


def test_a_question_in_the_base_form_finds_the_irregular_past() -> None:
    ix = make_index(
        {
            "past": "Yesterday I bought new running shoes",
            "plan": "Need to buy milk",
            "other": "Shoes are on sale",
        }
    )
    assert sorted(search_or(ix, "What did I buy?")) == ["past", "plan"]
    assert search_or(ix, "bought")[:1] == ["past"]
    assert "plan" not in search_or(ix, "bought")  # the form asked for stays itself


def test_the_irregular_table_is_what_lemminflect_makes() -> None:
    pytest.importorskip("lemminflect")
    root = Path(__file__).resolve().parent.parent
    spec = importlib.util.spec_from_file_location("irregular_forms", root / "bench" / "irregular_forms.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    shipped = (root / "vault_tools" / "index" / "english_irregular.tsv").read_text(encoding="utf-8")
    assert shipped == module.render(), "run bench/irregular_forms.py"


# --- query_terms ----------------------------------------------------------------------------


def test_query_terms_drop_chinese_question_words() -> None:
    terms = query_terms("我之前学的那个设计模式叫什么")
    assert {"设计", "模式"} <= set(terms)
    assert not {"什么", "那个", "之前", "的那", "学的", "叫什", "我之"} & set(terms)
    assert query_terms("止损设在多少") == ["止损", "损设"]
    assert query_terms("红烧肉怎么做") == ["红烧", "烧肉"]
    assert query_terms("我们是不是来着") == ["我们", "们是", "是不", "不是", "是来", "来着"]  # all stop: kept


def test_query_terms_drop_english_question_words() -> None:
    assert query_terms("What did we decide about the database?") == ["decid", "databas"]
    assert query_terms("when is the standup") == ["standup"]
    assert query_terms("how about which") == ["how", "about", "which"]  # nothing else: kept


def test_query_terms_keep_words_that_contain_a_stop_character() -> None:
    assert query_terms("我了解的吗啡") == ["了解", "吗啡"]
    assert query_terms("旅行的目的") == ["旅行", "目的"]


def test_query_terms_drop_lone_cjk_characters_unless_they_are_all_there_is() -> None:
    assert query_terms("用Python写的爬虫") == ["python", "爬虫"]
    assert query_terms("我之前学的那个设计模式叫什么") == ["设计", "计模", "模式"]
    assert query_terms("猫") == ["猫"]
    assert query_terms("猫和狗") == ["猫", "狗"]


def test_query_terms_deduplicate_and_handle_empty_input() -> None:
    assert query_terms("止损 止损 Stop stopping") == ["止损", "stop"]
    assert query_terms("") == []
    assert query_terms("？！…  ") == []


def test_stop_lists_cover_the_documented_words() -> None:
    assert {"what", "when", "did", "we", "the", "about", "how", "which"} <= ENGLISH_QUERY_STOP_WORDS
    assert {
        "的",
        "了",
        "吗",
        "呢",
        "什么",
        "那个",
        "之前",
        "我",
        "我们",
        "是",
        "叫",
        "来着",
        "怎么",
        "哪个",
    } <= (CJK_QUERY_STOP_WORDS)


# --- properties -------------------------------------------------------------------------------

ANY_TEXT = st.text(st.characters(exclude_categories=()), max_size=200)  # surrogates, controls, emoji
CJK_CHARS = "花生和坚果过敏止损健康的了什么我们東京にラーメン한국어"
CJKISH = st.text(st.sampled_from(CJK_CHARS + " abcdef12.,-\n😀\x00"), max_size=60)


@settings(max_examples=300, deadline=None)
@given(ANY_TEXT)
def test_tokenize_never_raises_and_offsets_are_sane(text: str) -> None:
    tokenize(text)
    query_terms(text)
    last_pos = -1
    for t in text_analyzer()(text, positions=True, chars=True, mode="index"):
        assert t.text
        assert 0 <= t.startchar < t.endchar <= len(text)
        assert t.pos >= last_pos
        last_pos = t.pos


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80).map(lambda s: s + "😀\ud800\x07" + s))
def test_tokenize_handles_emoji_surrogates_and_controls(text: str) -> None:
    assert "😀" not in "".join(tokenize(text))
    assert "\ud800" not in "".join(tokenize(text))


@settings(max_examples=300, deadline=None)
@given(CJKISH)
def test_query_side_terms_are_a_subset_of_index_terms(text: str) -> None:
    # Whatever a note says, querying with its own text finds every term of it.
    assert set(tokenize(text)) <= set(index_terms(text))


@settings(max_examples=300, deadline=None)
@given(CJKISH)
def test_every_cjk_character_is_reachable_by_term_query(text: str) -> None:
    from vault_tools.index.analysis import fold_cjk

    terms = set(index_terms(text))
    for ch in fold_cjk(text):
        if ch in CJK_CHARS:
            assert ch in terms or any(len(t) == 2 and t[0] == ch for t in terms)


@settings(max_examples=300, deadline=None)
@given(ANY_TEXT)
def test_query_terms_never_empty_when_the_query_has_terms(text: str) -> None:
    if tokenize(text):
        assert query_terms(text)
    else:
        assert query_terms(text) == []


def test_counted_text_indexes_counts_as_it_indexes_the_text() -> None:
    """The build hands an entry's analysed terms to its own and its neighbours' fields: the
    postings must be those of the text analysed by the field itself."""
    from vault_tools.index.analysis import CountedText, index_term_counts, text_analyzer

    field = CountedText(analyzer=text_analyzer(), phrase=False)
    text = "Decided: 用Python写止损脚本 v2.7, decided again 花生和坚果过敏 猫"
    assert sorted(field.index(index_term_counts(text))) == sorted(field.index(text))
    assert index_term_counts(text)["decid"] == 2 and "敏" in index_term_counts(text)
