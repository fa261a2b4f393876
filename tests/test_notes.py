from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vault_tools.errors import ConflictError
from vault_tools.notes import edit as note_edit
from vault_tools.notes import model as notes

FIXTURES = Path(__file__).parent / "fixtures" / "notes"
FIXTURE_FILES = sorted(FIXTURES.glob("*.md"))


def write(path: Path, data: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


@pytest.mark.parametrize("fixture", FIXTURE_FILES, ids=lambda p: p.name)
def test_parse_then_write_back_is_byte_identical(fixture: Path, tmp_path: Path) -> None:
    original = fixture.read_bytes()
    target = write(tmp_path / "memory" / fixture.name, original)
    note = notes.read_note(target, tmp_path)
    assert note.text.encode("utf-8") == original
    note_edit.atomic_write(target, note.text.encode("utf-8"))
    assert target.read_bytes() == original


@pytest.mark.parametrize("fixture", FIXTURE_FILES, ids=lambda p: p.name)
def test_a_splice_changes_only_its_own_lines(fixture: Path, tmp_path: Path) -> None:
    original = fixture.read_bytes()
    target = write(tmp_path / "memory" / "2026-03-10.md", original)
    note_edit.apply_edit(target, note_edit.append_lines(["- 23:59 appended"]))
    after = target.read_bytes()
    newline = b"\r\n" if b"\r\n" in original else b"\n"
    assert after.startswith(original)
    assert after.endswith(b"- 23:59 appended" + newline)


def test_entries_know_lines_dates_sections_tags_fields_and_visibility(tmp_path: Path) -> None:
    target = write(tmp_path / "memory" / "2026-03-10.md", (FIXTURES / "crlf-bom.md").read_bytes())
    note = notes.read_note(target, tmp_path)
    assert note.front_matter == {"visibility": "personal", "tags": ["work", "日常"], "date": "2026-03-10"}
    first, allergy, paragraph = note.entries
    assert (first.start_line, first.end_line) == (10, 11)
    assert first.time == dt.time(9, 15) and first.date == dt.date(2026, 3, 10)
    assert first.section == "Work"
    assert first.fields == {"importance": "0.8"} and first.importance == 0.8
    assert first.block_id == "dec-1"
    assert first.text.startswith("Decided to use PostgreSQL for billing")
    assert "^dec-1" not in first.text and "importance::" not in first.text
    assert allergy.tags == ("work", "日常", "health", "remember")
    assert allergy.section == "Work"
    assert paragraph.section == "生活" and paragraph.visibility == "shared"
    assert (paragraph.start_line, paragraph.end_line) == (15, 16)


def test_front_matter_is_metadata_not_entries(tmp_path: Path) -> None:
    target = write(tmp_path / "memory" / "2026-03-10.md", "---\ntitle: secret-title\n---\n- body\n")
    note = notes.read_note(target, tmp_path)
    assert [e.text for e in note.entries] == ["body"]


def test_memory_items_carry_their_own_date_links_and_block_ids(tmp_path: Path) -> None:
    target = write(tmp_path / "MEMORY.md", (FIXTURES / "MEMORY.md").read_bytes())
    note = notes.read_note(target, tmp_path)
    assert note.kind == "memory"
    decision, preference = note.entries
    assert decision.date == dt.date(2026, 3, 10) and decision.section == "Decisions"
    assert decision.links == ("2026-03-10",) and decision.block_id == "m-3f9a2c"
    assert decision.text == "Chose a vector database for semantic search"
    assert preference.section == "偏好" and preference.text == "不吃香菜"


def test_obsidian_conventions(tmp_path: Path) -> None:
    target = write(tmp_path / "memory" / "2026-03-11.md", (FIXTURES / "obsidian.md").read_bytes())
    links, urls, code = notes.read_note(target, tmp_path).entries
    assert links.links == ("wikilink", "note")
    assert links.fields == {"key": "value (with parens)", "inline": "field"}
    assert "::" not in links.text and "with parens" not in links.text
    assert urls.tags == ("tag/nested",)
    assert code.tags == ()
    assert urls.has_tag("tag") and not urls.has_tag("ta")


def test_visibility_private_wins_and_shared_is_opt_in(tmp_path: Path) -> None:
    shared_note = "---\nvisibility: shared\n---\n- standup notes\n- my diary #private\n"
    personal_note = "- personal\n- team item #shared\n- [visibility:: shared] by field\n"
    shared = notes.read_note(write(tmp_path / "memory" / "2026-01-01.md", shared_note), tmp_path)
    personal = notes.read_note(write(tmp_path / "memory" / "2026-01-02.md", personal_note), tmp_path)
    assert [e.visibility for e in shared.entries] == ["shared", "private"]
    assert [e.visibility for e in personal.entries] == ["personal", "shared", "shared"]


def test_multi_line_bullets_and_fences_stay_one_entry(tmp_path: Path) -> None:
    text = (
        "- first\n  continued\n\n  after a blank, still indented\n- second\n```\n- not a bullet\n```\npara\n"
    )
    entries = notes.read_note(write(tmp_path / "memory" / "2026-01-03.md", text), tmp_path).entries
    assert [(e.start_line, e.end_line) for e in entries] == [(1, 4), (5, 5), (6, 8), (9, 9)]


def test_entry_id_is_stable_when_other_lines_move(tmp_path: Path) -> None:
    path = write(tmp_path / "memory" / "2026-01-04.md", "- keep me\n")
    before = notes.read_note(path, tmp_path).entries[0].id
    write(path, "- new line above\n- keep me\n")
    after = notes.read_note(path, tmp_path).entries[1]
    assert after.id == before and after.start_line == 2


# --- bad input: one warning naming the file, nothing changed, nothing raised ---------------------


def read_and_check_unchanged(path: Path, vault: Path) -> notes.Note:
    before = path.read_bytes()
    note = notes.read_note(path, vault)
    assert path.read_bytes() == before
    return note


def test_broken_yaml_warns_with_the_line_and_keeps_the_body(tmp_path: Path) -> None:
    path = write(tmp_path / "memory" / "2026-01-05.md", (FIXTURES / "broken-yaml.md").read_bytes())
    note = read_and_check_unchanged(path, tmp_path)
    assert len(note.warnings) == 1 and note.warnings[0].line is not None
    assert "2026-01-05.md" in str(note.warnings[0]) and "YAML" in str(note.warnings[0])
    assert [e.text for e in note.entries] == ["broken yaml above"]


def test_invalid_utf8_is_read_with_replacement_and_a_line_number(tmp_path: Path) -> None:
    path = write(tmp_path / "memory" / "2026-01-06.md", b"- fine\n- bad \xff\xfe byte\n")
    note = read_and_check_unchanged(path, tmp_path)
    assert note.warnings[0].line == 2 and "UTF-8" in note.warnings[0].message
    assert len(note.entries) == 2


def test_binary_file_named_md_is_skipped(tmp_path: Path) -> None:
    path = write(tmp_path / "memory" / "2026-01-07.md", bytes(range(256)) * 10)
    note = read_and_check_unchanged(path, tmp_path)
    assert note.entries == [] and "binary" in note.warnings[0].message


def test_empty_file_has_no_entries_and_no_warning(tmp_path: Path) -> None:
    note = read_and_check_unchanged(write(tmp_path / "memory" / "2026-01-08.md", b""), tmp_path)
    assert note.entries == [] and note.warnings == []


def test_huge_file_is_skipped_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "memory" / "2026-01-09.md"
    path.parent.mkdir(parents=True)
    with path.open("wb") as handle:
        handle.write(b"- x\n" * (50 * 1024 * 1024 // 4))
    note = read_and_check_unchanged(path, tmp_path)
    assert note.entries == [] and "MB" in note.warnings[0].message


def test_non_date_name_in_memory_is_an_undated_note_with_a_warning(tmp_path: Path) -> None:
    note = read_and_check_unchanged(write(tmp_path / "memory" / "ideas.md", "- an idea\n"), tmp_path)
    assert note.kind == "note" and note.entries[0].date is None
    assert "not a date" in note.warnings[0].message


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("2026-02-30.md", "February 2026 has no 30th"),
        ("2026-02-29.md", "February 2026 has no 29th"),
        ("2026-04-31-standup.md", "April 2026 has no 31st"),
        ("2026-13-01.md", "there is no month 13"),
        ("2026-00-10.md", "there is no month 00"),
        ("2026-03-00.md", "there is no day 00"),
        ("0000-01-01.md", "there is no year 0000"),
    ],
)
def test_an_impossible_date_in_a_name_is_said_to_be_one(tmp_path: Path, name: str, why: str) -> None:
    note = read_and_check_unchanged(write(tmp_path / "memory" / name, "- 记得这一天\n"), tmp_path)
    assert note.kind == "note" and note.entries[0].date is None
    assert note.warnings[0].message == (
        f"name is not a real date ({why}); indexed as an undated note. Rename it to the day it means."
    )
    leap = read_and_check_unchanged(write(tmp_path / "memory" / "2028-02-29.md", "- leap\n"), tmp_path)
    assert leap.kind == "daily" and leap.warnings == []


@pytest.mark.parametrize(
    ("size", "limit", "said"),
    [
        (int(5.5 * 1024 * 1024), 5 * 1024 * 1024, "is 5.5 MB, over the 5 MB limit; skipped"),
        (6 * 1024 * 1024, 5 * 1024 * 1024, "is 6 MB, over the 5 MB limit; skipped"),
        (5 * 1024 * 1024 + 1, 5 * 1024 * 1024, "is 5,242,881 bytes, over the 5,242,880-byte limit; skipped"),
        (3000, 2048, "is 2.9 KB, over the 2 KB limit; skipped"),
        (120, 100, "is 120 bytes, over the 100 bytes limit; skipped"),
    ],
)
def test_a_note_over_the_size_limit_says_both_sizes_as_they_differ(
    tmp_path: Path, size: int, limit: int, said: str
) -> None:
    path = tmp_path / "memory" / "2026-01-09.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * size)
    note = notes.read_note(path, tmp_path, max_bytes=limit)
    assert note.entries == [] and [w.message for w in note.warnings] == [said]


def test_symlink_out_of_the_vault_is_skipped(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    outside = write(tmp_path / "outside.md", "- secret from elsewhere\n")
    write(vault / "memory" / "2026-01-10.md", "- inside\n")
    os.symlink(outside, vault / "memory" / "2026-01-11.md")
    loaded, warnings = notes.read_vault(vault)
    assert [n.rel_path for n in loaded] == ["memory/2026-01-10.md"]
    assert "outside the vault" in str(warnings[0]) and "2026-01-11.md" in str(warnings[0])


def test_read_vault_ignores_archive_obsidian_and_top_level_bootstrap_files(tmp_path: Path) -> None:
    for rel in (
        "MEMORY.md",
        "memory/2026-01-01.md",
        "memory/archive/2026-01.md",
        "AGENTS.md",
        "memory/.obsidian/x.md",
        "SOUL.md",
    ):
        write(tmp_path / rel, "- x\n")
    loaded, _ = notes.read_vault(tmp_path)
    assert [n.rel_path for n in loaded] == ["MEMORY.md", "memory/2026-01-01.md"]


# --- splices -------------------------------------------------------------------------------------


def test_insert_under_section_keeps_everything_else(tmp_path: Path) -> None:
    path = write(tmp_path / "MEMORY.md", (FIXTURES / "MEMORY.md").read_bytes())
    note_edit.apply_edit(path, note_edit.insert_under_section("Decisions", ["- 2026-03-12: second decision"]))
    lines = path.read_text().splitlines()
    assert lines[6].startswith("- 2026-03-10: Chose") and lines[7] == "- 2026-03-12: second decision"
    assert lines[8] == "" and lines[9] == "## 偏好"
    note_edit.apply_edit(path, note_edit.insert_under_section("Lessons", ["- new lesson"]))
    assert path.read_text().endswith("## Lessons\n\n- new lesson\n")


def test_insert_into_an_empty_section(tmp_path: Path) -> None:
    path = write(tmp_path / "MEMORY.md", "# M\n\n## Decisions\n\n## Facts\n")
    note_edit.apply_edit(path, note_edit.insert_under_section("Decisions", ["- d"]))
    assert path.read_text() == "# M\n\n## Decisions\n\n- d\n\n## Facts\n"


def test_remove_and_replace_find_lines_by_content(tmp_path: Path) -> None:
    path = write(tmp_path / "MEMORY.md", "- a\r\n- b\r\n- c\r\n")
    note_edit.apply_edit(path, note_edit.replace_block(["- b"], ["- B"], hint=1))
    assert path.read_bytes() == b"- a\r\n- B\r\n- c\r\n"
    note_edit.apply_edit(path, note_edit.remove_block(["- a"]))
    assert path.read_bytes() == b"- B\r\n- c\r\n"
    with pytest.raises(ConflictError):
        note_edit.apply_edit(path, note_edit.remove_block(["- gone"]))
    assert path.read_bytes() == b"- B\r\n- c\r\n"


def test_set_front_matter_key_edits_one_line_only(tmp_path: Path) -> None:
    path = write(tmp_path / "n.md", (FIXTURES / "crlf-bom.md").read_bytes())
    before = path.read_bytes()
    note_edit.apply_edit(path, note_edit.set_front_matter_key("visibility", "shared"))
    after = path.read_bytes()
    assert after == before.replace(b"visibility: personal\r\n", b"visibility: shared\r\n")
    note_edit.apply_edit(path, note_edit.set_front_matter_key("updated", "2026-03-12"))
    assert b"date: 2026-03-10\r\nupdated: '2026-03-12'\r\n---\r\n" in path.read_bytes()
    bare = write(tmp_path / "bare.md", "- x\n")
    note_edit.apply_edit(bare, note_edit.set_front_matter_key("title", "注意: colon"))
    assert bare.read_text() == "---\ntitle: '注意: colon'\n---\n- x\n"


def test_a_save_between_read_and_write_is_kept_and_the_edit_reapplied(tmp_path: Path) -> None:
    path = write(tmp_path / "MEMORY.md", "## Decisions\n- old\n")
    as_read = path.read_bytes()
    insert = note_edit.insert_under_section("Decisions", ["- bot item"])
    calls = 0

    def racing_splice(lines: list[str]) -> list[str]:
        nonlocal calls
        calls += 1
        if calls == 1:  # a person saves while the bot computes its edit
            path.write_text("## Decisions\n- old\n- person's item\n")
        return insert(lines)

    result = note_edit.apply_edit(path, racing_splice, expected=as_read)
    assert path.read_text() == "## Decisions\n- old\n- person's item\n- bot item\n"
    assert result.reapplied and calls == 2


def test_edit_based_on_stale_read_is_reapplied_to_current_content(tmp_path: Path) -> None:
    path = write(tmp_path / "MEMORY.md", "- a\n- b\n")
    as_read = path.read_bytes()
    path.write_text("- a\n- b\n- human\n")
    result = note_edit.apply_edit(path, note_edit.remove_block(["- a"]), expected=as_read)
    assert result.reapplied and path.read_text() == "- b\n- human\n"


def test_a_write_removes_the_temp_files_of_killed_writes_of_that_file_only(tmp_path: Path) -> None:
    path = write(tmp_path / "MEMORY.md", "- a\n")
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True)
    dead = int(finished.stdout)  # a writer that is gone, as after a kill -9
    alive = os.getppid()  # a writer that may still be writing
    leftovers = {
        "dead": write(tmp_path / f".MEMORY.md.{dead}.k3j_x9ab.tmp", "- half"),
        "alive": write(tmp_path / f".MEMORY.md.{alive}.p0q1r2s3.tmp", "- half"),
        "old naming": write(tmp_path / ".MEMORY.md.k3j_x9ab.tmp", "- half"),
        "other file": write(tmp_path / f".memory.md.{dead}.k3j_x9ab.tmp", "- half"),
    }
    note_edit.apply_edit(path, note_edit.append_lines(["- b"]))
    assert path.read_text() == "- a\n- b\n"
    assert {name for name, p in leftovers.items() if p.exists()} == {"alive", "old naming", "other file"}
    assert sorted(p.name for p in tmp_path.glob(f".MEMORY.md.{os.getpid()}.*")) == []


def test_atomic_write_keeps_permissions_and_leaves_no_temp_files(tmp_path: Path) -> None:
    path = write(tmp_path / "notes" / "n.md", "x\n")
    path.chmod(0o640)
    note_edit.atomic_write(path, b"y\n")
    assert path.stat().st_mode & 0o777 == 0o640 and path.read_bytes() == b"y\n"
    assert sorted(p.name for p in path.parent.iterdir()) == ["n.md"]


# --- property: any note round-trips and parses without raising -----------------------------------

LINE = st.one_of(
    st.sampled_from(
        [
            "- 09:00 item #tag",
            "  continuation",
            "",
            "# Heading",
            "## 工作",
            "```",
            "---",
            "- [ ] todo",
            "1. num",
            "para text",
            "- 2026-03-10: dated [importance:: 0.5] ^b-1",
            "\t- tab",
            "- [[link]] (f:: v)",
            "   ",
            "中文段落 #标签/子标签",
        ]
    ),
    st.text(
        alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=30
    ).map(lambda s: s.replace("\n", "")),
)


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(
    lines=st.lists(LINE, max_size=25),
    ending=st.sampled_from(["\n", "\r\n"]),
    bom=st.booleans(),
    front=st.booleans(),
    final_newline=st.booleans(),
)
def test_generated_notes_round_trip(
    tmp_path: Path, lines: list[str], ending: str, bom: bool, front: bool, final_newline: bool
) -> None:
    body = (["---", "b: 1  # c", "a: [x, y]", "---"] if front else []) + lines
    text = ("\ufeff" if bom else "") + ending.join(body) + (ending if final_newline and body else "")
    path = write(tmp_path / "memory" / "2026-02-02.md", text.encode("utf-8"))
    note = notes.read_note(path, tmp_path)
    assert note.text.encode("utf-8") == text.encode("utf-8")
    for entry in note.entries:
        assert 1 <= entry.start_line <= entry.end_line <= len(note.lines)
    note_edit.apply_edit(path, note_edit.append_lines(["- appended"]))
    assert path.read_bytes().startswith(text.encode("utf-8"))


def test_tags_after_chinese_punctuation(tmp_path: Path) -> None:
    path = write(tmp_path / "memory" / "2026-01-12.md", "- 今天买了指数基金。#投资，#理财/基金\n")
    assert notes.read_note(path, tmp_path).entries[0].tags == ("投资", "理财/基金")


def test_a_tag_matches_in_either_chinese_script(tmp_path: Path) -> None:
    path = write(tmp_path / "memory" / "2026-01-12.md", "- 以後都用 pnpm。#決定 #理財/基金\n")
    (entry,) = notes.read_note(path, tmp_path).entries
    assert entry.tags == ("決定", "理財/基金")  # as written
    assert entry.has_tag("决定") and entry.has_tag("#決定") and entry.has_tag("理财")
    assert not entry.has_tag("决")
