"""Whoosh's private API: every name vault_tools relies on, on the installed Whoosh, and nowhere else.

:mod:`vault_tools.index.whoosh_private` is the one module that touches Whoosh's private names.
:data:`PRIVATE` names each of them with the kind this code expects (a method and its parameters, an
attribute, a constant ...); the first test checks each against the installed whoosh-reloaded and
says which one a new release changed. The second keeps the list whole: every private name the
module uses is on it, and nothing else. The last checks, by reading the source, that no other
module of vault_tools uses a private name of Whoosh's, imports Whoosh's codec or file internals,
or patches Whoosh.
"""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.metadata
import inspect
import sys
import textwrap
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import vault_tools
from vault_tools.index import whoosh_private

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PACKAGE = Path(vault_tools.__file__).resolve().parent
PRIVATE_MODULE = PACKAGE / "index" / "whoosh_private.py"
ROOT = PACKAGE.parent


@dataclass(frozen=True)
class Private:
    """A name of Whoosh's that whoosh_private relies on: ``owner`` is a module or a class in one
    (``whoosh.codec.whoosh3:W3PerDocReader``), ``kind`` what it must be there, ``params`` a
    callable's parameters (after ``self``/``cls``) as they are used."""

    owner: str
    name: str
    kind: str  # function | method | classmethod | attribute | parameter | class | constant
    params: tuple[str, ...] = ()


W3 = "whoosh.codec.whoosh3"
WRITER = "whoosh.writing:SegmentWriter"
POSTINGS = f"{W3}:W3PostingsWriter"
COLUMN = "whoosh.columns:NumericColumn.Reader"

PRIVATE: tuple[Private, ...] = (
    # importing
    Private("whoosh.util.numeric", "split_ranges", "function", ("intsize", "step", "start", "end")),
    # the file layer
    Private("whoosh.filedb.structfile:BufferFile", "__init__", "method", ("buf", "name", "onclose")),
    Private("whoosh.filedb.structfile:BufferFile", "_buf", "attribute"),
    Private("whoosh.filedb.structfile:BufferFile", "file", "attribute"),
    Private(
        "whoosh.index:FileIndex",
        "_reader",
        "classmethod",
        ("storage", "schema", "segments", "generation", "reuse"),
    ),
    Private(f"{W3}:W3PerDocReader", "_cached_reader", "method", ("fieldname", "column")),
    Private(f"{W3}:W3PerDocReader", "_readers", "attribute"),
    # reading postings and columns
    Private("whoosh.reading:SegmentReader", "_terms", "attribute"),
    Private("whoosh.reading:SegmentReader", "_perdoc", "attribute"),
    Private("whoosh.reading:SegmentReader", "deleted_docs_set", "attribute"),
    Private(f"{W3}:W3TermsReader", "_postfile", "attribute"),
    Private(f"{W3}:W3TermsReader", "term_info", "method", ("fieldname", "tbytes")),
    Private(f"{W3}:W3TermInfo", "is_inlined", "method"),
    Private(f"{W3}:W3TermInfo", "inlined_postings", "method"),
    Private(f"{W3}:W3TermInfo", "extent", "method"),
    Private(W3, "WHOOSH3_HEADER_MAGIC", "constant"),
    Private(W3, "LENGTHS_COLUMN", "constant"),
    Private(W3, "W3TermsReader", "class"),
    Private(W3, "_lenfield", "function", ("fieldname",)),
    Private(COLUMN, "_dbfile", "attribute"),
    Private(COLUMN, "_basepos", "attribute"),
    Private(COLUMN, "_count", "attribute"),
    Private(COLUMN, "_default", "attribute"),
    Private("whoosh.columns:NumericColumn", "_typecode", "attribute"),
    Private("whoosh.scoring:BM25F", "_field_B", "attribute"),
    # writing a build's segment
    Private(f"{WRITER}.__init__", "_lk", "parameter"),
    Private(WRITER, "_check_state", "method"),
    Private(WRITER, "_doc_boost", "method", ("fields",)),
    Private(WRITER, "_field_boost", "method", ("fields", "fieldname", "default")),
    Private(WRITER, "_check_fields", "method", ("schema", "fieldnames")),
    Private(WRITER, "_added", "attribute"),
    Private(WRITER, "_flush_segment", "method"),
    Private(WRITER, "_finalize_segment", "method"),
    Private(WRITER, "_finish", "method"),
    Private(WRITER, "docnum", "attribute"),
    Private(WRITER, "perdocwriter", "attribute"),
    Private(WRITER, "fieldwriter", "attribute"),
    Private(f"{W3}:W3FieldWriter", "_postwriter", "attribute"),
    Private(POSTINGS, "_blocklimit", "attribute"),
    Private(POSTINGS, "_ids", "attribute"),
    Private(POSTINGS, "_weights", "attribute"),
    Private(POSTINGS, "_values", "attribute"),
    Private(POSTINGS, "_maxweight", "attribute"),
    Private(POSTINGS, "_minlength", "attribute"),
    Private(POSTINGS, "_maxlength", "attribute"),
    Private(POSTINGS, "_write_block", "method"),
    Private("whoosh.index:FileIndex", "_segments", "method"),
    Private("whoosh.index", "TOC", "class"),
    Private("whoosh.index:TOC", "write", "method", ("storage", "indexname")),
    Private("whoosh.index", "clean_files", "function", ("storage", "indexname", "gen", "segments")),
    # matchers
    Private("whoosh.matching.wrappers:RequireMatcher", "child", "attribute"),
    Private("whoosh.matching.binary:IntersectionMatcher", "_find_next", "method"),
    Private("whoosh.matching.binary:AndNotMatcher", "_find_first", "method"),
    Private("whoosh.matching.binary:AndNotMatcher", "_find_next", "method"),
)

#: Whoosh modules that are its on-disk format or file internals: only whoosh_private imports them.
INTERNAL_MODULES = ("whoosh.codec", "whoosh.filedb.structfile", "whoosh.filedb.compound")


def whoosh_version() -> str:
    return importlib.metadata.version("whoosh-reloaded")


def changed(item: Private, detail: str) -> str:
    return (
        f"whoosh-reloaded {whoosh_version()} changed {item.owner.replace(':', '.')}.{item.name}: "
        f"vault_tools/index/whoosh_private.py needs review ({detail})"
    )


def resolve(owner: str) -> Any:
    """A module (``whoosh.index``) or a (nested) class or function in one (``whoosh.index:TOC``)."""
    module_name, _, path = owner.partition(":")
    found: Any = importlib.import_module(module_name)
    for part in path.split(".") if path else []:
        found = getattr(found, part)
    return found


def parameters(function: Any, skip_first: bool) -> tuple[str, ...]:
    names = tuple(inspect.signature(function).parameters)
    return names[1:] if skip_first else names


@functools.cache
def self_assigned(cls: type) -> frozenset[str]:
    """The attribute names methods of ``cls`` (and its Whoosh bases) assign on ``self``."""
    names: set[str] = set()
    for klass in cls.__mro__:
        if not klass.__module__.startswith("whoosh"):
            continue
        try:
            source = textwrap.dedent(inspect.getsource(klass))
        except (OSError, TypeError):
            continue
        for node in ast.walk(ast.parse(source)):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.ctx, ast.Store)
                and isinstance(node.value, ast.Name)
                and node.value.id == "self"
            ):
                names.add(node.attr)
    return frozenset(names)


def has_attribute(cls: type, name: str) -> bool:
    return any(name in vars(klass) for klass in cls.__mro__) or name in self_assigned(cls)


def problem_with(item: Private) -> str | None:
    """What is wrong with ``item`` on the installed Whoosh, or None."""
    try:
        owner = resolve(item.owner)
    except (ImportError, AttributeError) as exc:
        return f"{item.owner} is gone ({exc})"
    if item.kind == "parameter":
        names = parameters(owner, skip_first=False)
        return None if item.name in names else f"no parameter {item.name} in {names}"
    if item.kind == "attribute":
        return None if has_attribute(owner, item.name) else "no such attribute"
    static = inspect.getattr_static(owner, item.name, None)
    if static is None:
        return f"no {item.kind} of that name"
    if item.kind == "class":
        return None if inspect.isclass(static) else f"not a class but {type(static).__name__}"
    if item.kind == "constant":
        return None if not callable(static) else f"not a constant but {type(static).__name__}"
    if item.kind == "classmethod":
        if not isinstance(static, classmethod):
            return f"not a classmethod but {type(static).__name__}"
        function, skip = static.__func__, True
    elif item.kind == "method":
        if not inspect.isfunction(static):
            return f"not a method but {type(static).__name__}"
        function, skip = static, True
    else:
        if not inspect.isfunction(static):
            return f"not a function but {type(static).__name__}"
        function, skip = static, False
    found = parameters(function, skip)
    if found[: len(item.params)] != item.params or any(
        p.default is inspect.Parameter.empty and p.kind is p.POSITIONAL_OR_KEYWORD
        for p in list(inspect.signature(function).parameters.values())[len(item.params) + skip :]
    ):
        return f"its parameters are {found}, this code calls it with {item.params}"
    return None


def test_whoosh_is_pinned_exactly_to_the_version_installed() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pins = [dep for dep in project["dependencies"] if dep.lower().startswith("whoosh-reloaded")]
    assert pins == [f"whoosh-reloaded=={whoosh_version()}"], (
        f"pyproject.toml has {pins}, installed is whoosh-reloaded {whoosh_version()}: "
        "vault_tools/index/whoosh_private.py relies on private names, so pin one version exactly (==)"
    )


@pytest.mark.parametrize("item", PRIVATE, ids=lambda item: f"{item.owner}.{item.name}")
def test_each_private_name_is_what_whoosh_private_expects(item: Private) -> None:
    problem = problem_with(item)
    assert problem is None, changed(item, problem or "")


def test_a_changed_name_is_reported_with_the_version_and_the_module_to_review() -> None:
    gone = Private(WRITER, "_flush_segment_renamed", "method")
    moved = Private(WRITER, "_doc_boost", "method", ("fields", "boost_first"))
    not_a_class = Private(W3, "LENGTHS_COLUMN", "class")
    assert problem_with(gone) == "no method of that name"
    assert "this code calls it with ('fields', 'boost_first')" in str(problem_with(moved))
    assert problem_with(not_a_class) == "not a class but NumericColumn"
    assert changed(gone, "x") == (
        f"whoosh-reloaded {whoosh_version()} changed whoosh.writing.SegmentWriter._flush_segment_renamed: "
        "vault_tools/index/whoosh_private.py needs review (x)"
    )


# ---------------------------------------------------------------------------------------------
# Reading the source


#: A named tuple's public API starts with "_" so as not to clash with its fields.
NAMED_TUPLE_API = frozenset({"_asdict", "_field_defaults", "_fields", "_make", "_replace"})


def is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__") and name not in NAMED_TUPLE_API


def whoosh_bindings(tree: ast.AST) -> dict[str, str]:
    """Local name -> what of Whoosh's it is bound to (``wi`` -> ``whoosh.index``,
    ``SegmentWriter`` -> ``whoosh.writing:SegmentWriter``), from every import in the module."""
    bound: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "whoosh":
            for alias in node.names:
                module = f"{node.module}.{alias.name}"
                try:
                    importlib.import_module(module)
                    bound[alias.asname or alias.name] = module
                except ImportError:
                    bound[alias.asname or alias.name] = f"{node.module}:{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "whoosh":
                    bound[alias.asname or alias.name.split(".")[0]] = (
                        alias.asname and alias.name
                    ) or "whoosh"
    return bound


def root_name(node: ast.expr) -> str | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def whoosh_base(cls: ast.ClassDef, bound: dict[str, str]) -> type | None:
    """The first base of ``cls`` that is a class of Whoosh's, or None."""
    for base in cls.bases:
        name = root_name(base)
        if name in bound:
            found = resolve(bound[name])
            if isinstance(base, ast.Attribute):
                found = getattr(found, base.attr)
            return found if isinstance(found, type) else None
    return None


@dataclass(frozen=True)
class Use:
    line: int
    name: str
    what: str


@dataclass(frozen=True)
class Context:
    """Where a node is: its innermost class, that class's Whoosh base, the class's own names."""

    cls: ast.ClassDef | None = None
    base: type | None = None
    own: frozenset[str] = frozenset()


def class_contexts(tree: ast.AST, bound: dict[str, str]) -> dict[int, Context]:
    """id(node) -> :class:`Context`, for every node inside a class. A class's own names are the
    private names it sets on ``self`` or defines that its Whoosh base (if any) does not have."""
    found: dict[int, Context] = {}
    for cls in [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]:  # outer classes first
        base = whoosh_base(cls, bound)
        names = {
            n.attr
            for n in ast.walk(cls)
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self"
        }
        names |= {n.name for n in cls.body if isinstance(n, ast.FunctionDef)}
        own = frozenset(n for n in names if base is None or not has_attribute(base, n))
        for node in ast.walk(cls):
            found[id(node)] = Context(cls, base, own)
    return found


def private_uses(tree: ast.AST, whoosh_names: frozenset[str]) -> Iterator[Use]:
    """The private names of Whoosh's that a module uses, as :data:`PRIVATE` would list them.

    ``whoosh_names``: the private names Whoosh has anywhere (an access ``x._name`` of one of those
    on anything but a class of our own is taken for Whoosh's). In a class with a Whoosh base,
    ``self._name`` and ``def _name`` are Whoosh's when that base has the name.
    """
    bound = whoosh_bindings(tree)
    contexts = class_contexts(tree, bound)
    for node in ast.walk(tree):
        where = contexts.get(id(node), Context())
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "whoosh":
            for alias in node.names:
                if is_private(alias.name):
                    yield Use(node.lineno, alias.name, f"imports {node.module}.{alias.name}")
        elif isinstance(node, ast.Attribute) and is_private(node.attr) and node.attr not in where.own:
            if node.attr in whoosh_names or root_name(node) in bound:
                yield Use(node.lineno, node.attr, f"uses .{node.attr}")
        elif isinstance(node, ast.FunctionDef) and where.base is not None and where.cls is not None:
            if node in where.cls.body and is_private(node.name) and node.name not in where.own:
                yield Use(node.lineno, node.name, f"overrides {where.base.__name__}.{node.name}")
        elif isinstance(node, ast.Call):
            yield from call_uses(node, whoosh_names)


def call_uses(node: ast.Call, whoosh_names: frozenset[str]) -> Iterator[Use]:
    """A private keyword argument (``_lk=``) or attribute name (``getattr(x, "_terms")``)."""
    for keyword in node.keywords:
        if keyword.arg is not None and is_private(keyword.arg) and keyword.arg in whoosh_names:
            yield Use(node.lineno, keyword.arg, f"passes {keyword.arg}=")
    if isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr", "setattr"):
        text = node.args[1] if len(node.args) > 1 else None
        if (
            isinstance(text, ast.Constant)
            and isinstance(text.value, str)
            and is_private(text.value)
            and text.value in whoosh_names
        ):
            yield Use(node.lineno, text.value, f"{node.func.id}(..., {text.value!r})")


@functools.cache
def whoosh_private_names() -> frozenset[str]:
    """Every private name Whoosh's source defines: functions, methods, attributes, parameters."""
    whoosh_dir = Path(importlib.import_module("whoosh").__file__ or "").parent
    names: set[str] = set()
    for source in whoosh_dir.rglob("*.py"):
        with warnings.catch_warnings():  # its vendored pyparsing has invalid escapes
            warnings.simplefilter("ignore")
            tree = ast.parse(source.read_text(encoding="utf-8", errors="replace"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
    return frozenset(n for n in names if is_private(n))


def test_the_list_names_every_private_name_whoosh_private_uses_and_no_other() -> None:
    tree = ast.parse(PRIVATE_MODULE.read_text())
    used = {use.name for use in private_uses(tree, whoosh_private_names())}
    listed = {item.name for item in PRIVATE if is_private(item.name)}
    assert used - listed == set(), "used in whoosh_private.py but not listed in PRIVATE"
    assert listed - used == set(), "listed in PRIVATE but no longer used: take it off"


def monkey_patches(tree: ast.AST) -> Iterator[Use]:
    """Assignments to an attribute of something of Whoosh's (``whoosh.util.numeric.x = ...``)."""
    bound = whoosh_bindings(tree)
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else []
        for target in targets:
            if isinstance(target, ast.Attribute) and root_name(target) in bound:
                yield Use(node.lineno, target.attr, f"patches {ast.unparse(target)}")


def internal_imports(tree: ast.AST) -> Iterator[Use]:
    for node in ast.walk(tree):
        modules: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.module:
            modules = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        for module in modules:
            parts = module.split(".")
            if parts[0] == "whoosh" and (
                any(is_private(part) for part in parts)
                or any(module == m or module.startswith(m + ".") for m in INTERNAL_MODULES)
            ):
                yield Use(node.lineno, module, f"imports {module}")
                break


def uses_in(path: Path) -> list[Use]:
    tree = ast.parse(path.read_text(), str(path))
    return [*private_uses(tree, whoosh_private_names()), *monkey_patches(tree), *internal_imports(tree)]


def violations(path: Path) -> list[str]:
    rel = path.relative_to(ROOT)
    return [
        f"{rel}:{use.line}: {use.what}: Whoosh's private API belongs in vault_tools/index/whoosh_private.py"
        for use in uses_in(path)
    ]


def test_no_other_module_touches_whoosh_private_api() -> None:
    found = [
        problem
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != PRIVATE_MODULE
        for problem in violations(path)
    ]
    assert found == []


def test_the_source_check_finds_each_kind_of_private_use(tmp_path: Path) -> None:
    """The checks above on a module that does each thing they forbid (and some it allows)."""
    bad = tmp_path / "vault_tools" / "bad.py"
    bad.parent.mkdir()
    bad.write_text(
        textwrap.dedent(
            """
            from whoosh.codec.whoosh3 import _lenfield
            from whoosh.filedb.structfile import BufferFile
            from whoosh.matching.binary import AndNotMatcher
            from whoosh.util import numeric
            from whoosh.writing import SegmentWriter


            class Mine:
                def _mine_only(self): return self._mine


            class Writer(SegmentWriter):
                def _flush_segment(self): self._added = True
                def _helper(self): return self._only_mine


            def read(reader, weighting):
                numeric.split_ranges = None
                Writer(None, _lk=False)
                return reader._terms, getattr(weighting, "_field_B"), Mine()._mine_only()
            """
        )
    )
    assert sorted(use.what for use in uses_in(bad)) == sorted(
        [
            "imports whoosh.codec.whoosh3._lenfield",
            "imports whoosh.codec.whoosh3",
            "imports whoosh.filedb.structfile",
            "overrides SegmentWriter._flush_segment",
            "uses ._added",
            "passes _lk=",
            "uses ._terms",
            "getattr(..., '_field_B')",
            "patches numeric.split_ranges",
        ]
    )


def test_whoosh_private_itself_is_found_touching_private_names() -> None:
    """The module the check exempts would fail it (so the check can see what it forbids)."""
    assert len(violations(PRIVATE_MODULE)) > 40


def test_whoosh_private_is_whoosh_private() -> None:
    assert whoosh_private.__file__ is not None and Path(whoosh_private.__file__).resolve() == PRIVATE_MODULE
