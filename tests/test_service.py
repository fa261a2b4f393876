"""The recall service: a running watcher answers recall/context on a socket, exactly as in-process."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from helpers import wait_for, watch_in_thread, write

from vault_tools import cli
from vault_tools.config import Config, RecallConfig, load_config
from vault_tools.index.manifest import read_json
from vault_tools.index.status import watch_state_path
from vault_tools.watch import service
from vault_tools.watch.watcher import WatchOptions, run_watch

AS_OF = "2026-03-12"
FAST = WatchOptions(reconcile_seconds=3600, debounce_ms=60, max_latency_ms=600, heartbeat_seconds=0.5)

MEMORY = """# Memory

## Facts
- 2026-01-05: 对花生过敏，点餐时要提醒 [importance:: 0.9]
- 2026-02-01: Prefers the aisle seat on long flights
"""

DAY_ONE = """# 2026-03-10

- 09:30 Decided to use OAuth device flow for the CLI auth #decision
- 12:00 和小王讨论了观察者模式的实现 #shared
- 20:00 Dentist said the wisdom tooth must come out #private
"""

DAY_TWO = """# 2026-03-11

- 10:00 Deployed the billing service to staging #shared
- 18:00 去攀岩馆练了两个小时
"""

QUERIES = [
    "我对什么过敏?",
    "what did we decide about auth last week?",
    "观察者模式",
    "wisdom tooth dentist",
    "billing #shared",
    "yesterday",
    "hello!",
]


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "v"
    write(root / "MEMORY.md", MEMORY)
    write(root / "memory" / "2026-03-10.md", DAY_ONE)
    write(root / "memory" / "2026-03-11.md", DAY_TWO)
    return root


def probe(config: Config) -> dict[str, object] | None:
    return service.ask(config, "context", {"chat": "direct", "max_tokens": 500, "as_of": AS_OF})


@contextlib.contextmanager
def serving(config: Config, options: WatchOptions = FAST) -> Iterator[threading.Thread]:
    """A watcher thread (real observer, real socket), stopped after the block."""
    stop = threading.Event()
    errors: list[BaseException] = []

    def target() -> None:
        try:
            run_watch(config, stop_event=stop, options=options)
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    wait_for(lambda: bool(errors) or probe(config) is not None, "the recall service")
    assert not errors
    try:
        yield thread
    finally:
        stop.set()
        thread.join(10)
        assert not thread.is_alive(), "the watcher did not stop"
        assert not errors


@pytest.fixture
def served(vault: Path) -> Iterator[Config]:
    config = load_config(vault)
    with serving(config):
        yield config


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def both_ways(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *argv: str
) -> tuple[tuple[int, str, str], tuple[int, str, str]]:
    """(served, in-process) runs of one command line; the served one must really be served."""
    calls: list[bytes] = []
    original = service.RecallService.reply

    def counting(self: service.RecallService, line: bytes) -> dict[str, object]:
        calls.append(line)
        return original(self, line)

    monkeypatch.setattr(service.RecallService, "reply", counting)
    with_service = run(capsys, *argv)
    assert calls, "the command did not ask the running watcher"
    monkeypatch.setenv("VAULT_TOOLS_SERVICE", "off")
    in_process = run(capsys, *argv)
    assert len(calls) == 1, "VAULT_TOOLS_SERVICE=off still asked the watcher"
    monkeypatch.delenv("VAULT_TOOLS_SERVICE")
    return with_service, in_process


@pytest.mark.parametrize("chat", ["direct", "group", "unknown"])
@pytest.mark.parametrize("as_json", [True, False])
def test_served_recall_is_the_in_process_recall(
    served: Config,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    chat: str,
    as_json: bool,
) -> None:
    for query in QUERIES:
        argv = ["recall", query, "--vault", str(served.vault), "--chat", chat, "--as-of", AS_OF, "--explain"]
        argv += ["--json"] if as_json else []
        with_service, in_process = both_ways(capsys, monkeypatch, *argv)
        assert with_service == in_process, query


def test_served_recall_keeps_the_privacy_rules(
    served: Config, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = str(served.vault)
    for query in ("wisdom tooth dentist", "花生过敏", "OAuth device flow auth"):
        code, out, _ = run(
            capsys, "recall", query, "--vault", vault, "--chat", "group", "--json", "--as-of", AS_OF
        )
        assert code == 0
        hits = json.loads(out)["results"]
        assert all("#shared" in hit["text"] for hit in hits), hits
    # The watcher was started with no $VAULT_TOOLS_CHAT; the agent's own environment decides.
    monkeypatch.setenv("VAULT_TOOLS_CHAT", "group")
    code, out, _ = run(capsys, "recall", "花生过敏", "--vault", vault, "--json", "--as-of", AS_OF)
    assert json.loads(out)["filters"]["chat"] == "group" and json.loads(out)["results"] == []
    code, out, _ = run(capsys, "context", "--vault", vault, "--json", "--as-of", AS_OF)
    assert "花生" not in out and "Dentist" not in out
    code, _, err = run(capsys, "recall", "tooth", "--vault", vault, "--include-private")
    assert code == 2 and "never shown in a group chat" in err
    monkeypatch.delenv("VAULT_TOOLS_CHAT")
    code, out, _ = run(capsys, "recall", "wisdom tooth", "--vault", vault, "--json", "--include-private")
    assert "wisdom tooth" in out  # direct, a person at the terminal


def test_served_errors_are_the_in_process_errors(
    served: Config, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for argv in (
        ["recall", "x", "--since", "next blue moon"],
        ["recall", "x", "--limit", "0"],
        ["recall", "x", "--chat", "everyone"],
        ["context", "--max-tokens", "3"],
        ["recall", "x", "--since", "nope", "--json"],
    ):
        with_service, in_process = both_ways(capsys, monkeypatch, *argv, "--vault", str(served.vault))
        assert with_service == in_process
        assert with_service[0] != 0


def test_served_context_is_the_in_process_context(
    served: Config, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for chat in ("direct", "group"):
        for extra in ([], ["--json"]):
            argv = ["context", "--vault", str(served.vault), "--chat", chat, "--as-of", "2026-03-11", *extra]
            with_service, in_process = both_ways(capsys, monkeypatch, *argv)
            assert with_service == in_process


def test_a_saved_entry_is_served_once_the_watcher_indexed_it(served: Config) -> None:
    daily = served.vault / "memory" / "2026-03-11.md"
    with daily.open("a", encoding="utf-8") as handle:
        handle.write("- 21:00 Booked the 量子纠缠 lecture for Friday\n")

    def served_hit() -> bool:
        answer = service.ask(served, "recall", recall_params("量子纠缠"))
        return answer is not None and any("量子纠缠" in h["text"] for h in answer["result"]["results"])

    wait_for(served_hit, "the new entry in a served recall")


def recorded_watchers(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The watchers run_watch makes from now on in this test, in order."""
    from vault_tools.watch import watcher as watch

    watchers: list[watch.Watcher] = []

    class Recorded(watch.Watcher):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            watchers.append(self)

    monkeypatch.setattr(watch, "Watcher", Recorded)
    return watchers


def test_an_edit_saved_just_before_a_served_recall_is_found(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The service waits for the batch holding an edit the watcher saw; a slow batch is flagged."""

    watchers = recorded_watchers(monkeypatch)
    config = load_config(vault)
    slow = replace(FAST, debounce_ms=1500, max_latency_ms=3000)  # the batch is still waiting when asked
    stop = threading.Event()
    thread = threading.Thread(target=run_watch, args=(config,), kwargs={"stop_event": stop, "options": slow})
    thread.start()
    try:
        wait_for(lambda: probe(config) is not None, "the recall service")
        [watcher] = watchers
        # The service answers before the observer starts: an edit saved in between is no event.
        wait_for(lambda: watcher.state.reconciles > 0, "the watcher's first reconcile")
        seen = watcher.batcher.events
        with (vault / "memory" / "2026-03-11.md").open("a", encoding="utf-8") as handle:
            handle.write("- 21:00 Booked the 量子纠缠 lecture for Friday\n")
        wait_for(lambda: watcher.batcher.events > seen, "the watcher to see the edit")
        answer = service.ask(config, "recall", recall_params("量子纠缠"))
        assert answer is not None
        assert [h["text"] for h in answer["result"]["results"]] == ["Booked the 量子纠缠 lecture for Friday"]
        assert answer["result"]["stale"] is False
    finally:
        stop.set()
        thread.join(15)
    never = service.RecallService(
        config, settle=lambda timeout: f"the watcher is still indexing ({timeout:g} s)"
    )
    try:
        result = never.recall(recall_params("量子纠缠"))["result"]
    finally:
        never.stop()
    assert result["stale"] is True and any("still indexing" in w for w in result["warnings"])


def test_a_served_recall_does_not_wait_for_a_watcher_whose_batches_fail(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It answers from what is indexed, stale, and says why (not "still indexing" after 5 s)."""
    from vault_tools.index.index import Index

    monkeypatch.setattr(service, "SETTLE_TIMEOUT", 3600.0)  # only the watcher's reasons end the wait
    monkeypatch.setattr(service, "ANSWER_TIMEOUT", 10.0)  # how long this test's client waits
    config = load_config(vault)
    real_update = Index.update
    broken = threading.Event()

    def update(self: Index, paths: Any, **kwargs: Any) -> Any:
        if broken.is_set():
            raise OSError(28, "No space left on device")
        return real_update(self, paths, **kwargs)

    monkeypatch.setattr(Index, "update", update)
    watchers = recorded_watchers(monkeypatch)
    with serving(config):
        wait_for(lambda: probe(config) is not None, "the recall service")
        wait_for(lambda: watchers[0].state.reconciles > 0, "the watcher's first reconcile")
        broken.set()
        with (vault / "memory" / "2026-03-11.md").open("a", encoding="utf-8") as handle:
            handle.write("- 21:00 Booked the 量子纠缠 lecture for Friday\n")
        wait_for(lambda: watchers[0].state.errors > 0, "the failing batch")
        answer = service.ask(config, "recall", recall_params("Deployed billing"))
        assert answer is not None and answer["result"]["stale"] is True
        assert any("could not index the latest edits (OSError" in w for w in answer["warnings"])
        assert answer["result"]["results"], "what is indexed is still answered"
        broken.clear()
        wait_for(
            lambda: (
                (a := service.ask(config, "recall", recall_params("量子纠缠"))) is not None
                and a["result"]["stale"] is False
                and bool(a["result"]["results"])
            ),
            "the retried batch",
        )


#: Another process writing the index (as a rebuild would) until it is killed.
INDEX_WRITER = r"""
import sys, time
from pathlib import Path
from vault_tools import locks
from vault_tools.config import load_config
with locks.hold(load_config(Path(sys.argv[1])), "index", timeout=10, what="rebuilding the index"):
    print("held", flush=True)
    time.sleep(120)
"""


def test_a_served_recall_does_not_wait_for_a_batch_that_waits_for_another_index_writer(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The batch waits its lock timeout; the answer comes from what is indexed and says who writes."""
    monkeypatch.setattr(service, "SETTLE_TIMEOUT", 3600.0)
    monkeypatch.setattr(service, "ANSWER_TIMEOUT", 10.0)
    config = load_config(vault)
    watchers = recorded_watchers(monkeypatch)
    with serving(config, replace(FAST, lock_timeout=3600.0)):
        wait_for(lambda: watchers[0].state.reconciles > 0, "the watcher's first reconcile")
        writer = subprocess.Popen(
            [sys.executable, "-c", INDEX_WRITER, str(vault)], stdout=subprocess.PIPE, text=True
        )
        try:
            assert writer.stdout is not None and writer.stdout.readline().strip() == "held"
            seen = watchers[0].batcher.events
            with (vault / "memory" / "2026-03-11.md").open("a", encoding="utf-8") as handle:
                handle.write("- 21:00 Booked the 量子纠缠 lecture for Friday\n")
            wait_for(lambda: watchers[0].batcher.events > seen, "the watcher to see the edit")
            answer = service.ask(config, "recall", recall_params("Deployed billing"))
            assert answer is not None and answer["result"]["stale"] is True
            expected = f"(pid {writer.pid}, rebuilding the index) is writing the index"
            assert any(expected in w for w in answer["warnings"]), answer["warnings"]
            assert answer["result"]["results"], "what is indexed is still answered"
        finally:
            writer.kill()
            writer.communicate()
        wait_for(
            lambda: (
                (a := service.ask(config, "recall", recall_params("量子纠缠"))) is not None
                and a["result"]["stale"] is False
                and bool(a["result"]["results"])
            ),
            "the batch, once the lock is free",
        )


def recall_params(query: str, **overrides: object) -> dict[str, object]:
    params: dict[str, object] = {
        "query": query,
        "limit": 10,
        "since": None,
        "until": None,
        "tags": [],
        "chat": "direct",
        "max_tokens": 1500,
        "explain": False,
        "include_private": False,
        "as_of": AS_OF,
        "render": {"color": False},
    }
    return {**params, **overrides}


def test_the_socket_is_private_and_removed_on_stop(vault: Path) -> None:
    config = load_config(vault)
    path = service.socket_path(config)
    with serving(config):
        assert stat.S_ISSOCK(path.stat().st_mode)
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert not path.exists()
    assert service.ask(config, "recall", recall_params("auth")) is None


def test_a_stop_right_after_start_returns(vault: Path) -> None:
    """A SIGTERM while the service is still warming up once hung the watcher's exit."""
    config = load_config(vault)
    for _ in range(5):
        svc = service.RecallService(config)
        assert svc.start()
        stopper = threading.Thread(target=svc.stop)
        stopper.start()
        stopper.join(timeout=10)
        assert not stopper.is_alive(), "stop() hung"
        assert not service.socket_path(config).exists()


def test_a_stop_during_a_slow_warm_up_does_not_wait_for_it(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The warm-up may be opening or healing the index of a vault being deleted; the watcher's exit
    must not wait for it (shutdown() waits for serve_forever(), which only starts after it)."""
    config = load_config(vault)
    warming, release = threading.Event(), threading.Event()

    def slow_warm_up(self: service.RecallService) -> None:
        warming.set()
        release.wait(60)

    monkeypatch.setattr(service.RecallService, "_warm_up", slow_warm_up)
    svc = service.RecallService(config)
    assert svc.start()
    assert warming.wait(10)
    stopper = threading.Thread(target=svc.stop)
    stopper.start()
    stopper.join(timeout=20)  # the join of the serving thread gives up after 5 s
    hung = stopper.is_alive()
    release.set()
    assert not hung, "stop() waited for the warm-up"
    assert not service.socket_path(config).exists()
    assert svc._thread is not None
    svc._thread.join(timeout=10)
    assert not svc._thread.is_alive()  # after its warm-up the thread ends without serving


def test_no_watcher_or_a_dead_socket_falls_back_at_once(
    vault: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # With timeouts no test outlives, an answer proves that nothing waited for one: no socket,
    # or a dead one, is refused at once.
    monkeypatch.setattr(service, "CONNECT_TIMEOUT", 3600.0)
    monkeypatch.setattr(service, "ANSWER_TIMEOUT", 3600.0)
    config = load_config(vault)
    assert service.ask(config, "recall", recall_params("auth")) is None  # no socket at all
    path = service.socket_path(config)
    path.parent.mkdir(parents=True, exist_ok=True)
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(os.fspath(path))  # what a watcher killed with -9 leaves: a socket nobody listens on
    dead.close()
    assert service.ask(config, "recall", recall_params("auth")) is None
    code, out, _ = run(capsys, "recall", "auth", "--vault", str(vault), "--as-of", AS_OF)
    assert code == 0 and "OAuth" in out


def test_a_watcher_with_other_settings_declines(vault: Path) -> None:
    config = load_config(vault)
    with serving(config):
        other = replace(config, recall=RecallConfig(half_life_days=3.0))
        assert service.ask(other, "recall", recall_params("auth")) is None
        assert service.ask(config, "recall", recall_params("auth")) is not None


def test_garbage_requests_are_declined_and_the_service_keeps_serving(served: Config) -> None:
    path = os.fspath(service.socket_path(served))
    for payload in (b"not json\n", b"[1, 2]\n", b'{"protocol": 99}\n', b"\xff\xfe\n", b""):
        assert service._exchange(Path(path), payload.rstrip(b"\n")) == {}
    request = {
        "protocol": service.PROTOCOL,
        "version": service.__version__,
        "settings": service.settings_key(served),
        "op": "recall",
        "params": {"query": "auth", "no_such_option": 1},
    }
    assert service._exchange(Path(path), json.dumps(request).encode()) == {}
    assert service.ask(served, "recall", recall_params("auth")) is not None


def test_a_silent_client_does_not_block_the_service(vault: Path) -> None:
    config = load_config(vault)
    served = service.RecallService(config, client_timeout=0.2)
    assert served.start()
    silent = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        silent.connect(os.fspath(service.socket_path(config)))  # connects first, says nothing
        assert service.ask(config, "recall", recall_params("auth")) is not None
        silent.settimeout(30)
        assert silent.recv(1) == b""  # the service gave up on it and closed it
    finally:
        silent.close()
        served.stop()


def test_a_vault_path_too_long_for_a_socket_moves_it_to_a_private_temp_folder(tmp_path: Path) -> None:
    deep = tmp_path.joinpath(*["folder-with-a-long-name"] * 5, "vault")
    config = load_config(deep)
    path = service.socket_path(config)
    assert len(os.fsencode(path)) <= service.MAX_SOCKET_PATH
    assert path.name.endswith(".sock") and path != service.socket_path(load_config(tmp_path / "other"))


def test_a_fresh_process_is_served_the_same_answer(served: Config) -> None:
    argv = [sys.executable, "-m", "vault_tools", "recall", "观察者模式", "--vault", str(served.vault)]
    argv += ["--json", "--as-of", AS_OF]
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    with_service = subprocess.run(argv, capture_output=True, text=True, env=env, check=True)
    in_process = subprocess.run(
        argv, capture_output=True, text=True, env={**env, "VAULT_TOOLS_SERVICE": "off"}, check=True
    )
    assert with_service.stdout == in_process.stdout
    assert "观察者模式" in json.loads(with_service.stdout)["results"][0]["text"]


# ---------------------------------------------------------------------------------------------
# Started by recall


def background_watchers(vault: Path) -> list[int]:
    """Pids of the processes watching ``vault`` that this test did not run in its own process."""
    pids = []
    for proc in Path("/proc").glob("[0-9]*"):
        with contextlib.suppress(OSError):
            argv = proc.joinpath("cmdline").read_bytes().split(b"\0")
            if b"watch" in argv and os.fsencode(vault) in argv and int(proc.name) != os.getpid():
                pids.append(int(proc.name))
    return pids


@pytest.fixture
def autostart(vault: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Config]:
    """Auto-start on, with a short idle exit; any watcher left running is killed afterwards."""
    if not Path("/proc/self/cmdline").exists():
        pytest.skip("finding leftover watchers needs /proc")
    monkeypatch.delenv("VAULT_TOOLS_AUTOSTART")
    write(vault / ".vault-tools" / "config.toml", "[recall]\nautostart_minutes = 0.05\n")  # 3 s
    try:
        yield load_config(vault)
    finally:
        for pid in background_watchers(vault):
            with contextlib.suppress(OSError):
                os.kill(pid, 9)
        wait_for(lambda: not background_watchers(vault), "the leftover watchers to die")


def watch_lock_free(config: Config) -> bool:
    from vault_tools import locks

    lock = locks.try_hold(config, locks.WATCH_LOCK, what="test")
    if lock is None:
        return False
    lock.release()
    return True


def cli_recall(vault: Path, query: str) -> str:
    argv = [sys.executable, "-m", "vault_tools", "recall", query, "--vault", str(vault), "--json"]
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    done = subprocess.run([*argv, "--as-of", AS_OF], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_an_unserved_recall_starts_a_watcher_that_serves_the_next_calls_then_exits_when_idle(
    autostart: Config,
) -> None:
    first = cli_recall(autostart.vault, "观察者模式")
    assert "观察者模式" in json.loads(first)["results"][0]["text"], "the first call is answered in-process"
    wait_for(lambda: probe(autostart) is not None, "the watcher recall started", timeout=30)
    [pid] = background_watchers(autostart.vault)
    assert cli_recall(autostart.vault, "观察者模式") == first
    assert background_watchers(autostart.vault) == [pid], "a served call started another watcher"
    info = json.loads((autostart.state_dir / "watch.json").read_text(encoding="utf-8"))
    assert info["pid"] == pid and info["idle_exit_seconds"] == 3
    assert "exits after 0.05 min without a recall request" in info["summary"]
    log = (autostart.state_dir / service.AUTOSTART_LOG).read_text(encoding="utf-8")
    assert "Traceback" not in log
    wait_for(lambda: not background_watchers(autostart.vault), "the idle watcher to exit", timeout=30)
    assert watch_lock_free(autostart) and not service.socket_path(autostart).exists()
    assert "no recall request for 3 s; exiting" in (autostart.state_dir / service.AUTOSTART_LOG).read_text()


def test_recall_starts_a_watcher_only_when_nobody_serves_and_it_is_allowed(
    autostart: Config, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[float] = []
    monkeypatch.setattr(
        service, "_spawn_watcher", lambda config, idle_seconds: started.append(idle_seconds) or 1
    )
    argv = ["recall", "auth", "--vault", str(autostart.vault), "--as-of", AS_OF]
    assert run(capsys, *argv)[0] == 0 and started == [3.0]
    for env, value in (("VAULT_TOOLS_AUTOSTART", "off"), ("VAULT_TOOLS_SERVICE", "off")):
        monkeypatch.setenv(env, value)
        assert run(capsys, *argv)[0] == 0
        monkeypatch.delenv(env)
    assert started == [3.0]
    marker = autostart.state_dir / service.AUTOSTART_MARKER
    assert marker.exists(), "the start was not recorded"
    assert service.start_in_background(autostart) is None, "a second start while the first warms up"
    os.utime(marker, (time.time() - 60, time.time() - 60))
    with serving(autostart):
        assert run(capsys, "context", "--vault", str(autostart.vault))[0] == 0  # served: no start
        other = replace(autostart, recall=replace(autostart.recall, half_life_days=3.0))
        assert service.start_in_background(other) is None, "a watcher with other settings holds the lock"
    assert started == [3.0]
    assert run(capsys, "context", "--vault", str(autostart.vault))[0] == 0
    assert started == [3.0, 3.0]


def test_of_several_first_calls_at_once_only_one_starts_a_watcher(
    autostart: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[float] = []
    returned: list[int | None] = []
    done = threading.Condition()

    def slow_spawn(config: Config, idle_seconds: float) -> int:
        started.append(idle_seconds)
        with done:  # still starting until the five others have come and gone
            done.wait_for(lambda: len(returned) >= 5, timeout=10)
        return 1

    monkeypatch.setattr(service, "_spawn_watcher", slow_spawn)
    barrier = threading.Barrier(6)

    def first_call() -> None:
        barrier.wait()
        pid = service.start_in_background(autostart)
        with done:
            returned.append(pid)
            done.notify_all()

    callers = [threading.Thread(target=first_call) for _ in range(6)]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join(30)
    assert started == [3.0]
    assert sorted(returned, key=str) == [1, None, None, None, None, None]


def test_an_explicit_watch_takes_over_from_the_watcher_recall_started(autostart: Config) -> None:
    assert service.start_in_background(autostart) is not None
    wait_for(lambda: probe(autostart) is not None, "the watcher recall started", timeout=30)
    assert len(background_watchers(autostart.vault)) == 1
    stop = threading.Event()
    thread = threading.Thread(
        target=run_watch, args=(autostart,), kwargs={"stop_event": stop, "options": FAST}
    )
    thread.start()
    try:
        wait_for(lambda: not background_watchers(autostart.vault), "the auto-started watcher to stop", 30)
        state = autostart.state_dir / "watch.json"
        wait_for(lambda: json.loads(state.read_text())["pid"] == os.getpid(), "the takeover", 30)
        wait_for(lambda: probe(autostart) is not None, "the new watcher to serve", 30)
        assert json.loads(state.read_text())["idle_exit_seconds"] == 0
    finally:
        stop.set()
        thread.join(15)
    assert not thread.is_alive()


#: A background watcher caught before it wrote watch.json (still starting) or busy healing: it holds
#: the watch lock as recall's watchers do, and "stubborn" ignores SIGTERM as a long rebuild step might.
LOCK_HOLDER = r"""
import os, signal, sys, time
from pathlib import Path
from vault_tools import locks; from vault_tools.watch import watcher as watch
from vault_tools.config import load_config
config = load_config(Path(sys.argv[1]))
if sys.argv[2] == "stubborn":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
earlier = sys.argv[2] == "earlier-version"  # its record says "watching"; its watch.json says idle exit
role = watch.WATCHING if earlier else watch.WATCHING_UNTIL_IDLE
lock = locks.try_hold(config, locks.WATCH_LOCK, what=role, timeout=10)
if earlier:
    watch.write_json_atomic(watch.watch_state_path(config), {"pid": os.getpid(), "idle_exit_seconds": 60})
print("held" if lock else "not held", flush=True)
time.sleep(120)
"""


@pytest.mark.parametrize("behaviour", ["starting", "stubborn", "earlier-version"])
def test_an_explicit_watch_takes_over_from_a_background_watcher_at_any_stage(
    vault: Path, behaviour: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vault_tools.watch import watcher as watch

    monkeypatch.setattr(watch, "KILL_AFTER_SECONDS", 0.5)
    config = load_config(vault)
    holder = subprocess.Popen(
        [sys.executable, "-c", LOCK_HOLDER, str(vault), behaviour], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        thread, stop, errors = watch_in_thread(config, FAST)
        try:
            holder.wait(timeout=30)
            wait_for(lambda: probe(config) is not None or bool(errors), "the explicit watcher to serve", 30)
            assert not errors
            state = config.state_dir / "watch.json"
            wait_for(
                lambda: state.exists() and json.loads(state.read_text())["pid"] == os.getpid(), "its state"
            )
            assert json.loads(state.read_text())["idle_exit_seconds"] == 0
        finally:
            stop.set()
            thread.join(15)
    finally:
        if holder.poll() is None:
            holder.kill()
        holder.wait()
        if holder.stdout is not None:
            holder.stdout.close()
    expected = -9 if behaviour == "stubborn" else -15
    assert holder.returncode == expected


def test_an_explicit_watch_right_after_the_first_recall_ends_up_the_one_watcher(autostart: Config) -> None:
    """Whether the background watcher has the lock yet or not, with recall callers all along."""
    assert service.start_in_background(autostart) is not None
    thread, stop, errors = watch_in_thread(autostart, FAST)
    answers: list[str] = []
    try:
        while not (probe(autostart) is not None and not background_watchers(autostart.vault)):
            answers.append(cli_recall(autostart.vault, "观察者模式"))  # exit 0 asserted inside
            assert not errors and len(answers) < 60
        state = autostart.state_dir / "watch.json"
        wait_for(lambda: json.loads(state.read_text())["pid"] == os.getpid(), "the explicit watcher's state")
        assert json.loads(state.read_text())["idle_exit_seconds"] == 0
        assert all("观察者模式" in json.loads(a)["results"][0]["text"] for a in answers)
    finally:
        stop.set()
        thread.join(15)
    assert not thread.is_alive() and not errors


def test_a_watcher_started_by_hand_is_never_taken_over(vault: Path) -> None:
    config = load_config(vault)
    with serving(config):
        with pytest.raises(service.errors.LockedError, match="already running"):
            run_watch(config, stop_event=threading.Event(), options=FAST)
        assert probe(config) is not None


def test_an_idle_watcher_exits_and_one_whose_vault_is_deleted_leaves_nothing_behind(
    vault: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import shutil

    config = load_config(vault)
    idle = replace(FAST, idle_exit_seconds=1.0)
    with caplog.at_level(logging.INFO, logger="vault_tools.watch.watcher"):
        run_watch(config, stop_event=threading.Event(), options=idle)  # nothing else stops it
    assert "no recall request for 1 s; exiting" in caplog.text
    assert watch_lock_free(config)
    lingering = replace(FAST, idle_exit_seconds=600.0)
    thread = threading.Thread(
        target=run_watch, args=(config,), kwargs={"options": lingering, "handle_signals": False}
    )
    thread.start()

    def watching() -> bool:  # the service answers before the observer starts: wait for both
        state = read_json(watch_state_path(config))  # (the idle watcher's last state says stopped)
        return bool(state.get("last_reconcile")) and not state.get("stopped") and probe(config) is not None

    wait_for(watching, "the watcher to observe and serve")
    gone = vault.with_name("deleted")
    vault.rename(gone)  # as `rm -rf` of a parent folder ends: nothing left at the path
    shutil.rmtree(gone)
    thread.join(30)
    assert not thread.is_alive(), "the watcher of a deleted vault kept running"
    assert not vault.exists(), "the watcher re-created the deleted vault"
