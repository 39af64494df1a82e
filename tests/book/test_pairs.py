"""The Colab edition (tools/make_colab.py): every page with code has an up-to-date, output-free Colab
notebook, generated from the chapter sources and the executed book, deterministic, whose first cell
installs hwlib from the repository named in _config.yml (the one place the URL lives)."""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jupytext
import nbformat
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted((ROOT / "chapters").glob("*.md"))
sys.path.insert(0, str(ROOT / "tools"))
import make_colab  # noqa: E402
from colab_md import Renderer  # noqa: E402

REGEN = "python tools/make_colab.py"


def repository_url() -> str:
    return yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]["url"]


def edition_spec() -> str:
    """The requirement every install cell names: this edition (tools/edition.py)."""
    import edition

    return edition.load(ROOT).install_spec()


@pytest.fixture(scope="module")
def book():
    if not (ROOT / "_build" / "jupyter_execute").is_dir():
        pytest.fail("the Colab edition is rendered from the executed book: run `make book` first")
    return make_colab.Book()


def test_there_are_chapters():
    assert CHAPTERS, "no chapters/*.md found"


def test_every_colab_notebook_is_up_to_date(book):
    issues = make_colab.problems(book)
    assert issues == [], "\n".join(issues) + f"\nRegenerate with: {REGEN} (after make book)"


def test_every_page_with_code_has_one(book):
    pages = book.colab_pages()
    for chapter in CHAPTERS:
        assert f"chapters/{chapter.stem}" in pages
    assert {"calculators", "gallery"} <= set(pages)
    assert sum(p.startswith("exercises/") for p in pages) == len(list((ROOT / "exercises").glob("*/source.md")))


def test_generation_is_deterministic(book):
    doc = book.colab_pages()[0]
    again = make_colab.Book()
    assert make_colab.text_of(make_colab.render(book, doc)) == make_colab.text_of(make_colab.render(again, doc))


@pytest.mark.parametrize("md", CHAPTERS, ids=lambda p: p.name)
def test_chapter_install_cell(md):
    """The book's hidden install cell (kept in the source for readers of the .md) names this edition."""
    nb = jupytext.read(md)
    first = next(c for c in nb.cells if c.cell_type == "code")
    assert "remove-cell" in first.metadata.get("tags", []), "the install cell must be hidden in the book"
    assert 'if "google.colab" in sys.modules:' in first.source, "install only when running on Colab"
    specs = re.findall(r'%pip install -q "([^"]+)"', first.source)
    assert specs == [edition_spec()], f"install {specs} must name the edition {edition_spec()!r} (tools/edition.py)"
    assert repository_url() in edition_spec() or "==" in edition_spec()


@pytest.mark.parametrize("md", CHAPTERS, ids=lambda p: p.name)
def test_chapter_has_quiz_answers_and_recap(md):
    text = md.read_text()
    assert text.count("```{quiz}") >= 2, "a short quiz (at least two questions)"
    assert text.count(":class: dropdown") >= 2, "at least two worked problems with hidden answers"
    assert "## Key ideas" in text, "a recap of key ideas"


def colab_notebooks():
    return sorted(
        p
        for p in [
            *ROOT.glob("chapters/*.ipynb"),
            ROOT / "calculators.ipynb",
            ROOT / "gallery.ipynb",
            *ROOT.glob("exercises/colab/*.ipynb"),
        ]
        if p.is_file()
    )


@pytest.mark.parametrize("path", colab_notebooks(), ids=lambda p: str(p.relative_to(ROOT)))
def test_colab_notebook_install_cell_and_metadata(path):
    nb = nbformat.read(path, as_version=4)
    first = nb.cells[0]
    assert first.cell_type == "code" and first.metadata.get("cellView") == "form"
    specs = re.findall(r'pip install (?:-q )?"([^"]+)"', first.source)
    assert specs and set(specs) == {edition_spec()}, f"install {specs} must name the edition {edition_spec()!r}"
    assert not re.search(r"hwlib\[gpu", first.source), "Colab ships CuPy: the install cell must not pull a gpu extra"
    assert 'if "google.colab" in sys.modules:' in first.source
    assert not any(c.get("outputs") or c.get("execution_count") for c in nb.cells if c.cell_type == "code"), (
        "a Colab notebook ships without the build machine's outputs"
    )
    assert sum("google.colab" in c.source for c in nb.cells if c.cell_type == "code") == 1, "one install cell"
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    gpu = bool(make_colab.MEASURES.search(text))
    assert (nb.metadata.get("accelerator") == "GPU") == gpu, "pages that measure open on a GPU runtime, others not"
    assert ("gpuType" in nb.metadata.get("colab", {})) == gpu


def test_measuring_pages_ask_for_a_gpu():
    """The experiment chapters and ex03 (measure your MFU) open on a GPU runtime."""
    gpu = {p.stem for p in colab_notebooks() if nbformat.read(p, as_version=4).metadata.get("accelerator") == "GPU"}
    assert {"ex03_measure_mfu", "06_roofline", "02_gpu_anatomy", "05_number_formats"} <= gpu
    assert "03_accelerators" not in gpu and "ex01_memory_budget" not in gpu


def test_colab_button_rule_matches_the_generator():
    sys.path.insert(0, str(ROOT / "_ext"))
    from colab_links import colab_notebook

    assert colab_notebook("chapters/06_roofline") == "chapters/06_roofline.ipynb"
    assert colab_notebook("exercises/ex03_measure_mfu/ex03_measure_mfu") == "exercises/colab/ex03_measure_mfu.ipynb"
    assert make_colab.target(ROOT, "calculators") == ROOT / "calculators.ipynb"


def test_numbers_match_the_built_book(book):
    """Equation and figure numbers (global, in _toc.yml order) are the ones the HTML book prints."""
    html = ROOT / "_build" / "html"
    if not html.is_dir():
        pytest.fail("needs the built HTML book (make book)")
    for label, (doc, number) in book.labels["equations"].items():
        page = (html / f"{doc}.html").read_text(encoding="utf-8")
        m = re.search(rf'<span class="eqno">\((\d+)\)<a class="headerlink" href="#equation-{re.escape(label)}"', page)
        assert m and int(m.group(1)) == number, (
            f"{doc}: equation {label} is ({m and m.group(1)}) in the book, ({number}) in the Colab edition"
        )
    for term, url in book.glossary.items():
        page, anchor = url[len(book.base) :].split("#")
        assert f'id="{anchor}"' in (html / page).read_text(encoding="utf-8"), f"glossary term {term}: no #{anchor}"
    for name, (doc, number) in book.labels["figures"].items():
        page = (html / f"{doc}.html").read_text(encoding="utf-8")
        m = re.search(rf'id="{re.escape(name)}".{{0,3000}}?<span class="caption-number">Fig\. (\d+)', page, re.S)
        assert m and int(m.group(1)) == number, (
            f"{doc}: figure {name} is Fig. {m and m.group(1)} in the book, Fig. {number} in the Colab edition"
        )


# --- the renderer on a small book of its own: drift is detected, constructs are rendered -------------
PAGE = """---
jupytext:
  text_representation: {extension: .md, format_name: myst}
kernelspec: {display_name: Python 3, language: python, name: python3}
---

(ch-x)=
# 1. A chapter

```{code-cell} ipython3
:tags: [remove-cell]
import sys
if "google.colab" in sys.modules:
    %pip install -q "hwlib @ git+https://example.org/o/r"
```

```{code-cell} ipython3
---
mystnb:
  image:
    alt: "A line going up"
  figure:
    caption: "Growth, from {cite}`k1`"
    name: fig-up
---
from hwlib.book import glue
glue("n", 3)
glue("t", "12 s", live=True)
```

We ran {glue:text}`n` kernels in {glue:text}`t` on the machine that built this page {cite}`k1,k2`; see
{ref}`the chapter <ch-x>` and {eq}`eq-a`, a {term}`Warp`, and `{glue:text}` in code stays.

$$
a = b
$$ (eq-a)

:::{admonition} Answer
:class: dropdown
It is {glue:text}`n`.
:::

:::{note}
A note.
:::

```{quiz} Which is right?
- [ ] this one
- [x] that one
---
Because {glue:text}`n`.
```
"""


def small_book(tmp_path):
    (tmp_path / "_config.yml").write_text(
        "repository: {url: https://example.org/o/r}\n"
        "html: {baseurl: https://o.example.org/r/}\n"
        "bibtex_bibfiles: [references.bib]\n"
    )
    (tmp_path / "_toc.yml").write_text(
        "format: jb-book\nroot: intro\nchapters:\n  - file: chapters/01_x\n  - file: glossary\n"
    )
    (tmp_path / "glossary.md").write_text("# Glossary\n\n```{glossary}\nwarp\n  32 threads.\n```\n")
    (tmp_path / "intro.md").write_text("# Intro\n")
    (tmp_path / "chapters").mkdir()
    (tmp_path / "chapters" / "01_x.md").write_text(PAGE)
    (tmp_path / "references.bib").write_text(
        "@article{k1, author={Ada Lovelace and Charles Babbage and Alan Turing}, title={One}, year={1843}}\n"
        "@misc{k2, author={Grace Hopper}, title={Two}, year={1952}}\n"
        "@misc{k3, author={Ken Thompson and others}, title={Three}, year={1969}}\n"
    )
    glue = tmp_path / "_build" / "jupyter_execute" / "chapters"
    glue.mkdir(parents=True)
    out = lambda v: {"output_type": "display_data", "metadata": {}, "data": {"text/plain": repr(v)}}  # noqa: E731
    (glue / "01_x.glue.json").write_text(json.dumps({"n": out("3"), "t": out("12.3 s")}))
    return make_colab.Book(root=tmp_path)


def test_small_book_renders_every_construct(tmp_path):
    book = small_book(tmp_path)
    assert book.colab_pages() == ["chapters/01_x"]
    nb = make_colab.render(book, "chapters/01_x")
    md = "\n\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert "(ch-x)=" not in md and "{" not in md.replace("`{glue:text}`", "").replace("\\tag{1}", "")
    assert "We ran 3 kernels in `t` (your value, printed above)" in md, "deterministic value in, live one pointed to"
    assert "12.3" not in md, "a live value must not be baked in"
    assert "[Lovelace et al. 1843](https://o.example.org/r/references.html" in md and "[Hopper 1952]" in md
    assert Renderer(book).inline("{cite}`k3`", "chapters/01_x").startswith("([Thompson et al. 1969](")
    assert "[the chapter](https://o.example.org/r/chapters/01_x.html#ch-x)" in md
    assert "[(1)](https://o.example.org/r/chapters/01_x.html#equation-eq-a)" in md and "\\tag{1}" in md
    assert "a [Warp](https://o.example.org/r/glossary.html#term-warp)" in md
    r = Renderer(book)
    assert r.inline("{doc}`../glossary`", "chapters/01_x") == "[Glossary](https://o.example.org/r/glossary.html)"
    assert (
        r.inline("{doc}`the list </glossary>`", "chapters/01_x") == "[the list](https://o.example.org/r/glossary.html)"
    )
    assert "<details><summary><b>Answer</b></summary>\n\nIt is 3." in md
    assert "> **Note**\n>\n> A note." in md
    assert "**Quiz.** Which is right?\n\n- (a) this one\n- (b) that one\n\n<details>" in md
    assert "**(b) that one**\n\nBecause 3." in md
    assert "machine running this notebook" in md and "built this page" not in md
    assert "**Fig. 1.** Growth, from ([Lovelace et al. 1843]" in md and "*Image description:* A line going up" in md
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert len(code) == 2 and "https://example.org/o/r" in code[0].source
    assert code[1].metadata == {} and "cellView" not in code[1].metadata


def test_a_literal_include_shows_the_function_from_the_library(tmp_path):
    book = small_book(tmp_path)
    (tmp_path / "hwlib").mkdir()
    (tmp_path / "hwlib" / "m.py").write_text("X = 1\n\n\n@decorated\ndef f(a):\n    return a\n\n\ndef g():\n    pass\n")
    md = Renderer(book).markdown("```{literalinclude} ../hwlib/m.py\n:pyobject: f\n```", "chapters/01_x")
    assert md == "```python\n@decorated\ndef f(a):\n    return a\n```"
    with pytest.raises(ValueError, match="no function or class 'h'"):
        Renderer(book).markdown("```{literalinclude} ../hwlib/m.py\n:pyobject: h\n```", "chapters/01_x")


def test_check_detects_drift_and_names_the_command(tmp_path):
    book = small_book(tmp_path)
    assert any("missing" in p and REGEN in p for p in make_colab.problems(book))
    make_colab.write_all(book)
    assert make_colab.problems(make_colab.Book(root=tmp_path)) == []
    page = tmp_path / "chapters" / "01_x.md"
    page.write_text(page.read_text() + "\nA new paragraph.\n")
    stale = make_colab.problems(make_colab.Book(root=tmp_path))
    assert stale and "stale" in stale[0] and REGEN in stale[0]


@pytest.mark.parametrize(
    "bad, why",
    [
        ("{numref}`fig-nope`", "no label"),
        ("{eq}`eq-nope`", "no labelled equation"),
        ("{cite}`nope`", "not in the bibliography"),
        ("{abbr}`X (y)`", "cannot render"),
        ("{glue:text}`missing`", "not glued"),
    ],
)
def test_unknown_constructs_fail_loudly(tmp_path, bad, why):
    book = small_book(tmp_path)
    with pytest.raises(ValueError, match=why):
        Renderer(book).markdown(f"Text {bad}.", "chapters/01_x")


def test_a_live_glue_needs_a_literal_name(tmp_path):
    small_book(tmp_path)
    page = tmp_path / "chapters" / "01_x.md"
    page.write_text(page.read_text().replace('glue("t", "12 s", live=True)', 'glue(f"t{1}", "12 s", live=True)'))
    with pytest.raises(ValueError, match="literal name"):
        make_colab.Book(root=tmp_path).live


def test_missing_build_says_what_to_run(tmp_path):
    book = small_book(tmp_path)
    shutil.rmtree(tmp_path / "_build")
    with pytest.raises(SystemExit, match="make book"):
        make_colab.render(book, "chapters/01_x")


def test_cli_check_mode(book):
    run = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "make_colab.py"), "--check"], capture_output=True, text=True, cwd=ROOT
    )
    assert run.returncode == 0, run.stdout + run.stderr
