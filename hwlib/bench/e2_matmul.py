"""E2 - matmul throughput vs size: square N x N, and skinny (fixed weight, growing batch).

FLOPs of C = A B with A m x k and B k x n: 2 m n k (one multiply + one add per term; chapter 4).
Minimum bytes moved: (m k + k n + m n) x itemsize (each operand read once, C written once), so the
arithmetic intensity is 2 m n k / ((m k + k n + m n) b) FLOP/byte (hwlib.roofline.matmul_intensity).
Square: I = N / (3 b / 2) - grows with N. Skinny (m = batch, W fixed k x n): I ~ batch for
fp16 - the decode story: memory-bound until batch reaches the ridge point (chapter 6).

GPU: cuBLAS through cupy.matmul (fp16 uses tensor cores with fp32 accumulation). CPU: NumPy's BLAS
(OpenBLAS here), which uses every core. Operands are random normal (predictable data runs faster).
"""

from __future__ import annotations

import numpy as np

from hwlib.bench import _common, timing


def random(bk, shape, dtype, seed: int = 0):
    """Standard-normal array of `dtype` on the backend's device (generated as float32)."""
    rng = bk.xp.random.default_rng(seed)  # NumPy and CuPy Generators both take dtype=float32
    return rng.standard_normal(shape, dtype=np.float32).astype(dtype)


def time_matmul(bk, a, b, out, samples: int = 5, max_total_s: float = 5.0):
    """Timing of out = a @ b (preallocated out, nothing allocated in the timed region). On a GPU the
    calls of a sample are replayed from a CUDA graph, so a small GEMM is not timed as its launch cost."""
    xp = bk.xp
    return timing.measure(
        lambda: xp.matmul(a, b, out=out), bk, samples=samples, max_total_s=max_total_s, graph=bk.is_gpu
    )


def point(m, n, k, itemsize, t, **extra) -> dict:
    flops = 2.0 * m * n * k
    nbytes = float((m * k + k * n + m * n) * itemsize)
    return {
        "m": int(m),
        "n": int(n),
        "k": int(k),
        "flops": flops,
        "bytes": nbytes,
        "intensity": flops / nbytes,
        "seconds": t.median_s,
        "seconds_best": t.best_s,
        "first_call_s": t.first_call_s,
        "flops_per_s": _common.rate(flops, t.median_s),
        "bytes_per_s": _common.rate(nbytes, t.median_s),
        "launch_bound": t.launch_bound,
        "graph": t.graph,
        **extra,
    }


def matmul(
    xp=None,
    sizes=None,
    dtypes=None,
    batches=None,
    weight_shape=None,
    quick: bool = False,
    samples: int = 5,
    progress=None,
) -> dict:
    """Run E2. Returns a record whose results hold square points (shape "square") and skinny
    points (shape "skinny": m = batch rows against a fixed k x n weight).

    sizes: square N values (GPU 256...8192, CPU 64...1024); dtypes: GPU float16+float32, CPU
    float32+float64; batches: skinny m values; weight_shape: (k, n) of the fixed weight
    (GPU 8192 x 8192 fp16 = 128 MiB, CPU 4096 x 4096 fp32 = 64 MiB: larger than the caches).
    """
    bk = _common.resolve(xp)
    sizes = _common.sizes_or_default(
        "sizes",
        sizes,
        bk,
        quick,
        [256, 512, 1024, 2048, 4096, 8192],
        [64, 128, 256, 512, 1024],
        gpu_quick=[256, 512, 1024, 2048, 4096],
        cpu_quick=[64, 128, 256, 512],
    )
    dtypes = [np.dtype(d) for d in (dtypes or (["float16", "float32"] if bk.is_gpu else ["float32", "float64"]))]
    batches = _common.sizes_or_default(
        "batches",
        batches,
        bk,
        quick,
        _common.powers_of_two(1, 4096),
        _common.powers_of_two(1, 512),
        gpu_quick=_common.powers_of_two(1, 1024),
        cpu_quick=_common.powers_of_two(1, 128),
    )
    k, n = _common.check_sizes("weight_shape", weight_shape or ((8192, 8192) if bk.is_gpu else (4096, 4096)))
    skinny_dtype = dtypes[0]
    tf32 = _common.tf32_state(bk)
    rec = _common.new_record(
        "matmul",
        bk,
        "E2 matmul throughput vs size",
        {
            "sizes": sizes,
            "dtypes": [d.name for d in dtypes],
            "batches": batches,
            "weight_shape": [k, n],
            "skinny_dtype": skinny_dtype.name,
            "samples": samples,
            "tf32": tf32,
        },
        notes=[
            "tf32: whether float32 products may use TF32 tensor cores (CUPY_TF32=1) - a float32 row with tf32=True "
            "is not an IEEE float32 rate",
            "flops = 2 m n k; bytes = (m k + k n + m n) x itemsize (each operand once); rates use the median time",
            "square GEMMs below a few MB fit in cache and take microseconds: launch/overhead-bound, not DRAM-bound",
        ],
    )
    if not bk.is_gpu:
        rec["notes"].append("CPU: NumPy matmul -> BLAS on every core (float16 would bypass BLAS: not used)")
    for dt in dtypes:
        for size in sizes:
            _common.say(progress, f"matmul: square {size} {dt.name}")
            a, b = random(bk, (size, size), dt, 1), random(bk, (size, size), dt, 2)
            out = bk.xp.empty((size, size), dtype=dt)
            t = time_matmul(bk, a, b, out, samples)
            rec["results"].append(
                point(
                    size,
                    size,
                    size,
                    dt.itemsize,
                    t,
                    shape="square",
                    dtype=dt.name,
                    size=size,
                    **({"tf32": tf32["enabled"]} if dt == np.float32 else {}),
                )
            )
            del a, b, out
    w = random(bk, (k, n), skinny_dtype, 3)
    for m in batches:
        _common.say(progress, f"matmul: skinny {m} x {k} @ {k} x {n} {skinny_dtype.name}")
        x = random(bk, (m, k), skinny_dtype, 4)
        out = bk.xp.empty((m, n), dtype=skinny_dtype)
        t = time_matmul(bk, x, w, out, samples)
        rec["results"].append(
            point(
                m,
                n,
                k,
                skinny_dtype.itemsize,
                t,
                shape="skinny",
                dtype=skinny_dtype.name,
                batch=m,
                weight_bytes=k * n * skinny_dtype.itemsize,
                **({"tf32": tf32["enabled"]} if skinny_dtype == np.float32 else {}),
            )
        )
    return rec
