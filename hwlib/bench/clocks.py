"""The GPU's clocks while a point was measured, where the device reports them.

A GPU does not run at one clock: it boosts while cool and under its power limit, then settles lower
(a T4, at 70 W, throttles within seconds of a dense matmul; mamf-finder reports boost and settled
clocks apart). A rate measured at a lower clock is a different number, so each point may carry the
SM and memory clocks read right after its samples: NVML (nvidia-ml-py's `pynvml`,
nvmlDeviceGetClockInfo, MHz -> Hz), matched to CuPy's device by PCI bus id. CuPy itself has no call
for the current clock. Where NVML is absent or fails, nothing is recorded (None), never a guess.
"""

from __future__ import annotations

_state: dict = {}


def _handle(bk):
    import pynvml

    if "handle" not in _state:
        pynvml.nvmlInit()
        dev = bk.xp.cuda.Device()
        try:
            handle = pynvml.nvmlDeviceGetHandleByPciBusId(str(dev.pci_bus_id))
        except Exception:  # an old CuPy without pci_bus_id, or NVML's own naming: the CUDA index
            handle = pynvml.nvmlDeviceGetHandleByIndex(int(dev.id))
        _state["handle"] = handle
    return pynvml, _state["handle"]


def read(bk) -> dict | None:
    """{"sm_clock_hz", "mem_clock_hz", "clock_source"} now, or None (a CPU, no NVML, NVML failed)."""
    if not bk.is_gpu or _state.get("unavailable"):
        return None
    try:
        nvml, h = _handle(bk)
        return {
            "sm_clock_hz": float(nvml.nvmlDeviceGetClockInfo(h, nvml.NVML_CLOCK_SM)) * 1e6,
            "mem_clock_hz": float(nvml.nvmlDeviceGetClockInfo(h, nvml.NVML_CLOCK_MEM)) * 1e6,
            "clock_source": "NVML",
        }
    except Exception:  # noqa: BLE001 - ModuleNotFoundError, NVMLError: no clocks, and ask only once
        _state["unavailable"] = True
        return None


def reset() -> None:
    """Forget the NVML handle (tests swap devices)."""
    _state.clear()
