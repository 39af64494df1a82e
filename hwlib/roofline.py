"""The roofline model: arithmetic intensity against the machine's two ceilings.

Intensity I is FLOP per byte moved to and from memory (HBM unless stated), peak π in FLOP/s,
bandwidth β in bytes/s. Every function takes plain floats or NumPy arrays.

Sources: chapter 4 (intensity, machine balance, matmul and elementwise intensity), chapter 6
(P(I) = min(π, βI), ridge I* = π/β), chapter 1 (Little's law); Williams, Waterman & Patterson,
"Roofline", CACM 2009; Little 1961.
"""

from __future__ import annotations

import numpy as np

from . import _check
from .memory import element_bytes

FORMULAS = {
    "ridge_point": "I* = π / β",
    "attainable": "P = min(π, β·I)",
    "bound": "memory if I < I*, else compute",
    "intensity": "I = F / Q",
    "matmul_intensity": "I = 2mnk / ((mk + kn + mn)·b)",
    "matmul_bytes": "Q = (mk + kn + mn)·b",
    "elementwise_intensity": "I = c / ((r + w)·b)",
    "in_flight_bytes": "N = T × L",
    "time_s": "t = max(F/π, Q/β)",
}
"""The formula each function of this module evaluates, as the calculators print it (the one copy:
`hwlib.calculator`, `hwlib.diagnose`, the command line and the in-page calculator read it here)."""


def ridge_point(peak_flops, bandwidth):
    """Machine balance / ridge point I* = π / β  [FLOP/byte].

    H100 SXM, bf16 dense: 989.4e12 / 3.35e12 ≈ 295. Source: chapter 4 and chapter 6; Williams et al. 2009.
    """
    pi = _check.positive("peak_flops", peak_flops)
    beta = _check.positive("bandwidth", bandwidth)
    return pi / beta


def attainable(intensity, peak_flops, bandwidth):
    """Attainable performance P(I) = min(π, β·I)  [FLOP/s]; element-wise for arrays.

    Source: chapter 6; Williams et al. 2009 ("Attainable GFlops/sec = Min(peak, bandwidth × intensity)").
    """
    i = _check.positive("intensity", intensity)
    pi = _check.positive("peak_flops", peak_flops)
    beta = _check.positive("bandwidth", bandwidth)
    result = np.minimum(pi, beta * i)
    return float(result) if np.ndim(result) == 0 else result


def bound(intensity, peak_flops, bandwidth):
    """ "memory" if I < I* = π/β, else "compute" (an array of those strings for array input).

    Exactly at the ridge both roofs give π, so the kernel can reach peak: we call it "compute".
    Source: chapter 4 ("I < I* is memory-bound; I > I* is compute-bound") and chapter 6.
    """
    i = _check.positive("intensity", intensity)
    ridge = ridge_point(peak_flops, bandwidth)
    result = np.where(i < ridge, "memory", "compute")
    return str(result) if np.ndim(result) == 0 else result


def intensity(flop_count, bytes_moved):
    """Arithmetic intensity I = FLOP / bytes moved  [FLOP/byte]. Source: chapter 4."""
    f = _check.positive("flop_count", flop_count)
    q = _check.positive("bytes_moved", bytes_moved)
    return f / q


def matmul_intensity(m, n, k, bytes_per_element):
    """Intensity of C[m×n] = A[m×k]·B[k×n], each matrix read or written once:
    I = 2mnk / ((mk + kn + mn)·b)  [FLOP/byte]; b in bytes or a dtype name ("bf16").

    Square N×N: 2N/(3b), so bf16 reaches I* = 500 at N = 1500. With m = batch of tokens ≪ n = k
    (weights), I ≈ 2m/b, i.e. ≈ batch for bf16: "intensity ≈ batch" (chapter 4; chapter 9).
    """
    m_ = _check.positive("m", m)
    n_ = _check.positive("n", n)
    k_ = _check.positive("k", k)
    b = element_bytes("bytes_per_element", bytes_per_element)
    return 2.0 * m_ * n_ * k_ / ((m_ * k_ + k_ * n_ + m_ * n_) * b)


def matmul_bytes(m, n, k, bytes_per_element):
    """Minimum bytes of C[m×n] = A[m×k]·B[k×n], each matrix read or written once:
    Q = (mk + kn + mn)·b  [bytes]; b in bytes or a dtype name ("bf16"). With flops.matmul_flops
    (2mnk) it gives the intensity of `matmul_intensity`. Source: chapter 4; chapter 6."""
    m_ = _check.positive("m", m)
    n_ = _check.positive("n", n)
    k_ = _check.positive("k", k)
    b = element_bytes("bytes_per_element", bytes_per_element)
    return (m_ * k_ + k_ * n_ + m_ * n_) * b


def elementwise_intensity(flops_per_element, bytes_per_element, reads=1, writes=1):
    """Intensity of an elementwise kernel doing c FLOP per element with r reads and w writes:
    I = c / ((r + w)·b)  [FLOP/byte]; chapter 4's c / (2b) for one read and one write.

    Independent of size, so far below any ridge point. Source: chapter 4.
    """
    c = _check.positive("flops_per_element", flops_per_element)
    b = element_bytes("bytes_per_element", bytes_per_element)
    r = _check.integer("reads", reads, minimum=0)
    w = _check.integer("writes", writes, minimum=0)
    if r + w == 0:
        raise ValueError(
            f"reads + writes must be >= 1 (a kernel moves some bytes); got reads={reads!r}, writes={writes!r}"
        )
    return c / ((r + w) * b)


def in_flight_bytes(bandwidth, latency_s):
    """Little's law N = T × L: bytes that must be outstanding to sustain bandwidth T at latency L  [bytes].

    2e12 B/s at 300 ns needs 6e5 B (hundreds of kilobytes) in flight. Source: chapter 1; Little 1961.
    """
    t = _check.positive("bandwidth", bandwidth)
    lat = _check.positive("latency_s", latency_s)
    return t * lat


def time_s(flop_count, bytes_moved, peak_flops, bandwidth):
    """Roofline lower bound on a kernel's run time: t = max(F/π, Q/β)  [s].

    Equivalent to F / attainable(F/Q, π, β). Source: chapter 6 (the two ceilings as times).
    """
    f = _check.positive("flop_count", flop_count)
    q = _check.positive("bytes_moved", bytes_moved)
    pi = _check.positive("peak_flops", peak_flops)
    beta = _check.positive("bandwidth", bandwidth)
    result = np.maximum(f / pi, q / beta)
    return float(result) if np.ndim(result) == 0 else result
