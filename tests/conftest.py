"""Every test runs isolated: no real vault, no API key, no user git config, the machine's network unused."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

# Property tests: the suite's run is derandomised (the same examples every run, so a red CI run
# is never luck and a green one never hides a flaky case) and keeps no example database. The long
# run (VAULT_TOOLS_LONG=1, on a schedule in CI: .github/workflows/long.yml) explores new random
# examples and prints how to reproduce what it finds; the test modules raise their counts for it.
settings.register_profile("suite", derandomize=True, database=None)
settings.register_profile("long", derandomize=False, database=None, print_blob=True)
settings.load_profile("long" if os.environ.get("VAULT_TOOLS_LONG") == "1" else "suite")

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
    from vault_tools.agents.vault import init_vault

    path = tmp_path / "vault"
    init_vault(path)
    return path
