"""Plain records shared by the experiments: what ran, where, with which parameters, and what came out.

A record is a JSON-ready dict:
  experiment, title, status ("ok" | "skipped"), reason (when skipped), source ("live"; recorded.load
  sets "recorded"), date (UTC, ISO 8601), backend ("cupy" | "numpy"), device (backend.device_info()),
  parameters, results (list of dicts, one per measured point, SI units), notes (how bytes and FLOPs
  were counted, what a CPU fallback means).
"""
from __future__ import annotations

import datetime as _dt
import math
import numbers
import sys

from hwlib import backend as _backend


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


def new_record(experiment: str, bk, title: str, parameters: dict, notes=()) -> dict:
    return {"experiment": experiment, "title": title, "status": "ok", "source": "live", "date": now(),
            "backend": bk.name, "device": bk.device_info(), "parameters": dict(parameters),
            "results": [], "notes": list(notes)}


def skipped(experiment: str, bk, title: str, reason: str, parameters=None) -> dict:
    rec = new_record(experiment, bk, title, parameters or {})
    rec.update(status="skipped", reason=reason)
    return rec


def resolve(xp_or_backend=None):
    """numpy / cupy module, a Backend, or None (the process-wide choice) -> Backend."""
    return _backend.get() if xp_or_backend is None else _backend.from_xp(xp_or_backend)


def say(progress, message: str) -> None:
    """Report progress: progress=True prints to stderr, a callable receives the message."""
    if progress is True:
        print(f"[hwlib bench] {message}", file=sys.stderr, flush=True)
    elif callable(progress):
        progress(message)


def powers_of_two(lo: int, hi: int) -> list:
    """lo, 2 lo, 4 lo, ... <= hi (integers)."""
    if lo < 1 or hi < lo:
        raise ValueError(f"need 1 <= lo <= hi; got lo={lo}, hi={hi}")
    out, v = [], int(lo)
    while v <= hi:
        out.append(v)
        v *= 2
    return out


def rate(amount: float, seconds: float) -> float:
    """amount per second; inf-safe for the tiny times a broken timer could report."""
    return float(amount) / seconds if seconds > 0 else math.inf


def sizes_for(bk, quick: bool, gpu, cpu, gpu_quick=None, cpu_quick=None):
    """Pick the size list for the device and mode (quick lists default to the full ones)."""
    if bk.is_gpu:
        return list(gpu_quick if quick and gpu_quick is not None else gpu)
    return list(cpu_quick if quick and cpu_quick is not None else cpu)


def check_sizes(name: str, values) -> list:
    out = []
    for v in values:
        whole = isinstance(v, numbers.Integral) or (isinstance(v, float) and v.is_integer())
        if isinstance(v, bool) or not whole or int(v) < 1:
            raise ValueError(f"{name} must be whole numbers >= 1; got {v!r}")
        out.append(int(v))
    if not out:
        raise ValueError(f"{name} must not be empty")
    return out


def kernel_source(filename: str) -> str:
    """CUDA C source shipped in hwlib/kernels/ (compiled at run time by CuPy's NVRTC)."""
    from importlib import resources
    return resources.files("hwlib").joinpath("kernels", filename).read_text()


def gpu_grid(bk, block: int = 256, waves: int = 1) -> int:
    """Blocks for `waves` full waves of resident threads: SMs x max threads per SM / block."""
    info = bk.device_info()
    return max(1, waves * info["sm_count"] * info["max_threads_per_sm"] // block)
