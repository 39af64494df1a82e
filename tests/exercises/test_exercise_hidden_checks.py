"""The example hidden checks in tests/fixtures/hidden_checks/ (format: exercises/FORMAT.md): every
file parses, adds checks the learner never sees, computes its expected values, and the solution
notebooks still score full marks through the real grader once the hidden checks are added."""

from pathlib import Path

import pytest

from hwlib.grading import grader, spec

ROOT = Path(__file__).resolve().parents[2]
HIDDEN = ROOT / "tests" / "fixtures" / "hidden_checks"
IDS = sorted(p.stem for p in HIDDEN.glob("ex*.yaml"))


def test_hidden_check_files_name_existing_exercises():
    exercises = {p.parent.name for p in (ROOT / "exercises").glob("ex*/checks.yaml")}
    assert len(IDS) >= 11 and set(IDS) <= exercises, set(IDS) - exercises


@pytest.mark.parametrize("ex_id", IDS)
def test_hidden_checks_grade_what_cannot_be_copied(ex_id):
    public = spec.load_exercise(ex_id)
    merged = spec.load_exercise(ex_id, HIDDEN)
    hidden = [c for c in merged.checks if c.hidden]
    assert hidden and merged.max_score > public.max_score
    public_calls = {(c.answer, repr(c.args), repr(c.kwargs)) for c in public.checks if c.is_call}
    assert any(c.is_call for c in hidden), "the examples call the learner's function on new inputs"
    for c in hidden:
        assert c.is_call or c.inputs, f"{c.name}: a call on new inputs or a value recomputed from the learner's own"
        assert c.answer in {p.answer for p in public.checks}, f"{c.name}: no such learner answer"
        assert (c.answer, repr(c.args), repr(c.kwargs)) not in public_calls, f"{c.name}: same call as a public check"
        assert c.visibility == "after_published"
    expected = grader.expected_values(merged)  # an expr that fails comes back as a ValueError
    broken = {name: v for name, v in expected.items() if isinstance(v, Exception)}
    assert not broken and set(expected) >= {c.name for c in hidden}, broken


def _grade_solution(ex_id, out):
    ex = spec.load_exercise(ex_id, HIDDEN)
    ((_, _, res),) = grader.grade_batch(
        ex, [ROOT / "exercises" / ex_id / "solution.ipynb"], out / ex_id, grader.configure(ex), progress=lambda *_: None
    )
    manual = sum(c.points for c in ex.checks if c.kind == "manual")  # scored by hand, 0 until merged back
    return ex_id, ex.max_score - manual, res


def test_solutions_pass_the_hidden_checks(tmp_path):
    results = [_grade_solution(ex_id, tmp_path) for ex_id in IDS]  # sequential: the grader forks
    failures = {
        ex_id: [t for t in res["tests"] if t["status"] != "passed"] or res["output"]
        for ex_id, max_score, res in results
        if res["score"] != max_score
    }
    assert not failures, failures


def test_measurements_are_recomputed_from_the_learners_own_samples(tmp_path):
    """ex03: a gain and an MFU that do not follow from the notebook's own samples (typed in, copied
    from another run: here 40 % above what the samples give, so no run can make them right) fail."""
    import nbformat

    nb = nbformat.read(ROOT / "exercises" / "ex03_measure_mfu" / "solution.ipynb", 4)
    nb.cells.append(nbformat.v4.new_code_cell("mfu_gain = 1.4 * mfu_gain\nmfu_512 = 1.4 * mfu_512"))
    nbformat.write(nb, tmp_path / "copied.ipynb")
    ex = spec.load_exercise("ex03_measure_mfu", HIDDEN)
    ((_, _, res),) = grader.grade_batch(
        ex, [tmp_path / "copied.ipynb"], tmp_path / "out", grader.configure(ex), progress=lambda *_: None
    )
    by = {t["name"]: t for t in res["tests"]}
    assert by["mfu_gain"]["status"] == "failed" and by["mfu_512"]["status"] == "failed"  # public: recomputed too
    assert by["mfu_8"]["status"] == "passed"  # the notebook's own value, untouched
    assert by["mfu_gain_from_samples"]["status"] == "failed" and by["mfu_512_from_samples"]["status"] == "failed"
    assert by["step_flops_mnist"]["status"] == "passed"
