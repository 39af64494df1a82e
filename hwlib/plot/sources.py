"""Figures whose colours say where each number came from: live (measured when the page was built),
recorded (this book's stored GPU runs), published (other people's measurements), spec (the spec sheet),
model and computed. Used by chapters 1 and 2 (peaks against measurements, per-format throughput)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Patch
from matplotlib.ticker import EngFormatter, LogLocator

from hwlib.plot._base import OKABE_ITO

SOURCE_COLOR = {
    "live": OKABE_ITO["blue"],
    "recorded": OKABE_ITO["bluish_green"],
    "published": OKABE_ITO["orange"],
    "spec": OKABE_ITO["vermillion"],
    "model": OKABE_ITO["reddish_purple"],
    "computed": OKABE_ITO["sky_blue"],
}


def _check_bars(groups: dict) -> list:
    bars = [b for g in groups.values() for b in g]
    if not bars:
        raise ValueError("source_bars: no bars to draw (every group is empty)")
    bad = sorted({b[2] for b in bars} - set(SOURCE_COLOR))
    if bad:
        raise ValueError(f"source_bars: unknown source kind(s) {bad}; accepted: {', '.join(SOURCE_COLOR)}")
    return bars


def source_bars(
    groups,
    title: str,
    *,
    unit: str = "FLOP/s",
    width: float = 7.2,
    pad: float = 1.3,
    numticks: int = 6,
    right: float | None = None,
    title_size=None,
):
    """Horizontal bars on a log axis, coloured by source, with a legend of the sources shown.

    `groups`: a list of (label, value, kind) bars, or a dict {group name: [bars]} drawn as bold-labelled
    groups with a gap between them; kind is one of SOURCE_COLOR's keys. Values in SI units (`unit`).
    The x axis starts at the smallest value / 5 and ends at the largest x `right` (None: matplotlib's).
    Returns (fig, ax)."""
    named = isinstance(groups, dict)
    groups = groups if named else {"": list(groups)}
    bars = _check_bars(groups)
    fig, ax = plt.subplots(figsize=(width, 0.34 * len(bars) + pad), layout="constrained")
    y, yy = [], 0.0
    for g in groups.values():
        y += [yy + i for i in range(len(g))]
        yy += len(g) + 0.8  # a gap between groups
    y = -np.array(y) if named else np.arange(len(bars))[::-1]
    ax.barh(y, [b[1] for b in bars], color=[SOURCE_COLOR[b[2]] for b in bars])
    ax.set_yticks(y, [b[0] for b in bars], fontsize="small")
    ax.set_xscale("log")
    lo = min(b[1] for b in bars) / 5
    ax.xaxis.set_major_locator(LogLocator(base=10, numticks=numticks))
    ax.xaxis.set_major_formatter(EngFormatter(unit=unit))
    ax.tick_params(axis="x", labelsize="small")
    if right is None:
        ax.set_xlim(left=lo)
    else:
        ax.set_xlim(lo, max(b[1] for b in bars) * right)
    if named:
        ax.set_ylim(y.min() - 0.7, y.max() + 1.3)  # room above the first group's label
        first = 0
        for name, g in groups.items():
            ax.annotate(
                name,
                (0.005, y[first] + 0.55),
                xycoords=("axes fraction", "data"),
                fontsize="small",
                weight="bold",
                va="bottom",
            )
            first += len(g)
    ax.legend(
        handles=[Patch(color=SOURCE_COLOR[k], label=k) for k in dict.fromkeys(b[2] for b in bars)],
        fontsize="small",
        loc="lower right",
    )
    ax.set_title(title, **({} if title_size is None else {"fontsize": title_size}))
    return fig, ax
