"""hwlib.book.glue: what a chapter glues is exactly what the reader sees through {glue:text}."""

import re
from pathlib import Path

import pytest
from IPython.core.formatters import PlainTextFormatter
from myst_nb.core.variables import format_plain_text

from hwlib import book


@pytest.mark.parametrize(
    "value, fmt, shown",
    [
        (1e15, "{:.0e}", "1e+15"),
        (1500.4, "{:,.0f}", "1,500"),
        (295.27, "{:.0f}", "295"),
        (0.35, "{:.0%}", "35%"),
        ("989 TFLOP/s", None, "989 TFLOP/s"),
        ('it\'s "quoted"', None, 'it\'s "quoted"'),
        (2.6e9, lambda v: f"{v / 1e9:.1f} GB", "2.6 GB"),
    ],
)
def test_glued_text_round_trips(value, fmt, shown):
    book.glue("x", value, fmt)
    assert book.GLUED["x"] == shown
    plain = PlainTextFormatter()(book.GLUED["x"])  # what myst-nb stores as text/plain
    assert format_plain_text(plain, "") == shown  # what {glue:text}`x` renders


def test_glue_returns_nothing():
    assert book.glue("y", 1.0, "{:.1f}") is None


def test_html_table_renders_header_and_rows():
    html = book.html_table(["format", "bits"], [["FP16", 16], ["BF16", 16]]).data
    assert html.count("<tr>") == 3 and "<th>format</th>" in html and "<td>BF16</td>" in html


def test_html_table_aligns_captions_and_escapes_plain_text():
    html = book.html_table(
        ["model", "bytes"], [["A&B <x>", "16.1 GB"]], align=["left", "right"], caption="Sizes <bf16>", escape=True
    ).data
    assert "A&amp;B &lt;x&gt;" in html and "Sizes &lt;bf16&gt;" in html and "<caption" in html
    assert "text-align:right;white-space:nowrap'>16.1 GB" in html
    assert "<sup>" in book.html_table(["x"], [["10<sup>3</sup>"]]).data  # markup kept unless escape=True


@pytest.mark.parametrize(
    "rel",
    [
        "chapters/01_why_gpus.md",
        "chapters/02_gpu_anatomy.md",
        "chapters/04_arithmetic_intensity.md",
        "chapters/05_number_formats.md",
    ],
)
def test_build_machine_ratios_are_in_the_live_box(rel):
    """Ratios measured on the machine that built the page are glued inside its admonition only."""
    text = (Path(__file__).resolve().parents[2] / rel).read_text(encoding="utf-8")
    assert ":::{admonition} On the machine that ran this page" in text
    for name in ("gap_fp32_spec", "gap_bf16_spec", "gap_fp32_meas", "hbm_vs_here", "f_live", "sk_own", "e7_fp32"):
        for m in re.finditer(r"\{glue:text\}`" + name + "`", text):
            before = text[: m.start()]
            assert before.rfind(":::{admonition} On the machine that ran this page") > before.rfind("\n:::\n"), (
                rel,
                name,
            )
