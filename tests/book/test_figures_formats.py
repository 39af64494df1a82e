"""Figures of number formats (hwlib.plot.formats, pitfalls.range_loss): bit layouts, loss scaling,
running sums, peaks per format, accuracy per format and the range each format loses."""

import numpy as np
import pytest

from figure_axes import legend_texts
from hwlib import formats, plot, specs


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
    assert legend_texts(ax) == ["fp16: stalls at 2048"]
    fig, ax = plot.peak_per_format(["H100 SXM"], ["tf32", "bf16"], ["TF32", "BF16"])
    assert list(ax.get_lines()[0].get_ydata()) == [specs.get("H100 SXM").peak_flops(p) for p in ("tf32", "bf16")]
    with pytest.raises(ValueError, match="labels"):
        plot.peak_per_format(["H100 SXM"], ["tf32"], [])
    series = [("live on CPU: Test", {"fp32": {"rel_error": 1e-7}, "bf16": {"rel_error_emulated": 3e-3}})]
    fig, ax = plot.format_accuracy(series, ["fp32", "bf16"])
    assert sorted(p.get_height() for p in ax.patches) == pytest.approx([1e-7, 3e-3])
    assert [p.get_hatch() for p in ax.patches] == [None, "///"]
    assert formats.info("fp16").max == 65504.0


def test_range_loss_bars_are_the_lost_fractions():
    grads = np.array([1e-9, 1e-6, 1e-3, 1.0])
    lost = {"gradients, fp16": 0.25, "gradients, fp16 + loss scale": 0.0}
    fig, (ax1, ax2) = plot.range_loss(grads, lost, range_formats=["fp16", "bf16"])
    assert [p.get_width() for p in ax2.patches] == pytest.approx([25.0, 0.0])
    assert [t.get_text() for t in ax1.get_yticklabels()] == ["fp16", "bf16"]
