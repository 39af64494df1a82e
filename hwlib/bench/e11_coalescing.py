"""E11 - memory coalescing: the useful bandwidth of a read as the stride between neighbouring threads grows.

A warp's load is served in 32-byte sectors (chapter 11, {ref}`ch11-coalescing`; hwlib.coalescing):
float32 at stride 1 is 4 sectors per warp, every byte used; stride s touches min(32, 4 s) sectors, so
the useful share is 1/s until stride 8, where each lane has a sector of its own (1/8 used). Kernel:
hwlib/kernels/coalescing.cu (strided_read). The array x keeps one size; the kernel reads
n = (len(x) - offset) / stride elements x[k stride + offset], so every sector of x is fetched for
stride <= 8 (the same time, 1/s of it useful) and fewer beyond. Offsets of 1-8 floats put each warp's
128 bytes across 5 sectors instead of 4; from DRAM the extra sector is the next warp's and is mostly
served by L2, so expect little loss there (the model's 0.8 counts L2 sector requests).

CPU (NumPy, labelled): the same strided sum over one array, x[::s].sum(). A CPU moves 64-byte cache
lines, not 32-byte sectors, and has no warps: the useful rate falls as 1/s up to s = 16 floats (one
line per element), then the bytes moved shrink. NumPy's strided sum runs on one core and can be
limited by its loop rather than by memory, which flattens the small strides; the record says so.
Misaligned warps have no CPU analogue (not run).
"""

from __future__ import annotations

import numpy as np

from hwlib import coalescing as access
from hwlib.bench import _common, timing

TITLE = "E11 memory coalescing: useful bandwidth vs stride and misalignment"
STRIDES = (1, 2, 4, 8, 16, 32)
OFFSETS = (0, 1, 2, 4, 8)  # floats: 0, 4, 8, 16, 32 bytes
CPU_LINE_BYTES = 64


def coalescing(xp=None, strides=STRIDES, offsets=OFFSETS, elements: int | None = None, quick=False,
                     samples: int = 5, progress=None) -> dict:  # fmt: skip
    """Run E11; results hold one row per (stride, offset): seconds, useful and sector bytes/s."""
    bk = _common.resolve(xp)
    strides = _common.check_sizes("strides", strides)
    offsets = [int(o) for o in offsets]
    if any(o < 0 for o in offsets):
        raise ValueError(f"offsets must be whole numbers >= 0 (floats); got {offsets}")
    return (_gpu if bk.is_gpu else _cpu)(bk, strides, offsets, elements, quick, samples, progress)


def _gpu(bk, strides, offsets, elements, quick, samples, progress) -> dict:
    cp = bk.xp
    elements = _common.check_sizes("elements", [elements or (1 << 27 if quick else 1 << 28)])[0]
    kern = cp.RawKernel(_common.kernel_source("coalescing.cu"), "strided_read")
    shape = _common.wave_grid(bk, kern, 256)
    x = cp.ones(elements, dtype=cp.float32)
    out = cp.empty(shape["grid"] * shape["block"], dtype=cp.float32)
    rec = _common.new_record(
        "coalescing",
        bk,
        TITLE,
        {"elements": elements, "strides": strides, "offsets": offsets, "samples": samples, **shape},
        notes=[
            "useful bytes = 4 n (n floats read); sector bytes = useful / hwlib.coalescing.sector_efficiency",
            "useful_fraction = useful bytes/s / that of stride 1, offset 0 (model: sector efficiency)",
            "x keeps its size: for stride <= 8 every sector of x is fetched whatever the stride",
            "misaligned offsets: the model's 5 sectors per warp are L2 requests; DRAM fetches each sector once",
        ],
    )
    cases = [(s, 0) for s in strides] + [(1, o) for o in offsets if o]
    base = None
    for stride, offset in cases:
        _common.say(progress, f"coalescing: stride {stride}, offset {offset} floats")
        n = (elements - offset) // stride
        args = (x, out, np.int64(n), np.int32(stride), np.int32(offset))  # exact C types: long long, int
        t = timing.measure(lambda: kern((shape["grid"],), (shape["block"],), args), bk, samples=samples)
        row = _row(stride, offset, n, t, access.sector_efficiency(stride, 4, 4 * offset))
        base = base or row["useful_bytes_per_s"]
        row["useful_fraction"] = row["useful_bytes_per_s"] / base
        rec["results"].append(row)
    return rec


def _cpu(bk, strides, offsets, elements, quick, samples, progress) -> dict:
    cap = _common.memory_cap(bk, 0.25, quick)
    want = elements or (1 << 24 if quick else 1 << 26)  # 64 MiB / 256 MiB of float32: beyond the caches
    elements = _common.check_sizes("elements", [min(want, (cap or 4 * want) // 4)])[0]
    x = np.ones(elements, dtype=np.float32)
    rec = _common.new_record(
        "coalescing",
        bk,
        TITLE,
        {"elements": elements, "strides": strides, "offsets": [0], "samples": samples},
        notes=[
            "CPU: x[::s].sum() over one float32 array; 64-byte cache lines, no warps or 32-byte sectors",
            "model_efficiency = 4 / min(64, 4 s): the useful share of each cache line",
            "misaligned warps have no CPU analogue: offsets not run",
            "NumPy's strided sum can be limited by its own loop rather than by memory (well below DRAM "
            "bandwidth on one core): then small strides lose less than the line model says",
        ],
    )
    base = None
    for stride in strides:
        _common.say(progress, f"coalescing: CPU stride {stride}")
        view = x[::stride]
        t = timing.measure(lambda v=view: float(v.sum()), bk, samples=samples)
        row = _row(stride, 0, view.size, t, 4 / min(CPU_LINE_BYTES, 4 * stride))
        base = base or row["useful_bytes_per_s"]
        row["useful_fraction"] = row["useful_bytes_per_s"] / base
        rec["results"].append(row)
    return rec


def _row(stride, offset, n, t, efficiency) -> dict:
    useful = 4.0 * n
    return {
        "stride": int(stride),
        "offset_bytes": 4 * int(offset),
        "n": int(n),
        "useful_bytes": useful,
        "seconds": t.median_s,
        "seconds_best": t.best_s,
        "first_call_s": t.first_call_s,
        "useful_bytes_per_s": _common.rate(useful, t.median_s),
        "sector_bytes_per_s": _common.rate(useful / efficiency, t.median_s),
        "model_efficiency": efficiency,
        "launch_bound": t.launch_bound,
        **(t.clocks or {}),
    }
