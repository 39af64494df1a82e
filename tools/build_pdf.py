"""Print the whole book to one PDF with Debian's Chromium, offline, and put it next to the HTML.

    python tools/build_pdf.py            # after `jupyter-book build . --builder singlehtml`

With HWLIB_PDF_OPTIONAL=1 (set by `make test`) a missing Chromium is reported and skipped.

Reads the single-page HTML build (_build/singlehtml/intro.html), serves it on 127.0.0.1 with every
other host blocked, waits until MathJax has typeset every formula and the calculators have drawn,
opens the hidden worked answers (a PDF cannot be clicked), and prints A4 pages with Playwright's
page.pdf. Writes _build/pdf/hardware-for-ai.pdf and copies it to _build/html/ so the book's PDF link
works on the published site. No LaTeX, nothing downloaded.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import shutil
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parents[1]
SINGLE = ROOT / "_build" / "singlehtml"
OUT = ROOT / "_build" / "pdf" / "hardware-for-ai.pdf"
HTML = ROOT / "_build" / "html"
CHROMIUM = os.environ.get("HWLIB_CHROMIUM", "/usr/bin/chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PRINT_CSS = """
  .bd-header, .bd-sidebar-primary, .bd-sidebar-secondary, .header-article, .prev-next-area,
  .bd-footer-content, .bd-footer, .search-button-field, .theme-switch-button { display: none !important; }
  .bd-main .bd-content .bd-article-container { max-width: 100% !important; }
  details.hide > summary { display: none !important; }
  section { break-inside: auto; }
  h1, h2, h3 { break-after: avoid; }
  figure, img, tr, .hwlib-plot-box, .hwlib-form, mjx-container[display="true"] { break-inside: avoid; }
  span[id^="document-"] + section { break-before: page; }   /* every chapter on a new page */
  pre { white-space: pre-wrap !important; overflow-wrap: anywhere; }       /* paper cannot scroll */
  .cell_output, .output, .text_html, .hwlib-scroll, .pst-scrollable-table-container { overflow: visible !important; }
  html { font-size: 14px !important; }                                    /* about 10.5 pt on paper */
  table { max-width: 100% !important; font-size: 0.86em; }
  td, th { overflow-wrap: anywhere; }                  /* wide tables wrap instead of shrinking the book */
"""
READY = """async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
  for (const img of document.images) { img.loading = "eager"; try { await img.decode(); } catch (e) {} }
  document.querySelectorAll(".admonition.dropdown.toggle-hidden, .toggle-hidden").forEach((e) => e.classList.remove("toggle-hidden"));
  document.querySelectorAll(".toggle-button").forEach((b) => b.remove());
  document.querySelectorAll("details").forEach((d) => { if (!d.classList.contains("hide")) d.open = true; });
  for (const quiz of document.querySelectorAll(".hw-quiz")) {      // a printed quiz shows its answer
    const letters = [...quiz.querySelectorAll('button[data-correct="true"] .hw-quiz-letter')].map((l) => l.textContent);
    const answer = document.createElement("p");
    answer.className = "hw-quiz-printed-answer";
    answer.textContent = `Answer: ${letters.join(", ")}`;
    const explain = quiz.querySelector(".hw-quiz-explain");
    if (explain) explain.hidden = false;
    quiz.insertBefore(answer, explain || null);
  }
  return {math: document.querySelectorAll(".math").length, typeset: document.querySelectorAll("mjx-container").length,
          images: document.images.length, widgets: [...document.querySelectorAll("[data-hwlib-widget]")].map((w) => w.dataset.state)};
}"""


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


class _Server(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        """A browser that drops a connection it no longer needs is not an error worth a traceback."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def _serve(directory: Path):
    """`directory` on a free localhost port, in a daemon thread (also the browser tests' server)."""
    httpd = _Server(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(directory)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


def page_count(path: Path) -> int:
    """Pages of a PDF, from its page objects (no PDF library needed)."""
    return len(re.findall(rb"/Type\s*/Page(?![s\w])", path.read_bytes()))


def build(single: Path = SINGLE, out: Path = OUT) -> Path:
    from playwright.sync_api import sync_playwright

    source = single / "intro.html"
    if not source.exists():
        raise SystemExit(f"{source} is missing: run `jupyter-book build . --builder singlehtml` first (make pdf)")
    if not Path(CHROMIUM).exists():
        message = f"Debian's Chromium is not at {CHROMIUM} (apt-get install -y chromium)"
        if os.environ.get("HWLIB_PDF_OPTIONAL"):
            print(f"{message}: no PDF this time")
            return out
        raise SystemExit(message)
    out.parent.mkdir(parents=True, exist_ok=True)
    httpd = _serve(single)
    offsite, errors = [], []
    start = time.perf_counter()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
            page = browser.new_page(viewport={"width": 1100, "height": 1400})

            def route(r):
                host = urlparse(r.request.url).hostname
                if urlparse(r.request.url).scheme.startswith("http") and host not in ("127.0.0.1", "localhost"):
                    offsite.append(r.request.url)
                    r.abort()
                else:
                    r.continue_()

            page.route("**/*", route)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(f"http://127.0.0.1:{httpd.server_address[1]}/intro.html", wait_until="load")
            state = page.evaluate(READY)
            page.add_style_tag(content=PRINT_CSS)
            page.emulate_media(media="print")
            page.pdf(
                path=str(out),
                format="A4",
                print_background=True,
                outline=True,
                tagged=True,
                margin={"top": "16mm", "bottom": "18mm", "left": "14mm", "right": "14mm"},
                display_header_footer=True,
                header_template="<span></span>",
                footer_template='<div style="font-size:8px;width:100%;text-align:center;color:#555">'
                'Hardware for AI · <span class="pageNumber"></span> / <span class="totalPages"></span></div>',
            )
            browser.close()
    finally:
        httpd.shutdown()
        httpd.server_close()
    if offsite:
        raise SystemExit(f"the book asked for other hosts while printing: {offsite[:5]}")
    if state["math"] and state["typeset"] < 1:
        raise SystemExit("MathJax did not typeset the math before printing")
    if any(s != "ready" for s in state["widgets"]):
        raise SystemExit(f"a calculator did not draw before printing: {state['widgets']}")
    real_errors = [e for e in errors if "THEBE_JS_URL" not in e]  # stock JB 1.0.4 error, see tests/browser
    if real_errors:
        raise SystemExit(f"page errors while printing: {real_errors[:3]}")
    if HTML.is_dir():
        shutil.copyfile(out, HTML / out.name)
    print(
        f"wrote {out.relative_to(ROOT)}: {page_count(out)} pages, {out.stat().st_size / 1e6:.1f} MB, "
        f"{state['typeset']} formulas, {state['images']} images, in {time.perf_counter() - start:.1f} s"
        + (f"; copied to {(HTML / out.name).relative_to(ROOT)}" if HTML.is_dir() else "")
    )
    return out


if __name__ == "__main__":
    build(Path(sys.argv[1]) if len(sys.argv) > 1 else SINGLE)
