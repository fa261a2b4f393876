"""The recall service: a running watcher answers ``recall`` and ``context`` over a Unix socket.

Why. A fresh ``vault-tools recall`` process pays for importing Whoosh and opening the index
(half a second at 100k entries) before it searches, and an agent pays that on every call. The
watcher already keeps the index current, so it also keeps a warm searcher and answers on
``.vault-tools/recall.sock``. The CLI tries the socket first: Python's start-up, a connect and a
warm search. With no watcher, a stale socket, another version or another recall
configuration, :func:`ask` returns None and the CLI does the same work in-process: the answer
is the same, only slower. With nobody serving at all, the CLI then starts a watcher that exits
when idle (:func:`start_in_background`), so the calls after it are served.

Protocol. One request per connection, one JSON line each way. The request carries everything
the answer depends on, resolved by the client (its ``--chat`` or ``$VAULT_TOOLS_CHAT``, its
limits, its "today"), plus a :func:`settings_key` of what is left in the configuration (the
half-life, the timezone); the server answers only when its own key is the same. The server runs
the very functions the CLI would (:meth:`vault_tools.recall.recall.Recaller.recall`,
:func:`vault_tools.agents.context.build_context`), so their checks (``--include-private`` only in a
direct chat, the privacy filter in the index query) hold for both paths. A
:class:`~vault_tools.errors.VaultError` travels back by name and is raised again in the client.

Who can connect. The socket is made 0600 (under a 0177 umask, so it is never briefly open to
others): only the vault's owner, who can read the Markdown files anyway. A socket path too long
for ``AF_UNIX`` moves to a private folder under the system's temp folder.

The client half imports only ``json``, ``os``, ``socket`` and ``time`` (and the config), so a served
call stays fast.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
from dataclasses import asdict
from pathlib import Path

from vault_tools import __version__, errors
from vault_tools.config import Config

TYPE_CHECKING = False  # typing is not imported on the client path (see config.py)
if TYPE_CHECKING:
    import socketserver
    import threading
    from collections.abc import Callable
    from typing import Any

    from vault_tools.recall.recall import Recaller

SOCKET_NAME = "recall.sock"
PROTOCOL = 1
#: macOS allows 104 bytes in an AF_UNIX path, Linux 108; one more for the terminating NUL.
MAX_SOCKET_PATH = 103
MAX_REQUEST_BYTES = 1 << 20
CONNECT_TIMEOUT = 0.5
#: A served search that takes longer than this is abandoned and run in-process instead.
ANSWER_TIMEOUT = 30.0
#: How long the service waits for a connected client's request line before it serves the next.
CLIENT_TIMEOUT = 5.0
#: How long a served recall waits for the watcher to index the edits it has seen.
SETTLE_TIMEOUT = 5.0
#: In the state folder: when recall last started a watcher, and what that watcher printed.
AUTOSTART_MARKER = "autostart"
AUTOSTART_LOG = "watch.log"
AUTOSTART_RETRY_SECONDS = 30.0

__all__ = ["RecallService", "ask", "settings_key", "socket_path", "start_in_background"]


def socket_path(config: Config) -> Path:
    """Where the watcher of ``config.vault`` listens."""
    path = config.state_dir / SOCKET_NAME
    if len(os.fsencode(path)) <= MAX_SOCKET_PATH:
        return path
    import hashlib
    import tempfile

    digest = hashlib.sha256(os.fsencode(config.vault)).hexdigest()[:20]
    return Path(tempfile.gettempdir()) / f"vault-tools-{os.getuid()}" / f"{digest}.sock"


def settings_key(config: Config) -> dict[str, Any]:
    """What an answer depends on besides the request: the server must have the same."""
    recall = asdict(config.recall)
    for resolved_by_client in ("chat", "limit", "max_tokens", "service", "autostart_minutes"):
        recall.pop(resolved_by_client)
    key = {"vault": str(config.vault), "timezone": config.timezone, "recall": recall}
    if config.embeddings.configured:  # the key itself stays out: the socket says only which variable
        key["embeddings"] = {k: v for k, v in asdict(config.embeddings).items() if k != "api_key"}
    return key


# ---------------------------------------------------------------------------------------------
# Client


def ask(config: Config, op: str, params: dict[str, Any]) -> dict[str, Any] | None:
    """The watcher's answer to ``op`` (``recall`` or ``context``), or None: do it in-process.

    An answer is ``{"result": <the --json document>, "text": <the human output>, "warnings":
    [...]}``. A VaultError the server raised is raised here again.
    """
    if not hasattr(socket, "AF_UNIX"):
        return None
    request = {
        "protocol": PROTOCOL,
        "version": __version__,
        "settings": settings_key(config),
        "op": op,
        "params": params,
    }
    reply = _exchange(socket_path(config), json.dumps(request, ensure_ascii=False).encode())
    if reply is None or not isinstance(reply, dict):
        return None
    if "error" in reply:
        raise _error_from(reply["error"])
    answer = reply.get("answer")
    return answer if isinstance(answer, dict) else None


def _exchange(path: Path, payload: bytes) -> Any:
    """Send one request line and read one reply line; None when nobody answers properly."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(CONNECT_TIMEOUT)
            conn.connect(os.fspath(path))
            conn.settimeout(ANSWER_TIMEOUT)
            conn.sendall(payload + b"\n")
            conn.shutdown(socket.SHUT_WR)
            chunks = []
            while chunk := conn.recv(1 << 16):
                chunks.append(chunk)
        return json.loads(b"".join(chunks))
    except (OSError, ValueError):  # no socket, refused (a dead watcher), timeout, garbled reply
        return None


def _error_from(error: Any) -> errors.VaultError:
    kind = getattr(errors, str(error.get("kind", "")), None) if isinstance(error, dict) else None
    message = str(error.get("message", error)) if isinstance(error, dict) else str(error)
    if isinstance(kind, type) and issubclass(kind, errors.VaultError):
        return kind(message)
    return errors.VaultError(message)


# ---------------------------------------------------------------------------------------------
# Starting one


def start_in_background(config: Config) -> int | None:
    """Start a watcher that serves the next calls and exits when idle; its pid, or None.

    What ``recall`` and ``context`` do after answering in-process with nobody serving, as Watchman
    and ``ssh``'s ControlPersist do: the first call pays the full price and starts the server,
    the following ones are served. The watcher exits after ``[recall] autostart_minutes``
    without a request (or when its vault is gone), and an explicit ``vault-tools watch`` takes
    over from it. Nothing is started when that setting is 0 (``$VAULT_TOOLS_AUTOSTART=off``),
    the service is off, a watcher already holds the watch lock (another version, another
    configuration, ``--no-serve``: it is not ours to replace), or a start was tried in the last
    :data:`AUTOSTART_RETRY_SECONDS` (it is still warming up, or it cannot start: see its log).
    """
    minutes = config.recall.autostart_minutes
    if not config.recall.service or minutes <= 0 or not hasattr(socket, "AF_UNIX"):
        return None
    marker = config.state_dir / AUTOSTART_MARKER
    if _recent(marker):
        return None
    from vault_tools import locks

    try:
        watching = locks.try_hold(config, locks.WATCH_LOCK, what="checking for a watcher")
        if watching is None:
            return None
        try:
            # Checked and written under the lock: of several first calls at once, one starts it.
            if _recent(marker):
                return None
            marker.write_text(f"{time.time()}\n", encoding="utf-8")
        finally:
            watching.release()
        return _spawn_watcher(config, idle_seconds=minutes * 60)
    except OSError:  # a read-only vault: a watcher could not write its index either
        return None


def _recent(marker: Path) -> bool:
    try:
        return abs(time.time() - marker.stat().st_mtime) < AUTOSTART_RETRY_SECONDS
    except OSError:
        return False


def _spawn_watcher(config: Config, *, idle_seconds: float) -> int:
    import subprocess
    import sys
    import threading

    command = [sys.executable, "-m", "vault_tools", "watch", "--vault", os.fspath(config.vault)]
    command += ["--idle-exit", f"{idle_seconds:g}"]
    with open(config.state_dir / AUTOSTART_LOG, "wb") as log:
        # Its own session and no inherited descriptors: a caller reading our stdout to EOF
        # must not wait for the watcher, and the caller's Ctrl-C or hang-up must not reach it.
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=os.sep,
            start_new_session=True,
        )
    # Reaped by a daemon thread, so a long-lived caller leaves no zombie (a CLI exits first).
    threading.Thread(target=process.wait, name="vault-tools-reap-watcher", daemon=True).start()
    return process.pid


# ---------------------------------------------------------------------------------------------
# Server


class RecallService:
    """Answers requests on :func:`socket_path` from a thread of its own, with a warm Recaller.

    ``start()`` binds and serves (False, with the reason logged, when the socket cannot be
    made: the watcher works on without it); ``stop()`` shuts down and removes the socket.
    """

    def __init__(
        self,
        config: Config,
        settle: Callable[[float], str | None] | None = None,
        *,
        client_timeout: float = CLIENT_TIMEOUT,
    ) -> None:
        import threading

        self.config = config
        #: The watcher's wait_indexed: wait for the edits it saw to be indexed; why not, if not.
        self._settle = settle
        self.client_timeout = client_timeout
        self.path = socket_path(config)
        self._key = settings_key(config)
        self._server: socketserver.UnixStreamServer | None = None
        self._thread: threading.Thread | None = None
        self._recaller: Recaller | None = None
        self._stopping = threading.Event()
        #: Guards the hand-over between a stop() and the serving thread's start of serve_forever().
        self._serving_lock = threading.Lock()
        self._serving = False
        self._last_request = time.monotonic()

    def idle_for(self) -> float:
        """Seconds since the last request reached the socket (or since the service was made)."""
        return time.monotonic() - self._last_request

    def start(self) -> bool:
        import logging
        import threading

        try:
            self._server = self._bind()
        except OSError as exc:
            if not self.config.vault.is_dir():
                return False  # the vault was deleted: the watcher says so, once, and exits
            logging.getLogger("vault_tools.watch.service").warning(
                "%s: could not listen for recall requests (%s); recall runs in-process instead",
                self.path,
                exc.strerror or exc,
            )
            return False
        self._thread = threading.Thread(
            target=self._serve, args=(self._server,), name="vault-tools-recall-service", daemon=True
        )
        self._thread.start()
        return True

    def _bind(self) -> socketserver.UnixStreamServer:
        import socketserver

        service = self

        class Handler(socketserver.StreamRequestHandler):
            timeout = service.client_timeout  # a client that says nothing does not hold up the rest

            def handle(self) -> None:
                line = self.rfile.readline(MAX_REQUEST_BYTES)
                self.wfile.write(json.dumps(service.reply(line), ensure_ascii=False).encode() + b"\n")

        if self.path.parent == self.config.state_dir:
            self.config.make_state_dir()  # never the vault itself: a deleted vault stays deleted
        else:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()  # a socket a killed watcher left: we hold the watch lock now
        old_umask = os.umask(0o177)
        try:
            server = socketserver.UnixStreamServer(os.fspath(self.path), Handler)
        finally:
            os.umask(old_umask)
        os.chmod(self.path, 0o600)
        return server

    def _serve(self, server: socketserver.UnixStreamServer) -> None:
        # The server is passed in: stop() may already have cleared self._server.
        if not self._stopping.is_set():
            self._warm_up()
        with self._serving_lock:
            if self._stopping.is_set():
                return  # stopped during the warm-up: stop() did not wait for serve_forever()
            self._serving = True
        server.serve_forever(poll_interval=0.2)

    def _warm_up(self) -> None:
        """Import Whoosh and open the searcher now, not on the first agent's call."""
        try:
            self.recaller().recall("warm up")
        except Exception:  # a broken index is healed, and reported, on first real use
            return

    def recaller(self) -> Recaller:
        if self._recaller is None:
            from vault_tools.recall.recall import Recaller

            self._recaller = Recaller(self.config, catch_up="never")  # the watcher keeps it current
        return self._recaller

    def stop(self) -> None:
        self._stopping.set()
        server, self._server = self._server, None
        if server is None:
            return
        with self._serving_lock:
            serving = self._serving
        if serving:
            # returns once serve_forever() has seen the request; without serve_forever() running it
            # would wait for ever, so a stop during the warm-up (which may be opening or healing the
            # index of a vault being deleted) does not call it
            server.shutdown()
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5.0)
        if self._recaller is not None and not (self._thread is not None and self._thread.is_alive()):
            self._recaller.close()  # not under a warm-up still running: the daemon thread ends with it
            self._recaller = None
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    # -- answering ----------------------------------------------------------------------------

    def reply(self, line: bytes) -> dict[str, Any]:
        """The reply to one request line: ``{"answer": ...}``, ``{"error": ...}`` or ``{}`` (decline)."""
        self._last_request = time.monotonic()
        try:
            request = json.loads(line)
        except ValueError:
            return {}
        if not isinstance(request, dict) or not self._accepts(request):
            return {}
        params = request.get("params")
        try:
            if request.get("op") == "recall" and isinstance(params, dict):
                return {"answer": self.recall(params)}
            if request.get("op") == "context" and isinstance(params, dict):
                return {"answer": self.context(params)}
        except errors.VaultError as exc:
            return {"error": {"kind": type(exc).__name__, "message": str(exc)}}
        except Exception:  # a bug, or a request this version reads differently: the CLI runs it
            import logging

            logging.getLogger("vault_tools.watch.service").exception("recall request failed; declined")
            if self._recaller is not None:
                self._recaller.close()  # the next request opens a fresh searcher
                self._recaller = None
        return {}

    def _accepts(self, request: dict[str, Any]) -> bool:
        return (
            request.get("protocol") == PROTOCOL
            and request.get("version") == __version__
            and request.get("settings") == self._key
        )

    def recall(self, params: dict[str, Any]) -> dict[str, Any]:
        import datetime as dt

        style = params.pop("render", {})
        as_of = params.pop("as_of", None)
        unsettled = self._settle(SETTLE_TIMEOUT) if self._settle is not None else None
        result = self.recaller().recall(**params, as_of=dt.date.fromisoformat(as_of) if as_of else None)
        if unsettled:
            result.stale = True
            result.warnings.append(f"results may be stale: {unsettled}")
        text = result.render(color=bool(style.get("color")), explain=bool(params.get("explain")))
        return {"result": result.to_dict(), "text": text, "warnings": list(result.warnings)}

    def context(self, params: dict[str, Any]) -> dict[str, Any]:
        import datetime as dt

        from vault_tools.agents.context import build_context

        as_of = params.pop("as_of", None)
        result = build_context(self.config, **params, as_of=dt.date.fromisoformat(as_of) if as_of else None)
        return {"result": result.to_dict(), "text": result.render(), "warnings": list(result.warnings)}
