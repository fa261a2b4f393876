"""Git objects of a vault's repository: read through one ``git cat-file --batch``, written by git's plumbing.

Blobs, trees and commits are made by ``hash-object``, ``mktree`` and ``commit-tree`` and read
through one long-lived ``git cat-file --batch``, so SHA-1 and SHA-256 repositories work alike.
Trees never change, so what was read of them is kept for the life of the store.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path

from vault_tools.errors import GitError

Identity = tuple[str, str]  # (name, email) a commit is made as
Runner = Callable[..., str]  # VaultRepo.run: git in the repository, a passing lock waited for


class ObjectStore:
    """Reads and writes the objects of one repository; the caller moves refs and the index."""

    def __init__(self, root: Path, run: Runner, env: dict[str, str]) -> None:
        self.root = root
        self.run = run
        self.env = env
        self._reader: ObjectReader | None = None
        self._trees: dict[str, dict[str, tuple[str, str, str]]] = {}
        self._commit_trees: dict[str, str] = {}

    @property
    def reader(self) -> ObjectReader:
        if self._reader is None:
            self._reader = ObjectReader(self.root, self.env)
        return self._reader

    @property
    def pid(self) -> int | None:
        """The pid of the ``cat-file`` process, when one runs (a lock it holds is ours)."""
        return self._reader.pid if self._reader is not None else None

    def data(self, sha: str) -> bytes:
        """The content of object ``sha``; GitError when the repository lacks it."""
        return self.reader.data(sha)

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    def commit_tree(self, commit: str) -> str:
        """The tree sha of ``commit``."""
        if commit not in self._commit_trees:
            header = self.reader.data(commit).split(b"\n", 1)[0].decode("ascii")
            self._commit_trees[commit] = header.split()[1]
        return self._commit_trees[commit]

    def tree(self, tree: str) -> dict[str, tuple[str, str, str]]:
        """name -> (mode, type, sha) of ``tree``, cached (trees never change)."""
        if tree not in self._trees:
            out = self.run("ls-tree", "-z", tree)
            entries: dict[str, tuple[str, str, str]] = {}
            for record in out.split("\0"):
                if record:
                    meta, _tab, name = record.partition("\t")
                    mode, kind, sha = meta.split()
                    entries[name] = (mode, kind, sha)
            self._trees[tree] = entries
        return self._trees[tree]

    def tree_entries(self, tree: str, path: str) -> tuple[str, str, str] | None:
        """(mode, type, sha) of repo-relative ``path`` under ``tree``; None when it is not there."""
        *folders, name = path.split("/")
        for folder in folders:
            entry = self.tree(tree).get(folder)
            if entry is None or entry[1] != "tree":
                return None
            tree = entry[2]
        return self.tree(tree).get(name)

    def hash_blob(self, data: bytes) -> str:
        """Store ``data`` as a blob; its sha."""
        return self.run("hash-object", "-w", "-t", "blob", "--stdin", stdin=data).strip()

    def make_tree(
        self, tree: str | None, changes: Mapping[tuple[str, ...], tuple[str, int] | None]
    ) -> str | None:
        """A tree like ``tree`` with the ``changes`` (path parts -> (blob sha, mode) or None);
        None when the result is empty."""
        entries = dict(self.tree(tree)) if tree is not None else {}
        nested: dict[str, dict[tuple[str, ...], tuple[str, int] | None]] = {}
        for parts, value in changes.items():
            if len(parts) > 1:
                nested.setdefault(parts[0], {})[parts[1:]] = value
            elif value is None:
                entries.pop(parts[0], None)
            else:
                entries[parts[0]] = (f"{value[1]:06o}", "blob", value[0])
        for name, sub in nested.items():
            existing = entries.get(name)
            sub_sha = self.make_tree(existing[2] if existing and existing[1] == "tree" else None, sub)
            if sub_sha is None:
                entries.pop(name, None)
            else:
                entries[name] = ("040000", "tree", sub_sha)
        if not entries and changes:
            return None
        listing = "".join(f"{mode} {kind} {sha}\t{name}\0" for name, (mode, kind, sha) in entries.items())
        sha = self.run("mktree", "-z", stdin=listing.encode("utf-8")).strip()
        self._trees[sha] = entries
        return sha

    def make_commit(
        self,
        parent: str | None,
        contents: Mapping[str, tuple[str, int] | None],
        message: str,
        *,
        identity: Identity | None = None,
    ) -> str:
        """A commit by the bot (or ``identity``) on ``parent`` with repo-relative ``contents``
        (path -> (blob, mode) or None to delete) replaced; HEAD and the index are not touched."""
        changes = {tuple(p.split("/")): v for p, v in contents.items()}
        base = self.commit_tree(parent) if parent is not None else None
        tree = self.make_tree(base, changes) or self.make_tree(None, {})
        assert tree is not None
        args = ["commit-tree", "--no-gpg-sign", tree, "-F", "-"]
        if parent is not None:
            args[3:3] = ["-p", parent]
        sha = self.run(*args, stdin=message.encode("utf-8"), identity=identity).strip()
        self._commit_trees[sha] = tree
        return sha


class ObjectReader:
    """Reads objects through one long-lived ``git cat-file --batch`` (any object format)."""

    def __init__(self, root: Path, env: dict[str, str]) -> None:
        self.root = root
        self.env = env
        self._process: subprocess.Popen[bytes] | None = None

    def data(self, sha: str) -> bytes:
        """The content of object ``sha``; GitError when the repository lacks it."""
        process = self._start()
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(sha.encode("ascii") + b"\n")
        process.stdin.flush()
        header = process.stdout.readline().split()
        if len(header) != 3:
            raise GitError(f"git cat-file could not read object {sha} in {self.root}")
        data = process.stdout.read(int(header[2]) + 1)
        return data[:-1]

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def _start(self) -> subprocess.Popen[bytes]:
        if self._process is None or self._process.poll() is not None:
            self._process = subprocess.Popen(
                ["git", "cat-file", "--batch"],
                cwd=self.root,
                env=self.env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        return self._process

    def close(self) -> None:
        if self._process is not None:
            with contextlib.suppress(OSError):
                assert self._process.stdin is not None
                self._process.stdin.close()
            self._process.wait()
            if self._process.stdout is not None:
                self._process.stdout.close()
            self._process = None
