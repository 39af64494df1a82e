"""The whole-book PDF (`make pdf`, tools/build_pdf.py): built, fresh, one chapter per page or more,
and reachable from every page's PDF button."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from bookserve import CHROMIUM, HTML, ROOT, build_pdf

PDF = HTML / "hardware-for-ai.pdf"


def toc_documents() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    return [toc["root"]] + [c["file"] for part in toc.get("parts", []) for c in part.get("chapters", [])]


@pytest.fixture(scope="module")
def pdf(book):
    if not PDF.exists():
        if not Path(CHROMIUM).exists():
            pytest.skip(f"no PDF: Debian's Chromium, which prints it, is not installed at {CHROMIUM}")
        pytest.fail(f"{PDF} is missing: run `make pdf` (`make test` does)", pytrace=False)
    return PDF


def test_pdf_is_fresh_and_has_every_document(pdf):
    assert pdf.stat().st_mtime >= (HTML / "intro.html").stat().st_mtime, "the PDF is older than the HTML build"
    data = pdf.read_bytes()
    assert data.startswith(b"%PDF-")
    assert build_pdf.page_count(pdf) >= len(toc_documents()), "each document starts on its own page"
    assert (
        re.search(rb"/Title\s*\((?:\xfe\xff)?[^)]*H\x00?a\x00?r\x00?d\x00?w\x00?a\x00?r\x00?e", data)
        or b"Hardware for AI" in data
    ), "the PDF's title is the book's"


def test_every_page_links_the_pdf(visit):
    for path in ("intro.html", "gallery.html", "chapters/06_roofline.html"):
        if not (HTML / path).exists():
            continue
        v = visit(path)
        href = v.page.get_attribute(".hwlib-pdf-button", "href")
        assert href and href.endswith("/hardware-for-ai.pdf"), f"{path}: no PDF button"
        status = v.page.evaluate("async (u) => (await fetch(u, {method: 'HEAD'})).status", href)
        assert status == 200, f"{path}: the PDF button points at {href}, which answers {status}"
