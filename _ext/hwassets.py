"""Every page loads each script once: drops the duplicate inline scripts Sphinx 7.4 emits.

Cause: sphinx-thebe adds its inline configuration (`const THEBE_JS_URL = ...`) with
`app.add_js_file(None, body=...)` after the HTML builder exists. Sphinx stores it twice — once on
the builder, as `_JavaScript(None, body=...)`, and once in the registry, which
`StandaloneHTMLBuilder.prepare_writing` adds again as `_JavaScript('', body=...)`. The two compare
unequal (None != ''), so every page carried the same `<script>const ...</script>` twice and the
browser threw "Identifier 'THEBE_JS_URL' has already been declared" on every page.

Fix: on each page, keep the first of any scripts with the same file, body and attributes (a file of
None and of '' count as the same). The list is the builder's own, so editing it in place is what the
templates render; the builder restores its backup after each page, and this runs again on the next.
"""

from __future__ import annotations


def _key(asset) -> tuple:
    attrs = getattr(asset, "attributes", {}) or {}
    name = getattr(asset, "filename", asset) or ""
    return (str(name), tuple(sorted((k, str(v)) for k, v in attrs.items() if k != "priority")))


def dedupe_scripts(app, pagename, templatename, context, doctree):
    scripts = context.get("script_files")
    if not isinstance(scripts, list):
        return
    seen, unique = set(), []
    for asset in scripts:
        key = _key(asset)
        if key not in seen:
            seen.add(key)
            unique.append(asset)
    if len(unique) != len(scripts):
        scripts[:] = unique


def setup(app):
    app.connect("html-page-context", dedupe_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
