"""Plain records shared by the experiments: what ran, where, with which parameters, and what came out.

A record is a JSON-ready dict:
  experiment, title, status ("ok" | "skipped" | "failed"), reason (when not ok), source ("live"; recorded.load
  sets "recorded"), date (UTC, ISO 8601), backend ("cupy" | "numpy"), device (backend.device_info()),
  parameters, results (list of dicts, one per measured point, SI units), notes (how bytes and FLOPs
  were counted, what a CPU fallback means).
"skipped": the experiment does not apply here (no GPU, no such format); "failed": it raised (out of
memory, a CUDA error) and `reason` holds the error's first line - one entry lost, never the run.
A measured point may carry launch_bound=True: its time is the host's launch cost, not the device's work.
"""

from __future__ import annotations

import datetime as _dt
import math
import numbers
import sys

import numpy as np

from hwlib.bench import backend as _backend


def now() -> str:
    return _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat()


def new_record(experiment: str, bk, title: str, parameters: dict, notes=()) -> dict:
    return {
        "experiment": experiment,
        "title": title,
        "status": "ok",
        "source": "live",
        "date": now(),
        "backend": bk.name,
        "device": bk.device_info(),
        "parameters": dict(parameters),
        "results": [],
        "notes": list(notes),
    }


def skipped(experiment: str, bk, title: str, reason: str, parameters=None) -> dict:
    rec = new_record(experiment, bk, title, parameters or {})
    rec.update(status="skipped", reason=reason)
    return rec


def failed(experiment: str, bk, title: str, exc: BaseException, parameters=None) -> dict:
    """The record of an experiment that raised: status "failed", reason = the error in one line."""
    rec = new_record(experiment, bk, title, parameters or {})
    rec.update(status="failed", reason=one_line(exc))
    if is_out_of_memory(exc):
        rec["reason"] = f"out of memory: {rec['reason']} - try smaller sizes or --quick"
    return rec


OOM_WORDS = ("out of memory", "CUBLAS_STATUS_ALLOC_FAILED", "cudaErrorMemoryAllocation", "CUDA_ERROR_OUT_OF_MEMORY")


def is_out_of_memory(exc: BaseException) -> bool:
    """Whether `exc` says the device ran out of memory, in any of the ways the stack says it: CuPy's
    OutOfMemoryError (a MemoryError), cuBLAS's CUBLAS_STATUS_ALLOC_FAILED (CUBLASError), the runtime's
    cudaErrorMemoryAllocation (CUDARuntimeError) or PyTorch's torch.OutOfMemoryError ('CUDA out of memory')."""
    if isinstance(exc, MemoryError) or "OutOfMemory" in type(exc).__name__:
        return True
    text = str(exc).lower()
    return any(w.lower() in text for w in OOM_WORDS)


def bf16_support(bk):
    """(numpy dtype bfloat16, None) when this backend can hold and multiply bfloat16 arrays, else
    (None, why not). A probe, not a version test: CuPy 14 turns bfloat16 on only when NumPy >= 2.1.2
    is there as well (with NumPy 2.0.2, as on Colab's pinned runtimes, cupy.zeros(..., bfloat16) raises
    ValueError: Unsupported dtype bfloat16), CuPy 13 has none, and NumPy holds it through ml_dtypes."""
    try:
        import ml_dtypes
    except ImportError as exc:
        return None, f"ml_dtypes is not installed ({one_line(exc)}): pip install ml_dtypes"
    dt = np.dtype(ml_dtypes.bfloat16)
    try:
        a = bk.xp.ones((2, 2), dtype=dt)
        bk.xp.matmul(a, a)
    except Exception as exc:  # noqa: BLE001 - ValueError/TypeError from CuPy, a cuBLAS error, ...
        name = getattr(bk.xp, "__name__", "?")
        ver = getattr(bk.xp, "__version__", "?")
        shown = {"cupy": "CuPy", "numpy": "NumPy"}.get(name, name)
        why = f"{shown} {ver} with NumPy {np.__version__} cannot hold bfloat16 arrays ({one_line(exc)})"
        if name == "cupy":
            why += (
                "; CuPy >= 14 supports bfloat16 only with NumPy >= 2.1.2 (and ml_dtypes): "
                'pip install "numpy>=2.1.2" or "hwlib[gpu-cuda12]"'
            )
        return None, why
    return dt, None


def one_line(exc: BaseException) -> str:
    """'TypeName: first line of the message', at most 300 characters."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    text = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return text if len(text) <= 300 else text[:297] + "..."


def free_device_memory(bk) -> None:
    """After a failure on a GPU, hand CuPy's cached blocks back so the next experiment has room."""
    if bk.is_gpu:
        try:
            bk.xp.get_default_memory_pool().free_all_blocks()
        except Exception:  # an old CuPy or a broken context: nothing more to do
            pass


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


def sizes_or_default(name: str, given, bk, quick: bool, gpu, cpu, gpu_quick=None, cpu_quick=None) -> list:
    """The caller's sizes `given`, or else the device's defaults (as `sizes_for`), checked as `check_sizes`."""
    return check_sizes(name, given or sizes_for(bk, quick, gpu, cpu, gpu_quick, cpu_quick))


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
    """Blocks for `waves` waves if every thread slot were filled: SMs x max threads per SM / block.
    An upper bound only - registers decide how many blocks really fit (use resident_blocks)."""
    info = bk.device_info()
    return max(1, waves * info["sm_count"] * info["max_threads_per_sm"] // block)


def resident_blocks(bk, kern, block: int) -> tuple:
    """(blocks of `block` threads that fit on one SM at once, how that was found).

    The driver's occupancy calculator (cuOccupancyMaxActiveBlocksPerMultiprocessor) on the compiled
    kernel when CuPy exposes it; otherwise the CUDA occupancy rules from the kernel's register count:
    min(blocks/SM limit, threads/SM // block, (registers/SM // (ceil(regs x 32 / 256) x 256)) // warps per block).
    """
    info = bk.device_info()
    try:
        n = int(bk.xp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(kern.kernel.ptr, int(block), 0))
        if n > 0:
            return n, "cuOccupancyMaxActiveBlocksPerMultiprocessor"
    except Exception:
        pass
    by_threads = info["max_threads_per_sm"] // block
    limit = min(info.get("max_blocks_per_sm", 16), by_threads)
    try:
        regs = int(kern.num_regs)
        per_warp = -(-regs * 32 // 256) * 256
        warps = info.get("registers_per_sm", 65536) // max(1, per_warp)
        return max(1, min(limit, warps // max(1, block // 32))), f"register count ({regs} per thread)"
    except Exception:
        return max(1, limit), "thread limit only (register count unavailable)"


def wave_grid(bk, kern, block: int = 256, waves: int = 1) -> dict:
    """Launch shape of `waves` whole waves of resident blocks: {"grid", "block", "blocks_per_sm", ...}."""
    per_sm, how = resident_blocks(bk, kern, block)
    sms = bk.device_info()["sm_count"]
    return {
        "grid": max(1, waves * sms * per_sm),
        "block": int(block),
        "blocks_per_sm": per_sm,
        "occupancy": per_sm * block / bk.device_info()["max_threads_per_sm"],
        "occupancy_from": how,
    }


def tf32_state(bk) -> dict:
    """Whether float32 matmuls may run on TF32 tensor cores: CuPy's CUPY_TF32 variable and the
    current compute type for float32 (7 = TF32 in cupy/_core/_routines_linalg.pyx)."""
    import os

    env = os.environ.get("CUPY_TF32")
    state = {"CUPY_TF32": env, "enabled": env not in (None, "", "0")}
    if bk.is_gpu:
        try:
            ct = int(bk.xp._core.get_compute_type(np.float32))
            state.update(compute_type=ct, enabled=state["enabled"] or ct == 7)
        except Exception:
            pass
    else:
        state["enabled"] = False
    return state


QUICK_CAP_BYTES = 2 << 30  # quick runs on a CPU: never more than this in arrays, whatever is free


def memory_cap(bk, fraction: float = 0.4, quick: bool = False):
    """Bytes an experiment's arrays may take on the CPU: `fraction` of what is available, and at most
    QUICK_CAP_BYTES for a quick run (None: no limit known, or a GPU)."""
    if bk.is_gpu:
        return None
    from hwlib.bench.device_info import available_memory_bytes

    avail = available_memory_bytes()
    cap = int(avail * fraction) if avail else None
    return min(cap or QUICK_CAP_BYTES, QUICK_CAP_BYTES) if quick else cap


def dram_elements(
    bk, itemsize: int, base: int, factor: int = 4, arrays: int = 3, fraction: float = 0.4, quick: bool = False
):
    """(elements per array, note): max(base, factor x cache / itemsize) - each array `factor` times the
    largest cache, so the working set lives in DRAM - but on a CPU no more than `fraction` of the
    available memory for `arrays` arrays (the note then says so; None when not capped)."""
    n = max(int(base), factor * bk.cache_bytes() // itemsize)
    cap = memory_cap(bk, fraction, quick)
    if cap is not None and arrays * n * itemsize > cap:
        capped = max(1 << 16, cap // (arrays * itemsize) // 4096 * 4096)
        if capped < n:
            return capped, (
                f"arrays capped at {capped * itemsize / 2**20:.0f} MiB each by available memory "
                f"({cap / 2**30:.1f} GiB usable: {fraction:.0%} of what is free"
                f"{', at most 2 GiB for --quick' if quick else ''}) instead of "
                f"{n * itemsize / 2**20:.0f} MiB ({factor} x the {bk.cache_bytes() / 2**20:.0f} MiB cache)"
            )
    return n, None
