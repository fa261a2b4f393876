"""The declared runtime dependencies are exactly what the package imports."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent


def normalised(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


#: Extras the package itself imports (only when configured): semantic recall's numpy.
RUNTIME_EXTRAS = ("embeddings",)


def declared() -> set[str]:
    """Distribution names of ``[project] dependencies`` and of the runtime extras, markers included
    (tomli on 3.10)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    specs = [*project["dependencies"]]
    for extra in RUNTIME_EXTRAS:
        specs += project["optional-dependencies"][extra]
    return {normalised(re.split(r"[\s<>=!~;\[]", spec, maxsplit=1)[0]) for spec in specs}


def imported_modules() -> set[str]:
    """Top-level modules that vault_tools imports, anywhere in a module (lazy imports included)."""
    found: set[str] = set()
    for path in (ROOT / "vault_tools").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add(node.module.split(".")[0])
    # tomllib is the standard library's from 3.11 (tomli is imported in its place before that)
    return found - set(sys.stdlib_module_names) - {"vault_tools", "__future__", "tomllib"}


def module_distributions(modules: set[str]) -> dict[str, list[str]]:
    """Top-level module -> the distributions that install it. Python 3.10's
    ``packages_distributions`` reads only ``top_level.txt``, which python-frontmatter's wheel lacks:
    a module of ``modules`` found in no such file is looked for in the distributions' file lists,
    as 3.11 does."""
    found = {module: list(names) for module, names in importlib.metadata.packages_distributions().items()}
    missing = modules - found.keys()
    for dist in importlib.metadata.distributions() if missing else ():
        for file in dist.files or ():
            top = file.parts[0].removesuffix(".py") if file.parts else ""
            if top in missing and (len(file.parts) > 1 or file.suffix == ".py"):
                names = found.setdefault(top, [])
                if dist.metadata["Name"] not in names:
                    names.append(dist.metadata["Name"])
    return found


def test_every_import_is_declared_and_every_declaration_imported() -> None:
    modules = imported_modules()
    distributions = module_distributions(modules)
    used = {normalised(dist) for module in modules for dist in distributions.get(module, [module])}
    assert used - declared() == set(), "imported but not declared in pyproject.toml"
    assert declared() - used == set(), "declared in pyproject.toml but never imported"
