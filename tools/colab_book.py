"""The whole book as tools/make_colab.py needs it: pages in _toc.yml order, labels, equation and figure
numbers (global, as Sphinx numbers them), glossary anchors, short citations (references.bib), and the
glued values of the executed book (_build/jupyter_execute/<page>.glue.json, written by `make book`)
with the names glued live=True, which the Colab edition does not bake in.
"""

from __future__ import annotations

import ast
import json
import re
from functools import cached_property
from pathlib import Path

import jupytext
import nbformat
import yaml

import extract_cells

ROOT = Path(__file__).resolve().parents[1]
REGEN = "python tools/make_colab.py"
GLUE_CALL = "glue"


class Book:
    """What the renderer needs to know about the whole book: pages, labels, numbers, glue, citations."""

    def __init__(self, root: Path = ROOT, build: Path | None = None):
        self.root = root
        self.build = build or root / "_build" / "jupyter_execute"
        cfg = yaml.safe_load((root / "_config.yml").read_text())
        self.repo_url = cfg["repository"]["url"].rstrip("/")
        self.base = (cfg.get("html", {}).get("baseurl") or "").rstrip("/") + "/"
        if self.base == "/":
            raise SystemExit("make_colab: _config.yml has no html.baseurl (the published book's address)")
        import edition  # tools/edition.py: the edition every install cell names

        self.install_spec = edition.load(root).install_spec()

    # --- pages ----------------------------------------------------------------------------------
    @cached_property
    def docs(self) -> list[str]:
        """Every page of the book in _toc.yml order (numbering of equations and figures follows it)."""
        toc = yaml.safe_load((self.root / "_toc.yml").read_text())
        docs = [toc["root"]]
        for part in toc.get("parts", [{"chapters": toc.get("chapters", [])}]):
            docs += [c["file"] for c in part.get("chapters", [])]
        return [re.sub(r"\.(md|ipynb)$", "", d) for d in docs]

    def source(self, doc: str):
        """The notebook as the book reads it (an exercise: its learner version, built from source.md)."""
        path = self.root / f"{doc}.md"
        if path.is_file():
            return jupytext.read(path, fmt="md:myst")
        folder = (self.root / doc).parent
        if (folder / "source.md").is_file():
            import make_exercises

            return make_exercises.build(folder, "learner")
        return nbformat.read(self.root / f"{doc}.ipynb", as_version=4)

    @cached_property
    def notebooks(self) -> dict:
        return {doc: self.source(doc) for doc in self.docs}

    def colab_pages(self) -> list[str]:
        """The pages with code: each gets a Colab notebook (intro and references have none)."""
        return [
            d
            for d in self.docs
            if "kernelspec" in self.notebooks[d].metadata
            and any(c.cell_type == "code" for c in self.notebooks[d].cells)
        ]

    def title(self, doc: str) -> str:
        """The first heading of a page (what Sphinx shows for a {doc} link without text)."""
        for cell in self.notebooks.get(doc, nbformat.v4.new_notebook()).cells:
            if cell.cell_type == "markdown" and (m := re.search(r"^#\s+(.+)$", cell.source, re.M)):
                return m.group(1).strip()
        raise ValueError(f"{{doc}}`{doc}` is not a page of the book")

    def url(self, doc: str, anchor: str = "") -> str:
        return f"{self.base}{doc}.html" + (f"#{anchor}" if anchor else "")

    # --- labels, equations, figures -----------------------------------------------------------------
    @cached_property
    def labels(self) -> dict:
        """label -> (doc, title); equation label -> (doc, number); numbered across the book like Sphinx."""
        from colab_md import parser

        md, sections, equations, figures, eq_n, fig_n = parser(), {}, {}, {}, 0, 0
        for doc in self.docs:
            for cell in self.notebooks[doc].cells:
                if cell.cell_type == "code":
                    fig = cell.metadata.get("mystnb", {}).get("figure")
                    if fig and fig.get("caption"):
                        fig_n += 1
                        figures[fig.get("name") or f"{doc}-fig{fig_n}"] = (doc, fig_n)
                    continue
                tokens = md.parse(cell.source)
                for i, tok in enumerate(tokens):
                    if tok.type == "math_block_label":
                        eq_n += 1
                        equations[tok.info] = (doc, eq_n)
                    elif tok.type == "myst_target":
                        nxt = tokens[i + 2] if i + 2 < len(tokens) and tokens[i + 1].type == "heading_open" else None
                        sections[tok.content] = (doc, nxt.content if nxt else tok.content)
        return {"sections": sections, "equations": equations, "figures": figures}

    def equation(self, label: str, doc: str):
        if label not in self.labels["equations"]:
            raise ValueError(f"{doc}: {{eq}}`{label}` names no labelled equation of the book")
        where, number = self.labels["equations"][label]
        return number, self.url(where, f"equation-{label}")

    def reference(self, label: str, doc: str, numbered: bool = False):
        if label in ("genindex", "search", "modindex"):  # Sphinx's own pages
            return {"genindex": "Index", "search": "Search", "modindex": "Module index"}[label], self.url(label)
        if label in self.labels["sections"]:
            where, title = self.labels["sections"][label]
            return title, self.url(where, label)
        if label in self.labels["figures"]:
            where, number = self.labels["figures"][label]
            return f"Fig. {number}", self.url(where, label)
        raise ValueError(f"{doc}: {{ref}}`{label}` names no label of the book")

    @cached_property
    def glossary(self) -> dict:
        """term (lower case) -> URL of its entry: the {glossary} directives of the book's pages."""
        from sphinx.util.nodes import _make_id  # the id Sphinx gives a glossary term

        from colab_md import parser

        terms = {}
        for doc in self.docs:
            for cell in self.notebooks[doc].cells:
                if cell.cell_type != "markdown" or "{glossary}" not in cell.source:
                    continue
                for tok in parser().parse(cell.source):
                    if tok.type == "fence" and tok.info.strip().startswith("{glossary}"):
                        for line in tok.content.split("\n"):
                            if line.strip() and not line[0].isspace() and not line.startswith(":"):
                                terms.setdefault(line.strip().lower(), self.url(doc, _make_id(f"term-{line.strip()}")))
        return terms

    def glossary_url(self, term: str, doc: str) -> str:
        if term.lower() not in self.glossary:
            raise ValueError(f"{doc}: {{term}}`{term}` is not in the glossary")
        return self.glossary[term.lower()]

    def figure_number(self, name: str) -> int | None:
        return self.labels["figures"].get(name, (None, None))[1]

    # --- citations ------------------------------------------------------------------------------------
    @cached_property
    def bibliography(self):
        from pybtex.database import parse_file

        files = yaml.safe_load((self.root / "_config.yml").read_text()).get("bibtex_bibfiles", ["references.bib"])
        entries = {}
        for name in files:
            entries.update(parse_file(str(self.root / name), bib_format="bibtex").entries)
        return entries

    def citation(self, key: str, doc: str) -> str:
        if key not in self.bibliography:
            raise ValueError(f"{doc}: {{cite}}`{key}` is not in the bibliography")
        entry = self.bibliography[key]
        people = entry.persons.get("author") or entry.persons.get("editor") or []
        names = [" ".join(p.last_names) or " ".join(p.first_names) for p in people]
        names = [re.sub(r"[{}]", "", n) for n in names]
        if "others" in names:  # BibTeX "and others": et al. whatever the count
            names = [n for n in names if n != "others"] + ["", ""]
        if not names:
            org = entry.fields.get("organization") or entry.fields.get("institution") or entry.fields.get("publisher")
            who = re.sub(r"[{}]", "", org or key)
        elif len(names) == 1:
            who = names[0]
        elif len(names) == 2:
            who = f"{names[0]} & {names[1]}"
        else:
            who = f"{names[0]} et al."
        year = entry.fields.get("year", "n.d.")
        title = re.sub(r"[{}\"]", "", entry.fields.get("title", key))
        return f'[{who} {year}]({self.url("references")} "{title}")'

    # --- glue ---------------------------------------------------------------------------------------------
    @cached_property
    def live(self) -> dict:
        """doc -> names glued with live=True (literal names only; read from the code, not the build)."""
        found = {}
        for doc, nb in self.notebooks.items():
            for cell in nb.cells:
                if cell.cell_type != "code" or "live" not in cell.source:
                    continue
                for node in ast.walk(ast.parse(extract_cells.pythonic(cell.source))):
                    if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) == GLUE_CALL):
                        continue
                    live = [k for k in node.keywords if k.arg == "live"]
                    if not live or not (isinstance(live[0].value, ast.Constant) and live[0].value.value):
                        continue
                    if not (node.args and isinstance(node.args[0], ast.Constant)):
                        raise ValueError(
                            f"{doc}: glue(..., live=True) needs a literal name, got "
                            f"{ast.unparse(node.args[0]) if node.args else 'none'}"
                        )
                    found.setdefault(doc, set()).add(node.args[0].value)
        return found

    def glue_table(self, doc: str) -> dict:
        path = self.build / f"{doc}.glue.json"
        if not path.is_file():
            raise SystemExit(
                f"make_colab: {path.relative_to(self.root)} is missing: build the book first "
                f"(make book), then run {REGEN}"
            )
        return json.loads(path.read_text())

    def glue_value(self, doc: str, name: str) -> str:
        table = self.__dict__.setdefault("_glue", {})
        if doc not in table:
            table[doc] = self.glue_table(doc)
        if name not in table[doc]:
            raise ValueError(f"{doc}: {{glue:text}}`{name}` is not glued by the executed page; rebuild the book")
        text = table[doc][name]["data"]["text/plain"]
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            value = text
        return value if isinstance(value, str) else str(value)
