"""The memory hierarchy as a pyramid: each tier's capacity (width, on a log scale) and bandwidth, all
from hwlib/data. Registers and L1/shared: per-SM sizes (hierarchy.yaml) x SM count (specs.yaml);
register bandwidth: the FP32 lanes' operand traffic at peak, a lower bound (hierarchy.register_bandwidth);
shared-memory bandwidth = 128 bytes per clock per SM x SMs x the clock implied by the FP32 peak
(pi_FP32 / (2 x SMs x lanes), chapter 2); L2 bandwidth: the published gpu-benches plateau where the
data has one for this GPU; HBM: spec sheet; host: DRAM per GPU of an 8-GPU server and one direction of
PCIe 5.0 x16 (hwlib.interconnect).
"""

from __future__ import annotations

import numpy as np
from matplotlib.patches import Polygon

from hwlib import hierarchy, interconnect, specs, units

from ._draw import FONT, INK, MUTED, canvas, data, finish, sm_facts, tint, value


def tiers(gpu: str = "H200") -> list[dict]:
    """The tiers of `gpu`, fastest first: name, capacity [bytes], bandwidth [bytes/s] or None, and the
    kind of each number ('spec', 'computed', 'published')."""
    hier, acc, f = data("hierarchy"), specs.get(gpu), sm_facts(gpu)
    clock = acc.peak_flops("fp32") / (2 * acc.compute_units * f["fp32_lanes_per_sm"])
    smem_bw = value(hier["shared_memory"]["bytes_per_clock_per_sm"]) * acc.compute_units * clock
    l2_bw = None
    for curve in hier["published"].values():
        if curve.get("device") == acc.name and "gb_per_s" in curve:
            kib, bw = np.array(curve["kib"]) * 1024.0, np.array(curve["gb_per_s"]) * 1e9
            l2_bw = float(np.median(bw[(kib > 2 * 2**20) & (kib < 0.7 * acc.l2_bytes)]))
    host = hier["host"]["H200 x8 node"]
    host_bytes = value(host["memory_bytes"]) / value(host["gpus"])
    return [
        dict(
            name="registers",
            capacity=f["registers_per_sm"] * 4 * acc.compute_units,
            bandwidth=hierarchy.register_bandwidth(acc),  # a lower bound: FP32 operand traffic at peak
            kind="computed",
            where=f"{units.format_bytes(f['registers_per_sm'] * 4, binary=True)} per SM",
        ),
        dict(
            name="L1 / shared memory",
            capacity=f["l1_shared_bytes_per_sm"] * acc.compute_units,
            bandwidth=smem_bw,
            kind="computed",
            where=f"{units.format_bytes(f['l1_shared_bytes_per_sm'], binary=True)} per SM",
        ),
        dict(
            name="L2 cache",
            capacity=acc.l2_bytes,
            bandwidth=l2_bw,
            kind="published" if l2_bw else "spec",
            where="shared by all SMs",
        ),
        dict(name="HBM", capacity=acc.memory_bytes, bandwidth=acc.bandwidth, kind="spec", where="in the package"),
        dict(
            name="host DRAM",
            capacity=host_bytes,
            bandwidth=interconnect.get("PCIe 5.0 x16").bandwidth,
            kind="spec",
            where="per GPU of an 8-GPU server; PCIe 5.0 x16",
        ),
    ]


def memory_hierarchy(gpu: str = "H200"):
    """A pyramid of the tiers of `gpu` (see `tiers`), fastest and smallest at the top: capacity on the
    left (summed over the chip for registers and L1/shared), bandwidth on the right. The widths are
    schematic (ordered by capacity, not to scale)."""
    rows = tiers(gpu)
    n = len(rows)
    fig, ax = canvas(9.0, 4.3, (-7.6, 7.6), (-0.2, n * 1.1 + 0.6))
    colours = ["reddish_purple", "vermillion", "orange", "yellow", "sky_blue"]
    for i, r in enumerate(rows):
        y0 = (n - 1 - i) * 1.1
        w_top, w_bot = 0.9 + 0.75 * i, 0.9 + 0.75 * (i + 1)
        ax.add_patch(
            Polygon(
                [(-w_bot, y0), (w_bot, y0), (w_top, y0 + 1.0), (-w_top, y0 + 1.0)],
                closed=True,
                facecolor=tint(colours[i], 0.45),
                edgecolor=INK,
                lw=1,
            )
        )
        ax.text(0, y0 + 0.5, r["name"], ha="center", va="center", fontsize=FONT + 1, weight="bold")
        size = units.format_bytes(r["capacity"], binary=True)
        ax.text(-5.0, y0 + 0.62, size, ha="right", va="center", fontsize=FONT + 1, weight="bold")
        ax.text(-5.0, y0 + 0.28, r["where"], ha="right", va="center", fontsize=FONT - 0.5, color=MUTED)
        bw = units.format_bandwidth(r["bandwidth"]) if r["bandwidth"] else "not published"
        ax.text(5.0, y0 + 0.62, bw, ha="left", va="center", fontsize=FONT + 1, weight="bold")
        ax.text(
            5.0,
            y0 + 0.28,
            (f"({r['kind']}, a lower bound)" if r["name"] == "registers" else f"({r['kind']})")
            if r["bandwidth"]
            else "",
            ha="left",
            va="center",
            fontsize=FONT - 0.5,
            color=MUTED,
        )
    ax.text(-5.0, n * 1.1 + 0.2, f"capacity ({specs.get(gpu).name})", ha="right", fontsize=FONT + 1)
    ax.text(5.0, n * 1.1 + 0.2, "bandwidth", ha="left", fontsize=FONT + 1)
    ax.annotate("", (0, -0.15), (0, n * 1.1 + 0.45), arrowprops=dict(arrowstyle="-", color="none"))
    alt = (
        f"A pyramid of five memory tiers of an {specs.get(gpu).name}, smallest and fastest at the top, with "
        f"capacity on the left and bandwidth on the right: "
        + "; ".join(
            f"{r['name']} {units.format_bytes(r['capacity'], binary=True)}"
            + (f" at {units.format_bandwidth(r['bandwidth'])}" if r["bandwidth"] else "")
            for r in rows
        )
        + ". Each step down holds more and delivers less per second."
    )
    return finish(fig, alt, {r["name"]: (r["capacity"], r["bandwidth"]) for r in rows})
