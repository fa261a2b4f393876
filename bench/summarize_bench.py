"""How long summaries and upcoming take on the 100k-entry benchmark vault.

    python bench/summarize_bench.py [--entries 100000] [--month 2026-11] [--week 2026-W47] [--out DIR]

The vault is ``bench/genvault.py``'s (three years ending 2026-12-01, ~90 entries a day; kept in
``--out`` and reused when it is there), committed to git. Measured, each in the same run:

1. ``vault-tools summarize --month`` as a fresh process (rules), the same again (nothing to write,
   no commit), and in-process; the same for a week.
2. The language-model path against the local OpenAI-compatible test server (``tests/llm_server.py``
   on 127.0.0.1, a model that cites the first entries it is sent): time, entries sent, prompt tokens.
3. ``upcoming`` (92 days of notes and MEMORY.md) and ``context``, which now includes it, in-process.
4. The first heartbeat on the vault, which writes the twelve newest missing summaries (each its
   own commit), and the second, which has none left to write in that window of twelve.

Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import functools
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from genvault import generate  # noqa: E402
from llm_server import LLMServer, Reply, user_payload  # type: ignore[import-not-found]  # noqa: E402

from vault_tools.config import Config, LLMConfig, load_config  # noqa: E402

AS_OF = dt.date(2026, 12, 2)


def git(vault: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=vault, check=True, capture_output=True, text=True).stdout


def prepare(out: Path, entries: int) -> Path:
    """The generated vault, committed, without summaries (made once, then reset to that commit)."""
    vault = out / f"summarize-{entries}"
    marker = vault / ".bench-ready"
    if not marker.exists():
        if vault.exists():
            shutil.rmtree(vault)
        generate(vault, entries, force=True)
        (vault / ".gitignore").write_text(".vault-tools/\n.bench-ready\n")
        git(vault, "init", "-q")
        git(vault, "add", "-A")
        git(vault, "-c", "user.name=bench", "-c", "user.email=bench@example.com", "commit", "-qm", "notes")
        marker.write_text(git(vault, "rev-parse", "HEAD"))
    git(vault, "reset", "-q", "--hard", marker.read_text().strip())
    git(vault, "clean", "-qfdx", "memory")
    shutil.rmtree(vault / ".vault-tools", ignore_errors=True)
    return vault


def timed(action: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = action()
    return time.perf_counter() - started, result


def cli(vault: Path, *args: str) -> tuple[float, dict[str, Any]]:
    env = {**os.environ, "VAULT_TOOLS_AUTOSTART": "off", "VAULT_TOOLS_SERVICE": "off"}
    command = [sys.executable, "-m", "vault_tools", "--vault", str(vault), *args, "--json"]
    seconds, done = timed(
        lambda: subprocess.run(command, capture_output=True, text=True, env=env, check=True)
    )
    return seconds, json.loads(done.stdout)


def citing(request: dict[str, Any]) -> str:
    """A model that writes one bullet per entry it is sent (up to 20), quoting it: all grounded."""
    entries = user_payload(request)["entries"][:20]
    bullets = [
        {"section": "events", "topic": "", "text": e["text"][:200], "sources": [e["id"]]} for e in entries
    ]
    return json.dumps({"bullets": bullets}, ensure_ascii=False)


def with_model(config: Config, server: LLMServer) -> Config:
    return dataclasses.replace(config, llm=LLMConfig(base_url=server.base_url, model="bench-model"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--month", default="2026-11")
    parser.add_argument("--week", default="2026-W47")
    parser.add_argument("--out", type=Path, default=HERE / "out")
    args = parser.parse_args(argv)

    from vault_tools.agents.context import build_context
    from vault_tools.heartbeat.run import Options as BeatOptions
    from vault_tools.heartbeat.run import run_heartbeat
    from vault_tools.recall.upcoming import find_upcoming
    from vault_tools.summaries.text import Period
    from vault_tools.summaries.write import Options, summarize

    vault = prepare(args.out, args.entries)
    rows: list[tuple[str, str, str]] = []
    for flag, name in (("--month", args.month), ("--week", args.week)):
        seconds, first = cli(vault, "summarize", flag, name, "--as-of", AS_OF.isoformat(), "--no-llm")
        detail = f"{first['entries']} entries read, {first['bullets']} bullets, {first['action']}"
        rows.append((f"`summarize {flag} {name}`, fresh process", f"{seconds:.2f}", detail))
        seconds, again = cli(vault, "summarize", flag, name, "--as-of", AS_OF.isoformat(), "--no-llm")
        rows.append((f"the same again (no change, no commit: {again['action']})", f"{seconds:.2f}", ""))
        config = load_config(vault)
        options = Options(period=Period.parse(name), as_of=AS_OF, use_llm=False)
        seconds, _report = timed(functools.partial(summarize, config, options))
        rows.append((f"`summarize {flag} {name}`, in-process (warm imports)", f"{seconds:.2f}", ""))
    (vault / f"memory/summaries/{args.month}.md").unlink()
    with LLMServer() as server:
        server.default = Reply(responder=citing)
        config = with_model(load_config(vault), server)
        options = Options(period=Period.parse(args.month), as_of=AS_OF)
        seconds, report = timed(lambda: summarize(config, options))
        body = json.loads(server.bodies[-1])
        sent = len(user_payload(body)["entries"])
        detail = (
            f"{report.mode}, {sent} of {report.entries} entries sent (llm.max_tokens_per_run "
            f"{config.llm.max_tokens_per_run}), {server.requests and len(server.requests)} request, "
            f"{report.bullets} bullets"
        )
        rows.append(
            (f"`summarize --month {args.month}` with a model (local test server)", f"{seconds:.2f}", detail)
        )
    config = load_config(vault)
    seconds, upcoming = timed(lambda: find_upcoming(config, days=14, as_of=AS_OF))
    rows.append(
        (
            "`upcoming --days 14` (92 days of notes + MEMORY.md), in-process",
            f"{seconds:.2f}",
            f"{len(upcoming.items)} items",
        )
    )
    seconds, _context = timed(lambda: build_context(config, as_of=AS_OF))
    rows.append(("`context` (with Coming up), in-process", f"{seconds:.2f}", ""))

    vault = prepare(args.out, args.entries)  # back to the notes alone: no summary yet
    beat = dataclasses.replace(config.heartbeat, quiet_seconds=0.0)
    beat_config = dataclasses.replace(config, heartbeat=beat)
    seconds, first_beat = timed(lambda: run_heartbeat(beat_config, BeatOptions(as_of=AS_OF, use_llm=False)))
    written = len(first_beat.summaries)
    rows.append(
        (
            "first `heartbeat` (rules), summaries of the newest closed periods included",
            f"{seconds:.2f}",
            f"{written} summaries written, {len(first_beat.commits)} commits in all",
        )
    )
    seconds, second_beat = timed(lambda: run_heartbeat(beat_config, BeatOptions(as_of=AS_OF, use_llm=False)))
    rows.append(
        (
            "second `heartbeat` (the next twelve periods)",
            f"{seconds:.2f}",
            f"{len(second_beat.summaries)} summaries written",
        )
    )

    print(f"Summaries on a {args.entries:,}-entry vault ({vault}), as of {AS_OF}\n")
    print("| what | seconds | |\n|---|---:|---|")
    for what, seconds_text, detail in rows:
        print(f"| {what} | {seconds_text} | {detail} |")
    print(f"\n(run on {dt.date.today()}, Python {sys.version.split()[0]}, {os.cpu_count()} cores)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
