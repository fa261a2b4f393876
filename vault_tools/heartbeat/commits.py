"""Committing the heartbeat's changes: each its own commit, around a person's uncommitted edits.

The commit holds HEAD's version of each file plus only the change (:mod:`vault_tools.git.repository`),
so a person's uncommitted edits stay uncommitted.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from vault_tools.errors import ConflictError
from vault_tools.heartbeat.edits import MEMORY_PATH, Change, apply_ops, write_all
from vault_tools.heartbeat.report import HeartbeatReport, Progress
from vault_tools.notes import model as notes

if TYPE_CHECKING:  # git is imported only when a run needs it
    from vault_tools.git.repository import VaultRepo


# ---------------------------------------------------------------------------------------------
# Executing: write, commit, record


class Committer:
    """Commits changes around a person's uncommitted edits; knows when it must not commit."""

    def __init__(
        self, repo: VaultRepo | None, vault: Path, report: HeartbeatReport, blocker: str | None
    ) -> None:
        self.repo = repo
        self.vault = vault
        self.report = report
        self.blocker = blocker
        self.touched: set[str] = set()
        self.baselined = False

    @property
    def can_commit(self) -> bool:
        return self.repo is not None and self.blocker is None

    def head(self, path: str) -> bytes | None:
        """HEAD's version of ``path``; None when HEAD lacks it (an untracked file is baselined as it is)."""
        return self.repo.read_head(path) if self.repo is not None else None

    def baseline(self, changes: Sequence[Change]) -> None:
        """Before the first bot commit: commit untracked files it touches (all memory files when the
        branch has no commit yet) as they are, so each bot commit shows only the bot's change."""
        if self.baselined or not self.can_commit or not changes:
            return
        assert self.repo is not None
        self.baselined = True
        paths = {p for c in changes for p in c.paths()}
        if self.repo.head_sha() is None:
            paths |= {notes.relative_posix(p, self.vault) for p in notes.iter_note_paths(self.vault)}
            paths |= {".gitignore"} if (self.vault / ".gitignore").is_file() else set()
            archive = self.vault / "memory" / "archive"
            if archive.is_dir():
                paths |= {notes.relative_posix(p, self.vault) for p in archive.rglob("*.md")}
        created = {p for c in changes for p in c.paths() if all(op.initial for op in c.ops if op.path == p)}
        created -= {MEMORY_PATH}  # MEMORY.md has a person's content too; an archive file is the bot's own
        untracked = sorted(
            p for p in paths - created if (self.vault / p).is_file() and not self.repo.tracked(p)
        )
        if not untracked:
            return
        sha = self.repo.baseline(untracked, baseline_message(untracked))
        if sha:
            self.report.commits.append(sha)
            self.report.warnings.append(
                f"committed {len(untracked)} file(s) that git did not track yet, as they were, before the "
                f"bot's changes ({', '.join(untracked[:3])}{', …' if len(untracked) > 3 else ''})"
            )

    def report_around(self) -> None:
        """After the last commit: a touched file that still differs from HEAD holds a person's edits."""
        if self.repo is None:
            return
        for path in sorted(self.touched):
            file = self.vault / path
            if file.is_file() and file.read_bytes() != self.repo.read_head(path):
                self.report.warnings.append(
                    f"committed around uncommitted edits in {path}: the bot's commits hold only its own "
                    "changes; your edits stay uncommitted"
                )

    def commit(self, change: Change) -> str | None:
        if not self.can_commit:
            return None
        assert self.repo is not None
        contents: dict[str, bytes | None] = {}
        for path in change.paths():
            head = self.repo.read_head(path)
            new = apply_ops(change.ops, path, head)
            if new == (head or b""):
                continue
            contents[path] = new
            self.touched.add(path)
        if not contents:
            return None

        def restage(path: str, staged: bytes) -> bytes | None:
            try:
                return apply_ops(change.ops, path, staged)
            except ConflictError:
                return None

        return self.repo.commit(contents, change.message, restage=restage)


def baseline_message(paths: Sequence[str]) -> str:
    listed = "\n".join(f"- {p}" for p in paths[:50])
    more = f"\n- … and {len(paths) - 50} more" if len(paths) > 50 else ""
    return (
        "memory: start tracking the vault\n\n"
        "These files were not in git yet; committed as they were, before the bot's first change,\n"
        f"so that every bot commit shows only what the bot changed.\n\n{listed}{more}\n"
    )


def execute(
    changes: Sequence[Change],
    committer: Committer,
    vault: Path,
    report: HeartbeatReport,
    progress: Progress,
) -> tuple[list[Change], list[Change]]:
    """Write the changes, then commit each one; returns (changes not committed, changes that failed)."""
    uncommitted: list[Change] = []
    committer.baseline(changes)
    failed = write_all(vault, changes, report, progress)
    for number, change in enumerate(changes):
        if number in failed:
            continue
        sha = committer.commit(change) if committer.can_commit else None
        if sha:
            change.report.commit = sha
            report.commits.append(sha)
        elif committer.repo is not None and not committer.can_commit:
            uncommitted.append(change)
        progress(f"committed {change.kind} {change.block_id}")
        bucket = {"promote": report.promoted, "merge": report.merged, "prune": report.pruned}[change.kind]
        bucket.append(change.report)
    return uncommitted, [changes[n] for n in sorted(failed)]
