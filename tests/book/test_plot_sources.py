"""plot.source_bars draws the bars it is given, coloured by source; hwlib.hierarchy reads
hierarchy.yaml; the recorded/published helpers and the units formatters chapters 1, 2 and 5 use."""

import math

import matplotlib.colors as mcolors
import pytest

from hwlib import hierarchy, plot, specs, units
from hwlib.bench import recorded

BARS = [("a spec", 1e15, "spec"), ("a published", 6e14, "published"), ("a live", 2e12, "live")]


def test_bars_are_the_values_and_colours_the_sources():
    fig, ax = plot.source_bars(BARS, "t")
    assert sorted(p.get_width() for p in ax.patches) == pytest.approx(sorted(b[1] for b in BARS))
    assert [t.get_text() for t in ax.get_yticklabels()] == [b[0] for b in BARS]
    for patch, bar in zip(sorted(ax.patches, key=lambda p: -p.get_y()), BARS):
        assert mcolors.to_hex(patch.get_facecolor()) == plot.SOURCE_COLOR[bar[2]].lower()
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["spec", "published", "live"]
    assert ax.get_xscale() == "log" and ax.get_xlim()[0] == pytest.approx(2e12 / 5)
    assert ax.get_title() == "t"


def test_groups_are_labelled_and_the_right_margin_kept():
    groups = {"FP32": BARS[:1], "16-bit": BARS[1:]}
    fig, ax = plot.source_bars(groups, "g", right=300)
    assert {t.get_text() for t in ax.texts} == {"FP32", "16-bit"}
    assert ax.get_xlim()[1] == pytest.approx(1e15 * 300)
    y = sorted(p.get_y() for p in ax.patches)
    assert y[-1] - y[-2] > y[1] - y[0]  # the gap between the two groups


def test_bad_bars_refused():
    with pytest.raises(ValueError, match="no bars"):
        plot.source_bars({"a": []}, "t")
    with pytest.raises(ValueError, match="unknown source kind.*'guess'"):
        plot.source_bars([("x", 1.0, "guess")], "t")


def test_sm_limits_are_the_file_through_the_compute_capability():
    raw = hierarchy.load()
    cc = raw["parts"]["H100 SXM"]
    lim = hierarchy.sm_limits("H100 SXM")
    assert lim["max_threads_per_sm"] == hierarchy.value(raw["compute_capabilities"][cc]["max_threads_per_sm"])
    assert lim["max_threads_per_sm"] * specs.get("H100 SXM").compute_units == 270336  # 132 SMs x 2048
    assert set(hierarchy.parts()) >= {"T4", "H100 SXM", "H200"}
    with pytest.raises(KeyError, match="hierarchy.yaml parts has no entry 'B200'.*H100 SXM"):
        hierarchy.sm_limits("B200")


def test_latency_is_cycles_over_clock():
    lat = hierarchy.latency("H100 PCIe")
    assert hierarchy.latency_s("dram") == pytest.approx(lat["dram_cycles"] / lat["clock_hz"])
    assert 2e-7 < hierarchy.latency_s("dram") < 1e-6  # a few hundred ns (published chase)
    with pytest.raises(KeyError, match="no tier 'l9'.*dram"):
        hierarchy.latency_s("l9")
    with pytest.raises(KeyError, match="no section 'nope'"):
        hierarchy.entry("nope", "x")


def test_published_rate_prefers_the_common_benchmark():
    row = recorded.published_rate("H100 SXM", "bf16")
    assert row["quantity"] == "flops_per_s" and row["precision"] == "bf16" and row["spec"] == "H100 SXM"
    assert 0 < row["value"] < specs.get("H100 SXM").peak_flops("bf16")
    assert recorded.published_rate("H100 SXM", "int1") is None


def test_ok_records_drops_what_did_not_run(monkeypatch):
    """Synthetic shipped records: one that ran, one skipped, one failed; only the first is drawn."""
    runs = [
        {"status": "ok", "name": "a"},
        {"status": "skipped", "reason": "no bf16", "name": "b"},
        {"status": "failed", "reason": "out of memory", "name": "c"},
        {"name": "d"},
    ]
    monkeypatch.setattr(recorded, "load_all", lambda experiment: runs if experiment == "bandwidth" else [])
    assert [r["name"] for r in recorded.ok_records("bandwidth")] == ["a", "d"]
    assert recorded.ok_records("matmul") == []


def test_power_of_two_and_table_numbers():
    assert units.format_power_of_two(524288.0) == "2¹⁹"
    assert units.format_power_of_two(0.25) == "2⁻²"
    for bad in (3, 0, 0.3):
        with pytest.raises(ValueError, match="power of two"):
            units.format_power_of_two(bad)
    with pytest.raises(ValueError, match="finite"):
        units.format_power_of_two(math.inf)
    assert units.format_sci_html(3.4e38) == "3.4&nbsp;×&nbsp;10<sup>38</sup>"
    assert units.format_sci_html(65504.0) == units.format_count(65504)
    assert units.format_sci_html(0.0078125) == "7.8&nbsp;×&nbsp;10<sup>-3</sup>"
    assert units.format_sci_html(0.5) == "0.5"
