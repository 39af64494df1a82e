"""Throughput figures of training and serving (chapters 8, 9 and 12): measured MFU against batch size,
the roofline bounds of decoding, the simulated latency–throughput curve of a serving engine and the
goodput of a long run against its checkpoint interval. Bounds from ``hwlib.flops`` and ``hwlib.memory`` with spec-sheet
peaks and bandwidths (not measurements); the MFU curve is a live measurement labelled with its
device. Each function returns (fig, ax).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import EngFormatter, FuncFormatter, PercentFormatter

from hwlib import flops, goodput, memory, models, specs, units
from hwlib.plot._base import LINESTYLES, MARKERS, color, source_label
from hwlib.plot.ticks import finish_axes


def mfu_vs_batch(mfu_by_batch: dict, device: str, peak_kind: str):
    """Measured model-FLOPs utilisation (a fraction) against batch size (log2 axis), labelled as a
    live measurement on `device`; `peak_kind` says which peak the MFU divides by. Returns (fig, ax)."""
    if not mfu_by_batch:
        raise ValueError("mfu_by_batch must map at least one batch size to its measured MFU")
    batches = list(mfu_by_batch)
    fig, ax = plt.subplots(figsize=(6.4, 3.6), layout="constrained")
    ax.plot(batches, [mfu_by_batch[b] for b in batches], "o-", color=color(0), lw=2, label=source_label("live", device))
    ax.set_xscale("log", base=2)
    ax.set_ylim(0, 1.05)
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_xlabel("batch size B (rows per step)")
    ax.set_ylabel("MFU = 6PB / t / peak")
    ax.set_title(f"MLP training step on {device}\npeak: {peak_kind}", fontsize="medium")
    ax.legend(fontsize=8)
    return fig, ax


def decode_bound(
    model: str = "Llama 3 8B",
    accelerator: str = "H100 SXM",
    contexts=(0, 4096, None),
    batches=None,
    precision: str = "bf16",
):
    """Upper bound on decode tokens/s of the whole batch against batch B (default 1 ... 1024):
    min(B β / (W + B Q_KV), π / 2N) (``flops.decode_tokens_per_s_bound``), one curve per KV-cache
    length in `contexts` (0: none; None: the model's context window). Batches whose weights plus KV
    cache do not fit (``memory.fits``) are drawn dotted with hollow markers. Returns (fig, ax)."""
    m, acc = models.get(model), specs.get(accelerator)
    n = m.n_params()
    w = memory.weights_bytes(n, precision)
    batches = 2 ** np.arange(0, 11) if batches is None else np.asarray(batches)
    compute_roof = acc.peak_flops(precision) / flops.forward_flops(n, 1)
    fig, ax = plt.subplots(figsize=(6.4, 3.8), layout="constrained")
    for i, ctx in enumerate(m.max_context if c is None else c for c in contexts):
        kv = memory.kv_cache_bytes_for(m, ctx) if ctx else 0.0
        roof = np.minimum(flops.decode_tokens_per_s_bound(w, acc.bandwidth, batch=batches, kv_bytes=kv), compute_roof)
        ok = np.array([memory.fits(w + int(b) * kv, acc.memory_bytes) for b in batches])
        label = "no KV cache" if not ctx else f"KV cache of {ctx:,} tokens per sequence"
        ax.loglog(batches[ok], roof[ok], "o-", ms=4, color=color(i), label=label)
        if (~ok).any():
            last = np.flatnonzero(ok).max() if ok.any() else 0  # join the dotted part to the last feasible point
            ax.loglog(batches[last:], roof[last:], ":", color=color(i))
            first_hollow = not any(h.get_label().startswith("does not fit") for h in ax.get_lines())
            ax.loglog(
                batches[~ok],
                roof[~ok],
                "o",
                ms=4,
                mfc="white",
                color=color(i),
                label="does not fit in the GPU's memory" if first_hollow else None,
            )
    ax.axhline(compute_roof, color="black", ls="--", lw=1, label="compute roof π / 2N")
    finish_axes(
        ax,
        "batch B (sequences decoded together)",
        "tokens/s, whole batch (bound)",
        f"{m.name} decode on {acc.name}: roofline bounds (spec sheet)",
        xbase2=True,
        yformatter=EngFormatter(unit="tok/s"),
    )
    return fig, ax


def decode_ceiling_vs_peak(model: str = "Llama 3 8B", accelerators=None):
    """Batch-1 decode ceiling β / W (tokens/s, ``flops.decode_tokens_per_s_bound``, bf16 weights) of
    each accelerator (default: every part of the spec sheet) whose memory holds the weights
    (``memory.fits``), against its dense peak in its best 16-bit format
    (``Accelerator.default_precision()``), in TFLOP/s. Returns (fig, ax)."""
    m = models.get(model)
    w = memory.weights_bytes(m.n_params(), "bf16")
    parts = specs.all() if accelerators is None else [specs.get(a) for a in accelerators]
    fig, ax = plt.subplots(figsize=(6.8, 3.8), layout="constrained")
    for i, acc in enumerate(a for a in parts if memory.fits(w, a.memory_bytes)):
        tps = flops.decode_tokens_per_s_bound(w, acc.bandwidth)
        ax.plot(
            acc.peak_flops(acc.default_precision()) / units.TERA,
            tps,
            MARKERS[(i + i // 8) % len(MARKERS)],
            color=color(i),
            ms=8,
            mec="black",
            mew=0.5,
            label=acc.name,
        )
    ax.set_xlabel("dense 16-bit peak (TFLOP/s)")
    ax.set_ylabel("tokens/s ceiling β/W, batch 1")
    ax.legend(fontsize="x-small", loc="center left", bbox_to_anchor=(1.01, 0.5))
    ax.set_title(f"{m.name} decode ceiling against peak FLOP/s (spec sheet)")
    return fig, ax


def serving_pareto(curves: dict, ttft_slo_s=None, tpot_slo_s=None):
    """Latency against throughput of simulated serving runs (``hwlib.serving_sim``): p99 (solid) and
    p50 (dashed) TTFT on the left, TPOT on the right, against output tokens/s, one colour and marker
    per scheduler in `curves` ({label: [Result.summary() dicts, one per arrival rate]}); the SLOs as
    horizontal lines. A model of an engine on the roofline, not a measurement. Returns
    (fig, (ax_ttft, ax_tpot))."""
    if not curves or not all(curves.values()):
        raise ValueError("curves must map each scheduler's label to a non-empty list of Result.summary() dicts")
    fig, axes = plt.subplots(1, 2, figsize=(8.6, 3.6), layout="constrained")
    for panel, (ax, key, slo) in enumerate(zip(axes, ("ttft", "tpot"), (ttft_slo_s, tpot_slo_s))):
        for i, (label, runs) in enumerate(curves.items()):
            x = [r["throughput_tok_s"] for r in runs]
            ax.plot(x, [r[f"{key}_p99_s"] for r in runs], MARKERS[i] + "-", color=color(i), label=f"{label}, p99")
            ax.plot(x, [r[f"{key}_p50_s"] for r in runs], MARKERS[i] + "--", mfc="white", color=color(i),
                    label=f"{label}, p50")  # fmt: skip
        if slo is not None:
            ax.axhline(slo, color="black", ls=":", lw=1, label="SLO")
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(EngFormatter(unit="s"))
        ax.xaxis.set_major_formatter(EngFormatter(unit="tok/s"))
        ax.set_xlabel("throughput (output tokens/s)")
        ax.set_ylabel("time to first token" if key == "ttft" else "time per output token")
        if panel == 1:
            ax.legend(fontsize=7)
    fig.suptitle("Simulated continuous batching: latency against throughput (roofline step times)", fontsize="medium")
    return fig, axes


def goodput_vs_interval(checkpoint_s, restart_s, mtbi_s, intervals_s=None):
    """First-order goodput of a training run (``hwlib.goodput.goodput``) against the checkpoint
    interval τ, for each checkpoint time in `checkpoint_s` (seconds), with Young's τ* = √(2δM)
    marked. `mtbi_s` is the job's mean time between interruptions. Returns (fig, ax)."""
    deltas = np.atleast_1d(checkpoint_s)
    taus = np.geomspace(60, 2 * mtbi_s, 200) if intervals_s is None else np.asarray(intervals_s, float)
    fig, ax = plt.subplots(figsize=(6.4, 3.6), layout="constrained")
    for i, d in enumerate(deltas):
        g = [goodput.goodput(d, tau, restart_s, mtbi_s) for tau in taus]
        best = goodput.optimal_interval_s(d, mtbi_s)
        ax.plot(
            taus,
            g,
            ls=LINESTYLES[i % len(LINESTYLES)],
            color=color(i),
            label=f"checkpoint takes {units.format_seconds(d)}",
        )
        ax.plot(best, goodput.goodput(d, best, restart_s, mtbi_s), MARKERS[i], color=color(i), mec="black")
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: units.format_seconds(v, digits=2)))
    ax.set_ylim(0, 1)
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    finish_axes(
        ax,
        "checkpoint interval τ",
        "goodput (useful share of time)",
        f"Goodput against checkpoint interval, {units.format_seconds(mtbi_s)} between interruptions",
    )
    return fig, ax
