"""Facts with one value at a time (a home, a job): a new one supersedes the item it replaces, in
English and Chinese, for the same person only."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_heartbeat import committed, make_vault, memory, run

from vault_tools.curation.slots import slot_of


@pytest.mark.parametrize(
    ("text", "slot"),
    [
        ("Lives in Friedrichshain, Berlin", ("home", None)),
        ("Moved into the new flat in Prenzlauer Berg today!", ("home", None)),
        ("我们上周搬到上海了", ("home", None)),
        ("**Caroline**: Yeah, I just moved to Boston last week.", ("home", "Caroline")),
        ("Ana moved to Porto in May.", ("home", "Ana")),
        ("Tom is moving to Munich in January.", ("home", "Tom")),
        ("Works at Zalando as a backend developer", ("work", None)),
        ("**Jon**: I joined Google as an engineer!", ("work", "Jon")),
        ("现在在字节跳动上班", ("work", None)),
        # someone else's, or no such fact
        ("**Caroline**: My friend lives in Paris.", None),
        ("爸爸妈妈住在上海，每周日视频通话", None),
        ("New teammate next week: Lena, backend, joins from Zalando.", None),
        ("I joined the climbing club.", None),
        ("Moved the standup to 10:00.", None),
    ],
)
def test_the_slot_a_text_states_and_whose_it_is(text: str, slot: tuple[str, str | None] | None) -> None:
    assert slot_of(text) == slot


MEMORY = """# Long-term memory

## Facts

- 2026-03-15: Lives in Friedrichshain, Berlin, since moving from Shanghai [importance:: 0.8] ^m-home01
- 2026-06-01: 在阿里巴巴上班，做支付系统 [importance:: 0.8] ^m-work01
"""


def test_a_new_home_supersedes_the_old_one_and_a_friends_move_does_not(tmp_path: Path) -> None:
    daily = {
        "2026-11-28": "- Tom is moving to Munich in January for a job. #remember\n",
        "2026-11-29": "- Moved into the new flat in Prenzlauer Berg today! #remember\n",
        "2026-11-30": "- 下个月入职字节跳动，终于定下来了。 #remember\n",
    }
    vault = committed(make_vault(tmp_path, MEMORY, daily))
    report = run(vault)
    pruned = {p.block_id: p.reason for p in report.pruned}
    assert set(pruned) == {"m-home01", "m-work01"}
    text = memory(vault)
    assert "Friedrichshain" not in text and "阿里巴巴" not in text
    assert "Prenzlauer Berg today! [importance" in text and "[supersedes:: m-home01]" in text
    assert "[supersedes:: m-work01]" in text
    tom = next(line for line in text.splitlines() if "Tom is moving" in line)
    assert "supersedes" not in tom
