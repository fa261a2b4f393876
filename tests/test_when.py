"""One reader for every WHEN argument: --since, --until, --as-of and note --date, in English and Chinese."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import pytest

from vault_tools import cli
from vault_tools.config import Config
from vault_tools.errors import UsageError
from vault_tools.recall.when import parse_day

TODAY = dt.date(2026, 12, 2)  # a Wednesday; last week is 2026-11-23 (Mon) .. 2026-11-29 (Sun)
SAMPLE = Path(__file__).resolve().parents[1] / "vault"


@pytest.mark.parametrize(
    ("value", "role", "expected"),
    [
        ("2026-11-30", "date", "2026-11-30"),
        ("yesterday", "date", "2026-12-01"),
        ("昨天", "date", "2026-12-01"),
        ("3 days ago", "date", "2026-11-29"),
        ("三天前", "date", "2026-11-29"),
        ("7d", "date", "2026-11-25"),
        ("last Friday", "date", "2026-11-27"),
        ("上周五", "date", "2026-11-27"),
        ("last week", "since", "2026-11-23"),
        ("上周", "since", "2026-11-23"),
        ("last week", "until", "2026-11-29"),
        ("上周", "until", "2026-11-29"),
        ("last week", "as_of", "2026-11-29"),
        ("三月", "as_of", "2026-03-31"),
        ("2026-03", "as_of", "2026-03-31"),
        ("2026-03", "since", "2026-03-01"),
        ("yesterday", "as_of", "2026-12-01"),
        ("yesterday", "until", "2026-12-01"),
    ],
)
def test_a_when_names_a_day_by_its_role(value: str, role: str, expected: str) -> None:
    assert parse_day(value, TODAY, role).isoformat() == expected  # type: ignore[arg-type]


@pytest.mark.parametrize("value", ["last week", "上周", "2026-03", "三月", "this month"])
def test_a_period_where_one_day_is_wanted_is_refused(value: str) -> None:
    with pytest.raises(
        UsageError, match=r"^--date: .* is a period \(\d{4}-\d\d-\d\d to .*\), not a day; give one day"
    ):
        parse_day(value, TODAY, "date")


@pytest.mark.parametrize(
    ("value", "role"), [("bogus", "as_of"), ("2026-02-30", "date"), ("the other day", "since")]
)
def test_an_unreadable_when_names_the_option_and_the_accepted_forms(value: str, role: str) -> None:
    with pytest.raises(UsageError) as error:
        parse_day(value, TODAY, role)  # type: ignore[arg-type]
    message = str(error.value)
    assert message.startswith(f"--{role.replace('_', '-')}: ")
    assert "accepted forms" in message and "last week" in message and "上周" in message


# --- every command's WHEN argument ------------------------------------------------------------


@pytest.fixture
def sample(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The sample vault (notes of 2026-11-18 .. 2026-12-01), with today frozen at TODAY."""
    vault = tmp_path / "v"
    shutil.copytree(SAMPLE, vault)
    monkeypatch.setattr(Config, "today", lambda _self: TODAY)
    return vault


def run_json(capsys: pytest.CaptureFixture[str], vault: Path, *argv: str) -> tuple[int, object]:
    code = cli.main(["--vault", str(vault), "--json", *argv])
    out = capsys.readouterr().out
    return code, json.loads(out)


def test_export_takes_time_words(sample: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for since, until in (("last week", "last week"), ("上周", "上周")):
        code, data = run_json(capsys, sample, "export", "--since", since, "--until", until)
        assert code == 0 and isinstance(data, dict)
        dates = {entry["date"] for entry in data["entries"]}
        assert dates == {f"2026-11-{day}" for day in range(23, 30)}


def test_note_date_takes_one_day_in_words(sample: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, data = run_json(capsys, sample, "note", "Called the plumber", "--date", "昨天")
    assert code == 0 and isinstance(data, dict) and data["path"].endswith("memory/2026-12-01.md")
    code, data = run_json(capsys, sample, "note", "记一笔", "--date", "3 days ago")
    assert code == 0 and isinstance(data, dict) and data["path"].endswith("memory/2026-11-29.md")
    written = (sample / "memory" / "2026-11-29.md").read_text(encoding="utf-8").splitlines()
    assert "- 记一笔" in written  # another day's entry: no clock time of today's made up for it
    before = {p.name: p.read_bytes() for p in (sample / "memory").glob("*.md")}
    code, data = run_json(capsys, sample, "note", "which day?", "--date", "last week")
    assert code == 2 and isinstance(data, dict) and "is a period" in data["error"]
    assert {p.name: p.read_bytes() for p in (sample / "memory").glob("*.md")} == before


@pytest.mark.parametrize(
    ("command", "value", "expected"),
    [
        (["recall", "Atlas"], "yesterday", "2026-12-01"),
        (["recall", "Atlas"], "上周", "2026-11-29"),
        (["upcoming"], "3 days ago", "2026-11-29"),
        (["upcoming"], "三天前", "2026-11-29"),
        (["heartbeat", "--dry-run", "--no-llm"], "last week", "2026-11-29"),
        (["heartbeat", "--dry-run", "--no-llm"], "昨天", "2026-12-01"),
    ],
)
def test_as_of_takes_time_words(
    sample: Path, capsys: pytest.CaptureFixture[str], command: list[str], value: str, expected: str
) -> None:
    code, data = run_json(capsys, sample, *command, "--as-of", value)
    assert code == 0 and isinstance(data, dict)
    assert data.get("as_of", data.get("filters", {}).get("as_of")) == expected


def test_summarize_and_context_take_time_words(sample: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, data = run_json(capsys, sample, "summarize", "--dry-run", "--no-llm", "--as-of", "last week")
    assert code == 0 and isinstance(data, dict) and data["period"] == "2026-W47"  # the week closed by Nov 29
    code, data = run_json(capsys, sample, "context", "--as-of", "上周五", "--chat", "direct")
    assert code == 0 and isinstance(data, dict)
    days = [section["date"] for section in data["sections"] if section["key"] in ("today", "yesterday")]
    assert days == ["2026-11-27", "2026-11-26"]


@pytest.mark.parametrize(
    "argv",
    [
        ["export", "--since", "someday"],
        ["recall", "x", "--as-of", "someday"],
        ["upcoming", "--as-of", "someday"],
        ["heartbeat", "--dry-run", "--as-of", "someday"],
        ["summarize", "--dry-run", "--as-of", "someday"],
        ["context", "--as-of", "someday"],
        ["note", "x", "--date", "someday"],
    ],
)
def test_a_bad_when_is_a_usage_error_everywhere(
    sample: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    code, data = run_json(capsys, sample, *argv)
    assert code == 2 and isinstance(data, dict)
    assert "cannot read 'someday' as a date; accepted forms:" in data["error"] and "上周" in data["error"]
