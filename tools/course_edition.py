"""The course edition: the book and its exercises without published solutions.

    python tools/course_edition.py --out build/course     # stage the course edition's sources
    HWLIB_EDITION=course make book                        # the same, then build the book from them

A course whose exercises count for a grade should not ship their solutions. This stages a copy of
the book's tracked sources in which

* every exercise's `solution.ipynb` and its `source.md` (which holds the solution between markers)
  are left out: the learner notebook `<id>.ipynb`, the public checks and the Colab notebooks remain;
* the instructor's example hidden checks (tests/fixtures/hidden_checks, tests/fixtures/grading/hidden)
  are left out;
* every chapter's worked problem that IS an exercise (a "**Problem N (Exercise C.K: ...)**" paragraph)
  keeps its question, but its dropdown answer is replaced by a note that points to the exercise.

The published edition (the default) is unchanged; `jupyter-book build DIR` builds the staged copy.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
UNTRACKED = ("_vendor",)
"""Built, untracked folders the book build needs (tools/vendor_assets.py), copied when present."""
LEFT_OUT = (
    re.compile(r"^exercises/[^/]+/solution\.ipynb$"),
    re.compile(r"^exercises/ex[^/]+/source\.md$"),
    re.compile(r"^tests/fixtures/hidden_checks/"),
    re.compile(r"^tests/fixtures/grading/hidden/"),
)
_PROBLEM = re.compile(r"^\*\*Problem \d+ \((Exercise \d+\.\d+)[^)]*\)\.\*\*", re.M)
_ANSWER = re.compile(r"^:::\{admonition\} Answer\n:class: dropdown\n.*?^:::$", re.M | re.S)
WITHHELD = (
    ":::{{admonition}} Answer\n:class: note\n\n"
    "This problem is {exercise}; its answer is withheld in the course edition. Work it in the\n"
    "exercise's notebook, whose self-check tells you whether you are on the right track.\n:::"
)


def withhold_answers(text: str) -> tuple[str, list[str]]:
    """`text` (a chapter's MyST source) with the dropdown answer that follows each problem naming an
    exercise replaced by `WITHHELD`; returns (text, the exercises whose answers were withheld)."""
    out, pos, withheld = [], 0, []
    for problem in _PROBLEM.finditer(text):
        answer = _ANSWER.search(text, problem.end())
        nxt = _PROBLEM.search(text, problem.end())
        if answer is None or (nxt is not None and answer.start() > nxt.start()):
            continue  # this problem has no dropdown answer of its own
        out += [text[pos : answer.start()], WITHHELD.format(exercise=problem.group(1))]
        pos = answer.end()
        withheld.append(problem.group(1))
    return "".join(out) + text[pos:], withheld


def tracked(root: Path = ROOT) -> list[str]:
    """The repository's tracked files (relative paths)."""
    done = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True)
    return [p for p in done.stdout.decode().split("\0") if p]


def course_files(files) -> list[str]:
    """The files of the course edition: `files` without those `LEFT_OUT` matches."""
    return [f for f in files if not any(p.search(f) for p in LEFT_OUT)]


def stage(out: Path, root: Path = ROOT, files=None) -> dict:
    """Copy the course edition's files of `root` (default: its tracked files) to `out`, withholding
    the worked answers of exercises in chapters/*.md. Returns {"files": n, "left_out": [...],
    "withheld": {chapter: [exercises]}}."""
    files = tracked(root) if files is None else list(files)
    keep = course_files(files)
    withheld = {}
    for rel in keep:
        src, dst = root / rel, out / rel
        if not src.is_file():
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        if rel.startswith("chapters/") and rel.endswith(".md"):
            text, names = withhold_answers(src.read_text(encoding="utf-8"))
            dst.write_text(text, encoding="utf-8")
            if names:
                withheld[rel] = names
        else:
            shutil.copy2(src, dst)
    for name in UNTRACKED:
        if (root / name).is_dir() and not (out / name).exists():
            shutil.copytree(root / name, out / name)
    return {"files": len(keep), "left_out": sorted(set(files) - set(keep)), "withheld": withheld}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "course", help="where to stage the sources")
    args = ap.parse_args(argv)
    if args.out.exists():
        shutil.rmtree(args.out)
    done = stage(args.out)
    print(f"course edition in {args.out}: {done['files']} files, {len(done['left_out'])} left out; answers withheld:")
    for chapter, names in done["withheld"].items():
        print(f"  {chapter}: {', '.join(names)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
