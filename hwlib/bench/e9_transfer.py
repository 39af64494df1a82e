"""E9 - host <-> device copies over PCIe (or NVLink-C2C): why data must stay on the GPU.

bandwidth = bytes copied / time, bytes counted once per copy (nvbandwidth's convention). Two kinds of
host buffer: pageable NumPy memory (the driver stages it through a pinned bounce buffer) and pinned
memory from cupyx.empty_pinned (DMA straight from the page-locked buffer - usually faster).
Both directions are the same call, cudaMemcpyAsync on the current stream (cupy.cuda.runtime.memcpyAsync),
timed with events around a batch of copies, as nvbandwidth does: ``ndarray.get()`` would synchronise
the stream on every call (its default blocking=True) and time the host's waits as well as the copy.
A copy from or to pageable memory is synchronous for the host even through cudaMemcpyAsync (the
driver stages it through its pinned buffer before the call returns; CUDA Runtime API, "API
synchronization behavior"), so the host's time equals the device's by construction: such points say
synchronous=True and are never labelled launch-bound; only pinned copies are truly asynchronous.
On a CPU there is no device: the record says the experiment does not apply.
"""

from __future__ import annotations

import numpy as np

from hwlib.bench import _common, timing

TITLE = "E9 host <-> device copies"


def transfer(xp=None, sizes=None, quick: bool = False, samples: int = 5, progress=None) -> dict:
    """Run E9 on a GPU; results per (direction, host memory, bytes). On a CPU: skipped, with reason."""
    bk = _common.resolve(xp)
    if not bk.is_gpu:
        return _common.skipped(
            "transfer",
            bk,
            TITLE,
            "not applicable: NumPy arrays already live in host "
            "memory, so there is no host-to-device copy to time on a CPU.",
        )
    import cupyx

    cp = bk.xp
    sizes = _common.check_sizes(
        "sizes", sizes or ([1 << 20, 16 << 20, 256 << 20] if quick else [1 << p for p in range(16, 29, 2)])
    )
    rec = _common.new_record(
        "transfer",
        bk,
        TITLE,
        {"sizes": sizes, "samples": samples},
        notes=[
            "bytes counted once per copy; pinned = cupyx.empty_pinned, pageable = numpy.empty",
            "pageable copies are synchronous for the host (synchronous=True): their host time equals the device "
            "time by construction, which is not the launch-bound case; launch_bound applies to pinned copies only",
        ],
    )
    rt = cp.cuda.runtime
    step, steps = 0, 4 * len(sizes)
    for nbytes in sizes:
        dev = cp.empty(nbytes, dtype=cp.uint8)
        hosts = {"pageable": np.ones(nbytes, dtype=np.uint8), "pinned": cupyx.empty_pinned(nbytes, dtype=np.uint8)}
        hosts["pinned"][...] = 1
        for kind, host in hosts.items():
            for direction in ("h2d", "d2h"):
                step += 1
                fn = _copy(cp, rt, dev, host, nbytes, direction)
                _common.say(progress, f"transfer ({step}/{steps}): {direction} {kind} {nbytes} B")
                t = timing.measure(fn, bk, samples=samples, max_total_s=2.0)
                rec["results"].append(
                    {
                        "direction": direction,
                        "host_memory": kind,
                        "bytes": nbytes,
                        "seconds": t.median_s,
                        "bytes_per_s": _common.rate(nbytes, t.median_s),
                        "synchronous": kind == "pageable",
                        "launch_bound": t.launch_bound if kind == "pinned" else False,
                        **(t.clocks or {}),
                    }
                )
        del dev, hosts
    return rec


def _copy(cp, rt, dev, host, nbytes: int, direction: str):
    """One asynchronous copy of nbytes between the device array and the host buffer, on the current stream."""
    dptr, hptr = int(dev.data.ptr), int(host.ctypes.data)
    if direction == "h2d":
        dst, src, kind = dptr, hptr, rt.memcpyHostToDevice
    else:
        dst, src, kind = hptr, dptr, rt.memcpyDeviceToHost
    return lambda: rt.memcpyAsync(dst, src, nbytes, kind, cp.cuda.get_current_stream().ptr)
