"""The person's own notes, committed by sync before it fetches, so that they travel too.

Design
------
The bot commits only what it wrote; on a laptop the daily notes a person (or their agent, through
``vault-tools note``) writes stay untracked unless they commit them, and a sync would then push
summaries that link to notes the other devices never get. People who sync a vault with git
(Obsidian's git plugin) expect the notes themselves to travel, so :func:`commit_own_notes` makes,
before each sync, ONE commit of every Markdown file under the vault that differs from HEAD (new,
changed or deleted), authored and committed as the person, never mixed with a bot commit.
``[sync] commit_notes = false`` turns it off for people who commit by hand.

The person is the repository's configured identity (``$GIT_AUTHOR_NAME``/``$GIT_AUTHOR_EMAIL``,
else ``author.name``/``author.email``, else ``user.name``/``user.email``). With none, nothing is
committed and the sync says how to set one: a commit by "vault-tools bot" would claim the person's
words as the bot's (and undo would offer to revert them), and a made-up name would be worse.

Left out: ``.vault-tools/`` and every hidden folder (``.git``, ``.obsidian``, ``.trash``), whatever
``.gitignore`` ignores, anything that is not ``*.md``, symlinks (their target may be outside the
vault), files holding conflict markers, and what the bot wrote and has not committed yet (the files
of an interrupted run's journal, a summary exactly as the bot wrote it): the heartbeat commits those
as the bot. A note
is the person's to sync as they wrote it, ``#private`` entries included; the sync warns once, when
it commits such a note, that it goes wherever the person pushes.

The commit is made like a bot commit (git's plumbing, around whatever is staged): only those paths
change in the index, and the working tree is not touched. It carries the trailer
``Committed-by: vault-tools sync`` so that sync, which re-applies the commits it made and has not
pushed yet on top of the remote's, can tell it from commits a person made with git.
"""

from __future__ import annotations

import json
import os
import socket
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from vault_tools.config import HEARTBEAT_JOURNAL, Config, heartbeat_dir

if TYPE_CHECKING:
    from vault_tools.git.objects import Identity
    from vault_tools.git.repository import VaultRepo

TRAILER = "Committed-by: vault-tools sync"
CONFLICT_MARKERS = (b"<<<<<<< ", b">>>>>>> ")
LISTED_FILES = 50  # the commit message names at most this many files


@dataclass
class NotesCommit:
    """What :func:`commit_own_notes` did: the commit (None: none made) and what it left out."""

    sha: str | None = None
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def paths(self) -> list[str]:
        return sorted([*self.added, *self.changed, *self.deleted])


def identity(repo: VaultRepo) -> Identity | None:
    """The person's (name, email) as git would use it for their own commit, or None when unset."""

    def setting(env: str, *keys: str) -> str:
        value = os.environ.get(env, "").strip()
        for key in keys:
            value = value or repo.run("config", "--get", key, check=False).strip()
        return value

    name = setting("GIT_AUTHOR_NAME", "author.name", "user.name")
    email = setting("GIT_AUTHOR_EMAIL", "author.email", "user.email")
    return (name, email) if name and email else None


def is_note(repo: VaultRepo, path: str) -> bool:
    """Whether repo-relative ``path`` is a Markdown file of the vault that sync may commit."""
    if not path.startswith(repo.prefix) or not path.lower().endswith(".md"):
        return False
    *folders, _name = path[len(repo.prefix) :].split("/")
    return not any(folder.startswith(".") for folder in folders)


def changed_paths(repo: VaultRepo) -> list[str]:
    """Repo-relative paths under the vault that differ from HEAD, tracked or not (not ignored)."""
    out = repo.run(
        "--no-optional-locks",
        "status",
        "--porcelain=v1",
        "-z",
        "--untracked-files=all",
        "--no-renames",
        "--ignore-submodules",
        "--",
        repo.prefix or ".",
    )
    return sorted({record[3:] for record in out.split("\0") if len(record) > 3})


def waiting_bot_paths(config: Config) -> set[str]:
    """Vault-relative files of heartbeat changes an interrupted run wrote but has not committed."""
    try:
        journal = json.loads((heartbeat_dir(config) / HEARTBEAT_JOURNAL).read_text(encoding="utf-8"))
        return {str(op["path"]) for change in journal.get("changes", []) for op in change.get("ops", [])}
    except (OSError, ValueError, AttributeError, KeyError, TypeError):
        return set()


def commit_own_notes(repo: VaultRepo, config: Config) -> NotesCommit:
    """Commit the person's changed notes in one commit as the person (see the module docstring)."""
    result = NotesCommit()
    waiting = waiting_bot_paths(config)
    contents: dict[str, bytes | None] = {}
    for path in changed_paths(repo):
        if not is_note(repo, path):
            continue
        rel = path[len(repo.prefix) :]
        file = repo.root / path
        if rel in waiting:
            result.warnings.append(
                f"{rel}: holds a heartbeat change still to be committed; left for the heartbeat"
            )
            continue
        if file.is_symlink():
            result.warnings.append(f"{rel}: a symlink; not committed (commit it yourself if you mean to)")
            continue
        data = file.read_bytes() if file.is_file() else None
        if data is not None and any(line.startswith(CONFLICT_MARKERS) for line in data.splitlines()):
            result.warnings.append(
                f"{rel}: holds conflict markers (<<<<<<<); not committed until they are resolved"
            )
            continue
        if data is not None and bot_summary(rel, data):
            result.warnings.append(
                f"{rel}: a summary the bot wrote and has not committed yet; left for the heartbeat"
            )
            continue
        head = repo.read_head(rel)
        if data == head:
            continue  # only its staged version differs: nothing of the working tree to commit
        (result.added if head is None else result.deleted if data is None else result.changed).append(rel)
        contents[rel] = data
    if not contents:
        return result
    person = identity(repo)
    if person is None:
        result.warnings.append(
            f"{len(contents)} changed note(s) not committed: this repository has no user identity to "
            f'commit them as; set one (git -C {repo.root} config user.name "Your Name" and user.email '
            "you@example.com) or commit them yourself, and they travel with the next sync"
        )
        result.added, result.changed, result.deleted = [], [], []
        return result
    result.warnings += [
        f"{rel}: holds #private entries; committed with your notes, so they go wherever you push "
        "(keep them in a git-ignored folder, or set [sync] commit_notes = false)"
        for rel, data in contents.items()
        if data is not None and holds_private(repo, rel, data)
    ]
    result.sha = repo.commit(
        contents, message(result), restage=lambda path, _staged: contents[path], identity=person
    )
    return result


def bot_summary(rel: str, data: bytes) -> bool:
    """Whether ``rel`` is a summary exactly as the bot wrote it (a run killed before its commit):
    the bot commits it, a person's edit makes it theirs."""
    if not rel.startswith("memory/summaries/"):
        return False
    from vault_tools.notes.generated import edited_by_a_person

    try:
        return not edited_by_a_person(data.decode("utf-8"))
    except UnicodeDecodeError:
        return False


def holds_private(repo: VaultRepo, rel: str, data: bytes) -> bool:
    """Whether the note ``rel`` holding ``data`` has a ``#private`` entry (or is private whole)."""
    from vault_tools.notes import model as notes

    note = notes.parse_note(repo.vault / rel, repo.vault, data)
    return any(entry.visibility == "private" for entry in note.entries)


def message(result: NotesCommit) -> str:
    """``notes: 3 added, 1 changed on HOST`` and the files, one a line."""
    counts = [
        (len(result.added), "added"),
        (len(result.changed), "changed"),
        (len(result.deleted), "deleted"),
    ]
    subject = ", ".join(f"{n} {what}" for n, what in counts if n)
    host = socket.gethostname().split(".")[0]
    lines = [f"notes: {subject}" + (f" on {host}" if host else ""), ""]
    marks = {**dict.fromkeys(result.added, "A"), **dict.fromkeys(result.changed, "M")}
    marks.update(dict.fromkeys(result.deleted, "D"))
    paths = result.paths
    lines += [f"{marks[path]} {path}" for path in paths[:LISTED_FILES]]
    if len(paths) > LISTED_FILES:
        lines.append(f"… and {len(paths) - LISTED_FILES} more")
    return "\n".join([*lines, "", TRAILER, ""])
