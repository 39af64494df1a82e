"""A weight-stationary systolic array, simulated clock by clock, that counts its memory fetches.

The matrix unit of a TPU is a grid of multiply-accumulate (MAC) cells wired to their neighbours
(chapter 3; Kung & Leiserson 1979; Jouppi et al., ISCA 2017). In the weight-stationary
layout simulated here, for C = A B with A of shape m x k and B of shape k x n on an s x s grid:

* cell (r, c) holds the weight B[r, c], loaded once, one grid row per cycle (k load cycles);
* row i of A enters from the left edge, element A[i, r] into grid row r at cycle i + r (the
  *skew*: each row of the grid starts one cycle after the row above it);
* every cycle each cell multiplies the A value it holds by its weight, adds the partial sum handed
  down by the cell above, passes the sum down and the A value right;
* C[i, c] leaves the bottom of column c at cycle i + (k - 1) + c.

The last result leaves at cycle (m - 1) + (k - 1) + (n - 1), so one pass takes

    compute cycles = m + (k - 1) + (n - 1)      [cycles]
                   = stream (one row of A per cycle) + skew/fill (k - 1) + drain (n - 1)

and the cells do useful work a fraction m k n / (s^2 (m + k + n - 2)) of the time: a long stream of
rows (a big batch) hides the fill and drain. Fetches from memory: each weight once (k n) and each
element of A once per pass (m k), against 2 m n k for a naive triple loop that fetches both operands
of every multiply-add. Bigger matrices are split into s x s tiles of B, one pass per tile, so A is
fetched once per column of tiles: k n + m k ceil(n / s)  (N^2 + N^3/s for square N; Exercise 3.1).

>>> r = simulate(np.arange(6.).reshape(2, 3), np.ones((3, 3)))
>>> r.product.tolist(), r.compute_cycles, r.fetches, r.naive_fetches
([[3.0, 3.0, 3.0], [12.0, 12.0, 12.0]], 6, 15, 36)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import _check

MAX_TRACE_CELL_CYCLES = 20_000_000
"""Largest cycles x s x s a trace may hold (bool arrays); bigger runs are simulated without one."""


def compute_cycles(m, k, n) -> int:
    """Cycles from the first A element entering to the last C element leaving one pass:
    m + (k - 1) + (n - 1)  [cycles]  (stream m rows + skew k - 1 + drain n - 1; module docstring)."""
    m_, k_, n_ = (_check.integer(name, v) for name, v in (("m", m), ("k", k), ("n", n)))
    return m_ + (k_ - 1) + (n_ - 1)


def load_cycles(k) -> int:
    """Cycles to shift a k-row tile of weights into the grid, one row per cycle: k  [cycles].
    (A real TPU double-buffers the weights so the next tile loads while this one computes.)"""
    return _check.integer("k", k)


def naive_fetches(m, n, k) -> int:
    """Operand fetches of `for i, j, p: C[i, j] += A[i, p] * B[p, j]` with no reuse: 2 m n k."""
    m_, n_, k_ = (_check.integer(name, v) for name, v in (("m", m), ("n", n), ("k", k)))
    return 2 * m_ * n_ * k_


def systolic_fetches(m, n, k, size) -> int:
    """Operand fetches of a weight-stationary s x s array: every weight once (k n) and every element
    of A once per column of weight tiles (m k ceil(n / s)). For m = n = k = N <= s: 2 N^2."""
    m_, n_, k_ = (_check.integer(name, v) for name, v in (("m", m), ("n", n), ("k", k)))
    s = _check.integer("size", size)
    return k_ * n_ + m_ * k_ * math.ceil(n_ / s)


@dataclass(frozen=True)
class Result:
    """What one simulated product did. Counts are exact tallies of the simulation, not formulas."""

    product: np.ndarray  # C = A B (float64)
    size: int  # the grid is size x size cells
    tiles: int  # passes (weight tiles of at most size x size)
    compute_cycles: int  # cycles with data in flight, summed over passes
    load_cycles: int  # cycles spent shifting weights in, summed over passes
    a_fetches: int  # elements of A read from memory (entering the left edge)
    b_fetches: int  # weights read from memory (loaded into cells)
    c_writes: int  # results written back (leaving the bottom edge)
    macs: int  # multiply-accumulates done by the cells
    naive_fetches: int  # 2 m n k, the triple loop's operand fetches
    active: np.ndarray | None = None  # [cycle, row, col] True where the cell did a MAC (one pass)
    row_in_cell: np.ndarray | None = None  # [cycle, row, col] index i of the A row in the cell, -1 if idle

    @property
    def cycles(self) -> int:
        """Total cycles: loading weights plus computing, passes one after another."""
        return self.load_cycles + self.compute_cycles

    @property
    def fetches(self) -> int:
        """Operand fetches from memory: a_fetches + b_fetches."""
        return self.a_fetches + self.b_fetches

    @property
    def reuse(self) -> float:
        """How many times fewer fetches than the naive loop: naive_fetches / fetches."""
        return self.naive_fetches / self.fetches

    @property
    def utilization(self) -> float:
        """Fraction of cell-cycles that did a MAC while data was in flight: macs / (s^2 compute_cycles)."""
        return self.macs / (self.size**2 * self.compute_cycles)


def _matrix(name: str, x) -> np.ndarray:
    arr = np.asarray(x)
    if arr.ndim != 2 or arr.dtype == bool or not np.issubdtype(arr.dtype, np.number) or 0 in arr.shape:
        raise ValueError(
            f"{name} must be a non-empty 2-D array of numbers; got shape {getattr(arr, 'shape', None)} of {arr.dtype}"
        )
    arr = arr.astype(np.float64)
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} must hold finite numbers; got a NaN or inf")
    return arr


def _one_pass(a: np.ndarray, w: np.ndarray, size: int, trace: bool):
    """Clock one pass of A (m x kt) through the grid holding weights w (kt x nt, kt, nt <= size).
    Returns (C tile, macs, a_fetches, c_writes, active, row_in_cell)."""
    m, kt = a.shape
    nt = w.shape[1]
    cycles = compute_cycles(m, kt, nt)
    grid_w = np.zeros((size, size))
    grid_w[:kt, :nt] = w
    a_reg = np.zeros((size, size))  # the A value each cell holds this cycle
    a_row = np.full((size, size), -1)  # which row i of A that value came from (-1: none)
    psum = np.zeros((size, size))  # partial sum each cell hands down
    psum_row = np.full((size, size), -1)  # the A row that partial sum belongs to
    out = np.full((m, nt), np.nan)
    macs = a_fetches = c_writes = 0
    active = np.zeros((cycles, size, size), bool) if trace else None
    rows = np.full((cycles, size, size), -1, np.int32) if trace else None
    grid_rows = np.arange(kt)
    for t in range(cycles):
        a_reg[:, 1:], a_row[:, 1:] = a_reg[:, :-1].copy(), a_row[:, :-1].copy()  # move A one cell right
        i = t - grid_rows  # skewed entry at the left
        enter = (i >= 0) & (i < m)
        a_reg[:kt, 0] = np.where(enter, a[np.clip(i, 0, m - 1), grid_rows], 0.0)
        a_row[:kt, 0] = np.where(enter, i, -1)
        a_fetches += int(enter.sum())
        a_row[kt:, :] = -1
        a_row[:, nt:] = -1  # cells outside the tile hold no weight: idle
        busy = a_row >= 0
        if np.any(busy[1:] & (psum_row[:-1] != a_row[1:])):  # the skew's whole point
            raise AssertionError("skew broken: a partial sum met an A value of another row")
        above = np.vstack([np.zeros((1, size)), psum[:-1]])
        psum, psum_row = np.where(busy, above + a_reg * grid_w, 0.0), np.where(busy, a_row, -1)
        macs += int(busy.sum())
        done = busy[kt - 1, :nt]  # bottom row of the tile: finished dot products
        out[a_row[kt - 1, :nt][done], np.nonzero(done)[0]] = psum[kt - 1, :nt][done]
        c_writes += int(done.sum())
        if active is not None and rows is not None:
            active[t], rows[t] = busy, np.where(busy, a_row, -1)
    return out, macs, a_fetches, c_writes, active, rows


def simulate(a, b, size=None, trace: bool = False) -> Result:
    """C = A B on a weight-stationary size x size systolic array, clocked cycle by cycle.

    a: m x k, b: k x n (numbers). size: grid side (default max(k, n): one pass, no tiling); larger
    matrices are cut into tiles of B of at most size x size, one pass per tile, the passes' partial
    sums added in an accumulator (as a TPU's accumulator memory does). trace=True records, for a
    single-pass product, which cells are busy in each cycle and which row of A they work on.
    """
    a_, b_ = _matrix("a", a), _matrix("b", b)
    m, k = a_.shape
    if b_.shape[0] != k:
        raise ValueError(f"b must have as many rows as a has columns ({k}); got b of shape {b_.shape}")
    n = b_.shape[1]
    s = max(k, n) if size is None else _check.integer("size", size)
    k_tiles, n_tiles = math.ceil(k / s), math.ceil(n / s)
    if trace and (k_tiles * n_tiles != 1 or compute_cycles(m, k, n) * s * s > MAX_TRACE_CELL_CYCLES):
        raise ValueError(
            f"trace needs one pass (k, n <= size) and at most {MAX_TRACE_CELL_CYCLES:,} "
            f"cell-cycles; got m={m}, k={k}, n={n}, size={s}"
        )
    c = np.zeros((m, n))
    totals = dict(compute=0, load=0, a=0, b=0, c=0, macs=0)
    active = rows = None
    for kt in range(k_tiles):
        for nt in range(n_tiles):
            ks, ns = slice(kt * s, min(k, (kt + 1) * s)), slice(nt * s, min(n, (nt + 1) * s))
            w = b_[ks, ns]
            part, macs, fa, wc, active, rows = _one_pass(a_[:, ks], w, s, trace)
            c[:, ns] += part
            totals["compute"] += compute_cycles(m, w.shape[0], w.shape[1])
            totals["load"] += load_cycles(w.shape[0])
            totals["a"] += fa
            totals["b"] += w.size
            totals["c"] += wc
            totals["macs"] += macs
    return Result(
        c,
        s,
        k_tiles * n_tiles,
        totals["compute"],
        totals["load"],
        totals["a"],
        totals["b"],
        totals["c"],
        totals["macs"],
        naive_fetches(m, n, k),
        active,
        rows,
    )


def naive(a, b):
    """The triple loop, with a counter on every operand fetch (small matrices only: pure Python).
    Returns (C, fetches); fetches equals naive_fetches(m, n, k) = 2 m n k."""
    a_, b_ = _matrix("a", a), _matrix("b", b)
    m, k = a_.shape
    if b_.shape[0] != k:
        raise ValueError(f"b must have as many rows as a has columns ({k}); got b of shape {b_.shape}")
    n = b_.shape[1]
    if m * n * k > 1_000_000:
        raise ValueError(
            f"naive() loops in Python; keep m n k <= 1,000,000 (got {m * n * k:,}); use naive_fetches() for the count"
        )
    c = np.zeros((m, n))
    fetches = 0
    for i in range(m):
        for j in range(n):
            for p in range(k):
                x, y = a_[i, p], b_[p, j]  # two fetches: nothing is kept between iterations
                fetches += 2
                c[i, j] += x * y
    return c, fetches
