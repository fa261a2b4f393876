"""Run the heartbeat on a schedule: the text of a crontab line (Linux and macOS), of systemd user
units (Linux) or of a launchd agent (macOS).

All check every hour and call ``vault-tools heartbeat --if-due``, which does the work only when
the last successful run is older than ``heartbeat.interval_hours`` (24 by default). A missed check
(laptop asleep) costs nothing: the next one catches up, and an agent can call ``--if-due`` at
session start as a fallback trigger.
"""

from __future__ import annotations

import plistlib
import shlex
import shutil
import sys
from pathlib import Path

from vault_tools.errors import UsageError

KINDS = ("cron", "systemd", "launchd")
UNIT = "vault-tools-heartbeat"
LAUNCHD_LABEL = "org.vault-tools.heartbeat"


def command_line(vault: Path, executable: str | None = None) -> list[str]:
    """The heartbeat command as argv: the installed ``vault-tools``, else this Python's ``-m``."""
    exe = executable or shutil.which("vault-tools")
    base = [exe] if exe else [sys.executable, "-m", "vault_tools"]
    return [*base, "--vault", str(vault), "heartbeat", "--if-due"]


def cron(vault: Path, *, interval_hours: float, executable: str | None = None) -> str:
    argv = " ".join(shlex.quote(a) for a in command_line(vault, executable))
    log = shlex.quote(str(vault / ".vault-tools" / "heartbeat.log"))
    minute = 7 + sum(map(ord, str(vault))) % 50  # spread vaults over the hour, stable per vault
    return (
        f"# vault-tools heartbeat for {vault}: checked hourly, runs when the last run is older than "
        f"{interval_hours:g} h.\n"
        "# Install: crontab -e, then paste the next line.\n"
        f"{minute} * * * * {argv} >> {log} 2>&1\n"
    )


def systemd_quote(value: str) -> str:
    if value and all(c.isalnum() or c in "/._-+=:@%" for c in value):
        return value
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def systemd(vault: Path, *, interval_hours: float, executable: str | None = None) -> str:
    argv = " ".join(systemd_quote(a) for a in command_line(vault, executable))
    return f"""# ~/.config/systemd/user/{UNIT}.service
[Unit]
Description=vault-tools heartbeat for {vault}

[Service]
Type=oneshot
ExecStart={argv}

# ~/.config/systemd/user/{UNIT}.timer
[Unit]
Description=Check hourly whether the vault-tools heartbeat is due (every {interval_hours:g} h)

[Timer]
OnCalendar=hourly
RandomizedDelaySec=300
Persistent=true

[Install]
WantedBy=timers.target

# Install: save the two units above, then
#   systemctl --user daemon-reload
#   systemctl --user enable --now {UNIT}.timer
#   journalctl --user -u {UNIT}.service    # what the runs said
"""


def launchd(vault: Path, *, interval_hours: float, executable: str | None = None) -> str:
    """A LaunchAgent property list: hourly (a check missed asleep runs on waking) and when loaded."""
    log = str(vault / ".vault-tools" / "heartbeat.log")
    agent = {
        "Label": LAUNCHD_LABEL,
        "ProgramArguments": command_line(vault, executable),
        "StartInterval": 3600,
        "RunAtLoad": True,
        "ProcessType": "Background",
        "StandardOutPath": log,
        "StandardErrorPath": log,
    }
    text = plistlib.dumps(agent, sort_keys=False).decode("utf-8")
    declaration, rest = text.split("\n", 1)
    plist = f"~/Library/LaunchAgents/{LAUNCHD_LABEL}.plist"
    return (
        f"{declaration}\n"
        f"<!-- vault-tools heartbeat: checked hourly, runs when the last run is older than {interval_hours:g} h.\n"
        f"     Install: save this as {plist}, then\n"
        f"       launchctl bootstrap gui/$(id -u) {plist}\n"
        f"     Remove: launchctl bootout gui/$(id -u)/{LAUNCHD_LABEL} -->\n"
        f"{rest}"
    )


def render(kind: str, vault: Path, *, interval_hours: float, executable: str | None = None) -> str:
    """The schedule text of ``kind`` (cron, systemd or launchd) for ``vault``."""
    if kind == "cron":
        return cron(vault, interval_hours=interval_hours, executable=executable)
    if kind == "systemd":
        return systemd(vault, interval_hours=interval_hours, executable=executable)
    if kind == "launchd":
        return launchd(vault, interval_hours=interval_hours, executable=executable)
    raise UsageError(f"unknown schedule {kind!r}; use one of: {', '.join(KINDS)}")
