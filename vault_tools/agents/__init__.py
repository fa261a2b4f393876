"""What agents use: the context loaded at session start, the MCP server, export and import, and the
``Vault`` Python API.

May import: everything below it (notes, privacy, index, vectors, recall, git, curation, heartbeat,
summaries); not ``watch`` or the CLI.
"""
