"""Figures of compute against bandwidth (hwlib.plot.systolic, balance, intensity): systolic arrays,
peak against bandwidth, kernels against the ridge, fusion and skinny matmuls, intensity against size;
each draws what the simulator or spec sheet gives and refuses bad input."""

import numpy as np
import pytest

from figure_axes import fake_device, legend_texts, line_named
from hwlib import plot, roofline, specs, systolic
from hwlib.bench import e4_fusion


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
    assert legend_texts(ax) == [f"ridge H100 SXM ({h100.ridge_point('bf16'):.0f})"]


def test_fusion_and_skinny_matmul():
    rows = [
        {"variant": v, "n": n, "seconds": 1e-9 * n * k}
        for k, v in enumerate(["expression", "fuse"], 1)
        for n in (1000, 10000)
    ]
    rec = {"device": fake_device("CPU: Test"), "parameters": {"dtype": "float32"}, "results": rows}
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
    mm = {"source": "live", "device": fake_device("CPU: Test"), "results": skinny, "date": "2026-01-01"}
    batch = np.arange(1, 65)
    h100 = specs.get("H100 SXM")
    P = roofline.attainable(roofline.matmul_intensity(batch, 8192, 8192, 2), h100.peak_flops("bf16"), h100.bandwidth)
    fig, (ax1, ax2) = plot.skinny_matmul(mm, batch, [("H100 model", P, 32)], own=(1e12, 1e11, "own"))
    assert "this device's roofline (own)" in legend_texts(ax1)
    np.testing.assert_allclose(ax2.get_lines()[0].get_ydata(), P)


def test_matmul_intensity_vs_size_ridges_use_each_parts_best_16_bit_format():
    fig, ax = plot.matmul_intensity_vs_size(["T4", "H100 SXM"], sizes=[16, 1024])
    t4, h100 = specs.get("T4"), specs.get("H100 SXM")
    assert line_named(ax, "ridge point T4 (fp16, spec sheet)").get_ydata()[0] == pytest.approx(t4.ridge_point("fp16"))
    assert line_named(ax, "ridge point H100 SXM (bf16, spec sheet)").get_ydata()[0] == pytest.approx(
        h100.ridge_point("bf16")
    )
    curve = line_named(ax, "square matmul, bf16: 2N/(3·2)")
    np.testing.assert_allclose(curve.get_ydata(), 2 * np.array([16, 1024]) / (3 * 2))
