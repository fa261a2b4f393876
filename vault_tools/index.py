"""The search index: one Whoosh document per entry, kept current from the files by a manifest.

Design. The Markdown files are the truth; ``<vault>/.vault-tools/index/`` is a disposable cache of
them. It holds the Whoosh index, ``meta.json`` (schema and analyzer versions) and
``manifest.json``: for every indexed file its size, mtime, sha256, entry count and read
warnings. The manifest is the truth about what is indexed, and it is written (atomically) only
after the index commit it describes, so a crash at any point leaves files that look changed and
are re-indexed on the next update: nothing is ever lost, at worst re-done. Documents that no
manifest entry accounts for (a crash between the two) are found by their ``path`` and removed
by the next full update.

An update stats every note (:func:`scan_note_stats`, the same files as
:func:`vault_tools.notes.iter_note_paths` in a few milliseconds): same size and mtime → skipped;
otherwise the file is hashed, and only a changed hash re-parses and re-indexes it
(``delete_by_term("path")`` + one document per entry). A file whose mtime is within
:data:`RACY_SECONDS` of when it was recorded is re-hashed next time (an edit in the same clock
tick with the same size would otherwise be missed). All the changes of one update go into one
commit. A rebuild writes a new index next to the old one (in parallel worker processes for
large vaults) and swaps it in, so readers keep working during it.

Concurrency. Writers hold the ``index`` lock (:mod:`vault_tools.locks`) with a timeout; readers
never take it. A reader that hits a transient error (a segment merged away under it, the
directory swapped by a rebuild) retries. Only a process that holds the lock decides that an
index is broken: it re-checks, moves it to ``.vault-tools/index.broken-<time>/`` (the last two
are kept), rebuilds and reports one warning. A reader that cannot get the lock quickly searches
what is there and reports ``stale`` instead; a missing or broken index that another process is
rebuilding raises :class:`IndexBusyError`.

Public API (what ``recall``, ``heartbeat`` and the CLI use)::

    idx = Index(config)                  # cheap; not thread-safe (one per thread)
    report = idx.ensure_current()        # reading commands: heal + stat-based catch-up
    if report.stale: say "results may be stale: " + report.stale_reason
    for w in report.warnings: warn(w)    # a healed index says so here, once
    with idx.searcher() as s:            # a whoosh Searcher (the one ensure_current opened)
        hits = s.search(query, filter=date_filter(since, until), limit=50)
        entries = [IndexedEntry.from_fields(h.fields()) for h in hits]
    idx.read(lambda s: ...)              # the same, retried once via recover() if reading fails
    idx.recover()                        # after an unexpected search error: deep check, heal
    idx.warnings                         # heal warnings from searcher()/read()/recover()
    idx.update([path, ...])              # re-read exactly these files (watcher, heartbeat)
    idx.reconcile()                      # full stat-based sync, waits for the lock
    idx.rebuild()                        # from nothing
    idx.doctor(fix=False) -> DoctorReport;  status(config) -> IndexStatus
    idx.close()                          # or ``with Index(config) as idx:``

Field names are the ``F_*`` constants; :func:`date_filter`, :func:`tag_filter` and
:func:`visibility_filter` build the filter queries the schema is designed for (dates are
16-bit NUMERIC day numbers, :func:`day_number`; tags match by hierarchical prefix with one
Term on ``tagpath``). ``day`` is sortable (``sortedby=F_DAY``).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import logging
import math
import os
import shutil
import stat as stat_module
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from vault_tools import locks, notes, storage
from vault_tools.analysis import ANALYZER_VERSION, CountedText, index_term_counts, text_analyzer
from vault_tools.config import Config
from vault_tools.errors import LockedError, VaultError

T = TypeVar("T")
log = logging.getLogger("vault_tools.index")

#: Bump whenever the fields or what goes into them change: the index is rebuilt on mismatch.
#: 3: text and section keep no positions (nothing runs phrase queries, and unpickling the
#: positions was ~95% of the time Whoosh spent reading a posting block).
SCHEMA_VERSION = 5

INDEX_DIR = "index"
META_FILE = "meta.json"
MANIFEST_FILE = "manifest.json"
WATCH_STATE_FILE = "watch.json"
LOCK_NAME = "index"
KEEP_BROKEN = 2
#: A file modified this close to when it was recorded is re-hashed on the next update.
RACY_SECONDS = 2.0
#: Full builds of vaults this big (bytes of notes) run in parallel worker processes.
PARALLEL_BUILD_BYTES = 1_000_000
MAX_BUILD_WORKERS = 4
#: Whoosh's in-memory posting pool per build process before it spills to temporary runs.
BUILD_LIMIT_MB = 128
#: Updates commit without merging until the index has this many segments (see _Batch.commit).
MAX_SEGMENTS = 24
#: Segments merge by size class, this many of a class at a time (see tiered_merge).
MERGE_FACTOR = 4
#: ``maintain(optimize=True)`` rewrites the index when this share of its documents is deleted.
MAINTAIN_DELETED_SHARE = 0.3

# Field names. Stored fields come back in ``hit.fields()``; see IndexedEntry.
F_ID = "id"  # ID unique stored: Entry.id ("memory/2026-03-10.md#3f9a2c1b0d4e")
F_PATH = "path"  # ID stored: the file, relative to the vault, POSIX
F_START = "start_line"  # STORED int, 1-based inclusive (not searchable: nobody asks by line)
F_END = "end_line"  # STORED int, 1-based inclusive
F_DAY = "day"  # NUMERIC 16-bit day number (see day_number), sortable (0 when undated): date filters
F_DATETIME = "datetime"  # STORED ISO "YYYY-MM-DD" or "YYYY-MM-DDTHH:MM": for display
F_KIND = "kind"  # ID stored: daily | memory | note
F_VISIBILITY = "visibility"  # ID stored: personal | private | shared
F_SECTION = "section"  # TEXT stored: the heading the entry is under
F_TAGS = "tags"  # KEYWORD: comma-separated, stored as written, matched lower-cased (nested "a/b")
F_TAGPATH = "tagpath"  # KEYWORD: every prefix of every tag ("a", "a/b"): filter with one Term
F_IMPORTANCE = "importance"  # NUMERIC float stored, untiered: few distinct values (absent when unset)
F_TEXT = "text"  # TEXT stored, no positions: Entry.text (front matter is never body text)
F_SPEAKER = "speaker"  # KEYWORD lower-cased: who says the entry ("**Name**: text"), see Entry.speaker
F_BEFORE = "before"  # TEXT, not stored: the text of the entries before it (see neighbours)
F_AFTER = "after"  # TEXT, not stored: the text of the entries after it
NEIGHBOUR_FIELDS = (F_BEFORE, F_AFTER)  # what an entry's neighbours' text is indexed in
F_NEIGHBOURS = "neighbours"  # STORED: a hash of the ids of the entries before|after it (what they hold)
F_FILE_HASH = "file_hash"  # STORED: sha256 of the file the entry was read from (doctor compares it)
F_BLOCK_ID = "block_id"  # ID stored: the Obsidian ^block-id
F_FIELDS = "fields"  # STORED: JSON object of the entry's [key:: value] inline fields
F_LINKS = "links"  # KEYWORD stored, comma-separated [[wikilink]] targets


def make_schema() -> Any:
    """The Whoosh schema of an entry document (see the F_* constants)."""
    from whoosh import fields as wf

    analyzer = text_analyzer()
    return wf.Schema(
        **{
            F_ID: wf.ID(stored=True, unique=True),
            F_PATH: wf.ID(stored=True),
            F_START: wf.STORED(),
            F_END: wf.STORED(),
            F_DAY: wf.NUMERIC(int, bits=16, signed=False, stored=True, sortable=True, default=0),
            F_DATETIME: wf.STORED(),
            F_KIND: wf.ID(stored=True),
            F_VISIBILITY: wf.ID(stored=True),
            F_SECTION: wf.TEXT(analyzer=analyzer, stored=True, phrase=False),
            F_TAGS: wf.KEYWORD(stored=True, lowercase=True, commas=True, scorable=True),
            F_TAGPATH: wf.KEYWORD(lowercase=True, commas=True),
            F_IMPORTANCE: wf.NUMERIC(float, stored=True, shift_step=0),
            F_TEXT: CountedText(analyzer=analyzer, stored=True, phrase=False),
            F_SPEAKER: wf.KEYWORD(lowercase=True, scorable=True),
            F_BEFORE: CountedText(analyzer=analyzer, phrase=False),
            F_AFTER: CountedText(analyzer=analyzer, phrase=False),
            F_NEIGHBOURS: wf.STORED(),
            F_FILE_HASH: wf.STORED(),
            F_BLOCK_ID: wf.ID(stored=True),
            F_FIELDS: wf.STORED(),
            F_LINKS: wf.KEYWORD(stored=True, commas=True),
        }
    )


_SCHEMA: Any = None


def schema() -> Any:
    """The schema, built once per process (an immutable description)."""
    global _SCHEMA
    if _SCHEMA is None:
        storage.patch_whoosh()
        _SCHEMA = make_schema()
    return _SCHEMA


# ---------------------------------------------------------------------------------------------
# Documents and query helpers


DAY_EPOCH = dt.date(1900, 1, 1)
_DAY_MAX = 2**16 - 1


def day_number(day: dt.date) -> int:
    """The ``day`` field value of a date: days since 1900-01-01 (2026-03-10 → 46089).

    Sixteen bits (1900 … 2079; dates outside are clamped) index as 4 numeric terms per entry
    where a 32-bit YYYYMMDD takes 8: a date is in every entry, so this is ~10% of a build.
    Sorts like the dates; ``IndexedEntry.date`` has the exact date. 0 is never a date's number:
    it is what the ``day`` column holds for an undated entry, which no date filter matches.
    """
    return max(1, min(_DAY_MAX, (day - DAY_EPOCH).days))


def day_from_number(number: int) -> dt.date:
    """The date of a ``day`` field value (inverse of :func:`day_number` inside its range)."""
    return DAY_EPOCH + dt.timedelta(days=number)


def tag_prefixes(tag: str) -> list[str]:
    """``技术/前端/React`` → ``["技术", "技术/前端", "技术/前端/react"]`` (lower-cased)."""
    parts = [p for p in tag.strip().lstrip("#").lower().split("/") if p]
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def _keyword(values: Iterable[str]) -> str:
    return ",".join(v.replace(",", " ").strip() for v in values if v.strip())


def entry_document(
    entry: notes.Entry,
    file_hash: str,
    before: str | Mapping[str, int] = "",
    after: str | Mapping[str, int] = "",
    *,
    text_terms: Mapping[str, int] | None = None,
    neighbour_ids: tuple[Sequence[str], Sequence[str]] | None = None,
) -> dict[str, Any]:
    """The Whoosh document of one entry; ``before``/``after``: its neighbours' text or term
    counts (see :func:`neighbours`); ``text_terms``: the counts of its own text, when the
    caller analysed it already; ``neighbour_ids``: the entry ids ``before``/``after`` came from,
    stored so that an update can tell an unchanged document from one whose neighbours moved."""
    doc: dict[str, Any] = {
        F_ID: entry.id,
        F_PATH: entry.rel_path,
        F_START: entry.start_line,
        F_END: entry.end_line,
        F_KIND: entry.kind,
        F_VISIBILITY: entry.visibility,
        F_SECTION: entry.section,
        F_TEXT: entry.text,
        F_FILE_HASH: file_hash,
    }
    if text_terms is not None:
        doc[F_TEXT] = dict(text_terms)
        doc["_stored_" + F_TEXT] = entry.text
    if neighbour_ids is not None and any(neighbour_ids):
        joined = "|".join(",".join(ids) for ids in neighbour_ids)
        doc[F_NEIGHBOURS] = hashlib.blake2b(joined.encode("utf-8"), digest_size=8).hexdigest()
    speaker = entry.speaker
    if speaker:
        doc[F_SPEAKER] = speaker
    if before:
        doc[F_BEFORE] = before if isinstance(before, str) else dict(before)
    if after:
        doc[F_AFTER] = after if isinstance(after, str) else dict(after)
    if entry.date is not None:
        doc[F_DAY] = day_number(entry.date)
        doc[F_DATETIME] = (
            f"{entry.date.isoformat()}T{entry.time.strftime('%H:%M')}"
            if entry.time
            else entry.date.isoformat()
        )
    if entry.tags:
        doc[F_TAGS] = _keyword(entry.tags)
        doc[F_TAGPATH] = _keyword(dict.fromkeys(p for t in entry.tags for p in tag_prefixes(t)))
    importance = entry.importance
    if importance is not None and math.isfinite(importance):
        doc[F_IMPORTANCE] = importance
    if entry.block_id:
        doc[F_BLOCK_ID] = entry.block_id
    if entry.fields:
        doc[F_FIELDS] = json.dumps(entry.fields, ensure_ascii=False)
    if entry.links:
        doc[F_LINKS] = _keyword(entry.links)
    return doc


@dataclass(frozen=True)
class IndexedEntry:
    """An entry as stored in the index (what a search hit carries), typed."""

    id: str
    path: str
    start_line: int
    end_line: int
    kind: str
    visibility: str
    section: str
    text: str
    tags: tuple[str, ...]
    date: dt.date | None
    time: dt.time | None
    importance: float | None
    block_id: str | None
    file_hash: str
    fields: dict[str, str]
    links: tuple[str, ...]

    @property
    def datetime(self) -> dt.datetime | None:
        if self.date is None:
            return None
        return dt.datetime.combine(self.date, self.time or dt.time(0, 0))

    @classmethod
    def from_fields(cls, stored: Mapping[str, Any]) -> IndexedEntry:
        """Build from ``hit.fields()`` or ``searcher.stored_fields(docnum)``."""
        when = str(stored.get(F_DATETIME) or "")
        date: dt.date | None = None
        time_: dt.time | None = None
        if when:
            with contextlib.suppress(ValueError):
                date = dt.date.fromisoformat(when[:10])
                if len(when) > 10:
                    time_ = dt.time.fromisoformat(when[11:])
        try:
            fields = json.loads(stored.get(F_FIELDS) or "{}")
        except ValueError:
            fields = {}
        importance = stored.get(F_IMPORTANCE)
        return cls(
            id=str(stored.get(F_ID, "")),
            path=str(stored.get(F_PATH, "")),
            start_line=int(stored.get(F_START, 0)),
            end_line=int(stored.get(F_END, 0)),
            kind=str(stored.get(F_KIND, "note")),
            visibility=str(stored.get(F_VISIBILITY, "personal")),
            section=str(stored.get(F_SECTION, "")),
            text=str(stored.get(F_TEXT, "")),
            tags=tuple(t for t in str(stored.get(F_TAGS) or "").split(",") if t),
            date=date,
            time=time_,
            importance=float(importance) if importance is not None else None,
            block_id=stored.get(F_BLOCK_ID) or None,
            file_hash=str(stored.get(F_FILE_HASH, "")),
            fields=fields if isinstance(fields, dict) else {},
            links=tuple(t for t in str(stored.get(F_LINKS) or "").split(",") if t),
        )


def date_filter(since: dt.date | None, until: dt.date | None) -> Any:
    """A query matching entries dated ``since``..``until`` inclusive (either end open); None if both are."""
    if since is None and until is None:
        return None
    from whoosh.query import NumericRange

    return NumericRange(
        F_DAY,
        day_number(since) if since else None,
        day_number(until) if until else None,
        constantscore=True,
    )


def tag_filter(tag: str) -> Any:
    """Entries tagged ``tag`` or any tag nested under it (``#a`` matches ``#a/b``; not ``#ab``)."""
    from whoosh.query import Term

    prefixes = tag_prefixes(tag)
    return Term(F_TAGPATH, prefixes[-1] if prefixes else "")


def visibility_filter(allowed: Iterable[str]) -> Any:
    """Entries whose visibility is one of ``allowed`` (e.g. ``["shared"]`` in a group chat)."""
    from whoosh.query import NullQuery, Or, Term

    terms = [Term(F_VISIBILITY, v) for v in allowed]
    return Or(terms) if terms else NullQuery


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
    """The manifest of the index in ``index_dir``; None when missing or unreadable."""
    try:
        data = json.loads((index_dir / MANIFEST_FILE).read_text(encoding="utf-8"))
        if data.get("version") != MANIFEST_VERSION:
            return None
        return {str(rel): FileRecord.from_json(raw) for rel, raw in data["files"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def save_manifest(index_dir: Path, files: Mapping[str, FileRecord]) -> None:
    data = {"version": MANIFEST_VERSION, "files": {rel: files[rel].to_json() for rel in sorted(files)}}
    write_json_atomic(index_dir / MANIFEST_FILE, data)


def write_json_atomic(path: Path, data: Any) -> None:
    """Write JSON with a temp file + os.replace (no fsync: state files are disposable)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
    os.replace(tmp, path)


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


_UNREADABLE = "could not be read"


def _unreadable(path: Path | str, exc: OSError, warnings: list[notes.Warning_] | None) -> None:
    """Say that a note or folder was skipped because it could not be read (gone is not worth a word)."""
    if warnings is not None and not isinstance(exc, FileNotFoundError):
        warnings.append(notes.Warning_(Path(path), f"{_UNREADABLE} ({exc.strerror or exc}); skipped"))


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


# ---------------------------------------------------------------------------------------------
# Reports


@dataclass
class UpdateReport:
    """What an update did. ``stale`` means the index may lag the files (see ``stale_reason``)."""

    files_on_disk: int = 0
    added: int = 0  # files indexed for the first time
    updated: int = 0  # files whose content changed
    removed: int = 0  # files gone from the vault (their entries removed)
    touched: int = 0  # stat changed, content did not
    entries_added: int = 0
    entries_removed: int = 0
    entries: int = 0  # entries in the index afterwards
    rebuilt: bool = False
    healed: str | None = None  # why the index was quarantined and rebuilt
    stale: bool = False
    stale_reason: str | None = None
    interrupted: bool = False
    watcher: bool = False  # a live watcher keeps this index current
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)

    @property
    def changed(self) -> int:
        return self.added + self.updated + self.removed

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "changed": self.changed}

    def summary(self) -> str:
        if self.interrupted:
            head = "interrupted; the next update finishes the job"
        elif self.rebuilt:
            head = f"rebuilt: {self.entries} entries from {self.files_on_disk} files"
        elif self.changed or self.touched:
            head = (
                f"{self.added} added, {self.updated} updated, {self.removed} removed "
                f"({self.entries_added} entries in, {self.entries_removed} out); {self.entries} entries"
            )
        else:
            head = f"up to date: {self.entries} entries from {self.files_on_disk} files"
        if self.stale:
            head += f" (results may be stale: {self.stale_reason})"
        return f"{head} in {self.seconds:.2f} s"


@dataclass
class WatcherInfo:
    pid: int
    alive: bool  # the process runs and its heartbeat is fresh
    heartbeat: float  # unix time of its last heartbeat
    last_event: float | None
    last_reconcile: float | None
    summary: str


@dataclass
class IndexStatus:
    state: str  # ok | stale | missing | broken | old
    summary: str
    problem: str | None
    entries: int
    files_indexed: int
    files_on_disk: int
    changed_files: list[str]  # by stat: new, modified or deleted since the last update
    last_update: str | None  # ISO time the manifest was written
    size_bytes: int
    segments: int
    deleted_docs: int
    schema_version: int | None
    analyzer_version: int | None
    watcher: dict[str, Any] | None
    bad_files: list[str]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class DoctorReport:
    ok: bool
    problem: str | None  # the index as a whole: missing, corrupt or schema-old
    files_on_disk: int
    files_indexed: int
    entries_indexed: int
    not_indexed: list[str]  # on disk, not in the index
    missing_files: list[str]  # in the index, gone from disk
    changed_files: list[str]  # content differs from what was indexed
    stale_entries: int  # documents whose file or file content is not what the manifest says
    stale_paths: list[str]
    count_mismatches: list[str]  # "path: manifest N, index M"
    bad_files: list[str]  # read warnings (binary, invalid UTF-8, too big, bad names, symlinks)
    fixed: UpdateReport | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        lines = [
            f"index: {self.problem or 'readable'}",
            f"files: {self.files_on_disk} on disk, {self.files_indexed} indexed; entries: {self.entries_indexed}",
        ]
        for label, items in (
            ("not indexed", self.not_indexed),
            ("deleted from disk, still indexed", self.missing_files),
            ("changed since indexed", self.changed_files),
            ("stale entries in", self.stale_paths),
            ("entry count mismatch", self.count_mismatches),
            ("file warnings", self.bad_files),
        ):
            if items:
                lines.append(f"{label}: {len(items)}")
                lines += [f"  {item}" for item in items[:20]]
                if len(items) > 20:
                    lines.append(f"  … {len(items) - 20} more")
        if self.stale_entries:
            lines.append(f"stale entries: {self.stale_entries}")
        if self.fixed is not None:
            lines.append(f"fixed: {self.fixed.summary()}")
        lines.append("ok" if self.ok else "problems found" + ("" if self.fixed else "; run with --fix"))
        return "\n".join(lines)


class IndexBusyError(LockedError):
    """The index cannot be used now: it is missing or broken and another process is rebuilding it."""


class _Interrupted(Exception):
    pass


_TRANSIENT_RETRIES = (0.05, 0.2)


# ---------------------------------------------------------------------------------------------
# The index


class Index:
    """The entry index of one vault. Cheap to create; every method opens what it needs.

    ``lock_timeout`` is how long writing methods (update, reconcile, rebuild, doctor --fix) wait
    for another writer; ``ensure_current`` waits ``read_lock_timeout`` and then reports stale.
    """

    def __init__(
        self,
        config: Config,
        *,
        lock_timeout: float = 30.0,
        read_lock_timeout: float = 2.0,
        build_workers: int | None = None,
    ) -> None:
        self.config = config
        self.vault = config.vault
        self.lock_timeout = lock_timeout
        self.read_lock_timeout = read_lock_timeout
        self.dir = config.state_dir / INDEX_DIR
        #: Processes for a full build; None: decided by the vault's size (see PARALLEL_BUILD_BYTES).
        self.build_workers: int | None = build_workers
        #: Warnings from healing that happened outside a report (in ``searcher``/``read``/``recover``).
        self.warnings: list[str] = []
        self._ix: Any = None
        self._primed: Any = None  # a searcher opened (and so validated) by ensure_current

    def close(self) -> None:
        """Close the searcher ``ensure_current`` opened, if ``searcher()`` did not take it."""
        primed, self._primed = self._primed, None
        if primed is not None:
            try:  # not contextlib.suppress: this also runs from __del__ at interpreter exit
                primed.close()
            except Exception:
                return

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()

    # -- reading ------------------------------------------------------------------------------

    @contextlib.contextmanager
    def searcher(self) -> Iterator[Any]:
        """A Whoosh ``Searcher`` over the current index, closed at the end of the block.

        Opening it heals a missing or broken index first (under the lock; see ``warnings``).
        An error *inside* the block is the caller's: call :meth:`recover` and search again,
        or use :meth:`read`, which does that.
        """
        s = self.open_searcher()
        try:
            yield s
        finally:
            s.close()

    def open_searcher(self) -> Any:
        """What :meth:`searcher` yields, for a caller that keeps it open and closes it itself.

        Keep it current with ``s = s.refresh()`` (then close only the new one: it reuses the
        old one's open segments, and the old one's others are closed by the refresh).
        """
        s = self._take_primed()
        if s is None:
            report = UpdateReport()
            s = self._open_searcher(report)
            self.warnings += report.warnings
        return s

    def read(self, fn: Callable[[Any], T]) -> T:
        """``fn(searcher)``, retried once if reading fails mid-way.

        A concurrent merge or rebuild can delete files an open reader still wants, and damage
        can hide in a part of the index only a search touches: before the retry,
        :meth:`recover` checks the index thoroughly and rebuilds it when it is broken.
        """
        try:
            with self.searcher() as s:
                return fn(s)
        except VaultError:
            raise
        except Exception as exc:
            log.warning(
                "%s: a search failed (%s: %s); checking the index, then once more",
                self.dir,
                type(exc).__name__,
                exc,
            )
            time.sleep(_TRANSIENT_RETRIES[0])
            self.recover()
        with self.searcher() as s:
            return fn(s)

    def recover(self) -> UpdateReport | None:
        """After an unexpected error from a search: check the index thoroughly, rebuild it if broken.

        Returns the rebuild's report (its warning is also added to ``warnings``), or None when
        the index is fine (the error was transient). Raises :class:`IndexBusyError` when it is
        broken and another process holds the lock.
        """
        self.close()
        self._ix = None
        report = UpdateReport()
        if not self._heal_if_needed(report, progress=False, timeout=self.read_lock_timeout, deep=True):
            return None
        self.warnings += report.warnings
        return report

    def entry_count(self) -> int:
        return int(self.read(lambda s: s.doc_count()))

    # -- writing ------------------------------------------------------------------------------

    def ensure_current(self, *, progress: bool = False) -> UpdateReport:
        """What a reading command calls first: heal if needed, then catch up on changed files.

        Cheap when nothing changed (a stat of every note, no lock). When something changed it
        takes the lock for up to ``read_lock_timeout`` seconds and indexes it; if another writer
        keeps the lock, nothing is written and the report says ``stale`` with why. It ends by
        opening the searcher that the next ``searcher()`` call hands out, so a broken index is
        found (and healed, with a warning in the report) here rather than mid-search.
        """
        started = time.monotonic()
        report = UpdateReport(watcher=watcher_alive(self.config))
        self.close()
        if not self._heal_if_needed(report, progress=progress, timeout=self.read_lock_timeout):
            self._catch_up(report, progress=progress)
        self._primed = self._open_searcher(report, checked=True)
        report.seconds = time.monotonic() - started
        return report

    def _catch_up(self, report: UpdateReport, *, progress: bool) -> None:
        manifest = load_manifest(self.dir) or {}
        on_disk = self._scan(report)
        changed, deleted = self._diff(manifest, on_disk, hash_check=True)
        report.files_on_disk = len(on_disk)
        report.entries = sum(r.entries for r in manifest.values())
        if not changed and not deleted:
            return
        try:
            with locks.hold(self.config, LOCK_NAME, timeout=self.read_lock_timeout, what="catching up"):
                self._guarded(report, progress, None, lambda: self._reconcile_locked(report, progress, None))
        except LockedError:
            report.stale = True
            report.stale_reason = (
                f"{len(changed) + len(deleted)} changed file(s) not indexed yet; "
                f"{locks.describe_owner(self.config, LOCK_NAME)} is writing the index"
            )

    def reconcile(
        self,
        *,
        progress: bool = False,
        should_stop: Callable[[], bool] | None = None,
        merge: bool = True,
        optimize: bool = False,
    ) -> UpdateReport:
        """Bring the index in line with every note on disk (what ``vault-tools index`` does).

        Then, with ``merge``, merges the small segments updates left (and with ``optimize``
        drops a large share of deleted documents; see :meth:`maintain`).
        """
        started = time.monotonic()
        report = UpdateReport(watcher=watcher_alive(self.config))

        def body() -> None:
            self._reconcile_locked(report, progress, should_stop)
            if (merge or optimize) and not report.interrupted:
                self._maintain_locked(max_docs=2**62 if optimize else 4096, optimize=optimize)

        with locks.hold(self.config, LOCK_NAME, timeout=self.lock_timeout, what="updating the index"):
            if not self._heal_locked(report, progress=progress, should_stop=should_stop):
                self._guarded(report, progress, should_stop, body)
        report.seconds = time.monotonic() - started
        return report

    def update(self, paths: Iterable[Path], *, should_stop: Callable[[], bool] | None = None) -> UpdateReport:
        """Re-read exactly ``paths`` (files or folders; gone ones are removed from the index).

        Paths that are not notes (outside ``memory/``, not ``.md``, in ``.git/`` …) are ignored.
        Each file is hashed, so a save that kept size and mtime is still seen.
        """
        started = time.monotonic()
        report = UpdateReport()

        def body() -> None:
            manifest = load_manifest(self.dir) or {}
            self._apply(report, manifest, self._expand(paths, manifest), should_stop=should_stop)

        with locks.hold(self.config, LOCK_NAME, timeout=self.lock_timeout, what="updating the index"):
            if not self._heal_locked(report, progress=False, should_stop=should_stop):
                self._guarded(report, False, should_stop, body)
        report.seconds = time.monotonic() - started
        return report

    def rebuild(
        self, *, progress: bool = False, should_stop: Callable[[], bool] | None = None
    ) -> UpdateReport:
        """Index every note from nothing (into a new folder, swapped in when complete)."""
        started = time.monotonic()
        report = UpdateReport()
        with locks.hold(self.config, LOCK_NAME, timeout=self.lock_timeout, what="rebuilding the index"):
            self._rebuild_locked(report, progress=progress, should_stop=should_stop, quarantine=None)
        report.seconds = time.monotonic() - started
        return report

    def maintain(self, *, max_docs: int = 4096, optimize: bool = False, lock_timeout: float = 0.0) -> bool:
        """Merge one size class of the small segments updates leave; True when it merged.

        The watcher calls it when idle (a class of up to ``max_docs`` documents: ~1 s), and
        ``vault-tools index`` after updating. With ``optimize`` the index is instead rewritten
        as one segment when more than :data:`MAINTAIN_DELETED_SHARE` of its documents are
        deleted ones (edits of old notes leave them in the big segments; a rewrite takes as
        long as a build). Returns False at once when another process holds the lock beyond
        ``lock_timeout``.
        """
        try:
            with locks.hold(self.config, LOCK_NAME, timeout=lock_timeout, what="merging segments"):
                return self.problem() is None and self._maintain_locked(max_docs=max_docs, optimize=optimize)
        except LockedError:
            return False

    def _maintain_locked(self, *, max_docs: int, optimize: bool) -> bool:
        self._ix = None
        writer = self._open_ix().writer(timeout=5.0)
        segments = list(writer.segments)
        total = sum(seg.doc_count_all() for seg in segments)
        deleted = total - sum(seg.doc_count() for seg in segments)
        if optimize and total and deleted > MAINTAIN_DELETED_SHARE * total:
            writer.commit(optimize=True)
        elif merge_group(segments, max_docs) is not None:
            writer.commit(mergetype=tiered_merge(max_docs))
        else:
            writer.cancel()
            return False
        self._ix = None
        return True

    # -- checks -------------------------------------------------------------------------------

    def problem(self, *, deep: bool = False) -> str | None:
        """Why the index cannot be used as it is (missing, corrupt, schema-old), or None.

        The quick check reads the versions, the manifest and Whoosh's table of contents;
        ``deep`` also reads a little of every segment. Without the lock a reader may see a
        transient state; callers that act on the answer check again while holding the lock.
        """
        if not self.dir.is_dir():
            return "missing" if not self.dir.exists() else f"{self.dir} is not a folder"
        meta = read_json(self.dir / META_FILE)
        if not meta:
            return "it has no meta.json (made by another version, or an interrupted build)"
        if meta.get("schema_version") != SCHEMA_VERSION:
            return (
                f"its schema is version {meta.get('schema_version')}, this vault-tools uses {SCHEMA_VERSION}"
            )
        if meta.get("analyzer_version") != ANALYZER_VERSION:
            return (
                f"its analyzer is version {meta.get('analyzer_version')}, "
                f"this vault-tools uses {ANALYZER_VERSION}"
            )
        if load_manifest(self.dir) is None:
            return "its manifest.json is missing or unreadable"
        files = storage.tracking_storage(self.dir)
        try:
            ix = files.open_index(schema=schema())
            if deep:
                _probe(ix)
        except Exception as exc:
            return f"it is corrupt ({type(exc).__name__}: {exc})"
        finally:
            files.close_all()  # Whoosh leaks the files it opened when reading fails
        return None

    def status(self) -> IndexStatus:
        """A read-only description: counts, what changed on disk since the last update, the watcher."""
        problem = self._settled_problem()
        manifest = load_manifest(self.dir) or {}
        warnings: list[notes.Warning_] = []
        on_disk = scan_note_stats(self.vault, warnings)
        changed, deleted = self._diff(manifest, on_disk, hash_check=True)
        entries = segments = deleted_docs = 0
        if problem is None:
            with contextlib.suppress(Exception), self._open_ix().reader() as r:
                entries = r.doc_count()
                deleted_docs = r.doc_count_all() - entries
                segments = len(list(r.leaf_readers()))
        meta = read_json(self.dir / META_FILE)
        watcher = watcher_info(self.config)
        state = "ok"
        if problem == "missing":
            state = "missing"
        elif problem is not None:
            state = (
                "old" if problem.startswith(("its schema", "its analyzer", "it has no meta")) else "broken"
            )
        elif changed or deleted:
            state = "stale"
        stale_paths = sorted(changed + deleted)
        if state == "ok":
            summary = f"{entries} entries from {len(manifest)} files, up to date"
        elif state == "stale":
            summary = f"{entries} entries; {len(stale_paths)} file(s) changed since the last update"
        elif state == "missing":
            summary = "not built yet (any search builds it; or run `vault-tools index`)"
        else:
            summary = f"unusable: {problem}; the next command rebuilds it"
        if watcher is not None:
            summary += f"; watcher {'running' if watcher.alive else 'not running'} (pid {watcher.pid})"
        bad = [f"{rel}: {w}" for rel, rec in sorted(manifest.items()) for w in rec.warnings]
        bad += [str(w) for w in warnings]
        return IndexStatus(
            state=state,
            summary=summary,
            problem=problem,
            entries=entries,
            files_indexed=len(manifest),
            files_on_disk=len(on_disk),
            changed_files=stale_paths,
            last_update=_iso_mtime(self.dir / MANIFEST_FILE),
            size_bytes=_dir_size(self.dir),
            segments=segments,
            deleted_docs=deleted_docs,
            schema_version=meta.get("schema_version"),
            analyzer_version=meta.get("analyzer_version"),
            watcher=asdict(watcher) if watcher is not None else None,
            bad_files=bad,
        )

    def doctor(self, *, fix: bool = False) -> DoctorReport:
        """Compare the files on disk (hashed) with the index document by document; ``fix`` repairs."""
        if fix:
            with locks.hold(self.config, LOCK_NAME, timeout=self.lock_timeout, what="doctor --fix"):
                before = self._examine()
                fixed = UpdateReport()
                started = time.monotonic()
                if not self._heal_locked(fixed, progress=False, should_stop=None):
                    self._repair_locked(before, fixed)
                fixed.seconds = time.monotonic() - started
                after = self._examine()
            after.fixed = fixed
            return after
        return self._examine()

    # -- internals: opening -------------------------------------------------------------------

    def _open_ix(self) -> Any:
        from whoosh.filedb.filestore import FileStorage

        if self._ix is None:
            self._ix = FileStorage(str(self.dir)).open_index(schema=schema())
        return self._ix

    def _take_primed(self) -> Any:
        primed, self._primed = self._primed, None
        if primed is None:
            return None
        try:
            if primed.up_to_date():
                return primed
        except Exception:
            pass
        with contextlib.suppress(Exception):
            primed.close()
        return None

    def _open_searcher(self, report: UpdateReport, *, checked: bool = False) -> Any:
        """Open a searcher, healing first if needed (``checked``: the caller just did).

        Whoosh itself retries a missing file for half a second (a merge or swap in another
        process); an open that still fails has the index checked deeply and rebuilt when
        broken. Warnings go to ``report``.
        """
        if not checked:
            self._heal_if_needed(report, progress=False, timeout=self.read_lock_timeout)
        searcher = self._try_searcher()
        if searcher is not None:
            return searcher
        self._heal_if_needed(report, progress=False, timeout=self.read_lock_timeout, deep=True)
        searcher = self._try_searcher()
        if searcher is None:
            self._ix = None
            return self._open_ix().searcher()  # still failing: let the error through
        return searcher

    def _try_searcher(self) -> Any:
        self._ix = None
        files = storage.tracking_storage(self.dir)
        try:
            searcher = files.open_index(schema=schema()).searcher()
        except Exception:
            files.close_all()
            return None
        files.stop_tracking()  # the searcher owns its files now (and refresh() opens more)
        return searcher

    def _settled_problem(self, *, deep: bool = False) -> str | None:
        """``problem()``, asked again after short pauses so a concurrent commit or swap settles.

        A deep check is asked once: opening the segments already waits out a concurrent merge.
        """
        problem = self.problem(deep=deep)
        if deep:
            return problem
        for pause in _TRANSIENT_RETRIES:
            if problem is None or (problem == "missing" and not self._lock_is_busy()):
                return problem
            time.sleep(pause)
            problem = self.problem(deep=deep)
        return problem

    def _lock_is_busy(self) -> bool:
        try:
            with locks.hold(self.config, LOCK_NAME, timeout=0, what="checking"):
                return False
        except LockedError:
            return True

    def _heal_if_needed(
        self, report: UpdateReport, *, progress: bool, timeout: float, deep: bool = False
    ) -> bool:
        """Rebuild a missing/broken/old index (under the lock). True when it rebuilt."""
        problem = self._settled_problem(deep=deep)
        if problem is None:
            return False
        try:
            with locks.hold(self.config, LOCK_NAME, timeout=timeout, what="rebuilding the index"):
                return self._heal_locked(report, progress=progress, should_stop=None, deep=deep)
        except LockedError:
            pass
        raise IndexBusyError(
            f"the search index is not usable ({problem}) and {locks.describe_owner(self.config, LOCK_NAME)} "
            "is writing it (probably rebuilding). Try again in a minute."
        )

    def _heal_locked(
        self,
        report: UpdateReport,
        *,
        progress: bool,
        should_stop: Callable[[], bool] | None,
        deep: bool = False,
    ) -> bool:
        """Under the lock: if the index is unusable, quarantine it and rebuild. True when it did."""
        self._cleanup_leftovers()
        problem = self.problem(deep=deep)
        if problem is None:
            return False
        quarantine = problem != "missing"
        if quarantine:
            report.healed = problem
            report.warnings.append(
                f"the search index was unusable: {problem}; rebuilt it from the notes "
                f"(the old one is kept in {self.config.state_dir}/index.broken-*)"
            )
        self._rebuild_locked(
            report, progress=progress, should_stop=should_stop, quarantine=problem if quarantine else None
        )
        return True

    def _guarded(
        self,
        report: UpdateReport,
        progress: bool,
        should_stop: Callable[[], bool] | None,
        body: Callable[[], None],
    ) -> None:
        """Run a write under the lock; if it fails on a broken index, heal instead of failing."""
        try:
            body()
        except VaultError:
            raise
        except Exception:
            self._ix = None
            if not self._heal_locked(report, progress=progress, should_stop=should_stop, deep=True):
                raise

    def _cleanup_leftovers(self) -> None:
        """Remove the temporary folders of builds that died (only called under the lock)."""
        for leftover in self.config.state_dir.glob(f"{INDEX_DIR}.tmp-*"):
            shutil.rmtree(leftover, ignore_errors=True)
        for leftover in self.config.state_dir.glob(f"{INDEX_DIR}.old-*"):
            shutil.rmtree(leftover, ignore_errors=True)

    # -- internals: diff and apply ------------------------------------------------------------

    def _diff(
        self, manifest: Mapping[str, FileRecord], on_disk: Scan, *, hash_check: bool
    ) -> tuple[list[str], list[str]]:
        """(changed or new, deleted) relative paths. ``hash_check`` confirms a stat change by content."""
        changed: list[str] = []
        for rel, (path, st) in on_disk.items():
            rec = manifest.get(rel)
            if rec is None:
                changed.append(rel)
                continue
            if rec.same_stat(st) and not rec.racy:
                continue
            if hash_check and _file_sha256(Path(path)) == rec.sha256:
                continue
            changed.append(rel)
        deleted = [rel for rel in manifest if rel not in on_disk]
        return changed, deleted

    def _expand(self, paths: Iterable[Path], manifest: Mapping[str, FileRecord]) -> dict[str, Path | None]:
        """The notes ``paths`` stand for (None: gone). Named files are always re-read; a folder
        stands for the notes in it now and those indexed under it, stat-filtered."""
        files: dict[str, Path | None] = {}
        folders: list[tuple[str, Path]] = []
        root = self.vault.resolve()
        for given in paths:
            path = given if given.is_absolute() else self.vault / given
            try:
                rel = path.relative_to(self.vault).as_posix()
            except ValueError:
                continue
            rel = "" if rel == "." else rel
            if rel == "" or path.is_dir() or any(r.startswith(rel + "/") for r in manifest):
                if is_note_dir_rel(rel):
                    folders.append((f"{rel}/" if rel else "", path))
            elif is_note_rel(rel):
                exists = path.is_file() and notes.inside_vault(path, root, None)
                files[rel] = path if exists else None
        work: dict[str, Path | None] = {}
        if folders:
            on_disk = scan_notes(self.vault)
            for prefix, _path in folders:
                for known in manifest:
                    if known.startswith(prefix) and known not in on_disk:
                        work[known] = None
                for rel, path in on_disk.items():
                    if rel.startswith(prefix) and not _unchanged(manifest.get(rel), path):
                        work[rel] = path
        work.update(files)
        return work

    def _reconcile_locked(
        self, report: UpdateReport, progress: bool, should_stop: Callable[[], bool] | None
    ) -> None:
        manifest = load_manifest(self.dir) or {}
        on_disk = self._scan(report)
        report.files_on_disk = len(on_disk)
        changed, deleted = self._diff(manifest, on_disk, hash_check=False)
        work: dict[str, Path | None] = {rel: Path(on_disk[rel][0]) for rel in changed}
        work.update({rel: None for rel in deleted})
        orphans = frozenset(self._orphan_paths(set(on_disk) | set(manifest)))
        work.update({rel: None for rel in orphans})
        self._apply(report, manifest, work, should_stop=should_stop, progress=progress, purge=orphans)

    def _scan(self, report: UpdateReport) -> Scan:
        """:func:`scan_note_stats`, with a warning in ``report`` for each note or folder it could not read."""
        file_warnings: list[notes.Warning_] = []
        on_disk = scan_note_stats(self.vault, file_warnings)
        report.warnings += [str(w) for w in file_warnings if w.message.startswith(_UNREADABLE)]
        return on_disk

    def _orphan_paths(self, known: set[str]) -> list[str]:
        """Paths with live documents that neither the disk nor the manifest knows (after a crash)."""
        orphans = []
        ix = self._open_ix()
        with ix.reader() as r:
            for rel in r.field_terms(F_PATH):
                if rel not in known and r.postings(F_PATH, rel).is_active():
                    orphans.append(rel)
        return orphans

    def _apply(
        self,
        report: UpdateReport,
        manifest: dict[str, FileRecord],
        work: Mapping[str, Path | None],
        *,
        should_stop: Callable[[], bool] | None,
        progress: bool = False,
        force_reindex: frozenset[str] = frozenset(),
        purge: frozenset[str] = frozenset(),
    ) -> None:
        """Index ``work`` (path → file, or None for gone) in one commit, then save the manifest.

        Every file in ``work`` is read and hashed; one whose hash matches the manifest only gets
        its stat refreshed, unless it is in ``force_reindex``. A gone path's documents are deleted
        when the manifest knows it or it is in ``purge`` (documents nobody accounts for).
        """
        ix = self._open_ix()
        batch = _Batch(ix, manifest, report)
        bar = _progress(len(work), progress, "indexing")
        try:
            for rel in sorted(work):
                if should_stop is not None and should_stop():
                    raise _Interrupted
                bar.update(1)
                self._apply_one(batch, rel, work[rel], force=rel in force_reindex, purge=rel in purge)
            if should_stop is not None and should_stop():
                raise _Interrupted
            batch.commit(self.dir)
        except _Interrupted:
            report.interrupted = True
        finally:
            bar.close()
            batch.cancel()
        self._ix = ix
        report.entries = sum(r.entries for r in manifest.values())
        if not report.files_on_disk:
            report.files_on_disk = len(manifest)

    def _apply_one(self, batch: _Batch, rel: str, path: Path | None, *, force: bool, purge: bool) -> None:
        """Hash first; parse only when the content is not what the manifest already holds."""
        if path is None:
            batch.remove(rel, purge=purge)
            return
        old = batch.manifest.get(rel)
        if old is not None and not force:
            try:
                st = path.stat()
                digest = _file_sha256(path, strict=True)
            except FileNotFoundError:
                batch.remove(rel, purge=purge)
                return
            except OSError:
                digest = None  # let _read say what is wrong
            if digest == old.sha256:
                batch.refresh(rel, st, old)
                return
        note = self._read(path, batch.report)
        if note is None:
            batch.remove(rel, purge=purge)
        else:
            batch.put(rel, *note, force=force)

    def _read(self, path: Path, report: UpdateReport) -> tuple[os.stat_result, notes.Note] | None:
        """Stat (first) and read one note; None when it is gone."""
        try:
            st = path.stat()
            return st, notes.read_note(path, self.vault)
        except FileNotFoundError:
            return None
        except OSError as exc:
            report.warnings.append(f"{path}: could not be read ({exc.strerror}); not indexed")
            return None

    # -- internals: rebuild -------------------------------------------------------------------

    def _rebuild_locked(
        self,
        report: UpdateReport,
        *,
        progress: bool,
        should_stop: Callable[[], bool] | None,
        quarantine: str | None,
    ) -> None:
        state = self.config.make_state_dir()
        self._cleanup_leftovers()
        tmp = state / f"{INDEX_DIR}.tmp-{os.getpid()}"
        file_warnings: list[notes.Warning_] = []
        on_disk = scan_note_stats(self.vault, file_warnings)
        report.warnings += [str(w) for w in file_warnings]
        workers = self._workers_for(on_disk)
        try:
            manifest: dict[str, FileRecord] | None = None
            if workers > 1:
                try:
                    manifest = _parallel_build(
                        tmp, self.vault, on_disk, workers, report, progress, should_stop
                    )
                except (_Interrupted, KeyboardInterrupt):
                    raise
                except Exception as exc:  # e.g. no process could be started: do it here instead
                    log.warning("parallel build failed (%s); building in one process", exc)
            if manifest is None:
                manifest = self._serial_build(tmp, on_disk, report, progress, should_stop)
        except BaseException as exc:
            shutil.rmtree(tmp, ignore_errors=True)
            if isinstance(exc, _Interrupted):
                report.interrupted = True
                return
            raise
        write_json_atomic(
            tmp / META_FILE,
            {
                "schema_version": SCHEMA_VERSION,
                "analyzer_version": ANALYZER_VERSION,
                "created": dt.datetime.now().astimezone().isoformat(timespec="seconds"),
                "build_workers": workers,
            },
        )
        save_manifest(tmp, manifest)
        self._swap_in(tmp, quarantine)
        report.rebuilt = True
        report.added = len(manifest)
        report.files_on_disk = len(on_disk)
        report.entries = sum(r.entries for r in manifest.values())
        report.entries_added = report.entries

    def _workers_for(self, on_disk: Scan) -> int:
        """Processes for a full build: one for small vaults, else one per core (at most 4)."""
        if self.build_workers is not None:
            return max(1, min(self.build_workers, len(on_disk)))
        total = sum(st.st_size for _path, st in on_disk.values())
        if total < PARALLEL_BUILD_BYTES or len(on_disk) < 2:
            return 1
        return max(1, min(os.cpu_count() or 1, MAX_BUILD_WORKERS, len(on_disk)))

    def _serial_build(
        self,
        tmp: Path,
        on_disk: Scan,
        report: UpdateReport,
        progress: bool,
        should_stop: Callable[[], bool] | None,
    ) -> dict[str, FileRecord]:
        from whoosh import index as wi

        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        writer = wi.create_in(str(tmp), schema()).writer(limitmb=BUILD_LIMIT_MB)
        manifest: dict[str, FileRecord] = {}
        bar = _progress(len(on_disk), progress, "indexing")
        try:
            for rel, (path, _st) in on_disk.items():
                if should_stop is not None and should_stop():
                    raise _Interrupted
                bar.update(1)
                note = self._read(Path(path), report)
                if note is None:
                    continue
                st, parsed = note
                manifest[rel] = _record(st, parsed, _add_note(writer, parsed))
                report.warnings += [str(w) for w in parsed.warnings]
            if should_stop is not None and should_stop():
                raise _Interrupted
            bar.set_description("committing")
            writer.commit()
        except BaseException:
            writer.cancel()
            raise
        finally:
            bar.close()
        return manifest

    def _swap_in(self, fresh: Path, quarantine: str | None) -> None:
        """Replace the index folder with ``fresh``; the old one is quarantined or deleted."""
        state = self.config.state_dir
        self._ix = None
        old: Path | None = None
        if self.dir.exists() or self.dir.is_symlink():
            if quarantine:
                stamp = dt.datetime.now().strftime("%Y%m%dT%H%M%S")
                old = state / f"{INDEX_DIR}.broken-{stamp}"
                n = 1
                while old.exists():
                    n += 1
                    old = state / f"{INDEX_DIR}.broken-{stamp}-{n}"
            else:
                old = state / f"{INDEX_DIR}.old-{os.getpid()}"
            os.replace(self.dir, old)
        os.replace(fresh, self.dir)
        if old is not None and not quarantine:
            shutil.rmtree(old, ignore_errors=True)
        broken = sorted(state.glob(f"{INDEX_DIR}.broken-*"), key=lambda p: p.stat().st_mtime)
        for extra in broken[:-KEEP_BROKEN]:
            if extra.is_dir():
                shutil.rmtree(extra, ignore_errors=True)
            else:
                extra.unlink(missing_ok=True)

    # -- internals: doctor --------------------------------------------------------------------

    def _examine(self) -> DoctorReport:
        problem = self._settled_problem()
        manifest = load_manifest(self.dir) or {}
        file_warnings: list[notes.Warning_] = []
        on_disk = scan_notes(self.vault, file_warnings)
        changed = [
            rel
            for rel, path in sorted(on_disk.items())
            if rel in manifest and _file_sha256(path) != manifest[rel].sha256
        ]
        report = DoctorReport(
            ok=False,
            problem=problem,
            files_on_disk=len(on_disk),
            files_indexed=len(manifest),
            entries_indexed=0,
            not_indexed=sorted(set(on_disk) - set(manifest)),
            missing_files=sorted(set(manifest) - set(on_disk)),
            changed_files=changed,
            stale_entries=0,
            stale_paths=[],
            count_mismatches=[],
            bad_files=[f"{rel}: {w}" for rel, rec in sorted(manifest.items()) for w in rec.warnings]
            + [str(w) for w in file_warnings],
        )
        if problem is None:
            self._examine_documents(report, manifest)
        report.ok = problem is None and not (
            report.not_indexed
            or report.missing_files
            or report.changed_files
            or report.stale_entries
            or report.count_mismatches
        )
        return report

    def _examine_documents(self, report: DoctorReport, manifest: Mapping[str, FileRecord]) -> None:
        stale: set[str] = set()
        with self._open_ix().reader() as r:
            report.entries_indexed = r.doc_count()
            for rel in r.field_terms(F_PATH):
                docs = set(r.postings(F_PATH, rel).all_ids()) if r.doc_frequency(F_PATH, rel) else set()
                if not docs:
                    continue
                rec = manifest.get(rel)
                if rec is None:
                    report.stale_entries += len(docs)
                    stale.add(rel)
                    continue
                expected = self._expected_documents(rel, rec) or {}
                stored = [r.stored_fields(d) for d in docs] if expected else []
                outdated = [f for f in stored if not _same_document(f, expected.get(f.get(F_ID), {}))]
                if outdated:
                    report.stale_entries += len(outdated)
                    stale.add(rel)
                if len(docs) != rec.entries:
                    report.count_mismatches.append(f"{rel}: manifest {rec.entries}, index {len(docs)}")
            for rel, rec in manifest.items():
                if rec.entries and not r.doc_frequency(F_PATH, rel):
                    report.count_mismatches.append(f"{rel}: manifest {rec.entries}, index 0")
        report.stale_paths = sorted(stale)
        report.count_mismatches.sort()

    def _expected_documents(self, rel: str, rec: FileRecord) -> dict[str, dict[str, Any]] | None:
        """The documents ``rel`` makes as it is on disk, by entry id; None when it is not the version
        the manifest describes (changed or gone files are reported as such)."""
        try:
            note = notes.read_note(self.vault / rel, self.vault)
        except OSError:
            return None
        if note.digest != rec.sha256:
            return None
        return {doc[F_ID]: doc for doc in _note_documents(note)}

    def _repair_locked(self, before: DoctorReport, report: UpdateReport) -> None:
        manifest = load_manifest(self.dir) or {}
        on_disk = scan_note_stats(self.vault)
        report.files_on_disk = len(on_disk)
        suspects = set(before.changed_files) | set(before.stale_paths) | set(before.not_indexed)
        suspects |= {m.split(": ", 1)[0] for m in before.count_mismatches}
        work: dict[str, Path | None] = {
            rel: Path(on_disk[rel][0]) if rel in on_disk else None for rel in suspects
        }
        work.update({rel: None for rel in before.missing_files})
        changed, deleted = self._diff(manifest, on_disk, hash_check=False)
        work.update({rel: Path(on_disk[rel][0]) for rel in changed})
        work.update({rel: None for rel in deleted})
        self._apply(
            report,
            manifest,
            work,
            should_stop=None,
            force_reindex=frozenset(suspects),
            purge=frozenset(before.stale_paths),
        )
        with contextlib.suppress(Exception):
            ix = self._open_ix()
            with ix.reader() as r:
                deleted_docs = r.doc_count_all() - r.doc_count()
                if deleted_docs > 0.2 * max(1, r.doc_count_all()):
                    ix.optimize()


# ---------------------------------------------------------------------------------------------
# Helpers


# ---------------------------------------------------------------------------------------------
# Parallel full builds
#
# Whoosh spends nearly all of a build in Python, one core. A large build is split by file size
# over worker processes (``python -c`` children, so nothing depends on how multiprocessing would
# start them or on the parent's threads); each writes one segment into the new index folder
# (Whoosh's own MpWriter does the same with ``multisegment=True``), and the parent writes the
# table of contents that lists them all. Workers print a line per file (the progress bar) and
# leave their segment, manifest records and warnings in a pickle. A worker notices a dead parent
# the next time it prints, and dies too.


def _parallel_build(
    tmp: Path,
    vault: Path,
    on_disk: Scan,
    workers: int,
    report: UpdateReport,
    progress: bool,
    should_stop: Callable[[], bool] | None,
) -> dict[str, FileRecord]:
    import pickle
    import subprocess

    from whoosh import index as wi

    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    ix = wi.create_in(str(tmp), schema())
    flags = [f"-W{option}" for option in sys.warnoptions]
    code = "from vault_tools.index import build_worker_main; build_worker_main()"
    procs = []
    for n, files in enumerate(_partition(on_disk, workers)):
        job = tmp / f"job-{n}.json"
        spec = {"index": str(tmp), "vault": str(vault), "files": files, "n": n, "limit_mb": BUILD_LIMIT_MB}
        job.write_text(json.dumps(spec))
        command = [sys.executable, *flags, "-c", code, str(job)]
        procs.append(subprocess.Popen(command, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL))
    bar = _progress(len(on_disk), progress, "indexing")
    try:
        _follow_workers(procs, bar, should_stop)
    finally:
        bar.close()
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()
    manifest: dict[str, FileRecord] = {}
    segments = []
    for n in range(len(procs)):
        with (tmp / f"result-{n}.pickle").open("rb") as handle:
            result = pickle.load(handle)
        if result["segment"] is not None:
            segments.append(result["segment"])
        manifest.update({rel: FileRecord.from_json(raw) for rel, raw in result["manifest"].items()})
        report.warnings += result["warnings"]
        (tmp / f"result-{n}.pickle").unlink()
        (tmp / f"job-{n}.json").unlink()
    wi.TOC(schema(), segments, 1).write(ix.storage, ix.indexname)
    wi.clean_files(ix.storage, ix.indexname, 1, segments)
    return manifest


def _partition(on_disk: Scan, workers: int) -> list[list[str]]:
    """Split the notes into ``workers`` lists of about equal bytes (largest first, greedy)."""
    parts: list[list[str]] = [[] for _ in range(workers)]
    loads = [0] * workers
    for rel, (_path, st) in sorted(on_disk.items(), key=lambda item: -item[1][1].st_size):
        lightest = loads.index(min(loads))
        parts[lightest].append(rel)
        loads[lightest] += st.st_size + 200
    return parts


def _follow_workers(procs: list[Any], bar: Any, should_stop: Callable[[], bool] | None) -> None:
    """Count the workers' progress lines until they all exit; stop them when asked to."""
    import selectors

    with selectors.DefaultSelector() as selector:
        for proc in procs:
            selector.register(proc.stdout, selectors.EVENT_READ)
        open_pipes = len(procs)
        while open_pipes:
            if should_stop is not None and should_stop():
                raise _Interrupted
            for key, _mask in selector.select(timeout=0.2):
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    selector.unregister(key.fileobj)
                    open_pipes -= 1
                bar.update(chunk.count(b"\n"))
    for proc in procs:
        if proc.wait() != 0:
            raise RuntimeError(f"an index build worker failed (exit {proc.returncode})")


def build_worker_main() -> None:
    """One worker of a parallel build (see above): ``python -c ... JOB.json``."""
    import pickle

    from whoosh.writing import SegmentWriter

    job = json.loads(Path(sys.argv[1]).read_text())
    vault, index_dir = Path(job["vault"]), Path(job["index"])
    ix = storage.worker_storage(index_dir, job["n"]).open_index(schema=schema())
    writer = SegmentWriter(ix, _lk=False, limitmb=job["limit_mb"])
    manifest: dict[str, list[Any]] = {}
    warnings: list[str] = []
    out = sys.stdout.buffer
    try:
        for rel in job["files"]:
            path = vault / rel
            try:
                st = path.stat()
                note = notes.read_note(path, vault)
            except FileNotFoundError:
                continue
            except OSError as exc:
                warnings.append(f"{path}: could not be read ({exc.strerror}); not indexed")
                continue
            manifest[rel] = _record(st, note, _add_note(writer, note)).to_json()
            warnings += [str(w) for w in note.warnings]
            out.write(b"\n")
            out.flush()  # BrokenPipeError here when the parent died: stop too
        segment = writer._finalize_segment() if writer.doc_count() else None
    except BaseException:
        writer.cancel()
        raise
    writer._finish()
    result = {"segment": segment, "manifest": manifest, "warnings": warnings}
    with (index_dir / f"result-{job['n']}.pickle").open("wb") as handle:
        pickle.dump(result, handle)


def _probe(ix: Any) -> None:
    """Read a little of every segment (terms, postings, stored fields) so damage shows now."""
    with ix.reader() as r:
        for leaf in r.leaf_readers():
            reader = leaf[0] if isinstance(leaf, tuple) else leaf
            if reader.doc_count() == 0:
                continue
            first = next(iter(reader.all_doc_ids()), None)
            if first is not None:
                reader.stored_fields(first)
            for rel in reader.field_terms(F_PATH):
                list(reader.postings(F_PATH, rel).all_ids())
                break


def _tier(docs: int) -> int:
    """Size class of a segment: 0 for 1-3 documents, 1 for 4-15, 2 for 16-63, …"""
    return int(math.log(max(docs, 1), MERGE_FACTOR))


def tiered_merge(max_docs: int, *, force: bool = False) -> Callable[[Any, list[Any]], list[Any]]:
    """A Whoosh merge policy: merge the smallest size class that has MERGE_FACTOR segments.

    Updates add one small segment per commit. Merging segments of about the same size, a
    class at a time, re-copies each document a few times over its life instead of at every
    merge (Whoosh's MERGE_SMALL re-merges the growing medium segment again and again: 6 s
    at 100k entries). Classes totalling more than ``max_docs`` documents are left alone.
    ``force``: when no class is full, merge the smallest segments anyway (the segment cap).
    """

    def policy(writer: Any, segments: list[Any]) -> list[Any]:
        from whoosh.reading import SegmentReader

        segments = _live_segments(writer, segments)
        group = merge_group(segments, max_docs)
        if group is None and force and len(segments) > 1:
            group = sorted(segments, key=lambda seg: seg.doc_count_all())[
                : min(MERGE_FACTOR, len(segments) - 1)
            ]
        if group is None:
            return segments
        for seg in group:
            reader = SegmentReader(writer.storage, writer.schema, seg)
            writer.add_reader(reader)
            reader.close()
        return [seg for seg in segments if seg not in group]

    return policy


def _live_segments(writer: Any, segments: list[Any]) -> list[Any]:
    """A Whoosh merge policy that merges nothing and drops the segments whose every document is
    deleted (an edited entry deletes its old document; a segment is not dropped by Whoosh
    itself until it is merged)."""
    del writer
    return [seg for seg in segments if seg.doc_count() > 0]


def merge_group(segments: list[Any], max_docs: int) -> list[Any] | None:
    """The segments :func:`tiered_merge` would merge now, or None."""
    classes: dict[int, list[Any]] = {}
    for seg in segments:
        classes.setdefault(_tier(seg.doc_count_all()), []).append(seg)
    for tier in sorted(classes):
        group = classes[tier]
        if len(group) >= MERGE_FACTOR and sum(seg.doc_count_all() for seg in group) <= max_docs:
            return group
    return None


class _Batch:
    """The changes of one update: a writer opened on first need, the manifest edited alongside."""

    def __init__(self, ix: Any, manifest: dict[str, FileRecord], report: UpdateReport) -> None:
        self.ix = ix
        self.manifest = manifest
        self.report = report
        self.writer: Any = None
        self.dirty = False

    def _writer(self) -> Any:
        if self.writer is None:
            self.writer = self.ix.writer(timeout=5.0)
        return self.writer

    def remove(self, rel: str, *, purge: bool) -> None:
        old = self.manifest.pop(rel, None)
        if old is None and not purge:
            return
        self._writer().delete_by_term(F_PATH, rel)
        if old is not None:
            self.report.removed += 1
            self.report.entries_removed += old.entries
        self.dirty = True

    def refresh(self, rel: str, st: os.stat_result, old: FileRecord) -> None:
        """The content is what is indexed: only remember the new stat (and that it is settled)."""
        if not old.same_stat(st):
            self.report.touched += 1
        if not old.same_stat(st) or old.racy:
            self.manifest[rel] = replace(
                old, size=st.st_size, mtime_ns=st.st_mtime_ns, seen_ns=time.time_ns()
            )
            self.dirty = True

    def put(self, rel: str, st: os.stat_result, note: notes.Note, *, force: bool) -> None:
        old = self.manifest.get(rel)
        if old is not None and old.sha256 == note.digest and not force:
            if not old.same_stat(st):
                self.report.touched += 1
            if not old.same_stat(st) or old.racy:
                self.manifest[rel] = _record(st, note, old.entries)
                self.dirty = True
            return
        writer = self._writer()
        if force:
            writer.delete_by_term(F_PATH, rel)
            count = _add_note(writer, note)
        else:
            count = self._put_changed(rel, note)
        self.manifest[rel] = _record(st, note, count)
        self.report.warnings += [str(w) for w in note.warnings]
        if old is None:
            self.report.added += 1
        else:
            self.report.updated += 1
            self.report.entries_removed += old.entries
        self.report.entries_added += count
        self.dirty = True

    def _put_changed(self, rel: str, note: notes.Note) -> int:
        """Write only the entries of ``rel`` that differ from its live documents; the entry count.

        Re-adding a whole file per save made every save cost as much as the file is long: an
        agent's daily note or a MEMORY.md of thousands of items took seconds per batch, and
        each batch left a dead copy of the file in the index. An unchanged entry (same id, same
        stored fields) keeps its document, which then names the file hash of an earlier version.
        """
        writer = self._writer()
        live = self._live_documents(rel)
        for doc in _note_documents(note):
            docnum, stored = live.pop(doc[F_ID], (None, None))
            if stored is not None and _same_document(stored, doc):
                continue
            if docnum is not None:
                writer.delete_document(docnum)
            writer.add_document(**doc)
        for docnum, _stored in live.values():
            writer.delete_document(docnum)
        return len({entry.id for entry in note.entries})

    def _live_documents(self, rel: str) -> dict[str, tuple[int, dict[str, Any]]]:
        """``rel``'s documents as the writer sees them: entry id → (document number, stored fields).

        The writer's own (cached) searcher, so the numbers are the writer's: deleting by number
        is one call, where ``delete_by_term`` looks the id up in every segment.
        """
        writer = self._writer()
        reader = writer.searcher().reader()
        if (F_PATH, rel) not in reader:
            return {}
        live: dict[str, tuple[int, dict[str, Any]]] = {}
        for docnum in reader.postings(F_PATH, rel).all_ids():  # deleted documents left out
            stored = reader.stored_fields(docnum)
            twin = live.get(str(stored.get(F_ID)))
            if twin is not None:  # one entry indexed twice (never written so): keep one
                writer.delete_document(twin[0])
            live[str(stored.get(F_ID))] = (docnum, stored)
        return live

    def commit(self, index_dir: Path) -> None:
        """Commit the index, then (only then) write the manifest that describes it.

        Updates add a segment without merging (Whoosh's default merge costs ~0.8 s at 100k
        entries every dozen commits: too much for save-to-searchable); :meth:`Index.maintain`
        merges when nobody waits. Past :data:`MAX_SEGMENTS` a commit merges anyway, so
        searches never slow down for want of a watcher.
        """
        if self.writer is not None:
            if len(self.writer.segments) >= MAX_SEGMENTS:
                self.writer.commit(mergetype=tiered_merge(max_docs=1024, force=True))
            else:
                self.writer.commit(mergetype=_live_segments)
            self.writer = None
        if self.dirty:
            save_manifest(index_dir, self.manifest)

    def cancel(self) -> None:
        if self.writer is not None:
            self.writer.cancel()
            self.writer = None


def _note_documents(note: notes.Note) -> Iterator[dict[str, Any]]:
    entries = note.entries
    counts = [index_term_counts(entry.text) for entry in entries]
    seen: set[str] = set()
    for entry, terms, (before, after) in zip(entries, counts, neighbours(entries), strict=True):
        entry_id = entry.id
        if entry_id in seen:  # an identical entry twice in one file: same id, same content
            continue
        seen.add(entry_id)
        before_ids = [entries[i].id for i in before]
        after_ids = [entries[i].id for i in after]
        yield entry_document(
            entry,
            note.digest,
            _summed_counts(counts, before),
            _summed_counts(counts, after),
            text_terms=terms,
            neighbour_ids=(before_ids, after_ids),
        )


def _add_note(writer: Any, note: notes.Note) -> int:
    count = 0
    for doc in _note_documents(note):
        writer.add_document(**doc)
        count += 1
    return count


#: Indexed, not stored, and computed from stored fields only: tagpath from tags, speaker from
#: the text, the neighbours' fields from the neighbours (their ids are stored in F_NEIGHBOURS).
_DERIVED_FIELDS = frozenset({F_TAGPATH, F_SPEAKER, *NEIGHBOUR_FIELDS})
_STORED_AS = "_stored_"


def _same_document(stored: Mapping[str, Any], doc: Mapping[str, Any]) -> bool:
    """Whether ``doc`` indexes exactly what the live document with ``stored`` fields does.

    The file hash aside (it changes with any edit of the file). A field given as term counts
    compares by its stored text. A field that is neither stored nor derived from stored ones
    cannot be compared, so a document with one is never the same.
    """
    mine: dict[str, Any] = {}
    for key, value in doc.items():
        if key.startswith(_STORED_AS):
            mine[key[len(_STORED_AS) :]] = value
        elif key != F_FILE_HASH and key not in _DERIVED_FIELDS and f"{_STORED_AS}{key}" not in doc:
            mine[key] = value
    return mine == {k: v for k, v in stored.items() if k != F_FILE_HASH}


def _summed_counts(counts: Sequence[Mapping[str, int]], which: Sequence[int]) -> dict[str, int]:
    total: dict[str, int] = {}
    for i in which:
        for term, frequency in counts[i].items():
            total[term] = total.get(term, 0) + frequency
    return total


#: How many entries before and after an entry count as its neighbours (two each way beat one
#: and three on LoCoMo's dev half: an answer often comes two turns after its question).
NEIGHBOURS_BEFORE = 2
NEIGHBOURS_AFTER = 2

_VISIBILITY_RANK = {"shared": 0, "personal": 1, "private": 2}


def neighbours(entries: Sequence[notes.Entry]) -> list[tuple[list[int], list[int]]]:
    """(indexes before, indexes after) of each entry's neighbours: up to
    :data:`NEIGHBOURS_BEFORE` and :data:`NEIGHBOURS_AFTER` in the same file and section.

    In a conversation or a person's notes one line names the topic and the next answers it
    ("Any tips?" / "Do your research first"), so a neighbour's words are part of an entry's
    meaning; recall matches them with less weight than the entry's own. MEMORY.md items have
    none: each curated item stands alone, and its neighbours are other facts. A neighbour counts only
    when every chat that may see the entry may see it too: a #private line never makes a
    personal one match, a personal line never makes a shared one match.
    """
    out: list[tuple[list[int], list[int]]] = []
    for i, entry in enumerate(entries):
        before = range(max(0, i - NEIGHBOURS_BEFORE), i)
        after = range(i + 1, min(len(entries), i + 1 + NEIGHBOURS_AFTER))
        out.append(
            (
                [j for j in before if _is_neighbour(entry, entries[j])],
                [j for j in after if _is_neighbour(entry, entries[j])],
            )
        )
    return out


def _is_neighbour(entry: notes.Entry, other: notes.Entry) -> bool:
    if other.section != entry.section or entry.kind == "memory":
        return False
    return _VISIBILITY_RANK.get(other.visibility, 2) <= _VISIBILITY_RANK.get(entry.visibility, 2)


def _unchanged(record: FileRecord | None, path: Path) -> bool:
    """Same size and mtime as recorded, and recorded long enough after the mtime to trust it."""
    if record is None or record.racy:
        return False
    try:
        return record.same_stat(path.stat())
    except OSError:
        return False


def _record(st: os.stat_result, note: notes.Note, entries: int) -> FileRecord:
    return FileRecord(
        size=st.st_size,
        mtime_ns=st.st_mtime_ns,
        sha256=note.digest,
        entries=entries,
        seen_ns=time.time_ns(),
        warnings=tuple(w.message if w.line is None else f"line {w.line}: {w.message}" for w in note.warnings),
    )


def _file_sha256(path: Path, *, strict: bool = False) -> str | None:
    """The file's sha256; None when it cannot be read (``strict``: raise instead)."""
    import hashlib

    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        if strict:
            raise
        return None


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass

    def set_description(self, desc: str) -> None:
        pass

    def close(self) -> None:
        pass


def _progress(total: int, enabled: bool, what: str) -> Any:
    """A tqdm bar on stderr when asked for and stderr is a terminal; shown after a second."""
    if not enabled or not sys.stderr.isatty():
        return _NoBar()
    from tqdm import tqdm

    return tqdm(total=total, desc=what, unit="file", delay=1.0, file=sys.stderr, leave=False)


def _iso_mtime(path: Path) -> str | None:
    try:
        stamp = path.stat().st_mtime
    except OSError:
        return None
    return dt.datetime.fromtimestamp(stamp).astimezone().isoformat(timespec="seconds")


def _dir_size(path: Path) -> int:
    total = 0
    with contextlib.suppress(OSError):
        for child in path.iterdir():
            with contextlib.suppress(OSError):
                total += child.stat().st_size
    return total


# ---------------------------------------------------------------------------------------------
# The watcher's heartbeat (written by vault_tools.watch, read here without importing watchdog)


def watch_state_path(config: Config) -> Path:
    return config.state_dir / WATCH_STATE_FILE


pid_alive = notes.pid_alive


def watcher_info(config: Config) -> WatcherInfo | None:
    """The watcher's last heartbeat, and whether it is alive (process runs, heartbeat fresh)."""
    data = read_json(watch_state_path(config))
    if not data or "pid" not in data:
        return None
    try:
        pid = int(data["pid"])
        heartbeat = float(data.get("heartbeat", 0.0))
        freshness = 3 * float(data.get("heartbeat_seconds", 10.0)) + 5.0
    except (TypeError, ValueError):
        return None
    alive = not data.get("stopped") and pid_alive(pid) and time.time() - heartbeat < freshness
    return WatcherInfo(
        pid=pid,
        alive=alive,
        heartbeat=heartbeat,
        last_event=data.get("last_event"),
        last_reconcile=data.get("last_reconcile"),
        summary=str(data.get("summary", "")) if alive else "not running",
    )


def watcher_alive(config: Config) -> bool:
    info = watcher_info(config)
    return info is not None and info.alive


# ---------------------------------------------------------------------------------------------
# Module-level entry points


def status(config: Config) -> IndexStatus:
    """``Index(config).status()``: what ``vault-tools status`` shows about the index."""
    return Index(config).status()


def open_current(config: Config, *, progress: bool = False) -> tuple[Index, UpdateReport]:
    """An index caught up with the files, and the report of catching up (check ``stale``)."""
    idx = Index(config)
    return idx, idx.ensure_current(progress=progress)


__all__ = [
    "F_BLOCK_ID",
    "F_DATETIME",
    "F_DAY",
    "F_END",
    "F_FIELDS",
    "F_FILE_HASH",
    "F_ID",
    "F_IMPORTANCE",
    "F_KIND",
    "F_LINKS",
    "F_PATH",
    "F_SECTION",
    "F_START",
    "F_TAGPATH",
    "F_TAGS",
    "F_TEXT",
    "F_VISIBILITY",
    "SCHEMA_VERSION",
    "DoctorReport",
    "Index",
    "IndexBusyError",
    "IndexStatus",
    "IndexedEntry",
    "UpdateReport",
    "date_filter",
    "day_from_number",
    "day_number",
    "entry_document",
    "open_current",
    "status",
    "tag_filter",
    "visibility_filter",
    "watcher_alive",
    "watcher_info",
]
