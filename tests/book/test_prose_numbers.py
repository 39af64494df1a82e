"""Numbers come from code: chapter prose (outside code cells and math) carries no hand-typed
quantity with a unit — those must be glued from a computation."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
UNIT = (
    r"(TB/s|GB/s|GiB|MiB|KiB|TiB|GB|MB|KB|TB|PFLOP|TFLOP|GFLOP|FLOP/s|FLOPs?|ms|µs|us|ns|"
    r"hours?|days?|months?|W|%|\$)"
)
QUANTITY = re.compile(r"(?<![\w.\-/])\$?\d[\d.,]*\s?" + UNIT + r"(?![A-Za-z])")


def prose_lines(text: str):
    fence = math = False
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("```") or stripped.startswith(":::"):
            fence = not fence if stripped.startswith("```") else fence
            continue
        if stripped.startswith("$$"):
            math = not math
            continue
        if fence or math or stripped.startswith(("#", "|", ":")):
            continue
        line = re.sub(r"\{glue:?\w*\}`[^`]*`", "", line)
        line = re.sub(r"\$[^$]*\$", "", line)
        line = re.sub(r"`[^`]*`", "", line)
        yield number, line


def typed_quantities(text: str):
    return [(n, m.group(0)) for n, line in prose_lines(text) for m in QUANTITY.finditer(line)]


def test_detector_catches_typed_numbers():
    sample = "An H100 reads 3.35 TB/s for 12 hours; {glue:text}`x` GB is fine; $P = 10$ FLOP/s in math is fine."
    found = [q for _, q in typed_quantities(sample)]
    assert found == ["3.35 TB/s", "12 hours"]


@pytest.mark.parametrize("md", sorted((ROOT / "chapters").glob("*.md")), ids=lambda p: p.name)
def test_no_hand_typed_quantities(md):
    hits = typed_quantities(md.read_text())
    assert hits == [], f"{md.name}: glue these from code: {hits}"


GLUED_PERCENT = re.compile(r'glue\([^\n]*(?:"\{:\.\d%\}"|:\.\d%\})')


def test_detector_catches_python_percent_formats_in_glue():
    assert GLUED_PERCENT.search('glue("u", 0.3, "{:.0%}")') and GLUED_PERCENT.search('glue("u", f"{x:.1%} of it")')
    assert not GLUED_PERCENT.search('glue("u", 0.3, units.format_pct)')


@pytest.mark.parametrize("md", sorted((ROOT / "chapters").glob("*.md")), ids=lambda p: p.name)
def test_glued_percentages_use_the_books_one_style(md):
    """Prose writes '40 %' (units.format_pct) everywhere; Python's '{:.0%}' would print '40%'."""
    hits = [n for n, line in enumerate(md.read_text().splitlines(), 1) if GLUED_PERCENT.search(line)]
    assert hits == [], f"{md.name}: use units.format_pct in the glue calls on lines {hits}"
