"""The vector cache's fast path: its vectors as one memory-mapped float32 matrix file.

Reading 100k vectors out of SQLite row by row costs a fresh process about half a second (and
three times that on a busy machine) before its first semantic recall. So the rows of the cache
are also kept as one ``.npy`` matrix next to the SQLite file, which a fresh process maps into
memory (numpy ``mmap_mode="r"``: no copy, the pages are shared with every other reader) together
with the 64-bit keys of its rows, read from SQLite as one value.

The SQLite file stays the truth of the cache; the matrix is a copy of its first rows. The file is
named by a random token, and the ``matrix`` row of the SQLite file records that token with how
many rows the file holds, the last rowid they reach, their keys in order, and a fingerprint of a
few of its rows. A file that does not agree with that row (torn, truncated, replaced by another
model's) or a row that does not agree with the SQLite table (its first and last keys are not the
table's: the table was started again; rows are only ever added to it) is not used: the vectors are read from SQLite and the matrix is written again. Writing is crash-safe: a
temp file, fsync, then the rename and the new row in one SQLite write transaction, so a crash
leaves the old matrix or the new one in force; files no row names are removed afterwards.

numpy is imported by the callers (the search path); this module is imported only there.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import secrets
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vault_tools.vectors.cache import VectorStore

__all__ = ["Matrix", "load_matrix", "matrix_files", "save_matrix"]

log = logging.getLogger("vault_tools.vectors.cache")

#: A temp file older than this is the leftover of a writer that died; younger ones may be in use.
STALE_TEMP_SECONDS = 3600.0


@dataclass(frozen=True)
class Matrix:
    """The cache's first ``rows`` vectors (memory-mapped) and the key code of each row."""

    vectors: Any  # numpy float32 (rows, dim), read-only
    keys: Any  # numpy uint64 (rows,)
    last_rowid: int


def matrix_files(store: VectorStore) -> list[Path]:
    """Every matrix file (and temp file) of ``store``'s model in its folder."""
    return sorted(store.path.parent.glob(f"{store.path.stem}-*.npy*"))


def _path(store: VectorStore, token: str) -> Path:
    return store.path.parent / f"{store.path.stem}-{token}.npy"


def fingerprint(vectors: Any) -> str:
    """A digest of the shape and of the first, middle and last rows: a file of another model,
    or one written for other rows, does not match it."""
    rows = vectors.shape[0]
    digest = hashlib.blake2b(f"{vectors.shape}".encode(), digest_size=12)
    for row in sorted({0, rows // 2, rows - 1}) if rows else []:
        digest.update(vectors[row].tobytes())
    return digest.hexdigest()


def load_matrix(store: VectorStore) -> Matrix | None:
    """The matrix the store's ``matrix`` row names, or None when there is none or it does not
    agree with that row or with the SQLite table (see the module doc)."""
    import numpy as np

    from vault_tools.vectors.cache import key_text

    row = store.matrix_row()
    if row is None or not row.rows:
        return None
    path = _path(store, row.token)
    try:
        vectors = np.load(path, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError) as exc:
        log.info("%s: unusable vector matrix (%s); reading the vectors from SQLite", path, exc)
        return None
    keys = np.frombuffer(row.keys, dtype=np.uint64)
    agrees = (
        vectors.dtype == np.float32
        and vectors.ndim == 2
        and vectors.shape == (row.rows, row.dim)
        and keys.shape[0] == row.rows
        and fingerprint(vectors) == row.fingerprint
        and store.ends(row.last_rowid) == (key_text(int(keys[0])), key_text(int(keys[-1])))
    )
    if not agrees:
        log.info("%s: the vector matrix does not match its cache; reading the vectors from SQLite", path)
        return None
    return Matrix(vectors, keys, row.last_rowid)


def save_matrix(store: VectorStore, blocks: list[Any], keys: Any, last_rowid: int) -> Matrix | None:
    """Write ``blocks`` (float32 matrices of one width, in row order) as the store's matrix; the
    new :class:`Matrix` (memory-mapped), or None when it could not be written (the cache still
    works from SQLite)."""
    import numpy as np

    rows = sum(block.shape[0] for block in blocks)
    dim = blocks[0].shape[1]
    token = secrets.token_hex(6)
    final = _path(store, token)
    temp = final.with_name(final.name + ".tmp")
    try:
        out = np.lib.format.open_memmap(temp, mode="w+", dtype=np.float32, shape=(rows, dim))
        start = 0
        for block in blocks:
            out[start : start + block.shape[0]] = block
            start += block.shape[0]
        out.flush()
        del out
        with open(temp, "rb+") as handle:
            os.fsync(handle.fileno())
        vectors = np.load(temp, mmap_mode="r", allow_pickle=False)
        codes = np.ascontiguousarray(keys, dtype=np.uint64)

        def publish() -> None:  # inside the SQLite write transaction that records the new row
            temp.replace(final)
            remove_unused(store, keep=final)

        store.record_matrix(token, rows, dim, last_rowid, codes.tobytes(), fingerprint(vectors), publish)
    except (OSError, ValueError, sqlite3.Error) as exc:
        log.info("%s: could not write the vector matrix (%s); reading vectors from SQLite", final, exc)
        temp.unlink(missing_ok=True)
        return None
    return Matrix(vectors, codes, last_rowid)


def remove_unused(store: VectorStore, keep: Path | None) -> None:
    """Delete the store's matrix files but ``keep`` (a temp file only when it is old: another
    writer may be filling it)."""
    for path in matrix_files(store):
        if path == keep:
            continue
        if path.suffix == ".tmp":
            with contextlib.suppress(OSError):
                if time.time() - path.stat().st_mtime < STALE_TEMP_SECONDS:
                    continue
        with contextlib.suppress(OSError):
            path.unlink()
