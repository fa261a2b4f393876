"""The documentation: the MkDocs site in docs/ builds with no warning, and what it says is checked
against the code where the code can say it (the configuration's keys, the files it names, the
README's commands and links)."""

from __future__ import annotations

import dataclasses
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

from vault_tools import config
from vault_tools.curation.insights import Rules

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README = ROOT / "README.md"

# mkdocs imports Markdown, Jinja and its theme in a new process: a few seconds on a busy machine.
pytestmark = pytest.mark.timeout(120)


def build_site(docs_dir: Path, site: Path) -> subprocess.CompletedProcess[str]:
    """``mkdocs build --strict`` of the checkout's mkdocs.yml with ``docs_dir`` as its pages."""
    if importlib.util.find_spec("mkdocs") is None:
        pytest.fail("mkdocs is not installed: `pip install -e '.[dev]'` (the dev extra pins it)")
    settings = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    settings = re.sub(r"(?m)^docs_dir: .*$", f"docs_dir: {docs_dir}", settings)
    config_file = site.parent / "mkdocs.yml"
    config_file.write_text(settings, encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config_file), "-d", str(site)],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )


def test_the_site_builds_strictly_with_every_page(tmp_path: Path) -> None:
    done = build_site(DOCS, tmp_path / "site")
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout}\n{done.stderr}"
    pages = sorted(p.stem for p in DOCS.glob("*.md"))
    built = sorted(p.parent.name for p in (tmp_path / "site").glob("*/index.html"))
    assert (tmp_path / "site" / "index.html").is_file()
    assert built == sorted(set(pages) - {"index"})


@pytest.mark.parametrize(
    ("page", "breakage"),
    [
        ("privacy.md", "[see the heartbeat](heartbeat-typo.md)"),
        ("privacy.md", "[see the locks](heartbeat.md#no-such-section)"),
    ],
)
def test_a_broken_link_fails_the_build(tmp_path: Path, page: str, breakage: str) -> None:
    pages = tmp_path / "docs"
    pages.mkdir()
    for source in DOCS.glob("*.md"):
        (pages / source.name).write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    with (pages / page).open("a", encoding="utf-8") as handle:
        handle.write(f"\n{breakage}\n")
    done = build_site(pages, tmp_path / "site")
    assert done.returncode != 0
    target = breakage.split("(", 1)[1].rstrip(")")
    assert target.split("#")[-1] in done.stdout + done.stderr


def section(text: str, heading: str) -> str:
    """The text under ``## heading``, up to the next such heading."""
    match = re.search(rf"(?ms)^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text)
    assert match, f"no section '## {heading}'"
    return match.group(1)


def section_rows(text: str, heading: str) -> set[str]:
    """The keys named in the first column of the table under ``## heading``."""
    return set(re.findall(r"(?m)^\| `([a-z_]+)` \|", section(text, heading)))


SECTIONS = {
    "[llm]": config.LLMConfig,
    "[heartbeat]": config.HeartbeatConfig,
    "[sync]": config.SyncConfig,
    "[recall]": config.RecallConfig,
    "[embeddings]": config.EmbeddingsConfig,
}


@pytest.mark.parametrize("heading", sorted(SECTIONS))
def test_every_key_of_the_config_file_is_documented(heading: str) -> None:
    text = (DOCS / "configuration.md").read_text(encoding="utf-8")
    # api_key of [embeddings] is never read from the file (api_key_env names the variable)
    keys = {f.name for f in dataclasses.fields(SECTIONS[heading])}
    if heading == "[embeddings]":
        keys.discard("api_key")
    assert section_rows(text, f"`{heading}`") == keys
    block = text.split("```toml", 1)[1].split("```", 1)[0]
    table = block.split(f"\n{heading}\n", 1)[1].split("\n[", 1)[0]
    in_example = set(re.findall(r"(?m)^#? ?([a-z_]+)(?: =|:)", table))
    assert keys <= in_example, f"{heading}: missing from the complete file: {keys - in_example}"


def test_every_curation_rule_is_documented() -> None:
    text = (DOCS / "configuration.md").read_text(encoding="utf-8")
    keys = {f.name for f in dataclasses.fields(Rules)} - {"signals", "asides"}
    assert section_rows(text, "`[rules]`") == keys | {"extra_signals", "extra_asides"}
    assert "| `timezone` |" in text


def test_documented_defaults_are_the_code_defaults() -> None:
    text = (DOCS / "configuration.md").read_text(encoding="utf-8")
    for heading, kind in SECTIONS.items():
        rows = dict(re.findall(r"(?m)^\| `([a-z_]+)` \| `([^`]+)`", section(text, f"`{heading}`")))
        for field in dataclasses.fields(kind):
            default = getattr(kind(), field.name)
            if field.name not in rows or default in (None, ""):
                continue
            shown = rows[field.name]
            expected = str(default).lower() if isinstance(default, bool) else repr(default)
            if isinstance(default, str):
                expected = f'"{default}"'
            assert shown in (expected, f"{default:.2f}" if isinstance(default, float) else expected), (
                f"{heading} {field.name}: docs say {shown}, the code {default!r}"
            )


NAMED_FILE = re.compile(r"`((?:vault_tools|bench|tests|docs|\.github|\.ci)/[\w./-]+)`")


def test_files_the_docs_name_exist() -> None:
    missing = []
    for page in [README, *sorted(DOCS.glob("*.md"))]:
        for name in NAMED_FILE.findall(page.read_text(encoding="utf-8")):
            if not (ROOT / name.rstrip("/")).exists():
                missing.append(f"{page.relative_to(ROOT)}: {name}")
    assert missing == []


def test_the_readme_links_resolve() -> None:
    text = README.read_text(encoding="utf-8")
    anchors = {
        re.sub(r"[^\w\- ]", "", heading).strip().lower().replace(" ", "-")
        for heading in re.findall(r"(?m)^#+ (.+)$", text)
    }
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if target.startswith(("http://", "https://")):
            continue
        path, _, anchor = target.partition("#")
        if path:
            assert (ROOT / path).is_file(), f"README links to {target}, which is not there"
        else:
            assert anchor in anchors, f"README links to #{anchor}, which is no heading of it"


def commands(text: str) -> list[str]:
    return re.findall(r"(?m)^python3 -m venv .*$", text)


def test_the_readme_is_short_and_its_commands_are_the_guides() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    readme = commands(text)
    assert len(readme) == 2  # the quickstart and the tests
    assert commands((DOCS / "getting-started.md").read_text(encoding="utf-8")) == readme


def subcommands() -> dict[str, set[str]]:
    """Each command of the CLI and the options it takes."""
    import argparse

    from vault_tools import cli

    parser = cli.build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {
        name: {option for a in sub._actions for option in a.option_strings}
        for name, sub in action.choices.items()
    }


@pytest.mark.parametrize("page", ["README.md", "docs/commands.md"])
def test_the_commands_tables_name_every_command_and_only_real_options(page: str) -> None:
    known = subcommands()
    text = (ROOT / page).read_text(encoding="utf-8")
    table = section(text, "Commands") if "\n## Commands\n" in text else text.split("\n## ", 1)[0]
    named: set[str] = set()
    for cell in re.findall(r"(?m)^\| (`[^|]*(?:\\\|[^|]*)*) \|", table):
        commands = [span.split()[0] for span in re.findall(r"`([^`]+)`", cell)]
        assert commands and all(c in known for c in commands), f"{page}: {cell}"
        named.update(commands)
        options = set(re.findall(r"--[a-z][a-z-]*", cell))
        allowed = set().union(*(known[c] for c in commands))
        assert options <= allowed, f"{page}: {cell}: no such option {options - allowed}"
    assert named == set(known), f"{page}: commands missing from the table: {set(known) - named}"
