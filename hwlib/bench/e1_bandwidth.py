"""E1 - memory bandwidth, STREAM style, plus a working-set sweep that shows the cache cliff.

Kernels (McCalpin's STREAM; BabelStream): copy c = a, scale b = s c, add c = a + b,
triad a = b + s c. Bytes are counted as STREAM counts them: 2 arrays x n x itemsize for copy and
scale, 3 for add and triad; write-allocate traffic is *not* counted (so real DRAM traffic of a
store is higher on CPUs). bandwidth = counted bytes / time [bytes/s]; `bytes_per_s` uses the best
time (STREAM's convention), `bytes_per_s_median` the median.

Each array is at least 4 x the largest cache (STREAM's rule; GPU L2, CPU last-level cache) so the
main numbers measure DRAM; on a CPU the arrays are capped by available memory (the record says so),
and quick=True halves the rule (2 x cache) and the base size. The sweep runs triad over growing
working sets (3 arrays) on one CPU thread or the whole GPU: small sets live in cache and look faster
than DRAM - the cliff. The STREAM arrays are freed before the sweep starts.

GPU: hwlib/kernels/stream.cu, grid-stride kernels launched as whole waves of resident blocks (the
occupancy calculator decides how many fit), each launch repeating its traversal `reps` times so
that one launch lasts >= ~50 us even for an L2-resident working set - otherwise the ~5-10 us host
cost of a launch, not the memory, sets the time. Points whose time is still the launch cost carry
launch_bound=True (GPU: device time <= 1.2 x host launch cost; CPU: time <= 2 x the cost of the
same call on 64 elements, i.e. Python/NumPy call overhead).
"""

from __future__ import annotations

import weakref

import numpy as np

from hwlib.bench import _common, cpu, timing

KERNELS = ("copy", "scale", "add", "triad")
ARRAYS = {"copy": 2, "scale": 2, "add": 3, "triad": 3}  # STREAM's byte count, per element
SCALAR = 3.0


_RAW = weakref.WeakKeyDictionary()  # cupy module -> {name: RawKernel}, built once (CuPy caches code per object)
LAUNCH_TARGET_S = 50e-6  # device time one launch should last at least (>> ~10 us host launch cost)
MAX_REPS = 1 << 16


def _raw(cp, name):
    kernels = _RAW.setdefault(cp, {})  # per CuPy module object (tests swap stand-ins; ids can be reused)
    if name not in kernels:
        kernels[name] = cp.RawKernel(_common.kernel_source("stream.cu"), name)
    return kernels[name]


def reps_for(bk, counted_bytes: int) -> int:
    """Traversals per launch so one launch moves >= LAUNCH_TARGET_S x an optimistic rate (4 x the DRAM
    bandwidth: about what L2 reaches) - 1 for DRAM-sized arrays, thousands for a few KiB."""
    info = bk.device_info()
    dram = info.get("spec_bandwidth") or info.get("theoretical_bandwidth") or 1e12
    return int(min(MAX_REPS, max(1, -(-int(LAUNCH_TARGET_S * 4 * dram) // max(1, counted_bytes)))))


def _gpu_kernels(bk, a, b, c, s):
    """{kernel: (callable, shape, reps)}: raw STREAM kernels, whole waves, reps traversals per launch."""
    cp = bk.xp
    suffix = "f64" if a.dtype == np.float64 else "f32"
    s = a.dtype.type(s)
    n = np.int64(a.size)
    args = {"copy": (a, c), "scale": (c, b, s), "add": (a, b, c), "triad": (b, c, a, s)}
    out = {}
    for name in KERNELS:
        kern = _raw(cp, f"stream_{name}_{suffix}")
        shape = _common.wave_grid(bk, kern, 256)
        grid = int(min(shape["grid"], max(1, -(-a.size // 256))))
        reps = reps_for(bk, ARRAYS[name] * a.size * a.dtype.itemsize)
        call_args = args[name] + (n, np.int32(reps))  # exact C types: long long n, int reps
        out[name] = (
            lambda kern=kern, grid=grid, call_args=call_args: kern((grid,), (256,), call_args),
            dict(shape, grid=grid),
            reps,
        )
    return out


def _arrays(bk, n, dtype):
    xp = bk.xp
    a = xp.full(n, 1.0, dtype=dtype)
    b = xp.full(n, 2.0, dtype=dtype)
    c = xp.zeros(n, dtype=dtype)
    return a, b, c


def _kernels(bk, a, b, c, threads):
    """{kernel: callable} - one call = one traversal on a CPU, `reps` traversals on a GPU."""
    if bk.is_gpu:
        return {k: v[0] for k, v in _gpu_kernels(bk, a, b, c, SCALAR).items()}
    chunk = cpu.triad_chunk_bytes(bk.device_info().get("l2_bytes"), threads)  # the core's own L2, not the LLC
    return cpu.stream_kernels(a, b, c, SCALAR, threads, chunk)


def _timed(bk, a, b, c, threads):
    """{kernel: (callable, extra fields, reps)} for timing."""
    if bk.is_gpu:
        return {
            k: (
                fn,
                {
                    "grid": sh["grid"],
                    "block": sh["block"],
                    "blocks_per_sm": sh["blocks_per_sm"],
                    "reps_per_launch": reps,
                },
                reps,
            )
            for k, (fn, sh, reps) in _gpu_kernels(bk, a, b, c, SCALAR).items()
        }
    return {k: (fn, {}, 1) for k, fn in _kernels(bk, a, b, c, threads).items()}


def _point(kernel, n, itemsize, t, reps=1, overhead_s=None, **extra) -> dict:
    """One measured point; t times one call of `reps` traversals, rates are per traversal."""
    counted = ARRAYS[kernel] * n * itemsize
    best, median = t.best_s / reps, t.median_s / reps
    bound = t.launch_bound if overhead_s is None else t.median_s <= 2 * overhead_s
    return {
        "kernel": kernel,
        "n": int(n),
        "itemsize": int(itemsize),
        "bytes": int(counted),
        "seconds": best,
        "seconds_median": median,
        "first_call_s": t.first_call_s,
        "bytes_per_s": _common.rate(counted, best),
        "bytes_per_s_median": _common.rate(counted, median),
        "launch_bound": bool(bound),
        **(t.clocks or {}),
        "host_per_call_s": t.host_per_call_s,
        **extra,
    }


def default_n(bk, dtype, quick: bool):
    """(elements per array, cap note): GPU max(2^26, 4 x L2) (quick 2^24); CPU max(2^24, 4 x LLC)
    (quick max(2^22, 2 x LLC)), capped on a CPU at 40 % of the available memory for 3 arrays."""
    item = np.dtype(dtype).itemsize
    if bk.is_gpu:
        return _common.dram_elements(bk, item, 1 << 24 if quick else 1 << 26, factor=4)
    return _common.dram_elements(bk, item, 1 << 22 if quick else 1 << 24, factor=2 if quick else 4, quick=quick)


def bandwidth(
    xp=None,
    n: int | None = None,
    dtype=None,
    quick: bool = False,
    sweep: bool = True,
    sweep_sizes=None,
    threads: int | None = None,
    samples: int = 7,
    progress=None,
) -> dict:
    """Run E1 and return its record (results: one entry per STREAM kernel; sweep: triad vs size).

    n: elements per array (default: see default_n). dtype: float32 on a GPU, float64 on a CPU
    (STREAM's double). threads (CPU only): default all cores. sweep_sizes: working-set sizes in bytes
    for the sweep (3 arrays each). An out-of-memory in the sweep keeps the STREAM results and the
    sweep points so far (sweep_error says what happened).
    """
    bk = _common.resolve(xp)
    dtype = np.dtype(dtype or (np.float32 if bk.is_gpu else np.float64))
    item = dtype.itemsize
    cache = bk.cache_bytes()
    cap_note = None
    if n is None:
        n, cap_note = default_n(bk, dtype, quick)
    n = _common.check_sizes("n", [n])[0]
    threads = cpu.cores() if threads is None else _common.check_sizes("threads", [threads])[0]
    rec = _common.new_record(
        "bandwidth",
        bk,
        "E1 memory bandwidth (STREAM kernels)",
        {
            "n": n,
            "dtype": dtype.name,
            "array_bytes": n * item,
            "cache_bytes": cache,
            "threads": None if bk.is_gpu else threads,
            "scalar": SCALAR,
            "samples": samples,
        },
        notes=[
            "bytes counted STREAM-style: copy/scale 2 arrays, add/triad 3 arrays x n x itemsize; "
            "write-allocate traffic not counted",
            "bytes_per_s uses the best time (STREAM convention); bytes_per_s_median the median",
            "launch_bound=True: the time is the per-call cost (kernel launch on a GPU, Python/NumPy dispatch on a "
            "CPU), not the memory - read such a point as a lower bound on bandwidth",
        ],
    )
    if cap_note:
        rec["notes"].append(cap_note)
        rec["parameters"]["capped_by_memory"] = True
    if bk.is_gpu:
        rec["notes"].append(
            "GPU: each launch repeats its traversal reps_per_launch times (hwlib/kernels/stream.cu) "
            "so small working sets keep the GPU busy longer than a launch costs"
        )
    else:
        rec["notes"].append(
            f"CPU: NumPy with out= buffers on {threads} thread(s) (GIL released in ufuncs); "
            "triad is cache-blocked so DRAM sees b, c read and a written, as in STREAM"
        )
    _stream(bk, rec, n, dtype, threads, samples, progress)  # its arrays are freed when it returns
    if sweep:
        rec["sweep"] = []
        rec["parameters"]["sweep_threads"] = None if bk.is_gpu else 1
        try:
            working_set_sweep(bk, dtype, sweep_sizes, quick, progress, out=rec["sweep"])
        except MemoryError as exc:
            _common.free_device_memory(bk)
            rec["sweep_error"] = f"out of memory after {len(rec['sweep'])} sweep points: {_common.one_line(exc)}"
            rec["notes"].append("sweep stopped early: " + rec["sweep_error"])
    return rec


def _stream(bk, rec, n, dtype, threads, samples, progress) -> None:
    item = dtype.itemsize
    a, b, c = _arrays(bk, n, dtype)
    kernels = _timed(bk, a, b, c, threads)
    for i, name in enumerate(KERNELS, 1):
        _common.say(progress, f"bandwidth: {name} on {n} x {dtype.name} ({i}/{len(KERNELS)})")
        fn, extra, reps = kernels[name]
        t = timing.measure(fn, bk, samples=samples)
        rec["results"].append(_point(name, n, item, t, reps, threads=None if bk.is_gpu else threads, **extra))
    if not bk.is_gpu:
        t = timing.measure(cpu.triad_two_pass(a, b, c, SCALAR), bk, samples=max(3, samples // 2))
        extra = _point(
            "triad", n, item, t, threads=1, variant="two full passes: a = s c; a += b", bytes_moved=5 * n * item
        )
        rec["extra"] = [extra]
        rec["notes"].append(
            "extra: a two-pass NumPy triad on one thread moves 5 arrays (c read, a written, "
            "then a, b read and a written) but is credited with STREAM's 3 - it looks slower"
        )


def default_sweep_sizes(bk, quick: bool) -> list:
    """Working-set bytes (3 arrays) from ~48 KiB to >= 8 x the largest cache (quick: 4 x), doubling;
    on a CPU never above 40 % of the available memory."""
    top = max(8 * bk.cache_bytes(), 64 << 20)
    if quick:
        top = max(4 * bk.cache_bytes(), 32 << 20)
    cap = _common.memory_cap(bk, quick=quick)
    if cap is not None:
        top = max(3 << 16, min(top, cap))
    return [3 * s for s in _common.powers_of_two(16 << 10, top // 3)]


def _call_overhead(bk, dtype) -> float | None:
    """CPU: seconds of one triad call on 64 elements - the per-call cost no memory explains."""
    if bk.is_gpu:
        return None
    a, b, c = _arrays(bk, 64, dtype)
    return timing.measure(_kernels(bk, a, b, c, threads=1)["triad"], bk, samples=3, max_total_s=0.2).median_s


def working_set_sweep(bk, dtype, sizes=None, quick=False, progress=None, out=None) -> list:
    """Triad bandwidth vs working-set size (bytes of a + b + c). One thread on a CPU. Appends to and
    returns `out` (so a caller keeps the points measured before an error)."""
    dtype = np.dtype(dtype)
    sizes = _common.check_sizes("sweep_sizes", sizes or default_sweep_sizes(bk, quick))
    out = [] if out is None else out
    overhead = _call_overhead(bk, dtype)
    for i, ws in enumerate(sizes, 1):
        n = max(64, ws // (3 * dtype.itemsize))
        a, b, c = _arrays(bk, n, dtype)
        fn, extra, reps = _timed(bk, a, b, c, threads=1)["triad"]
        t = timing.measure(fn, bk, samples=3, max_total_s=1.0)
        out.append(
            _point("triad", n, dtype.itemsize, t, reps, overhead, working_set_bytes=3 * n * dtype.itemsize, **extra)
        )
        del a, b, c, fn
        bound = " (launch-bound)" if out[-1]["launch_bound"] else ""
        _common.say(
            progress,
            f"bandwidth sweep ({i}/{len(sizes)}): {3 * n * dtype.itemsize} B -> "
            f"{out[-1]['bytes_per_s']:.3e} B/s{bound}",
        )
    return out
