"""Sync with real git: a bare remote in a temp dir, the person's clone (a laptop) and the bot's clone."""

from __future__ import annotations

import dataclasses
import datetime as dt
import subprocess
from pathlib import Path
from typing import Any

import pytest

from vault_tools import cli, heartbeat, sync
from vault_tools.config import Config, load_config
from vault_tools.errors import GitError
from vault_tools.heartbeat import HeartbeatReport, Options

AS_OF = dt.date(2026, 12, 1)
HUMAN = ["-c", "user.name=Lin", "-c", "user.email=lin@example.com", "-c", "commit.gpgsign=false"]

MEMORY = """---
title: Long-term memory
---
# Long-term memory

## Decisions

- 2026-09-14: Use yarn workspaces for the Atlas web frontend [importance:: 0.5] ^m-9e0f3a

## Preferences

- 2026-05-11: Prefers concise answers, code first [importance:: 0.8] ^m-2d4e6f

## Facts

- 2026-11-16: The Hamburg demo is on 2026-11-26 [importance:: 0.5] [expires:: 2026-11-27] ^m-e83a51
"""

NOTE = """---
date: 2026-11-28
---
## 工作

- 09:00 Decided to use PostgreSQL over MySQL for the billing service. #atlas
- 10:00 我对花生和坚果过敏，记住。
"""


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *HUMAN, *args], cwd=repo, capture_output=True, text=True, check=True).stdout


def setup(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(remote, the person's clone, the bot's clone), both clones at the same first commit."""
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    person = tmp_path / "laptop"
    (person / "memory").mkdir(parents=True)
    (person / "MEMORY.md").write_text(MEMORY, encoding="utf-8")
    (person / "memory" / "2026-11-28.md").write_text(NOTE, encoding="utf-8")
    (person / ".gitignore").write_text(".vault-tools/\n")
    git(person, "init", "-q", "-b", "main")
    git(person, "add", "-A")
    git(person, "commit", "-qm", "notes")
    git(person, "remote", "add", "origin", str(remote))
    git(person, "push", "-q", "-u", "origin", "main")
    bot = tmp_path / "server"
    subprocess.run(["git", "clone", "-q", str(remote), str(bot)], check=True, capture_output=True)
    return remote, person, bot


def config(vault: Path, **settings: Any) -> Config:
    loaded = load_config(vault)
    values = {"quiet_seconds": 0.0, "prune_max_share": 1.0, "push": True, **settings}
    return dataclasses.replace(loaded, heartbeat=dataclasses.replace(loaded.heartbeat, **values))


def beat(vault: Path, **settings: Any) -> HeartbeatReport:
    return heartbeat.run_heartbeat(config(vault, **settings), Options(as_of=AS_OF, use_llm=False))


def run_sync(vault: Path, **settings: Any) -> sync.SyncReport:
    return sync.run_sync(config(vault, **settings))


def person_edits(person: Path, path: str, old: str, new: str, message: str = "edit") -> None:
    file = person / path
    text = file.read_text(encoding="utf-8")
    assert old in text
    file.write_text(text.replace(old, new, 1), encoding="utf-8")
    git(person, "commit", "-qam", message)


def push(person: Path) -> None:
    git(person, "pull", "-q", "--rebase")
    git(person, "push", "-q")


def head(repo: Path, rev: str = "HEAD") -> str:
    return git(repo, "rev-parse", rev).strip()


def assert_clean_repo(bot: Path) -> None:
    assert git(bot, "status", "--porcelain") == ""
    for name in ("MERGE_HEAD", "rebase-merge", "rebase-apply", "index.lock"):
        assert not (bot / ".git" / name).exists()
    for file in bot.rglob("*.md"):
        assert "<<<<<<<" not in file.read_text(encoding="utf-8")
    git(bot, "fsck", "--strict")


def test_the_person_pushes_and_the_bot_syncs(tmp_path: Path) -> None:
    remote, person, bot = setup(tmp_path)
    (person / "memory" / "2026-11-29.md").write_text("- 08:00 从手机上记的一条\n", encoding="utf-8")
    git(person, "add", "-A")
    git(person, "commit", "-qm", "from the phone")
    push(person)
    report = run_sync(bot)
    assert report.brought_in == 1 and report.pushed == 0
    assert (bot / "memory" / "2026-11-29.md").read_bytes() == (
        person / "memory" / "2026-11-29.md"
    ).read_bytes()
    assert head(bot) == head(remote, "main")
    assert_clean_repo(bot)


def test_bot_commits_while_the_person_pushes_to_the_same_section(tmp_path: Path) -> None:
    remote, person, bot = setup(tmp_path)
    report = beat(bot, push=False)  # the bot's commits stay local for now
    promoted = [c for c in report.promoted if "PostgreSQL" in c.text]
    assert promoted and head(remote, "main") != head(bot)
    person_line = "- 2026-11-30: Moved the Atlas deploys to Thursdays (decided on the phone)\n"
    person_edits(person, "MEMORY.md", "^m-9e0f3a\n", "^m-9e0f3a\n" + person_line, "decision from the phone")
    push(person)
    result = run_sync(bot)
    text = (bot / "MEMORY.md").read_text(encoding="utf-8")
    assert person_line in text  # the person's bytes, as they wrote them
    assert text.count(f"^{promoted[0].block_id}") == 1  # the bot's promotion re-applied once
    decisions = text.split("## Decisions")[1].split("## ")[0]
    assert person_line in decisions and "PostgreSQL" in decisions
    assert result.dropped == [] and len(result.replayed) == len(report.commits)
    assert head(bot) == head(remote, "main")
    log = git(bot, "log", "--format=%an|%s").splitlines()
    assert log[-2:] == ["Lin|decision from the phone", "Lin|notes"]  # the person's commits are not rewritten
    assert all(line.startswith("vault-tools bot|memory: ") for line in log[:-2])
    assert git(bot, "log", "--merges", "--format=%H") == ""  # replayed on top: history stays a line
    assert_clean_repo(bot)


def test_an_item_the_person_deleted_on_another_device_is_never_re_added(tmp_path: Path) -> None:
    _remote, person, bot = setup(tmp_path)
    report = beat(bot)
    item = next(c for c in report.promoted if "PostgreSQL" in c.text)
    git(person, "pull", "-q")
    text = (person / "MEMORY.md").read_text(encoding="utf-8")
    line = next(x for x in text.splitlines(keepends=True) if f"^{item.block_id}" in x)
    person_edits(person, "MEMORY.md", line, "", "not worth keeping")
    push(person)
    (bot / "memory" / "2026-11-30.md").write_text("- Decided to use PostgreSQL over MySQL for billing.\n")
    again = beat(bot)  # syncs first: works on the person's version
    assert item.block_id not in (bot / "MEMORY.md").read_text(encoding="utf-8")
    assert all("PostgreSQL" not in c.text for c in again.promoted)
    assert (bot / "MEMORY.md").read_bytes() == (person / "MEMORY.md").read_bytes()


def test_remote_offline_then_back(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    remote, _person, bot = setup(tmp_path)
    git(bot, "remote", "set-url", "origin", str(tmp_path / "unplugged.git"))
    report = beat(bot)
    assert report.commits and any("cannot reach the remote 'origin'" in w for w in report.warnings)
    code = cli.main(["--vault", str(bot), "sync"])
    err = capsys.readouterr().err.strip()
    assert code == GitError.exit_code and len(err.splitlines()) == 1
    assert "run vault-tools sync again" in err and f"{len(report.commits)} local commit(s) stay" in err
    assert "fatal" not in err  # our line, not git's
    git(bot, "remote", "set-url", "origin", str(remote))
    assert cli.main(["--vault", str(bot), "--json", "sync"]) == 0
    assert f'"pushed": {len(report.commits)}' in capsys.readouterr().out
    assert head(remote, "main") == head(bot)


def test_no_remote_exits_6_saying_what_to_do(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _remote, _person, bot = setup(tmp_path)
    git(bot, "remote", "remove", "origin")
    assert cli.main(["--vault", str(bot), "sync"]) == 6
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "has no remote 'origin'" in err and "remote add origin URL" in err


def test_an_uncommitted_edit_in_the_bots_clone_is_kept_byte_for_byte(tmp_path: Path) -> None:
    remote, person, bot = setup(tmp_path)
    (person / "memory" / "2026-11-29.md").write_text("- from the laptop\n")
    git(person, "add", "-A")
    git(person, "commit", "-qm", "laptop")
    push(person)
    edited = (bot / "memory" / "2026-11-28.md").read_bytes() + "- 服务器上还没提交的一行\r\n".encode()
    (bot / "memory" / "2026-11-28.md").write_bytes(edited)
    run_sync(bot)
    assert (bot / "memory" / "2026-11-28.md").read_bytes() == edited
    assert head(bot) == head(remote, "main") and (bot / "memory" / "2026-11-29.md").exists()
    assert git(bot, "status", "--porcelain") == " M memory/2026-11-28.md\n"


def test_an_uncommitted_edit_to_a_file_the_remote_changed_makes_sync_wait(tmp_path: Path) -> None:
    remote, person, bot = setup(tmp_path)
    person_edits(person, "MEMORY.md", "code first", "code first, always")
    push(person)
    edited = (bot / "MEMORY.md").read_bytes() + b"- a line typed on the server\n"
    (bot / "MEMORY.md").write_bytes(edited)
    before = head(bot)
    with pytest.raises(sync.SyncError, match=r"sync waits: MEMORY\.md changed on the remote"):
        run_sync(bot)
    assert (bot / "MEMORY.md").read_bytes() == edited and head(bot) == before
    assert git(bot, "stash", "list") == ""
    (bot / "MEMORY.md").write_bytes(edited.replace(b"- a line typed on the server\n", b""))
    run_sync(bot)
    assert head(bot) == head(remote, "main")


def test_a_rejected_push_succeeds_on_retry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    remote, person, bot = setup(tmp_path)
    beat(bot, push=False)
    original = sync.fetch
    calls: list[int] = []

    def person_pushes_right_after_the_first_fetch(*args: Any) -> None:
        original(*args)
        calls.append(1)
        if len(calls) == 1:
            (person / "memory" / "2026-11-30.md").write_text("- pushed in between\n")
            git(person, "add", "-A")
            git(person, "commit", "-qm", "in between")
            push(person)

    monkeypatch.setattr(sync, "fetch", person_pushes_right_after_the_first_fetch)
    report = run_sync(bot)
    assert report.attempts == 2 and report.brought_in == 1
    assert head(remote, "main") == head(bot) and (bot / "memory" / "2026-11-30.md").exists()
    assert_clean_repo(bot)


def test_the_persons_own_conflicting_commits_from_two_devices_stop_sync(tmp_path: Path) -> None:
    _remote, person, bot = setup(tmp_path)
    person_edits(person, "MEMORY.md", "code first", "code first (laptop)")
    push(person)
    person_edits(bot, "MEMORY.md", "code first", "code first (server)")
    before = head(bot), (bot / "MEMORY.md").read_bytes()
    with pytest.raises(sync.SyncError, match=r"same lines of MEMORY\.md; sync touched nothing"):
        run_sync(bot)
    assert (head(bot), (bot / "MEMORY.md").read_bytes()) == before
    assert_clean_repo(bot)


def test_the_persons_own_commits_that_do_not_conflict_are_merged(tmp_path: Path) -> None:
    remote, person, bot = setup(tmp_path)
    person_edits(person, "MEMORY.md", "code first", "code first (laptop)")
    push(person)
    person_edits(bot, "memory/2026-11-28.md", "#atlas", "#atlas #billing")
    report = run_sync(bot)
    assert report.merged and head(remote, "main") == head(bot)
    assert (
        "(laptop)" in (bot / "MEMORY.md").read_text()
        and "#billing" in (bot / "memory/2026-11-28.md").read_text()
    )
    assert_clean_repo(bot)


def test_a_prune_of_an_item_the_person_edited_elsewhere_is_dropped(tmp_path: Path) -> None:
    remote, person, bot = setup(tmp_path)
    report = beat(bot, push=False)
    assert [c.block_id for c in report.pruned] == ["m-e83a51"]
    person_edits(person, "MEMORY.md", "demo is on 2026-11-26", "demo moved to 2027-01-20")
    push(person)
    result = run_sync(bot)
    assert len(result.dropped) == 1 and "prune" in result.dropped[0]
    text = (bot / "MEMORY.md").read_text(encoding="utf-8")
    assert "demo moved to 2027-01-20" in text and text.count("^m-e83a51") == 1
    assert head(remote, "main") == head(bot)
    assert_clean_repo(bot)


def test_reapply_keeps_the_persons_lines_and_finds_the_section() -> None:
    before = b"## A\n\n- one\n\n## B\n\n- two\n"
    after = b"## A\n\n- one\n- bot ^m-aaaaaa\n\n## B\n\n- two\n"
    person = b"## A\n\n- one, edited\n- person\n\n## B\n\n- two\n"
    result = sync.reapply(before, after, person)
    assert result == b"## A\n\n- one, edited\n- person\n- bot ^m-aaaaaa\n\n## B\n\n- two\n"
    assert sync.reapply(before, after, result) == result  # already there
    with pytest.raises(sync.Dropped):
        sync.reapply(before, after, b"## Renamed\n\n- one, edited\n")


def test_a_sync_killed_after_moving_the_branch_is_finished_by_the_next(tmp_path: Path) -> None:
    remote, person, bot = setup(tmp_path)
    person_edits(person, "MEMORY.md", "code first", "code first, always")
    push(person)
    git(bot, "fetch", "-q")
    old, new = head(bot), head(bot, "origin/main")
    (bot / ".vault-tools").mkdir(exist_ok=True)
    (bot / ".vault-tools" / "sync.json").write_text(f'{{"from": "{old}", "to": "{new}"}}')
    git(bot, "update-ref", "HEAD", new, old)  # killed right after this step
    report = run_sync(bot)
    assert "finished a sync that was interrupted" in report.warnings
    assert (bot / "MEMORY.md").read_bytes() == (person / "MEMORY.md").read_bytes()
    assert head(bot) == head(remote, "main")
    assert_clean_repo(bot)
