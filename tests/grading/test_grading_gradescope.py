"""Gradescope mode and the autograder zip, run against a simulated /autograder layout (a temp dir)."""

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from hwlib import cli
from hwlib.grading import gradescope

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "grading"
CORRECT = FIX / "submissions" / "correct.ipynb"
BLANK = FIX / "submissions" / "blank.ipynb"
HIDDEN = FIX / "hidden"
HWLIB_BIN = Path(sys.executable).parent / "hwlib"


def layout(tmp_path, **files):
    root = tmp_path / "autograder"
    (root / "submission").mkdir(parents=True)
    for name, src in files.items():
        dest = root / "submission" / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(src, dest)
    return root


def results(root):
    return json.loads((root / "results" / "results.json").read_text())


def test_pick_is_deterministic_or_refuses(tmp_path):
    root = layout(tmp_path, **{"a.ipynb": BLANK})
    assert gradescope.pick(root / "submission", "ex01_memory_budget")[0].name == "a.ipynb"
    shutil.copy(CORRECT, root / "submission" / "ex01_memory_budget.ipynb")
    assert gradescope.pick(root / "submission", "ex01_memory_budget")[0].name == "ex01_memory_budget.ipynb"
    shutil.copy(CORRECT, root / "submission" / "b.ipynb")
    (root / "submission" / "ex01_memory_budget.ipynb").unlink()
    chosen, why = gradescope.pick(root / "submission", "ex01_memory_budget")
    assert chosen is None and "a.ipynb, b.ipynb" in why


def test_gradescope_mode_writes_the_results_file_itself(tmp_path, capsys):
    root = layout(tmp_path, **{"notes/ex01_memory_budget.ipynb": CORRECT, "other.ipynb": BLANK})
    assert cli.main(["grade", "ex01", "--gradescope", "--autograder-root", str(root), "--checks", str(HIDDEN)]) == 0
    res = results(root)
    assert res["score"] == 11 and res["extra_data"]["file"] == "ex01_memory_budget.ipynb"
    assert {t["visibility"] for t in res["tests"]} >= {"visible", "hidden"}


def test_gradescope_mode_refuses_two_unnamed_notebooks_with_a_result(tmp_path):
    root = layout(tmp_path, **{"a.ipynb": CORRECT, "b.ipynb": CORRECT})
    assert cli.main(["grade", "ex01", "--gradescope", "--autograder-root", str(root)]) == 0
    res = results(root)
    assert res["score"] == 0 and "upload exactly one notebook" in res["output"] and "a.ipynb, b.ipynb" in res["output"]


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    out = tmp_path_factory.mktemp("pkg") / "autograder.zip"
    assert cli.main(["grade-package", "ex01", "--checks", str(HIDDEN), "--out", str(out)]) == 0
    return out


def test_the_package_holds_what_gradescope_needs(package):
    with zipfile.ZipFile(package) as z:
        names = set(z.namelist())
        req = z.read("requirements.txt").decode()
        setup = z.read("setup.sh").decode()
        run = z.read("run_autograder").decode()
        modes = {i.filename: i.external_attr >> 16 for i in z.infolist()}
    assert {"setup.sh", "run_autograder", "requirements.txt", "hidden/ex01_memory_budget.yaml"} <= names
    wheel = [n for n in names if n.startswith("hwlib-") and n.endswith(".whl")]
    assert len(wheel) == 1 and wheel[0] in setup and "bubblewrap" in setup
    pins = [line for line in req.splitlines() if not line.startswith("#")]
    assert "ipykernel==" in req and "nbclient==" in req and all("==" in line for line in pins)
    assert "--gradescope" in run and "--no-sandbox" not in run
    assert modes["run_autograder"] & 0o111 and modes["setup.sh"] & 0o111


def test_the_packaged_autograder_grades_a_simulated_submission(package, tmp_path):
    root = gradescope.unpack_for_test(package, tmp_path / "autograder")
    shutil.copy(CORRECT, root / "submission" / "my answers.ipynb")
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "HWLIB_BIN": str(HWLIB_BIN)}
    proc = subprocess.run(
        ["bash", str(root / "run_autograder")], capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    res = results(root)
    assert res["score"] == 11 and res["extra_data"]["status"] == "graded"  # hidden checks included
    assert "kv_cache_canary" in {t["name"] for t in res["tests"]}
