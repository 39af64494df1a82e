"""Helpers the chapters use to put computed numbers into their prose.

`glue(name, value, fmt)` stores a formatted number under `name` for myst-nb's {glue:text} role, so
prose never carries a hand-typed figure. On Colab or a plain Jupyter (no myst-nb) it does nothing
visible, so the same notebook runs everywhere.
"""
from __future__ import annotations

try:  # myst-nb is there when the book is built; not on Colab
    from myst_nb import glue as _myst_glue
except ImportError:  # pragma: no cover - exercised on Colab / plain Jupyter
    _myst_glue = None

GLUED: dict[str, str] = {}


def glue(name: str, value, fmt: str | None = None):
    """Glue `value` (formatted with `fmt`, e.g. "{:.0f}" or a callable) under `name`.

    Returns nothing, so a cell that ends with a glue call shows no stray output."""
    if callable(fmt):
        text = fmt(value)
    elif fmt:
        text = fmt.format(value)
    else:
        text = str(value)
    GLUED[name] = text
    if _myst_glue is not None:
        # A plain str: its repr is a quoted literal, which {glue:text} unquotes exactly (a bare number
        # text such as 1e+15 or 1,500 would be re-parsed by myst-nb and printed differently).
        _myst_glue(name, text, display=False)


def html_table(header, rows):
    """A small HTML table for a chapter's computed results (rows: lists of already formatted cells).

    HTML rather than Markdown because myst-nb renders a cell's text/html output as is."""
    from IPython.display import HTML

    head = "".join(f"<th>{h}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return HTML(f'<table class="table"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>')
