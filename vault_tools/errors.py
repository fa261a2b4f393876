"""The errors vault-tools raises for people, and the exit code each one maps to.

Every expected failure is a :class:`VaultError` whose message says what happened, which file,
and what to do. ``cli.main`` turns them into a one-line message (or ``{"error": ...}`` under
``--json``) and the exit code below; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path


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


class NotWritableError(VaultError):
    """A command that changes the vault met a folder it cannot write (a read-only mount, permissions)."""

    exit_code = 8

    @classmethod
    def for_path(cls, path: Path, doing: str, why: str | None = None) -> NotWritableError:
        """``<path>: read-only file system, and <doing> writes there. What to do.``"""
        return cls(
            f"{path}: {why or why_not_writable(path)}, and {doing} writes there. Make it writable (or mount "
            "it read-write); reading commands (status, recall, context, export) work as it is"
        )

    @classmethod
    def from_os_error(cls, exc: OSError, doing: str) -> NotWritableError | None:
        """The person's version of a write the system refused; None for any other OSError.

        A refused temporary file stands for its folder (the name a person knows).
        """
        if exc.errno not in (errno.EROFS, errno.EACCES, errno.EPERM) or not exc.filename:
            return None
        path = Path(os.fsdecode(exc.filename))
        if not path.exists() and path.parent.is_dir():
            path = path.parent
        if exc.errno == errno.EROFS:
            return cls.for_path(path, doing, "read-only file system")
        if os.access(path, os.W_OK):
            return None  # refused for another reason (reading, a lock): not this error
        return cls.for_path(path, doing)


def why_not_writable(path: Path) -> str:
    """``read-only file system`` when ``path`` is on one, else ``no permission to write``."""
    probe = path if path.exists() else path.parent
    try:
        if os.statvfs(probe).f_flag & os.ST_RDONLY:
            return "read-only file system"
    except (OSError, AttributeError):  # AttributeError: no statvfs (Windows)
        pass
    return "no permission to write here"
