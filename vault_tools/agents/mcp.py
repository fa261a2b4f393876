"""The MCP stdio server: an agent's tools for searching, reading, writing and loading its memory.

Design. ``vault-tools mcp --chat direct|group|unknown`` serves four tools over stdio with the
official ``mcp`` SDK. The chat context is fixed when the server starts and is part of
:class:`MemoryTools`, not of any tool's arguments, so nothing a model sends can widen it (an
unknown argument such as ``chat`` is ignored by the SDK's argument model).

* ``memory_search``: :class:`vault_tools.recall.recall.Recaller` kept warm for the session; it catches
  the index up with the files before every search (a stat of every note), so it is right with
  or without a watcher running. Returns the ``recall --json`` document. ``mode`` is recall's
  ``--mode`` (keyword, semantic, hybrid; the default is recall's).
* ``memory_get``: lines of one memory file. Only ``MEMORY.md``/``memory.md`` and
  ``memory/**/*.md`` inside the vault: the path must be relative, with no ``..``, ``.``, empty
  or hidden component and no backslash, and every component is opened with ``O_NOFOLLOW``
  relative to its parent directory, so no symlink is followed at any depth, even one swapped in
  while we read. The file must be a regular file. In a direct chat the lines are returned as
  they are. In a group or unknown chat MEMORY.md is refused outright and only the lines of
  entries visible to that chat (:func:`vault_tools.privacy.rules.entry_visible`: ``shared`` entries)
  are returned; front matter, headings and every other line are left out, and a file or a line
  range that holds no such entry is refused with the same message as a missing file, so a group
  chat cannot even learn that a personal note exists.
* ``memory_note``: :func:`vault_tools.agents.vault.add_note` (appends to today's note). Direct only.
* ``memory_context``: :func:`vault_tools.agents.context.build_context` rendered as Markdown.

The ``mcp`` package is imported only by :func:`build_server`, so the rest of vault-tools never
loads it. :class:`MemoryTools` holds the logic and is what the unit tests call directly.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import threading
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Literal

from vault_tools.config import Config
from vault_tools.errors import VaultError
from vault_tools.notes import model as notes

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from vault_tools.privacy.rules import Chat
    from vault_tools.recall.recall import Recaller

MAX_GET_LINES = 400
MAX_SEARCH_LIMIT = 50
SEARCH_MODES = ("keyword", "semantic", "hybrid")

INSTRUCTIONS = """\
Long-term memory of the person you work for, kept as Markdown notes on their machine.
This session's chat context is {chat}; it was fixed when the server started and no argument changes it.
At the start of a conversation call memory_context once. Before answering anything that depends on the
past (earlier decisions, preferences, people, dates, "what did we ...", "last week ...") call
memory_search and cite what you use; use memory_get to read the lines around a hit. {note_rule}\
"""
NOTE_RULE_DIRECT = (
    "When the person tells you something worth remembering (a decision, a preference, a fact about "
    "them, a lesson), save it with memory_note in one short sentence."
)
NOTE_RULE_GROUP = "This is a shared chat: memory_note is disabled and only entries marked shared are visible."

SEARCH_DESCRIPTION = """\
Search long-term memory (daily notes and MEMORY.md) by keywords, tags and dates.
Call it before answering any question about the past: what was decided, preferred, said, done or planned,
and when. Time words in the query work ("last week", "in March", "昨天", "上周"). Results are ranked
entries with path and line (for memory_get), date, tags and text; `stale: true` means the index could
not be brought fully up to date. An empty result means nothing is remembered about it: say so rather
than guess."""
GET_DESCRIPTION = """\
Read lines of one memory file: MEMORY.md or memory/YYYY-MM-DD.md (a `path` from memory_search).
Use it to see the context around a search hit or to read a whole day. Paths are relative to the
vault; anything outside MEMORY.md and memory/ is refused. In a group chat only shared entries are
returned and MEMORY.md is refused."""
NOTE_DESCRIPTION = """\
Save something to long-term memory: appends one entry to today's daily note.
Call it when the person states a decision, preference, fact about themselves or their work, a plan
or a lesson worth keeping, or asks you to remember something. Write one short, self-contained
sentence (who/what/why; no secrets unless asked). Tags are optional words without '#'; add
'shared' only for what may be shown in group chats, 'private' for what must never leave this
machine. Refused in group and unknown chats."""
CONTEXT_DESCRIPTION = """\
Load the session-start memory: long-term memory (MEMORY.md) plus the gist of today's and
yesterday's notes, as Markdown within a token budget. Call it once at the start of a conversation,
before the first answer. In a group chat only shared entries are included."""


class RefusedError(VaultError):
    """A tool call that the chat context or the path rules do not allow."""


# ---------------------------------------------------------------------------------------------
# Paths memory_get may read


def memory_path_parts(path: str) -> tuple[str, ...]:
    """The components of a readable memory path, or :class:`RefusedError` saying why not."""
    if not path or "\x00" in path:
        raise RefusedError("give the path of a memory file, e.g. MEMORY.md or memory/2026-03-10.md")
    if "\\" in path:
        raise RefusedError(f"{path!r}: use forward slashes, relative to the vault")
    pure = PurePosixPath(path)
    if pure.is_absolute() or path.startswith("~"):
        raise RefusedError(f"{path!r}: give the path relative to the vault, as memory_search returns it")
    parts = tuple(path.split("/"))
    if any(part in ("", ".", "..") for part in parts):
        raise RefusedError(f"{path!r}: '..', '.' and empty path components are not allowed")
    if any(part.startswith(".") for part in parts):
        raise RefusedError(f"{path!r}: hidden files and folders are not memory")
    if len(parts) == 1 and parts[0] in notes.MEMORY_FILE_NAMES:
        return parts
    if len(parts) >= 2 and parts[0] == "memory" and parts[-1].endswith(".md"):
        return parts
    raise RefusedError(f"{path!r}: only MEMORY.md and memory/**/*.md can be read")


def read_memory_file(vault: Path, parts: tuple[str, ...], max_bytes: int = notes.MAX_NOTE_BYTES) -> bytes:
    """The bytes of ``vault/parts``, following no symlink at any depth; regular files only."""
    not_found = RefusedError(f"{'/'.join(parts)}: no such memory file")
    if not hasattr(os, "O_NOFOLLOW") or os.open not in os.supports_dir_fd:  # pragma: no cover - Windows
        return read_checked_by_lstat(vault, parts, max_bytes, not_found)
    cloexec = getattr(os, "O_CLOEXEC", 0)
    directory = getattr(os, "O_DIRECTORY", 0)
    fd = os.open(vault, os.O_RDONLY | directory | cloexec)
    try:
        for index, part in enumerate(parts):
            last = index == len(parts) - 1
            flags = os.O_RDONLY | os.O_NOFOLLOW | cloexec | (os.O_NONBLOCK if last else directory)
            try:
                next_fd = os.open(part, flags, dir_fd=fd)
            except OSError as exc:
                raise refusal(exc, fd, parts, index, not_found) from None
            os.close(fd)
            fd = next_fd
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise RefusedError(f"{'/'.join(parts)}: not a regular file")
        if info.st_size > max_bytes:
            raise RefusedError(f"{'/'.join(parts)}: over {max_bytes // 1024 // 1024} MB; not read")
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def refusal(
    exc: OSError, dir_fd: int, parts: tuple[str, ...], index: int, not_found: RefusedError
) -> RefusedError:
    """Why opening ``parts[index]`` failed, in words: a symlink, or simply not there."""
    where = "/".join(parts[: index + 1])
    with contextlib.suppress(OSError):
        if stat.S_ISLNK(os.lstat(parts[index], dir_fd=dir_fd).st_mode):
            return RefusedError(f"{where}: is a symlink; memory_get does not follow symlinks")
    if exc.errno in (errno.ELOOP, errno.EMLINK):
        return RefusedError(f"{where}: is a symlink; memory_get does not follow symlinks")
    if exc.errno == errno.ENOTDIR:
        return RefusedError(f"{where}: is not a folder")
    return not_found


def read_checked_by_lstat(
    vault: Path, parts: tuple[str, ...], max_bytes: int, not_found: RefusedError
) -> bytes:  # pragma: no cover - for systems without O_NOFOLLOW and dir_fd
    current = vault
    for index, part in enumerate(parts):
        current = current / part
        try:
            info = os.lstat(current)
        except OSError:
            raise not_found from None
        if stat.S_ISLNK(info.st_mode):
            raise RefusedError(
                f"{'/'.join(parts[: index + 1])}: is a symlink; memory_get does not follow symlinks"
            )
    if not stat.S_ISREG(info.st_mode):
        raise RefusedError(f"{'/'.join(parts)}: not a regular file")
    if info.st_size > max_bytes:
        raise RefusedError(f"{'/'.join(parts)}: over {max_bytes // 1024 // 1024} MB; not read")
    return current.read_bytes()


def parse_note(vault: Path, rel: str, data: bytes) -> notes.Note:
    """A :class:`~vault_tools.notes.model.Note` from bytes already read (what ``read_note`` does from a path)."""
    path = vault / rel
    kind, date = notes.classify(rel)
    warnings: list[notes.Warning_] = []
    note = notes.Note(path, rel, kind, date, [], {}, 0, [], warnings)
    text = notes.decode(data, path, warnings)
    if text is None:
        return note
    note.lines = notes.split_lines(text)
    note.front_matter, note.body_start = notes.parse_front_matter(note.lines, path, warnings)
    note.entries = list(notes.parse_entries(note))
    return note


# ---------------------------------------------------------------------------------------------
# The tools


@dataclass(frozen=True)
class GetResult:
    path: str
    chat: str
    from_line: int
    to_line: int
    total_lines: int
    text: str
    shown: list[tuple[int, int]]  # the line ranges in ``text`` (only gaps in a group chat)
    next_from: int | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "chat": self.chat,
            "from": self.from_line,
            "to": self.to_line,
            "total_lines": self.total_lines,
            "text": self.text,
            "shown": [list(r) for r in self.shown],
            "next_from": self.next_from,
        }


class MemoryTools:
    """What the MCP tools do, for one vault and one chat context fixed at construction."""

    def __init__(self, config: Config, chat: Chat) -> None:
        self.config = config
        self.chat: Chat = chat
        self._recaller: Recaller | None = None
        self._lock = threading.Lock()  # the SDK runs sync tools on worker threads

    def close(self) -> None:
        with self._lock:
            if self._recaller is not None:
                self._recaller.close()
                self._recaller = None

    def search(
        self,
        query: str,
        *,
        limit: int | None = None,
        since: str | None = None,
        until: str | None = None,
        tags: list[str] | None = None,
        mode: str | None = None,
    ) -> dict[str, Any]:
        """The ``recall --json`` document for ``query`` in this session's chat."""
        if limit is not None and not 1 <= limit <= MAX_SEARCH_LIMIT:
            raise RefusedError(f"limit must be between 1 and {MAX_SEARCH_LIMIT}, got {limit}")
        if mode is not None and mode not in SEARCH_MODES:
            raise RefusedError(f"mode must be one of {', '.join(SEARCH_MODES)}, got {mode!r}")
        if mode not in (None, "keyword") and not self.config.embeddings.configured:
            raise RefusedError(
                f"mode {mode} needs embeddings, which this vault has not configured; use keyword (the default)"
            )
        with self._lock:
            if self._recaller is None:
                from vault_tools.recall.recall import Recaller

                self._recaller = Recaller(self.config, catch_up="always")
            result = self._recaller.recall(
                query,
                limit=limit,
                since=since or None,
                until=until or None,
                tags=tags or (),
                chat=self.chat,
                mode=mode,
            )
        return result.to_dict()

    def get(self, path: str, *, from_line: int = 1, lines: int | None = None) -> GetResult:
        """Lines ``from_line``.. of one memory file, as this chat may see them (module docstring),
        their secrets withheld: the agent's model reads them."""
        from vault_tools.privacy.sensitive import redact

        parts = memory_path_parts(path)
        rel = "/".join(parts)
        if self.chat != "direct" and len(parts) == 1:
            raise RefusedError(
                f"{rel}: long-term memory is personal; it is not available in a {self.chat} chat"
            )
        if from_line < 1:
            raise RefusedError(f"from_line must be 1 or more, got {from_line}")
        count = MAX_GET_LINES if lines is None else lines
        if not 1 <= count <= MAX_GET_LINES:
            raise RefusedError(f"lines must be between 1 and {MAX_GET_LINES}, got {lines}")
        try:
            data = read_memory_file(self.config.vault, parts)
        except RefusedError as exc:
            if self.chat != "direct":
                raise self.nothing_shared(rel) from None
            raise exc from None
        note = parse_note(self.config.vault, rel, data)
        total = len(note.lines)
        last = min(total, from_line + count - 1)
        visible = self.visible_lines(note)
        if self.chat != "direct" and not visible:
            raise self.nothing_shared(rel)
        wanted = [n for n in range(from_line, last + 1) if n in visible]
        if self.chat != "direct" and not wanted:
            raise RefusedError(
                f"{rel}: lines {from_line}-{last} hold no entry shared with this {self.chat} chat"
            )
        text = "".join(redact(note.lines[n - 1], secrets_only=True) for n in wanted).replace("\r\n", "\n")
        if note.lines and wanted and wanted[0] == 1:
            text = text.removeprefix(notes.BOM)
        return GetResult(
            path=rel,
            chat=self.chat,
            from_line=from_line,
            to_line=last,
            total_lines=total,
            text=text,
            shown=ranges(wanted),
            next_from=last + 1 if last < total else None,
        )

    def visible_lines(self, note: notes.Note) -> set[int]:
        """1-based line numbers this chat may read: all in a direct chat, else its visible entries."""
        from vault_tools.privacy.rules import entry_visible

        if self.chat == "direct":
            hidden = {
                n
                for e in note.entries
                if not entry_visible(e, self.chat)
                for n in range(e.start_line, e.end_line + 1)
            }
            return set(range(1, len(note.lines) + 1)) - hidden
        return {
            n
            for e in note.entries
            if entry_visible(e, self.chat)
            for n in range(e.start_line, e.end_line + 1)
        }

    def nothing_shared(self, rel: str) -> RefusedError:
        return RefusedError(
            f"{rel}: no such memory file, or nothing in it is shared with this {self.chat} chat"
        )

    def note(self, text: str, *, tags: list[str] | None = None) -> dict[str, Any]:
        """Append ``text`` to today's note (direct chats only)."""
        if self.chat != "direct":
            raise RefusedError(
                f"memory_note is disabled in a {self.chat} chat: only the owner's direct chat writes memory"
            )
        from vault_tools.agents.vault import add_note

        with self._lock:
            report = add_note(self.config, text, tags=list(tags or []))
        return {
            "path": report.path,
            "line": report.line,
            "text": report.text,
            "created_file": report.created_file,
        }

    def context(self, *, max_tokens: int = 2000) -> str:
        """The session-start context for this chat, as Markdown."""
        from vault_tools.agents.context import build_context

        return build_context(self.config, chat=self.chat, max_tokens=max_tokens).render()


def ranges(numbers: list[int]) -> list[tuple[int, int]]:
    """[1, 2, 3, 7, 8] -> [(1, 3), (7, 8)]."""
    out: list[tuple[int, int]] = []
    for n in numbers:
        if out and out[-1][1] == n - 1:
            out[-1] = (out[-1][0], n)
        else:
            out.append((n, n))
    return out


# ---------------------------------------------------------------------------------------------
# The MCP server


def build_server(config: Config, chat: Chat) -> tuple[MCPServer, MemoryTools]:
    """An MCP server exposing the four tools for ``config.vault`` in ``chat`` (not started)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.types import ToolAnnotations
    from pydantic import Field

    from vault_tools import __version__

    tools = MemoryTools(config, chat)
    rule = NOTE_RULE_DIRECT if chat == "direct" else NOTE_RULE_GROUP
    server: MCPServer = MCPServer(
        name="vault-tools",
        version=__version__,
        instructions=INSTRUCTIONS.format(chat=chat, note_rule=rule),
        log_level="WARNING",
    )

    def call(fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except VaultError as exc:
            raise ToolError(str(exc)) from None

    # Descriptions ride on pydantic Field defaults: the annotations stay plain strings that the SDK
    # can evaluate in this module (``from __future__ import annotations``), Field is imported lazily.
    def memory_search(
        query: str = Field(description="what to look for: keywords, #tags and time words"),
        limit: int | None = Field(None, description="at most this many results (default 10)"),
        since: str | None = Field(None, description="only on or after: YYYY-MM-DD, 7d, 'last week'"),
        until: str | None = Field(None, description="only on or before: YYYY-MM-DD or a time phrase"),
        tags: tuple[str, ...] | None = Field(None, description="only entries with all these tags"),
        mode: Literal["keyword", "semantic", "hybrid"] | None = Field(
            None,
            description="keyword, semantic (by meaning) or hybrid (both; the default when the vault "
            "has embeddings configured, else keyword)",
        ),
    ) -> dict[str, Any]:
        result: dict[str, Any] = call(
            tools.search, query, limit=limit, since=since, until=until, tags=tags, mode=mode
        )
        return result

    def memory_get(
        path: str = Field(description="MEMORY.md or memory/YYYY-MM-DD.md, relative to the vault"),
        from_line: int = Field(1, description="first line to return, 1-based"),
        lines: int | None = Field(None, description=f"how many lines (default and max {MAX_GET_LINES})"),
    ) -> dict[str, Any]:
        result: GetResult = call(tools.get, path, from_line=from_line, lines=lines)
        return result.to_dict()

    def memory_note(
        text: str = Field(description="one short sentence worth remembering"),
        tags: tuple[str, ...] | None = Field(
            None, description="tags without '#', e.g. ['atlas', 'decision']"
        ),
    ) -> dict[str, Any]:
        result: dict[str, Any] = call(tools.note, text, tags=tags)
        return result

    def memory_context(
        max_tokens: int = Field(2000, description="token budget for the whole context"),
    ) -> str:
        result: str = call(tools.context, max_tokens=max_tokens)
        return result

    read_only = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
    server.add_tool(memory_search, description=SEARCH_DESCRIPTION, annotations=read_only)
    server.add_tool(memory_get, description=GET_DESCRIPTION, annotations=read_only)
    server.add_tool(
        memory_note,
        description=NOTE_DESCRIPTION,
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False),
    )
    server.add_tool(memory_context, description=CONTEXT_DESCRIPTION, annotations=read_only)
    return server, tools


def serve(config: Config, chat: Chat) -> None:
    """Run the server on stdin/stdout until the client closes it."""
    server, tools = build_server(config, chat)
    try:
        server.run("stdio")
    finally:
        tools.close()
