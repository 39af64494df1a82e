"""The book's edition on its pages: the version (hwlib.__version__), its tag and install command as
MyST substitutions, the edition in every page footer, and the errata page generated from CHANGELOG.md.

* `{{ edition }}` (0.3.0), `{{ edition_tag }}` (v0.3.0 as code), `{{ edition_install }}` (as code: the
  requirement an install cell names, tools/edition.py's `install_spec`), `{{ edition_date }}` (its
  changelog date).
* The footer says "Edition X.Y.Z" and links the changelog and the errata.
* ```{errata}``` renders every changelog entry that corrects the book: a version's `### Errata`
  subsection, and any bullet beginning with "Errata" or "Fix". Newest first, per edition.
* The "suggest an edit" button of an exercise page opens the exercise's source.md (the page itself
  is generated from it); with HWLIB_EDITION_REF=vX.Y.Z the Colab buttons open that tag's notebooks.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective

ROOT = Path(__file__).resolve().parents[1]
HEADING = re.compile(r"^## \[?(?P<version>\d+\.\d+\.\d+)\]?(?: — (?P<date>.+))?$")
ERRATUM = re.compile(r"^(Errata|Erratum|Fix|Fixed|Corrected)\b")
_EXERCISE = re.compile(r"^exercises/(?P<id>[^/]+)/(?P=id)$")


def edition(root: Path = ROOT):
    """tools/edition.py's Edition of the book at `root` (a scratch book borrows the repository's tool)."""
    tools = root / "tools" if (root / "tools" / "edition.py").is_file() else ROOT / "tools"
    if not (tools / "edition.py").is_file():
        import hwlib

        tools = Path(hwlib.__file__).resolve().parents[1] / "tools"
    sys.path.insert(0, str(tools))
    import edition as tool

    return tool.load(root)


def changelog_entries(text: str) -> list[dict]:
    """[{version, date, bullets: [text], errata: [text]}] from CHANGELOG.md, newest first."""
    entries, current, section, bullet = [], None, None, None
    for line in text.splitlines():
        head = HEADING.match(line)
        if head:
            current = {"version": head["version"], "date": head["date"] or "", "bullets": [], "errata": []}
            entries.append(current)
            section, bullet = None, None
            continue
        if current is None:
            continue
        if line.startswith("### "):
            section, bullet = line[4:].strip().lower(), None
            continue
        if line.startswith("- "):
            bullet = [line[2:]]
            (current["errata"] if section == "errata" or ERRATUM.match(line[2:]) else current["bullets"]).append(bullet)
        elif bullet is not None and line.startswith("  "):
            bullet.append(line.strip())
        elif not line.strip():
            bullet = None
    for entry in entries:
        entry["bullets"] = [" ".join(b) for b in entry["bullets"]]
        entry["errata"] = [" ".join(b) for b in entry["errata"]]
    return entries


def errata_markdown(entries: list[dict]) -> str:
    out = []
    for entry in entries:
        if not entry["errata"]:
            continue
        when = f" ({entry['date']})" if entry["date"] else ""
        out.append(f"**Corrected in edition {entry['version']}**{when}:\n")
        out += [f"- {text}" for text in entry["errata"]]
        out.append("")
    return "\n".join(out) or "No corrections yet."


class ErrataDirective(SphinxDirective):
    has_content = False

    def run(self):
        path = Path(self.env.app.confdir) / "CHANGELOG.md"
        self.env.note_dependency(str(path))
        text = errata_markdown(changelog_entries(path.read_text(encoding="utf-8")))
        container = nodes.container()
        self.state.nested_parse(StringList(text.splitlines(), source=str(path)), self.content_offset, container)
        return container.children


def _config_inited(app, config):
    root = Path(app.confdir)
    ed = edition(root)
    log = root / "CHANGELOG.md"
    dates = (
        {e["version"]: e["date"] for e in changelog_entries(log.read_text(encoding="utf-8"))} if log.is_file() else {}
    )
    subs = dict(getattr(config, "myst_substitutions", {}) or {})
    subs.update(
        edition=ed.version,
        edition_tag=f"`{ed.tag}`",  # substitutions are Markdown; none happens inside a code span
        edition_install=f"`{ed.install_spec()}`",
        edition_date=dates.get(ed.version, ""),
    )
    config.myst_substitutions = subs
    options = dict(config.html_theme_options or {})
    footer = options.get("extra_footer", "")
    options["extra_footer"] = (
        f'<p class="hwlib-edition">Edition {ed.version} ({ed.tag}) · '
        f'<a href="{ed.baseurl}changelog.html">changelog</a> · <a href="{ed.baseurl}errata.html">errata</a></p>\n'
        + footer
    )
    config.html_theme_options = options


def _buttons(context):
    for button in context.get("header_buttons", []) or []:
        if isinstance(button, dict):
            yield button
            yield from (b for b in button.get("buttons", []) if isinstance(b, dict))


def _page_buttons(app, pagename, templatename, context, doctree):
    """Exercise pages: "suggest an edit" opens source.md. An edition build (HWLIB_EDITION_REF=vX.Y.Z,
    set by the pages and release workflows): the Colab buttons open that tag's notebooks."""
    m = _EXERCISE.match(pagename)
    ref = os.environ.get("HWLIB_EDITION_REF", "")
    for button in _buttons(context):
        url = button.get("url", "")
        if m and "/edit/" in url:
            button["url"] = re.sub(r"/edit/([^/]+)/.*$", rf"/edit/\1/exercises/{m['id']}/source.md", url)
        if ref and "colab.research.google.com" in url:
            button["url"] = re.sub(r"/blob/[^/]+/", f"/blob/{ref}/", url, count=1)


def setup(app):
    app.add_directive("errata", ErrataDirective)
    app.connect("config-inited", _config_inited, priority=900)  # after jupyter-book filled the theme options
    app.connect("html-page-context", _page_buttons, priority=950)  # after colab_links (900)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
