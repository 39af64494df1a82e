"""Figures of kernel practice (chapter 11): tile and wave quantisation of a matmul sweep (E10) and the
useful bandwidth of strided reads (E11), each measured point beside the model of hwlib.tiling or
hwlib.coalescing, and the source of every line named (live, recorded, model)."""

from __future__ import annotations

import matplotlib.pyplot as plt

from hwlib import tiling
from hwlib.plot._base import _label, color, mark_launch_bound
from hwlib.plot.sources import SOURCE_COLOR


def wave_model(sizes, sms: int, ax=None, tile: int = 128):
    """Model panel: tile x wave efficiency of square N x N GEMMs on `sms` SMs (hwlib.tiling.sweep)."""
    fig, ax = plt.subplots(figsize=(7.0, 3.6), layout="constrained") if ax is None else (ax.figure, ax)
    rows = tiling.sweep(sizes, sms, tile)
    ns = [r["n"] for r in rows]
    ax.step(ns, [r["efficiency"] for r in rows], where="mid", color=SOURCE_COLOR["model"],
            label=f"model: tile x wave, {tile} x {tile} tiles, {sms} SMs")  # fmt: skip
    ax.plot(ns, [r["wave_efficiency"] for r in rows], ":", color=color(1), label="wave quantisation only")
    ax.set_xlabel("N (square N x N x N GEMM)")
    ax.set_ylabel("useful share of the SMs' work")
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize="small", loc="lower left")
    ax.set_title("Tile and wave quantisation (model)")
    return fig, ax


def tile_sweep(record, ax=None):
    """E10: measured FLOP/s against N (square points), relative to the best point, with the model
    column where the record has one (GPU runs); launch-bound points ringed. Returns (fig, ax)."""
    fig, ax = plt.subplots(figsize=(7.0, 4.2), layout="constrained") if ax is None else (ax.figure, ax)
    pts = [r for r in record["results"] if r.get("shape") == "square"]
    if not pts:
        raise ValueError("record has no square points: pass an E10 ('tiles') record that ran")
    best = max(r["flops_per_s"] for r in pts)
    xs, ys = [r["n"] for r in pts], [r["flops_per_s"] / best for r in pts]
    ax.plot(xs, ys, "o-", color=SOURCE_COLOR["live" if record.get("source") == "live" else "recorded"],
            label=f"measured, relative to its best ({_label(record)})")  # fmt: skip
    odd = [(x, y) for x, y, r in zip(xs, ys, pts) if not r["aligned"]]
    if odd:
        ax.plot(*zip(*odd), "x", ms=9, color=color(5), ls="none", label="N not a multiple of 8")
    model = [(r["n"], r["model_efficiency"]) for r in pts if r.get("model_efficiency") is not None]
    if model:
        top = max(m for _, m in model)
        ax.step([n for n, _ in model], [m / top for _, m in model], where="mid", color=SOURCE_COLOR["model"],
                label="model: tile x wave (128 x 128 tiles), relative")  # fmt: skip
    mark_launch_bound(ax, xs, ys, [r["launch_bound"] for r in pts])
    ax.set_xlabel("N (square N x N x N GEMM)")
    ax.set_ylabel("FLOP/s relative to the best N")
    ax.set_ylim(0, 1.1)
    ax.legend(fontsize="small", loc="lower left")
    ax.set_title(f"E10 matmul rate around N = 4096 - {record['device']['name']}")
    return fig, ax


def stride_sweep(record, ax=None):
    """E11: useful bandwidth relative to stride 1 against the stride (offset 0), with the sector model
    (GPU: 32-byte sectors; a CPU record carries its 64-byte-line model). Returns (fig, ax)."""
    fig, ax = plt.subplots(figsize=(7.0, 4.2), layout="constrained") if ax is None else (ax.figure, ax)
    pts = [r for r in record["results"] if r.get("offset_bytes", 0) == 0]
    if not pts:
        raise ValueError("record has no offset-0 points: pass an E11 ('coalescing') record that ran")
    xs = [r["stride"] for r in pts]
    ax.plot(xs, [r["useful_fraction"] for r in pts], "o-", label=f"measured ({_label(record)})",
            color=SOURCE_COLOR["live" if record.get("source") == "live" else "recorded"])  # fmt: skip
    gpu = record["device"].get("kind") == "gpu"
    ax.plot(xs, [r["model_efficiency"] for r in pts], "s--", color=SOURCE_COLOR["model"],
            label="model: 32-byte sectors per warp" if gpu else "model: 64-byte cache lines")  # fmt: skip
    mark_launch_bound(ax, xs, [r["useful_fraction"] for r in pts], [r["launch_bound"] for r in pts])
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xlabel("stride between neighbouring threads (floats)")
    ax.set_ylabel("useful bandwidth / stride 1")
    ax.legend(fontsize="small", loc="lower left")
    ax.set_title(f"E11 strided reads - {record['device']['name']}")
    return fig, ax
