"""Figures of machine balance (chapter 4): peak FLOP/s outgrowing bandwidth, every chip's ridge point,
kernels' arithmetic intensity against ridges, what fusion saves (E4) and the skinny-matmul roofline."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from hwlib import roofline, specs
from hwlib.plot._base import color, source_label


def _growth_panel(ax, line, trend_flops: float, trend_dram: float) -> None:
    gpus = [specs.get(n) for n in line]
    base = gpus[0]
    years = np.array([g.release_year for g in gpus])
    peak = np.array([g.peak_flops("bf16") for g in gpus]) / base.peak_flops("bf16")
    ax.semilogy(years, peak, "o-", color=color(1), label="dense bf16 peak (spec sheet)")
    ax.semilogy(
        years,
        np.array([g.bandwidth for g in gpus]) / base.bandwidth,
        "s-",
        color=color(0),
        label="HBM bandwidth (spec sheet)",
    )
    span = np.linspace(years[0], years[-1], 20)
    for trend, col in [(trend_flops, color(1)), (trend_dram, color(0))]:
        ax.semilogy(
            span, trend ** ((span - years[0]) / 2), "--", color=col, lw=1, label=f"published trend ×{trend:.1f} / 2 yr"
        )
    for name, x, y in zip(line, years, peak):
        ax.annotate(name, (x, y), textcoords="offset points", xytext=(4, 4), fontsize=7)
    ax.set_xticks(range(int(years.min()), int(years.max()) + 1))
    ax.set_xlabel("release year")
    ax.set_ylabel(f"relative to {base.name}")
    ax.set_title("Peak vs bandwidth, NVIDIA data-centre GPUs", fontsize=10)
    ax.legend(fontsize=7)


def peak_vs_bandwidth(line, trend_flops: float, trend_dram: float, accelerators=None):
    """Left: dense BF16 peak and HBM bandwidth of the GPUs `line` (spec sheet) relative to the first,
    against release year, with published trends (x trend every 2 years). Right: the 16-bit ridge point
    π/β (FLOP/byte; Accelerator.default_precision) of every accelerator in the sheet (TPUs ▲).
    Returns (fig, (ax1, ax2))."""
    if len(line) < 2:
        raise ValueError(f"peak_vs_bandwidth: line needs at least two GPUs; got {list(line)}")
    accelerators = specs.all() if accelerators is None else accelerators
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9.6, 3.8), layout="constrained")
    _growth_panel(ax1, line, trend_flops, trend_dram)
    years = [specs.get(n).release_year for n in line]
    for i, acc in enumerate(accelerators):
        ridge = acc.ridge_point(acc.default_precision())
        ax2.plot(acc.release_year, ridge, "^" if acc.kind == "tpu" else "o", color=color(i), ms=7)
        ax2.annotate(
            acc.name, (acc.release_year, ridge), textcoords="offset points", xytext=(6, 3 if i % 2 else -9), fontsize=7
        )  # alternate above/below to limit overlaps
    ax2.set_xlabel("release year")
    ax2.set_ylabel("ridge point π/β (FLOP/byte, 16-bit)")
    ax2.set_title("Machine balance of every chip in the sheet", fontsize=10)
    ax2.set_ylim(0, None)
    ax2.set_xlim(min(years) - 3, max(years) + 2)
    return fig, (ax1, ax2)


def kernels_vs_ridge(intensities: dict, ridges):
    """Horizontal bars of arithmetic intensity (FLOP/byte, log axis), one a kernel ({name: intensity}),
    with a dashed line at each ridge of `ridges` [(spec-sheet GPU, precision)]. Returns (fig, ax)."""
    if not intensities:
        raise ValueError("kernels_vs_ridge: no kernels given")
    fig, ax = plt.subplots(figsize=(7.6, 4.2), layout="constrained")
    names = list(intensities)
    ax.barh(range(len(names)), [intensities[n] for n in names], color=color(0))
    ax.set_yticks(range(len(names)), names, fontsize=8)
    ax.invert_yaxis()
    ax.set_xscale("log")
    for i, (gpu, prec) in enumerate(ridges):
        acc = specs.get(gpu)
        ax.axvline(
            acc.ridge_point(prec),
            color=color(i + 1),
            ls="--",
            lw=1.2,
            label=f"ridge {acc.name} ({acc.ridge_point(prec):.0f})",
        )
    ax.set_xlabel("arithmetic intensity (FLOP/byte, log scale)")
    ax.set_title("Where common kernels sit against the ridge (bf16)", fontsize=10)
    ax.legend(fontsize=7, loc="upper right")
    return fig, ax


def fusion(record: dict, accesses: dict, passes: dict, recorded=()):
    """E4. Left: bytes each variant must move per element (accesses x item size, counted) with its
    number of passes. Right: measured seconds per element against n, one curve per variant, live
    (o-) and recorded runs (s--), titled with the live device. Returns (fig, (ax1, ax2))."""
    itemsize = np.dtype(record["parameters"].get("dtype", "float32")).itemsize
    variants = list(dict.fromkeys(r["variant"] for r in record["results"]))
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9.6, 3.8), layout="constrained")
    ax1.bar(variants, [accesses[v] * itemsize for v in variants], color=[color(i) for i in range(len(variants))])
    for i, v in enumerate(variants):
        ax1.annotate(f"{passes[v]} pass(es)", (i, accesses[v] * itemsize), ha="center", va="bottom", fontsize=8)
    ax1.set_ylabel("bytes moved per element")
    ax1.set_title("What each variant must move (counted)", fontsize=10)
    for i, v in enumerate(variants):
        pts = [r for r in record["results"] if r["variant"] == v]
        ax2.loglog([p["n"] for p in pts], [p["seconds"] / p["n"] for p in pts], "o-", color=color(i), label=v)
    for rec in recorded:
        for i, v in enumerate(dict.fromkeys(r["variant"] for r in rec["results"])):
            pts = [r for r in rec["results"] if r["variant"] == v]
            ax2.loglog(
                [p["n"] for p in pts],
                [p["seconds"] / p["n"] for p in pts],
                "s--",
                color=color(i),
                lw=1,
                label=f"{v}: {source_label('recorded', rec['device']['name'], rec['date'][:10])}",
            )
    ax2.set_xlabel("elements n")
    ax2.set_ylabel("seconds per element (median)")
    ax2.set_title(f"Measured: {source_label('live', record['device']['name'])}", fontsize=10)
    ax2.legend(fontsize=7)
    return fig, (ax1, ax2)


def skinny_matmul(record: dict, batch, models, recorded=(), own=None, *, sweep):
    """Left: E2's skinny matmul drawn by `sweep` (plot.matmul_sweep, shape='skinny'; passed in, as
    this module may not import the package that re-exports it), with the measuring device's own
    roofline dotted when `own` = (peak FLOP/s, bandwidth B/s, source text) is given. Right: the
    spec-sheet roofline prediction against batch rows, one curve per `models` entry (label, attainable
    FLOP/s over `batch`, crossover batch) with a dotted line at its crossover. Returns (fig, (ax1, ax2))."""
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9.8, 3.9), layout="constrained")
    sweep(record, recorded=recorded, shape="skinny", ax=ax1)
    if own is not None:
        pi, beta, src = own
        skinny = [r for r in record["results"] if r["shape"] == "skinny"]
        intensity = np.array([r["intensity"] for r in skinny])
        ax1.plot(
            [r["batch"] for r in skinny],
            roofline.attainable(intensity, pi, beta),
            ":",
            color="0.3",
            lw=1.5,
            label=f"this device's roofline ({src})",
        )
        ax1.legend(fontsize=6)
    ax1.yaxis.set_minor_formatter(plt.NullFormatter())
    ax1.title.set_fontsize(9)
    for i, (label, attainable, crossing) in enumerate(models):
        ax2.loglog(batch, attainable, color=color(i), label=label)
        ax2.axvline(crossing, color=color(i), ls=":", lw=1)
    ax2.set_xscale("log", base=2)
    ax2.set_xlabel("batch rows m (m × 8192 @ 8192 × 8192)")
    ax2.set_ylabel("attainable FLOP/s")
    ax2.set_title("Roofline prediction (spec sheet)", fontsize=10)
    ax2.legend(fontsize=7)
    return fig, (ax1, ax2)
