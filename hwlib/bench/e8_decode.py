"""E8 - memory-bound decoding: one "token step" over a stack of weight matrices, batch 1 ... 256.

A decode step of a dense model multiplies every weight matrix by the activations of the B sequences
in the batch, so each step reads all W bytes of weights once whatever B is (chapter 8, §8.2; chapter 9's
exercise 4). Bandwidth ceiling (hwlib.flops.decode_tokens_per_s_bound):
    tokens/s <= B x bandwidth / W        [tokens/s over the whole batch]
Intensity ~ 2 B d^2 FLOP / (d^2 x itemsize) = 2 B / itemsize FLOP/byte, so batching is nearly free
until B approaches the ridge point; then the compute roof takes over.
Here: L layers of d x d weights, X (d x B); a step is L chained matmuls Y_l = W_l Y_(l-1), Y_0 = X.

How the GPU is timed: plain launches, with layers so large that one GEMM's device time dwarfs the
host's cost of launching it (GPU default d = 16384, 2 layers of 512 MiB in fp16: >= 60 us each even
at 8 TB/s, against ~10-30 us of Python and driver per cupy.matmul), so the launches queue up and the
CUDA events time the device. CUDA graphs cannot help here: CuPy refuses any cuBLAS call during stream
capture (NotImplementedError in every release from 12.3 to 14.2), so a graph of cupy.matmul never
exists; a point that still comes out launch-bound says so (launch_bound=True).
"""

from __future__ import annotations

import numpy as np

from hwlib import flops as _flops
from hwlib.bench import _common, timing

TITLE = "E8 decode: tokens/s vs batch against the bandwidth bound"


def _bandwidth(bk, bandwidth, progress, quick=False):
    """bytes/s for the bound (None when nothing is known), and where it came from."""
    if isinstance(bandwidth, dict):  # an E1 record
        rows = [r["bytes_per_s"] for r in bandwidth.get("results", []) if r.get("kernel") in ("copy", "triad")]
        if not rows:
            raise ValueError(
                "bandwidth: the E1 record has no copy/triad results (status "
                f"{bandwidth.get('status')!r}); pass bytes/s, an E1 record with results, or None"
            )
        return max(rows), f"E1 record ({bandwidth.get('source', 'live')}, best of copy/triad)"
    if bandwidth:
        return float(bandwidth), "given"
    info = bk.device_info()
    if bk.is_gpu:
        if info.get("spec_bandwidth"):
            return info["spec_bandwidth"], f"spec sheet ({info['spec']})"
        if info.get("theoretical_bandwidth"):
            return info["theoretical_bandwidth"], "theoretical 2 x memory clock x bus width / 8"
        return None, (
            "unknown: not on the spec sheet and the driver reports no memory clock or bus width "
            "(pass bandwidth= in bytes/s)"
        )
    from hwlib.bench.e1_bandwidth import bandwidth as e1

    _common.say(progress, f"decode: measuring CPU bandwidth (E1 copy/triad{', quick' if quick else ''}) for the bound")
    return _bandwidth(bk, e1(bk, sweep=False, samples=3, quick=quick), progress)


def decode(
    xp=None,
    d: int | None = None,
    layers: int | None = None,
    batches=None,
    dtype=None,
    bandwidth=None,
    quick: bool = False,
    samples: int = 5,
    progress=None,
) -> dict:
    """Run E8. bandwidth: bytes/s, an E1 record, or None (GPU: spec sheet or device theory; CPU:
    measured now with E1). Defaults: GPU fp16 d 16384 x 2 layers (1 GiB; each layer's GEMM outlasts its
    launch, see the module doc); CPU fp32 d 2048 x 8 (128 MiB)."""
    bk = _common.resolve(xp)
    gpu = bk.is_gpu
    dtype = np.dtype(dtype or (np.float16 if gpu else np.float32))
    d = _common.check_sizes("d", [d or (16384 if gpu else 2048)])[0]
    layers = _common.check_sizes("layers", [layers or (2 if gpu else 8)])[0]
    batches = _common.sizes_or_default(
        "batches",
        batches,
        bk,
        quick,
        _common.powers_of_two(1, 256),
        _common.powers_of_two(1, 256),
        gpu_quick=[1, 4, 16, 64, 256],
        cpu_quick=[1, 4, 16, 64],
    )
    weight_bytes = layers * d * d * dtype.itemsize
    bw, bw_source = _bandwidth(bk, bandwidth, progress, quick)
    rec = _common.new_record(
        "decode",
        bk,
        TITLE,
        {
            "d": d,
            "layers": layers,
            "dtype": dtype.name,
            "weight_bytes": weight_bytes,
            "batches": batches,
            "bandwidth": bw,
            "bandwidth_source": bw_source,
            "samples": samples,
        },
        notes=[
            "bound_tokens_per_s = batch x bandwidth / weight_bytes (hwlib.flops.decode_tokens_per_s_bound)",
            "GPU timing: plain cupy.matmul launches timed with CUDA events; each layer's GEMM reads d^2 x itemsize "
            "bytes, sized to outlast its launch (CuPy refuses cuBLAS inside CUDA-graph capture, so no graph is used); "
            "launch_bound=True marks a point whose time is still the host's launch cost",
            "effective bytes_per_s = weight_bytes / step time; flops per step = 2 x layers x d^2 x batch",
        ],
    )
    spec = bk.device_info().get("spec")
    peak = None
    if gpu and spec:
        from hwlib import specs

        acc = specs.get(spec)
        prec = {"float16": "fp16", "float32": "fp32"}.get(dtype.name, "bf16")
        peak = acc.peak_flops(prec) if prec in acc.precisions() else None
    rng = bk.xp.random.default_rng(0)
    w = (rng.standard_normal((layers, d, d), dtype=np.float32) / float(np.sqrt(d))).astype(dtype)  # stays float32
    for b in batches:
        x0 = rng.standard_normal((d, b), dtype=np.float32).astype(dtype)  # every step starts here: no blow-up
        ys = [bk.xp.empty((d, b), dtype=dtype) for _ in range(2)]

        def step():
            src = x0
            for layer in range(layers):
                bk.xp.matmul(w[layer], src, out=ys[layer % 2])
                src = ys[layer % 2]

        _common.say(progress, f"decode ({batches.index(b) + 1}/{len(batches)}): batch {b}")
        t = timing.measure(step, bk, samples=samples)
        step_flops = 2.0 * layers * d * d * b
        row = {
            "batch": b,
            "seconds": t.median_s,
            "seconds_best": t.best_s,
            "first_call_s": t.first_call_s,
            "tokens_per_s": _common.rate(b, t.median_s),
            "bytes_per_s": _common.rate(weight_bytes, t.median_s),
            "flops_per_s": _common.rate(step_flops, t.median_s),
            "intensity": step_flops / weight_bytes,
            "bound_tokens_per_s": _flops.decode_tokens_per_s_bound(weight_bytes, bw, b) if bw else None,
            "launch_bound": t.launch_bound,
            **(t.clocks or {}),
            "timed_as": "plain launches, CUDA events" if gpu else "perf_counter",
        }
        if peak:
            row["compute_bound_tokens_per_s"] = peak / (2.0 * layers * d * d)
        rec["results"].append(row)
    return rec
