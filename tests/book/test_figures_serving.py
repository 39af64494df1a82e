"""Figures of inference and serving (hwlib.plot.serving, pitfalls.overhead_exposure): MFU against batch,
the decode bound and ceiling, launch overhead; each labels where its numbers come from."""

import pytest

from figure_axes import line_named
from hwlib import flops, memory, models, plot, specs


def test_mfu_vs_batch_labels_the_live_device_and_refuses_no_data():
    fig, ax = plot.mfu_vs_batch({1: 0.1, 64: 0.5}, device="Test CPU", peak_kind="practical peak")
    assert "Test CPU" in ax.get_title() and "live" in ax.get_lines()[0].get_label()
    with pytest.raises(ValueError, match="at least one batch"):
        plot.mfu_vs_batch({}, device="x", peak_kind="y")


def test_decode_bound_marks_batches_that_do_not_fit_as_hollow():
    fig, ax = plot.decode_bound("Llama 3 8B", "H100 SXM", contexts=[0, 4096, None])
    hollow = [ln for ln in ax.get_lines() if ln.get_markerfacecolor() == "white"]
    assert hollow, "at 4k/8k tokens per sequence a batch of 1024 cannot fit on one H100"
    l3, h100 = models.get("Llama 3 8B"), specs.get("H100 SXM")
    w = memory.weights_bytes(l3.n_params(), "bf16")
    context_of_colour = {plot.color(1): 4096, plot.color(2): l3.max_context}
    for ln in hollow:
        kv = memory.kv_cache_bytes_for(l3, context_of_colour[ln.get_color()])
        for b in ln.get_xdata():
            assert not memory.fits(w + int(b) * kv, h100.memory_bytes)
    roof = line_named(ax, "compute roof π / 2N").get_ydata()[0]
    assert roof == pytest.approx(h100.peak_flops("bf16") / flops.forward_flops(l3.n_params(), 1))


def test_decode_ceiling_is_bandwidth_over_weights_for_every_part_that_fits():
    fig, ax = plot.decode_ceiling_vs_peak("Llama 3 8B", accelerators=["T4", "H100 SXM", "H200"])
    w = memory.weights_bytes(models.get("Llama 3 8B").n_params(), "bf16")
    drawn = {ln.get_label(): (ln.get_xdata()[0], ln.get_ydata()[0]) for ln in ax.get_lines()}
    assert "T4" not in drawn  # 16 GiB does not hold 16 GB of weights with headroom
    h200 = specs.get("H200")
    assert drawn["H200"] == pytest.approx((h200.peak_flops("bf16") / 1e12, h200.bandwidth / w))


def test_overhead_exposure_model_and_bad_input():
    fig, ax = plot.overhead_exposure([1e3, 1e6, 1e9], [1e-5, 2e-5, 1e-2], "Test CPU")
    model = line_named(ax, "model: Q / (t0 + Q/β)").get_ydata()
    assert model[-1] == pytest.approx(1e9 / (1e-5 + 1e9 / 1e11))
    assert "Test CPU" in ax.get_title()
    with pytest.raises(ValueError, match="equal-length"):
        plot.overhead_exposure([1e3], [1e-5], "x")
