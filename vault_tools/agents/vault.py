"""The vault as a whole: create one, write an agent's note into it, and report its state.

``Vault`` is the Python API (``from vault_tools import Vault``); the CLI calls the same functions.
"""

from __future__ import annotations

import datetime as dt
import re
import subprocess
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from vault_tools.config import (
    STATE_DIR,
    Config,
    can_write,
    load_config,
    require_vault,
    require_writable,
    resolve_vault,
)
from vault_tools.errors import NotWritableError, UsageError, VaultError
from vault_tools.notes import edit as note_edit
from vault_tools.notes import model as notes

if TYPE_CHECKING:
    from importlib.abc import Traversable  # importlib.resources.abc from 3.11 on; the same class

    from vault_tools.recall.recall import RecallResult

MEMORY_TEMPLATE = """---
title: Long-term memory
type: memory
# Curated by people and by `vault-tools heartbeat`; edit freely.
---
# Long-term memory

## Decisions

## Preferences

## Lessons

## Facts
"""

GITIGNORE = f"{STATE_DIR}/\n"
DATE_IN_TEXT = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)")
TAG_NAME = re.compile(r"^[^\s#\[\](){}<>,.;:!?'\"`]+$")
SAMPLE_SKIPPED_DIRS = frozenset({STATE_DIR, ".git", "__pycache__"})


def sample_vault_dir() -> Traversable:
    """The bundled sample vault, as package data of an installed ``vault_tools``.

    A wheel holds it at ``vault_tools/sample_vault/`` (pyproject maps the repository's ``vault/``
    there). It is reached through ``vault_tools``, a regular package, so ``importlib.resources``
    gives a directory (or a zip member) on every Python: ``vault_tools.sample_vault`` itself has no
    ``__init__.py`` and would be a namespace package, which an editable install cannot import and
    3.11 returns as a ``MultiplexedPath``. A source tree (an editable install, ``PYTHONPATH``) has
    no package data next to the code: there the sample is the repository's ``vault/``.
    """
    packaged = resources.files("vault_tools").joinpath("sample_vault")
    if packaged.joinpath("MEMORY.md").is_file():
        return packaged
    checkout = Path(__file__).resolve().parents[2] / "vault"
    if (checkout / "MEMORY.md").is_file():
        return checkout
    raise VaultError("the bundled sample vault is missing from this installation; reinstall vault-tools")


def sample_files(root: Traversable) -> list[tuple[PurePosixPath, Traversable]]:
    """Every file of the sample vault as (path inside it, file), in name order; never its state or git."""
    return files_under(root, PurePosixPath())


def files_under(folder: Traversable, name: PurePosixPath) -> list[tuple[PurePosixPath, Traversable]]:
    found: list[tuple[PurePosixPath, Traversable]] = []
    for child in sorted(folder.iterdir(), key=lambda item: item.name):
        if child.is_dir():
            if child.name not in SAMPLE_SKIPPED_DIRS:
                found += files_under(child, name / child.name)
        elif not child.name.endswith((".py", ".pyc")):
            found.append((name / child.name, child))
    return found


# ---------------------------------------------------------------------------------------------
# init


@dataclass
class InitReport:
    vault: str
    created: list[str] = field(default_factory=list)
    git_initialised: bool = False
    sample: bool = False
    shifted_days: int = 0
    commit: str | None = None  # the first commit, of the files init created


def init_vault(path: Path, *, sample: bool = False, today: dt.date | None = None) -> InitReport:
    """Create the layout at ``path``; with ``sample``, copy the sample vault re-dated to end ``today``."""
    today = today or dt.date.today()
    report = InitReport(vault=str(path), sample=sample)
    check_init_target(path)
    planned = planned_files(path, sample)
    clashes = [p for p in planned if p.exists()]
    if clashes:
        raise UsageError(
            f"{clashes[0]}: already exists; init never overwrites files. Choose an empty folder or remove it."
        )
    path.mkdir(parents=True, exist_ok=True)
    if sample:
        report.shifted_days = copy_sample(path, today)
    else:
        note_edit.atomic_write(path / "MEMORY.md", MEMORY_TEMPLATE.encode())
    (path / "memory").mkdir(exist_ok=True)
    (path / STATE_DIR).mkdir(exist_ok=True)
    wrote_gitignore = not (path / ".gitignore").exists()
    if wrote_gitignore:
        note_edit.atomic_write(path / ".gitignore", GITIGNORE.encode())
    report.created = sorted(p.relative_to(path).as_posix() for p in planned)
    report.git_initialised = git_init_if_needed(path)
    ours = sorted({*report.created, *([".gitignore"] if wrote_gitignore else [])})
    report.commit = first_commit(path, ours)
    return report


def check_init_target(path: Path) -> None:
    """``path`` can become a vault: it is (or can be made as) a folder that can be written."""
    existing = path
    while not existing.exists() and existing.parent != existing:
        existing = existing.parent
    if not existing.is_dir():
        what = "is a file" if existing.is_file() else "is not a folder"
        where = "" if existing == path else f" (in the way of {path})"
        raise UsageError(
            f"{existing}: {what}{where}; a vault is a folder. Choose another path, e.g. a new folder name."
        )
    if not can_write(existing):
        raise NotWritableError.for_path(existing, "`vault-tools init`")


def first_commit(path: Path, created: list[str]) -> str | None:
    """In a repository with no commit yet, commit the files init created (only those) as the bot."""
    from vault_tools.errors import GitError
    from vault_tools.git import repository as gitops

    try:
        repo = gitops.VaultRepo.open(path)
    except GitError:
        return None
    if repo is None:
        return None
    with repo:
        if repo.head_sha() is not None:
            return None  # an existing history: the heartbeat's baseline commits what it touches
        message = "vault-tools init: start the vault\n\n" + "\n".join(f"- {p}" for p in created) + "\n"
        return repo.baseline(created, message)


def planned_files(path: Path, sample: bool) -> list[Path]:
    if not sample:
        return [path / "MEMORY.md", path / ".gitignore"]
    return [path / sample_target_name(name, 0) for name, _ in sample_files(sample_vault_dir())]


def sample_target_name(name: PurePosixPath, shift: int) -> PurePosixPath:
    match = notes.DAILY_NAME.match(name.name)
    if not match or shift == 0:
        return name
    day = dt.date(int(match[1]), int(match[2]), int(match[3])) + dt.timedelta(days=shift)
    return name.with_name(day.isoformat() + name.name[10:])


def copy_sample(target: Path, today: dt.date) -> int:
    """Copy the sample vault, moving every date in names and text by the same number of days."""
    files = sample_files(sample_vault_dir())
    days = [notes.classify(name.as_posix())[1] for name, _ in files if name.parent.as_posix() == "memory"]
    last = max((d for d in days if d is not None), default=today)
    shift = (today - last).days
    for name, file in files:
        data = file.read_bytes()
        if name.suffix == ".md":
            data = shift_dates(data.decode("utf-8"), shift).encode("utf-8")
        destination = target / sample_target_name(name, shift)
        destination.parent.mkdir(parents=True, exist_ok=True)
        note_edit.atomic_write(destination, data)
    return shift


def shift_dates(text: str, days: int) -> str:
    def move(match: re.Match[str]) -> str:
        try:
            day = dt.date(int(match[1]), int(match[2]), int(match[3]))
        except ValueError:
            return match[0]
        return (day + dt.timedelta(days=days)).isoformat()

    return DATE_IN_TEXT.sub(move, text) if days else text


def git_init_if_needed(path: Path) -> bool:
    """``git init`` unless ``path`` is already inside a work tree; False when git is unavailable."""
    try:
        inside = subprocess.run(
            ["git", "rev-parse", "--is-inside-work-tree"],
            cwd=path,
            capture_output=True,
            text=True,
            check=False,
        )
        if inside.returncode == 0 and inside.stdout.strip() == "true":
            return False
        subprocess.run(["git", "init", "-q", str(path)], capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return False
    return True


# ---------------------------------------------------------------------------------------------
# note


@dataclass
class NoteReport:
    path: str  # relative to the vault, POSIX
    line: int
    text: str
    created_file: bool
    absolute_path: str = ""  # the file written, for a person to open


def format_entry(
    text: str, *, clock: dt.time | None, tags: list[str], visibility: str | None, remember: bool
) -> str:
    """One daily-note line: ``- HH:MM text #tag ...``, or ``- text #tag ...`` without a ``clock``."""
    body = " ".join(part.strip() for part in text.strip().splitlines() if part.strip())
    if not body:
        raise UsageError('the note is empty; pass the text to remember, e.g. vault-tools note "..."')
    wanted = [t.lstrip("#") for t in tags]
    if visibility in ("private", "shared"):
        wanted.append(visibility)
    if remember:
        wanted.append("remember")
    for tag in wanted:
        if not TAG_NAME.match(tag):
            raise UsageError(f"tag {tag!r} has characters a #tag cannot hold; use letters, digits, - _ /")
    present = {m.group(1).lower() for m in notes.TAG.finditer(body)}
    suffix = "".join(f" #{t}" for t in dict.fromkeys(wanted) if t.lower() not in present)
    stamp = f"{clock:%H:%M} " if clock is not None else ""
    return f"- {stamp}{body}{suffix}"


def daily_note_header(day: dt.date) -> str:
    return f"---\ndate: {day.isoformat()}\ntags: [daily]\n---\n# {day.isoformat()}\n\n"


def add_note(
    config: Config,
    text: str,
    *,
    tags: list[str] | None = None,
    visibility: str | None = None,
    remember: bool = False,
    day: dt.date | None = None,
    now: dt.datetime | None = None,
) -> NoteReport:
    """Append one entry to the day's note (created with front matter when missing). Append-only.
    The entry carries the clock time when the day is today, and no time for another day.

    Only into a vault: a mistyped path or a folder without one is an error, never a new vault
    (that is ``init``'s job).
    """
    require_vault(config.vault)
    now = now or config.now()
    day = day or now.date()
    # Written today, the clock says when. Written for another day (--date yesterday), it would
    # claim a time nobody said: that line gets none.
    clock = now.time() if day == now.date() else None
    line = format_entry(text, clock=clock, tags=tags or [], visibility=visibility, remember=remember)
    path = config.vault / "memory" / f"{day.isoformat()}.md"
    require_writable("`vault-tools note`", path.parent if path.parent.is_dir() else config.vault)
    created = not path.exists()
    result = note_edit.apply_edit(
        path, note_edit.append_lines([line], initial=daily_note_header(day)), create=True
    )
    line_number = result.data.count(b"\n")
    return NoteReport(path.relative_to(config.vault).as_posix(), line_number, line, created, str(path))


# ---------------------------------------------------------------------------------------------
# status


@dataclass
class StatusReport:
    vault: str
    daily_notes: int
    memory_items: int
    entries: int
    warnings: list[str]
    summaries: dict[str, Any]
    index: dict[str, Any]
    watcher: dict[str, Any]
    heartbeat: dict[str, Any]
    git: dict[str, Any]
    embeddings: dict[str, Any] = field(default_factory=dict)  # the vector cache, when configured

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        if not self.embeddings:
            del data["embeddings"]
        return data


def vault_status(config: Config) -> StatusReport:
    require_vault(config.vault)
    loaded, warnings = notes.read_vault(config.vault)
    daily = [n for n in loaded if n.kind == "daily"]
    memory_items = sum(len(n.entries) for n in loaded if n.kind == "memory")
    summaries = sorted(n.path.stem for n in loaded if n.kind == "summary")
    index = index_status(config)
    return StatusReport(
        vault=str(config.vault),
        daily_notes=len(daily),
        memory_items=memory_items,
        entries=sum(len(n.entries) for n in loaded),
        warnings=[str(w) for w in warnings],
        summaries={
            "count": len(summaries),
            "latest_week": max((name for name in summaries if "-W" in name), default=None),
            "latest_month": max((name for name in summaries if "-W" not in name), default=None),
        },
        index=index,
        watcher=watcher_status(config),
        heartbeat=heartbeat_status(config),
        git=git_status(config.vault),
        embeddings=embeddings_status(config, index_readable=index.get("state") in ("ok", "stale")),
    )


def index_status(config: Config) -> dict[str, Any]:
    from vault_tools.index import index

    return index.status(config).to_dict()


def embeddings_status(config: Config, *, index_readable: bool) -> dict[str, Any]:
    """The vector cache (``[embeddings]`` configured; else empty): vectors, pending, errors."""
    if not config.embeddings.configured:
        return {}
    from vault_tools.vectors.status import vector_status

    return vector_status(config, index_readable=index_readable).to_dict()


def watcher_status(config: Config) -> dict[str, Any]:
    """The watcher as it really is: a state file left by a killed watcher reads as not running."""
    from vault_tools.index.status import watcher_info

    info = watcher_info(config)
    return asdict(info) if info is not None else {}


def heartbeat_status(config: Config) -> dict[str, Any]:
    from vault_tools.heartbeat import state as heartbeat_state

    return heartbeat_state.last_run(config)


def git_status(vault: Path) -> dict[str, Any]:
    from vault_tools.git import repository as gitops

    return gitops.describe(vault)


# ---------------------------------------------------------------------------------------------
# The Python API


class Vault:
    """A vault on disk. ``Vault(path).recall("what did we decide about auth?", chat="direct")``."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.config = load_config(resolve_vault(str(path) if path is not None else None))

    @property
    def path(self) -> Path:
        return self.config.vault

    def note(self, text: str, **options: Any) -> NoteReport:
        return add_note(self.config, text, **options)

    def status(self) -> StatusReport:
        return vault_status(self.config)

    def recall(self, query: str, **options: Any) -> RecallResult:
        from vault_tools.recall import recall

        return recall.recall(self.config, query, **options)
