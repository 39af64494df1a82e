"""A roofline fitted from one's own measurements (Exercise 6.1; chapter 6, "Measure it: your device's roofline").

Bandwidth β is the best rate of the STREAM kernels of experiment E1 (hwlib.bench.bandwidth), peak π
the best rate of the matrix products of experiment E2 (hwlib.bench.matmul): the roof a machine has
shown it can reach, not the one its spec sheet promises. Points are plain lists so that a grader can
recompute everything from a learner's recorded samples:

* a STREAM point is ``[counted bytes, seconds]`` (STREAM's byte count, the best time);
* a GEMM point is ``[m, n, k, bytes per element, seconds]`` (FLOPs 2mnk, bytes (mk + kn + mn)·b).

A point faster than the device's spec-sheet roof is not a fast kernel but a broken measurement (a
time in the wrong unit, a GPU timer read before the kernel finished): `broken` names it.
Sources: chapter 4 (matmul intensity), chapter 6 (P(I) = min(π, βI)); McCalpin's STREAM.
"""

from __future__ import annotations

import math

from . import _check, roofline, specs

FORMULAS = {
    "fit_bandwidth": "β = max(bytes / t) over the STREAM points",
    "fit_peak": "π = max(2mnk / t) over the GEMM points",
    "gemm_rate": "P = 2mnk / t",
    "crossover_batch": "m* = I* b k n / (2kn - I* b (k + n))",
    "points_above": "count of P > (1 + slack) min(π, β I)",
}

SLACK = 0.05
"""Relative allowance before a point counts as above a roof (timer resolution, clock boosts)."""


def _positive_points(points, width: int, what: str) -> list:
    if not isinstance(points, (list, tuple)) or not points:
        raise ValueError(f"{what} must be a non-empty list of points; got {type(points).__name__}")
    out = []
    for i, p in enumerate(points):
        if not isinstance(p, (list, tuple)) or len(p) != width:
            raise ValueError(f"{what}[{i}] must be a list of {width} numbers; got {p!r}"[:160])
        vals = [float(x) for x in p]
        if not all(math.isfinite(v) and v > 0 for v in vals):
            raise ValueError(f"{what}[{i}]: every value must be a positive, finite number; got {p!r}"[:160])
        out.append(vals)
    return out


def stream_rates(points) -> list:
    """Bytes/s of each STREAM point [bytes, seconds]."""
    return [b / t for b, t in _positive_points(points, 2, "stream_points")]


def fit_bandwidth(points) -> float:
    """β = the best STREAM rate [bytes/s] (STREAM's convention: the best time of the best kernel)."""
    return max(stream_rates(points))


def gemm_rate(point) -> float:
    """FLOP/s of one GEMM point [m, n, k, itemsize, seconds]: 2mnk / t."""
    m, n, k, _b, t = _positive_points([point], 5, "gemm point")[0]
    return 2 * m * n * k / t


def gemm_intensity(point) -> float:
    """FLOP/byte of one GEMM point: 2mnk / ((mk + kn + mn) b) (hwlib.roofline.matmul_intensity)."""
    m, n, k, b, _t = _positive_points([point], 5, "gemm point")[0]
    return roofline.matmul_intensity(m, n, k, b)


def fit_peak(points) -> float:
    """π = the best GEMM rate [FLOP/s] over all points (square and skinny)."""
    return max(gemm_rate(p) for p in _positive_points(points, 5, "gemm_points"))


def crossover_batch(ridge, k, n, itemsize):
    """The batch m at which a (m x k)(k x n) product reaches intensity `ridge`:
    m* = I* b k n / (2kn - I* b (k + n)); math.inf when no batch does (the ridge is above the
    product's largest intensity 2kn / ((k + n) b)). Source: chapter 4, the skinny matrix multiply."""
    r = _check.positive("ridge", ridge)
    den = 2 * k * n - r * itemsize * (k + n)
    return math.inf if den <= 0 else r * itemsize * k * n / den


def points_above(points, peak_flops, bandwidth, slack: float = SLACK) -> int:
    """How many GEMM points run faster than (1 + slack) x the roof min(π, βI) at their intensity."""
    return sum(
        gemm_rate(p) > (1 + slack) * roofline.attainable(gemm_intensity(p), peak_flops, bandwidth)
        for p in _positive_points(points, 5, "gemm_points")
    )


def broken(device_name, precision, stream_points, gemm_points, slack: float = SLACK) -> str | None:
    """Why these measurements cannot be real on `device_name` (a GPU on the spec sheet): a STREAM
    point above its bandwidth or a GEMM point above its roof in `precision`; None when all are
    possible, and for a device the sheet does not know (a CPU: no spec-sheet roof to compare with)."""
    spec = specs.match(str(device_name)) if device_name else None
    if spec is None:
        return None
    beta = fit_bandwidth(stream_points)
    if beta > (1 + slack) * spec.bandwidth:
        return (
            f"your best STREAM rate is {beta / spec.bandwidth:.2f}x the memory bandwidth of a {spec.name}: "
            "not possible, a broken measurement (a time in the wrong unit, a timer read before the GPU finished?)"
        )
    try:
        peak = spec.peak_flops(precision)
    except ValueError:
        return None
    over = points_above(gemm_points, peak, spec.bandwidth, slack)
    if over:
        return (
            f"{over} of your matrix products ran faster than the {precision} roofline of a {spec.name}: "
            "not possible, a broken measurement (re-run the timing cell; do not edit its numbers)"
        )
    return None
