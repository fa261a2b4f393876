"""Sync the vault's repository with its remote: fetch, bring the remote's commits in, push.

Design
------
First, unless ``[sync] commit_notes = false``, the person's own changed notes are committed in one
commit of their own, as the person (:mod:`vault_tools.git.own_notes`): the notes travel with the
bot's commits that cite them.

People keep one vault on several devices (Obsidian's git plugin on a laptop and a phone) while the
bot runs elsewhere. :func:`sync_repo` fetches the branch's upstream (``[heartbeat] remote``, default
``origin``) and brings the remote's commits in:

* **fast-forward** when only the remote moved;
* **replay** when the commits only this clone has are all the bot's (and the notes commits sync
  made itself, re-applied by a three-way merge of each file): each is re-applied on top of
  the remote's version, the person's text always winning. A bot commit is a set of whole-line
  hunks (a promoted item inserted after its neighbour, a pruned item removed, a source added to an
  item); :func:`reapply` finds each hunk's place by content in the person's version. An item already
  there, or already gone, is left; an insert whose neighbour is gone goes to the end of its section;
  a hunk whose lines the person edited drops the whole commit, with a message. Bot commits are
  never on the remote yet when they are replayed, so nothing published is rewritten;
* **merge** (a merge commit, never a rebase) when this clone also has a person's own commits; when
  those conflict with the remote's, sync stops, touches nothing, names the files and gives the
  command that merges them by hand (``git pull --no-rebase REMOTE BRANCH``: current git refuses a
  plain ``git pull`` of diverged branches).

The working tree is then moved from the old commit to the new one file by file (atomic writes), and
only when every file that changes is exactly as the old commit has it: a person's uncommitted edit
to such a file makes sync wait (it says which file) rather than commit, stash or overwrite it. No
merge or rebase state is ever left in the repository; the move is journalled
(``.vault-tools/sync.json``) so a sync killed half-way is finished by the next one (:func:`recover`).

Finally it pushes, never with force. A push the remote rejects because it moved meanwhile is
fetched, brought in and pushed again, ``push_attempts`` times at most. A remote that cannot be
reached, or no remote at all, is a :class:`SyncError` (exit 6) with one line saying what to do; the
local commits stay and the next sync pushes them.
"""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import tempfile
from dataclasses import asdict, dataclass, field
from difflib import SequenceMatcher
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vault_tools import locks
from vault_tools.config import Config, HeartbeatConfig, bot_folders, require_writable
from vault_tools.errors import GitError
from vault_tools.notes import edit as note_edit

if TYPE_CHECKING:
    from vault_tools.git.repository import VaultRepo

JOURNAL_FILE = "sync.json"
BLOCK_ID = re.compile(rb"\^m-[0-9a-z]+")
HEADING = re.compile(rb"#{1,6}\s")
BASELINE_SUBJECT = "memory: start tracking the vault"


class SyncError(GitError):
    """Sync could not finish; nothing was lost and the local commits stay (exit 6)."""


class Dropped(Exception):
    """A bot commit that no longer makes sense on top of the person's version."""


@dataclass
class SyncReport:
    remote: str = ""
    branch: str = ""
    brought_in: int = 0  # the remote's commits now in the branch
    pushed: int = 0  # local commits the remote now has
    replayed: list[str] = field(default_factory=list)  # bot commits re-applied on the remote's version
    dropped: list[str] = field(default_factory=list)  # bot commits left out, and why
    merged: bool = False
    attempts: int = 0
    notes_commit: str | None = None  # the commit of the person's own changed notes (own_notes.py)
    notes_committed: list[str] = field(default_factory=list)  # vault-relative paths it holds
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        parts = [f"{len(self.notes_committed)} changed note(s) committed"] if self.notes_committed else []
        parts.append(f"{self.brought_in} commit(s) brought in from {self.remote}/{self.branch}")
        parts.append(f"{self.pushed} pushed")
        if self.replayed:
            parts.append(f"{len(self.replayed)} bot commit(s) re-applied on the remote's version")
        if self.dropped:
            parts.append(f"{len(self.dropped)} dropped")
        if self.merged:
            parts.append("merged with your local commits")
        return ", ".join(parts)

    def render(self) -> str:
        lines = [f"sync: {self.summary()}"]
        lines += [f"  dropped: {why}" for why in self.dropped]
        lines += [f"  warning: {w}" for w in self.warnings]
        return "\n".join(lines)


def run_sync(config: Config) -> SyncReport:
    """``vault-tools sync``: one sync under the heartbeat's lock (a heartbeat and a sync never overlap)."""
    from vault_tools.git import repository as gitops

    require_writable("`vault-tools sync`", *bot_folders(config.vault))
    with locks.hold(config, locks.HEARTBEAT_LOCK, timeout=config.heartbeat.lock_wait_seconds, what="sync"):
        repo = gitops.VaultRepo.open(config.vault)
        if repo is None:
            raise SyncError(
                f"{config.vault} is not in a git repository; run vault-tools heartbeat once (it creates one) "
                "and add a remote (git remote add origin URL)"
            )
        with repo:
            report = SyncReport()
            problem = repo.in_progress()
            if problem:
                raise SyncError(problem.replace("the heartbeat skipped this run", "sync touched nothing"))
            settings = config.heartbeat
            repo.clear_locks(
                wait_seconds=settings.lock_wait_seconds,
                grace_seconds=settings.lock_grace_seconds,
                warn=report.warnings.append,
            )
            recover(repo, config, report.warnings)
            sync_repo(repo, config, report)
            return report


# ---------------------------------------------------------------------------------------------
# The steps


def sync_repo(repo: VaultRepo, config: Config, report: SyncReport) -> None:
    """Fetch, bring in, push (see the module docstring); raises SyncError when it cannot."""
    settings: HeartbeatConfig = config.heartbeat
    branch = current_branch(repo)
    remote = settings.remote
    report.remote, report.branch = remote, branch
    url = repo.run("remote", "get-url", remote, check=False).strip()
    if not url:
        raise SyncError(
            f"the vault's repository has no remote '{remote}'; add one (git -C {repo.root} remote add "
            f"{remote} URL) or set [heartbeat] remote in .vault-tools/config.toml"
        )
    remote_branch, tracking = upstream(repo, remote, branch)
    if config.sync.commit_notes:
        commit_notes(repo, config, report)
    for attempt in range(1, max(1, settings.push_attempts) + 1):
        report.attempts = attempt
        fetch(repo, remote, url, remote_branch, tracking)
        upstream_sha = repo.rev_parse(tracking)
        bring_in(repo, config, upstream_sha, report)
        head = repo.head_sha()
        if head is None or head == upstream_sha:
            return
        ahead = count(repo, f"{upstream_sha}..{head}" if upstream_sha else head)
        result = run_push(repo, remote, remote_branch)
        if result == "ok":
            report.pushed += ahead
            return
        if result == "unreachable":
            raise SyncError(unreachable(remote, url, ahead))
    raise SyncError(
        f"the remote '{remote}' moved again during each of {settings.push_attempts} pushes; "
        "your commits stay here; run vault-tools sync again"
    )


def commit_notes(repo: VaultRepo, config: Config, report: SyncReport) -> None:
    """The person's own changed notes, in one commit as the person (:mod:`vault_tools.git.own_notes`)."""
    from vault_tools.git.own_notes import commit_own_notes

    done = commit_own_notes(repo, config)
    report.notes_commit, report.notes_committed = done.sha, done.paths if done.sha else []
    report.warnings += done.warnings


def current_branch(repo: VaultRepo) -> str:
    name = repo.run("symbolic-ref", "--quiet", "--short", "HEAD", check=False).strip()
    if not name:
        raise SyncError(
            "HEAD is detached (not on a branch); check out a branch (git switch main) and sync again"
        )
    return name


def upstream(repo: VaultRepo, remote: str, branch: str) -> tuple[str, str]:
    """(branch name on the remote, its remote-tracking ref): the configured upstream when it is on
    ``remote``, else the branch of the same name."""
    merge = repo.run("config", "--get", f"branch.{branch}.merge", check=False).strip()
    configured = repo.run("config", "--get", f"branch.{branch}.remote", check=False).strip()
    name = merge.removeprefix("refs/heads/") if merge and configured == remote else branch
    return name, f"refs/remotes/{remote}/{name}"


def unreachable(remote: str, url: str, ahead: int) -> str:
    stay = f"; {ahead} local commit(s) stay here and the next sync pushes them" if ahead else ""
    return (
        f"cannot reach the remote '{remote}' ({url}); check the network, the URL (git remote -v) and "
        f"your credentials, then run vault-tools sync again{stay}"
    )


def fetch(repo: VaultRepo, remote: str, url: str, name: str, tracking: str) -> None:
    try:
        repo.run("fetch", "--quiet", "--no-tags", remote, f"+refs/heads/{name}:{tracking}")
    except GitError as exc:
        if "couldn't find remote ref" in str(exc):
            return  # an empty remote, or the branch is not there yet: the push creates it
        head = repo.head_sha()
        upstream_sha = repo.rev_parse(tracking)
        ahead = count(repo, f"{upstream_sha}..{head}" if upstream_sha else head) if head else 0
        raise SyncError(unreachable(remote, url, ahead)) from None


def count(repo: VaultRepo, revs: str) -> int:
    return int(repo.run("rev-list", "--count", revs).strip() or 0)


def run_push(repo: VaultRepo, remote: str, name: str) -> str:
    """ "ok", "rejected" (the remote moved: fetch and try again) or "unreachable". Never forces."""
    try:
        repo.run("push", "--quiet", remote, f"HEAD:refs/heads/{name}")
    except GitError as exc:
        text = str(exc)
        if "[rejected]" in text or "fetch first" in text or "non-fast-forward" in text:
            return "rejected"
        if "[remote rejected]" in text:
            raise SyncError(
                f"the remote '{remote}' refused the push ({text.rsplit('[remote rejected]', 1)[1].strip()})"
            ) from None
        return "unreachable"
    return "ok"


def bring_in(repo: VaultRepo, config: Config, upstream_sha: str | None, report: SyncReport) -> None:
    """Make HEAD contain ``upstream_sha`` (fast-forward, replay or merge) and move the files."""
    head = repo.head_sha()
    if upstream_sha is None or upstream_sha == head or (head and is_ancestor(repo, upstream_sha, head)):
        return
    if head is None or is_ancestor(repo, head, upstream_sha):
        new = upstream_sha
    else:
        new = combine(repo, head, upstream_sha, report)
    move_to(repo, config, head, new)
    report.brought_in += count(repo, f"{head}..{upstream_sha}" if head else upstream_sha)


def is_ancestor(repo: VaultRepo, older: str, newer: str) -> bool:
    return repo.run("rev-list", "--count", f"{newer}..{older}").strip() == "0"


@dataclass(frozen=True)
class LocalCommit:
    """A commit only this clone has: who made it, and whether sync may re-apply it on the remote's."""

    sha: str
    email: str
    parents: int
    subject: str
    by_sync: bool  # the person's notes, committed by sync (own_notes.TRAILER)

    @property
    def replayable(self) -> bool:
        from vault_tools.git.repository import BOT_EMAIL

        return self.parents == 1 and (self.email == BOT_EMAIL or self.by_sync)


def local_commits(repo: VaultRepo, head: str, upstream_sha: str) -> list[LocalCommit]:
    """The commits only this clone has, oldest first."""
    from vault_tools.git.own_notes import TRAILER

    key, value = TRAILER.split(": ", 1)
    trailer = f"%(trailers:key={key},valueonly,separator=%x20)"
    out = repo.run(
        "log", "--reverse", f"--format=%H%x00%ae%x00%P%x00{trailer}%x00%s%x1e", f"{upstream_sha}..{head}"
    )
    found = []
    for record in out.split("\x1e"):
        if record.strip():
            sha, email, parents, trailers, subject = record.strip("\n").split("\x00", 4)
            found.append(LocalCommit(sha, email, len(parents.split()), subject, value in trailers))
    return found


def conflict_message(repo: VaultRepo, report: SyncReport, whose: str, files: list[str]) -> str:
    """Sync stopped on ``files``: say how the person merges by hand (current git needs --no-rebase)."""
    listed = ", ".join(sorted(set(files))[:5])
    root = repo.root
    return (
        f"{whose} here and on another device change the same lines of {listed}; sync touched nothing. "
        f"Merge them yourself: git -C {root} pull --no-rebase {report.remote} {report.branch}, fix the "
        f"files it names, git -C {root} commit -a --no-edit, then run vault-tools sync again"
    )


def combine(repo: VaultRepo, head: str, upstream_sha: str, report: SyncReport) -> str:
    """The commit that holds both histories: the bot's commits and the notes sync committed
    re-applied on the remote's, or a merge when the person made commits of their own here."""
    mine = local_commits(repo, head, upstream_sha)
    if all(commit.replayable for commit in mine):
        base = upstream_sha
        for commit in mine:
            if commit.by_sync:
                base = replay_notes(repo, commit, base, report)
            else:
                base = replay(repo, commit.sha, commit.subject, base, report)
        return base
    out = repo.run(
        "merge-tree", "--write-tree", "--name-only", "--no-messages", head, upstream_sha, check=False
    )
    tree, *conflicted = [line for line in out.splitlines() if line.strip()]
    if conflicted:
        raise SyncError(conflict_message(repo, report, "your own commits", conflicted))
    message = f"Merge {report.remote}/{report.branch} into {report.branch} (vault-tools sync)\n"
    sha = repo.run(
        "commit-tree",
        "--no-gpg-sign",
        tree,
        "-p",
        head,
        "-p",
        upstream_sha,
        "-F",
        "-",
        stdin=message.encode(),
    ).strip()
    report.merged = True
    return sha


def replay(repo: VaultRepo, sha: str, subject: str, base: str, report: SyncReport) -> str:
    """Re-apply bot commit ``sha`` on ``base``; the new commit (``base`` when dropped or already there)."""
    from vault_tools.git.repository import FILE_MODE

    message = repo.run("log", "-1", "--format=%B", sha).rstrip("\n") + "\n"
    parent = repo.run("rev-parse", f"{sha}^").strip()
    contents: dict[str, tuple[str, int] | None] = {}
    try:
        for path, before, after in repo.changed_files(parent, sha):
            target = repo.read_at(base, path)
            result = reapply(before, after, target, keep_theirs=subject == BASELINE_SUBJECT)
            if result == target:
                continue
            entry = repo.objects.tree_entries(repo.objects.commit_tree(sha), path)
            mode = int(entry[0], 8) if entry is not None else FILE_MODE
            contents[path] = (repo.objects.hash_blob(result), mode) if result is not None else None
    except Dropped as exc:
        report.dropped.append(f"{subject} ({sha[:10]}): {exc}; the version from the other device stays")
        return base
    if not contents:
        return base
    report.replayed.append(subject)
    return repo.objects.make_commit(base, contents, message)


class Conflict(Exception):
    """Both sides changed the same lines of a file (or one deleted what the other changed)."""


def replay_notes(repo: VaultRepo, commit: LocalCommit, base: str, report: SyncReport) -> str:
    """Re-apply the notes commit sync made (and has not pushed) on ``base``, as the person, by a
    three-way merge of each file (``git merge-file``); a conflict stops the sync, touching nothing."""
    from vault_tools.git.repository import FILE_MODE

    name, email, message = repo.run("log", "-1", "--format=%an%x00%ae%x00%B", commit.sha).split("\0", 2)
    parent = repo.run("rev-parse", f"{commit.sha}^").strip()
    contents: dict[str, tuple[str, int] | None] = {}
    conflicted: list[str] = []
    for path, before, after in repo.changed_files(parent, commit.sha):
        target = repo.read_at(base, path)
        try:
            merged = merge_file(repo, before, after, target)
        except Conflict:
            conflicted.append(path)
            continue
        if merged != target:
            entry = repo.objects.tree_entries(repo.objects.commit_tree(commit.sha), path)
            mode = int(entry[0], 8) if entry is not None else FILE_MODE
            contents[path] = (repo.objects.hash_blob(merged), mode) if merged is not None else None
    if conflicted:
        whose = f"your notes (commit {commit.sha[:10]})"
        raise SyncError(conflict_message(repo, report, whose, conflicted))
    if not contents:
        return base
    return repo.objects.make_commit(base, contents, message.rstrip("\n") + "\n", identity=(name, email))


def merge_file(
    repo: VaultRepo, before: bytes | None, after: bytes | None, target: bytes | None
) -> bytes | None:
    """``before`` → ``after`` applied to ``target`` by a three-way merge; :class:`Conflict` when
    both changed the same lines, or one side deleted or created what the other changed."""
    from vault_tools.git.repository import bot_env

    if target in (before, after):
        return after
    if before is None or after is None or target is None:
        raise Conflict
    with tempfile.TemporaryDirectory(prefix="vault-tools-merge-") as folder:
        files = []
        for name, data in (("ours", target), ("base", before), ("theirs", after)):
            file = Path(folder) / name
            file.write_bytes(data)
            files.append(str(file))
        done = subprocess.run(
            ["git", "merge-file", "-p", *files],
            cwd=repo.root,
            env=bot_env(),
            capture_output=True,
            check=False,
        )
    if done.returncode != 0:
        raise Conflict
    return done.stdout


# ---------------------------------------------------------------------------------------------
# Re-applying a bot commit's hunks to the person's version


def reapply(
    before: bytes | None, after: bytes | None, target: bytes | None, *, keep_theirs: bool = False
) -> bytes | None:
    """The bot's change (``before`` → ``after``) applied to ``target``, the person's text winning.

    Raises :class:`Dropped` when the change touches lines the person changed.
    """
    if target == before:
        return after
    if target == after:
        return target
    if after is None:
        raise Dropped("the file it deletes was changed on another device")
    if before is None:
        if keep_theirs:
            return target  # the baseline of a file the other device has: theirs stays
        if target is None:
            return after
        raise Dropped("the file it creates was also created on another device")
    if target is None:
        raise Dropped("the file it changes was deleted on another device")
    old = before.splitlines(keepends=True)
    new = after.splitlines(keepends=True)
    lines = target.splitlines(keepends=True)
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        if tag == "insert":
            lines = insert_hunk(lines, old, i1, new[j1:j2])
        else:
            lines = replace_hunk(lines, old[i1:i2], new[j1:j2])
    return b"".join(lines)


def find(lines: list[bytes], block: list[bytes]) -> int | None:
    """Where ``block`` starts in ``lines`` as contiguous lines (the first place), or None."""
    if not block:
        return None
    size = len(block)
    for start in range(len(lines) - size + 1):
        if lines[start] == block[0] and lines[start : start + size] == block:
            return start
    return None


def block_ids(lines: list[bytes]) -> set[bytes]:
    return {m.group() for line in lines for m in BLOCK_ID.finditer(line)}


def insert_hunk(lines: list[bytes], old: list[bytes], at: int, added: list[bytes]) -> list[bytes]:
    ids = block_ids(added)
    if find(lines, added) is not None or (ids and ids <= block_ids(lines)):
        return lines  # already there
    start = at
    while start > 0 and not old[start - 1].strip():
        start -= 1
    if start > 0:  # after its neighbour line (and the blank lines the bot inserted after)
        place = find(lines, old[start - 1 : at])
        if place is not None:
            cut = place + at - start + 1
            return [*lines[:cut], *added, *lines[cut:]]
    for index in range(at - 1, -1, -1):  # else at the end of its section
        if HEADING.match(old[index]):
            heading = find(lines, [old[index]])
            if heading is None:
                break
            end = heading + 1
            while end < len(lines) and not HEADING.match(lines[end]):
                end += 1
            while end > heading + 1 and not lines[end - 1].strip():
                end -= 1
            if end > 0 and not lines[end - 1].endswith((b"\n", b"\r")):
                lines = [*lines[: end - 1], lines[end - 1] + b"\n", *lines[end:]]
            return [*lines[:end], *added, *lines[end:]]
    if at == 0 and not old:
        return [*added, *lines]
    raise Dropped("the lines and the section it adds to were changed on another device")


def replace_hunk(lines: list[bytes], removed: list[bytes], added: list[bytes]) -> list[bytes]:
    place = find(lines, removed)
    if place is not None:
        return [*lines[:place], *added, *lines[place + len(removed) :]]
    if added and find(lines, added) is not None:
        return lines  # already done
    gone = not any(line.strip() and line in lines for line in removed)
    if not added and gone and not block_ids(removed) & block_ids(lines):
        return lines  # already gone
    raise Dropped("it changes lines that were edited on another device")


# ---------------------------------------------------------------------------------------------
# Moving the working tree from one commit to another, journalled


def journal_path(config: Config) -> Path:
    return config.state_dir / JOURNAL_FILE


def move_to(repo: VaultRepo, config: Config, old: str | None, new: str) -> None:
    """Point the branch at ``new`` and bring the files from ``old`` to ``new``.

    Every file that changes must be as ``old`` has it (in the working tree and the index); otherwise
    nothing moves and SyncError names the files.
    """
    changes = repo.changed_files(old, new)
    waiting = [path for path, before, after in changes if not settled(repo, path, before, after)]
    if waiting:
        listed = ", ".join(waiting[:5]) + (", …" if len(waiting) > 5 else "")
        raise SyncError(
            f"sync waits: {listed} changed on the remote and {'has' if len(waiting) == 1 else 'have'} "
            "uncommitted edits (or untracked files) here; nothing was changed. Commit or move your edits "
            "aside, then run vault-tools sync again"
        )
    config.make_state_dir()
    note_edit.atomic_write(journal_path(config), json.dumps({"from": old, "to": new}).encode())
    repo.run("update-ref", "-m", "vault-tools sync", "HEAD", new, old or "")
    write_files(repo, changes)
    with contextlib.suppress(FileNotFoundError):
        journal_path(config).unlink()


def worktree(repo: VaultRepo, path: str) -> bytes | None:
    file = repo.root / path
    return file.read_bytes() if file.is_file() and not file.is_symlink() else None


def settled(repo: VaultRepo, path: str, before: bytes | None, after: bytes | None) -> bool:
    """The working tree and index of ``path`` hold ``before`` (or already ``after``)."""
    if worktree(repo, path) not in (before, after) or (repo.root / path).is_symlink():
        return False
    staged = index_blob(repo, path)
    allowed = {None if data is None else blob_id(repo, data) for data in (before, after)}
    return staged in allowed


def index_blob(repo: VaultRepo, path: str) -> str | None:
    out = repo.run("ls-files", "-s", "--", path).split()
    return out[1] if len(out) >= 3 else None


def blob_id(repo: VaultRepo, data: bytes) -> str:
    return repo.run("hash-object", "-t", "blob", "--stdin", stdin=data).strip()


def write_files(repo: VaultRepo, changes: list[tuple[str, bytes | None, bytes | None]]) -> None:
    args: list[str] = []
    removes: list[str] = []
    for path, _before, after in changes:
        file = repo.root / path
        if after is None:
            with contextlib.suppress(FileNotFoundError):
                file.unlink()
            removes.append(path)
            continue
        if worktree(repo, path) != after:
            note_edit.atomic_write(file, after)
        entry = repo.objects.tree_entries(repo.objects.commit_tree(repo.head_sha() or ""), path)
        if entry is not None:
            args += ["--cacheinfo", f"{entry[0]},{entry[2]},{path}"]
    if args:
        repo.run("update-index", "--add", *args)
    if removes:
        repo.run("update-index", "--force-remove", "--", *removes)
    repo.forget_index()


def recover(repo: VaultRepo, config: Config, warnings: list[str]) -> None:
    """Finish a move a killed sync left half-done (see :func:`move_to`)."""
    path = journal_path(config)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    old, new = data.get("from"), data.get("to")
    if isinstance(new, str) and repo.head_sha() == new:
        changes = repo.changed_files(old, new)
        mine = [c for c in changes if worktree(repo, c[0]) in (c[1], c[2])]
        for file, _before, _after in changes:
            if all(file != c[0] for c in mine):
                warnings.append(f"{file} was edited while a sync was interrupted; left as it is")
        write_files(repo, mine)
        warnings.append("finished a sync that was interrupted")
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
