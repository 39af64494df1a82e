"""Every page of the built book in a real browser, offline: no error, nothing fetched from another
host, math typeset, images loaded and described, Colab links to notebooks that exist, search,
hidden answers, quizzes, phone width and dark mode."""

from __future__ import annotations

import re
from urllib.parse import urlparse

import pytest
import yaml

from bookserve import HTML, ROOT, SCREENSHOTS, pages

PAGES = [p for p in pages() if p != "index.html"]  # index.html only redirects to intro.html
DROPDOWN = re.compile(r'class="(?=[^"]*\bdropdown\b)(?=[^"]*\badmonition\b)[^"]*"')
RAW_TEX = ("\\(", "\\)", "\\[", "\\]", "$$")
WAIT_MATHJAX = """() => (window.MathJax && MathJax.startup && MathJax.startup.promise)
    ? MathJax.startup.promise.then(() => true) : false"""


def test_the_book_is_built(book):
    assert PAGES, f"no pages in {HTML}: run `make book`"
    assert "intro.html" in PAGES and "search.html" in PAGES


INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>(.*?)</script>", re.S)
SCRIPT_SRC = re.compile(r"<script[^>]*\bsrc=\"([^\"?]+)")


def test_each_script_once_per_page(book):
    """No page loads a script or runs an inline script twice (a doubled `const` declaration is a
    console error on every page; sphinx-thebe's config was doubled until _ext/hwassets.py)."""
    doubled = {}
    for path in PAGES:
        text = (HTML / path).read_text(encoding="utf-8")
        bodies = [b.strip() for b in INLINE_SCRIPT.findall(text) if b.strip()]
        srcs = SCRIPT_SRC.findall(text)
        twice = sorted({b[:60] for b in bodies if bodies.count(b) > 1} | {s for s in srcs if srcs.count(s) > 1})
        if twice:
            doubled[path] = twice
    assert doubled == {}, f"scripts included twice: {doubled}"


def test_index_redirects_to_the_front_page(visit):
    v = visit("index.html")
    v.page.wait_for_url("**/intro.html", timeout=10000)
    assert v.real_errors() == [] and v.offsite == []


@pytest.mark.parametrize("path", PAGES)
def test_page_offline_math_images_answers_quizzes(visit, path):
    v = visit(path)
    v.page.evaluate(WAIT_MATHJAX)
    assert v.real_errors() == [], f"{path}: console errors or exceptions"
    assert v.offsite == [], f"{path}: requests leaving 127.0.0.1 (blocked)"
    assert v.failed == [], f"{path}: failed requests"
    # Math: every math element typeset by the vendored MathJax into SVG, no raw TeX left in the text.
    report = v.page.evaluate("""() => {
        const math = [...document.querySelectorAll('.math')];
        const bare = math.filter((m) => !m.querySelector('mjx-container')).map((m) => m.textContent.slice(0, 60));
        const svg = document.querySelectorAll('mjx-container svg').length;
        const text = [...document.querySelectorAll('article p, article li, article td, article th, article dd')]
            .map((e) => e.innerText).join('\\n');
        return {count: math.length, bare, svg, text};
    }""")
    assert report["bare"] == [], f"{path}: math left untypeset"
    if report["count"]:
        assert report["svg"] >= 1, f"{path}: math present but no MathJax SVG"
    leftovers = [t for t in RAW_TEX if t in report["text"]]
    assert leftovers == [], f"{path}: raw TeX delimiters {leftovers} in the text"
    # Images: every one loaded and described; drawn figures (SVG) carry a text alternative too.
    images = v.page.evaluate("""async () => {
        const imgs = [...document.images];
        for (const img of imgs) { img.loading = 'eager'; try { await img.decode(); } catch (e) {} }
        return imgs.map((img) => ({src: img.currentSrc.slice(0, 120), width: img.naturalWidth,
                                   alt: (img.getAttribute('alt') || '').trim()}));
    }""")
    assert [i for i in images if i["width"] == 0] == [], f"{path}: images that did not load"
    assert [i["src"] for i in images if not i["alt"]] == [], f"{path}: images without alt text"
    unlabeled = v.page.evaluate("""() => [...document.querySelectorAll('svg[role=img]:not([aria-hidden=true])')]
        .filter((s) => !s.closest('mjx-container') && !(s.getAttribute('aria-label') || '').trim()
                       && !s.getAttribute('aria-labelledby') && !s.querySelector('title')).length""")
    assert unlabeled == 0, f"{path}: drawn figures without a text alternative"
    check_hidden_answers_and_quizzes(v, path)


# Clicks and checks run inside the page (one round trip): element.click() fires the same handlers.
ANSWERS_AND_QUIZZES = """async () => {
  const frame = () => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  const visible = (e) => Boolean(e) && e.checkVisibility({visibilityProperty: true});
  const problems = [];
  const boxes = [...document.querySelectorAll('.admonition.dropdown')];
  for (const [i, box] of boxes.entries()) {
    const body = [...box.children].find((c) => !c.classList.contains('admonition-title'));
    const button = box.querySelector('.toggle-button');
    if (!button) { problems.push(`dropdown ${i}: no toggle button`); continue; }
    if (visible(body)) problems.push(`dropdown ${i}: answer shown before a click`);
    button.click(); await frame();
    if (!visible(body)) problems.push(`dropdown ${i}: answer still hidden after a click`);
  }
  const details = [...document.querySelectorAll('details.hide, details.toggle-details')];   // hidden code cells
  for (const [i, d] of details.entries()) {
    if (d.open) problems.push(`toggle ${i}: open before a click`);
    d.querySelector('summary').click(); await frame();
    if (!d.open) problems.push(`toggle ${i}: still closed after a click`);
  }
  const quizzes = [...document.querySelectorAll('.hw-quiz')];
  for (const [i, quiz] of quizzes.entries()) {
    const explain = quiz.querySelector('.hw-quiz-explain');
    const feedback = () => quiz.querySelector('.hw-quiz-feedback').textContent;
    const wrong = quiz.querySelector('button[data-correct="false"]');
    if (wrong) {
      wrong.click(); await frame();
      if (!wrong.classList.contains('hw-quiz-wrong') || !feedback().includes('Not quite')) problems.push(`quiz ${i}: a wrong answer is not marked wrong`);
      if (visible(explain)) problems.push(`quiz ${i}: explains after a wrong answer`);
    }
    const right = quiz.querySelector('button[data-correct="true"]');
    right.click(); await frame();
    if (!right.classList.contains('hw-quiz-right') || !feedback().includes('Correct')) problems.push(`quiz ${i}: the right answer is not marked right`);
    if (explain && explain.textContent.trim() && !visible(explain)) problems.push(`quiz ${i}: explanation hidden after the right answer`);
  }
  return {dropdowns: boxes.length, toggles: details.length, quizzes: quizzes.length, problems};
}"""


def check_hidden_answers_and_quizzes(v, path):
    """Worked answers (dropdown admonitions) stay hidden until clicked; a quiz marks a wrong option
    wrong without explaining, and the right one right, with its explanation."""
    if v.page.locator(".admonition.dropdown").count():
        v.page.wait_for_selector(".admonition.dropdown .toggle-button", state="attached", timeout=10000)
    report = v.page.evaluate(ANSWERS_AND_QUIZZES)
    assert report["problems"] == [], f"{path}: hidden answers or quizzes"
    assert v.real_errors() == [], f"{path}: errors after clicking"


def test_the_book_has_hidden_answers_and_quizzes(book):
    texts = [(HTML / p).read_text(encoding="utf-8") for p in PAGES]
    assert any(DROPDOWN.search(t) for t in texts), "no page has a hidden worked answer (a dropdown admonition)"
    assert any('class="hw-quiz"' in t for t in texts), "no page has a quiz"


def test_colab_links_open_notebooks_that_exist(book):
    """The launch buttons are in the static HTML: every Colab link names an .ipynb of this repository."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    repo = urlparse(config["repository"]["url"]).path.strip("/")
    branch = config["repository"].get("branch", "main")
    found = {}
    for path in PAGES:
        for href in re.findall(
            r'href="(https://colab\.research\.google\.com/[^"]+)"', (HTML / path).read_text(encoding="utf-8")
        ):
            found[href] = path
    assert found, "no page has a Colab button"
    for href, page in found.items():
        prefix = f"/github/{repo}/blob/{branch}/"
        url_path = urlparse(href).path
        assert url_path.startswith(prefix), f"{page}: Colab link {href} is not for {repo}@{branch}"
        target = url_path[len(prefix) :]
        assert target.endswith(".ipynb"), f"{page}: Colab link to {target}, not a notebook"
        assert (ROOT / target).is_file(), f"{page}: Colab link to {target}, which is not in the repository"


def test_search_finds_roofline(visit):
    v = visit("search.html?q=roofline")
    v.page.wait_for_selector("#search-results li", timeout=15000)
    hits = v.page.evaluate("() => [...document.querySelectorAll('#search-results li a')].map((a) => a.textContent)")
    assert hits, "searching 'roofline' found nothing"
    assert v.real_errors() == [] and v.offsite == []


SHOTS = [
    p
    for p in ("intro.html", "calculators.html", "gallery.html", "chapters/06_roofline.html", "search.html")
    if p in PAGES
]


@pytest.mark.parametrize("path", SHOTS)
def test_phone_and_dark_mode_screenshots(visit, path):
    """Screenshots at 390 and 1280 px, light and dark (under _build/screenshots/), and checks that
    a phone never scrolls sideways and that the calculators keep their text readable in dark mode."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    name = path.replace("/", "_").removesuffix(".html")
    v = visit(path, width=390)
    v.page.evaluate(WAIT_MATHJAX)
    for width in (390, 1280):
        for dark in (False, True):
            v.page.set_viewport_size({"width": width, "height": 900})
            v.page.emulate_media(color_scheme="dark" if dark else "light")  # the theme follows ("auto")
            v.page.wait_for_function(f"document.documentElement.dataset.theme === '{'dark' if dark else 'light'}'")
            v.page.screenshot(
                path=str(SCREENSHOTS / f"{name}-{width}-{'dark' if dark else 'light'}.png"), full_page=True
            )
            overflow = v.page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
            assert overflow <= 1, f"{path} at {width}px scrolls sideways by {overflow}px"
            contrast = v.page.evaluate(CONTRAST)
            assert contrast >= 4.5, (
                f"{path}: calculator/gallery text contrast {contrast:.2f}:1 < 4.5:1 ({width}px, dark={dark})"
            )
    assert v.real_errors() == []


# WCAG contrast of the calculators' text against the page background (1.0 when there is no widget).
CONTRAST = """() => {
  const lum = (c) => { const [r, g, b] = c.match(/[\\d.]+/g).slice(0, 3).map(Number).map((v) => v / 255)
      .map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4)); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  const bg = (el) => { for (let e = el; e; e = e.parentElement) { const c = getComputedStyle(e).backgroundColor;
      if (c && !c.startsWith('rgba(0, 0, 0, 0)') && c !== 'transparent') return c; } return 'rgb(255, 255, 255)'; };
  let worst = 21;
  for (const el of document.querySelectorAll('.hwlib-widget td, .hwlib-widget th, .hwlib-widget label, .hwlib-widget .hwlib-readout, .hwlib-gallery td')) {
    const a = lum(getComputedStyle(el).color), b = lum(bg(el));
    worst = Math.min(worst, (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05));
  }
  return worst;
}"""
