"""Import: records from a file become daily-note and MEMORY.md entries, committed as one bot change.

Records are read by :mod:`vault_tools.agents.records` (vault-tools exports, mem0,
memory-lancedb-pro, chat logs). Everything is personal unless the record says otherwise, and an
import never widens what a chat sees: a record whose written line would come out more visible
than it asked for (``#shared`` in the text of a personal memory, a day note shared as a whole) is
skipped with a warning.

Deduplication: a record is skipped when an entry with the same key is already in the vault or
earlier in the same file. The key is the kind (MEMORY.md item or note entry), the date and time
(for note entries) and the text without its trailing tags, case-folded with whitespace collapsed.
Importing the same file twice is therefore a no-op.

Writes are line splices through :func:`vault_tools.notes.edit.apply_edit` (one per file; every other
byte of a note stays as it was), then one commit by the bot identity (:mod:`vault_tools.git.repository`)
that holds only the import's lines: each file as it is at HEAD plus the same splice, so a person's
uncommitted edits to those notes stay uncommitted. No import starts while a merge or rebase is in
progress; outside a git repository, or with a held ``index.lock``, the notes are written and the
report says why nothing was committed.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vault_tools.agents.export import VISIBILITY_TAGS, count, split_trailing_tags
from vault_tools.agents.records import (
    OPENNESS,
    WHITESPACE,
    ReadContext,
    Record,
    Skip,
    raw_records,
    read_input,
    to_record,
)
from vault_tools.config import Config, bot_folders, require_vault, require_writable
from vault_tools.errors import GitError, UsageError, VaultError
from vault_tools.notes import edit as note_edit
from vault_tools.notes import model as notes


def dedupe_key(kind: str, day: dt.date | None, clock: dt.time | None, text: str) -> tuple[str, ...]:
    bare, _ = split_trailing_tags(text)
    norm = WHITESPACE.sub(" ", bare).strip().casefold()
    if kind == "memory":
        return ("memory", norm)
    return ("note", day.isoformat() if day else "", clock.strftime("%H:%M") if clock else "", norm)


def entry_key(entry: notes.Entry) -> tuple[str, ...]:
    return dedupe_key("memory" if entry.kind == "memory" else "note", entry.date, entry.time, entry.text)


def record_key(record: Record) -> tuple[str, ...]:
    return dedupe_key(record.kind, record.date, record.time, record.text)


def render_lines(record: Record, inherited: Iterable[str]) -> list[str]:
    """The Markdown lines of one entry: a bullet, its tags, fields and block id, then continuations."""
    first, *rest = record.text.split("\n")
    present = {
        m.group(1).rstrip("/").lower() for m in notes.TAG.finditer(notes.INLINE_CODE.sub(" ", record.text))
    }
    present |= {t.lower() for t in inherited}
    wanted = [*record.tags]
    if record.visibility in VISIBILITY_TAGS:
        wanted.append(record.visibility)
    suffix = "".join(f" #{t}" for t in dict.fromkeys(wanted) if t.lower() not in present)
    suffix += "".join(f" [{k}:: {v}]" for k, v in record.fields.items())
    if record.block_id:
        suffix += f" ^{record.block_id}"
    box = {"open": "[ ] ", "done": "[x] "}.get(record.task or "", "")
    if record.kind == "memory":
        stamp = record.date.isoformat() if record.date else ""
        if stamp and record.time:
            stamp += f" {record.time:%H:%M}"
        prefix = f"{stamp}: " if stamp else ""
    else:
        prefix = f"{record.time:%H:%M} " if record.time else ""
    lines = [f"- {box}{prefix}{first}".rstrip(), *(f"  {line}" if line else "" for line in rest)]
    lines[-1] += suffix  # after the text, where export finds trailing tags again
    return lines


def resulting_visibility(lines: list[str], base_tags: list[str], base_visibility: notes.Visibility) -> str:
    """The visibility the written lines will be read back with in the target note."""
    text = notes.INLINE_CODE.sub(" ", "\n".join(lines))
    tags = (*base_tags, *(m.group(1).rstrip("/") for m in notes.TAG.finditer(text)))
    fields = {m.group(1).strip().lower(): m.group(2).strip() for m in notes.FIELD.finditer(text)}
    return notes.entry_visibility(base_visibility, tuple(tags), fields)


def is_heading(line: str) -> bool:
    return bool(notes.HEADING.match(notes.strip_eol(line).lstrip(notes.BOM)))


def is_blank(line: str) -> bool:
    return not notes.strip_eol(line).strip()


def headings(lines: list[str], start: int) -> Iterator[int]:
    """Indexes of heading lines from ``start`` on, skipping fenced code blocks."""
    fence: str | None = None
    for index in range(start, len(lines)):
        line = notes.strip_eol(lines[index])
        match = notes.FENCE.match(line)
        if fence is not None:
            if line.strip().startswith(fence):
                fence = None
            continue
        if match:
            fence = match.group(1)
            continue
        if is_heading(line):
            yield index


def body_start(lines: list[str]) -> int:
    span = notes.front_matter_span(lines)
    return span[1] + 1 if span else 0


def insert_into_section(lines: list[str], section: str | None, new: list[str], level: int) -> list[str]:
    """Put ``new`` lines at the end of ``section``'s own entries (before its next heading).

    ``None`` appends at the end of the file; ``""`` means before the first heading; a section
    that is not there is added at the end as a heading of ``level``.
    """
    nl = note_edit.detect_newline(lines)
    added = [line + nl for line in new]
    if section is None:
        return [*note_edit.ensure_final_newline(lines), *added]
    start = body_start(lines)
    found = list(headings(lines, start))
    if section == "":
        return insert_region(lines, start, found[0] if found else len(lines), added, nl)
    names = [notes.HEADING.match(notes.strip_eol(lines[i]).lstrip(notes.BOM)) for i in found]
    titles = [m.group(2).strip() if m else "" for m in names]
    matches = [i for i, t in zip(found, titles, strict=True) if t == section] or [
        i for i, t in zip(found, titles, strict=True) if t.casefold() == section.casefold()
    ]
    if not matches:
        lines = note_edit.ensure_final_newline(lines)
        gap = [nl] if lines and not is_blank(lines[-1]) else []
        return [*lines, *gap, f"{'#' * level} {section}{nl}", nl, *added]
    heading = matches[0]
    following = [i for i in found if i > heading]
    return insert_region(lines, heading + 1, following[0] if following else len(lines), added, nl)


def insert_region(lines: list[str], start: int, stop: int, added: list[str], nl: str) -> list[str]:
    """Insert after the last non-blank line of lines[start:stop], keeping blank lines around headings."""
    end = stop
    while end > start and is_blank(lines[end - 1]):
        end -= 1
    before = lines[:end]
    if before and not before[-1].endswith("\n"):
        before = [*before[:-1], before[-1] + nl]
    lead = [nl] if end == start and start > 0 and is_heading(lines[start - 1]) else []
    after = lines[end:]
    trail = [nl] if after and is_heading(after[0]) else []
    return [*before, *lead, *added, *trail, *after]


def sections_splice(groups: list[tuple[str | None, int, list[str]]], initial: str) -> note_edit.Splice:
    def splice(lines: list[str]) -> list[str]:
        if not lines and initial:
            lines = notes.split_lines(initial)
        for section, level, new in groups:
            lines = insert_into_section(lines, section, new, level)
        return lines

    return splice


@dataclass
class ImportReport:
    file: str
    dry_run: bool = False
    read: int = 0
    imported: int = 0
    duplicates: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    formats: dict[str, int] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)
    commit: str | None = None
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "dry_run": self.dry_run,
            "read": self.read,
            "imported": self.imported,
            "duplicates": self.duplicates,
            "skipped": self.skipped,
            "formats": self.formats,
            "files": self.files,
            "commit": self.commit,
            "warnings": self.warnings,
        }

    def summary(self) -> str:
        verb = "Would import" if self.dry_run else "Imported"
        notes_word = "note" if len(self.files) == 1 else "notes"
        parts = [f"{verb} {self.imported} of {self.read} records into {len(self.files)} {notes_word}"]
        if self.duplicates:
            parts.append(f"{self.duplicates} already there")
        for reason, n in sorted(self.skipped.items()):
            parts.append(f"{n} skipped: {reason}")
        line = "; ".join(parts)
        if self.commit:
            line += f"\ncommitted {self.commit[:10]}"
        return line


@dataclass
class Target:
    """One file the import writes, and what to put where."""

    path: Path
    initial: str
    base_tags: list[str]
    base_visibility: notes.Visibility
    groups: list[tuple[str | None, int, list[str]]] = field(default_factory=list)


def import_file(
    config: Config,
    source: str,
    *,
    roles: Sequence[str] = ("user",),
    dry_run: bool = False,
    commit: bool = True,
) -> ImportReport:
    """Import the records of ``source`` (a path or ``-``) into the vault; see the module docstring."""
    require_vault(config.vault)
    text, name = read_input(source)
    report = ImportReport(file=name, dry_run=dry_run)
    ctx = ReadContext(config, frozenset(r.strip().lower() for r in roles if r.strip()), config.today())
    records = read_records(text, name, ctx, report)
    loaded, _warnings = notes.read_vault(config.vault)
    seen = {entry_key(e) for n in loaded for e in n.entries}
    by_path = {n.path: n for n in loaded}
    targets: dict[Path, Target] = {}
    refused: set[Path] = set()
    undated = 0
    for record in records:
        if record.kind == "daily" and record.date is None:
            record.date = ctx.today
            undated += 1
        key = record_key(record)
        if key in seen:
            report.duplicates += 1
            continue
        target = target_for(config, record, targets, by_path)
        if outside_vault(config, target.path):
            if target.path not in refused:
                refused.add(target.path)
                report.warnings.append(
                    f"{rel(config, target.path)}: skipped; it leads out of the vault (a symlink to "
                    f"{target.path.resolve()}) and import never writes through it"
                )
            count(report.skipped, "would write out of the vault")
            continue
        lines = render_lines(record, target.base_tags)
        if (
            OPENNESS[resulting_visibility(lines, target.base_tags, target.base_visibility)]
            > OPENNESS[record.visibility]
        ):
            report.warnings.append(
                f"{record.origin}: skipped; written into {rel(config, target.path)} it would be more "
                f"visible than {record.visibility} (a #shared tag in its text, or a note shared as a whole)"
            )
            count(report.skipped, "would widen its visibility")
            continue
        seen.add(key)
        add_to_group(target, record, lines)
        report.imported += 1
    if undated:
        report.warnings.append(f"{undated} records had no date; they go into today's note ({ctx.today})")
    written = [t for t in targets.values() if t.groups]
    report.files = sorted(rel(config, t.path) for t in written)
    if dry_run or not written:
        return report
    require_writable("`vault-tools import`", *bot_folders(config.vault))
    if commit:
        check_repository(config)
    for target in written:
        note_edit.apply_edit(target.path, sections_splice(target.groups, target.initial), create=True)
    if commit:
        report.commit, warning = commit_import(config, written, report)
        if warning:
            report.warnings.append(warning)
    return report


def read_records(text: str, name: str, ctx: ReadContext, report: ImportReport) -> list[Record]:
    records: list[Record] = []
    for origin, value in raw_records(text, name):
        report.read += 1
        try:
            record = to_record(value, origin, ctx)
        except Skip as skip:
            count(report.skipped, skip.reason)
            continue
        if not record.text.strip():
            count(report.skipped, "empty text")
            continue
        count(report.formats, record.format)
        records.append(record)
    if report.read and not records and not report.skipped.keys() - {"not a memory, entry or chat message"}:
        raise UsageError(
            f"{name}: no entries found; import reads vault-tools export lines (text, date), mem0 "
            "memories (memory, created_at), memory-lancedb-pro exports (text, timestamp) or chat "
            "logs (role, content, timestamp)"
        )
    foreign = [r for r in records if r.format in ("mem0", "lancedb")]
    if foreign:  # these stores list memories in no useful order: write each day chronologically
        order = sorted(foreign, key=lambda r: (r.date or dt.date.max, r.time or dt.time.min))
        iterator = iter(order)
        records = [next(iterator) if r.format in ("mem0", "lancedb") else r for r in records]
    return records


def rel(config: Config, path: Path) -> str:
    return notes.relative_posix(path, config.vault)


def outside_vault(config: Config, path: Path) -> bool:
    """``path`` (or a folder on the way to it) is a symlink that resolves out of the vault."""
    vault = config.vault.resolve()
    return not path.resolve().is_relative_to(vault)


def target_for(
    config: Config, record: Record, targets: dict[Path, Target], by_path: dict[Path, notes.Note]
) -> Target:
    if record.kind == "memory":
        path = next(
            (config.vault / n for n in notes.MEMORY_FILE_NAMES if (config.vault / n).is_file()),
            config.vault / "MEMORY.md",
        )
        from vault_tools.agents.vault import MEMORY_TEMPLATE

        initial = MEMORY_TEMPLATE
    else:
        assert record.date is not None
        path = config.vault / "memory" / f"{record.date.isoformat()}.md"
        from vault_tools.agents.vault import daily_note_header

        initial = daily_note_header(record.date)
    if path in targets:
        return targets[path]
    note = by_path.get(path)
    if note is None and not path.exists():
        lines = notes.split_lines(initial)
        warnings: list[notes.Warning_] = []
        front, _ = notes.parse_front_matter(lines, path, warnings)
    else:
        front = note.front_matter if note is not None else notes.read_note(path, config.vault).front_matter
    target = Target(path, initial, notes.front_matter_tags(front), notes.note_visibility(front))
    targets[path] = target
    return target


def add_to_group(target: Target, record: Record, lines: list[str]) -> None:
    section = record.section
    level = 1 if record.date is not None and section == record.date.isoformat() else 2
    if target.groups and target.groups[-1][0] == section:
        target.groups[-1][2].extend(lines)
    else:
        target.groups.append((section, level, list(lines)))


def commit_import(
    config: Config, targets: list[Target], report: ImportReport
) -> tuple[str | None, str | None]:
    """One bot commit of exactly the import's lines in exactly the files written.

    What is committed is each file as it is at HEAD plus the import's splice (a new file: its
    header plus the entries), so a person's uncommitted edits to the same notes stay theirs and
    uncommitted (:mod:`vault_tools.git.repository`). Returns (sha, None), or (None, why nothing was
    committed): no repository, a held index.lock, a detached HEAD.
    """
    from vault_tools.git import repository as gitops

    try:
        repo = gitops.VaultRepo.open(config.vault)
    except VaultError as exc:
        return None, f"not committed: {exc}"
    if repo is None:
        return None, "not committed: the vault is not in a git repository (vault-tools init makes one)"
    with repo:
        blocker = repo.in_progress() or repo.commit_blocker()
        if blocker:
            return None, f"not committed: {blocker}"
        splices = {rel(config, t.path): sections_splice(t.groups, t.initial) for t in targets}

        def apply(path: str, base: bytes | None) -> bytes:
            text = base.decode("utf-8", errors="replace") if base is not None else ""
            return "".join(splices[path](notes.split_lines(text))).encode("utf-8")

        contents: dict[str, bytes | None] = {path: apply(path, repo.read_head(path)) for path in splices}
        formats = ", ".join(f"{fmt}: {n}" for fmt, n in sorted(report.formats.items()))
        message = (
            f"import: {report.imported} entr{'y' if report.imported == 1 else 'ies'} from {Path(report.file).name}\n\n"
            f"Read {report.read} records ({formats}); {report.duplicates} already in the vault.\n"
            f"Files: {', '.join(sorted(splices))}\n"
        )
        try:
            sha = repo.commit(contents, message, restage=apply)
        except VaultError as exc:
            return None, f"not committed: {exc}"
    return sha, None


def check_repository(config: Config) -> None:
    """Refuse to write while a merge, rebase, ... is in progress: the notes may hold conflict markers."""
    from vault_tools.git import repository as gitops

    try:
        repo = gitops.VaultRepo.open(config.vault)
    except VaultError:
        return
    if repo is None:
        return
    with repo:
        problem = repo.in_progress()
    if problem:
        raise GitError(problem.replace("the heartbeat skipped this run", "nothing was imported"))
