"""recall: time words, keywords in both languages, tags, duplicates, budgets, JSON, privacy, warm use."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from vault_tools import cli
from vault_tools.config import Config, load_config
from vault_tools.errors import UsageError
from vault_tools.index.index import Index
from vault_tools.recall.query import noise_reason, parse_query
from vault_tools.recall.recall import Recaller, recall
from vault_tools.recall.results import Hit, RecallResult, highlight_spans, mark
from vault_tools.recall.tuning import Tuning
from vault_tools.tokens import count_tokens

AS_OF = dt.date(2026, 3, 2)  # a Monday

MEMORY = """---
title: Long-term memory
---
# Long-term memory

## Decisions

- 2026-02-10: Chose Qdrant as the vector database for semantic search; pgvector was too slow [importance:: 0.9] [source:: [[2026-02-10]]] ^m-aaa111

## Facts

- 2026-01-20: The lighthouse keeper is called Ferdinand [importance:: 0.4] ^m-ccc333
- 2026-01-21: Zebracorn memory item #shared [importance:: 0.5] ^m-ddd444
"""

DAYS = {
    "2026-02-10": """---
date: 2026-02-10
---
## Work

- 10:00 Chose Qdrant as the vector database for semantic search; pgvector was too slow at 10M rows. #decision #atlas
- 11:00 学了设计模式里的观察者模式：主题维护订阅者列表，状态变化时通知所有订阅者。 #技术/前端/React
- 12:00 Reviewed the React hooks guide for the frontend team. #技术人员
""",
    "2026-02-20": """---
date: 2026-02-20
---
- 09:00 Auth discussion: Keycloak needs ops work, no decision yet. #atlas
- 18:00 Dinner: ramen on Boxhagener Platz, too salty.
""",
    "2026-02-23": """---
date: 2026-02-23
---
- 10:00 Decided: auth moves to OIDC with Keycloak. #decision #atlas
""",
    "2026-02-28": """---
date: 2026-02-28
---
- 19:30 晚饭第一次自己做酸菜鱼，味道还不错。
""",
    "2026-03-01": """---
date: 2026-03-01
---
- 09:15 Dinner yesterday was pizza with Maria; her birthday party last night was great. #people/maria
- 10:00 Dinner plans for Friday: the Vietnamese place.
""",
    "2025-12-31": """---
date: 2025-12-31
---
- 23:00 New year's eve fireworks on the Spree.
""",
}


def write_vault(root: Path) -> Path:
    (root / "memory").mkdir(parents=True)
    (root / "MEMORY.md").write_text(MEMORY, encoding="utf-8")
    for day, text in DAYS.items():
        (root / "memory" / f"{day}.md").write_text(text, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Config]:
    vault = write_vault(tmp_path_factory.mktemp("recall") / "vault")
    config = load_config(vault, env={})
    Index(config).rebuild()
    yield config


@pytest.fixture(scope="module")
def session(config: Config) -> Iterator[Recaller]:
    with Recaller(config, catch_up="never") as warm:
        yield warm


def places(result: RecallResult) -> list[str]:
    return [f"{h.path}:{h.line}" for h in result.results]


def texts(result: RecallResult) -> str:
    return "\n".join(h.text for h in result.results)


# ---------------------------------------------------------------------------------------------
# Time words and --since/--until


@pytest.mark.parametrize(
    ("query", "as_of", "since", "until"),
    [
        ("what happened yesterday", "2026-03-01", "2026-02-28", "2026-02-28"),  # month boundary
        ("昨天", "2026-01-01", "2025-12-31", "2025-12-31"),  # year boundary
        ("前天 晚饭", "2026-03-01", "2026-02-27", "2026-02-27"),
        ("dinner two days ago", "2026-01-02", "2025-12-31", "2025-12-31"),
        ("auth last week", "2026-01-05", "2025-12-29", "2026-01-04"),  # the week spans the new year
        ("上周 部署", "2026-03-02", "2026-02-23", "2026-03-01"),
        ("what did I read in March", "2026-02-10", "2025-03-01", "2025-03-31"),  # the latest March
        ("三月 学了什么", "2026-03-20", "2026-03-01", "2026-03-31"),
        ("上个月的会议", "2026-01-15", "2025-12-01", "2025-12-31"),
        ("last month dinner", "2026-03-02", "2026-02-01", "2026-02-28"),
        ("2026年3月 晚饭", "2026-12-01", "2026-03-01", "2026-03-31"),
    ],
)
def test_time_words_become_a_window_and_leave_the_keywords(
    session: Recaller, query: str, as_of: str, since: str, until: str
) -> None:
    result = session.recall(query, as_of=dt.date.fromisoformat(as_of))
    window = result.filters["window"]
    assert window is not None, result.filters
    assert (window["since"], window["until"]) == (since, until)
    phrase = result.filters["time_phrase"]
    assert phrase and all(phrase not in term for term in result.filters["keywords"])


def test_time_words_are_taken_out_of_the_keywords(session: Recaller) -> None:
    result = session.recall("What did we decide about auth last week?", as_of=AS_OF)
    assert result.filters["keywords"] == ["decid", "auth"]
    assert places(result)[0] == "memory/2026-02-23.md:4"
    # The older discussion is outside the week: it may follow, never lead.
    assert "memory/2026-02-20.md:4" not in places(result)[:1]


def test_word_window_keeps_a_strong_match_written_a_day_later(session: Recaller) -> None:
    # "Maria's birthday party last week" was written on Sunday 03-01 about Saturday: still found.
    result = session.recall("Maria birthday party last week", as_of=dt.date(2026, 3, 3))
    assert result.filters["window"]["until"] == "2026-03-01"
    result = session.recall("Maria birthday party two days ago", as_of=dt.date(2026, 3, 2))
    assert result.filters["window"]["since"] == "2026-02-28"
    assert places(result)[0] == "memory/2026-03-01.md:4"


def test_word_window_ranks_inside_before_outside(session: Recaller) -> None:
    result = session.recall("dinner last week", as_of=AS_OF, explain=True)  # 02-23..03-01
    dates = [h.date for h in result.results]
    assert dates[:2] == ["2026-03-01", "2026-03-01"]
    # Three days before the window: not lost (a strong match), but ranked after the week's.
    assert "2026-02-20" in dates
    outside = result.results[dates.index("2026-02-20")]
    assert outside.explain is not None and outside.explain["window"] < 1.0


def test_explicit_since_until_are_hard_limits(session: Recaller) -> None:
    result = session.recall("Keycloak auth", since="2026-02-21", until="2026-02-23", as_of=AS_OF)
    assert places(result) == ["memory/2026-02-23.md:4"]
    assert result.filters["since"] == "2026-02-21" and result.filters["until"] == "2026-02-23"
    none = session.recall("Keycloak auth", until="2026-02-19", as_of=AS_OF)
    assert none.results == []


@pytest.mark.parametrize(
    ("since", "until", "expected"),
    [
        ("2026-03-01", None, ("2026-03-01", None)),
        ("7d", None, ("2026-02-23", None)),
        ("2w", None, ("2026-02-16", None)),
        ("yesterday", "yesterday", ("2026-03-01", "2026-03-01")),
        ("last week", "last week", ("2026-02-23", "2026-03-01")),
        ("this month", None, ("2026-03-01", None)),
        ("上周", "上周", ("2026-02-23", "2026-03-01")),
    ],
)
def test_since_until_forms(
    session: Recaller, since: str, until: str | None, expected: tuple[str, str | None]
) -> None:
    result = session.recall("dinner", since=since, until=until, as_of=AS_OF)
    assert (result.filters["since"], result.filters["until"]) == expected
    for hit in result.results:
        assert hit.date is not None and hit.date >= expected[0]
        assert expected[1] is None or hit.date <= expected[1]


def test_bad_since_is_a_usage_error(session: Recaller) -> None:
    with pytest.raises(UsageError):
        session.recall("dinner", since="the day after the big storm", as_of=AS_OF)


def test_unresolvable_time_words_are_searched_as_keywords(session: Recaller) -> None:
    result = session.recall("fireworks next week", as_of=AS_OF)
    assert result.filters["window"] is None
    assert "firework" in result.filters["keywords"]
    assert places(result) == ["memory/2025-12-31.md:4"]


def test_a_query_of_only_time_words_browses_that_window(session: Recaller) -> None:
    result = session.recall("yesterday", as_of=dt.date(2026, 3, 1))
    assert result.results and {h.date for h in result.results} <= {"2026-02-27", "2026-02-28", "2026-03-01"}
    assert result.results[0].date == "2026-02-28"
    result = session.recall("昨天发生了什么？", as_of=dt.date(2026, 3, 1))
    assert result.results[0].date == "2026-02-28"


def test_as_of_defaults_to_today_in_the_vault_timezone(config: Config) -> None:
    result = recall(config, "yesterday")
    expected = (config.today() - dt.timedelta(days=1)).isoformat()
    assert result.filters["window"]["since"] == expected
    assert result.filters["as_of"] == config.today().isoformat()


# ---------------------------------------------------------------------------------------------
# Keywords


def test_english_question_needs_no_every_word(session: Recaller) -> None:
    result = session.recall("Which vector database did we choose for semantic search?", as_of=AS_OF)
    assert "Qdrant" in result.results[0].text


def test_chinese_question_finds_the_pattern(session: Recaller) -> None:
    result = session.recall("我之前学过的那个设计模式叫什么来着？", as_of=AS_OF)
    assert "观察者模式" in result.results[0].text
    assert "什么" not in "".join(result.filters["keywords"])


def test_chinese_keyword_is_precise(session: Recaller) -> None:
    result = session.recall("酸菜鱼", as_of=AS_OF)
    assert places(result) == ["memory/2026-02-28.md:4"]


def test_short_keyword_query_stays_precise(session: Recaller) -> None:
    result = session.recall("Keycloak", as_of=AS_OF)
    assert len(result.results) == 2 and all("Keycloak" in h.text for h in result.results)


def test_stemming_meets_decided_and_decide(session: Recaller) -> None:
    result = session.recall("decide OIDC", as_of=AS_OF)
    assert places(result)[0] == "memory/2026-02-23.md:4"


def test_a_question_in_the_base_form_finds_what_was_written_in_the_past(tmp_path: Path) -> None:
    # English questions ask "did I buy", notes say "bought": irregular forms index their lemma.
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "2026-02-10.md").write_text(
        "- 09:00 Bought a used road bike from Jonas for 300 euros.\n"
        "- 10:00 Felt great after the first long ride.\n"
        "- 11:00 The bike shop sells inner tubes and a pump.\n"
        "- 12:00 我买了一辆二手自行车。\n",
        encoding="utf-8",
    )
    config = load_config(tmp_path, env={})
    assert recall(config, "What bike did I buy?", as_of=AS_OF).results[0].line == 1
    assert recall(config, "How did I feel after the ride?", as_of=AS_OF).results[0].line == 2
    assert recall(config, "我买了什么自行车", as_of=AS_OF).results[0].line == 4


# ---------------------------------------------------------------------------------------------
# Tags


def test_tag_option_matches_nested_tags_by_prefix(session: Recaller) -> None:
    result = session.recall("", tags=["技术"], as_of=AS_OF)
    assert [h.line for h in result.results] == [7]
    assert "技术/前端/react" in [t.lower() for t in result.results[0].tags]
    # #技术人员 is another tag, not one nested under #技术
    assert all("技术人员" not in h.tags for h in result.results)


@pytest.mark.parametrize("query", ["#技术/前端 观察者", "tag:技术 观察者", "观察者 #技术"])
def test_tags_in_the_query_filter(session: Recaller, query: str) -> None:
    result = session.recall(query, as_of=AS_OF)
    assert result.filters["tags"] and "观察者模式" in result.results[0].text
    assert all(any(t.lower().startswith("技术/") for t in h.tags) for h in result.results)


def test_several_tags_must_all_match(session: Recaller) -> None:
    result = session.recall("auth", tags=["decision", "#atlas"], as_of=AS_OF)
    assert places(result) == ["memory/2026-02-23.md:4"]


# ---------------------------------------------------------------------------------------------
# Duplicates, budgets, explain, output


def test_the_same_fact_in_memory_and_a_daily_note_collapses(session: Recaller) -> None:
    result = session.recall("Qdrant vector database", as_of=AS_OF)
    qdrant = [h for h in result.results if "Qdrant" in h.text]
    assert len(qdrant) == 1
    hit = qdrant[0]
    other = {"MEMORY.md:8", "memory/2026-02-10.md:6"} - {f"{hit.path}:{hit.line}"}
    assert hit.also_in == sorted(other)


def test_results_fit_the_token_budget(session: Recaller) -> None:
    full = session.recall("dinner", as_of=AS_OF, max_tokens=10_000)
    assert len(full.results) >= 3
    small = session.recall("dinner", as_of=AS_OF, max_tokens=60)
    spent = sum(count_tokens(h.text) + Tuning().hit_overhead_tokens for h in small.results)
    assert spent <= 60 and 1 <= len(small.results) < len(full.results)
    assert any("token budget" in w for w in small.warnings)


def test_a_tiny_budget_truncates_the_first_hit(session: Recaller) -> None:
    result = session.recall("观察者模式", as_of=AS_OF, max_tokens=25)
    assert len(result.results) == 1 and result.results[0].text.endswith("…")


def test_bad_limit_and_budget_are_usage_errors(session: Recaller) -> None:
    with pytest.raises(UsageError):
        session.recall("x", limit=0)
    with pytest.raises(UsageError):
        session.recall("x", max_tokens=-5)


def test_explain_shows_the_parts_of_each_score(session: Recaller) -> None:
    result = session.recall("Qdrant", as_of=AS_OF, explain=True)
    parts = result.results[0].explain
    assert parts is not None
    assert {"bm25", "recency", "importance", "window", "score"} <= parts.keys()
    product = 1.0
    for key in ("bm25", "coordination", "recency", "importance", "source", "window"):
        product *= parts[key]
    assert product == pytest.approx(parts["score"])
    assert session.recall("Qdrant", as_of=AS_OF).results[0].explain is None


def test_memory_items_do_not_decay(session: Recaller) -> None:
    result = session.recall("lighthouse keeper", as_of=dt.date(2030, 1, 1), explain=True)
    hit = result.results[0]
    assert hit.source == "memory" and hit.explain and hit.explain["recency"] == 1.0


def test_json_schema(config: Config, capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(["recall", "--vault", str(config.vault), "--json", "--as-of", "2026-03-02", "Qdrant"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    assert set(data) == {"query", "filters", "stale", "results", "warnings"}
    assert data["query"] == "Qdrant" and data["stale"] is False and isinstance(data["warnings"], list)
    assert {"chat", "since", "until", "tags"} <= set(data["filters"])
    hit = data["results"][0]
    assert {"id", "path", "line", "end_line", "date", "source", "section", "tags", "score", "text"} <= set(
        hit
    )
    assert hit["source"] in ("daily", "memory", "note") and "\\" not in hit["path"]
    assert isinstance(hit["line"], int) and isinstance(hit["score"], float)
    dt.date.fromisoformat(hit["date"])


def test_human_output_shows_place_date_and_highlights(
    config: Config, capsys: pytest.CaptureFixture[str]
) -> None:
    code = cli.main(
        [
            "recall",
            "--vault",
            str(config.vault),
            "--as-of",
            "2026-03-02",
            "--explain",
            "Keycloak",
            "--limit",
            "1",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "memory/2026-02-23.md:4  2026-02-23" in out
    assert "**Keycloak**" in out and "score" in out


def test_highlight_marks_words_and_cjk_terms() -> None:
    assert (
        mark("Decided on Keycloak today", ["decid", "keycloak"], "[", "]") == "[Decided] on [Keycloak] today"
    )
    assert highlight_spans("学了观察者模式", ["观察", "察者"]) == [(2, 5)]
    assert mark("Bought a bike; 买了猫粮", ["buy", "bike", "粮"], "[", "]") == "[Bought] a [bike]; 买了猫[粮]"


# ---------------------------------------------------------------------------------------------
# Noise


@pytest.mark.parametrize(
    "query", ["", "   ", "hi", "Hello!", "good morning", "你好", "早上好！", "👍", "🙂🙂", "?!"]
)
def test_noise_returns_nothing_without_searching_with_a_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, query: str
) -> None:
    vault = write_vault(tmp_path / "v")
    config = load_config(vault, env={})

    def no_search(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("noise must not open the index")

    monkeypatch.setattr(Index, "ensure_current", no_search)
    monkeypatch.setattr(Index, "open_searcher", no_search)
    result = recall(config, query)
    assert result.results == [] and result.warnings
    assert not (vault / ".vault-tools" / "index").exists()  # the index was not even built


def test_noise_reason_keeps_real_words() -> None:
    assert noise_reason("hi, what did we decide about auth?") is None
    assert noise_reason("好的") is not None and noise_reason("好的餐厅") is None
    assert parse_query("thanks", AS_OF).noise is not None


# ---------------------------------------------------------------------------------------------
# Privacy: every chat x every visibility


PRIVACY_DAILY = """---
date: 2026-02-01
---
- zebracorn personal entry
- zebracorn private entry #private
- zebracorn sharedentry in a personal note #shared
"""
PRIVACY_SHARED_NOTE = """---
date: 2026-02-02
visibility: shared
---
- zebracorn sharednote entry
- zebracorn privateinshared entry #private
"""
PRIVACY_PRIVATE_NOTE = """---
date: 2026-02-03
visibility: private
---
- zebracorn privatenote entry #shared
"""
PRIVACY_MEMORY = """# Long-term memory

- 2026-01-01: zebracorn memory item [importance:: 0.9]
- 2026-01-02: zebracorn memshared item #shared
- 2026-01-03: zebracorn memprivate item #private
"""


@pytest.fixture(scope="module")
def privacy_config(tmp_path_factory: pytest.TempPathFactory) -> Config:
    root = tmp_path_factory.mktemp("privacy") / "vault"
    (root / "memory").mkdir(parents=True)
    (root / "MEMORY.md").write_text(PRIVACY_MEMORY, encoding="utf-8")
    (root / "memory" / "2026-02-01.md").write_text(PRIVACY_DAILY, encoding="utf-8")
    (root / "memory" / "2026-02-02.md").write_text(PRIVACY_SHARED_NOTE, encoding="utf-8")
    (root / "memory" / "2026-02-03.md").write_text(PRIVACY_PRIVATE_NOTE, encoding="utf-8")
    config = load_config(root, env={})
    Index(config).rebuild()
    return config


WHAT = [
    "personal",
    "private",
    "sharedentry",
    "sharednote",
    "privateinshared",
    "privatenote",
    "memory",
    "memshared",
    "memprivate",
]
PRIVATE = {"private", "privateinshared", "privatenote", "memprivate"}
VISIBLE = {
    "direct": set(WHAT) - PRIVATE,
    "group": {"sharedentry", "sharednote"},
    "unknown": {"sharedentry", "sharednote"},
}


@pytest.mark.parametrize("chat", ["direct", "group", "unknown"])
@pytest.mark.parametrize("what", WHAT)
def test_privacy_table(privacy_config: Config, chat: str, what: str) -> None:
    result = recall(privacy_config, f"zebracorn {what}", chat=chat, as_of=AS_OF, limit=50)
    found = {h.text.split()[1] for h in result.results}
    assert found == VISIBLE[chat]
    assert (what in found) == (what in VISIBLE[chat])
    assert result.filters["chat"] == chat


@pytest.mark.parametrize("what", WHAT)
def test_include_private_shows_private_entries_to_the_owner(privacy_config: Config, what: str) -> None:
    result = recall(
        privacy_config, f"zebracorn {what}", chat="direct", as_of=AS_OF, limit=50, include_private=True
    )
    assert what in {h.text.split()[1] for h in result.results}


@pytest.mark.parametrize("chat", ["group", "unknown"])
def test_include_private_is_refused_outside_a_direct_chat(privacy_config: Config, chat: str) -> None:
    with pytest.raises(UsageError, match="never shown"):
        recall(privacy_config, "zebracorn private", chat=chat, as_of=AS_OF, include_private=True)


@pytest.mark.parametrize("chat", ["group", "unknown"])
def test_group_chat_never_sees_private_content_named_verbatim(privacy_config: Config, chat: str) -> None:
    for query in (
        "zebracorn private entry #private",
        "zebracorn memory item",
        "zebracorn memshared item #shared",
    ):
        result = recall(privacy_config, query, chat=chat, as_of=AS_OF, limit=50)
        assert all(h.text.split()[1] in VISIBLE[chat] for h in result.results), query
    browse = recall(privacy_config, "#private", chat=chat, as_of=AS_OF, limit=50)
    assert browse.results == []


def test_chat_default_comes_from_the_environment(privacy_config: Config) -> None:
    config = load_config(privacy_config.vault, env={"VAULT_TOOLS_CHAT": "group"})
    result = recall(config, "zebracorn", as_of=AS_OF, limit=50)
    assert result.filters["chat"] == "group"
    assert {h.text.split()[1] for h in result.results} == VISIBLE["group"]


def test_unknown_chat_name_is_refused(privacy_config: Config) -> None:
    with pytest.raises(UsageError):
        recall(privacy_config, "zebracorn", chat="everyone")


def test_cli_chat_option(privacy_config: Config, capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(
        ["recall", "--vault", str(privacy_config.vault), "--json", "--chat", "group", "zebracorn"]
    )
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["filters"]["chat"] == "group"
    assert {h["text"].split()[1] for h in data["results"]} == VISIBLE["group"]


# ---------------------------------------------------------------------------------------------
# The Python API, warm sessions and staleness


def test_vault_api_returns_typed_hits(config: Config) -> None:
    from vault_tools import Vault

    result = Vault(config.vault).recall("Qdrant", limit=1, chat="direct", as_of=AS_OF)
    assert isinstance(result, RecallResult) and isinstance(result.results[0], Hit)
    assert len(result.results) == 1


def test_one_shot_recall_catches_up_with_new_notes(tmp_path: Path) -> None:
    vault = write_vault(tmp_path / "v")
    config = load_config(vault, env={})
    assert recall(config, "platypus", as_of=AS_OF).results == []
    (vault / "memory" / "2026-03-02.md").write_text("- saw a platypus at the zoo\n", encoding="utf-8")
    result = recall(config, "platypus", as_of=AS_OF)
    assert places(result) == ["memory/2026-03-02.md:1"] and result.stale is False


def test_warm_session_sees_new_commits(tmp_path: Path) -> None:
    vault = write_vault(tmp_path / "v")
    config = load_config(vault, env={})
    index = Index(config)
    index.rebuild()
    with Recaller(config, catch_up="never", index=index) as warm:
        assert warm.recall("platypus", as_of=AS_OF).results == []
        path = vault / "memory" / "2026-03-02.md"
        path.write_text("- saw a platypus at the zoo\n", encoding="utf-8")
        assert warm.recall("platypus", as_of=AS_OF).results == []  # nobody indexed it yet
        index.update([path])  # what the watcher does
        assert places(warm.recall("platypus", as_of=AS_OF)) == ["memory/2026-03-02.md:1"]


def test_stale_when_another_writer_holds_the_index(tmp_path: Path) -> None:
    from vault_tools import locks

    vault = write_vault(tmp_path / "v")
    config = load_config(vault, env={})
    Index(config).rebuild()
    (vault / "memory" / "2026-03-02.md").write_text("- saw a platypus at the zoo\n", encoding="utf-8")
    with (
        locks.hold(config, "index", timeout=1, what="test"),
        Recaller(config, index=Index(config, read_lock_timeout=0.05)) as session,
    ):
        result = session.recall("Keycloak", as_of=AS_OF)
    assert result.stale is True
    assert any("stale" in w for w in result.warnings)
    assert result.to_dict()["stale"] is True


@pytest.mark.parametrize(
    "query",
    ["咖啡", "coffee", "what did we decide last week?", "#health", "上周", "tag:work deploy", "2026-03"],
)
def test_a_fresh_vault_with_no_entries_answers_every_query_with_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], query: str
) -> None:
    """Whoosh's idf is log(0) in an empty index: the first recall after `init` once crashed."""
    from vault_tools.agents.vault import init_vault

    vault = tmp_path / "fresh"
    init_vault(vault)
    for chat in ("direct", "group"):
        result = recall(load_config(vault, env={}), query, chat=chat)
        assert result.results == [] and not result.stale
    assert cli.main(["recall", query, "--vault", str(vault), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["results"] == []


def test_recall_still_exports_the_names_it_had_before_the_split() -> None:
    """recall.py was split into query, filters, ranking and results; code that imported these from
    vault_tools.recall.recall keeps working and gets the very same objects."""
    import vault_tools.recall.recall as recall_module
    from vault_tools.recall import query, results, tuning

    moved = {
        "Hit": results.Hit,
        "RecallResult": results.RecallResult,
        "highlight_spans": results.highlight_spans,
        "Tuning": tuning.Tuning,
        "DEFAULT_TUNING": tuning.DEFAULT_TUNING,
        "parse_query": query.parse_query,
    }
    assert {name: getattr(recall_module, name, None) for name in moved} == moved
    assert set(moved) | {"Recaller", "recall"} <= set(recall_module.__all__)
