"""Generate the Colab edition: the notebooks the book's Colab buttons open, rendered from the sources.

    python tools/make_colab.py            # regenerate every Colab notebook (after `make book`)
    python tools/make_colab.py --check    # exit 1 if any is missing or stale (what the tests run)

Pages: chapters/NN_*.md -> chapters/NN_*.ipynb, calculators.md -> calculators.ipynb, gallery.md ->
gallery.ipynb, and each exercise's learner version -> exercises/colab/<id>.ipynb (its book page keeps
its executed outputs; the Colab button of an exercise page opens this copy: _ext/colab_links.py).
Markdown is rendered to CommonMark by tools/colab_md.py. Glued values come from the executed book
(_build/jupyter_execute/<page>.glue.json, written by `make book`); a value glued with live=True (a
measurement, a device name) is not baked in but points to the learner's own output. The repository
URL and the edition (install cell: tools/edition.py's install_spec, the tag v<hwlib.__version__>) and
the published book URL (links) come from _config.yml. Output is byte-for-byte
deterministic: no outputs, no execution counts, fixed cell ids.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "_ext"))
from colab_book import REGEN, Book  # noqa: E402,F401  (Book: the tests build one)
from colab_links import colab_notebook  # noqa: E402
from colab_md import Renderer  # noqa: E402

MEASURES = re.compile(r"\bbench\.\w+\(|\bbackend\.(?:get|announce)\(|\bcollectives\.allreduce\(")
HIDDEN = {"remove-cell": "Setup", "hide-input": "Show the code", "remove-input": "Show the code"}


def install_cell(spec: str) -> str:
    """The first cell of every Colab notebook: install this edition of hwlib (`spec`, from
    tools/edition.py) on Colab; elsewhere one line if it is missing. Its core dependencies are all on
    Colab already, so nothing Colab pinned changes and no restart is needed (tests/install/test_colab_install.py)."""
    return f'''# @title Install hwlib (on Colab; elsewhere this only checks that hwlib is installed)
import os
import sys
os.environ["HWLIB_SHOW_LIVE"] = "1"   # hwlib prints the values it measures; the text points to them
if "google.colab" in sys.modules:
    %pip install -q "{spec}"
try:
    import hwlib
except ModuleNotFoundError:
    _HINT = 'hwlib is not installed here: %pip install "{spec}", then run this cell again'
    print(_HINT)

    def _hwlib_hint(shell, etype, value, tb, tb_offset=None):
        if getattr(value, "name", "") == "hwlib":
            print(_HINT)
        else:
            shell.showtraceback((etype, value, tb), tb_offset=tb_offset)

    get_ipython().set_custom_exc((ModuleNotFoundError,), _hwlib_hint)'''


# --- one notebook ---------------------------------------------------------------------------------------
def measures(nb) -> bool:
    """Does the page run experiments on the device (then it asks Colab for a GPU runtime)?"""
    return any(c.cell_type == "code" and MEASURES.search(c.source) for c in nb.cells)


def hide_code(source: str, tags: list) -> tuple[str, dict]:
    """Cells the book hides open folded on Colab: a `# @title` line and cellView form."""
    title = next((HIDDEN[t] for t in tags if t in HIDDEN), None)
    if title is None:
        return source, {}
    return f"# @title {title}\n{source}", {"cellView": "form"}


def figure_cell(cell, book: Book, renderer: Renderer, doc: str) -> str | None:
    fig = cell.metadata.get("mystnb", {}).get("figure") or {}
    alt = cell.metadata.get("mystnb", {}).get("image", {}).get("alt")
    if not fig.get("caption"):
        return None
    number = book.figure_number(fig.get("name")) if fig.get("name") else None
    head = f"**Fig. {number}.**" if number else "**Figure.**"
    text = f"{head} {renderer.inline(fig['caption'], doc)}"
    if alt:
        text += f"\n\n*Image description:* {renderer.inline(alt, doc)}"
    return text


def render(book: Book, doc: str, renderer: Renderer | None = None) -> nbformat.NotebookNode:
    renderer = renderer or Renderer(book)
    src = book.notebooks[doc]
    cells = [nbformat.v4.new_code_cell(install_cell(book.install_spec), metadata={"cellView": "form"})]
    for cell in src.cells:
        tags = list(cell.metadata.get("tags", []))
        if cell.cell_type == "markdown":
            text = renderer.markdown(cell.source, doc)
            if text.strip():
                cells.append(nbformat.v4.new_markdown_cell(text))
            continue
        if cell.cell_type != "code":
            continue
        if "google.colab" in cell.source:  # the source's install cell: replaced by the one above
            continue
        source, meta = hide_code(cell.source, tags)
        if tags:
            meta["tags"] = tags
        cells.append(nbformat.v4.new_code_cell(source, metadata=meta))
        caption = figure_cell(cell, book, renderer, doc)
        if caption:
            cells.append(nbformat.v4.new_markdown_cell(caption))
    for i, cell in enumerate(cells):
        cell["id"] = f"c{i:03d}"
    gpu = measures(src)
    meta = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
        "colab": {"provenance": [], "toc_visible": True, **({"gpuType": "T4"} if gpu else {})},
    }
    if gpu:
        meta["accelerator"] = "GPU"
    if "hwlib" in src.metadata:
        meta["hwlib"] = {k: v for k, v in src.metadata["hwlib"].items() if k != "sources"}  # hashes: book copy only
    nb = nbformat.v4.new_notebook(cells=cells, metadata=meta)
    nbformat.validate(nb)
    return nb


def target(root: Path, doc: str) -> Path:
    return root / colab_notebook(doc)


def text_of(nb) -> str:
    return nbformat.writes(nb) + "\n"


def problems(book: Book | None = None) -> list[str]:
    book = book or Book()
    found, renderer = [], Renderer(book)
    for doc in book.colab_pages():
        path = target(book.root, doc)
        rel = path.relative_to(book.root)
        try:
            text = text_of(render(book, doc, renderer))
        except (ValueError, SystemExit) as exc:  # e.g. a glue name the (older) built book does not have
            found.append(f"{rel} cannot be rendered: {exc} (run: make book, then {REGEN})")
            continue
        if not path.is_file():
            found.append(f"{rel} is missing (run: {REGEN})")
        elif path.read_text() != text:
            found.append(f"{rel} is stale: {doc} or the built book changed (run: {REGEN} after make book)")
    return found


def write_all(book: Book | None = None) -> list[Path]:
    book = book or Book()
    written, renderer = [], Renderer(book)
    for doc in book.colab_pages():
        path = target(book.root, doc)
        text = text_of(render(book, doc, renderer))
        if not path.is_file() or path.read_text() != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            written.append(path)
            print(f"wrote {path.relative_to(book.root)}")
    return written


if __name__ == "__main__":
    if "--check" in sys.argv:
        issues = problems()
        print("\n".join(issues) or "every Colab notebook is up to date")
        sys.exit(1 if issues else 0)
    write_all()
