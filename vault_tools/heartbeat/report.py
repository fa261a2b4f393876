"""What a heartbeat run reports: each change, each skipped entry, and the run as a whole."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from vault_tools.curation import insights

Progress = Callable[[str], None]


# ---------------------------------------------------------------------------------------------
# Reports


@dataclass
class ChangeReport:
    kind: str
    text: str
    block_id: str
    section: str | None = None
    score: float | None = None
    sources: list[str] = field(default_factory=list)  # path:line of each source entry
    reason: str | None = None
    rule: str | None = None
    commit: str | None = None
    files: list[str] = field(default_factory=list)


@dataclass
class Skip:
    source: str  # path:line
    text: str
    reason: str


@dataclass
class HeartbeatReport:
    vault: str
    as_of: str
    window: list[str]
    mode: str = "rules"
    model: str | None = None
    fallback: str | None = None
    dry_run: bool = False
    ran: bool = True
    new_entries: int = 0
    deferred: int = 0  # new entries left for the next runs (more than one run curates)
    promoted: list[ChangeReport] = field(default_factory=list)
    merged: list[ChangeReport] = field(default_factory=list)
    pruned: list[ChangeReport] = field(default_factory=list)
    held_back: list[ChangeReport] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)
    commits: list[str] = field(default_factory=list)
    pending_commits: int = 0
    resumed: int = 0
    requests: int = 0
    tokens: dict[str, int] = field(default_factory=lambda: {"prompt": 0, "completion": 0})
    warnings: list[str] = field(default_factory=list)
    diff: str = ""
    seconds: float = 0.0
    # the summaries of closed weeks and months this run wrote (period, path, commit, ...)
    summaries: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        if not self.ran:
            return f"not due: {self.warnings[-1] if self.warnings else 'ran recently'}"
        changes = len(self.promoted) + len(self.merged) + len(self.pruned)
        commits = f"would make {changes} commit(s)" if self.dry_run else f"made {len(self.commits)} commit(s)"
        mode = f"{self.mode}, {self.model}" if self.model else self.mode
        return (
            f"{self.as_of} ({mode}): {self.new_entries} new entries, {len(self.promoted)} promoted, "
            f"{len(self.merged)} merged, {len(self.pruned)} pruned; {commits}"
        )

    def render(self) -> str:
        """The report for people: what changed, why, and what was skipped (counted by reason)."""
        lines = [f"heartbeat {self.window[0]}..{self.window[1]}: {self.summary()}"]
        if not self.ran:
            return lines[0]
        for label, changes in (("promoted", self.promoted), ("merged", self.merged), ("pruned", self.pruned)):
            for change in changes:
                where = f"[{change.section}] " if change.section else ""
                extra = (
                    f" ({change.reason})" if change.reason else f" ({change.score:g})" if change.score else ""
                )
                commit = f"  {change.commit[:10]}" if change.commit else ""
                lines.append(
                    f"  {label:9}{where}{insights.short(change.text, 80)}{extra} ^{change.block_id}{commit}"
                )
        for change in self.held_back:
            lines.append(
                f"  held back {insights.short(change.text, 70)} ({change.reason}) ^{change.block_id}"
            )
        counts: dict[str, int] = {}
        for skip in self.skipped:
            key = re.sub(r"score [0-9.]+ ", "score ", skip.reason.split(" (")[0])
            counts[key] = counts.get(key, 0) + 1
        for reason, count in sorted(counts.items(), key=lambda kv: -kv[1]):
            lines.append(f"  skipped  {count:4} {reason}")
        for summary in self.summaries:
            commit = f"  {summary['commit'][:10]}" if summary.get("commit") else ""
            lines.append(
                f"  summary  {summary['path']} ({summary['bullets']} bullets from "
                f"{summary['entries']} entries, {summary['mode']}){commit}"
            )
        if self.requests:
            lines.append(
                f"  llm      {self.requests} request(s), {self.tokens['prompt']} prompt + "
                f"{self.tokens['completion']} completion tokens"
            )
        lines += [f"warning: {w}" for w in self.warnings]
        if self.diff:
            lines += ["", self.diff.rstrip("\n")]
        return "\n".join(lines)
