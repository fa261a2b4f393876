"""embeddings: what may be sent, the requests through the openai client, and replies out of shape."""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from llm_server import LLMServer, Reply

from vault_tools.config import EmbeddingsConfig, load_config
from vault_tools.vectors.embeddings import Embedder, EmbeddingError, is_loopback, normalised, sendable_text


@pytest.fixture
def server() -> Iterator[LLMServer]:
    with LLMServer() as running:
        yield running


def settings_for(server: LLMServer, **extra: object) -> EmbeddingsConfig:
    return EmbeddingsConfig(model="test-embedding", base_url=server.base_url, **extra)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("url", "loopback"),
    [
        ("http://127.0.0.1:11434/v1", True),
        ("http://127.8.9.10/v1", True),
        ("http://localhost:8080/v1", True),
        ("http://[::1]:8080/v1", True),
        ("http://192.168.1.5:11434/v1", False),
        ("https://api.openai.com/v1", False),
        ("http://localhost.example.com/v1", False),
        (None, False),
    ],
)
def test_loopback_is_only_this_machine(url: str | None, loopback: bool) -> None:
    assert is_loopback(url) is loopback


def test_private_entries_are_never_sent_unless_a_loopback_endpoint_is_allowed_them() -> None:
    local = EmbeddingsConfig(model="m", base_url="http://127.0.0.1:9/v1")
    remote = EmbeddingsConfig(model="m", base_url="https://embeddings.example.com/v1", send_private=True)
    assert sendable_text("diary line", "private", local) is None
    assert sendable_text("diary line", "private", remote) is None  # send_private needs loopback
    assert sendable_text("diary line", "private", EmbeddingsConfig(model="m", send_private=True)) is None
    allowed = EmbeddingsConfig(model="m", base_url="http://127.0.0.1:9/v1", send_private=True)
    assert sendable_text("diary line", "private", allowed) == "diary line"
    assert sendable_text("anything", "secretive", allowed) is None  # unknown visibility: default deny
    assert sendable_text("team standup", "shared", remote) == "team standup"


def test_secrets_and_sensitive_values_are_redacted_before_sending() -> None:
    settings = EmbeddingsConfig(model="m")
    text = sendable_text(
        "deploy key sk-proj-abcdefghijklmnopqrstuvwxyz012345 and card 4111 1111 1111 1111",
        "personal",
        settings,
    )
    assert text is not None
    assert "sk-proj" not in text and "4111" not in text and "[REDACTED:" in text


def test_sensitive_details_go_as_written_only_to_an_endpoint_on_this_machine() -> None:
    text = "Allergic to penicillin; card 4111 1111 1111 1111; password: hunter2hunter2"
    local = EmbeddingsConfig(model="m", base_url="http://127.0.0.1:11434/v1", send_private=True)
    remote = EmbeddingsConfig(model="m", base_url="https://embeddings.example.com/v1")
    here = sendable_text(text, "personal", local)
    assert here is not None and "penicillin" in here and "4111" in here
    assert "hunter2" not in here and "[REDACTED:" in here  # a secret goes to no model
    away = sendable_text(text, "personal", remote)
    assert away is not None and "penicillin" not in away and "4111" not in away and "hunter2" not in away
    private = sendable_text(text, "private", local)  # allowed there, but redacted in full
    assert private is not None and "penicillin" not in private and "4111" not in private


def test_the_question_goes_as_written_to_an_endpoint_on_this_machine(server: LLMServer) -> None:
    with Embedder(settings_for(server)) as embedder:
        embedder.embed_query("which antibiotics, penicillin too? password: hunter2hunter2")
    assert "penicillin" in server.embedding_bodies[0] and "hunter2" not in server.embedding_bodies[0]


def test_vectors_come_back_in_order_and_of_unit_length(server: LLMServer) -> None:
    with Embedder(settings_for(server)) as embedder:
        first, second = embedder.embed(["kitten on the sofa", "quarterly budget"])
    assert math.isclose(sum(x * x for x in first), 1.0, rel_tol=1e-9)
    assert first == normalised(server.vector("kitten on the sofa"))
    assert second == normalised(server.vector("quarterly budget"))
    [request] = server.embedding_requests
    assert request["model"] == "test-embedding" and request["encoding_format"] == "float"
    assert request["input"] == ["kitten on the sofa", "quarterly budget"]


def test_the_query_is_redacted_too(server: LLMServer) -> None:
    with Embedder(settings_for(server)) as embedder:
        embedder.embed_query("what did I do with password: hunter2hunter2 ?")
    assert "hunter2" not in server.embedding_bodies[0]


def test_the_api_key_comes_from_the_named_variable(tmp_path: Path) -> None:
    state = tmp_path / "v" / ".vault-tools"
    state.mkdir(parents=True)
    (state / "config.toml").write_text(
        '[embeddings]\nmodel = "m"\napi_key_env = "MY_EMBED_KEY"\napi_key = "in-the-file"\n', encoding="utf-8"
    )
    config = load_config(tmp_path / "v", env={"MY_EMBED_KEY": "from-env", "OPENAI_API_KEY": "other"})
    assert config.embeddings.api_key == "from-env"
    assert any("embeddings.api_key is ignored" in w for w in config.warnings)
    assert load_config(tmp_path / "v", env={}).embeddings.api_key is None


@pytest.mark.parametrize(
    ("reply", "said"),
    [
        (Reply(status=500), "HTTP 500"),
        (Reply(body={"data": "nope"}), "vectors for 1 texts"),
        (Reply(body={"object": "list", "data": [{"index": 0, "embedding": ["a", "b"]}]}), "not a vector"),
        (Reply(body={"object": "list", "data": [{"index": 0, "embedding": []}]}), "not a vector"),
        (Reply(body={"object": "list", "data": [{"index": 3, "embedding": [1.0]}]}), "out of order"),
        (Reply(body=["not", "an", "object"]), "no vectors for 1 texts"),
    ],
)
def test_a_reply_out_of_shape_is_an_embedding_error(server: LLMServer, reply: Reply, said: str) -> None:
    server.push_embeddings(reply)
    with Embedder(settings_for(server)) as embedder, pytest.raises(EmbeddingError, match=said):
        embedder.embed(["one text"])


def test_vectors_of_different_lengths_are_refused(server: LLMServer) -> None:
    data = [{"index": 0, "embedding": [1.0, 0.0]}, {"index": 1, "embedding": [1.0]}]
    server.push_embeddings(Reply(body={"object": "list", "data": data}))
    with Embedder(settings_for(server)) as embedder, pytest.raises(EmbeddingError, match="different lengths"):
        embedder.embed(["a", "b"])


def test_a_slow_endpoint_times_out_at_the_query_limit(server: LLMServer) -> None:
    held = threading.Event()
    server.push_embeddings(Reply(hold=held))
    settings = settings_for(server, query_timeout_seconds=0.2, timeout_seconds=60.0)
    try:
        with Embedder(settings) as embedder, pytest.raises(EmbeddingError, match=r"within 0.2 s"):
            embedder.embed_query("anything")
    finally:
        held.set()


def test_a_down_endpoint_is_an_embedding_error(server: LLMServer) -> None:
    url = server.base_url
    server.stop()
    settings = EmbeddingsConfig(model="m", base_url=url)
    with Embedder(settings) as embedder, pytest.raises(EmbeddingError, match="could not be reached"):
        embedder.embed(["x"])
