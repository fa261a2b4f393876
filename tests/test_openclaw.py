"""An OpenClaw workspace used as a vault as it is (tests/fixtures/openclaw).

The fixture ships MEMORY.md only: a repository holding both MEMORY.md and memory.md cannot be
checked out on a case-insensitive filesystem (macOS, Windows), so the tests make memory.md.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from vault_tools import cli
from vault_tools.agents import export
from vault_tools.agents import importer as transfer
from vault_tools.agents.context import build_context
from vault_tools.agents.mcp import MemoryTools, RefusedError
from vault_tools.agents.vault import init_vault
from vault_tools.config import Config, load_config
from vault_tools.notes import model as notes
from vault_tools.recall.recall import recall

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "openclaw"
BOOTSTRAP = ("AGENTS.md", "SOUL.md", "USER.md", "IDENTITY.md", "TOOLS.md", "HEARTBEAT.md")
AS_OF = dt.date(2026, 3, 11)
PLACE = ("id", "source", "line")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "workspace"
    shutil.copytree(FIXTURE, path)
    return path


def config_of(path: Path) -> Config:
    return load_config(path, {})


def digests(path: Path) -> dict[str, str]:
    return {name: hashlib.sha256((path / name).read_bytes()).hexdigest() for name in BOOTSTRAP}


def hits(path: Path, query: str, **options: object) -> list[dict[str, object]]:
    result = recall(config_of(path), query, as_of=AS_OF, **options)  # type: ignore[arg-type]
    return [hit.to_dict() for hit in result.results]


def test_bootstrap_files_are_left_alone_and_not_memory(workspace: Path) -> None:
    before = digests(workspace)
    paths = [notes.relative_posix(p, workspace) for p in notes.iter_note_paths(workspace)]
    assert paths == [
        "MEMORY.md",
        "memory/2026-03-09.md",
        "memory/2026-03-10-vendor-call.md",
        "memory/2026-03-10.md",
        "memory/2026-03-11-workshop-prep.md",
    ]
    assert hits(workspace, "zebrafinch") == []
    assert hits(workspace, "Bartlett Genesis Brother printer") == []  # TOOLS.md
    MemoryTools(config_of(workspace), "direct").note("Glaze test: the celadon needs a slower cool")
    with pytest.raises(RefusedError):
        MemoryTools(config_of(workspace), "direct").get("AGENTS.md")
    assert digests(workspace) == before
    assert not any((workspace / name).with_suffix(".md.tmp").exists() for name in BOOTSTRAP)


def test_session_files_are_dated_by_their_prefix(workspace: Path) -> None:
    found = hits(workspace, "glaze supplier hold the price")
    assert found[0]["path"] == "memory/2026-03-10-vendor-call.md" and found[0]["date"] == "2026-03-10"
    only_day = hits(workspace, "Cerâmica Norte", since="2026-03-10", until="2026-03-10")
    assert {h["path"] for h in only_day} == {"memory/2026-03-10.md", "memory/2026-03-10-vendor-call.md"}
    context = build_context(config_of(workspace), chat="direct", as_of=dt.date(2026, 3, 10), max_tokens=1500)
    assert "glaze supplier call" in context.render()


def test_recall_in_a_direct_chat_finds_memory_and_daily_notes(workspace: Path) -> None:
    found = hits(workspace, "kiln firing schedule")
    assert found and {h["source"] for h in found} <= {"memory", "daily"}
    assert any(h["path"] == "MEMORY.md" or "MEMORY.md" in str(h["also_in"]) for h in found)
    code = cli.main(["recall", "porcelain clay", "--vault", str(workspace), "--json"])
    assert code == 0


def test_a_group_chat_sees_only_shared_entries_of_the_workspace(workspace: Path) -> None:
    found = hits(workspace, "workshop wheels", chat="group")
    assert {h["path"] for h in found} == {"memory/2026-03-09.md", "memory/2026-03-11-workshop-prep.md"}
    assert hits(workspace, "kiln firing schedule Beancount", chat="group") == []
    group = MemoryTools(config_of(workspace), "group")
    assert "doors open 10:00" in group.get("memory/2026-03-11-workshop-prep.md").text
    with pytest.raises(RefusedError):
        group.get("memory/2026-03-10-vendor-call.md")


def test_lowercase_memory_md_alone_is_long_term_memory(workspace: Path) -> None:
    (workspace / "MEMORY.md").rename(workspace / "memory.md")
    found = hits(workspace, "Beancount bookkeeping")
    assert found and found[0]["path"] == "memory.md" and found[0]["source"] == "memory"
    assert "Beancount" in MemoryTools(config_of(workspace), "direct").get("memory.md").text


@pytest.mark.parametrize("how", ["hardlink", "symlink"])
def test_one_file_under_both_names_is_read_once(workspace: Path, how: str) -> None:
    # A hard link is what a case-insensitive filesystem looks like: two names, one inode.
    if how == "hardlink":
        os.link(workspace / "MEMORY.md", workspace / "memory.md")
    else:
        (workspace / "memory.md").symlink_to("MEMORY.md")
    paths = [notes.relative_posix(p, workspace) for p in notes.iter_note_paths(workspace)]
    assert paths.count("MEMORY.md") == 1 and "memory.md" not in paths
    found = hits(workspace, "Beancount bookkeeping")
    assert [h["path"] for h in found if h["source"] == "memory"] == ["MEMORY.md"]
    assert not any("memory.md" in str(h["also_in"]) for h in found)
    exported = export.export_entries(config_of(workspace))
    assert sum("Beancount" in r["text"] for r in exported.entries) == 1


def test_both_files_with_the_same_items_are_deduplicated(workspace: Path) -> None:
    text = (workspace / "MEMORY.md").read_text(encoding="utf-8")
    (workspace / "memory.md").write_text(text + "- Mara's favourite clay body is B-Mix.\n", encoding="utf-8")
    found = hits(workspace, "Beancount bookkeeping")
    beancount = [h for h in found if "Beancount" in str(h["text"])]
    assert len(beancount) == 1  # the copy in memory.md collapses into the same hit
    exported = export.export_entries(config_of(workspace))
    texts = [r["text"] for r in exported.entries if r["kind"] == "memory"]
    assert texts.count("Moved the studio bookkeeping from spreadsheets to Beancount.") == 1
    assert "Mara's favourite clay body is B-Mix." in texts
    assert exported.duplicates == 4
    assert hits(workspace, "B-Mix clay body")[0]["path"] == "memory.md"


def test_workspace_export_import_export(workspace: Path, tmp_path: Path) -> None:
    first = export.export_entries(config_of(workspace))
    dump = tmp_path / "openclaw.jsonl"
    export.write_export(first, dump, as_json=False)
    init_vault(tmp_path / "fresh")
    report = transfer.import_file(config_of(tmp_path / "fresh"), str(dump), commit=False)
    assert report.imported == len(first.entries) and report.warnings == []
    second = export.export_entries(config_of(tmp_path / "fresh"))

    def comparable(records: list[dict[str, object]]) -> list[str]:
        # The session files' entries land in their day's note, and a note vault-tools creates carries
        # `tags: [daily]`: everything else must come back as it was.
        out = []
        for record in records:
            kept = {k: v for k, v in record.items() if k not in PLACE}
            kept["tags"] = [t for t in record["tags"] if t != "daily"]  # type: ignore[attr-defined]
            out.append(json.dumps(kept, sort_keys=True, ensure_ascii=False))
        return sorted(out)

    assert comparable(second.entries) == comparable(first.entries)


# ---------------------------------------------------------------------------------------------
# The AGENTS.md snippet of docs/integration.md, run the way an OpenClaw agent runs it


def agents_snippet_commands() -> list[list[str]]:
    import re
    import shlex

    doc = (Path(__file__).resolve().parent.parent / "docs" / "integration.md").read_text(encoding="utf-8")
    snippet = next(m.group(1) for m in re.finditer(r"```markdown\n(.*?)```", doc, re.DOTALL))
    commands = [shlex.split(c) for c in re.findall(r"`(vault-tools [^`]+)`", snippet)]
    fill = {
        "QUESTION": "kiln firing workshop",
        "ONE SHORT SENTENCE": "The new kiln arrives in April",
        "TOPIC": "kiln",
    }
    return [[fill.get(word, word) for word in command[1:]] for command in commands]


def test_the_agents_md_snippet_works_in_the_workspace(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(workspace)  # OpenClaw runs shell commands in the workspace: no --vault needed
    commands = agents_snippet_commands()
    assert [c[0] for c in commands] == ["recall", "recall", "note", "context"]
    outputs = []
    for command in commands:
        assert cli.main(command) == 0, command
        outputs.append(capsys.readouterr().out)
    direct, group = json.loads(outputs[0]), json.loads(outputs[1])
    assert direct["filters"]["chat"] == "direct" and any(h["source"] == "memory" for h in direct["results"])
    assert group["results"] and all(
        next(
            e for e in notes.read_note(workspace / h["path"], workspace).entries if e.start_line == h["line"]
        ).visibility
        == "shared"
        for h in group["results"]
    )
    today = config_of(workspace).today().isoformat()
    written = notes.read_note(workspace / "memory" / f"{today}.md", workspace).entries
    assert [e.text for e in written] == ["The new kiln arrives in April #kiln"]
    assert outputs[3].startswith("# Memory context (direct chat)")
