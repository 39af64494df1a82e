"""What every figure of `hwlib.plot` shares: the colour-blind-safe palette, the default axes, the
words that say where data came from, and two marks on measured sweeps.

A leaf of the package: topic modules (``hwlib.plot.bandwidth``, ...) import these from here, never
from ``hwlib.plot`` itself, which re-exports both them and the topic modules' figures (an import of
the package from one of its own modules would be an import cycle). ``hwlib/plot/__init__.py`` picks
the matplotlib backend before this module is imported.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from hwlib import provenance

# Okabe & Ito (2008), "Color Universal Design": colour-blind-safe qualitative palette.
OKABE_ITO = {
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "bluish_green": "#009E73",
    "orange": "#E69F00",
    "reddish_purple": "#CC79A7",
    "sky_blue": "#56B4E9",
    "yellow": "#F0E442",
    "black": "#000000",
}
PALETTE = list(OKABE_ITO.values())
LINESTYLES = ["-", "--", "-.", (0, (1, 1)), (0, (5, 1, 1, 1, 1, 1))]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]


def color(i: int) -> str:
    """The i-th colour of the Okabe–Ito palette (cycles)."""
    return PALETTE[i % len(PALETTE)]


def _axes(ax):
    return plt.subplots(figsize=(7.0, 4.6), layout="constrained") if ax is None else (ax.figure, ax)


source_label = provenance.source_label  # 'live on <device>', 'recorded on <device>, <date>', ...
_label = provenance.label  # a record's or a run's source in words


def _title(what: str, live, recorded=()) -> str:
    extra = "; ".join(_label(r) for r in recorded)
    return f"{what} - {_label(live)}" + (f"\nalso shown: {extra}" if extra else "")


def mark_launch_bound(ax, x, y, flags, label: str = "launch-bound: time = launch cost, not the device"):
    """Ring the points whose record says launch_bound=True (their rate is a lower bound); returns
    how many were marked. x, y, flags: equal-length sequences."""
    pts = [(a, b) for a, b, f in zip(x, y, flags) if f]
    if pts:
        ax.plot(*zip(*pts), "o", ms=11, mfc="none", mec="0.25", mew=1.2, ls="none", label=label)
        ax.legend(fontsize="small")
    return len(pts)


def l2_plateau(ax, points, l2_bytes, col=None):
    """Draw the in-L2 level of a GPU sweep: the median rate of the points (not launch-bound) whose
    working set is between L2/8 and L2/2, as a line up to the L2 size; returns that rate or None."""
    if not l2_bytes:
        return None
    inside = [
        p["bytes_per_s"]
        for p in points
        if l2_bytes / 8 <= p["working_set_bytes"] <= l2_bytes / 2 and not p.get("launch_bound")
    ]
    if not inside:
        return None
    level = float(np.median(inside))
    ax.hlines(
        level,
        min(p["working_set_bytes"] for p in points),
        l2_bytes,
        colors=col or color(0),
        linestyles="-.",
        lw=1.2,
        label=f"L2 plateau ({level / 1e9:.0f} GB/s)",
    )
    ax.legend(fontsize="small")
    return level
