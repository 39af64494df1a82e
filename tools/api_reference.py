#!/usr/bin/env python
"""Write the book's API reference page (`api.md`) from hwlib itself.

For every public function of hwlib's teaching modules (the flat top-level modules a chapter imports:
cost models, data and units; the machinery packages are left out) the page gives its signature, the
first paragraph of its docstring, its formula from the module's `FORMULAS` table, and links to the
section of the book that first calls it (then the other chapters that call it): found by reading
every chapter's code cells with `ast`, following `from hwlib import x as y` and `from hwlib.x import f`.

    python tools/api_reference.py           rewrite api.md
    python tools/api_reference.py --check   exit 1 if api.md is not what this would write
"""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import pkgutil
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import jupytext
import yaml
from myst_parser.mdit_to_docutils.base import default_slugify

import extract_cells

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "api.md"
# Machinery: the command line, probing, figures, the page's JavaScript, the book's glue, provenance.
MACHINERY = re.compile(r"^(_.*|cli.*|backend|device_info|spec_match|cpuinfo|gallery|book|provenance|sourced|dtypes)$")
HEADER = """\
(api)=
# API reference

Every public function of the `hwlib` modules the chapters import, in one place: its signature, what
it computes (the first paragraph of its docstring: `help(...)` prints the rest), its formula in the
book's notation, and the section that teaches it, followed by the other chapters that call it. The
page is written by `tools/api_reference.py` from the library and the chapters' code, so it cannot
drift from either. The {ref}`formulas` collect the formulas with a worked value each; the
command line (`hwlib --help`) exposes the same functions.
"""


@dataclass
class Entry:
    module: str
    name: str
    obj: object
    taught: list[tuple[str, str, str]] = field(default_factory=list)  # (doc, heading, slug), book order


def teaching_modules() -> list[str]:
    """The flat top-level modules of hwlib that are the reader's API, alphabetically."""
    import hwlib

    names = [m.name for m in pkgutil.iter_modules(hwlib.__path__) if not m.ispkg]
    return sorted(n for n in names if not MACHINERY.match(n))


def public_functions(module_name: str) -> list[tuple[str, object]]:
    """(name, function) of the public functions and public classes' methods ("Class.method", the
    getter of a property) defined in (not imported into) hwlib.<module_name>, in source order."""
    module = importlib.import_module("hwlib." + module_name)
    found = []
    for name, obj in vars(module).items():
        if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
            continue
        if inspect.isfunction(obj):
            found.append((inspect.getsourcelines(obj)[1], name, obj))
        elif inspect.isclass(obj):
            found += [(line, f"{name}.{m}", f) for line, m, f in _methods(obj)]
    return [(name, obj) for _, name, obj in sorted(found, key=lambda t: t[:2])]


def _methods(cls) -> list[tuple[int, str, object]]:
    out = []
    for m, f in vars(cls).items():
        f = f.fget if isinstance(f, property) else getattr(f, "__func__", f)
        if not m.startswith("_") and inspect.isfunction(f):
            out.append((inspect.getsourcelines(f)[1], m, f))
    return out


def book_documents() -> list[str]:
    """The chapters, in the order of _toc.yml (paths without suffix, relative to the root)."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    docs = [c["file"] for part in toc["parts"] for c in part["chapters"]]
    return [d for d in docs if d.startswith("chapters/")]


def _aliases(tree: ast.AST, aliases: dict) -> None:
    """Record `from hwlib import m as a` (a -> (m, None)) and `from hwlib.m import f as g` (g -> (m, f))."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "hwlib":
            parts = node.module.split(".")[1:]
            for a in node.names:
                if not parts:
                    aliases[a.asname or a.name] = (a.name, None)
                elif len(parts) == 1:
                    aliases[a.asname or a.name] = (parts[0], a.name)


def _calls(tree: ast.AST, aliases: dict, methods: dict) -> set[tuple[str, str]]:
    """(module, function) of every call `alias.f(...)` or `g(...)` the aliases resolve, and
    (module, "Class.m") of `x.m(...)` for a method name that one class of the API alone has."""
    out = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in aliases:
            module, name = aliases[f.value.id]
            if name is None:
                out.add((module, f.attr))
        elif isinstance(f, ast.Attribute) and f.attr in methods:
            out.add(methods[f.attr])
        elif isinstance(f, ast.Name) and f.id in aliases and aliases[f.id][1] is not None:
            out.add(aliases[f.id])
    return out


def _parse(source: str) -> ast.AST | None:
    try:
        return ast.parse(extract_cells.pythonic(source))
    except SyntaxError:
        return None


_HEADING = re.compile(r"^(#{1,3})\s+(.+?)\s*$", re.M)


def uses(doc: str, methods: dict) -> list[tuple[str, str, str, str, str]]:
    """(module, function, doc, heading, slug) for each hwlib call in a chapter, in reading order."""
    nb = jupytext.read(ROOT / (doc + ".md"))
    aliases: dict = {}
    heading = slug = ""
    out = []
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for level, text in _HEADING.findall(cell.source):
                if len(level) > 1 and "$" not in text and "{" not in text and "`" not in text:
                    heading, slug = text, default_slugify(text)
            continue
        tree = _parse(cell.source) if cell.cell_type == "code" else None
        if tree is None:
            continue
        _aliases(tree, aliases)
        out += [(m, f, doc, heading, slug) for m, f in sorted(_calls(tree, aliases, methods))]
    return out


def entries() -> list[Entry]:
    table = {}
    for module in teaching_modules():
        for name, obj in public_functions(module):
            table[(module, name)] = Entry(module, name, obj)
    methods: dict[str, list] = {}
    for module, name in table:
        if "." in name:
            methods.setdefault(name.split(".")[1], []).append((module, name))
    unique = {m: where[0] for m, where in methods.items() if len(where) == 1}
    for doc in book_documents():
        for module, name, d, heading, slug in uses(doc, unique):
            entry = table.get((module, name))
            if entry is not None and (d, heading, slug) not in entry.taught:
                entry.taught.append((d, heading, slug))
    return list(table.values())


def _summary(obj) -> str:
    doc = inspect.getdoc(obj) or ""
    return " ".join(doc.split("\n\n")[0].split())


def _signature(entry: Entry) -> str:
    try:
        signature = inspect.signature(entry.obj)
    except (TypeError, ValueError):
        return f"{entry.module}.{entry.name}(...)"
    sig, first = str(signature), list(signature.parameters)[:1]
    if "." in entry.name and first in (["self"], ["cls"]):  # a method, shown as it is called
        sig = "(" + sig[1:].removeprefix(first[0]).lstrip(", ")
    return f"{entry.module}.{entry.name}{sig}"


def _links(entry: Entry) -> str:
    if not entry.taught:
        return "No chapter calls it directly."
    first, *rest = entry.taught
    doc, heading, slug = first
    text = f"Taught in {{doc}}`/{doc}`"
    if heading:
        text += f", [{heading}]({doc}.md#{slug})"
    chapters = []
    for d, _, _ in rest:
        if d != doc and d not in chapters:
            chapters.append(d)
    if chapters:
        text += "; also called in " + ", ".join(f"{{doc}}`/{d}`" for d in chapters)
    return text + "."


def render() -> str:
    out = [HEADER]
    by_module: dict[str, list[Entry]] = {}
    for e in entries():
        by_module.setdefault(e.module, []).append(e)
    for module, items in by_module.items():
        mod = importlib.import_module("hwlib." + module)
        formulas = getattr(mod, "FORMULAS", {})
        out.append(f"\n## `hwlib.{module}`\n\n{_summary(mod)}\n")
        for e in items:
            out.append(f"\n```python\n{_signature(e)}\n```\n")
            body = _summary(e.obj) or "(no docstring)"
            if e.name in formulas:
                body += f" Formula: {formulas[e.name]}."
            out.append(f"{body} {_links(e)}\n")
    return "".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if api.md is stale")
    args = ap.parse_args(argv)
    text = render()
    if args.check:
        if not PAGE.exists() or PAGE.read_text() != text:
            print("api.md is stale: run python tools/api_reference.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text)
    print(f"wrote {PAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
