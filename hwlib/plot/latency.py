"""Figures of latency hiding (chapter 1): Little's law (bandwidth = bytes in flight / latency) against
published and measured points, and warp divergence (paths per warp) against E5's measurements."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import EngFormatter

from hwlib import units
from hwlib.plot._base import _label, color, source_label
from hwlib.plot.sources import SOURCE_COLOR


def _bound_panel(ax, published, bounds, latency_s, fit_latency_s, recorded, marks):
    x = np.logspace(4, 7.3, 200)
    for name, bandwidth, style in bounds:
        ax.plot(
            x,
            np.minimum(bandwidth, x / latency_s),
            style,
            color=SOURCE_COLOR["spec"],
            lw=1.5,
            label=f"bound: {name} spec bandwidth, L = {units.format_seconds(latency_s)}",
        )
    ax.plot(
        x,
        x / fit_latency_s,
        ":",
        color=SOURCE_COLOR["published"],
        label=f"slope of the points: L = {units.format_seconds(fit_latency_s)}",
    )
    px, py, plabel = published
    ax.plot(px, py, "o", color=SOURCE_COLOR["published"], label=plabel)
    for run in recorded:
        pts = [p for p in run["results"] if "bytes_in_flight" in p]
        if pts:
            ax.plot(
                [p["bytes_in_flight"] for p in pts],
                [p["bytes_per_s"] for p in pts],
                "s",
                ms=4,
                color=SOURCE_COLOR["recorded"],
                label=_label(run),
            )
    for at, text in marks:
        ax.axvline(at, color="0.5", lw=0.8, ls="-.")
        ax.annotate(text, (at, 2e10), fontsize="x-small", rotation=90, ha="right", va="bottom", color="0.3")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("bytes in flight (B)")
    ax.set_ylabel("bandwidth (bytes/s)")
    ax.set_ylim(1e10, 1e13)
    ax.set_title("Bandwidth vs bytes in flight (published + model)")


def _live_panel(ax, ax_top, e6):
    gpu = e6["device"].get("kind") == "gpu"
    name = e6["device"]["name"]
    if gpu:
        for i, ilp in enumerate(sorted({p["ilp"] for p in e6["results"]})):
            pts = [p for p in e6["results"] if p["ilp"] == ilp]
            xs, ys = [p["bytes_in_flight"] for p in pts], [p["bytes_per_s"] for p in pts]
            ax.plot(xs, ys, "o-", color=color(i), label=f"ILP {ilp}")
            ax_top.plot(
                xs, ys, "o", ms=4, color=SOURCE_COLOR["live"], label=source_label("live", name) if i == 0 else None
            )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("bytes in flight (B)")
    else:
        ax.plot(
            [p["threads"] for p in e6["results"]],
            [p["bytes_per_s"] for p in e6["results"]],
            "o-",
            color=SOURCE_COLOR["live"],
            label="read bandwidth (NumPy, one slice per thread)",
        )
        ax.axvline(e6["device"]["cores"], color="0.5", ls=":", label=f"{e6['device']['cores']} cores")
        ax.set_xlabel("reading threads (concurrency)")
        ax.set_xticks([p["threads"] for p in e6["results"]])
        ax.set_ylim(0, None)
    ax.set_ylabel("bandwidth (bytes/s)")
    ax.yaxis.set_major_formatter(EngFormatter(unit="B/s"))
    ax.set_title(f"E6 {source_label('live', name)}" + ("" if gpu else "\n(a CPU, not a GPU)"))
    ax.legend(fontsize="x-small")


def littles_law(e6: dict, published, bounds, latency_s: float, fit_latency_s: float, recorded=(), marks=()):
    """Two panels. Top: the bound min(bandwidth, bytes in flight / L) for each of `bounds` [(name,
    bandwidth B/s, line style)] at latency `latency_s` (s), the line x / fit_latency_s, the `published`
    points (bytes in flight, B/s, label), recorded E6 runs and vertical `marks` [(bytes, text)].
    Bottom: the live E6 record, on a GPU bandwidth against bytes in flight per ILP (also drawn on top),
    on a CPU bandwidth against reading threads, titled with the device. Returns (fig, (ax, ax2))."""
    if not bounds:
        raise ValueError("littles_law: bounds must name at least one (name, bandwidth, style)")
    if not (latency_s > 0 and fit_latency_s > 0):
        raise ValueError(f"littles_law: latencies must be > 0 s; got {latency_s!r}, {fit_latency_s!r}")
    fig, (ax, ax2) = plt.subplots(2, 1, figsize=(7.2, 9.0), layout="constrained")
    _bound_panel(ax, published, bounds, latency_s, fit_latency_s, recorded, marks)
    ax.legend(fontsize="x-small", loc="upper left")  # before the live GPU points join the top panel
    _live_panel(ax2, ax, e6)
    return fig, (ax, ax2)


_PATTERN_MARKERS = [("random", "o"), ("lane_alternating", "s"), ("warp_uniform", "^")]


def divergence(p, paths_by_warp: dict, runs=()):
    """Two panels. Top: expected paths per warp against the fraction p of lanes on path B, one curve
    per warp width ({width: values over p}), the warp-uniform level 1, and each run's measured slowdown
    per pattern at p = 0.5. Bottom: the model P paths -> slowdown P for P = 1..32 and each run's P-way
    points. runs: [(E5 record, 'live' or 'recorded')]. Returns (fig, (ax, ax2))."""
    bad = [kind for _, kind in runs if kind not in ("live", "recorded")]
    if bad:
        raise ValueError(f"divergence: run kinds must be 'live' or 'recorded'; got {bad}")
    fig, (ax, ax2) = plt.subplots(2, 1, figsize=(7.2, 7.6), layout="constrained")
    for i, (w, paths) in enumerate(paths_by_warp.items()):
        ax.plot(p, paths, color=color(i), label=f"model, random lanes, warp of {w}")
    ax.axhline(1, color="0.4", ls="--", lw=1, label="model, lanes sorted by path (warp-uniform)")
    K = np.arange(1, 33)
    ax2.plot(K, K, "-", color=SOURCE_COLOR["model"], label="model: P paths run one after another")
    for j, (run, kind) in enumerate(runs):
        res = {r["pattern"]: r for r in run["results"]}
        lab = _label(run)
        for pat, mk in _PATTERN_MARKERS:
            if pat in res:
                ax.plot(
                    [0.5],
                    [res[pat]["slowdown"]],
                    mk,
                    color=SOURCE_COLOR[kind],
                    ms=7,
                    label=f"{pat}: {lab}" if j == 0 else None,
                )
        ways = [r for r in run["results"] if "ways" in r]
        ax2.plot([r["ways"] for r in ways], [r["slowdown"] for r in ways], "o", color=SOURCE_COLOR[kind], label=lab)
    ax.set_xlabel("fraction p of lanes taking path B")
    ax.set_ylabel("expected slowdown (paths per warp)")
    ax.set_title("Two-way branch: random vs sorted lanes")
    ax.legend(fontsize="x-small", loc="lower center")
    ax2.set_xlabel("distinct paths per warp P")
    ax2.set_ylabel("slowdown")
    ax2.set_title("P-way switch on the lane index")
    ax2.legend(fontsize="x-small")
    return fig, (ax, ax2)
