"""Every page of the built book in a real browser, offline: no error, nothing fetched from another
host, math typeset, images loaded and described, Colab links to notebooks that exist, search,
hidden answers, quizzes, phone width and dark mode."""
from __future__ import annotations

import re
from urllib.parse import urlparse

import pytest
import yaml

from bookserve import HTML, ROOT, SCREENSHOTS, pages

PAGES = [p for p in pages() if p != "index.html"]     # index.html only redirects to intro.html
DROPDOWN = re.compile(r'class="(?=[^"]*\bdropdown\b)(?=[^"]*\badmonition\b)[^"]*"')
RAW_TEX = ("\\(", "\\)", "\\[", "\\]", "$$")
WAIT_MATHJAX = """() => (window.MathJax && MathJax.startup && MathJax.startup.promise)
    ? MathJax.startup.promise.then(() => true) : false"""


def test_the_book_is_built(book):
    assert PAGES, f"no pages in {HTML}: run `make book`"
    assert "intro.html" in PAGES and "search.html" in PAGES


def test_index_redirects_to_the_front_page(visit):
    v = visit("index.html")
    v.page.wait_for_url("**/intro.html", timeout=10000)
    assert v.real_errors() == [] and v.offsite == []


@pytest.mark.parametrize("path", PAGES)
def test_page_loads_offline_with_math_and_described_images(visit, path):
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


def test_colab_links_open_notebooks_that_exist(visit):
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    repo = urlparse(config["repository"]["url"]).path.strip("/")
    branch = config["repository"].get("branch", "main")
    found = {}
    for path in PAGES:
        text = (HTML / path).read_text(encoding="utf-8")
        if "colab.research.google.com" not in text:
            continue
        v = visit(path)
        for href in v.page.evaluate("""() => [...document.querySelectorAll('a[href*="colab.research.google.com"]')]
                                       .map((a) => a.href)"""):
            found[href] = path
    assert found, "no page has a Colab button"
    for href, page in found.items():
        prefix = f"/github/{repo}/blob/{branch}/"
        url_path = urlparse(href).path
        assert url_path.startswith(prefix), f"{page}: Colab link {href} is not for {repo}@{branch}"
        target = url_path[len(prefix):]
        assert target.endswith(".ipynb"), f"{page}: Colab link to {target}, not a notebook"
        assert (ROOT / target).is_file(), f"{page}: Colab link to {target}, which is not in the repository"


def test_search_finds_roofline(visit):
    v = visit("search.html?q=roofline")
    v.page.wait_for_selector("#search-results li", timeout=15000)
    hits = v.page.evaluate("() => [...document.querySelectorAll('#search-results li a')].map((a) => a.textContent)")
    assert hits, "searching 'roofline' found nothing"
    assert v.real_errors() == [] and v.offsite == []


def test_hidden_answers_stay_hidden_until_clicked(visit):
    with_dropdowns = [p for p in PAGES if DROPDOWN.search((HTML / p).read_text(encoding="utf-8"))]
    assert with_dropdowns, "no page has a hidden worked answer (a dropdown admonition)"
    for path in with_dropdowns:
        v = visit(path)
        v.page.wait_for_selector(".admonition.dropdown .toggle-button", timeout=10000)
        boxes = v.page.locator(".admonition.dropdown")
        for i in range(boxes.count()):
            box = boxes.nth(i)
            body = box.locator(":scope > *:not(.admonition-title)").first
            assert not body.is_visible(), f"{path}: dropdown {i} shows its answer before a click"
            box.locator(".toggle-button").first.click()
            body.wait_for(state="visible", timeout=5000)


def test_quizzes_answer_clicks(visit):
    with_quiz = [p for p in PAGES if 'class="hw-quiz"' in (HTML / p).read_text(encoding="utf-8")]
    assert with_quiz, "no page has a quiz"
    for path in with_quiz:
        v = visit(path)
        quizzes = v.page.locator(".hw-quiz")
        for i in range(quizzes.count()):
            quiz = quizzes.nth(i)
            explain = quiz.locator(".hw-quiz-explain")
            wrong = quiz.locator('button[data-correct="false"]')
            if wrong.count():
                wrong.first.click()
                assert "hw-quiz-wrong" in wrong.first.get_attribute("class")
                assert "Not quite" in quiz.locator(".hw-quiz-feedback").inner_text()
                assert explain.count() == 0 or not explain.is_visible(), f"{path}: quiz {i} explains after a wrong answer"
            right = quiz.locator('button[data-correct="true"]').first
            right.click()
            assert "hw-quiz-right" in right.get_attribute("class")
            assert "Correct" in quiz.locator(".hw-quiz-feedback").inner_text()
            if explain.count() and explain.inner_text().strip():
                assert explain.is_visible(), f"{path}: quiz {i} hides its explanation after the right answer"
        assert v.real_errors() == []


SHOTS = [p for p in ("intro.html", "calculators.html", "gallery.html", "chapters/06_roofline.html",
                     "chapters/09_napkin_math.html", "search.html") if p in PAGES]


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
            v.page.emulate_media(color_scheme="dark" if dark else "light")   # the theme follows ("auto")
            v.page.wait_for_function(f"document.documentElement.dataset.theme === '{'dark' if dark else 'light'}'")
            v.page.screenshot(path=str(SCREENSHOTS / f"{name}-{width}-{'dark' if dark else 'light'}.png"), full_page=True)
            overflow = v.page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
            assert overflow <= 1, f"{path} at {width}px scrolls sideways by {overflow}px"
            contrast = v.page.evaluate(CONTRAST)
            assert contrast >= 4.5, f"{path}: calculator/gallery text contrast {contrast:.2f}:1 < 4.5:1 ({width}px, dark={dark})"
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
