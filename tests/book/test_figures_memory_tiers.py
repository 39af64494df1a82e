"""Figures of the memory tiers (hwlib.plot.bandwidth, tiers, latency, scaling.bandwidth_tiers): each
draws the data it is given or the hwlib value it names, labels the device behind measured data, and
refuses bad input."""

import matplotlib.colors as mcolors
import numpy as np
import pytest

from figure_axes import fake_device, legend_texts
from hwlib import interconnect, plot, specs


def test_bandwidth_sweep_with_a_published_curve_and_cpu_caches():
    sweep = [{"working_set_bytes": 3 * 2**k, "bytes_per_s": 1e10 * (2 if k < 20 else 1)} for k in range(14, 24)]
    rec = {"source": "live", "device": fake_device("CPU: Test", l1_bytes=48 << 10, l2_bytes=2 << 20), "sweep": sweep}
    pub = ([1e6, 1e8], [1e13, 4e12], "published (not ours): H200", 50 << 20)
    fig, ax = plot.bandwidth_sweep(rec, published=pub, theory=False)
    live = next(ln for ln in ax.get_lines() if ln.get_label() == "live on CPU: Test (triad)")
    assert list(live.get_ydata()) == [p["bytes_per_s"] for p in sweep]
    assert "published (not ours): H200" in legend_texts(ax)
    assert {t.get_text() for t in ax.texts} == {"L1 48.0 KiB", "L2 2.00 MiB"}
    assert ax.get_title() == "Bandwidth vs working set - live on CPU: Test"
    fig, ax = plot.bandwidth_sweep({"source": "live", "device": fake_device("x"), "sweep": []}, published=pub)
    assert "published (not ours): H200" in legend_texts(ax)  # a failed sweep still shows the published one
    with pytest.raises(ValueError, match="sweep"):
        plot.bandwidth_sweep({"source": "live", "device": fake_device("x")})


def test_tile_bars_are_the_tiles_and_hierarchy_bars_the_values():
    tiers = [("HBM", 4.8e12), ("host", 6.4e10)]
    fmts = [("fp32", 4, "FP32"), ("bf16", 2, "BF16")]
    need = {(t, f): b * 1e15 / bw for t, bw in tiers for f, b, _ in fmts}
    fig, ax = plot.tile_bars(need, tiers, fmts, "tiles")
    assert sorted(p.get_height() for p in ax.patches) == pytest.approx(sorted(need.values()))
    assert legend_texts(ax) == ["FP32 (4 B/element)", "BF16 (2 B/element)"]
    with pytest.raises(ValueError, match="every"):
        plot.tile_bars({}, tiers, fmts, "t")
    rows = [
        ("L2", (50e6, "spec"), (1e13, "published"), (1.5e-7, "published")),
        ("host", (1e12, "published"), (6.4e10, "spec"), None),
    ]
    fig, axes = plot.hierarchy_bars(rows, "H")
    assert sorted(p.get_width() for p in axes[0].patches) == pytest.approx([50e6, 1e12])
    assert mcolors.to_hex(axes[1].patches[0].get_facecolor()) == plot.SOURCE_COLOR["published"].lower()
    assert "not shown" in [t.get_text() for t in axes[2].texts]
    with pytest.raises(ValueError, match="source kinds"):
        plot.hierarchy_bars([("x", (1, "guess"), (1, "spec"), None)], "H")


def _e6_cpu():
    return {
        "device": fake_device("CPU: Test", cores=4),
        "results": [{"threads": t, "bytes_per_s": 1e10 * t} for t in (1, 2, 4)],
    }


def test_littles_law_bound_is_min_of_bandwidth_and_flight_over_latency():
    h200 = specs.get("H200")
    fig, (ax, ax2) = plot.littles_law(
        _e6_cpu(),
        ([1e5, 1e6], [1e11, 1e12], "published (not ours): H200"),
        bounds=[(h200.name, h200.bandwidth, "-")],
        latency_s=4e-7,
        fit_latency_s=5e-7,
        marks=[(1e6, "mark")],
    )
    bound = next(ln for ln in ax.get_lines() if ln.get_label().startswith("bound: H200"))
    x = bound.get_xdata()
    np.testing.assert_allclose(bound.get_ydata(), np.minimum(h200.bandwidth, x / 4e-7))
    assert ax2.get_title() == "E6 live on CPU: Test\n(a CPU, not a GPU)"
    assert list(ax2.get_lines()[0].get_ydata()) == [1e10, 2e10, 4e10]
    with pytest.raises(ValueError, match="latencies"):
        plot.littles_law(_e6_cpu(), ([], [], ""), bounds=[("x", 1.0, "-")], latency_s=0, fit_latency_s=1)


def test_divergence_model_curves_and_measured_points():
    p = np.linspace(0, 1, 11)
    paths = {32: (1 - p**32) + (1 - (1 - p) ** 32)}
    run = {
        "source": "live",
        "device": fake_device("Tesla T4", "gpu"),
        "results": [{"pattern": "random", "slowdown": 1.9}, {"pattern": "4-way", "ways": 4, "slowdown": 3.8}],
    }
    fig, (ax, ax2) = plot.divergence(p, paths, [(run, "live")])
    np.testing.assert_allclose(ax.get_lines()[0].get_ydata(), paths[32])
    assert "random: live on Tesla T4" in legend_texts(ax)
    assert list(ax2.get_lines()[-1].get_ydata()) == [3.8]
    with pytest.raises(ValueError, match="run kinds"):
        plot.divergence(p, paths, [(run, "guess")])


def test_bandwidth_tiers_bars_are_the_spec_and_link_bandwidths():
    fig, ax = plot.bandwidth_tiers("H100 SXM")
    widths = sorted(p.get_width() for p in ax.patches)
    want = sorted([specs.get("H100 SXM").bandwidth] + [ln.bandwidth for ln in interconnect.tiers("H100 SXM")])
    np.testing.assert_allclose(widths, want)
    assert "H100 SXM" in ax.get_title() and ax.get_xscale() == "log"
