"""Upcoming: dates read from a line or resolved against the note's own date; what is a reminder."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

import pytest
from helpers import write

from vault_tools import cli
from vault_tools.agents.context import build_context
from vault_tools.config import load_config
from vault_tools.errors import UsageError
from vault_tools.notes import model as notes
from vault_tools.recall.named_dates import dates_named
from vault_tools.recall.upcoming import CACHE_VERSION, dates_of, find_upcoming, next_date

D = dt.date


def named(line: str, written: D | None) -> list[tuple[str, str]]:
    return [(m.day.isoformat(), m.phrase) for m in dates_named(line, written)]


@pytest.mark.parametrize(
    ("line", "written", "expected"),
    [
        # read from the line
        ("Renew the passport by 2027-01-15", D(2026, 11, 26), "2027-01-15"),
        ("Dentist March 14 at 9", D(2026, 3, 9), "2026-03-14"),
        ("Flight on 14 March 2027", D(2026, 11, 26), "2027-03-14"),
        ("3月14日交季度报告", D(2026, 3, 9), "2026-03-14"),
        ("2027年1月3日搬家", D(2026, 12, 20), "2027-01-03"),
        # resolved against the note's date, also across month and year ends
        ("Call the bank tomorrow", D(2026, 3, 9), "2026-03-10"),
        ("Call the bank tomorrow", D(2026, 12, 31), "2027-01-01"),
        ("明天早上十点开合同会", D(2026, 2, 28), "2026-03-01"),
        ("后天去医院复查", D(2026, 12, 30), "2027-01-01"),
        ("the day after tomorrow: demo", D(2026, 1, 30), "2026-02-01"),
        ("Release next Tuesday", D(2026, 11, 26), "2026-12-01"),  # a Thursday: next week's Tuesday
        ("Offsite next Wednesday", D(2026, 12, 30), "2027-01-06"),  # a Wednesday
        ("网络要下周三才能装好", D(2026, 11, 28), "2026-12-02"),  # a Saturday
        ("下周三交报告", D(2026, 1, 31), "2026-02-04"),
        ("本周五发版", D(2026, 11, 23), "2026-11-27"),
        ("Meeting this coming Monday", D(2026, 11, 26), "2026-11-30"),
        ("Dentist on Friday at 9", D(2026, 11, 25), "2026-11-27"),
        ("Send it before Friday", D(2026, 11, 25), "2026-11-27"),
        ("Friday 9:00 standup with Hamburg", D(2026, 11, 25), "2026-11-27"),
        ("周六早上八点到", D(2026, 11, 27), "2026-11-28"),
        ("周三前把 CSV 导出提测", D(2026, 11, 23), "2026-11-25"),
        ("in two weeks: review the budget", D(2026, 12, 25), "2027-01-08"),
        ("3天后复查", D(2026, 12, 30), "2027-01-02"),
        # without a year: the occurrence nearest the note's date
        ("Kickoff Jan 5", D(2026, 12, 28), "2027-01-05"),
        ("March 2 we decided on Postgres", D(2026, 3, 10), "2026-03-02"),
    ],
)
def test_a_line_names_the_day_it_means(line: str, written: D, expected: str) -> None:
    assert [day for day, _phrase in named(line, written)][:1] == [expected]


@pytest.mark.parametrize(
    "line",
    [
        "Friday deploys are banned",
        "No deploys on Fridays",
        "every Friday at 9 we have a retro",
        "周五不发版",
        "记住：周五下午不要部署，任何情况都不行。",
        "每周五下午三点开会",
        "攀岩馆周四晚上人少",
        "On Friday we had a great dinner",
        "feeling much better than on Friday",
        "New teammate next week",
        "下个月再说",
    ],
)
def test_a_weekday_alone_a_habit_or_a_range_is_not_a_date(line: str) -> None:
    assert named(line, D(2026, 11, 25)) == []


# Written on Friday 2026-11-27: a weekday told as done is that day (or one before), never the next one.
@pytest.mark.parametrize(
    "line",
    [
        "周五下午三点开了会",
        "上周三已经交了报告",
        "昨天和 Maria 吃了饭",
        "周五下午三点已经开过会",
        "周三下午两点去过医院",
        "周五下午三点开了一个重要的会",  # 要 inside 重要 is no future
        "周五下午三点刚开完会",
        "周五下午三点把报告交了",
        "本周五开了会",
        "We met on Friday at 3pm",
        "had the review last Tuesday at 3pm",
        "We reviewed the budget on Friday at 3pm",
        "Friday at 3pm: reviewed the budget",
        "I have already sent it on Friday",
        "We finished it by Friday",
    ],
)
def test_a_weekday_told_as_done_is_not_a_reminder(line: str) -> None:
    assert named(line, D(2026, 11, 27)) == []


# Written on Saturday 2026-11-28: the same aspect words with a future, a goal or a deadline stay ahead.
@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("周五下午三点要开会了", "2026-12-04"),  # 了 of a change of state after 要
        ("下周三就要交报告了", "2026-12-02"),
        ("周五下午三点开了会再说", "2026-12-04"),
        ("下周三前把报告交了", "2026-12-02"),  # a deadline
        ("周五下午三点前交了就行", "2026-12-04"),
        ("约了周五下午三点看牙", "2026-12-04"),  # 了 is the booking's, before the weekday
        ("会议改到周五下午三点了", "2026-12-04"),  # the weekday is where it moved to
        ("周五下午三点过生日", "2026-12-04"),  # 过 the verb, not the aspect
        ("记得周五下午三点把报告交了", "2026-12-04"),
        ("We will review it on Friday at 3pm", "2026-12-04"),
        ("Need to call mom on Friday", "2026-12-04"),
        ("Booked the dentist for Friday at 9am", "2026-12-04"),
        ("Moved the standup to Friday 9:00", "2026-12-04"),
        ("Dentist on Friday at 9", "2026-12-04"),
    ],
)
def test_a_weekday_still_ahead_stays_a_reminder(line: str, expected: str) -> None:
    assert [day for day, _phrase in named(line, D(2026, 11, 28))][:1] == [expected]


def test_an_undated_note_has_only_dates_with_a_year() -> None:
    line = "tomorrow, March 3, next Friday, 2027-03-01, March 4, 2027 and 2027年3月5日"
    assert [d for d, _p in named(line, None)] == ["2027-03-01", "2027-03-04", "2027-03-05"]


def test_an_impossible_date_is_left_out() -> None:
    assert named("due 2026-02-30, then 2月30日", D(2026, 1, 1)) == []


def entry(vault: Path, rel: str, text: str) -> notes.Entry:
    write(vault / rel, text)
    return notes.read_note(vault / rel, vault).entries[0]


def test_fields_tasks_emoji_and_what_is_not_a_reminder(tmp_path: Path) -> None:
    due = entry(tmp_path, "memory/2026-03-09.md", "- Tax return [due:: 2026-04-30]\n")
    assert dates_of(due) == [(D(2026, 4, 30), "[due:: 2026-04-30]")]
    task = entry(tmp_path, "memory/2026-03-08.md", "- [ ] Book flights 📅 2026-03-20\n")
    assert [d for d, _p in dates_of(task)] == [D(2026, 3, 20)]
    done = entry(tmp_path, "memory/2026-03-07.md", "- [x] Call the bank tomorrow\n")
    assert dates_of(done) == []
    linked = entry(
        tmp_path, "memory/2026-03-06.md", "- See [[2026-03-20]] and `2026-03-21` [source:: [[2026-03-22]]]\n"
    )
    assert dates_of(linked) == []
    open_task = entry(tmp_path, "memory/2026-11-30.md", "- [ ] 周三在家等装网络的师傅\n")
    assert next_date(open_task, D(2026, 11, 30)) == D(2026, 12, 2)
    assert next_date(open_task, D(2026, 12, 3)) is None


NOTES = {
    "memory/2026-12-29.md": (
        "---\ndate: 2026-12-29\n---\n## Work\n"
        "- 09:00 Friday deploys are banned, always.\n"
        "- 10:00 Atlas release next Tuesday #atlas #shared\n"
        "- 11:00 Dentist tomorrow at 9\n"
        "- 12:00 体检结果下周三出来 #private\n"
        "- 13:00 明年1月20日续签护照\n"
        "- 14:00 Yesterday we decided on Postgres\n"
    ),
    "memory/2026-09-01.md": "- 09:00 Too old to be read: Review on 2027-01-02\n",
    "MEMORY.md": "## Facts\n- 2026-12-01: The Hamburg pilot starts on 2027-01-04 [importance:: 0.8] ^m-abc123\n",
}


@pytest.fixture
def dated_vault(tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    for rel, text in NOTES.items():
        write(vault / rel, text)
    return vault


def test_find_upcoming_soonest_first_within_the_horizon(dated_vault: Path) -> None:
    result = find_upcoming(load_config(dated_vault), days=14, as_of=D(2026, 12, 29))
    got = [(i.date, i.path, i.phrase) for i in result.items]
    assert got == [
        ("2026-12-30", "memory/2026-12-29.md", "tomorrow"),
        ("2027-01-04", "MEMORY.md", "2027-01-04"),
        ("2027-01-05", "memory/2026-12-29.md", "next Tuesday"),  # across the year end
    ]
    assert all("Friday" not in i.text and "体检" not in i.text for i in result.items)
    assert result.items[0].days_ahead == 1 and result.items[0].line == 7
    later = find_upcoming(load_config(dated_vault), days=30, as_of=D(2026, 12, 29))
    assert "2027-01-20" in [i.date for i in later.items]  # 明年1月20日
    assert "2027-01-02" not in [i.date for i in later.items]  # a note older than the look-back


def test_group_chats_see_only_shared_items_and_private_ones_never_show(dated_vault: Path) -> None:
    config = load_config(dated_vault)
    group = find_upcoming(config, days=14, as_of=D(2026, 12, 29), chat="group")
    assert [i.text for i in group.items] == ["Atlas release next Tuesday #atlas #shared"]
    direct = find_upcoming(config, days=14, as_of=D(2026, 12, 29), chat="direct")
    assert not any("#private" in i.text for i in direct.items)


def test_the_command_and_context_show_what_is_coming(
    dated_vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = cli.main(["--vault", str(dated_vault), "upcoming", "--as-of", "2026-12-29", "--json"])
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert [i["date"] for i in data["items"]] == ["2026-12-30", "2027-01-04", "2027-01-05"]
    assert data["items"][0]["path"] == "memory/2026-12-29.md" and data["items"][0]["line"] == 7
    cli.main(["--vault", str(dated_vault), "upcoming", "--as-of", "2026-12-29"])
    text = capsys.readouterr().out
    assert text.startswith(
        "2026-12-30 Wed, tomorrow (tomorrow)  memory/2026-12-29.md:7\n  Dentist tomorrow at 9"
    )

    context = build_context(load_config(dated_vault), as_of=D(2026, 12, 29), max_tokens=2000)
    markdown = context.render()
    assert "## Coming up\n- 2026-12-30 Wed, tomorrow: Dentist tomorrow at 9\n" in markdown
    group = build_context(load_config(dated_vault), chat="group", as_of=D(2026, 12, 29)).render()
    assert "## Coming up\n- 2027-01-05 Tue, in 7 days: Atlas release next Tuesday #atlas #shared" in group
    assert "Dentist" not in group and "Hamburg" not in group


def test_the_cache_follows_edits_and_heals(dated_vault: Path) -> None:
    config = load_config(dated_vault)
    first = find_upcoming(config, days=14, as_of=D(2026, 12, 29))
    cache = dated_vault / ".vault-tools" / "upcoming.json"
    assert cache.is_file() and "体检" not in cache.read_text(encoding="utf-8")  # private: never cached
    note = dated_vault / "memory/2026-12-29.md"
    note.write_text(
        note.read_text(encoding="utf-8") + "- 15:00 Board meeting on 2027-01-07\n", encoding="utf-8"
    )
    edited = find_upcoming(config, days=14, as_of=D(2026, 12, 29))
    assert [i.date for i in edited.items] == [*(i.date for i in first.items), "2027-01-07"]
    cache.write_text("{not json", encoding="utf-8")
    assert find_upcoming(config, days=14, as_of=D(2026, 12, 29)).items == edited.items
    assert json.loads(cache.read_text(encoding="utf-8"))["version"] == CACHE_VERSION


def test_the_cache_is_written_only_when_a_note_changed(dated_vault: Path) -> None:
    config = load_config(dated_vault)
    first = find_upcoming(config, days=14, as_of=D(2026, 12, 29))
    cache = dated_vault / ".vault-tools" / "upcoming.json"
    written = cache.stat().st_mtime_ns
    os.utime(cache, ns=(written - 10**9, written - 10**9))  # a rewrite would move it on
    assert find_upcoming(config, days=14, as_of=D(2026, 12, 29)).items == first.items
    assert cache.stat().st_mtime_ns == written - 10**9
    (dated_vault / "memory/2026-12-29.md").unlink()
    after = find_upcoming(config, days=14, as_of=D(2026, 12, 29))
    assert "memory/2026-12-29.md" not in json.loads(cache.read_text(encoding="utf-8"))["files"]
    assert all(i.path != "memory/2026-12-29.md" for i in after.items)


def test_a_note_linked_from_outside_the_vault_is_left_out_with_a_warning(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    write(vault / "memory/2026-12-28.md", "- 09:00 Dentist tomorrow at 9\n")
    outside = write(tmp_path / "elsewhere" / "2026-12-27.md", "- 09:00 Secret trip tomorrow\n")
    (vault / "memory/2026-12-27.md").symlink_to(outside)
    result = find_upcoming(load_config(vault), days=14, as_of=D(2026, 12, 28))
    assert [i.text for i in result.items] == ["Dentist tomorrow at 9"]
    assert any("2026-12-27.md" in w and "outside the vault" in w for w in result.warnings)


def test_a_note_in_traditional_chinese_names_its_days(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    write(
        vault / "memory/2026-12-01.md",
        "- 09:00 下週三和房東交接鑰匙\n- 10:00 後天去醫院拿報告\n- 11:00 週五下午三點開了會\n",
    )
    result = find_upcoming(load_config(vault), days=14, as_of=D(2026, 12, 1))
    assert [(i.date, i.phrase) for i in result.items] == [("2026-12-03", "後天"), ("2026-12-09", "下週三")]


def test_a_cache_of_older_rules_is_read_again(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    write(vault / "memory/2026-11-27.md", "- 16:00 周五下午三点开了会\n")  # a Friday, told as done
    note = vault / "memory/2026-11-27.md"
    stat = note.stat()
    old = {"line": 1, "text": "周五下午三点开了会", "kind": "daily", "visibility": "personal"}
    old |= {"written": "2026-11-27", "dates": [["2026-11-27", "周五"]]}  # what the rules of version 1 cached
    files = {"memory/2026-11-27.md": {"key": [stat.st_size, stat.st_mtime_ns], "entries": [old]}}
    (vault / ".vault-tools").mkdir()
    (vault / ".vault-tools" / "upcoming.json").write_text(
        json.dumps({"version": 1, "files": files}), encoding="utf-8"
    )
    assert find_upcoming(load_config(vault), days=14, as_of=D(2026, 11, 27)).items == []


# --- yearly dates in MEMORY.md; #private items for their owner -----------------------------------

YEARLY_MEMORY = """---
title: Long-term memory
---
# Long-term memory

## Facts

- 2026-05-11: Mom's birthday is March 14 [importance:: 0.9] ^m-a00001
- 2026-05-11: 妈妈生日是3月14日 ^m-a00002
- 2026-05-11: Lin was born on 29 February 1996 ^m-a00003
- 2026-05-11: Wedding anniversary with Sam: 14 June ^m-a00004
- 2026-05-11: 结婚纪念日是六月二十日 ^m-a00005
- 2026-05-11: Mom's birthday party is on March 14, 2027 at Luigi's ^m-a00006
- 2026-05-11: The Hamburg demo is on Nov 26 ^m-a00007

## 生日

- 爸爸：10月2日 ^m-a00008
"""


@pytest.fixture
def yearly_vault(tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    write(vault / "MEMORY.md", YEARLY_MEMORY)
    write(vault / "memory/2026-05-11.md", "- 09:00 Ana's birthday is on May 20\n")  # a note: not yearly
    return vault


def upcoming_dates(vault: Path, as_of: D, days: int = 365, **options: object) -> list[tuple[str, str]]:
    result = find_upcoming(load_config(vault), days=days, as_of=as_of, **options)  # type: ignore[arg-type]
    return [(item.date, item.text) for item in result.items]


def test_birthdays_and_anniversaries_in_memory_come_back_every_year(yearly_vault: Path) -> None:
    got = upcoming_dates(yearly_vault, D(2027, 1, 10))
    assert got == [
        ("2027-02-28", "Lin was born on 29 February 1996"),  # not a leap year: February 28
        ("2027-03-14", "Mom's birthday is March 14"),
        ("2027-03-14", "妈妈生日是3月14日"),
        ("2027-03-14", "Mom's birthday party is on March 14, 2027 at Luigi's"),  # a one-off, this year
        ("2027-06-14", "Wedding anniversary with Sam: 14 June"),
        ("2027-06-20", "结婚纪念日是六月二十日"),
        ("2027-10-02", "爸爸：10月2日"),  # under a 生日 heading
    ]  # not the Hamburg demo, nor a birthday told in a daily note
    leap = upcoming_dates(yearly_vault, D(2028, 2, 1), days=30)
    assert leap == [("2028-02-29", "Lin was born on 29 February 1996")]
    next_year = upcoming_dates(yearly_vault, D(2028, 3, 14), days=0)  # on the day itself
    assert [text for _day, text in next_year] == ["Mom's birthday is March 14", "妈妈生日是3月14日"]
    result = find_upcoming(load_config(yearly_vault), days=7, as_of=D(2027, 3, 10))
    assert [(i.phrase, i.days_ahead) for i in result.items] == [
        ("March 14, every year", 4),
        ("3月14日, every year", 4),
        ("March 14, 2027", 4),
    ]


def test_next_date_and_context_see_the_next_birthday(yearly_vault: Path) -> None:
    entries = {e.block_id: e for e in notes.read_note(yearly_vault / "MEMORY.md", yearly_vault).entries}
    assert next_date(entries["m-a00001"], D(2026, 12, 1)) == D(2027, 3, 14)
    assert next_date(entries["m-a00001"], D(2026, 12, 1), yearly=False) is None
    assert next_date(entries["m-a00006"], D(2027, 3, 15)) is None  # the party was a one-off
    direct = build_context(load_config(yearly_vault), chat="direct", as_of=D(2027, 3, 10)).render()
    coming = direct.split("## Coming up\n", 1)[1]
    assert "2027-03-14 Sun, in 4 days: Mom's birthday is March 14" in coming
    assert "妈妈生日是3月14日" in coming
    group = build_context(load_config(yearly_vault), chat="group", as_of=D(2027, 3, 10)).render()
    assert "birthday" not in group and "生日" not in group


def test_the_heartbeat_never_prunes_a_birthday_for_age_but_does_when_superseded(tmp_path: Path) -> None:
    import dataclasses

    from vault_tools.heartbeat import run as heartbeat

    vault = tmp_path / "vault"
    write(
        vault / "MEMORY.md",
        "---\ntitle: m\n---\n# Long-term memory\n\n## Facts\n\n"
        "- 2026-01-02: Mom's birthday is March 14 #temporary [expires:: 2026-02-01] ^m-b00001\n"
        "- 2026-01-02: 妈妈生日是3月14日 #temporary [expires:: 2026-02-01] ^m-b00002\n"
        "- 2026-01-02: Dentist on March 14 [expires:: 2026-03-15] ^m-b00003\n"
        "- 2026-01-02: Dad's birthday is June 2 ^m-b00004\n"
        "- 2026-01-03: Dad's birthday is June 3, not June 2 [supersedes:: m-b00004] ^m-b00005\n",
    )
    write(vault / "memory/2026-12-01.md", "- 09:00 nothing much\n")
    loaded = load_config(vault)
    config = dataclasses.replace(
        loaded, heartbeat=dataclasses.replace(loaded.heartbeat, quiet_seconds=0.0, prune_max_share=1.0)
    )
    report = heartbeat.run_heartbeat(config, heartbeat.Options(as_of=D(2026, 12, 1), use_llm=False))
    assert sorted(p.block_id for p in report.pruned) == ["m-b00003", "m-b00004"]
    text = (vault / "MEMORY.md").read_text(encoding="utf-8")
    assert "^m-b00001" in text and "^m-b00002" in text and "^m-b00005" in text


def test_include_private_shows_the_owner_their_private_items_in_a_direct_chat_only(
    dated_vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = load_config(dated_vault)
    plain = find_upcoming(config, days=14, as_of=D(2026, 12, 29))
    owner = find_upcoming(config, days=14, as_of=D(2026, 12, 29), include_private=True)
    added = [i for i in owner.items if i not in plain.items]
    assert [(i.date, i.text) for i in added] == [("2027-01-06", "体检结果下周三出来 #private")]
    cache = dated_vault / ".vault-tools" / "upcoming.json"
    assert "体检" not in cache.read_text(encoding="utf-8")  # never cached, even when shown
    with pytest.raises(UsageError, match="never shown in a group chat"):
        find_upcoming(config, days=14, as_of=D(2026, 12, 29), chat="group", include_private=True)
    argv = ["--vault", str(dated_vault), "--json", "upcoming", "--as-of", "2026-12-29"]
    assert cli.main([*argv, "--include-private"]) == 0
    assert "体检" in capsys.readouterr().out
    assert cli.main(argv) == 0
    assert "体检" not in capsys.readouterr().out
    assert cli.main([*argv, "--include-private", "--chat", "group"]) == 2
    assert "never shown in a group chat" in json.loads(capsys.readouterr().out)["error"]
    context = build_context(config, chat="direct", as_of=D(2026, 12, 29)).render()
    assert "体检" not in context  # what an agent loads never holds a #private item
