"""Who holds what: ZeRO's stages 0-3 over N data-parallel devices (Rajbhandari et al. 2020, Fig. 1),
and a tensor-parallel MLP (Megatron-LM, Shoeybi et al. 2019 §3): the first weight split by columns,
the second by rows, one all-reduce at the end. Bytes from `hwlib.memory.zero_bytes_per_device` and
`hwlib.parallel.ring_allreduce_bytes_per_link`.
"""

from __future__ import annotations

from hwlib import memory, models, parallel, units

from ._draw import FONT, MUTED, arrow, batched, box, canvas, cell, finish, tint

_STATES = [("fp16 weights", 2.0, "blue"), ("fp16 gradients", 2.0, "orange"), ("optimizer states", None, "bluish_green")]


def zero_stages(n_params: float = 7.5e9, n_devices: int = 4, optimizer_bytes_per_param: float = 12):
    """One row per ZeRO stage, one column per device: each device's bar is its weights (2 B/param),
    gradients (2 B/param) and optimizer states (K B/param); a stage partitions the first 1, 2 or 3 of
    them into N slices (drawn at 1/N width, the device's own slice). Each row is labelled with
    `memory.zero_bytes_per_device` (Ψ = n_params, N = n_devices, K = optimizer_bytes_per_param)."""
    k = optimizer_bytes_per_param
    full = 2 + 2 + k
    fig, ax = canvas(10.0, 4.0, (-3.0, n_devices * 2.6 + 2.2), (-0.6, 4 * 1.25 + 0.4))
    per = {}
    with batched(ax):  # up to 4 x N x N cells (25 000 for N = 64)
        for stage in range(4):
            y = (3 - stage) * 1.25
            per[stage] = memory.zero_bytes_per_device(n_params, n_devices, stage, k)
            ax.text(
                -2.9,
                y + 0.45,
                ["stage 0: replicate all", "stage 1: shard optimizer", "stage 2: + gradients", "stage 3: + weights"][
                    stage
                ],
                ha="left",
                va="center",
                fontsize=FONT,
                weight="bold",
            )
            for d in range(n_devices):
                x = d * 2.6
                parts = [(2.0, stage >= 3), (2.0, stage >= 2), (k, stage >= 1)]
                cx = x
                for (bytes_per, split), (_, _, col) in zip(parts, _STATES):
                    w = 2.3 * bytes_per / full
                    if split:  # everyone's slices drawn pale; this device's own slice solid
                        for q in range(n_devices):
                            cell(
                                ax,
                                cx + q * w / n_devices,
                                y + 0.15,
                                w / n_devices,
                                0.6,
                                tint(col, 0.75 if q == d else 0.08),
                                lw=0.4,
                            )
                    else:
                        cell(ax, cx, y + 0.15, w, 0.6, tint(col, 0.75), lw=0.4)
                    cx += w
                if stage == 0:
                    ax.text(x + 1.15, 4 * 1.25 + 0.1, f"device {d}", ha="center", fontsize=FONT)
            ax.text(
                n_devices * 2.6 + 0.05,
                y + 0.45,
                units.format_bytes(per[stage]),
                ha="left",
                va="center",
                fontsize=FONT + 0.5,
                weight="bold",
            )
    ax.text(n_devices * 2.6 + 0.05, 4 * 1.25 + 0.1, "per device", ha="left", fontsize=FONT)
    x = 0.0
    for name, b, col in _STATES:
        b = k if b is None else b
        cell(ax, x, -0.45, 0.3, 0.25, tint(col, 0.75), lw=0.4)
        ax.text(x + 0.4, -0.33, f"{name} ({b:g} B/param)", va="center", fontsize=FONT - 0.5)
        x += 3.1
    ax.text(
        n_devices * 2.6 + 0.05,
        -0.33,
        "pale: slices that\nother devices hold",
        va="center",
        fontsize=FONT - 0.5,
        color=MUTED,
    )
    alt = (
        f"Four rows, ZeRO stages 0 to 3, each showing {n_devices} devices as bars of fp16 weights, fp16 gradients "
        f"and optimizer states for a {units.format_count(n_params)}-parameter model. Stage 0 replicates everything "
        f"({units.format_bytes(per[0])} per device); stage 1 shards the optimizer states "
        f"({units.format_bytes(per[1])}); stage 2 also the gradients ({units.format_bytes(per[2])}); stage 3 also "
        f"the weights ({units.format_bytes(per[3])}). Each device keeps only its own slice of a sharded state."
    )
    return finish(fig, alt, {"bytes_per_device": per, "n_devices": n_devices, "n_params": n_params})


def tensor_parallel_mlp(model: str = "GPT-3 175B", tokens: int = 4096, tensor_parallel: int = 2, dtype="bf16"):
    """A transformer MLP Y = GeLU(X A) B split over t devices: A (h x f) by columns, so each device
    computes its own f/t slice of GeLU(X A) with no communication; B (f x h) by rows, so each device
    produces a partial sum of the whole s x h output; one all-reduce adds them. Each device sends
    2(t-1)/t x s h b bytes for it (forward; the backward pass has one more). For a SwiGLU model
    (Llama) A stands for the gate and up matrices (h x 2f), both split by columns, and the element-wise
    SiLU(X G)·(X U) takes the place of GeLU; the communication is the same."""
    mdl = models.get(model)
    h, f, t = mdl.d_model, mdl.d_ff, tensor_parallel
    act_fn = "SwiGLU" if mdl.gated_mlp else "GeLU"
    a_cols = 2 * f if mdl.gated_mlp else f  # gate and up side by side
    act = tokens * h * memory.bytes_per_value(dtype)
    sent = parallel.ring_allreduce_bytes_per_link(act, t)
    fig, ax = canvas(10.5, 1.1 + 1.0 * t, (0, 21), (-0.8, 1.9 * t + 1.3))
    cols = ["blue", "vermillion", "bluish_green", "orange", "reddish_purple", "sky_blue", "yellow", "black"]
    top = 1.9 * t
    box(ax, 0.2, top / 2 - 0.9, 2.2, 1.8, f"X\n{tokens:,} x {h:,}\n(every device)", "black", 0.12)
    for d in range(t):
        y = top - 1.9 * (d + 1) + 0.3
        col = cols[d % len(cols)]
        arrow(ax, (2.4, top / 2), (3.4, y + 0.7), lw=0.9)
        box(ax, 3.4, y, 3.0, 1.4, f"A, columns {d + 1}/{t}\n{h:,} x {a_cols // t:,}", col, 0.35)
        arrow(ax, (6.4, y + 0.7), (7.3, y + 0.7), lw=0.9)
        box(ax, 7.3, y, 3.0, 1.4, f"{act_fn}(X A_{d + 1})\n{tokens:,} x {f // t:,}", col, 0.2)
        arrow(ax, (10.3, y + 0.7), (11.2, y + 0.7), lw=0.9)
        box(ax, 11.2, y, 3.0, 1.4, f"B, rows {d + 1}/{t}\n{f // t:,} x {h:,}", col, 0.35)
        arrow(ax, (14.2, y + 0.7), (15.1, y + 0.7), lw=0.9)
        box(ax, 15.1, y, 2.4, 1.4, f"partial Y_{d + 1}\n{tokens:,} x {h:,}", col, 0.2)
        ax.text(3.4, y + 1.47, f"device {d}", fontsize=FONT - 0.5, color=MUTED)
        arrow(ax, (17.5, y + 0.7), (18.5, top / 2), lw=0.9)
    box(
        ax,
        18.5,
        top / 2 - 0.9,
        2.4,
        1.8,
        f"all-reduce\nY = sum\n{tokens:,} x {h:,}",
        "reddish_purple",
        0.45,
        weight="bold",
    )
    ax.text(
        10.5,
        -0.45,
        f"{mdl.name} MLP, {tokens:,} tokens, t = {t}: column-parallel A needs no communication; "
        f"row-parallel B ends in one all-reduce of {units.format_bytes(act)} ({dtype}),\n"
        f"each device sending 2(t-1)/t x that = {units.format_bytes(sent)} per forward pass",
        ha="center",
        va="center",
        fontsize=FONT,
    )
    alt = (
        f"Data-flow diagram of a {mdl.name} MLP split over {t} devices. The input X ({tokens:,} x {h:,}) goes to "
        f"every device; device d multiplies it by its column slice of A ({h:,} x {a_cols // t:,}), applies {act_fn} locally, "
        f"multiplies by its row slice of B ({f // t:,} x {h:,}) and holds a partial {tokens:,} x {h:,} output. "
        f"One all-reduce sums the partial outputs; each device sends {units.format_bytes(sent)} for it."
    )
    return finish(
        fig,
        alt,
        {"activation_bytes": act, "bytes_sent_per_device": sent, "d_model": h, "d_ff": f, "tensor_parallel": t},
    )
