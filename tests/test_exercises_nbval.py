"""nbval on every exercise notebook (learner and solution): each runs and reproduces its stored
outputs (cells marked `# NBVAL_IGNORE_OUTPUT` excepted). pytest's testpaths is tests/, so one
`pytest --nbval` subprocess checks all of exercises/ and each exercise's cells are asserted here."""

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = sorted(p.parent for p in (ROOT / "exercises").glob("*/checks.yaml"))


@pytest.fixture(scope="module")
def nbval_report(tmp_path_factory):
    """Run nbval in two parallel subprocesses (learner notebooks, solutions); parse their JUnit XML."""
    tmp = tmp_path_factory.mktemp("nbval")
    groups = {
        "learner": [str(f / f"{f.name}.ipynb") for f in FOLDERS],
        "solution": [str(f / "solution.ipynb") for f in FOLDERS],
    }
    procs = {
        name: subprocess.Popen(
            [
                sys.executable,
                "-m",
                "pytest",
                "--nbval",
                "--nbval-current-env",
                "-q",
                "-p",
                "no:cacheprovider",
                "--rootdir",
                str(ROOT),
                f"--junitxml={tmp / name}.xml",
                *notebooks,
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for name, notebooks in groups.items()
    }
    logs = {name: p.communicate(timeout=900)[0] for name, p in procs.items()}
    cases = {}
    for name in groups:
        for case in ET.parse(tmp / f"{name}.xml").getroot().iter("testcase"):
            failed = [el.get("message", "") + (el.text or "")[-1500:] for el in case if el.tag in ("failure", "error")]
            cases.setdefault(case.get("classname", ""), []).append((case.get("name"), failed))
    return "\n".join(log[-2000:] for log in logs.values()), cases


@pytest.mark.parametrize("folder", FOLDERS, ids=[f.name for f in FOLDERS])
def test_exercise_notebooks_reproduce_their_outputs(folder, nbval_report):
    log, cases = nbval_report
    for name in (f"{folder.name}.ipynb", "solution.ipynb"):
        key = f"exercises.{folder.name}.{name}"
        assert key in cases, f"nbval did not collect {key}: {log}"
        failures = [(cell, why) for cell, why in cases[key] if why]
        assert not failures, failures[:3]
        assert len(cases[key]) >= 2
