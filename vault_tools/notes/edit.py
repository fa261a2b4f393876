"""Changing notes: atomic, conflict-checked line splices.

Nothing here re-serialises a file: every change is a :data:`Splice`, a function from the current
lines to new lines that finds its anchor by content. :func:`apply_edit` writes it with a temp file
+ fsync + ``os.replace`` after checking that the file is still the one that was read; when a person
saved it in between, the splice is re-applied to what they saved, or :class:`ConflictError` is
raised. Every other byte (BOM, CRLF, comments and key order in YAML, trailing spaces) stays as it was.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from vault_tools.errors import ConflictError, VaultError
from vault_tools.notes.model import BOM, HEADING, front_matter_span, split_lines, strip_eol

Splice = Callable[[list[str]], list[str]]


@dataclass(frozen=True)
class EditResult:
    data: bytes  # the file's bytes after the edit
    changed: bool  # False when the splice was a no-op
    reapplied: bool  # True when the file had changed since the caller read it


def apply_edit(
    path: Path, splice: Splice, *, expected: bytes | None = None, create: bool = False
) -> EditResult:
    """Apply ``splice`` to the file's lines and write the result atomically.

    ``expected`` is the content the caller read and based the edit on. When the file no longer
    holds it (a person saved in between) the splice is applied to the current content instead: a
    splice finds its anchor by content, so it either lands on the new text or raises ConflictError.
    The file is re-read just before the replace, so a save made while we computed is never lost.
    """
    for _attempt in range(5):
        current = read_bytes_or_empty(path, create)
        new_bytes = "".join(splice(split_lines(current.decode("utf-8")))).encode("utf-8")
        reapplied = expected is not None and expected != current
        if new_bytes == current:
            return EditResult(current, False, reapplied)
        if read_bytes_or_empty(path, create) != current:
            continue  # changed while we computed: start again from what is there now
        atomic_write(path, new_bytes)
        return EditResult(new_bytes, True, reapplied)
    raise ConflictError(
        f"{path}: kept changing while vault-tools tried to edit it; try again when it is quiet"
    )


def read_bytes_or_empty(path: Path, create: bool) -> bytes:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        if create:
            return b""
        raise VaultError(f"{path}: file not found; it may have been moved or deleted") from None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        raise VaultError(
            f"{path}: is not valid UTF-8; vault-tools will not edit it (re-save it as UTF-8)"
        ) from None
    return data


def atomic_write(path: Path, data: bytes) -> None:
    """Temp file in the same folder, fsync, os.replace, fsync the folder: all or nothing.

    The temp file's name holds the writer's pid (``.NAME.<pid>.<random>.tmp``), so the temp
    file of a write that was killed (kill -9, a crash) is removed by the next write of the file.
    """
    target = path.resolve() if path.is_symlink() else path
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_dead_temps(target.parent, of=target.name)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.{os.getpid()}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            flush_to_disk(handle.fileno())
        os.chmod(tmp_name, existing_mode(target))
        os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise
    fsync_dir(target.parent)


# ``.NAME.<pid>.<8 random characters of mkstemp>.tmp``: only the temp files atomic_write makes.
TEMP_NAME = re.compile(r"^\.(.+)\.(\d+)\.[a-z0-9_]{8}\.tmp$")


def remove_dead_temps(folder: Path, *, of: str | None = None) -> list[Path]:
    """Remove the temp files of :func:`atomic_write` whose writer is no longer alive (only those
    of the file named ``of``, when given); return them."""
    removed: list[Path] = []
    with contextlib.suppress(OSError):
        for path in folder.iterdir():
            match = TEMP_NAME.match(path.name)
            if match is None or (of is not None and match.group(1) != of) or not path.is_file():
                continue
            if pid_alive(int(match.group(2))):
                continue
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
                removed.append(path)
    return removed


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid runs (another user's counts; 0 and below never do)."""
    if pid <= 0:
        return False
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    except OSError:
        return False
    return True


def existing_mode(path: Path) -> int:
    """The file's permission bits, or what a plain ``open()`` would give a new file (umask applied)."""
    try:
        return path.stat().st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def flush_to_disk(fd: int) -> None:
    """``fsync``, or on macOS ``fcntl(F_FULLFSYNC)``: macOS's ``fsync`` leaves the data in the
    drive's cache, where a power cut can lose it after ``os.replace`` made the note's name point
    at it. Where F_FULLFSYNC is refused (some network and FUSE file systems), ``fsync``."""
    full_fsync = getattr(fcntl, "F_FULLFSYNC", None)
    if full_fsync is not None:
        try:
            fcntl.fcntl(fd, full_fsync)
            return
        except OSError:
            pass
    os.fsync(fd)


def fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def detect_newline(lines: list[str]) -> str:
    return "\r\n" if any(line.endswith("\r\n") for line in lines[:50]) else "\n"


def ensure_final_newline(lines: list[str]) -> list[str]:
    if lines and not lines[-1].endswith("\n"):
        return [*lines[:-1], lines[-1] + detect_newline(lines)]
    return lines


def append_lines(new_lines: list[str], *, initial: str = "") -> Splice:
    """Append lines at the end of the file (creating it with ``initial`` when empty)."""

    def splice(lines: list[str]) -> list[str]:
        if not lines and initial:
            lines = split_lines(initial)
        nl = detect_newline(lines)
        lines = ensure_final_newline(lines)
        return [*lines, *(line + nl for line in new_lines)]

    return splice


def section_bounds(lines: list[str], heading: str) -> tuple[int, int] | None:
    """(heading index, index after the section's last non-blank line) of the first matching heading."""
    start = None
    level = 0
    for index, line in enumerate(lines):
        match = HEADING.match(strip_eol(line).lstrip(BOM))
        if not match:
            continue
        if start is None and match.group(2).strip().lower() == heading.lower():
            start, level = index, len(match.group(1))
        elif start is not None and len(match.group(1)) <= level:
            return start, last_content(lines, start, index)
    if start is None:
        return None
    return start, last_content(lines, start, len(lines))


def last_content(lines: list[str], start: int, end: int) -> int:
    index = end
    while index > start + 1 and not strip_eol(lines[index - 1]).strip():
        index -= 1
    return index


def insert_under_section(heading: str, new_lines: list[str], *, level: int = 2) -> Splice:
    """Insert lines after the last line of a section; add the section at the end when missing."""

    def splice(lines: list[str]) -> list[str]:
        nl = detect_newline(lines)
        bounds = section_bounds(lines, heading)
        added = [line + nl for line in new_lines]
        if bounds is None:
            lines = ensure_final_newline(lines)
            gap = [nl] if lines and strip_eol(lines[-1]).strip() else []
            return [*lines, *gap, f"{'#' * level} {heading}{nl}", nl, *added]
        _start, end = bounds
        lines = ensure_final_newline(lines) if end == len(lines) else lines
        if end == bounds[0] + 1:
            added = [nl, *added]
        return [*lines[:end], *added, *lines[end:]]

    return splice


def find_block(lines: list[str], expected: list[str], hint: int | None = None) -> int:
    """Index where ``expected`` lines (without endings) occur; the one nearest ``hint`` wins."""
    width = len(expected)
    found = [
        i
        for i in range(len(lines) - width + 1)
        if [strip_eol(x).lstrip(BOM) for x in lines[i : i + width]] == expected
    ]
    if not found:
        raise ConflictError(
            "the lines to change are no longer in the file (edited by someone else); nothing was written"
        )
    return min(found, key=lambda i: abs(i - hint)) if hint is not None else found[0]


def remove_block(expected: list[str], *, hint: int | None = None) -> Splice:
    """Remove the lines that read ``expected`` (found by content, nearest the 0-based ``hint``)."""

    def splice(lines: list[str]) -> list[str]:
        index = find_block(lines, expected, hint)
        return [*lines[:index], *lines[index + len(expected) :]]

    return splice


def replace_block(expected: list[str], replacement: list[str], *, hint: int | None = None) -> Splice:
    """Replace the lines that read ``expected`` with ``replacement``, keeping the file's line endings."""

    def splice(lines: list[str]) -> list[str]:
        index = find_block(lines, expected, hint)
        nl = detect_newline(lines)
        last = lines[index + len(expected) - 1]
        new = [line + nl for line in replacement]
        if new and not last.endswith("\n"):
            new[-1] = replacement[-1]
        if index == 0 and lines[0].startswith(BOM) and new and not new[0].startswith(BOM):
            new[0] = BOM + new[0]
        return [*lines[:index], *new, *lines[index + len(expected) :]]

    return splice


def set_front_matter_key(key: str, value: str) -> Splice:
    """Set one top-level front-matter key by editing only its line (adding the block if missing)."""
    rendered = f"{key}: {yaml_scalar(value)}"
    pattern = re.compile(rf"^{re.escape(key)}[ \t]*:")

    def splice(lines: list[str]) -> list[str]:
        nl = detect_newline(lines)
        span = front_matter_span(lines)
        if span is None:
            bom = BOM if lines and lines[0].startswith(BOM) else ""
            if bom:
                lines = [lines[0][1:], *lines[1:]]
            return [f"{bom}---{nl}", rendered + nl, f"---{nl}", *lines]
        start, end = span
        for index in range(start, end):
            if pattern.match(lines[index]):
                stop = index + 1
                while stop < end and lines[stop][:1] in (" ", "\t", "-") and not pattern.match(lines[stop]):
                    stop += 1  # a block value (list or mapping) continues on indented lines
                return [*lines[:index], rendered + nl, *lines[stop:]]
        return [*lines[:end], rendered + nl, *lines[end:]]

    return splice


def yaml_scalar(value: str) -> str:
    import yaml

    dumped = yaml.safe_dump(value, allow_unicode=True, default_flow_style=True, width=10_000).strip()
    return dumped.removesuffix("\n...").removesuffix("...").strip()
