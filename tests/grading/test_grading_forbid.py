"""The `forbid:` block (hwlib.grading.forbid): a submission that hands over hwlib's own answer
instead of the model the exercise asks for loses the checks the block names, through the real
grader, and is flagged for the instructor; the static scan sees the ways a notebook names a function."""

from pathlib import Path

import nbformat
import pytest

from hwlib.grading import forbid, grader, selfcheck, spec

ROOT = Path(__file__).resolve().parents[2]
EVALUATE = (forbid.Forbidden("layout.evaluate"),)


@pytest.mark.parametrize(
    "cells",
    [
        ["import hwlib.layout\nhwlib.layout.evaluate(1)"],
        ["from hwlib import layout as L", "x = L.evaluate"],  # an alias from an earlier cell
        ["from hwlib.layout import evaluate as ev\nev()"],
        ["import hwlib.layout as lay\nf = getattr(lay, 'evaluate')"],
        ["from hwlib.layout import *\nevaluate()"],
        ["%time x = 1\nimport hwlib\nhwlib.layout.evaluate"],  # IPython syntax does not hide it
    ],
)
def test_the_scan_follows_imports_and_aliases(cells):
    assert "layout.evaluate" in forbid.uses(cells, EVALUATE)


def test_other_names_and_unparsable_cells_are_not_uses():
    cells = ["from hwlib import layout\nlayout.Cluster('H100 SXM', 64)", "def evaluate(x):\n    return x", "x = (("]
    assert forbid.uses(cells, EVALUATE) == {}
    hits = forbid.uses(["from hwlib import layout", "", "layout.search(1)"], (forbid.Forbidden("layout"),))
    assert hits == {"layout": ["cell 1, line 1", "cell 3, line 1"]}  # a whole module: any use


def test_forbid_block_is_validated_by_name():
    with pytest.raises(ValueError, match="hwlib.layout has no 'evaluat'"):
        forbid.parse([{"name": "layout.evaluat"}], "x")
    with pytest.raises(ValueError, match="hwlib has no module 'nolib'"):
        forbid.parse(["nolib.f"], "x")
    with pytest.raises(ValueError, match="action must be one of"):
        forbid.parse([{"name": "layout.search", "action": "warn"}], "x")
    data = {"exercise": "ex_t", "checks": [{"name": "a", "kind": "dimensionless", "expected": 1}]}
    with pytest.raises(ValueError, match="no check named"):
        spec.parse_checks({**data, "forbid": [{"name": "layout.search", "checks": ["b"]}]}, "x")
    ex = spec.parse_checks({**data, "forbid": ["hwlib.layout.search"]}, "x")
    assert ex.forbid == (forbid.Forbidden("layout.search"),)


def _delegating(path: Path) -> Path:
    """ex16's solution with step_time handed to the planner (what a learner who delegates writes)."""
    nb = nbformat.read(ROOT / "exercises" / "ex16_parallel_layout" / "solution.ipynb", as_version=4)
    nb.cells.append(
        nbformat.v4.new_code_cell(
            "from hwlib import layout as L\n\n"
            "def step_time(tp, pp, dp, zero, micro_batch, recompute):\n"
            "    lay = L.Layout(tp=tp, pp=pp, dp=dp, zero=zero, micro_batch=micro_batch, recompute=recompute)\n"
            "    return L.evaluate(MODEL, L.Cluster('H100 SXM', 64), lay, SEQ, GLOBAL_SEQS).step_s"
        )
    )
    nbformat.write(nb, path)
    return path


@pytest.mark.slow  # grades a notebook in a fresh kernel
def test_a_delegating_submission_loses_the_forbidden_checks(tmp_path):
    ex = spec.load_exercise("ex16_parallel_layout")
    sub = _delegating(tmp_path / "solution.ipynb")
    [(_, _, res)] = list(
        grader.grade_batch(ex, [sub], tmp_path / "out", grader.configure(ex), progress=lambda *_: None)
    )
    tests = {t["name"]: t for t in res["tests"]}
    zeroed = next(f for f in ex.forbid if f.name == "layout.evaluate").checks
    for name in zeroed:  # the answers are right, but they came from hwlib's planner
        assert tests[name]["score"] == 0 and "uses hwlib.layout.evaluate" in tests[name]["output"], tests[name]
    assert tests["tp_inside_node"]["status"] == "passed" and tests["why_tp_in_node"]["status"] == "passed"
    assert res["extra_data"]["forbidden_calls"] == {"layout.evaluate": [f"cell {len(_cells(sub))}, line 5"]}
    assert any(f.startswith("forbidden_call hwlib.layout.evaluate") for f in res["extra_data"]["flags"])


def _cells(path):
    return [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]


@pytest.mark.slow  # grades a notebook in a fresh kernel
def test_flag_only_reports_and_hidden_checks_can_add_a_forbid(tmp_path):
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    (hidden / "ex16.yaml").write_text(
        "exercise: ex16_parallel_layout\nforbid:\n  - {name: layout.evaluate, action: flag}\n"
        "  - {name: memory.activation_bytes, checks: [memory_fn_tp8]}\n"
        "checks:\n  - {name: extra, answer: tp, kind: dimensionless, inputs: [tp], expr: \"inputs['tp']\"}\n"
    )
    ex = spec.load_exercise("ex16_parallel_layout", hidden)
    names = {f.name: f for f in ex.forbid}
    assert names["layout.evaluate"].action == "flag" and names["memory.activation_bytes"].checks == ("memory_fn_tp8",)
    sub = _delegating(tmp_path / "solution.ipynb")
    [(_, _, res)] = list(
        grader.grade_batch(ex, [sub], tmp_path / "out", grader.configure(ex), progress=lambda *_: None)
    )
    tests = {t["name"]: t for t in res["tests"]}
    assert tests["step_time_fn_tp8"]["status"] == "passed"  # flagged, not zeroed
    assert tests["memory_fn_tp8"]["score"] == 0  # the solution calls memory.activation_bytes
    assert set(res["extra_data"]["forbidden_calls"]) == {"layout.evaluate", "memory.activation_bytes"}


def test_the_self_check_warns_before_submitting(capsys):
    ns = {"In": ["from hwlib import rent", "plan = rent.cheapest_fleet(256)"], "LEARNER_ID": "solution"}
    selfcheck.check("ex17_pick_hardware", ns)
    out = capsys.readouterr().out
    assert "uses hwlib.rent.cheapest_fleet" in out and "not answered" in out
