"""A tiny OpenAI-compatible server for tests and benchmarks on 127.0.0.1: ``POST /v1/chat/completions``
and ``POST /v1/embeddings``.

Every request body is recorded (``server.bodies``, ``server.requests``). Replies are scripted, one
per request, from a queue; when the queue is empty the default reply is used::

    with LLMServer() as server:
        server.push(json_reply({"insights": []}))      # canned JSON
        server.push(Reply(content="not json"))          # malformed output
        server.push(Reply(delay=2.0))                   # slower than the client's timeout
        server.push(Reply(hold=event))                  # no answer until the test sets ``event``
        server.push(Reply(status=500))                  # an HTTP error
        server.default = Reply(responder=lambda request: ...)  # computed from the request
        settings = LLMConfig(base_url=server.base_url, model="test-model")

``usage`` in each reply is estimated from the request and reply text (vault_tools.tokens).

Embeddings are deterministic: every phrase of ``server.concepts`` in a text is replaced by its
concept (so "kitten" and "小猫" can mean the same), then each word (a CJK character counts as one)
is hashed to one of ``server.dimensions`` axes, and the counts are the vector. Bodies go to ``server.embedding_bodies``
(parsed: ``server.embedding_requests``); scripted replies to ``server.push_embeddings``
(``Reply(status=...)``, ``Reply(delay=...)``, ``Reply(hold=...)``, ``Reply(body={...})`` for garbage).
``server.embedder`` replaces the built-in vectors (a real model in ``bench/embeddings_bench.py``).
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from vault_tools.tokens import count_tokens

Responder = Callable[[dict[str, Any]], str]
WORD = re.compile(r"[a-z0-9]+|[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


@dataclass
class Reply:
    """One scripted reply: a status, the assistant's content (or a function of the request), a delay."""

    content: str = '{"insights": []}'
    status: int = 200
    delay: float = 0.0
    responder: Responder | None = None
    with_usage: bool = True
    hold: threading.Event | None = None  # answer only once this is set (a reply that never comes in time)
    body: object | None = None  # embeddings: send this JSON as it is (a reply out of shape)


def json_reply(data: object) -> Reply:
    return Reply(content=json.dumps(data, ensure_ascii=False))


def user_payload(request: dict[str, Any]) -> dict[str, Any]:
    """The JSON payload the heartbeat sent as the first user message."""
    for message in request.get("messages", []):
        if message.get("role") == "user":
            try:
                data = json.loads(message.get("content", ""))
            except ValueError:
                continue
            if isinstance(data, dict):
                return data
    return {}


class LLMServer:
    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.default = Reply()
        self.bodies: list[str] = []
        self.requests: list[dict[str, Any]] = []
        self.embedding_replies: deque[Reply] = deque()
        self.embedding_bodies: list[str] = []
        self.embedding_requests: list[dict[str, Any]] = []
        self.concepts: dict[str, str] = {}
        self.dimensions = 1024
        self.embedder: Callable[[list[str]], list[list[float]]] | None = None
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._server.block_on_close = False
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05})
        self._thread.daemon = True

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def push(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    def push_embeddings(self, *replies: Reply) -> None:
        self.embedding_replies.extend(replies)

    def embedded_texts(self) -> list[str]:
        """Every text sent for embedding so far, in order."""
        texts: list[str] = []
        for request in list(self.embedding_requests):
            value = request.get("input", [])
            texts += [value] if isinstance(value, str) else [str(v) for v in value]
        return texts

    def vector(self, text: str) -> list[float]:
        """The built-in deterministic vector of ``text`` (see the module docstring)."""
        vector = [0.0] * self.dimensions
        text = text.lower()
        for phrase in sorted(self.concepts, key=len, reverse=True):
            text = text.replace(phrase.lower(), f" {self.concepts[phrase]} ")
        for word in WORD.findall(text):
            axis = int.from_bytes(hashlib.sha256(word.encode()).digest()[:4], "big") % self.dimensions
            vector[axis] += 1.0
        return vector if any(vector) else [1.0] + [0.0] * (self.dimensions - 1)

    def next_embedding_reply(self, body: str) -> tuple[Reply | None, dict[str, Any]]:
        with self._lock:
            self.embedding_bodies.append(body)
            try:
                request = json.loads(body)
            except ValueError:
                request = {}
            self.embedding_requests.append(request)
            return (self.embedding_replies.popleft() if self.embedding_replies else None), request

    def embeddings_answer(self, body: str) -> tuple[int, object]:
        """(status, JSON) for one embeddings request: the next scripted reply, else the vectors."""
        reply, request = self.next_embedding_reply(body)
        if reply is None:
            return 200, self.embeddings(request)
        if reply.delay:
            time.sleep(reply.delay)
        if reply.hold is not None:
            reply.hold.wait()
        if reply.status != 200:
            return reply.status, {"error": {"message": "scripted failure"}}
        return 200, reply.body if reply.body is not None else self.embeddings(request)

    def embeddings(self, request: dict[str, Any]) -> dict[str, Any]:
        value = request.get("input", [])
        texts = [value] if isinstance(value, str) else [str(v) for v in value]
        vectors = self.embedder(texts) if self.embedder is not None else [self.vector(t) for t in texts]
        return {
            "object": "list",
            "model": request.get("model", "test-embedding"),
            "data": [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)],
            "usage": {"prompt_tokens": len(texts), "total_tokens": len(texts)},
        }

    def start(self) -> LLMServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> LLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def next_reply(self, body: str) -> Reply:
        with self._lock:
            self.bodies.append(body)
            try:
                request = json.loads(body)
            except ValueError:
                request = {}
            self.requests.append(request)
            return self.replies.popleft() if self.replies else self.default

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length).decode("utf-8")
                if self.path.rstrip("/").endswith("/embeddings"):
                    self.answer_embeddings(body)
                    return
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self.send_json(404, {"error": {"message": f"no route {self.path}"}})
                    return
                reply = server.next_reply(body)
                if reply.delay:
                    time.sleep(reply.delay)
                if reply.hold is not None:
                    reply.hold.wait()
                if reply.status != 200:
                    self.send_json(
                        reply.status, {"error": {"message": "scripted failure", "type": "server_error"}}
                    )
                    return
                request = server.requests[-1]
                content = reply.responder(request) if reply.responder else reply.content
                self.send_json(200, completion(request, content, reply.with_usage))

            def answer_embeddings(self, body: str) -> None:
                self.send_json(*server.embeddings_answer(body))

            def send_json(self, status: int, data: object) -> None:
                payload = json.dumps(data, ensure_ascii=False).encode("utf-8")
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

        return Handler


def completion(request: dict[str, Any], content: str, with_usage: bool) -> dict[str, Any]:
    prompt = sum(count_tokens(str(m.get("content", ""))) + 4 for m in request.get("messages", []))
    done = count_tokens(content)
    reply: dict[str, Any] = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.get("model", "test-model"),
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
        ],
    }
    if with_usage:
        reply["usage"] = {"prompt_tokens": prompt, "completion_tokens": done, "total_tokens": prompt + done}
    return reply
