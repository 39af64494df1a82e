"""The Colab install cell changes nothing Colab pinned.

Colab's runtime is Python 3.13 with pinned packages (tests/fixtures/colab/colab_pins.txt: its runtime
list and google-colab's own pins). Two checks, both against pip itself:

1. A real install. A Python 3.13 environment holds the light pinned packages (the kernel stack:
   ipykernel 6.17.1, jupyter_client 7.4.9, ipython 7.34.0, tornado, jupyter-server, numpy 2.1.3, ...)
   and google-colab's metadata (a stand-in with the real pins, tests/fixtures/colab/). Installing a
   wheel of this hwlib there, as the install cell does (no constraints), must change no pinned
   version and print no resolver error — where the old core dependencies (ipykernel>=6.29) upgraded
   ipykernel to 7.x and pip printed "google-colab 1.0.0 requires ipykernel==6.17.1".
2. The resolver, for the pins that are too heavy to install here (torch 2.11, cupy-cuda12x 14.0.1:
   gigabytes of CUDA wheels). `pip install --dry-run --report` resolves every pin together with
   the wheel from the index's metadata alone (nothing is downloaded) under the pins as constraints;
   it must succeed with every pin at its pinned version. pandas 2.2.2 is a constraint only: it has
   no Python 3.13 wheel, so pip would have to build it, and hwlib's dependencies do not reach it.

Needs python3.13 (the CI image has it) and the package index (or its mirror).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import real_stack

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "colab"
PINS_FILE = FIXTURES / "colab_pins.txt"
HEAVY = {"torch", "cupy-cuda12x"}  # resolved, not installed
NO_WHEEL = {"pandas"}  # no cp313 wheel of 2.2.2: a constraint only


def norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins() -> dict[str, str]:
    out = {}
    for line in PINS_FILE.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, version = line.split("==")
            out[norm(name)] = version
    return out


def python313() -> str:
    """A real 3.13 interpreter (pyenv's shim on PATH may point at another version)."""
    for found in ("/root/.pyenv/versions/3.13.0/bin/python3.13", shutil.which("python3.13")):
        if (
            found
            and subprocess.run([found, "-c", "import sys; assert sys.version_info[:2] == (3, 13)"]).returncode == 0
        ):
            return found
    raise AssertionError("python3.13 is needed: Colab's runtime is Python 3.13")


def pip(env: Path, *args, timeout=900) -> subprocess.CompletedProcess:
    cmd = [str(env / "bin" / "python"), "-m", "pip", "--disable-pip-version-check", "--no-input", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def installed(env: Path) -> dict[str, str]:
    proc = pip(env, "list", "--format=json")
    assert proc.returncode == 0, proc.stderr
    return {norm(p["name"]): p["version"] for p in json.loads(proc.stdout)}


def errors(text: str) -> list[str]:
    """pip's error lines, less the one about pandas 2.2.2 missing (it has no Python 3.13 wheel)."""
    return [
        ln
        for ln in text.splitlines()
        if ("ERROR" in ln or "dependency resolver" in ln or re.search(r"requires .*, but you have", ln))
        and not re.search(r"requires pandas==2\.2\.2, which is not installed", ln)
    ]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    (found,) = out.glob("hwlib-*.whl")
    return found


@pytest.fixture(scope="module")
def colab(tmp_path_factory) -> Path:
    """A Python 3.13 environment with Colab's light pins and google-colab's metadata installed: a
    copy of one made once per pin list and stand-in (tests/real_stack.py's cache)."""
    light = [f"{n}=={v}" for n, v in pins().items() if n not in HEAVY | NO_WHEEL]
    standin = FIXTURES / "google_colab_standin"
    standin_files = sorted(p for p in standin.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    key = (*light, *(f"{p.relative_to(standin)}:{p.read_text()}" for p in standin_files))

    def install(python: Path) -> None:
        env = python.parents[1]
        proc = pip(env, "install", "-q", *light)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        proc = pip(env, "install", "-q", "--no-deps", "--no-build-isolation", str(standin))
        if proc.returncode != 0:  # no setuptools in a bare 3.13 venv: let pip fetch it
            proc = pip(env, "install", "-q", "--no-deps", str(standin))
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]

    template = real_stack.venv_template("colab-pins", python313(), key, install)
    return real_stack.clone_venv(template, tmp_path_factory.mktemp("colab") / "venv")


def test_the_colab_install_changes_nothing_pinned(colab, wheel):
    before = installed(colab)
    assert before["ipykernel"] == "6.17.1" and before["google-colab"] == "1.0.0"
    proc = pip(colab, "install", str(wheel))  # what the install cell runs: no constraints
    text = proc.stdout + proc.stderr
    assert proc.returncode == 0, text[-3000:]
    assert errors(text) == [], "\n".join(errors(text))
    after = installed(colab)
    changed = {n: (before.get(n), after.get(n)) for n in pins() if before.get(n) != after.get(n)}
    assert changed == {}, f"the install changed Colab's pinned packages: {changed}"
    assert "hwlib" in after
    check = pip(colab, "check")
    assert errors(check.stdout + check.stderr) == [] or all("pandas" in ln for ln in errors(check.stdout)), check.stdout


def test_with_the_heavy_pins_the_resolver_changes_nothing(tmp_path, wheel):
    """torch 2.11 and cupy-cuda12x 14.0.1 with every other pin: resolved from metadata, not installed."""
    env = tmp_path / "venv"
    subprocess.run([python313(), "-m", "venv", str(env)], check=True)
    report = tmp_path / "report.json"
    wanted = [f"{n}=={v}" for n, v in pins().items() if n not in NO_WHEEL]
    proc = pip(
        env,
        "install",
        "--dry-run",
        "--ignore-installed",
        "--quiet",
        "--report",
        str(report),
        "-c",
        str(PINS_FILE),
        *wanted,
        str(wheel),
    )
    text = proc.stdout + proc.stderr
    assert proc.returncode == 0, text[-3000:]
    assert errors(text) == [], "\n".join(errors(text))
    resolved = {
        norm(i["metadata"]["name"]): i["metadata"]["version"] for i in json.loads(report.read_text())["install"]
    }
    for name, version in pins().items():
        if name not in NO_WHEEL:
            assert resolved.get(name) == version, (name, resolved.get(name), version)
    assert "hwlib" in resolved


def test_the_install_cell_says_nothing_about_restarting():
    sys.path.insert(0, str(ROOT / "tools"))
    import edition
    import make_colab

    cell = make_colab.install_cell(edition.load(ROOT).install_spec())
    assert "restart" not in cell.lower()
    assert '%pip install -q "' + edition.load(ROOT).install_spec() + '"' in cell
