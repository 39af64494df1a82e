"""Figures of scaling out (chapter 7): link tiers, all-reduce traffic, ZeRO memory, pipeline bubbles
and data-parallel efficiency. Every number is computed by the hwlib function named in each docstring
(formulas and spec-sheet/standard figures, not measurements); each function returns (fig, ax).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import EngFormatter, PercentFormatter

from hwlib import flops, interconnect, memory, parallel, specs, units
from hwlib.plot._base import MARKERS, color
from hwlib.plot.ticks import finish_axes


def bandwidth_tiers(accelerator: str = "H100 SXM", memory_label: str = "HBM3 (on the GPU)", links=None):
    """Horizontal log-scale bars: the device-memory bandwidth of `accelerator` (bytes/s, spec sheet)
    and each link of ``interconnect.tiers(accelerator)`` per direction (or the Links given), each bar
    labelled with its value. Returns (fig, ax)."""
    acc = specs.get(accelerator)
    links = interconnect.tiers(acc.name) if links is None else links
    labels = [memory_label] + [link.name for link in links]
    values = [acc.bandwidth] + [link.bandwidth for link in links]
    fig, ax = plt.subplots(figsize=(6.4, 2.8), layout="constrained")
    ax.barh(labels[::-1], values[::-1], color=[color(i) for i in range(len(values))][::-1])
    ax.set_xscale("log")
    ax.set_xlabel("bandwidth per device, one direction (bytes/s)")
    ax.xaxis.set_major_formatter(EngFormatter(unit="B/s"))
    for y, v in enumerate(values[::-1]):
        ax.text(v, y, " " + units.format_bandwidth(v), va="center", fontsize=8)
    ax.set_xlim(1e10, 2e13)
    ax.set_title(f"Spec sheet: bandwidth tiers of an {acc.name} cluster")
    return fig, ax


def allreduce_traffic(n_devices, ring_counted, naive_counted):
    """Bytes on the busiest link per byte reduced, against the number of devices N: the ring
    formula 2(N-1)/N and the naive (all to one) N-1 (parallel, collectives), each beside the values
    counted by the NumPy simulator (`ring_counted`, `naive_counted`, one per N). Returns (fig, ax)."""
    ns = np.asarray(n_devices)
    if not len(ns) == len(ring_counted) == len(naive_counted):
        raise ValueError("n_devices, ring_counted and naive_counted must have one value per N each")
    fig, ax = plt.subplots(figsize=(6.4, 3.6), layout="constrained")
    ax.plot(ns, 2 * (ns - 1) / ns, color=color(0), label="ring, formula 2(N-1)/N")
    ax.plot(ns, ring_counted, "o", color=color(0), mfc="white", label="ring, counted by the simulator")
    ax.plot(ns, ns - 1, color=color(1), ls="--", label="naive (all to one), formula N-1")
    ax.plot(ns, naive_counted, "s", color=color(1), mfc="white", label="naive, counted by the simulator")
    ax.set_yscale("log")
    ax.set_xlabel("devices N")
    ax.set_ylabel("bytes on the busiest link / n")
    ax.set_title("All-reduce traffic per link (NumPy simulation)")
    ax.legend(fontsize=8)
    return fig, ax


ZERO_NAMES = ["DP (no sharding)", "ZeRO-1: optimizer states", "ZeRO-2: + gradients", "ZeRO-3 / FSDP: + parameters"]


def zero_memory(n_params: float, mark_devices: int, accelerator: str = "H100 SXM", devices=None):
    """Model state per GPU (bytes, ``memory.zero_bytes_per_device``) of DP and ZeRO stages 1-3
    against the data-parallel degree (default 1 ... 1024 GPUs), log-log, with the `mark_devices`
    point circled on each curve and the memory of `accelerator` (spec sheet) dashed. Returns (fig, ax)."""
    acc = specs.get(accelerator)
    devices = 2 ** np.arange(0, 11) if devices is None else np.asarray(devices)
    fig, ax = plt.subplots(figsize=(6.4, 3.9), layout="constrained")
    for stage in range(4):
        per_gpu = [memory.zero_bytes_per_device(n_params, int(d), stage) for d in devices]
        ax.loglog(devices, per_gpu, marker=MARKERS[stage], ms=4, color=color(stage), label=ZERO_NAMES[stage])
        ax.plot(
            [mark_devices],
            [memory.zero_bytes_per_device(n_params, mark_devices, stage)],
            "o",
            ms=9,
            mfc="none",
            color="black",
        )
    ax.axhline(
        acc.memory_bytes,
        color="0.4",
        ls="--",
        lw=1,
        label=f"{acc.name} memory ({units.format_bytes(acc.memory_bytes, binary=True)})",
    )
    ax.yaxis.set_major_formatter(EngFormatter(unit="B"))
    ax.set_xlabel("data-parallel GPUs $N_d$")
    ax.set_ylabel("model state per GPU")
    ax.set_title(f"ZeRO stages for a {n_params / 1e9:.1f}B-parameter model (formula)")
    ax.legend(fontsize=8)
    return fig, ax


def pipeline_bubble(stages=(4, 8, 16), interleaved=(16, 4), max_microbatches: int = 128):
    """Idle fraction of a pipeline step, ``parallel.pipeline_bubble_fraction(p, m, v)``, against the
    micro-batches per step m (1 ... `max_microbatches`, log2 axis), one curve per stage count p and a
    dashed one for `interleaved` = (p, v) virtual stages (None: leave it out). Returns (fig, ax)."""
    m = np.arange(1, max_microbatches + 1)
    fig, ax = plt.subplots(figsize=(6.4, 3.6), layout="constrained")
    for i, p in enumerate(stages):
        ax.plot(m, [parallel.pipeline_bubble_fraction(p, int(k)) for k in m], color=color(i), label=f"p = {p} stages")
    if interleaved:
        p, v = interleaved
        ax.plot(
            m,
            [parallel.pipeline_bubble_fraction(p, int(k), virtual_stages=v) for k in m],
            color=color(len(stages) - 1),
            ls="--",
            label=f"p = {p}, interleaved (v = {v})",
        )
    finish_axes(
        ax,
        "micro-batches per step m",
        "bubble (idle fraction)",
        "Pipeline bubble (formula)",
        xbase2=True,
        yformatter=PercentFormatter(1.0),
    )
    return fig, ax


def ddp_efficiency(
    n_params: float,
    n_devices: int,
    links,
    peak_flops: float,
    mfu: float,
    n_buckets: int,
    grad_bytes: float | None = None,
    tokens=None,
):
    """Data-parallel efficiency t_compute / t_step against tokens per GPU per step T (default 10^2 ...
    10^6), per link in `links`, for three overlap models: PyTorch DDP's buckets
    (``parallel.ddp_step_time_s``), ideal overlap and none (``parallel.step_time_s``). Compute time
    6 N T / (mfu * peak_flops) (``flops.training_flops``); the ring all-reduce of `grad_bytes`
    (default: N bf16 gradients) over N_d = `n_devices` GPUs (``parallel.ring_allreduce_time_s``).
    Returns (fig, ax)."""
    grad_bytes = n_params * memory.bytes_per_value("bf16") if grad_bytes is None else grad_bytes
    tokens = np.logspace(2, 6, 200) if tokens is None else np.asarray(tokens)
    fig, ax = plt.subplots(figsize=(6.4, 3.8), layout="constrained")
    for i, link in enumerate(links):
        comm = parallel.ring_allreduce_time_s(grad_bytes, n_devices, link.bandwidth)
        comp = flops.training_flops(n_params, tokens) / (mfu * peak_flops)
        overlap_models = [
            ("DDP", "-", parallel.ddp_step_time_s(comp, comm, n_buckets=n_buckets)),
            ("ideal", ":", parallel.step_time_s(comp, comm, overlap=1.0)),
            ("none", "--", parallel.step_time_s(comp, comm, overlap=0.0)),
        ]
        for label, ls, t_step in overlap_models:
            ax.plot(
                tokens,
                comp / t_step,
                color=color(i),
                ls=ls,
                lw=2 if label == "DDP" else 1,
                label=f"{link.name}, {label}",
            )
    ax.set_xscale("log")
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_xlabel("tokens per GPU per step T")
    ax.set_ylabel("efficiency  t_compute / t_step")
    ax.set_title("Data parallelism: hiding the all-reduce (cost model)")
    ax.legend(fontsize=6.5, ncol=3, loc="lower right")
    return fig, ax


LAYOUT_PARTS = [
    ("compute", "compute"),
    ("tp", "TP collectives"),
    ("cp", "CP K/V gathers"),
    ("ep", "EP all-to-all"),
    ("bubble", "pipeline bubble"),
    ("dp_exposed", "DP/ZeRO exposed"),
    ("p2p", "pipeline P2P"),
]


def layout_breakdown(plans, title: str = "Step time of the fastest layouts that fit"):
    """Horizontal stacked bars, one per evaluated layout (`hwlib.layout.Plan`, fastest on top): the
    step time split into compute, TP, CP, EP, bubble, exposed data-parallel traffic and P2P (seconds,
    the planner's formulas), each bar labelled with its MFU. Returns (fig, ax)."""
    plans = list(plans)
    if not plans:
        raise ValueError("plans must hold at least one evaluated layout (hwlib.layout.Plan)")
    fig, ax = plt.subplots(figsize=(7.0, 0.55 * len(plans) + 1.6), layout="constrained")
    labels = [p.layout.label().replace(" recompute=", "\nrecompute=") for p in plans][::-1]
    left = np.zeros(len(plans))
    for i, (key, name) in enumerate(LAYOUT_PARTS):
        widths = np.array([p.time[key] for p in plans][::-1])
        if not widths.any():
            continue
        ax.barh(labels, widths, left=left, color=color(i), label=name)
        left += widths
    for y, p in enumerate(plans[::-1]):
        ax.text(left[y], y, f" MFU {units.format_pct(p.mfu)}", va="center", fontsize=8)
    ax.set_xlabel("time per optimizer step (s)")
    ax.set_xlim(0, left.max() * 1.18)
    ax.tick_params(axis="y", labelsize=7)
    ax.set_title(title)
    ax.legend(fontsize=7, ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.18 if len(plans) < 4 else -0.1))
    return fig, ax
