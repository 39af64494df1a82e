"""The systolic array's dataflow, drawn from the clocked simulator (`hwlib.systolic.simulate` with
trace=True): weights stay in the cells, rows of A enter from the left edge skewed by one cycle per
grid row, partial sums move down, finished dot products leave the bottom edge (Kung & Leiserson
1979; Jouppi et al. 2017). Which cell works on which row of A, in each drawn cycle, is the trace's.
"""

from __future__ import annotations

import numpy as np

from hwlib import systolic

from ._draw import FONT, INK, MUTED, C, arrow, cell, finish, plt, tint

_ROW_COLOURS = ["blue", "vermillion", "bluish_green", "orange", "reddish_purple", "sky_blue", "yellow"]


def systolic_dataflow(m: int = 5, k: int = 3, n: int = 3, cycles=(1, 3, 5)):
    """Snapshots of a k x n weight-stationary array computing C = A B (A: m x k) at the given cycles.
    Each cell shows its weight B[r, c] and, when busy, the row i of A it is working on; the skewed
    queue of A on the left shows what has not entered yet, C on the bottom what has left."""
    a = np.arange(1, m * k + 1, dtype=float).reshape(m, k)
    b = np.arange(1, k * n + 1, dtype=float).reshape(k, n)
    run = systolic.simulate(a, b, trace=True)
    total = run.compute_cycles
    bad = [t for t in cycles if not 0 <= t < total]
    if bad:
        raise ValueError(f"cycles must lie in 0..{total - 1} (the pass takes {total} compute cycles); got {bad}")
    fig, axes = plt.subplots(1, len(cycles), figsize=(3.6 * len(cycles), 3.3), layout="constrained")
    axes = np.atleast_1d(axes)
    busy = {}
    for ax, t in zip(axes, cycles):
        busy[t] = int((run.row_in_cell[t] >= 0).sum())
        _snapshot(ax, run, a, b, t, m, k, n)
    fig.suptitle(
        f"Weight-stationary systolic array: C = A B, A {m} x {k} on a {k} x {n} grid "
        f"(one pass = {total} compute cycles, simulated)",
        fontsize=FONT + 1,
    )
    alt = (
        f"{len(cycles)} snapshots of a {k} by {n} grid of multiply-accumulate cells at cycles "
        f"{', '.join(map(str, cycles))} of {total}. Each cell holds a fixed weight. Rows of A wait on the "
        f"left in a staircase, each grid row starting one cycle after the one above, and move right one cell "
        f"per cycle; partial sums move down and finished elements of C leave at the bottom. Busy cells are "
        f"coloured by the row of A they work on: {', '.join(str(busy[t]) for t in cycles)} busy cells in the "
        f"drawn cycles."
    )
    return finish(fig, alt, {"compute_cycles": total, "busy": busy, "formula_cycles": systolic.compute_cycles(m, k, n)})


def _snapshot(ax, run, a, b, t, m, k, n):
    rows = run.row_in_cell[t]
    for r in range(k):
        for c in range(n):
            i = rows[r, c]
            face = tint(_ROW_COLOURS[i % len(_ROW_COLOURS)], 0.6) if i >= 0 else "#eeeeee"
            y = k - 1 - r
            cell(ax, c, y, 0.9, 0.9, face, lw=1.0)
            ax.text(c + 0.45, y + 0.62, f"w={b[r, c]:g}", ha="center", fontsize=FONT - 1, color=INK)
            ax.text(
                c + 0.45,
                y + 0.25,
                f"row {i}" if i >= 0 else "idle",
                ha="center",
                fontsize=FONT - 1,
                color=INK if i >= 0 else MUTED,
                weight="bold" if i >= 0 else "normal",
            )
    for r in range(k):  # A elements still waiting: A[i, r] enters grid row r at cycle i + r
        waiting = [i for i in range(m) if i + r > t]
        y = k - 1 - r
        for i in waiting[:3]:
            x = -0.75 - 0.7 * (i + r - t - 1)
            if x < -2.6:
                break
            cell(ax, x, y + 0.2, 0.6, 0.5, tint(_ROW_COLOURS[i % len(_ROW_COLOURS)], 0.35), lw=0.5)
            ax.text(x + 0.3, y + 0.45, f"a{i}{r}", ha="center", va="center", fontsize=FONT - 1.5)
        arrow(ax, (-0.12, y + 0.45), (-0.01, y + 0.45), lw=1.0)
    done = int(((np.arange(m)[:, None] + (k - 1) + np.arange(n)[None, :]) < t).sum())  # C[i, c] leaves at i+k-1+c
    for c in range(n):
        arrow(ax, (c + 0.45, -0.02), (c + 0.45, -0.35), lw=1.0, color=C["blue"])
    ax.text(n / 2 - 0.05, -0.6, f"C elements out so far: {done} of {m * n}", ha="center", fontsize=FONT - 0.5)
    ax.text(n / 2 - 0.05, k + 0.2, "partial sums move down", ha="center", fontsize=FONT - 1, color=MUTED)
    ax.set_title(f"cycle {t}: {int((rows >= 0).sum())} of {k * n} cells busy", fontsize=FONT + 0.5)
    ax.set_xlim(-2.7, n + 0.1)
    ax.set_ylim(-0.9, k + 0.5)
    ax.set_aspect("equal")
    ax.axis("off")
