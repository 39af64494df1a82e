"""nbval on every exercise notebook (learner and solution): each runs and reproduces its stored
outputs (cells marked `# NBVAL_IGNORE_OUTPUT` excepted). pytest's testpaths is tests/, so one
`pytest --nbval` subprocess checks all of exercises/ and each exercise's cells are asserted here."""

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = sorted(p.parent for p in (ROOT / "exercises").glob("*/checks.yaml"))


KERNEL_START_FAILURES = ("Kernel died before replying to kernel_info", "Kernel didn't respond")
"""What a kernel that never started says (a loaded machine, or two kernels racing for a port): the
notebook was not run, so it is run again once, alone; every other failure stands."""


def _nbval(notebooks, xml):
    return subprocess.Popen(
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
            f"--junitxml={xml}",
            *notebooks,
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _cases(xml) -> dict:
    cases: dict = {}
    for case in ET.parse(xml).getroot().iter("testcase"):
        failed = [el.get("message", "") + (el.text or "")[-1500:] for el in case if el.tag in ("failure", "error")]
        cases.setdefault(case.get("classname", ""), []).append((case.get("name"), failed))
    return cases


def _never_started(results) -> bool:
    return any(any(k in why for k in KERNEL_START_FAILURES) for _, fails in results for why in fails)


@pytest.fixture(scope="module")
def nbval_report(tmp_path_factory):
    """Run nbval in two parallel subprocesses (learner notebooks, solutions); parse their JUnit XML.
    A notebook whose kernel never started is run once more on its own (KERNEL_START_FAILURES)."""
    tmp = tmp_path_factory.mktemp("nbval")
    groups = {
        "learner": [str(f / f"{f.name}.ipynb") for f in FOLDERS],
        "solution": [str(f / "solution.ipynb") for f in FOLDERS],
    }
    procs = {name: _nbval(notebooks, tmp / f"{name}.xml") for name, notebooks in groups.items()}
    logs = {name: p.communicate(timeout=1800)[0] for name, p in procs.items()}
    cases: dict = {}
    for name in groups:
        cases.update(_cases(tmp / f"{name}.xml"))
    for key in [k for k, results in cases.items() if _never_started(results)]:
        notebook = ROOT / Path(*key.split(".")[:-2]) / ".".join(key.split(".")[-2:])
        xml = tmp / f"again-{len(logs)}.xml"
        logs[key] = _nbval([str(notebook)], xml).communicate(timeout=1800)[0]
        cases.update(_cases(xml))
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
