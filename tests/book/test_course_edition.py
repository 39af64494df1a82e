"""The course edition (tools/course_edition.py, `HWLIB_EDITION=course make book`): its sources hold
no solution notebook, no solution code, no hidden checks and none of the worked answers of the
problems that are exercises; everything else is the published edition's. Tested on the staging
functions, without a book build."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import course_edition  # noqa: E402

CH9 = "chapters/09_napkin_math.md"


def test_the_course_edition_leaves_out_every_solution_and_hidden_check():
    files = course_edition.tracked(ROOT)
    solutions = [f for f in files if f.endswith("/solution.ipynb")]
    assert len(solutions) >= 13  # one per exercise
    kept = course_edition.course_files(files)
    assert not [f for f in kept if f.endswith("solution.ipynb") or re.match(r"exercises/ex[^/]+/source\.md$", f)]
    assert not [f for f in kept if "hidden_checks/" in f or "grading/hidden/" in f]
    learner = [f for f in kept if re.match(r"exercises/(ex[^/]+)/\1\.ipynb$", f)]
    assert len(learner) == len(solutions)  # the learner notebooks, the book's exercise pages, stay
    assert CH9 in kept and "_toc.yml" in kept and "hwlib/layout.py" in kept


def test_worked_answers_of_exercises_are_withheld_and_the_others_kept():
    text = (ROOT / CH9).read_text(encoding="utf-8")
    out, withheld = course_edition.withhold_answers(text)
    assert withheld == ["Exercise 9.1", "Exercise 9.2"]
    for glue_name in ("ex1_state_exact", "ex1_kv_gib", "ex2_h8_rounded", "ex2_cost8"):  # the worked numbers
        assert "{glue:text}`" + glue_name + "`" in text and "{glue:text}`" + glue_name + "`" not in out
    assert "**Problem 1 (Exercise 9.1: a memory budget).**" in out  # the question stays
    assert out.count("answer is withheld in the course edition") == 2
    assert "{glue:text}`p3_h200`" in out  # problem 3 is not an exercise: its answer stays
    assert out.count(":class: dropdown") == text.count(":class: dropdown") - 2


def test_staged_copy_has_no_solution_cells(tmp_path):
    files = [f for f in course_edition.tracked(ROOT) if f.startswith(("exercises/", CH9))]
    done = course_edition.stage(tmp_path, ROOT, files)
    assert "exercises/ex01_memory_budget/solution.ipynb" in done["left_out"]
    assert done["withheld"] == {CH9: ["Exercise 9.1", "Exercise 9.2"]}
    staged = sorted(tmp_path.rglob("*.ipynb"))
    assert staged and not [p for p in staged if p.name == "solution.ipynb"]
    for nb in staged:  # learner and Colab notebooks: no solution-only cell, no solution variant
        data = json.loads(nb.read_text(encoding="utf-8"))
        assert data["metadata"].get("hwlib", {}).get("variant", "learner") == "learner", nb
        for cell in data["cells"]:
            assert "solution-only" not in cell.get("metadata", {}).get("tags", []), nb
            assert "BEGIN SOLUTION" not in "".join(cell["source"]), nb
    assert "answer is withheld" in (tmp_path / CH9).read_text(encoding="utf-8")
