"""Figures of memory budgets (hwlib.plot.budgets): training state, activations, KV cache and
inference memory, each the hwlib.memory formula it names."""

import numpy as np
import pytest

from figure_axes import line_named
from hwlib import memory, models, plot, units


def test_training_state_bars_sum_to_16_bytes_per_parameter():
    fig, ax = plot.training_state(["Llama 2 7B"])
    assert sum(p.get_width() for p in ax.patches) == pytest.approx(16 * models.get("Llama 2 7B").n_params())
    assert any("80.0 GiB" in t.get_text() for t in ax.get_legend().get_texts())


def test_activations_and_kv_curves_are_the_memory_formulas():
    l2 = models.get("Llama 2 7B")
    fig, ax = plot.activations_vs_sequence("Llama 2 7B")
    flash = line_named(ax, "no dropout, FlashAttention (Llama as trained)")
    assert flash.get_xdata()[-1] == l2.max_context
    assert flash.get_ydata()[-1] == pytest.approx(memory.activation_bytes_for(l2, l2.max_context))
    fig, ax = plot.kv_cache_vs_context(["Llama 2 7B", "Llama 3 8B"])
    l3 = models.get("Llama 3 8B")
    gqa = line_named(ax, f"Llama 3 8B (GQA {l3.n_heads}/{l3.n_kv_heads}, to {l3.max_context:,})")
    assert gqa.get_ydata()[-1] == pytest.approx(memory.kv_cache_bytes_for(l3, l3.max_context))


def test_training_and_inference_memory_in_gb():
    fig, ax = plot.training_memory("Llama 2 7B", seq_len=4096)
    l2 = models.get("Llama 2 7B")
    state_gb = memory.training_state_bytes(l2.n_params()) / units.GB
    lefts = sorted({round(p.get_x(), 6) for p in ax.patches})
    assert max(lefts) == pytest.approx(state_gb, rel=1e-6)  # the activation bars start after the 16N state
    fig, ax = plot.inference_memory(["Llama 3 8B"], context=4096, max_batch=4)
    total = line_named(ax, "Llama 3 8B: weights + KV cache").get_ydata()
    l3 = models.get("Llama 3 8B")
    want = memory.weights_bytes(l3.n_params(), "bf16") + memory.kv_cache_bytes_for(l3, 4096, batch=np.arange(1, 5))
    np.testing.assert_allclose(total, want / units.GB)
