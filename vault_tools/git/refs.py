"""Moving the branch after a bot commit, through one long-lived ``git update-ref --stdin``.

A heartbeat makes hundreds of commits; a ``git update-ref`` process for each costs more than the
commit itself. :class:`RefMover` keeps one ``git update-ref --stdin`` running and sends each move as
its own transaction (``start``, ``update HEAD <new> <old>``, ``prepare``, ``commit``): git takes the
ref's lock, checks that the branch still points at ``old`` and moves it, exactly as the one-shot
``git update-ref HEAD new old`` does, so a commit a person made in between is never overwritten
(the move fails with git's message). A lock another git command holds for a moment is waited for.
The reflog names the bot, with one message for every move (``--stdin`` takes one ``-m``).
"""

from __future__ import annotations

import contextlib
import subprocess
import time
from pathlib import Path

from vault_tools.errors import GitError

REFLOG_MESSAGE = "vault-tools: bot commit"
LOCK_RETRY_SECONDS = 5.0
REPLIES = (b"start: ok", b"prepare: ok", b"commit: ok")


class RefMover:
    """Moves HEAD (the branch it names) from one commit to another, one transaction at a time."""

    def __init__(self, root: Path, env: dict[str, str]) -> None:
        self.root = root
        self.env = env
        self._process: subprocess.Popen[bytes] | None = None

    def move(self, new: str, old: str | None) -> None:
        """Point HEAD's branch at ``new`` if it still points at ``old`` (None: it has no commit yet)."""
        deadline = time.monotonic() + LOCK_RETRY_SECONDS
        while True:
            problem = self._transaction(new, old or "0" * len(new))
            if problem is None:
                return
            if ".lock': File exists" not in problem or time.monotonic() >= deadline:
                raise GitError(f"git update-ref failed in {self.root}: {problem}")
            time.sleep(0.05)

    def _transaction(self, new: str, old: str) -> str | None:
        """One move; None when it is done, else git's message (the process is gone then)."""
        process = self._start()
        assert process.stdin is not None and process.stdout is not None
        try:
            process.stdin.write(f"start\nupdate HEAD {new} {old}\nprepare\ncommit\n".encode("ascii"))
            process.stdin.flush()
            replies = [process.stdout.readline().strip() for _ in REPLIES]
        except OSError:
            replies = []
        if tuple(replies) == REPLIES:
            return None
        return self._failure()

    def _failure(self) -> str:
        """git's message once the process has stopped (it exits at the first failed command)."""
        assert self._process is not None
        with contextlib.suppress(OSError):
            assert self._process.stdin is not None
            self._process.stdin.close()
        message = b""
        with contextlib.suppress(OSError, ValueError):
            assert self._process.stderr is not None
            message = self._process.stderr.read()
        self.close()
        return message.decode("utf-8", "replace").strip() or "no reply"

    def _start(self) -> subprocess.Popen[bytes]:
        if self._process is None or self._process.poll() is not None:
            self.close()
            try:
                self._process = subprocess.Popen(
                    ["git", "update-ref", "-m", REFLOG_MESSAGE, "--stdin"],
                    cwd=self.root,
                    env=self.env,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                )
            except OSError as exc:
                raise GitError(
                    f"git could not be run ({exc.strerror}); install git or put it on PATH"
                ) from None
        return self._process

    def close(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        for stream in (process.stdin, process.stdout, process.stderr):
            with contextlib.suppress(OSError):
                if stream is not None:
                    stream.close()
        process.wait()
