"""Helpers the chapters use to put computed numbers into their prose.

`glue(name, value, fmt)` stores a formatted number under `name` for myst-nb's {glue:text} role, so
prose never carries a hand-typed figure. On Colab or a plain Jupyter (no myst-nb) it does nothing
visible, so the same notebook runs everywhere.

`glue(..., live=True)` marks a value that is measured or read from the machine running the notebook
(a timing, a device name): the Colab edition (tools/make_colab.py) does not bake the build machine's
value into its text but points to the learner's own output, and in that edition (environment variable
HWLIB_SHOW_LIVE=1, set by its first cell) the call prints `name = value`.
"""

from __future__ import annotations

import os

try:  # myst-nb is there when the book is built; not on Colab
    from myst_nb import glue as _myst_glue
except ImportError:  # pragma: no cover - exercised on Colab / plain Jupyter
    _myst_glue = None

GLUED: dict[str, str] = {}
LIVE: set[str] = set()  # names glued with live=True in this kernel
SHOW_LIVE_ENV = "HWLIB_SHOW_LIVE"


def glue(name: str, value, fmt: str | None = None, live: bool = False):
    """Glue `value` (formatted with `fmt`, e.g. "{:.0f}" or a callable) under `name`.

    live=True: the value comes from this machine (a measurement, a device name), not from the spec
    sheet, the models or a formula; the Colab edition shows the learner's own value instead.
    Returns nothing, so a cell that ends with a glue call shows no stray output."""
    if callable(fmt):
        text = fmt(value)
    elif fmt:
        text = fmt.format(value)
    else:
        text = str(value)
    GLUED[name] = text
    if live:
        LIVE.add(name)
        if os.environ.get(SHOW_LIVE_ENV) == "1":
            print(f"{name} = {text}")
    if _myst_glue is not None:
        # A plain str: its repr is a quoted literal, which {glue:text} unquotes exactly (a bare number
        # text such as 1e+15 or 1,500 would be re-parsed by myst-nb and printed differently).
        _myst_glue(name, text, display=False)


def html_table(header, rows, align=None, caption=None, escape=False):
    """A small HTML table for a chapter's computed results (rows: lists of already formatted cells).

    HTML rather than Markdown because myst-nb renders a cell's text/html output as is.
    align: one "left"/"right" per column (right-aligned cells do not wrap); caption: a title above;
    escape: HTML-escape header, cells and caption (for plain text; leave False for cells with markup).
    """
    import html as _html

    from IPython.display import HTML

    text = _html.escape if escape else (lambda x: x)

    def style(i, nowrap=False):
        if not align:
            return ""
        extra = ";white-space:nowrap" if nowrap and align[i] == "right" else ""
        return f" style='text-align:{align[i]}{extra}'"

    cap = f"<caption style='caption-side:top;text-align:left'>{text(caption)}</caption>" if caption else ""
    head = "".join(f"<th{style(i)}>{text(str(h))}</th>" for i, h in enumerate(header))
    body = "".join(
        "<tr>" + "".join(f"<td{style(i, True)}>{text(str(c))}</td>" for i, c in enumerate(row)) + "</tr>"
        for row in rows
    )
    return HTML(f'<table class="table">{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>')


def show_table(header, rows, align=None, caption=None):
    """Display a table of plain-text cells now: numbers right-aligned, text escaped."""
    from IPython.display import display

    align = align or ["left"] + ["right"] * (len(header) - 1)
    display(html_table(header, rows, align=align, caption=caption, escape=True))
