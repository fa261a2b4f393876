"""A vault that cannot be written: reading commands work (state in the cache), writing ones say so.

The vault is made read-only for real, also for root (as CI runs): a read-only bind mount in a
private mount namespace (``unshare``), or, when mounts cannot be made, the folders' write bits
taken away and, for root, the capability that overrides them (``setpriv``). Every command runs in
one child process (``read_only_driver.py``) inside it.
"""

from __future__ import annotations

import datetime as dt
import errno
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from vault_tools import cli
from vault_tools.agents.vault import init_vault
from vault_tools.config import cache_home, cache_state_dir, load_config
from vault_tools.errors import NotWritableError

DRIVER = Path(__file__).with_name("read_only_driver.py")
ROOT = os.geteuid() == 0
# A bind mount of the folder onto itself, then made read-only (two steps: older mount(8) ignores
# ``-o ro`` on a first bind). ``$1`` is the folder; the rest is the command to run in there.
MOUNT_READ_ONLY = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" "$1" && shift && exec "$@"'

Runner = Callable[[Path], list[str]]


def mount_runner(vault: Path) -> list[str]:
    """The command prefix that runs its command with ``vault`` mounted read-only (for root too)."""
    user = [] if ROOT else ["--user", "--map-root-user"]
    return [
        "unshare",
        *user,
        "--mount",
        "--propagation",
        "private",
        "sh",
        "-c",
        MOUNT_READ_ONLY,
        "sh",
        str(vault),
    ]


def chmod_runner(vault: Path) -> list[str]:
    """The command prefix for a ``chmod -R a-w`` vault: root gives up CAP_DAC_OVERRIDE first."""
    if not ROOT:
        return []
    return ["setpriv", "--inh-caps=-dac_override", "--bounding-set=-dac_override", "--"]


def make_read_only(vault: Path) -> None:
    for path in [vault, *vault.rglob("*")]:
        if not path.is_symlink():
            path.chmod(path.stat().st_mode & ~0o222)


def make_writable(vault: Path) -> None:
    for path in [vault, *vault.rglob("*")]:
        if not path.is_symlink():
            path.chmod(path.stat().st_mode | 0o200)


def refuses_writes(runner: Runner, folder: Path, chmod: bool) -> str | None:
    """None when ``runner`` really stops writes to ``folder`` here; else why not."""
    folder.mkdir()
    if chmod:
        make_read_only(folder)
    try:
        prefix = runner(folder)
        if prefix and shutil.which(prefix[0]) is None:
            return f"{prefix[0]} is not installed"
        ok = subprocess.run([*prefix, "true"], capture_output=True, text=True)
        if ok.returncode != 0:
            return f"{' '.join(prefix[:3])}... cannot run here: {ok.stderr.strip()}"
        probe = [*prefix, sys.executable, "-c", "import sys; open(sys.argv[1], 'w')", str(folder / "probe")]
        if subprocess.run(probe, capture_output=True).returncode == 0:
            return "a write went through"
        return None
    finally:
        make_writable(folder)


@pytest.fixture
def sample_vault(tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    init_vault(vault, sample=True, today=dt.date(2026, 12, 1))
    return vault


def run_driver(prefix: list[str], vault: Path, tmp_path: Path, cache: Path) -> dict[str, Any]:
    imported = tmp_path / "import.jsonl"
    imported.write_text('{"text": "imported while read-only", "date": "2026-11-30"}\n', encoding="utf-8")
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "VAULT_TOOLS_AUTOSTART": "off"}
    done = subprocess.run(
        [*prefix, sys.executable, str(DRIVER), str(vault), str(imported)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    results: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return results


def snapshot(vault: Path) -> dict[str, bytes]:
    return {p.relative_to(vault).as_posix(): p.read_bytes() for p in sorted(vault.rglob("*")) if p.is_file()}


READING = (
    "status",
    "status_json",
    "recall",
    "recall_zh",
    "context",
    "export",
    "upcoming",
    "index",
    "index_rebuild",
    "doctor",
    "doctor_fix",
    "heartbeat_dry",
    "summarize_dry",
    "import_dry",
    "schedule",
)
WRITING = ("note", "heartbeat", "summarize", "sync", "undo", "import", "init_inside")


def check_results(results: dict[str, Any], vault: Path, why: str) -> None:
    for name in READING:
        done = results[name]
        assert done["code"] == 0 and "Traceback" not in done["err"], (name, done)
    assert "roast" in results["recall"]["out"] and "咖啡" in results["recall_zh"]["out"]
    assert json.loads(results["status_json"]["out"])["vault"] == str(vault)
    assert "would write memory/summaries/" in results["summarize_dry"]["out"]
    for name in WRITING:
        done = results[name]
        message = done["err"]
        assert done["code"] == NotWritableError.exit_code, (name, done)
        assert message.startswith(f"Error: {vault}") and message.count("\n") == 1, (name, message)
        assert f"{why}, and `vault-tools " in message, (name, message)
    assert json.loads(results["note_json"]["out"])["error"].startswith(f"{vault}/memory: {why}")
    served = results["served"]
    assert served["code"] == 0 and served["served"] and "roast" in served["out"], served
    assert served["watch"]["code"] == 0 and "Traceback" not in served["watch"]["err"], served["watch"]
    mcp = results["mcp"]
    assert "traceback" not in mcp, mcp["traceback"]
    assert mcp["search"] > 0 and mcp["context"] > 0, mcp
    assert mcp["note"]["code"] == NotWritableError.exit_code and why in mcp["note"]["error"], mcp


def test_a_read_only_mount_without_state_folder(tmp_path: Path, sample_vault: Path) -> None:
    """The read-only mount of a vault never indexed: its state is made in $XDG_CACHE_HOME."""
    reason = refuses_writes(mount_runner, tmp_path / "probe", chmod=False)
    if reason is not None:
        pytest.skip(f"no read-only mount for this test here: {reason}")
    shutil.rmtree(sample_vault / ".vault-tools")
    before = snapshot(sample_vault)
    cache = tmp_path / "cache"
    results = run_driver(mount_runner(sample_vault), sample_vault, tmp_path, cache)
    check_results(results, sample_vault, "read-only file system")
    assert snapshot(sample_vault) == before
    state = cache_state_dir(cache, sample_vault)
    assert (state / "index").is_dir() and sample_vault not in Path(results["served"]["socket"]).parents


def test_a_chmod_read_only_vault_with_its_state_folder(tmp_path: Path, sample_vault: Path) -> None:
    """``chmod -R a-w`` of a vault with its own settings: still read from it; state in the cache."""
    reason = refuses_writes(chmod_runner, tmp_path / "probe", chmod=True)
    if reason is not None:
        pytest.skip(f"cannot take the right to write away here: {reason}")
    (sample_vault / ".vault-tools" / "config.toml").write_text("[recall]\nlimit = 1\n", encoding="utf-8")
    before = snapshot(sample_vault)
    cache = tmp_path / "cache"
    make_read_only(sample_vault)
    try:
        results = run_driver(chmod_runner(sample_vault), sample_vault, tmp_path, cache)
    finally:
        make_writable(sample_vault)
    check_results(results, sample_vault, "no permission to write here")
    assert snapshot(sample_vault) == before
    assert results["recall"]["out"].count("memory/") + results["recall"]["out"].count("MEMORY.md") == 1
    assert (cache_state_dir(cache, sample_vault) / "index").is_dir()


# ---------------------------------------------------------------------------------------------
# Where the state goes, in process


def test_the_cache_folder_is_stable_and_one_per_vault(tmp_path: Path) -> None:
    home = tmp_path / "cache"
    first, second = tmp_path / "a" / "notes", tmp_path / "b" / "notes"
    first.mkdir(parents=True)
    second.mkdir(parents=True)
    (tmp_path / "link").symlink_to(first)
    assert cache_state_dir(home, first) == cache_state_dir(home, tmp_path / "link")
    assert cache_state_dir(home, first) != cache_state_dir(home, second)
    assert cache_state_dir(home, first).parent == home / "vault-tools"
    assert cache_state_dir(home, first).name.startswith("notes-")
    odd = tmp_path / "我的 笔记"
    assert cache_state_dir(home, odd).name.startswith("我的_笔记-")


def test_the_cache_home_follows_xdg(tmp_path: Path) -> None:
    assert cache_home({"XDG_CACHE_HOME": str(tmp_path), "HOME": "/h"}) == tmp_path
    assert cache_home({"XDG_CACHE_HOME": "relative/path", "HOME": "/h"}) == Path("/h/.cache")
    assert cache_home({"HOME": "/h"}) == Path("/h/.cache")


def test_a_writable_vault_keeps_its_state_inside(vault: Path) -> None:
    config = load_config(vault)
    assert config.state_dir == vault / ".vault-tools"
    shutil.rmtree(vault / ".vault-tools")
    assert load_config(vault).state_dir == vault / ".vault-tools"
    gone = load_config(vault.parent / "deleted")
    assert gone.state_dir == vault.parent / "deleted" / ".vault-tools"


@pytest.fixture
def refused_writes(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Folders inside the vault read as unwritable (``os.access``), as on a read-only mount."""
    real = os.access

    def access(path: Any, mode: int, **kwargs: Any) -> bool:
        if mode & os.W_OK and "vault" in Path(os.fspath(path)).parts:
            return False
        return real(path, mode, **kwargs)

    monkeypatch.setattr(os, "access", access)
    yield


def test_an_unwritable_vault_puts_its_state_in_the_cache(
    vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, refused_writes: None
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    config = load_config(vault)
    assert config.state_dir == cache_state_dir(tmp_path / "cache", vault)
    assert config.make_state_dir("locks") == config.state_dir / "locks"
    assert config.state_dir.stat().st_mode & 0o777 == 0o700


def test_a_write_refused_after_the_checks_is_one_line(
    vault: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A folder made read-only between the check and the write: the same line, not a traceback."""
    from vault_tools.notes import edit as note_edit

    def refused(path: Path, data: bytes, **_: Any) -> None:
        raise OSError(errno.EROFS, "Read-only file system", str(path.parent / f".{path.name}.1.tmp"))

    monkeypatch.setattr(note_edit, "atomic_write", refused)
    code = cli.main(["note", "hello", "--vault", str(vault)])
    err = capsys.readouterr().err
    assert code == NotWritableError.exit_code and err.count("\n") == 1
    assert err.startswith(f"Error: {vault / 'memory'}: ") and "`vault-tools note` writes there" in err
