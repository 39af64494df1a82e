"""The project's own promises: one version, licences that say what covers what, a citation file
that agrees with the book's configuration, no glued value that no page uses, and a contributor
guide whose list of transpiler-constrained modules matches what the pages really compile."""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

import hwlib

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted(ROOT.glob("chapters/*.md")) + [ROOT / "calculators.md", ROOT / "gallery.md", ROOT / "intro.md"]


def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


# --- one version ---------------------------------------------------------------------------------


def test_the_version_lives_in_one_place():
    project = pyproject()["project"]
    assert "version" not in project and "version" in project["dynamic"]
    assert pyproject()["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "hwlib.__version__"}
    assert re.fullmatch(r"\d+\.\d+\.\d+", hwlib.__version__)
    assert importlib.metadata.version("hwlib") == hwlib.__version__, "reinstall hwlib (pip install -e .)"


def test_the_changelog_describes_this_version():
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    versions = re.findall(r"^## \[?(\d+\.\d+\.\d+)\]?", text, flags=re.M)
    assert versions and versions[0] == hwlib.__version__, (versions[:2], hwlib.__version__)
    assert len(versions) == len(set(versions))


# --- licences -------------------------------------------------------------------------------------


def test_code_and_text_licences_are_declared_and_shipped():
    project = pyproject()["project"]
    assert project["license"] == "MIT"
    assert "Permission is hereby granted" in (ROOT / "LICENSE").read_text(encoding="utf-8")
    cc = (ROOT / "LICENSES" / "CC-BY-4.0.txt").read_text(encoding="utf-8")
    assert cc.startswith("Creative Commons Attribution 4.0 International")
    notice = (ROOT / "NOTICE.md").read_text(encoding="utf-8")
    for words in ("MIT", "CC BY 4.0", "MathJax", "Apache-2.0"):
        assert words in notice
    footer = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["html"]["extra_footer"]
    assert "creativecommons.org/licenses/by/4.0" in footer and "MIT" in footer


def test_every_vendored_asset_carries_its_licence():
    """MathJax is Apache-2.0: its LICENSE file is copied next to it into the published book."""
    spec = importlib.util.spec_from_file_location("vendor_assets", ROOT / "tools" / "vendor_assets.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    packages = {src.split("/")[0] for src, _ in module.ASSETS}
    for package in packages:
        assert (f"{package}/LICENSE", f"{package}/LICENSE") in module.ASSETS, package
    lock = json.loads((ROOT / "package-lock.json").read_text(encoding="utf-8"))
    assert lock["packages"]["node_modules/mathjax"]["license"] == "Apache-2.0"


def test_the_citation_file_agrees_with_the_book():
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    assert cff["cff-version"] == "1.2.0"
    assert cff["title"].startswith(config["title"])
    assert cff["repository-code"] == config["repository"]["url"]
    assert cff["license"] == pyproject()["project"]["license"]
    assert "version" not in cff, "the version lives in hwlib/__init__.py only"


# --- glued values ---------------------------------------------------------------------------------

_GLUE_CALL = re.compile(r"""\bglue\(\s*(f?)(["'])(.+?)\2""")
_GLUE_USE = re.compile(r"\{glue(?::\w+)?\}`([^`]+)`|```\{glue(?::\w+)?\}\s+(\S+)")


def glued_names(text: str):
    """(name or pattern, is_pattern) for every glue call with a literal (or f-string) name."""
    for is_f, _, name in _GLUE_CALL.findall(text):
        if is_f:
            yield re.compile("^" + re.sub(r"\\\{.*?\\\}", ".+", re.escape(name)) + "$"), True
        else:
            yield name, False


def used_names(text: str) -> set[str]:
    return {(a or b).split(":")[0].strip() for a, b in _GLUE_USE.findall(text)}


def test_the_unused_glue_detector_works():
    text = 'glue("a", 1)\nglue(f"row_{i}", 2)\nglue("b", 3)\n\nSee {glue:text}`a` and {glue:text}`row_3`.'
    used = used_names(text)
    unused = [n for n, pat in glued_names(text) if not (any(n.match(u) for u in used) if pat else n in used)]
    assert unused == ["b"]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_no_glued_value_goes_unused(page):
    """A value computed and glued but never shown is either dead code or a sentence that was lost."""
    text = page.read_text(encoding="utf-8")
    used = used_names(text)
    unused = [
        n.pattern if pat else n
        for n, pat in glued_names(text)
        if not (any(n.match(u) for u in used) if pat else n in used)
    ]
    assert unused == [], f"{page.name}: glued but never used in the prose: {unused}"


# --- the transpiler's contract ---------------------------------------------------------------------


def _transpiled_modules(monkeypatch) -> set[str]:
    """Modules holding functions that the in-page calculators compile to JavaScript: the widgets'
    entry functions, as they pass them to `to_js`, and everything those reach."""
    pytest.importorskip("IPython")
    from hwlib.web import transpile, widgets

    entry_lists = []

    def spy(functions, *args, **kwargs):
        entry_lists.append(list(functions))
        return transpile.to_js(functions, *args, **kwargs)

    monkeypatch.setattr(widgets, "to_js", spy)
    widgets.llm_calculator()
    widgets.roofline_explorer()
    assert len(entry_lists) == 2
    return set().union(*(transpile.compile_program(functions).modules for functions in entry_lists))


def test_contributing_lists_every_module_the_transpiler_constrains(monkeypatch):
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    block = text.split("<!-- transpiled-modules: start -->")[1].split("<!-- transpiled-modules: end -->")[0]
    listed = set(re.findall(r"`(hwlib[\w.]*)`", block))
    assert listed == _transpiled_modules(monkeypatch), (
        "update the list in CONTRIBUTING.md (The transpiler's Python subset)"
    )


# --- habits: lint, types, the Python the pins need ---------------------------------------------------


def _lint_commands() -> list[list[str]]:
    """The tool commands `make lint` runs (make -n prints them; the venv set-up lines left out)."""
    proc = subprocess.run(["make", "-n", "lint"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    return [ln.split() for ln in lines if ln.startswith(".venv/bin/") and not ln.startswith(".venv/bin/pip")]


def test_pre_commit_runs_what_make_lint_runs():
    hooks = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8"))["repos"]
    assert [r["repo"] for r in hooks] == ["local"], "local hooks only: a commit needs no network"
    entries = []
    for hook in hooks[0]["hooks"]:
        assert hook["language"] == "system" and hook["entry"].startswith(".venv/bin/"), hook
        entries.append([w for w in hook["entry"].split() if w != "--force-exclude"])
    lint = [[w for w in cmd if w != "."] for cmd in _lint_commands()]  # make lint names the whole tree
    assert sorted(lint) == sorted(entries)
    assert len(lint) == 5


def test_every_formula_module_is_type_checked():
    checked = {Path(f).stem for f in pyproject()["tool"]["mypy"]["files"]}
    formula_modules = {p.stem for p in (ROOT / "hwlib").glob("*.py") if re.search(r"^FORMULAS\b", p.read_text(), re.M)}
    assert formula_modules - checked == set()
    assert {"roofline", "memory", "flops", "units", "parallel", "formats"} <= checked


@pytest.mark.slow
def test_the_declared_layers_hold():
    """[tool.importlinter]'s contracts (layers, no cycles, no matplotlib in the cost models) are kept."""
    proc = subprocess.run(
        [str(Path(sys.executable).with_name("lint-imports")), "--no-cache"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert " 0 broken." in proc.stdout


@pytest.mark.slow
def test_the_formula_modules_type_check():
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(ROOT / ".mypy_cache")],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "Success: no issues found in" in proc.stdout


def _lower_bound(spec: str | None) -> tuple[int, int]:
    m = re.search(r">=\s*(\d+)\.(\d+)", spec or "")
    return (int(m[1]), int(m[2])) if m else (0, 0)


def test_requires_python_is_the_oldest_python_every_pin_supports():
    """requires-python is the highest lower bound among the pinned packages' own Requires-Python
    (read from the installed distributions: `make venv` installs every pin), and ruff and mypy
    target that version."""
    project = pyproject()
    groups = project["dependency-groups"]
    pins = [d for g in ("book", "test") for d in groups[g] if isinstance(d, str)]
    bounds = {}
    for pin in pins:
        name, version = pin.split("==")
        dist = importlib.metadata.distribution(name)
        assert dist.version == version, f"{name} {dist.version} installed, {version} pinned: run make venv"
        bounds[name] = _lower_bound(dist.metadata.get("Requires-Python"))
    need = max(bounds.values())
    assert project["project"]["requires-python"] == f">={need[0]}.{need[1]}", sorted(
        bounds.items(), key=lambda kv: kv[1]
    )
    assert project["tool"]["ruff"]["target-version"] == f"py{need[0]}{need[1]}"
    assert project["tool"]["mypy"]["python_version"] == f"{need[0]}.{need[1]}"
