"""``vault-tools undo``: revert one bot change with a new bot commit, line by line."""

from __future__ import annotations

import contextlib
import datetime as dt
import difflib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vault_tools import locks
from vault_tools.config import Config, bot_folders, require_writable
from vault_tools.errors import ConflictError, GitError, UsageError
from vault_tools.heartbeat.edits import commit_message
from vault_tools.heartbeat.state import LOCK_NAME, State
from vault_tools.notes import edit as note_edit
from vault_tools.notes import model as notes

if TYPE_CHECKING:  # git is imported only when a run needs it
    from vault_tools.git.repository import BotCommit, VaultRepo


# ---------------------------------------------------------------------------------------------
# Undo


@dataclass
class UndoReport:
    reverted: str
    subject: str
    commit: str | None
    files: list[str]
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def render(self) -> str:
        made = f"as {self.commit[:10]}" if self.commit else "(nothing to commit)"
        lines = [f"undid {self.reverted[:10]} {self.subject} {made}", *(f"  {f}" for f in self.files)]
        return "\n".join([*lines, *(f"warning: {w}" for w in self.warnings)])


def reverse_splice(before: list[str], after: list[str]) -> note_edit.Splice:
    """A splice that turns the lines a commit wrote (``after``) back into ``before`` wherever they are now."""
    matcher = difflib.SequenceMatcher(None, after, before, autojunk=False)
    opcodes = [op for op in matcher.get_opcodes() if op[0] != "equal"]

    def splice(lines: list[str]) -> list[str]:
        result = list(lines)
        newline = note_edit.detect_newline(result) if result else "\n"
        for _tag, i1, i2, j1, j2 in reversed(opcodes):
            old = [notes.strip_eol(x) for x in after[i1:i2]]
            new = [notes.strip_eol(x) + newline for x in before[j1:j2]]
            if old:
                index = locate(result, after, i1, i2)
                result[index : index + len(old)] = new
            else:
                anchor = [notes.strip_eol(x) for x in after[max(0, i1 - 2) : i1]]
                index = note_edit.find_block(result, anchor, hint=i1) + len(anchor) if anchor else 0
                if index and index <= len(result) and not result[index - 1].endswith("\n"):
                    result[index - 1] += newline
                result[index:index] = new
        return result

    return splice


def locate(lines: list[str], after: list[str], i1: int, i2: int) -> int:
    """Where ``after[i1:i2]`` is in ``lines`` now: with a line of context when it is ambiguous."""
    old = [notes.strip_eol(x) for x in after[i1:i2]]
    before_ctx = [notes.strip_eol(x) for x in after[max(0, i1 - 1) : i1]]
    with contextlib.suppress(ConflictError):
        return note_edit.find_block(lines, before_ctx + old, hint=i1) + len(before_ctx)
    if any(x.strip() for x in old):
        return note_edit.find_block(lines, old, hint=i1)
    raise ConflictError("the lines the commit changed are no longer there")


UNDOABLE = ("memory: promote ", "memory: merge ", "memory: prune ", "memory: undo ")


def undo(config: Config, rev: str) -> UndoReport:
    """Revert one bot change (promote, merge, prune, or an undo) with a new bot commit.

    Line by line: the lines the commit added are removed and the lines it removed come back, found
    by content wherever they are now, so everything else a person changed since stays as it is.
    """
    from vault_tools.git import repository as gitops

    require_writable("`vault-tools undo`", *bot_folders(config.vault))
    with locks.hold(config, LOCK_NAME, timeout=0, what="undo"):
        repo = gitops.VaultRepo.open(config.vault)
        if repo is None:
            raise UsageError(f"{config.vault}: not a git repository; nothing to undo")
        with repo:
            problem = repo.in_progress() or repo.commit_blocker()
            if problem:
                raise GitError(problem)
            info = repo.bot_commit(rev)
            if not info.subject.startswith(UNDOABLE):
                raise UsageError(
                    f"{info.sha[:10]} ({info.subject}) is not a promote, merge or prune; "
                    "undo reverts only those (use git revert for anything else)"
                )
            undone = undone_by(repo, info.sha)
            if undone is not None:
                raise UsageError(
                    f"{info.sha[:10]} ({info.subject}) is already undone by {undone[:10]}; "
                    f"nothing to do (`vault-tools undo {undone[:10]}` brings it back)"
                )
            contents, splices = undo_contents(repo, config.vault, info)
            for path, (splice, created) in splices.items():
                write_reverted(config.vault / path, splice, created)
            message = commit_message(
                "undo", info.subject.removeprefix("memory: "), f"Reverts {info.sha}.", [("Reverts", info.sha)]
            )
            sha = repo.commit(contents, message) if contents else None
        report = UndoReport(info.sha, info.subject, sha, sorted(contents))
        remember_undo(config, info)
        return report


def undone_by(repo: VaultRepo, sha: str) -> str | None:
    """The undo commit on HEAD's history that reverted ``sha`` and is still in effect, if any.

    An undo carries a ``Reverts: <sha>`` trailer; one that was undone in turn no longer counts,
    so the third undo of a commit (after undo, undo of the undo) reverts it again.
    """
    found = repo.run("log", "--format=%H", "--fixed-strings", f"--grep=Reverts: {sha}", "HEAD")
    for undo_sha in found.split():
        if undone_by(repo, undo_sha) is None:
            return undo_sha
    return None


def write_reverted(target: Path, splice: note_edit.Splice, created: bool) -> None:
    """Apply an undo splice to a working file (conflict-checked); a file the commit created goes."""
    result = note_edit.apply_edit(target, splice, create=True)
    if created and not result.data.strip():
        with contextlib.suppress(FileNotFoundError):
            target.unlink()


def undo_contents(
    repo: VaultRepo, vault: Path, info: BotCommit
) -> tuple[dict[str, bytes | None], dict[str, tuple[note_edit.Splice, bool]]]:
    """(what to commit, the splice for each working file that still needs it) to revert ``info``."""
    contents: dict[str, bytes | None] = {}
    splices: dict[str, tuple[note_edit.Splice, bool]] = {}
    for change in info.files:
        before = notes.split_lines(change.before.decode("utf-8")) if change.before else []
        after = notes.split_lines(change.after.decode("utf-8")) if change.after else []
        splice = reverse_splice(before, after)
        head = repo.read_head(change.path)
        try:
            reverted_head = "".join(splice(notes.split_lines((head or b"").decode("utf-8")))).encode()
        except ConflictError:
            raise ConflictError(
                f"{change.path} changed since {info.sha[:10]} in the lines it touched; undo it by hand"
            ) from None
        created = change.before is None
        if reverted_head != (head or b""):
            contents[change.path] = None if created and not reverted_head.strip() else reverted_head
        file = vault / change.path
        current = file.read_bytes() if file.is_file() else b""
        try:
            splice(notes.split_lines(current.decode("utf-8")))
        except ConflictError:
            continue  # the working file no longer has the commit's lines: already reverted there
        splices[change.path] = (splice, created)
    return contents, splices


def remember_undo(config: Config, info: BotCommit) -> None:
    """An undone prune was a person's wish to keep the item: never prune it again."""
    if not info.subject.startswith("memory: prune"):
        return
    state = State.load(config)
    state.kept.extend(info.trailers.get("Block", []))
    state.save(config, keep_after=dt.date.min)
