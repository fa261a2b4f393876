"""The package as people install it: a wheel, not this checkout.

The sdist and the wheel are built from the files a clone of this repository holds (``python -m
build``: the wheel from the sdist, as a package index's users get it), installed with pip into a
new virtualenv outside the checkout, and the README's quickstart runs with that installed
``vault-tools``. All of it offline: the build uses this environment's setuptools
(``--no-isolation``), pip installs the wheel alone (``--no-deps --no-index``), and the new
virtualenv borrows its dependencies from this one through a ``.pth`` path (which does not run
this environment's editable hook, so ``vault_tools`` there is only the wheel's).
The CI workflow (.github/workflows/ci.yml, job ``wheel``) does the same with dependencies from
the index, with pipx and uv, and with ``twine check``.
"""

from __future__ import annotations

import email.parser
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from dataclasses import dataclass
from email.message import Message
from pathlib import Path

import pytest
from filelock import FileLock

import vault_tools

# A build, a pip install and the quickstart's three commands, each a new process: some 20 s alone,
# past the suite's 60 s per test when other engineers' runs share the two cores.
pytestmark = pytest.mark.timeout(240)

ROOT = Path(__file__).resolve().parent.parent
SUPPORTED = ("3.10", "3.11", "3.12", "3.13")


@dataclass(frozen=True)
class Built:
    sdist: Path
    wheel: Path
    log: str  # what the build printed, stdout and stderr


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without what would reach into the checkout or silence a warning."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}
    env["PIP_CONFIG_FILE"] = os.devnull  # this machine's pip settings (indexes, find-links) play no part
    return {**env, **extra}


def run(argv: list[str | Path], cwd: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(a) for a in argv], cwd=cwd, env=clean_env(**extra), capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, f"{' '.join(map(str, argv))} failed:\n{done.stdout}\n{done.stderr}"
    return done


def clone_files(destination: Path) -> None:
    """Copy what a clone would hold (tracked files, and new ones not ignored), never the venv or builds."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    )
    for name in sorted(set(listed.stdout.decode("utf-8").split("\0")) - {""}):
        source = ROOT / name
        if source.is_file():  # a tracked file deleted in the work tree is not there
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name)


def build(base: Path) -> None:
    """Build into ``base/dist`` from a copy of the checkout's files; ``base/build.log`` last, once it worked."""
    source, out = base / "source", base / "dist"
    for old in (source, out):
        shutil.rmtree(old, ignore_errors=True)
    clone_files(source)
    done = run([sys.executable, "-m", "build", "--no-isolation", "--outdir", out, source], base)
    (base / "build.log").write_text(done.stdout + done.stderr, encoding="utf-8")


def built_in(base: Path) -> Built:
    (sdist,) = (base / "dist").glob("*.tar.gz")
    (wheel,) = (base / "dist").glob("*.whl")
    return Built(sdist, wheel, (base / "build.log").read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Built:
    """One build for the whole run, shared by the xdist workers (the first to get here builds)."""
    if worker_id == "master":
        base = tmp_path_factory.mktemp("packaging")
        build(base)
        return built_in(base)
    base = tmp_path_factory.getbasetemp().parent / "packaging"
    with FileLock(f"{base}.lock"):
        if not (base / "build.log").exists():
            base.mkdir(exist_ok=True)
            build(base)
    return built_in(base)


def metadata(wheel: Path) -> Message:
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        return email.parser.Parser().parsestr(archive.read(name).decode("utf-8"))


def readme_first_sentence() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    paragraph = next(p for p in text.split("\n\n") if p.strip() and not p.startswith("#"))
    joined = " ".join(line.strip() for line in paragraph.splitlines())
    return joined[: joined.index(". ") + 1] if ". " in joined else joined


def install(wheel: Path, venv: Path) -> Path:
    """A new virtualenv at ``venv`` with only the wheel installed in it; its ``bin`` folder."""
    run([sys.executable, "-m", "venv", "--without-pip", venv], venv.parent)
    python = venv / "bin" / "python"
    run(
        [sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-deps", "--no-index", wheel],
        venv.parent,
    )
    site = run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], venv.parent)
    ours = sorted({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})
    Path(site.stdout.strip(), "borrowed_dependencies.pth").write_text(
        "\n".join(ours) + "\n", encoding="utf-8"
    )
    return venv / "bin"


def test_the_wheel_installed_outside_the_checkout_runs_the_quickstart(built: Built, tmp_path: Path) -> None:
    bin_dir = install(built.wheel, tmp_path / "venv")
    where = run(
        [
            bin_dir / "python",
            "-c",
            "import vault_tools, vault_tools.agents.vault as v; print(vault_tools.__file__); print(v.sample_vault_dir())",
        ],
        tmp_path,
    ).stdout.splitlines()
    assert all(Path(line).is_relative_to(tmp_path / "venv") for line in where), where
    tool = bin_dir / "vault-tools"
    assert run([tool, "--version"], tmp_path).stdout.strip() == f"vault-tools {vault_tools.__version__}"

    vault = tmp_path / "vault"
    created = run([tool, "init", vault, "--sample"], tmp_path).stdout
    assert "re-dated" in created
    sample_days = {p.name for p in (ROOT / "vault" / "memory").glob("*.md")}
    assert len(list((vault / "memory").glob("*.md"))) == len(sample_days)
    assert (vault / "MEMORY.md").is_file() and (vault / ".gitignore").is_file()
    assert not list(vault.rglob("*.py")), "the sample vault holds notes only"

    heartbeat = run([tool, "heartbeat", "--vault", vault], tmp_path).stdout
    assert re.search(r"promoted \[Facts\] 我对花生和坚果过敏", heartbeat), heartbeat
    answer = run([tool, "recall", "--vault", vault, "我对什么过敏?"], tmp_path).stdout
    first = answer.splitlines()[:2]
    assert first[0].startswith("MEMORY.md:") and "[Facts]" in first[0], answer
    assert "我对花生和坚果**过敏**" in first[1], answer
    log = run(["git", "-C", vault, "log", "--format=%s"], tmp_path).stdout
    assert 'memory: promote "我对花生和坚果过敏，吃了会起荨麻疹，严重时要用 EpiPen。"' in log


def test_the_build_warns_of_nothing(built: Built) -> None:
    warned = [line for line in built.log.splitlines() if re.search(r"(?i)warn|deprecat", line)]
    assert warned == [], "\n".join(warned)


def test_the_metadata_is_what_a_package_index_shows(built: Built) -> None:
    meta = metadata(built.wheel)
    assert meta["Version"] == vault_tools.__version__
    assert meta["Summary"] == readme_first_sentence()
    assert meta["License-Expression"] == "MIT" and meta["License-File"] == "LICENSE"
    assert meta["Description-Content-Type"] == "text/markdown"
    assert str(meta.get_payload()).startswith("# vault-tools")  # the README is the long description
    assert meta["Keywords"] and meta["Requires-Python"] == ">=3.10"
    urls = dict(line.split(", ", 1) for line in meta.get_all("Project-URL", []))
    assert {"Homepage", "Source", "Issues", "Changelog"} <= set(urls)
    classifiers = meta.get_all("Classifier", [])
    assert [
        c.rsplit(" :: ", 1)[1]
        for c in classifiers
        if re.match(r"Programming Language :: Python :: 3\.\d+$", c)
    ] == list(SUPPORTED)


def test_the_sdist_holds_the_sample_vault_licence_changelog_and_docs(built: Built) -> None:
    with tarfile.open(built.sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    expected = {
        f"vault/{p.relative_to(ROOT / 'vault').as_posix()}"
        for p in (ROOT / "vault").rglob("*")
        if p.is_file()
    }
    assert expected <= names
    assert {"LICENSE", "CHANGELOG.md", "README.md", "tests/conftest.py", "mkdocs.yml"} <= names
    assert {f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md")} <= names  # the site builds from the sdist
    with zipfile.ZipFile(built.wheel) as wheel:
        packaged = {n for n in wheel.namelist() if n.startswith("vault_tools/sample_vault/")}
    assert packaged == {n.replace("vault/", "vault_tools/sample_vault/", 1) for n in expected}
