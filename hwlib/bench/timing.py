"""Timing harness shared by every experiment (methodology: chapter 10, measuring honestly).

GPU: CUDA events recorded on the current stream around a batch of back-to-back calls, read with
``cupy.cuda.get_elapsed_time`` (milliseconds). CPU: ``time.perf_counter``. Both:

* the first call is timed on its own and reported apart (it includes NVRTC/JIT compilation,
  cuBLAS handle creation, page faults on fresh buffers), then `warmup` more calls are discarded;
* each sample batches ``repeats`` calls, grown until one sample lasts at least ``min_sample_s``
  (1 ms on a GPU so launch overhead and event resolution (~0.5 us) vanish; ~5 ms on a CPU);
* the median (robust) and the best (STREAM's convention) per-call time are both kept;
* ``flush=True`` writes a scratch buffer of >= 2 x the last-level cache before *every* call, outside
  the timed region, so each call starts with a cold cache (Triton/mamf-finder do the same); a
  sample then holds no more calls than keep every sample's flushes within ``max_total_s``.

Launch-bound detection (GPU): launches are asynchronous, so when the device finishes a batch in no
more than 1.2 x the host's wall time for issuing it, the GPU kept pace with the host - it sat idle
waiting for the next launch and the time measures Python and the driver, not the GPU: the Timing says
``launch_bound=True`` when no timed sample shows the device outrunning the host (a host thread that is
descheduled stalls the GPU in that sample only; ``host_per_call_s`` is the median issuing time per
call). A device-bound batch outruns the host by far: its calls queue up while the first ones run.
``graph=True``: when plain launches come out launch-bound, time again with a
sample's calls captured into one CUDA graph (cupy.cuda.Stream.begin_capture) and replayed, so one
host launch drives many kernels (compute-bound calls never need it, and never risk it); where capture
fails (an old CuPy, an operation that cannot be captured) it falls back to plain launches and
``graph_error`` says why.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field, replace

import numpy as np

from hwlib.bench import backend as _backend


@dataclass
class Timing:
    """Per-call times in seconds. `samples_s` are per-call averages of each sample."""

    median_s: float
    best_s: float
    samples_s: list = field(default_factory=list)
    repeats: int = 1  # calls per sample
    first_call_s: float = 0.0  # includes compilation / first-touch costs
    clock: str = "perf_counter"
    flushed: bool = False
    host_per_call_s: float | None = None  # host cost of issuing one call (GPU), see module doc
    launch_bound: bool = False
    graph: bool = False  # calls replayed from a CUDA graph
    graph_error: str | None = None
    clocks: dict | None = None  # SM and memory clocks right after the samples (hwlib.bench.clocks), GPU only

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


def _flush_wall_s(bk) -> float:
    """Wall seconds of one `flush_cache` (the buffer already allocated), synchronised."""
    flush_cache(bk)
    t0 = time.perf_counter()
    flush_cache(bk)
    bk.synchronize()
    return max(time.perf_counter() - t0, 1e-9)


LAUNCH_BOUND_RATIO = 1.2  # device time of a batch <= this x the host's time issuing it -> launch-bound
MAX_GRAPH_CALLS = 4096  # calls captured into one graph at most


class _Clock:
    """Measures the device time of `n` back-to-back calls of fn, and the host's time issuing them."""

    def __init__(self, bk):
        self.bk = bk
        self.gpu = bk.is_gpu
        self.batches = []  # (device seconds, host seconds issuing the calls, calls) per timed batch (GPU)
        if self.gpu:
            self.start, self.end = bk.xp.cuda.Event(), bk.xp.cuda.Event()

    def run(self, fn, n: int, stream=None) -> float:
        if self.gpu:
            t0 = time.perf_counter()  # the host interval holds both event records: a stall next to one
            self.start.record(stream)  # of them delays the device's timestamp and the host's alike
            for _ in range(n):
                fn()
            self.end.record(stream)
            host = time.perf_counter() - t0
            self.end.synchronize()
            device = self.bk.xp.cuda.get_elapsed_time(self.start, self.end) * 1e-3  # ms -> s
            self.batches.append((device, host, n))
            return device
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        return time.perf_counter() - t0


def _capture(bk, fn, n: int):
    """(graph, stream) replaying `n` calls of fn as one CUDA graph; raises where capture fails."""
    cp = bk.xp
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        stream.begin_capture()
        try:
            for _ in range(n):
                fn()
        finally:
            graph = stream.end_capture()
    return graph, stream


def measure(
    fn,
    bk=None,
    *,
    warmup: int = 2,
    samples: int = 5,
    min_sample_s: float | None = None,
    flush: bool = False,
    max_total_s: float = 5.0,
    graph: bool = False,
) -> Timing:
    """Time `fn()` (no arguments; allocate outside it) and return a Timing of per-call seconds.

    warmup: untimed calls after the first; samples: how many samples to take (fewer when they would
    take longer than `max_total_s` in all, but at least one); min_sample_s: defaults to 1 ms on a GPU
    and 5 ms on a CPU; flush: overwrite the cache before every call, untimed (a sample then holds
    at most as many calls as keep all samples' flushes within `max_total_s`, so a call shorter than
    min_sample_s is timed in fewer, flushed calls rather than for minutes); graph (GPU): replay the
    calls of a sample from one CUDA graph.
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

    from hwlib.bench import clocks

    plain = _sample_loop(fn, bk, clock, samples, min_sample_s, flush, max_total_s, first, False)
    if not (graph and bk.is_gpu and not flush and plain.launch_bound):
        return replace(plain, clocks=clocks.read(bk))
    replay = _sample_loop(fn, bk, _Clock(bk), samples, min_sample_s, flush, max_total_s, first, True)
    out = replay if replay.graph else replace(plain, graph_error=replay.graph_error)
    return replace(out, clocks=clocks.read(bk))


def _sample_loop(fn, bk, clock, samples, min_sample_s, flush, max_total_s, first, use_graph) -> Timing:
    """Grow the batch until a sample lasts min_sample_s, then take the samples (see measure)."""
    graphs: dict = {}
    graph_error = None

    def one_sample(repeats: int) -> float:
        nonlocal use_graph, graph_error
        if use_graph:
            try:
                if repeats not in graphs:
                    graphs[repeats] = _capture(bk, fn, repeats)
                g, stream = graphs[repeats]
                return clock.run(lambda: g.launch(stream), 1, stream)
            except Exception as exc:  # capture unsupported here: plain launches, and say why
                from hwlib.bench._common import one_line

                use_graph, graph_error = False, one_line(exc)[:200]
                bk.synchronize()
        if not flush:
            return clock.run(fn, repeats)
        total = 0.0
        for _ in range(repeats):  # the flush stays outside the timed region
            flush_cache(bk)
            bk.synchronize()
            total += clock.run(fn, 1)
        return total

    repeats, elapsed = 1, one_sample(1)
    most = MAX_GRAPH_CALLS if use_graph else 1 << 20
    if flush:  # every call pays an untimed flush: all samples' flushes stay within max_total_s
        most = min(most, max(1, int(max_total_s / (samples * _flush_wall_s(bk)))))
    while elapsed < min_sample_s and repeats < most:  # grow the batch until a sample is long enough
        per_call = max(elapsed / repeats, 1e-9)
        repeats = min(max(2 * repeats, math.ceil(1.2 * min_sample_s / per_call)), most)
        elapsed = one_sample(repeats)
    n = min(samples, max(1, int(max_total_s // elapsed)))
    mark = len(clock.batches) - 1  # the last growth batch is the first sample
    times = [elapsed / repeats] + [one_sample(repeats) / repeats for _ in range(n - 1)]
    median = float(np.median(times))
    host, bound = None, False
    timed = clock.batches[max(0, mark) :]
    if bk.is_gpu and timed:
        host = float(np.median([h / c for _, h, c in timed])) / (repeats if use_graph else 1)
        bound = bool(max(d / max(h, 1e-12) for d, h, _ in timed) <= LAUNCH_BOUND_RATIO)
    return Timing(
        median_s=median,
        best_s=float(min(times)),
        samples_s=[float(t) for t in times],
        repeats=repeats,
        first_call_s=float(first),
        clock=("cuda-graph+events" if use_graph else "cuda-events") if bk.is_gpu else "perf_counter",
        flushed=bool(flush),
        host_per_call_s=host,
        launch_bound=bound,
        graph=use_graph,
        graph_error=graph_error,
    )
