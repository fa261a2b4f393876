"""The errors vault-tools raises for people, and the exit code each one maps to.

Every expected failure is a :class:`VaultError` whose message says what happened, which file,
and what to do. ``cli.main`` turns them into a one-line message (or ``{"error": ...}`` under
``--json``) and the exit code below; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations


class VaultError(Exception):
    """Base class: a failure a person can act on."""

    exit_code = 1


class UsageError(VaultError):
    """The command line asked for something that cannot be done as written."""

    exit_code = 2


class VaultNotFoundError(VaultError):
    """No vault where one was expected."""

    exit_code = 3


class ConflictError(VaultError):
    """A file changed under us in a way an edit could not be re-applied to."""

    exit_code = 4


class LockedError(VaultError):
    """Another vault-tools process holds the lock we need."""

    exit_code = 5


class GitError(VaultError):
    """The vault's git repository is in a state the bot will not commit into."""

    exit_code = 6


class LLMError(VaultError):
    """The configured language model could not be used (the caller usually falls back to rules)."""

    exit_code = 7
