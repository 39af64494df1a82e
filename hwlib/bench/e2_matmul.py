"""E2 - matmul throughput vs size: square N x N, and skinny (fixed weight, growing batch).

FLOPs of C = A B with A m x k and B k x n: 2 m n k (one multiply + one add per term; chapter 4).
Minimum bytes moved: (m k + k n + m n) x itemsize (each operand read once, C written once), so the
arithmetic intensity is 2 m n k / ((m k + k n + m n) b) FLOP/byte (hwlib.roofline.matmul_intensity).
Square: I = N / (3 b / 2) - grows with N. Skinny (m = batch, W fixed k x n): I ~ batch for
fp16 - the decode story: memory-bound until batch reaches the ridge point (chapter 6).

GPU: cuBLAS through cupy.matmul (fp16 uses tensor cores with fp32 accumulation). CPU: NumPy's BLAS
(OpenBLAS here), which uses every core. Operands are random normal (predictable data runs faster).

How the GPU is timed: CUDA events around plain launches; a launch must outlast the host's ~10-30 us
of Python and driver for that to time the device. A GEMM of N >= 4096 does (>= 137 GFLOP: >= 137 us
even at 1 PFLOP/s), and so does the skinny product against the GPU's 512 MiB weight (16384 x 16384
fp16: >= 60 us even at 8 TB/s). A smaller square is timed as one strided-batched GEMM of `count`
independent N x N products ((count, N, N) operands, one cuBLAS call), count = (4096 / N)^3 capped so
the operands stay within 1 GiB: the point is then the
rate of N x N GEMMs running side by side, per GEMM, and says so (timed_as, count). CUDA graphs are
no way out: CuPy refuses any cuBLAS call during stream capture (NotImplementedError, CuPy 12.3-14.2).
"""

from __future__ import annotations

import numpy as np

from hwlib.bench import _common, timing


def random(bk, shape, dtype, seed: int = 0):
    """Standard-normal array of `dtype` on the backend's device (generated as float32)."""
    rng = bk.xp.random.default_rng(seed)  # NumPy and CuPy Generators both take dtype=float32
    return rng.standard_normal(shape, dtype=np.float32).astype(dtype)


BATCH_EQUIVALENT = 4096  # a batched point does about the FLOPs of one GEMM of this size
BATCH_BYTES = 1 << 30  # at most this much in the three operands of a batched point


def batch_count(bk, size: int, itemsize: int) -> int:
    """GEMMs per call for an N x N square: 1 on a CPU and for N >= BATCH_EQUIVALENT, else
    (BATCH_EQUIVALENT / N)^3, at most what fits 3 x count x N^2 x itemsize <= BATCH_BYTES."""
    if not bk.is_gpu or size >= BATCH_EQUIVALENT:
        return 1
    want = -(-(BATCH_EQUIVALENT**3) // size**3)
    return int(max(1, min(want, BATCH_BYTES // (3 * size * size * itemsize))))


def time_matmul(bk, a, b, out, samples: int = 5, max_total_s: float = 5.0):
    """Timing of out = a @ b (preallocated out, nothing allocated in the timed region; 3-D operands
    are one strided-batched GEMM). Plain launches: see the module doc for why they time the device."""
    xp = bk.xp
    return timing.measure(lambda: xp.matmul(a, b, out=out), bk, samples=samples, max_total_s=max_total_s)


def _supported(bk, rec, dtypes) -> list:
    """`dtypes` less a bfloat16 this backend cannot hold (a probe, _common.bf16_support), each one left
    out named in rec["skipped"] with the reason - the machine's limit, not the caller's mistake."""
    keep = []
    for dt in dtypes:
        if dt.name == "bfloat16":
            _, why = _common.bf16_support(bk)
            if why:
                rec.setdefault("skipped", []).append({"dtype": dt.name, "reason": why})
                continue
        keep.append(dt)
    return keep


def point(m, n, k, itemsize, t, count: int = 1, **extra) -> dict:
    """One measured point, per GEMM: a call of `count` batched GEMMs took t.median_s."""
    flops = 2.0 * m * n * k
    nbytes = float((m * k + k * n + m * n) * itemsize)
    seconds, best = t.median_s / count, t.best_s / count
    return {
        "m": int(m),
        "n": int(n),
        "k": int(k),
        "flops": flops,
        "bytes": nbytes,
        "intensity": flops / nbytes,
        "seconds": seconds,
        "seconds_best": best,
        "first_call_s": t.first_call_s,
        "flops_per_s": _common.rate(flops, seconds),
        "bytes_per_s": _common.rate(nbytes, seconds),
        "launch_bound": t.launch_bound,
        **(t.clocks or {}),
        "count": int(count),
        "timed_as": (f"one strided-batched call of {count} GEMMs" if count > 1 else "one GEMM per call")
        + (", CUDA events" if t.clock.startswith("cuda") else ", perf_counter"),
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
    (GPU 16384 x 16384 fp16 = 512 MiB: its product outlasts the launch even at batch 1; CPU 4096 x 4096
    fp32 = 64 MiB: larger than the caches).
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
    k, n = _common.check_sizes("weight_shape", weight_shape or ((16384, 16384) if bk.is_gpu else (4096, 4096)))
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
            "GPU: a square below 4096 is timed as one strided-batched call of `count` N x N GEMMs (count = "
            "(4096/N)^3, operands <= 1 GiB) so the device, not the launch, is timed; seconds and rates are per GEMM",
        ],
    )
    if not bk.is_gpu:
        rec["notes"].append("CPU: NumPy matmul -> BLAS on every core (float16 would bypass BLAS: not used)")
    dtypes = _supported(bk, rec, dtypes)
    for dt in dtypes:
        for size in sizes:
            _common.say(progress, f"matmul: square {size} {dt.name}")
            count = batch_count(bk, size, dt.itemsize)
            shape = (count, size, size) if count > 1 else (size, size)
            a, b = random(bk, shape, dt, 1), random(bk, shape, dt, 2)
            out = bk.xp.empty(shape, dtype=dt)
            t = time_matmul(bk, a, b, out, samples)
            rec["results"].append(
                point(
                    size,
                    size,
                    size,
                    dt.itemsize,
                    t,
                    count,
                    shape="square",
                    dtype=dt.name,
                    size=size,
                    **({"tf32": tf32["enabled"]} if dt == np.float32 else {}),
                )
            )
            del a, b, out
    if skinny_dtype not in dtypes:  # bfloat16 this CuPy cannot hold: said in rec["skipped"]
        return rec
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
