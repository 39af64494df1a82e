"""Figures for the book: spec-sheet rooflines and measured sweeps (matplotlib).

Every figure says where its numbers come from: the device that produced them and whether they are
*live* (measured in this session), *recorded* (a stored run: device and date) or *spec sheet*
(vendor numbers from `hwlib.specs`). Colours are the Okabe–Ito colour-blind-safe palette.
Each function returns ``(fig, ax)``; none calls ``plt.show()``.

Roofline (seed §7.1; Williams, Waterman & Patterson 2009):  P(I) = min(pi, beta * I)  [FLOP/s],
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

# Okabe & Ito (2008), "Color Universal Design": colour-blind-safe qualitative palette.
OKABE_ITO = {
    "blue": "#0072B2", "vermillion": "#D55E00", "bluish_green": "#009E73", "orange": "#E69F00",
    "reddish_purple": "#CC79A7", "sky_blue": "#56B4E9", "yellow": "#F0E442", "black": "#000000",
}
PALETTE = list(OKABE_ITO.values())
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]


def color(i: int) -> str:
    """The i-th colour of the Okabe–Ito palette (cycles)."""
    return PALETTE[i % len(PALETTE)]


def _axes(ax):
    if ax is None:
        fig, ax = plt.subplots(figsize=(7.0, 4.6), layout="constrained")
        return fig, ax
    return ax.figure, ax


def _resolve(acc):
    """A name from the spec sheet -> its Accelerator; an Accelerator-like object passes through."""
    if isinstance(acc, str):
        from hwlib import specs
        return specs.get(acc)
    return acc


def _name(acc) -> str:
    return str(getattr(acc, "name", acc))


def _log_axes(ax, xlabel: str, ylabel: str, yunit: str, xunit: str | None = None) -> None:
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.yaxis.set_major_formatter(EngFormatter(unit=yunit))
    if xunit:
        ax.xaxis.set_major_formatter(EngFormatter(unit=xunit))
    ax.grid(True, which="major", alpha=0.3)


def source_label(kind: str, device: str, date: str | None = None) -> str:
    """'live on <device>', 'recorded on <device>, <date>' or 'spec sheet: <device>'."""
    if kind == "live":
        return f"live on {device}"
    if kind == "recorded":
        return f"recorded on {device}, {date}" if date else f"recorded on {device}"
    if kind == "spec":
        return f"spec sheet: {device}"
    if kind == "published":
        return f"published (not ours): {device}"
    raise ValueError(f"kind must be 'live', 'recorded', 'spec' or 'published'; got {kind!r}")


def _roof(ax, intensity, peak, bandwidth, col, label, style="-"):
    """Draw min(peak, bandwidth*I) and mark the ridge I* = peak/bandwidth. Returns the ridge."""
    ridge = peak / bandwidth
    ax.plot(intensity, np.minimum(peak, bandwidth * intensity), style, color=col, lw=2,
            label=f"{label} (ridge {ridge:.3g} FLOP/B)")
    ax.plot([ridge], [peak], "o", color=col, ms=6, mfc="white", mew=2)
    ax.axvline(ridge, color=col, ls=":", lw=1, alpha=0.7)
    return ridge


def roofline(accelerators=("H100 SXM",), precision: str = "bf16", kernels=None, ax=None,
             intensity_range=(0.1, 1e4), title: str | None = None, source: str | None = None):
    """Spec-sheet rooflines P(I) = min(pi, beta*I) of one or more accelerators (seed §7.1).

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
        _roof(ax, intensity, peak, float(acc.bandwidth), color(i), _name(acc))
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
        raise ValueError(f"kernels entries must be (label, intensity) or (label, intensity, measured_flops); got {kernel!r}")
    label, intensity = str(kernel[0]), float(kernel[1])
    if not intensity > 0:
        raise ValueError(f"kernel {label!r}: intensity must be > 0 FLOP/byte; got {kernel[1]!r}")
    ax.axvline(intensity, color="0.5", lw=0.8, ls="--")
    ax.annotate(label, (intensity, 1.0), xycoords=("data", "axes fraction"), rotation=90,
                va="top", ha="right", fontsize="small", color="0.3")
    for _, peak, bw, col in drawn:
        ax.plot([intensity], [min(peak, bw * intensity)], marker, color=col, mfc="white", ms=7)
    if len(kernel) == 3:
        measured = float(kernel[2])
        if not measured > 0:
            raise ValueError(f"kernel {label!r}: measured_flops must be > 0 FLOP/s; got {kernel[2]!r}")
        ax.plot([intensity], [measured], marker, color="black", ms=8, label=f"{label}: {source}")
