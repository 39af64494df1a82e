"""GPU experiments E1-E9 that measure the reader's own hardware, on CuPy (GPU) or NumPy (CPU).

Each experiment is one function taking an array module (``numpy``/``cupy``), a ``hwlib.backend``
Backend, or nothing (the automatic choice), plus sizes and ``quick=True`` for a short run. It returns
a plain JSON-ready record (see ``hwlib.bench._common``) with the device, backend, parameters and
measurements in SI units. Methodology: ``hwlib.bench.timing``.

    from hwlib import bench
    rec = bench.bandwidth(quick=True)          # E1, on whatever this machine has
    run = bench.run_all(quick=True)            # every experiment -> a run (hwlib.bench.recorded)
"""
from __future__ import annotations

import importlib

# name -> (module, function, one-line description); modules load on first use.
EXPERIMENTS = {
    "bandwidth": ("e1_bandwidth", "E1 STREAM copy/scale/add/triad + working-set sweep (cache cliff)"),
    "matmul": ("e2_matmul", "E2 matmul FLOP/s vs size: square, and skinny (fixed weight, growing batch)"),
    "roofline": ("e3_roofline", "E3 empirical roofline: k FMAs per element loaded"),
    "fusion": ("e4_fusion", "E4 elementwise fusion: separate ops vs one fused pass, bytes moved"),
    "divergence": ("e5_divergence", "E5 warp divergence (GPU only)"),
    "occupancy": ("e6_occupancy", "E6 Little's law: bandwidth vs bytes in flight"),
    "formats": ("e7_formats", "E7 matmul per number format (fp32/tf32/fp16/bf16/fp8)"),
    "decode": ("e8_decode", "E8 LLM-style decode: tokens/s vs batch against the bandwidth bound"),
    "transfer": ("e9_transfer", "E9 host<->device copies (GPU only)"),
}


def get(name: str):
    """The experiment function called `name` (see EXPERIMENTS)."""
    if name not in EXPERIMENTS:
        raise KeyError(f"unknown experiment {name!r}; accepted: {', '.join(EXPERIMENTS)}")
    module = importlib.import_module(f"hwlib.bench.{EXPERIMENTS[name][0]}")
    return getattr(module, name)


def run(name: str, xp=None, quick: bool = False, progress=None, **sizes) -> dict:
    """Run one experiment and return its record."""
    return get(name)(xp, quick=quick, progress=progress, **sizes)


def run_all(xp=None, quick: bool = False, progress=None, names=None) -> dict:
    """Run every experiment (or `names`) and return a run in the hwlib.bench.recorded format."""
    from hwlib.bench import recorded
    records = {}
    for name in names or EXPERIMENTS:
        records[name] = run(name, xp, quick=quick, progress=progress)
    return recorded.make_run(records, quick=quick)


def __getattr__(attr):  # bench.bandwidth(...), bench.recorded, ... without importing every module
    if attr in EXPERIMENTS:
        return get(attr)
    if attr in ("recorded", "timing", "cpu"):
        return importlib.import_module(f"hwlib.bench.{attr}")
    raise AttributeError(f"module 'hwlib.bench' has no attribute {attr!r}")
