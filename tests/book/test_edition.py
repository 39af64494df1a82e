"""Editions and one home for where the book lives (tools/edition.py, _ext/edition.py, tools/make_colab.py).

The decisive test copies the repository, changes `repository.url` and `html.baseurl` in the copy's
_config.yml, regenerates what is generated from them, and then finds the old addresses in no file.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

import hwlib

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import edition  # noqa: E402

OLD_REPO = edition.load(ROOT).repo_url
OLD_BASE = edition.load(ROOT).baseurl
NEW_REPO = "https://github.com/some-school/hw-ai-course"
NEW_BASE = "https://some-school.github.io/hw-ai-course/"


def repo_files(root: Path = ROOT) -> list[str]:
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=root,
        capture_output=True,
        check=True,
    ).stdout
    return [p for p in out.decode().split("\0") if p and (root / p).is_file()]


def copy_repo(dest: Path) -> Path:
    for rel in repo_files():
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((ROOT / rel).read_bytes())
    return dest


# Regenerate the Colab edition of a copy without a built book: the glued values are not what this
# test is about (URLs are), so every glued value reads "0".
REGEN_COLAB = """
import sys
sys.path.insert(0, "tools")
import make_colab

class Book(make_colab.Book):
    def glue_value(self, doc, name):
        return "0"

make_colab.write_all(Book())
"""


@pytest.fixture(scope="module")
def moved(tmp_path_factory) -> Path:
    """A copy of the repository whose _config.yml names another home, regenerated."""
    copy = copy_repo(tmp_path_factory.mktemp("moved"))
    cfg = copy / "_config.yml"
    text = cfg.read_text()
    assert OLD_REPO in text and OLD_BASE in text
    cfg.write_text(
        text.replace(f"url: {OLD_REPO}", f"url: {NEW_REPO}").replace(f"baseurl: {OLD_BASE}", f"baseurl: {NEW_BASE}")
    )
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(copy)}
    for cmd in ([sys.executable, "tools/edition.py"], [sys.executable, "-c", REGEN_COLAB]):
        proc = subprocess.run(cmd, cwd=copy, env=env, capture_output=True, text=True, timeout=900)
        assert proc.returncode == 0, proc.stderr[-2000:]
    return copy


def test_changing_the_url_in_config_changes_it_everywhere(moved):
    old = [OLD_REPO.split("://", 1)[1], OLD_BASE.split("://", 1)[1].rstrip("/")]
    left = []
    for path in sorted(p for p in moved.rglob("*") if p.is_file()):
        rel = path.relative_to(moved)
        text = path.read_bytes().decode("utf-8", errors="replace")
        left += [f"{rel}: {o}" for o in old if o in text]
    assert not left, "old address still present after regenerating:\n" + "\n".join(left[:20])


def test_the_new_url_reaches_every_derived_place(moved):
    ed = edition.load(moved)
    assert ed.repo_url == NEW_REPO and ed.baseurl == NEW_BASE
    spec = f"hwlib @ git+{NEW_REPO}@v{hwlib.__version__}"
    assert f'%pip install -q "{spec}"' in (moved / "chapters/06_roofline.md").read_text()
    assert "git+" not in (moved / "exercises/ex01_memory_budget/source.md").read_text(), "its Colab copy installs"
    assert f'%pip install -q \\"{spec}\\"' in (moved / "exercises/colab/ex01_memory_budget.ipynb").read_text()
    first = (moved / "chapters/06_roofline.ipynb").read_text()
    assert f'%pip install -q \\"{spec}\\"' in first, "the Colab notebook's install cell names the new home"
    assert NEW_BASE in (moved / "chapters/06_roofline.ipynb").read_text(), "links point at the new site"
    assert f"git clone --branch v{hwlib.__version__} {NEW_REPO} && cd hw-ai-course" in (moved / "intro.md").read_text()
    cff = yaml.safe_load((moved / "CITATION.cff").read_text())
    assert cff["repository-code"] == NEW_REPO and cff["url"] == NEW_BASE
    urls = tomllib.loads((moved / "pyproject.toml").read_text())["project"]["urls"]
    assert urls["Source"] == NEW_REPO and urls["Homepage"] == NEW_BASE and urls["Issues"] == f"{NEW_REPO}/issues"


def test_derived_files_are_current():
    """What `make lint` checks: nothing derived from _config.yml and the version is stale."""
    assert edition.stale(ROOT) == []
    proc = subprocess.run([sys.executable, "tools/edition.py", "--check"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout


def test_check_names_a_stale_file(tmp_path):
    copy = copy_repo(tmp_path)
    page = copy / "chapters/06_roofline.md"
    page.write_text(page.read_text().replace(f"@v{hwlib.__version__}", ""))
    assert edition.stale(copy) == [page]


def test_install_spec_names_the_edition():
    ed = edition.Edition("https://github.com/o/r", "https://o.github.io/r/", "1.2.3", on_index=False)
    assert ed.install_spec() == "hwlib @ git+https://github.com/o/r@v1.2.3"
    assert ed.install_spec("[gpu-cuda12]") == "hwlib[gpu-cuda12] @ git+https://github.com/o/r@v1.2.3"
    on = edition.Edition("https://github.com/o/r", "https://o.github.io/r/", "1.2.3", on_index=True)
    assert on.install_spec() == "hwlib==1.2.3" and on.install_spec("[gpu]") == "hwlib[gpu]==1.2.3"


def test_rewrite_keeps_extras_and_leaves_other_commands():
    ed = edition.Edition("https://github.com/o/r", "https://o.github.io/r/", "1.2.3", on_index=False)
    text = 'pip install "hwlib[gpu-cuda12]"\npip install ".[gpu-cuda12]"\n%pip install -q "hwlib @ git+https://x/y"\n'
    assert edition.rewrite_page(text, ed) == (
        'pip install "hwlib[gpu-cuda12] @ git+https://github.com/o/r@v1.2.3"\n'
        'pip install ".[gpu-cuda12]"\n%pip install -q "hwlib @ git+https://github.com/o/r@v1.2.3"\n'
    )


def test_a_bad_config_is_refused_by_name(tmp_path):
    (tmp_path / "hwlib").mkdir()
    (tmp_path / "hwlib/__init__.py").write_text('__version__ = "1.0.0"\n')
    (tmp_path / "_config.yml").write_text("repository:\n  url: github.com/o/r\nhtml:\n  baseurl: https://o.io/r/\n")
    with pytest.raises(SystemExit, match="repository.url must be https://HOST/OWNER/NAME"):
        edition.load(tmp_path)
    (tmp_path / "_config.yml").write_text("repository:\n  url: https://github.com/o/r\n")
    with pytest.raises(SystemExit, match="html.baseurl"):
        edition.load(tmp_path)
    (tmp_path / "_config.yml").write_text(
        "repository:\n  url: https://github.com/o/r\nhtml:\n  baseurl: https://o.io/r/\nedition:\n  on_index: yes please\n"
    )
    with pytest.raises(SystemExit, match="on_index must be true or false"):
        edition.load(tmp_path)


# --- the book shows its edition -------------------------------------------------------------------------
def test_errata_come_from_the_changelog():
    mod = ext()
    log = (
        "# Changelog\n\n## 1.1.0 — 2027-01-02\n\n- New thing.\n- Fix the ridge point of\n  the H100.\n\n"
        "### Errata\n\n- Chapter 3 said 2x; it is 3x.\n\n## 1.0.0 — 2027-01-01\n\n- Errata in chapter 1.\n- First.\n"
    )
    entries = mod.changelog_entries(log)
    assert [e["version"] for e in entries] == ["1.1.0", "1.0.0"]
    assert entries[0]["errata"] == ["Fix the ridge point of the H100.", "Chapter 3 said 2x; it is 3x."]
    assert entries[0]["bullets"] == ["New thing."] and entries[1]["errata"] == ["Errata in chapter 1."]
    page = mod.errata_markdown(entries)
    assert page.index("edition 1.1.0") < page.index("edition 1.0.0") and "First." not in page
    real = mod.changelog_entries((ROOT / "CHANGELOG.md").read_text())
    assert real[0]["version"] == hwlib.__version__
    assert any(e["errata"] for e in real), "the changelog's errata reach the errata page"


def test_the_book_links_its_changelog_and_errata():
    toc = (ROOT / "_toc.yml").read_text()
    assert "file: changelog" in toc and "file: errata" in toc
    intro = (ROOT / "intro.md").read_text()
    assert "{{ edition }}" in intro and "{doc}`changelog`" in intro and "{doc}`errata`" in intro
    cfg = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert cfg["sphinx"]["local_extensions"]["book_edition"] == "_ext/"
    assert cfg["html"]["use_issues_button"] and cfg["html"]["use_edit_page_button"]


# --- the small things -----------------------------------------------------------------------------------
def test_hwlib_version():
    proc = subprocess.run([sys.executable, "-m", "hwlib", "--version"], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.strip() == f"hwlib {hwlib.__version__}"


BLOCK = "import sys\nfor m in {mods!r}: sys.modules[m] = None\n"


@pytest.mark.parametrize("command", [["grade", "ex01", "x.ipynb"], ["grade-package", "ex01"]])
def test_grading_without_its_extra_says_what_to_install(command):
    code = BLOCK.format(mods=["nbclient"]) + f"from hwlib.cli import main\nsys.exit(main({command!r}))\n"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and 'pip install "hwlib[grading]"' in lines[0] and "nbclient" in lines[0], proc.stderr


def test_the_core_imports_without_the_grading_and_book_packages():
    """What a chapter imports works with only the core dependencies (no kernel or notebook packages)."""
    mods = ["nbclient", "nbformat", "ipykernel", "jupytext", "myst_nb", "jupyter_book", "sphinx"]
    names = sorted(
        "hwlib." + ".".join(p.relative_to(ROOT / "hwlib").with_suffix("").parts)
        for p in (ROOT / "hwlib").rglob("*.py")
        if "grading" not in p.parts[-2:-1] and p.name not in ("__main__.py",)
    )
    names = [n.removesuffix(".__init__") for n in names]
    code = BLOCK.format(mods=mods) + f"import importlib\nfor n in {names!r}: importlib.import_module(n)\n"
    code += "import hwlib.grading\nfrom hwlib.grading import check\n"  # the learner's self-check too
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={"MPLBACKEND": "Agg"})
    assert proc.returncode == 0, proc.stderr[-1500:]


def test_dependencies_by_job():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    core = {re.split(r"[<>=\[ ]", d)[0].lower() for d in project["project"]["dependencies"]}
    assert core == {"numpy", "ml_dtypes", "matplotlib", "pyyaml"}
    grading = {re.split(r"[<>=\[ ]", d)[0] for d in project["project"]["optional-dependencies"]["grading"]}
    assert grading == {"nbclient", "nbformat", "ipykernel"}
    groups = project["dependency-groups"]
    assert all("==" in d for g in ("book", "test", "lab") for d in groups[g]), "groups are exact pins"
    assert not (ROOT / "requirements.txt").exists(), "pins live in pyproject's dependency groups only"


def ext():
    import importlib.util

    spec = importlib.util.spec_from_file_location("book_edition", ROOT / "_ext" / "book_edition.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_page_buttons_point_at_the_source_and_the_edition(monkeypatch):
    base = "https://github.com/o/r"
    context = {
        "header_buttons": [
            {
                "buttons": [
                    {"url": "https://colab.research.google.com/github/o/r/blob/main/exercises/colab/ex01_a.ipynb"}
                ]
            },
            {"buttons": [{"url": f"{base}/edit/main/exercises/ex01_a/ex01_a.ipynb"}, {"url": f"{base}/issues/new?x"}]},
        ]
    }
    monkeypatch.setenv("HWLIB_EDITION_REF", "v1.2.3")
    ext()._page_buttons(None, "exercises/ex01_a/ex01_a", "page.html", context, None)
    urls = [b["url"] for group in context["header_buttons"] for b in group["buttons"]]
    assert urls == [
        "https://colab.research.google.com/github/o/r/blob/v1.2.3/exercises/colab/ex01_a.ipynb",
        f"{base}/edit/main/exercises/ex01_a/source.md",
        f"{base}/issues/new?x",
    ]
    monkeypatch.delenv("HWLIB_EDITION_REF")
    chapter = {"header_buttons": [{"url": "https://colab.research.google.com/github/o/r/blob/main/chapters/a.ipynb"}]}
    ext()._page_buttons(None, "chapters/a", "page.html", chapter, None)
    assert chapter["header_buttons"][0]["url"].endswith("/blob/main/chapters/a.ipynb"), "no edition: the branch"
