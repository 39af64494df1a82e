"""Figures of chapters 6-10 (hwlib.plot.intensity, scaling, budgets, serving, pitfalls, ticks): each
draws what the hwlib formula it names computes, labels where its numbers come from, and refuses bad
input. The chapters' cells are checked by tests/book/test_chapter_code.py; calculators.md and gallery.md here."""

import sys
from pathlib import Path

import matplotlib
import numpy as np
import pytest

from hwlib import flops, interconnect, memory, models, parallel, plot, specs, units

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    matplotlib.pyplot.close("all")


def _line(ax, label):
    found = [ln for ln in ax.get_lines() if ln.get_label() == label]
    assert found, f"no line {label!r}; have {[ln.get_label() for ln in ax.get_lines()]}"
    return found[0]


def test_matmul_intensity_vs_size_ridges_use_each_parts_best_16_bit_format():
    fig, ax = plot.matmul_intensity_vs_size(["T4", "H100 SXM"], sizes=[16, 1024])
    t4, h100 = specs.get("T4"), specs.get("H100 SXM")
    assert _line(ax, "ridge point T4 (fp16, spec sheet)").get_ydata()[0] == pytest.approx(t4.ridge_point("fp16"))
    assert _line(ax, "ridge point H100 SXM (bf16, spec sheet)").get_ydata()[0] == pytest.approx(
        h100.ridge_point("bf16")
    )
    curve = _line(ax, "square matmul, bf16: 2N/(3·2)")
    np.testing.assert_allclose(curve.get_ydata(), 2 * np.array([16, 1024]) / (3 * 2))


def test_bandwidth_tiers_bars_are_the_spec_and_link_bandwidths():
    fig, ax = plot.bandwidth_tiers("H100 SXM")
    widths = sorted(p.get_width() for p in ax.patches)
    want = sorted([specs.get("H100 SXM").bandwidth] + [ln.bandwidth for ln in interconnect.tiers("H100 SXM")])
    np.testing.assert_allclose(widths, want)
    assert "H100 SXM" in ax.get_title() and ax.get_xscale() == "log"


def test_allreduce_traffic_formulas_and_length_check():
    ns = np.arange(2, 6)
    fig, ax = plot.allreduce_traffic(ns, 2 * (ns - 1) / ns, ns - 1.0)
    np.testing.assert_allclose(_line(ax, "ring, formula 2(N-1)/N").get_ydata(), [1.0, 4 / 3, 1.5, 1.6])
    with pytest.raises(ValueError, match="one value per N"):
        plot.allreduce_traffic(ns, [1.0], ns - 1.0)


def test_zero_memory_curves_are_zero_bytes_per_device_and_gpu_memory_is_marked():
    fig, ax = plot.zero_memory(7.5e9, mark_devices=64, devices=[1, 8, 64])
    for stage, name in enumerate(plot.scaling.ZERO_NAMES):
        want = [memory.zero_bytes_per_device(7.5e9, d, stage) for d in (1, 8, 64)]
        np.testing.assert_allclose(_line(ax, name).get_ydata(), want)
    h100 = specs.get("H100 SXM")
    gpu = [ln for ln in ax.get_lines() if ln.get_label().startswith("H100 SXM memory")]
    assert gpu and gpu[0].get_ydata()[0] == h100.memory_bytes
    assert "7.5B-parameter" in ax.get_title()


def test_pipeline_bubble_curves_follow_the_formula():
    fig, ax = plot.pipeline_bubble(stages=[4, 16], interleaved=(16, 4), max_microbatches=8)
    np.testing.assert_allclose(
        _line(ax, "p = 4 stages").get_ydata(), [parallel.pipeline_bubble_fraction(4, m) for m in range(1, 9)]
    )
    dashed = _line(ax, "p = 16, interleaved (v = 4)")
    assert dashed.get_ydata()[-1] == pytest.approx(parallel.pipeline_bubble_fraction(16, 8, virtual_stages=4))
    fig, ax = plot.pipeline_bubble(stages=[4], interleaved=None, max_microbatches=4)
    assert [ln.get_label() for ln in ax.get_lines()] == ["p = 4 stages"]


def test_ddp_efficiency_never_beats_ideal_overlap():
    links = interconnect.tiers("H100 SXM")
    fig, ax = plot.ddp_efficiency(8e9, 64, links, peak_flops=989e12, mfu=0.4, n_buckets=10, tokens=[1e3, 1e5])
    for link in links:
        ddp, ideal, none = (_line(ax, f"{link.name}, {k}").get_ydata() for k in ("DDP", "ideal", "none"))
        assert np.all(none <= ddp + 1e-12) and np.all(ddp <= ideal + 1e-12)
        assert np.all((0 < none) & (ideal <= 1))


def test_training_state_bars_sum_to_16_bytes_per_parameter():
    fig, ax = plot.training_state(["Llama 2 7B"])
    assert sum(p.get_width() for p in ax.patches) == pytest.approx(16 * models.get("Llama 2 7B").n_params())
    assert any("80.0 GiB" in t.get_text() for t in ax.get_legend().get_texts())


def test_activations_and_kv_curves_are_the_memory_formulas():
    l2 = models.get("Llama 2 7B")
    fig, ax = plot.activations_vs_sequence("Llama 2 7B")
    flash = _line(ax, "no dropout, FlashAttention (Llama as trained)")
    assert flash.get_xdata()[-1] == l2.max_context
    assert flash.get_ydata()[-1] == pytest.approx(memory.activation_bytes_for(l2, l2.max_context))
    fig, ax = plot.kv_cache_vs_context(["Llama 2 7B", "Llama 3 8B"])
    l3 = models.get("Llama 3 8B")
    gqa = _line(ax, f"Llama 3 8B (GQA {l3.n_heads}/{l3.n_kv_heads}, to {l3.max_context:,})")
    assert gqa.get_ydata()[-1] == pytest.approx(memory.kv_cache_bytes_for(l3, l3.max_context))


def test_training_and_inference_memory_in_gb():
    fig, ax = plot.training_memory("Llama 2 7B", seq_len=4096)
    l2 = models.get("Llama 2 7B")
    state_gb = memory.training_state_bytes(l2.n_params()) / units.GB
    lefts = sorted({round(p.get_x(), 6) for p in ax.patches})
    assert max(lefts) == pytest.approx(state_gb, rel=1e-6)  # the activation bars start after the 16N state
    fig, ax = plot.inference_memory(["Llama 3 8B"], context=4096, max_batch=4)
    total = _line(ax, "Llama 3 8B: weights + KV cache").get_ydata()
    l3 = models.get("Llama 3 8B")
    want = memory.weights_bytes(l3.n_params(), "bf16") + memory.kv_cache_bytes_for(l3, 4096, batch=np.arange(1, 5))
    np.testing.assert_allclose(total, want / units.GB)


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
    roof = _line(ax, "compute roof π / 2N").get_ydata()[0]
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
    model = _line(ax, "model: Q / (t0 + Q/β)").get_ydata()
    assert model[-1] == pytest.approx(1e9 / (1e-5 + 1e9 / 1e11))
    assert "Test CPU" in ax.get_title()
    with pytest.raises(ValueError, match="equal-length"):
        plot.overhead_exposure([1e3], [1e-5], "x")


def test_dp_hiding_vertical_is_where_backward_equals_the_allreduce():
    n, g, pi, u = 7e9, 16, 989e12, 0.4
    fig, ax = plot.dp_hiding(n, g, {"IB": 50e9}, peak_flops=pi, mfu=u)
    t_ar = parallel.ring_allreduce_time_s(2 * n, g, 50e9)
    x = [ln.get_xdata()[0] for ln in ax.get_lines() if ln.get_linestyle() == ":"][0]
    assert 2 / 3 * flops.training_time_s(flops.training_flops(n, x), pi, u) == pytest.approx(t_ar)


def test_backward_hides_comm_tokens_formula_and_errors():
    assert parallel.backward_hides_comm_tokens(1.0, 1e9, 1e15, 0.5) == pytest.approx(1.0 * 0.5e15 / (2 / 3 * 6e9))
    with pytest.raises(ValueError, match="mfu"):
        parallel.backward_hides_comm_tokens(1.0, 1e9, 1e15, 0)


def test_range_loss_bars_are_the_lost_fractions():
    grads = np.array([1e-9, 1e-6, 1e-3, 1.0])
    lost = {"gradients, fp16": 0.25, "gradients, fp16 + loss scale": 0.0}
    fig, (ax1, ax2) = plot.range_loss(grads, lost, range_formats=["fp16", "bf16"])
    assert [p.get_width() for p in ax2.patches] == pytest.approx([25.0, 0.0])
    assert [t.get_text() for t in ax1.get_yticklabels()] == ["fp16", "bf16"]


def test_label_decades_only():
    fig, ax = plot.roofline(["H100 SXM"])
    assert plot.label_decades_only(ax) is ax
    assert isinstance(ax.yaxis.get_minor_formatter(), matplotlib.ticker.NullFormatter)
    with pytest.raises(ValueError, match="axis must be"):
        plot.label_decades_only(ax, "z")


def test_format_pct():
    assert units.format_pct(0.4) == "40 %" and units.format_pct(0.01234, 2) == "1.23 %"
    with pytest.raises(ValueError, match="decimals"):
        units.format_pct(0.4, 1.5)


@pytest.mark.parametrize("page", ["calculators.md", "gallery.md"])
def test_book_pages_outside_the_chapters_draw_through_hwlib(page):
    """tests/book/test_chapter_code.py checks the ten chapters; these two pages run code cells too."""
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import extract_cells
    finally:
        sys.path.pop(0)
    source = extract_cells.page_source(ROOT / page)
    assert extract_cells.raw_matplotlib_calls(source) == [], "draw figures with hwlib.plot functions"
    assert '"bf16" in' not in source, "use Accelerator.default_precision() for the best 16-bit format"
    assert "import yaml" not in source and "yaml.safe_load" not in source, "read hwlib/data through its hwlib loader"


def test_finish_axes():
    fig, ax = matplotlib.pyplot.subplots()
    ax.plot([1, 2, 4], [1, 2, 3], label="x")
    assert (
        plot.finish_axes(ax, "batch", "rate", "t", xbase2=True, yformatter=matplotlib.ticker.PercentFormatter(1.0))
        is ax
    )
    assert (ax.get_xlabel(), ax.get_ylabel(), ax.get_title(), ax.get_xscale()) == ("batch", "rate", "t", "log")
    assert ax.get_legend() is not None and isinstance(
        ax.yaxis.get_major_formatter(), matplotlib.ticker.PercentFormatter
    )
    fig, ax = matplotlib.pyplot.subplots()
    plot.finish_axes(ax, "a", "b", "c", legend_fontsize=None)
    assert ax.get_legend() is None and ax.get_xscale() == "linear"


def test_matmul_bytes_with_matmul_flops_gives_matmul_intensity():
    from hwlib import roofline

    assert roofline.matmul_bytes(64, 8192, 8192, 2) == (64 * 8192 * 2 + 8192 * 8192) * 2
    assert flops.matmul_flops(64, 8192, 4096) / roofline.matmul_bytes(64, 8192, 4096, "bf16") == pytest.approx(
        roofline.matmul_intensity(64, 8192, 4096, 2)
    )
