"""Git objects of a vault's repository: read through one ``git cat-file --batch``, written as loose objects.

Objects are read through one long-lived ``git cat-file --batch``. Blobs, trees and commits are
written the way git writes a loose object (``objects/ab/cdef…``: the zlib-compressed
``"<type> <size>\0" + content``, named by its hash in the repository's object format, SHA-1 or
SHA-256, into a temporary file renamed into place), so a bot commit costs no process of its own: a
heartbeat makes hundreds. Only what git would do differently goes through its plumbing: a commit
whose dates come from ``GIT_AUTHOR_DATE``/``GIT_COMMITTER_DATE`` or whose identity holds characters
git cleans up (``commit-tree``), and a repository whose objects live elsewhere
(``GIT_OBJECT_DIRECTORY``: ``hash-object`` and ``mktree``). Trees never change, so what was read of
them is kept for the life of the store.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import subprocess
import tempfile
import time
import zlib
from collections.abc import Callable, Mapping
from pathlib import Path

from vault_tools.errors import GitError

Identity = tuple[str, str]  # (name, email) a commit is made as
Runner = Callable[..., str]  # VaultRepo.run: git in the repository, a passing lock waited for


class ObjectStore:
    """Reads and writes the objects of one repository; the caller moves refs and the index."""

    def __init__(self, root: Path, run: Runner, env: dict[str, str], objects_dir: Path) -> None:
        self.root = root
        self.run = run
        self.env = env
        # git's own plumbing when the objects live where the environment says, not in the repository
        self.directory = None if env.get("GIT_OBJECT_DIRECTORY") else objects_dir
        self._format: str | None = None
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
            self._trees[tree] = parse_tree(self.data(tree), len(tree) // 2)
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
        if self.directory is None:
            return self.run("hash-object", "-w", "-t", "blob", "--stdin", stdin=data).strip()
        return self.write("blob", data)

    @property
    def object_format(self) -> str:
        """``sha1`` or ``sha256``: the hash that names the repository's objects."""
        if self._format is None:
            self._format = self.run("rev-parse", "--show-object-format").strip() or "sha1"
        return self._format

    def write(self, kind: str, content: bytes) -> str:
        """Store one object as git stores a loose one; its sha (an object already there is kept)."""
        assert self.directory is not None
        data = f"{kind} {len(content)}\0".encode("ascii") + content
        sha = hashlib.new(self.object_format, data).hexdigest()
        folder = self.directory / sha[:2]
        target = folder / sha[2:]
        if target.exists():
            return sha
        folder.mkdir(exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=folder, prefix="tmp_obj_")
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(zlib.compress(data, 1))  # git's core.looseCompression default
            os.chmod(temporary, 0o444)
            os.replace(temporary, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
        return sha

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
        if self.directory is None:
            listing = "".join(f"{mode} {kind} {sha}\t{name}\0" for name, (mode, kind, sha) in entries.items())
            sha = self.run("mktree", "-z", stdin=listing.encode("utf-8", "surrogateescape")).strip()
        else:
            sha = self.write("tree", tree_content(entries))
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
        name, email = identity or (self.env["GIT_AUTHOR_NAME"], self.env["GIT_AUTHOR_EMAIL"])
        if self.directory is None or not plain_identity(name, email) or DATES & set(os.environ):
            args = ["commit-tree", "--no-gpg-sign", tree, "-F", "-"]
            if parent is not None:
                args[3:3] = ["-p", parent]
            sha = self.run(*args, stdin=message.encode("utf-8"), identity=identity).strip()
        else:
            sha = self.write("commit", commit_content(tree, parent, f"{name} <{email}>", message))
        self._commit_trees[sha] = tree
        return sha


DATES = frozenset({"GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE"})
TREE_MODE = 0o40000


def plain_identity(name: str, email: str) -> bool:
    """Whether git would write ``name <email>`` as it is (no characters it strips or refuses)."""
    text = name + email
    return bool(name.strip()) and not any(c in text for c in "<>\n\r\0") and text == text.strip()


def parse_tree(data: bytes, sha_bytes: int) -> dict[str, tuple[str, str, str]]:
    """name -> (mode, type, sha) of a tree object's content (``ls-tree``'s fields; names that are
    not UTF-8 kept byte for byte through surrogate escapes)."""
    entries: dict[str, tuple[str, str, str]] = {}
    at = 0
    while at < len(data):
        space = data.index(b" ", at)
        nul = data.index(b"\0", space)
        mode = int(data[at:space], 8)
        name = data[space + 1 : nul].decode("utf-8", "surrogateescape")
        sha = data[nul + 1 : nul + 1 + sha_bytes].hex()
        kind = "tree" if mode == TREE_MODE else "commit" if mode == 0o160000 else "blob"
        entries[name] = (f"{mode:06o}", kind, sha)
        at = nul + 1 + sha_bytes
    return entries


def tree_content(entries: Mapping[str, tuple[str, str, str]]) -> bytes:
    """A tree object's content: entries in git's order (a folder sorts as if its name ended in /)."""

    def order(name: str) -> bytes:
        raw = name.encode("utf-8", "surrogateescape")
        return raw + b"/" if entries[name][1] == "tree" else raw

    return b"".join(
        f"{int(entries[name][0], 8):o} ".encode("ascii")
        + name.encode("utf-8", "surrogateescape")
        + b"\0"
        + bytes.fromhex(entries[name][2])
        for name in sorted(entries, key=order)
    )


def commit_content(tree: str, parent: str | None, who: str, message: str) -> bytes:
    """A commit object's content, as ``git commit-tree`` writes it (author and committer now)."""
    now = time.time()
    offset = time.localtime(now).tm_gmtoff // 60
    stamp = f"{int(now)} {'-' if offset < 0 else '+'}{abs(offset) // 60:02d}{abs(offset) % 60:02d}"
    lines = [f"tree {tree}", *([f"parent {parent}"] if parent else []), f"author {who} {stamp}"]
    lines.append(f"committer {who} {stamp}")
    return ("\n".join(lines) + "\n\n" + message).encode("utf-8")


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
