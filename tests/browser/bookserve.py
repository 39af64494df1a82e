"""Shared by the browser tests: where the built book is, which pages it has, Chromium's flags and
what counts as a known stock error."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"
SCREENSHOTS = ROOT / "_build" / "screenshots"


def _load_build_pdf():
    """tools/build_pdf.py (a script, not a package): the one place that says how Chromium runs offline."""
    spec = importlib.util.spec_from_file_location("build_pdf", ROOT / "tools" / "build_pdf.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


build_pdf = _load_build_pdf()
CHROMIUM, FLAGS = build_pdf.CHROMIUM, build_pdf.FLAGS
LOCAL_HOSTS = {"127.0.0.1", "localhost"}
# No console error is excused: sphinx-thebe's doubled inline script ("Identifier 'THEBE_JS_URL' has
# already been declared") is fixed at build time by _ext/hwassets.py, so it fails the tests if it returns.
KNOWN_STOCK_ERRORS: tuple = ()


def pages() -> list[str]:
    """Every page of the built book, as paths relative to _build/html."""
    if not HTML.is_dir():
        return []
    skip = ("_static", "_sources", "_images", "_vendor", "_sphinx_design_static")
    return sorted(str(p.relative_to(HTML)) for p in HTML.rglob("*.html") if p.relative_to(HTML).parts[0] not in skip)


@dataclass
class Visit:
    """One page load: the page plus what went wrong while loading it."""

    page: object
    url: str
    errors: list = field(default_factory=list)  # console errors and uncaught exceptions
    offsite: list = field(default_factory=list)  # requests to a host other than 127.0.0.1
    failed: list = field(default_factory=list)  # HTTP status >= 400 or network failures

    def real_errors(self) -> list:
        return [e for e in self.errors if not any(k in e for k in KNOWN_STOCK_ERRORS)]
