"""Full builds: every note indexed from nothing into a new folder, swapped in when complete.

Readers keep working on the old index during a build. Large vaults are built in parallel
worker processes (see below).

:class:`IndexBuilder` is the part of :class:`vault_tools.index.index.Index` that does this, on the
index's shared :class:`~vault_tools.index.state.IndexState`.
"""

from __future__ import annotations

import datetime as dt
import gc
import json
import logging
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vault_tools.index import storage, whoosh_private
from vault_tools.index.analysis import ANALYZER_VERSION
from vault_tools.index.documents import SCHEMA_VERSION, schema
from vault_tools.index.manifest import (
    INDEX_DIR,
    META_FILE,
    FileRecord,
    Scan,
    file_record,
    save_manifest,
    scan_note_stats,
    write_json_atomic,
)
from vault_tools.index.state import IndexState
from vault_tools.index.writer import (
    Interrupted,
    NoteProgress,
    UpdateReport,
    add_note,
    progress_bar,
    read_note_file,
)
from vault_tools.notes import model as notes

log = logging.getLogger("vault_tools.index.index")


KEEP_BROKEN = 2
#: Full builds of vaults this big (bytes of notes) run in parallel worker processes.
PARALLEL_BUILD_BYTES = 1_000_000
MAX_BUILD_WORKERS = 4
#: Whoosh's in-memory posting pool per build process before it spills to temporary runs.
BUILD_LIMIT_MB = 128


class IndexBuilder:
    """Full builds (see the module docstring); a part of :class:`vault_tools.index.index.Index`.
    Callers hold the ``index`` lock."""

    def __init__(self, state: IndexState) -> None:
        self.state = state

    def rebuild_locked(
        self,
        report: UpdateReport,
        *,
        progress: bool,
        should_stop: Callable[[], bool] | None,
        quarantine: str | None,
    ) -> None:
        """Index every note into a new folder and swap it in; the old one is deleted, or kept as
        ``index.broken-*`` when ``quarantine`` says why it was unusable."""
        state = self.state.config.make_state_dir()
        self.cleanup_leftovers()
        tmp = state / f"{INDEX_DIR}.tmp-{os.getpid()}"
        file_warnings: list[notes.Warning_] = []
        on_disk = scan_note_stats(self.state.vault, file_warnings)
        report.warnings += [str(w) for w in file_warnings]
        workers = self._workers_for(on_disk)
        try:
            manifest: dict[str, FileRecord] | None = None
            if workers > 1:
                try:
                    manifest = _parallel_build(
                        tmp, self.state.vault, on_disk, workers, report, progress, should_stop
                    )
                except (Interrupted, KeyboardInterrupt):
                    raise
                except Exception as exc:  # e.g. no process could be started: do it here instead
                    log.warning("parallel build failed (%s); building in one process", exc)
            if manifest is None:
                manifest = self._serial_build(tmp, on_disk, report, progress, should_stop)
        except BaseException as exc:
            shutil.rmtree(tmp, ignore_errors=True)
            if isinstance(exc, Interrupted):
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
        if self.state.build_workers is not None:
            return max(1, min(self.state.build_workers, len(on_disk)))
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
        writer = whoosh_private.bulk_segment_writer(wi.create_in(str(tmp), schema()), limitmb=BUILD_LIMIT_MB)
        manifest: dict[str, FileRecord] = {}
        bar = progress_bar(sum(st.st_size for _path, st in on_disk.values()), progress, "indexing", "B")
        try:
            for rel, (path, on_disk_st) in on_disk.items():
                if should_stop is not None and should_stop():
                    raise Interrupted
                note = read_note_file(Path(path), self.state.vault, report)
                moving = NoteProgress(bar.update, on_disk_st.st_size, len(note[1].entries) if note else 0)
                if note is None:
                    moving.finish()
                    continue
                st, parsed = note
                manifest[rel] = file_record(st, parsed, add_note(writer, parsed, moving.document))
                moving.finish()
                report.warnings += [str(w) for w in parsed.warnings]
            if should_stop is not None and should_stop():
                raise Interrupted
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
        state = self.state.config.state_dir
        index_dir = self.state.dir
        self.state.forget_ix()
        old: Path | None = None
        if index_dir.exists() or index_dir.is_symlink():
            if quarantine:
                stamp = dt.datetime.now().strftime("%Y%m%dT%H%M%S")
                old = state / f"{INDEX_DIR}.broken-{stamp}"
                n = 1
                while old.exists():
                    n += 1
                    old = state / f"{INDEX_DIR}.broken-{stamp}-{n}"
            else:
                old = state / f"{INDEX_DIR}.old-{os.getpid()}"
            os.replace(index_dir, old)
        os.replace(fresh, index_dir)
        if old is not None and not quarantine:
            shutil.rmtree(old, ignore_errors=True)
        broken = sorted(state.glob(f"{INDEX_DIR}.broken-*"), key=lambda p: p.stat().st_mtime)
        for extra in broken[:-KEEP_BROKEN]:
            if extra.is_dir():
                shutil.rmtree(extra, ignore_errors=True)
            else:
                extra.unlink(missing_ok=True)

    def cleanup_leftovers(self) -> None:
        """Remove the temporary folders of builds that died (only called under the lock)."""
        for leftover in self.state.config.state_dir.glob(f"{INDEX_DIR}.tmp-*"):
            shutil.rmtree(leftover, ignore_errors=True)
        for leftover in self.state.config.state_dir.glob(f"{INDEX_DIR}.old-*"):
            shutil.rmtree(leftover, ignore_errors=True)


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
    code = "from vault_tools.index.builder import build_worker_main; build_worker_main()"
    procs = []
    for n, files in enumerate(_partition(on_disk, workers)):
        job = tmp / f"job-{n}.json"
        spec = {"index": str(tmp), "vault": str(vault), "files": files, "n": n, "limit_mb": BUILD_LIMIT_MB}
        job.write_text(json.dumps(spec))
        command = [sys.executable, *flags, "-c", code, str(job)]
        procs.append(subprocess.Popen(command, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL))
    bar = progress_bar(sum(st.st_size for _path, st in on_disk.values()), progress, "indexing", "B")
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
    whoosh_private.write_segments(ix, schema(), segments)
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
    """Add up the workers' progress lines (bytes indexed) until they all exit; stop them when asked to."""
    import selectors

    partial: dict[int, bytes] = {}  # a line a read cut in two
    with selectors.DefaultSelector() as selector:
        for proc in procs:
            selector.register(proc.stdout, selectors.EVENT_READ)
        open_pipes = len(procs)
        while open_pipes:
            if should_stop is not None and should_stop():
                raise Interrupted
            done = 0
            for key, _mask in selector.select(timeout=0.2):
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    selector.unregister(key.fileobj)
                    open_pipes -= 1
                *lines, partial[key.fd] = (partial.get(key.fd, b"") + chunk).split(b"\n")
                done += sum(int(line) for line in lines if line.strip().isdigit())
            bar.update(done)  # also with 0: the bar shows (after its delay) while a big note is read
    for proc in procs:
        if proc.wait() != 0:
            raise RuntimeError(f"an index build worker failed (exit {proc.returncode})")


def report_bytes(out: Any, size: int) -> None:
    """A worker's progress line: how many more bytes of notes it has indexed."""
    out.write(b"%d\n" % size)
    out.flush()  # BrokenPipeError here when the parent died: stop too


def build_worker_main() -> None:
    """One worker of a parallel build (see above): ``python -c ... JOB.json``."""
    import pickle

    # A worker keeps its segment's postings in memory until it writes them, then exits: the
    # cyclic garbage collector would only walk them again and again (~8% of a worker's time).
    gc.disable()
    job = json.loads(Path(sys.argv[1]).read_text())
    vault, index_dir = Path(job["vault"]), Path(job["index"])
    ix = storage.worker_storage(index_dir, job["n"]).open_index(schema=schema())
    writer = whoosh_private.bulk_segment_writer(ix, lock=False, limitmb=job["limit_mb"])
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
            moving = NoteProgress(lambda size: report_bytes(out, size), st.st_size, len(note.entries))
            manifest[rel] = file_record(st, note, add_note(writer, note, moving.document)).to_json()
            warnings += [str(w) for w in note.warnings]
            moving.finish()
        segment = whoosh_private.finish_worker_segment(writer)
    except BaseException:
        writer.cancel()
        raise
    whoosh_private.close_worker_writer(writer)
    result = {"segment": segment, "manifest": manifest, "warnings": warnings}
    with (index_dir / f"result-{job['n']}.pickle").open("wb") as handle:
        pickle.dump(result, handle)
