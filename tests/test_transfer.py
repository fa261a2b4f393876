from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
from helpers import write

from vault_tools.agents import export, records
from vault_tools.agents import importer as transfer
from vault_tools.agents.vault import init_vault
from vault_tools.config import Config, load_config
from vault_tools.errors import UsageError, VaultError
from vault_tools.notes import model as notes

SAMPLE_LAST_DAY = dt.date(2026, 12, 1)  # the bundled sample vault ends on this day: no re-dating
PLACE = ("id", "source", "line")


def sample_vault(path: Path) -> Config:
    init_vault(path, sample=True, today=SAMPLE_LAST_DAY)
    return load_config(path, {})


def empty_vault(path: Path) -> Config:
    init_vault(path)
    return load_config(path, {})


def without_place(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k not in PLACE} for r in records]


def write_jsonl(path: Path, records: list[Any]) -> str:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return str(path)


def entries_of(config: Config, rel: str) -> list[notes.Entry]:
    return notes.read_note(config.vault / rel, config.vault).entries


# ---------------------------------------------------------------------------------------------
# Export


def test_export_records_are_entries_without_their_trailing_tags(tmp_path: Path) -> None:
    config = sample_vault(tmp_path / "v")
    result = export.export_entries(config)
    records = {(r["source"], r["line"]): r for r in result.entries}
    release = next(r for r in result.entries if r["text"].startswith("Atlas v0.9 released"))
    assert release == {
        "id": release["id"],
        "kind": "daily",
        "date": "2026-12-01",
        "time": "09:00",
        "text": "Atlas v0.9 released to production at 09:40. Smooth, no rollback.",
        "tags": ["atlas", "daily", "release"],
        "visibility": "personal",
        "section": "Work",
        "fields": {},
        "block_id": None,
        "task": None,
        "source": "memory/2026-12-01.md",
        "line": release["line"],
    }
    memory_item = next(r for r in result.entries if r["block_id"] == "m-4b21d9")
    assert memory_item["kind"] == "memory" and memory_item["date"] == "2026-06-02"
    assert memory_item["fields"] == {"importance": "0.8", "source": "[[2026-06-02]]"}
    task = next(r for r in result.entries if r["text"].startswith("Write the onboarding checklist"))
    assert task["task"] == "open"
    therapy = next(r for r in result.entries if "Therapy" in r["text"])
    assert therapy["visibility"] == "private" and "private" not in therapy["tags"]
    assert not therapy["text"].endswith("#private")
    assert len(records) == len(result.entries)
    assert result.entries[0]["source"] == "MEMORY.md"


def test_export_reads_task_states_as_the_index_does(tmp_path: Path) -> None:
    """An in-progress ``- [/]`` task is still to do, a cancelled ``- [-]`` one is not (Entry.task)."""
    config = sample_vault(tmp_path / "v")
    write(
        config.vault / "memory" / "2026-12-03.md",
        "---\ndate: 2026-12-03\n---\n- [/] Draft the onboarding plan\n- [-] Book the old venue\n",
    )
    states = {
        r["text"]: r["task"]
        for r in export.export_entries(config).entries
        if r["source"].endswith("12-03.md")
    }
    assert states == {"Draft the onboarding plan": "open", "Book the old venue": "done"}


def test_export_filters_by_date_and_chat(tmp_path: Path) -> None:
    config = sample_vault(tmp_path / "v")
    week = export.export_entries(config, since=dt.date(2026, 11, 25), until=dt.date(2026, 11, 30))
    assert week.entries and all("2026-11-25" <= r["date"] <= "2026-11-30" for r in week.entries)
    group = export.export_entries(config, chat="group")
    assert group.entries and all(r["visibility"] == "shared" and r["kind"] != "memory" for r in group.entries)
    with pytest.raises(UsageError):
        export.export_entries(config, chat="everyone")


def test_json_document_and_jsonl_hold_the_same_records(tmp_path: Path) -> None:
    config = sample_vault(tmp_path / "v")
    result = export.export_entries(config)
    lines = [json.loads(line) for line in result.jsonl()]
    document = result.to_dict()
    assert document["format"] == "vault-tools/export" and document["count"] == len(lines)
    assert document["entries"] == lines


# ---------------------------------------------------------------------------------------------
# Round trip


def test_export_import_export_gives_the_same_entries(tmp_path: Path) -> None:
    source = sample_vault(tmp_path / "a")
    first = export.export_entries(source)
    dump = tmp_path / "export.jsonl"
    dump.write_text("\n".join(first.jsonl()) + "\n", encoding="utf-8")

    target = empty_vault(tmp_path / "b")
    report = transfer.import_file(target, str(dump), commit=False)
    assert report.imported == len(first.entries) and report.duplicates == 0 and not report.skipped
    assert report.warnings == []
    second = export.export_entries(target)
    assert without_place(second.entries) == without_place(first.entries)

    again = transfer.import_file(target, str(dump), commit=False)
    assert again.imported == 0 and again.duplicates == len(first.entries) and again.files == []


def test_import_puts_memory_items_under_their_sections_and_keeps_the_template(tmp_path: Path) -> None:
    config = empty_vault(tmp_path / "v")
    before = (config.vault / "MEMORY.md").read_text()
    dump = write_jsonl(
        tmp_path / "in.jsonl",
        [
            {
                "kind": "memory",
                "date": "2026-01-05",
                "text": "Use uv for Python projects",
                "section": "Decisions",
                "fields": {"importance": "0.7"},
                "block_id": "m-abc123",
            },
            {
                "kind": "memory",
                "date": None,
                "text": "Allergic to peanuts",
                "section": "Facts",
                "tags": ["health"],
            },
            {"kind": "memory", "text": "Likes trains", "section": "Hobbies"},
        ],
    )
    transfer.import_file(config, dump, commit=False)
    text = (config.vault / "MEMORY.md").read_text()
    assert text.startswith(before.split("## Decisions")[0])
    assert (
        "## Decisions\n\n- 2026-01-05: Use uv for Python projects [importance:: 0.7] ^m-abc123\n\n## Preferences"
        in text
    )
    assert text.endswith("## Facts\n\n- Allergic to peanuts #health\n\n## Hobbies\n\n- Likes trains\n")
    items = {e.text: e for e in entries_of(config, "MEMORY.md")}
    assert items["Use uv for Python projects"].section == "Decisions"
    assert items["Use uv for Python projects"].block_id == "m-abc123"


def test_import_keeps_visibility_and_never_widens_it(tmp_path: Path) -> None:
    config = empty_vault(tmp_path / "v")
    shared_day = config.vault / "memory" / "2026-02-02.md"
    shared_day.write_text("---\nvisibility: shared\n---\n- team lunch\n", encoding="utf-8")
    dump = write_jsonl(
        tmp_path / "in.jsonl",
        [
            {
                "date": "2026-02-01",
                "time": "08:00",
                "text": "Blood test results are fine",
                "visibility": "private",
            },
            {"date": "2026-02-01", "time": "09:00", "text": "Standup moved to 9:30", "visibility": "shared"},
            {"memory": "I #shared my salary with nobody", "created_at": "2026-02-01T10:00:00"},
            {"date": "2026-02-02", "text": "My own thought on the team", "visibility": "personal"},
        ],
    )
    report = transfer.import_file(config, dump, commit=False)
    assert report.imported == 2 and report.skipped == {"would widen its visibility": 2}
    assert len(report.warnings) == 2 and all("more visible" in w for w in report.warnings)
    by_text = {e.text.split(" #")[0]: e.visibility for e in entries_of(config, "memory/2026-02-01.md")}
    assert by_text == {"Blood test results are fine": "private", "Standup moved to 9:30": "shared"}
    assert shared_day.read_text() == "---\nvisibility: shared\n---\n- team lunch\n"


def test_import_keeps_crlf_and_existing_lines(tmp_path: Path) -> None:
    config = empty_vault(tmp_path / "v")
    day = config.vault / "memory" / "2026-02-03.md"
    original = b"---\r\ndate: 2026-02-03\r\n---\r\n## Work\r\n\r\n- 08:00 first  \r\n\r\n## Home\r\n\r\n- 19:00 dinner"
    day.write_bytes(original)
    dump = write_jsonl(
        tmp_path / "in.jsonl", [{"date": "2026-02-03", "time": "10:00", "text": "second", "section": "Work"}]
    )
    transfer.import_file(config, dump, commit=False)
    assert day.read_bytes() == original.replace(b"first  \r\n", b"first  \r\n- 10:00 second\r\n")


def test_import_dry_run_writes_nothing(tmp_path: Path) -> None:
    config = empty_vault(tmp_path / "v")
    dump = write_jsonl(tmp_path / "in.jsonl", [{"date": "2026-02-01", "text": "hello"}])
    report = transfer.import_file(config, dump, dry_run=True)
    assert report.dry_run and report.imported == 1 and report.files == ["memory/2026-02-01.md"]
    assert not (config.vault / "memory" / "2026-02-01.md").exists()
    assert "Would import 1 of 1" in report.summary()


# ---------------------------------------------------------------------------------------------
# Other formats


def test_mem0_export_maps_memory_date_tags_and_importance(tmp_path: Path) -> None:
    config = empty_vault(tmp_path / "v")
    config = Config(vault=config.vault, timezone="Europe/Berlin")
    dump = tmp_path / "mem0.json"
    dump.write_text(
        json.dumps(
            {
                "results": [
                    {
                        "id": "b",
                        "memory": "Is vegetarian",
                        "hash": "x",
                        "created_at": "2026-03-02T23:30:00Z",
                        "categories": ["food", "diet preferences"],
                        "metadata": {"importance": 0.9},
                        "user_id": "lin",
                    },
                    {
                        "id": "a",
                        "memory": "Works at Atlas",
                        "created_at": "2026-03-01T09:15:00-08:00",
                        "updated_at": None,
                        "metadata": {"tags": "work, #atlas", "visibility": "shared"},
                    },
                ]
            }
        ),
        encoding="utf-8",
    )
    report = transfer.import_file(config, str(dump), commit=False)
    assert report.formats == {"mem0": 2} and report.imported == 2
    veg = entries_of(config, "memory/2026-03-03.md")[0]  # 23:30 UTC is past midnight in Berlin
    assert veg.time == dt.time(0, 30) and veg.text.startswith("Is vegetarian")
    assert {"food", "diet-preferences"} <= set(veg.tags)
    assert veg.fields == {"imported": "mem0", "importance": "0.9"}
    atlas = entries_of(config, "memory/2026-03-01.md")[0]
    assert (
        atlas.time == dt.time(18, 15)
        and {"work", "atlas"} <= set(atlas.tags)
        and atlas.visibility == "shared"
    )


def test_memory_lancedb_pro_export(tmp_path: Path) -> None:
    config = empty_vault(tmp_path / "v")
    stamp = int(dt.datetime(2026, 4, 5, 12, 0, tzinfo=dt.timezone.utc).timestamp() * 1000)
    dump = tmp_path / "memories.json"
    dump.write_text(
        json.dumps(
            {
                "version": "1.0",
                "exportedAt": "2026-04-06T00:00:00.000Z",
                "count": 2,
                "filters": {"scope": "global"},
                "memories": [
                    {
                        "id": "1",
                        "text": "Prefers dark mode",
                        "category": "preference",
                        "scope": "global",
                        "importance": 0.8,
                        "timestamp": stamp,
                        "metadata": "{}",
                    },
                    {
                        "id": "2",
                        "text": "Misc",
                        "category": "other",
                        "scope": "global",
                        "importance": 0.5,
                        "timestamp": stamp + 60_000,
                    },
                ],
            }
        ),
        encoding="utf-8",
    )
    report = transfer.import_file(Config(vault=config.vault, timezone="UTC"), str(dump), commit=False)
    assert report.formats == {"lancedb": 2}
    first, second = entries_of(config, "memory/2026-04-05.md")
    assert first.time == dt.time(12, 0) and first.tags == ("daily", "preference")
    assert first.fields == {"imported": "lancedb", "importance": "0.8"}
    assert second.tags == ("daily",) and second.time == dt.time(12, 1)


def test_chat_log_imports_user_lines_only_by_default(tmp_path: Path) -> None:
    config = Config(vault=empty_vault(tmp_path / "v").vault, timezone="UTC")
    log = [
        {"role": "system", "content": "You are helpful", "timestamp": "2026-05-01T08:00:00Z"},
        {"role": "user", "content": "I moved to Lisbon last month", "timestamp": "2026-05-01T08:01:00Z"},
        {"role": "assistant", "content": "Noted!", "timestamp": "2026-05-01T08:01:05Z"},
        {
            "role": "user",
            "content": [{"type": "text", "text": "My cat is called Miso"}, {"type": "image"}],
            "timestamp": 1777622700,
        },
        {"role": "user", "content": "x" * (records.MAX_CHAT_CHARS + 1), "timestamp": 1777622800},
        {"type": "session", "id": "abc"},
        {
            "type": "message",
            "timestamp": "2026-05-02T10:00:00Z",
            "message": {"role": "user", "content": [{"type": "text", "text": "Dentist on Friday"}]},
        },
    ]
    dump = write_jsonl(tmp_path / "chat.jsonl", log)
    report = transfer.import_file(config, dump, commit=False)
    assert report.imported == 3 and report.formats == {"chat-log": 3}
    assert report.skipped == {
        "system-role message": 1,
        "assistant-role message": 1,
        f"message over {records.MAX_CHAT_CHARS} characters": 1,
        "not a memory, entry or chat message": 1,
    }
    day = entries_of(config, "memory/2026-05-01.md")
    assert [(e.time, e.text) for e in day] == [
        (dt.time(8, 1), "I moved to Lisbon last month"),
        (dt.time(8, 5), "My cat is called Miso"),
    ]
    assert day[0].fields == {"imported": "chat-log", "role": "user"}
    both = transfer.import_file(config, dump, roles=("user", "assistant"), commit=False)
    assert both.imported == 1 and both.duplicates == 3


def test_undated_records_go_to_today_with_a_warning(tmp_path: Path) -> None:
    config = empty_vault(tmp_path / "v")
    dump = write_jsonl(tmp_path / "in.jsonl", [{"text": "no date here", "tags": ["hand-written"]}])
    report = transfer.import_file(config, dump, commit=False)
    today = f"memory/{config.today().isoformat()}.md"
    assert report.files == [today] and report.formats == {"vault-tools": 1}
    assert "no date" in report.warnings[0]
    (entry,) = entries_of(config, today)
    assert entry.text == "no date here #hand-written" and entry.fields == {}


def test_bad_input_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    config = empty_vault(tmp_path / "v")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"date": "2026-01-01", "text": "ok"}\nnot json\n', encoding="utf-8")
    with pytest.raises(UsageError, match=r"bad.jsonl:2: not JSON"):
        transfer.import_file(config, str(bad))
    assert not (config.vault / "memory" / "2026-01-01.md").exists()
    odd = write_jsonl(tmp_path / "odd.jsonl", [{"foo": 1}, {"bar": 2}])
    with pytest.raises(UsageError, match="no entries found"):
        transfer.import_file(config, odd)
    dated = write_jsonl(tmp_path / "dated.jsonl", [{"date": "01/02/2026", "text": "x"}])
    with pytest.raises(UsageError, match="YYYY-MM-DD"):
        transfer.import_file(config, dated)
    with pytest.raises(UsageError, match="no such file"):
        transfer.import_file(config, str(tmp_path / "missing.jsonl"))


# ---------------------------------------------------------------------------------------------
# Splices


def lines_of(text: str) -> list[str]:
    return notes.split_lines(text)


def test_insert_into_section_cases() -> None:
    doc = "---\na: 1\n---\nintro para\n\n# Title\n\n## A\n\n- a1\n\n```\n## not a heading\n```\n\n## B\n"
    put = transfer.insert_into_section
    assert (
        "".join(put(lines_of(doc), "A", ["- a2"], 2)).count("- a1\n\n```\n## not a heading\n```\n- a2\n") == 1
    )
    assert "".join(put(lines_of(doc), "B", ["- b1"], 2)).endswith("## B\n\n- b1\n")
    assert "".join(put(lines_of(doc), "", ["- z"], 2)).startswith(
        "---\na: 1\n---\nintro para\n- z\n\n# Title"
    )
    assert "".join(put(lines_of(doc), "C", ["- c"], 2)).endswith("## B\n\n## C\n\n- c\n")
    assert "".join(put(lines_of(doc), None, ["- end"], 2)).endswith("## B\n- end\n")
    assert "".join(put(lines_of("# T\n## X\n## Y\n"), "X", ["- x"], 2)) == "# T\n## X\n\n- x\n\n## Y\n"
    assert (
        "".join(put(lines_of("---\nk: v\n---\n## S\n"), "", ["- first"], 2))
        == "---\nk: v\n---\n- first\n\n## S\n"
    )


def test_split_trailing_tags() -> None:
    split = export.split_trailing_tags
    assert split("Shipped v2 #atlas #release") == ("Shipped v2", ["atlas", "release"])
    assert split("#atlas mid #x text") == ("#atlas mid #x text", [])
    assert split("Issue #123") == ("Issue #123", [])
    assert split("#only #tags") == ("#only #tags", [])
    assert split("line one #a\nline two #b") == ("line one #a\nline two", ["b"])


# ---------------------------------------------------------------------------------------------
# Git


def git(vault: Path, *args: str) -> str:
    import subprocess

    return subprocess.run(["git", *args], cwd=vault, capture_output=True, text=True, check=True).stdout


def test_import_is_one_bot_commit_of_only_the_files_it_wrote(tmp_path: Path) -> None:
    config = empty_vault(tmp_path / "v")
    vault = config.vault  # init made the first commit
    day = vault / "memory" / "2026-02-01.md"
    day.write_text("---\ndate: 2026-02-01\n---\n- 08:00 my own line, not committed yet\n", encoding="utf-8")
    (vault / "scratch.md").write_text("someone else's file\n", encoding="utf-8")
    dump = write_jsonl(
        tmp_path / "in.jsonl",
        [
            {"date": "2026-02-01", "time": "09:00", "text": "imported one"},
            {"date": "2026-02-02", "time": "10:00", "text": "imported two"},
            {"kind": "memory", "date": "2026-02-02", "text": "A lasting fact", "section": "Facts"},
        ],
    )
    report = transfer.import_file(config, dump)
    assert report.commit is not None and report.warnings == []
    assert git(vault, "rev-list", "--count", "HEAD").strip() == "2"
    assert (
        git(vault, "log", "-1", "--format=%an <%ae>").strip() == "vault-tools bot <bot@vault-tools.invalid>"
    )
    changed = git(vault, "show", "--name-only", "--format=", "HEAD").split()
    assert sorted(changed) == ["MEMORY.md", "memory/2026-02-01.md", "memory/2026-02-02.md"]
    committed_day = git(vault, "show", "HEAD:memory/2026-02-01.md")
    assert "imported one" in committed_day and "my own line" not in committed_day
    assert "my own line" in day.read_text() and "imported one" in day.read_text()
    assert "?? scratch.md" in git(vault, "status", "--porcelain")


def test_import_outside_a_repository_writes_and_says_why_it_did_not_commit(tmp_path: Path) -> None:
    vault = tmp_path / "plain"
    (vault / "memory").mkdir(parents=True)
    config = load_config(vault, {})
    dump = write_jsonl(tmp_path / "in.jsonl", [{"date": "2026-02-01", "text": "hello"}])
    report = transfer.import_file(config, dump)
    assert report.imported == 1 and report.commit is None
    assert any("not in a git repository" in w for w in report.warnings)


def test_import_refuses_to_write_during_a_merge(tmp_path: Path) -> None:
    config = empty_vault(tmp_path / "v")  # init made the first commit
    head = git(config.vault, "rev-parse", "HEAD").strip()
    (config.vault / ".git" / "MERGE_HEAD").write_text(head + "\n")
    dump = write_jsonl(tmp_path / "in.jsonl", [{"date": "2026-02-01", "text": "hello"}])
    with pytest.raises(VaultError, match="merge"):
        transfer.import_file(config, dump)
    assert not (config.vault / "memory" / "2026-02-01.md").exists()
    assert transfer.import_file(config, dump, commit=False).imported == 1


# ---------------------------------------------------------------------------------------------
# CLI


def test_cli_export_and_import(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from vault_tools import cli

    sample_vault(tmp_path / "a")
    empty_vault(tmp_path / "b")
    assert cli.main(["--vault", str(tmp_path / "a"), "export", "--since", "2026-11-30"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines and all(json.loads(line)["date"] >= "2026-11-30" for line in lines)
    assert (
        cli.main(["export", "--vault", str(tmp_path / "a"), "--json", "-o", str(tmp_path / "all.json")]) == 0
    )
    document = json.loads((tmp_path / "all.json").read_text(encoding="utf-8"))
    assert document["count"] == len(document["entries"]) > len(lines)
    assert cli.main(["export", "--vault", str(tmp_path / "a"), "--json", "--jsonl"]) == 2
    capsys.readouterr()

    code = cli.main(["import", str(tmp_path / "all.json"), "--vault", str(tmp_path / "b"), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["imported"] == document["count"] and report["commit"]
    code = cli.main(["import", str(tmp_path / "all.json"), "--vault", str(tmp_path / "b")])
    out = capsys.readouterr().out
    assert code == 0 and out.startswith(f"Imported 0 of {document['count']} records into 0 notes")
    code = cli.main(["import", str(tmp_path / "missing.jsonl"), "--vault", str(tmp_path / "b")])
    assert code == 2 and "no such file" in capsys.readouterr().err


def test_export_in_a_group_chat_environment_exports_only_shared(tmp_path: Path) -> None:
    sample_vault(tmp_path / "a")
    config = load_config(tmp_path / "a", {"VAULT_TOOLS_CHAT": "group"})
    result = export.export_entries(config)
    assert result.chat == "group" and result.entries
    assert all(r["visibility"] == "shared" for r in result.entries)


def test_import_never_writes_through_a_symlink_out_of_the_vault(tmp_path: Path) -> None:
    config = empty_vault(tmp_path / "v")
    outside = tmp_path / "elsewhere" / "diary.md"
    outside.parent.mkdir()
    outside.write_text("# someone else's file\n", encoding="utf-8")
    (config.vault / "memory" / "2026-03-10.md").symlink_to(outside)
    records = [
        {"text": "写进链接外面的一条", "date": "2026-03-10"},
        {"text": "a record for another day", "date": "2026-03-11"},
    ]
    report = transfer.import_file(config, write_jsonl(tmp_path / "in.jsonl", records), commit=False)
    assert outside.read_text(encoding="utf-8") == "# someone else's file\n"
    assert report.files == ["memory/2026-03-11.md"] and report.imported == 1
    assert report.skipped == {"would write out of the vault": 1}
    assert any(
        w.startswith("memory/2026-03-10.md: skipped; it leads out of the vault") for w in report.warnings
    )
