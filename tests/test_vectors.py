"""Semantic recall end to end: the vector cache, filling it, the search's filters, faults, the watcher.

Every test talks to the deterministic embeddings server of ``llm_server.py`` on 127.0.0.1 through
the real ``openai`` client.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import json
import os
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import wait_for, watch_in_thread, write
from llm_server import LLMServer, Reply

from vault_tools import cli
from vault_tools.config import Config, load_config
from vault_tools.errors import UsageError
from vault_tools.index.index import Index
from vault_tools.recall.query import vector_text
from vault_tools.recall.recall import Recaller, recall
from vault_tools.vectors import cache as vectors
from vault_tools.vectors import fill as vfill
from vault_tools.vectors import matrix as vector_matrix
from vault_tools.vectors import search as vsearch
from vault_tools.vectors.cache import Doc, VectorStore, neighbour_table, store_path
from vault_tools.vectors.fill import fill_vault
from vault_tools.vectors.matrix import load_matrix, matrix_files
from vault_tools.watch.watcher import WatchOptions

AS_OF = dt.date(2026, 3, 2)

CONCEPTS = {
    "kitten": "cat",
    "小猫": "cat",
    "cat": "cat",
    "laid off": "jobloss",
    "lose my job": "jobloss",
    "lost my job": "jobloss",
}

MEMORY = """---
title: Long-term memory
---
# Long-term memory

## Facts

- 2026-01-20: The lighthouse keeper is called Ferdinand [importance:: 0.4] ^m-ccc333
"""

DAYS = {
    "2026-02-10": """---
date: 2026-02-10
---
- 10:00 小猫跳上了沙发
- 11:00 Quarterly budget review with the finance team
""",
    "2026-02-20": """---
date: 2026-02-20
---
- 09:00 Got laid off from Acme together with half the platform team
- 10:00 Diary: I feel the cat understands me #private
- 11:00 Deploy key for staging is sk-proj-abcdefghijklmnopqrstuvwxyz0123456789
""",
    "2026-02-25": """---
date: 2026-02-25
visibility: shared
---
- 09:00 Team offsite planning: the venue has a resident cat
""",
}


@pytest.fixture
def server() -> Iterator[LLMServer]:
    with LLMServer() as running:
        running.concepts = dict(CONCEPTS)
        yield running


def configure(vault: Path, server: LLMServer, extra: str = "") -> Config:
    write(
        vault / ".vault-tools" / "config.toml",
        f'[embeddings]\nmodel = "test-embedding"\nbase_url = "{server.base_url}"\nbatch_size = 2\n{extra}',
    )
    return load_config(vault, env={})


@pytest.fixture
def notes(vault: Path) -> Path:
    write(vault / "MEMORY.md", MEMORY)
    for day, text in DAYS.items():
        write(vault / "memory" / f"{day}.md", text)
    return vault


@pytest.fixture
def config(notes: Path, server: LLMServer) -> Config:
    config = configure(notes, server)
    Index(config).ensure_current()
    report = fill_vault(config)
    assert report.error is None
    return config


def texts(result: object) -> list[str]:
    return [hit.text for hit in result.results]  # type: ignore[attr-defined]


# -- the cache ------------------------------------------------------------------------------------


def test_indexing_embeds_each_entry_once_and_private_ones_never(config: Config, server: LLMServer) -> None:
    sent = server.embedded_texts()
    assert len(sent) == len(set(sent)) == 6  # every entry but the #private one
    body = "\n".join(server.embedding_bodies)
    assert "Diary" not in body and "understands me" not in body
    assert "sk-proj" not in body and "[REDACTED:" in body
    assert all(len(request["input"]) <= 2 for request in server.embedding_requests)  # batch_size
    before = len(server.embedding_requests)
    report = fill_vault(config)
    assert (report.embedded, report.kept_local, len(server.embedding_requests)) == (0, 1, before)


def test_an_edited_entry_is_embedded_again_and_only_it(config: Config, server: LLMServer) -> None:
    path = config.vault / "memory" / "2026-02-10.md"
    path.write_text(path.read_text().replace("Quarterly budget", "Yearly budget"), encoding="utf-8")
    Index(config).ensure_current()
    before = len(server.embedded_texts())
    assert fill_vault(config).embedded == 1  # the last of its section: no entry after it to embed again
    assert server.embedded_texts()[before:] == ["小猫跳上了沙发 Yearly budget review with the finance team"]


def test_without_previous_turn_each_entry_is_sent_alone(notes: Path, server: LLMServer) -> None:
    config = configure(notes, server, "previous_turn = false\n")
    Index(config).ensure_current()
    assert fill_vault(config).embedded == 6
    assert "Quarterly budget review with the finance team" in server.embedded_texts()
    assert not any("小猫" in text and "budget" in text for text in server.embedded_texts())
    assert "小猫" in texts(recall(config, "kitten", as_of=AS_OF, mode="semantic"))[0]


def test_a_new_model_embeds_everything_again_and_drops_the_old_cache(
    config: Config, server: LLMServer
) -> None:
    old = store_path(config)
    assert old.exists()
    other = replace(config, embeddings=replace(config.embeddings, model="another-model"))
    assert fill_vault(other).embedded == 6
    assert not old.exists() and store_path(other).exists()
    assert not [f for f in old.parent.iterdir() if f.name.startswith(old.stem)]  # its matrix file too
    assert server.embedding_requests[-1]["model"] == "another-model"


def test_private_entries_go_to_a_loopback_endpoint_only_when_allowed(notes: Path, server: LLMServer) -> None:
    config = configure(notes, server, "send_private = true\n")
    Index(config).ensure_current()
    fill_vault(config)
    assert any("understands me" in text for text in server.embedded_texts())


def test_a_broken_cache_file_is_started_again(config: Config, server: LLMServer) -> None:
    path = store_path(config)
    for leftover in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        leftover.unlink(missing_ok=True)
    path.write_bytes(b"this is not a database" * 100)
    store = VectorStore(config)
    assert store.warnings and "starting it again" in store.warnings[0]
    store.close()
    assert fill_vault(config).embedded == 6


# -- previous_turn (the default): each entry embedded after the one before it ------------------------


@pytest.fixture
def paired(notes: Path, server: LLMServer) -> Config:
    config = configure(notes, server)  # previous_turn is the default
    Index(config).ensure_current()
    assert fill_vault(config).error is None
    return config


def test_previous_turn_sends_each_entry_after_the_one_before_it_never_a_more_private_one(
    paired: Config, server: LLMServer
) -> None:
    sent = server.embedded_texts()
    assert "小猫跳上了沙发 Quarterly budget review with the finance team" in sent
    assert "小猫跳上了沙发" in sent  # the first of its section: alone
    body = "\n".join(server.embedding_bodies)
    assert "understands me" not in body  # the #private turn is neither sent nor lent to the next
    assert any(t.startswith("Deploy key for staging is [REDACTED:") for t in sent)
    assert len(sent) == 6


def test_previous_turn_embeds_an_entry_again_when_the_turn_before_it_changes(
    paired: Config, server: LLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    path = paired.vault / "memory" / "2026-02-10.md"
    path.write_text(path.read_text().replace("小猫跳上了沙发", "小猫睡着了"), encoding="utf-8")
    Index(paired).ensure_current()
    before = len(server.embedded_texts())
    assert fill_vault(paired).embedded == 2
    assert sorted(server.embedded_texts()[before:]) == [
        "小猫睡着了",
        "小猫睡着了 Quarterly budget review with the finance team",
    ]
    assert "小猫" in texts(recall(paired, "kitten", as_of=AS_OF, mode="semantic"))[0]
    cache = status_json(paired.vault, capsys)["embeddings"]
    assert isinstance(cache, dict) and (cache["embedded"], cache["pending"], cache["never_sent"]) == (6, 0, 1)


# -- the matrix file (the fast path of a fresh process) ------------------------------------------


@pytest.fixture
def fast(monkeypatch: pytest.MonkeyPatch, notes: Path, server: LLMServer) -> Config:
    """A vault whose vector cache has its matrix file (written for a few rows, not only 512)."""
    monkeypatch.setattr(vsearch, "MATRIX_MIN_TAIL", 1)
    config = configure(notes, server)
    Index(config).ensure_current()
    assert fill_vault(config).error is None
    return config


def matrix_file(config: Config) -> Path:
    with VectorStore(config) as store:
        files = matrix_files(store)
    assert len(files) == 1, files
    return files[0]


def loads_matrix(config: Config) -> bool:
    with VectorStore(config) as store:
        return load_matrix(store) is not None


def answers(config: Config) -> list[object]:
    """What recall answers, every part of every score, for a few questions in both vector modes."""
    found: list[object] = []
    for question in ("kitten", "when did I lose my job", "budget review", "cat"):
        for mode in ("hybrid", "semantic"):
            result = recall(config, question, as_of=AS_OF, mode=mode, explain=True)
            found.append([(h.id, h.line, h.score, h.explain) for h in result.results] + result.warnings)
    return found


def without_the_matrix(config: Config, monkeypatch: pytest.MonkeyPatch) -> list[object]:
    with monkeypatch.context() as patch:
        patch.setattr(vector_matrix, "load_matrix", lambda store: None)
        patch.setattr(vsearch, "MATRIX_MIN_TAIL", 10**9)
        return answers(config)


def test_the_matrix_file_is_written_by_index_and_read_by_recall(fast: Config) -> None:
    with VectorStore(fast) as store:
        matrix = load_matrix(store)
        assert matrix is not None and isinstance(matrix.vectors, np.memmap)
        assert matrix.vectors.shape[0] == store.count() == 6
        assert sorted(vectors.key_text(int(k)) for k in matrix.keys) == sorted(store.keys())


def test_recall_is_the_same_with_and_without_the_matrix_file(
    fast: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert loads_matrix(fast)
    assert answers(fast) == without_the_matrix(fast, monkeypatch)


def test_rows_added_after_the_matrix_file_are_read_from_sqlite(
    fast: Config, server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vsearch, "MATRIX_MIN_TAIL", 10**9)  # the matrix file stays as it is
    before = matrix_file(fast)
    write(fast.vault / "memory" / "2026-02-27.md", "---\ndate: 2026-02-27\n---\n- 08:00 Adopted a kitten\n")
    Index(fast).ensure_current()
    assert fill_vault(fast).embedded == 1
    assert matrix_file(fast) == before and loads_matrix(fast)
    result = recall(fast, "cat", as_of=AS_OF, mode="semantic")
    assert "Adopted a kitten" in texts(result)
    assert answers(fast) == without_the_matrix(fast, monkeypatch)


def test_a_torn_matrix_file_is_noticed_and_written_again(
    fast: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = without_the_matrix(fast, monkeypatch)
    path = matrix_file(fast)
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    assert not loads_matrix(fast)
    assert answers(fast) == expected
    assert matrix_file(fast) != path and loads_matrix(fast)


@pytest.mark.parametrize("other", ["rows in another order", "another model's width"])
def test_a_matrix_file_of_other_vectors_is_noticed_and_written_again(
    fast: Config, monkeypatch: pytest.MonkeyPatch, other: str
) -> None:
    expected = without_the_matrix(fast, monkeypatch)
    path = matrix_file(fast)
    held = np.load(path)
    np.save(path, held[::-1].copy() if other == "rows in another order" else np.ones((6, 8), np.float32))
    assert not loads_matrix(fast)
    assert answers(fast) == expected
    assert matrix_file(fast) != path and loads_matrix(fast)


def test_a_matrix_file_naming_rows_the_cache_lost_is_not_used(
    fast: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    with VectorStore(fast) as store:
        row = store.matrix_row()
        assert row is not None
    with contextlib.closing(sqlite3.connect(store_path(fast))) as db:  # the cache lost its last row
        db.execute("DELETE FROM vectors WHERE rowid = ?", (row.last_rowid,))
        db.commit()
    assert not loads_matrix(fast)
    assert answers(fast) == without_the_matrix(fast, monkeypatch)


def test_files_a_crashed_writer_left_are_removed_and_do_no_harm(fast: Config) -> None:
    kept = matrix_file(fast)
    orphan = kept.with_name(f"{store_path(fast).stem}-0123456789ab.npy")  # renamed, never recorded
    orphan.write_bytes(b"half a matrix")
    young, old = (kept.with_name(f"{store_path(fast).stem}-{t}.npy.tmp") for t in ("young", "old"))
    young.write_bytes(b"being written")
    old.write_bytes(b"died writing")
    os.utime(old, (0, 0))
    assert loads_matrix(fast)
    write(fast.vault / "memory" / "2026-02-27.md", "---\ndate: 2026-02-27\n---\n- 08:00 Adopted a kitten\n")
    Index(fast).ensure_current()
    assert fill_vault(fast).embedded == 1  # writes the matrix again (MATRIX_MIN_TAIL 1)
    with VectorStore(fast) as store:
        files = matrix_files(store)
        matrix = load_matrix(store)
    assert matrix is not None and matrix.vectors.shape[0] == 7
    assert young in files and len(files) == 2 and not {kept, orphan, old} & set(files)


# -- recall ---------------------------------------------------------------------------------------


def test_hybrid_is_the_default_and_finds_paraphrases(config: Config) -> None:
    result = recall(config, "kitten", as_of=AS_OF)
    assert result.filters["mode"] == "hybrid"
    assert "小猫" in texts(result)[0]
    keyword = recall(config, "kitten", as_of=AS_OF, mode="keyword")
    assert keyword.filters["mode"] == "keyword" and not any("小猫" in t for t in texts(keyword))
    assert "laid off" in texts(recall(config, "when did I lose my job", as_of=AS_OF))[0]


def test_the_question_is_embedded_without_the_names_of_who_says_entries(
    notes: Path, server: LLMServer
) -> None:
    write(
        notes / "memory" / "2026-02-27.md",
        "---\ndate: 2026-02-27\n---\n- 20:10 **Nate**: I won the final of a big Valorant tournament!\n"
        "- 20:11 **小王**: 恭喜！我最近在学吉他。\n",
    )
    config = configure(notes, server)
    asked: list[str] = []
    for question in (
        "What video games does Nate play?",
        "Is nate's cat ok?",
        "小王最近在学什么乐器",
        "Who is Nate?",
    ):
        recall(config, question, as_of=AS_OF)
        asked.append(server.embedding_requests[-1]["input"][0])
    assert asked == [
        "What video games does play?",
        "Is cat ok?",
        "在学什么乐器",
        "Who is Nate?",
    ]  # 最近: a time word


def test_a_name_is_taken_out_only_as_a_whole_word() -> None:
    assert vector_text("Did Ana or Anastasia call about the ANA flight?", ["ana"]) == (
        "Did or Anastasia call about the flight?"
    )
    assert vector_text("budget review", []) == "budget review"
    assert vector_text("我对什么过敏", ["我"]) == "我对什么过敏"  # one character: in too many words


def test_semantic_mode_ranks_by_vectors_alone(config: Config) -> None:
    result = recall(config, "kitten", as_of=AS_OF, mode="semantic", explain=True)
    assert result.filters["mode"] == "semantic"
    top = result.results[0]
    assert "小猫" in top.text
    assert top.explain is not None and top.explain["cosine"] > 0.4 and top.explain["keyword"] == 0.0


def test_explain_and_json_show_each_part(config: Config, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["recall", "kitten", "--vault", str(config.vault), "--as-of", "2026-03-02", "--explain", "--json"]
    assert cli.main(argv) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["filters"]["mode"] == "hybrid"
    parts = document["results"][0]["explain"]
    assert {"keyword", "cosine", "semantic", "bm25", "recency", "score"} <= set(parts)
    assert cli.main(argv[:-1]) == 0
    assert "cosine" in capsys.readouterr().out


def test_a_group_chat_never_sees_a_personal_entry_however_close(config: Config) -> None:
    for mode in ("semantic", "hybrid"):
        result = recall(config, "kitten cat", as_of=AS_OF, mode=mode, chat="group")
        assert texts(result) == ["Team offsite planning: the venue has a resident cat"]


def test_private_entries_stay_out_of_direct_recall_and_in_with_include_private(
    notes: Path, server: LLMServer
) -> None:
    config = configure(notes, server, "send_private = true\n")
    Index(config).ensure_current()
    fill_vault(config)
    assert not any("Diary" in t for t in texts(recall(config, "kitten", as_of=AS_OF, mode="semantic")))
    mine = recall(config, "kitten", as_of=AS_OF, mode="semantic", include_private=True)
    assert any("Diary" in t for t in texts(mine))


def test_dates_and_tags_limit_vector_hits_inside_the_search(config: Config) -> None:
    late = recall(config, "kitten", as_of=AS_OF, mode="semantic", since="2026-02-15")
    assert late.results and all(hit.date and hit.date >= "2026-02-15" for hit in late.results)
    assert not any("小猫" in t for t in texts(late))
    path = config.vault / "memory" / "2026-02-10.md"
    path.write_text(path.read_text().replace("沙发\n", "沙发 #pets\n"), encoding="utf-8")
    Index(config).ensure_current()
    fill_vault(config)
    tagged = recall(config, "budget", as_of=AS_OF, mode="semantic", tags=["pets"])
    assert [h.tags for h in tagged.results] == [["pets"]]


def test_keyword_results_are_unchanged_without_embeddings(notes: Path, server: LLMServer) -> None:
    plain = load_config(notes, env={})
    Index(plain).ensure_current()
    before = recall(plain, "cat budget team", as_of=AS_OF, explain=True).to_dict()
    config = configure(notes, server)
    fill_vault(config)
    keyword = recall(config, "cat budget team", as_of=AS_OF, explain=True, mode="keyword").to_dict()
    keyword["filters"].pop("mode")
    assert keyword == before
    assert "mode" not in before["filters"]


def test_semantic_modes_need_embeddings(notes: Path) -> None:
    config = load_config(notes, env={})
    with pytest.raises(UsageError, match=r"\[embeddings\]"):
        recall(config, "kitten", mode="semantic")
    with pytest.raises(UsageError, match="--mode must be one of"):
        recall(config, "kitten", mode="vector")


def test_keyword_recall_imports_no_numpy_or_openai_without_embeddings(notes: Path) -> None:
    code = (
        "import sys\nfrom vault_tools import cli\n"
        f"cli.main(['recall', 'budget', '--vault', {str(notes)!r}])\n"
        "print('LOADED=' + ','.join(m for m in ('numpy', 'openai', 'vault_tools.vectors.cache',"
        " 'vault_tools.vectors.embeddings', 'vault_tools.recall.fusion') if m in sys.modules))\n"
    )
    env = {**os.environ, "VAULT_TOOLS_SERVICE": "off"}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert result.stdout.strip().splitlines()[-1] == "LOADED="


# -- faults ---------------------------------------------------------------------------------------


def test_a_down_endpoint_gives_keyword_results_and_a_warning(config: Config, server: LLMServer) -> None:
    server.stop()
    result = recall(config, "budget", as_of=AS_OF)
    assert texts(result)[0].startswith("Quarterly budget")
    assert result.filters["mode"] == "keyword"
    assert any("semantic search skipped" in w and "could not be reached" in w for w in result.warnings)


def test_a_slow_endpoint_costs_one_bounded_wait_then_backs_off(notes: Path, server: LLMServer) -> None:
    config = configure(notes, server, "query_timeout_seconds = 0.3\n")
    Index(config).ensure_current()
    fill_vault(config)
    held = threading.Event()
    try:
        with Recaller(config) as session:
            server.push_embeddings(Reply(hold=held), Reply(hold=held))
            asked = len(server.embedding_requests)
            first = session.recall("budget", as_of=AS_OF)
            assert any("within 0.3 s" in w for w in first.warnings)
            second = session.recall("budget", as_of=AS_OF)
            assert any("ago" in w for w in second.warnings)
            assert len(server.embedding_requests) == asked + 1  # the back-off sent nothing
            assert texts(second)[0].startswith("Quarterly budget")
    finally:
        held.set()


def test_garbage_from_the_endpoint_gives_keyword_results(config: Config, server: LLMServer) -> None:
    server.push_embeddings(Reply(body={"data": [{"index": 0, "embedding": "garbage"}]}))
    result = recall(config, "budget", as_of=AS_OF)
    assert texts(result)[0].startswith("Quarterly budget")
    assert any("not a vector" in w for w in result.warnings)


def test_indexing_keeps_entries_when_the_endpoint_fails_and_embeds_them_later(
    notes: Path, server: LLMServer
) -> None:
    config = configure(notes, server)
    Index(config).ensure_current()
    server.push_embeddings(Reply(status=503))
    report = fill_vault(config)
    assert report.error is not None and "503" in report.error
    assert report.pending == 7  # the first batch failed: nothing was looked at, the #private one neither
    assert Index(config).entry_count() == 7
    assert fill_vault(config).embedded == 6


def test_index_command_embeds_and_reports_failures(
    notes: Path, server: LLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    configure(notes, server)
    server.push_embeddings(Reply(status=500))
    assert cli.main(["index", "--vault", str(notes)]) == 0
    assert "pending" in capsys.readouterr().err
    assert cli.main(["index", "--vault", str(notes)]) == 0
    assert "6 embedded" in capsys.readouterr().err


# -- status and doctor ----------------------------------------------------------------------------


def status_json(vault: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    capsys.readouterr()
    assert cli.main(["status", "--json", "--vault", str(vault)]) == 0
    return dict(json.loads(capsys.readouterr().out))


def test_status_reports_the_vector_cache(config: Config, capsys: pytest.CaptureFixture[str]) -> None:
    cache = status_json(config.vault, capsys)["embeddings"]
    assert isinstance(cache, dict)
    assert cache["model"] == "test-embedding" and cache["state"] == "ok"
    assert (cache["vectors"], cache["entries"], cache["embedded"]) == (6, 7, 6)
    assert (cache["pending"], cache["never_sent"], cache["last_error"]) == (0, 1, None)
    assert cache["last_fill"]["by"] == "index"  # type: ignore[index]
    assert cli.main(["status", "--vault", str(config.vault)]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("embeddings:"))
    assert "test-embedding: 6 vectors; 6 of 7 entries embedded, 1 never sent (#private)" in line


def test_status_counts_pending_entries_and_changes_nothing(
    notes: Path, server: LLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    config = configure(notes, server)
    Index(config).ensure_current()
    cache = status_json(notes, capsys)["embeddings"]
    assert cache == {
        **cache,
        "state": "empty",
        "vectors": 0,
        "pending": 6,
        "never_sent": 1,
        "last_fill": None,
    }
    assert not store_path(config).exists() and not server.embedding_requests  # read only


def test_status_shows_the_error_the_watchers_worker_met(
    notes: Path, server: LLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    config = configure(notes, server)
    Index(config).ensure_current()
    server.push_embeddings(Reply(status=503))
    worker = vfill.VectorWorker(config).start()
    try:
        wait_for(lambda: worker.fills >= 1, "the worker's first fill")
    finally:
        worker.stop()
    cache = status_json(notes, capsys)["embeddings"]
    assert isinstance(cache, dict) and "503" in str(cache["last_error"])
    assert cache["last_fill"]["by"] == "watcher" and cache["pending"] == 6  # type: ignore[index]
    assert cli.main(["status", "--vault", str(notes)]) == 0
    assert "last embedding error (watcher" in capsys.readouterr().out


def test_status_without_embeddings_says_nothing_of_them(
    notes: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert "embeddings" not in status_json(notes, capsys)
    assert cli.main(["status", "--vault", str(notes)]) == 0
    assert "\nembeddings:" not in capsys.readouterr().out


def test_doctor_reports_a_broken_cache_and_fix_drops_it(
    config: Config, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = str(config.vault)
    capsys.readouterr()
    assert cli.main(["doctor", "--json", "--vault", vault]) == 0
    assert json.loads(capsys.readouterr().out)["embeddings"]["ok"] is True
    path = store_path(config)
    for leftover in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        leftover.unlink(missing_ok=True)
    path.write_bytes(b"this is not a database" * 100)
    assert status_json(config.vault, capsys)["embeddings"]["state"] == "broken"  # type: ignore[index]
    assert cli.main(["doctor", "--vault", vault]) == 1
    out = capsys.readouterr().out
    assert "unreadable vector cache" in out and "--fix" in out
    assert path.exists()  # doctor without --fix changes nothing
    assert cli.main(["doctor", "--fix", "--json", "--vault", vault]) == 0
    report = json.loads(capsys.readouterr().out)["embeddings"]
    assert report["ok"] and "dropped" in report["fixed"] and not path.exists()
    assert fill_vault(config).embedded == 6


# -- the watcher ----------------------------------------------------------------------------------


def test_the_watcher_embeds_new_entries_and_is_not_held_up_by_the_endpoint(
    notes: Path, server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vfill, "FILL_RETRY_SECONDS", 0.05)
    config = configure(notes, server)
    held = threading.Event()
    server.push_embeddings(Reply(hold=held))  # the first fill hangs on the endpoint
    options = WatchOptions(debounce_ms=50, reconcile_seconds=3600, serve=False)
    thread, stop, errors = watch_in_thread(config, options)
    try:
        wait_for(lambda: len(server.embedding_requests) >= 1, "the worker's first request")
        daily = config.vault / "memory" / "2026-03-01.md"
        write(daily, "---\ndate: 2026-03-01\n---\n- 09:00 Adopted a kitten from the shelter\n")

        def indexed() -> bool:
            return any("shelter" in t for t in texts(recall(config, "shelter", as_of=AS_OF, mode="keyword")))

        wait_for(indexed, "the new entry indexed while the endpoint hangs")
        held.set()
        wait_for(
            lambda: "Adopted a kitten from the shelter" in server.embedded_texts(), "the new entry embedded"
        )
        with VectorStore(config) as store:
            wait_for(lambda: store.count() == 7, "every sendable entry in the cache")
        assert "shelter" in texts(recall(config, "cat", as_of=AS_OF, mode="semantic"))[0]
    finally:
        held.set()
        stop.set()
        thread.join(timeout=20)
    assert not errors


# -- the same recall everywhere -------------------------------------------------------------------


def test_a_served_recall_is_the_in_process_semantic_recall(
    config: Config, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from vault_tools.watch import service

    argv = ["recall", "kitten", "--vault", str(config.vault), "--as-of", "2026-03-02", "--json", "--explain"]
    monkeypatch.setenv("VAULT_TOOLS_SERVICE", "off")
    assert cli.main(argv) == 0
    in_process = json.loads(capsys.readouterr().out)
    monkeypatch.delenv("VAULT_TOOLS_SERVICE")
    options = WatchOptions(debounce_ms=50, reconcile_seconds=3600)
    thread, stop, errors = watch_in_thread(config, options)
    try:
        wait_for(
            lambda: service.ask(config, "context", {"chat": "direct", "as_of": "2026-03-02"}) is not None,
            "the service",
        )
        answer = service.ask(
            config,
            "recall",
            {
                "query": "kitten",
                "chat": "direct",
                "limit": 10,
                "max_tokens": 1500,
                "explain": True,
                "as_of": "2026-03-02",
                "mode": None,
            },
        )
        assert answer is not None
        assert answer["result"] == in_process
        assert in_process["filters"]["mode"] == "hybrid" and "小猫" in in_process["results"][0]["text"]
    finally:
        stop.set()
        thread.join(timeout=20)
    assert not errors


def test_the_mcp_search_uses_semantic_recall_in_its_chat(config: Config) -> None:
    from vault_tools.agents.mcp import MemoryTools

    with contextlib.closing(MemoryTools(config, "direct")) as tools:
        direct = tools.search("kitten")
    assert direct["filters"]["mode"] == "hybrid" and "小猫" in direct["results"][0]["text"]
    with contextlib.closing(MemoryTools(config, "group")) as tools:
        group = tools.search("kitten cat")
    assert [hit["text"] for hit in group["results"]] == [
        "Team offsite planning: the venue has a resident cat"
    ]


def test_the_mcp_search_passes_its_mode_through(config: Config) -> None:
    import anyio
    from mcp import Client

    from vault_tools.agents.mcp import build_server

    async def search(chat: Any, **arguments: str) -> dict[str, Any]:
        server, tools = build_server(config, chat)
        try:
            async with Client(server) as client:
                found = await client.call_tool("memory_search", arguments)
                assert not found.is_error
                return dict(found.structured_content)
        finally:
            tools.close()

    def run(chat: Any, **arguments: str) -> dict[str, Any]:
        return anyio.run(functools.partial(search, chat, **arguments))

    def found(result: dict[str, Any]) -> list[str]:
        return [hit["text"] for hit in result["results"]]

    assert run("direct", query="kitten")["filters"]["mode"] == "hybrid"
    keyword = run("direct", query="kitten", mode="keyword")
    assert keyword["filters"]["mode"] == "keyword" and not any("小猫" in t for t in found(keyword))
    semantic = run("direct", query="kitten", mode="semantic")
    assert semantic["filters"]["mode"] == "semantic" and "小猫" in found(semantic)[0]
    group = run("group", query="kitten", mode="semantic")
    assert found(group) == ["Team offsite planning: the venue has a resident cat"]


def test_neighbours_lend_similarity_only_within_a_file_section_and_privacy_boundary() -> None:
    docs = [
        Doc("k0", "memory/a.md", 5, "Call", "daily", "personal"),  # 0
        Doc("k1", "memory/a.md", 6, "Call", "daily", "private"),  # 1
        Doc("k2", "memory/a.md", 7, "Call", "daily", "personal"),  # 2
        Doc("k3", "memory/a.md", 9, "Other", "daily", "personal"),  # 3
        Doc("k4", "memory/a.md", 8, "Call", "daily", "shared"),  # 4: line 8, between 2 and 3
        Doc("k5", "MEMORY.md", 3, "Facts", "memory", "personal"),  # 5
        Doc("k6", "MEMORY.md", 4, "Facts", "memory", "personal"),  # 6
        Doc("k7", "memory/a.md", 7, "Call", "daily", "personal"),  # 7: deleted (the old version of 2)
    ]
    before1, before2, after1, after2 = neighbour_table(docs, deleted=[7])
    assert (after1[0], after2[0]) == (-1, 2)  # the private line never lends to a personal one
    assert (before1[1], before2[1], after1[1], after2[1]) == (0, -1, 2, 4)  # a private line may borrow
    assert (before1[2], after1[2]) == (-1, 4)  # 1 is private; 4 is shared: may lend to personal
    assert (before1[4], before2[4]) == (-1, -1)  # a shared line borrows from no personal one
    assert after1[4] == -1 and before1[3] == -1  # 3 is in another section
    assert all(slot[5] == slot[6] == -1 for slot in (before1, before2, after1, after2))  # MEMORY items
    assert all(slot[7] == -1 for slot in (before1, before2, after1, after2)) and 7 not in after1


def test_neighbours_are_found_at_the_lines_the_line_table_says() -> None:
    """A kept document holds the lines it was written with; an entry written above it since may
    hold the same line: the line table (index_lines) says which comes first now."""
    path = "memory/b.md"
    docs = [
        Doc("aaaaaaaaaaaa", path, 10, "", "daily", "personal"),  # 0: kept, now at line 12
        Doc("bbbbbbbbbbbb", path, 10, "", "daily", "personal"),  # 1: written since, at line 10
        Doc("cccccccccccc", path, 11, "", "daily", "personal"),  # 2: written since, at line 11
    ]
    moved = {path: {f"{path}#aaaaaaaaaaaa": [10, 12, 12]}}
    before1, _before2, after1, _after2 = neighbour_table(docs, deleted=[], moved=moved)
    assert (after1[1], after1[2], after1[0]) == (2, 0, -1)
    assert (before1[0], before1[2], before1[1]) == (2, 1, -1)


def test_a_loopback_endpoint_gets_health_details_as_written_and_finds_them(
    vault: Path, server: LLMServer
) -> None:
    """An endpoint on this machine takes nothing off it: a health detail is sent as written, so a
    question in other words finds it; a secret and a #private entry's details still never go."""
    server.concepts = {**CONCEPTS, "penicillin": "antibiotic", "antibiotics": "antibiotic"}
    write(
        vault / "MEMORY.md",
        MEMORY + "- 2026-01-22: Allergic to penicillin, hives within an hour [importance:: 0.9] ^m-ddd444\n",
    )
    write(
        vault / "memory" / "2026-02-20.md",
        "---\ndate: 2026-02-20\n---\n- 09:00 Deploy key for staging is sk-proj-abcdefghijklmnopqrstuvwxyz0123456789\n"
        "- 10:00 Diagnosed with asthma, the inhaler helps #private\n",
    )
    config = configure(vault, server, "send_private = true\n")
    Index(config).ensure_current()
    assert fill_vault(config).error is None
    body = "\n".join(server.embedding_bodies)
    assert "Allergic to penicillin" in body
    assert "sk-proj" not in body and "asthma" not in body and "inhaler helps" in body  # redacted, sent
    found = recall(config, "which antibiotics should I avoid", as_of=AS_OF, mode="semantic")
    assert "penicillin" in texts(found)[0]
