"""The Colab learner: what someone who presses a Colab button gets, read and run as they would.

Reading: every Colab notebook's Markdown is parsed with markdown-it-py (CommonMark, plus the MyST
plugins only to detect leftovers) and must hold no MyST role, directive, label, comment or
substitution, fold every worked answer and quiz answer into <details>, keep quiz questions visible,
and show each figure's caption and alt text.

Running: a fresh venv (no repository pins: numpy, matplotlib, pyyaml, ipykernel, nbclient, latest;
copied from one installed at most a week ago, see learner_template),
hwlib installed non-editable from a wheel of this checkout, a stand-in `google.colab` imported at
kernel start, the install cell pointed at that wheel, every notebook executed from its own empty
folder. Then: no cell error; every value the Colab text bakes in equals what the learner's run glued
(so nothing machine-dependent is baked in; a difference means glue(..., live=True) is missing);
each live value the text points to is printed. Without hwlib, a page says in one line how to install it.
"""

import datetime
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from markdown_it import MarkdownIt

import real_stack

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import make_colab  # noqa: E402
from colab_md import BUILD_PHRASES, parser  # noqa: E402

NOTEBOOKS = sorted(
    p
    for p in [
        *ROOT.glob("chapters/*.ipynb"),
        ROOT / "calculators.ipynb",
        ROOT / "gallery.ipynb",
        *ROOT.glob("exercises/colab/*.ipynb"),
    ]
    if p.is_file()
)
IDS = [str(p.relative_to(ROOT)) for p in NOTEBOOKS]
LEARNER_PACKAGES = ["numpy", "matplotlib", "pyyaml", "ipykernel", "nbclient"]
MYST_TOKENS = {
    "myst_role",
    "myst_target",
    "myst_line_comment",
    "myst_block_break",
    "colon_fence",
    "math_block_label",
    "front_matter",
}
LEFTOVER = re.compile(r"\{(glue|cite|eq|ref|numref|doc|term|math)[:}]|\{\{|^\([\w-]+\)=\s*$|^:::|^```\{", re.M)


@pytest.fixture(scope="module")
def book():
    return make_colab.Book()


@pytest.fixture(scope="module")
def stale(book):
    """The Colab notebooks the generator would write differently now (checked once)."""
    return {line.split(" ", 1)[0]: line for line in make_colab.problems(book)}


def fresh(stale, rel):
    """A stale notebook fails with the command that fixes it, not with a confusing symptom."""
    if rel in stale:
        pytest.fail(stale[rel], pytrace=False)


def doc_of(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("").as_posix()
    m = re.match(r"exercises/colab/(.+)$", rel)
    return f"exercises/{m.group(1)}/{m.group(1)}" if m else rel


def walk(tokens):
    for tok in tokens:
        yield tok
        yield from walk(tok.children or [])


# --- reading ------------------------------------------------------------------------------------------
def test_there_are_colab_notebooks():
    assert len(NOTEBOOKS) >= 20, IDS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_markdown_reads_as_a_finished_page(path, book, stale):
    fresh(stale, str(path.relative_to(ROOT)))
    nb = nbformat.read(path, as_version=4)
    md = [c for c in nb.cells if c.cell_type == "markdown"]
    text = "\n\n".join(c.source for c in md)
    myst = [
        t.type
        for t in walk(parser().parse(text))
        if t.type in MYST_TOKENS or (t.type == "fence" and t.info.startswith("{"))
    ]
    assert not myst, f"MyST constructs left: {sorted(set(myst))}"
    outside_code = re.sub(r"```.*?```|`[^`\n]*`", "", text, flags=re.S)
    left = LEFTOVER.findall(outside_code)
    assert not left, f"raw MyST left in the text: {left[:5]}"
    html = MarkdownIt("commonmark").render(text)
    assert not re.search(r"\{[\w:]+\}`", html), "a role survived CommonMark rendering"
    assert not BUILD_PHRASES.search(text), f"text about the book's build machine: {BUILD_PHRASES.search(text)[0]!r}"

    src = book.notebooks[doc_of(path)]
    source_md = "\n".join(c.source for c in src.cells if c.cell_type == "markdown")
    quizzes = len(re.findall(r"^(?:`{3,}|~{3,})\{quiz\}", source_md, re.M))
    dropdowns = len(re.findall(r"^:class:.*\bdropdown\b", source_md, re.M))
    dropdowns += len(re.findall(r"^(?::{3,}|`{3,})\{dropdown\}", source_md, re.M))  # the code of a function
    assert html.count("<details>") == quizzes + dropdowns, "every worked answer and quiz answer is folded"
    assert html.count("<details>") == html.count("</details>")
    assert text.count("**Quiz.**") == quizzes, "every quiz question is visible"
    for block in re.findall(r"<details>.*?</details>", text, re.S):
        assert block.count("<summary>") == 1
    outside = re.sub(r"<details>.*?</details>", "", text, flags=re.S)
    assert not re.search(r"^\*\*\([a-z]\)", outside, re.M), "a quiz's correct option shows outside its fold"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_every_figure_shows_its_caption_and_alt_text(path, book, stale):
    fresh(stale, str(path.relative_to(ROOT)))
    nb = nbformat.read(path, as_version=4)
    src = book.notebooks[doc_of(path)]
    figures = [
        c.metadata["mystnb"]
        for c in src.cells
        if c.cell_type == "code" and c.metadata.get("mystnb", {}).get("figure", {}).get("caption")
    ]
    shown = [(i, c) for i, c in enumerate(nb.cells) if c.cell_type == "markdown" and c.source.startswith("**Fig.")]
    assert len(shown) == len(figures), f"{len(figures)} figures, {len(shown)} captions shown"
    for (i, cell), meta in zip(shown, figures):
        assert nb.cells[i - 1].cell_type == "code", "a caption follows the cell that draws its figure"
        assert "*Image description:*" in cell.source if meta.get("image", {}).get("alt") else True


# --- running --------------------------------------------------------------------------------------------
def _pip(venv_dir: Path, *args, timeout=900):
    run = subprocess.run(
        [str(venv_dir / "bin" / "python"), "-m", "pip", "-q", "--disable-pip-version-check", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert run.returncode == 0, f"pip {' '.join(args)} failed:\n{run.stdout[-2000:]}{run.stderr[-3000:]}"


def _wheel(learner: Path, tmp: Path) -> Path:
    """A wheel of this checkout, built from a copy of just the package (nothing else of the repo)."""
    src = tmp / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        if (ROOT / name).exists():
            shutil.copy(ROOT / name, src / name)
    for name in ("hwlib", "LICENSES"):
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    _pip(learner, "wheel", "--no-deps", "-w", str(tmp / "wheels"), str(src))
    return next((tmp / "wheels").glob("hwlib-*.whl"))


def _drive(learner: Path, env: dict, spec: str, work: Path, notebooks: list, out: Path, cpu: int | None):
    cmd = [
        str(learner / "bin" / "python"),
        str(ROOT / "tests" / "colab_learner_run.py"),
        str(out),
        spec,
        str(work),
        *map(str, notebooks),
    ]
    if cpu is not None and shutil.which("taskset"):
        cmd = ["taskset", "-c", str(cpu), *cmd]  # one core each: also a machine unlike the build's
    return subprocess.Popen(cmd, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def learner_template() -> Path:
    """The learner's packages, latest from the index, installed once a week into the test cache
    (tests/real_stack.py): the week is part of the key, so "latest" is at most a week old."""
    year, week, _ = datetime.date.today().isocalendar()

    def install(python: Path) -> None:
        _pip(python.parents[1], "install", *LEARNER_PACKAGES)

    return real_stack.venv_template("colab-learner", sys.executable, (*LEARNER_PACKAGES, f"{year}-W{week}"), install)


@pytest.fixture(scope="module")
def learner(tmp_path_factory):
    """Build the learner's environment once; run every notebook (two at a time); return the results."""
    tmp = tmp_path_factory.mktemp("colab_learner")
    env_dir = real_stack.clone_venv(learner_template(), tmp / "venv")
    jupyter = tmp / "jupyter"
    standin = tmp / "standin" / "google" / "colab"
    standin.mkdir(parents=True)
    (standin / "__init__.py").write_text('"""Stand-in for the module Colab imports at start."""\n')
    startup = tmp / "ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True)
    inherited = ("PYTHON", "JUPYTER", "IPYTHON", "VIRTUAL_ENV", "MPL")  # none of the repo's settings
    env = {k: v for k, v in os.environ.items() if not k.startswith(inherited)}
    env.update(
        JUPYTER_DATA_DIR=str(jupyter),
        JUPYTER_PATH=str(jupyter),
        JUPYTER_CONFIG_DIR=str(jupyter),
        IPYTHONDIR=str(tmp / "ipython"),
        PATH=f"{env_dir / 'bin'}:{env['PATH']}",
    )
    # 1. a laptop without hwlib: the install cell and the first import of two pages
    work = tmp / "nohwlib"
    work.mkdir()
    without = [p for p in NOTEBOOKS if p.stem in ("06_roofline", "ex01_memory_budget")]
    proc = _drive(env_dir, env, "nohwlib:x", work, without, tmp / "nohwlib.json", None)
    log = proc.communicate(timeout=600)[0]
    assert proc.returncode == 0, log[-3000:]
    missing = json.loads((tmp / "nohwlib.json").read_text())
    # 2. Colab: hwlib from this checkout, google.colab importable and imported at kernel start
    wheel = _wheel(env_dir, tmp)
    _pip(env_dir, "install", str(wheel))
    (startup / "00-colab.py").write_text("import google.colab  # noqa: F401\n")
    env["PYTHONPATH"] = str(tmp / "standin")
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
    halves = [NOTEBOOKS[0::2], NOTEBOOKS[1::2]] if cpus >= 2 else [NOTEBOOKS]
    procs = []
    for k, part in enumerate(halves):
        work = tmp / f"empty{k}"
        work.mkdir()
        procs.append(
            (
                _drive(
                    env_dir,
                    env,
                    wheel.as_uri(),
                    work,
                    part,
                    tmp / f"run{k}.json",
                    sorted(os.sched_getaffinity(0))[k] if cpus >= 2 else None,
                ),
                tmp / f"run{k}.json",
            )
        )
    results = {}
    for proc, out in procs:
        log = proc.communicate(timeout=1800)[0]
        assert proc.returncode == 0, log[-3000:]
        for r in json.loads(out.read_text()):
            results[str(Path(r["path"]).relative_to(ROOT))] = r
    if os.environ.get("HWLIB_COLAB_REPORT"):  # keep the raw results (wall and cell times) for a report
        Path(os.environ["HWLIB_COLAB_REPORT"]).write_text(json.dumps(list(results.values())))
    return {"runs": results, "missing": missing, "log": log}


@pytest.mark.parametrize("rel", IDS)
def test_runs_top_to_bottom(rel, learner):
    run = learner["runs"][rel]
    assert run["error"] is None, run["error"]
    assert all("ERROR" not in out for out in run["outputs"])
    print(f"{rel}: {run['wall_s']:.1f} s, longest cell {max(run['cell_s']):.1f} s")


@pytest.mark.parametrize("rel", IDS)
def test_baked_values_are_the_learners_values(rel, learner, book, stale):
    """Deterministic glue only: what the book's build glued is what a fresh run elsewhere glues."""
    fresh(stale, rel)
    doc, glue = doc_of(ROOT / rel), learner["runs"][rel]["glue"]
    assert set(glue.get("live", [])) == book.live.get(doc, set()), (
        "the names glued live at run time differ from the live=True calls the generator found"
    )
    used = set(
        re.findall(
            r"\{glue:text\}`([^`]+)`",
            "\n".join(c.source for c in book.notebooks[doc].cells if c.cell_type == "markdown"),
        )
    )
    live = book.live.get(doc, set())
    differ = {
        name: (book.glue_value(doc, name), glue["glued"].get(name))
        for name in sorted(used - live)
        if glue["glued"].get(name) != book.glue_value(doc, name)
    }
    assert not differ, (
        f"{len(differ)} value(s) baked into the Colab text differ from the learner's run "
        f"(mark them glue(..., live=True) if they are measured on the running machine): "
        f"{dict(list(differ.items())[:8])}"
    )


@pytest.mark.parametrize("rel", IDS)
def test_live_values_are_printed_for_the_text_to_point_to(rel, learner, book):
    doc, run = doc_of(ROOT / rel), learner["runs"][rel]
    printed = "\n".join(run["outputs"])
    text = "\n".join(c.source for c in nbformat.read(ROOT / rel, as_version=4).cells if c.cell_type == "markdown")
    pointed = [name for name in book.live.get(doc, set()) if f"`{name}` (your value, printed above)" in text]
    unprinted = [name for name in pointed if not re.search(rf"^{re.escape(name)} = ", printed, re.M)]
    assert unprinted == [], "pointed to by the text but never printed"


def test_exercise_self_check_works_from_the_installed_package(learner):
    runs = [r for rel, r in learner["runs"].items() if rel.startswith("exercises/colab/")]
    assert runs
    for run in runs:
        assert "not answered" in run["outputs"][-2], run["outputs"][-2][-500:]


def test_without_hwlib_one_line_says_how_to_install(learner):
    for run in learner["missing"]:
        first, then = run["outputs"][0].strip(), run["outputs"][1].strip()
        assert first.count("\n") == 0 and "pip install" in first and "hwlib" in first, first
        assert then == first, f"the first import of hwlib shows {then!r}, not the one line"
        assert not any("error" in types for types in run["types"]), "no traceback, only the line"
