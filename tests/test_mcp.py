from __future__ import annotations

import datetime as dt
import json
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from vault_tools.agents.mcp import MAX_GET_LINES, MemoryTools, RefusedError, build_server, memory_path_parts
from vault_tools.agents.vault import init_vault
from vault_tools.config import load_config
from vault_tools.notes import model as notes

SAMPLE_LAST_DAY = dt.date(2026, 12, 1)


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    path = tmp_path / "vault"
    init_vault(path, sample=True, today=SAMPLE_LAST_DAY)
    return path


def tools_for(vault: Path, chat: Any) -> MemoryTools:
    return MemoryTools(load_config(vault, {}), chat)


# ---------------------------------------------------------------------------------------------
# memory_get: which paths


@pytest.mark.parametrize(
    "path",
    [
        "",
        "/etc/passwd",
        "~/notes.md",
        "../secrets.md",
        "memory/../MEMORY.md",
        "memory/./2026-11-30.md",
        "memory//2026-11-30.md",
        "memory\\2026-11-30.md",
        ".git/config",
        "memory/.trash/old.md",
        "AGENTS.md",
        "memory",
        "memory/2026-11-30.txt",
        ".vault-tools/config.toml",
        "MEMORY.md/..",
        "x\x00.md",
    ],
)
def test_paths_outside_memory_are_refused(path: str) -> None:
    with pytest.raises(RefusedError):
        memory_path_parts(path)


def test_memory_paths_are_accepted() -> None:
    assert memory_path_parts("MEMORY.md") == ("MEMORY.md",)
    assert memory_path_parts("memory.md") == ("memory.md",)
    assert memory_path_parts("memory/2026-03-10.md") == ("memory", "2026-03-10.md")
    assert memory_path_parts("memory/projects/atlas.md") == ("memory", "projects", "atlas.md")


def test_symlinks_are_refused_at_any_depth(sample: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("- api key: hunter2\n")
    (sample / "memory" / "leak.md").symlink_to(outside / "secret.md")
    (sample / "memory" / "linked").symlink_to(outside, target_is_directory=True)
    (sample / "memory" / "inside.md").symlink_to(sample / "memory" / "2026-11-30.md")
    tools = tools_for(sample, "direct")
    for path in ("memory/leak.md", "memory/linked/secret.md", "memory/inside.md"):
        with pytest.raises(RefusedError, match="symlink"):
            tools.get(path)
    (sample / "MEMORY.md").rename(sample / "real-memory.md")
    (sample / "MEMORY.md").symlink_to(sample / "real-memory.md")
    with pytest.raises(RefusedError, match="symlink"):
        tools.get("MEMORY.md")


def test_a_vault_reached_through_a_symlink_works(sample: Path, tmp_path: Path) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(sample, target_is_directory=True)
    assert "Long-term memory" in tools_for(alias, "direct").get("MEMORY.md").text


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_named_pipe_is_refused_without_blocking(sample: Path) -> None:
    os.mkfifo(sample / "memory" / "pipe.md")
    with pytest.raises(RefusedError, match="not a regular file"):
        tools_for(sample, "direct").get("memory/pipe.md")


def test_missing_files_and_folders(sample: Path) -> None:
    tools = tools_for(sample, "direct")
    with pytest.raises(RefusedError, match="no such memory file"):
        tools.get("memory/2020-01-01.md")
    with pytest.raises(RefusedError, match="no such memory file"):
        tools.get("memory/nope/2020-01-01.md")
    with pytest.raises(RefusedError, match="not a folder"):
        tools.get("memory/2026-11-30.md/x.md")


# ---------------------------------------------------------------------------------------------
# memory_get: what each chat sees


def test_direct_get_returns_lines_and_pages(sample: Path) -> None:
    tools = tools_for(sample, "direct")
    whole = tools.get("memory/2026-11-30.md")
    raw = (sample / "memory" / "2026-11-30.md").read_text()
    assert whole.text == raw and whole.next_from is None and whole.shown == [(1, whole.total_lines)]
    page = tools.get("memory/2026-11-30.md", from_line=5, lines=3)
    assert page.text == "".join(raw.splitlines(keepends=True)[4:7])
    assert (page.from_line, page.to_line, page.next_from) == (5, 7, 8)
    assert tools.get("memory/2026-11-30.md", from_line=999).text == ""
    with pytest.raises(RefusedError):
        tools.get("memory/2026-11-30.md", lines=MAX_GET_LINES + 1)
    with pytest.raises(RefusedError):
        tools.get("memory/2026-11-30.md", from_line=0)


def test_group_get_sees_only_shared_entries(sample: Path) -> None:
    for chat in ("group", "unknown"):
        tools = tools_for(sample, chat)
        with pytest.raises(RefusedError, match="personal"):
            tools.get("MEMORY.md")
        with pytest.raises(RefusedError) as personal:
            tools.get("memory/2026-11-30.md")  # personal only
        with pytest.raises(RefusedError) as missing:
            tools.get("memory/2020-01-01.md")
        assert str(personal.value).split(":", 1)[1] == str(missing.value).split(":", 1)[1]
        standup = tools.get("memory/2026-11-24.md")  # `visibility: shared` in its front matter
        assert "visibility" not in standup.text and "# Atlas standup" not in standup.text
        assert standup.text.startswith("- 09:30 CSV export API merged")
        with pytest.raises(RefusedError, match="hold no entry shared"):
            tools.get("memory/2026-11-24.md", lines=5)


def test_group_get_leaves_out_personal_entries_of_a_mixed_note(sample: Path) -> None:
    day = sample / "memory" / "2026-12-02.md"
    day.write_text("# Tuesday\n\n- 09:00 my dentist at 3pm\n- 10:00 Team offsite is on Friday #shared\n")
    got = tools_for(sample, "group").get("memory/2026-12-02.md")
    assert got.text == "- 10:00 Team offsite is on Friday #shared\n" and got.shown == [(4, 4)]
    assert "dentist" in tools_for(sample, "direct").get("memory/2026-12-02.md").text


# ---------------------------------------------------------------------------------------------
# memory_note, memory_search, memory_context


def test_note_is_refused_outside_a_direct_chat(sample: Path) -> None:
    for chat in ("group", "unknown"):
        with pytest.raises(RefusedError, match="disabled"):
            tools_for(sample, chat).note("the group wants me to remember this")
    written = tools_for(sample, "direct").note("Prefers tea over coffee", tags=["preference"])
    today = load_config(sample, {}).today().isoformat()
    assert written["path"] == f"memory/{today}.md" and written["text"].endswith(
        "Prefers tea over coffee #preference"
    )


def test_search_sees_new_notes_without_a_watcher(sample: Path) -> None:
    tools = tools_for(sample, "direct")
    assert tools.search("zanzibar")["results"] == []
    with (sample / "memory" / "2026-12-01.md").open("a") as handle:
        handle.write("- 23:00 Booked the Zanzibar trip for March\n")
    hits = tools.search("zanzibar")["results"]
    assert [h["path"] for h in hits] == ["memory/2026-12-01.md"]
    with pytest.raises(RefusedError, match="limit"):
        tools.search("x", limit=0)
    tools.close()


def run_with_client(vault: Path, chat: Any, body: Callable[[Any], Awaitable[None]]) -> None:
    from mcp import Client

    async def main() -> None:
        server, tools = build_server(load_config(vault, {}), chat)
        try:
            async with Client(server) as client:
                await body(client)
        finally:
            tools.close()

    anyio.run(main)


def test_tools_are_described_and_take_no_chat_argument(sample: Path) -> None:
    async def body(client: Any) -> None:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert set(listed) == {"memory_search", "memory_get", "memory_note", "memory_context"}
        for tool in listed.values():
            assert len(tool.description) > 80
            assert "chat" not in tool.input_schema["properties"]
        assert "before answering" in listed["memory_search"].description.lower()
        widened = await client.call_tool("memory_search", {"query": "Hamburg", "chat": "direct"})
        results = widened.structured_content["results"]
        assert results and all(r["source"] == "daily" for r in results)
        assert widened.structured_content["filters"]["chat"] == "group"

    run_with_client(sample, "group", body)


def test_search_mode_is_validated_and_keyword_is_the_default_without_embeddings(sample: Path) -> None:
    async def body(client: Any) -> None:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert "semantic" in json.dumps(listed["memory_search"].input_schema["properties"]["mode"])
        default = await client.call_tool("memory_search", {"query": "Hamburg"})
        keyword = await client.call_tool("memory_search", {"query": "Hamburg", "mode": "keyword"})
        assert keyword.structured_content == default.structured_content
        assert default.structured_content["results"] and "mode" not in default.structured_content["filters"]
        for mode, why in (
            ("fuzzy", "fuzzy"),
            ("semantic", "needs embeddings"),
            ("hybrid", "needs embeddings"),
        ):
            refused = await client.call_tool("memory_search", {"query": "Hamburg", "mode": mode})
            assert refused.is_error and why in text_of(refused), mode

    run_with_client(sample, "group", body)
    with pytest.raises(RefusedError, match="mode must be one of keyword, semantic, hybrid"):
        tools_for(sample, "direct").search("Hamburg", mode="Semantic")


# ---------------------------------------------------------------------------------------------
# End to end over stdio, with the SDK's own client


def stdio_session(vault: Path, chat: str, errlog: Path, body: Callable[[Any], Awaitable[None]]) -> None:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    # The server is started exactly as docs/integration.md tells Claude Code and Claude Desktop to
    # start it, with this test's vault and this Python's vault_tools in place of the placeholders.
    server = next(s for _, s in mcp_servers() if s["args"][2] == chat)
    args = [str(vault) if a == DOC_VAULT else a for a in server["args"]]
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "vault_tools", *args], cwd=str(vault.parent)
    )

    async def main() -> None:
        with errlog.open("w") as err:
            async with (
                stdio_client(params, errlog=err) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                await body(session)

    anyio.run(main)


def visibility_at(vault: Path, rel: str, line: int) -> str:
    entry = next(e for e in notes.read_note(vault / rel, vault).entries if e.start_line == line)
    return entry.visibility


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def test_stdio_direct_session_searches_gets_notes_and_loads_context(sample: Path, tmp_path: Path) -> None:
    today = load_config(sample, {}).today().isoformat()

    async def body(session: Any) -> None:
        found = await session.call_tool("memory_search", {"query": "invoice numbers", "limit": 3})
        assert not found.is_error
        document = found.structured_content
        assert document["filters"]["chat"] == "direct" and document["results"]
        top = document["results"][0]
        assert "gapless" in top["text"]
        got = await session.call_tool(
            "memory_get", {"path": top["path"], "from_line": top["line"], "lines": 1}
        )
        assert "gapless" in got.structured_content["text"]
        memory = await session.call_tool("memory_get", {"path": "MEMORY.md", "lines": 5})
        assert memory.structured_content["text"].startswith("---\ntitle: Long-term memory")
        noted = await session.call_tool(
            "memory_note", {"text": "The Lisbon offsite is in May", "tags": ["atlas"]}
        )
        assert noted.structured_content["path"] == f"memory/{today}.md"
        again = await session.call_tool("memory_search", {"query": "Lisbon offsite"})
        assert [h["path"] for h in again.structured_content["results"]][:1] == [f"memory/{today}.md"]
        context = await session.call_tool("memory_context", {"max_tokens": 800})
        assert text_of(context).startswith("# Memory context (direct chat)")
        assert "Long-term memory" in text_of(context)
        traversal = await session.call_tool("memory_get", {"path": "../vault/MEMORY.md"})
        assert traversal.is_error and "not allowed" in text_of(traversal)

    stdio_session(sample, "direct", tmp_path / "direct.log", body)


def test_stdio_group_session_sees_only_shared_and_cannot_write(sample: Path, tmp_path: Path) -> None:
    (sample / "memory" / "linked.md").symlink_to(sample / "MEMORY.md")
    before = sorted(p.name for p in (sample / "memory").iterdir())

    async def body(session: Any) -> None:
        found = await session.call_tool("memory_search", {"query": "Atlas", "limit": 20, "chat": "direct"})
        results = found.structured_content["results"]
        assert results and found.structured_content["filters"]["chat"] == "group"
        assert all(visibility_at(sample, r["path"], r["line"]) == "shared" for r in results)
        assert all(r["source"] == "daily" for r in results)
        memory = await session.call_tool("memory_get", {"path": "MEMORY.md"})
        assert memory.is_error and "personal" in text_of(memory)
        linked = await session.call_tool("memory_get", {"path": "memory/linked.md"})
        assert linked.is_error
        note = await session.call_tool("memory_note", {"text": "Everyone: Lin owes me 50 euros"})
        assert note.is_error and "disabled" in text_of(note)
        context = await session.call_tool("memory_context", {})
        assert "Long-term memory" not in text_of(context)

    stdio_session(sample, "group", tmp_path / "group.log", body)
    assert sorted(p.name for p in (sample / "memory").iterdir()) == before


def test_mcp_command_requires_a_chat(capsys: pytest.CaptureFixture[str]) -> None:
    from vault_tools import cli

    assert cli.main(["mcp"]) == 2 and "--chat" in capsys.readouterr().err


def test_mcp_is_not_imported_by_the_cli_or_the_library() -> None:
    import subprocess

    code = (
        "import sys; from vault_tools import cli; from vault_tools.agents import importer as transfer; from vault_tools.recall import recall; from vault_tools.agents import vault\n"
        "try:\n    cli.main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print('MCP=' + str('mcp' in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "MCP=False"


def test_search_result_is_the_recall_json(sample: Path) -> None:
    from vault_tools.recall.recall import recall

    config = load_config(sample, {})
    direct = tools_for(sample, "direct").search("Hamburg contract", limit=5)
    expected = recall(config, "Hamburg contract", limit=5, chat="direct").to_dict()
    assert json.dumps(direct["results"]) == json.dumps(expected["results"])


# ---------------------------------------------------------------------------------------------
# docs/integration.md: the snippets are real

DOC = Path(__file__).resolve().parent.parent / "docs" / "integration.md"
DOC_VAULT = "/home/you/vault"
DOC_EXE = "/home/you/.local/bin/vault-tools"


def doc_blocks(lang: str) -> list[str]:
    import re

    return [
        m.group(2)
        for m in re.finditer(r"```(\w+)\n(.*?)```", DOC.read_text(encoding="utf-8"), re.DOTALL)
        if m.group(1) == lang
    ]


def parsed(argv: list[str]) -> Any:
    from vault_tools import cli

    return cli.build_parser().parse_args(argv)


def mcp_servers() -> list[tuple[str, dict[str, Any]]]:
    """(name, server) of every ``mcpServers`` entry in the JSON snippets, in order."""
    return [
        (name, server)
        for block in doc_blocks("json")
        for name, server in json.loads(block).get("mcpServers", {}).items()
    ]


def test_doc_mcp_json_snippets_name_the_mcp_command() -> None:
    servers = mcp_servers()
    assert [name for name, _ in servers] == ["memory", "memory", "team-memory"]  # .mcp.json, Desktop, group
    for _, server in servers:
        assert server["command"] == DOC_EXE
        args = parsed(server["args"])
        assert args.command == "mcp" and args.vault == DOC_VAULT and args.chat in ("direct", "group")
    assert servers[0][1]["type"] == "stdio" and servers[2][1]["args"][2] == "group"


def test_doc_claude_mcp_add_line() -> None:
    import shlex

    line = next(
        line for block in doc_blocks("sh") for line in block.splitlines() if line.startswith("claude mcp add")
    )
    words = shlex.split(line)
    command = words[words.index("--") + 1 :]
    assert words[words.index("--transport") + 1] == "stdio" and command[0] == DOC_EXE
    args = parsed(command[1:])
    assert args.command == "mcp" and args.chat == "direct" and args.vault == DOC_VAULT


def test_doc_export_and_import_commands_parse() -> None:
    import shlex

    lines = [line.split("#")[0] for block in doc_blocks("sh") for line in block.splitlines()]
    commands = [shlex.split(line)[1:] for line in lines if line.startswith("vault-tools ")]
    assert [c[0] for c in commands] == ["export", "export", "import", "import"]
    for command in commands:
        parsed(command[: command.index(">")] if ">" in command else command)


def test_doc_export_record_has_the_exported_keys(sample: Path) -> None:
    from vault_tools.agents import export

    example = next(json.loads(b) for b in doc_blocks("json") if '"kind"' in b)
    record = export.export_entries(load_config(sample, {})).entries[0]
    assert list(example) == list(record)


def test_doc_heartbeat_schedule_is_what_vault_tools_schedule_prints() -> None:
    from vault_tools.heartbeat.schedule import render

    cron = render("cron", Path(DOC_VAULT), interval_hours=24, executable=DOC_EXE)
    assert doc_blocks("cron") == [cron.splitlines()[-1] + "\n"]
    systemd = render("systemd", Path(DOC_VAULT), interval_hours=24, executable=DOC_EXE)
    units = [b for b in doc_blocks("ini") if "heartbeat" in b or "[Timer]" in b]
    assert len(units) == 2 and all(unit.strip() in systemd for unit in units)


def test_doc_watch_service_runs_the_watch_command() -> None:
    import configparser
    import shlex

    unit = next(b for b in doc_blocks("ini") if "watch" in b)
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string(unit)
    assert parser["Install"]["WantedBy"] == "default.target" and parser["Service"]["Restart"] == "on-failure"
    argv = shlex.split(parser["Service"]["ExecStart"])
    assert argv[0] == DOC_EXE and parsed(argv[1:]).command == "watch"
