#!/usr/bin/env python
"""Generate the exercise notebooks from their single source (format: exercises/FORMAT.md).

For every `exercises/<id>/source.md` (jupytext MyST) this writes, next to it:
  <id>.ipynb       learner version: solution blocks replaced by their `# LEARNER:` lines, executed
  solution.ipynb   solution version, executed
and copies `checks.yaml` to `hwlib/grading/public/<id>.yaml` (so `check()` works where hwlib is
installed without the repository, e.g. on Colab).

    python tools/make_exercises.py [ID ...]      regenerate (all exercises by default)
    python tools/make_exercises.py --check [ID]  exit 1 if a generated file is stale (cells, tags,
                                                 metadata, or the public checks copy); no execution
"""

from __future__ import annotations

import argparse
import copy
import re
import sys
from pathlib import Path

import jupytext
import nbformat

ROOT = Path(__file__).resolve().parents[1]
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


def build(folder: Path, variant: str) -> nbformat.NotebookNode:
    """The unexecuted notebook of one variant ("learner" or "solution")."""
    src = jupytext.read(folder / "source.md", fmt="md:myst")
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
        if cell.cell_type == "code":
            learner, solution = split_solution(cell.source, f"{folder.name}/source.md cell {i + 1}")
            cell.source = learner if variant == "learner" else solution
        cell["id"] = f"cell-{len(cells):02d}"
        cells.append(cell)
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = src.metadata.get(
        "kernelspec", {"display_name": "Python 3", "language": "python", "name": "python3"}
    )
    nb.metadata["hwlib"] = {"exercise": folder.name, "variant": variant}
    return nb


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
    """What must not drift: cell types, sources, metadata; and the notebook's hwlib metadata."""
    cells = [(c.cell_type, c.source, dict(c.metadata)) for c in nb.cells]
    return [cells, nb.metadata.get("hwlib"), nb.metadata.get("kernelspec", {}).get("name")]


def stale(folder: Path) -> list[str]:
    """Generated files of `folder` that do not match its sources (empty list: up to date)."""
    problems = []
    for variant in VARIANTS:
        path = target(folder, variant)
        if not path.is_file():
            problems.append(f"{path.relative_to(ROOT)} is missing")
            continue
        if _skeleton(nbformat.read(path, as_version=4)) != _skeleton(build(folder, variant)):
            problems.append(f"{path.relative_to(ROOT)} does not match source.md")
        elif any(
            c.cell_type == "code" and c.source.strip() and c.get("execution_count") is None
            for c in nbformat.read(path, as_version=4).cells
        ):
            problems.append(f"{path.relative_to(ROOT)} has unexecuted cells")
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
