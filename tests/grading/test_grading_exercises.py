"""Every exercise in exercises/ (whoever wrote it), through the real grader: the solution scores
100 %, the blank learner notebook scores 0, and the generated notebooks match source.md."""

import importlib.util
from pathlib import Path

import pytest

from hwlib.grading import grader, spec

ROOT = Path(__file__).resolve().parents[2]
EXERCISES = sorted(p.parent.name for p in (ROOT / "exercises").glob("*/checks.yaml"))


def _make_exercises():
    s = importlib.util.spec_from_file_location("make_exercises", ROOT / "tools" / "make_exercises.py")
    module = importlib.util.module_from_spec(s)
    s.loader.exec_module(module)
    return module


def test_there_are_exercises():
    assert "ex01_memory_budget" in EXERCISES and len(EXERCISES) >= 4


@pytest.mark.parametrize("ex_id", EXERCISES)
def test_solution_scores_full_marks_and_blank_scores_zero(ex_id, tmp_path):
    ex = spec.load_exercise(ex_id)
    folder = ROOT / "exercises" / ex_id
    files = [folder / "solution.ipynb", folder / f"{ex_id}.ipynb"]
    rows = {
        res["extra_data"]["file"]: res
        for _, _, res in grader.grade_batch(ex, files, tmp_path, grader.configure(ex), jobs=2, progress=lambda *_: None)
    }
    solution, blank = rows["solution.ipynb"], rows[f"{ex_id}.ipynb"]
    manual = {c.name for c in ex.checks if c.kind == "manual"}  # scored by hand, 0 until merged back
    wrong = [t for t in solution["tests"] if t["status"] != "passed" and t["name"] not in manual]
    assert solution["score"] == ex.max_score - sum(c.points for c in ex.checks if c.name in manual) > 0, (
        solution["output"],
        wrong,
    )
    assert solution["extra_data"]["status"] == "graded", solution["output"]
    assert blank["score"] == 0, [t for t in blank["tests"] if t["score"]]
    assert blank["extra_data"]["status"] == "graded", blank["output"]  # runs without error


def test_generated_notebooks_match_their_sources():
    make = _make_exercises()
    problems = [p for folder in make.exercise_folders() for p in make.stale(folder)]
    assert not problems, "run: .venv/bin/python tools/make_exercises.py\n" + "\n".join(problems)


def test_generator_splits_solutions_and_refuses_bad_markers():
    make = _make_exercises()
    src = "x = 1\n# BEGIN SOLUTION\ny = x * 2\n# LEARNER: y = None  # yours\n# END SOLUTION\nprint(y)"
    learner, solution = make.split_solution(src, "t")
    assert learner == "x = 1\ny = None  # yours\nprint(y)"
    assert solution == "x = 1\ny = x * 2\nprint(y)"
    indented = "def f():\n    # BEGIN SOLUTION\n    return 1\n    # LEARNER: return None\n    # END SOLUTION"
    assert make.split_solution(indented, "t")[0] == "def f():\n    return None"
    for bad, why in [
        ("# BEGIN SOLUTION\ny = 1\n# END SOLUTION", "at least one"),
        ("# BEGIN SOLUTION\n# LEARNER: y = None", "without END"),
        ("# END SOLUTION", "without BEGIN"),
        ("# LEARNER: y = None", "outside a solution block"),
        ("# BEGIN SOLUTION\n# BEGIN SOLUTION", "nested"),
    ]:
        with pytest.raises(ValueError, match=why):
            make.split_solution(bad, "t")


def test_solution_only_cells_stay_out_of_the_learner_notebook():
    make = _make_exercises()
    folder = ROOT / "exercises" / "ex01_memory_budget"
    learner, solution = make.build(folder, "learner"), make.build(folder, "solution")
    text = lambda nb: "\n".join(c.source for c in nb.cells)
    assert "Worked answer" in text(solution) and "Worked answer" not in text(learner)
    assert "N_PARAMS * 2" in text(solution) and "N_PARAMS * 2" not in text(learner)
    meta = learner.metadata["hwlib"]
    assert {k: meta[k] for k in ("exercise", "variant")} == {"exercise": "ex01_memory_budget", "variant": "learner"}
    assert (
        meta["sources"]["exercises/ex01_memory_budget/source.md"]
        == solution.metadata["hwlib"]["sources"]["exercises/ex01_memory_budget/source.md"]
    )
