"""vault-tools: long-term memory for AI agents as a Markdown vault."""

__version__ = "0.1.0"
