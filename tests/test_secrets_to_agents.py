"""What recall, context and the MCP server hand an agent goes on to its model: secrets are withheld
there, in English and Chinese, and shown as written only to the owner at the terminal."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from helpers import write

from vault_tools.agents.context import build_context
from vault_tools.agents.mcp import MemoryTools
from vault_tools.config import Config, load_config
from vault_tools.index.index import Index
from vault_tools.recall.recall import recall

TODAY = dt.date(2026, 3, 10)
NOTE = (
    "---\ndate: 2026-03-10\n---\n## Home\n\n"
    "- 09:00 Set up the new NAS; my password for it is swordfish #homelab\n"
    "- 10:00 家里的 wifi 密码是 lanmao2026abc，客人来了可以告诉他们\n"
    "- 11:00 Call the plumber at +49 151 23456789 about the boiler\n"
)


@pytest.fixture
def config(tmp_path: Path) -> Config:
    vault = tmp_path / "vault"
    write(vault / "MEMORY.md", "# Memory\n")
    write(vault / "memory" / "2026-03-10.md", NOTE)
    loaded = load_config(vault, env={})
    Index(loaded).rebuild()
    return loaded


def recalled(config: Config, query: str, **options: object) -> str:
    result = recall(config, query, as_of=TODAY, chat="direct", **options)  # type: ignore[arg-type]
    return "\n".join(hit.text for hit in result.results)


def test_recall_finds_the_line_and_withholds_the_secret(config: Config) -> None:
    text = recalled(config, "NAS password")
    assert "my password for it is [REDACTED:credential]" in text and "swordfish" not in text
    chinese = recalled(config, "wifi 密码")
    assert "[REDACTED:credential]" in chinese and "lanmao2026abc" not in chinese
    assert "+49 151 23456789" in recalled(config, "plumber")  # sensitive, not secret: the person asked


def test_the_owner_at_the_terminal_reads_it_as_written(config: Config) -> None:
    assert "swordfish" in recalled(config, "NAS password", include_private=True)


def test_context_and_the_mcp_server_withhold_it_too(config: Config) -> None:
    loaded = build_context(config, chat="direct", as_of=TODAY).render()
    assert "swordfish" not in loaded and "lanmao2026abc" not in loaded and "[REDACTED:credential]" in loaded
    tools = MemoryTools(config, "direct")
    try:
        lines = tools.get("memory/2026-03-10.md").text
        assert "swordfish" not in lines and "lanmao2026abc" not in lines
        assert "+49 151 23456789" in lines
        found = tools.search("NAS password")
        assert "swordfish" not in str(found) and "REDACTED" in str(found)
    finally:
        tools.close()
