"""E5 - warp divergence: the same arithmetic, with and without lanes of a warp disagreeing.

SIMT (chapter 1, §1.2): the 32 threads of a warp share one instruction stream, so when a data-dependent
branch sends some lanes one way and the rest the other, the warp runs both paths in turn with the
inactive lanes masked off. Kernel: hwlib/kernels/divergence.cu. Every thread does `iters` FMAs in
every pattern; only who-goes-where changes:
  all_zero          every lane takes path 0                    -> reference time
  warp_uniform      (i // 32) % 2: whole warps agree            -> ~1x (no divergence)
  lane_alternating  i % 2: every warp splits in half            -> ~2x
  random            coin flip per element                      -> ~2x
  ways_W            lane l takes path l % W (W = 1...32)          -> up to ~W x
Expected ratios follow from the execution model; the compiler may predicate short paths, so they are
approximate. There is no CPU analogue worth timing: NumPy has no warps, so on a CPU the record says so.
"""

from __future__ import annotations

import numpy as np

from hwlib.bench import _common, timing

TITLE = "E5 warp divergence"


def divergence(
    xp=None,
    n: int | None = None,
    iters: int | None = None,
    ways=(1, 2, 4, 8, 16, 32),
    quick: bool = False,
    samples: int = 5,
    progress=None,
) -> dict:
    """Run E5 on a GPU; on a CPU return a 'skipped' record that gives the reason."""
    bk = _common.resolve(xp)
    if not bk.is_gpu:
        return _common.skipped(
            "divergence",
            bk,
            TITLE,
            "needs a GPU: warp divergence is a property of SIMT "
            "hardware (32-lane warps); NumPy on a CPU has no warps to diverge. "
            "See the recorded GPU runs instead.",
        )
    cp = bk.xp
    # 2 x n x iters FLOPs per launch: quick 4.3 GFLOP, ~65 us on an H200's 67 TFLOP/s FP32 (0.5 ms on a
    # T4) - far above the ~10 us a launch costs the host, so the time is the warps' work, not Python.
    n = _common.check_sizes("n", [n or (1 << 22 if quick else 1 << 24)])[0]
    iters = _common.check_sizes("iters", [iters or 512])[0]
    ways = _common.check_sizes("ways", ways)
    src = _common.kernel_source("divergence.cu")
    branchy = cp.RawKernel(src, "branchy")
    branchy32 = cp.RawKernel(src, "branchy32")
    block = 256
    grid = (n + block - 1) // block
    idx = cp.arange(n, dtype=cp.int64)
    patterns = {
        "all_zero": cp.zeros(n, dtype=cp.int32),
        "warp_uniform": ((idx // 32) % 2).astype(cp.int32),
        "lane_alternating": (idx % 2).astype(cp.int32),
        "random": (cp.random.default_rng(0).random(n) < 0.5).astype(cp.int32),
    }
    x = cp.full(n, 0.5, dtype=cp.float32)
    y = cp.empty_like(x)
    rec = _common.new_record(
        "divergence",
        bk,
        TITLE,
        {"n": n, "iters": iters, "block": block, "ways": ways, "samples": samples},
        notes=[
            "same FMAs per thread in every pattern; slowdown = time / time(all_zero)",
            "expected: warp_uniform ~1x, lane_alternating and random ~2x, ways_W up to ~W x (compiler may predicate)",
        ],
    )
    base = None
    for name, sel in patterns.items():
        _common.say(progress, f"divergence: {name}")
        args = (x, sel, y, np.int64(n), np.int32(iters))  # exact C types: long long, int
        t = timing.measure(lambda: branchy((grid,), (block,), args), bk, samples=samples)
        base = base or t.median_s
        rec["results"].append(_row(name, t, base, n, iters))
    base = None
    for w in ways:
        _common.say(progress, f"divergence: {w}-way switch")
        args = (x, y, np.int64(n), np.int32(iters), np.int32(w))
        t = timing.measure(lambda: branchy32((grid,), (block,), args), bk, samples=samples)
        base = base or t.median_s
        rec["results"].append(_row(f"ways_{w}", t, base, n, iters, ways=w))
    return rec


def _row(pattern, t, base, n, iters, **extra) -> dict:
    flops = 2.0 * iters * n
    return {
        "pattern": pattern,
        "seconds": t.median_s,
        "seconds_best": t.best_s,
        "first_call_s": t.first_call_s,
        "slowdown": t.median_s / base if base else None,
        "useful_flops_per_s": _common.rate(flops, t.median_s),
        "launch_bound": t.launch_bound,
        **(t.clocks or {}),
        **extra,
    }
