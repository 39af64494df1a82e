"""Fixtures for the browser tests: the built book served on 127.0.0.1, Debian's Chromium driven by
Playwright, every request to another host aborted and recorded.

Chromium comes from Debian (`apt-get install -y chromium`), never from `playwright install`; where it
is missing the tests skip and say so. `_build/html` must exist: `make test` builds it first
(`make book`).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from urllib.parse import urlparse

import pytest

from bookserve import CHROMIUM, FLAGS, HTML, LOCAL_HOSTS, Visit, build_pdf


@pytest.fixture(scope="session")
def book() -> Path:
    if not (HTML / "index.html").exists():
        pytest.fail(f"{HTML} has no built book: run `make book` first (`make test` does)", pytrace=False)
    return HTML


@pytest.fixture(scope="session")
def server(book):
    httpd = build_pdf._serve(book)  # the PDF build's server: quiet, and deaf to dropped connections
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="session")
def browser():
    if not shutil.which(CHROMIUM) and not Path(CHROMIUM).exists():
        pytest.skip(
            f"Debian's Chromium is not installed at {CHROMIUM} (apt-get install -y chromium): "
            "browser tests need it and never download a browser"
        )
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("the playwright Python package is not installed (pip install -r requirements.txt)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield b
        b.close()


@pytest.fixture(scope="session")
def shared_context(browser):
    """One browser context for the session, so pages share the HTTP cache (each test still gets
    its own page, with its own listeners and network fence)."""
    ctx = browser.new_context(service_workers="block")
    yield ctx
    ctx.close()


@pytest.fixture
def visit(browser, shared_context, server):
    """visit(path, width=1280, dark=False, fresh=False) -> Visit. `fresh` uses a new context with an
    empty cache (a reader's first visit); otherwise the session's context and its cache."""
    opened = []

    def _visit(path: str, width: int = 1280, dark: bool = False, fresh: bool = False) -> Visit:
        ctx = browser.new_context(service_workers="block") if fresh else shared_context
        page = ctx.new_page()
        opened.append(ctx if fresh else page)
        page.set_viewport_size({"width": width, "height": 900})
        page.emulate_media(color_scheme="dark" if dark else "light")
        v = Visit(page, server + path)

        def route(r):
            url = urlparse(r.request.url)
            if url.scheme in ("http", "https", "ws", "wss") and url.hostname not in LOCAL_HOSTS:
                v.offsite.append(r.request.url)
                r.abort()
            else:
                r.continue_()

        page.route("**/*", route)
        page.on("console", lambda m: v.errors.append(f"console.{m.type}: {m.text}") if m.type == "error" else None)
        page.on("pageerror", lambda e: v.errors.append(f"exception: {e}"))
        page.on("response", lambda r: v.failed.append(f"{r.status} {r.url}") if r.status >= 400 else None)
        page.on(
            "requestfailed",
            lambda r: v.failed.append(f"{r.failure} {r.url}") if urlparse(r.url).hostname in LOCAL_HOSTS else None,
        )
        page.goto(v.url, wait_until="load")
        return v

    yield _visit
    for thing in opened:
        thing.close()
