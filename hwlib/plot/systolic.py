"""Figures of hwlib.systolic's simulated systolic array (chapter 3): which cells work in each cycle,
and operand fetches and utilization against problem size."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import to_rgb

from hwlib.plot._base import color


def array_frames(frames):
    """One small panel per cycle of a systolic run (hwlib.systolic.simulate(...).row_in_cell): a cell
    working on row i of A is drawn in colour i with i written in it, an idle cell in grey; two rows of
    panels. Returns (fig, axes)."""
    frames = list(frames)
    if not frames:
        raise ValueError("array_frames: no cycles to draw (pass simulate(...).row_in_cell)")
    fig, axes = plt.subplots(2, int(np.ceil(len(frames) / 2)), figsize=(9.6, 3.8), layout="constrained")
    for t, ax in enumerate(axes.flat):
        ax.set_xticks([])
        ax.set_yticks([])
        if t >= len(frames):
            ax.axis("off")
            continue
        image = np.ones(frames[t].shape + (3,)) * 0.9
        for (r, c), i in np.ndenumerate(frames[t]):
            if i >= 0:
                image[r, c] = to_rgb(color(i))
                ax.text(c, r, str(i), ha="center", va="center", fontsize=9, color="white", weight="bold")
        ax.imshow(image)
        ax.set_title(f"cycle {t}: {int((frames[t] >= 0).sum())} busy", fontsize=9)
    fig.suptitle("Which cells work in each cycle (number = row of A in the cell)", fontsize=10)
    return fig, axes


def reuse_and_utilization(sizes, naive, tiled, full, tile: int, rows, util, grid: int):
    """Left: operand fetches (simulated) against matrix size N for a naive loop (2N³), a tile x tile
    array (tiled) and an N x N array (2N²). Right: utilization of a grid x grid array against the rows
    m of A streamed through, simulated points and the formula m / (m + 2 grid - 2).
    Returns (fig, (ax1, ax2))."""
    if not (len(sizes) == len(naive) == len(tiled) == len(full)) or len(rows) != len(util):
        raise ValueError("reuse_and_utilization: sizes/naive/tiled/full and rows/util must have equal lengths")
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9.0, 3.6), layout="constrained")
    ax1.loglog(sizes, naive, "o-", color=color(1), label="naive loop: 2N³")
    ax1.loglog(sizes, tiled, "s-", color=color(2), label=f"{tile}×{tile} array, tiled: N² + N³/{tile}")
    ax1.loglog(sizes, full, "^-", color=color(0), label="N×N array: 2N²")
    ax1.set_xticks(sizes, [str(s) for s in sizes])
    ax1.minorticks_off()
    ax1.set_xlabel("matrix size N")
    ax1.set_ylabel("operand fetches from memory")
    ax1.set_title("Fetches (simulated)")
    ax1.legend(fontsize=8)
    m = np.logspace(0, np.log10(rows[-1]), 100)
    ax2.semilogx(m, m / (m + 2 * grid - 2), color=color(0), label=f"m / (m + 2·{grid} − 2)")
    ax2.semilogx(rows, util, "o", color=color(1), label="simulated")
    ax2.set_xlabel("rows of A streamed through (m)")
    ax2.set_ylabel("utilization")
    ax2.set_ylim(0, 1)
    ax2.set_title(f"{grid}×{grid} array, one pass (simulated)")
    ax2.legend(fontsize=8)
    return fig, (ax1, ax2)
