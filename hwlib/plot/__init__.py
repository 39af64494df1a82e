"""Figures for the book: spec-sheet rooflines and measured sweeps (matplotlib).

Every figure says where its numbers come from: the device that produced them and whether they are
*live* (measured in this session), *recorded* (a stored run: device and date) or *spec sheet*
(vendor numbers from `hwlib.specs`). Colours are the Okabe–Ito colour-blind-safe palette.
Each function returns ``(fig, ax)``; none calls ``plt.show()``.

Roofline (chapter 6; Williams, Waterman & Patterson 2009):  P(I) = min(pi, beta * I)  [FLOP/s],
with I in FLOP/byte, pi the peak FLOP/s and beta the bandwidth in bytes/s; ridge I* = pi / beta.
"""

from __future__ import annotations

import os
import sys

import matplotlib
import numpy as np


def _pick_backend() -> None:
    """Use Agg only when nobody chose a backend (no MPLBACKEND, not in a Jupyter kernel)."""
    try:
        chosen = matplotlib.rcParams._get_backend_or_none()
    except AttributeError:  # older matplotlib: assume chosen
        chosen = matplotlib.get_backend()
    if chosen is None and not os.environ.get("MPLBACKEND") and "ipykernel" not in sys.modules:
        matplotlib.use("Agg")


_pick_backend()
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import EngFormatter  # noqa: E402

# The shared primitives (palette, axes, source labels, sweep marks) live in the leaf _base module.
from hwlib.plot._base import (  # noqa: E402,F401
    LINESTYLES,
    MARKERS,
    OKABE_ITO,
    PALETTE,
    _axes,
    _label,
    _title,
    color,
    l2_plateau,
    mark_launch_bound,
    source_label,
)


def _resolve(acc):
    """A name from the spec sheet -> its Accelerator; an Accelerator-like object passes through."""
    if isinstance(acc, str):
        from hwlib import specs

        return specs.get(acc)
    return acc


def _name(acc) -> str:
    return str(getattr(acc, "name", acc))


def _log_axes(ax, xlabel: str, ylabel: str, yunit: str, xunit: str | None = None, logx=True, logy=True) -> None:
    ax.set_xscale("log" if logx else "linear")  # scales first: setting a scale resets the formatters
    ax.set_yscale("log" if logy else "linear")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.yaxis.set_major_formatter(EngFormatter(unit=yunit))
    lo, hi = ax.get_ylim()  # label minor ticks only when the data span less than a decade
    ax.yaxis.set_minor_formatter(EngFormatter(unit=yunit) if logy and 0 < lo and hi / lo < 10 else plt.NullFormatter())
    if xunit:
        ax.xaxis.set_major_formatter(EngFormatter(unit=xunit))
    ax.grid(True, which="major", alpha=0.3)


def _roof(ax, intensity, peak, bandwidth, col, label, style="-"):
    """Draw min(peak, bandwidth*I) and mark the ridge I* = peak/bandwidth. Returns the ridge."""
    ridge = peak / bandwidth
    ax.plot(
        intensity,
        np.minimum(peak, bandwidth * intensity),
        color=col,
        ls=style,
        lw=2,
        label=f"{label} (ridge {ridge:.3g} FLOP/B)",
    )
    ax.plot([ridge], [peak], "o", color=col, ms=6, mfc="white", mew=2)
    ax.axvline(ridge, color=col, ls=":", lw=1, alpha=0.7)
    return ridge


def roofline(
    accelerators=("H100 SXM",),
    precision: str = "bf16",
    kernels=None,
    ax=None,
    intensity_range=(0.1, 1e4),
    title: str | None = None,
    source: str | None = None,
):
    """Spec-sheet rooflines P(I) = min(pi, beta*I) of one or more accelerators (chapter 6).

    accelerators: names known to `hwlib.specs` (e.g. "H100 SXM", "T4") or Accelerator objects
    (anything with `.name`, `.bandwidth` [bytes/s] and `.peak_flops(precision)` [FLOP/s]).
    precision: the format whose dense peak sets the flat roof ("fp32", "tf32", "bf16", ...).
    A device without that precision is skipped with a note in the legend; if none has it, ValueError.
    kernels: (label, intensity) places a kernel at its attainable performance on every roof;
    (label, intensity, measured_flops) also plots the measured point (FLOP/s); `source` says where
    those were measured (e.g. plot.source_label("live", "NVIDIA T4")) and goes into the title.
    Returns (fig, ax). Axes: FLOP/byte (log) against FLOP/s (log).
    """
    if isinstance(accelerators, (str,)) or not hasattr(accelerators, "__iter__"):
        accelerators = [accelerators]
    lo, hi = intensity_range
    if not (0 < lo < hi):
        raise ValueError(f"intensity_range must be (low, high) with 0 < low < high; got {intensity_range!r}")
    fig, ax = _axes(ax)
    intensity = np.logspace(np.log10(lo), np.log10(hi), 400)
    drawn, skipped = [], []
    for i, acc in enumerate(accelerators):
        acc = _resolve(acc)
        try:
            peak = float(acc.peak_flops(precision))
        except (ValueError, KeyError):
            skipped.append(_name(acc))
            continue
        # Line style as well as colour, so devices stay apart for colour-blind readers and in greyscale.
        _roof(ax, intensity, peak, float(acc.bandwidth), color(i), _name(acc), LINESTYLES[i % len(LINESTYLES)])
        drawn.append((acc, peak, float(acc.bandwidth), color(i)))
    if not drawn:
        raise ValueError(f"precision {precision!r} has no peak for any of {[_name(_resolve(a)) for a in accelerators]}")
    for j, kernel in enumerate(kernels or []):
        _place_kernel(ax, kernel, drawn, MARKERS[j % len(MARKERS)], source or "measured")
    if skipped:
        ax.plot([], [], " ", label=f"no {precision} peak: {', '.join(skipped)}")
    _log_axes(ax, "arithmetic intensity (FLOP/byte)", f"attainable {precision} FLOP/s", "FLOP/s")
    ax.set_xlim(lo, hi)
    names = ", ".join(_name(a) for a, *_ in drawn)
    measured = f"\npoints: {source}" if source and any(len(k) == 3 for k in kernels or []) else ""
    ax.set_title(title or f"Roofline ({precision}, dense) - spec sheet: {names}{measured}")
    ax.legend(fontsize="small", loc="lower right")
    return fig, ax


def _place_kernel(ax, kernel, drawn, marker, source: str) -> None:
    """kernel = (label, intensity) or (label, intensity, measured FLOP/s)."""
    if len(kernel) not in (2, 3):
        raise ValueError(
            f"kernels entries must be (label, intensity) or (label, intensity, measured_flops); got {kernel!r}"
        )
    label, intensity = str(kernel[0]), float(kernel[1])
    if not intensity > 0:
        raise ValueError(f"kernel {label!r}: intensity must be > 0 FLOP/byte; got {kernel[1]!r}")
    ax.axvline(intensity, color="0.5", lw=0.8, ls="--")
    ax.annotate(
        label,
        (intensity, 1.0),
        xycoords=("data", "axes fraction"),
        rotation=90,
        va="top",
        ha="right",
        fontsize="small",
        color="0.3",
    )
    for _, peak, bw, col in drawn:
        ax.plot([intensity], [min(peak, bw * intensity)], marker, color=col, mfc="white", ms=7)
    if len(kernel) == 3:
        measured = float(kernel[2])
        if not measured > 0:
            raise ValueError(f"kernel {label!r}: measured_flops must be > 0 FLOP/s; got {kernel[2]!r}")
        ax.plot([intensity], [measured], marker, color="black", ms=8, label=f"{label}: {source}")


def sweep(
    x,
    y,
    label: str,
    *,
    theory=None,
    theory_label: str = "theory",
    xlabel: str = "",
    ylabel: str = "",
    xunit: str | None = None,
    yunit: str = "",
    title: str = "",
    ax=None,
    overlays=(),
    logx=True,
    logy=True,
):
    """Generic measured curve (x, y) with an optional theoretical line: a number (horizontal line)
    or an array over x. overlays: (x, y, label) curves drawn dashed (recorded or published data)."""
    fig, ax = _axes(ax)
    ax.plot(x, y, "o-", color=color(0), lw=2, ms=5, label=label)
    for i, (ox, oy, olabel) in enumerate(overlays):
        ax.plot(ox, oy, "s--", color=color(i + 1), lw=1.5, ms=4, label=olabel)
    if theory is not None:
        ty = np.broadcast_to(np.asarray(theory, dtype=float), np.shape(x))
        ax.plot(x, ty, "-", color="black", lw=1.2, label=theory_label)
    _log_axes(ax, xlabel, ylabel, yunit, xunit, logx, logy)
    ax.set_title(title, fontsize="medium")
    ax.legend(fontsize="small")
    return fig, ax


def _rows(rec, **match):
    return [r for r in rec.get("results", []) if all(r.get(k) == v for k, v in match.items())]


def matmul_sweep(record: dict, recorded=(), shape: str = "square", ax=None):
    """E2 FLOP/s against N (square) or batch rows (skinny), one curve per dtype; the spec-sheet
    peak of each dtype as a line where the device is in hwlib.specs."""
    if shape not in ("square", "skinny"):
        raise ValueError(f"shape must be 'square' or 'skinny'; got {shape!r}")
    key = "size" if shape == "square" else "batch"
    fig, ax = _axes(ax)
    dtypes = list(dict.fromkeys(r["dtype"] for r in _rows(record, shape=shape)))
    peaks = _spec_peaks(record)
    for i, dt in enumerate(dtypes):
        rows = _rows(record, shape=shape, dtype=dt)
        ax.plot(
            [r[key] for r in rows],
            [r["flops_per_s"] for r in rows],
            "o-",
            color=color(i),
            lw=2,
            label=f"{dt}: {_label(record)}",
        )
        if peaks.get(dt):
            ax.axhline(
                peaks[dt], color=color(i), ls="--", lw=1, label=f"{dt} spec peak ({record['device'].get('spec')})"
            )
    for j, rec in enumerate(recorded):
        for dt in dtypes:
            rows = _rows(rec, shape=shape, dtype=dt)
            if rows:
                ax.plot(
                    [r[key] for r in rows],
                    [r["flops_per_s"] for r in rows],
                    "s--",
                    color=color(len(dtypes) + j),
                    lw=1.5,
                    label=f"{dt}: {_label(rec)}",
                )
    _log_axes(
        ax,
        "N (N x N @ N x N)" if shape == "square" else "batch rows m (m x k @ fixed k x n)",
        "achieved FLOP/s",
        "FLOP/s",
    )
    ax.set_xscale("log", base=2)
    ax.set_title(_title(f"E2 matmul throughput ({shape})", record, recorded), fontsize="medium")
    ax.legend(fontsize="small")
    return fig, ax


def _spec_peaks(record: dict) -> dict:
    """dtype name -> spec-sheet dense peak for the record's device, where known."""
    name = record.get("device", {}).get("spec")
    acc = _resolve(name) if name else None
    pairs = (("float16", "fp16"), ("float32", "fp32"), ("bfloat16", "bf16"))
    return {dt: acc.peak_flops(p) for dt, p in pairs if acc is not None and p in acc.precisions()}


def decode(record: dict, recorded=(), ax=None):
    """E8 tokens/s against batch, with the bandwidth bound B x bandwidth / weight bytes."""
    rows = record["results"]
    bw_src = record["parameters"].get("bandwidth_source", "")
    overlays = [
        ([r["batch"] for r in rec["results"]], [r["tokens_per_s"] for r in rec["results"]], _label(rec))
        for rec in recorded
    ]
    bound = [r["bound_tokens_per_s"] for r in rows] if all(r.get("bound_tokens_per_s") for r in rows) else None
    fig, ax = sweep(
        [r["batch"] for r in rows],
        [r["tokens_per_s"] for r in rows],
        _label(record),
        theory=bound,
        theory_label=f"bandwidth bound ({bw_src})",
        xlabel="batch (sequences decoded together)",
        ylabel="tokens/s (whole batch)",
        yunit="tok/s",
        ax=ax,
        overlays=overlays,
        title=_title("E8 decode vs batch", record, recorded),
    )
    if rows and rows[0].get("compute_bound_tokens_per_s"):
        ax.axhline(rows[0]["compute_bound_tokens_per_s"], color="0.4", ls="--", lw=1, label="compute bound (spec peak)")
        ax.legend(fontsize="small")
    mark_launch_bound(
        ax, [r["batch"] for r in rows], [r["tokens_per_s"] for r in rows], [r.get("launch_bound") for r in rows]
    )
    ax.set_xscale("log", base=2)
    return fig, ax


def measured_roofline(records, spec=None, precision: str | None = None, ax=None, recorded=()):
    """E3 (or E2) points (intensity, FLOP/s) of one or more records (plus `recorded` ones), the
    empirical roofline from their best bandwidth and best FLOP/s, and the spec-sheet roofline of
    `spec` (a name or Accelerator; default: the first record's matched device) in `precision`."""
    records = ([records] if isinstance(records, dict) else list(records)) + list(recorded)
    if not records:
        raise ValueError("records must hold at least one E3/E2 record")
    fig, ax = _axes(ax)
    spec = spec if spec is not None else records[0].get("device", {}).get("spec")
    series = []
    for rec in records:
        for j, dt in enumerate(dict.fromkeys(r.get("dtype") for r in rec["results"])):
            rows = [r for r in rec["results"] if r.get("dtype") == dt and r.get("flops_per_s")]
            x, y = np.array([r["intensity"] for r in rows]), np.array([r["flops_per_s"] for r in rows])
            c = color(len(series) + 1)
            ax.plot(x, y, MARKERS[j % len(MARKERS)], color=c, ms=6, label=f"{dt}: {_label(rec)}")
            series.append((x, y))
            bw, peak = max(r["bytes_per_s"] for r in rows), y.max()
            grid = np.logspace(np.log10(x.min() / 2), np.log10(x.max() * 2), 200)
            ax.plot(grid, np.minimum(peak, bw * grid), "--", color=c, lw=1, label=f"{dt}: empirical roof")
    if spec is not None:
        acc = _resolve(spec)
        prec = precision or {"float64": None, "float16": "fp16"}.get(records[0]["results"][0].get("dtype"), "fp32")
        if prec and prec in getattr(acc, "precisions", lambda: [prec])():
            allx = np.concatenate([s[0] for s in series])
            grid = np.logspace(np.log10(allx.min() / 2), np.log10(allx.max() * 2), 200)
            _roof(
                ax, grid, float(acc.peak_flops(prec)), float(acc.bandwidth), "black", f"spec sheet: {_name(acc)} {prec}"
            )
    _log_axes(ax, "arithmetic intensity (FLOP/byte)", "achieved FLOP/s", "FLOP/s")
    ax.set_title("Empirical roofline - " + "; ".join(dict.fromkeys(_label(r) for r in records)), fontsize="medium")
    ax.legend(fontsize="small")
    return fig, ax


def energy_per_operation(rows=None, ax=None):
    """Energy of one 32-bit operation vs moving one 32-bit word from each memory tier (log scale),
    from ``hwlib.energy.table()`` (Horowitz ISSCC 2014, 45 nm; HBM2/GDDR5 from O'Connor et al. 2017).
    Bars: compute in blue, on-chip reads in green, on-package in orange, off-package in vermillion;
    each bar is labelled with its value in pJ. Returns (fig, ax)."""
    from hwlib import energy

    rows = [r for r in (rows if rows is not None else energy.table()) if r["kind"] == "memory" or r["bits"] == 32]
    if not rows:
        raise ValueError("rows must hold at least one entry of hwlib.energy.table()")
    fig, ax = (
        plt.subplots(figsize=(7.0, 0.42 * len(rows) + 1.2), layout="constrained") if ax is None else (ax.figure, ax)
    )
    tier_colour = {
        "": OKABE_ITO["blue"],
        "on-chip": OKABE_ITO["bluish_green"],
        "on-package": OKABE_ITO["orange"],
        "off-package": OKABE_ITO["vermillion"],
    }
    labels = [r["label"] + ("" if r["kind"] == "compute" else " (32 bits)") for r in rows]
    values = np.array([r["joules_per_32bit"] for r in rows]) * 1e12
    y = np.arange(len(rows))[::-1]
    ax.barh(y, values, color=[tier_colour[r["tier"]] for r in rows], edgecolor="black", linewidth=0.5)
    for yi, v in zip(y, values):
        ax.text(v * 1.15, yi, (f"{v:.3g}" if v < 1000 else f"{v:,.0f}") + " pJ", va="center", fontsize="small")
    ax.set_yticks(y, labels, fontsize="small")
    ax.set_xscale("log")
    ax.set_xlim(values.min() / 2, values.max() * 8)
    ax.set_xlabel("picojoules (log scale)")
    ax.set_title("Energy of a 32-bit operation vs moving a 32-bit word", fontsize="medium")
    from matplotlib.patches import Patch

    names = {
        "": "arithmetic",
        "on-chip": "on-chip SRAM",
        "on-package": "HBM (on package)",
        "off-package": "off-package DRAM",
    }
    ax.legend(
        handles=[Patch(color=c, label=names[t]) for t, c in tier_colour.items() if any(r["tier"] == t for r in rows)],
        fontsize="small",
        loc="upper right",
    )
    return fig, ax


from hwlib.plot import balance as _balance  # noqa: E402
from hwlib.plot.balance import fusion, kernels_vs_ridge, peak_vs_bandwidth  # noqa: E402,F401
from hwlib.plot.bandwidth import bandwidth_sweep  # noqa: E402,F401
from hwlib.plot.latency import divergence, littles_law  # noqa: E402,F401
from hwlib.plot.sources import SOURCE_COLOR, source_bars  # noqa: E402,F401
from hwlib.plot.systolic import array_frames, reuse_and_utilization  # noqa: E402,F401
from hwlib.plot.tiers import hierarchy_bars, tile_bars  # noqa: E402,F401


def skinny_matmul(record: dict, batch, models, recorded=(), own=None):
    """Chapter 4's skinny-matmul figure (hwlib.plot.balance.skinny_matmul), its left panel drawn by
    matmul_sweep. Returns (fig, (ax1, ax2))."""
    return _balance.skinny_matmul(record, batch, models, recorded, own, sweep=matmul_sweep)


from hwlib.plot.budgets import (
    activations_vs_sequence,
    inference_memory,
    kv_cache_vs_context,
    training_memory,
    training_state,
)  # noqa: E402,F401
from hwlib.plot.formats import (  # noqa: E402,F401
    bit_layout,
    format_accuracy,
    loss_scaling,
    peak_per_format,
    running_sum,
)
from hwlib.plot.intensity import matmul_intensity_vs_size  # noqa: E402,F401
from hwlib.plot.kernels import stride_sweep, tile_sweep, wave_model  # noqa: E402,F401
from hwlib.plot.pitfalls import dp_hiding, overhead_exposure, range_loss  # noqa: E402,F401
from hwlib.plot.scaling import (  # noqa: E402,F401
    allreduce_traffic,
    bandwidth_tiers,
    ddp_efficiency,
    layout_breakdown,  # noqa: E402,F401
    pipeline_bubble,
    zero_memory,
)
from hwlib.plot.serving import (  # noqa: E402,F401
    decode_bound,
    decode_ceiling_vs_peak,
    goodput_vs_interval,
    mfu_vs_batch,
    serving_pareto,
)
from hwlib.plot.ticks import finish_axes, label_decades_only  # noqa: E402,F401
