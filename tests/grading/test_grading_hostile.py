"""Hostile submissions and instructor workflows, one section per class of problem.

Fixtures: tests/fixtures/grading/hostile/<class>/ (make_hostile.py there). Files that cannot be
committed (a FIFO, a link to /dev/zero, a 30 MB file) are made here.
"""

import csv
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

import speed
from hwlib import cli
from hwlib.grading import grader, identity, quantity, runner, sandbox, spec

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "tests" / "fixtures" / "grading"
HOST = FIX / "hostile"
HIDDEN = FIX / "hidden"
CORRECT = FIX / "submissions" / "correct.ipynb"
needs_bwrap = pytest.mark.skipif(sandbox.bwrap_available() is None, reason="bubblewrap missing: .ci/run installs it")


def hwlib_grade(*args, env=None, timeout=600):
    cmd = [sys.executable, "-m", "hwlib", "grade", "ex01_memory_budget", *map(str, args)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env or dict(os.environ))


def res_of(out, name):
    return json.loads((Path(out) / "submissions" / identity.folder_name(name) / "results.json").read_text())


def executed_text(out, name):
    """Everything the notebook printed: its own cells, and while the grader's cells ran."""
    nb = nbformat.read(Path(out) / "submissions" / identity.folder_name(name) / "executed.ipynb", 4)
    return "".join(
        str(o.get("text", "")) + str(o.get("evalue", "")) + json.dumps(o.get("data", {}))
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.outputs
    ) + res_of(out, name)["extra_data"].get("printed_during_grader_cells", "")


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """The forgery, sandbox, answers and budgets classes graded in one batch, beside a correct one."""
    out = tmp_path_factory.mktemp("hostile")
    proc = hwlib_grade(
        HOST / "forgery",
        HOST / "sandbox",
        HOST / "answers",
        HOST / "budgets",
        CORRECT,
        "--checks",
        HIDDEN,
        "--out",
        out,
        "--jobs",
        "2",
        "--timeout-cell",
        speed.arg(4),  # the correct notebooks must stay under it: scaled to this machine's speed
    )
    assert proc.returncode == 0, proc.stderr
    return out


# 1. identity of a result ------------------------------------------------------------------------


def test_folder_names_are_unique_stable_and_outside_the_graders_namespace(tmp_path):
    names = ["x.ipynb", "x-2.ipynb", "αβγ.ipynb", "日本語.ipynb", "grades.csv.ipynb", "submissions.ipynb"]
    folders = [identity.folder_name(n) for n in names]
    assert len(set(folders)) == len(names)
    assert folders[0] != "x" and folders[1].startswith("x-2-") and identity.folder_name("x.ipynb") == folders[0]
    assert all(f not in ("grades.csv", "pass_rates.csv", "submissions") for f in folders)
    both = {s.identity for s in identity.expand([HOST / "identity", HOST / "identity_other"])}
    assert {"identity/x.ipynb", "identity_other/x.ipynb"} <= both  # both graded, keyed by path


def test_regrading_one_file_touches_only_its_own_folder(tmp_path):
    out = tmp_path / "out"
    proc = hwlib_grade(HOST / "identity", "--checks", HIDDEN, "--out", out)
    assert proc.returncode == 0, proc.stderr
    before = {n: res_of(out, n)["score"] for n in ("x.ipynb", "x-2.ipynb", "αβγ.ipynb", "日本語.ipynb")}
    assert before == {"x.ipynb": 11, "x-2.ipynb": 1, "αβγ.ipynb": 2, "日本語.ipynb": 3}
    assert res_of(out, "grades.csv.ipynb")["score"] == 11 and (out / "grades.csv").is_file()
    proc = hwlib_grade(HOST / "identity_other" / "x.ipynb", "--checks", HIDDEN, "--out", out)  # x.ipynb again
    assert proc.returncode == 0, proc.stderr
    assert res_of(out, "x.ipynb")["score"] == 2 and res_of(out, "x-2.ipynb")["score"] == 1
    rows = {r["file"]: r for r in csv.DictReader(open(out / "grades.csv", encoding="utf-8"))}
    assert len(rows) == 6 and rows["x.ipynb"]["score"] == "2" and rows["日本語.ipynb"]["learner"] == "日本語"


# 2. only this run's result counts ---------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    ["forge_open.ipynb", "forge_builtins.ipynb", "forge_modules.ipynb", "thread_forge.ipynb", "no_function.ipynb"],
)
def test_forged_answer_records_score_what_the_notebook_really_holds(hostile, name):
    res = res_of(hostile, name)
    assert res["score"] == 0, [t for t in res["tests"] if t["score"]]
    calls = {t["name"]: t["output"] for t in res["tests"] if t["name"].startswith("kv_cache_")}
    assert all("not answered" in msg or "could not" in msg for msg in calls.values()), calls


def test_patched_open_and_modules_are_put_back_and_reported(hostile):
    assert "builtins.open" in res_of(hostile, "forge_open.ipynb")["extra_data"]["tampering_undone"]
    undone = res_of(hostile, "forge_modules.ipynb")["extra_data"]["tampering_undone"]
    assert "sys.modules['ast']" in undone and "sys.modules['hmac']" in undone


@pytest.mark.parametrize(
    "name, undone",
    [
        ("spy_class.ipynb", "InteractiveShell.run_cell"),
        ("spy_instance.ipynb", "instance attribute run_cell"),
        ("spy_trace.ipynb", "a trace or profile function"),
    ],
)
def test_hooks_do_not_see_hidden_names_or_arguments(hostile, name, undone):
    seen = executed_text(hostile, name)
    assert "SPY" in seen  # the spy ran (until the restore cell)
    for secret in ("kv_cache_canary", "kv_cache_other_model", "8192", "CANARY", "answer extraction", "function answer"):
        assert secret not in seen, secret
    res = res_of(hostile, name)
    assert res["score"] == 1 and undone in res["extra_data"]["tampering_undone"]


def test_executed_notebook_holds_no_grader_cell(hostile):
    nb = nbformat.read(hostile / "submissions" / identity.folder_name("correct.ipynb") / "executed.ipynb", 4)
    assert not any("hwlib grader" in c.source for c in nb.cells)


def test_a_stale_result_is_never_taken_for_this_runs(tmp_path, monkeypatch):
    ex = spec.load_exercise("ex01")
    sub = identity.Submission(CORRECT, "correct.ipynb")
    folder = tmp_path / "submissions" / sub.folder_name
    folder.mkdir(parents=True)
    (folder / "results.json").write_text(json.dumps({"score": 9.0, "extra_data": {"status": "graded"}}))
    monkeypatch.setattr(grader, "grade_one", lambda *a, **k: os._exit(1))  # the worker dies
    ((_, _, res),) = grader.grade_batch(ex, [sub], tmp_path, grader.configure(ex), progress=lambda *_: None)
    assert res["score"] == 0 and res["extra_data"]["status"] == "grader_error"
    assert json.loads((folder / "results.json").read_text())["extra_data"]["status"] == "grader_error"


# 3. no silent unsandboxed grading ---------------------------------------------------------------


@needs_bwrap
def test_an_old_bwrap_is_caught_by_the_probe_and_nothing_is_graded(tmp_path):
    fake = tmp_path / "bin" / "bwrap"
    fake.parent.mkdir()
    fake.write_text(
        "#!/bin/sh\nfor a; do [ \"$a\" = --size ] && { echo 'bwrap: Unknown option --size' >&2; "
        f'exit 1; }}; done\nexec {shutil.which("bwrap")} "$@"\n'
    )
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{fake.parent}:{os.environ['PATH']}"}
    proc = hwlib_grade(CORRECT, "--out", tmp_path / "out", env=env)
    assert proc.returncode == 3 and "Unknown option --size" in proc.stderr
    assert not (tmp_path / "out").exists()


def test_a_kernel_that_cannot_start_stops_grading_with_the_real_error(tmp_path, monkeypatch, capsys):
    def boom(self, *a):
        raise RuntimeError("kernel launcher exploded: errno 13")

    monkeypatch.setattr(runner.Runner, "_start", boom)
    assert cli.main(["grade", "ex01", str(CORRECT), "--out", str(tmp_path / "out")]) == 3
    assert "no kernel could be started" in capsys.readouterr().err and not (tmp_path / "out").exists()


def test_grader_side_failures_give_a_non_zero_exit(tmp_path, monkeypatch, capsys):
    def boom(*a, **k):
        raise OSError("disk on fire")

    monkeypatch.setattr(grader, "grade_one", boom)
    assert cli.main(["grade", "ex01", str(CORRECT), "--out", str(tmp_path / "out")]) == 3
    assert "grader_error" in capsys.readouterr().err
    assert res_of(tmp_path / "out", "correct.ipynb")["extra_data"]["status"] == "grader_error"


@needs_bwrap
def test_sandboxed_kernels_cannot_forge_other_results_or_leave_daemons(hostile):
    assert res_of(hostile, "correct.ipynb")["score"] == 11
    assert res_of(hostile, "proc_forge.ipynb")["score"] == 0
    assert res_of(hostile, "daemon.ipynb")["score"] == 1
    assert not _daemons()


def _daemons():
    left = []
    for p in Path("/proc").iterdir():
        try:
            if p.name.isdigit() and b"987654" in (p / "cmdline").read_bytes():
                left.append(p.name)
        except OSError:
            pass
    return left


# It looks for any process carrying the daemon's marker, so it must not run while the `hostile` class's
# daemon.ipynb is graded: under xdist --dist loadfile this file's tests run one after another.
def test_even_unsandboxed_a_daemon_does_not_outlive_its_grading(tmp_path):
    proc = hwlib_grade(HOST / "sandbox" / "daemon.ipynb", "--out", tmp_path, "--no-sandbox")
    assert proc.returncode == 0, proc.stderr
    time.sleep(0.5)
    assert not _daemons()
    assert res_of(tmp_path, "daemon.ipynb")["extra_data"]["processes_killed_after_grading"] >= 1


# 4. neighbours ----------------------------------------------------------------------------------


def test_parallel_slots_get_disjoint_cpus(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3, 5})
    assert grader.cpu_slots(2) == [(0, 2, 5), (1, 3)]
    assert grader.cpu_slots(5) == [(0,), (1,), (2,), (3,), (5,)]
    assert grader.cpu_slots(6) == [None] * 6  # fewer CPUs than slots: no pinning
    assert grader.cpu_slots(1) == [None]


@pytest.mark.timing
def test_a_cpu_hog_does_not_make_its_neighbour_time_out(tmp_path):
    proc = hwlib_grade(HOST / "neighbours", "--checks", HIDDEN, "--out", tmp_path, "--jobs", "2", "--timeout-cell", "3")
    assert proc.returncode == 0, proc.stderr
    assert res_of(tmp_path, "busy_honest.ipynb")["score"] == 11


# 5. budgets -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["traceback_flood.ipynb", "metadata_flood.ipynb", "update_flood.ipynb", "comm_flood.ipynb"]
)
def test_every_kind_of_kernel_message_counts_against_the_output_budget(hostile, name):
    res = res_of(hostile, name)
    folder = hostile / "submissions" / identity.folder_name(name)
    assert (folder / "executed.ipynb").stat().st_size < 3 * 2**20
    assert res["score"] == 2 and res["extra_data"]["status"] != "kernel_crashed"  # answers around it
    assert "truncated" in res["output"] and res["extra_data"]["output_bytes"] > 2 * 2**20


def test_files_are_checked_before_they_are_read(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    os.mkfifo(subs / "fifo.ipynb")
    os.symlink("/dev/zero", subs / "zero.ipynb")
    with open(subs / "huge.ipynb", "wb") as fh:
        fh.truncate(30 * 2**20)
    ex = spec.load_exercise("ex01")
    rows = grader.grade_batch(  # a FIFO or /dev/zero read before the check would never return
        ex, identity.expand([subs]), tmp_path / "out", grader.configure(ex), progress=lambda *_: None
    )
    got = {res["extra_data"]["file"]: res["extra_data"]["status"] for _, _, res in rows}
    assert got == {"fifo.ipynb": "not_a_file", "zero.ipynb": "not_a_file", "huge.ipynb": "too_large"}


# 6. one bad answer costs one check --------------------------------------------------------------


def test_one_bad_answer_costs_one_check(hostile):
    bad = res_of(hostile, "bad_superscript.ipynb")
    assert bad["score"] == 10 and bad["extra_data"]["status"] == "graded"
    msg = {t["name"]: t["output"] for t in bad["tests"]}["weights_bf16"]
    assert "power of ten has no digits" in msg
    assert res_of(hostile, "longdouble.ipynb")["score"] == 11
    with pytest.raises(quantity.QuantityError):
        quantity.to_si("1.07 × 10⁻ GB", "bytes")


def test_answers_survive_repeated_kernel_crashes(hostile):
    res = res_of(hostile, "crash_thrice.ipynb")
    assert res["score"] == 11 and res["extra_data"]["status"] == "kernel_crashed"
    assert "the kernel failed too often" in res["output"]


def test_status_codes_are_structured(hostile):
    res = res_of(hostile, "runtime_error.ipynb")
    assert res["extra_data"]["status"] == "cell_errors"  # not "timeout" ("RuntimeError")
    assert {"code": "error", "detail": "RuntimeError"} in res["extra_data"]["cells"].values()


def test_a_broken_hidden_check_stops_before_grading(tmp_path, capsys):
    bad = tmp_path / "checks"
    bad.mkdir()
    (bad / "ex01_memory_budget.yaml").write_text(
        'exercise: ex01_memory_budget\nchecks:\n  - name: oops\n    kind: bytes\n    expr: "memory.no_such(1)"\n'
    )
    assert cli.main(["grade", "ex01", str(CORRECT), "--checks", str(bad), "--out", str(tmp_path / "out")]) == 2
    assert "broken check" in capsys.readouterr().err and not (tmp_path / "out").exists()


# 7. the class table -----------------------------------------------------------------------------


def test_class_table_merges_neutralises_and_names_learners(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    for name in ['=HYPERLINK("x").ipynb', "+1.ipynb", "-2.ipynb", "@SUM(A1).ipynb", "\tt.ipynb", "b.ipynb"]:
        (subs / name).write_text("not json")
    roster = tmp_path / "roster.csv"
    roster.write_text("file,learner\nb.ipynb,s1234\n")
    out = tmp_path / "out"
    assert cli.main(["grade", "ex01", str(subs), "--out", str(out), "--roster", str(roster)]) == 0
    shutil.copy(CORRECT, subs / "b.ipynb")  # b hands in again; grade only b
    assert cli.main(["grade", "ex01", str(subs / "b.ipynb"), "--out", str(out), "--roster", str(roster)]) == 0
    text = (out / "grades.csv").read_text(encoding="utf-8")
    rows = list(csv.DictReader(text.splitlines()))
    assert len(rows) == 6
    for r in rows:
        for cell in r.values():
            assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), cell
    b = next(r for r in rows if r["file"] == "b.ipynb")
    assert b["learner"] == "s1234" and b["score"] == "9" and b["status"] == "graded"
    rates = {r["check"]: r for r in csv.DictReader(open(out / "pass_rates.csv"))}
    assert rates["weights_bf16"]["passed"] == "1" and rates["weights_bf16"]["graded"] == "1"
    assert (out / "pass_rates.png").stat().st_size > 1000


def test_resume_keeps_finished_results_and_grades_changed_files(tmp_path, capsys):
    subs = tmp_path / "subs"
    subs.mkdir()
    shutil.copy(CORRECT, subs / "a.ipynb")
    (subs / "b.ipynb").write_text("")
    out = tmp_path / "out"
    assert cli.main(["grade", "ex01", str(subs), "--out", str(out)]) == 0
    capsys.readouterr()
    (subs / "b.ipynb").write_text("changed")
    assert cli.main(["grade", "ex01", str(subs), "--out", str(out), "--resume"]) == 0
    text = capsys.readouterr().out
    assert f"{identity.folder_name('a.ipynb')}: 9/10  graded" in text and "(resumed)" in text
    assert f"{identity.folder_name('b.ipynb')}: 0/10  not_a_notebook" in text
    assert text.count("(resumed)") == 1


# (the interrupted batch, for SIGINT, SIGTERM and SIGHUP: tests/test_grading_robust.py)


# 9. installs that can grade ---------------------------------------------------------------------


def test_ipykernel_is_a_dependency():
    """A core dependency, or in the `grading` extra (pip install hwlib[grading])."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    deps = project.get("dependencies", []) + project.get("optional-dependencies", {}).get("grading", [])
    assert any(d.startswith("ipykernel") for d in deps), deps


def test_no_kernel_or_no_hwlib_in_the_sandbox_refuses_in_one_line(tmp_path, monkeypatch, capsys):
    gone = sandbox.PROBE_LAUNCHER.replace("import ipykernel", "import ipykernel_gone")
    monkeypatch.setattr(sandbox, "PROBE_LAUNCHER", gone)
    assert cli.main(["grade", "ex01", str(CORRECT), "--out", str(tmp_path / "o1")]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "No module named 'ipykernel_gone'" in err
    monkeypatch.undo()
    if sandbox.bwrap_available():
        roots = sandbox._readonly_roots
        monkeypatch.setattr(sandbox, "_readonly_roots", lambda: [r for r in roots() if r != str(sandbox.HWLIB_DIR)])
        monkeypatch.setattr(sandbox, "probe", lambda *a, **k: (True, ""))  # let the preflight find it
        assert cli.main(["grade", "ex01", str(CORRECT), "--out", str(tmp_path / "o2")]) == 3
        assert "cannot import hwlib" in capsys.readouterr().err


def test_exercise_prefixes_work_from_an_installed_package(monkeypatch, tmp_path):
    monkeypatch.setattr(spec, "EXERCISES_DIR", tmp_path / "no-checkout")
    assert spec.find_exercise("ex01") == spec.PUBLIC_DIR / "ex01_memory_budget.yaml"
    assert spec.load_exercise("ex03").id == "ex03_measure_mfu"
