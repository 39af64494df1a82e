"""hwlib's module structure: no import cycles, not even through function-level imports.

The graph is built from the source's AST, so an ``import`` inside a function counts as much as one at
the top of a module: a function-level import that exists only to dodge a cycle still makes the two
modules one tangle a reader must understand together. An edge A -> B means a statement in A imports
module B or a name defined in B (``from hwlib.bench import timing`` is an edge to
``hwlib.bench.timing``; ``from hwlib.bench import run_all`` is an edge to ``hwlib.bench``). The
implicit import of a parent package when a submodule is imported is not an edge: it is how Python
works, not a choice the code makes. Imports under ``if TYPE_CHECKING:`` do not run and are not edges.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "hwlib"


def _module_name(path: Path, root: Path) -> str:
    parts = ("hwlib",) + path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(root: Path = ROOT) -> dict[str, Path]:
    """Every hwlib module name -> its source file."""
    return {_module_name(p, root): p for p in sorted(root.rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(tree: ast.AST):
    """Every Import/ImportFrom in the tree, at any depth, except those under ``if TYPE_CHECKING:``."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                stack.extend(child.orelse)
                continue
            stack.append(child)


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    """The longest prefix of dotted ``name`` that is an hwlib module, or None."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        candidate = ".".join(parts[:i])
        if candidate in known:
            return candidate
    return None


def imports_of(module: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The hwlib modules that ``module`` imports anywhere in its source."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in _import_nodes(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        found.update(t for t in map(lambda n: _resolve(n, known), targets) if t and t != module)
    return found


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    known = modules(root)
    return {name: imports_of(name, path, known) for name, path in known.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def _one_cycle(component: list[str], graph: dict[str, set[str]]) -> list[str]:
    """A shortest path from the component's first module back to itself, for the failure message."""
    start, members = component[0], set(component)
    paths, seen = [[start]], {start}
    while paths:
        nxt = []
        for path in paths:
            for w in sorted(graph[path[-1]] & members):
                if w == start:
                    return path + [start]
                if w not in seen:
                    seen.add(w)
                    nxt.append(path + [w])
        paths = nxt
    return component


def test_hwlib_has_no_import_cycle():
    graph = import_graph()
    found = cycles(graph)
    assert not found, (
        "import cycles in hwlib (function-level imports included):\n"
        + "\n".join(" -> ".join(_one_cycle(c, graph)) for c in found)
        + "\nmove what both need into a lower module (as hwlib.dtypes, hwlib.provenance, hwlib.bench.registry,"
        " hwlib.plot._base do), or pass the function in; a topic module of hwlib.plot imports from"
        " hwlib.plot._base or a sibling, never from hwlib.plot itself"
    )


# The detector itself must be able to fail: a synthetic package with a cycle hidden in a function.


@pytest.fixture
def tangled(tmp_path):
    pkg = tmp_path / "hwlib"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from . import a\n")
    (pkg / "a.py").write_text("def f():\n    from hwlib.sub import b\n    return b\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "b.py").write_text("from ..a import f\n")
    (pkg / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from hwlib import d\nimport hwlib.a\n"
    )
    (pkg / "d.py").write_text("from hwlib import c\n")
    return pkg


def test_detector_sees_function_level_and_relative_imports(tangled):
    graph = import_graph(tangled)
    assert graph["hwlib.a"] == {"hwlib.sub.b"}
    assert graph["hwlib.sub.b"] == {"hwlib.a"}
    assert graph["hwlib"] == {"hwlib.a"}
    assert graph["hwlib.c"] == {"hwlib.a"}  # the TYPE_CHECKING import does not run
    assert cycles(graph) == [["hwlib.a", "hwlib.sub.b"]]
    assert _one_cycle(["hwlib.a", "hwlib.sub.b"], graph) == ["hwlib.a", "hwlib.sub.b", "hwlib.a"]


def test_graph_covers_every_module():
    graph = import_graph()
    assert set(graph) == set(modules())
    assert {"hwlib", "hwlib.memory", "hwlib.bench.recorded", "hwlib.plot"} <= set(graph)
    assert "hwlib.models" in graph["hwlib.memory"]  # only function-level: memory.kv_cache_bytes_for
    assert "hwlib.memory" not in graph["hwlib.models"]  # models reads sizes from hwlib.dtypes
    assert graph["hwlib.dtypes"] == {"hwlib._check"} and graph["hwlib.provenance"] == set()
