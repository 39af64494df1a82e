"""NumPy on the CPU without hidden temporaries, on every core.

NumPy runs one ufunc on one core and, in an expression like ``b + s * c``, allocates a temporary
array that doubles the memory traffic. These helpers keep the CPU fallback honest:

* every operation writes into a preallocated output (``out=``), never into a fresh temporary;
* the array is split into one contiguous slice per thread; NumPy releases the GIL inside ufunc
  loops and large copies, so Python threads really run in parallel (like STREAM's OpenMP loop);
* where an operation needs an intermediate (triad, the fusion demo), the work is cut into chunks
  small enough for the intermediate to stay in the core's L2 cache ("cache blocking"), so DRAM sees
  only the bytes STREAM counts: read b and c, write a.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

CHUNK_BYTES = 256 << 10  # per-thread intermediate: fits a 512 KiB+ L2 (32-512 KiB measured equal)
_pools: dict = {}


def cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def _pool(threads: int) -> ThreadPoolExecutor:
    """threads - 1 workers (the caller is the last one); one pool per thread count, kept."""
    if threads not in _pools:
        _pools[threads] = ThreadPoolExecutor(max_workers=max(1, threads - 1), thread_name_prefix="hwlib-bench")
    return _pools[threads]


def split(n: int, parts: int, align: int = 64) -> list:
    """[(start, stop), ...]: `parts` contiguous slices of range(n), boundaries on `align` elements."""
    parts = max(1, min(int(parts), max(1, n // align)))
    bounds = [min(n, (n * i // parts) // align * align) for i in range(parts)] + [n]
    return [(bounds[i], bounds[i + 1]) for i in range(parts) if bounds[i] < bounds[i + 1]]


def parallel(body, n: int, threads: int) -> None:
    """Call body(part_index, start, stop) for each thread's slice of range(n); wait for all.
    The calling thread works on slice 0 itself, so only threads - 1 workers are woken."""
    slices = split(n, threads)
    futures = [_pool(len(slices)).submit(body, i, lo, hi) for i, (lo, hi) in enumerate(slices) if i > 0]
    body(0, *slices[0])
    for f in futures:
        f.result()


TRIAD_CHUNK_MIN, TRIAD_CHUNK_MAX, TRIAD_CHUNK_DEFAULT = 64 << 10, 1 << 20, 256 << 10


def triad_chunk_bytes(l2_bytes: int | None, threads: int = 1) -> int:
    """Per-thread intermediate for the blocked triad: half of the core's *own* L2 (sysfs index2, per
    core), within 64 KiB ... 1 MiB; 256 KiB when the L2 is unknown. The intermediate is written and read
    back at once, so it must stay in that L2; sizing it from the shared last-level cache (480 MiB
    reported on a big VM) gave 4 MiB chunks that live in a slice of L3 shared with other tenants and a
    triad at 0.66 x a C STREAM loop. Below ~64 KiB the two NumPy calls per chunk cost more than the
    chunk's memory time. Measured on a 2-core EPYC VM (1 MiB L2), triad against the C loop, median of
    7 alternating rounds: 64 KiB 0.98 x, 128 KiB 1.15 x, 256 KiB 1.20 x, 512 KiB 1.26 x, 1 MiB 1.24 x.
    `threads` is accepted for callers that pass it; each thread has its own L2."""
    if not l2_bytes:
        return TRIAD_CHUNK_DEFAULT
    return int(min(TRIAD_CHUNK_MAX, max(TRIAD_CHUNK_MIN, int(l2_bytes) // 2)))


def scratch(dtype, threads: int, chunk_bytes: int = CHUNK_BYTES) -> list:
    """One cache-sized intermediate buffer per thread."""
    n = max(64, chunk_bytes // np.dtype(dtype).itemsize)
    return [np.empty(n, dtype=dtype) for _ in range(max(1, threads))]


def stream_kernels(a, b, c, s, threads: int, chunk_bytes: int = CHUNK_BYTES) -> dict:
    """STREAM's four kernels over float arrays a, b, c (McCalpin 1995, the STREAM benchmark).

    copy c = a; scale b = s c; add c = a + b; triad a = b + s c (cache-blocked: s c goes to a
    per-thread cache-sized buffer of `chunk_bytes`, then a = buffer + b). Each returns None; time them with
    hwlib.bench.timing.measure. DRAM traffic equals STREAM's count (plus write-allocate, as in C).
    """
    n = a.size
    s = a.dtype.type(s)
    tmps = scratch(a.dtype, threads, chunk_bytes)

    def copy(i, lo, hi):
        np.copyto(c[lo:hi], a[lo:hi])

    def scale(i, lo, hi):
        np.multiply(c[lo:hi], s, out=b[lo:hi])

    def add(i, lo, hi):
        np.add(a[lo:hi], b[lo:hi], out=c[lo:hi])

    def triad(i, lo, hi):
        tmp, step = tmps[i], tmps[i].size
        for j in range(lo, hi, step):
            e = min(j + step, hi)
            t = tmp[: e - j]
            np.multiply(c[j:e], s, out=t)
            np.add(t, b[j:e], out=a[j:e])

    bodies = {"copy": copy, "scale": scale, "add": add, "triad": triad}
    return {name: (lambda body=body: parallel(body, n, threads)) for name, body in bodies.items()}


def triad_two_pass(a, b, c, s):
    """a = s c, then a += b over whole arrays: correct, but DRAM sees 5 arrays, not STREAM's 3."""
    s = a.dtype.type(s)

    def run():
        np.multiply(c, s, out=a)
        np.add(a, b, out=a)

    return run
