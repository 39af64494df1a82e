"""GPU experiments E1-E11 that measure the reader's own hardware, on CuPy (GPU) or NumPy (CPU).

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

from hwlib.bench import registry
from hwlib.bench.registry import EXPERIMENTS  # name -> (module, one-line description)

BAD_INPUT = (ValueError, TypeError, KeyError)  # the caller's mistake: raised, never turned into a record


def get(name: str):
    """The experiment function called `name` (see EXPERIMENTS), isolated: bad arguments raise
    (ValueError naming what was wrong), but a failure of the machine - out of memory, a CUDA or
    cuBLAS error, a broken PyTorch - returns a record with status "failed" and the error as its
    reason, so a chapter cell or a script loses that one experiment, not its page."""
    registry.check(name)
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
    registry.check_all(wanted)
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
