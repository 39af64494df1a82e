"""Delegation to hwlib: find where a submission's code uses an hwlib function an exercise forbids.

An exercise that asks the learner to write a model hwlib already has (ex16's step time is
`hwlib.layout.evaluate`'s, ex17's fleet is `hwlib.rent.fleet`) can list those names in a top-level
`forbid:` block of its checks (exercises/FORMAT.md, "Forbidding hwlib's own answer"):

    forbid:
      - name: layout.evaluate            # hwlib.<module>.<name>, or a whole module: layout
        checks: [step_time_fn_tp8]       # the checks that score 0 when it is used; omitted: every check
        action: zero                     # zero (default) or flag (reported to the instructor only)

`uses` reads the code cells statically (never runs them) and follows the ways a notebook names a
function: `hwlib.layout.evaluate(...)`, `from hwlib import layout as L; L.evaluate`,
`from hwlib.layout import evaluate as ev`, `import hwlib.layout as L`, `from hwlib.layout import *`,
`getattr(L, "evaluate")` with a literal name, and `importlib.import_module("hwlib.layout")`. A
reference counts as a use (`f = layout.evaluate; f(...)` calls it). Limits: a name built at run
time (`getattr(L, "eval" + "uate")`, `exec`), a copy of hwlib's source pasted into the notebook,
and calls made inside another hwlib function are not seen; list every entry point that computes
the answer (e.g. both `layout.evaluate` and `layout.search`).
"""

from __future__ import annotations

import ast
import importlib
import re
from dataclasses import dataclass

ACTIONS = ("zero", "flag")
_NAME = re.compile(r"^[a-z_][a-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$")


@dataclass(frozen=True)
class Forbidden:
    """One forbidden hwlib name (`module` or `module.attr`, without the `hwlib.` prefix), the checks
    it zeroes (() = every check) and the action."""

    name: str
    checks: tuple = ()
    action: str = "zero"

    @property
    def dotted(self) -> str:
        return f"hwlib.{self.name}"


def parse(block, where: str) -> tuple:
    """The `forbid:` block as a tuple of `Forbidden`; ValueError naming the entry when it is not a list
    of {name, checks?, action?} with a name hwlib has."""
    if block is None:
        return ()
    if not isinstance(block, list):
        raise ValueError(f"{where}: forbid must be a list of {{name, checks, action}} entries")
    out = []
    for i, entry in enumerate(block):
        w = f"{where}: forbid entry {i + 1}"
        entry = {"name": entry} if isinstance(entry, str) else entry
        if not isinstance(entry, dict) or set(entry) - {"name", "checks", "action"} or "name" not in entry:
            raise ValueError(f"{w}: give name (e.g. layout.evaluate) and optionally checks and action; got {entry!r}")
        name = str(entry["name"]).removeprefix("hwlib.")
        if not _NAME.match(name):
            raise ValueError(
                f"{w}: name must be an hwlib module or module.function, e.g. layout.evaluate; got {name!r}"
            )
        _exists(name, w)
        checks = entry.get("checks") or []
        if not isinstance(checks, list) or not all(isinstance(c, str) for c in checks):
            raise ValueError(f"{w}: checks must be a list of check names")
        action = entry.get("action", "zero")
        if action not in ACTIONS:
            raise ValueError(f"{w}: action must be one of {ACTIONS}; got {action!r}")
        out.append(Forbidden(name, tuple(checks), action))
    return tuple(out)


def _exists(name: str, where: str) -> None:
    module, _, attr = name.partition(".")
    try:
        mod = importlib.import_module(f"hwlib.{module}")
    except ImportError:
        raise ValueError(f"{where}: hwlib has no module {module!r}") from None
    if attr and not hasattr(mod, attr):
        raise ValueError(f"{where}: hwlib.{module} has no {attr!r}")


def merge(public: tuple, hidden: tuple) -> tuple:
    """Hidden entries replace public ones of the same name and add the others."""
    by_name = {f.name: f for f in hidden}
    return tuple(by_name.pop(f.name, f) for f in public) + tuple(by_name.values())


def _python(code: str) -> str:
    """Cell code with IPython's own lines (%magic, !shell) blanked, so that it parses."""
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in code.splitlines())


class _Scan(ast.NodeVisitor):
    """Resolve names to dotted hwlib paths through the cell's imports; record every use."""

    def __init__(self, aliases: dict, star: set):
        self.aliases, self.star, self.found = aliases, star, []

    def visit_Import(self, node):
        for a in node.names:
            if a.asname:
                self.aliases[a.asname] = a.name
            else:
                top = a.name.split(".")[0]
                self.aliases[top] = top

    def visit_ImportFrom(self, node):
        if node.module and not node.level:
            for a in node.names:
                if a.name == "*":
                    self.star.add(node.module)
                else:
                    self.aliases[a.asname or a.name] = f"{node.module}.{a.name}"
                    self.found.append((f"{node.module}.{a.name}", node.lineno))

    def _dotted(self, node):
        if isinstance(node, ast.Name):
            if node.id in self.aliases:
                return self.aliases[node.id]
            return next((f"{m}.{node.id}" for m in self.star), None)
        if isinstance(node, ast.Attribute):
            base = self._dotted(node.value)
            return f"{base}.{node.attr}" if base else None
        return None

    def visit_Attribute(self, node):
        path = self._dotted(node)
        if path:
            self.found.append((path, node.lineno))
        self.generic_visit(node)

    def visit_Name(self, node):
        path = self._dotted(node)
        if path:
            self.found.append((path, node.lineno))

    def visit_Call(self, node):
        f, args = node.func, node.args
        if isinstance(f, ast.Name) and f.id == "getattr" and len(args) >= 2:
            base = self._dotted(args[0])
            if base and isinstance(args[1], ast.Constant) and isinstance(args[1].value, str):
                self.found.append((f"{base}.{args[1].value}", node.lineno))
        if args and isinstance(args[0], ast.Constant) and isinstance(args[0].value, str):
            if str(args[0].value).startswith("hwlib"):  # importlib.import_module("hwlib.layout"), __import__
                self.found.append((args[0].value, node.lineno))
        self.generic_visit(node)


def uses(cells, forbidden) -> dict:
    """{forbidden name: ["cell 3, line 2", ...]} for every `Forbidden` the code cells use (cells: the
    code cells' sources in order; imports carry over from one cell to the next, as in a kernel). A
    cell that does not parse is skipped (it cannot run either)."""
    aliases: dict = {}
    star: set = set()
    hits: dict = {}
    for i, src in enumerate(cells):
        try:
            tree = ast.parse(_python(src))
        except (SyntaxError, ValueError):
            continue
        scan = _Scan(aliases, star)
        scan.visit(tree)
        for path, line in scan.found:
            for f in forbidden:
                if path == f.dotted or path.startswith(f.dotted + "."):
                    where = f"cell {i + 1}, line {line}"
                    if where not in hits.setdefault(f.name, []):
                        hits[f.name].append(where)
    return hits


def zeroed(forbidden, hits: dict, check_names) -> dict:
    """{check name: [forbidden names used]} for the checks an action `zero` entry takes to 0."""
    out: dict = {}
    for f in forbidden:
        if f.action == "zero" and f.name in hits:
            for name in f.checks or check_names:
                out.setdefault(name, []).append(f.name)
    return out


def note(names) -> str:
    """What a zeroed check tells the learner."""
    used = ", ".join(f"hwlib.{n}" for n in names)
    return (
        f" 0 points: your code uses {used}, which gives this answer ready-made; this exercise asks you "
        "to compute it yourself."
    )
