"""The heartbeat end to end, with real git in temp dirs: promote, merge, prune, commit, resume, undo."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import errno
import fcntl
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import read_steps

from vault_tools import cli, locks
from vault_tools.config import Config, load_config
from vault_tools.errors import GitError, LockedError, UsageError
from vault_tools.heartbeat import run as heartbeat
from vault_tools.heartbeat import undo as heartbeat_undo
from vault_tools.heartbeat.run import HeartbeatReport, Options
from vault_tools.notes import model as notes
from vault_tools.tokens import count_words

AS_OF = dt.date(2026, 12, 1)
HUMAN = ["-c", "user.name=Lin", "-c", "user.email=lin@example.com", "-c", "commit.gpgsign=false"]

MEMORY_EN = """---
title: Long-term memory
# edited by hand and by the heartbeat
---
# Long-term memory

## Decisions

- 2026-09-14: Use yarn workspaces for the Atlas web frontend [importance:: 0.5] [source:: [[2026-09-14]]] ^m-9e0f3a

## Preferences

- 2026-05-11: Prefers concise answers, code first [importance:: 0.8] [source:: [[2026-05-11]]] ^m-2d4e6f

## Facts

- 2026-11-16: The Hamburg demo is on 2026-11-26 [importance:: 0.5] [expires:: 2026-11-27] [source:: [[2026-11-16]]] ^m-e83a51
"""

MEMORY_ZH = """---
title: 长期记忆
---
# 长期记忆

## 决定

- 2026-10-08: 部署窗口定在周二和周四上午 [importance:: 0.7] [source:: [[2026-10-08]]] ^m-c5d812

## 经验

- 2026-10-30: 大文件不要直接放进 git，用 git-lfs [importance:: 0.6] [source:: [[2026-10-30]]] ^m-d2a94e
"""

NOTE_EN = """---
date: 2026-11-28
tags: [daily]
---
## Work

- 09:00 Decided to use PostgreSQL over MySQL for the billing service. #atlas
- 10:00 Good morning! How can I help you today?
- 11:00 Lesson: always run migrations on a copy first.
- 12:00 Lunch with Priya at the Thai place.
- 13:00 The staging API key is sk-proj-nTtWKh7hJ1ziMUbFmoLUP8tp8GKtEpednATTfkg9kfeNP4lP (rotate it) #atlas
- 14:00 I prefer the Tuesday therapy slot with Dr. Keller, it helps. #private
- 22:00 HEARTBEAT_OK
- [ ] Write the onboarding checklist for Lena
"""

NOTE_ZH = """---
date: 2026-11-29
---
## 生活

- 09:00 我不吃香菜，点外卖要备注。
- 10:00 早上好
- 11:00 教训：依赖升级要一个一个来。
- 12:00 中午吃了拉面，还不错。
"""


def git(vault: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *HUMAN, *args], cwd=vault, capture_output=True, text=True, check=True
    ).stdout


def make_vault(
    tmp_path: Path, memory: str | None = MEMORY_EN, daily: dict[str, str] | None = None, name: str = "vault"
) -> Path:
    vault = tmp_path / name
    (vault / "memory").mkdir(parents=True)
    if memory is not None:
        (vault / "MEMORY.md").write_text(memory, encoding="utf-8")
    notes = {"2026-11-28": NOTE_EN, "2026-11-29": NOTE_ZH} if daily is None else daily
    for day, text in notes.items():
        (vault / "memory" / f"{day}.md").write_text(text, encoding="utf-8")
    return vault


def committed(vault: Path) -> Path:
    git(vault, "init", "-q")
    (vault / ".gitignore").write_text(".vault-tools/\n")
    git(vault, "add", "-A")
    git(vault, "commit", "-qm", "notes")
    return vault


def config(vault: Path, **settings: Any) -> Config:
    loaded = load_config(vault)
    values = {"quiet_seconds": 0.0, "prune_max_share": 1.0, "summaries": False, **settings}
    return dataclasses.replace(loaded, heartbeat=dataclasses.replace(loaded.heartbeat, **values))


def run(
    vault: Path, progress: Any = None, settings: dict[str, Any] | None = None, **options: Any
) -> HeartbeatReport:
    options.setdefault("as_of", AS_OF)
    return heartbeat.run_heartbeat(config(vault, **(settings or {})), Options(**options), progress)


def subjects(vault: Path) -> list[str]:
    return git(vault, "log", "--format=%s").splitlines()


def memory(vault: Path) -> str:
    return (vault / "MEMORY.md").read_text(encoding="utf-8")


def lines_with(text: str, needle: str) -> list[str]:
    return [line for line in text.splitlines() if needle in line]


# ---------------------------------------------------------------------------------------------
# What gets promoted, where, and how


def test_bilingual_promotion_into_english_sections(tmp_path: Path) -> None:
    vault = committed(make_vault(tmp_path))
    report = run(vault)
    text = memory(vault)
    promoted = {c.text: c for c in report.promoted}
    assert set(promoted) == {
        "Decided to use PostgreSQL over MySQL for the billing service.",
        "Always run migrations on a copy first.",
        "我不吃香菜，点外卖要备注。",
        "依赖升级要一个一个来。",
    }
    decision = lines_with(text, "PostgreSQL")[0]
    assert decision.startswith("- 2026-11-28: Decided to use PostgreSQL over MySQL for the billing service.")
    # a window of a dozen entries says too little about which words are rare to add specificity
    assert "[importance:: 0.7] [source:: [[2026-11-28]]] ^m-" in decision
    # each under its section; a missing one (Lessons) is added with an English heading
    sections = text.split("\n## ")
    assert "香菜" in next(s for s in sections if s.startswith("Preferences"))
    lessons = next(s for s in sections if s.startswith("Lessons"))
    assert "Always run migrations" in lessons and "依赖升级" in lessons
    assert promoted["Always run migrations on a copy first."].score == 0.9
    # the front matter (with its comment) and the human items are untouched
    assert text.startswith(MEMORY_EN.split("## Facts")[0].split("- 2026-09-14")[0])
    reasons = " | ".join(s.reason for s in report.skipped)
    for expected in (
        "secret",
        "private",
        "boilerplate",
        "greeting",
        "heartbeat",
        "todo",
        "below the threshold",
    ):
        assert expected in reasons, expected


TRANSCRIPT = """---
date: 2026-11-28
---
# 2026-11-28

- 19:02 **Ana**: Hey Ben! How have you been? What's new with you?
- 19:03 **Ben**: Taking time for yourself is so important. I love it!
- 19:04 **Ben**: I just adopted a greyhound called Biscuit from the Oakland shelter last Saturday.
- 19:05 **Ana**: Wow, that's amazing! You'd be a great dog dad. What made you pick him?
- 19:06 **Ana**: 我上个月搬到了杭州，在西湖边租了房子。
- 19:07 **Ben**: They brighten up our day and always make us smile.
"""


def test_a_transcript_keeps_statements_that_say_who(tmp_path: Path) -> None:
    vault = committed(make_vault(tmp_path, MEMORY_EN, {"2026-11-28": TRANSCRIPT}))
    report = run(vault, threshold=0.5)
    kept = {c.text for c in report.promoted}
    assert kept == {
        "**Ben**: I just adopted a greyhound called Biscuit from the Oakland shelter last Saturday (2026-11-21).",
        "**Ana**: 我上个月（2026-10）搬到了杭州，在西湖边租了房子。",
    }
    # MEMORY.md is read months later: the days the line named stand beside its words
    assert lines_with(memory(vault), "from the Oakland shelter last Saturday (2026-11-21).")
    reasons = {s.source.rsplit(":", 1)[1]: s.reason for s in report.skipped}
    assert "question" in reasons["6"] and "question" in reasons["9"] and "listener" in reasons["7"]
    assert "below the threshold" in reasons["11"] and "fragment -0.2" in reasons["11"]


TRANSCRIPT_ZH = """---
date: 2026-11-27
---
# 2026-11-27

- 20:01 **小林**: 嗨，好久不见！最近怎么样？
- 20:02 **阿杰**: 哈哈，挺好的，谢谢关心！
- 20:03 **阿杰**: 我上个月辞职了，下周一开始去字节跳动做后端。
- 20:04 **小林**: 哇，太厉害了！你真棒！
- 20:05 **小林**: 我们家上周领养了一只三岁的柴犬，叫豆豆。
- 20:06 **阿杰**: 真的吗？它乖不乖？
- 20:07 **阿杰**: 它们真的很可爱。
- 20:08 **小林**: 我打算明年三月去京都看樱花，已经订好了机票。
"""


TRANSCRIPT_ZH_TRADITIONAL = """---
date: 2026-11-27
---
# 2026-11-27

- 20:01 **小林**: 嗨，好久不見！最近怎麼樣？
- 20:02 **阿杰**: 哈哈，挺好的，謝謝關心！
- 20:03 **阿杰**: 我上個月辭職了，下週一開始去字節跳動做後端。
- 20:04 **小林**: 哇，太厲害了！你真棒！
- 20:05 **小林**: 我們家上週領養了一隻三歲的柴犬，叫豆豆。
- 20:06 **阿杰**: 真的嗎？它乖不乖？
- 20:07 **阿杰**: 它們真的很可愛。
- 20:08 **小林**: 我打算明年三月去京都看櫻花，已經訂好了機票。
"""


@pytest.mark.parametrize(
    ("transcript", "kept"),
    [
        (
            TRANSCRIPT_ZH,
            {
                "**阿杰**: 我上个月（2026-10）辞职了，下周一（2026-11-30）开始去字节跳动做后端。",
                "**小林**: 我们家上周（2026-11-16–2026-11-22）领养了一只三岁的柴犬，叫豆豆。",
                "**小林**: 我打算明年（2027）三月去京都看樱花，已经订好了机票。",
            },
        ),
        (  # the same in Traditional characters: read alike, kept as written
            TRANSCRIPT_ZH_TRADITIONAL,
            {
                "**阿杰**: 我上個月（2026-10）辭職了，下週一（2026-11-30）開始去字節跳動做後端。",
                "**小林**: 我們家上週（2026-11-16–2026-11-22）領養了一隻三歲的柴犬，叫豆豆。",
                "**小林**: 我打算明年（2027）三月去京都看櫻花，已經訂好了機票。",
            },
        ),
    ],
    ids=["simplified", "traditional"],
)
def test_a_chinese_transcript_keeps_what_happened_to_whom(
    tmp_path: Path, transcript: str, kept: set[str]
) -> None:
    vault = committed(make_vault(tmp_path, MEMORY_ZH, {"2026-11-27": transcript}))
    report = run(vault, threshold=0.5)
    assert {c.text for c in report.promoted} == kept
    reasons = {s.source.rsplit(":", 1)[1]: s.reason for s in report.skipped}
    assert "question" in reasons["6"] and "question" in reasons["11"]
    assert "pleasantries" in reasons["7"] and "listener" in reasons["9"]


AGENT_NOTES = {
    "zh": (
        "小林上个月搬到了杭州，在滨江的一家支付公司做后端。",
        "王芳报名了下个月的苏州半程马拉松。",
        "王芳的妈妈下周三过六十岁生日，她打算回老家一趟。",
        "两个人聊得很开心。",
        "天气越来越暖和了。",
    ),
    "en": (
        "Lin moved to Hangzhou last month and works on the backend of a payments company in Binjiang.",
        "Fang's mother turns sixty next Wednesday, and she plans to go home for it.",
        "Fang hurt her knee last October and has mostly recovered.",
        "The two had a great chat.",
        "The weather is getting warmer.",
    ),
}


@pytest.mark.parametrize("language", AGENT_NOTES)
def test_an_agents_notes_about_people_keep_what_happened_to_them(tmp_path: Path, language: str) -> None:
    """Short third-person notes an agent writes: a name opening the sentence says whom it is about
    (小林搬到了…, in Chinese with no capitals to tell a name by), a weekday ahead is a plan's date;
    small talk and the weather stay out."""
    lines = AGENT_NOTES[language]
    body = "".join(f"- 20:00 {line}\n" for line in lines)
    vault = committed(
        make_vault(tmp_path, MEMORY_ZH if language == "zh" else MEMORY_EN, {"2026-11-27": body})
    )
    promoted = " ".join(c.text for c in run(vault, threshold=0.6).promoted)  # a small week: few rare words
    for news in lines[:3]:
        assert news[:5] in promoted
    for small_talk in lines[3:]:
        assert small_talk[:5] not in promoted


def test_a_fragment_carries_the_line_before_it_or_is_not_promoted(tmp_path: Path) -> None:
    daily = {
        "2026-11-28": "---\ndate: 2026-11-28\n---\n"
        "- 10:00 **Ben**: They finally repaved the whole street outside after three months of roadworks.\n"
        "- 10:01 **Ana**: How was the pottery class on Saturday?\n"
        "- 10:02 **Ben**: It was so relaxing, I made a bowl for my grandmother's birthday.\n"
    }
    vault = committed(make_vault(tmp_path, MEMORY_EN, daily))
    report = run(vault, threshold=0.4)  # a fragment scores 0.2 lower even with its context
    assert [c.text for c in report.promoted] == [
        "**Ben** (re: “How was the pottery class on Saturday?”): It was so relaxing, "
        "I made a bowl for my grandmother's birthday."
    ]
    first = next(s for s in report.skipped if s.source.endswith(":4"))
    assert first.reason.startswith("a fragment")  # nothing before it in its note to say what "They" are


def test_memory_grows_within_its_word_budget(tmp_path: Path) -> None:
    lines = [
        f"- 09:{i:02d} Decided to move service {name} to the {place} datacenter in region {i}."
        for i, (name, place) in enumerate(
            [
                (n, p)
                for n in ("atlas", "billing", "search", "mail", "chat")
                for p in ("Oslo", "Lima", "Pune", "Kobe")
            ]
        )
    ]
    daily = {"2026-11-28": "---\ndate: 2026-11-28\n---\n" + "\n".join(lines) + "\n"}
    vault = committed(make_vault(tmp_path, MEMORY_EN, daily))
    report = run(vault, settings={"budget_words_per_month": 60})
    words = sum(len(c.text.split()) for c in report.promoted)
    assert 0 < words <= 60 and len(report.promoted) < len(lines)
    assert any("over the MEMORY.md budget" in s.reason for s in report.skipped)
    unlimited = committed(make_vault(tmp_path, MEMORY_EN, daily, name="unlimited"))
    assert len(run(unlimited, settings={"budget_words_per_month": 0}).promoted) == len(lines)


def test_a_chinese_memory_grows_within_the_same_word_budget(tmp_path: Path) -> None:
    # Chinese has no spaces: a line is not one word, or a Chinese MEMORY.md would have no bound
    places = ("上海", "杭州", "成都", "深圳")
    lines = [
        f"- 09:{i:02d} 决定把{name}服务迁到{place}的机房，第{i}区，下个季度完成。"
        for i, (name, place) in enumerate(
            [(n, p) for n in ("支付", "搜索", "邮件", "聊天", "账单") for p in places]
        )
    ]
    daily = {"2026-11-28": "---\ndate: 2026-11-28\n---\n" + "\n".join(lines) + "\n"}
    vault = committed(make_vault(tmp_path, MEMORY_ZH, daily))
    report = run(vault, settings={"budget_words_per_month": 60})
    words = sum(count_words(c.text) for c in report.promoted)
    assert 0 < words <= 60 and len(report.promoted) < len(lines) / 2
    assert any("over the MEMORY.md budget" in s.reason for s in report.skipped)


def test_items_older_than_the_oldest_note_neither_count_nor_are_archived(tmp_path: Path) -> None:
    # A workspace whose old daily notes were deleted: its items were promoted under their own months' budget
    old = [
        f"- 2026-03-{day:02d}: Weak old fact number {day} about the office plant watering rota [importance:: 0.5] ^m-old{day:03d}"
        for day in range(1, 21)
    ]
    text = "---\ntitle: memory\n---\n# Memory\n\n## Facts\n\n" + "\n".join(old) + "\n"
    daily = {"2026-11-28": NOTE_EN}
    vault = committed(make_vault(tmp_path, text, daily))
    report = run(vault, settings={"budget_words_per_month": 60})
    assert report.pruned == [] and report.promoted
    assert all(f"^m-old{day:03d}" in memory(vault) for day in range(1, 21))


def test_over_its_budget_memory_sheds_the_weakest_oldest_bot_items(tmp_path: Path) -> None:
    items = [
        "- 2026-10-01: Weak old fact about the office plant watering rota [importance:: 0.5] ^m-aaaaa1",
        "- 2026-11-20: Weak newer fact about the office coffee machine brand [importance:: 0.5] ^m-aaaaa2",
        "- 2026-10-02: Strong fact: allergic to penicillin, carries a card [importance:: 1.0] ^m-aaaaa3",
        "- 2026-10-03: Weak but ahead: dentist appointment on 2026-12-20 at noon [importance:: 0.4] ^m-aaaaa4",
        "- 2026-10-04: A person's own line about the garden shed key under the pot",
    ]
    text = "---\ntitle: memory\n---\n# Memory\n\n## Facts\n\n" + "\n".join(items) + "\n"
    daily = {day: f"---\ndate: {day}\n---\n- Bad sleep.\n" for day in ("2026-09-30", "2026-11-30")}
    vault = committed(make_vault(tmp_path, text, daily))
    report = run(vault, settings={"budget_words_per_month": 12})
    assert [c.block_id for c in report.pruned] == ["m-aaaaa1", "m-aaaaa2"]
    kept = memory(vault)
    assert "^m-aaaaa3" in kept and "^m-aaaaa4" in kept and "garden shed key" in kept
    archive = (vault / "memory" / "archive" / "2026-12.md").read_text(encoding="utf-8")
    assert "[reason:: budget]" in archive and "office plant" in archive


def test_chinese_headings_are_respected_and_created_in_a_chinese_vault(tmp_path: Path) -> None:
    vault = committed(make_vault(tmp_path, MEMORY_ZH, {"2026-11-29": NOTE_ZH}))
    run(vault)
    sections = memory(vault).split("\n## ")
    assert "依赖升级要一个一个来。" in next(s for s in sections if s.startswith("经验"))
    assert "我不吃香菜" in next(s for s in sections if s.startswith("偏好"))  # created in Chinese
    assert not any(s.startswith(("Lessons", "Preferences")) for s in sections)


@pytest.mark.parametrize(("threshold", "expected"), [(0.7, {0.7}), (0.71, set()), (0.6, {0.7, 0.6})])
def test_threshold_edges(tmp_path: Path, threshold: float, expected: set[float]) -> None:
    daily = {
        "2026-11-30": "- Decided to keep the monorepo for the web app.\n"  # decision: exactly 0.7
        "- By the way, I prefer green tea in the afternoon.\n"  # preference 0.8 - aside 0.2 = 0.6
        "- The plumber fixed the kitchen sink for good.\n"  # fact: 0.5
    }
    vault = committed(make_vault(tmp_path, MEMORY_EN, daily))
    report = run(vault, threshold=threshold)
    assert {c.score for c in report.promoted} == expected


def test_a_near_duplicate_adds_its_source_to_the_existing_item(tmp_path: Path) -> None:
    daily = {"2026-11-30": "- 10:00 I prefer concise answers, code first.\n"}
    vault = committed(make_vault(tmp_path, MEMORY_EN, daily))
    report = run(vault)
    assert report.promoted == [] and [m.block_id for m in report.merged] == ["m-2d4e6f"]
    item = lines_with(memory(vault), "^m-2d4e6f")
    assert item == [
        "- 2026-05-11: Prefers concise answers, code first [importance:: 0.8] "
        "[source:: [[2026-05-11]], [[2026-11-30]]] ^m-2d4e6f"
    ]
    assert subjects(vault)[1] == 'memory: merge "Prefers concise answers, code first"'


def test_supersede_then_prune_to_the_archive(tmp_path: Path) -> None:
    daily = {"2026-11-30": "- Decided to switch the Atlas web frontend from yarn workspaces to pnpm.\n"}
    vault = committed(make_vault(tmp_path, MEMORY_EN, daily))
    report = run(vault)
    new = lines_with(memory(vault), "pnpm")[0]
    assert "[supersedes:: m-9e0f3a]" in new
    assert "^m-9e0f3a" not in memory(vault)
    pruned = {p.block_id: p.reason for p in report.pruned}
    assert pruned == {
        "m-9e0f3a": f"superseded by ^{report.promoted[0].block_id}",
        "m-e83a51": "expired 2026-11-27",
    }
    archive = (vault / "memory" / "archive" / "2026-12.md").read_text(encoding="utf-8")
    assert archive.startswith("---\n")
    assert (
        "- 2026-09-14: Use yarn workspaces for the Atlas web frontend [importance:: 0.5] [source:: [[2026-09-14]]]"
        f" [archived:: 2026-12-01] [reason:: superseded] [superseded_by:: {report.promoted[0].block_id}] ^m-9e0f3a"
    ) in archive
    assert "[reason:: expired] ^m-e83a51" in archive


def test_expired_item_is_archived_with_its_reason(tmp_path: Path) -> None:
    vault = committed(make_vault(tmp_path, MEMORY_EN, {}))
    report = run(vault)
    assert [(p.block_id, p.reason) for p in report.pruned] == [("m-e83a51", "expired 2026-11-27")]
    assert "Hamburg" not in memory(vault)
    assert subjects(vault)[0] == 'memory: prune "The Hamburg demo is on 2026-11-26"'
    files = git(vault, "show", "--format=", "--name-only", "HEAD").split()
    assert files == ["MEMORY.md", "memory/archive/2026-12.md"]
    trailers = git(vault, "log", "-1", "--format=%(trailers)")
    assert "Reason: expired" in trailers and "Block: m-e83a51" in trailers
    # not yet expired on the day itself
    vault2 = committed(make_vault(tmp_path, MEMORY_EN, {}, name="v2"))
    assert run(vault2, as_of=dt.date(2026, 11, 27)).pruned == []


def test_temporary_items_older_than_the_limit_are_pruned(tmp_path: Path) -> None:
    text = MEMORY_EN + "- 2026-11-01: Wifi code at the hotel is on the card #temporary ^m-111111\n"
    vault = committed(make_vault(tmp_path, text, {}))
    report = run(vault)
    assert {p.block_id: p.reason for p in report.pruned}["m-111111"] == "temporary, older than 14 days"


def test_the_prune_cap_stops_and_reports(tmp_path: Path) -> None:
    items = [
        f"- 2026-10-{n:02d}: Old item number {n} [expires:: 2026-11-{n:02d}] ^m-aaaa{n:02d}"
        for n in range(1, 6)
    ]
    items += [f"- 2026-10-{n:02d}: Lasting item number {n} ^m-bbbb{n:02d}" for n in range(1, 16)]
    vault = committed(make_vault(tmp_path, "# Memory\n\n## Facts\n\n" + "\n".join(items) + "\n", {}))
    report = run(vault, settings={"prune_max_share": 0.1})
    assert [p.block_id for p in report.pruned] == ["m-aaaa01", "m-aaaa02"]  # 10% of 20, oldest first
    assert [h.block_id for h in report.held_back] == ["m-aaaa03", "m-aaaa04", "m-aaaa05"]
    assert any("prune cap reached" in w for w in report.warnings)
    assert "^m-aaaa03" in memory(vault)


def test_todos_and_temporary_things_are_not_promoted(tmp_path: Path) -> None:
    daily = {
        "2026-11-30": "- [ ] Remember to always book the dentist\n- Tomorrow the plumber comes at three\n"
    }
    vault = committed(make_vault(tmp_path, MEMORY_EN, daily))
    report = run(vault)
    assert report.promoted == []
    assert {s.reason.split(" (")[0] for s in report.skipped} == {
        "a todo",
        "score 0.2 below the threshold 0.7",
    }


def test_private_entry_marked_remember_stays_private_in_memory(tmp_path: Path) -> None:
    daily = {"2026-11-30": "- I prefer the Tuesday slot for therapy, it helps. #private #remember\n"}
    vault = committed(make_vault(tmp_path, MEMORY_EN, daily))
    run(vault)
    line = lines_with(memory(vault), "Tuesday slot")[0]
    assert "#private" in line


def test_secret_and_private_entries_are_never_promoted(tmp_path: Path) -> None:
    daily = {
        "2026-11-30": "- Remember: the prod password is hunter2-Xy9 #remember\n"
        "- Always use the staging API key sk-proj-nTtWKh7hJ1ziMUbFmoLUP8tp8GKtEpednATTfkg9kfeNP4lP\n"
        "- I prefer the Tuesday slot for therapy, it helps. #private\n"
        "- Lin's phone number is +49 176 5550 2941, remember it always\n"
    }
    vault = committed(make_vault(tmp_path, MEMORY_EN, daily))
    report = run(vault, threshold=0.0)
    assert report.promoted == []
    text = memory(vault)
    for secret in ("hunter2", "sk-proj", "Tuesday", "5550"):
        assert secret not in text


def test_secrets_and_health_written_in_traditional_chinese_are_never_promoted(tmp_path: Path) -> None:
    daily = {
        "2026-11-30": "- 記住：家裡 Wi-Fi 的密碼是 Tr0ub4dor-88，一定要記得\n"
        "- 我對花生過敏，嚴重時要用 EpiPen，記住這件事\n"
        "- 我的身分證字號是 A123456789，記住\n"
        "- 我上個月搬到了台北，在大安區租了房子。\n"
    }
    vault = committed(make_vault(tmp_path, MEMORY_ZH, daily))
    report = run(vault, threshold=0.0)
    assert [c.text for c in report.promoted] == ["我上個月（2026-10）搬到了台北，在大安區租了房子。"]
    text = memory(vault)
    for secret in ("Tr0ub4dor", "花生", "A123456789"):
        assert secret not in text


# ---------------------------------------------------------------------------------------------
# Commits


def test_one_commit_per_change_with_files_and_trailers(tmp_path: Path) -> None:
    vault = committed(make_vault(tmp_path))
    report = run(vault)
    log = subjects(vault)
    assert len(report.commits) == len(report.promoted) + len(report.pruned) == len(log) - 1
    for change in report.promoted:
        sha = change.commit
        assert sha is not None
        assert git(vault, "show", "--format=", "--name-only", sha).split() == ["MEMORY.md"]
        assert (
            git(vault, "log", "-1", "--format=%an <%ae>", sha).strip()
            == "vault-tools bot <bot@vault-tools.invalid>"
        )
        message = git(vault, "log", "-1", "--format=%B", sha)
        assert message.startswith(f'memory: promote "{change.text[:20]}')
        trailers = git(vault, "log", "-1", "--format=%(trailers:only,unfold)", sha).splitlines()
        keys = [t.split(":")[0] for t in trailers if t]
        assert keys[:1] == ["Source"] and {"Score", "Rule", "Block"} <= set(keys)
        assert f"Block: {change.block_id}" in trailers
        assert any(t.startswith("Source: memory/2026-11-2") and t.split(":")[-1].isdigit() for t in trailers)
        # the commit's diff adds the item line (and the heading of a new section), removes nothing
        diff = git(vault, "show", "--format=", sha).splitlines()
        changed = [line for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---")]
        item = "+" + lines_with(memory(vault), change.block_id)[0]
        assert item in changed and set(changed) <= {item, "+", "+## Lessons"}
    assert git(vault, "status", "--porcelain") == ""
    assert not any("committed around" in w for w in report.warnings)


def test_second_run_is_a_no_op(tmp_path: Path) -> None:
    vault = committed(make_vault(tmp_path))
    run(vault)
    before = (vault / "MEMORY.md").read_bytes()
    head = git(vault, "rev-parse", "HEAD")
    report = run(vault)
    assert (vault / "MEMORY.md").read_bytes() == before
    assert git(vault, "rev-parse", "HEAD") == head
    assert report.commits == [] and report.new_entries == 0 and report.skipped == []


def test_an_edited_entry_is_reconsidered_an_unchanged_one_is_not(tmp_path: Path) -> None:
    vault = committed(make_vault(tmp_path))
    run(vault)
    note = vault / "memory" / "2026-11-29.md"
    note.write_text(note.read_text().replace("中午吃了拉面，还不错。", "我以后都只喝无糖的豆浆，记住。"))
    report = run(vault)
    assert report.new_entries == 1
    assert [c.text for c in report.promoted] == ["我以后都只喝无糖的豆浆，记住。"]


def test_a_persons_uncommitted_edit_is_committed_around(tmp_path: Path) -> None:
    vault = committed(make_vault(tmp_path))
    (vault / "MEMORY.md").write_text(MEMORY_EN + "- 2026-11-30: My own uncommitted line\n")
    report = run(vault)
    assert any("committed around uncommitted edits in MEMORY.md" in w for w in report.warnings)
    assert "My own uncommitted line" in memory(vault)
    assert "My own uncommitted line" not in git(vault, "show", "HEAD:MEMORY.md")
    assert git(vault, "status", "--porcelain") == " M MEMORY.md\n"
    diff = git(vault, "diff")
    assert [line for line in diff.splitlines() if line.startswith("+") and line[1:2] != "+"] == [
        "+- 2026-11-30: My own uncommitted line"
    ]


def test_a_human_edit_made_during_the_run_survives(tmp_path: Path) -> None:
    vault = committed(make_vault(tmp_path))
    edited: list[str] = []

    def person_types(step: str) -> None:
        if step.startswith("committed promote") and not edited:
            with open(vault / "MEMORY.md", "a", encoding="utf-8") as handle:
                handle.write("- 2026-12-01: Typed while the bot was running\n")
            edited.append(step)

    report = run(vault, progress=person_types)
    assert edited and len(report.promoted) == 4
    text = memory(vault)
    assert "Typed while the bot was running" in text
    assert all(c.block_id in text for c in report.promoted)
    head = git(vault, "show", "HEAD:MEMORY.md")
    assert "Typed while the bot was running" not in head
    assert all(c.block_id in head for c in report.promoted)
    assert any("committed around uncommitted edits in MEMORY.md" in w for w in report.warnings)


class FakeTime:
    """Stands in for the heartbeat module's ``time``: ``time()`` moves only by its ``sleep()``."""

    def __init__(self, now: float) -> None:
        self.now = now
        self.slept: list[float] = []
        self.monotonic = time.monotonic

    def time(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


@pytest.mark.parametrize(("age", "waited"), [(2.0, 28.0), (29.5, 0.5), (31.0, 0.0)])
def test_waits_for_a_quiet_period_after_a_recent_edit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, age: float, waited: float
) -> None:
    vault = committed(make_vault(tmp_path))
    (vault / "MEMORY.md").write_text(MEMORY_EN + "- 2026-11-30: Just typed\n")
    saved = (vault / "MEMORY.md").stat().st_mtime
    clock = FakeTime(saved + age)  # the person saved MEMORY.md ``age`` seconds ago
    monkeypatch.setattr(heartbeat, "time", clock)
    report = run(vault, settings={"quiet_seconds": 30.0})
    assert sum(clock.slept) == waited  # until 30 s after the save, and not longer
    assert clock.now == saved + max(age, 30.0)
    assert any("to settle" in w for w in report.warnings) == (waited > 0)
    assert report.promoted and "Just typed" in memory(vault)  # then it ran as usual


def test_an_unreadable_daily_note_is_named_and_the_rest_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = committed(make_vault(tmp_path))
    unreadable = vault / "memory" / "2026-11-29.md"
    real = notes.read_note

    def read_note(path: Path, root: Path, **kwargs: Any) -> notes.Note:
        if Path(path) == unreadable:
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real(path, root, **kwargs)

    monkeypatch.setattr(notes, "read_note", read_note)
    report = run(vault)
    assert f"{unreadable}: could not be read (Permission denied); its entries were not considered" in (
        report.warnings
    )
    assert "我不吃香菜" not in memory(vault)  # nothing of it was promoted
    assert any("PostgreSQL" in c.text for c in report.promoted)  # the other note was


def test_a_human_deleted_item_never_comes_back(tmp_path: Path) -> None:
    daily = {"2026-11-27": "- I prefer dark roast coffee, light roast is too sour.\n"}
    vault = committed(make_vault(tmp_path, MEMORY_EN, daily))
    first = run(vault).promoted[0]
    text = memory(vault)
    (vault / "MEMORY.md").write_text(
        "\n".join(x for x in text.splitlines() if first.block_id not in x) + "\n"
    )
    git(vault, "commit", "-qam", "I do not want this one")
    (vault / "memory" / "2026-11-30.md").write_text(
        "- Still true: I prefer dark roast coffee, light roast is too sour.\n"
    )
    report = run(vault)
    assert report.promoted == [] and report.merged == []
    assert any("a person removed this item" in s.reason for s in report.skipped)
    # the state is disposable: without it, the bot's commits tell what it promoted
    shutil.rmtree(vault / ".vault-tools")
    report = run(vault)
    assert "dark roast" not in memory(vault)
    assert report.promoted == []


def test_not_a_repository_no_identity_initialises_one(tmp_path: Path) -> None:
    vault = make_vault(tmp_path)
    report = run(vault)
    assert any("initialised one" in w for w in report.warnings)
    log = subjects(vault)
    assert log[-1] == "memory: start tracking the vault" and len(log) == 1 + len(report.promoted) + len(
        report.pruned
    )
    tracked = git(vault, "ls-files").split()
    assert tracked == [
        ".gitignore",
        "MEMORY.md",
        "memory/2026-11-28.md",
        "memory/2026-11-29.md",
        "memory/archive/2026-12.md",
    ]
    assert git(vault, "status", "--porcelain") == ""


def test_a_vault_without_memory_md_gets_one(tmp_path: Path) -> None:
    vault = committed(make_vault(tmp_path, None))
    run(vault)
    text = memory(vault)
    assert text.startswith("---\ntitle: Long-term memory\n") and "## Lessons" in text
    assert git(vault, "status", "--porcelain") == ""


def test_crlf_and_bom_are_kept(tmp_path: Path) -> None:
    vault = committed(make_vault(tmp_path, "\ufeff" + MEMORY_EN.replace("\n", "\r\n")))
    run(vault)
    data = (vault / "MEMORY.md").read_bytes()
    assert data.startswith("\ufeff".encode()) and b"\n" not in data.replace(b"\r\n", b"")


def test_a_stale_index_lock_is_removed_with_a_warning_and_the_run_commits(tmp_path: Path) -> None:
    vault = committed(make_vault(tmp_path))
    lock = vault / ".git" / "index.lock"
    lock.write_text("")
    old = time.time() - 3600
    os.utime(lock, (old, old))
    report = run(vault)
    assert any(str(lock) in w and "60 minutes" in w and "removed" in w for w in report.warnings)
    assert report.commits and report.pending_commits == 0 and not lock.exists()
    assert git(vault, "status", "--porcelain") == ""


def test_an_index_lock_a_live_process_holds_is_waited_for_then_exit_5(tmp_path: Path) -> None:
    vault = committed(make_vault(tmp_path))
    lock = vault / ".git" / "index.lock"
    lock.write_text("")
    old = time.time() - 3600
    os.utime(lock, (old, old))
    before = memory(vault)
    release = tmp_path / "release"
    holder = subprocess.Popen(  # any process, not only git: it has the file open
        [sys.executable, "-c", HOLD_SCRIPT, str(lock), str(release)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        with pytest.raises(LockedError, match=r"index\.lock") as caught:
            run(vault, settings={"lock_wait_seconds": 0.3, "lock_grace_seconds": 0.0})
        assert f"pid {holder.pid}" in str(caught.value)
        assert lock.exists() and memory(vault) == before and len(subjects(vault)) == 1
    finally:
        release.write_text("x")
        holder.wait(timeout=20)
        assert holder.stdout is not None
        holder.stdout.close()
    report = run(vault, settings={"lock_grace_seconds": 0.0})  # the holder is gone: now it is stale
    assert report.commits and not lock.exists()


HOLD_SCRIPT = """
import sys, time
from pathlib import Path
handle = open(sys.argv[1], "a")
print("holding", flush=True)
deadline = time.monotonic() + 30
while not Path(sys.argv[2]).exists() and time.monotonic() < deadline:
    time.sleep(0.02)
"""


def test_a_sha256_repository_gets_its_commits_and_undo(tmp_path: Path) -> None:
    vault = make_vault(tmp_path)
    git(vault, "init", "-q", "--object-format=sha256")
    (vault / ".gitignore").write_text(".vault-tools/\n")
    git(vault, "add", "-A")
    git(vault, "commit", "-qm", "notes")
    report = run(vault)
    assert report.commits and all(len(sha) == 64 for sha in report.commits)
    assert git(vault, "status", "--porcelain") == "" and len(subjects(vault)) == 1 + len(report.commits)
    target = report.promoted[0]
    assert target.commit is not None
    heartbeat_undo.undo(config(vault), target.commit)
    assert target.block_id not in memory(vault)
    git(vault, "fsck", "--strict")


def test_detached_head_defers_commits(tmp_path: Path) -> None:
    vault = committed(make_vault(tmp_path))
    git(vault, "checkout", "-q", "--detach")
    report = run(vault)
    assert any("detached" in w for w in report.warnings) and report.commits == []
    git(vault, "checkout", "-q", "-")
    report = run(vault)
    assert report.commits and git(vault, "status", "--porcelain") == ""


def test_a_merge_in_progress_skips_the_run(tmp_path: Path) -> None:
    vault = committed(make_vault(tmp_path))
    (vault / ".git" / "MERGE_HEAD").write_text(git(vault, "rev-parse", "HEAD"))
    before = memory(vault)
    with pytest.raises(GitError, match="middle of a merge"):
        run(vault)
    assert memory(vault) == before


def test_pushes_only_when_configured(tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    vault = committed(make_vault(tmp_path))
    git(vault, "remote", "add", "origin", str(remote))
    git(vault, "push", "-q", "origin", "HEAD")
    run(vault)
    assert git(remote, "rev-parse", "HEAD") != git(vault, "rev-parse", "HEAD")  # not configured: no push
    (vault / "memory" / "2026-11-30.md").write_text("- I prefer window seats on long trains.\n")
    report = run(vault, settings={"push": True})
    assert report.commits and git(remote, "rev-parse", "HEAD") == git(vault, "rev-parse", "HEAD")


def test_rules_come_from_config_toml(tmp_path: Path) -> None:
    daily = {"2026-11-30": "- The plumber fixed the kitchen sink for good.\n"}
    vault = committed(make_vault(tmp_path, MEMORY_EN, daily))
    (vault / ".vault-tools").mkdir()
    (vault / ".vault-tools" / "config.toml").write_text("[rules]\nweights = { fact = 0.75 }\nbogus = 1\n")
    report = run(vault)
    assert [c.text for c in report.promoted] == ["The plumber fixed the kitchen sink for good."]
    assert any("rules.bogus ignored" in w for w in report.warnings)


def test_dry_run_prints_the_diff_and_changes_nothing(tmp_path: Path) -> None:
    vault = make_vault(tmp_path)
    report = run(vault, dry_run=True)
    assert "+- 2026-11-28: Decided to use PostgreSQL" in report.diff
    assert "--- a/MEMORY.md" in report.diff and "+++ b/memory/archive/2026-12.md" in report.diff
    assert memory(vault) == MEMORY_EN
    assert not (vault / ".git").exists() and not (vault / ".vault-tools").exists()
    assert not (vault / "memory" / "archive").exists()


def test_if_due(tmp_path: Path) -> None:
    vault = committed(make_vault(tmp_path))
    assert run(vault, if_due=True).ran
    skipped = run(vault, if_due=True)
    assert not skipped.ran and "runs every 24 h" in skipped.warnings[-1]
    assert run(vault, if_due=True, settings={"interval_hours": 0.0}).ran


# ---------------------------------------------------------------------------------------------
# One at a time, and crashes


def test_two_heartbeats_at_once(tmp_path: Path) -> None:
    vault = committed(make_vault(tmp_path))
    with locks.hold(config(vault), "heartbeat", timeout=0, what="test"), pytest.raises(LockedError) as caught:
        run(vault)
    # says what holds this lock, not the index lock's "a watcher holds it only while it indexes"
    assert "a heartbeat or a sync holds it for its run" in str(caught.value)
    assert "watcher" not in str(caught.value)
    holding, release = tmp_path / "holding", tmp_path / "release"
    script = textwrap.dedent(
        f"""
        import datetime as dt, time, dataclasses
        from pathlib import Path
        from vault_tools.heartbeat import run as heartbeat
        from vault_tools.config import load_config
        cfg = load_config(Path({str(vault)!r}))
        cfg = dataclasses.replace(
            cfg, heartbeat=dataclasses.replace(cfg.heartbeat, quiet_seconds=0, summaries=False)
        )
        def hold(step):
            if step == "planned":  # keep the lock until the test has run the second heartbeat
                Path({str(holding)!r}).write_text("x")
                deadline = time.monotonic() + 30
                while not Path({str(release)!r}).exists() and time.monotonic() < deadline:
                    time.sleep(0.02)
        heartbeat.run_heartbeat(cfg, heartbeat.Options(as_of=dt.date(2026, 12, 1)), hold)
        """
    )
    first = subprocess.Popen([sys.executable, "-c", script])
    deadline = time.monotonic() + 20
    while not holding.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    second = subprocess.run(
        [sys.executable, "-m", "vault_tools", "--vault", str(vault), "heartbeat", "--as-of", "2026-12-01"],
        capture_output=True,
        text=True,
    )
    release.write_text("x")
    assert first.wait(timeout=30) == 0
    assert second.returncode == LockedError.exit_code, second.stderr
    assert "heartbeat" in second.stderr
    text = memory(vault)
    assert len(lines_with(text, "PostgreSQL")) == 1
    assert len(subjects(vault)) == 1 + 4  # the default prune cap (10% of 7 items) prunes nothing


KILL_SCRIPT = """
import datetime as dt, os, signal, sys, time, dataclasses
from pathlib import Path
from vault_tools.heartbeat import run as heartbeat
from vault_tools.config import load_config
vault, kill_at, hold = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3:] == ["hold"]
cfg = load_config(vault)
cfg = dataclasses.replace(
    cfg, heartbeat=dataclasses.replace(cfg.heartbeat, quiet_seconds=0, prune_max_share=1.0, summaries=False)
)
steps = []
def step(name):
    steps.append(name)
    print("STEP", name, flush=True)
    if len(steps) == kill_at:
        if hold:  # wait here for the test's kill, which then always lands before the run ends
            time.sleep(3600)
        os.kill(os.getpid(), signal.SIGKILL)
heartbeat.run_heartbeat(cfg, heartbeat.Options(as_of=dt.date(2026, 12, 1)), step)
print(len(steps))
"""


def snapshot(vault: Path) -> tuple[bytes, bytes, list[str]]:
    archive = vault / "memory" / "archive" / "2026-12.md"
    return (
        (vault / "MEMORY.md").read_bytes(),
        archive.read_bytes() if archive.exists() else b"",
        subjects(vault),
    )


def test_kill_9_at_every_step_then_rerun_finishes_without_duplicates(tmp_path: Path) -> None:
    daily = {
        "2026-11-30": "- Decided to keep the monorepo for the web app.\n- I prefer tea over coffee after lunch.\n"
    }
    pristine = committed(make_vault(tmp_path, MEMORY_EN, daily, name="pristine"))
    reference = tmp_path / "reference"
    shutil.copytree(pristine, reference)
    result = subprocess.run(
        [sys.executable, "-c", KILL_SCRIPT, str(reference), "0"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    steps = int(result.stdout.splitlines()[-1])
    expected = snapshot(reference)
    assert len(expected[2]) == 1 + 3  # two promotions and a prune
    for kill_at in range(1, steps + 1):
        vault = tmp_path / f"killed-{kill_at}"
        shutil.copytree(pristine, vault)
        killed = subprocess.run(
            [sys.executable, "-c", KILL_SCRIPT, str(vault), str(kill_at)], capture_output=True
        )
        assert killed.returncode == -signal.SIGKILL
        run(vault)
        assert snapshot(vault) == expected, f"killed at step {kill_at}"
        assert git(vault, "status", "--porcelain") == ""
        assert not (vault / ".vault-tools" / "heartbeat" / "journal.json").exists()


def test_kill_9_at_random_times_then_rerun(tmp_path: Path) -> None:
    """Killed at a random moment inside a random step (not at a step boundary, as above)."""
    pristine = committed(make_vault(tmp_path, name="pristine"))
    reference = tmp_path / "reference"
    shutil.copytree(pristine, reference)
    steps: list[str] = []
    run(reference, progress=steps.append)
    expected = snapshot(reference)
    assert steps[-1] == "state" and len(steps) >= 5
    chooser = random.Random(4)
    for attempt in range(3):
        vault = tmp_path / f"random-{attempt}"
        shutil.copytree(pristine, vault)
        kill_after = chooser.randint(2, len(steps) - 2)  # after the journal, before the state
        process = subprocess.Popen(
            [sys.executable, "-c", KILL_SCRIPT, str(vault), str(kill_after + 1), "hold"],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert process.stdout is not None
            seen = read_steps(process.stdout, kill_after)
            assert seen == steps[:kill_after]
            time.sleep(chooser.uniform(0.0, 0.05))  # somewhere inside the next step, or held at its end
        finally:
            process.send_signal(signal.SIGKILL)  # also when the test failed: the run is held for an hour
        process.communicate(timeout=20)
        assert process.returncode == -signal.SIGKILL  # killed, before it could finish
        assert (vault / ".vault-tools" / "heartbeat" / "journal.json").exists()  # the run was cut short
        run(vault)
        assert snapshot(vault) == expected, f"killed after step {kill_after} ({steps[kill_after - 1]})"
        assert git(vault, "status", "--porcelain") == ""
        assert not (vault / ".vault-tools" / "heartbeat" / "journal.json").exists()


# The killed heartbeat was starting a git command: between fork and exec the child shares the
# lock's open file, so the flock outlives the reaped holder by a moment (its fd is close-on-exec).
# Here that child is held until the next run has found the lock taken by a dead owner.
HOLDER_SCRIPT = """
import os, subprocess, sys, time
from pathlib import Path
from vault_tools import locks
from vault_tools.config import load_config
cfg, release = load_config(Path(sys.argv[1])), int(sys.argv[2])
with locks.hold(cfg, "heartbeat", timeout=0, what="heartbeat"):
    path = str(locks.lock_path(cfg, "heartbeat"))
    fd = next(int(f) for f in os.listdir("/proc/self/fd") if os.path.realpath(f"/proc/self/fd/{f}") == path)
    code = "import os, sys; os.read(int(sys.argv[1]), 1)"  # shares the lock until the test lets it go
    subprocess.Popen([sys.executable, "-c", code, str(release)], pass_fds=(fd, release), stdout=subprocess.DEVNULL)
    print("ready", flush=True)
    time.sleep(3600)
"""


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="finds the lock's descriptor in /proc")
def test_a_child_of_a_killed_heartbeat_does_not_block_the_next_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = committed(make_vault(tmp_path))
    release_read, release_write = os.pipe()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER_SCRIPT, str(vault), str(release_read)],
        stdout=subprocess.PIPE,
        text=True,
        pass_fds=(release_read,),
    )
    os.close(release_read)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "ready\n"
        holder.kill()
        holder.communicate(timeout=20)
        probe = os.open(locks.lock_path(config(vault), "heartbeat"), os.O_RDWR)
        try:
            with pytest.raises(BlockingIOError):  # the holder is reaped, its child still holds the lock
                fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(probe)
        owner_alive = getattr(locks, "owner_alive", lambda _cfg, _name: True)

        def found_taken(cfg: Config, name: str) -> bool:
            os.close(release_write)  # the child execs (or exits) only now, after the run found it taken
            return owner_alive(cfg, name)

        monkeypatch.setattr(locks, "owner_alive", found_taken, raising=False)
        report = run(vault)
        assert report.ran and len(subjects(vault)) > 1
    finally:
        holder.kill()
        holder.communicate()
        with contextlib.suppress(OSError):
            os.close(release_write)


# ---------------------------------------------------------------------------------------------
# Undo


def test_undo_a_promotion_and_it_stays_undone(tmp_path: Path) -> None:
    vault = committed(make_vault(tmp_path))
    report = run(vault)
    target = report.promoted[0]
    assert target.commit is not None
    (vault / "MEMORY.md").write_text(memory(vault) + "- 2026-12-01: a person's line\n")
    undone = heartbeat_undo.undo(config(vault), target.commit)
    assert undone.commit is not None and undone.files == ["MEMORY.md"]
    assert target.block_id not in memory(vault) and "a person's line" in memory(vault)
    assert subjects(vault)[0].startswith(f"memory: undo \"promote '{target.text[:20]}")
    assert f"Reverts: {target.commit}" in git(vault, "log", "-1", "--format=%B")
    assert target.block_id not in git(vault, "show", "HEAD:MEMORY.md")
    assert "a person's line" not in git(vault, "show", "HEAD:MEMORY.md")
    note = vault / "memory" / "2026-11-30.md"
    note.write_text("- " + target.text + "\n")  # said again: still the person's decision
    again = run(vault)
    assert target.block_id not in memory(vault) and all(c.text != target.text for c in again.promoted)


def test_undo_a_prune_restores_the_item_and_keeps_it(tmp_path: Path) -> None:
    vault = committed(make_vault(tmp_path, MEMORY_EN, {}))
    prune = run(vault).pruned[0]
    assert prune.commit is not None
    report = heartbeat_undo.undo(config(vault), prune.commit)
    assert sorted(report.files) == ["MEMORY.md", "memory/archive/2026-12.md"]
    assert memory(vault) == MEMORY_EN
    assert not (vault / "memory" / "archive" / "2026-12.md").exists()
    assert git(vault, "status", "--porcelain") == ""
    assert run(vault).pruned == []  # a person wanted it back: not pruned again


def test_undo_refuses_commits_that_are_not_the_bots_changes(tmp_path: Path) -> None:
    vault = committed(make_vault(tmp_path))
    with pytest.raises(UsageError, match="not by the vault-tools bot"):
        heartbeat_undo.undo(config(vault), "HEAD")
    fresh = make_vault(tmp_path, name="fresh")
    run(fresh)  # initialises a repository: the first bot commit is the baseline of the notes
    baseline = git(fresh, "rev-list", "--max-parents=0", "HEAD").strip()
    with pytest.raises(UsageError, match=r"not a promote, merge or prune|no single parent"):
        heartbeat_undo.undo(config(fresh), baseline)
    assert (fresh / "memory" / "2026-11-28.md").exists()
    # a baseline with a parent: MEMORY.md was not tracked in a repository that has commits
    later = make_vault(tmp_path, name="later")
    (later / "MEMORY.md").rename(tmp_path / "MEMORY.md")
    committed(later)
    (tmp_path / "MEMORY.md").rename(later / "MEMORY.md")
    run(later)
    tracking = git(later, "log", "--format=%H", "--grep=start tracking").split()
    assert len(tracking) == 1
    with pytest.raises(UsageError, match="not a promote, merge or prune"):
        heartbeat_undo.undo(config(later), tracking[0])
    assert (later / "MEMORY.md").exists()


def test_undo_of_an_undo_brings_the_item_back(tmp_path: Path) -> None:
    vault = committed(make_vault(tmp_path))
    target = run(vault).promoted[0]
    assert target.commit is not None
    first = heartbeat_undo.undo(config(vault), target.commit)
    assert first.commit is not None and target.block_id not in memory(vault)
    heartbeat_undo.undo(config(vault), first.commit)
    assert len(lines_with(memory(vault), target.block_id)) == 1
    assert git(vault, "status", "--porcelain") == ""
    third = heartbeat_undo.undo(config(vault), target.commit)  # in effect again: it can be undone again
    assert third.commit is not None and target.block_id not in memory(vault)


def test_a_second_undo_says_which_commit_undid_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault = committed(make_vault(tmp_path))
    target = run(vault).promoted[0]
    assert target.commit is not None
    first = heartbeat_undo.undo(config(vault), target.commit)
    assert first.commit is not None
    (vault / "MEMORY.md").write_text(memory(vault) + "- 2026-12-01: a person's line\n")
    head = git(vault, "rev-parse", "HEAD")
    code = cli.main(["undo", target.commit[:12], "--vault", str(vault)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert f"is already undone by {first.commit[:10]}; nothing to do" in err and "by hand" not in err
    assert git(vault, "rev-parse", "HEAD") == head and "a person's line" in memory(vault)


# ---------------------------------------------------------------------------------------------
# The command line


def test_cli_heartbeat_json_undo_and_schedule(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault = committed(make_vault(tmp_path))
    (vault / ".vault-tools").mkdir()
    (vault / ".vault-tools" / "config.toml").write_text(
        "[heartbeat]\nquiet_seconds = 0\nprune_max_share = 1.0\nsummaries = false\n"
    )
    code = cli.main(["--vault", str(vault), "heartbeat", "--as-of", "2026-12-01", "--no-llm", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["mode"] == "rules" and len(data["promoted"]) == 4 and len(data["commits"]) == 5
    assert {"promoted", "merged", "pruned", "skipped", "commits", "model", "tokens", "warnings"} <= set(data)
    last = json.loads((vault / ".vault-tools" / "heartbeat" / "last-run.json").read_text())
    assert last["promoted"] == 4 and "summary" in last
    code = cli.main(["--vault", str(vault), "undo", data["promoted"][0]["commit"]])
    assert code == 0 and "undid" in capsys.readouterr().out
    code = cli.main(["--vault", str(vault), "heartbeat", "--as-of", "2026-12-01", "--dry-run"])
    assert code == 0 and "heartbeat 2026-11-25..2026-12-01" in capsys.readouterr().out
    code = cli.main(["--vault", str(vault), "schedule", "--print", "cron"])
    out = capsys.readouterr().out
    assert code == 0 and "heartbeat --if-due" in out and str(vault) in out
    code = cli.main(["--vault", str(vault), "schedule", "--print", "systemd"])
    out = capsys.readouterr().out
    assert "OnCalendar=hourly" in out and "Persistent=true" in out and "ExecStart=" in out
    (vault / ".git" / "MERGE_HEAD").write_text("x")
    code = cli.main(["--vault", str(vault), "heartbeat", "--json"])
    assert code == GitError.exit_code and "merge" in json.loads(capsys.readouterr().out)["error"]


def test_the_sample_vault_copy(tmp_path: Path) -> None:
    sample = Path(__file__).resolve().parent.parent / "vault"
    vault = tmp_path / "sample"
    shutil.copytree(sample, vault, ignore=shutil.ignore_patterns(".vault-tools", ".git"))
    report = run(vault, settings={"prune_max_share": 0.1})
    assert report.promoted and git(vault, "status", "--porcelain") == ""
    text = memory(vault)
    for never in ("sk-proj", "Dr. Keller", "HEARTBEAT_OK", "+49 176"):
        assert never not in text
    assert run(vault).commits == []
