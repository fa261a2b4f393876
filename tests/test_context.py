"""context: MEMORY.md, what is coming up, open tasks and the last two days, per chat, most important
first, within a budget."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from vault_tools import cli
from vault_tools.agents.context import ContextResult, build_context
from vault_tools.config import Config, load_config
from vault_tools.errors import UsageError
from vault_tools.tokens import count_tokens

TODAY = dt.date(2026, 3, 2)

MEMORY = """---
title: Long-term memory
---
# Long-term memory

## Decisions

- 2026-02-10: Chose Qdrant for semantic search [importance:: 0.9] ^m-a1
- 2026-01-05: Demo on the 20th of January [importance:: 0.95] [expires:: 2026-01-21] ^m-a2

## Preferences

- 2026-01-20: Prefers concise answers [importance:: 0.6] ^m-a3
- 2026-01-21: Likes green tea [importance:: 0.2] ^m-a4
- 2026-01-22: A shared memory item is still personal #shared [importance:: 0.99] ^m-a5
"""

TODAY_NOTE = """---
date: 2026-03-02
---
- 08:00 早上好
- 09:00 Decided: release 1.0 ships on Thursday. #decision
- 10:00 Coffee with Tom.
- 11:00 Team lunch moved to Friday #shared
- 12:00 The bank PIN reminder #private
- 13:00 HEARTBEAT_OK
"""

YESTERDAY_NOTE = """---
date: 2026-03-01
visibility: shared
---
- 18:00 Dinner with the whole team at the Vietnamese place.
- 19:00 Lesson: always book a table for more than eight people. #lesson
"""

OLD_NOTE = """---
date: 2026-02-27
---
- An older note that context never loads
"""


@pytest.fixture
def config(tmp_path: Path) -> Config:
    vault = tmp_path / "vault"
    (vault / "memory").mkdir(parents=True)
    (vault / "MEMORY.md").write_text(MEMORY, encoding="utf-8")
    (vault / "memory" / "2026-03-02.md").write_text(TODAY_NOTE, encoding="utf-8")
    (vault / "memory" / "2026-03-01.md").write_text(YESTERDAY_NOTE, encoding="utf-8")
    (vault / "memory" / "2026-02-27.md").write_text(OLD_NOTE, encoding="utf-8")
    return load_config(vault, env={})


def items(result: ContextResult, key: str) -> list[str]:
    return [i.text for s in result.sections if s.key == key for i in s.items]


def test_direct_chat_gets_memory_today_and_yesterday(config: Config) -> None:
    result = build_context(config, chat="direct", as_of=TODAY)
    memory = items(result, "memory")
    assert memory[0].startswith("A shared memory item") and "Chose Qdrant for semantic search" in memory
    assert not any("Demo on the 20th" in t for t in memory)  # expired
    today = items(result, "today")
    assert today[0].startswith("Decided: release 1.0")  # most important first
    assert not any("bank PIN" in t for t in today)  # #private never goes to an agent's model
    assert not any(t in ("早上好", "HEARTBEAT_OK") for t in today)
    assert items(result, "yesterday")[0].startswith("Lesson:")
    assert "older note" not in result.render()


@pytest.mark.parametrize("chat", ["group", "unknown"])
def test_group_chat_gets_only_shared_daily_entries(config: Config, chat: str) -> None:
    result = build_context(config, chat=chat, as_of=TODAY)
    assert items(result, "memory") == []
    assert items(result, "today") == ["Team lunch moved to Friday #shared"]
    assert len(items(result, "yesterday")) == 2  # the whole note is shared
    text = result.render()
    assert "Qdrant" not in text and "PIN" not in text and "Coffee" not in text


def test_budget_is_respected_and_omissions_are_counted(config: Config) -> None:
    full = build_context(config, as_of=TODAY, max_tokens=2000)
    small = build_context(config, as_of=TODAY, max_tokens=60)
    assert small.tokens <= 60 and count_tokens(small.render()) <= 60
    assert full.tokens > small.tokens
    assert sum(s.omitted for s in small.sections) > 0 and small.warnings
    # What survives is the most important of each section.
    kept = [i.weight for s in small.sections for i in s.items]
    assert kept and min(kept) >= 0.5


def test_too_small_a_budget_is_a_usage_error(config: Config) -> None:
    with pytest.raises(UsageError):
        build_context(config, max_tokens=10)


def test_render_is_markdown_with_sections(config: Config) -> None:
    text = build_context(config, as_of=TODAY).render()
    assert text.startswith("# Memory context (direct chat)")
    assert "## Long-term memory" in text and "### Decisions" in text
    assert "## Today, 2026-03-02" in text and "## Yesterday, 2026-03-01" in text
    assert "- 09:00 Decided: release 1.0 ships on Thursday. #decision" in text


def test_empty_vault_says_there_is_nothing(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    (vault / "memory").mkdir(parents=True)
    result = build_context(load_config(vault, env={}), as_of=TODAY)
    assert "Nothing to load" in result.render() and result.tokens <= 2000


def test_chat_default_comes_from_the_environment(config: Config) -> None:
    group = load_config(config.vault, env={"VAULT_TOOLS_CHAT": "group"})
    assert build_context(group, as_of=TODAY).chat == "group"


def test_cli_context_json(config: Config, capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(
        ["context", "--vault", str(config.vault), "--json", "--as-of", "2026-03-02", "--chat", "group"]
    )
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    assert {"chat", "max_tokens", "tokens", "sections", "warnings", "stale", "markdown"} <= set(data)
    assert data["chat"] == "group" and data["stale"] is False
    assert [s["key"] for s in data["sections"]] == ["memory", "upcoming", "tasks", "today", "yesterday"]


def test_cli_context_text(config: Config, capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(["context", "--vault", str(config.vault), "--as-of", "2026-03-02", "--max-tokens", "300"])
    out = capsys.readouterr().out
    assert code == 0 and out.startswith("# Memory context (direct chat)")
    assert count_tokens(out) <= 300 + 2


def test_memory_md_and_openclaws_memory_md_are_both_read_and_a_linked_pair_once(config: Config) -> None:
    vault = config.vault
    (vault / "memory.md").write_text(
        "# Memory\n\n- 2026-02-20: 我喜欢靠窗的座位 [importance:: 0.8]\n", encoding="utf-8"
    )
    memory = items(build_context(config, chat="direct", as_of=TODAY), "memory")
    assert "我喜欢靠窗的座位" in memory and "Chose Qdrant for semantic search" in memory
    paths = {i.path for s in build_context(config, chat="direct", as_of=TODAY).sections for i in s.items}
    assert {"MEMORY.md", "memory.md"} <= paths
    assert items(build_context(config, chat="group", as_of=TODAY), "memory") == []
    (vault / "memory.md").unlink()
    (vault / "memory.md").symlink_to(vault / "MEMORY.md")  # one file under two names
    memory = items(build_context(config, chat="direct", as_of=TODAY), "memory")
    assert memory.count("Chose Qdrant for semantic search") == 1


def test_notes_linked_from_outside_the_vault_are_left_out_with_a_warning(
    config: Config, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("- 2026-03-01: 银行卡密码是 4321\n", encoding="utf-8")
    (outside / "day.md").write_text("- 07:00 outside day note\n", encoding="utf-8")
    (config.vault / "MEMORY.md").unlink()
    (config.vault / "MEMORY.md").symlink_to(outside / "secret.md")
    (config.vault / "memory" / "2026-03-02-linked.md").symlink_to(outside / "day.md")
    result = build_context(config, chat="direct", as_of=TODAY)
    text = result.render()
    assert "4321" not in text and "outside day note" not in text
    assert "Decided: release 1.0" in text  # the real notes still load
    assert any("MEMORY.md" in w and "outside the vault" in w for w in result.warnings)
    assert any("2026-03-02-linked.md" in w and "outside the vault" in w for w in result.warnings)


TASK_NOTES = {
    "2026-02-25": "- [ ] Renew the parking permit\n- [x] Pay the electricity bill\n"
    "- [ ] Call the bank about the card #private\n- [ ] Order the team T-shirts #shared\n",
    "2026-02-27": "- [ ] 给房东发邮件问暖气的事\n- [/] Draft the onboarding checklist\n",
    "2026-02-10": "- [ ] A task older than the section looks back\n",
}


def test_open_tasks_of_the_days_before_yesterday_newest_first(config: Config) -> None:
    for day, body in TASK_NOTES.items():
        (config.vault / "memory" / f"{day}.md").write_text(f"---\ndate: {day}\n---\n{body}", encoding="utf-8")
    direct = build_context(config, chat="direct", as_of=TODAY)
    assert items(direct, "tasks") == [
        "给房东发邮件问暖气的事",
        "Draft the onboarding checklist",
        "Renew the parking permit",
        "Order the team T-shirts #shared",
    ]
    assert "## Open tasks\n- 给房东发邮件问暖气的事 (2026-02-27)" in direct.render()
    assert items(build_context(config, chat="group", as_of=TODAY), "tasks") == [
        "Order the team T-shirts #shared"
    ]
