"""Chapter code stays short and calls hwlib: every chapter's code cells (tools/extract_cells.py) are
counted, hold no hand-rolled matplotlib, parse no hwlib data file by hand, and repeat no helper that
hwlib already has; `duplicates` over the extracted cells finds nothing."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import extract_cells  # noqa: E402

CHAPTERS = sorted((ROOT / "chapters").glob("[0-9][0-9]_*.md"))
MAX_LINES = 400  # lines of code per chapter (blank and comment lines not counted); all are below today
# Hand-written copies of what hwlib provides, and what to call instead.
COPIES = {
    r"yaml\.safe_load\(|\bimport yaml\b": "load hwlib/data through its loader (hwlib.hierarchy, specs, runs, ...)",
    r"[\"']bf16[\"'] if [\"']bf16[\"'] in": "Accelerator.default_precision()",
    r"^def (pct|sci|power_of_two|value|sm_limits|recorded_runs|published_rate)\(": "hwlib.units / hwlib.hierarchy / "
    "hwlib.bench.recorded",
    r"^SOURCE_COLOR\s*=": "hwlib.plot.SOURCE_COLOR",
}


def test_every_chapter_is_found():
    assert len(CHAPTERS) == 12, [p.name for p in CHAPTERS]  # 12: serving systems


@pytest.mark.parametrize("page", CHAPTERS, ids=lambda p: p.stem)
def test_chapter_code_is_short_and_draws_through_hwlib_plot(page):
    source = extract_cells.page_source(page)
    lines = extract_cells.code_lines(source)
    assert 0 < lines <= MAX_LINES, f"{page.name}: {lines} lines of code (at most {MAX_LINES}); move helpers into hwlib"
    assert extract_cells.raw_matplotlib_calls(source) == [], f"{page.name}: draw figures with hwlib.plot functions"


@pytest.mark.parametrize("page", CHAPTERS, ids=lambda p: p.stem)
def test_chapter_repeats_no_hwlib_helper(page):
    source = extract_cells.page_source(page)
    found = [
        f"{m.group(0)!r} -> use {use}"
        for pattern, use in COPIES.items()
        for m in re.finditer(pattern, source, flags=re.MULTILINE)
    ]
    assert not found, f"{page.name}: " + "; ".join(found)


def test_the_checks_catch_a_hand_rolled_figure():
    src = "import yaml\nfig, ax = plt.subplots()\nax.plot([1], [2])\nplt.show()\n"
    assert extract_cells.raw_matplotlib_calls(src) == ["plt.subplots", "ax.plot"]
    assert re.search(next(iter(COPIES)), src, flags=re.MULTILINE)


@pytest.mark.skipif(shutil.which("duplicates") is None, reason="the `duplicates` command is not on PATH here")
def test_duplicates_finds_nothing_in_the_chapter_cells(tmp_path):
    extract_cells.main(["--out", str(tmp_path), *map(str, CHAPTERS)])
    out = subprocess.run(
        ["duplicates", "--repo", str(tmp_path), "--most", "40"], capture_output=True, text=True, timeout=120
    ).stdout
    assert out.startswith("no duplicates"), out


@pytest.mark.parametrize("page", ["calculators.md", "gallery.md"])
def test_book_pages_outside_the_chapters_draw_through_hwlib(page):
    """The chapters are checked above; these two pages run code cells too."""
    source = extract_cells.page_source(ROOT / page)
    assert extract_cells.raw_matplotlib_calls(source) == [], "draw figures with hwlib.plot functions"
    assert '"bf16" in' not in source, "use Accelerator.default_precision() for the best 16-bit format"
    assert "import yaml" not in source and "yaml.safe_load" not in source, "read hwlib/data through its hwlib loader"


PAGE_CALLS = {
    "formulas.md": [
        "memory.activation_bytes_for(l2, 4096)",  # SwiGLU width, as chapters 8 and 9
        "kv_bytes=memory.kv_cache_bytes_for(l3, 4096)",  # energy per token as chapter 9's table
    ],
    "chapters/03_accelerators.md": ['specs.get("TPU7x")', 'specs.get("TPU v6e")', "VMEM"],
    "chapters/05_number_formats.md": ["__NV_SATFINITE", "ml_dtypes"],
    "chapters/08_training_inference.md": ["memory.sequences_that_fit(", "smith2022mtnlg"],
    "exercises/ex05_littles_law/source.md": ['hierarchy.latency_s("dram", P["chase_part"])'],
}


def test_pages_compute_through_the_hwlib_calls_and_cite_the_sources_they_rely_on():
    """The formula sheet repeats the chapters' calls; chapter 8 counts sequences with the one rule and
    cites the MT-NLG paper; the Little's-law exercise reads the published latency from hwlib."""
    missing = [
        (page, call)
        for page, calls in PAGE_CALLS.items()
        for call in calls
        if call not in (ROOT / page).read_text(encoding="utf-8")
    ]
    assert missing == []
