"""Writing changes into the index: the incremental update of changed files, and segment merges.

An update hashes each file it is given and re-indexes only a changed one; :class:`_Batch` writes
only the entries that differ from the live documents, all the changes of one update in one
commit, then saves the manifest that describes it. Segments merge by size class
(:func:`tiered_merge`): a commit merges the small classes in line (a few milliseconds), and
:meth:`Index.maintain` the bigger ones when nobody waits.

:class:`IndexWriter` is the part of :class:`vault_tools.index.index.Index` that does this, on the
index's shared :class:`~vault_tools.index.state.IndexState`.
"""

from __future__ import annotations

import hashlib
import math
import os
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from vault_tools.index import whoosh_private
from vault_tools.index.documents import (
    F_END,
    F_ID,
    F_PATH,
    F_START,
    Firsts,
    entry_documents,
    entry_fingerprints,
    first_entries,
    note_documents,
    same_document,
)
from vault_tools.index.lines import Table, load_lines, moved_entries, save_lines
from vault_tools.index.manifest import (
    UNREADABLE,
    FileRecord,
    Scan,
    file_record,
    file_sha256,
    is_note_dir_rel,
    is_note_rel,
    new_record,
    save_manifest,
    scan_note_stats,
    scan_notes,
    unchanged,
)
from vault_tools.index.state import IndexState, KnownFile
from vault_tools.index.tail import TAIL_ENTRIES, Rows, plan_append
from vault_tools.notes import model as notes
from vault_tools.notes import tail as note_tail

#: Segments merge by size class, this many of a class at a time (see tiered_merge).
MERGE_FACTOR = 4
#: A commit merges a full size class of at most this many documents in line: each save leaves a
#: small segment, and these must not pile up when the watcher is never idle long enough to merge.
COMMIT_MERGE_DOCS = 256
#: Past this many segments a commit also merges bigger segments (see _Batch.commit) ...
MAX_SEGMENTS = 24
#: ... two to MERGE_FACTOR of the smallest size class that has two, up to this many documents.
FORCED_MERGE_DOCS = 8192
#: An update that remembers a file (KnownFile) deletes its changed entries' documents by id, one
#: lookup per segment each; past this many it reads the file's documents instead.
KNOWN_DELETES_MAX = 64
#: Files with fewer entries are not remembered: their documents are cheap to read.
KNOWN_MIN_ENTRIES = 64
#: ``maintain(optimize=True)`` rewrites the index when this share of its documents is deleted.
MAINTAIN_DELETED_SHARE = 0.3


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


class Interrupted(Exception):
    pass


class IndexWriter:
    """Incremental updates of one index (see the module docstring): which notes changed, and
    writing them in one commit. A part of :class:`vault_tools.index.index.Index`; callers hold
    the ``index`` lock."""

    def __init__(self, state: IndexState) -> None:
        self.state = state

    def diff(
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
            if hash_check and file_sha256(Path(path)) == rec.sha256:
                continue
            changed.append(rel)
        deleted = [rel for rel in manifest if rel not in on_disk]
        return changed, deleted

    def expand(self, paths: Iterable[Path], manifest: Mapping[str, FileRecord]) -> dict[str, Path | None]:
        """The notes ``paths`` stand for (None: gone). Named files are always re-read; a folder
        stands for the notes in it now and those indexed under it, stat-filtered."""
        vault = self.state.vault
        files: dict[str, Path | None] = {}
        folders: list[tuple[str, Path]] = []
        root = vault.resolve()
        for given in paths:
            path = given if given.is_absolute() else vault / given
            try:
                rel = path.relative_to(vault).as_posix()
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
            on_disk = scan_notes(vault)
            for prefix, _path in folders:
                for known in manifest:
                    if known.startswith(prefix) and known not in on_disk:
                        work[known] = None
                for rel, path in on_disk.items():
                    if rel.startswith(prefix) and not unchanged(manifest.get(rel), path):
                        work[rel] = path
        work.update(files)
        return work

    def reconcile_locked(
        self, report: UpdateReport, progress: bool, should_stop: Callable[[], bool] | None
    ) -> None:
        """Index every note whose stat changed, and remove gone ones and orphaned documents."""
        manifest = self.state.manifest()
        on_disk = self.scan(report)
        report.files_on_disk = len(on_disk)
        changed, deleted = self.diff(manifest, on_disk, hash_check=False)
        work: dict[str, Path | None] = {rel: Path(on_disk[rel][0]) for rel in changed}
        work.update({rel: None for rel in deleted})
        orphans = frozenset(self._orphan_paths(set(on_disk) | set(manifest)))
        work.update({rel: None for rel in orphans})
        self.apply(report, manifest, work, should_stop=should_stop, progress=progress, purge=orphans)

    def scan(self, report: UpdateReport) -> Scan:
        """:func:`scan_note_stats`, with a warning in ``report`` for each note or folder it could not read."""
        file_warnings: list[notes.Warning_] = []
        on_disk = scan_note_stats(self.state.vault, file_warnings)
        report.warnings += [str(w) for w in file_warnings if w.message.startswith(UNREADABLE)]
        return on_disk

    def _orphan_paths(self, known: set[str]) -> list[str]:
        """Paths with live documents that neither the disk nor the manifest knows (after a crash)."""
        orphans = []
        ix = self.state.open_ix()
        with ix.reader() as r:
            for rel in r.field_terms(F_PATH):
                if rel not in known and r.postings(F_PATH, rel).is_active():
                    orphans.append(rel)
        return orphans

    def apply(
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
        state = self.state
        ix = state.open_ix()
        stamp = state.stamp(ix)
        if stamp != state.known_stamp:
            state.known.clear()
        batch = _Batch(ix, manifest, report, state.dir, state.known)
        bar = progress_bar(len(work), progress, "indexing")
        try:
            for rel in sorted(work):
                if should_stop is not None and should_stop():
                    raise Interrupted
                bar.update(1)
                self.apply_one(batch, rel, work[rel], force=rel in force_reindex, purge=rel in purge)
            if should_stop is not None and should_stop():
                raise Interrupted
            if batch.commit(state.dir):
                stamp = state.stamp(ix)
            state.known.update(batch.known)
            state.known_stamp = stamp
        except Interrupted:
            report.interrupted = True
        finally:
            bar.close()
            batch.cancel()
        state.ix = ix
        report.entries = sum(r.entries for r in manifest.values())
        if not report.files_on_disk:
            report.files_on_disk = len(manifest)

    def apply_one(self, batch: _Batch, rel: str, path: Path | None, *, force: bool, purge: bool) -> None:
        """Hash first; parse only when the content is not what the manifest already holds, and
        only what was appended when that is all that changed."""
        read = None if path is None else _read_bytes(path, batch.report)
        if path is None or read is None:
            batch.remove(rel, purge=purge)
            return
        st, data = read
        old = batch.manifest.get(rel)
        if old is not None and not force:
            if batch.put_appended(rel, st, data, old):
                return
            if hashlib.sha256(data).hexdigest() == old.sha256:
                batch.refresh(rel, st, old)
                return
        batch.put(rel, st, notes.parse_note(path, self.state.vault, data), len(data), force=force)

    def maintain_locked(self, *, max_docs: int, optimize: bool) -> bool:
        """Merge one size class of small segments, or with ``optimize`` rewrite an index with many
        deleted documents (see ``Index.maintain``); True when it did."""
        state = self.state
        state.forget_ix()
        ix = state.open_ix()
        remembered = state.known_stamp == state.stamp(ix)
        segments = whoosh_private.toc_segments(ix)  # what a writer would start from
        total = sum(seg.doc_count_all() for seg in segments)
        deleted = total - sum(seg.doc_count() for seg in segments)
        rewrite = bool(optimize and total and deleted > MAINTAIN_DELETED_SHARE * total)
        if not rewrite and merge_group(segments, max_docs) is None:
            # No writer: a cancelled one leaves its new segment's files in the folder until the
            # next commit, and an idle watcher asks every heartbeat.
            return False
        writer = ix.writer(timeout=5.0)
        if rewrite:
            writer.commit(optimize=True)
        else:
            writer.commit(mergetype=tiered_merge(max_docs))
        state.forget_ix()
        if remembered:  # a merge moves documents and changes none: what this process wrote still holds
            state.known_stamp = state.stamp(state.open_ix())
        return True


def read_note_file(path: Path, vault: Path, report: UpdateReport) -> tuple[os.stat_result, notes.Note] | None:
    """Stat (first) and read one note; None when it is gone or cannot be read (a warning in ``report``)."""
    try:
        st = path.stat()
        return st, notes.read_note(path, vault)
    except FileNotFoundError:
        return None
    except OSError as exc:
        report.warnings.append(f"{path}: could not be read ({exc.strerror}); not indexed")
        return None


def _read_bytes(path: Path, report: UpdateReport) -> tuple[os.stat_result, bytes] | None:
    """Stat (first) and read one note's bytes; None when it is gone or cannot be read."""
    try:
        return path.stat(), path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        report.warnings.append(f"{path}: could not be read ({exc.strerror}); not indexed")
        return None


def _tier(docs: int) -> int:
    """Size class of a segment: 0 for 1-3 documents, 1 for 4-15, 2 for 16-63, …"""
    return int(math.log(max(docs, 1), MERGE_FACTOR))


def tiered_merge(max_docs: int) -> Callable[[Any, list[Any]], list[Any]]:
    """A Whoosh merge policy: merge the smallest size class that has MERGE_FACTOR segments.

    Updates add one small segment per commit. Merging segments of about the same size, a
    class at a time, re-copies each document a few times over its life instead of at every
    merge (Whoosh's MERGE_SMALL re-merges the growing medium segment again and again: 6 s
    at 100k entries). Classes totalling more than ``max_docs`` documents are left alone.
    """
    return merge_policy(lambda segments: merge_group(segments, max_docs))


def commit_merge_group(segments: list[Any]) -> list[Any] | None:
    """What a commit merges in line: a full class of small segments, and past
    :data:`MAX_SEGMENTS` the smallest class that has two (:func:`forced_group`)."""
    group = merge_group(segments, COMMIT_MERGE_DOCS)
    if group is None and len(segments) >= MAX_SEGMENTS:
        group = forced_group(segments, FORCED_MERGE_DOCS)
    return group


def merge_policy(choose: Callable[[list[Any]], list[Any] | None]) -> Callable[[Any, list[Any]], list[Any]]:
    """A Whoosh merge policy that drops dead segments and merges the group ``choose`` picks."""

    def policy(writer: Any, segments: list[Any]) -> list[Any]:
        from whoosh.reading import SegmentReader

        segments = _live_segments(segments)
        group = choose(segments)
        if group is None:
            return segments
        for seg in group:
            reader = SegmentReader(writer.storage, writer.schema, seg)
            writer.add_reader(reader)
            reader.close()
        return [seg for seg in segments if seg not in group]

    return policy


def _live_segments(segments: list[Any]) -> list[Any]:
    """``segments`` without those whose every document is deleted (an edited entry deletes its
    old document; Whoosh itself drops a segment only when it is merged)."""
    return [seg for seg in segments if seg.doc_count() > 0]


def _size_classes(segments: list[Any]) -> dict[int, list[Any]]:
    classes: dict[int, list[Any]] = {}
    for seg in sorted(segments, key=lambda seg: seg.doc_count_all()):
        classes.setdefault(_tier(seg.doc_count_all()), []).append(seg)
    return classes


def merge_group(segments: list[Any], max_docs: int) -> list[Any] | None:
    """The segments :func:`tiered_merge` would merge now, or None."""
    classes = _size_classes(segments)
    for tier in sorted(classes):
        group = classes[tier]
        if len(group) >= MERGE_FACTOR and sum(seg.doc_count_all() for seg in group) <= max_docs:
            return group
    return None


def forced_group(segments: list[Any], max_docs: int) -> list[Any] | None:
    """Two to MERGE_FACTOR of the smallest segments of the smallest class that has two, or None.

    Never the smallest segments whatever their class: once the small classes are merged, those
    are the same few medium segments every time, growing with every merge (under a stream of
    saves the watcher then copied ~1,000 documents every few commits, a little more each time).
    """
    classes = _size_classes(segments)
    for tier in sorted(classes):
        group = classes[tier][:MERGE_FACTOR]
        if len(group) >= 2 and sum(seg.doc_count_all() for seg in group) <= max_docs:
            return group
    return None


#: Entry id → (position in the note, fingerprint): index_documents.entry_fingerprints.
Fingerprints = dict[str, tuple[int, int]]


@dataclass(frozen=True)
class _Read:
    """A note read in full for an update: from ``size`` bytes, its first entries and their
    fingerprints."""

    note: notes.Note
    size: int
    firsts: Firsts
    fingerprints: Fingerprints


class _Batch:
    """The changes of one update: a writer opened on first need, the manifest and the line table
    (:mod:`vault_tools.index.lines`) edited alongside."""

    def __init__(
        self,
        ix: Any,
        manifest: dict[str, FileRecord],
        report: UpdateReport,
        index_dir: Path,
        known: Mapping[str, KnownFile] | None = None,
    ) -> None:
        self.ix = ix
        self.manifest = manifest
        self.report = report
        self.index_dir = index_dir
        self.writer: Any = None
        self.dirty = False
        self._lines: Table | None = None
        self.lines_dirty = False
        self._known_before = known or {}
        #: What this batch's files hold once it commits (the caller keeps it only then).
        self.known: dict[str, KnownFile] = {}

    def _set_moved(self, rel: str, moved: dict[str, list[int]]) -> None:
        """Remember which of ``rel``'s kept documents hold lines its entries have left."""
        if self._lines is None:
            self._lines = load_lines(self.index_dir)
        if self._lines.get(rel, {}) != moved:
            self.lines_dirty = True
            if moved:
                self._lines[rel] = moved
            else:
                self._lines.pop(rel, None)

    def _writer(self) -> Any:
        if self.writer is None:
            self.writer = self.ix.writer(timeout=5.0)
        return self.writer

    def remove(self, rel: str, *, purge: bool) -> None:
        old = self.manifest.pop(rel, None)
        if old is None and not purge:
            return
        self._writer().delete_by_term(F_PATH, rel)
        self._set_moved(rel, {})
        self._forget(rel)
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

    def put(self, rel: str, st: os.stat_result, note: notes.Note, size: int, *, force: bool) -> None:
        """Index ``note``, read from ``size`` bytes, as the file ``rel`` with stat ``st``."""
        old = self.manifest.get(rel)
        if old is not None and old.sha256 == note.digest and not force:
            if not old.same_stat(st):
                self.report.touched += 1
            if not old.same_stat(st) or old.racy:
                self.manifest[rel] = file_record(st, note, old.entries)
                self.dirty = True
            return
        writer = self._writer()
        if force:
            writer.delete_by_term(F_PATH, rel)
            count = add_note(writer, note)
            self._set_moved(rel, {})
            self._forget(rel)
        else:
            count = self._put_changed(rel, note, size, old)
        self.manifest[rel] = file_record(st, note, count)
        self.report.warnings += [str(w) for w in note.warnings]
        self._count_update(old, count)

    def _count_update(self, old: FileRecord | None, count: int) -> None:
        if old is None:
            self.report.added += 1
        else:
            self.report.updated += 1
            self.report.entries_removed += old.entries
        self.report.entries_added += count
        self.dirty = True

    def put_appended(self, rel: str, st: os.stat_result, data: bytes, old: FileRecord) -> bool:
        """Index ``data`` by reading only what was appended to the content this process last
        wrote for ``rel`` (:mod:`vault_tools.index.tail`); False when it is not an append to it."""
        known = self._known_before.get(rel)
        if known is None or known.end is None or known.digest != old.sha256:
            return False
        appended = note_tail.read_appended(known.end, data)
        if appended is None:
            return False
        plan = plan_append(appended, known.rows, known.moved, known.end_firsts)
        writer = self._writer()
        for entry_id in plan.stale:
            writer.delete_by_term(F_ID, entry_id)
        for doc in entry_documents(appended.entries, appended.digest, plan.write):
            writer.add_document(**doc)
        if plan.moved != known.moved:
            self._set_moved(rel, plan.moved)
        self.manifest[rel] = new_record(st, appended.digest, len(plan.rows))
        self._count_update(old, len(plan.rows))
        end = note_tail.appended_end(appended, TAIL_ENTRIES)
        self.known[rel] = KnownFile(appended.digest, plan.rows, end, plan.end_firsts, plan.moved)
        return True

    def _remember(self, rel: str, read: _Read, rows: Rows, moved: dict[str, list[int]]) -> None:
        if len(rows) < KNOWN_MIN_ENTRIES:
            self._forget(rel)  # reading a short file's documents costs little: remember only long ones
            return
        end = note_tail.note_end(read.note, read.size, TAIL_ENTRIES)
        end_firsts = () if end is None else tuple(read.fingerprints[entry.id][0] for entry in end.tail)
        self.known[rel] = KnownFile(read.note.digest, rows, end, end_firsts, moved)

    def _forget(self, rel: str) -> None:
        self.known[rel] = KnownFile("", {})  # matches no content: the next update reads the documents

    def _put_changed(self, rel: str, note: notes.Note, size: int, old: FileRecord | None) -> int:
        """Write only the entries of ``rel`` that differ from its live documents; the entry count.

        Re-adding a whole file per save made every save cost as much as the file is long: an
        agent's daily note or a MEMORY.md of thousands of items took seconds per batch, and
        each batch left a dead copy of the file in the index. An unchanged entry (same id, same
        stored fields) keeps its document, which then names the file hash of an earlier version,
        and, when lines above it came or went, its old lines: the line table says where it is.
        """
        firsts = first_entries(note.entries)
        read = _Read(note, size, firsts, entry_fingerprints(note, firsts))
        known = self._known_before.get(rel)
        remembered = known is not None and old is not None and known.digest == old.sha256
        if not (remembered and known is not None and self._put_known(rel, read, known)):
            self._put_read(rel, read)
        return len(read.fingerprints)

    def _put_read(self, rel: str, read: _Read) -> None:
        """Compare with the file's live documents, read from the index."""
        note, fingerprints = read.note, read.fingerprints
        writer = self._writer()
        live = self._live_documents(rel)
        moved: dict[str, list[int]] = {}
        rows: dict[str, tuple[int, int, int]] = {}
        for doc in note_documents(note, firsts=read.firsts):
            entry_id = doc[F_ID]
            docnum, stored = live.pop(entry_id, (None, None))
            if stored is not None and same_document(stored, doc, lines=False):
                row = moved_entries(stored, doc)
                if row is not None:
                    moved[entry_id] = row
                rows[entry_id] = (fingerprints[entry_id][1], int(stored[F_START]), int(stored[F_END]))
                continue
            if docnum is not None:
                writer.delete_document(docnum)
            writer.add_document(**doc)
            rows[entry_id] = (fingerprints[entry_id][1], int(doc[F_START]), int(doc[F_END]))
        for docnum, _stored in live.values():
            writer.delete_document(docnum)
        self._set_moved(rel, moved)
        self._remember(rel, read, rows, moved)

    def _put_known(self, rel: str, read: _Read, known: KnownFile) -> bool:
        """Compare with what this process wrote for the file (no document is read); False when
        so much changed that reading the documents is cheaper."""
        note, fingerprints = read.note, read.fingerprints
        changed = {
            entry_id: position
            for entry_id, (position, fingerprint) in fingerprints.items()
            if known.rows.get(entry_id, (None,))[0] != fingerprint
        }
        stale = [entry_id for entry_id in known.rows if entry_id not in fingerprints or entry_id in changed]
        if len(stale) > KNOWN_DELETES_MAX:
            return False
        writer = self._writer()
        for entry_id in stale:
            writer.delete_by_term(F_ID, entry_id)
        for doc in note_documents(note, only=set(changed.values()), firsts=read.firsts):
            writer.add_document(**doc)
        rows: dict[str, tuple[int, int, int]] = {}
        moved: dict[str, list[int]] = {}
        for entry_id, (position, fingerprint) in fingerprints.items():
            entry = note.entries[position]
            if entry_id in changed:
                rows[entry_id] = (fingerprint, entry.start_line, entry.end_line)
                continue
            _fingerprint, start, end = rows[entry_id] = known.rows[entry_id]
            if (start, end) != (entry.start_line, entry.end_line):
                moved[entry_id] = [start, entry.start_line, entry.end_line]
        self._set_moved(rel, moved)
        self._remember(rel, read, rows, moved)
        return True

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

    def commit(self, index_dir: Path) -> bool:
        """Commit the index, then (only then) write the line table and the manifest that describe it.

        A commit merges only a full class of small segments (:data:`COMMIT_MERGE_DOCS`; Whoosh's
        default merge costs ~0.8 s at 100k entries every dozen commits: too much for
        save-to-searchable); :meth:`Index.maintain` merges bigger classes when nobody waits.
        Past :data:`MAX_SEGMENTS` a commit merges a bigger class too, so searches never slow
        down when the watcher is never idle or there is no watcher.
        """
        committed = self.writer is not None
        if self.writer is not None:
            self.writer.commit(mergetype=merge_policy(commit_merge_group))
            self.writer = None
        if self.lines_dirty and self._lines is not None:
            save_lines(index_dir, self._lines)
        if self.dirty:
            save_manifest(index_dir, self.manifest)
        return committed

    def cancel(self) -> None:
        if self.writer is not None:
            self.writer.cancel()
            self.writer = None


def add_note(writer: Any, note: notes.Note, on_document: Callable[[], None] | None = None) -> int:
    count = 0
    for doc in note_documents(note):
        writer.add_document(**doc)
        count += 1
        if on_document is not None:
            on_document()
    return count


class NoteProgress:
    """Moves a progress bar through one note's bytes as its entries are indexed, so that a note of
    77,000 entries (one file, half a minute) shows progress too, not one jump at its end."""

    EVERY = 500  # documents between two moves of the bar

    def __init__(self, advance: Callable[[int], None], size: int, entries: int) -> None:
        self.advance = advance
        self.size = size
        self.entries = max(1, entries)
        self.done = 0
        self.shown = 0

    def document(self) -> None:
        self.done += 1
        if self.done % self.EVERY == 0:
            self._to(self.size * min(self.done, self.entries) // self.entries)

    def finish(self) -> None:
        self._to(self.size)

    def _to(self, position: int) -> None:
        step = position - self.shown
        if step > 0:
            self.advance(step)
            self.shown = position


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass

    def set_description(self, desc: str) -> None:
        pass

    def close(self) -> None:
        pass


def progress_bar(total: int, enabled: bool, what: str, unit: str = "file") -> Any:
    """A tqdm bar on stderr when asked for and stderr is a terminal; shown after a second.

    ``unit="B"`` counts bytes (shown as KB, MB)."""
    if not enabled or not sys.stderr.isatty():
        return _NoBar()
    from tqdm import tqdm

    scaled = unit == "B"
    return tqdm(
        total=total,
        desc=what,
        unit=unit,
        unit_scale=scaled,
        unit_divisor=1024 if scaled else 1000,
        delay=1.0,
        file=sys.stderr,
        leave=False,
    )
