"""The index folder as Whoosh storages: one that can close every file it opened, one per build worker.

Both are ``FileStorage`` subclasses that override only public methods (``open_file``,
``temp_storage``); the changes to Whoosh's file layer itself are in
:mod:`vault_tools.index.whoosh_private`.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any


def worker_storage(folder: Path, n: int) -> Any:
    """The index folder as one build worker sees it: with a temp folder of its own.

    Whoosh names a writer's temp folder after the index (``MAIN.tmp``) and deletes it whole when
    the writer finishes, so workers sharing it deleted each other's sort runs mid-merge.
    """
    from whoosh.filedb.filestore import FileStorage

    class WorkerStorage(FileStorage):  # type: ignore[misc]
        def temp_storage(self, name: str | None = None) -> Any:
            return super().temp_storage(f"{name or 'build'}-worker{n}")

    return WorkerStorage(str(folder))


def tracking_storage(folder: Path) -> Any:
    """A Whoosh FileStorage that can close every file it opened (see ``Index.problem``)."""
    from whoosh.filedb.filestore import FileStorage

    class TrackingStorage(FileStorage):  # type: ignore[misc]
        def __init__(self, path: str) -> None:
            super().__init__(path)
            self.opened: list[Any] | None = []

        def open_file(self, name: str, **kwargs: Any) -> Any:
            handle = super().open_file(name, **kwargs)
            if self.opened is not None:
                self.opened.append(handle)
            return handle

        def close_all(self) -> None:
            for handle in self.opened or ():
                with contextlib.suppress(Exception):
                    handle.close()
            self.opened = []

        def stop_tracking(self) -> None:
            """What was opened is in use now: forget it, and track nothing more."""
            self.opened = None

    return TrackingStorage(str(folder))
