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


BAD_INPUT = (ValueError, TypeError, KeyError)  # the caller's mistake: raised, never turned into a record


def get(name: str):
    """The experiment function called `name` (see EXPERIMENTS), isolated: bad arguments raise
    (ValueError naming what was wrong), but a failure of the machine - out of memory, a CUDA or
    cuBLAS error, a broken PyTorch - returns a record with status "failed" and the error as its
    reason, so a chapter cell or a script loses that one experiment, not its page."""
    if name not in EXPERIMENTS:
        raise KeyError(f"unknown experiment {name!r}; accepted: {', '.join(EXPERIMENTS)}")
    module = importlib.import_module(f"hwlib.bench.{EXPERIMENTS[name][0]}")
    return _isolated(name, getattr(module, name))


def _isolated(name, fn):
    import functools

    @functools.wraps(fn)
    def run_isolated(xp=None, *args, **kwargs):
        from hwlib.bench import _common
        try:
            return fn(xp, *args, **kwargs)
        except BAD_INPUT:
            raise
        except Exception as exc:  # noqa: BLE001 - MemoryError, CUDA/cuBLAS/NVRTC errors, torch errors
            bk = _common.resolve(xp)
            _common.free_device_memory(bk)
            return _common.failed(name, bk, EXPERIMENTS[name][1], exc)
    return run_isolated


def run(name: str, xp=None, quick: bool = False, progress=None, **sizes) -> dict:
    """Run one experiment and return its record."""
    return get(name)(xp, quick=quick, progress=progress, **sizes)


def run_all(xp=None, quick: bool = False, progress=None, names=None, on_record=None) -> dict:
    """Run every experiment (or `names`) and return a run in the hwlib.bench.recorded format.

    Each experiment is isolated: one that raises (out of memory, a CUDA error, a broken PyTorch)
    becomes a record with status "failed" and the error as its reason, and the others still run.
    Progress messages carry the step ("[3/9] roofline: ..."). on_record(name, record, run_so_far), if
    given, is called after each experiment (the CLI saves the partial run there).
    """
    from hwlib.bench import _common, recorded
    wanted = list(names or EXPERIMENTS)
    unknown = [n for n in wanted if n not in EXPERIMENTS]
    if unknown:
        raise KeyError(f"unknown experiment(s) {unknown}; accepted: {', '.join(EXPERIMENTS)}")
    records = {}
    for i, name in enumerate(wanted, 1):
        step = f"[{i}/{len(wanted)}] "
        _common.say(progress, f"{step}{name}: {EXPERIMENTS[name][1]}")
        sub = (lambda msg, step=step: _common.say(progress, step + msg)) if progress else None
        try:
            records[name] = run(name, xp, quick=quick, progress=sub)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # noqa: BLE001 - MemoryError, CUDA errors, anything: one entry lost
            bk = _common.resolve(xp)
            _common.free_device_memory(bk)
            records[name] = _common.failed(name, bk, EXPERIMENTS[name][1], exc)
            _common.say(progress, f"{step}{name} failed: {records[name]['reason']}")
        if on_record is not None:
            on_record(name, records[name], recorded.make_run(dict(records), quick=quick))
    return recorded.make_run(records, quick=quick)


def __getattr__(attr):  # bench.bandwidth(...), bench.recorded, ... without importing every module
    if attr in EXPERIMENTS:
        return get(attr)
    if attr in ("recorded", "timing", "cpu"):
        return importlib.import_module(f"hwlib.bench.{attr}")
    raise AttributeError(f"module 'hwlib.bench' has no attribute {attr!r}")
