"""Array backend: CuPy on an NVIDIA GPU when one really works, otherwise NumPy on the CPU.

One place decides, and says why. CuPy is used only if it imports, sees at least one CUDA device
and runs a tiny kernel (which also proves NVRTC, the runtime compiler, is there); any failure falls
back to NumPy with a one-line reason that says what to install. ``HWLIB_BACKEND=numpy`` forces
NumPy, ``=cupy`` insists on trying CuPy (it still falls back, saying so), unset or ``auto`` picks
automatically.

What the device is lives in hwlib.bench.device_info (CUDA properties, sysfs caches, the theoretical
bandwidth 2 x memory clock x bus width / 8); which spec-sheet entry it is, in hwlib.bench.spec_match.
Both are re-exported here (``backend.theoretical_bandwidth``, ``backend.match_spec``).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field

import numpy as np

from hwlib.bench.device_info import cpu_info as _cpu_info, gpu_info as _gpu_info, theoretical_bandwidth  # noqa: F401
from hwlib.bench.spec_match import _model_token, _norm, match_spec  # noqa: F401

ENV_VAR = "HWLIB_BACKEND"
_CHOICES = ("auto", "numpy", "cupy")
_cache: dict = {}
# what to install, in a pip user's terms (extras of hwlib's pyproject.toml; Colab preinstalls CuPy)
INSTALL_HINT = (
    'on an NVIDIA GPU: pip install "hwlib[gpu-cuda12]", or "hwlib[gpu-cuda13]" with a CUDA 13 '
    "driver; on Colab pick a GPU runtime, CuPy is preinstalled"
)
LIBS_HINT = (
    'CuPy is there but not its CUDA libraries: pip install "hwlib[gpu-cuda12]" '
    '(or "hwlib[gpu-cuda13]"), which brings them as cupy-cuda12x[ctk]'
)


def _missing_libs(text: str) -> bool:
    return any(k in text for k in ("libcu", "libnvrtc", "libnvJitLink", "nvrtc", "CUDA path could not be detected"))


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
            return None, f"CuPy is not installed ({INSTALL_HINT})"
        return None, f"CuPy import failed ({_one_line(exc)})"
    except Exception as exc:  # installed, but its CUDA libraries are broken
        why = _one_line(exc)
        return None, f"CuPy import failed ({why})" + (f"; {LIBS_HINT}" if _missing_libs(why) else "")
    try:
        count = cupy.cuda.runtime.getDeviceCount()
        if count < 1:
            return None, "CuPy found no CUDA device"
        if int((cupy.arange(3, dtype=cupy.int32) ** 2).sum()) != 5:  # a real kernel launch
            return None, "CuPy's test kernel returned a wrong result"
    except Exception as exc:  # CUDARuntimeError without a driver, CompileException without NVRTC
        why = _one_line(exc)
        return None, f"CuPy unusable ({why})" + (f"; {LIBS_HINT}" if _missing_libs(why) else "")
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
        return int((info.get("l2_bytes") if self.is_gpu else info.get("llc_bytes")) or 32 << 20)

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


def announce(file=None, *, again=False) -> Backend:
    """Print one line: which backend runs the experiments, on what, and why — once per process (a
    notebook page runs in one kernel, so a page that calls this in several cells shows it once).
    Later calls print nothing unless the backend was decided again or again=True; all return it."""
    b = get()
    if again or _cache.get("announced") is not b:
        print(f"hwlib backend: {b.summary()} - {b.reason}", file=file or sys.stdout)
        _cache["announced"] = b
    return b
