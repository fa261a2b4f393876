from __future__ import annotations

import datetime as dt
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from vault_tools import cli
from vault_tools.config import load_config, resolve_vault
from vault_tools.notes import model as notes

ROOT = Path(__file__).resolve().parent.parent


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_help_lists_every_command_with_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    text = capsys.readouterr().out
    parser = cli.build_parser()
    commands = next(a for a in parser._actions if isinstance(a, cli.argparse._SubParsersAction))
    for name, sub in commands.choices.items():
        assert re.search(rf"^\s+{name}\s+\S", text, re.MULTILINE), f"{name} has no help line"
        assert sub.description, f"{name} has no description"


def test_help_does_not_import_heavy_libraries() -> None:
    code = (
        "import sys; from vault_tools import cli\n"
        "try:\n    cli.main(['--help'])\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in ('whoosh', 'openai', 'git', 'watchdog', 'yaml') if m in sys.modules]\n"
        "print('HEAVY=' + ','.join(heavy))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip().splitlines()[-1] == "HEAVY="


def test_a_served_recall_imports_only_what_it_needs(tmp_path: Path) -> None:
    """The client half of a served call: parse one command, load the config, ask the socket.

    Nobody serves this vault, so the CLI goes on in-process; what it imported up to the ask is
    recorded first.
    """
    vault = tmp_path / "v"
    (vault / "memory").mkdir(parents=True)
    code = (
        "import sys\nfrom vault_tools import cli; from vault_tools.watch import service\nreal = service.ask\n"
        "def ask(*a, **k):\n"
        "    print('LOADED=' + ','.join(m for m in ('typing', 'zoneinfo', 'tomllib', 'whoosh', 'yaml',"
        " 'vault_tools.recall.recall', 'vault_tools.recall.query', 'vault_tools.recall.filters', 'vault_tools.recall.ranking',"
        " 'vault_tools.recall.results', 'vault_tools.index.index', 'vault_tools.index.documents', 'vault_tools.index.manifest',"
        " 'vault_tools.index.writer', 'vault_tools.index.builder', 'vault_tools.index.healing',"
        " 'vault_tools.index.doctor') if m in sys.modules))\n"
        "    raise SystemExit(0)\n"
        "service.ask = ask\n"
        f"cli.main(['recall', 'allergy', '--vault', {str(vault)!r}])\n"
    )
    env = {**os.environ, "VAULT_TOOLS_SERVICE": "on"}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert result.stdout.strip().splitlines()[-1] == "LOADED="


@pytest.mark.parametrize(
    "argv", [["recall", "x"], ["--vault", "v", "--json", "recall", "x"], ["--", "recall"]]
)
def test_a_known_command_gets_a_parser_of_its_own(argv: list[str]) -> None:
    assert cli.command_named(argv) == "recall"
    parser = cli.build_parser(only="recall")
    [commands] = [a for a in parser._actions if isinstance(a, cli.argparse._SubParsersAction)]
    assert list(commands.choices) == ["recall"]


def test_an_unknown_command_is_named_among_all_of_them(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["recal", "allergy"]) == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'recal'" in err and "'heartbeat'" in err


def test_python_dash_m_runs_the_cli() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "vault_tools", "--version"], capture_output=True, text=True
    )
    assert result.returncode == 0 and "vault-tools" in result.stdout


def test_init_creates_the_layout_and_a_git_repo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "init", str(tmp_path / "v"), "--json")
    report = json.loads(out)
    assert code == 0 and report["git_initialised"] is True
    vault = tmp_path / "v"
    assert (vault / "MEMORY.md").read_text().startswith("---\n")
    assert (vault / "memory").is_dir() and (vault / ".vault-tools").is_dir()
    assert (vault / ".gitignore").read_text() == ".vault-tools/\n"
    assert (vault / ".git").is_dir()
    memory = notes.read_note(vault / "MEMORY.md", vault)
    assert {"Decisions", "Preferences", "Lessons", "Facts"} <= {
        m.group(2) for line in memory.lines if (m := notes.HEADING.match(line.strip()))
    }
    assert report["commit"] is not None


def test_init_makes_a_first_commit_of_only_the_files_it_created(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "todo.txt").write_text("a person's file, not init's\n")
    code, out, _ = run(capsys, "init", str(vault))
    assert code == 0 and "committed them" in out
    log = subprocess.run(
        ["git", "log", "--format=%an|%s", "--name-only"], cwd=vault, capture_output=True, text=True
    )
    assert log.stdout.split() == [
        "vault-tools",
        "bot|vault-tools",
        "init:",
        "start",
        "the",
        "vault",
        ".gitignore",
        "MEMORY.md",
    ]
    status = subprocess.run(["git", "status", "--porcelain"], cwd=vault, capture_output=True, text=True)
    assert status.stdout == "?? todo.txt\n"


def test_status_in_a_repository_with_no_commits(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault = tmp_path / "v"
    (vault / "memory").mkdir(parents=True)
    (vault / "MEMORY.md").write_text("# Memory\n")
    (vault / "memory" / "2026-03-10.md").write_text("- 我的一条笔记\n")
    subprocess.run(["git", "init", "-q", str(vault)], check=True)
    code, out, err = run(capsys, "--vault", str(vault), "status")
    assert code == 0 and err == ""  # git's "does not have any commits yet" never reaches the terminal
    (line,) = [x for x in out.splitlines() if x.startswith("git:")]
    assert "2 untracked files" in line and "no commits yet" in line and "clean" not in line


def test_init_refuses_to_overwrite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "MEMORY.md").write_text("mine\n")
    code, out, _ = run(capsys, "init", str(vault), "--json")
    assert code == 2 and "already exists" in json.loads(out)["error"]
    assert (vault / "MEMORY.md").read_text() == "mine\n"


def test_init_inside_an_existing_repo_does_not_nest_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True)
    code, out, _ = run(capsys, "init", str(tmp_path / "repo" / "vault"), "--json")
    assert code == 0 and json.loads(out)["git_initialised"] is False
    assert not (tmp_path / "repo" / "vault" / ".git").exists()


def test_init_sample_copies_the_sample_re_dated_to_end_today(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, _ = run(capsys, "init", str(tmp_path / "s"), "--sample")
    assert code == 0
    days = sorted(p.name for p in (tmp_path / "s" / "memory").glob("*.md"))
    assert days[-1] == f"{dt.date.today().isoformat()}.md"
    assert len(days) == len(list((ROOT / "vault" / "memory").glob("*.md")))
    last = notes.read_note(tmp_path / "s" / "memory" / days[-1], tmp_path / "s")
    assert last.front_matter.get("date") == dt.date.today().isoformat()
    assert last.warnings == []
    assert not any(p.name == ".git" for p in (ROOT / "vault").iterdir())


def test_note_creates_the_day_then_appends(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault = tmp_path / "v"
    run(capsys, "init", str(vault))
    code, out, _ = run(
        capsys,
        "--vault",
        str(vault),
        "note",
        "决定以后都用",
        "pnpm",
        "--tag",
        "技术/前端",
        "--date",
        "2026-03-10",
        "--json",
    )
    first = json.loads(out)
    assert code == 0 and first["created_file"] is True and first["path"] == "memory/2026-03-10.md"
    path = vault / "memory" / "2026-03-10.md"
    before = path.read_bytes()
    code, out, _ = run(
        capsys,
        "note",
        "Met Maria at the climbing gym",
        "--private",
        "--remember",
        "--vault",
        str(vault),
        "--date",
        "2026-03-10",
        "--json",
    )
    second = json.loads(out)
    assert code == 0 and second["created_file"] is False
    after = path.read_bytes()
    assert after.startswith(before)
    note = notes.read_note(path, vault)
    assert note.front_matter["date"] == "2026-03-10"
    texts = [(e.text, e.visibility, e.tags) for e in note.entries]
    assert texts[0][0] == "决定以后都用 pnpm #技术/前端"
    assert texts[1][1] == "private" and "remember" in texts[1][2]
    assert second["line"] == note.entries[1].start_line


def test_note_keeps_crlf_and_never_rewrites_earlier_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = tmp_path / "v"
    (vault / "memory").mkdir(parents=True)
    path = vault / "memory" / "2026-03-11.md"
    path.write_bytes(b"---\r\ndate: 2026-03-11\r\n---\r\n- 08:00 first  ")
    run(capsys, "--vault", str(vault), "note", "second", "--date", "2026-03-11")
    data = path.read_bytes()
    assert data.startswith(b"---\r\ndate: 2026-03-11\r\n---\r\n- 08:00 first  \r\n- ")
    assert data.endswith(b" second\r\n")


def test_note_errors_are_one_line_with_an_exit_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "memory").mkdir()
    code, _, err = run(capsys, "--vault", str(tmp_path), "note", "  ")
    assert code == 2 and err.startswith("Error: the note is empty") and err.count("\n") == 1
    code, out, _ = run(capsys, "--vault", str(tmp_path), "note", "x", "--tag", "bad tag", "--json")
    assert code == 2 and "tag" in json.loads(out)["error"]


def test_note_never_makes_a_vault(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A mistyped --vault, or a folder without one: exit 3 like every other command, nothing written."""
    (tmp_path / "notes").mkdir()
    code, _, err = run(capsys, "--vault", str(tmp_path / "notse"), "note", "lost")
    assert code == 3 and "vault-tools init" in err and err.count("\n") == 1
    code, out, _ = run(capsys, "--vault", str(tmp_path / "notes"), "note", "lost", "--json")
    assert code == 3 and "not a vault" in json.loads(out)["error"]
    code, _, err = run(capsys, "note", "lost")  # the current folder holds no vault: ./vault is tried
    assert code == 3 and str(tmp_path / "vault") in err
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == ["home", "notes"]


def test_note_prints_the_absolute_path_it_wrote(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = tmp_path / "v"
    run(capsys, "init", str(vault))
    monkeypatch.chdir(vault)  # the vault found from the current folder: the path is still absolute
    code, out, _ = run(capsys, "note", "决定用 pnpm", "--date", "2026-03-10")
    written = vault / "memory" / "2026-03-10.md"
    assert code == 0 and out.startswith(f"{written}:7: - ") and out.rstrip().endswith("决定用 pnpm")
    code, out, _ = run(capsys, "note", "again", "--date", "2026-03-10", "--json")
    report = json.loads(out)
    assert report["absolute_path"] == str(written) and report["path"] == "memory/2026-03-10.md"


def test_init_on_a_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    file = tmp_path / "notes.txt"
    file.write_text("mine\n", encoding="utf-8")
    code, _, err = run(capsys, "init", str(file))
    assert (
        code == 2
        and err
        == f"Error: {file}: is a file; a vault is a folder. Choose another path, e.g. a new folder name.\n"
    )
    code, _, err = run(capsys, "init", str(file / "vault"))
    assert code == 2 and err.startswith(f"Error: {file}: is a file (in the way of {file / 'vault'})")
    code, out, _ = run(capsys, "init", str(file), "--json")
    assert code == 2 and "is a file" in json.loads(out)["error"]
    assert file.read_text(encoding="utf-8") == "mine\n" and sorted(p.name for p in tmp_path.iterdir()) == [
        "home",
        "notes.txt",
    ]


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["note", "--json"], "the following arguments are required: text"),
        (["--json", "recall", "x", "--limit", "many"], "argument --limit: invalid int value: 'many'"),
        (["note", "x", "--date", "2026-02-30", "--json"], "argument --date: '2026-02-30' is not a real date"),
        (["frobnicate", "--json"], "invalid choice: 'frobnicate'"),
        (["--json"], "no command given"),
    ],
)
def test_a_usage_error_under_json_is_json(
    argv: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """As every other error under --json: ``{"error": ...}`` on stdout, nothing else; exit 2."""
    code, out, err = run(capsys, *argv)
    assert code == 2 and err == "" and out.count("\n") == 1
    assert said in json.loads(out)["error"]


def test_a_usage_error_without_json_is_what_argparse_prints(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "note", "x", "--date", "2026-02-30")
    assert code == 2 and out == ""
    assert err.startswith("usage: vault-tools note ")
    said = "\nvault-tools note: error: argument --date: '2026-02-30' is not a real date (day is out of range"
    assert said in err and "; accepted forms: 2026-03-01, " in err and err.endswith("\n")


def test_missing_vault_says_what_to_do(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "--vault", str(tmp_path / "nowhere"), "status")
    assert code == 3 and "vault-tools init" in err


def test_vault_resolution_precedence(tmp_path: Path) -> None:
    env = {"VAULT_TOOLS_VAULT": str(tmp_path / "from-env")}
    assert resolve_vault(str(tmp_path / "arg"), env, tmp_path) == tmp_path / "arg"
    assert resolve_vault(None, env, tmp_path) == tmp_path / "from-env"
    (tmp_path / "memory").mkdir()
    assert resolve_vault(None, {}, tmp_path) == tmp_path
    assert resolve_vault(None, {}, tmp_path / "memory") == tmp_path / "memory" / "vault"


def test_config_file_and_environment(tmp_path: Path) -> None:
    state = tmp_path / ".vault-tools"
    state.mkdir()
    (state / "config.toml").write_text(
        'timezone = "Asia/Shanghai"\n[llm]\nmodel = "qwen"\nbogus = 1\n[heartbeat]\nthreshold = 1\n'
    )
    config = load_config(tmp_path, {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})
    assert config.timezone == "Asia/Shanghai" and config.llm.model == "qwen"
    assert config.heartbeat.threshold == 1.0 and config.llm.configured
    assert any("bogus" in w for w in config.warnings)
    overridden = load_config(
        tmp_path, {"VAULT_TOOLS_LLM_MODEL": "llama3", "VAULT_TOOLS_TIMEZONE": "Nowhere/X"}
    )
    assert overridden.llm.model == "llama3" and overridden.timezone is None and not overridden.llm.configured
    (state / "config.toml").write_text("not = [toml")
    assert "not valid TOML" in load_config(tmp_path, {}).warnings[0]


def test_readme_test_command_is_what_ci_runs() -> None:
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    command = next(line for line in ci.splitlines() if line.startswith("python3 -m venv"))
    assert command in readme
    assert os.access(ROOT / ".ci" / "run", os.X_OK)


@pytest.mark.parametrize("command", ["recall", "context"])
def test_one_shot_commands_pause_the_cycle_collector_and_restore_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    import gc

    from vault_tools.agents import context
    from vault_tools.recall import recall

    vault = tmp_path / "v"
    assert run(capsys, "init", str(vault))[0] == 0
    seen: list[bool] = []
    real = recall.recall if command == "recall" else context.build_context

    def spy(*args: object, **kwargs: object) -> object:
        seen.append(gc.isenabled())
        return real(*args, **kwargs)  # type: ignore[operator]

    monkeypatch.setattr(recall if command == "recall" else context, real.__name__, spy)
    argv = [command, "咖啡"] if command == "recall" else [command]
    assert run(capsys, *argv, "--vault", str(vault))[0] == 0
    assert seen == [False], "the command ran with the collector on"
    assert gc.isenabled(), "the collector was not restored"
    gc.disable()
    try:
        assert run(capsys, *argv, "--vault", str(vault))[0] == 0
        assert not gc.isenabled(), "a caller's paused collector was switched on"
    finally:
        gc.enable()
