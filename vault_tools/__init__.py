"""vault-tools: long-term memory for AI agents as a Markdown vault."""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: a served recall does not import typing at all (cli.py)
if TYPE_CHECKING:
    from typing import Any

    from vault_tools.agents.vault import Vault

__version__ = "0.1.0"
__all__ = ["Vault", "__version__"]


def __getattr__(name: str) -> Any:
    """``from vault_tools import Vault`` without importing it (and YAML) for ``vault-tools --help``."""
    if name == "Vault":
        from vault_tools.agents.vault import Vault

        return Vault
    raise AttributeError(f"module 'vault_tools' has no attribute {name!r}")
