"""Figures of a GPU's memory tiers (chapter 2): the tile each tier needs to feed each format at its
peak, and capacity / bandwidth / latency per tier coloured by where each number came from."""

from __future__ import annotations

import textwrap

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Patch
from matplotlib.ticker import EngFormatter, FuncFormatter, LogLocator, NullLocator

from hwlib import units
from hwlib.plot._base import color
from hwlib.plot.sources import SOURCE_COLOR


def tile_bars(tile_needed: dict, tiers, fmts, title: str):
    """Grouped bars on a log axis: the minimum square tile t (elements per side) per tier and format.

    tile_needed: {(tier name, format): t}; tiers: [(tier name, bandwidth B/s)]; fmts: [(format,
    bytes per element, label)], FP32 hatched (CUDA cores). Returns (fig, ax)."""
    missing = [(t, f) for t, _ in tiers for f, _, _ in fmts if (t, f) not in tile_needed]
    if missing:
        raise ValueError(f"tile_bars: tile_needed lacks {missing[:3]}; it needs every (tier, format) pair")
    fig, ax = plt.subplots(figsize=(7.2, 4.4), layout="constrained")
    width = 0.8 / len(fmts)
    for i, (f, b, label) in enumerate(fmts):
        xs = np.arange(len(tiers)) + (i - (len(fmts) - 1) / 2) * width
        ax.bar(
            xs,
            [tile_needed[(tier, f)] for tier, _ in tiers],
            width,
            color=color(i),
            hatch="//" if f == "fp32" else None,
            edgecolor="white",
            label=f"{label} ({b} B/element)",
        )
    ax.set_yscale("log")
    ax.set_xticks(range(len(tiers)), [textwrap.fill(tier, 18) for tier, _ in tiers], fontsize="small")
    ax.set_ylabel("minimum tile size t (elements per side)")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_title(title)
    ax.legend(fontsize="small", loc="upper left")
    return fig, ax


_PANELS = [
    (1, "B", "capacity", lambda v: units.format_bytes(v, binary=True)),
    (2, "B/s", "bandwidth", units.format_bandwidth),
    (3, "s", "access latency", units.format_seconds),
]


def _binary_tick(v, _pos=None) -> str:
    """Tick label of a power of 1024 bytes: '1 MiB', '1 GiB' (others as units.format_bytes, binary)."""
    names = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]
    e = int(round(np.log(v) / np.log(1024))) if v > 0 else 0
    if 0 <= e < len(names) and np.isclose(v, 1024.0**e):
        return f"1 {names[e]}"
    return units.format_bytes(v, binary=True)


def hierarchy_bars(rows, title: str):
    """Three stacked log-axis bar panels (capacity B, bandwidth B/s, access latency s), one bar a tier,
    each value printed beside its bar and coloured by its source.

    rows: [(tier, (capacity, kind), (bandwidth, kind), (latency, kind) or None)], kind one of
    SOURCE_COLOR's keys; a None cell is written 'not shown'. Returns (fig, axes)."""
    kinds = {cell[1] for row in rows for cell in row[1:] if cell is not None}
    if not rows or kinds - set(SOURCE_COLOR):
        raise ValueError(
            f"hierarchy_bars: need rows with source kinds among {', '.join(SOURCE_COLOR)}; "
            f"got {len(rows)} rows, kinds {sorted(kinds)}"
        )
    fig, axes = plt.subplots(3, 1, figsize=(7.2, 8.4), sharey=True, layout="constrained")
    y = np.arange(len(rows))[::-1]
    for ax, (col, unit, name, fmt) in zip(axes, _PANELS):
        for yi, row in zip(y, rows):
            if row[col] is None:
                ax.text(
                    1.02,
                    yi,
                    "not shown",
                    transform=ax.get_yaxis_transform(),
                    va="center",
                    fontsize="small",
                    color="0.4",
                )
                continue
            v, kind = row[col]
            ax.barh(yi, v, color=SOURCE_COLOR[kind])
            ax.text(v * 1.15, yi, fmt(v), va="center", fontsize="small")
        ax.set_xscale("log")
        if name == "capacity":  # binary ticks (KiB, MiB, GiB ...) beside the binary value labels
            ax.xaxis.set_major_locator(LogLocator(base=1024))
            ax.xaxis.set_minor_locator(NullLocator())
            ax.xaxis.set_major_formatter(FuncFormatter(_binary_tick))
        else:
            ax.xaxis.set_major_formatter(EngFormatter(unit=unit))
        ax.set_title(name, fontsize="medium", loc="left")
        lo, hi = ax.get_xlim()
        ax.set_xlim(lo, hi * 30)
    axes[0].set_yticks(y, [r[0] for r in rows])
    fig.legend(
        handles=[Patch(color=SOURCE_COLOR[k], label=k) for k in ("spec", "computed", "published")],
        loc="upper right",
        fontsize="small",
        ncols=3,
    )
    fig.suptitle(title, x=0.02, ha="left")
    return fig, axes
