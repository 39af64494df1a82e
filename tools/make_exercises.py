#!/usr/bin/env python
"""Generate the exercise notebooks from their single source (format: exercises/FORMAT.md).

For every `exercises/<id>/source.md` (jupytext MyST) this writes, next to it:
  <id>.ipynb       learner version: solution blocks replaced by their `# LEARNER:` lines, executed
  solution.ipynb   solution version, executed
and copies `checks.yaml` to `hwlib/grading/public/<id>.yaml` (so `check()` works where hwlib is
installed without the repository, e.g. on Colab).

    python tools/make_exercises.py [ID ...]      regenerate (all exercises by default)
    python tools/make_exercises.py --check [ID]  exit 1 if a generated file is stale (cells, tags,
                                                 metadata, the public checks copy, or stored outputs
                                                 older than the sources they came from); no execution

Placeholders `{{ expression }}` or `{{ expression | format }}` in any cell of source.md are replaced
by the value of the expression over the exercise's default parameters (checks.yaml `params:`) and
the hwlib modules, formatted (see FORMATS); an unknown name is an error naming it. Each notebook
records in `metadata.hwlib.sources` a hash of every file its stored outputs depend on (source.md,
checks.yaml, and the hwlib modules and data it imports), which --check compares.
"""

from __future__ import annotations

import argparse
import ast
import copy
import hashlib
import importlib
import math
import re
import sys
from pathlib import Path

import jupytext
import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's hwlib (spec, units), also when run from elsewhere
from hwlib import units  # noqa: E402
from hwlib.grading import spec  # noqa: E402

EXERCISES = ROOT / "exercises"
PUBLIC = ROOT / "hwlib" / "grading" / "public"
VARIANTS = ("learner", "solution")
_BEGIN = re.compile(r"^\s*#+\s*BEGIN SOLUTION\s*$")
_END = re.compile(r"^\s*#+\s*END SOLUTION\s*$")
_LEARNER = re.compile(r"^(\s*)#\s*LEARNER:\s?(.*)$")
_ONLY = {"learner": "learner-only", "solution": "solution-only"}


def split_solution(source: str, where: str) -> tuple[str, str]:
    """(learner source, solution source) of one code cell; ValueError on malformed markers."""
    learner, solution, block = [], [], None
    for n, line in enumerate(source.splitlines(), 1):
        if _BEGIN.match(line):
            if block is not None:
                raise ValueError(f"{where}, line {n}: nested BEGIN SOLUTION")
            block = []
        elif _END.match(line):
            if block is None:
                raise ValueError(f"{where}, line {n}: END SOLUTION without BEGIN SOLUTION")
            if not block:
                raise ValueError(
                    f"{where}, line {n}: a solution block needs at least one "
                    "'# LEARNER:' line (e.g. '# LEARNER: answer = None')"
                )
            learner.extend(block)
            block = None
        elif (m := _LEARNER.match(line)) is not None:
            if block is None:
                raise ValueError(f"{where}, line {n}: '# LEARNER:' outside a solution block")
            block.append(m.group(1) + m.group(2))
        else:
            solution.append(line)
            if block is None:
                learner.append(line)
    if block is not None:
        raise ValueError(f"{where}: BEGIN SOLUTION without END SOLUTION")
    return "\n".join(learner), "\n".join(solution)


_PLACEHOLDER = re.compile(r"\{\{(.*?)\}\}", re.S)
FORMATS = {
    "count": units.format_count,  # 16384 -> "16 384"
    "number": units.format_number,  # 1.3e9 -> "1.30 billion"
    "sci": units.format_sci,  # 3.96e14 -> "3.96 × 10¹⁴"
    "bytes": units.format_bytes,  # 2.6e9 -> "2.60 GB"
    "GiB": lambda x: units.format_bytes(x, binary=True),  # 17179869184 -> "16.0 GiB"
    "bandwidth": units.format_bandwidth,  # 3.35e12 -> "3.35 TB/s"
    "rate": units.format_rate,  # 989e12 -> "989 TFLOP/s"
    "seconds": units.format_seconds,  # 44280 -> "12.3 h"
    "usd": units.format_usd,  # 36 -> "$36.00"
    "pct": units.format_pct,  # 0.4 -> "40 %"
}
"""Named formats of a placeholder (`{{ n_params | number }}`); anything else after `|` is a Python
format spec (`{{ x | .2f }}`); without one, whole numbers print whole and others with `:g`."""


def _plain(value) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:g}" if isinstance(value, float) else str(value)


def substitute(text: str, params: dict, where: str) -> str:
    """`text` with every `{{ expression | format }}` replaced (module docstring); ValueError naming
    an unknown placeholder, format or a failing expression."""

    def one(m: re.Match) -> str:
        expr, _, fmt = m.group(1).partition("|")
        expr, fmt = expr.strip(), fmt.strip()
        try:
            tree = ast.parse(expr, "<placeholder>", "eval")
        except SyntaxError:
            raise ValueError(f"{where}: placeholder {m.group(0)!r} is not an expression") from None
        names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        modules = {m: importlib.import_module(f"hwlib.{m}") for m in spec._HWLIB_MODULES if m in names}
        scope = {"math": math, **modules, **params}
        unknown = sorted(
            n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id not in scope and n.id not in _BUILTINS
        )
        if unknown:
            raise ValueError(
                f"{where}: unknown placeholder {unknown} in {m.group(0)!r}; the exercise's parameters "
                f"are {sorted(params) or 'none'} (checks.yaml params:)"
            )
        try:
            value = eval(compile(tree, "<placeholder>", "eval"), {"__builtins__": _BUILTINS, **scope})
        except Exception as exc:
            raise ValueError(f"{where}: placeholder {m.group(0)!r} failed: {type(exc).__name__}: {exc}") from None
        if not fmt:
            return _plain(value)
        if fmt in FORMATS:
            return FORMATS[fmt](value)
        try:
            return format(value, fmt)
        except (ValueError, TypeError):
            raise ValueError(
                f"{where}: unknown format {fmt!r} in {m.group(0)!r}; use one of {sorted(FORMATS)} or a Python "
                "format spec such as .3g"
            ) from None

    return _PLACEHOLDER.sub(one, text)


_BUILTINS = {"abs": abs, "min": min, "max": max, "round": round, "int": int, "float": float, "len": len}


def default_params(folder: Path) -> dict:
    """The exercise's default parameters (checks.yaml `params:`, first values of `variants:`)."""
    return spec.default_params(spec.load_checks(folder / "checks.yaml"))


def build(folder: Path, variant: str) -> nbformat.NotebookNode:
    """The unexecuted notebook of one variant ("learner" or "solution")."""
    src = jupytext.read(folder / "source.md", fmt="md:myst")
    params = default_params(folder)
    other = _ONLY["solution" if variant == "learner" else "learner"]
    cells = []
    for i, cell in enumerate(src.cells):
        tags = list(cell.metadata.get("tags", []))
        if other in tags:
            continue
        cell = copy.deepcopy(cell)
        tags = [t for t in tags if t not in _ONLY.values()]
        if tags:
            cell.metadata["tags"] = tags
        else:
            cell.metadata.pop("tags", None)
        cell.source = substitute(cell.source, params, f"{folder.name}/source.md cell {i + 1}")
        if cell.cell_type == "code":
            learner, solution = split_solution(cell.source, f"{folder.name}/source.md cell {i + 1}")
            cell.source = learner if variant == "learner" else solution
        cell["id"] = f"cell-{len(cells):02d}"
        cells.append(cell)
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = src.metadata.get(
        "kernelspec", {"display_name": "Python 3", "language": "python", "name": "python3"}
    )
    nb.metadata["hwlib"] = {"exercise": folder.name, "variant": variant, "sources": sources(folder)}
    return nb


_IMPORT = re.compile(
    r"^[ \t]*(?:from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#]+)|import[ \t]+(hwlib[\w.]*))", re.M
)


def _hwlib_modules(code: str, package: str = "hwlib") -> set[str]:
    """The hwlib modules (dotted names) `code` imports; `package` resolves relative imports."""
    found = set()
    for dots, module, names, plain in _IMPORT.findall(code):
        if plain:
            found.add(plain)
            continue
        if dots:
            parts = package.split(".")
            base = ".".join(parts[: len(parts) - len(dots) + 1] + ([module] if module else []))
        elif module == "hwlib" or module.startswith("hwlib."):
            base = module
        else:
            continue
        found.add(base)
        found |= {f"{base}.{n}" for n in re.split(r"[\s,()]+", names) if n and n != "as"}
    return found


def _module_file(name: str) -> Path | None:
    path = ROOT.joinpath(*name.split("."))
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def dependencies(folder: Path) -> list[Path]:
    """The files an exercise's stored outputs depend on: source.md, checks.yaml, the hwlib modules
    its code and its checks' expressions import (transitively, packages' __init__ included), and
    the hwlib data files those modules name."""
    folder = folder.resolve()
    text = (folder / "source.md").read_text(encoding="utf-8")
    checks = (folder / "checks.yaml").read_text(encoding="utf-8")
    todo = _hwlib_modules(text) | {"hwlib", "hwlib.grading"}
    todo |= {f"hwlib.{m}" for m in spec._HWLIB_MODULES if re.search(rf"\b{m}\.", checks)}
    seen: dict[str, Path] = {}
    while todo:
        name = todo.pop()
        path = _module_file(name)
        if name in seen or path is None:
            continue
        seen[name] = path
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        todo |= _hwlib_modules(path.read_text(encoding="utf-8"), package) - set(seen)
        todo |= {name.rpartition(".")[0]} - {""} - set(seen)
    code = "\n".join(p.read_text(encoding="utf-8") for p in seen.values())
    data = [p for p in sorted((ROOT / "hwlib" / "data").glob("*.yaml")) if re.search(rf"\b{p.stem}\b", code)]
    return [folder / "source.md", folder / "checks.yaml", *sorted(set(seen.values())), *data]


def sources(folder: Path) -> dict:
    """{path relative to the repository: first 16 hex digits of its sha256} for `dependencies`."""
    return {str(p.relative_to(ROOT)): hashlib.sha256(p.read_bytes()).hexdigest()[:16] for p in dependencies(folder)}


def execute(nb: nbformat.NotebookNode, folder: Path) -> nbformat.NotebookNode:
    from nbclient import NotebookClient

    NotebookClient(
        nb, timeout=120, kernel_name="python3", record_timing=False, resources={"metadata": {"path": str(folder)}}
    ).execute()
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    return nb


def target(folder: Path, variant: str) -> Path:
    return folder / (f"{folder.name}.ipynb" if variant == "learner" else "solution.ipynb")


def _skeleton(nb) -> list:
    """What must not drift: cell types, sources, metadata; and the notebook's hwlib metadata (the
    sources' hashes apart: `_outdated` reports those by name)."""
    cells = [(c.cell_type, c.source, dict(c.metadata)) for c in nb.cells]
    meta = {k: v for k, v in nb.metadata.get("hwlib", {}).items() if k != "sources"}
    return [cells, meta, nb.metadata.get("kernelspec", {}).get("name")]


def _outdated(stored: dict, current: dict) -> list[str]:
    """The dependencies whose hash differs from the one recorded when the outputs were stored."""
    return sorted(p for p in {*stored, *current} if stored.get(p) != current.get(p))


def stale(folder: Path) -> list[str]:
    """Generated files of `folder` that do not match its sources (empty list: up to date)."""
    problems = []
    for variant in VARIANTS:
        path = target(folder, variant)
        if not path.is_file():
            problems.append(f"{path.relative_to(ROOT)} is missing")
            continue
        stored, fresh = nbformat.read(path, as_version=4), build(folder, variant)
        changed = _outdated(stored.metadata.get("hwlib", {}).get("sources") or {}, fresh.metadata.hwlib["sources"])
        if _skeleton(stored) != _skeleton(fresh):
            problems.append(f"{path.relative_to(ROOT)} does not match source.md")
        elif any(c.cell_type == "code" and c.source.strip() and c.get("execution_count") is None for c in stored.cells):
            problems.append(f"{path.relative_to(ROOT)} has unexecuted cells")
        elif changed:
            problems.append(
                f"{path.relative_to(ROOT)}: stored outputs are older than {', '.join(changed[:4])}"
                + (f" and {len(changed) - 4} more" if len(changed) > 4 else "")
            )
    public = PUBLIC / f"{folder.name}.yaml"
    if not public.is_file() or public.read_bytes() != (folder / "checks.yaml").read_bytes():
        problems.append(f"{public.relative_to(ROOT)} differs from {folder.name}/checks.yaml")
    return problems


def generate(folder: Path) -> None:
    for variant in VARIANTS:
        nb = execute(build(folder, variant), folder)
        nbformat.validate(nb)
        nbformat.write(nb, target(folder, variant))
    PUBLIC.mkdir(parents=True, exist_ok=True)
    (PUBLIC / f"{folder.name}.yaml").write_bytes((folder / "checks.yaml").read_bytes())


def exercise_folders(ids=()) -> list[Path]:
    folders = sorted(p.parent for p in EXERCISES.glob("*/source.md"))
    if ids:
        chosen = [f for f in folders if any(f.name == i or f.name.startswith(i) for i in ids)]
        missing = [i for i in ids if not any(f.name.startswith(i) for f in folders)]
        if missing:
            raise SystemExit(f"make_exercises: no exercise matches {missing}")
        return chosen
    return folders


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("ids", nargs="*", help="exercise ids or prefixes (default: all)")
    ap.add_argument("--check", action="store_true", help="only report stale generated files")
    args = ap.parse_args(argv)
    folders = exercise_folders(args.ids)
    if args.check:
        problems = [p for f in folders for p in stale(f)]
        print("\n".join(problems) or f"{len(folders)} exercise(s) up to date")
        return 1 if problems else 0
    for folder in folders:
        generate(folder)
        print(f"generated {folder.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
