"""Figures of chapter 10's pitfalls: per-call overhead against bytes moved (a live measurement,
labelled with its device), when a backward pass hides a data-parallel all-reduce (cost model), and
what narrow number formats lose to range (synthetic data rounded by ``hwlib.formats``).
Each function returns (fig, ax) — (fig, (ax1, ax2)) for the two-panel range figure.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from hwlib import flops, formats, parallel
from hwlib.plot._base import color, source_label


def overhead_exposure(moved, seconds, device: str):
    """Achieved bandwidth Q / t against bytes moved per call Q (log-log), measured live on `device`,
    beside the model Q / (t0 + Q / β) with t0 the smallest call's time and β the largest call's
    bandwidth. `moved` in bytes, `seconds` per call, one per size. Returns (fig, ax)."""
    moved, seconds = np.asarray(moved, dtype=float), np.asarray(seconds, dtype=float)
    if moved.shape != seconds.shape or moved.size < 2:
        raise ValueError("moved and seconds must be equal-length sequences of two or more calls")
    t0, beta = seconds[0], moved[-1] / seconds[-1]
    fig, ax = plt.subplots(figsize=(6.8, 3.8), layout="constrained")
    ax.loglog(moved, moved / seconds, "o-", color=color(0), label=source_label("live", device))
    ax.loglog(moved, moved / (t0 + moved / beta), "--", color=color(1), label="model: Q / (t0 + Q/β)")
    ax.set_xlabel("bytes moved per call")
    ax.set_ylabel("achieved bandwidth (bytes/s)")
    ax.set_title(f"Overhead exposure, live on {device}")
    ax.legend(fontsize="small")
    return fig, ax


def dp_hiding(
    n_params: float, n_devices: int, links: dict, peak_flops: float, mfu: float, tokens=None, title: str = ""
):
    """Seconds per data-parallel step against tokens per GPU (default 10^2 ... 10^6, log-log): compute
    at `mfu` (6N FLOP per token, ``flops.training_time_s``) and its backward pass (4N), against the
    ring all-reduce of N bf16 gradients over `n_devices` GPUs on each link of `links`
    (name -> bytes/s one direction, ``parallel.ring_allreduce_time_s``), dashed, with a dotted
    vertical where the backward pass reaches it (``parallel.backward_hides_comm_tokens``). Returns (fig, ax)."""
    tok = np.logspace(2, 6, 100) if tokens is None else np.asarray(tokens, dtype=float)
    compute_s = flops.training_time_s(flops.training_flops(n_params, tok), peak_flops, mfu)
    fig, ax = plt.subplots(figsize=(6.8, 3.8), layout="constrained")
    ax.loglog(tok, compute_s, color=color(0), lw=2, label=f"compute, {mfu:.0%} MFU (6N per token)")
    ax.loglog(tok, 2 / 3 * compute_s, color=color(0), lw=1, ls="-.", label="its backward pass (4N per token)")
    for i, (name, bandwidth) in enumerate(links.items()):
        t_ar = parallel.ring_allreduce_time_s(n_params * 2, n_devices, bandwidth)
        ax.axhline(t_ar, color=color(i + 1), ls="--", label=f"all-reduce over {name}")
        ax.axvline(
            parallel.backward_hides_comm_tokens(t_ar, n_params, peak_flops, mfu), color=color(i + 1), ls=":", lw=1
        )
    ax.set_xlabel("tokens per GPU per step")
    ax.set_ylabel("seconds per step")
    ax.set_title(title or "When does the backward pass hide the all-reduce? (computed)")
    ax.legend(fontsize="small")
    return fig, ax


def range_loss(grads, lost: dict, range_formats=("fp16", "bf16", "fp8_e4m3", "fp8_e5m2")):
    """Two panels. Left: histogram of log10 |gradient| with each format's representable range
    (smallest subnormal to max, ``formats.info``) as a bar beneath. Right: the fraction of values
    lost (zero, inf or NaN) per case of `lost` (label -> fraction), green where a case is scaled
    ("+" in its label) or bf16, vermillion otherwise. Returns (fig, (ax1, ax2))."""
    fig, (ax1, ax2) = plt.subplots(
        1, 2, figsize=(9.4, 4.0), layout="constrained", gridspec_kw={"width_ratios": [1.1, 1]}
    )
    counts, _, _ = ax1.hist(
        np.log10(np.abs(np.asarray(grads)[np.asarray(grads) != 0])), bins=80, color="0.7", label="gradients"
    )
    step = counts.max() / 6
    for i, name in enumerate(range_formats):
        fmt = formats.info(name)
        ax1.plot([np.log10(fmt.min_subnormal), np.log10(fmt.max)], [-step * (i + 1)] * 2, color=color(i), lw=5)
    ax1.set_xlim(-12, 6)
    ax1.set_ylim(-step * (len(range_formats) + 1), counts.max() * 1.05)
    ax1.set_yticks([-step * (i + 1) for i in range(len(range_formats))], list(range_formats), fontsize="small")
    ax1.set_xlabel("log10 |gradient|; bars: each format's range (smallest subnormal to max)")
    lost_pct = [100 * v for v in lost.values()]
    ax2.barh(list(lost), lost_pct, color=[color(2 if "+" in k or "bf16" in k else 1) for k in lost])
    for yi, v in enumerate(lost_pct):
        ax2.text(v + 0.2, yi, f"{v:.2f} %", va="center", fontsize="x-small")
    ax2.invert_yaxis()
    ax2.set_xlim(0, max(lost_pct) * 1.3 or 1.0)
    ax2.set_xlabel("values lost: zero, inf or NaN (%)")
    ax2.tick_params(axis="y", labelsize="small")
    fig.suptitle("Range, not precision, is what narrow formats lose first (synthetic data, ml_dtypes rounding)")
    return fig, (ax1, ax2)
