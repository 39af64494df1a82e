"""Figures of scaling out (hwlib.plot.scaling, pitfalls.dp_hiding): all-reduce traffic, ZeRO memory,
pipeline bubbles, DDP efficiency and the tokens that hide the all-reduce, each the formula it names."""

import numpy as np
import pytest

from figure_axes import line_named
from hwlib import flops, interconnect, memory, parallel, plot, specs


def test_allreduce_traffic_formulas_and_length_check():
    ns = np.arange(2, 6)
    fig, ax = plot.allreduce_traffic(ns, 2 * (ns - 1) / ns, ns - 1.0)
    np.testing.assert_allclose(line_named(ax, "ring, formula 2(N-1)/N").get_ydata(), [1.0, 4 / 3, 1.5, 1.6])
    with pytest.raises(ValueError, match="one value per N"):
        plot.allreduce_traffic(ns, [1.0], ns - 1.0)


def test_zero_memory_curves_are_zero_bytes_per_device_and_gpu_memory_is_marked():
    fig, ax = plot.zero_memory(7.5e9, mark_devices=64, devices=[1, 8, 64])
    for stage, name in enumerate(plot.scaling.ZERO_NAMES):
        want = [memory.zero_bytes_per_device(7.5e9, d, stage) for d in (1, 8, 64)]
        np.testing.assert_allclose(line_named(ax, name).get_ydata(), want)
    h100 = specs.get("H100 SXM")
    gpu = [ln for ln in ax.get_lines() if ln.get_label().startswith("H100 SXM memory")]
    assert gpu and gpu[0].get_ydata()[0] == h100.memory_bytes
    assert "7.5B-parameter" in ax.get_title()


def test_pipeline_bubble_curves_follow_the_formula():
    fig, ax = plot.pipeline_bubble(stages=[4, 16], interleaved=(16, 4), max_microbatches=8)
    np.testing.assert_allclose(
        line_named(ax, "p = 4 stages").get_ydata(), [parallel.pipeline_bubble_fraction(4, m) for m in range(1, 9)]
    )
    dashed = line_named(ax, "p = 16, interleaved (v = 4)")
    assert dashed.get_ydata()[-1] == pytest.approx(parallel.pipeline_bubble_fraction(16, 8, virtual_stages=4))
    fig, ax = plot.pipeline_bubble(stages=[4], interleaved=None, max_microbatches=4)
    assert [ln.get_label() for ln in ax.get_lines()] == ["p = 4 stages"]


def test_ddp_efficiency_never_beats_ideal_overlap():
    links = interconnect.tiers("H100 SXM")
    fig, ax = plot.ddp_efficiency(8e9, 64, links, peak_flops=989e12, mfu=0.4, n_buckets=10, tokens=[1e3, 1e5])
    for link in links:
        ddp, ideal, none = (line_named(ax, f"{link.name}, {k}").get_ydata() for k in ("DDP", "ideal", "none"))
        assert np.all(none <= ddp + 1e-12) and np.all(ddp <= ideal + 1e-12)
        assert np.all((0 < none) & (ideal <= 1))


def test_dp_hiding_vertical_is_where_backward_equals_the_allreduce():
    n, g, pi, u = 7e9, 16, 989e12, 0.4
    fig, ax = plot.dp_hiding(n, g, {"IB": 50e9}, peak_flops=pi, mfu=u)
    t_ar = parallel.ring_allreduce_time_s(2 * n, g, 50e9)
    x = [ln.get_xdata()[0] for ln in ax.get_lines() if ln.get_linestyle() == ":"][0]
    assert 2 / 3 * flops.training_time_s(flops.training_flops(n, x), pi, u) == pytest.approx(t_ar)
