"""A password written in prose in a daily note, through a heartbeat and a weekly summary.

Two vaults that differ in one line: in one the line says a password ("my password for it is
swordfish"), in the other the same word is a hostname. The control shows that the word would
reach MEMORY.md, the summary, git and the model; the secret vault shows that it reaches none.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers import write
from llm_server import LLMServer, Reply, user_payload

from vault_tools.config import Config, LLMConfig, load_config
from vault_tools.heartbeat.run import Options, run_heartbeat

AS_OF = dt.date(2026, 3, 9)  # a Monday: the week of the notes (2026-W10) has just closed
WORD = "swordfish"
LINES = {
    "secret": f"Decided to keep the family photos on the new NAS; my password for it is {WORD} #homelab",
    "control": f"Decided to keep the family photos on the new NAS; its hostname is {WORD} #homelab",
}


def note(day: str, line: str) -> str:
    return (
        f"---\ndate: {day}\n---\n## Home\n\n"
        f"- 09:00 {line}\n"
        "- 10:00 Decided the NAS backs up to the cloud every night #homelab\n"
        "- 11:00 Lesson: label the NAS drives before swapping them #homelab\n"
    )


def git(vault: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=vault, check=True, capture_output=True, text=True).stdout


def make_vault(root: Path, line: str) -> Path:
    vault = root / "vault"
    write(vault / "memory" / "2026-03-05.md", note("2026-03-05", line))
    write(vault / "memory" / "2026-03-06.md", note("2026-03-06", line))
    write(vault / "MEMORY.md", "# Memory\n")
    write(vault / ".gitignore", ".vault-tools/\n")
    git(vault, "init", "-q")
    git(vault, "add", "MEMORY.md", ".gitignore")  # the notes stay untracked: only the bot's writes
    git(vault, "-c", "user.name=Lin", "-c", "user.email=lin@example.com", "commit", "-qm", "start")
    return vault


def echo_model(request: dict[str, Any]) -> str:
    """Proposes every entry it is shown as an insight, and as a summary bullet, word for word."""
    entries = user_payload(request).get("entries", [])
    insights = [
        {"text": e["text"], "sources": [e["id"]], "category": "decision", "importance": 1.0} for e in entries
    ]
    bullets = [
        {"section": "decisions", "topic": "", "text": e["text"], "sources": [e["id"]], "importance": 0.9}
        for e in entries
    ]
    return json.dumps({"insights": insights, "bullets": bullets}, ensure_ascii=False)


def beat(vault: Path, server: LLMServer | None) -> None:
    loaded = load_config(vault)
    config: Config = dataclasses.replace(
        loaded, heartbeat=dataclasses.replace(loaded.heartbeat, quiet_seconds=0.0)
    )
    if server is not None:
        llm = LLMConfig(base_url=server.base_url, model="test-model", timeout_seconds=5.0)
        config = dataclasses.replace(config, llm=llm)
    run_heartbeat(config, Options(as_of=AS_OF, use_llm=server is not None))


def outputs(vault: Path) -> dict[str, str]:
    """Where the bot writes: MEMORY.md, the week's summary, and every commit's diff."""
    summary = vault / "memory" / "summaries" / "2026-W10.md"
    return {
        "MEMORY.md": (vault / "MEMORY.md").read_text(encoding="utf-8"),
        "summary": summary.read_text(encoding="utf-8") if summary.exists() else "",
        "git history": git(vault, "log", "-p", "--all"),
    }


@pytest.mark.parametrize("mode", ["rules", "llm"])
def test_a_password_in_prose_never_reaches_memory_a_summary_git_or_the_model(
    tmp_path: Path, mode: str
) -> None:
    seen: dict[str, dict[str, str]] = {}
    sent: dict[str, str] = {}
    for kind, line in LINES.items():
        vault = make_vault(tmp_path / kind, line)
        if mode == "llm":
            with LLMServer() as server:
                server.default = Reply(responder=echo_model)
                beat(vault, server)
                sent[kind] = "\n".join(server.bodies)
        else:
            beat(vault, None)
        seen[kind] = outputs(vault)
    # the control: the same entry without a password reaches every output
    assert {where: WORD in text for where, text in seen["control"].items()} == {
        "MEMORY.md": True,
        "summary": True,
        "git history": True,
    }
    assert "backs up to the cloud" in seen["secret"]["MEMORY.md"]  # the rest of the note still does
    assert "backs up to the cloud" in seen["secret"]["summary"]
    assert {where: WORD in text for where, text in seen["secret"].items()} == {
        "MEMORY.md": False,
        "summary": False,
        "git history": False,
    }
    if mode == "llm":
        assert WORD in sent["control"]
        assert "backs up to the cloud" in sent["secret"]
        assert WORD not in sent["secret"]
