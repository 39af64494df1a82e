"""Pipeline schedules simulated op by op and drawn as timelines: GPipe, 1F1B and interleaved 1F1B.

p devices hold consecutive stages of the model; m micro-batches flow through. Each device runs its
operations in the schedule's fixed order, each starting when the device is free and its input is ready
(the previous stage's forward, or the next stage's backward). The idle time is the bubble.

* GPipe (Huang et al. 2019): all m forwards, then all m backwards. Every stage holds the activations
  of all m micro-batches at the turn.
* 1F1B (PipeDream-flush; Narayanan et al. 2021): stage s runs p - s - 1 warm-up forwards, then
  alternates one forward, one backward. Same bubble as GPipe, but stage s holds at most p - s
  micro-batches of activations.
* Interleaved 1F1B (Narayanan et al. 2021 §2.2): each device holds v chunks of the model (device s
  has chunks s, s + p, ...), each op takes 1/v as long, and the bubble shrinks by v.

Bubble fraction (idle / total device time) = (p - 1) / (v m + p - 1)  (`parallel.pipeline_bubble_fraction`);
the simulated schedules reproduce it (tests/book/test_diagrams.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from hwlib import _check, parallel


@dataclass(frozen=True)
class Op:
    device: int
    kind: str  # "F" or "B"
    micro: int  # micro-batch index
    chunk: int  # global model chunk 0 .. v p - 1 (chunk g lives on device g mod p)
    start: float
    end: float


def _orders(kind: str, p: int, m: int, v: int):
    """Per device, the (kind, micro, global chunk) sequence the schedule runs."""
    orders = []
    for s in range(p):
        if kind == "gpipe":
            seq = [("F", j, s) for j in range(m)] + [("B", j, s) for j in range(m)]
        else:
            fwd, bwd = [], []
            for k in range(m * v):
                group, within = divmod(k, p * v)
                c, j = divmod(within, p)
                fwd.append(("F", group * p + j, c * p + s))
                bwd.append(("B", group * p + j, (v - 1 - c) * p + s))
            warm = min(p - s - 1, m) if v == 1 else min((p - s - 1) * 2 + (v - 1) * p, m * v)
            seq = fwd[:warm]
            for i in range(m * v - warm):
                seq += [fwd[warm + i], bwd[i]]
            seq += bwd[m * v - warm :]
        orders.append(seq)
    return orders


def simulate(
    kind: str = "1f1b",
    n_stages: int = 4,
    n_microbatches: int = 8,
    virtual_stages: int = 1,
    t_forward: float = 1.0,
    t_backward: float = 2.0,
) -> list[Op]:
    """The schedule's operations with start and end times [units of t_forward for a whole stage].

    kind: "gpipe", "1f1b" or "interleaved" (needs virtual_stages >= 2 and n_microbatches a multiple of
    n_stages, as in Megatron-LM). Each op on a chunk takes t / virtual_stages.
    """
    kind = _check.choice("kind", kind, ("gpipe", "1f1b", "interleaved"))
    p, m = _check.integer("n_stages", n_stages), _check.integer("n_microbatches", n_microbatches)
    v = _check.integer("virtual_stages", virtual_stages) if kind == "interleaved" else 1
    if kind == "interleaved" and (v < 2 or m % p):
        raise ValueError(
            f"interleaved needs virtual_stages >= 2 and n_microbatches a multiple of n_stages ({p}); "
            f"got virtual_stages={virtual_stages}, n_microbatches={m}"
        )
    tf, tb = _check.positive("t_forward", t_forward) / v, _check.positive("t_backward", t_backward) / v
    orders, last = _orders(kind, p, m, v), v * p - 1
    done, free, pos, ops = {}, [0.0] * p, [0] * p, []
    while any(pos[s] < len(orders[s]) for s in range(p)):
        progressed = False
        for s in range(p):
            if pos[s] == len(orders[s]):
                continue
            k, j, g = orders[s][pos[s]]
            need = ("F", j, g - 1) if k == "F" else (("F", j, g) if g == last else ("B", j, g + 1))
            if k == "F" and g == 0:
                need = None
            if need is not None and need not in done:
                continue
            start = max(free[s], done[need] if need else 0.0)
            end = start + (tf if k == "F" else tb)
            done[(k, j, g)], free[s] = end, end
            ops.append(Op(s, k, j, g, start, end))
            pos[s] += 1
            progressed = True
        if not progressed:
            raise AssertionError(f"{kind} schedule deadlocked (p={p}, m={m}, v={v})")
    return ops


def bubble_fraction(ops: list[Op]) -> float:
    """Idle device time / total device time of a simulated schedule (all devices, start to last op)."""
    span = max(o.end for o in ops) - min(o.start for o in ops)
    devices = {o.device for o in ops}
    busy = sum(o.end - o.start for o in ops)
    return 1.0 - busy / (span * len(devices))


def peak_activations(ops: list[Op], virtual_stages: int = 1) -> list[float]:
    """Per device, the most micro-batches' activations held at once, in units of one micro-batch through
    one whole stage (a chunk counts 1/v): forwards done minus backwards done, at its maximum."""
    peaks = []
    for s in sorted({o.device for o in ops}):
        events = sorted(
            [(o.end, 1) for o in ops if o.device == s and o.kind == "F"]
            + [(o.end, -1) for o in ops if o.device == s and o.kind == "B"],
            key=lambda e: (e[0], e[1]),
        )
        level = peak = 0
        for _, step in events:
            level += step
            peak = max(peak, level)
        peaks.append(peak / virtual_stages)
    return peaks


def formula_bubble(kind: str, n_stages: int, n_microbatches: int, virtual_stages: int = 1) -> float:
    """(p - 1) / (v m + p - 1) from hwlib.parallel (v = 1 for GPipe and 1F1B)."""
    v = virtual_stages if kind == "interleaved" else 1
    return parallel.pipeline_bubble_fraction(n_stages, n_microbatches, v)


def pipeline_schedules(
    n_stages: int = 4, n_microbatches: int = 8, virtual_stages: int = 2, t_forward: float = 1.0, t_backward: float = 2.0
):
    """GPipe, 1F1B and interleaved 1F1B timelines (simulated) one above the other, the bubble shaded,
    each labelled with its simulated and formula bubble fraction; beside each, the peak activation memory
    per stage (micro-batches' worth of one stage's activations)."""
    from matplotlib.patches import Rectangle

    from ._draw import FONT, INK, finish, plt, tint

    p, m, v = n_stages, n_microbatches, virtual_stages
    cases = [("GPipe", "gpipe", 1), ("1F1B", "1f1b", 1), (f"interleaved 1F1B (v = {v})", "interleaved", v)]
    fig, axes = plt.subplots(
        3, 2, figsize=(10.5, 6.6), layout="constrained", sharex="col", gridspec_kw={"width_ratios": [5, 1]}
    )
    result = {}
    span = max(o.end for o in simulate("gpipe", p, m, 1, t_forward, t_backward))
    for row, (title, kind, vv) in enumerate(cases):
        ops = simulate(kind, p, m, vv, t_forward, t_backward)
        ax, mem = axes[row]
        end = max(o.end for o in ops)
        for s in range(p):
            ax.add_patch(
                Rectangle((0, s - 0.42), end, 0.84, facecolor="white", edgecolor="none", hatch="////", lw=0, zorder=1)
            )
            ax.add_patch(
                Rectangle((0, s - 0.42), end, 0.84, facecolor=tint("black", 0.12), edgecolor=INK, lw=0.6, zorder=0)
            )
        for o in ops:
            chunk_shade = 0.55 if (o.chunk // p) % 2 == 0 else 0.25
            face = tint("blue" if o.kind == "F" else "orange", chunk_shade)
            ax.add_patch(
                Rectangle(
                    (o.start, o.device - 0.42), o.end - o.start, 0.84, facecolor=face, edgecolor=INK, lw=0.5, zorder=2
                )
            )
            if o.end - o.start >= 0.45:
                ax.text(
                    (o.start + o.end) / 2,
                    o.device,
                    str(o.micro),
                    ha="center",
                    va="center",
                    fontsize=FONT - 2,
                    zorder=3,
                    color=INK,
                )
        sim, formula = bubble_fraction(ops), formula_bubble(kind, p, m, vv)
        peaks = peak_activations(ops, vv)
        result[kind] = {"bubble": sim, "formula": formula, "peak_activations": peaks, "time": end}
        ax.set_title(
            f"{title}: bubble (hatched) = {sim:.1%} of device time; (p-1)/(vm+p-1) = {formula:.1%}",
            fontsize=FONT + 0.5,
            loc="left",
        )
        ax.set_ylim(p - 0.5, -0.5)
        ax.set_yticks(range(p), [f"device {s}" for s in range(p)], fontsize=FONT - 0.5)
        ax.set_xlim(0, span * 1.01)
        ax.spines[["top", "right"]].set_visible(False)
        mem.barh(range(p), peaks, color=tint("reddish_purple", 0.6), edgecolor=INK, height=0.6)
        for s, val in enumerate(peaks):
            mem.text(val + 0.2, s, f"{val:g}", va="center", fontsize=FONT - 1)
        mem.set_ylim(p - 0.5, -0.5)
        mem.set_yticks([])
        mem.set_xlim(0, m * 1.25)
        mem.spines[["top", "right"]].set_visible(False)
        mem.set_title("peak activations", fontsize=FONT, loc="left")
    axes[-1, 0].set_xlabel(
        f"time (one stage's forward of one micro-batch = {t_forward:g}, backward = {t_backward:g})", fontsize=FONT
    )
    axes[-1, 1].set_xlabel("micro-batches held", fontsize=FONT)
    handles = [
        Rectangle((0, 0), 1, 1, facecolor=tint("blue", 0.55), edgecolor=INK, label="forward"),
        Rectangle((0, 0), 1, 1, facecolor=tint("orange", 0.55), edgecolor=INK, label="backward"),
        Rectangle((0, 0), 1, 1, facecolor=tint("blue", 0.25), edgecolor=INK, label="second model chunk (interleaved)"),
        Rectangle((0, 0), 1, 1, facecolor=tint("black", 0.12), hatch="////", edgecolor=INK, label="idle (bubble)"),
    ]
    fig.legend(handles=handles, loc="outside lower center", ncols=4, fontsize=FONT - 0.5, frameon=False)
    fig.suptitle(
        f"Pipeline schedules, p = {p} stages, m = {m} micro-batches (simulated; numbers = micro-batch)",
        fontsize=FONT + 1,
    )
    alt = (
        f"Three timelines of {p} devices each: GPipe runs all {m} forwards then all backwards, leaving a "
        f"{result['gpipe']['bubble']:.0%} idle bubble at the start and end; 1F1B interleaves forwards and backwards "
        f"with the same {result['1f1b']['bubble']:.0%} bubble; interleaved 1F1B with {v} chunks per device "
        f"cuts it to "
        f"{result['interleaved']['bubble']:.0%}. Bars beside each show the peak activations per device: "
        f"{m:g} micro-batches on every device for GPipe, "
        f"{', '.join(f'{x:g}' for x in result['1f1b']['peak_activations'])} for 1F1B and "
        f"{', '.join(f'{x:g}' for x in result['interleaved']['peak_activations'])} for interleaved 1F1B."
    )
    return finish(fig, alt, result)
