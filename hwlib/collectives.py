"""Collectives you can watch: a ring all-reduce simulated in NumPy that counts every byte on every
link, and the same all-reduce over NCCL when CuPy sees two or more GPUs.

Ring all-reduce (Patarasuk & Yuan 2009; what NCCL runs for large messages), N ranks in a ring,
rank r sending only to rank r+1 (mod N). Each rank's vector of n bytes is cut into N chunks.

  reduce-scatter, N−1 steps: in step s rank r sends chunk (r − s) mod N to rank r+1, which adds it
      to its own copy of that chunk. Afterwards rank r owns the full sum of chunk (r + 1) mod N.
  all-gather, N−1 steps: in step s rank r sends chunk (r + 1 − s) mod N (a finished sum) to rank r+1,
      which overwrites its copy. Afterwards every rank holds the whole sum.

Every step moves one chunk of n/N bytes over every link at once, so each link carries

    2 (N − 1) / N × n  bytes                    (`hwlib.parallel.ring_allreduce_bytes_per_link`)

whatever N is: close to 2n, never N × n. A naive all-reduce (everyone sends to rank 0, rank 0 sends
the sum back) puts (N − 1) × n bytes through rank 0's link in each direction; `naive_allreduce`
simulates that for contrast. Source: chapter 7 of this book (data parallelism averages gradients
with an all-reduce); NVIDIA nccl-tests' bus-bandwidth convention (busBW = algBW × 2(N−1)/N).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from . import _check, parallel


@dataclass
class Trace:
    """What a simulated collective did. Byte counts are per rank, in bytes."""

    algorithm: str  # "ring" or "naive"
    outputs: list  # each rank's final buffer (NumPy arrays)
    bytes_sent: np.ndarray  # bytes each rank sent (ring: over its link to rank r+1)
    bytes_received: np.ndarray  # bytes each rank received
    steps: int  # communication steps (each a round of simultaneous sends)
    log: list = field(default_factory=list)  # (phase, step, src, dst, chunk, bytes) per message

    @property
    def max_link_bytes(self) -> float:
        """Bytes through the busiest link, in either direction: what sets the time."""
        return float(max(self.bytes_sent.max(), self.bytes_received.max()))


def _inputs(arrays) -> list:
    arrays = [np.asarray(a) for a in arrays]
    if len(arrays) < 1:
        raise ValueError("arrays must hold one array per rank (at least one); got none")
    shape, dtype = arrays[0].shape, arrays[0].dtype
    for i, a in enumerate(arrays):
        if a.shape != shape or a.dtype != dtype:
            raise ValueError(
                f"arrays[{i}] has shape {a.shape} and dtype {a.dtype}; every rank must hold "
                f"the same shape and dtype as arrays[0] ({shape}, {dtype})"
            )
        if not np.issubdtype(a.dtype, np.number) or a.dtype == bool:
            raise ValueError(f"arrays must hold numbers to sum; got dtype {a.dtype}")
    return arrays


def ring_allreduce(arrays, keep_log: bool = False) -> Trace:
    """Sum `arrays` (one per rank, same shape and dtype) with a simulated ring all-reduce.

    Every message is a real copy of a chunk, sent "simultaneously" within a step (all sends of a
    step are read before any is applied), and its `.nbytes` is added to the sender's and the
    receiver's counters. Returns a Trace whose outputs are each rank's result (equal to the
    element-wise sum up to floating-point reordering) and whose bytes_sent match
    2(N−1)/N × n when n divides into N equal chunks (within a chunk's rounding otherwise).
    """
    arrays = _inputs(arrays)
    n_ranks = len(arrays)
    bufs = [np.array(a, copy=True).ravel() for a in arrays]
    bounds = np.linspace(0, bufs[0].size, n_ranks + 1).round().astype(int)
    chunk = [slice(bounds[i], bounds[i + 1]) for i in range(n_ranks)]
    sent = np.zeros(n_ranks)
    received = np.zeros(n_ranks)
    log = []
    step_no = 0
    for phase in ("reduce-scatter", "all-gather"):
        for s in range(n_ranks - 1):
            offset = -s if phase == "reduce-scatter" else 1 - s
            messages = []
            for r in range(n_ranks):  # every rank sends one chunk to its right neighbour
                c = (r + offset) % n_ranks
                messages.append((r, (r + 1) % n_ranks, c, bufs[r][chunk[c]].copy()))
            for src, dst, c, payload in messages:
                if phase == "reduce-scatter":
                    bufs[dst][chunk[c]] += payload
                else:
                    bufs[dst][chunk[c]] = payload
                sent[src] += payload.nbytes
                received[dst] += payload.nbytes
                if keep_log:
                    log.append((phase, step_no, src, dst, c, payload.nbytes))
            step_no += 1
    outputs = [b.reshape(arrays[0].shape) for b in bufs]
    return Trace("ring", outputs, sent, received, step_no, log)


def naive_allreduce(arrays) -> Trace:
    """Sum `arrays` the naive way: ranks 1..N−1 send everything to rank 0, rank 0 adds and sends the
    sum back. Rank 0's link carries (N−1) × n bytes in each direction: it grows with N."""
    arrays = _inputs(arrays)
    n_ranks = len(arrays)
    total = np.array(arrays[0], copy=True)
    sent = np.zeros(n_ranks)
    received = np.zeros(n_ranks)
    for r in range(1, n_ranks):
        payload = np.array(arrays[r], copy=True)
        total += payload
        sent[r] += payload.nbytes
        received[0] += payload.nbytes
    outputs = [total]
    for r in range(1, n_ranks):
        outputs.append(total.copy())
        sent[0] += total.nbytes
        received[r] += total.nbytes
    return Trace("naive", outputs, sent, received, 2 if n_ranks > 1 else 0)


def expected_bytes_per_link(n_bytes, n_devices):
    """The formula the simulator must match: 2(N−1)/N × n  [bytes] (`hwlib.parallel`)."""
    return parallel.ring_allreduce_bytes_per_link(n_bytes, n_devices)


# --------------------------------------------------------------------------- how nccl-tests report speed

FORMULAS = {
    "alg_bandwidth": "algbw = S / t",
    "bus_factor": "allreduce 2(n−1)/n; allgather, reducescatter, alltoall (n−1)/n; broadcast, reduce 1",
    "bus_bandwidth": "busbw = algbw × factor(op, n)",
}
"""The formula each function of this block evaluates, as the calculators print it."""

BUS_FACTORS = {
    "allreduce": lambda n: 2 * (n - 1) / n,
    "allgather": lambda n: (n - 1) / n,
    "reducescatter": lambda n: (n - 1) / n,
    "alltoall": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1.0,
    "reduce": lambda n: 1.0,
    "sendrecv": lambda n: 1.0,
}
"""nccl-tests' bus-bandwidth factor per collective {cite}`nvidia_nccl_tests`: the bytes each rank
must put on its link per byte of the buffer S, for the best (ring-like) algorithm."""


def alg_bandwidth(n_bytes, time_s):
    """Algorithm bandwidth, nccl-tests' ``algbw``: algbw = S / t  [bytes/s], S the buffer size of
    one rank (the size column of the report), t the time of one collective. It depends on n and on
    the collective, so it cannot be held against a link's spec."""
    return _check.positive("n_bytes", n_bytes) / _check.positive("time_s", time_s)


def bus_factor(op: str, n_ranks) -> float:
    """The factor nccl-tests multiply algbw by to get busbw, for collective `op` over n ranks:
    allreduce 2(n−1)/n; allgather, reducescatter and alltoall (n−1)/n; broadcast, reduce and
    sendrecv 1 {cite}`nvidia_nccl_tests`."""
    name = _check.choice("collective", op, list(BUS_FACTORS), {"all_reduce": "allreduce", "all_gather": "allgather",
                         "reduce_scatter": "reducescatter", "all_to_all": "alltoall"})  # fmt: skip
    return BUS_FACTORS[name](_check.integer("n_ranks", n_ranks))


def bus_bandwidth(n_bytes, time_s, op: str, n_ranks):
    """Bus bandwidth, nccl-tests' ``busbw``: busbw = algbw × factor(op, n)  [bytes/s] — the rate
    each rank's link actually carried, the number to hold against the link's one-direction spec
    (450 GB/s for an H100's NVLink) {cite}`nvidia_nccl_tests`."""
    return alg_bandwidth(n_bytes, time_s) * bus_factor(op, n_ranks)


# --------------------------------------------------------------------------- real GPUs (NCCL)


def gpu_count() -> int:
    """How many CUDA devices CuPy can use here; 0 without CuPy, a driver or a GPU."""
    try:
        import cupy

        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception:  # no CuPy, no driver, no device
        return 0


def nccl_status() -> tuple[bool, str]:
    """(True, why) when an all-reduce over NCCL can run here: CuPy with NCCL and >= 2 GPUs."""
    count = gpu_count()
    if count < 2:
        return False, f"NCCL needs at least 2 GPUs; CuPy sees {count}"
    try:
        from cupy.cuda import nccl

        if not getattr(nccl, "available", False):
            return False, "CuPy was built without NCCL (pip install nvidia-nccl-cu12 may provide it)"
    except Exception as exc:
        return False, f"cupy.cuda.nccl is unusable ({type(exc).__name__}: {exc})"
    return True, f"NCCL over {count} GPUs"


_NCCL_TYPES = {
    "float16": "NCCL_FLOAT16",
    "float32": "NCCL_FLOAT32",
    "float64": "NCCL_FLOAT64",
    "int32": "NCCL_INT32",
    "int64": "NCCL_INT64",
}


def _nccl_allreduce(arrays, repeats: int) -> dict:
    """Single process, one communicator per GPU (ncclCommInitAll), one grouped call per all-reduce."""
    import cupy
    from cupy.cuda import nccl

    n = len(arrays)
    dtype_name = str(arrays[0].dtype)
    if dtype_name not in _NCCL_TYPES:
        raise ValueError(f"NCCL path supports dtypes {', '.join(_NCCL_TYPES)}; got {dtype_name}")
    nccl_type = getattr(nccl, _NCCL_TYPES[dtype_name])
    comms = nccl.NcclCommunicator.initAll(n)
    sends, recvs, streams = [], [], []
    for i, a in enumerate(arrays):
        with cupy.cuda.Device(i):
            sends.append(cupy.asarray(a.ravel()))
            recvs.append(cupy.empty_like(sends[-1]))
            streams.append(cupy.cuda.Stream(non_blocking=True))

    def once():
        nccl.groupStart()
        for i, comm in enumerate(comms):
            with cupy.cuda.Device(i):
                comm.allReduce(
                    sends[i].data.ptr, recvs[i].data.ptr, sends[i].size, nccl_type, nccl.NCCL_SUM, streams[i].ptr
                )
        nccl.groupEnd()
        for i, stream in enumerate(streams):
            with cupy.cuda.Device(i):
                stream.synchronize()

    once()  # warm-up: NCCL sets up its rings and buffers on the first call
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        once()
        times.append(time.perf_counter() - t0)
    outputs = [cupy.asnumpy(r).reshape(arrays[0].shape) for r in recvs]
    for comm in comms:
        comm.destroy()
    return {"outputs": outputs, "time_s": float(np.median(times)), "best_time_s": float(min(times))}


def allreduce(arrays, method: str = "auto", repeats: int = 5) -> dict:
    """All-reduce (sum) one array per rank, on real GPUs when possible, else simulated.

    method: "auto" (NCCL when `nccl_status()` allows and there are as many GPUs as arrays, else the
    simulated ring), "nccl" (insist; RuntimeError if it cannot run) or "simulated".
    Returns a plain record: method, reason, n_devices, n_bytes (per rank), result (rank 0's, NumPy),
    matches_sum (every rank equals the element-wise sum, to float tolerance), bytes_per_link
    (counted by the simulator; for NCCL the ring formula, as nccl-tests reports bus bandwidth),
    expected_bytes_per_link (2(N−1)/N × n) and, for NCCL, time_s and bus_bandwidth (bytes/s).
    """
    arrays = _inputs(arrays)
    mode = _check.choice("method", method, ("auto", "nccl", "simulated"))
    n_dev, n_bytes = len(arrays), float(arrays[0].nbytes)
    ok, why = nccl_status()
    if ok and gpu_count() < n_dev:
        ok, why = False, f"{n_dev} ranks but only {gpu_count()} GPUs"
    if mode == "nccl" and not ok:
        raise RuntimeError(f"method='nccl' cannot run here: {why}")
    expected = float(expected_bytes_per_link(n_bytes, n_dev)) if n_bytes > 0 else 0.0
    reference = np.sum(np.stack([a.astype(np.float64) for a in arrays]), axis=0)
    record: dict[str, object] = {"n_devices": n_dev, "n_bytes": n_bytes, "expected_bytes_per_link": expected}
    if ok and mode != "simulated":
        out = _nccl_allreduce(arrays, _check.integer("repeats", repeats))
        outputs = out["outputs"]
        record.update(
            method="nccl",
            reason=why,
            time_s=out["time_s"],
            best_time_s=out["best_time_s"],
            bytes_per_link=expected,
            bus_bandwidth=expected / out["time_s"],
        )
    else:
        trace = ring_allreduce(arrays)
        outputs = trace.outputs
        reason = why if mode == "auto" else "method='simulated' asked for"
        record.update(
            method="simulated ring",
            reason=f"simulated in NumPy: {reason}",
            bytes_per_link=float(trace.bytes_sent.max()),
            steps=trace.steps,
        )
    rtol, atol = (1e-3, 1e-3) if outputs[0].dtype == np.float16 else (1e-5, 1e-6)
    record["matches_sum"] = bool(
        all(np.allclose(o.astype(np.float64), reference, rtol=rtol, atol=atol) for o in outputs)
    )
    record["result"] = outputs[0]
    return record
