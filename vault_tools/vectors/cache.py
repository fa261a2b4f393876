"""Vectors: the disposable cache of entry vectors, keyed by content, and which vector is which hit.

Storage. One SQLite file per model under ``.vault-tools/vectors/`` (the model's name and
:data:`vault_tools.vectors.embeddings.RECIPE` in its name: another model, or another recipe for what is
sent, starts an empty file and the old one is deleted). A vector is keyed by the entry's content
hash (the 12 hex digits of its id, ``memory/2026-03-10.md#3f9a2c1b0d4e``), so an unchanged entry
is never embedded twice, an edited one is embedded again, and the same text in two files once.
Rows are only ever added, so a reader loads the new ones by ``rowid``. The file can be deleted at
any time; the next fill embeds everything again.

The turn before (``[embeddings] previous_turn``, the default). An entry is embedded after the
entry before it in its file and section ("Did you ever get the job?" → "No, got laid off from
Acme"), the neighbour the keyword side and :func:`neighbour_table` already use: never across a
section or from a more private entry, so nothing is sent that is not sent on its own anyway, and a
shared entry's vector holds nothing personal. Its vector is keyed by a mix of both hashes
(:func:`paired_codes`): an edit embeds again the edited entry and the one after it. It helped on
both benchmarks (README, Semantic recall).

Which vector belongs to which search hit. Whoosh segments never change once written, so what the
vector side needs of each segment's documents (key, file, line, section, visibility; in document
order, as fixed-width columns) is kept in the same file, read from the stored fields once per
segment: a fresh process maps 100k documents to their vectors in milliseconds. The vectors
themselves are also kept as one memory-mapped matrix file (:mod:`vault_tools.vectors.matrix`), so a
fresh process does not read them out of SQLite one row at a time.

Filling is :mod:`vault_tools.vectors.fill`; searching is :mod:`vault_tools.vectors.search`.
"""

from __future__ import annotations

import array
import contextlib
import hashlib
import logging
import re
import sqlite3
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from vault_tools.config import Config
from vault_tools.vectors.embeddings import RECIPE, on_this_machine

if TYPE_CHECKING:
    pass

__all__ = ["FillReport", "VectorStore", "doc_keys", "store_path"]

log = logging.getLogger("vault_tools.vectors.cache")

STORE_DIR = "vectors"
KEY_LENGTH = 12
#: A key as a number (the columns, the matrix): this bit, or'ed with the 48 bits of its 12 hex
#: digits; 0 is "no key".
KEY_FLAG = 1 << 48


def store_path(config: Config) -> Path:
    """The cache file of the configured model (``[embeddings] model``)."""
    model = config.embeddings.model
    recipe = f"{RECIPE}+previous-turn" if config.embeddings.previous_turn else str(RECIPE)
    if on_this_machine(config.embeddings):
        recipe += "+local"  # sensitive details are sent as written: not the same vectors
    digest = hashlib.sha256(f"{model}\n{recipe}".encode()).hexdigest()[:12]
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", model).strip("-.")[:40] or "model"
    return config.state_dir / STORE_DIR / f"{slug}-{digest}.sqlite"


def key_of(entry_id: str) -> str:
    """The content-hash key of an entry id (``path#hash``); empty for an id without one."""
    _path, _sep, digest = str(entry_id).rpartition("#")
    return digest if len(digest) == KEY_LENGTH else ""


def key_code(key: str) -> int:
    """``key`` as a number (:data:`KEY_FLAG`), 0 for an empty or malformed one."""
    if len(key) != KEY_LENGTH:
        return 0
    try:
        return KEY_FLAG | int(key, 16)
    except ValueError:
        return 0


def key_text(code: int) -> str:
    return format(code & (KEY_FLAG - 1), f"0{KEY_LENGTH}x") if code else ""


def _hash64(text: str) -> int:
    return int.from_bytes(
        hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little", signed=True
    )


class MatrixRow(NamedTuple):
    """The SQLite file's record of its matrix file (see :mod:`vault_tools.vectors.matrix`)."""

    token: str
    rows: int
    dim: int
    last_rowid: int
    keys: bytes
    fingerprint: str


def checked(db: sqlite3.Connection, check: Callable[[sqlite3.Connection], object]) -> sqlite3.Connection:
    """``db`` once ``check`` ran on it; closed before the error when it did not (an unreadable file
    is reported or started again, and no connection to it may linger)."""
    try:
        check(db)
    except sqlite3.Error:
        db.close()
        raise
    return db


class VectorStore:
    """The vectors of one model, keyed by content hash, in one SQLite file (see the module doc).

    One connection per store; give each thread its own store. A file SQLite cannot read is
    deleted and started again (it is a cache). ``read_only`` (status, doctor): the file as it is,
    changed in nothing (``sqlite3.DatabaseError`` when it is unreadable, missing included).
    """

    def __init__(self, config: Config, *, read_only: bool = False) -> None:
        self.path = store_path(config)
        self.read_only = read_only
        self.previous_turn = config.embeddings.previous_turn
        self.warnings: list[str] = []
        self._db = self._open_read_only() if read_only else self._open(config)

    def _open_read_only(self) -> sqlite3.Connection:
        if not self.path.is_file():
            raise sqlite3.DatabaseError(f"{self.path} does not exist")
        db = sqlite3.connect(f"{self.path.as_uri()}?mode=ro", uri=True, check_same_thread=False)
        return checked(db, lambda db: db.execute("SELECT count(*) FROM vectors").fetchone())

    def _open(self, config: Config) -> sqlite3.Connection:
        config.make_state_dir(STORE_DIR)
        for other in self.path.parent.iterdir():
            # another model or recipe: those vectors are of no use now
            if not other.name.startswith((f"{self.path.name}", f"{self.path.stem}-")):
                with contextlib.suppress(OSError):
                    other.unlink()
        try:
            return self._connect()
        except sqlite3.DatabaseError as exc:
            self.warnings.append(f"{self.path}: unreadable vector cache ({exc}); starting it again")
            for leftover in (self.path, Path(f"{self.path}-wal"), Path(f"{self.path}-shm")):
                leftover.unlink(missing_ok=True)
            return self._connect()

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=10.0, check_same_thread=False, isolation_level=None)
        return checked(db, self._create_tables)

    @staticmethod
    def _create_tables(db: sqlite3.Connection) -> None:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vector BLOB NOT NULL)")
        for earlier in ("segments", "segment_docs"):  # earlier layouts: keys only, then JSON
            db.execute(f"DROP TABLE IF EXISTS {earlier}")
        db.execute(
            "CREATE TABLE IF NOT EXISTS segment_columns (segment TEXT PRIMARY KEY, "
            "keys BLOB, paths BLOB, sections BLOB, lines BLOB, ranks BLOB, in_sequence BLOB)"
        )
        db.execute(
            "CREATE TABLE IF NOT EXISTS matrix (id INTEGER PRIMARY KEY CHECK (id = 1), token TEXT, "
            "rows INTEGER, dim INTEGER, last_rowid INTEGER, keys BLOB, fingerprint TEXT)"
        )
        db.execute(
            "CREATE TABLE IF NOT EXISTS last_fill (id INTEGER PRIMARY KEY CHECK (id = 1), at REAL, "
            "by TEXT, embedded INTEGER, kept_local INTEGER, pending INTEGER, error TEXT)"
        )
        db.execute("SELECT count(*) FROM vectors").fetchone()

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> VectorStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def keys(self) -> set[str]:
        return {key for (key,) in self._db.execute("SELECT key FROM vectors")}

    def count(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM vectors").fetchone()[0])

    def add(self, items: Iterable[tuple[str, Sequence[float]]]) -> None:
        rows = [(key, array.array("f", vector).tobytes()) for key, vector in items]
        with self._db:
            self._db.execute("BEGIN")
            self._db.executemany("INSERT OR IGNORE INTO vectors (key, vector) VALUES (?, ?)", rows)

    def rows_after(self, rowid: int) -> list[tuple[int, str, bytes]]:
        """(rowid, key, float32 bytes) of every vector added after ``rowid``, in order."""
        query = "SELECT rowid, key, vector FROM vectors WHERE rowid > ? ORDER BY rowid"
        return [(int(r), str(k), bytes(v)) for r, k, v in self._db.execute(query, (rowid,))]

    def ends(self, last_rowid: int) -> tuple[str, str]:
        """The key of the first vector, and of the vector at ``last_rowid`` ("" where none)."""
        first = self._db.execute("SELECT key FROM vectors ORDER BY rowid LIMIT 1").fetchone()
        last = self._db.execute("SELECT key FROM vectors WHERE rowid = ?", (last_rowid,)).fetchone()
        return ("" if first is None else str(first[0])), ("" if last is None else str(last[0]))

    def segment_docs(self, segment: str) -> SegmentDocs | None:
        query = f"SELECT {', '.join(SegmentDocs._fields)} FROM segment_columns WHERE segment = ?"
        try:
            row = self._db.execute(query, (segment,)).fetchone()
        except sqlite3.OperationalError:  # a read-only look at a file of an earlier layout
            return None
        if row is None:
            return None
        docs = SegmentDocs(*(bytes(value or b"") for value in row))
        return docs if docs.consistent() else None

    def save_segment_docs(self, segment: str, docs: SegmentDocs, live: Iterable[str]) -> None:
        """Keep ``docs`` for ``segment`` and forget segments that are not ``live`` any more."""
        if self.read_only:
            return
        keep = set(live) | {segment}
        with self._db:
            self._db.execute("BEGIN")
            self._db.execute(
                "INSERT OR REPLACE INTO segment_columns VALUES (?, ?, ?, ?, ?, ?, ?)", (segment, *docs)
            )
            known = [s for (s,) in self._db.execute("SELECT segment FROM segment_columns")]
            gone = [(s,) for s in known if s not in keep]
            self._db.executemany("DELETE FROM segment_columns WHERE segment = ?", gone)

    def matrix_row(self) -> MatrixRow | None:
        query = f"SELECT {', '.join(MatrixRow._fields)} FROM matrix WHERE id = 1"
        try:
            row = self._db.execute(query).fetchone()
        except sqlite3.OperationalError:  # a read-only look at a file of an earlier layout
            return None
        if row is None:
            return None
        try:
            return MatrixRow(str(row[0]), int(row[1]), int(row[2]), int(row[3]), bytes(row[4]), str(row[5]))
        except (TypeError, ValueError):
            return None

    def record_fill(self, report: FillReport, by: str) -> None:
        """Remember the last fill (``status`` shows it, the watcher's error included)."""
        with self._db:
            self._db.execute("BEGIN")
            self._db.execute(
                "INSERT OR REPLACE INTO last_fill VALUES (1, ?, ?, ?, ?, ?, ?)",
                (time.time(), by, report.embedded, report.kept_local, report.pending, report.error),
            )

    def last_fill(self) -> dict[str, Any] | None:
        """The last fill recorded: ``at`` (epoch seconds), ``by``, ``embedded``, ``kept_local``,
        ``pending`` and ``error``."""
        names = ("at", "by", "embedded", "kept_local", "pending", "error")
        try:
            row = self._db.execute(f"SELECT {', '.join(names)} FROM last_fill WHERE id = 1").fetchone()
        except sqlite3.OperationalError:  # a read-only look at a file of an earlier layout
            return None
        return None if row is None else dict(zip(names, row, strict=True))

    def record_matrix(
        self,
        token: str,
        rows: int,
        dim: int,
        last_rowid: int,
        keys: bytes,
        fingerprint: str,
        publish: Callable[[], object],
    ) -> None:
        """Name a new matrix file: ``publish`` (rename it into place, remove the others) runs
        inside the write transaction that records it, so two writers never remove each other's."""
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            publish()
            self._db.execute(
                "INSERT OR REPLACE INTO matrix VALUES (1, ?, ?, ?, ?, ?, ?)",
                (token, rows, dim, last_rowid, keys, fingerprint),
            )


def segment_leaves(searcher: Any) -> list[tuple[Any, int]]:
    return [(reader, int(offset)) for reader, offset in searcher.reader().leaf_readers()]


def segment_name(reader: Any) -> str:
    return f"{reader.segment().segment_id()}:{reader.doc_count_all()}"


class Doc(NamedTuple):
    """What the vector side needs of an indexed entry: its key, and where it sits (neighbours)."""

    key: str
    path: str
    line: int
    section: str
    kind: str
    visibility: str


class SegmentDocs(NamedTuple):
    """Documents as fixed-width columns (native byte order), read without parsing: the key code
    (:func:`key_code`, uint64), hashes of path and section (int64), start line (int64), the
    visibility's rank and whether the entry takes part in neighbours (int8 each)."""

    keys: bytes
    paths: bytes
    sections: bytes
    lines: bytes
    ranks: bytes
    in_sequence: bytes

    @classmethod
    def of(cls, docs: Sequence[Doc]) -> SegmentDocs:
        return cls(
            array.array("Q", (key_code(d.key) for d in docs)).tobytes(),
            array.array("q", (_hash64(d.path) for d in docs)).tobytes(),
            array.array("q", (_hash64(d.section) for d in docs)).tobytes(),
            array.array("q", (d.line for d in docs)).tobytes(),
            array.array("b", (_VISIBILITY_RANK.get(d.visibility, 2) for d in docs)).tobytes(),
            array.array("b", (d.kind != "memory" for d in docs)).tobytes(),
        )

    def __len__(self) -> int:  # type: ignore[override]
        return len(self.ranks)

    def consistent(self) -> bool:
        count = len(self.ranks)
        return len(self.in_sequence) == count and all(
            len(column) == 8 * count for column in (self.keys, self.paths, self.sections, self.lines)
        )

    def key_texts(self) -> list[str]:
        return [key_text(code) for code in array.array("Q", self.keys)]


def doc_keys(searcher: Any, store: VectorStore) -> list[str]:
    """The content-hash key of every document of ``searcher``, by global document number."""
    return [key for docs in searcher_docs(searcher, store) for key in docs.key_texts()]


def searcher_docs(searcher: Any, store: VectorStore | None) -> list[SegmentDocs]:
    """:func:`segment_docs` of each segment of ``searcher``, in document order."""
    leaves = segment_leaves(searcher)
    live = [segment_name(reader) for reader, _offset in leaves]
    return [
        segment_docs(reader, name, live, store) for (reader, _offset), name in zip(leaves, live, strict=True)
    ]


def segment_docs(reader: Any, name: str, live: Sequence[str], store: VectorStore | None) -> SegmentDocs:
    """One segment's documents: kept in ``store``, read from the stored fields once."""
    found = store.segment_docs(name) if store is not None else None
    if found is None or len(found) != reader.doc_count_all():
        found = SegmentDocs.of([_doc(reader.stored_fields(d)) for d in range(reader.doc_count_all())])
        if store is not None:
            store.save_segment_docs(name, found, live)
    return found


def _doc(stored: dict[str, Any]) -> Doc:
    return Doc(
        key_of(stored.get("id", "")),
        str(stored.get("path", "")),
        int(stored.get("start_line", 0)),
        str(stored.get("section", "")),
        str(stored.get("kind", "")),
        str(stored.get("visibility", "")),
    )


#: A neighbour lends its similarity only to an entry that every chat seeing it may see it in too,
#: as the keyword index's neighbours do (vault_tools.index.documents.neighbours).
_VISIBILITY_RANK = {"shared": 0, "personal": 1, "private": 2}


def neighbour_table(
    docs: Sequence[Doc],
    deleted: Iterable[int],
    before: int = 2,
    after: int = 2,
    moved: Mapping[str, Mapping[str, list[int]]] | None = None,
) -> Any:
    """For each neighbour slot (``before`` entries before, nearest first, then ``after`` after), the
    docnum of that neighbour of every document in its file and section, -1 where there is none
    (a numpy array, one row per slot). ``moved``: the index's line table (index_lines), which
    says where an entry whose document kept older lines is now."""
    return neighbour_table_of(Columns.of([SegmentDocs.of(docs)]), deleted, before, after, moved)


class Columns(NamedTuple):
    """:class:`SegmentDocs` of every segment of a searcher, as numpy arrays by global docnum."""

    keys: Any
    paths: Any
    sections: Any
    lines: Any
    ranks: Any
    in_sequence: Any

    @classmethod
    def of(cls, segments: Sequence[SegmentDocs]) -> Columns:
        import numpy as np

        types = (np.uint64, np.int64, np.int64, np.int64, np.int8, np.int8)
        return cls(
            *(
                np.concatenate([np.frombuffer(column, dtype=kind) for column in columns])
                if columns
                else np.zeros(0, dtype=kind)
                for kind, columns in zip(
                    types, zip(*segments, strict=True) if segments else [()] * 6, strict=True
                )
            )
        )

    def lines_now(self, moved: Mapping[str, Mapping[str, list[int]]]) -> Any:
        """The start lines, with the line table's rows applied (see index_lines)."""
        lines = self.lines.copy()
        for path, rows in moved.items():
            if not rows:
                continue
            for docnum in (self.paths == _hash64(path)).nonzero()[0]:
                row = rows.get(f"{path}#{key_text(int(self.keys[docnum]))}") if self.keys[docnum] else None
                if row is not None and row[0] == lines[docnum]:
                    lines[docnum] = row[1]
        return lines


def neighbour_table_of(
    docs: Columns,
    deleted: Iterable[int],
    before: int = 2,
    after: int = 2,
    moved: Mapping[str, Mapping[str, list[int]]] | None = None,
) -> Any:
    """:func:`neighbour_table` of documents given as :class:`Columns`."""
    import numpy as np

    count = docs.keys.shape[0]
    path, section, rank = docs.paths, docs.sections, docs.ranks
    line = docs.lines_now(moved) if moved else docs.lines
    alive = docs.in_sequence.astype(bool)
    gone = np.fromiter(deleted, np.int64)
    alive[gone[gone < count]] = False
    kept = np.flatnonzero(alive)
    order = kept[np.lexsort((line[kept], path[kept]))]
    table = np.full((before + after, count), -1, dtype=np.int64)
    for slot, step in [*((k, -(k + 1)) for k in range(before)), *((before + k, k + 1) for k in range(after))]:
        distance = abs(step)
        if distance >= order.shape[0]:
            continue
        here, there = (
            (order[distance:], order[:-distance]) if step < 0 else (order[:-distance], order[distance:])
        )
        ok = (path[here] == path[there]) & (section[here] == section[there]) & (rank[there] <= rank[here])
        table[slot, here[ok]] = there[ok]
    return table


def paired_codes(codes: Any, previous: Any) -> Any:
    """Each document's vector key with ``[embeddings] previous_turn``: its own key code, or, when
    it has a previous turn (``previous``: its docnum, -1 for none), a 48-bit mix of both codes."""
    import numpy as np

    out = codes.copy()
    here = np.flatnonzero((previous >= 0) & (codes != 0))
    before = codes[previous[here]]
    here, before = here[before != 0], before[before != 0]
    with np.errstate(over="ignore"):
        mixed = (before * np.uint64(0x9E3779B97F4A7C15)) ^ codes[here]
        mixed = (mixed ^ (mixed >> np.uint64(31))) * np.uint64(0xBF58476D1CE4E5B9)
        mixed ^= mixed >> np.uint64(29)
    out[here] = (mixed & np.uint64(KEY_FLAG - 1)) | np.uint64(KEY_FLAG)
    return out


def vector_codes(
    searcher: Any, store: VectorStore, moved: Mapping[str, Mapping[str, list[int]]] | None = None
) -> Any:
    """The key code of each document's vector (by global docnum; see :func:`paired_codes`)."""
    if not store.previous_turn:
        return Columns.of(searcher_docs(searcher, store)).keys
    return turns_before(searcher, store, moved)[0]


def turns_before(
    searcher: Any, store: VectorStore, moved: Mapping[str, Mapping[str, list[int]]] | None
) -> tuple[Any, Any]:
    """With ``previous_turn``: (the key code of each document's vector, the docnum of the turn
    embedded before it, -1 for none), by global docnum."""
    columns = Columns.of(searcher_docs(searcher, store))
    before = neighbour_table_of(columns, deleted_docs(searcher), moved=moved)[0]
    return paired_codes(columns.keys, before), before


def deleted_docs(searcher: Any) -> list[int]:
    from vault_tools.index import whoosh_private

    return [
        offset + d
        for reader, offset in segment_leaves(searcher)
        if reader.has_deletions()
        for d in whoosh_private.deleted_docs(reader)
    ]


@dataclass
class FillReport:
    embedded: int = 0  # entries embedded now
    kept_local: int = 0  # entries that may not be sent (private): keyword-only
    pending: int = 0  # entries still without a vector (the endpoint failed)
    error: str | None = None

    def summary(self) -> str:
        text = f"{self.embedded} embedded"
        if self.kept_local:
            text += f", {self.kept_local} kept keyword-only (#private)"
        if self.pending:
            text += f", {self.pending} pending ({self.error}); they are embedded on the next index or watch"
        return text
