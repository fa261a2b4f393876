"""Embeddings: what of an entry may go to an OpenAI-compatible embeddings endpoint, and the requests.

Privacy (DESIGN.md, privacy rule 4). An entry is sent only as :func:`sendable_text` says:
``#private`` (or ``visibility: private``) entries never, unless the endpoint is on this machine (a
loopback address) *and* ``[embeddings] send_private = true``. To an endpoint elsewhere, everything
goes through :func:`vault_tools.privacy.sensitive.redact` first (secrets, ids, card and account numbers,
phone numbers, addresses, health details become ``[REDACTED:kind]``). An endpoint on this machine
takes nothing off it: a personal or shared entry goes to it with its sensitive details as written,
or semantic recall could never find "Allergic to penicillin" for "which antibiotics should I
avoid"; only secrets are redacted (they never go to any model), and a ``#private`` entry allowed
there is redacted in full. A question is redacted as a personal entry is.
What a group chat may see is decided by the search's filters, not here: a vector never widens it.

Requests go through the ``openai`` client (``client.embeddings.create``) with ``encoding_format
= "float"`` (many local servers do not speak base64) and no retries of the client's own: the
caller decides how long it may wait (:attr:`EmbeddingsConfig.timeout_seconds` for a batch while
indexing, :attr:`EmbeddingsConfig.query_timeout_seconds` for a question). A reply that is not one
finite vector per input, all of one length, is an :class:`EmbeddingError` like a timeout.
"""

from __future__ import annotations

import ipaddress
import math
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from vault_tools.config import EmbeddingsConfig
from vault_tools.privacy import sensitive

__all__ = [
    "DEFAULT_BASE_URL",
    "RECIPE",
    "Embedder",
    "EmbeddingError",
    "is_loopback",
    "may_send",
    "normalised",
    "on_this_machine",
    "redacted",
    "sendable_text",
]

#: Bump when :func:`sendable_text` changes what is sent: every cached vector is computed again.
RECIPE = 1
#: An entry longer than this is cut before sending (small models read ~256 tokens anyway).
MAX_CHARS = 2000
DEFAULT_BASE_URL = "https://api.openai.com/v1"


class EmbeddingError(Exception):
    """The endpoint could not give the vectors: down, slow, an HTTP error or a reply out of shape."""


def is_loopback(base_url: str | None) -> bool:
    """Whether ``base_url`` names this machine (127.0.0.0/8, ::1 or ``localhost``)."""
    host = urlsplit(base_url or DEFAULT_BASE_URL).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def on_this_machine(settings: EmbeddingsConfig) -> bool:
    """Whether the configured endpoint is on this machine (what is sent to it stays here)."""
    return is_loopback(settings.base_url)


def _secrets_redacted(text: str) -> str:
    """``text`` with only its secrets (keys, passwords, tokens) replaced by ``[REDACTED:kind]``."""
    current = text
    for _round in range(16):  # a removal can expose a neighbour, as in sensitive.redact
        secrets = [f for f in sensitive.find_sensitive(current) if f.severity == "secret"]
        if not secrets:
            return current
        parts, position = [], 0
        for finding in secrets:
            parts += [current[position : finding.start], f"[REDACTED:{finding.kind}]"]
            position = finding.end
        current = "".join([*parts, current[position:]])
    return "[REDACTED:secret]" if sensitive.is_secret(current) else current


def redacted(text: str, visibility: str, settings: EmbeddingsConfig) -> str:
    """What of ``text`` may go to the endpoint (see the module docstring): secrets never; other
    sensitive details only to an endpoint on this machine, and never of a ``#private`` entry."""
    if visibility in ("personal", "shared") and on_this_machine(settings):
        return _secrets_redacted(text)
    return sensitive.redact(text)


def may_send(visibility: str, settings: EmbeddingsConfig) -> bool:
    """Whether an entry of ``visibility`` may be sent at all (private or unknown: default deny)."""
    private_allowed = visibility == "private" and settings.send_private and is_loopback(settings.base_url)
    return visibility in ("personal", "shared") or private_allowed


def sendable_text(text: str, visibility: str, settings: EmbeddingsConfig) -> str | None:
    """What is sent of an entry with ``text`` and ``visibility``; None when it stays keyword-only."""
    if not may_send(visibility, settings):
        return None
    sent = redacted(" ".join(text.split()), visibility, settings)[:MAX_CHARS]
    return sent or None


def normalised(vector: Sequence[float]) -> list[float]:
    """``vector`` scaled to length 1 (a zero vector stays zero): cosine becomes a dot product."""
    norm = math.sqrt(math.fsum(x * x for x in vector))
    return [x / norm for x in vector] if norm > 0 else [0.0 for _ in vector]


class Embedder:
    """A client of one embeddings endpoint, opened on first use; call :meth:`close` when done."""

    def __init__(self, settings: EmbeddingsConfig) -> None:
        self.settings = settings
        self._client: Any = None

    @property
    def where(self) -> str:
        return self.settings.base_url or DEFAULT_BASE_URL

    def __enter__(self) -> Embedder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            client.close()

    def _open(self) -> Any:
        if self._client is None:
            import openai

            self._client = openai.OpenAI(
                api_key=self.settings.api_key or "not-needed",
                base_url=self.where,
                timeout=self.settings.timeout_seconds,
                max_retries=0,
            )
        return self._client

    def embed(self, texts: Sequence[str], *, timeout: float | None = None) -> list[list[float]]:
        """One unit vector per text, in order; :class:`EmbeddingError` when that cannot be had."""
        if not texts:
            return []
        import openai

        wait = self.settings.timeout_seconds if timeout is None else timeout
        try:
            response = self._open().embeddings.create(
                model=self.settings.model, input=list(texts), encoding_format="float", timeout=wait
            )
        except openai.APITimeoutError:
            raise EmbeddingError(f"{self.where} did not answer within {wait:g} s") from None
        except openai.APIStatusError as exc:
            raise EmbeddingError(f"{self.where} answered HTTP {exc.status_code}") from None
        except openai.APIConnectionError:
            raise EmbeddingError(f"{self.where} could not be reached") from None
        except (openai.APIError, ValueError, TypeError, KeyError, AttributeError) as exc:
            raise EmbeddingError(f"{self.where} sent a reply that is not embeddings ({exc})") from None
        return _vectors(response, len(texts), self.where)

    def embed_query(self, query: str) -> list[float]:
        """The vector of a question (redacted first), within ``query_timeout_seconds``."""
        text = redacted(" ".join(query.split()), "personal", self.settings)[:MAX_CHARS] or query[:MAX_CHARS]
        return self.embed([text], timeout=self.settings.query_timeout_seconds)[0]


def _vectors(response: Any, count: int, where: str) -> list[list[float]]:
    """The reply's vectors in input order, checked: one per input, one length, finite numbers."""
    data = getattr(response, "data", None)
    if not isinstance(data, list) or len(data) != count:
        got = len(data) if isinstance(data, list) else "no"
        raise EmbeddingError(f"{where} sent {got} vectors for {count} texts")
    ordered: list[list[float] | None] = [None] * count
    for position, item in enumerate(data):
        index = getattr(item, "index", position)
        vector = getattr(item, "embedding", None)
        if not isinstance(index, int) or not 0 <= index < count or ordered[index] is not None:
            raise EmbeddingError(f"{where} sent vectors out of order")
        if (
            not isinstance(vector, list)
            or not vector
            or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in vector)
            or not all(math.isfinite(x) for x in vector)
        ):
            raise EmbeddingError(f"{where} sent something that is not a vector of numbers")
        ordered[index] = normalised([float(x) for x in vector])
    vectors = [v for v in ordered if v is not None]
    if len({len(v) for v in vectors}) != 1:
        raise EmbeddingError(f"{where} sent vectors of different lengths")
    return vectors
