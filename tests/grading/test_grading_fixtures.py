"""`hwlib grade` on hostile and broken submissions (tests/fixtures/grading/submissions, see
make_fixtures.py there), with the example hidden checks, as an instructor would run it."""

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

import speed
from hwlib.grading import identity, sandbox

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "grading"
SUBS = FIX / "submissions"
HIDDEN = FIX / "hidden"
SECRET = "CANARY-hidden-7f3a9c-env"
BWRAP = sandbox.bwrap_available() is not None
needs_bwrap = pytest.mark.skipif(
    not BWRAP, reason="bubblewrap missing: .ci/run installs it (apt-get install bubblewrap)"
)


def grade(out, *subs, extra=()):
    env = {**os.environ, "HWLIB_TEST_SECRET": SECRET}
    cmd = [
        sys.executable,
        "-m",
        "hwlib",
        "grade",
        "ex01_memory_budget",
        *map(str, subs),
        "--checks",
        str(HIDDEN),
        "--out",
        str(out),
        "--jobs",
        "2",
        "--timeout-cell",
        speed.arg(3),  # limits a correct notebook must stay under: scaled to this machine's speed
        "--timeout-total",
        speed.arg(60),
        *extra,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    out = tmp_path_factory.mktemp("grades")
    proc = grade(out, SUBS)
    assert proc.returncode == 0, proc.stderr
    return out, proc


def folder(out, name):
    """OUT/submissions/<folder> of the submission file `name` ('correct' means correct.ipynb)."""
    return Path(out) / "submissions" / identity.folder_name(name if "." in name else name + ".ipynb")


def result(batch, stem):
    return json.loads((folder(batch[0], stem) / "results.json").read_text())


def scores(res):
    return {t["name"]: t["score"] for t in res["tests"]}


def outputs(batch, stem) -> str:
    nb = nbformat.read(folder(batch[0], stem) / "executed.ipynb", 4)
    return "".join(
        str(o.get("text", "")) + str(o.get("evalue", "")) for c in nb.cells if c.cell_type == "code" for o in c.outputs
    )


def test_every_submission_gets_a_result_and_a_csv_row(batch):
    out, proc = batch
    names = sorted(p.name for p in SUBS.iterdir())
    assert all(
        (folder(out, n) / "results.json").is_file() and (folder(out, n) / "feedback.txt").is_file() for n in names
    )
    rows = list(csv.DictReader(open(out / "grades.csv")))
    assert sorted(r["file"] for r in rows) == names
    assert sorted(r["submission"] for r in rows) == sorted(identity.folder_name(n) for n in names)
    assert list(rows[0])[:6] == ["submission", "learner", "file", "status", "score", "max_score"]
    assert {"kv_cache_canary", "kv_cache_other_model", "weights_bf16"} <= set(rows[0])
    assert all(r["max_score"] == "12" for r in rows)  # 10 public (why_training unanswered here) + 2 hidden
    assert ("sandbox: bwrap" if BWRAP else "sandbox: none") in proc.stdout


def test_results_json_is_gradescope_shaped(batch):
    res = result(batch, "correct")
    assert res["score"] == 11.0 and isinstance(res["execution_time"], float)
    assert set(res["tests"][0]) == {"name", "score", "max_score", "status", "output", "visibility"}
    vis = {t["name"]: t["visibility"] for t in res["tests"]}
    assert vis["weights_bf16"] == "visible" and vis["kv_4k"] == "after_published"
    assert vis["kv_cache_canary"] == "hidden"
    assert res["extra_data"]["status"] == "graded"


@pytest.mark.parametrize(
    "stem, score",
    [
        ("correct", 11),
        ("correct_strings", 11),
        ("no_metadata", 11),
        ("blank", 0),
        ("partly_wrong", 4),  # its kv_cache ignores batch: right at batch 1, wrong at batch 4
        ("deleted_cells", 6),
        ("reordered_cells", 5),
    ],
)
def test_scores_reflect_what_was_answered(batch, stem, score):
    assert result(batch, stem)["score"] == score


def test_partly_wrong_feedback_is_specific_and_hides_hidden_values(batch):
    res = result(batch, "partly_wrong")
    msg = {t["name"]: t["output"] for t in res["tests"]}
    assert "GiB where GB was meant" in msg["weights_bf16"]
    assert "'12 hours' is a time; expected a size in bytes" in msg["training_state"]
    assert "1610612736" not in json.dumps(res) and "1.611e9" not in json.dumps(res)
    assert "every argument" in msg["kv_cache_other_model"]  # the hidden check's hint
    assert all("not answered" in t["output"] for t in result(batch, "blank")["tests"])


def test_endless_loops_are_cut_and_later_cells_still_count(batch):
    loop = result(batch, "loop_then_answers")
    assert loop["score"] == 3 and loop["extra_data"]["status"] == "timeout"
    assert "cell 3: timed out" in loop["output"]
    stubborn = result(batch, "stubborn_loop")  # swallows KeyboardInterrupt: the kernel is replaced
    assert stubborn["score"] == 3 and "ignored the interrupt" in stubborn["output"]
    assert "restarted the kernel" in stubborn["output"]


@pytest.mark.parametrize("stem, score", [("os_exit", 4), ("segfault", 2)])
def test_kernel_deaths_cost_only_the_guilty_cell(batch, stem, score):
    res = result(batch, stem)
    assert res["score"] == score and res["extra_data"]["status"] == "kernel_crashed"
    assert "crashed the kernel" in res["output"]


def test_memory_and_file_size_limits(batch):
    res = result(batch, "memory_bomb")
    assert res["score"] == 2
    assert "error: MemoryError" in res["output"] and "error: OSError" in res["output"]
    assert "File too large" in outputs(batch, "memory_bomb")


def test_output_flood_is_truncated(batch):
    res = result(batch, "output_flood")
    assert res["score"] == 2 and "truncated" in res["output"]
    assert (folder(batch[0], "output_flood") / "executed.ipynb").stat().st_size < 4 * 2**20


def test_tampering_inside_the_kernel_changes_nothing(batch):
    res = result(batch, "tamper")
    s = scores(res)
    assert res["score"] == 0
    msg = {t["name"]: t["output"] for t in res["tests"]}
    assert "`weights_bf16`: 1 bytes is not within" in msg["weights_bf16"]  # the real value
    assert "'12 hours' is a time" in msg["training_state"]  # not the liar's str
    assert "is a truth value" in msg["max_sequences"]
    assert s["weights_int4"] == 0
    broken = result(batch, "tamper_json")  # a patched json breaks the kernel protocol: cell skipped
    assert broken["score"] == 1 and scores(broken)["weights_bf16"] == 1


def test_spy_hooks_see_no_expected_values_and_no_extraction_cell(batch):
    res = result(batch, "spy_hook")
    spied = outputs(batch, "spy_hook") + res["extra_data"].get("printed_during_grader_cells", "")
    assert "SPY" in spied and "restore the kernel" in spied  # the hook ran until restored,
    assert "answer extraction" not in spied and "function answer" not in spied  # then saw nothing
    for secret in ("4620", "1610612736", "1073741824", "CANARY", "after_published", "8192"):
        assert secret not in spied
    assert "IPython event post_run_cell" in res["extra_data"]["tampering_undone"]
    assert res["score"] == 1  # its forged weights_int4 failed


def test_broken_files(batch):
    for stem, status in [
        ("not_json", "not_a_notebook"),
        ("json_not_notebook", "not_a_notebook"),
        ("essay.pdf", "not_a_notebook"),
        ("empty", "empty"),
        ("wrong_exercise", "wrong_exercise"),
    ]:
        res = result(batch, stem)
        assert res["score"] == 0 and res["extra_data"]["status"] == status and res["output"]
        assert all(t["score"] == 0 for t in res["tests"])
    assert "ex02_time_and_cost" in result(batch, "wrong_exercise")["output"]


@needs_bwrap
def test_under_bwrap_no_hidden_check_is_readable_from_the_kernel(batch):
    res = result(batch, "snoop")
    seen = outputs(batch, "snoop")
    assert res["extra_data"]["sandbox"] == "bwrap"
    assert "LEAK-DIRECT: nothing" in seen and "LEAK: nothing" in seen, seen[:2000]
    assert "GRADER WRITABLE: False" in seen
    assert SECRET not in seen and "7f3a9c" not in seen


def test_without_a_sandbox_the_same_snoop_finds_the_hidden_checks(tmp_path):
    """Control for the test above: the snoop works, so its silence under bwrap means something."""
    proc = grade(tmp_path, SUBS / "snoop.ipynb", extra=["--no-sandbox", "--timeout-cell", speed.arg(4)])
    assert proc.returncode == 0 and "UNSANDBOXED" in proc.stderr
    seen = "".join(
        str(o.get("text", ""))
        for c in nbformat.read(folder(tmp_path, "snoop") / "executed.ipynb", 4).cells
        if c.cell_type == "code"
        for o in c.outputs
    )
    assert "CANARY-hidden-7f3a9c in" in seen
    assert "HWLIB_TEST_SECRET in os.environ" not in seen  # the kernel's own env is scrubbed,
    assert "HWLIB_TEST_SECRET in /proc/" in seen  # but the grader's is readable in /proc


def test_grader_errors_still_write_results(tmp_path, monkeypatch):
    """A submission that breaks the grader itself (here: an injected failure) still gets a result."""
    from hwlib.grading import grader, runner, spec

    ex = spec.load_exercise("ex01")

    def boom(*a, **k):
        raise RuntimeError("injected failure")

    monkeypatch.setattr(runner.Runner, "run", boom)
    shutil.copy(SUBS / "correct.ipynb", tmp_path / "a.ipynb")
    rows = grader.grade_batch(
        ex,
        [tmp_path / "a.ipynb", tmp_path / "missing.ipynb"],
        tmp_path / "out",
        grader.configure(ex),
        jobs=2,
        progress=lambda *_: None,
    )
    got = {res["extra_data"]["file"]: res["extra_data"]["status"] for _, _, res in rows}
    assert got == {"a.ipynb": "grader_error", "missing.ipynb": "not_a_file"}
    assert "injected failure" in json.loads((folder(tmp_path / "out", "a") / "results.json").read_text())["output"]


def test_a_hung_grader_worker_is_killed_and_its_submission_still_gets_a_result(tmp_path, monkeypatch):
    import time

    from hwlib.grading import grader, runner, spec

    ex = spec.load_exercise("ex01")
    monkeypatch.setattr(runner.Runner, "run", lambda self: time.sleep(120))
    shutil.copy(SUBS / "correct.ipynb", tmp_path / "a.ipynb")
    rows = grader.grade_batch(
        ex, [tmp_path / "a.ipynb"], tmp_path / "out", grader.configure(ex), progress=lambda *_: None, hard_limit=2
    )
    ((stem, _, res),) = rows
    # "was stopped" is written only for a worker still alive past hard_limit, i.e. killed, not waited for
    assert res["extra_data"]["status"] == "grader_error" and "was stopped" in res["output"]
