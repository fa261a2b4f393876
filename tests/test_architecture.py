"""The package's shape: imports point one way, no circles, no module or class grown too big.

The packages are layers. A module may import from its own package and from the layers below it,
never above: a lazy import inside a function and an import for type checking only count too, as
they tie the code together just the same. The root package (``vault_tools/__init__.py``: the
version and the lazy ``Vault``) is not a layer. Each package's ``__init__.py`` says what it owns
and what it may import; this test keeps that true.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "vault_tools"

#: Bottom to top. ``base`` is the top-level modules every layer may use.
LAYERS = (
    "base",
    "notes",
    "privacy",
    "index",
    "vectors",
    "recall",
    "git",
    "curation",
    "summaries",
    "heartbeat",
    "agents",
    "watch",
    "cli",
)
BASE_MODULES = frozenset({"config", "errors", "locks", "feedback", "tokens", "chinese"})
TOP_MODULES = frozenset({"cli", "__main__"})
MAX_MODULE_LINES = 799  # under 800, as issue 30 asks
MAX_CLASS_LINES = 300

#: Debt being paid off (issue #30): each entry must still be true, so it is removed when fixed.
KNOWN_CYCLES: set[frozenset[str]] = set()
KNOWN_BIG_MODULES: set[str] = set()
KNOWN_BIG_CLASSES: set[str] = set()


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def layer_of(module: str) -> str:
    head = module.split(".")[0]
    if "." not in module and head in TOP_MODULES:
        return "cli"
    if "." not in module and head in BASE_MODULES:
        return "base"
    return head


def imported(tree: ast.AST, module: str, known: dict[str, Path]) -> Iterator[tuple[int, str]]:
    """(line, module) of every import of a vault_tools module in ``tree``, wherever it is."""
    package = module if known[module].name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("vault_tools."):
                    yield node.lineno, alias.name.removeprefix("vault_tools.")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join([*base, node.module] if node.module else base)
            elif node.module and (node.module == "vault_tools" or node.module.startswith("vault_tools.")):
                source = node.module.removeprefix("vault_tools").removeprefix(".")
            else:
                continue
            named = [f"{source}.{a.name}".lstrip(".") for a in node.names]
            submodules = [name for name in named if name in known]
            yield from ((node.lineno, name) for name in (submodules or [source]))


def import_graph() -> dict[str, dict[str, int]]:
    """module -> {imported module: first line}; the root package ("") is left out."""
    known = modules()
    graph: dict[str, dict[str, int]] = defaultdict(dict)
    for module, path in known.items():
        if not module:
            continue
        for line, target in imported(ast.parse(path.read_text(encoding="utf-8")), module, known):
            if target and target != module and target in known:
                graph[module].setdefault(target, line)
    return graph


def cycles(graph: dict[str, dict[str, int]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, {}):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_every_package_is_a_known_layer_and_says_what_it_may_import() -> None:
    for path in sorted(PACKAGE.glob("*/__init__.py")):
        package = path.parent.name
        assert package in LAYERS, f"vault_tools/{package}/ is no layer: place it in LAYERS ({__file__})"
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        assert "May import" in doc, f"{path}: its docstring must say what the package owns and may import"
    for path in sorted(PACKAGE.glob("*.py")):
        name = path.stem
        assert name == "__init__" or name in BASE_MODULES | TOP_MODULES, (
            f"{path}: a top-level module is base (config, errors, locks, feedback, tokens, chinese) or the CLI; "
            "put it in the package of its job"
        )


def test_imports_point_down_the_layers() -> None:
    known = modules()
    wrong = []
    for module, targets in sorted(import_graph().items()):
        rank = LAYERS.index(layer_of(module))
        for target, line in sorted(targets.items()):
            target_layer = layer_of(target)
            if target_layer != layer_of(module) and LAYERS.index(target_layer) > rank:
                path = known[module].relative_to(PACKAGE.parent)
                wrong.append(
                    f"{path}:{line} imports vault_tools.{target} ({target_layer} is above {layer_of(module)})"
                )
    assert not wrong, "imports that point up the layers:\n" + "\n".join(wrong)


def test_no_import_circles() -> None:
    found = set(cycles(import_graph()))
    new = sorted(sorted(c) for c in found - KNOWN_CYCLES)
    assert not new, f"import circles: {new}; move what both sides need into a module below them"
    fixed = sorted(sorted(c) for c in KNOWN_CYCLES - found)
    assert not fixed, f"no longer circles, remove them from KNOWN_CYCLES: {fixed}"


def sizes() -> tuple[dict[str, int], dict[str, int]]:
    module_lines: dict[str, int] = {}
    class_lines: dict[str, int] = {}
    for module, path in modules().items():
        text = path.read_text(encoding="utf-8")
        module_lines[module] = len(text.splitlines())
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef) and node.end_lineno is not None:
                class_lines[f"{module}.{node.name}"] = node.end_lineno - node.lineno + 1
    return module_lines, class_lines


@pytest.mark.parametrize(("kind", "limit"), [("module", MAX_MODULE_LINES), ("class", MAX_CLASS_LINES)])
def test_no_module_or_class_is_too_big(kind: str, limit: int) -> None:
    measured = sizes()[0 if kind == "module" else 1]
    known = KNOWN_BIG_MODULES if kind == "module" else KNOWN_BIG_CLASSES
    big = {name for name, lines in measured.items() if lines > limit}
    new = sorted(f"{name} ({measured[name]} lines)" for name in big - known)
    assert not new, f"{kind}s over {limit} lines: {new}; split them along a seam of their jobs"
    fixed = sorted(known - big)
    assert not fixed, f"no longer over {limit} lines, remove them from the known list: {fixed}"


def test_the_checks_see_a_circle_and_an_upward_import() -> None:
    """The graph reader itself: a lazy import inside a function counts, as does a relative one."""
    known = {"notes.model": PACKAGE / "notes" / "model.py", "heartbeat.run": PACKAGE / "heartbeat" / "run.py"}
    tree = ast.parse("def f():\n    from vault_tools.heartbeat import run\n\nfrom ..heartbeat.run import x\n")
    assert sorted(imported(tree, "notes.model", known)) == [(2, "heartbeat.run"), (4, "heartbeat.run")]
    assert cycles({"a": {"b": 1}, "b": {"a": 1}, "c": {"a": 1}}) == [frozenset({"a", "b"})]
    assert LAYERS.index(layer_of("heartbeat.run")) > LAYERS.index(layer_of("notes.model"))
