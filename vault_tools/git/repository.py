"""Git for the maintenance bot: commit exactly the bot's change, nothing else, whatever state the repo is in.

Design
------
A bot commit is built without touching the person's working tree or staging area beyond the paths
it changed: the caller computes, for each path, the file as it is at HEAD plus only the bot's edit;
this module stores those blobs, writes a new tree from HEAD's tree with just those entries replaced,
creates the commit with the bot's identity (``vault-tools bot <bot@vault-tools.invalid>``, so no
user identity is needed; the one commit sync makes of a person's own notes passes theirs), points the index entries of those paths at the new blobs, and moves the
branch with ``git update-ref HEAD new old`` (which fails rather than overwrite a commit a person
made in between). A person's uncommitted edits to the same file therefore stay uncommitted in the
working tree: the commit is made *around* them. Hooks do not run for bot commits.

States the bot will not commit in:

* a merge, rebase, cherry-pick, revert or bisect in progress (:meth:`VaultRepo.in_progress`): the
  files may hold conflict markers, so the heartbeat skips the whole run with a message;
* a detached HEAD (a commit there is easily lost) (:meth:`VaultRepo.commit_blocker`): the
  heartbeat writes its changes and leaves the commits for the next run.

Git's lock files (``index.lock``, ref locks) are checked before a run (:meth:`VaultRepo.clear_locks`,
:mod:`vault_tools.git.locks`): one a crash left behind is removed with a warning, one a live process
holds is waited for and then reported (exit 5), never removed.

Objects are read and written by :class:`vault_tools.git.objects.ObjectStore` (SHA-1 and SHA-256
repositories alike); this module moves the branch and the index.

A vault that is not in a repository gets one (:func:`init_repo`); a repository whose branch has no
commit yet gets a *baseline* commit of the vault's memory files before the bot's first change, so
that every later commit shows only what the bot did.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vault_tools.errors import GitError, UsageError
from vault_tools.git.objects import Identity, ObjectStore
from vault_tools.git.refs import RefMover

if TYPE_CHECKING:
    import git

BOT_NAME = "vault-tools bot"
BOT_EMAIL = "bot@vault-tools.invalid"
LOCK_RETRY_SECONDS = 5.0  # a lock taken by another git command for a moment (a status refresh)
FILE_MODE = 0o100644
GITIGNORE_LINE = ".vault-tools/\n"

Restage = Callable[[str, bytes], "bytes | None"]


def bot_env(identity: Identity | None = None) -> dict[str, str]:
    """The environment of every git command: bot identity (or ``identity``, a person's (name,
    email) for the commit sync makes of their notes), no prompts, C locale messages."""
    name, email = identity or (BOT_NAME, BOT_EMAIL)
    env = dict(os.environ)
    env.update(
        GIT_AUTHOR_NAME=name,
        GIT_AUTHOR_EMAIL=email,
        GIT_COMMITTER_NAME=name,
        GIT_COMMITTER_EMAIL=email,
        GIT_TERMINAL_PROMPT="0",
        LC_ALL="C",
    )
    return env


def run_git(
    cwd: Path, *args: str, stdin: bytes | None = None, check: bool = True, identity: Identity | None = None
) -> str:
    """Run one git command in ``cwd``; a failure becomes a :class:`GitError` quoting git."""
    try:
        result = subprocess.run(
            ["git", *args], cwd=cwd, env=bot_env(identity), input=stdin, capture_output=True, check=False
        )
    except OSError as exc:
        raise GitError(f"git could not be run ({exc.strerror}); install git or put it on PATH") from None
    if check and result.returncode != 0:
        message = result.stderr.decode("utf-8", "replace").strip() or f"exit code {result.returncode}"
        raise GitError(f"git {args[0]} failed in {cwd}: {message}")
    return result.stdout.decode("utf-8", "replace")


#: What a repository can be in the middle of (a file in its git folder): what, and how to finish it.
IN_PROGRESS = (
    ("MERGE_HEAD", "a merge", "git merge --continue or git merge --abort"),
    ("rebase-merge", "a rebase", "git rebase --continue or git rebase --abort"),
    ("rebase-apply", "a rebase or git am", "git rebase --continue/--abort or git am --abort"),
    ("CHERRY_PICK_HEAD", "a cherry-pick", "git cherry-pick --continue or --abort"),
    ("REVERT_HEAD", "a revert", "git revert --continue or --abort"),
    ("BISECT_LOG", "a bisect", "git bisect reset"),
)


def ref_value(ref: str, git_dir: Path, common: Path) -> str | None:
    """The sha ``ref`` (``refs/heads/main``) holds, read from its file or packed-refs; None: none."""
    for base in (git_dir, common):
        with contextlib.suppress(OSError):
            value = (base / ref).read_text(encoding="utf-8").strip()
            if value:
                return value
    with contextlib.suppress(OSError):
        for line in (common / "packed-refs").read_text(encoding="utf-8").splitlines():
            sha, _space, name = line.partition(" ")
            if name.strip() == ref:
                return sha
    return None


@dataclass(frozen=True)
class FileChange:
    """One file of a commit: vault-relative path and its bytes before and after (None: absent)."""

    path: str
    before: bytes | None
    after: bytes | None


@dataclass(frozen=True)
class BotCommit:
    sha: str
    subject: str
    message: str
    files: list[FileChange]
    trailers: dict[str, list[str]] = field(default_factory=dict)


class VaultRepo:
    """The git repository that holds a vault (the vault may be a sub-folder of it)."""

    def __init__(self, repo: git.Repo, vault: Path) -> None:
        self.repo = repo
        self.root = Path(str(repo.working_tree_dir)).resolve()
        self.vault = vault.resolve()
        rel = self.vault.relative_to(self.root).as_posix()
        self.prefix = "" if rel == "." else rel + "/"
        self.git_dir = Path(repo.git_dir).resolve()
        objects_dir = Path(repo.common_dir).resolve() / "objects"
        self.objects = ObjectStore(self.root, self.run, bot_env(), objects_dir)
        self.refs = RefMover(self.root, bot_env())  # the branch moves of bot commits
        self._index_cache: dict[str, str | None] = {}
        # What HEAD holds for the paths the bot reads and writes, valid while HEAD is _head_sha.
        self._head_sha: str | None = None
        self._head_files: dict[str, tuple[bytes, int, str] | None] = {}

    # -- opening ---------------------------------------------------------------------------

    @classmethod
    def open(cls, vault: Path) -> VaultRepo | None:
        """The repository whose work tree holds ``vault``; None when there is none."""
        try:
            import git
        except ImportError as exc:  # GitPython refuses to import without a git executable
            raise GitError(f"git is not available ({exc}); install git") from None
        try:
            repo = git.Repo(vault, search_parent_directories=True)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError):
            return None
        if repo.bare or repo.working_tree_dir is None:
            repo.close()
            return None
        return cls(repo, vault)

    def close(self) -> None:
        self.objects.close()
        self.refs.close()
        self.repo.close()

    def __enter__(self) -> VaultRepo:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run(
        self, *args: str, stdin: bytes | None = None, check: bool = True, identity: Identity | None = None
    ) -> str:
        """Run git in the repository; a lock another git command holds for a moment is waited for."""
        deadline = time.monotonic() + LOCK_RETRY_SECONDS
        while True:
            try:
                return run_git(self.root, *args, stdin=stdin, check=check, identity=identity)
            except GitError as exc:
                if ".lock': File exists" not in str(exc) or time.monotonic() >= deadline:
                    raise
            time.sleep(0.05)

    def repo_path(self, path: str) -> str:
        return self.prefix + path

    # -- state -----------------------------------------------------------------------------

    def in_progress(self) -> str | None:
        """Why the files must not be touched now (merge, rebase, ...), or None."""
        for name, what, fix in IN_PROGRESS:
            if (self.git_dir / name).exists():
                return (
                    f"the vault's repository ({self.root}) is in the middle of {what}; "
                    f"the heartbeat skipped this run. Finish it ({fix}) and run the heartbeat again."
                )
        return None

    def commit_blocker(self) -> str | None:
        """Why the bot cannot commit right now (files may still be written), or None."""
        if self.repo.head.is_detached:
            return (
                "HEAD is detached (not on a branch), where bot commits would be easy to lose; check out "
                "a branch (git switch main) and the next run commits the changes"
            )
        return None

    def clear_locks(
        self,
        *,
        wait_seconds: float,
        grace_seconds: float,
        warn: Callable[[str], None],
        waiting: Callable[[str], None] | None = None,
    ) -> None:
        """Remove git locks a crash left behind, wait for live ones (see :mod:`vault_tools.git.locks`).

        Raises LockedError naming the lock when a live process still holds one after ``wait_seconds``.
        """
        from vault_tools.git import locks as gitlocks

        ours = frozenset({self.objects.pid} if self.objects.pid else set())
        for git_dir in dict.fromkeys((self.git_dir, Path(self.repo.common_dir).resolve())):
            gitlocks.clear(
                git_dir,
                self.root,
                wait_seconds=wait_seconds,
                grace_seconds=grace_seconds,
                warn=warn,
                ignore=ours,
                waiting=waiting,
            )

    def head_sha(self) -> str | None:
        """The commit HEAD points at (None before the first commit), read from the ref files."""
        common = Path(self.repo.common_dir)
        try:
            head = (self.git_dir / "HEAD").read_text(encoding="utf-8").strip()
        except OSError:
            return None
        if not head.startswith("ref: ") or (common / "reftable").exists():
            return self.rev_parse("HEAD")  # detached, or refs only git can read
        return ref_value(head[5:].strip(), self.git_dir, common)

    def rev_parse(self, rev: str) -> str | None:
        """The commit ``rev`` names, or None when it names none."""
        out = self.run("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", check=False).strip()
        return out or None

    def _head_file(self, path: str) -> tuple[bytes, int, str] | None:
        """(bytes, mode, blob sha) of vault-relative ``path`` at HEAD, cached while HEAD does not move."""
        head = self.head_sha()
        if head != self._head_sha:
            self._head_sha, self._head_files = head, {}
        if path not in self._head_files:
            found = None
            if head is not None:
                entry = self.objects.tree_entries(self.objects.commit_tree(head), self.repo_path(path))
                if entry is not None and entry[1] == "blob":
                    found = (self.objects.data(entry[2]), int(entry[0], 8), entry[2])
            self._head_files[path] = found
        return self._head_files[path]

    def read_head(self, path: str) -> bytes | None:
        """The bytes of vault-relative ``path`` at HEAD, or None when HEAD does not have it."""
        found = self._head_file(path)
        return found[0] if found is not None else None

    def tracked(self, path: str) -> bool:
        return self._head_file(path) is not None

    # -- committing ------------------------------------------------------------------------

    def commit(
        self,
        contents: Mapping[str, bytes | None],
        message: str,
        *,
        restage: Restage | None = None,
        identity: Identity | None = None,
    ) -> str:
        """Commit ``contents`` (vault-relative path → bytes, None deletes) on top of HEAD; return the sha.

        Only those paths change, in the commit and in the index; the working tree is not touched.
        ``restage(path, staged_bytes)`` re-applies the change to a version a person has staged for
        the same path (None leaves their staged version as it is). The commit is the bot's unless
        ``identity`` names a person.
        """
        parent_sha = self.head_sha()
        blobs: dict[str, tuple[str, int] | None] = {}
        for path, data in contents.items():
            if data is None:
                blobs[path] = None
                continue
            head = self._head_file(path)
            blobs[path] = (self.objects.hash_blob(data), head[1] if head is not None else FILE_MODE)
        new = self.objects.make_commit(
            parent_sha, {self.repo_path(p): v for p, v in blobs.items()}, message, identity=identity
        )
        self.update_index(blobs, restage)
        if identity is None:
            self.refs.move(new, parent_sha)
        else:  # a person's commit (sync): the reflog names them
            self.run("update-ref", "-m", f"vault-tools: {message[:72]}", "HEAD", new, parent_sha or "")
        known = dict(self._head_files) if self._head_sha == parent_sha else {}
        for path, data in contents.items():
            value = blobs[path]
            known[path] = (data, value[1], value[0]) if data is not None and value is not None else None
        self._head_sha, self._head_files = new, known
        return new

    def forget_index(self) -> None:
        """Drop what is cached about the index (after something else changed it)."""
        self._index_cache.clear()

    def index_entry(self, path: str) -> str | None:
        """The blob sha the index holds for vault-relative ``path`` (None: not in the index)."""
        if path not in self._index_cache:
            out = self.run("ls-files", "-s", "--", self.repo_path(path))
            sha = None
            for line in out.splitlines():
                meta, _tab, _name = line.partition("\t")
                parts = meta.split()
                if len(parts) == 3 and parts[2] == "0":
                    sha = parts[1]
            self._index_cache[path] = sha
        return self._index_cache[path]

    def update_index(self, blobs: Mapping[str, tuple[str, int] | None], restage: Restage | None) -> None:
        """Point the index at the committed blobs, unless a person staged something else there."""
        args: list[str] = []
        removes: list[str] = []
        for path, value in blobs.items():
            head = self._head_file(path)
            head_sha = head[2] if head is not None else None
            staged = self.index_entry(path)
            target = value
            if staged != head_sha:  # a person staged something of their own for this path
                if staged is None or restage is None:
                    continue
                redone = restage(path, self.objects.data(staged))
                if redone is None:
                    continue  # leave what the person staged as it is
                target = (self.objects.hash_blob(redone), value[1] if value else FILE_MODE)
            if target is None:
                removes.append(self.repo_path(path))
                self._index_cache[path] = None
            else:
                args += ["--cacheinfo", f"{target[1]:o},{target[0]},{self.repo_path(path)}"]
                self._index_cache[path] = target[0]
        if args:
            self.run("update-index", "--add", *args)
        if removes:
            self.run("update-index", "--force-remove", "--", *removes)

    def baseline(self, paths: Iterable[str], message: str) -> str | None:
        """Commit the working-tree content of ``paths`` (vault-relative) as they are; None if nothing."""
        contents: dict[str, bytes | None] = {}
        for path in paths:
            file = self.vault / path
            if file.is_file():
                contents[path] = file.read_bytes()
        if not contents:
            return None
        return self.commit(contents, message)

    # -- reading history -------------------------------------------------------------------

    def bot_commit(self, rev: str) -> BotCommit:
        """The bot commit ``rev``, with the vault files it changed; UsageError if it is not one."""
        sha = self.rev_parse(rev) if not rev.startswith("-") else None
        if sha is None:
            raise UsageError(f"{rev}: no such commit in {self.root}")
        author, parents, message = self.run("log", "-1", "--format=%an <%ae>%x00%P%x00%B", sha).split("\0", 2)
        if not author.endswith(f"<{BOT_EMAIL}>"):
            name = author.rsplit(" <", 1)[0]
            raise UsageError(
                f"{sha[:10]} was made by {name}, not by the vault-tools bot; "
                "undo only reverts bot commits (use git revert for others)"
            )
        if len(parents.split()) != 1:
            raise UsageError(f"{sha[:10]} has no single parent; it cannot be undone automatically")
        files = [
            FileChange(path[len(self.prefix) :], before, after)
            for path, before, after in self.changed_files(parents.strip(), sha)
            if path.startswith(self.prefix)
        ]
        message = message.rstrip("\n") + "\n"
        return BotCommit(sha, message.splitlines()[0], message, files, parse_trailers(message))

    def changed_files(self, old: str | None, new: str) -> list[tuple[str, bytes | None, bytes | None]]:
        """(repo path, bytes at ``old``, bytes at ``new``) of every file that differs between two commits."""
        args = ["diff-tree", "-r", "-z", "--no-renames", "--name-only", old or "--root", new]
        paths = [p for p in self.run(*args).split("\0") if p and p != new]
        return [(p, self.read_at(old, p), self.read_at(new, p)) for p in paths]

    def read_at(self, commit: str | None, path: str) -> bytes | None:
        """The bytes of repo-relative ``path`` in ``commit`` (None: not a file there)."""
        if commit is None:
            return None
        entry = self.objects.tree_entries(self.objects.commit_tree(commit), path)
        return self.objects.data(entry[2]) if entry is not None and entry[1] == "blob" else None

    def bot_messages(self, max_count: int = 5000) -> list[tuple[str, str]]:
        """(sha, message) of the bot's commits, newest first."""
        if self.head_sha() is None:
            return []
        out = self.run(
            "log", f"--max-count={max_count}", f"--author={BOT_EMAIL}", "--format=%H%x00%B%x1e", "HEAD"
        )
        result: list[tuple[str, str]] = []
        for record in out.split("\x1e"):
            sha, _nul, message = record.strip("\n").partition("\x00")
            if sha:
                result.append((sha.strip(), message))
        return result

    def push(self, remote: str) -> str:
        """Push the current branch; returns git's message. Raises GitError on failure."""
        return self.run("push", "--quiet", remote, "HEAD")


def parse_trailers(message: str) -> dict[str, list[str]]:
    """``Key: value`` lines of the message's last paragraph."""
    paragraphs = [p for p in message.strip().split("\n\n") if p.strip()]
    if len(paragraphs) < 2:
        return {}
    trailers: dict[str, list[str]] = {}
    for line in paragraphs[-1].splitlines():
        key, sep, value = line.partition(": ")
        if sep and key and " " not in key:
            trailers.setdefault(key, []).append(value.strip())
    return trailers


def init_repo(vault: Path) -> VaultRepo:
    """``git init`` the vault (with a ``.gitignore`` for ``.vault-tools/`` when it has none)."""
    run_git(vault, "init", "--quiet")
    gitignore = vault / ".gitignore"
    if not gitignore.exists():
        from vault_tools.notes.edit import atomic_write

        atomic_write(gitignore, GITIGNORE_LINE.encode("utf-8"))
    repo = VaultRepo.open(vault)
    if repo is None:  # pragma: no cover - git init just succeeded
        raise GitError(f"{vault}: git init did not create a repository")
    return repo


def describe(vault: Path) -> dict[str, Any]:
    """A short account of the vault's repository for ``vault-tools status``."""
    try:
        repo = VaultRepo.open(vault)
    except GitError as exc:
        return {"repository": None, "summary": str(exc)}
    if repo is None:
        return {"repository": None, "summary": "not a git repository (the heartbeat creates one)"}
    with repo:
        head = repo.repo.head
        branch = None if head.is_detached else head.reference.name
        problem = repo.in_progress() or repo.commit_blocker()
        status = repo.run(
            "status", "--porcelain", "--untracked-files=all", "--", repo.prefix or ".", check=False
        ).splitlines()
        changed = len([line for line in status if line.strip() and not line.startswith("??")])
        state_dir = f"{repo.prefix}.vault-tools/"
        untracked = len(
            [line for line in status if line.startswith("??") and not line[3:].startswith(state_dir)]
        )
        parts = [f"branch {branch}" if branch else "detached HEAD"]
        if changed:
            parts.append(f"{changed} uncommitted change{'s' if changed != 1 else ''}")
        if untracked:
            parts.append(f"{untracked} untracked file{'s' if untracked != 1 else ''}")
        if not changed and not untracked:
            parts.append("clean")
        if repo.head_sha() is None:
            parts.append("no commits yet")
        if problem:
            parts.append(problem.split(";")[0])
        return {
            "repository": str(repo.root),
            "branch": branch,
            "uncommitted": changed,
            "untracked": untracked,
            "problem": problem,
            "summary": ", ".join(parts),
        }
