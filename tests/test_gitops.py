"""Bot commits with real git in temp dirs: exactly the bot's change, around a person's edits."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from vault_tools.errors import GitError, UsageError
from vault_tools.git import repository as gitops

HUMAN = ["-c", "user.name=Lin", "-c", "user.email=lin@example.com", "-c", "commit.gpgsign=false"]


def git(repo: Path, *args: str) -> str:
    result = subprocess.run(["git", *HUMAN, *args], cwd=repo, capture_output=True, text=True, check=True)
    return result.stdout


def make_vault(tmp_path: Path, memory: str = "# Memory\n\n## Facts\n\n- one\n") -> Path:
    vault = tmp_path / "vault"
    (vault / "memory").mkdir(parents=True)
    (vault / "MEMORY.md").write_text(memory, encoding="utf-8")
    (vault / "memory" / "2026-11-20.md").write_text("- a note\n", encoding="utf-8")
    return vault


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[gitops.VaultRepo]:
    vault = make_vault(tmp_path)
    git(vault, "init", "-q")
    git(vault, "add", "-A")
    git(vault, "commit", "-qm", "start")
    opened = gitops.VaultRepo.open(vault)
    assert opened is not None
    yield opened
    opened.close()


def test_not_a_repository_then_init_with_gitignore(tmp_path: Path) -> None:
    vault = make_vault(tmp_path)
    assert gitops.VaultRepo.open(vault) is None
    with gitops.init_repo(vault) as repo:
        assert repo.head_sha() is None
        assert (vault / ".gitignore").read_text() == ".vault-tools/\n"
        sha = repo.baseline([".gitignore", "MEMORY.md", "memory/2026-11-20.md"], "memory: start tracking")
        assert sha is not None
    assert (
        git(vault, "log", "--format=%an <%ae>|%s")
        == "vault-tools bot <bot@vault-tools.invalid>|memory: start tracking\n"
    )
    assert git(vault, "status", "--porcelain") == ""


def test_commit_holds_only_the_bot_change_and_leaves_the_persons_edit(repo: gitops.VaultRepo) -> None:
    vault = repo.vault
    head = repo.read_head("MEMORY.md")
    assert head is not None
    (vault / "MEMORY.md").write_text(head.decode() + "- the person's uncommitted line\n", encoding="utf-8")
    bot = head + b"- the bot's line\n"
    sha = repo.commit({"MEMORY.md": bot}, 'memory: promote "x"\n\nBlock: m-aaaaaa\n')
    # the working tree: the person's edit plus the bot's line (as the heartbeat writes it)
    (vault / "MEMORY.md").write_text(head.decode() + "- the person's uncommitted line\n- the bot's line\n")
    assert git(vault, "show", f"{sha}:MEMORY.md").encode() == bot
    assert git(vault, "show", "--format=", "--name-only", sha).split() == ["MEMORY.md"]
    assert git(vault, "diff", "--cached") == ""  # nothing staged behind the person's back
    added = [line for line in git(vault, "diff").splitlines() if line.startswith("+") and line[1:2] != "+"]
    assert added == ["+- the person's uncommitted line"]  # the person's edit stays theirs, uncommitted
    assert git(vault, "log", "-1", "--format=%an|%cn", sha) == "vault-tools bot|vault-tools bot\n"


def test_new_file_in_a_new_folder_and_fsck(repo: gitops.VaultRepo) -> None:
    sha = repo.commit(
        {"memory/archive/2026-12.md": b"# Archive\n- item\n", "MEMORY.md": b"# Memory\n"}, 'memory: prune "x"'
    )
    vault = repo.vault
    assert git(vault, "show", "--format=", "--name-only", sha).split() == [
        "MEMORY.md",
        "memory/archive/2026-12.md",
    ]
    assert git(vault, "ls-tree", "-r", "--name-only", sha).split() == [
        "MEMORY.md",
        "memory/2026-11-20.md",
        "memory/archive/2026-12.md",
    ]
    git(vault, "fsck", "--strict")
    # the index follows the commit for those paths; the working tree is untouched
    staged = git(vault, "diff", "--cached", "--name-only")
    assert staged == ""


def test_deleting_a_file_and_an_emptied_folder(repo: gitops.VaultRepo) -> None:
    repo.commit({"memory/archive/2026-12.md": b"x\n"}, "add")
    sha = repo.commit({"memory/archive/2026-12.md": None}, "remove")
    assert "archive" not in git(repo.vault, "ls-tree", "-r", "--name-only", sha)
    git(repo.vault, "fsck", "--strict")


def test_a_vault_inside_a_bigger_repository(tmp_path: Path) -> None:
    outer = tmp_path / "dotfiles"
    vault = make_vault(outer)
    git(outer, "init", "-q")
    git(outer, "add", "-A")
    git(outer, "commit", "-qm", "start")
    with gitops.VaultRepo.open(vault) as repo:  # type: ignore[union-attr]
        assert repo.prefix == "vault/"
        assert repo.read_head("MEMORY.md") == (vault / "MEMORY.md").read_bytes()
        sha = repo.commit({"MEMORY.md": b"# changed\n"}, "memory: x")
    assert git(outer, "show", "--format=", "--name-only", sha).split() == ["vault/MEMORY.md"]


def test_what_a_person_staged_keeps_their_change_plus_the_bot_change(repo: gitops.VaultRepo) -> None:
    vault = repo.vault
    head = (vault / "MEMORY.md").read_text()
    (vault / "MEMORY.md").write_text("# Staged title\n" + head.split("\n", 1)[1])
    git(vault, "add", "MEMORY.md")
    repo._index_cache.clear()

    def restage(path: str, staged: bytes) -> bytes:
        return staged + b"- bot\n"

    sha = repo.commit({"MEMORY.md": head.encode() + b"- bot\n"}, "memory: promote", restage=restage)
    assert git(vault, "show", f"{sha}:MEMORY.md") == head + "- bot\n"
    staged = git(vault, "show", ":MEMORY.md")
    assert staged.startswith("# Staged title\n") and staged.endswith("- bot\n")


def test_never_overwrites_a_commit_a_person_made_meanwhile(
    repo: gitops.VaultRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = gitops.VaultRepo.update_index

    def person_commits_first(self: gitops.VaultRepo, *args: object, **kwargs: object) -> None:
        (self.vault / "memory" / "2026-11-21.md").write_text("- theirs\n")
        git(self.vault, "add", "memory/2026-11-21.md")
        git(self.vault, "commit", "-qm", "theirs")
        original(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(gitops.VaultRepo, "update_index", person_commits_first)
    with pytest.raises(GitError, match="update-ref"):
        repo.commit({"MEMORY.md": b"# bot\n"}, "memory: promote")
    assert git(repo.vault, "log", "-1", "--format=%s") == "theirs\n"


def test_states_the_bot_will_not_touch_or_commit_in(repo: gitops.VaultRepo) -> None:
    git_dir = repo.git_dir
    assert repo.in_progress() is None and repo.commit_blocker() is None
    (git_dir / "MERGE_HEAD").write_text(repo.head_sha() or "")
    assert "middle of a merge" in (repo.in_progress() or "")
    (git_dir / "MERGE_HEAD").unlink()
    (git_dir / "rebase-merge").mkdir()
    assert "rebase" in (repo.in_progress() or "")
    (git_dir / "rebase-merge").rmdir()
    git(repo.vault, "checkout", "-q", "--detach")
    assert "detached" in (repo.commit_blocker() or "")


def test_bot_commit_reads_files_and_trailers_and_refuses_other_commits(repo: gitops.VaultRepo) -> None:
    before = repo.read_head("MEMORY.md")
    message = 'memory: promote "x"\n\nAdded.\n\nSource: memory/2026-11-20.md:1\nBlock: m-abcdef\n'
    sha = repo.commit({"MEMORY.md": (before or b"") + b"- x ^m-abcdef\n"}, message)
    info = repo.bot_commit(sha[:10])
    assert info.subject == 'memory: promote "x"'
    assert info.trailers == {"Source": ["memory/2026-11-20.md:1"], "Block": ["m-abcdef"]}
    assert [(f.path, f.before, f.after) for f in info.files] == [
        ("MEMORY.md", before, (before or b"") + b"- x ^m-abcdef\n")
    ]
    assert repo.bot_messages()[0][0] == sha
    first = git(repo.vault, "rev-list", "--max-parents=0", "HEAD").strip()
    with pytest.raises(UsageError, match="not by the vault-tools bot"):
        repo.bot_commit(first)
    with pytest.raises(UsageError, match="no such commit"):
        repo.bot_commit("does-not-exist")


def test_describe(tmp_path: Path, repo: gitops.VaultRepo) -> None:
    info = gitops.describe(repo.vault)
    assert info["uncommitted"] == 0 and "clean" in info["summary"]
    (repo.vault / "MEMORY.md").write_text("changed\n")
    assert "1 uncommitted change" in gitops.describe(repo.vault)["summary"]
    lonely = tmp_path / "lonely"
    lonely.mkdir()
    assert gitops.describe(lonely)["repository"] is None


def test_parse_trailers() -> None:
    assert gitops.parse_trailers("subject\n\nbody text: here\n\nA: 1\nB: two words\nA: 3\n") == {
        "A": ["1", "3"],
        "B": ["two words"],
    }
    assert gitops.parse_trailers("only a subject") == {}


def test_a_sha256_repository(tmp_path: Path) -> None:
    vault = make_vault(tmp_path)
    git(vault, "init", "-q", "--object-format=sha256")
    git(vault, "add", "-A")
    git(vault, "commit", "-qm", "start")
    with gitops.VaultRepo.open(vault) as repo:  # type: ignore[union-attr]
        start = repo.head_sha()
        assert start is not None and len(start) == 64
        assert repo.read_head("MEMORY.md") == (vault / "MEMORY.md").read_bytes()
        message = 'memory: prune "one"\n\nArchived.\n\nBlock: m-abcdef\n'
        sha = repo.commit(
            {"memory/archive/2026-12.md": b"# Archive\n- one\n", "MEMORY.md": b"# Memory\n"}, message
        )
        assert len(sha) == 64 and repo.read_head("memory/archive/2026-12.md") == b"# Archive\n- one\n"
        info = repo.bot_commit(sha[:12])
        assert [f.path for f in info.files] == ["MEMORY.md", "memory/archive/2026-12.md"]
        assert info.files[1].before is None and info.trailers == {"Block": ["m-abcdef"]}
        repo.commit({"memory/archive/2026-12.md": None}, "remove")
    assert "archive" not in git(vault, "ls-tree", "-r", "--name-only", "HEAD")
    assert git(vault, "status", "--porcelain") == " M MEMORY.md\n"  # the working tree is never touched
    git(vault, "fsck", "--strict")


def test_objects_are_written_as_git_writes_them(repo: gitops.VaultRepo) -> None:
    """Loose objects written in-process: git's tree order (a folder sorts as "name/"), names that
    are not UTF-8 kept, the bot as author and committer at this moment in the local zone."""
    vault = repo.vault
    odd = "caf\udce9.md"  # a name git holds as bytes (Latin-1 é), through a surrogate escape
    sha = repo.commit({"a.md": b"a\n", "a/b.md": b"b\n", "a-b.md": b"c\n", odd: b"d\n"}, "memory: test\n")
    git(vault, "fsck", "--strict")  # a tree out of git's order fails here (treeNotSorted)
    listing = subprocess.run(
        ["git", "ls-tree", "-z", "HEAD"], cwd=vault, capture_output=True, check=True
    ).stdout
    remade = subprocess.run(
        ["git", "mktree", "-z"], cwd=vault, input=listing, capture_output=True, check=True
    )
    assert remade.stdout.decode().strip() == git(vault, "rev-parse", "HEAD^{tree}").strip()
    names = [n for n in listing.split(b"\0") if n]
    assert any(n.endswith(b"\tcaf\xe9.md") for n in names)
    assert repo.read_at(sha, odd) == b"d\n"
    header = git(vault, "cat-file", "-p", sha)
    zone = git(vault, "log", "-1", "--date=format:%z", "--format=%ad", sha).strip()
    assert "author vault-tools bot <bot@vault-tools.invalid> " in header and header.count(zone) == 2
    assert git(vault, "log", "-1", "--format=%s", sha) == "memory: test\n"


def test_a_run_of_commits_starts_one_git_process_per_commit(
    repo: gitops.VaultRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Objects are written in-process and the branch moves through one ``update-ref --stdin``:
    after the first commit, each costs only its index update."""
    repo.commit({"MEMORY.md": b"# first\n", "memory/archive/2026-12.md": b"# Archive\n"}, "memory: first")
    mover = repo.refs._process
    started: list[str] = []
    original = gitops.run_git

    def counted(cwd: Path, *args: str, **kwargs: object) -> str:
        started.append(args[0])
        return original(cwd, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(gitops, "run_git", counted)
    for number in range(5):
        repo.commit(
            {"MEMORY.md": f"# {number}\n".encode(), "memory/archive/2026-12.md": b"- %d\n" % number}, "m"
        )
    assert started == ["update-index"] * 5
    assert mover is not None and repo.refs._process is mover  # one update-ref for every move
    assert git(repo.vault, "rev-list", "--count", "HEAD") == "7\n"
    assert git(repo.vault, "diff", "--cached", "--name-only") == ""


def test_dates_git_is_told_to_use_are_used(repo: gitops.VaultRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_AUTHOR_DATE", "2020-01-02T03:04:05+0100")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2020-01-02T03:04:05+0100")
    sha = repo.commit({"MEMORY.md": b"# dated\n"}, "memory: dated")
    assert git(repo.vault, "log", "-1", "--format=%ai|%ci", sha) == (
        "2020-01-02 03:04:05 +0100|2020-01-02 03:04:05 +0100\n"
    )


def test_a_ref_lock_held_for_a_moment_is_waited_for(repo: gitops.VaultRepo) -> None:
    import threading

    repo.commit({"MEMORY.md": b"# one\n"}, "memory: one")  # the update-ref process is running now
    branch = git(repo.vault, "symbolic-ref", "HEAD").strip()
    lock = repo.git_dir / f"{branch}.lock"
    lock.write_text("held\n")
    threading.Timer(0.3, lock.unlink).start()
    sha = repo.commit({"MEMORY.md": b"# two\n"}, "memory: two")
    assert git(repo.vault, "rev-parse", "HEAD").strip() == sha and not lock.exists()
