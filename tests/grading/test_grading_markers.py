"""`make unit` leaves out the `slow` tests (tests/conftest.py): every test that runs the grader on a
notebook (a fresh kernel per submission) must be one of them, by its file or its own mark."""

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def _slow_files() -> set[str]:
    """tests/conftest.py's SLOW set, read from its source (`import conftest` may find another one)."""
    for node in ast.parse((TESTS / "conftest.py").read_text()).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "SLOW":
            return ast.literal_eval(node.value)
    raise AssertionError("tests/conftest.py defines no SLOW set")


GRADER_RUNS = {"grade_batch", "grade_one"}


def _marked_slow(fn: ast.FunctionDef) -> bool:
    return any("mark.slow" in ast.unparse(d) for d in fn.decorator_list)


def _runs_the_grader(fn: ast.FunctionDef) -> bool:
    return any(
        isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) in GRADER_RUNS
        for node in ast.walk(fn)
    )


def test_every_grading_test_is_slow():
    unmarked, seen, slow = [], 0, _slow_files()
    for path in sorted(TESTS.rglob("test_*.py")):
        if path.name in slow or "browser" in path.parts:
            continue
        for fn in ast.parse(path.read_text()).body:
            if isinstance(fn, ast.FunctionDef) and fn.name.startswith("test_") and _runs_the_grader(fn):
                seen += 1
                if not _marked_slow(fn):
                    unmarked.append(f"{path.relative_to(TESTS)}::{fn.name}")
    assert seen >= 3, "the scan found the marked grader runs of test_exercise_params and test_grading_forbid"
    assert unmarked == [], f"grader runs outside the slow set (mark them @pytest.mark.slow): {unmarked}"
