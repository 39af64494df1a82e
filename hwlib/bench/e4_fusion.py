"""E4 - elementwise fusion: y = a x^2 + b x + c as separate passes vs one fused pass.

Bytes moved per element (itemsize b; each pass reads its inputs and writes its output once):
  expression   x*a*x + x*b + c   5 passes: (1+1) + (2+1) + (1+1) + (2+1) + (1+1) = 12 b, 4 temporaries
  out_buffers  Horner with out=  t = a x; t += b; t *= x; y = t + c   (1+1)+(1+1)+(2+1)+(1+1) = 9 b
  fused        one pass          read x, write y = 2 b
GPU fused variants: ``cupy.fuse`` and an ``ElementwiseKernel`` (compiled on first call - reported
apart as first_call_s). CPU "fused" variant: the Horner chain cut into L2-sized chunks, so the
temporaries never reach DRAM (cache blocking is the CPU's way to fuse). In the bandwidth-bound limit
the speedup approaches the ratio of bytes moved (12/2 = 6x); at small n the GPU variants are
launch-bound and the speedup approaches the ratio of kernel launches instead.
"""

from __future__ import annotations

import weakref

import numpy as np

from hwlib.bench import _common, cpu, timing

A, B, C = 0.5, -1.25, 2.0
ACCESSES = {"expression": 12, "out_buffers": 9, "fuse": 2, "elementwise_kernel": 2, "cache_blocked": 2}
PASSES = {"expression": 5, "out_buffers": 4, "fuse": 1, "elementwise_kernel": 1, "cache_blocked": 1}
_gpu_kernels = weakref.WeakKeyDictionary()  # cupy module -> (fused function, ElementwiseKernel), built once


def _quadratic(x, a, b, c):
    return (a * x + b) * x + c


def _gpu_fused(cp):
    key = cp  # per CuPy module object (tests swap stand-ins; ids can be reused)
    if key not in _gpu_kernels:
        _gpu_kernels[key] = (
            cp.fuse(kernel_name="hwlib_quadratic")(_quadratic),
            cp.ElementwiseKernel("T x, T a, T b, T c", "T y", "y = (a * x + b) * x + c", "hwlib_quadratic_ek"),
        )
    return _gpu_kernels[key]


def _variants(bk, x, y, t):
    xp = bk.xp
    a, b, c = (x.dtype.type(v) for v in (A, B, C))

    def expression():
        return x * a * x + x * b + c  # 5 kernels; allocates a result and temporaries every call

    def out_buffers():
        xp.multiply(x, a, out=t)
        xp.add(t, b, out=t)
        xp.multiply(t, x, out=t)
        xp.add(t, c, out=y)

    v = {"expression": expression, "out_buffers": out_buffers}
    if bk.is_gpu:
        fused, ek = _gpu_fused(xp)
        v["fuse"] = lambda: fused(x, a, b, c)
        v["elementwise_kernel"] = lambda: ek(x, a, b, c, y)
    else:
        tmp = cpu.scratch(x.dtype, 1)[0]

        def cache_blocked():
            step = tmp.size
            for j in range(0, x.size, step):
                e = min(j + step, x.size)
                u, xs = tmp[: e - j], x[j:e]
                np.multiply(xs, a, out=u)
                np.add(u, b, out=u)
                np.multiply(u, xs, out=u)
                np.add(u, c, out=y[j:e])

        v["cache_blocked"] = cache_blocked
    return v


def default_sizes(bk, quick: bool, itemsize: int = 4) -> list:
    """Element counts: powers of 4 from 2^16 (GPU) / 2^14 (CPU) up to the first power of two whose
    array is >= 4 x the largest cache (GPU L2 / CPU LLC), so the largest point really streams from
    DRAM on every device (an H200's 60 MiB L2 holds a 2^24-element float32 array). quick keeps three
    points: the smallest, one in the middle, the DRAM one (on a CPU, quick asks only 2 x LLC). On a CPU
    the largest is capped by memory (the expression variant holds 6 arrays)."""
    lo = 1 << 16 if bk.is_gpu else 1 << 14
    top_n = _common.dram_elements(
        bk,
        itemsize,
        1 << (24 if quick else 26) if bk.is_gpu else 1 << (22 if quick else 24),
        factor=2 if quick and not bk.is_gpu else 4,
        arrays=6,
        quick=quick,
    )[0]
    top = 1 << max(lo.bit_length(), (int(top_n) - 1).bit_length())
    if not bk.is_gpu:
        cap = _common.memory_cap(bk, quick=quick)
        while cap is not None and top > lo and 6 * top * itemsize > cap:
            top //= 2
    sizes = [lo << (2 * i) for i in range(64) if lo << (2 * i) < top] + [top]
    return [sizes[0], sizes[len(sizes) // 2], sizes[-1]] if quick and len(sizes) > 3 else sizes


def fusion(xp=None, sizes=None, dtype="float32", quick: bool = False, samples: int = 5, progress=None) -> dict:
    """Run E4; results hold one point per (variant, n) with bytes_moved, seconds, speedup (sizes: see
    default_sizes)."""
    bk = _common.resolve(xp)
    dtype = np.dtype(dtype)
    sizes = _common.check_sizes("sizes", sizes or default_sizes(bk, quick, dtype.itemsize))
    rec = _common.new_record(
        "fusion",
        bk,
        "E4 elementwise fusion: y = a x^2 + b x + c",
        {"sizes": sizes, "dtype": dtype.name, "samples": samples, "threads": None if bk.is_gpu else 1},
        notes=[
            "bytes_moved = accesses per element x itemsize x n: expression 12, out_buffers 9, fused 2",
            "speedup = expression time / variant time (median times)",
        ],
    )
    if not bk.is_gpu:
        rec["notes"].append(
            "CPU: one thread (as NumPy runs); 'cache_blocked' is the fused variant - "
            "chunks whose temporaries stay in L2"
        )
    ref = None
    for n in sizes:
        x = bk.xp.linspace(-1.0, 1.0, n, dtype=dtype)
        y, t = bk.xp.empty_like(x), bk.xp.empty_like(x)
        variants = _variants(bk, x, y, t)
        expect = bk.asnumpy(variants["expression"]())
        for name, fn in variants.items():
            _common.say(progress, f"fusion: {name} n={n}")
            tm = timing.measure(fn, bk, samples=samples)
            got = fn()
            got = bk.asnumpy(y if got is None else got)
            if not np.allclose(got, expect, rtol=1e-4, atol=1e-5):
                raise RuntimeError(f"fusion variant {name} computed a wrong result at n={n}")
            if name == "expression":
                ref = tm.median_s
            moved = ACCESSES[name] * dtype.itemsize * n
            rec["results"].append(
                {
                    "variant": name,
                    "n": int(n),
                    "passes": PASSES[name],
                    "bytes_moved": int(moved),
                    "seconds": tm.median_s,
                    "seconds_best": tm.best_s,
                    "first_call_s": tm.first_call_s,
                    "bytes_per_s": _common.rate(moved, tm.median_s),
                    "elements_per_s": _common.rate(n, tm.median_s),
                    "speedup": ref / tm.median_s if tm.median_s > 0 else None,
                    "launch_bound": tm.launch_bound,
                    **(tm.clocks or {}),
                }
            )
        del x, y, t
    return rec
