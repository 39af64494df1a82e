"""Colab buttons open the Colab edition of each page (tools/make_colab.py writes it).

A chapter's Colab notebook sits beside its source (chapters/NN_x.md -> chapters/NN_x.ipynb), which is
what sphinx-book-theme links to. An exercise page is its executed learner notebook; its Colab copy,
rendered and without the build machine's outputs, is exercises/colab/<id>.ipynb, so this extension
rewrites that page's Colab link. `colab_notebook(pagename)` is the one rule; the generator uses it too.
"""

from __future__ import annotations

import re

_EXERCISE = re.compile(r"^exercises/(?P<id>[^/]+)/(?P=id)$")


def colab_notebook(pagename: str) -> str:
    """Repository path of the notebook the Colab button of `pagename` opens."""
    m = _EXERCISE.match(pagename)
    return f"exercises/colab/{m.group('id')}.ipynb" if m else f"{pagename}.ipynb"


def _rewrite(app, pagename, templatename, context, doctree):
    wanted = colab_notebook(pagename)
    if wanted == f"{pagename}.ipynb":
        return

    def walk(buttons):
        for button in buttons:
            if isinstance(button, dict):
                url = button.get("url", "")
                if "colab.research.google.com" in url:
                    button["url"] = re.sub(r"/blob/([^/]+)/.*$", lambda m: f"/blob/{m.group(1)}/{wanted}", url)
                walk(button.get("buttons", []))

    walk(context.get("header_buttons", []))


def setup(app):
    app.connect("html-page-context", _rewrite, priority=900)  # after sphinx-book-theme's (501)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
