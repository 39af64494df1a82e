"""No learner, mistake or fault stops a class. One section per kind of problem; each
test builds its own hostile fixture (names and files git cannot hold are made here). Graded without
bwrap (in-process, `use_bwrap=False`) so that these run on any machine; the sandboxed path is the
same code with a different kernel command line (tests/test_grading_hostile.py)."""

import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
import pytest

from hwlib import cli
from hwlib.grading import classreport, grader, identity, spec, text

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "tests" / "fixtures" / "grading"
CORRECT = FIX / "submissions" / "correct.ipynb"
HIDDEN = FIX / "hidden"


def ex01(checks=None):
    return spec.load_exercise("ex01", checks)


def cfg_for(ex, **kw):
    return grader.configure(ex, use_bwrap=False, **kw)


def grade(subs, out, ex=None, **kw):
    ex = ex or ex01()
    files = subs if isinstance(subs, list) else identity.expand([subs])
    return grader.grade_batch(ex, files, out, cfg_for(ex), progress=lambda *_: None, **kw)


def by_file(rows):
    return {res["extra_data"]["file"]: res for _, _, res in rows}


def correct_with(*edits, markdown=None):
    """The correct ex01 notebook with cells' sources replaced ({index: source}) or added."""
    nb = nbformat.read(CORRECT, 4)
    for i, src in edits:
        nb.cells[i].source = src
    if markdown is not None:
        nb.cells.insert(0, nbformat.v4.new_markdown_cell(markdown))
    return nb


def write_raw(path, nb):
    """Write without nbformat's validation (it may refuse what a learner's editor wrote); a lone
    surrogate becomes a JSON escape (\\ud800), which is valid JSON and what an editor writes."""
    path.write_text(json.dumps(nb, default=str), encoding="ascii")


def grade_cli(*args, timeout=900):
    return cli.main(["grade", *map(str, args), "--no-sandbox"])


# 1. one submission never stops the class -------------------------------------------------------


def test_text_clean_escapes_lone_surrogates_and_keeps_names_apart():
    assert text.clean_str("ok é") == "ok é"
    a, b = text.clean_str("x\udcff"), text.clean_str("x\udcfe")
    assert a == "x\\udcff" and a != b and a.encode("utf-8")
    assert text.clean({"k\ud800": ["\ud800"]}) == {"k\\ud800": ["\\ud800"]}


def test_lone_surrogates_and_non_utf8_names_are_graded_with_the_rest(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    nb = correct_with((1, 'weights_bf16 = "2.6 GB \ud800"'), markdown="notes \udc80 here")
    write_raw(subs / "surrogate.ipynb", nb)
    bad_name = os.fsdecode(b"r\xe9sum\xe9.ipynb")  # Latin-1 bytes from a tar export
    shutil.copy(CORRECT, subs / bad_name)
    shutil.copy(CORRECT, subs / "zz_after.ipynb")
    out = tmp_path / "out"
    assert grade_cli("ex01", subs, "--out", out) == 0
    got = {r["file"]: r for r in csv.DictReader(open(out / "grades.csv", encoding="utf-8"))}
    assert got["surrogate.ipynb"]["score"] == "8" and got["surrogate.ipynb"]["status"] == "graded"
    assert got["r\\udce9sum\\udce9.ipynb"]["score"] == "9" and got["zz_after.ipynb"]["score"] == "9"
    for folder in (out / "submissions").iterdir():
        for f in folder.iterdir():
            f.read_text(encoding="utf-8")  # all valid UTF-8
    res = json.loads((out / "submissions" / identity.folder_name("surrogate.ipynb") / "results.json").read_text())
    msg = {t["name"]: t["output"] for t in res["tests"]}["weights_bf16"]
    assert "\\ud800" in msg


def test_planted_files_and_a_read_only_folder_are_the_notebooks_outcome(tmp_path):
    """A notebook that plants an IPython startup file, folders where the old kernel files were and
    makes its folder read-only, then crashes the kernel: the restart still works and it keeps its 9."""
    plant = (
        "import os, pathlib\n"
        "for d in ('.kernel1.json', '.kernel1-1', '.home/.ipython/profile_default/startup', '.k1'):\n"
        "    pathlib.Path(d).mkdir(parents=True, exist_ok=True)\n"
        "pathlib.Path('.home/.ipython/profile_default/startup/00.py').write_text('raise SystemExit(1)')\n"
        "os.chmod('.', 0o500)\n"
    )
    nb = nbformat.read(CORRECT, 4)
    nb.cells += [nbformat.v4.new_code_cell(plant), nbformat.v4.new_code_cell("import os\nos._exit(1)")]
    subs = tmp_path / "subs"
    subs.mkdir()
    nbformat.write(nb, subs / "planter.ipynb")
    (res,) = by_file(grade(subs, tmp_path / "out")).values()
    assert res["extra_data"]["status"] == "kernel_crashed" and res["score"] == 9, res["output"]


def test_malformed_cells_and_skip_tags_cost_only_themselves(tmp_path):
    nb = json.loads(CORRECT.read_text())
    nb["cells"][1]["metadata"] = {"tags": ["skip-execution"]}  # weights_bf16, run by the learner
    nb["cells"][2]["metadata"] = {"tags": "raises-exception"}  # not even a list
    nb["cells"].append({"cell_type": "code", "source": 123, "outputs": "x", "metadata": []})
    nb["cells"].append({"cell_type": "widget?", "source": "x"})
    nb["cells"].append("not a cell")
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "odd.ipynb").write_text(json.dumps(nb))
    (res,) = by_file(grade(subs, tmp_path / "out")).values()
    assert res["score"] == 9 and res["extra_data"]["status"] == "graded", res["output"]
    assert res["output"].count("not a readable cell") == 3


def test_older_notebook_formats_are_graded(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    nb = nbformat.read(CORRECT, 4)
    (subs / "v3.ipynb").write_text(nbformat.writes(nbformat.convert(nb, 3), version=3))
    (subs / "no_cells.ipynb").write_text('{"nbformat": 4, "metadata": {}}')
    got = by_file(grade(subs, tmp_path / "out"))
    assert got["v3.ipynb"]["score"] == 9
    assert got["no_cells.ipynb"]["extra_data"]["status"] == "not_a_notebook"
    assert "nbformat 1 to 4" in got["no_cells.ipynb"]["output"] or "cells" in got["no_cells.ipynb"]["output"]


def test_ml_dtypes_scalars_are_graded_as_numbers(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    nb = correct_with(
        (1, "import ml_dtypes\nweights_bf16 = ml_dtypes.bfloat16(1.3e9 * 2)"),
        (7, "import ml_dtypes, numpy as np\nmax_sequences = np.array(13, dtype=ml_dtypes.uint4)[()]"),
    )
    nbformat.write(nb, subs / "bf16.ipynb")
    (res,) = by_file(grade(subs, tmp_path / "out")).values()
    assert res["score"] == 9, [t["output"] for t in res["tests"] if not t["score"]]


def test_the_published_solution_is_flagged_for_the_instructor(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    sol = ROOT / "exercises" / "ex01_memory_budget" / "solution.ipynb"
    shutil.copy(sol, subs / "verbatim.ipynb")
    stripped = nbformat.read(sol, 4)
    stripped.metadata = {}
    nbformat.write(stripped, subs / "stripped.ipynb")
    shutil.copy(CORRECT, subs / "own.ipynb")
    out = tmp_path / "out"
    got = by_file(grade(subs, out))
    assert "published_solution" in got["verbatim.ipynb"]["extra_data"]["flags"][0]
    assert "code cells" in got["stripped.ipynb"]["extra_data"]["flags"][0]
    assert got["own.ipynb"]["extra_data"]["flags"] == []
    assert all("flag" not in got[f]["output"] for f in got)  # the learner is not told
    rows = {r["file"]: r for r in csv.DictReader(open(out / "grades.csv", encoding="utf-8"))}
    assert rows["verbatim.ipynb"]["flags"].startswith("published_solution") and rows["own.ipynb"]["flags"] == ""


# 2. faults of the machine are not the learner's --------------------------------------------------


def test_a_full_temp_disk_is_a_named_machine_fault_not_a_zero(tmp_path, monkeypatch, capsys):
    from hwlib.grading import extract

    full = extract._RECORD_SRC.replace(
        '    fd = S["os_open"]', "    raise OSError(28, 'No space left on device')\n    fd = S[\"os_open\"]"
    )
    assert full != extract._RECORD_SRC
    monkeypatch.setattr(extract, "_RECORD_SRC", full)
    subs = tmp_path / "subs"
    subs.mkdir()
    shutil.copy(CORRECT, subs / "honest.ipynb")
    out = tmp_path / "out"
    ex = ex01()
    (res,) = by_file(grade(subs, out, ex)).values()
    assert res["extra_data"]["status"] == "grader_error" and "Errno 28" in res["extra_data"]["machine_fault"]
    assert "fault of the grading machine" in res["output"]
    monkeypatch.undo()
    rows = grade(subs, out, ex, resume=True)  # a machine fault is graded again by --resume
    assert rows[0][2]["score"] == 9 and rows[0][2]["extra_data"]["status"] == "graded"


def test_an_output_disk_that_fails_is_reported_and_the_batch_goes_on(tmp_path, monkeypatch):
    from hwlib.grading import batch

    real = batch._write

    def flaky(folder, res, executed, title):
        if "a-" in folder.name:
            raise OSError(28, "No space left on device")
        return real(folder, res, executed, title)

    monkeypatch.setattr(batch, "_write", flaky)
    subs = tmp_path / "subs"
    subs.mkdir()
    for n in ("a", "b"):
        shutil.copy(CORRECT, subs / f"{n}.ipynb")
    got = by_file(grade(subs, tmp_path / "out"))
    assert (
        got["a.ipynb"]["extra_data"]["status"] == "grader_error" and "could not be written" in got["a.ipynb"]["output"]
    )
    assert got["b.ipynb"]["score"] == 9


def test_a_long_tmpdir_does_not_stop_the_kernels(tmp_path, monkeypatch):
    long = tmp_path / ("t" * 60) / ("u" * 60)
    long.mkdir(parents=True)
    monkeypatch.setattr(tempfile, "tempdir", str(long))
    assert len(tempfile.gettempdir()) > 120
    ex = ex01()
    grader.preflight(ex, cfg_for(ex))
    (res,) = by_file(grade([identity.Submission(CORRECT, "c.ipynb")], tmp_path / "out", ex)).values()
    assert res["score"] == 9


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_an_interrupted_batch_leaves_a_csv_of_what_finished(tmp_path, sig):
    """No wall-clock limit: the test waits for the first result's progress line, then signals."""
    subs = tmp_path / "subs"
    subs.mkdir()
    shutil.copy(CORRECT, subs / "a0.ipynb")
    forever = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import time\ntime.sleep(10**6)")])
    for i in range(1, 3):
        nbformat.write(forever, subs / f"a{i}.ipynb")
    out = tmp_path / "out"
    tmp = Path(tempfile.mkdtemp(prefix="hwt", dir="/tmp"))  # short: the grader uses it, not a fallback
    env = {**os.environ, "TMPDIR": str(tmp), "PYTHONUNBUFFERED": "1"}
    cmd = [sys.executable, "-m", "hwlib", "grade", "ex01", str(subs), "--out", str(out), "--no-sandbox"]
    proc = subprocess.Popen(
        cmd + ["--timeout-cell", "100000", "--timeout-total", "100000"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    for line in proc.stdout:  # blocks until the first submission has its result
        if line.startswith("a0-"):
            break
    proc.send_signal(sig)
    _, err = proc.communicate()
    assert proc.returncode == 130 and "--resume" in err, err
    rows = list(csv.DictReader(open(out / "grades.csv", encoding="utf-8")))
    assert [r["file"] for r in rows] == ["a0.ipynb"] and rows[0]["score"] == "9"
    left = list(tmp.iterdir())
    shutil.rmtree(tmp)
    assert left == []  # no temp folder left behind


# 3. an instructor's mistake is caught --------------------------------------------------------


def test_hidden_checks_are_found_by_what_they_say_not_by_file_name(tmp_path):
    short = tmp_path / "short"
    short.mkdir()
    shutil.copy(HIDDEN / "ex01_memory_budget.yaml", short / "ex01.yaml")
    merged = spec.load_exercise("ex01", short)
    assert merged.max_score == 12 and sum(c.hidden for c in merged.checks) == 3
    other = tmp_path / "other"
    other.mkdir()
    shutil.copy(ROOT / "tests" / "fixtures" / "hidden_checks" / "ex02_time_and_cost.yaml", other / "ex02.yaml")
    with pytest.raises(ValueError, match="holds no hidden checks for ex01_memory_budget.*ex02.yaml"):
        spec.load_exercise("ex01", other)
    shutil.copy(short / "ex01.yaml", short / "ex01_memory_budget.yaml")
    with pytest.raises(ValueError, match="2 files hold hidden checks"):
        spec.load_exercise("ex01", short)


def test_grade_package_packs_hidden_checks_saved_under_a_short_name(tmp_path):
    import zipfile

    from hwlib.grading import gradescope

    short = tmp_path / "short"
    short.mkdir()
    shutil.copy(HIDDEN / "ex01_memory_budget.yaml", short / "ex01.yaml")
    wheel = tmp_path / "hwlib-0-py3-none-any.whl"
    wheel.write_bytes(b"PK")
    z = zipfile.ZipFile(gradescope.package("ex01", short, tmp_path / "a.zip", wheel))
    assert "hidden/ex01_memory_budget.yaml" in z.namelist()
    assert '--checks "$ROOT/source/hidden"' in z.read("run_autograder").decode()
    z = zipfile.ZipFile(gradescope.package("ex01", None, tmp_path / "b.zip", wheel))
    assert "--checks" not in z.read("run_autograder").decode()


@pytest.mark.parametrize(
    "expr, match",
    [
        ("inputs['a'] * inputs['b']", r"reads inputs \['b'\] that are not listed"),
        ("inputs.get('b', 1)", "as inputs\\['name'\\]"),
        ("inputs[name]", "as inputs\\['name'\\]"),
    ],
)
def test_inputs_expressions_may_read_only_listed_names(expr, match):
    data = {
        "exercise": "ex01_memory_budget",
        "checks": [{"name": "x", "kind": "dimensionless", "inputs": ["a"], "expr": expr}],
    }
    with pytest.raises(ValueError, match=match):
        spec.parse_checks(data, "hidden.yaml", hidden=True)
    data["checks"][0]["expr"] = "2 * inputs['a']"
    assert spec.parse_checks(data, "hidden.yaml").checks[0].inputs == ("a",)


def test_another_exercise_or_check_list_into_one_out_is_refused(tmp_path, capsys):
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "a.ipynb").write_text("not json")
    out = tmp_path / "out"
    assert grade_cli("ex01", subs, "--out", out) == 0
    assert grade_cli("ex02", subs, "--out", out) == 2
    assert "holds grades of ex01_memory_budget, not ex02_time_and_cost" in capsys.readouterr().err
    assert grade_cli("ex01", subs, "--out", out, "--checks", HIDDEN) == 2
    assert "another check list" in capsys.readouterr().err
    assert grade_cli("ex01", subs, "--out", out) == 0  # the same exercise and checks again: fine


def test_resume_grades_again_under_other_limits_or_another_learner(tmp_path, capsys):
    subs = tmp_path / "subs"
    subs.mkdir()
    shutil.copy(CORRECT, subs / "a.ipynb")
    out = tmp_path / "out"
    roster = tmp_path / "roster.csv"
    roster.write_text("file,learner\na.ipynb,s1\n")
    assert grade_cli("ex01", subs, "--out", out, "--roster", roster) == 0
    capsys.readouterr()
    assert grade_cli("ex01", subs, "--out", out, "--roster", roster, "--resume") == 0
    assert "(resumed)" in capsys.readouterr().out
    assert grade_cli("ex01", subs, "--out", out, "--roster", roster, "--resume", "--timeout-cell", "7") == 0
    assert "(resumed)" not in capsys.readouterr().out
    roster.write_text("file,learner\na.ipynb,s2\n")
    assert grade_cli("ex01", subs, "--out", out, "--roster", roster, "--resume", "--timeout-cell", "7") == 0
    assert "(resumed)" not in capsys.readouterr().out
    rows = list(csv.DictReader(open(out / "grades.csv", encoding="utf-8")))
    assert [(r["learner"], r["score"]) for r in rows] == [("s2", "9")]


def test_roster_rows_match_by_case_suffix_path_and_unicode_form():
    import unicodedata

    nfd = unicodedata.normalize("NFD", "Zoë.ipynb")
    roster = {"ALICE": "s1", "bob.ipynb": "s2", "carol": "s3", "zoë.ipynb": "s4", "dave.ipynb": "s5"}
    idents = ["alice.ipynb", "Bob.IPYNB", "carol/ex01.ipynb", nfd, "erin.ipynb"]
    matched, unmatched, unlisted = classreport.match_roster(roster, idents)
    assert matched == {"alice.ipynb": "s1", "Bob.IPYNB": "s2", "carol/ex01.ipynb": "s3", nfd: "s4"}
    assert unmatched == ["dave.ipynb"] and unlisted == ["erin.ipynb"]
    # one file name for several learners: the name alone matches none of them
    matched, unmatched, _ = classreport.match_roster({"ex01.ipynb": "x"}, ["a/ex01.ipynb", "b/ex01.ipynb"])
    assert matched == {} and unmatched == ["ex01.ipynb"]


def test_learners_without_a_file_get_a_row_and_a_warning(tmp_path, capsys):
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "Alice.ipynb").write_text("not json")
    (subs / "erin.ipynb").write_text("not json")
    roster = tmp_path / "roster.csv"
    roster.write_text("file,learner\nalice,s1\ndave.ipynb,s5\n")
    out = tmp_path / "out"
    assert grade_cli("ex01", subs, "--out", out, "--roster", roster) == 0
    err = capsys.readouterr().err
    assert "1 roster row(s) match no submission" in err and "dave.ipynb" in err
    assert "1 submission(s) have no roster row" in err and "erin.ipynb" in err
    rows = {r["learner"]: r for r in csv.DictReader(open(out / "grades.csv", encoding="utf-8"))}
    assert rows["s5"]["status"] == "no_submission" and rows["s5"]["score"] == "0"
    assert rows["s1"]["file"] == "Alice.ipynb" and "erin" in rows


def test_out_inside_the_submissions_folder_is_never_graded(tmp_path, capsys):
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "a.ipynb").write_text("not json")
    out = subs / "grades"
    for _ in range(2):
        assert grade_cli("ex01", subs, "--out", out) == 0
    rows = list(csv.DictReader(open(out / "grades.csv", encoding="utf-8")))
    assert [r["file"] for r in rows] == ["a.ipynb"]
    assert grade_cli("ex01", subs, "--out", subs) == 2
    assert grade_cli("ex01", subs, "--out", tmp_path) == 2
    assert "inside --out" in capsys.readouterr().err


def test_same_file_name_in_different_folders_is_graded_for_both(tmp_path):
    subs = tmp_path / "classroom"
    for learner, src in (("alice-repo", CORRECT), ("bob-repo", FIX / "submissions" / "blank.ipynb")):
        (subs / learner / ".ipynb_checkpoints").mkdir(parents=True)
        shutil.copy(src, subs / learner / "ex01_memory_budget.ipynb")
        shutil.copy(src, subs / learner / ".ipynb_checkpoints" / "ex01_memory_budget-checkpoint.ipynb")
        (subs / learner / "README.md").write_text("not a notebook")
    got = by_file(grade(subs, tmp_path / "out"))
    assert sorted(got) == ["alice-repo/ex01_memory_budget.ipynb", "bob-repo/ex01_memory_budget.ipynb"]
    assert got["alice-repo/ex01_memory_budget.ipynb"]["score"] == 9
    assert got["bob-repo/ex01_memory_budget.ipynb"]["score"] == 0


# 4. the kernel's restore is complete ---------------------------------------------------------

SPY = "def _see(*a, **k):\n    print('SPY', repr(a)[:4000], repr(k)[:2000])\n"
SPIES = {
    # IPython's compiler sees every cell's source (a class the old restore did not snapshot)
    "spy_compiler": SPY + "ip = get_ipython()\nC = type(ip.compile)\n_old = C.__call__\n"
    "def spy(self, *a, **k):\n    _see(*a)\n    return _old(self, *a, **k)\nC.__call__ = spy\n",
    # the kernel's handler table sees every request
    "spy_handlers": SPY + "k = get_ipython().kernel\n_old = k.shell_handlers['execute_request']\n"
    "def spy(*a, **k2):\n    _see(*a)\n    return _old(*a, **k2)\nk.shell_handlers['execute_request'] = spy\n",
    # a traitlets value (kernel.session.unpack) sees every message's bytes
    "spy_session": SPY + "s = get_ipython().kernel.session\n_old = s.unpack\n"
    "def spy(b):\n    _see(b)\n    return _old(b)\ns.unpack = spy\n",
    # a module function on the way (ast.parse) sees the source
    "spy_ast": SPY
    + "import ast\n_old = ast.parse\ndef spy(src, *a, **k):\n    _see(src)\n    return _old(src, *a, **k)\n"
    "ast.parse = spy\n",
}


@pytest.fixture(scope="module")
def spied(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("spies")
    subs = tmp / "subs"
    subs.mkdir()
    for name, src in SPIES.items():
        nb = nbformat.read(CORRECT, 4)
        nb.cells.append(nbformat.v4.new_code_cell(src + "print('SPY installed')"))
        nbformat.write(nb, subs / f"{name}.ipynb")
    ex = ex01(HIDDEN)
    out = tmp / "out"
    rows = grader.grade_batch(ex, identity.expand([subs]), out, cfg_for(ex), progress=lambda *_: None)
    return out, by_file(rows)


@pytest.mark.parametrize("name", sorted(SPIES))
def test_hooks_on_the_machinery_see_no_hidden_name_or_argument(spied, name):
    out, got = spied
    res = got[f"{name}.ipynb"]
    folder = out / "submissions" / identity.folder_name(f"{name}.ipynb")
    nb = nbformat.read(folder / "executed.ipynb", 4)
    seen = "".join(json.dumps(o) for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    seen += res["output"] + res["extra_data"].get("printed_during_grader_cells", "")
    assert "SPY installed" in seen
    for secret in ("kv_cache_canary", "kv_cache_other_model", "8192", "CANARY", "answer extraction"):
        assert secret not in seen, secret
    assert res["score"] == 11 and res["extra_data"].get("tampering_undone"), res["output"]


def test_an_honest_notebook_reports_no_tampering(spied, tmp_path):
    ex = ex01(HIDDEN)
    (res,) = by_file(grade([identity.Submission(CORRECT, "c.ipynb")], tmp_path / "o", ex)).values()
    assert res["score"] == 11 and "tampering_undone" not in res["extra_data"], res["extra_data"].get("tampering_undone")


def test_display_updates_during_grader_cells_do_not_reach_the_executed_notebook(tmp_path):
    nb = nbformat.read(CORRECT, 4)
    nb.cells[4].source = (
        "from IPython.display import display\nh = display('before', display_id=True)\n"
        "def kv_cache(n_layers, n_heads, head_dim, seq_len, batch=1, bytes_per_value=2):\n"
        "    h.update(f'LEAK {n_layers} {n_heads} {head_dim} {seq_len} {batch} {bytes_per_value}')\n"
        "    return 2 * n_layers * n_heads * head_dim * seq_len * batch * bytes_per_value"
    )
    subs = tmp_path / "subs"
    subs.mkdir()
    nbformat.write(nb, subs / "updater.ipynb")
    out = tmp_path / "out"
    (res,) = by_file(grade(subs, out, ex01(HIDDEN))).values()
    executed = (out / "submissions" / identity.folder_name("updater.ipynb") / "executed.ipynb").read_text()
    assert res["score"] == 11 and "LEAK 32 32 64 4096 1 2" in executed  # the learner's own call
    assert "LEAK 24 8 128 8192" not in executed and "LEAK 3 5 7 11" not in executed  # the hidden checks' calls
    assert "LEAK 24 8 128 8192" in res["extra_data"]["printed_during_grader_cells"]  # the instructor sees it


def test_a_startup_file_planted_before_a_crash_is_not_run_by_the_new_kernel(tmp_path):
    plant = (
        "import os, pathlib\n"
        "d = pathlib.Path(os.environ['IPYTHONDIR']) / 'profile_default' / 'startup'\n"
        "d.mkdir(parents=True, exist_ok=True)\n"
        "(d / '00-spy.py').write_text(" + repr(SPIES["spy_ast"]) + ")\n"
        "pathlib.Path('codeop.py').write_text(" + repr(SPIES["spy_ast"] + "from importlib import *\n") + ")\n"
    )
    nb = nbformat.read(CORRECT, 4)
    nb.cells += [nbformat.v4.new_code_cell(plant), nbformat.v4.new_code_cell("import os\nos._exit(1)")]
    subs = tmp_path / "subs"
    subs.mkdir()
    nbformat.write(nb, subs / "startup.ipynb")
    out = tmp_path / "out"
    (res,) = by_file(grade(subs, out, ex01(HIDDEN))).values()
    nb = nbformat.read(out / "submissions" / identity.folder_name("startup.ipynb") / "executed.ipynb", 4)
    seen = "".join(json.dumps(o) for c in nb.cells for o in c.get("outputs", []))
    seen += res["extra_data"].get("printed_during_grader_cells", "")
    assert res["score"] == 11 and res["extra_data"]["status"] == "kernel_crashed", res["output"]
    assert "kv_cache_canary" not in seen and "8192" not in seen


# 6. for a real course ------------------------------------------------------------------------


def test_feedback_gives_the_total_so_far_and_names_the_hidden_checks(tmp_path):
    out = tmp_path / "out"
    grade([identity.Submission(CORRECT, "c.ipynb")], out, ex01(HIDDEN))
    folder = out / "submissions" / identity.folder_name("c.ipynb")
    text_ = (folder / "feedback.txt").read_text(encoding="utf-8")
    assert "Total so far: 8/9 on the checks shown now" in text_
    assert "Hidden until release: 3 check(s), 3 points: kv_4k, kv_cache_other_model, kv_cache_canary" in text_
    assert "out of 12" in text_ and "✓ kv_cache_canary" not in text_
    assert "✓ kv_cache_canary" in (folder / "feedback_all.txt").read_text(encoding="utf-8")


VARIANT_YAML = """exercise: ex99_variant
title: A variant exercise (test)
variants:
  n_params: [1.0e9, 1.3e9, 2.7e9, 6.7e9, 13.0e9, 70.0e9]
  dtype: [bf16, fp8, int4]
checks:
  - name: weights
    kind: bytes
    expr: "memory.weights_bytes(params['n_params'], params['dtype'])"
  - name: why
    kind: manual
    points: 2
"""


def variant_notebook(ex_dir, learner, other=None):
    """A learner who computes their own numbers (or copies `other`'s variant)."""
    src = (
        f"LEARNER_ID = {learner!r}\nfrom hwlib import memory\nfrom hwlib.grading import variant\n"
        f"p = variant({str(ex_dir)!r}, {other or learner!r})\n"
        "weights = memory.weights_bytes(p['n_params'], p['dtype'])\n"
        "why = 'Each parameter is stored once, in its format\\'s width.'"
    )
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(src)])


def test_variants_written_answers_and_gradebooks(tmp_path, capsys):
    from hwlib.grading import selfcheck

    ex_dir = tmp_path / "ex99_variant"
    ex_dir.mkdir()
    (ex_dir / "checks.yaml").write_text(VARIANT_YAML)
    ex = spec.load_exercise(ex_dir)
    learners = [f"s{i:03d}" for i in range(40)]
    variants = {tuple(sorted(spec.params(ex, s).items())) for s in learners}
    assert len(variants) > 10 and spec.params(ex, "s001") == spec.params(ex, "s001")
    a, b = next((x, y) for x in learners for y in learners if spec.params(ex, x) != spec.params(ex, y))
    subs = tmp_path / "subs"
    subs.mkdir()
    nbformat.write(variant_notebook(ex_dir, a), subs / "a.ipynb")
    nbformat.write(variant_notebook(ex_dir, b, other=a), subs / "b.ipynb")  # copies a's numbers
    roster = tmp_path / "roster.csv"
    roster.write_text(f"file,learner\na.ipynb,{a}\nb.ipynb,{b}\n")
    out = tmp_path / "out"
    assert grade_cli(ex_dir, subs, "--out", out, "--roster", roster) == 0
    got = {r["learner"]: r for r in csv.DictReader(open(out / "grades.csv", encoding="utf-8"))}
    assert got[a]["weights"] == "1" and got[b]["weights"] == "0" and got[a]["why"] == "0"
    # the self-check agrees with the grader, for the learner's own id
    ns = {}
    exec(variant_notebook(ex_dir, a).cells[0].source, ns)
    capsys.readouterr()
    selfcheck.check(str(ex_dir), ns)
    assert "✓ weights" in capsys.readouterr().out
    selfcheck.check(str(ex_dir), ns, learner=b)
    assert "✗ weights" in capsys.readouterr().out
    # written answers: exported, scored by hand, merged back
    manual = list(csv.DictReader(open(out / "manual.csv", encoding="utf-8")))
    assert [(r["learner"], r["check"], r["points"]) for r in manual] == [(a, "why", "2"), (b, "why", "2")]
    assert manual[0]["answer"].startswith("Each parameter") and manual[0]["score"] == ""
    pdfs = sorted((out / "manual_pdfs").glob("*.pdf"))  # Gradescope: one page per written answer
    assert len(pdfs) == 2 and all(p.read_bytes().startswith(b"%PDF") for p in pdfs)
    manual[0]["score"], manual[0]["comment"] = "2", "clear"
    manual[1]["score"] = "3"
    with open(out / "manual.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(manual[0]))
        w.writeheader()
        w.writerows(manual)
    with pytest.raises(ValueError, match="line 3: score '3' for 'why' must be a number from 0 to 2"):
        classreport.merge_manual(out, ex)
    manual[1]["score"] = "1"
    with open(out / "manual.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(manual[0]))
        w.writeheader()
        w.writerows(manual)
    assert grade_cli(ex_dir, "--out", out, "--merge-manual") == 0
    got = {r["learner"]: r for r in csv.DictReader(open(out / "grades.csv", encoding="utf-8"))}
    assert (got[a]["score"], got[a]["why"], got[b]["score"]) == ("3", "2", "1")
    canvas = list(csv.reader(open(out / "canvas.csv", encoding="utf-8")))
    assert canvas[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "ex99_variant"]
    assert canvas[1][0].strip() == "Points Possible" and canvas[1][5] == "3"
    assert sorted(r[2:6:3] for r in canvas[2:]) == sorted([[a, "3"], [b, "1"]])
    # the manual table keeps the typed-in scores when the class is graded again
    assert grade_cli(ex_dir, subs, "--out", out, "--roster", roster) == 0
    assert [r["score"] for r in csv.DictReader(open(out / "manual.csv", encoding="utf-8"))] == ["2", "1"]


# measurement receipts (ex03) -----------------------------------------------------------------

EX03 = ROOT / "exercises" / "ex03_measure_mfu"


def ex03_code():
    nb = nbformat.read(EX03 / "solution.ipynb", 4)
    return grader._python_only("\n".join(c.source for c in nb.cells if c.cell_type == "code"))


def receipt_for(device, samples, code=None):
    """A receipt as receipt.make writes it, for a device this machine does not have."""
    from hwlib.grading import receipt

    check = next(c for c in spec.load_exercise("ex03").checks if c.kind == "receipt")
    src = receipt.functions_source(code or ex03_code(), check.receipt["functions"])
    dev = {k: device.get(k) for k in receipt.DEVICE_FIELDS}
    return json.dumps(
        {
            "receipt": 1,
            "device": dev,
            "fingerprint": receipt.fingerprint(dev),
            "code_sha256": receipt.code_hash(src),
            "precision": "fp32",
            "batches": [8, 64, 512],
            "samples": samples,
        }
    ), check


T4 = {"name": "Tesla T4", "kind": "gpu", "sm_count": 40, "memory_bytes": 15_835_398_144, "sm_clock_hz": 1.59e9}


def t4_samples(best_512=2.0e-3):
    """Seconds per step: 4.83 GFLOP at batch 512 in 2 ms is 2.4 TFLOP/s, 30 % of a T4's 8.1."""
    return [[best * (1 + 0.01 * i) for i in range(12)] for best in (0.3e-3, 0.5e-3, best_512)]


def test_a_receipt_from_a_t4_is_checked_against_that_devices_peak():
    from hwlib.grading import receipt

    raw, check = receipt_for(T4, t4_samples())
    want = check.receipt["code_sha256"]  # checks.yaml holds the published code's hash:
    assert want == receipt.code_hash(receipt.functions_source(ex03_code(), check.receipt["functions"]))
    ok, msg = receipt.verify(raw, check.receipt, ex03_code(), want)
    assert ok and "possible on a T4" in msg and "band not checked" in msg, msg
    # 4.83 GFLOP in 0.5 ms is 9.7 TFLOP/s: faster than a T4's fp32 peak of 8.1 TFLOP/s
    ok, msg = receipt.verify(receipt_for(T4, t4_samples(0.5e-3))[0], check.receipt, ex03_code(), want)
    assert not ok and "faster than the fp32 peak of a T4" in msg
    ok, msg = receipt.verify(receipt_for({**T4, "sm_count": 80}, t4_samples())[0], check.receipt, ex03_code(), want)
    assert not ok and "T4 has 40 SMs" in msg
    forged = json.loads(raw)
    forged["device"]["name"] = "NVIDIA H100 80GB HBM3"
    assert "fingerprint does not match" in receipt.verify(json.dumps(forged), check.receipt, ex03_code(), want)[1]
    ok, msg = receipt.verify(
        receipt_for({**T4, "name": "Mystery GPU"}, t4_samples())[0], check.receipt, ex03_code(), want
    )
    assert not ok and "not on the spec sheet" in msg
    spread = t4_samples()
    spread[0][0] = spread[0][1] * 1000
    assert "over 100x the fastest" in receipt.verify(receipt_for(T4, spread)[0], check.receipt, ex03_code(), want)[1]
    short = [row[:3] for row in t4_samples()]
    assert "at least 10" in receipt.verify(receipt_for(T4, short)[0], check.receipt, ex03_code(), want)[1]


def test_a_receipt_of_changed_benchmark_code_fails():
    from hwlib.grading import receipt

    changed = ex03_code().replace("repeats=15", "repeats=3")
    assert changed != ex03_code()
    raw, check = receipt_for(T4, t4_samples(), code=changed)  # measured with changed code
    want = check.receipt["code_sha256"]
    assert "not the published one" in receipt.verify(raw, check.receipt, changed, want)[1]
    raw, _ = receipt_for(T4, t4_samples())  # measured with the published code, then edited
    assert "changed after measuring" in receipt.verify(raw, check.receipt, changed, want)[1]


def test_the_ex03_solution_run_here_passes_its_own_cpu_receipt(tmp_path):
    ex = spec.load_exercise("ex03")
    (res,) = by_file(grade([identity.Submission(EX03 / "solution.ipynb", "sol.ipynb")], tmp_path / "o", ex)).values()
    tests = {t["name"]: t for t in res["tests"]}
    assert tests["receipt"]["score"] == 2 and "a CPU run" in tests["receipt"]["output"], tests["receipt"]
    by_hand = sum(c.points for c in ex.checks if c.kind == "manual")  # the written answer: 0 until merged back
    assert by_hand and res["score"] == ex.max_score - by_hand


# 7. packaging truth --------------------------------------------------------------------------


def test_the_autograder_zip_says_and_builds_for_the_python_of_its_pins(tmp_path):
    import zipfile

    from hwlib.grading import gradescope

    wheel = tmp_path / "hwlib-0-py3-none-any.whl"
    wheel.write_bytes(b"PK")
    z = zipfile.ZipFile(gradescope.package("ex01", None, tmp_path / "a.zip", wheel))
    py = f"{sys.version_info.major}.{sys.version_info.minor}"
    setup, reqs = z.read("setup.sh").decode(), z.read("requirements.txt").decode()
    assert f"PY=python{py}" in setup and f"CPython {py}." in reqs and "Ubuntu 22.04" in setup
    pins = dict(line.split("==") for line in reqs.splitlines() if "==" in line)
    for name in ("ipykernel", "nbclient", "nbformat", "jupyter_client", "pyzmq", "tornado", "numpy", "PyYAML"):
        assert name in pins, name  # what grading needs, and what it needs in turn, pinned
    assert "hwlib" not in pins


def test_grade_package_from_a_plain_install_packs_its_own_wheel(tmp_path):
    """hwlib installed from a wheel (no checkout): grade-package packs the installed files."""
    from hwlib.grading import gradescope

    built = gradescope.build_wheel(tmp_path / "w1")  # from this source tree
    site = tmp_path / "site"
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target"]
    subprocess.run(pip + [str(site), str(built)], check=True)
    code = (
        "import sys; from pathlib import Path; from hwlib.grading import gradescope; "
        "print(gradescope.build_wheel(Path(sys.argv[1])))"
    )
    (tmp_path / "w2").mkdir()
    env = {**os.environ, "PYTHONPATH": str(site)}
    proc = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "w2")], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    packed = Path(proc.stdout.strip())
    assert packed.parent == tmp_path / "w2" and packed.name.endswith("-py3-none-any.whl")
    again = tmp_path / "site2"
    subprocess.run(pip + [str(again), str(packed)], check=True)  # pip accepts it (RECORD, WHEEL)
    assert (again / "hwlib" / "grading" / "receipt.py").is_file()
    assert (again / "hwlib" / "grading" / "public" / "ex01_memory_budget.yaml").is_file()


def test_gradescope_gives_the_learner_id_for_variants(tmp_path):
    from hwlib.grading import gradescope

    (tmp_path / "submission_metadata.json").write_text(json.dumps({"users": [{"email": "a@x.org", "sid": "s042"}]}))
    assert gradescope.learner_of(tmp_path) == "s042"
    (tmp_path / "submission_metadata.json").write_text(json.dumps({"users": [{"email": "a@x.org"}]}))
    assert gradescope.learner_of(tmp_path) == "a@x.org"
    (tmp_path / "submission_metadata.json").write_text("[")
    assert gradescope.learner_of(tmp_path) is None


def test_the_kernel_log_tail_is_for_the_instructor_only(tmp_path, monkeypatch):
    from hwlib.grading import runner, sandbox

    def failing(limits, bwrap, workdir, env, secrets=()):
        return ["/bin/sh", "-c", "echo 'leaked kv_cache_canary args 24 8 128 8192' >&2; exit 1"]

    monkeypatch.setattr(sandbox, "kernel_argv", failing)
    ex = ex01(HIDDEN)
    cfg = grader.configure(ex, use_bwrap=False)
    cfg = runner.RunConfig(**{**cfg.__dict__, "startup_timeout": 5})
    ((_, _, res),) = grader.grade_batch(
        ex, [identity.Submission(CORRECT, "c.ipynb")], tmp_path, cfg, progress=lambda *_: None
    )
    assert res["extra_data"]["status"] == "grader_error"
    learner_sees = res["output"] + json.dumps(res["tests"])
    assert "kv_cache_canary args" not in learner_sees and "8192" not in learner_sees
    assert "8192" in res["extra_data"]["kernel_log_tail"]


def test_an_interrupt_while_a_worker_starts_leaves_no_worker_behind(tmp_path, monkeypatch):
    """The signal can land between a worker's fork and its registration: it is still killed, and
    the grader does not wait for it at exit (it once hung on a notebook that sleeps forever)."""
    import multiprocessing.context

    subs = tmp_path / "subs"
    subs.mkdir()
    shutil.copy(CORRECT, subs / "a0.ipynb")
    forever = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import time\ntime.sleep(10**6)")])
    nbformat.write(forever, subs / "a1.ipynb")
    real, calls = multiprocessing.context.ForkProcess.start, []

    def start(self):
        real(self)
        calls.append(self)
        if len(calls) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(multiprocessing.context.ForkProcess, "start", start)
    ex = ex01()
    with pytest.raises(KeyboardInterrupt):
        grader.grade_batch(ex, identity.expand([subs]), tmp_path / "out", cfg_for(ex), progress=lambda *_: None)
    calls[1].join(30)
    assert calls[1].exitcode is not None and calls[1].daemon  # killed, and never joined at exit
    rows = list(csv.DictReader(open(tmp_path / "out" / "grades.csv", encoding="utf-8")))
    assert [r["file"] for r in rows] == ["a0.ipynb"]
