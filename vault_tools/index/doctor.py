"""``vault-tools doctor``: the files on disk (hashed) against the index, document by document.

:class:`IndexDoctor` is the part of :class:`vault_tools.index.index.Index` that examines and repairs
(through the index's :class:`~vault_tools.index.writer.IndexWriter` and
:class:`~vault_tools.index.healing.IndexHealer`); :meth:`Index.doctor` runs it.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from vault_tools.index.documents import F_ID, F_PATH, note_documents, same_document
from vault_tools.index.healing import IndexHealer
from vault_tools.index.lines import fix_lines, load_lines
from vault_tools.index.manifest import FileRecord, file_sha256, scan_note_stats, scan_notes
from vault_tools.index.state import IndexState
from vault_tools.index.writer import IndexWriter, UpdateReport
from vault_tools.notes import model as notes


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


class IndexDoctor:
    """Examine and repair (see the module docstring); a part of :class:`vault_tools.index.index.Index`."""

    def __init__(self, state: IndexState, writer: IndexWriter, healer: IndexHealer) -> None:
        self.state = state
        self.writer = writer
        self.healer = healer

    def run(self, *, fix: bool) -> DoctorReport:
        """Compare the files on disk (hashed) with the index document by document; ``fix`` repairs
        what differs, under the lock."""
        if not fix:
            return self.examine()
        with self.state.lock("doctor --fix"):
            before = self.examine()
            fixed = UpdateReport()
            started = time.monotonic()
            if not self.healer.heal_locked(fixed, progress=False, should_stop=None):
                self._repair_locked(before, fixed)
            fixed.seconds = time.monotonic() - started
            after = self.examine()
        after.fixed = fixed
        return after

    def examine(self) -> DoctorReport:
        """What differs between the notes on disk and the index (read only)."""
        problem = self.healer.settled_problem()
        manifest = self.state.manifest()
        file_warnings: list[notes.Warning_] = []
        on_disk = scan_notes(self.state.vault, file_warnings)
        changed = [
            rel
            for rel, path in sorted(on_disk.items())
            if rel in manifest and file_sha256(path) != manifest[rel].sha256
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
        moved = load_lines(self.state.dir)
        with self.state.open_ix().reader() as r:
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
                stored: list[dict[str, Any]] = (
                    [fix_lines(moved, dict(r.stored_fields(d))) for d in docs] if expected else []
                )
                outdated = [f for f in stored if not same_document(f, expected.get(str(f.get(F_ID)), {}))]
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
            note = notes.read_note(self.state.vault / rel, self.state.vault)
        except OSError:
            return None
        if note.digest != rec.sha256:
            return None
        return {doc[F_ID]: doc for doc in note_documents(note)}

    def _repair_locked(self, before: DoctorReport, report: UpdateReport) -> None:
        manifest = self.state.manifest()
        on_disk = scan_note_stats(self.state.vault)
        report.files_on_disk = len(on_disk)
        suspects = set(before.changed_files) | set(before.stale_paths) | set(before.not_indexed)
        suspects |= {m.split(": ", 1)[0] for m in before.count_mismatches}
        work: dict[str, Path | None] = {
            rel: Path(on_disk[rel][0]) if rel in on_disk else None for rel in suspects
        }
        work.update({rel: None for rel in before.missing_files})
        changed, deleted = self.writer.diff(manifest, on_disk, hash_check=False)
        work.update({rel: Path(on_disk[rel][0]) for rel in changed})
        work.update({rel: None for rel in deleted})
        self.writer.apply(
            report,
            manifest,
            work,
            should_stop=None,
            force_reindex=frozenset(suspects),
            purge=frozenset(before.stale_paths),
        )
        with contextlib.suppress(Exception):
            ix = self.state.open_ix()
            with ix.reader() as r:
                deleted_docs = r.doc_count_all() - r.doc_count()
                if deleted_docs > 0.2 * max(1, r.doc_count_all()):
                    ix.optimize()
