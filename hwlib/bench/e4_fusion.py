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

import numpy as np

from hwlib.bench import _common, cpu, timing

A, B, C = 0.5, -1.25, 2.0
ACCESSES = {"expression": 12, "out_buffers": 9, "fuse": 2, "elementwise_kernel": 2, "cache_blocked": 2}
PASSES = {"expression": 5, "out_buffers": 4, "fuse": 1, "elementwise_kernel": 1, "cache_blocked": 1}
_gpu_kernels: dict = {}  # one fused function / ElementwiseKernel per process (CuPy caches by object)


def _quadratic(x, a, b, c):
    return (a * x + b) * x + c


def _gpu_fused(cp):
    if "fuse" not in _gpu_kernels:
        _gpu_kernels["fuse"] = cp.fuse(kernel_name="hwlib_quadratic")(_quadratic)
        _gpu_kernels["ek"] = cp.ElementwiseKernel("T x, T a, T b, T c", "T y", "y = (a * x + b) * x + c",
                                                  "hwlib_quadratic_ek")
    return _gpu_kernels["fuse"], _gpu_kernels["ek"]


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


def fusion(xp=None, sizes=None, dtype="float32", quick: bool = False, samples: int = 5, progress=None) -> dict:
    """Run E4; results hold one point per (variant, n) with bytes_moved, seconds, speedup."""
    bk = _common.resolve(xp)
    dtype = np.dtype(dtype)
    sizes = _common.check_sizes("sizes", sizes or _common.sizes_for(
        bk, quick, [1 << p for p in range(16, 27, 2)], [1 << p for p in range(14, 25, 2)],
        gpu_quick=[1 << 16, 1 << 20, 1 << 24], cpu_quick=[1 << 14, 1 << 18, 1 << 22]))
    rec = _common.new_record("fusion", bk, "E4 elementwise fusion: y = a x^2 + b x + c", {
        "sizes": sizes, "dtype": dtype.name, "samples": samples, "threads": None if bk.is_gpu else 1}, notes=[
        "bytes_moved = accesses per element x itemsize x n: expression 12, out_buffers 9, fused 2",
        "speedup = expression time / variant time (median times)",
    ])
    if not bk.is_gpu:
        rec["notes"].append("CPU: one thread (as NumPy runs); 'cache_blocked' is the fused variant - "
                            "chunks whose temporaries stay in L2")
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
            rec["results"].append({
                "variant": name, "n": int(n), "passes": PASSES[name], "bytes_moved": int(moved),
                "seconds": tm.median_s, "seconds_best": tm.best_s, "first_call_s": tm.first_call_s,
                "bytes_per_s": _common.rate(moved, tm.median_s), "elements_per_s": _common.rate(n, tm.median_s),
                "speedup": ref / tm.median_s if tm.median_s > 0 else None})
        del x, y, t
    return rec
