"""E10 - tile and wave quantisation: matmul FLOP/s in fine steps of N around 4096, and a padded vocabulary.

A GPU GEMM runs its M x N output as tiles (one thread block each) in waves over the SMs (chapter 11,
{ref}`ch11-tiles`; hwlib.tiling): N = 4096 with 128 x 128 tiles is 32 x 32 = 1,024 tiles; N = 4097
needs 33 x 33 = 1,089, most of the last row and column empty, and on 132 SMs nine waves instead of
eight. So the rate does not grow smoothly with N: it drops just past a multiple of the tile and
recovers as the new row of tiles fills, and a size that is not a multiple of 8 (16 bytes of fp16)
also loses the tensor cores' aligned loads. The model column is hwlib.tiling.gemm_efficiency for
128 x 128 tiles, one per SM - cuBLAS picks its own tile per shape, so it is a guide to where steps
fall, not a prediction of their height.

Second part, "vocab": the logits GEMM (tokens x d) @ (d x V) with GPT-2's V = 50,257 and the padded
50,304 = 786 x 64 (nanoGPT): 0.09 % more FLOPs, usually less time.

GPU: cuBLAS fp16 through cupy.matmul, every point >= 113 GFLOP (>= 100 us even at 1 PFLOP/s), so the
device is timed, not the launch. CPU (NumPy -> BLAS, float32): BLAS blocks into register and cache
tiles too, so odd sizes can cost a little, but a CPU has no SMs to fill: the wave steps are a GPU
property and the CPU record has no model column.
"""

from __future__ import annotations

import numpy as np

from hwlib import tiling
from hwlib.bench import _common
from hwlib.bench.e2_matmul import random, time_matmul

TITLE = "E10 tile and wave quantisation: matmul rate vs N around 4096"
TILE = 128
GPT2_VOCAB, PADDED_VOCAB = 50257, tiling.pad_to(50257, 64)


def gpu_sizes(quick: bool = False) -> list:
    """N from 3840 to 4352 in steps of 32 (64 quick), plus 4095, 4097 and 4100 (not multiples of 8)."""
    step = 64 if quick else 32
    return sorted(set(range(3840, 4352 + 1, step)) | {4095, 4097, 4100})


def cpu_sizes(quick: bool = False) -> list:
    """N around 512 for NumPy's BLAS (a 512^3 float32 product is ~10 ms on a laptop core)."""
    return [448, 496, 511, 512, 513, 528, 576] if quick else [448, 480, 496, 504, 511, 512, 513, 520, 528, 544, 576]


def tiles(
    xp=None,
    sizes=None,
    vocab=(GPT2_VOCAB, PADDED_VOCAB),
    tokens: int | None = None,
    d_model: int | None = None,
    quick: bool = False,
    samples: int = 5,
    progress=None,
) -> dict:
    """Run E10: square N x N points (shape "square") and logits points (shape "vocab", n = V)."""
    bk = _common.resolve(xp)
    sizes = _common.check_sizes("sizes", sizes or (gpu_sizes(quick) if bk.is_gpu else cpu_sizes(quick)))
    vocab = _common.check_sizes("vocab", vocab)
    big = 1024 if quick else 2048
    tokens = _common.check_sizes("tokens", [tokens or (big if bk.is_gpu else 128)])[0]
    d_model = _common.check_sizes("d_model", [d_model or (big if bk.is_gpu else 256)])[0]
    dtype = np.dtype("float16" if bk.is_gpu else "float32")
    sms = bk.device_info().get("sm_count") if bk.is_gpu else None
    rec = _common.new_record(
        "tiles",
        bk,
        TITLE,
        {
            "sizes": sizes,
            "vocab": vocab,
            "tokens": tokens,
            "d_model": d_model,
            "dtype": dtype.name,
            "tile": TILE,
            "sm_count": sms,
            "samples": samples,
        },  # fmt: skip
        notes=[
            "flops = 2 m n k; rates use the median time; one GEMM per call (cupy.matmul / numpy.matmul)",
            "model_efficiency = hwlib.tiling.gemm_efficiency(N, N, SMs, 128, 128): tile x wave quantisation, "
            "one tile per SM - cuBLAS chooses its own tiles, so compare where the steps fall, not their height",
            "aligned: N a multiple of 8 (16 bytes of fp16), what tensor-core loads want",
        ],
    )
    if not bk.is_gpu:
        rec["notes"].append(
            "CPU: NumPy -> BLAS (float32). BLAS tiles for registers and caches, so odd N may cost a little; "
            "a CPU has no SMs to fill in waves, so the wave steps cannot show here (no model column)"
        )
    for n in sizes:
        _common.say(progress, f"tiles: square {n}")
        a, b = random(bk, (n, n), dtype, 1), random(bk, (n, n), dtype, 2)
        out = bk.xp.empty((n, n), dtype=dtype)
        t = time_matmul(bk, a, b, out, samples)
        model = tiling.gemm_efficiency(n, n, sms, TILE, TILE) if sms else None
        rec["results"].append(_point("square", n, n, n, dtype.itemsize, t, model_efficiency=model))
        del a, b, out
    x = random(bk, (tokens, d_model), dtype, 3)
    for v in vocab:
        _common.say(progress, f"tiles: logits {tokens} x {d_model} @ {d_model} x {v}")
        w = random(bk, (d_model, v), dtype, 4)
        out = bk.xp.empty((tokens, v), dtype=dtype)
        t = time_matmul(bk, x, w, out, samples)
        model = tiling.gemm_efficiency(tokens, v, sms, TILE, TILE) if sms else None
        rec["results"].append(_point("vocab", tokens, v, d_model, dtype.itemsize, t, model_efficiency=model))
        del w, out
    return rec


def _point(shape, m, n, k, itemsize, t, **extra) -> dict:
    flops = 2.0 * m * n * k
    return {
        "shape": shape,
        "n": int(n),
        "m": int(m),
        "k": int(k),
        "flops": flops,
        "bytes": float((m * k + k * n + m * n) * itemsize),
        "seconds": t.median_s,
        "seconds_best": t.best_s,
        "first_call_s": t.first_call_s,
        "flops_per_s": _common.rate(flops, t.median_s),
        "aligned": n % 8 == 0,
        "launch_bound": t.launch_bound,
        **(t.clocks or {}),
        **extra,
    }
