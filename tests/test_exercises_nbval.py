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
    report = tmp_path_factory.mktemp("nbval") / "report.xml"
    notebooks = [str(nb) for f in FOLDERS for nb in (f / f"{f.name}.ipynb", f / "solution.ipynb")]
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--nbval", "--nbval-current-env", "-q", "-p", "no:cacheprovider",
         "--rootdir", str(ROOT), f"--junitxml={report}", *notebooks],
        cwd=ROOT, capture_output=True, text=True, timeout=900)
    cases = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        failed = [el.get("message", "") + (el.text or "")[-1500:] for el in case
                  if el.tag in ("failure", "error")]
        cases.setdefault(case.get("classname", ""), []).append((case.get("name"), failed))
    return proc, cases


@pytest.mark.parametrize("folder", FOLDERS, ids=[f.name for f in FOLDERS])
def test_exercise_notebooks_reproduce_their_outputs(folder, nbval_report):
    proc, cases = nbval_report
    for name in (f"{folder.name}.ipynb", "solution.ipynb"):
        key = f"exercises.{folder.name}.{name}"
        assert key in cases, f"nbval did not collect {key}: {proc.stdout[-2000:]}{proc.stderr[-1000:]}"
        failures = [(cell, why) for cell, why in cases[key] if why]
        assert not failures, failures[:3]
        assert len(cases[key]) >= 2
