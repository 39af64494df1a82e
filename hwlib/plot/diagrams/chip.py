"""Pictures of the chip: how a CPU and a GPU spend their silicon, an SM and its sub-partitions, and an
HBM stack on its interposer. Every count and size printed comes from hwlib/data (hierarchy.yaml,
specs.yaml); the shapes are schematic, not floor plans (no vendor publishes area fractions).
"""

from __future__ import annotations

import math

import numpy as np
from matplotlib.collections import PolyCollection
from matplotlib.ticker import FuncFormatter, MultipleLocator

from hwlib import specs, units

from ._draw import FONT, INK, box, canvas, cell, data, finish, plt, sm_facts, tint, under_axes, value


def _cpu(name: str) -> dict:
    cpus = data("hierarchy").get("cpus", {})
    if name not in cpus:
        raise KeyError(f"unknown CPU {name!r}; hierarchy.yaml cpus has: {', '.join(cpus)}")
    return {k: value(v) for k, v in cpus[name].items()}


def silicon_budget(cpu: str = "Xeon Platinum 8480+", gpu: str = "H100 SXM"):
    """CPU vs GPU: one small square per FP32 lane, grouped by core or SM, and the on-chip cache each
    lane has behind it:  cache per lane = (L2 + L3, or L2 + L1/shared) / (cores x lanes per core).

    Lanes and caches from hierarchy.yaml (cpus; compute_capabilities) and specs.yaml (SMs, L2).
    """
    c, g = _cpu(cpu), sm_facts(gpu)
    cpu_lanes = c["cores"] * c["fp32_lanes_per_core"]
    cpu_cache = c["l3_bytes"] + c["cores"] * c["l2_bytes_per_core"]
    gpu_lanes = g["sms"] * g["fp32_lanes_per_sm"]
    gpu_cache = specs.get(gpu).l2_bytes + g["sms"] * g["l1_shared_bytes_per_sm"]
    fig, (a1, a2, a3) = plt.subplots(
        1, 3, figsize=(10.5, 4.4), layout="constrained", gridspec_kw={"width_ratios": [1, 1, 0.8]}
    )
    _lane_grid(
        a1,
        f"CPU: {cpu}",
        c["cores"],
        c["fp32_lanes_per_core"],
        "core",
        "vermillion",
        f"{c['cores']} cores x {c['fp32_lanes_per_core']} lanes = {cpu_lanes:,} FP32 lanes",
    )
    _lane_grid(
        a2,
        f"GPU: {specs.get(gpu).name}",
        g["sms"],
        g["fp32_lanes_per_sm"],
        "SM",
        "blue",
        f"{g['sms']} SMs x {g['fp32_lanes_per_sm']} lanes = {gpu_lanes:,} FP32 lanes "
        f"({gpu_lanes / cpu_lanes:.0f}x the CPU's)",
    )
    per = [cpu_cache / cpu_lanes, gpu_cache / gpu_lanes]
    gpu_regs = g["sms"] * g["registers_per_sm"] * 4  # the register file: on-chip SRAM too, larger than L1
    bars = a3.bar([0, 1], per, color=[tint("vermillion", 0.7), tint("blue", 0.7)], edgecolor=INK, width=0.6)
    a3.bar([1], [gpu_regs / gpu_lanes], bottom=[per[1]], color=tint("blue", 0.25), edgecolor=INK, width=0.6, hatch="//")
    for b, v in zip(bars, per):
        a3.text(
            b.get_x() + b.get_width() / 2,
            v * 1.02,
            units.format_bytes(v, binary=True),
            ha="center",
            va="bottom",
            fontsize=FONT,
        )
    a3.set_xticks([0, 1], ["CPU", "GPU"])
    a3.set_ylabel("on-chip cache per FP32 lane")
    a3.yaxis.set_major_locator(MultipleLocator(2 ** math.ceil(math.log2(max(per) / 5))))
    a3.yaxis.set_major_formatter(FuncFormatter(lambda v, _: units.format_bytes(v, binary=True) if v > 0 else "0"))
    a3.set_ylim(0, max(per) * 1.2)
    a3.set_title("cache behind\neach lane", fontsize=FONT + 1, loc="left")
    a3.spines[["top", "right"]].set_visible(False)
    under_axes(
        a3,
        0.5,
        -0.16,
        f"CPU: L2 + L3 = {units.format_bytes(cpu_cache, binary=True)}\n"
        f"GPU: L2 + L1/shared = {units.format_bytes(gpu_cache, binary=True)}\n"
        f"(+ register files {units.format_bytes(gpu_regs, binary=True)}, hatched)",
        ha="center",
    )
    alt = (
        f"Two grids of small squares, one square per FP32 lane: the {cpu} CPU has {c['cores']} cores of "
        f"{c['fp32_lanes_per_core']} lanes ({cpu_lanes:,} lanes), the {specs.get(gpu).name} GPU {g['sms']} SMs "
        f"of {g['fp32_lanes_per_sm']} lanes ({gpu_lanes:,} lanes). A bar chart beside them shows the on-chip "
        f"cache per lane: {units.format_bytes(per[0], binary=True)} on the CPU against "
        f"{units.format_bytes(per[1], binary=True)} on the GPU, plus {units.format_bytes(gpu_regs / gpu_lanes, binary=True)} "
        f"of register file per lane stacked on the GPU bar. The CPU spends its silicon on cache and "
        f"control for few lanes; the GPU on many lanes with little cache each."
    )
    return finish(
        fig,
        alt,
        {
            "cpu_lanes": cpu_lanes,
            "gpu_lanes": gpu_lanes,
            "cpu_cache_per_lane": per[0],
            "gpu_cache_per_lane": per[1],
            "gpu_regs_per_lane": gpu_regs / gpu_lanes,
            "cpu_cores": c["cores"],
            "gpu_sms": g["sms"],
        },
    )


def _squares(x, y, w, h) -> np.ndarray:
    """The corners of axis-aligned rectangles with lower-left (x, y): shape (n, 4, 2), for a PolyCollection."""
    x, y = np.broadcast_arrays(np.asarray(x, float), np.asarray(y, float))
    return np.stack(
        [np.stack([x, y], -1), np.stack([x + w, y], -1), np.stack([x + w, y + h], -1), np.stack([x, y + h], -1)], 1
    )


def _lane_grid(ax, title, units_n, lanes, unit_name, color, caption):
    """units_n boxes (cores or SMs) in a near-square grid, each holding `lanes` lane squares. The
    squares are two PolyCollections (one artist each, not one per square: the GPU has ~17 000)."""
    cols = math.ceil(math.sqrt(units_n * 1.1))
    rows = math.ceil(units_n / cols)
    lane_cols = math.ceil(math.sqrt(lanes * 2))
    size = 0.6 / lane_cols
    i = np.arange(units_n)
    x0, y0 = (i % cols) * 1.0, (rows - 1 - i // cols) * 1.0
    j = np.arange(lanes)  # lanes in the lower part; the rest of the box is control and cache
    lx = (x0[:, None] + 0.2 + (j % lane_cols) * size).ravel()
    ly = (y0[:, None] + 0.12 + (j // lane_cols) * size).ravel()
    pale = tint("orange" if color == "vermillion" else "sky_blue", 0.25)
    ax.add_collection(
        PolyCollection(
            _squares(x0 + 0.04, y0 + 0.04, 0.92, 0.92), facecolors=pale, edgecolors=INK, linewidths=0.4, zorder=2
        )
    )
    ax.add_collection(
        PolyCollection(
            _squares(lx, ly, size * 0.8, size * 0.8),
            facecolors=tint(color, 0.9),
            edgecolors="none",
            linewidths=0,
            zorder=3,
        )
    )
    ax.set_xlim(-0.1, cols + 0.1)
    ax.set_ylim(-0.1, rows + 0.1)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(title, fontsize=FONT + 1, loc="left")
    under_axes(ax, 0, -0.03, f"{caption}\none square = one lane; pale box = one {unit_name} (its control, cache)")


def sm(gpu: str = "H100 SXM"):
    """One SM: its sub-partitions (each a warp scheduler, a register file, FP32 lanes and tensor cores)
    over the L1/shared-memory SRAM they share. Per-partition counts = per-SM counts / partitions
    (hierarchy.yaml: compute_capabilities and sm_partitions)."""
    f = sm_facts(gpu)
    if "sub_partitions_per_sm" not in f:
        raise KeyError(
            f"hierarchy.yaml sm_partitions has no entry for compute capability "
            f"{f['compute_capability']} ({f['name']}); known: 9.0 (Hopper), 8.0 (A100)"
        )
    parts = f["sub_partitions_per_sm"]
    lanes, tcs = f["fp32_lanes_per_sm"] // parts, f["tensor_cores_per_sm"] // parts
    regs = f["registers_per_sm"] * 4 // parts
    scheds = f["warp_schedulers_per_sm"] // parts
    fig, ax = canvas(8.6, 6.0, (0, 10), (0, 7.0))
    box(ax, 0.05, 0.05, 9.9, 6.9, color="sky_blue", amount=0.08, rounded=False)
    ax.text(
        0.25,
        6.7,
        f"One SM of the {f['name']} ({f['sms']} per chip)",
        fontsize=FONT + 2,
        weight="bold",
        va="center",
        color=INK,
    )
    w = 9.4 / parts
    for p in range(parts):
        x = 0.3 + p * w
        box(ax, x, 1.9, w - 0.15, 4.45, color="blue", amount=0.06, rounded=False)
        ax.text(x + (w - 0.15) / 2, 6.1, f"sub-partition {p + 1}", ha="center", fontsize=FONT, weight="bold")
        box(ax, x + 0.1, 5.35, w - 0.35, 0.5, f"warp scheduler x{scheds}", "orange", 0.45)
        box(ax, x + 0.1, 4.6, w - 0.35, 0.6, f"register file\n{units.format_bytes(regs, binary=True)}", "yellow", 0.45)
        grid = 8
        size = (w - 0.35) / grid
        for j in range(lanes):
            cell(
                ax,
                x + 0.1 + (j % grid) * size,
                4.45 - (j // grid + 1) * size * 0.9,
                size * 0.85,
                size * 0.75,
                tint("bluish_green", 0.6),
                lw=0.4,
            )
        ax.text(
            x + (w - 0.15) / 2,
            4.45 - (lanes // grid) * size * 0.9 - 0.22,
            f"{lanes} FP32 lanes",
            ha="center",
            fontsize=FONT,
            va="center",
        )
        box(ax, x + 0.1, 2.05, w - 0.35, 0.75, f"tensor core x{tcs}", "reddish_purple", 0.45, weight="bold")
    l1 = units.format_bytes(f["l1_shared_bytes_per_sm"], binary=True)
    box(
        ax,
        0.3,
        0.3,
        9.4,
        1.35,
        f"L1 data cache / shared memory: {l1}"
        f" per SM (up to {units.format_bytes(f['max_shared_bytes_per_sm'], binary=True)} as shared memory)",
        "vermillion",
        0.3,
        size=FONT + 1,
    )
    alt = (
        f"Block diagram of one {f['name']} streaming multiprocessor: {parts} identical sub-partitions side by "
        f"side, each with {scheds} warp scheduler, a {units.format_bytes(regs, binary=True)} register file, "
        f"{lanes} FP32 lanes drawn as small squares and {tcs} tensor core. Below them, spanning the SM, the "
        f"{units.format_bytes(f['l1_shared_bytes_per_sm'], binary=True)} L1/shared-memory SRAM they share, up to "
        f"{units.format_bytes(f['max_shared_bytes_per_sm'], binary=True)} of it usable as shared memory."
    )
    return finish(
        fig,
        alt,
        {
            "sub_partitions": parts,
            "lanes_per_partition": lanes,
            "tensor_cores_per_partition": tcs,
            "register_bytes_per_partition": regs,
            "l1_shared_bytes": f["l1_shared_bytes_per_sm"],
            "max_shared_bytes": f["max_shared_bytes_per_sm"],
            "schedulers_per_partition": scheds,
        },
    )


def hbm_stack(gpu: str = "H100 SXM"):
    """Side view of a GPU package with HBM: DRAM dies stacked on a base die, joined by through-silicon
    vias, beside the GPU die on a silicon interposer; and a top view with one stack per HBM site.
    Interface width per stack = bus bits / stacks; bandwidth per stack = bandwidth / stacks
    (hierarchy.yaml hbm; specs.yaml bandwidth)."""
    hbm = data("hierarchy")["hbm"]
    acc = specs.get(gpu)
    if acc.name not in hbm:
        raise KeyError(
            f"no HBM packaging data for {acc.name!r}; hierarchy.yaml hbm has: "
            f"{', '.join(k for k in hbm if k != 'HBM3 standard')}"
        )
    stacks, bus = value(hbm[acc.name]["stacks"]), value(hbm[acc.name]["bus_bits"])
    heights = value(hbm["HBM3 standard"]["max_stack_height"])
    width, per_stack_bw = bus // stacks, acc.bandwidth / stacks
    fig, (side, top) = plt.subplots(
        1, 2, figsize=(10.0, 4.2), layout="constrained", gridspec_kw={"width_ratios": [1.5, 1]}
    )
    for ax in (side, top):
        ax.set_aspect("equal")
        ax.axis("off")
    side.set_xlim(0, 12)
    side.set_ylim(-0.3, 6.2)
    box(side, 0.3, 0.2, 11.4, 0.6, "package substrate (circuit board side)", "black", 0.15, rounded=False)
    box(side, 0.8, 0.9, 10.4, 0.65, "", "sky_blue", 0.4, rounded=False)
    side.text(6.0, 1.0, "silicon interposer: thousands of short wires", ha="center", va="bottom", fontsize=FONT - 0.5)
    box(side, 5.0, 1.6, 3.6, 2.0, f"GPU die\n{acc.name}", "blue", 0.45, size=FONT + 1, weight="bold")
    dies = 8
    for sx in (1.2, 9.0):
        box(side, sx, 1.6, 2.0, 0.45, "", "orange", 0.5, rounded=False)
        for d in range(dies):
            box(side, sx, 2.1 + d * 0.42, 2.0, 0.36, "", "yellow", 0.45, rounded=False)
        for t in (0.45, 1.0, 1.55):  # through-silicon vias
            side.plot([sx + t, sx + t], [1.7, 2.1 + dies * 0.42 - 0.1], color=INK, lw=1.2, zorder=5)
        side.text(
            sx + 1.0, 2.1 + dies * 0.42 + 0.15, "HBM stack", ha="center", va="bottom", fontsize=FONT, weight="bold"
        )
    side.annotate("DRAM dies", (3.2, 3.6), (3.6, 4.6), fontsize=FONT, arrowprops=dict(arrowstyle="-", color=INK))
    side.annotate(
        "through-silicon vias", (2.75, 5.0), (3.6, 5.45), fontsize=FONT, arrowprops=dict(arrowstyle="-", color=INK)
    )
    side.annotate(
        "base (logic) die", (3.2, 1.82), (3.6, 2.8), fontsize=FONT, arrowprops=dict(arrowstyle="-", color=INK)
    )
    side.annotate(
        f"{width:,}-bit interface per stack",
        (4.0, 1.42),
        (3.4, 0.0),
        fontsize=FONT,
        ha="center",
        va="top",
        arrowprops=dict(arrowstyle="-", color=INK),
    )
    side.plot([2.9, 5.3], [1.42, 1.42], color=C_WIRE, lw=3, zorder=6)
    side.plot([8.3, 9.3], [1.42, 1.42], color=C_WIRE, lw=3, zorder=6)
    side.set_title(
        f"side view (schematic; JEDEC HBM3 allows stacks up to {heights} dies high)", fontsize=FONT + 0.5, loc="left"
    )
    top.set_xlim(0, 7)
    top.set_ylim(0, 6)
    box(top, 0.2, 0.2, 6.6, 5.6, "", "sky_blue", 0.25, rounded=False)
    box(top, 2.1, 1.3, 2.8, 3.4, f"GPU die\n{acc.name}", "blue", 0.45, size=FONT + 1, weight="bold")
    # six sites along the two long edges of the die, as on Ampere and Hopper packages; sites beyond the
    # active stacks are drawn empty (an H100 SXM uses five of its six, an H200 all six)
    spots = [(0.45, 3.75), (0.45, 2.5), (0.45, 1.25), (5.15, 3.75), (5.15, 2.5), (5.15, 1.25)]
    for i, (x, y) in enumerate(spots):
        if i < stacks:
            box(top, x, y, 1.4, 1.0, f"HBM {i + 1}", "yellow", 0.55, size=FONT - 0.5, rounded=False)
        else:
            box(top, x, y, 1.4, 1.0, "site\nnot used", "grey", 0.15, size=FONT - 1, rounded=False)
    top.set_title(
        f"top view: {stacks} stacks x {width:,} bits = {bus:,}-bit bus\n"
        f"{units.format_bandwidth(acc.bandwidth)} / {stacks} = "
        f"{units.format_bandwidth(per_stack_bw)} per stack",
        fontsize=FONT + 0.5,
        loc="left",
    )
    alt = (
        f"Two schematic drawings of an {acc.name} package. Side view: a package substrate, a silicon "
        f"interposer on it, the GPU die in the middle and an HBM stack on each side, each stack a base logic die "
        f"under a tower of DRAM dies pierced by through-silicon vias, wired to the GPU through the interposer "
        f"with a {width:,}-bit interface. Top view: the GPU die with six HBM sites along its two long edges, "
        f"{stacks} of them with a stack, "
        f"{stacks} x {width:,} bits = a {bus:,}-bit bus delivering {units.format_bandwidth(acc.bandwidth)}, "
        f"{units.format_bandwidth(per_stack_bw)} per stack."
    )
    return finish(
        fig,
        alt,
        {
            "stacks": stacks,
            "bus_bits": bus,
            "bits_per_stack": width,
            "bandwidth_per_stack": per_stack_bw,
            "max_stack_height": heights,
        },
    )


C_WIRE = "#0072B2"
