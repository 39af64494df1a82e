"""Timing harness shared by every experiment (methodology: gpu-experiments reference §1.8, §8).

GPU: CUDA events recorded on the current stream around a batch of back-to-back calls, read with
``cupy.cuda.get_elapsed_time`` (milliseconds). CPU: ``time.perf_counter``. Both:

* the first call is timed on its own and reported apart (it includes NVRTC/JIT compilation,
  cuBLAS handle creation, page faults on fresh buffers), then `warmup` more calls are discarded;
* each sample batches ``repeats`` calls, grown until one sample lasts at least ``min_sample_s``
  (1 ms on a GPU so launch overhead and event resolution (~0.5 us) vanish; ~5 ms on a CPU);
* the median (robust) and the best (STREAM's convention) per-call time are both kept;
* ``flush=True`` writes a scratch buffer of >= 2 x the last-level cache before *every* call, outside
  the timed region, so each call starts with a cold cache (Triton/mamf-finder do the same).
"""
from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field

import numpy as np

from hwlib import backend as _backend


@dataclass
class Timing:
    """Per-call times in seconds. `samples_s` are per-call averages of each sample."""
    median_s: float
    best_s: float
    samples_s: list = field(default_factory=list)
    repeats: int = 1            # calls per sample
    first_call_s: float = 0.0   # includes compilation / first-touch costs
    clock: str = "perf_counter"
    flushed: bool = False

    def to_dict(self) -> dict:
        return asdict(self)


_flush_buffers: dict = {}


def flush_cache(bk) -> int:
    """Overwrite a buffer of >= 2 x the largest cache (GPU L2 / CPU LLC); returns its size in bytes."""
    key = (bk.name, id(bk.xp))
    buf = _flush_buffers.get(key)
    if buf is None:
        nbytes = max(2 * bk.cache_bytes(), 8 << 20)
        buf = _flush_buffers[key] = bk.xp.empty(nbytes, dtype=bk.xp.uint8)
    buf.fill(np.uint8(len(_flush_buffers) + int(time.perf_counter_ns() & 0x7F)))
    return int(buf.nbytes)


class _Clock:
    """Measures the wall time of `n` back-to-back calls of fn on the device."""

    def __init__(self, bk):
        self.bk = bk
        self.gpu = bk.is_gpu
        if self.gpu:
            self.start, self.end = bk.xp.cuda.Event(), bk.xp.cuda.Event()

    def run(self, fn, n: int) -> float:
        if self.gpu:
            self.start.record()
            for _ in range(n):
                fn()
            self.end.record()
            self.end.synchronize()
            return self.bk.xp.cuda.get_elapsed_time(self.start, self.end) * 1e-3  # ms -> s
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        return time.perf_counter() - t0


def measure(fn, bk=None, *, warmup: int = 2, samples: int = 5, min_sample_s: float | None = None,
            flush: bool = False, max_total_s: float = 5.0) -> Timing:
    """Time `fn()` (no arguments; allocate outside it) and return a Timing of per-call seconds.

    warmup: untimed calls after the first; samples: how many samples to take (fewer when they would
    take longer than `max_total_s` in all, but at least one); min_sample_s: defaults to 1 ms on a GPU
    and 5 ms on a CPU.
    """
    bk = _backend.get() if bk is None else _backend.from_xp(bk)
    if samples < 1 or warmup < 0:
        raise ValueError(f"samples must be >= 1 and warmup >= 0; got samples={samples}, warmup={warmup}")
    min_sample_s = (1e-3 if bk.is_gpu else 5e-3) if min_sample_s is None else float(min_sample_s)
    clock = _Clock(bk)

    t0 = time.perf_counter()
    fn()
    bk.synchronize()
    first = time.perf_counter() - t0
    for _ in range(warmup):
        fn()
    bk.synchronize()

    def one_sample(repeats: int) -> float:
        if not flush:
            return clock.run(fn, repeats)
        total = 0.0
        for _ in range(repeats):  # the flush stays outside the timed region
            flush_cache(bk)
            bk.synchronize()
            total += clock.run(fn, 1)
        return total

    repeats, elapsed = 1, one_sample(1)
    while elapsed < min_sample_s and repeats < 1 << 20:  # grow the batch until a sample is long enough
        per_call = max(elapsed / repeats, 1e-9)
        repeats = min(max(2 * repeats, math.ceil(1.2 * min_sample_s / per_call)), 1 << 20)
        elapsed = one_sample(repeats)
    n = min(samples, max(1, int(max_total_s // elapsed)))
    times = [elapsed / repeats] + [one_sample(repeats) / repeats for _ in range(n - 1)]
    return Timing(median_s=float(np.median(times)), best_s=float(min(times)), samples_s=[float(t) for t in times],
                  repeats=repeats, first_call_s=float(first),
                  clock="cuda-events" if bk.is_gpu else "perf_counter", flushed=bool(flush))
