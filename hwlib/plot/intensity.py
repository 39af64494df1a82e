"""Arithmetic intensity against problem size (chapter 6): when a square matrix multiply climbs out of
the memory-bound region. Intensity from ``roofline.matmul_intensity`` (I = 2N^3 / (3 N^2 b) for
N x N x N), ridge points I* = peak / bandwidth from the spec sheet. Returns (fig, ax).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from hwlib import roofline, specs
from hwlib.plot._base import color


def matmul_intensity_vs_size(accelerators=("T4", "H100 SXM"), sizes=None, bytes_per_element: int = 2):
    """Intensity (FLOP/byte) of an N x N x N multiply in bf16 (default 2 bytes/element) against N
    (default 10 ... 10^4.5, log-log), with each accelerator's ridge point dashed in its best 16-bit
    format (``Accelerator.default_precision()``: FP16 on a T4, which has no BF16). Returns (fig, ax)."""
    n = np.logspace(1, 4.5, 200) if sizes is None else np.asarray(sizes, dtype=float)
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    ax.loglog(
        n,
        roofline.matmul_intensity(n, n, n, bytes_per_element),
        color=color(0),
        label=f"square matmul, bf16: 2N/(3·{bytes_per_element})",
    )
    for i, name in enumerate(accelerators):
        gpu = specs.get(name)
        prec = gpu.default_precision()
        ax.axhline(
            gpu.ridge_point(prec),
            color=color(i + 1),
            linestyle="--",
            label=f"ridge point {gpu.name} ({prec}, spec sheet)",
        )
    ax.set_xlabel("matrix size N")
    ax.set_ylabel("arithmetic intensity (FLOP/byte)")
    ax.set_title("When does a square matmul become compute-bound?")
    ax.legend(fontsize=8)
    return fig, ax
