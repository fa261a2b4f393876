"""Git's lock files: a stale one is removed with a warning, a held one (by any process) never is."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from vault_tools.errors import LockedError
from vault_tools.git import locks as gitlocks


def make_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo


def age(path: Path, seconds: float) -> None:
    old = time.time() - seconds
    os.utime(path, (old, old))


def clear(repo: Path, wait: float = 0.2, grace: float = 5.0) -> list[str]:
    warnings: list[str] = []
    gitlocks.clear(repo / ".git", repo, wait_seconds=wait, grace_seconds=grace, warn=warnings.append)
    return warnings


def test_stale_locks_of_the_index_head_and_a_ref_are_removed_naming_each(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    locks = [
        repo / ".git" / "index.lock",
        repo / ".git" / "HEAD.lock",
        repo / ".git" / "refs" / "heads" / "main.lock",
    ]
    for lock in locks:
        lock.write_text("")
        age(lock, 120)
    warnings = clear(repo)
    assert not any(lock.exists() for lock in locks)
    assert sorted(w.split(":")[0] for w in warnings) == sorted(f"removed {lock}" for lock in locks)


def test_a_young_lock_nobody_holds_is_waited_for_until_the_grace_period_passes(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    lock = repo / ".git" / "index.lock"
    lock.write_text("")
    with pytest.raises(LockedError, match="only 0 s old"):
        clear(repo, wait=0.1, grace=3600)
    assert lock.exists()
    slept: list[float] = []

    def older(seconds: float) -> None:  # time passes for the lock while we wait
        slept.append(seconds)
        age(lock, 10 * len(slept))

    gitlocks.clear(repo / ".git", repo, wait_seconds=60, grace_seconds=25, warn=lambda _w: None, sleep=older)
    assert not lock.exists() and len(slept) == 3


def test_a_wait_whose_time_is_up_at_the_first_look_is_still_said(tmp_path: Path) -> None:
    """On a busy machine the first look at the locks can outlast the whole wait: the person hears
    what was waited for before the error, never the error alone."""
    repo = make_repo(tmp_path)
    (repo / ".git" / "index.lock").write_text("")
    said: list[str] = []
    with pytest.raises(LockedError):
        gitlocks.clear(
            repo / ".git", repo, wait_seconds=0, grace_seconds=3600, warn=lambda _w: None, waiting=said.append
        )
    assert len(said) == 1 and said[0].startswith("waiting for git: ") and "index.lock" in said[0]


def test_a_git_process_in_the_repository_holds_a_lock_it_has_closed(tmp_path: Path) -> None:
    """git commit closes index.lock before its hooks and editor run: a live git there is a holder."""
    repo = make_repo(tmp_path)
    lock = repo / ".git" / "index.lock"
    lock.write_text("")
    age(lock, 3600)
    waiting = subprocess.Popen(["git", "hash-object", "--stdin"], cwd=repo, stdin=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 10
        while not gitlocks.holders(lock, (repo,)) and time.monotonic() < deadline:
            time.sleep(0.02)
        with pytest.raises(LockedError) as caught:
            clear(repo)
        assert f"pid {waiting.pid} (git) runs in this repository" in str(caught.value)
        assert lock.exists()
    finally:
        assert waiting.stdin is not None
        waiting.stdin.close()
        waiting.wait(timeout=10)
    assert clear(repo) and not lock.exists()


def test_a_git_process_elsewhere_is_not_a_holder(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    other = make_repo(tmp_path / "other")
    lock = repo / ".git" / "index.lock"
    lock.write_text("")
    age(lock, 3600)
    waiting = subprocess.Popen(["git", "hash-object", "--stdin"], cwd=other, stdin=subprocess.PIPE)
    try:
        assert clear(repo) and not lock.exists()
    finally:
        assert waiting.stdin is not None
        waiting.stdin.close()
        waiting.wait(timeout=10)


def test_a_lock_replaced_after_the_check_is_not_removed(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    lock = repo / ".git" / "index.lock"
    lock.write_text("")
    age(lock, 3600)
    found = gitlocks.check(lock, (repo,))
    assert found is not None and found.holders == ()
    lock.unlink()
    lock.write_text("a new git command's lock")
    assert not gitlocks.remove_if_unchanged(found) and lock.exists()
