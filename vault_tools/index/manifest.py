"""What is indexed, file by file: the manifest, and the scan of the notes on disk it is compared with.

``<vault>/.vault-tools/index/`` holds the Whoosh index, ``meta.json`` (schema and analyzer
versions) and ``manifest.json``: for every indexed file its size, mtime, sha256, entry count and
read warnings (:class:`FileRecord`). The manifest is the truth about what is indexed, and it is
written (atomically) only after the index commit it describes. :func:`scan_note_stats` stats
every note in one pass; a file whose mtime is within :data:`RACY_SECONDS` of when it was recorded
is re-hashed next time (an edit in the same clock tick with the same size would otherwise be
missed).
"""

from __future__ import annotations

import json
import os
import stat as stat_module
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vault_tools.locks import INDEX_LOCK
from vault_tools.notes import model as notes

INDEX_DIR = "index"
META_FILE = "meta.json"
MANIFEST_FILE = "manifest.json"
LOCK_NAME = INDEX_LOCK
#: A file modified this close to when it was recorded is re-hashed on the next update.
RACY_SECONDS = 2.0


# ---------------------------------------------------------------------------------------------
# Manifest


@dataclass(frozen=True)
class FileRecord:
    """What the index holds for one file, and the file's stat when it was read."""

    size: int
    mtime_ns: int
    sha256: str
    entries: int
    seen_ns: int  # when the stat was taken: decides whether the mtime is too recent to trust
    warnings: tuple[str, ...] = ()

    def same_stat(self, st: os.stat_result) -> bool:
        return self.size == st.st_size and self.mtime_ns == st.st_mtime_ns

    @property
    def racy(self) -> bool:
        return self.seen_ns - self.mtime_ns < RACY_SECONDS * 1e9

    def to_json(self) -> list[Any]:
        return [self.size, self.mtime_ns, self.sha256, self.entries, self.seen_ns, list(self.warnings)]

    @classmethod
    def from_json(cls, raw: list[Any]) -> FileRecord:
        size, mtime_ns, sha256, entries, seen_ns, warnings = raw
        return cls(
            int(size), int(mtime_ns), str(sha256), int(entries), int(seen_ns), tuple(map(str, warnings))
        )


MANIFEST_VERSION = 1


def load_manifest(index_dir: Path) -> dict[str, FileRecord] | None:
    """The manifest of the index in ``index_dir`` (a copy the caller may change); None when missing
    or unreadable."""
    path = index_dir / MANIFEST_FILE
    try:
        raw = path.read_bytes()
    except OSError:
        return None
    parsed = _parse_manifest(path, raw)
    return None if parsed is None else dict(parsed)


#: The last manifest parsed, per file, with the bytes it was parsed from: the watcher reads the
#: manifest at every batch, and parsing it is most of that (a few ms per thousand files).
_parsed_manifests: dict[Path, tuple[bytes, dict[str, FileRecord] | None]] = {}


def _parse_manifest(path: Path, raw: bytes) -> dict[str, FileRecord] | None:
    cached = _parsed_manifests.get(path)
    if cached is not None and cached[0] == raw:
        return cached[1]
    try:
        data = json.loads(raw.decode("utf-8"))
        if data.get("version") != MANIFEST_VERSION:
            parsed = None
        else:
            parsed = {str(rel): FileRecord.from_json(item) for rel, item in data["files"].items()}
    except (ValueError, KeyError, TypeError, AttributeError):
        parsed = None
    _remember_manifest(path, raw, parsed)
    return parsed


def _remember_manifest(path: Path, raw: bytes, parsed: dict[str, FileRecord] | None) -> None:
    if len(_parsed_manifests) >= 8:  # a process works with one vault, tests with many
        _parsed_manifests.clear()
    _parsed_manifests[path] = (raw, parsed)


def save_manifest(index_dir: Path, files: Mapping[str, FileRecord]) -> None:
    """Write the manifest; this process's next read of it (the watcher's, after every batch) is
    then served from what it wrote, not parsed again."""
    ordered = {rel: files[rel] for rel in sorted(files)}
    data = {"version": MANIFEST_VERSION, "files": {rel: record.to_json() for rel, record in ordered.items()}}
    path = index_dir / MANIFEST_FILE
    _remember_manifest(path, write_json_atomic(path, data), ordered)


def write_json_atomic(path: Path, data: Any) -> bytes:
    """Write JSON with a temp file + os.replace (no fsync: state files are disposable); the bytes
    written."""
    raw = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(raw)
    os.replace(tmp, path)
    return raw


def read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


# ---------------------------------------------------------------------------------------------
# Which paths are notes


def is_note_rel(rel: str) -> bool:
    """Whether a vault-relative POSIX path is one :func:`notes.iter_note_paths` would yield."""
    if rel in notes.MEMORY_FILE_NAMES:
        return True
    parts = rel.split("/")
    if len(parts) < 2 or parts[0] != "memory" or not parts[-1].endswith(".md") or parts[-1].startswith("."):
        return False
    return not any(p in notes.IGNORED_DIRS or p.startswith(".") for p in parts[1:-1])


def is_note_dir_rel(rel: str) -> bool:
    """Whether a vault-relative directory may hold notes (the vault, ``memory/`` and its subfolders)."""
    if rel in ("", "."):
        return True
    parts = rel.split("/")
    if parts[0] != "memory":
        return False
    return not any(p in notes.IGNORED_DIRS or p.startswith(".") for p in parts[1:])


#: Every note by its relative POSIX path: its path as a string (a ``Path`` per note costs
#: 20 µs, a tenth of a catch-up check at 1,000 notes) and its stat.
Scan = dict[str, tuple[str, os.stat_result]]


def scan_notes(vault: Path, warnings: list[notes.Warning_] | None = None) -> dict[str, Path]:
    """Every note of the vault by its relative POSIX path."""
    return {rel: Path(path) for rel, (path, _st) in scan_note_stats(vault, warnings).items()}


def _scan_memory_files(vault: Path, warnings: list[notes.Warning_] | None) -> Scan:
    """MEMORY.md / memory.md (:func:`notes.memory_file_paths`), with their stats."""
    found: Scan = {}
    for path in notes.memory_file_paths(vault, warnings):
        try:
            found[path.name] = (str(path), path.stat())
        except OSError as exc:
            _unreadable(path, exc, warnings)
    return found


UNREADABLE = "could not be read"


def _unreadable(path: Path | str, exc: OSError, warnings: list[notes.Warning_] | None) -> None:
    """Say that a note or folder was skipped because it could not be read (gone is not worth a word)."""
    if warnings is not None and not isinstance(exc, FileNotFoundError):
        warnings.append(notes.Warning_(Path(path), f"{UNREADABLE} ({exc.strerror or exc}); skipped"))


def scan_note_stats(vault: Path, warnings: list[notes.Warning_] | None = None) -> Scan:
    """Every note with its stat, in one pass: the same files as :func:`notes.iter_note_paths`.

    ``os.scandir`` gives each name and its type without a syscall, and only symlinks are
    resolved (to skip those that leave the vault), so 1,000 notes take a few milliseconds
    rather than the ~60 ms of resolving every path.
    """
    root: Path | None = None

    def inside(path: Path) -> bool:
        nonlocal root
        root = root or vault.resolve()
        return notes.inside_vault(path, root, warnings)

    found = _scan_memory_files(vault, warnings)
    memory = vault / "memory"
    linked = memory.is_symlink()
    stack = [("memory", memory)]
    while stack:
        rel_dir, folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError as exc:
            _unreadable(folder, exc, warnings)
            continue
        for entry in entries:
            name = entry.name
            if entry.is_dir(follow_symlinks=False):
                if name not in notes.IGNORED_DIRS and not name.startswith("."):
                    stack.append((f"{rel_dir}/{name}", Path(entry.path)))
                continue
            if not name.endswith(".md") or name.startswith("."):
                continue
            try:
                st = entry.stat()
            except OSError as exc:
                _unreadable(entry.path, exc, warnings)
                continue
            if not stat_module.S_ISREG(st.st_mode):
                continue
            if (linked or entry.is_symlink()) and not inside(Path(entry.path)):
                continue
            found[f"{rel_dir}/{name}"] = (entry.path, st)
    return found


def unchanged(record: FileRecord | None, path: Path) -> bool:
    """Same size and mtime as recorded, and recorded long enough after the mtime to trust it."""
    if record is None or record.racy:
        return False
    try:
        return record.same_stat(path.stat())
    except OSError:
        return False


def file_record(st: os.stat_result, note: notes.Note, entries: int) -> FileRecord:
    warnings = tuple(w.message if w.line is None else f"line {w.line}: {w.message}" for w in note.warnings)
    return new_record(st, note.digest, entries, warnings)


def new_record(st: os.stat_result, sha256: str, entries: int, warnings: tuple[str, ...] = ()) -> FileRecord:
    """The record of a file with stat ``st`` and hash ``sha256`` whose ``entries`` are indexed now."""
    return FileRecord(
        size=st.st_size,
        mtime_ns=st.st_mtime_ns,
        sha256=sha256,
        entries=entries,
        seen_ns=time.time_ns(),
        warnings=warnings,
    )


def file_sha256(path: Path, *, strict: bool = False) -> str | None:
    """The file's sha256; None when it cannot be read (``strict``: raise instead)."""
    import hashlib

    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        if strict:
            raise
        return None
