"""Property-based privacy suite: generated vaults with every visibility and sensitivity, quoted queries.

Asserts, over many generated vaults: a group/unknown chat never sees anything personal (recall,
context, MCP tools); a direct chat never sees ``#private`` without ``include_private``; a heartbeat
never writes a secret into MEMORY.md; no LLM request body carries a secret, a sensitive value or a
``#private`` entry. ``VAULT_TOOLS_LONG=1`` raises the example counts.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import itertools
import os
import random
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st
from llm_server import LLMServer, Reply, user_payload

from vault_tools.agents.context import build_context
from vault_tools.agents.mcp import MemoryTools, RefusedError
from vault_tools.config import Config, LLMConfig, load_config
from vault_tools.heartbeat import run as heartbeat
from vault_tools.heartbeat.run import Options
from vault_tools.index.index import Index
from vault_tools.privacy import sensitive as detect
from vault_tools.recall.recall import Recaller, recall

LONG = os.environ.get("VAULT_TOOLS_LONG") == "1"
# Examples per property test: the suite's derandomised run (each also checks every combination
# first, see EVERY_SPEC), or the scheduled long run's random exploration.
READ_EXAMPLES = 500 if LONG else 50
BEAT_EXAMPLES = 150 if LONG else 25
DIRECT_EXAMPLES = 300 if LONG else 30
AS_OF = dt.date(2026, 12, 1)
HUMAN = ["-c", "user.name=Lin", "-c", "user.email=lin@example.com", "-c", "commit.gpgsign=false"]
PHASES = [Phase.explicit, Phase.reuse, Phase.generate] + ([Phase.shrink] if LONG else [])

SENSITIVE_KINDS = ["none", "secret", "credential", "phone", "government_id", "health", "card"]
SECRET_KINDS = {"secret", "credential"}
HEALTH = ["diagnosed with type 2 diabetes", "allergic to penicillin", "takes 20 mg of lisinopril daily"]
TOPICS = ["decided", "prefer", "lesson", "meeting", "plan", "always"]


@dataclass(frozen=True)
class Spec:
    place: str  # "daily" (personal note), "shared_note" (visibility: shared), "memory" (MEMORY.md)
    marker: str  # "#private", "#shared" or ""
    kind: str
    remember: bool
    topic: str


@dataclass
class Made:
    spec: Spec
    token: str  # unique word in the entry
    value: str  # the sensitive value ("" when none)
    line: str

    @property
    def private(self) -> bool:
        return self.spec.marker == "#private"

    @property
    def group_visible(self) -> bool:
        if self.spec.place == "memory" or self.private:
            return False
        return self.spec.place == "shared_note" or self.spec.marker == "#shared"


specs = st.builds(
    Spec,
    place=st.sampled_from(["daily", "shared_note", "memory"]),
    marker=st.sampled_from(["#private", "#shared", ""]),
    kind=st.sampled_from(SENSITIVE_KINDS),
    remember=st.booleans(),
    topic=st.sampled_from(TOPICS),
)


def _letters(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("bcdfghjklmnpqrstvwxz") for _ in range(n))


def _alnum(rng: random.Random, n: int) -> str:
    alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789"
    while True:
        value = "".join(rng.choice(alphabet) for _ in range(n))
        if (
            any(c.isdigit() for c in value)
            and any(c.isupper() for c in value)
            and any(c.islower() for c in value)
        ):
            return value


def _luhn_card(rng: random.Random) -> str:
    digits = [4] + [rng.randrange(10) for _ in range(14)]
    total = 0
    for i, d in enumerate(reversed(digits)):
        d = d * 2 if i % 2 == 0 else d
        total += d - 9 if d > 9 else d
    digits.append((10 - total % 10) % 10)
    s = "".join(map(str, digits))
    return " ".join(s[i : i + 4] for i in range(0, 16, 4))


def sensitive(kind: str, rng: random.Random) -> tuple[str, str]:
    """(phrase to put in the entry, the value that must not leak)."""
    if kind == "secret":
        value = rng.choice(["sk-proj-", "ghp_"]) + _alnum(rng, 40)
        return f"the staging key is {value}", value
    if kind == "credential":
        value = _letters(rng, 5) + str(rng.randrange(100, 999)) + "!"
        return f"password: {value}", value
    if kind == "phone":
        value = f"555-{rng.randrange(200, 999)}-{rng.randrange(1000, 9999)}"
        return f"call {value}", value
    if kind == "government_id":
        value = f"{rng.randrange(100, 665)}-{rng.randrange(10, 99)}-{rng.randrange(1000, 9999)}"
        return f"SSN {value}", value
    if kind == "health":
        value = rng.choice(HEALTH)
        term = next(w for w in ("diabetes", "penicillin", "lisinopril") if w in value)
        return f"Sam was {value}" if value.startswith("diag") else f"Sam {value}", term
    if kind == "card":
        value = _luhn_card(rng)
        return f"visa {value}", value
    return "", ""


def make(specs_: list[Spec], seed: int) -> list[Made]:
    rng = random.Random(seed)
    made = []
    for i, spec in enumerate(specs_):
        token = "zq" + _letters(rng, 6) + "abcdefghij"[i % 10]
        phrase, value = sensitive(spec.kind, rng)
        if value:
            found = detect.find_sensitive(phrase)
            assert found, f"generator sanity: {phrase!r} must be detected"
        words = [f"I {spec.topic}", token, phrase]
        if spec.remember:
            words.append("#remember")
        if spec.marker:
            words.append(spec.marker)
        text = " ".join(w for w in words if w)
        if spec.place == "memory":
            line = f"- 2026-11-{10 + i % 10:02d}: {text} [importance:: 0.8]"
        else:
            line = f"- {9 + i % 10:02d}:00 {text}"
        made.append(Made(spec, token, value, line))
    return made


def write_vault(root: Path, made: list[Made]) -> Config:
    (root / "memory").mkdir(parents=True)
    memory = [m.line for m in made if m.spec.place == "memory"]
    (root / "MEMORY.md").write_text("# Long-term memory\n\n## Facts\n\n" + "\n".join(memory) + "\n")
    daily = [m.line for m in made if m.spec.place == "daily"]
    (root / "memory" / "2026-12-01.md").write_text("---\ndate: 2026-12-01\n---\n" + "\n".join(daily) + "\n")
    shared = [m.line for m in made if m.spec.place == "shared_note"]
    (root / "memory" / "2026-11-30.md").write_text(
        "---\ndate: 2026-11-30\nvisibility: shared\n---\n" + "\n".join(shared) + "\n"
    )
    return load_config(root, env={})


def leaks(text: str, hidden: list[Made]) -> list[str]:
    # health terms repeat across entries: only their unique token counts
    values = [m.value for m in hidden if m.value and m.spec.kind != "health" and m.value in text]
    return [m.token for m in hidden if m.token in text] + values


def texts(doc: dict[str, Any]) -> str:
    return "\n".join(str(r["text"]) for r in doc["results"])


entry_lists = st.lists(specs, min_size=1, max_size=12)

#: One entry of every place x marker x kind x #remember: the example every read-path run checks
#: first, so no combination is left to chance.
EVERY_SPEC = [
    Spec(place, marker, kind, remember, TOPICS[i % len(TOPICS)])
    for i, (place, marker, kind, remember) in enumerate(
        itertools.product(
            ["daily", "shared_note", "memory"], ["#private", "#shared", ""], SENSITIVE_KINDS, [False, True]
        )
    )
]


@settings(
    max_examples=READ_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
    phases=PHASES,
)
@given(specs_=entry_lists, seed=st.integers(0, 2**32))
def test_read_paths_never_leak(
    tmp_path_factory: pytest.TempPathFactory, specs_: list[Spec], seed: int
) -> None:
    check_read_paths(tmp_path_factory.mktemp("pv") / "vault", specs_, seed)


def test_read_paths_never_leak_for_every_combination(tmp_path: Path) -> None:
    """The example with one entry of each combination (EVERY_SPEC), on its own: it is a fifth of
    the property's time, and apart the two fit the per-test timeout on a loaded machine."""
    check_read_paths(tmp_path / "vault", EVERY_SPEC, 1)


def check_read_paths(vault: Path, specs_: list[Spec], seed: int) -> None:
    made = make(specs_, seed)
    config = write_vault(vault, made)
    Index(config).rebuild()
    not_group = [m for m in made if not m.group_visible]
    private = [m for m in made if m.private]
    queries = ["zq", "#private", "#remember", "password", "SSN", "call", "key"]
    for m in made:
        queries += [m.token, m.line.lstrip("- "), f"{m.spec.topic} {m.token}"]
        if m.value:
            queries.append(m.value)
    tools = {chat: MemoryTools(config, chat) for chat in ("group", "unknown", "direct")}
    session = Recaller(config, catch_up="never")  # recall() without its per-call catch-up
    group_found: dict[str, str] = {}
    try:
        for query in dict.fromkeys(queries):  # a value (a health term) repeats: asked once
            for chat in ("group", "unknown"):
                result = session.recall(query, chat=chat, as_of=AS_OF, limit=50)
                text = "\n".join(h.text for h in result.results)
                assert not leaks(text, not_group), (chat, query)
                assert all(h.path != "MEMORY.md" for h in result.results)
                if chat == "group":
                    group_found[query] = text
        for m in made:  # and a group sees what is shared: the rules do not simply hide everything
            if m.group_visible:  # (its token was asked above, in the group chat)
                assert m.token in group_found[m.token], m.line
        # include_private opens them to the owner, and only then
        for m in private:
            owner = recall(config, m.token, chat="direct", as_of=AS_OF, limit=50, include_private=True)
            assert any(m.token in h.text for h in owner.results), m.line
        for chat in ("group", "unknown"):
            assert not leaks(
                build_context(config, chat=chat, as_of=AS_OF, max_tokens=8000).render(), not_group
            )
            assert not leaks(tools[chat].context(max_tokens=8000), not_group)
            for rel in ("MEMORY.md", "memory/2026-12-01.md", "memory/2026-11-30.md"):
                try:
                    got = tools[chat].get(rel).text
                except RefusedError:
                    continue
                assert not leaks(got, not_group), (chat, rel)
            for m in made:
                doc = tools[chat].search(m.token, limit=50)
                assert not leaks(texts(doc), not_group), (chat, m.line)
        assert not leaks(build_context(config, chat="direct", as_of=AS_OF, max_tokens=8000).render(), private)
    finally:
        session.close()
        for t in tools.values():
            t.close()


KNOWN_LEAK = [
    Spec("memory", "#private", "phone", False, "decided"),
    Spec("shared_note", "#private", "phone", True, "lesson"),
    Spec("memory", "", "none", False, "plan"),
]


# Regression: Whoosh's AndNot let the first match through when it was #private (filters.and_not).
# Recall scores keywords with the block scorer, which never builds an AndNot, so each path that
# does is asked too: the filters themselves, a browse (no keywords), and keyword recall scored by
# Whoosh's own matchers (what an index that is not plain BM25F gets).
@pytest.mark.parametrize("limit", [1, 10, 50])
@pytest.mark.parametrize("path", ["block scorer", "whoosh matchers"])
def test_direct_recall_hides_private(
    tmp_path: Path, limit: int, path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vault_tools.index.scorer import BlockScorer

    made = make(KNOWN_LEAK, 683278647)
    config = write_vault(tmp_path / "vault", made)
    Index(config).rebuild()
    private = [m for m in made if m.private]
    assert_filters_exclude_private(config, private)
    if path == "whoosh matchers":
        monkeypatch.setattr(BlockScorer, "for_searcher", classmethod(lambda cls, *a, **k: None))
    leaked = []
    for query in [m.token for m in made] + [" ".join(m.token for m in made), ""]:
        result = recall(config, query, chat="direct", as_of=AS_OF, limit=limit)
        leaked += leaks("\n".join(h.text for h in result.results), private)
        for m in made:  # the owner still finds what is not private: the filter does not hide everything
            if query and m.token in query and not m.private:
                assert any(m.token in h.text for h in result.results), (query, m.line)
        tools = MemoryTools(config, "direct")
        try:
            leaked += leaks(texts(tools.search(query, limit=limit)), private)
        finally:
            tools.close()
        # a group chat's rule is a requirement (Whoosh's Require), not an exclusion: nothing here is its
        group = recall(config, query, chat="group", as_of=AS_OF, limit=limit)
        leaked += leaks("\n".join(h.text for h in group.results), made)
    assert leaked == []


def assert_filters_exclude_private(config: Config, private: list[Made]) -> None:
    """The filters themselves, on queries whose first match is a #private entry that the
    exclusion's first document is not (where Whoosh's AndNot did not look)."""
    from whoosh.query import Every, Term

    from vault_tools.index import documents as index_documents
    from vault_tools.recall.filters import filter_query

    filters = filter_query("direct", None, None, ())
    with Index(config) as index, index.searcher() as searcher:
        excluded_first = min(h.docnum for h in searcher.search(filters.excluded, limit=None))
        queries = [Every()]
        for m in private:
            term = Term(index_documents.F_TEXT, m.token)
            first = min(h.docnum for h in searcher.search(term, limit=None))  # it is indexed
            queries.append(term)
            if first != excluded_first:
                break
        else:
            raise AssertionError("no #private entry starts after the exclusion's first document")
        for query in queries:
            for limit in (1, None):
                hits = searcher.search(filters.restrict(query), limit=limit)
                assert [
                    h for h in hits if any(m.token in h[index_documents.F_TEXT] for m in private)
                ] == [], query


@settings(
    max_examples=DIRECT_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
    phases=PHASES,
)
@given(specs_=entry_lists, seed=st.integers(0, 2**32))
@example(specs_=KNOWN_LEAK, seed=683278647)
@example(specs_=EVERY_SPEC, seed=2)
def test_direct_recall_never_shows_private(
    tmp_path_factory: pytest.TempPathFactory, specs_: list[Spec], seed: int
) -> None:
    made = make(specs_, seed)
    config = write_vault(tmp_path_factory.mktemp("pd") / "vault", made)
    Index(config).rebuild()
    private = [m for m in made if m.private]
    with Recaller(config, catch_up="never") as session:  # the index was just built
        for m in made:
            for query in (m.token, m.line.lstrip("- "), "key", "#remember"):
                result = session.recall(query, chat="direct", as_of=AS_OF, limit=50)
                assert not leaks("\n".join(h.text for h in result.results), private), query
                if query == m.token and not m.private:  # and the owner does see the rest
                    assert any(m.token in h.text for h in result.results), m.line


def git(vault: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *HUMAN, *args], cwd=vault, capture_output=True, text=True, check=True
    ).stdout


def echo_everything(request: dict[str, Any]) -> str:
    """An adversarial model: proposes every entry it was shown, verbatim, as an important fact."""
    import json

    insights = [
        {"text": e["text"], "sources": [e["id"]], "category": "fact", "importance": 1.0}
        for e in user_payload(request).get("entries", [])
    ]
    return json.dumps({"insights": insights}, ensure_ascii=False)


@settings(
    max_examples=BEAT_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
    phases=PHASES,
)
@given(
    specs_=st.lists(specs.filter(lambda s: s.place != "memory"), min_size=1, max_size=10),
    seed=st.integers(0, 2**32),
)
@example(specs_=[s for s in EVERY_SPEC if s.place != "memory"], seed=3)
@pytest.mark.timeout(180)  # 26 examples of two heartbeats each: ~25 s alone, more on a busy machine
def test_heartbeat_never_persists_or_sends_secrets(
    tmp_path_factory: pytest.TempPathFactory, specs_: list[Spec], seed: int
) -> None:
    made = make([*specs_, CONTROL], seed)
    # the positive control: a plain, salient entry of its own that every run must send and promote
    control = made[-1]
    control.line = f"- 08:00 Lin decided to book the Hangzhou offsite for 2026-12-14, ticket {control.token}"
    base = tmp_path_factory.mktemp("hb")
    with LLMServer() as server:
        server.default = Reply(responder=echo_everything)
        for mode in ("rules", "llm"):
            config = write_vault(base / mode, made)
            git(config.vault, "init", "-q")
            git(config.vault, "add", "-A")
            git(config.vault, "commit", "-qm", "notes")
            # no MEMORY.md budget: every entry the model proposes can be kept, the control too
            beat = dataclasses.replace(
                config.heartbeat, quiet_seconds=0.0, prune_max_share=1.0, budget_words_per_month=0
            )
            config = dataclasses.replace(config, heartbeat=beat)
            if mode == "llm":
                llm = LLMConfig(base_url=server.base_url, model="test-model", timeout_seconds=5.0)
                config = dataclasses.replace(config, llm=llm)
            heartbeat.run_heartbeat(config, Options(as_of=AS_OF, use_llm=mode == "llm"))
            memory = (config.vault / "MEMORY.md").read_text(encoding="utf-8")
            assert_promotions_keep_the_rules(made, memory, mode)
            if mode == "llm":  # the model proposed every entry it was sent: the control is kept
                assert control.token in memory, memory
        bodies = "\n".join(server.bodies)
    # every candidate that is not private reaches the model (its sensitive values redacted) ...
    sendable = [m.token for m in made if m.token in candidates(made) and not m.private]
    assert server.requests and [t for t in sendable if t not in bodies] == []
    # ... and nothing private and no secret is sent; every other sensitive value is sent redacted
    assert [m.token for m in made if (m.private or m.spec.kind in SECRET_KINDS) and m.token in bodies] == []
    assert [m.value for m in made if m.value and m.value in bodies] == []


CONTROL = Spec("daily", "", "none", False, "decided")


def candidates(made: list[Made]) -> list[str]:
    """The tokens of the entries a heartbeat may promote: no secret, and plain or marked #remember.

    Not a health entry's: its redaction covers the whole clause, the token too (see privacy).
    """
    return [
        m.token
        for m in made
        if m.spec.kind not in (*SECRET_KINDS, "health")
        and (m.spec.remember or (m.spec.kind == "none" and not m.private))
    ]


def assert_promotions_keep_the_rules(made: list[Made], memory: str, mode: str) -> None:
    """Each entry's unique token says whether it reached MEMORY.md, and on which lines."""
    for m in made:
        lines = [line for line in memory.splitlines() if m.token in line]
        if not lines:
            continue
        assert m.spec.kind not in SECRET_KINDS, (mode, "a secret was promoted", lines)
        assert not m.value or m.spec.remember, (mode, "unmarked sensitive entry promoted", lines)
        if m.private:  # only by consent, and it stays #private there
            assert m.spec.remember, (mode, "unmarked private entry promoted", lines)
            assert all("#private" in line for line in lines), (mode, lines)
    assert [m.value for m in made if m.spec.kind in SECRET_KINDS and m.value in memory] == [], mode


# ---------------------------------------------------------------------------------------------
# Detection: a false-positive corpus that must survive redact() untouched

FALSE_POSITIVES = [
    "no API key needed",
    "No API key needed for the local server",
    "set OPENAI_API_KEY in your env",
    "example: OPENAI_API_KEY=sk-your-key-here",
    'api_key = "YOUR_API_KEY"',
    "the docs use sk-xxxxxxxxxxxxxxxxxxxxxxxx as an example key",
    "AWS example key AKIAIOSFODNN7EXAMPLE from the AWS docs",
    "token: <your token>",
    "export GITHUB_TOKEN=ghp_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
    "the password rule: at least 12 characters",
    "we need a password manager",
    "our API is keyless",
    "tokens per minute: 90000",
    "the secret santa is on Friday",
    "Call the meeting at 10:30 in room 4",
    "the build took 1234567 ms",
    "ticket JIRA-12345",
    "see RFC 7231 section 6.5.1",
    "ratio 3.14159",
    "health check endpoint /healthz returns 200",
]


def test_false_positive_corpus_is_not_redacted() -> None:
    flagged = {text: [f.kind for f in detect.find_sensitive(text)] for text in FALSE_POSITIVES}
    changed = [text for text in FALSE_POSITIVES if detect.redact(text) != text]
    assert not changed, flagged
