"""Array backend: CuPy on an NVIDIA GPU when one really works, otherwise NumPy on the CPU.

One place decides, and says why. CuPy is used only if it imports, sees at least one CUDA device
and runs a tiny kernel (which also proves NVRTC, the runtime compiler, is there); any failure falls
back to NumPy with a one-line reason. ``HWLIB_BACKEND=numpy`` forces NumPy, ``=cupy`` insists on
trying CuPy (it still falls back, saying so), unset or ``auto`` picks automatically.

Theoretical DRAM bandwidth (seed chapter 12 §2; mixbench ``lcutil.h``; BabelStream):

    bandwidth [bytes/s] = 2 x memory clock [Hz] x bus width [bits] / 8

The factor 2 is "double data rate": the memory interface moves data on both clock edges, so each
pin carries two transfers per clock; bus width / 8 turns bits per transfer into bytes. CUDA reports
``MemoryClockRate`` (kHz, the *maximum* clock, not the idle one) already scaled so that this formula
gives the vendor number for GDDR and HBM alike, e.g. T4: 2 x 5.001 GHz x 256/8 B = 320 GB/s.
"""
from __future__ import annotations

import os
import platform
import sys
from dataclasses import dataclass, field

import numpy as np

ENV_VAR = "HWLIB_BACKEND"
_CHOICES = ("auto", "numpy", "cupy")
_cache: dict = {}


def theoretical_bandwidth(memory_clock_hz: float, bus_width_bits: float) -> float:
    """2 x memory clock [Hz] x bus width [bits] / 8 -> bytes/s (double data rate; see module doc)."""
    from hwlib import _check
    clock = _check.positive("memory_clock_hz", memory_clock_hz)
    bus = _check.positive("bus_width_bits", bus_width_bits)
    return 2.0 * clock * bus / 8.0


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    text = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return text if len(text) <= 200 else text[:197] + "..."


def _probe_cupy():
    """Return (cupy module, None) when CuPy can run a kernel on a GPU, else (None, reason)."""
    try:
        import cupy
    except ModuleNotFoundError as exc:  # the usual case on a laptop or a CPU-only machine
        if exc.name == "cupy":
            return None, "CuPy is not installed (on a GPU: pip install -r requirements-gpu.txt)"
        return None, f"CuPy import failed ({_one_line(exc)})"
    except Exception as exc:  # installed, but its CUDA libraries are broken
        return None, f"CuPy import failed ({_one_line(exc)})"
    try:
        count = cupy.cuda.runtime.getDeviceCount()
        if count < 1:
            return None, "CuPy found no CUDA device"
        if int((cupy.arange(3, dtype=cupy.int32) ** 2).sum()) != 5:  # a real kernel launch
            return None, "CuPy's test kernel returned a wrong result"
    except Exception as exc:  # CUDARuntimeError without a driver, CompileException without NVRTC
        return None, f"CuPy unusable ({_one_line(exc)})"
    return cupy, None


@dataclass
class Backend:
    """The chosen array module. `xp` is `cupy` or `numpy`; `reason` says why it was chosen."""
    xp: object
    name: str
    reason: str
    is_gpu: bool
    _info: dict | None = field(default=None, repr=False)

    def synchronize(self) -> None:
        """Wait for all queued GPU work (no-op on NumPy, which is synchronous)."""
        if self.is_gpu:
            self.xp.cuda.Device().synchronize()

    def device_info(self) -> dict:
        """What this backend runs on (plain dict, SI units); cached after the first call."""
        if self._info is None:
            self._info = _gpu_info(self.xp) if self.is_gpu else _cpu_info()
        return dict(self._info)

    def cache_bytes(self) -> int:
        """The largest cache a working set must exceed to measure DRAM: L2 (GPU) or last level (CPU)."""
        info = self.device_info()
        return int(info.get("l2_bytes") if self.is_gpu else info.get("llc_bytes") or 32 << 20)

    def asnumpy(self, a):
        return self.xp.asnumpy(a) if self.is_gpu else np.asarray(a)

    def summary(self) -> str:
        info = self.device_info()
        return f"{self.name} on {info['name']} ({'GPU' if self.is_gpu else 'CPU - not a GPU'})"


def get(refresh: bool = False) -> Backend:
    """The process-wide backend, decided once (pass refresh=True to decide again)."""
    choice = os.environ.get(ENV_VAR, "auto").strip().lower() or "auto"
    if choice not in _CHOICES:
        raise ValueError(f"{ENV_VAR} must be one of {', '.join(_CHOICES)}; got {choice!r}")
    if refresh or _cache.get("choice") != choice:
        _cache["choice"], _cache["backend"] = choice, _decide(choice)
    return _cache["backend"]


def _decide(choice: str) -> Backend:
    if choice == "numpy":
        return Backend(np, "numpy", f"{ENV_VAR}=numpy forces NumPy", False)
    cupy, why_not = _probe_cupy()
    if cupy is not None:
        return Backend(cupy, "cupy", "CuPy imported, found a CUDA device and ran a test kernel", True)
    asked = f" although {ENV_VAR}=cupy" if choice == "cupy" else ""
    return Backend(np, "numpy", f"NumPy on the CPU{asked}: {why_not}", False)


def from_xp(xp) -> Backend:
    """A Backend for an array module the caller already holds (numpy or cupy)."""
    if isinstance(xp, Backend):
        return xp
    name = getattr(xp, "__name__", "")
    if name == "numpy":
        current = get()
        return current if current.name == "numpy" else Backend(np, "numpy", "NumPy passed explicitly", False)
    if name == "cupy":
        return Backend(xp, "cupy", "CuPy passed explicitly", True)
    raise ValueError(f"xp must be the numpy or cupy module (or a hwlib Backend); got {xp!r}")


def announce(file=None) -> Backend:
    """Print one line: which backend runs the experiments, on what, and why."""
    b = get()
    print(f"hwlib backend: {b.summary()} - {b.reason}", file=file or sys.stdout)
    return b


def match_spec(device_name: str, memory_bytes: float | None = None):
    """The spec-sheet entry (hwlib.specs) for a reported GPU name, or None when unknown.

    Exact names and aliases first (specs.match: "NVIDIA H200", "Tesla T4", "NVIDIA A100-SXM4-80GB").
    Otherwise the chip model must agree and every form-factor word the device reports (PCIe, SXM,
    NVL) must appear in the entry, so a PCIe or NVL card is never given an SXM part's numbers;
    among several candidates the one with the closest memory size wins.
    """
    try:
        from hwlib import specs
        hit = specs.match(device_name)
    except Exception:  # spec sheet unavailable: no match rather than a crash
        return None
    if hit is not None:
        return hit
    model = _model_token(device_name)
    dev = _norm(device_name)
    forms = [f for f in ("pcie", "sxm", "nvl") if f in dev]
    cands = [specs.get(n) for n in specs.names() if model and _model_token(n) == model
             and all(f in _norm(n) for f in forms) and (forms or "pcie" not in _norm(n))]
    if not cands:
        return None
    if memory_bytes:
        return min(cands, key=lambda a: abs(float(a.memory_bytes) - float(memory_bytes)))
    return cands[0]


def _norm(s: str) -> str:
    return "".join(ch for ch in str(s).lower() if ch.isalnum())


def _strip_vendor(name: str) -> str:
    words = [w for w in str(name).replace("-", " ").split() if w.lower() not in {"nvidia", "tesla", "geforce", "amd"}]
    return " ".join(words)


def _model_token(name: str) -> str:
    """The chip model in a name: "NVIDIA A100-SXM4-80GB" -> "a100", "Tesla T4" -> "t4"."""
    import re
    for word in re.split(r"[\s\-_/]+", _strip_vendor(name).lower()):
        if re.fullmatch(r"[a-z]{1,3}\d{1,4}[a-z]?", word) and not word.startswith(("sxm", "pcie", "hbm", "gddr")):
            return word
    return ""


def _gpu_info(cupy) -> dict:
    dev = cupy.cuda.Device()
    props = cupy.cuda.runtime.getDeviceProperties(dev.id)
    attrs = dev.attributes
    name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    mem_clock_hz = attrs["MemoryClockRate"] * 1e3  # attribute is in kHz
    bus_bits = attrs["GlobalMemoryBusWidth"]
    total = int(props["totalGlobalMem"])
    info = {
        "name": name, "kind": "gpu", "backend": "cupy", "compute_capability": dev.compute_capability,
        "sm_count": int(attrs["MultiProcessorCount"]), "sm_clock_hz": attrs["ClockRate"] * 1e3,
        "memory_clock_hz": mem_clock_hz, "memory_bus_bits": int(bus_bits), "l2_bytes": int(attrs["L2CacheSize"]),
        "memory_bytes": total, "max_threads_per_sm": int(attrs["MaxThreadsPerMultiProcessor"]),
        "theoretical_bandwidth": theoretical_bandwidth(mem_clock_hz, bus_bits),
        "cuda_runtime": int(cupy.cuda.runtime.runtimeGetVersion()), "cupy": cupy.__version__,
    }
    spec = match_spec(name, total)
    info["spec"] = getattr(spec, "name", None)
    info["spec_bandwidth"] = float(spec.bandwidth) if spec is not None else None
    return info


def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def _size(text: str) -> int:
    """'32768K' / '1M' (sysfs cache sizes) -> bytes."""
    text = text.strip().upper()
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
    digits = text.rstrip("KMG")
    return int(digits) * mult if digits.isdigit() else 0


def _cpu_caches() -> dict:
    caches = {}
    base = "/sys/devices/system/cpu/cpu0/cache"
    for entry in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        level = _read(f"{base}/{entry}/level").strip()
        kind = _read(f"{base}/{entry}/type").strip()
        if level and kind in ("Data", "Unified"):
            caches[f"l{level}_bytes"] = _size(_read(f"{base}/{entry}/size"))
    return caches


def _cpu_info() -> dict:
    model = ""
    for line in _read("/proc/cpuinfo").splitlines():
        if line.lower().startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    model = model or platform.processor() or platform.machine() or "unknown CPU"
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    mem = 0
    for line in _read("/proc/meminfo").splitlines():
        if line.startswith("MemTotal:"):
            mem = int(line.split()[1]) * 1024
    caches = _cpu_caches()
    info = {"name": f"CPU: {model}", "kind": "cpu", "backend": "numpy", "cpu_model": model,
            "cores": int(cores or 1), "memory_bytes": mem, **caches,
            "llc_bytes": max(caches.values()) if caches else None, "numpy": np.__version__,
            "note": "This is a CPU, not a GPU: NumPy ufuncs run on one core unless hwlib splits the "
                    "work into threads; matmul uses every core through BLAS."}
    return info
