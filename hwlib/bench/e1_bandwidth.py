"""E1 - memory bandwidth, STREAM style, plus a working-set sweep that shows the cache cliff.

Kernels (McCalpin's STREAM; BabelStream): copy c = a, scale b = s c, add c = a + b,
triad a = b + s c. Bytes are counted as STREAM counts them: 2 arrays x n x itemsize for copy and
scale, 3 for add and triad; write-allocate traffic is *not* counted (so real DRAM traffic of a
store is higher on CPUs). bandwidth = counted bytes / time [bytes/s]; `bytes_per_s` uses the best
time (STREAM's convention), `bytes_per_s_median` the median.

Each array is at least 4 x the largest cache (STREAM's rule; GPU L2, CPU last-level cache) so the
main numbers measure DRAM. The sweep runs triad over growing working sets (3 arrays) on one
CPU thread or the whole GPU: small sets live in cache and look faster than DRAM - the cliff.
"""
from __future__ import annotations

import numpy as np

from hwlib.bench import _common, cpu, timing

KERNELS = ("copy", "scale", "add", "triad")
ARRAYS = {"copy": 2, "scale": 2, "add": 3, "triad": 3}  # STREAM's byte count, per element
SCALAR = 3.0


_EK: dict = {}  # ElementwiseKernel objects, built once (CuPy caches the compiled code per object)


def _gpu_kernels(cp, a, b, c, s):
    """ElementwiseKernels with explicit outputs: no allocation inside the timed region."""
    if not _EK:
        ek = cp.ElementwiseKernel
        _EK.update(copy=ek("T a", "T c", "c = a", "hwlib_copy"),
                   scale=ek("T c, T s", "T b", "b = s * c", "hwlib_scale"),
                   add=ek("T a, T b", "T c", "c = a + b", "hwlib_add"),
                   triad=ek("T b, T c, T s", "T a", "a = b + s * c", "hwlib_triad"))
    copy, scale, add, triad = _EK["copy"], _EK["scale"], _EK["add"], _EK["triad"]
    s = a.dtype.type(s)
    return {"copy": lambda: copy(a, c), "scale": lambda: scale(c, s, b),
            "add": lambda: add(a, b, c), "triad": lambda: triad(b, c, s, a)}


def _arrays(bk, n, dtype):
    xp = bk.xp
    a = xp.full(n, 1.0, dtype=dtype)
    b = xp.full(n, 2.0, dtype=dtype)
    c = xp.zeros(n, dtype=dtype)
    return a, b, c


def _kernels(bk, a, b, c, threads):
    if bk.is_gpu:
        return _gpu_kernels(bk.xp, a, b, c, SCALAR)
    return cpu.stream_kernels(a, b, c, SCALAR, threads, cpu.triad_chunk_bytes(bk.cache_bytes(), threads))


def _point(kernel, n, itemsize, t, **extra) -> dict:
    counted = ARRAYS[kernel] * n * itemsize
    return {"kernel": kernel, "n": int(n), "itemsize": int(itemsize), "bytes": int(counted),
            "seconds": t.best_s, "seconds_median": t.median_s, "first_call_s": t.first_call_s,
            "bytes_per_s": _common.rate(counted, t.best_s),
            "bytes_per_s_median": _common.rate(counted, t.median_s), **extra}


def bandwidth(xp=None, n: int | None = None, dtype=None, quick: bool = False, sweep: bool = True,
              sweep_sizes=None, threads: int | None = None, samples: int = 7, progress=None) -> dict:
    """Run E1 and return its record (results: one entry per STREAM kernel; sweep: triad vs size).

    n: elements per array (default: max(2^26 GPU / 2^24 CPU, 4 x cache / itemsize); quick: 2^24 GPU).
    dtype: float32 on a GPU, float64 on a CPU (STREAM's double). threads (CPU only): default all
    cores. sweep_sizes: working-set sizes in bytes for the sweep (3 arrays each).
    """
    bk = _common.resolve(xp)
    dtype = np.dtype(dtype or (np.float32 if bk.is_gpu else np.float64))
    item = dtype.itemsize
    cache = bk.cache_bytes()
    if n is None:
        base = (1 << 24 if quick else 1 << 26) if bk.is_gpu else 1 << 24
        n = max(base, 4 * cache // item)
    n = _common.check_sizes("n", [n])[0]
    threads = cpu.cores() if threads is None else _common.check_sizes("threads", [threads])[0]
    rec = _common.new_record("bandwidth", bk, "E1 memory bandwidth (STREAM kernels)", {
        "n": n, "dtype": dtype.name, "array_bytes": n * item, "cache_bytes": cache,
        "threads": None if bk.is_gpu else threads, "scalar": SCALAR, "samples": samples}, notes=[
        "bytes counted STREAM-style: copy/scale 2 arrays, add/triad 3 arrays x n x itemsize; "
        "write-allocate traffic not counted",
        "bytes_per_s uses the best time (STREAM convention); bytes_per_s_median the median",
    ])
    if not bk.is_gpu:
        rec["notes"].append(f"CPU: NumPy with out= buffers on {threads} thread(s) (GIL released in ufuncs); "
                            "triad is cache-blocked so DRAM sees b, c read and a written, as in STREAM")
    a, b, c = _arrays(bk, n, dtype)
    kernels = _kernels(bk, a, b, c, threads)
    for name in KERNELS:
        _common.say(progress, f"bandwidth: {name} on {n} x {dtype.name}")
        t = timing.measure(kernels[name], bk, samples=samples)
        rec["results"].append(_point(name, n, item, t, threads=None if bk.is_gpu else threads))
    if not bk.is_gpu:
        t = timing.measure(cpu.triad_two_pass(a, b, c, SCALAR), bk, samples=max(3, samples // 2))
        extra = _point("triad", n, item, t, threads=1, variant="two full passes: a = s c; a += b",
                       bytes_moved=5 * n * item)
        rec["extra"] = [extra]
        rec["notes"].append("extra: a two-pass NumPy triad on one thread moves 5 arrays (c read, a written, "
                            "then a, b read and a written) but is credited with STREAM's 3 - it looks slower")
    del a, b, c
    if sweep:
        rec["sweep"] = working_set_sweep(bk, dtype, sweep_sizes, quick, progress)
        rec["parameters"]["sweep_threads"] = None if bk.is_gpu else 1
        rec["notes"].append("sweep: the smallest working sets are limited by per-call overhead (kernel launch on a "
                            "GPU, Python/NumPy dispatch on a CPU: microseconds), not by any memory")
    return rec


def default_sweep_sizes(bk, quick: bool) -> list:
    """Working-set bytes (3 arrays) from ~48 KiB to >= 8 x the largest cache, doubling."""
    top = max(8 * bk.cache_bytes(), 64 << 20)
    if quick:
        top = max(4 * bk.cache_bytes(), 32 << 20)
    return [3 * s for s in _common.powers_of_two(16 << 10, top // 3)]


def working_set_sweep(bk, dtype, sizes=None, quick=False, progress=None) -> list:
    """Triad bandwidth vs working-set size (bytes of a + b + c). One thread on a CPU."""
    dtype = np.dtype(dtype)
    sizes = _common.check_sizes("sweep_sizes", sizes or default_sweep_sizes(bk, quick))
    out = []
    for ws in sizes:
        n = max(64, ws // (3 * dtype.itemsize))
        a, b, c = _arrays(bk, n, dtype)
        fn = _kernels(bk, a, b, c, threads=1)["triad"]
        t = timing.measure(fn, bk, samples=3, max_total_s=1.0)
        out.append(_point("triad", n, dtype.itemsize, t, working_set_bytes=3 * n * dtype.itemsize))
        _common.say(progress, f"bandwidth sweep: {3 * n * dtype.itemsize} B -> {out[-1]['bytes_per_s']:.3e} B/s")
    return out
