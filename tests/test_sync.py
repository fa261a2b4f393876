"""Sync with real git: a bare remote in a temp dir, the person's clone (a laptop) and the bot's clone."""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from vault_tools import cli
from vault_tools.config import Config, load_config
from vault_tools.errors import GitError
from vault_tools.git import sync
from vault_tools.heartbeat import run as heartbeat
from vault_tools.heartbeat.run import HeartbeatReport, Options

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


# ---------------------------------------------------------------------------------------------
# The person's own notes travel: sync commits them first, as the person ([sync] commit_notes)

SAMPLE_NOTES = Path(__file__).resolve().parents[1] / "vault" / "memory"
WEEK = [f"2026-11-{day}.md" for day in range(23, 30)]  # week 48, closed on AS_OF
LINK = re.compile(r"\[\[([0-9]{4}-[0-9]{2}-[0-9]{2})(?:#([^\]|]+))?(?:\|[^\]]*)?\]\]")  # a daily note


def two_devices(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(remote, device A, device B): two clones of one vault, each with the person's identity."""
    remote, device_a, device_b = setup(tmp_path)
    for device in (device_a, device_b):
        git(device, "config", "user.name", "Lin")
        git(device, "config", "user.email", "lin@example.com")
    return remote, device_a, device_b


def write_week(device: Path) -> None:
    for name in WEEK:
        (device / "memory" / name).write_bytes((SAMPLE_NOTES / name).read_bytes())


def commits(repo: Path) -> list[tuple[str, list[str]]]:
    """(author name, files) of each commit, newest first."""
    out = git(repo, "log", "--format=%x00%an", "--name-only")
    found = []
    for record in out.split("\0")[1:]:
        author, *files = [line for line in record.splitlines() if line.strip()]
        found.append((author, files))
    return found


def unresolved_links(vault: Path) -> list[str]:
    """The [[links]] to daily notes of MEMORY.md and the summaries whose note, heading or block is
    missing."""
    missing = []
    sources = [vault / "MEMORY.md", *sorted((vault / "memory" / "summaries").glob("*.md"))]
    for source in sources:
        for name, anchor in LINK.findall(source.read_text(encoding="utf-8")):
            target = vault / "memory" / f"{name}.md"
            if not target.is_file():
                missing.append(f"{source.name} -> {name}")
                continue
            text = target.read_text(encoding="utf-8")
            if (anchor.startswith("^") and anchor not in text) or (
                anchor and not anchor.startswith("^") and f"# {anchor}\n" not in text
            ):
                missing.append(f"{source.name} -> {name}#{anchor}")
    return missing


def test_a_weeks_notes_travel_with_the_summaries_that_cite_them(tmp_path: Path) -> None:
    remote, device_a, device_b = two_devices(tmp_path)
    write_week(device_a)
    report = beat(device_a, push=False)
    summaries = sorted((device_a / "memory" / "summaries").glob("*.md"))
    assert summaries and report.commits
    assert git(device_a, "status", "--porcelain", "--", "memory/2026-11-24.md").startswith("??")
    result = run_sync(device_a)
    assert result.notes_commit and result.notes_committed == [f"memory/{name}" for name in WEEK]
    assert git(device_a, "status", "--porcelain") == ""
    assert head(remote, "main") == head(device_a)
    # One commit by the person holding exactly the notes; the bot's commits hold only the bot's files.
    history = commits(device_a)
    mine = [files for author, files in history if author == "Lin"]
    assert sorted(f"memory/{name}" for name in WEEK) in [sorted(files) for files in mine]
    bots = [files for author, files in history if author == "vault-tools bot"]
    assert bots and all(not set(files) & {f"memory/{name}" for name in WEEK} for files in bots)
    notes_message = git(device_a, "log", "-1", "--format=%B", result.notes_commit)
    assert notes_message.startswith("notes: 6 added, 1 changed") and "A memory/2026-11-24.md" in notes_message
    assert "Committed-by: vault-tools sync" in notes_message
    assert ".vault-tools" not in git(device_a, "ls-files")
    private = [w for w in result.warnings if "#private" in w]
    assert len(private) == 1 and private[0].startswith("memory/2026-11-23.md: holds #private entries")

    bot_written = summaries[0].read_text(encoding="utf-8")
    unedited = device_a / "memory" / "summaries" / "2026-W47.md"  # as if a run died before its commit
    unedited.write_text(bot_written, encoding="utf-8")
    edited = device_a / "memory" / "summaries" / "2026-W46.md"
    edited.write_text(bot_written + "- a line I added\n", encoding="utf-8")
    again = run_sync(device_a)
    assert again.notes_committed == ["memory/summaries/2026-W46.md"]
    assert any(w.startswith("memory/summaries/2026-W47.md: a summary the bot wrote") for w in again.warnings)

    run_sync(device_b)
    for name in WEEK:
        assert (device_b / "memory" / name).read_bytes() == (SAMPLE_NOTES / name).read_bytes()
    assert [p.name for p in sorted((device_b / "memory" / "summaries").glob("*.md"))] == sorted(
        ["2026-W46.md", *(p.name for p in summaries)]
    )
    assert "[[2026-11-2" in summaries[0].read_text(encoding="utf-8")
    assert unresolved_links(device_b) == []
    assert head(device_b) == head(remote, "main")
    assert_clean_repo(device_b)


def test_the_heartbeats_own_sync_carries_the_notes_too(tmp_path: Path) -> None:
    remote, device_a, device_b = two_devices(tmp_path)
    write_week(device_a)
    report = beat(device_a)  # push = true: syncs before the run and after its commits
    assert not [w for w in report.warnings if w.startswith("sync")]
    assert head(remote, "main") == head(device_a) and git(device_a, "status", "--porcelain") == ""
    run_sync(device_b)
    assert all((device_b / "memory" / name).is_file() for name in WEEK)
    assert unresolved_links(device_b) == []


def test_commit_notes_false_leaves_the_notes_to_the_person(tmp_path: Path) -> None:
    remote, device_a, _device_b = two_devices(tmp_path)
    (device_a / ".vault-tools").mkdir()
    (device_a / ".vault-tools" / "config.toml").write_text("[sync]\ncommit_notes = false\n")
    write_week(device_a)
    result = run_sync(device_a)
    assert result.notes_commit is None and result.notes_committed == []
    assert len(git(device_a, "status", "--porcelain", "--", "memory").splitlines()) == len(WEEK)
    assert "2026-11-24" not in git(remote, "ls-tree", "-r", "--name-only", "main")


def test_without_an_identity_no_note_is_committed_and_sync_says_how(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL"):
        monkeypatch.delenv(name, raising=False)
    remote, _person, bot = setup(tmp_path)  # the server's clone has no user.name / user.email
    write_week(bot)
    result = run_sync(bot)
    assert result.notes_commit is None
    assert any("no user identity" in w and "config user.name" in w for w in result.warnings)
    assert git(bot, "log", "--format=%an") == "Lin\n"  # nothing committed as the bot or anyone else
    assert head(remote, "main") == head(bot)


def test_only_the_vaults_markdown_is_committed(tmp_path: Path) -> None:
    remote, device_a, _device_b = two_devices(tmp_path)
    (device_a / ".gitignore").write_text(".vault-tools/\ndrafts/\n")
    git(device_a, "commit", "-qam", "ignore drafts")
    for folder in ("drafts", ".obsidian", ".trash"):
        (device_a / folder).mkdir()
        (device_a / folder / "x.md").write_text("- not for the remote\n")
    (device_a / "memory" / "todo.txt").write_text("not Markdown\n")
    (device_a / "memory" / "2026-11-30.md").write_text("- 08:00 新的一天\n", encoding="utf-8")
    (device_a / "memory" / "merge.md").write_text("<<<<<<< HEAD\n- a\n=======\n- b\n>>>>>>> other\n")
    outside = tmp_path / "outside.md"
    outside.write_text("- somebody else's file\n")
    (device_a / "memory" / "link.md").symlink_to(outside)
    (device_a / "memory" / "2026-11-28.md").unlink()  # deleted by the person
    person_edits_text = (device_a / "MEMORY.md").read_text().replace("code first", "code first, always")
    (device_a / "MEMORY.md").write_text(person_edits_text)
    result = run_sync(device_a)
    assert result.notes_committed == ["MEMORY.md", "memory/2026-11-28.md", "memory/2026-11-30.md"]
    assert any("merge.md: holds conflict markers" in w for w in result.warnings)
    assert any("link.md: a symlink" in w for w in result.warnings)
    tracked = git(remote, "ls-tree", "-r", "--name-only", "main").split()
    assert sorted(tracked) == [".gitignore", "MEMORY.md", "memory/2026-11-30.md"]
    status = git(device_a, "status", "--porcelain", "--untracked-files=all").splitlines()
    assert sorted(status) == [
        "?? .obsidian/x.md",
        "?? .trash/x.md",
        "?? memory/link.md",
        "?? memory/merge.md",
        "?? memory/todo.txt",
    ]


def test_notes_committed_here_are_re_applied_on_the_remotes_new_commits(tmp_path: Path) -> None:
    remote, device_a, device_b = two_devices(tmp_path)
    (device_b / "memory" / "2026-11-29.md").write_text("- 08:00 from device B\n")
    run_sync(device_b)
    person_edits_text = (device_a / "memory" / "2026-11-28.md").read_text(encoding="utf-8")
    (device_a / "memory" / "2026-11-28.md").write_text(
        person_edits_text + "- 11:00 还有一行\n", encoding="utf-8"
    )
    beat(device_a, push=False)  # the bot's commits and then the notes: all re-applied, no merge
    result = run_sync(device_a)
    assert result.notes_committed == ["memory/2026-11-28.md"] and not result.merged
    assert git(device_a, "log", "--merges", "--format=%H") == ""
    assert (device_a / "memory" / "2026-11-29.md").read_text() == "- 08:00 from device B\n"
    assert "还有一行" in git(remote, "show", "main:memory/2026-11-28.md")
    assert git(device_a, "log", "-1", "--format=%an", "--", "memory/2026-11-28.md") == "Lin\n"
    assert head(remote, "main") == head(device_a)
    assert_clean_repo(device_a)


def test_the_same_line_changed_on_two_devices_stops_with_a_command_that_works(tmp_path: Path) -> None:
    remote, device_a, device_b = two_devices(tmp_path)
    for device, word in ((device_a, "laptop"), (device_b, "phone")):
        file = device / "memory" / "2026-11-28.md"
        file.write_text(
            file.read_text(encoding="utf-8").replace("MySQL", f"MySQL ({word})"), encoding="utf-8"
        )
    run_sync(device_a)
    before = (device_b / "memory" / "2026-11-28.md").read_bytes()
    with pytest.raises(sync.SyncError) as stopped:
        run_sync(device_b)
    message = str(stopped.value)
    assert "same lines of memory/2026-11-28.md; sync touched nothing" in message
    assert (device_b / "memory" / "2026-11-28.md").read_bytes() == before
    command = re.search(r"(git -C \S+ pull --no-rebase \S+ \S+),", message)
    assert command is not None
    pulled = subprocess.run(command[1].split(), capture_output=True, text=True, check=False)
    assert (
        pulled.returncode == 1 and "CONFLICT (content)" in pulled.stdout
    )  # a merge, not "fatal: Need to specify"
    file = device_b / "memory" / "2026-11-28.md"
    resolved = re.sub(
        r"<<<<<<< HEAD\n.*?>>>>>>> \S+\n",
        "- 09:00 Decided on PostgreSQL (both).\n",
        file.read_text(),
        flags=re.S,
    )
    file.write_text(resolved, encoding="utf-8")
    commit = re.search(r"(git -C \S+ commit -a --no-edit),", message)
    assert commit is not None
    subprocess.run(commit[1].split(), capture_output=True, check=True)
    run_sync(device_b)
    assert head(remote, "main") == head(device_b)
    assert "(both)" in git(remote, "show", "main:memory/2026-11-28.md")
    assert_clean_repo(device_b)
