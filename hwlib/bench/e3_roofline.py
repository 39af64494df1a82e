"""E3 - empirical roofline: FLOP/s against FLOPs per byte, by tuning the work done per element.

Each element is read once from DRAM (bytes = n x itemsize) and gets k dependent fused
multiply-adds v = a v + b (2 FLOPs each) plus one add into a running sum:
    flops = (2 k + 1) n,   intensity = (2 k + 1) / itemsize  FLOP/byte.
Small k: the memory roof (FLOP/s = bandwidth x intensity); large k: the compute roof (flat).
The knee sits near the device's ridge point peak / bandwidth (chapter 6; mixbench; LBNL ERT).

GPU: hwlib/kernels/roofline.cu, one RawKernel per k (-DITERS=k; compile time is reported apart as
first_call_s). CPU: NumPy in-place ufunc chains (np.multiply(t, a, out=t); np.add(t, b, out=t)) over
L2-sized chunks copied from the big array, on every core. Each FMA costs two ufunc passes over the
chunk, so the CPU's flat roof is NumPy's in-cache ufunc rate, not the core's FMA peak.
"""

from __future__ import annotations

import numpy as np

from hwlib.bench import _common, cpu, timing

A, B = 0.999, 0.001  # keeps v bounded for any k


BLOCK = 256


def _gpu_kernel(bk, dtype, k):
    """(RawKernel for k FMAs per element, its launch shape: whole waves of resident blocks)."""
    name = "fma_sweep_f64" if np.dtype(dtype) == np.float64 else "fma_sweep_f32"
    kern = bk.xp.RawKernel(_common.kernel_source("roofline.cu"), name, options=(f"-DITERS={k}",))
    return kern, _common.wave_grid(bk, kern, BLOCK)


def _gpu_fn(kern, shape, x, out):
    args = (x, out, np.int64(x.size), x.dtype.type(A), x.dtype.type(B))  # exact C types: long long, T, T
    grid = (shape["grid"],)
    return lambda: kern(grid, (shape["block"],), args)


def _cpu_fn(x, k, threads):
    tmps = cpu.scratch(x.dtype, threads)
    a, b = x.dtype.type(A), x.dtype.type(B)
    sums = np.zeros(len(tmps), dtype=np.float64)

    def body(i, lo, hi):
        tmp, step, acc = tmps[i], tmps[i].size, 0.0
        for j in range(lo, hi, step):
            t = tmp[: min(step, hi - j)]
            np.copyto(t, x[j : j + t.size])  # the only DRAM read of these elements
            for _ in range(k):
                np.multiply(t, a, out=t)
                np.add(t, b, out=t)
            acc += float(t.sum())
        sums[i] = acc

    return lambda: cpu.parallel(body, x.size, threads)


def roofline(
    xp=None,
    iters=None,
    dtypes=None,
    n: int | None = None,
    quick: bool = False,
    threads: int | None = None,
    target_flops: float | None = None,
    samples: int = 5,
    progress=None,
) -> dict:
    """Run E3; results hold one point per (dtype, k) with flops, bytes, intensity, flops_per_s.

    iters: FMAs per element (GPU 0...1024, CPU 0...64); n: elements (default >= 4 x cache);
    target_flops: shrink n at large k so each call does about this much work (never below 4 x cache).
    """
    bk = _common.resolve(xp)
    gpu = bk.is_gpu
    iters = [
        int(k)
        for k in (
            iters
            if iters is not None
            else _common.sizes_for(
                bk,
                quick,
                [0] + _common.powers_of_two(1, 1024),
                [0] + _common.powers_of_two(1, 64),
                gpu_quick=[0, 1, 4, 16, 64, 256],
                cpu_quick=[0, 1, 4, 16],
            )
        )
    ]
    if any(k < 0 for k in iters):
        raise ValueError(f"iters must be whole numbers >= 0; got {iters}")
    dtypes = [np.dtype(d) for d in (dtypes or (["float32", "float64"] if gpu else ["float64"]))]
    threads = 1 if gpu else (threads or cpu.cores())
    target_flops = target_flops or (2e10 if gpu else (5e7 if quick else 2e8))
    rec = _common.new_record(
        "roofline",
        bk,
        "E3 empirical roofline (k FMAs per element)",
        {
            "iters": iters,
            "dtypes": [d.name for d in dtypes],
            "threads": None if gpu else threads,
            "target_flops": target_flops,
            "samples": samples,
        },
        notes=[
            "flops = (2 k + 1) n (k FMAs + 1 add per element); bytes = n x itemsize (each element read once)",
            "rates use the median time",
            "n shrinks as k grows (about target_flops per call): small-k points, where bytes matter, use "
            "arrays >= 4 x the cache; large-k points are compute-bound, so cache-resident data does not help them",
        ],
    )
    if not gpu:
        rec["notes"].append(
            "CPU: each FMA is two NumPy ufunc passes over an L2-resident chunk; the flat "
            "roof is NumPy's in-cache ufunc rate, far below the core's FMA peak"
        )
    if gpu:
        rec["notes"].append(
            "GPU: grid = whole waves of resident blocks from the occupancy calculator (the kernel's "
            "registers decide how many 256-thread blocks fit on an SM), never a partial wave"
        )
    step, steps = 0, len(dtypes) * len(iters)
    for dt in dtypes:
        n_max = (
            n or _common.dram_elements(bk, dt.itemsize, 1 << 26 if gpu else 1 << 23, factor=4, arrays=1, quick=quick)[0]
        )
        lanes = _common.gpu_grid(bk, BLOCK) * BLOCK if gpu else 1
        n_min = min(n_max, 16 * lanes if gpu else 1 << 16)  # every lane gets work
        x = bk.xp.full(n_max, 0.5, dtype=dt)
        out = bk.xp.zeros(lanes, dtype=dt)
        for k in iters:
            step += 1
            nk = int(min(n_max, max(n_min, target_flops // (2 * k + 1))))
            xs = x[:nk]
            _common.say(progress, f"roofline ({step}/{steps}): {dt.name} k={k} n={nk}")
            shape = {}
            if gpu:
                kern, shape = _gpu_kernel(bk, dt, k)
                fn = _gpu_fn(kern, shape, xs, out)
            else:
                fn = _cpu_fn(xs, k, threads)
            t = timing.measure(fn, bk, samples=samples)
            flops, nbytes = float((2 * k + 1) * nk), float(nk * dt.itemsize)
            rec["results"].append(
                {
                    "dtype": dt.name,
                    "iters": k,
                    "n": nk,
                    "flops": flops,
                    "bytes": nbytes,
                    "intensity": flops / nbytes,
                    "seconds": t.median_s,
                    "first_call_s": t.first_call_s,
                    "flops_per_s": _common.rate(flops, t.median_s),
                    "bytes_per_s": _common.rate(nbytes, t.median_s),
                    "launch_bound": t.launch_bound,
                    **(t.clocks or {}),
                    **{key: shape[key] for key in ("grid", "block", "blocks_per_sm", "occupancy") if key in shape},
                }
            )
        del x, out
    return rec
