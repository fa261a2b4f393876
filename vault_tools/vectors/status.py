"""What ``status`` and ``doctor`` say about the vector cache (``[embeddings]`` configured).

Both only read: the cache file is opened read-only and nothing is embedded, written or deleted,
except by ``doctor --fix``, which deletes a cache file SQLite cannot read (the next ``index`` or
the watcher embeds everything again; it is a cache). Entries are counted from the index: those
with a vector, those still waiting for one (the endpoint failed, or nothing has filled the cache
since they were indexed) and those never sent (``#private``, or a visibility that is not
personal or shared: keyword-only, :func:`vault_tools.vectors.embeddings.may_send`).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import sqlite3
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from vault_tools.config import Config
from vault_tools.vectors.embeddings import may_send

__all__ = ["VectorDoctor", "VectorStatus", "vector_doctor", "vector_status"]


@dataclass
class VectorStatus:
    model: str
    cache: str  # the cache file
    state: str  # "ok", "empty" (nothing embedded yet) or "broken"
    problem: str | None
    vectors: int  # vectors in the cache (one per distinct entry text)
    size_bytes: int  # the cache file and its matrix file
    entries: int | None  # indexed entries (None: the index could not be read)
    embedded: int | None  # of them, with a vector
    pending: int | None  # not embedded yet; the next fill (index, the watcher) sends them
    never_sent: int | None  # may not be sent (#private): keyword-only
    matrix_rows: int  # rows of the memory-mapped matrix file (0: none yet; written by recall)
    last_fill: dict[str, Any] | None = None  # at (ISO), by (index|watcher), embedded, pending, error
    last_error: str | None = None  # the last fill's error, when it failed
    summary: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class VectorDoctor:
    ok: bool
    status: VectorStatus
    problems: list[str] = field(default_factory=list)
    fixed: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        lines = [f"embeddings: {self.status.summary}"]
        lines += [f"  {problem}" for problem in self.problems]
        if self.fixed:
            lines.append(f"  fixed: {self.fixed}")
        elif self.problems:
            lines.append("  run with --fix to drop the broken cache (it is embedded again)")
        return "\n".join(lines)


def vector_status(config: Config, *, index_readable: bool = True) -> VectorStatus:
    """The vector cache of the configured model, and how many entries it covers."""
    from vault_tools.vectors.cache import VectorStore, store_path

    path = store_path(config)
    status = VectorStatus(
        model=config.embeddings.model,
        cache=str(path),
        state="empty",
        problem=None,
        vectors=0,
        size_bytes=_size(path),
        entries=None,
        embedded=None,
        pending=None,
        never_sent=None,
        matrix_rows=0,
    )
    store: VectorStore | None = None
    if path.exists():
        try:
            store = VectorStore(config, read_only=True)
            status.vectors = store.count()
        except sqlite3.DatabaseError as exc:
            status.state, status.problem = "broken", f"{path}: unreadable vector cache ({exc})"
    try:
        if store is not None:
            status.state = "ok" if status.vectors else "empty"
            row = store.matrix_row()
            status.matrix_rows = row.rows if row is not None else 0
            _last_fill(store, status)
        if index_readable:
            _count_entries(config, store, status)
    finally:
        if store is not None:
            store.close()
    status.summary = _summary(status)
    return status


def vector_doctor(config: Config, *, fix: bool = False, index_readable: bool = True) -> VectorDoctor:
    """:func:`vector_status` and what is wrong with the cache; ``fix`` drops a broken one."""
    status = vector_status(config, index_readable=index_readable)
    problems = [status.problem] if status.problem else []
    try:
        import numpy  # noqa: F401
    except ImportError:
        problems.append("numpy is not installed: pip install 'vault-tools[embeddings]'")
    fixed = None
    if fix and status.state == "broken":
        path = Path(status.cache)
        for leftover in [path, Path(f"{path}-wal"), Path(f"{path}-shm"), *_matrix_files(path)]:
            with contextlib.suppress(FileNotFoundError):
                leftover.unlink()
        fixed = f"dropped {path.name}; the next `vault-tools index` (or the watcher) embeds every entry again"
        status = vector_status(config, index_readable=index_readable)
        problems = [p for p in problems if not p.startswith(str(path))]
    return VectorDoctor(ok=not problems, status=status, problems=problems, fixed=fixed)


def _matrix_files(path: Path) -> list[Path]:
    return sorted(path.parent.glob(f"{path.stem}-*.npy*"))


def _size(path: Path) -> int:
    total = 0
    for part in [path, Path(f"{path}-wal"), *_matrix_files(path)]:
        with contextlib.suppress(OSError):
            total += part.stat().st_size
    return total


def _last_fill(store: Any, status: VectorStatus) -> None:
    last = store.last_fill()
    if last is None:
        return
    at = last.get("at")
    if isinstance(at, (int, float)):
        last["at"] = dt.datetime.fromtimestamp(at, dt.timezone.utc).isoformat(timespec="seconds")
    status.last_fill = last
    status.last_error = last.get("error") or None


def _count_entries(config: Config, store: Any, status: VectorStatus) -> None:
    """Entries with a vector, pending, never sent (live documents with a content key)."""
    import array

    from vault_tools.index.index import Index
    from vault_tools.index.lines import load_lines
    from vault_tools.vectors.cache import deleted_docs, key_text, searcher_docs, vector_codes

    have = store.keys() if store is not None else set()
    entries = embedded = never_sent = 0
    try:
        with Index(config).searcher() as searcher:
            gone = set(deleted_docs(searcher))
            paired = None  # [embeddings] previous_turn: a vector per entry and the turn before it
            if store is not None and store.previous_turn:
                paired = vector_codes(searcher, store, load_lines(Index(config).dir))
            docnum = -1
            for docs in searcher_docs(searcher, store):
                for code, rank in zip(array.array("Q", docs.keys), docs.ranks, strict=True):
                    docnum += 1
                    if not code or docnum in gone:
                        continue
                    entries += 1
                    if key_text(code if paired is None else int(paired[docnum])) in have:
                        embedded += 1
                    elif rank >= PRIVATE_RANK and not _sendable(searcher, docnum, config):
                        never_sent += 1
    except Exception:  # the index is missing or unreadable: its own status says so
        return
    status.entries, status.embedded, status.never_sent = entries, embedded, never_sent
    status.pending = entries - embedded - never_sent


#: The visibility rank (vectors.SegmentDocs) of private entries and of anything unknown.
PRIVATE_RANK = 2


def _sendable(searcher: Any, docnum: int, config: Config) -> bool:
    """Whether a private (or unknown) entry may be sent all the same (a loopback endpoint that
    ``send_private`` allows): read from its stored fields, as the fill decides it."""
    stored = searcher.stored_fields(docnum)
    return may_send(str(stored.get("visibility", "")), config.embeddings)


def _summary(status: VectorStatus) -> str:
    if status.state == "broken":
        return f"{status.model}: {status.problem}"
    text = f"{status.model}: {status.vectors} vectors"
    if status.entries is not None:
        text += f"; {status.embedded} of {status.entries} entries embedded"
        if status.pending:
            text += f", {status.pending} pending"
        if status.never_sent:
            text += f", {status.never_sent} never sent (#private)"
    if status.last_error:
        by = (status.last_fill or {}).get("by") or "the last fill"
        text += f"; last embedding error ({by}, {(status.last_fill or {}).get('at')}): {status.last_error}"
    return text
