"""`hwlib grade` command line: arguments, the sandbox notice, exit codes."""

import json
import shutil
from pathlib import Path

import pytest

from hwlib import cli
from hwlib.grading import identity, sandbox

SUBS = Path(__file__).resolve().parents[1] / "fixtures" / "grading" / "submissions"


@pytest.mark.parametrize(
    "argv, message",
    [
        (["grade", "ex99_nope", "x.ipynb"], "exercise 'ex99_nope' not found"),
        (["grade", "ex01", "x.ipynb", "--jobs", "0"], "--jobs must be > 0"),
        (["grade", "ex01", "x.ipynb", "--timeout-cell", "-1"], "--timeout-cell must be > 0"),
        (["grade", "ex01", "x.ipynb", "--checks", "/nonexistent/dir"], "--checks must be a folder"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(argv, message, capsys):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_empty_folder_is_refused(tmp_path, capsys):
    assert cli.main(["grade", "ex01", str(tmp_path)]) == 2
    assert "no submissions found" in capsys.readouterr().err


def test_without_a_working_bwrap_nothing_is_graded_unless_no_sandbox_is_given(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(sandbox, "bwrap_path", lambda: None)
    shutil.copy(SUBS / "not_json.ipynb", tmp_path / "a.ipynb")
    out = tmp_path / "out"
    assert cli.main(["grade", "ex01", str(tmp_path / "a.ipynb"), "--out", str(out)]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "the sandbox does not work here: bwrap (bubblewrap) is not installed" in err
    assert "--no-sandbox" in err and not out.exists()
    assert cli.main(["grade", "ex01", str(tmp_path / "a.ipynb"), "--out", str(out), "--no-sandbox"]) == 0
    assert "UNSANDBOXED" in capsys.readouterr().err


def test_grades_a_folder_and_reports_each_submission(tmp_path, capsys):
    for name in ("correct.ipynb", "empty.ipynb"):
        shutil.copy(SUBS / name, tmp_path / name)
    out = tmp_path / "out"
    folder = Path(__file__).resolve().parents[2] / "exercises" / "ex01_memory_budget"
    assert cli.main(["grade", str(folder), str(tmp_path), "--out", str(out), "--jobs", "2"]) == 0
    text = capsys.readouterr().out
    correct, empty = (identity.folder_name(n) for n in ("correct.ipynb", "empty.ipynb"))
    assert f"{correct}: 9/10  graded" in text and f"{empty}: 0/10  empty" in text and "grades.csv" in text
    res = json.loads((out / "submissions" / correct / "results.json").read_text())
    assert res["score"] == 9 and res["extra_data"]["timings_s"]["kernel_start"] > 0
    assert (out / "submissions" / correct / "feedback.txt").read_text().startswith("ex01_memory_budget")
