"""Whom a third-person note is about (summaries/people.py), in English and Chinese."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import write

from vault_tools.config import load_config
from vault_tools.curation.clauses import drop_subject
from vault_tools.summaries.people import names_in, subject_name
from vault_tools.summaries.text import Period
from vault_tools.summaries.write import Options, summarize


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Priya moved to Leeds in May.", "Priya"),
        ("Tomas's bakery opened on Friday.", "Tomas"),
        ("Decided to rent the van.", None),
        ("The plumber came at nine.", None),
        ("小林搬到了杭州。", "小林"),
        ("老周说他下个月辞职。", "老周"),
        ("阿杰报名了马拉松。", "阿杰"),
        ("妈妈下周三过生日。", "妈妈"),
        ("张伟开始学钢琴了。", "张伟"),
        ("欧阳娜娜的狗丢了。", None),  # a two-character family name is not among the common ones
        ("李小龙去了美国。", "李小龙"),
        ("王芳的猫生病了。", "王芳"),
        ("王明明在杭州找到了新工作。", "王明明"),  # a doubled given name, not 王明 before 明
        ("王明明天去上海。", "王明"),
        ("小时候我住在海边。", None),
        ("周末去爬山了。", None),
        ("马上要交报告了。", None),
        ("我搬家了。", None),
        ("媽媽下週三過生日。", "媽媽"),  # Traditional characters: the name as written
        ("張偉開始學鋼琴了。", "張偉"),
        ("週末去爬山了。", None),
    ],
)
def test_the_name_a_note_opens_with_is_its_subject(text: str, name: str | None) -> None:
    assert subject_name(text) == name


def test_a_chinese_name_is_found_without_word_boundaries() -> None:
    people = frozenset({"小林", "Priya"})
    assert names_in("这次聚会小林也来了", people) == ["小林"]
    assert names_in("Lunch with Priya and 小林", people) == ["Priya", "小林"]
    assert names_in("Priyanka called", people) == []


def test_a_chinese_bullet_does_not_repeat_the_name_it_is_under() -> None:
    assert drop_subject("小林搬到了杭州", "小林") == "搬到了杭州"
    assert drop_subject("小林和阿杰去了成都", "小林") == "小林和阿杰去了成都"  # two people
    assert drop_subject("小林的猫生病了", "小林") == "小林的猫生病了"  # the cat's news
    assert drop_subject("小林與阿傑去了成都", "小林") == "小林與阿傑去了成都"  # 與: Traditional 与


def test_chinese_notes_about_people_become_a_bullet_per_person(tmp_path: Path) -> None:
    """Short third-person notes in Chinese: one bullet per person, the name said once."""
    vault = tmp_path / "zh-facts"
    write(
        vault / "memory" / "2026-03-05.md",
        "---\ndate: 2026-03-05\n---\n## 笔记\n\n"
        "- 小林上周搬到了杭州。\n"
        "- 小林报名了一个陶艺班，每周六上课。\n"
        "- 张伟开始学钢琴了。\n"
        "- 张伟的猫生病了，周一带去看了兽医。\n"
        "- 决定把家庭相册放在 NAS 上。\n",
    )
    summarize(
        load_config(vault), Options(period=Period.parse("2026-W10"), as_of=Period.parse("2026-W11").end)
    )
    text = (vault / "memory/summaries/2026-W10.md").read_text(encoding="utf-8")
    bullets = [line for line in text.splitlines() if line.startswith("- ")]
    assert "- **小林**：上周搬到了杭州；报名了一个陶艺班，每周六上课 ([[2026-03-05#笔记|3月5日]])" in bullets
    assert any(b.startswith("- **张伟**：开始学钢琴了；张伟的猫生病了") for b in bullets)
    assert not any("**小林**" in b and "张伟" in b for b in bullets)


def test_notes_in_traditional_chinese_become_a_bullet_per_person(tmp_path: Path) -> None:
    vault = tmp_path / "zh-hant-facts"
    write(
        vault / "memory" / "2026-03-05.md",
        "---\ndate: 2026-03-05\n---\n## 筆記\n\n"
        "- 媽媽最近在學游泳。\n"
        "- 媽媽報名了社區的合唱團。\n"
        "- 張偉開始學鋼琴了。\n"
        "- 張偉的貓生病了，週一帶去看了獸醫。\n",
    )
    summarize(
        load_config(vault), Options(period=Period.parse("2026-W10"), as_of=Period.parse("2026-W11").end)
    )
    text = (vault / "memory/summaries/2026-W10.md").read_text(encoding="utf-8")
    bullets = [line for line in text.splitlines() if line.startswith("- ")]
    assert any(b.startswith("- **媽媽**：最近在學游泳；報名了社區的合唱團") for b in bullets)
    assert any(b.startswith("- **張偉**：開始學鋼琴了") for b in bullets)
