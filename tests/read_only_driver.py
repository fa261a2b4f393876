"""Every command on a vault this process cannot write; what each did, as JSON on stdout.

Run by test_read_only.py inside a read-only mount (or with the right to write taken away):
``python read_only_driver.py VAULT IMPORT_FILE``. Commands run in this one process through
``cli.main``, so a traceback is caught and recorded instead of ending the run; the watcher runs
as a child, in the same mount.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from vault_tools import cli
from vault_tools.agents.mcp import MemoryTools
from vault_tools.config import load_config
from vault_tools.errors import VaultError
from vault_tools.watch import service

AS_OF = "2026-12-01"
VAULT, IMPORT_FILE = sys.argv[1], sys.argv[2]


def run(*argv: str) -> dict[str, Any]:
    out, err = io.StringIO(), io.StringIO()
    code: Any
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli.main([*argv, "--vault", VAULT])
    except SystemExit as exc:
        code = exc.code
    except BaseException:  # the traceback is what the test looks for
        err.write(traceback.format_exc())
        code = "traceback"
    return {"argv": list(argv), "code": code, "out": out.getvalue(), "err": err.getvalue()}


def served_recall() -> dict[str, Any]:
    """A watcher started on the vault (its state in the cache) answers the next recall."""
    command = [sys.executable, "-m", "vault_tools", "watch", "--idle-exit", "3", "--vault", VAULT]
    watcher = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    config = load_config(Path(VAULT))
    socket = service.socket_path(config)
    deadline = time.monotonic() + 30
    while not socket.exists() and time.monotonic() < deadline and watcher.poll() is None:
        time.sleep(0.05)
    answers: list[bool] = []
    real_ask = service.ask

    def ask(*args: Any, **kwargs: Any) -> Any:
        answer = real_ask(*args, **kwargs)
        answers.append(answer is not None)
        return answer

    service.ask = ask
    try:
        result = run("recall", "coffee", "--as-of", AS_OF)
    finally:
        service.ask = real_ask
    try:
        stdout, stderr = watcher.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        watcher.kill()
        stdout, stderr = watcher.communicate()
    return {
        **result,
        "served": answers == [True],
        "socket": str(socket),
        "watch": {"code": watcher.returncode, "out": stdout, "err": stderr},
    }


def mcp_tools() -> dict[str, Any]:
    """The MCP server's tools: the reading ones answer, memory_note says why it cannot."""
    tools = MemoryTools(load_config(Path(VAULT)), "direct")
    try:
        found = tools.search("咖啡")
        context = tools.context()
        try:
            tools.note("written through MCP")
            note: dict[str, Any] = {"error": None}
        except VaultError as exc:
            note = {"error": str(exc), "code": exc.exit_code}
        return {"search": len(found["results"]), "context": len(context), "note": note}
    except BaseException:  # the traceback is what the test looks for
        return {"traceback": traceback.format_exc()}
    finally:
        tools.close()


def main() -> None:
    results = {
        "status": run("status"),
        "status_json": run("status", "--json"),
        "recall": run("recall", "dark roast coffee", "--as-of", AS_OF),
        "recall_zh": run("recall", "咖啡", "--as-of", AS_OF),
        "context": run("context", "--as-of", AS_OF),
        "export": run("export"),
        "upcoming": run("upcoming", "--as-of", AS_OF),
        "index": run("index"),
        "index_rebuild": run("index", "--rebuild"),
        "doctor": run("doctor"),
        "doctor_fix": run("doctor", "--fix"),
        "heartbeat_dry": run("heartbeat", "--no-llm", "--dry-run", "--as-of", AS_OF),
        "summarize_dry": run("summarize", "--no-llm", "--dry-run", "--as-of", AS_OF),
        "import_dry": run("import", IMPORT_FILE, "--dry-run"),
        "schedule": run("schedule", "--print", "cron"),
        "note": run("note", "read-only marker"),
        "note_json": run("note", "read-only marker", "--json"),
        "heartbeat": run("heartbeat", "--no-llm", "--as-of", AS_OF),
        "summarize": run("summarize", "--no-llm", "--as-of", AS_OF),
        "sync": run("sync"),
        "undo": run("undo", "HEAD"),
        "import": run("import", IMPORT_FILE),
        "init_inside": run("init", os.path.join(VAULT, "inner")),
        "served": served_recall(),
        "mcp": mcp_tools(),
    }
    print(json.dumps(results, ensure_ascii=False))


if __name__ == "__main__":
    main()
