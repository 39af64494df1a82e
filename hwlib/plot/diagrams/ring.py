"""A ring all-reduce step by step, drawn from the simulator's message log (`hwlib.collectives`).

Rank r starts with the value 2**r in every element, so after any step the number held in a chunk is a
bit mask of whose contributions it already contains. The simulator runs the real ring (reduce-scatter
then all-gather, Patarasuk & Yuan 2009); the picture replays its log, step by step, and checks that
the replay ends where the simulator did. Each link carries 2(N-1)/N x n bytes.
"""

from __future__ import annotations

import numpy as np

from hwlib import collectives, units

from ._draw import FONT, INK, MUTED, cell, finish, plt, tint


def ring_states(n_ranks: int = 4, elements_per_chunk: int = 256):
    """(trace, states): the simulated ring all-reduce of n_ranks int64 vectors (rank r: all 2**r) and,
    per step (index 0 = before the first), the bit mask each rank holds in each chunk."""
    if not isinstance(n_ranks, int) or not 2 <= n_ranks <= 6:
        raise ValueError(f"n_ranks must be an integer from 2 to 6 (one colour per rank); got {n_ranks!r}")
    size = n_ranks * elements_per_chunk
    trace = collectives.ring_allreduce([np.full(size, 1 << r, dtype=np.int64) for r in range(n_ranks)], keep_log=True)
    state = np.array([[1 << r] * n_ranks for r in range(n_ranks)], dtype=np.int64)
    states, sends = [state.copy()], [[]]
    for step in range(trace.steps):
        msgs = [m for m in trace.log if m[1] == step]
        new = state.copy()
        for phase, _, src, dst, chunk, _ in msgs:
            summed = state[dst, chunk] | state[src, chunk]
            new[dst, chunk] = summed if phase == "reduce-scatter" else state[src, chunk]
        state = new
        states.append(state.copy())
        sends.append([(m[0], m[2], m[3], m[4]) for m in msgs])
    final = np.array([[int(o[c * elements_per_chunk]) for c in range(n_ranks)] for o in trace.outputs])
    if not np.array_equal(final, state):
        raise AssertionError("the replayed log does not end where the simulator did")
    return trace, states, sends


def ring_allreduce(n_ranks: int = 4, n_bytes: float = 1.0e9):
    """A grid of panels, one per step of a ring all-reduce over n_ranks: rows are ranks, columns chunks;
    each cell lists whose contributions it holds, a thick outline marks the chunk sent this step. The
    bytes per link for an n_bytes vector: the formula 2(N-1)/N x n and the simulator's count (scaled)."""
    trace, states, sends = ring_states(n_ranks)
    per_link = collectives.expected_bytes_per_link(n_bytes, n_ranks)
    counted = trace.bytes_sent.max() / trace.outputs[0].nbytes * n_bytes
    cols = n_ranks
    rows = int(np.ceil(len(states) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(2.55 * cols, 2.45 * rows), layout="constrained")
    for idx, ax in enumerate(axes.flat):
        ax.axis("off")
        if idx >= len(states):
            continue
        _panel(ax, states[idx], sends[idx], n_ranks, _title(idx, n_ranks))
    fig.suptitle(
        f"Ring all-reduce over {n_ranks} ranks: each rank's vector in {n_ranks} chunks; a cell lists "
        f"whose contributions it holds; a thick outline marks the chunk a rank sent in that step\n"
        f"every link carries 2(N-1)/N x n = {units.format_bytes(per_link)} "
        f"for n = {units.format_bytes(n_bytes)} (simulator counted {units.format_bytes(counted)})",
        fontsize=FONT + 0.5,
    )
    alt = (
        f"{len(states)} small tables, one per step of a ring all-reduce over {n_ranks} ranks, rows are ranks and "
        f"columns chunks. At the start each rank holds only its own contribution. In the {n_ranks - 1} "
        f"reduce-scatter steps each rank sends one chunk to the next rank, which adds it, until each rank owns "
        f"one chunk summed over all ranks; in the {n_ranks - 1} all-gather steps the finished chunks travel "
        f"round the ring until every rank holds the full sum. Each link carries "
        f"{units.format_bytes(per_link)} for a {units.format_bytes(n_bytes)} vector."
    )
    return finish(
        fig,
        alt,
        {"steps": trace.steps, "bytes_per_link": per_link, "counted_bytes_per_link": counted, "n_ranks": n_ranks},
    )


def _title(idx, n):
    if idx == 0:
        return "start"
    if idx <= n - 1:
        return f"reduce-scatter step {idx}"
    return f"all-gather step {idx - (n - 1)}"


def _panel(ax, state, sends, n, title):
    sent = {(src, chunk) for _, src, _, chunk in sends}
    for r in range(n):
        for c in range(n):
            mask = int(state[r, c])
            members = [q for q in range(n) if mask >> q & 1]
            full = len(members) == n
            face = tint("bluish_green", 0.75) if full else tint("sky_blue", 0.1 + 0.7 * len(members) / n)
            y = n - 1 - r
            cell(ax, c, y, 0.92, 0.92, face, lw=2.2 if (r, c) in sent else 0.5)
            ax.text(
                c + 0.46,
                y + 0.46,
                "all" if full else "+".join(map(str, members)),
                ha="center",
                va="center",
                fontsize=FONT - 1.5,
                color=INK,
                weight="bold" if full else "normal",
            )
        ax.text(-0.12, n - 1 - r + 0.46, f"rank {r}", ha="right", va="center", fontsize=FONT - 1)
    for c in range(n):
        ax.text(c + 0.46, n + 0.08, f"chunk {c}", ha="center", va="bottom", fontsize=FONT - 2, color=MUTED)
    ax.set_title(title, fontsize=FONT, pad=12)
    ax.set_xlim(-1.3, n)
    ax.set_ylim(-0.1, n + 0.5)
    ax.set_aspect("equal")
