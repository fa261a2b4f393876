"""Every test runs isolated: no real vault, no API key, no user git config, the machine's network unused."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

ISOLATED_ENV = (
    "VAULT_TOOLS_VAULT",
    "VAULT_TOOLS_CHAT",
    "VAULT_TOOLS_LLM_MODEL",
    "VAULT_TOOLS_TIMEZONE",
    "VAULT_TOOLS_SERVICE",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
)


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ISOLATED_ENV:
        monkeypatch.delenv(name, raising=False)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("VAULT_TOOLS_AUTOSTART", "off")  # a test that wants a background watcher says so
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    monkeypatch.chdir(tmp_path)
    yield


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """An empty vault made by `init` (MEMORY.md, memory/, .gitignore, a git repository)."""
    from vault_tools.vault import init_vault

    path = tmp_path / "vault"
    init_vault(path)
    return path
