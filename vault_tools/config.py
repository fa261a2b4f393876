"""Where the vault is and how it is configured, resolved in one place.

Vault: ``--vault PATH``, else ``$VAULT_TOOLS_VAULT``, else the current directory when it holds
``MEMORY.md`` or ``memory/``, else ``./vault``.

State (index, locks, heartbeat records): ``<vault>/.vault-tools/``, or, when the vault cannot be
written (a read-only mount, ``chmod a-w``), ``$XDG_CACHE_HOME/vault-tools/<name>-<hash of the path>/``
(``~/.cache`` without it), so reading commands work there too: see :attr:`Config.state_dir`.

Settings: defaults below, overridden by ``<vault>/.vault-tools/config.toml`` (every key optional),
overridden by the environment (``OPENAI_API_KEY``, ``OPENAI_BASE_URL``, ``VAULT_TOOLS_LLM_MODEL``,
``VAULT_TOOLS_TIMEZONE``, ``VAULT_TOOLS_CHAT``, ``VAULT_TOOLS_SERVICE=off``, and the variable that
``[embeddings] api_key_env`` names). Every other module
receives a :class:`Config`; none reads the environment.
"""

from __future__ import annotations

import datetime as dt
import functools
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

from vault_tools.errors import NotWritableError, UsageError, VaultNotFoundError

# What a served recall imports (cli, config, service) leaves out typing, zoneinfo and tomllib
# unless they are needed: each costs a few ms of a call that is mostly Python's start-up.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

STATE_DIR = ".vault-tools"
CONFIG_FILE = "config.toml"
HEARTBEAT_DIR = "heartbeat"  # under the state folder: the heartbeat's state, journal and run records
HEARTBEAT_JOURNAL = "journal.json"  # there: the changes a run wrote and has not committed yet
CACHE_NAME = "vault-tools"  # under $XDG_CACHE_HOME: the state of vaults that cannot be written
UNSAFE_IN_NAME = re.compile(r"[^\w.-]+")


@dataclass(frozen=True)
class LLMConfig:
    api_key: str | None = None
    base_url: str | None = None
    model: str = "gpt-4o-mini"
    timeout_seconds: float = 30.0
    max_tokens_per_run: int = 50_000
    temperature: float = 0.0

    @property
    def configured(self) -> bool:
        """An LLM is used when a key or a base URL (a local server needs no key) is configured."""
        return bool(self.api_key or self.base_url)


@dataclass(frozen=True)
class HeartbeatConfig:
    days: int = 7
    threshold: float = 0.7
    # MEMORY.md's size: the bot's items may hold this many words per month of daily notes (the
    # agent reads all of MEMORY.md at every session start). The strongest insights fit first;
    # the rest stay in the notes, where recall finds them. 0: no budget.
    budget_words_per_month: float = 130.0
    prune_max_share: float = 0.10
    temporary_max_age_days: int = 14
    interval_hours: float = 24.0
    quiet_seconds: float = 60.0
    max_new_entries: int = 5000  # a run curates at most this many new entries; the next runs the rest
    push: bool = False
    remote: str = "origin"
    push_attempts: int = 3  # a push the remote rejected because it moved: fetch, bring in, push again
    lock_wait_seconds: float = 90.0  # wait this long for a git lock a live process holds, then exit 5
    lock_grace_seconds: float = 10.0  # a lock nobody holds is removed once it is this old
    summaries: bool = True  # write the summary of each closed week and month (summaries.py)


@dataclass(frozen=True)
class SyncConfig:
    """``[sync]``: what ``vault-tools sync`` (and the heartbeat's sync) does besides fetch and push."""

    commit_notes: bool = True  # commit the person's changed notes first, as the person (sync.py)


@dataclass(frozen=True)
class RecallConfig:
    limit: int = 10
    max_tokens: int = 1500
    half_life_days: float = 30.0
    chat: str = "direct"
    service: bool = True  # ask a running watcher first (vault_tools.watch.service)
    autostart_minutes: float = 30.0  # no watcher: recall starts one that exits after this idle; 0: never


@dataclass(frozen=True)
class EmbeddingsConfig:
    """``[embeddings]``: an OpenAI-compatible embeddings endpoint for semantic recall (opt-in).

    Unset ``model`` means keyword recall only: no request, nothing imported. ``api_key`` is
    read from the environment variable named by ``api_key_env`` (never from the file).
    """

    model: str = ""
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    api_key: str | None = None  # resolved from api_key_env by apply_env
    batch_size: int = 64
    timeout_seconds: float = 30.0  # one batch while indexing
    query_timeout_seconds: float = 1.5  # the query's vector at recall: then keyword results
    send_private: bool = False  # #private entries too, and only to a loopback endpoint
    previous_turn: bool = True  # embed each entry after the one before it in its section (README)

    @property
    def configured(self) -> bool:
        return bool(self.model)


@dataclass(frozen=True)
class Config:
    vault: Path
    timezone: str | None = None
    llm: LLMConfig = field(default_factory=LLMConfig)
    heartbeat: HeartbeatConfig = field(default_factory=HeartbeatConfig)
    recall: RecallConfig = field(default_factory=RecallConfig)
    embeddings: EmbeddingsConfig = field(default_factory=EmbeddingsConfig)
    sync: SyncConfig = field(default_factory=SyncConfig)
    warnings: tuple[str, ...] = ()
    cache_home: Path | None = (
        None  # $XDG_CACHE_HOME or ~/.cache: where state goes when the vault is read-only
    )

    @functools.cached_property
    def state_dir(self) -> Path:
        """Where the index, locks and run records live, chosen once per :class:`Config`.

        ``<vault>/.vault-tools/`` when it can be written (or made), else this vault's own folder
        in the cache (:func:`cache_state_dir`): a read-only vault is still searched, its
        disposable state kept outside it. A vault that does not exist keeps its own path, so a
        vault deleted under a watcher is never re-created and nothing moves to the cache.
        """
        own = self.vault / STATE_DIR
        if self.cache_home is None or can_write(own) or not self.vault.is_dir():
            return own
        if not own.exists() and can_write(self.vault):
            return own
        return cache_state_dir(self.cache_home, self.vault)

    def make_state_dir(self, *parts: str) -> Path:
        """``state_dir`` (and ``parts`` under it), made when missing; never the vault itself.

        A vault deleted under a running watcher must stay deleted, so this raises
        FileNotFoundError rather than re-create it. A state folder in the cache is made with
        its parents, readable by its owner only (it holds the index of the person's notes).
        """
        path = self.state_dir
        if path.parent == self.vault:
            path.mkdir(exist_ok=True)
        else:
            path.mkdir(mode=0o700, parents=True, exist_ok=True)
        for part in parts:
            path = path / part
            path.mkdir(exist_ok=True)
        return path

    @property
    def tzinfo(self) -> dt.tzinfo | None:
        if not self.timezone:
            return None
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            return ZoneInfo(self.timezone)
        except (ZoneInfoNotFoundError, ValueError):
            return None

    def now(self) -> dt.datetime:
        """The current time in the vault's timezone (the machine's when none is configured)."""
        tz = self.tzinfo
        return dt.datetime.now(tz) if tz else dt.datetime.now().astimezone()

    def today(self) -> dt.date:
        return self.now().date()


def heartbeat_dir(config: Config) -> Path:
    """The heartbeat's state folder. Here, not in the heartbeat, because sync reads its journal too:
    a change the bot wrote and has not committed is the bot's, never the person's to commit."""
    return config.state_dir / HEARTBEAT_DIR


def resolve_vault(arg: str | None, env: Mapping[str, str] | None = None, cwd: Path | None = None) -> Path:
    """The vault every command works on, by the documented precedence."""
    env = os.environ if env is None else env
    cwd = Path.cwd() if cwd is None else cwd
    if arg:
        return Path(arg).expanduser().absolute()
    if env.get("VAULT_TOOLS_VAULT"):
        return Path(env["VAULT_TOOLS_VAULT"]).expanduser().absolute()
    if (cwd / "MEMORY.md").is_file() or (cwd / "memory.md").is_file() or (cwd / "memory").is_dir():
        return cwd.absolute()
    return (cwd / "vault").absolute()


def holds_memory(vault: Path) -> bool:
    """Whether ``vault`` has a MEMORY.md, memory.md or memory/ (what makes a folder a vault)."""
    return any((vault / name).exists() for name in ("MEMORY.md", "memory.md", "memory"))


def require_vault(vault: Path) -> Path:
    """Fail with a message saying what to do when ``vault`` holds no memory."""
    if not vault.is_dir():
        raise VaultNotFoundError(
            f"{vault}: no vault here. Create one with `vault-tools init {vault}` or pass --vault PATH."
        )
    if not holds_memory(vault):
        raise VaultNotFoundError(
            f"{vault}: not a vault (no MEMORY.md or memory/). Run `vault-tools init {vault}` or pass --vault PATH."
        )
    return vault


def can_write(path: Path) -> bool:
    """Whether new files can be made in the folder ``path`` (False when it does not exist).

    ``os.access`` says no for a read-only mount even to root, and for a folder without write
    permission to anyone the system holds to it (root keeps its override, as it should).
    """
    return os.access(path, os.W_OK | os.X_OK)


def cache_home(env: Mapping[str, str]) -> Path | None:
    """``$XDG_CACHE_HOME`` when it is an absolute path (the XDG rule), else ``~/.cache``."""
    configured = env.get("XDG_CACHE_HOME", "")
    if configured and os.path.isabs(configured):
        return Path(configured)
    home = env.get("HOME") or os.path.expanduser("~")
    return Path(home) / ".cache" if os.path.isabs(home) else None


def cache_state_dir(home: Path, vault: Path) -> Path:
    """``<home>/vault-tools/<folder name>-<16 hex of the real path>``: stable, one per vault.

    The name is there for a person listing the cache; the hash of the path with its symlinks
    resolved keeps two vaults of the same name apart and two spellings of one vault together.
    """
    import hashlib

    real = os.path.realpath(vault)
    digest = hashlib.sha256(os.fsencode(real)).hexdigest()[:16]
    name = UNSAFE_IN_NAME.sub("_", os.path.basename(real))[:40].strip("._") or "vault"
    return home / CACHE_NAME / f"{name}-{digest}"


def require_writable(doing: str, *folders: Path) -> None:
    """Before a command changes the vault: fail at once, naming the first of ``folders`` it cannot write.

    Folders that do not exist are skipped (the command makes them inside one that is checked).
    Checked up front so a read-only vault gets one clear line before anything is half done.
    """
    for folder in folders:
        if folder.is_dir() and not can_write(folder):
            raise NotWritableError.for_path(folder, doing)


def bot_folders(vault: Path) -> tuple[Path, ...]:
    """The folders the heartbeat, summaries, sync, undo and import write in (and git's own)."""
    memory = vault / "memory"
    return (vault, memory, memory / "archive", memory / "summaries", vault / ".git")


def load_config(vault: Path, env: Mapping[str, str] | None = None) -> Config:
    """Defaults < ``.vault-tools/config.toml`` < environment."""
    env = os.environ if env is None else env
    data, warnings = read_config_file(vault / STATE_DIR / CONFIG_FILE)
    config = Config(
        vault=vault,
        cache_home=cache_home(env),
        timezone=as_str(data.get("timezone")),
        llm=section(LLMConfig, data.get("llm"), warnings, "llm"),
        heartbeat=section(HeartbeatConfig, data.get("heartbeat"), warnings, "heartbeat"),
        recall=section(RecallConfig, data.get("recall"), warnings, "recall"),
        embeddings=section(EmbeddingsConfig, data.get("embeddings"), warnings, "embeddings"),
        sync=section(SyncConfig, data.get("sync"), warnings, "sync"),
    )
    return apply_env(config, env, warnings)


def read_config_file(path: Path) -> tuple[dict[str, Any], list[str]]:
    if not path.is_file():
        return {}, []
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 in CI
        import tomli as tomllib
    try:
        return tomllib.loads(path.read_text(encoding="utf-8")), []
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        return {}, [f"{path}: not valid TOML ({exc}); using defaults. Fix the file or delete it."]


def section(kind: type[Any], raw: object, warnings: list[str], name: str) -> Any:
    """Build one settings dataclass from a TOML table, warning about unknown keys and wrong types."""
    if raw is None:
        return kind()
    if not isinstance(raw, dict):
        warnings.append(f"config.toml: [{name}] must be a table; using defaults")
        return kind()
    known = {f.name: f for f in fields(kind)}
    values: dict[str, Any] = {}
    for key, value in raw.items():
        if key not in known:
            warnings.append(f"config.toml: unknown key {name}.{key}; ignored (known: {', '.join(known)})")
            continue
        default = getattr(kind(), key)
        if (
            default is not None
            and not isinstance(value, type(default))
            and not (isinstance(default, float) and isinstance(value, int))
        ):
            warnings.append(
                f"config.toml: {name}.{key} should be {type(default).__name__}; using {default!r}"
            )
            continue
        values[key] = float(value) if isinstance(default, float) else value
    return kind(**values)


def _is_off(value: str | None) -> bool:
    return (value or "").strip().lower() in ("0", "off", "no", "false")


def apply_env(config: Config, env: Mapping[str, str], warnings: list[str]) -> Config:
    llm = config.llm
    if env.get("OPENAI_API_KEY"):
        llm = replace(llm, api_key=env["OPENAI_API_KEY"])
    if env.get("OPENAI_BASE_URL"):
        llm = replace(llm, base_url=env["OPENAI_BASE_URL"])
    if env.get("VAULT_TOOLS_LLM_MODEL"):
        llm = replace(llm, model=env["VAULT_TOOLS_LLM_MODEL"])
    timezone = env.get("VAULT_TOOLS_TIMEZONE") or config.timezone
    recall = config.recall
    if env.get("VAULT_TOOLS_CHAT"):
        recall = replace(recall, chat=env["VAULT_TOOLS_CHAT"])
    if _is_off(env.get("VAULT_TOOLS_SERVICE")):
        recall = replace(recall, service=False)
    if _is_off(env.get("VAULT_TOOLS_AUTOSTART")):
        recall = replace(recall, autostart_minutes=0.0)
    embeddings = config.embeddings
    if embeddings.api_key is not None:  # only the environment holds a key
        warnings.append("config.toml: embeddings.api_key is ignored; name a variable in api_key_env")
        embeddings = replace(embeddings, api_key=None)
    if embeddings.api_key_env and env.get(embeddings.api_key_env):
        embeddings = replace(embeddings, api_key=env[embeddings.api_key_env])
    result = replace(config, llm=llm, timezone=timezone, recall=recall, embeddings=embeddings)
    if timezone and result.tzinfo is None:
        warnings.append(
            f"unknown timezone {timezone!r}; using the machine's. Use a name like 'Asia/Shanghai'."
        )
        result = replace(result, timezone=None)
    return replace(result, warnings=tuple(warnings))


def as_str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def check_positive(name: str, value: float) -> None:
    if value <= 0:
        raise UsageError(f"{name} must be positive, got {value}")
