"""Figures of chapters 1-5 (hwlib.plot.sources, bandwidth, tiers, latency, systolic, balance, formats):
each draws the data it is given or the hwlib value it names, labels the device behind measured data,
and refuses bad input."""

import matplotlib
import matplotlib.colors as mcolors
import numpy as np
import pytest

from hwlib import formats, plot, roofline, specs, systolic
from hwlib.bench import e4_fusion


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    matplotlib.pyplot.close("all")


def _labels(ax):
    return [t.get_text() for t in ax.get_legend().get_texts()]


def _dev(name, kind="cpu", **extra):
    return {"name": name, "kind": kind, **extra}


def test_bandwidth_sweep_with_a_published_curve_and_cpu_caches():
    sweep = [{"working_set_bytes": 3 * 2**k, "bytes_per_s": 1e10 * (2 if k < 20 else 1)} for k in range(14, 24)]
    rec = {"source": "live", "device": _dev("CPU: Test", l1_bytes=48 << 10, l2_bytes=2 << 20), "sweep": sweep}
    pub = ([1e6, 1e8], [1e13, 4e12], "published (not ours): H200", 50 << 20)
    fig, ax = plot.bandwidth_sweep(rec, published=pub, theory=False)
    live = next(ln for ln in ax.get_lines() if ln.get_label() == "live on CPU: Test (triad)")
    assert list(live.get_ydata()) == [p["bytes_per_s"] for p in sweep]
    assert "published (not ours): H200" in _labels(ax)
    assert {t.get_text() for t in ax.texts} == {"L1 48.0 KiB", "L2 2.00 MiB"}
    assert ax.get_title() == "Bandwidth vs working set - live on CPU: Test"
    fig, ax = plot.bandwidth_sweep({"source": "live", "device": _dev("x"), "sweep": []}, published=pub)
    assert "published (not ours): H200" in _labels(ax)  # a failed sweep still shows the published one
    with pytest.raises(ValueError, match="sweep"):
        plot.bandwidth_sweep({"source": "live", "device": _dev("x")})


def test_tile_bars_are_the_tiles_and_hierarchy_bars_the_values():
    tiers = [("HBM", 4.8e12), ("host", 6.4e10)]
    fmts = [("fp32", 4, "FP32"), ("bf16", 2, "BF16")]
    need = {(t, f): b * 1e15 / bw for t, bw in tiers for f, b, _ in fmts}
    fig, ax = plot.tile_bars(need, tiers, fmts, "tiles")
    assert sorted(p.get_height() for p in ax.patches) == pytest.approx(sorted(need.values()))
    assert _labels(ax) == ["FP32 (4 B/element)", "BF16 (2 B/element)"]
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
        "device": _dev("CPU: Test", cores=4),
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
        "device": _dev("Tesla T4", "gpu"),
        "results": [{"pattern": "random", "slowdown": 1.9}, {"pattern": "4-way", "ways": 4, "slowdown": 3.8}],
    }
    fig, (ax, ax2) = plot.divergence(p, paths, [(run, "live")])
    np.testing.assert_allclose(ax.get_lines()[0].get_ydata(), paths[32])
    assert "random: live on Tesla T4" in _labels(ax)
    assert list(ax2.get_lines()[-1].get_ydata()) == [3.8]
    with pytest.raises(ValueError, match="run kinds"):
        plot.divergence(p, paths, [(run, "guess")])


def test_systolic_figures_draw_the_simulation():
    rng = np.random.default_rng(0)
    run = systolic.simulate(rng.standard_normal((3, 4)), rng.standard_normal((4, 4)), trace=True)
    fig, axes = plot.array_frames(run.row_in_cell)
    titles = [ax.get_title() for ax in axes.flat if ax.get_title()]
    assert titles == [f"cycle {t}: {int((f >= 0).sum())} busy" for t, f in enumerate(run.row_in_cell)]
    with pytest.raises(ValueError, match="no cycles"):
        plot.array_frames([])
    fig, (ax1, ax2) = plot.reuse_and_utilization([2, 4], [16, 128], [12, 48], [8, 32], 2, [1, 16], [0.06, 0.5], 16)
    assert list(ax1.get_lines()[0].get_ydata()) == [16, 128]
    assert ax2.get_lines()[0].get_label() == "m / (m + 2·16 − 2)"
    with pytest.raises(ValueError, match="equal lengths"):
        plot.reuse_and_utilization([2], [1, 2], [1], [1], 2, [1], [1], 16)


def test_balance_figures_use_the_spec_sheet():
    fig, (ax1, ax2) = plot.peak_vs_bandwidth(["A100 40GB SXM", "H100 SXM"], 3.0, 1.6)
    base, h100 = specs.get("A100 40GB SXM"), specs.get("H100 SXM")
    assert ax1.get_lines()[0].get_ydata()[-1] == pytest.approx(h100.peak_flops("bf16") / base.peak_flops("bf16"))
    ridges = sorted(ln.get_ydata()[0] for ln in ax2.get_lines())
    assert ridges == pytest.approx(sorted(a.ridge_point(a.default_precision()) for a in specs.all()))
    with pytest.raises(ValueError, match="two GPUs"):
        plot.peak_vs_bandwidth(["H100 SXM"], 3.0, 1.6)
    fig, ax = plot.kernels_vs_ridge({"ReLU": 0.25, "GEMM": 300.0}, [("H100 SXM", "bf16")])
    assert sorted(p.get_width() for p in ax.patches) == [0.25, 300.0]
    assert _labels(ax) == [f"ridge H100 SXM ({h100.ridge_point('bf16'):.0f})"]


def test_fusion_and_skinny_matmul():
    rows = [
        {"variant": v, "n": n, "seconds": 1e-9 * n * k}
        for k, v in enumerate(["expression", "fuse"], 1)
        for n in (1000, 10000)
    ]
    rec = {"device": _dev("CPU: Test"), "parameters": {"dtype": "float32"}, "results": rows}
    fig, (ax1, ax2) = plot.fusion(rec, e4_fusion.ACCESSES, e4_fusion.PASSES)
    assert sorted(p.get_height() for p in ax1.patches) == [
        4 * e4_fusion.ACCESSES["fuse"],
        4 * e4_fusion.ACCESSES["expression"],
    ]
    assert ax2.get_title() == "Measured: live on CPU: Test"
    skinny = [
        {
            "shape": "skinny",
            "dtype": "float32",
            "batch": b,
            "flops_per_s": 1e9 * b,
            "intensity": b / 2.0,
            "seconds": 1e-3,
        }
        for b in (1, 8, 64)
    ]
    mm = {"source": "live", "device": _dev("CPU: Test"), "results": skinny, "date": "2026-01-01"}
    batch = np.arange(1, 65)
    h100 = specs.get("H100 SXM")
    P = roofline.attainable(roofline.matmul_intensity(batch, 8192, 8192, 2), h100.peak_flops("bf16"), h100.bandwidth)
    fig, (ax1, ax2) = plot.skinny_matmul(mm, batch, [("H100 model", P, 32)], own=(1e12, 1e11, "own"))
    assert "this device's roofline (own)" in _labels(ax1)
    np.testing.assert_allclose(ax2.get_lines()[0].get_ydata(), P)


def test_format_figures():
    fig, ax = plot.bit_layout(np.pi, ["fp16", "bf16"])
    assert [t.get_text() for t in ax.texts].count("fp16") == 1
    assert sum(1 for p in ax.patches if p.get_width() > 0) == 32  # 16 + 16 bits drawn
    g = np.array([1e-9, 1e-3, 1.0])
    fig, axes = plot.loss_scaling(g, {1.0: {"zero": 0.5, "bad": 0.25}})
    assert axes[0].get_title() == "scale 1: 50.0% become 0, 25.0% off by >1 %"
    with pytest.raises(ValueError, match="at least one"):
        plot.loss_scaling(g, {})
    fig, ax = plot.running_sum({"fp16": np.minimum(np.arange(1, 3001), 2048.0)})
    assert _labels(ax) == ["fp16: stalls at 2048"]
    fig, ax = plot.peak_per_format(["H100 SXM"], ["tf32", "bf16"], ["TF32", "BF16"])
    assert list(ax.get_lines()[0].get_ydata()) == [specs.get("H100 SXM").peak_flops(p) for p in ("tf32", "bf16")]
    with pytest.raises(ValueError, match="labels"):
        plot.peak_per_format(["H100 SXM"], ["tf32"], [])
    series = [("live on CPU: Test", {"fp32": {"rel_error": 1e-7}, "bf16": {"rel_error_emulated": 3e-3}})]
    fig, ax = plot.format_accuracy(series, ["fp32", "bf16"])
    assert sorted(p.get_height() for p in ax.patches) == pytest.approx([1e-7, 3e-3])
    assert [p.get_hatch() for p in ax.patches] == [None, "///"]
    assert formats.info("fp16").max == 65504.0
