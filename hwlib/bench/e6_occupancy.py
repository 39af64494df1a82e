"""E6 - Little's law: bandwidth rises with the bytes kept in flight, then saturates.

Little's law (chapter 1, §1.3; Little 1961): in-flight = throughput x latency, so with B bytes of
requests outstanding and a memory latency L, bandwidth <= B / L until the DRAM ceiling. Read back:
    implied latency [s] = bytes in flight / measured bandwidth   (meaningful on the rising part).
GPU: hwlib/kernels/occupancy.cu, a grid-stride read whose total threads T (grid x block) and
independent loads per thread ILP (-DILP=k) vary; bytes in flight ~ T x ILP x 4 B. T runs from one
warp per SM to the most threads the SMs can hold (occupancy = T / (SMs x max threads per SM)).
CPU (labelled as such): concurrency = the number of threads reading disjoint slices; the cores'
hardware prefetchers decide the bytes actually in flight, so no latency is inferred there.
"""

from __future__ import annotations

import numpy as np

from hwlib.bench import _common, cpu, timing

TITLE = "E6 occupancy / Little's law: bandwidth vs bytes in flight"


def occupancy(
    xp=None, ilps=(1, 2, 4, 8), n: int | None = None, threads=None, quick: bool = False, samples: int = 5, progress=None
) -> dict:
    """Run E6; results hold bandwidth per (threads, ilp) on a GPU, per thread count on a CPU."""
    bk = _common.resolve(xp)
    return _gpu(bk, ilps, n, quick, samples, progress) if bk.is_gpu else _cpu(bk, n, threads, quick, samples, progress)


def warps_per_sm_steps(per_sm_threads: int) -> list:
    """1, 2, 4, ... warps per SM and the SM's full count (48 on sm_86/89, which is no power of two)."""
    full = per_sm_threads // 32
    return sorted(set(_common.powers_of_two(1, full) + [full]))


def launch_shape(bk, kern, warps: int) -> dict:
    """Blocks that put `warps` warps on every SM in one wave: the largest block (<= 1024 threads, a
    multiple of 32 dividing 32 x warps) whose block count fits the SM's block limit and the occupancy
    calculator; when registers allow fewer, the grid shrinks to what fits (occupancy says so)."""
    info = bk.device_info()
    sms, threads = info["sm_count"], 32 * warps
    best = None
    for block in range(min(info.get("max_threads_per_block", 1024), threads) // 32 * 32, 31, -32):
        if threads % block or threads // block > info.get("max_blocks_per_sm", 16):
            continue
        fit, how = _common.resident_blocks(bk, kern, block)
        per_sm = min(threads // block, fit)
        if best is None or per_sm * block > best[0]:  # most resident threads; the larger block on a tie
            best = (per_sm * block, block, per_sm, how)
    if best is None:
        raise ValueError(f"no block size gives {warps} warps per SM on this GPU")
    resident, block, per_sm, how = best
    return {
        "block": block,
        "grid": sms * per_sm,
        "threads": sms * resident,
        "occupancy": resident / info["max_threads_per_sm"],
        "occupancy_from": how,
    }


def _gpu(bk, ilps, n, quick, samples, progress) -> dict:
    cp = bk.xp
    info = bk.device_info()
    sms, per_sm = info["sm_count"], info["max_threads_per_sm"]
    ilps = _common.check_sizes("ilps", ilps if not quick else [i for i in ilps if i in (1, 4)] or ilps)
    warps = warps_per_sm_steps(per_sm)
    n_max = n or max(1 << 26, 4 * bk.cache_bytes() // 4)
    x = cp.ones(n_max, dtype=cp.float32)
    out = cp.zeros(sms * per_sm, dtype=cp.float32)
    src = _common.kernel_source("occupancy.cu")
    rec = _common.new_record(
        "occupancy",
        bk,
        TITLE,
        {
            "ilps": ilps,
            "warps_per_sm": warps,
            "thread_counts": [sms * 32 * w for w in warps],
            "n_max": n_max,
            "sm_count": sms,
            "max_threads_per_sm": per_sm,
            "samples": samples,
        },
        notes=[
            "bytes_in_flight = threads x ILP x 4 B; implied_latency_s = bytes_in_flight / bytes_per_s (Little's law)",
            "bytes = elements actually read = floor(n / (ILP x threads)) x ILP x threads x 4 B",
            "occupancy = resident threads / max threads per SM, from the occupancy calculator (registers can cap it)",
        ],
    )
    step, steps = 0, len(ilps) * len(warps)
    for ilp in ilps:
        kern = cp.RawKernel(src, "read_ilp", options=(f"-DILP={ilp}",))
        for w in warps:
            step += 1
            shape = launch_shape(bk, kern, w)
            total, block, grid = shape["threads"], shape["block"], shape["grid"]
            in_flight = total * ilp * 4
            # keep each call near 5 ms at a guessed 600 ns latency, but never inside L2
            guess_bw = in_flight / 600e-9
            nk = int(min(n_max, max(4 * bk.cache_bytes() // 4, guess_bw * 5e-3 / 4)))
            steps_k = nk // (total * ilp)
            read = steps_k * total * ilp * 4
            _common.say(progress, f"occupancy ({step}/{steps}): ILP {ilp}, {total} threads ({block} x {grid})")
            args = (x, out, np.int64(nk))
            t = timing.measure(lambda: kern((grid,), (block,), args), bk, samples=samples)
            bw = _common.rate(read, t.median_s)
            rec["results"].append(
                {
                    "threads": total,
                    "block": block,
                    "grid": grid,
                    "ilp": ilp,
                    "warps_per_sm": w,
                    "occupancy": shape["occupancy"],
                    "bytes_in_flight": in_flight,
                    "bytes": read,
                    "seconds": t.median_s,
                    "bytes_per_s": bw,
                    "implied_latency_s": in_flight / bw if bw > 0 else None,
                    "launch_bound": t.launch_bound,
                    **(t.clocks or {}),
                }
            )
    return rec


def _cpu(bk, n, threads, quick, samples, progress) -> dict:
    n = (
        n
        or _common.dram_elements(bk, 8, 1 << 22 if quick else 1 << 24, factor=2 if quick else 4, arrays=1, quick=quick)[
            0
        ]
    )
    counts = _common.check_sizes("threads", threads or list(range(1, 2 * cpu.cores() + 1)))
    x = np.ones(n, dtype=np.float64)
    sums = np.zeros(max(counts))
    rec = _common.new_record(
        "occupancy",
        bk,
        TITLE + " (CPU: threads as concurrency)",
        {"n": n, "threads": counts, "samples": samples},
        notes=[
            "CPU analogue, not the GPU experiment: each thread sums a disjoint slice (read-only); "
            "concurrency = threads, bytes in flight are set by the hardware prefetchers and are not measured",
            f"{cpu.cores()} cores: more threads than cores only time-share them",
        ],
    )
    for k in counts:
        _common.say(progress, f"occupancy (CPU): {k} thread(s)")

        def body(i, lo, hi):
            sums[i] = np.add.reduce(x[lo:hi])

        t = timing.measure(lambda: cpu.parallel(body, n, k), bk, samples=samples)
        nbytes = n * 8
        rec["results"].append(
            {"threads": k, "bytes": nbytes, "seconds": t.median_s, "bytes_per_s": _common.rate(nbytes, t.median_s)}
        )
    return rec
