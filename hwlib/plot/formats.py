"""Figures of number formats (chapter 5): the bits of one value in every format, a gradient histogram
against FP16's ranges, a low-precision running sum, tensor-core peaks per format, and E7's accuracy."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Rectangle
from matplotlib.ticker import EngFormatter

from hwlib import formats, specs
from hwlib.plot._base import color

_FIELDS = {"sign": 1, "exponent": 0, "mantissa": 2, "integer": 3}  # Okabe-Ito index per bit field


def _bit_kinds(name: str, kind: str) -> list[str]:
    f = formats.info(name)
    if kind == "integer":
        return ["sign"] + ["integer"] * (f.bits - 1)
    return ["sign"] + ["exponent"] * f.exponent_bits + ["mantissa"] * f.mantissa_bits


def bit_layout(value: float, names=None):
    """One row per format (hwlib.formats.names()): the bits of `value` (formats.decompose) coloured by
    field (sign, exponent, mantissa, integer), with the value each format represents and its relative
    error. Returns (fig, ax)."""
    names = formats.names() if names is None else list(names)
    fields = {k: color(i) for k, i in _FIELDS.items()}
    fig, ax = plt.subplots(figsize=(9.6, 4.2), layout="constrained")
    for row, name in enumerate(names):
        d = formats.decompose(value, name)
        y = len(names) - 1 - row
        for i, (bit, kind) in enumerate(zip(d.bits.replace(" ", ""), _bit_kinds(name, d.kind))):
            ax.add_patch(Rectangle((i, y + 0.1), 0.92, 0.8, color=fields[kind]))
            ax.text(i + 0.46, y + 0.5, bit, ha="center", va="center", fontsize=7, color="white", weight="bold")
        ax.text(-0.6, y + 0.5, name, ha="right", va="center", fontsize=9)
        ax.text(
            33,
            y + 0.5,
            f"= {d.represented:.8g}   (rel. error {d.relative_error:.1e})",
            ha="left",
            va="center",
            fontsize=8,
        )
    for kind, col in fields.items():
        ax.add_patch(Rectangle((0, 0), 0, 0, color=col, label=kind))
    ax.set_xlim(-7, 52)
    ax.set_ylim(-0.2, len(names) + 0.2)
    ax.axis("off")
    ax.legend(loc="upper right", fontsize=8, ncol=4, frameon=False, bbox_to_anchor=(1.0, 1.08))
    ax.set_title(f"The bits of {value:.8f} in every format", fontsize=10, loc="left")
    return fig, ax


def loss_scaling(grads, stats: dict, fmt: str = "fp16"):
    """One histogram panel per scale of `stats` ({scale: {'zero': fraction, 'bad': fraction}}): log2
    |gradient x scale| over `fmt`'s ranges (flushed to zero, subnormal, normal). Returns (fig, axes)."""
    if not stats:
        raise ValueError("loss_scaling: stats must hold at least one scale")
    f = formats.info(fmt)
    fig, axes = plt.subplots(1, len(stats), figsize=(9.6, 3.6), sharey=True, layout="constrained")
    axes = np.atleast_1d(axes)
    bins = np.linspace(-50, 20, 141)
    for ax, (scale, st) in zip(axes, stats.items()):
        ax.axvspan(bins[0], np.log2(f.min_subnormal) - 1, color=color(1), alpha=0.15, label="flushed to zero")
        ax.axvspan(
            np.log2(f.min_subnormal) - 1, np.log2(f.min_normal), color=color(3), alpha=0.2, label="subnormal (few bits)"
        )
        ax.axvspan(np.log2(f.min_normal), np.log2(f.max), color=color(2), alpha=0.15, label="normal")
        ax.hist(np.log2(np.abs(np.asarray(grads) * scale)), bins=bins, color=color(0))
        ax.set_xlabel("log₂ |gradient × scale|")
        ax.set_title(f"scale {scale:g}: {st['zero']:.1%} become 0, {st['bad']:.1%} off by >1 %", fontsize=9)
    axes[0].set_ylabel("count")
    axes[0].legend(fontsize=7, loc="upper left")
    return fig, axes


def running_sum(curves: dict):
    """The running sum of +1 additions rounded each step, one curve per format ({name: sums});
    the label says where a curve stalls. Returns (fig, ax)."""
    fig, ax = plt.subplots(figsize=(6.4, 3.6), layout="constrained")
    for i, (name, out) in enumerate(curves.items()):
        steps = len(out)
        ax.plot(
            np.arange(1, steps + 1),
            out,
            color=color(i),
            lw=2,
            label=f"{name}: stalls at {out[-1]:g}" if out[-1] < steps else f"{name}: exact",
        )
    ax.set_xlabel("number of +1 additions")
    ax.set_ylabel("running sum (rounded each step)")
    ax.set_title("Summing ones in low precision", fontsize=10)
    ax.legend(fontsize=8)
    return fig, ax


def peak_per_format(gpus, precisions, labels, reference: str = "H100 SXM"):
    """Dense spec-sheet peak (FLOP/s, log axis) per tensor-core format of each GPU, its FP32
    CUDA-core peak as an open marker on the left, and a x2-per-step line from `reference`'s first
    format over the formats `reference` has. Returns (fig, ax)."""
    if len(precisions) != len(labels):
        raise ValueError(f"peak_per_format: {len(precisions)} precisions but {len(labels)} labels")
    fig, ax = plt.subplots(figsize=(7.0, 4.0), layout="constrained")
    for i, name in enumerate(gpus):
        acc = specs.get(name)
        xs = [j for j, p in enumerate(precisions) if p in acc.precisions()]
        ax.semilogy(xs, [acc.peak_flops(precisions[j]) for j in xs], "o-", color=color(i), label=acc.name)
        ax.semilogy([-0.7], [acc.peak_flops("fp32")], "o", mfc="white", color=color(i))
    ref = specs.get(reference)
    n = len(precisions)
    # the doubling line runs only over the formats the reference part has (an H100 has no FP4)
    m = next((j for j, p in enumerate(precisions) if p not in ref.precisions()), n)
    ax.semilogy(
        range(m),
        ref.peak_flops(precisions[0]) * 2.0 ** np.arange(m),
        ":",
        color="0.5",
        label=f"×2 per step ({ref.name})",
    )
    ax.set_xticks([-0.7] + list(range(n)), ["FP32\n(CUDA cores)"] + list(labels), fontsize=8)
    ax.yaxis.set_major_formatter(EngFormatter(unit="FLOP/s"))
    ax.set_ylabel("dense peak (spec sheet)")
    ax.set_title("Each halving of bits doubles the tensor-core peak", fontsize=10)
    ax.legend(fontsize=7)
    return fig, ax


def _error(row):
    return row.get("rel_error") or row.get("rel_error_emulated")


def _emulated(row) -> bool:
    return bool(row.get("emulated")) or (row.get("rel_error") is None and row.get("rel_error_emulated") is not None)


def format_accuracy(series, groups):
    """E7's relative error against float64 (log axis) per format of `groups`, one bar series per
    (label, {format: result row}); emulated results hatched. Returns (fig, ax)."""
    if not series:
        raise ValueError("format_accuracy: no series (pass [(label, {format: row})])")
    fig, ax = plt.subplots(figsize=(7.0, 3.8), layout="constrained")
    width = 0.8 / len(series)
    for i, (label, rows) in enumerate(series):
        fmts = [f for f in groups if f in rows and _error(rows[f]) is not None]
        xs = [groups.index(f) + (i - (len(series) - 1) / 2) * width for f in fmts]
        ax.bar(
            xs,
            [max(_error(rows[f]), 1e-9) for f in fmts],
            width,
            color=color(i),
            hatch=["///" if _emulated(rows[f]) else None for f in fmts],
            edgecolor="white",
            label=label,
        )
    ax.set_yscale("log")
    ax.set_xticks(range(len(groups)), [g.upper() for g in groups])
    ax.set_ylabel("relative error vs float64")
    ax.set_title("Accuracy of a matrix product per format (hatched = emulated)", fontsize=9)
    ax.legend(fontsize=7)
    return fig, ax
