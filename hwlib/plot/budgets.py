"""Memory-budget figures (chapters 8 and 9): training state, activations and KV cache against one
GPU's memory. Every byte count comes from ``hwlib.memory`` formulas with the shapes of
``hwlib.models``; the GPU's memory from the spec sheet. Computed, not measured. Each returns (fig, ax).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import EngFormatter

from hwlib import memory, models, specs, units
from hwlib.plot._base import MARKERS, color
from hwlib.plot.ticks import finish_axes

STATE_LABELS = {
    "weights": "BF16 weights (2 B)",
    "gradients": "BF16 gradients (2 B)",
    "master": "FP32 master weights (4 B)",
    "adam": "Adam moments, FP32 (8 B)",
}


def _gpu_line(ax, acc, vertical: bool, scale: float = 1.0, label: str | None = None, **style):
    line = ax.axvline if vertical else ax.axhline
    style = {"color": "black", "ls": "--", **style}
    line(acc.memory_bytes / scale, label=label or f"{acc.name} memory", **style)


def training_state(model_names, accelerator: str = "H100 SXM"):
    """Stacked horizontal bars of the mixed-precision AdamW training state of each model
    (``memory.training_state_breakdown``: 2 + 2 + 4 + 8 bytes per parameter), with the memory of
    `accelerator` dashed. Linear axis in bytes. Returns (fig, ax)."""
    acc = specs.get(accelerator)
    fig, ax = plt.subplots(figsize=(6.4, 2.9), layout="constrained")
    for row, name in enumerate(model_names):
        br = memory.training_state_breakdown(models.get(name).n_params())
        left = 0.0
        for i, part in enumerate(STATE_LABELS):
            ax.barh(row, br[part], left=left, color=color(i), label=STATE_LABELS[part] if row == 0 else None)
            left += br[part]
    _gpu_line(
        ax, acc, True, lw=1, label=f"one {acc.name.split()[0]} ({units.format_bytes(acc.memory_bytes, binary=True)})"
    )
    ax.set_yticks(range(len(model_names)), model_names)
    ax.xaxis.set_major_formatter(EngFormatter(unit="B"))
    ax.set_xlabel("bytes")
    ax.set_title("Training state, 16 bytes per parameter (formula)")
    ax.legend(fontsize=7, loc="lower right")
    return fig, ax


def activations_vs_sequence(model: str = "Llama 2 7B"):
    """Activations kept for the backward pass at micro-batch 1 against sequence length (512 ... the
    model's context, log2 axis) four ways: Korthikanti's GPT-3 layer as is
    (``memory.activation_bytes``), without dropout with scores stored, the model as trained
    (``memory.activation_bytes_for``: no dropout, FlashAttention) and full recomputation; the
    16-bytes-per-parameter training state dashed. Returns (fig, ax)."""
    m = models.get(model)
    seq = 2 ** np.arange(9, int(np.log2(m.max_context)) + 1)
    shape = (m.d_model, m.n_layers, m.n_heads)
    variants = [
        ("GPT-3 layer as-is: " + memory.activation_formula(), lambda s: memory.activation_bytes(s, 1, *shape)),
        ("no dropout, scores stored", lambda s: memory.activation_bytes_for(m, s, attention="standard")),
        ("no dropout, FlashAttention (Llama as trained)", lambda s: memory.activation_bytes_for(m, s)),
        (
            "full recomputation: " + memory.activation_formula("full"),
            lambda s: memory.activation_bytes(s, 1, *shape, recompute="full"),
        ),
    ]
    fig, ax = plt.subplots(figsize=(6.4, 3.6), layout="constrained")
    for i, (label, fn) in enumerate(variants):
        ax.loglog(seq, [fn(int(s)) for s in seq], "o", ms=4, color=color(i), ls=["-", "--", "-.", ":"][i], label=label)
    ax.axhline(
        memory.training_state_bytes(m.n_params()), color="black", ls="--", lw=1, label="training state, 16 B/param"
    )
    finish_axes(
        ax,
        "sequence length s (tokens)",
        "activations kept for backward",
        f"{m.name} activations, micro-batch 1 (formula)",
        xbase2=True,
        yformatter=EngFormatter(unit="B"),
    )
    return fig, ax


def kv_cache_vs_context(model_names, accelerator: str = "H100 SXM"):
    """KV cache of one sequence in bf16 (``memory.kv_cache_bytes_for``) against context length,
    512 ... each model's own context window (log-log), MHA or GQA named in the legend, with the
    memory of `accelerator` dashed. Returns (fig, ax)."""
    acc = specs.get(accelerator)
    fig, ax = plt.subplots(figsize=(6.4, 3.8), layout="constrained")
    for i, name in enumerate(model_names):
        s = models.get(name)
        ctx = 2 ** np.arange(9, int(np.log2(s.max_context)) + 1)
        kind = "MHA" if s.n_kv_heads == s.n_heads else f"GQA {s.n_heads}/{s.n_kv_heads}"
        ax.loglog(
            ctx,
            memory.kv_cache_bytes_for(s, ctx),
            marker=MARKERS[i],
            ms=4,
            color=color(i),
            label=f"{name} ({kind}, to {s.max_context:,})",
        )
    _gpu_line(
        ax,
        acc,
        False,
        lw=1,
        label=f"{acc.name.split()[0]} memory ({units.format_bytes(acc.memory_bytes, binary=True)})",
    )
    finish_axes(
        ax,
        "context length (tokens)",
        "KV cache per sequence (bf16)",
        "KV cache vs context length (formula)",
        xbase2=True,
        yformatter=EngFormatter(unit="B"),
    )
    return fig, ax


def training_memory(model: str, seq_len: int, micro_batch: int = 1, accelerator: str = "H100 SXM"):
    """Stacked bars in GB (1e9 bytes): the 16-bytes-per-parameter state of `model`
    (``memory.training_state_breakdown``) plus its activations counted four ways — the GPT-3 formula
    per recompute mode (``memory.activation_bytes``) and the model as trained
    (``memory.activation_bytes_for``: no dropout, FlashAttention) — against the memory of
    `accelerator`. Returns (fig, ax)."""
    m, acc = models.get(model), specs.get(accelerator)
    parts = memory.training_state_breakdown(m.n_params())
    acts = {
        mode: memory.activation_bytes(seq_len, micro_batch, m.d_model, m.n_layers, m.n_heads, recompute=mode)
        for mode in memory.RECOMPUTE
    }
    fig, ax = plt.subplots(figsize=(7.6, 3.6), layout="constrained")
    labels = [f"GPT-3 formula, recompute = {mode}" for mode in acts] + ["Llama as trained: no dropout, FlashAttention"]
    drawn = [*acts.values(), memory.activation_bytes_for(m, seq_len, micro_batch)]
    bottom = np.zeros(len(labels))
    for i, (part, nbytes) in enumerate(parts.items()):
        ax.barh(labels, [nbytes / units.GB] * len(labels), left=bottom, color=color(i), label=part)
        bottom += nbytes / units.GB
    ax.barh(labels, [a / units.GB for a in drawn], left=bottom, color=color(5), label="activations")
    _gpu_line(ax, acc, True, scale=units.GB)
    ax.set_xlabel("GB (1e9 bytes)")
    ax.set_title(f"{m.name}, s = {seq_len}, B = {micro_batch}: training memory on one GPU (computed)")
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return fig, ax


def inference_memory(model_names, context: int, max_batch: int = 128, accelerator: str = "H100 SXM"):
    """Weights plus KV cache in bf16, GB (1e9 bytes), against the number of sequences served at
    `context` tokens each (1 ... `max_batch`): ``memory.weights_bytes`` (dotted, alone) +
    ``memory.kv_cache_bytes_for``, with the memory of `accelerator` dashed. Returns (fig, ax)."""
    acc = specs.get(accelerator)
    batch = np.arange(1, max_batch + 1)
    fig, ax = plt.subplots(figsize=(6.8, 3.8), layout="constrained")
    for i, name in enumerate(model_names):
        m = models.get(name)
        w = memory.weights_bytes(m.n_params(), "bf16")
        kv = memory.kv_cache_bytes_for(m, context, batch=batch)
        ax.plot(batch, (w + kv) / units.GB, color=color(i), lw=2, label=f"{name}: weights + KV cache")
        ax.axhline(w / units.GB, color=color(i), ls=":", lw=1)
    _gpu_line(ax, acc, False, scale=units.GB)
    ax.set_xlabel(f"sequences served at once (context {context} tokens)")
    ax.set_ylabel("GB (1e9 bytes)")
    ax.set_title("Inference memory in bf16 (computed)")
    ax.legend(fontsize="small")
    return fig, ax
