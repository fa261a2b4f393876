"""What the parts of one :class:`vault_tools.index.index.Index` share: where the index is, its lock,
the open Whoosh index, and what this process last wrote.

The parts (:class:`~vault_tools.index.writer.IndexWriter`,
:class:`~vault_tools.index.builder.IndexBuilder`, :class:`~vault_tools.index.healing.IndexHealer`,
:class:`~vault_tools.index.doctor.IndexDoctor`) each hold the same :class:`IndexState`, so that
one of them opening, swapping or forgetting the Whoosh index is seen by the others.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vault_tools import locks
from vault_tools.config import Config
from vault_tools.index import storage
from vault_tools.index.documents import schema
from vault_tools.index.manifest import INDEX_DIR, LOCK_NAME, FileRecord, load_manifest
from vault_tools.index.tail import Rows
from vault_tools.notes import tail as note_tail


@dataclass
class KnownFile:
    """What this process last wrote (or compared) for a file: the hash of the content, and per
    entry id the entry's fingerprint (index_documents.entry_fingerprints) and the lines its live
    document holds. Valid while nobody else has committed to the index since (its generation).

    And, to read only what is appended next (:mod:`vault_tools.notes.tail`): how the file ends,
    where the id of each entry of that end is first seen (:mod:`vault_tools.index.tail`), and
    its line-table rows."""

    digest: str
    rows: Rows
    end: note_tail.NoteEnd | None = None
    end_firsts: tuple[int, ...] = ()
    moved: dict[str, list[int]] = field(default_factory=dict)


@dataclass
class IndexState:
    """The index of one vault as its parts see it. ``lock_timeout`` is how long writing waits for
    another writer; ``read_lock_timeout`` how long a reading command waits before it reports stale."""

    config: Config
    lock_timeout: float = 30.0
    read_lock_timeout: float = 2.0
    #: Processes for a full build; None: decided by the vault's size (see builder.PARALLEL_BUILD_BYTES).
    build_workers: int | None = None
    #: The open Whoosh index (None: opened on next need; set to None after a swap or a merge).
    ix: Any = None
    #: The files this process wrote, for the next update of each (see KnownFile), and the index
    #: they describe (its folder and generation): another writer's commit, a merge or a rebuild
    #: makes them unknown again.
    known: dict[str, KnownFile] = field(default_factory=dict)
    known_stamp: tuple[int, int] | None = None

    vault: Path = field(init=False)
    #: ``<state>/index/``: the Whoosh index, meta.json, manifest.json and the line table.
    dir: Path = field(init=False)

    def __post_init__(self) -> None:
        self.vault = self.config.vault
        self.dir = self.config.state_dir / INDEX_DIR

    def open_ix(self) -> Any:
        """The Whoosh index, opened once until :meth:`forget_ix`."""
        from whoosh.filedb.filestore import FileStorage

        if self.ix is None:
            self.ix = FileStorage(str(self.dir)).open_index(schema=schema())
        return self.ix

    def try_searcher(self) -> Any:
        """A new searcher on the index as it is on disk, or None when it cannot be opened (every
        file the attempt opened is closed again). Forgets the open index."""
        self.forget_ix()
        files = storage.tracking_storage(self.dir)
        try:
            searcher = files.open_index(schema=schema()).searcher()
        except Exception:
            files.close_all()
            return None
        files.stop_tracking()  # the searcher owns its files now (and refresh() opens more)
        return searcher

    def forget_ix(self) -> None:
        """Open the index afresh next time (it was swapped, merged or found broken)."""
        self.ix = None

    def stamp(self, ix: Any) -> tuple[int, int]:
        """Which index ``ix`` is: its folder (a rebuild swaps in a new one) and generation."""
        return os.stat(self.dir).st_ino, ix.latest_generation()

    def manifest(self) -> dict[str, FileRecord]:
        """The manifest as saved (empty when there is none)."""
        return load_manifest(self.dir) or {}

    @contextmanager
    def lock(self, what: str, timeout: float | None = None) -> Iterator[None]:
        """Hold the ``index`` lock (``timeout``: ``lock_timeout``); raises LockedError."""
        wait = self.lock_timeout if timeout is None else timeout
        with locks.hold(self.config, LOCK_NAME, timeout=wait, what=what):
            yield

    def lock_owner(self) -> str:
        """Who holds the ``index`` lock, for a message."""
        return locks.describe_owner(self.config, LOCK_NAME)
