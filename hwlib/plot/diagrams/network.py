"""Inside a node and across nodes: an NVSwitch node next to a rail-optimised fat tree, and the cost of
an all-reduce and an all-to-all as the job grows past one NVLink domain (`hwlib.networks`, data in
networks.yaml)."""

from __future__ import annotations

from hwlib import networks, units
from hwlib.plot._base import LINESTYLES, color

from ._draw import FONT, MUTED, box, finish, plt, tint


def nvswitch_vs_fattree(system_name: str = "DGX H100", nodes: int = 4):
    """Left: one NVLink domain, every GPU wired to every NVSwitch (any GPU reaches any other in one
    switch hop at W_nvl). Right: `nodes` such nodes on a rail-optimised two-level fat tree: NIC i of
    every node on leaf (rail) switch i, every leaf wired to every spine switch."""
    sys = networks.system(system_name)
    gen = networks.nvlink_generation(sys.generation)
    d, sw = sys.domain_gpus, int(gen["nvswitches_per_node"])
    fig, (a, b) = plt.subplots(1, 2, figsize=(11.0, 4.6), layout="constrained", gridspec_kw={"width_ratios": [1, 1.5]})
    for ax in (a, b):
        ax.axis("off")
    a.set_xlim(0, 10)
    a.set_ylim(0, 7)
    for s in range(sw):
        x = 1.0 + s * 8.0 / sw + (8.0 / sw - 1.6) / 2
        box(a, x, 4.6, 1.6, 0.8, f"NVSwitch\n{s + 1}", "reddish_purple", 0.45, size=FONT - 1.5)
        for g in range(d):
            gx = 0.6 + g * 8.8 / d + 0.4
            a.plot([gx, x + 0.8], [2.3, 4.6], color=tint("blue", 0.6), lw=0.8, zorder=1)
    for g in range(d):
        box(a, 0.6 + g * 8.8 / d, 1.5, 0.8, 0.8, f"GPU\n{g}", "blue", 0.45, size=FONT - 1.5)
    a.set_title(
        f"inside a {sys.name} node: {d} GPUs x {sw} NVSwitches ({sys.generation})", fontsize=FONT + 0.5, loc="left"
    )
    a.text(
        5,
        0.75,
        f"each GPU: {int(gen['links_per_gpu'])} links x {units.format_bandwidth(gen['link_bandwidth'])} = "
        f"{units.format_bandwidth(sys.nvlink)} per direction\nto any other GPU, one switch hop",
        ha="center",
        va="center",
        fontsize=FONT,
    )
    b.set_xlim(0, 15)
    b.set_ylim(0, 7)
    rails = d
    spines = 4
    for s in range(spines):
        box(b, 2.0 + s * 3.0, 5.6, 2.0, 0.7, f"spine {s + 1}", "black", 0.2, size=FONT - 1)
    for r in range(rails):
        x = 0.3 + r * 14.4 / rails
        box(b, x, 3.6, 1.5, 0.7, f"leaf {r}\n(rail {r})", "orange", 0.45, size=FONT - 1.5)
        for s in range(spines):
            b.plot([x + 0.75, 3.0 + s * 3.0], [4.3, 5.6], color="0.6", lw=0.6, zorder=1)
    for n in range(nodes):
        nx = 0.4 + n * 14.4 / nodes
        w = 14.4 / nodes - 0.5
        box(b, nx, 0.7, w, 1.3, "", "sky_blue", 0.25)
        b.text(nx + w / 2, 0.45, f"node {n}", ha="center", fontsize=FONT - 1)
        for g in range(d):
            gx = nx + 0.15 + g * (w - 0.3) / d
            box(b, gx, 1.0, (w - 0.3) / d * 0.8, 0.7, "", "blue", 0.45, rounded=False, lw=0.5)
            lx = 0.3 + g * 14.4 / rails + 0.75
            b.plot([gx + (w - 0.3) / d * 0.4, lx], [1.7, 3.6], color=tint("orange", 0.9), lw=0.7, zorder=1)
    b.set_title("across nodes: rail-optimised fat tree, GPU i of every node on leaf i", fontsize=FONT + 0.5, loc="left")
    b.text(
        7.5,
        6.65,
        f"each GPU: one {units.format_bandwidth(sys.nic)} NIC (400 Gb/s); node egress "
        f"{units.format_bandwidth(sys.egress)}; full fat tree: every leaf to every spine",
        ha="center",
        fontsize=FONT,
    )
    alt = (
        f"Two network drawings. Left: a {sys.name} node, {d} GPUs each wired to all {sw} NVSwitches, so any GPU "
        f"reaches any other through one switch at {units.format_bandwidth(sys.nvlink)} per direction. Right: "
        f"{nodes} such nodes on a two-level fat tree; GPU i of every node connects through its own "
        f"{units.format_bandwidth(sys.nic)} network port to leaf switch i (a rail), and every leaf connects "
        f"to every spine switch. The node's egress into the network is {units.format_bandwidth(sys.egress)}, "
        f"{sys.nvlink / sys.nic:.0f} times less per GPU than NVLink."
    )
    return finish(fig, alt, {"nvlink": sys.nvlink, "nic": sys.nic, "egress": sys.egress, "gpus": d, "nvswitches": sw})


def collective_costs(n_bytes: float = 1.0e9, gpus=(8, 16, 32, 72, 144, 288, 576, 1152)):
    """Time of an all-reduce (left) and an all-to-all (right) of n_bytes per GPU against the number of
    GPUs, for: DGX H100 (ring), DGX H100 with SHARP, GB200 NVL72, and DGX H100 on a top-of-rack fabric
    oversubscribed 1:7 (the Llama 3 cluster's ratio). Returns the figure; its labels hold every curve."""
    over = networks.fabric_value("Llama 3 cluster", "oversubscription")
    cases = [
        ("DGX H100, rail-optimised (ring)", dict(system_name="DGX H100")),
        ("DGX H100 + SHARP", dict(system_name="DGX H100", sharp=True)),
        ("GB200 NVL72 (ring)", dict(system_name="GB200 NVL72")),
        (
            f"DGX H100, top-of-rack, 1:{over:g} oversubscribed",
            dict(system_name="DGX H100", rail_optimized=False, oversubscription=over),
        ),
    ]
    fig, axes = plt.subplots(1, 2, figsize=(10.5, 4.6), layout="constrained", sharey=True)
    curves = {}
    for i, (label, kw) in enumerate(cases):
        dom = networks.system(kw["system_name"]).domain_gpus
        xs = [n for n in gpus if n <= dom or n % dom == 0]
        ar = [networks.allreduce_time_s(n_bytes, n, **kw) for n in xs]
        a2a_kw = {k: v for k, v in kw.items() if k != "sharp"}
        a2a = [networks.alltoall_time_s(n_bytes, n, **a2a_kw) for n in xs] if "sharp" not in kw else None
        curves[label] = {"gpus": xs, "allreduce_s": ar, "alltoall_s": a2a}
        style = dict(color=color(i), ls=LINESTYLES[i % len(LINESTYLES)], marker="os^D"[i], ms=4, lw=1.8)
        axes[0].plot(xs, ar, label=label, **style)
        if a2a:
            axes[1].plot(xs, a2a, label=label, **style)
    for ax, title in zip(axes, ["all-reduce", "all-to-all"]):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(list(gpus), [str(g) for g in gpus], fontsize=FONT - 1)
        ax.axvline(8, color="0.6", ls=":", lw=1)
        ax.axvline(72, color="0.6", ls=":", lw=1)
        ax.set_xlabel("GPUs")
        ax.set_title(f"{title} of {units.format_bytes(n_bytes)} per GPU", fontsize=FONT + 1, loc="left")
        ax.grid(True, alpha=0.3)
        ax.yaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: units.format_seconds(v)))
    axes[0].set_ylabel("time (bandwidth terms, model)")
    fig.legend(
        *axes[0].get_legend_handles_labels(), loc="outside lower center", ncols=2, fontsize=FONT - 0.5, frameon=False
    )
    axes[1].text(
        0.98,
        0.03,
        "dotted: one 8-GPU node, one 72-GPU rack",
        transform=axes[1].transAxes,
        va="bottom",
        ha="right",
        fontsize=FONT - 1,
        color=MUTED,
    )
    h100 = curves[cases[0][0]]
    alt = (
        f"Two log-log line charts of modelled time against GPU count, 8 to {max(gpus)}, for "
        f"{units.format_bytes(n_bytes)} "
        f"per GPU. All-reduce: nearly flat for a rail-optimised DGX H100 fabric (from "
        f"{units.format_seconds(h100['allreduce_s'][0])} in one node to "
        f"{units.format_seconds(h100['allreduce_s'][-1])}), "
        f"lower with SHARP and on NVL72 racks, and several times higher once traffic crosses a 1:{over:g} "
        f"oversubscribed spine. All-to-all: jumps as soon as the job leaves the NVLink domain."
    )
    return finish(fig, alt, curves)
