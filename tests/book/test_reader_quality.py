"""Reader quality of the figures: colour-blind-safe colours (Okabe & Ito 2008) that stay apart under
simulated colour-vision deficiency, and never colour alone where series must be told apart."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from hwlib import plot  # noqa: E402
from hwlib.bench import recorded  # noqa: E402
from hwlib.plot import gallery  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
OKABE_ITO = ["#0072B2", "#D55E00", "#009E73", "#E69F00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"]
# Machado, Oliveira & Fernandes (2009), full-severity simulation matrices, applied in linear RGB.
CVD = {
    "protanopia": [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]],
    "deuteranopia": [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]],
    "tritanopia": [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.303900]],
}


def _linear(hex_colour: str) -> np.ndarray:
    c = np.array([int(hex_colour[i : i + 2], 16) for i in (1, 3, 5)]) / 255
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def _lab(linear_rgb: np.ndarray) -> np.ndarray:
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]) @ np.clip(
        linear_rgb, 0, 1
    )
    t = xyz / np.array([0.95047, 1.0, 1.08883])
    f = np.where(t > 0.008856, np.cbrt(t), 7.787 * t + 16 / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def min_delta_e(colours, matrix=None) -> float:
    """Smallest CIELAB distance (ΔE*ab) between any two colours, as seen through `matrix`."""
    m = np.eye(3) if matrix is None else np.array(matrix)
    labs = [_lab(m @ _linear(c)) for c in colours]
    return min(float(np.linalg.norm(a - b)) for a, b in itertools.combinations(labs, 2))


def test_the_plot_palette_is_okabe_ito():
    assert [c.upper() for c in plot.PALETTE] == OKABE_ITO
    assert [plot.color(i).upper() for i in range(9)] == OKABE_ITO + OKABE_ITO[:1]


@pytest.mark.parametrize("vision", [None, *CVD])
def test_series_colours_stay_apart_for_colour_blind_readers(vision):
    """The six series colours figures use first stay >= 15 ΔE apart, also under simulated CVD
    (about 2-3 ΔE is a just-noticeable difference)."""
    assert min_delta_e(plot.PALETTE[:6], CVD.get(vision)) >= 15


def test_a_multi_device_roofline_gives_each_device_its_own_palette_colour():
    fig, ax = plot.roofline(["T4", "A100 80GB SXM", "H100 SXM", "H200", "B200"], precision="fp16")
    roofs = [line for line in ax.get_lines() if "ridge" in line.get_label() and len(line.get_xdata()) > 2]
    colours = [matplotlib.colors.to_hex(line.get_color()).upper() for line in roofs]
    plt.close(fig)
    assert len(colours) == 5 and len(set(colours)) == 5
    assert set(colours) <= set(OKABE_ITO)


def test_the_roofline_explorer_uses_the_palette_and_distinct_markers():
    js = (ROOT / "hwlib" / "data" / "web" / "roofline.js").read_text()
    colours = re.search(r"const COLORS = \[([^\]]*)\]", js).group(1)
    shapes = re.search(r"const SHAPES = \[([^\]]*)\]", js).group(1)
    assert {c.upper() for c in re.findall(r'"(#[0-9A-Fa-f]{6})"', colours)} <= set(OKABE_ITO)
    assert len(set(re.findall(r'"([a-z-]+)"', shapes))) == 6  # a shape per kernel, not colour alone


def test_the_gallery_chart_tells_recorded_from_published_without_colour():
    published = [{"device": "X", "experiment": "bandwidth", "fraction_of_spec": 0.8}]
    run = {
        "schema": recorded.SCHEMA,
        "schema_version": 1,
        "date": "2026-11-30",
        "backend": "cupy",
        "device": {"name": "NVIDIA H100 80GB HBM3", "kind": "gpu"},
        "records": {"bandwidth": {"status": "ok", "results": [{"bytes_per_s": 3e12}]}},
    }
    fig, ax = gallery.figure([run], published)
    hatches = {p.get_hatch() for p in ax.patches}
    plt.close(fig)
    assert hatches == {"", "//"}


def test_each_chart_of_chapters_1_to_5_has_one_home():
    """The per-format matmul speed chart lives in chapter 2 and the peak-vs-bandwidth growth
    chart in chapter 4; the other chapters cross-reference them instead of drawing near-copies."""
    pages = {p.name: p.read_text() for p in sorted((ROOT / "chapters").glob("*.md"))}
    speed = [
        n
        for n, t in pages.items()
        if re.search(r"(set_title\(|source_bars\(\w+, )\"Mat(mul throughput|rix multiply speed) per format", t)
    ]
    growth = [
        n for n, t in pages.items() if re.search(r"peak_growth|plot\.peak_vs_bandwidth\(|Arithmetic outgrows memory", t)
    ]
    assert speed == ["02_gpu_anatomy.md"], speed
    assert growth == ["04_arithmetic_intensity.md"], growth
    names = [m for t in pages.values() for m in re.findall(r"^\s*name: (fig-[\w-]+)", t, flags=re.M)]
    assert len(names) == len(set(names)), sorted({n for n in names if names.count(n) > 1})


@pytest.mark.parametrize(
    "md", sorted((Path(__file__).resolve().parents[2] / "chapters").glob("*.md")), ids=lambda p: p.name
)
def test_captions_and_alt_text_hold_no_unresolved_labels(md):
    """Figure captions and alt text are plain strings in cell metadata: a `{eq}` role or an equation
    label there reaches the reader raw ("equation eq-decode"), so they must not contain one."""
    import re

    bad = [
        (n, line.strip()[:80])
        for n, line in enumerate(md.read_text().splitlines(), 1)
        if re.match(r"\s*(caption|alt):", line) and re.search(r"\{(eq|ref|doc|numref|cite)\}|\beq-[a-z]", line)
    ]
    assert bad == [], f"{md.name}: captions/alt text with unresolved references: {bad}"


SELF_REFERENCE = re.compile(
    r"\bthe seed\b|\bseed['’]s\b|\bseed (§|chapter|\d)|\blesson seed\b|\bthe lesson\b|\blesson['’]s\b"
    r"|\bsources?: (the )?lesson\b|\blesson \"|\blesson exercise"
    r"|gpu-experiments|shared/reference|grader research|toolchain findings",  # the team's notes, not the reader's
    re.I,
)


@pytest.mark.parametrize(
    "path",
    sorted((ROOT / "chapters").glob("0[1-5]_*.md"))
    + sorted((ROOT / "exercises").glob("*/source.md"))
    + sorted((ROOT / "hwlib").rglob("*.py"))
    + sorted((ROOT / "hwlib" / "data").glob("*.yaml"))
    + sorted((ROOT / "exercises").glob("*/checks.yaml")),
    ids=lambda p: p.name,
)
def test_reader_facing_text_names_only_the_books_own_chapters(path):
    n_chapters = len(list((ROOT / "chapters").glob("[0-9][0-9]_*.md")))

    def names_a_missing_chapter(line):
        return any(int(k) > n_chapters for k in re.findall(r"\bchapters? (\d+)\b", line, flags=re.I))

    hits = [
        ln.strip() for ln in path.read_text().splitlines() if SELF_REFERENCE.search(ln) or names_a_missing_chapter(ln)
    ]
    assert hits == [], f"{path.relative_to(ROOT)}: {hits}"


def test_hwlib_docstrings_cite_no_book_section_numbers():
    """hwlib cites chapters, not section numbers that drift."""
    book_section = re.compile(r"[Cc]hapter \d+,? §\d|(?<![\w)] )§\d+\.\d+ ?\(?[\"“]")
    hits = []
    for p in (ROOT / "hwlib").rglob("*.py"):
        if {"bench", "grading", "kernels"} & set(p.parts):
            continue
        text = p.read_text(encoding="utf-8")
        hits += [f"{p.name}:{m.group(0)}" for m in book_section.finditer(text)]
    assert hits == []
