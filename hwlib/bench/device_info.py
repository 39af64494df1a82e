"""What the experiments run on: GPU properties from CUDA (through CuPy), CPU facts from Linux sysfs.

Theoretical DRAM bandwidth (mixbench ``lcutil.h``; BabelStream):

    bandwidth [bytes/s] = 2 x memory clock [Hz] x bus width [bits] / 8

The factor 2 is "double data rate": the memory interface moves data on both clock edges, so each
pin carries two transfers per clock; bus width / 8 turns bits per transfer into bytes. CUDA reports
``MemoryClockRate`` (kHz, the *maximum* clock, not the idle one) already scaled so that this formula
gives the vendor number for GDDR and HBM alike, e.g. T4: 2 x 5.001 GHz x 256/8 B = 320 GB/s. Some
drivers report 0 for the clock or the bus width (CUDA 13 deprecates both attributes); the bandwidth
is then None and ``bandwidth_note`` says why, and callers use the spec sheet instead.

Memory the CPU experiments may use: ``available_memory_bytes()`` = the least of MemAvailable, the
cgroup limit left and the address-space limit left (RLIMIT_AS), so a 2 GB container or an 8 GB
`ulimit -v` is respected as well as a laptop's free RAM.
"""

from __future__ import annotations

import os
import platform

import numpy as np

from hwlib.bench.spec_match import match_spec


def theoretical_bandwidth(memory_clock_hz: float, bus_width_bits: float) -> float:
    """2 x memory clock [Hz] x bus width [bits] / 8 -> bytes/s (double data rate; see module doc)."""
    from hwlib import _check

    clock = _check.positive("memory_clock_hz", memory_clock_hz)
    bus = _check.positive("bus_width_bits", bus_width_bits)
    return 2.0 * clock * bus / 8.0


def _attr(attrs, key, default=0):
    try:
        value = attrs[key]
    except (KeyError, TypeError, Exception):  # an attribute this CUDA/CuPy does not know
        return default
    return value if value is not None else default


def gpu_info(cupy) -> dict:
    """Device 0's properties (SI units) and its spec-sheet match; never raises on a missing attribute."""
    dev = cupy.cuda.Device()
    props = cupy.cuda.runtime.getDeviceProperties(dev.id)
    attrs = dev.attributes
    name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    mem_clock_hz = float(_attr(attrs, "MemoryClockRate")) * 1e3  # attribute is in kHz
    bus_bits = int(_attr(attrs, "GlobalMemoryBusWidth"))
    total = int(props["totalGlobalMem"])
    per_sm = int(_attr(attrs, "MaxThreadsPerMultiProcessor", 1024))
    info = {
        "name": name,
        "kind": "gpu",
        "backend": "cupy",
        "compute_capability": str(dev.compute_capability),
        "sm_count": int(_attr(attrs, "MultiProcessorCount", 1)),
        "sm_clock_hz": float(_attr(attrs, "ClockRate")) * 1e3,
        "memory_clock_hz": mem_clock_hz,
        "memory_bus_bits": bus_bits,
        "l2_bytes": int(_attr(attrs, "L2CacheSize")),
        "memory_bytes": total,
        "max_threads_per_sm": per_sm,
        "max_blocks_per_sm": int(_attr(attrs, "MaxBlocksPerMultiprocessor", 16)),
        "registers_per_sm": int(_attr(attrs, "MaxRegistersPerMultiprocessor", 65536)),
        "max_threads_per_block": int(_attr(attrs, "MaxThreadsPerBlock", 1024)),
        "warp_size": int(_attr(attrs, "WarpSize", 32)),
        "cuda_runtime": int(cupy.cuda.runtime.runtimeGetVersion()),
        "cupy": cupy.__version__,
    }
    if mem_clock_hz > 0 and bus_bits > 0:
        info["theoretical_bandwidth"] = theoretical_bandwidth(mem_clock_hz, bus_bits)
    else:
        info["theoretical_bandwidth"] = None
        info["bandwidth_note"] = (
            f"the driver reports memory clock {mem_clock_hz:g} Hz and bus width {bus_bits} bits, "
            "so no theoretical bandwidth; the spec sheet is used where the GPU is known"
        )
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
    """{"l1_bytes", "l2_bytes", "l3_bytes"} of cpu0 (data and unified caches), from sysfs."""
    caches = {}
    base = "/sys/devices/system/cpu/cpu0/cache"
    for entry in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        level = _read(f"{base}/{entry}/level").strip()
        kind = _read(f"{base}/{entry}/type").strip()
        if level and kind in ("Data", "Unified"):
            caches[f"l{level}_bytes"] = _size(_read(f"{base}/{entry}/size"))
    return caches


def _meminfo(key: str) -> int:
    for line in _read("/proc/meminfo").splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
    return 0


def available_memory_bytes() -> int | None:
    """Bytes this process may still allocate: min(MemAvailable, cgroup limit - usage, RLIMIT_AS - VmSize).
    None when nothing is known (not Linux)."""
    limits = []
    avail = _meminfo("MemAvailable")
    if avail:
        limits.append(avail)
    cg_max, cg_cur = _read("/sys/fs/cgroup/memory.max").strip(), _read("/sys/fs/cgroup/memory.current").strip()
    if cg_max.isdigit() and cg_cur.isdigit():
        limits.append(max(0, int(cg_max) - int(cg_cur)))
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        if soft not in (resource.RLIM_INFINITY, -1):
            vm = 0
            for line in _read("/proc/self/status").splitlines():
                if line.startswith("VmSize:"):
                    vm = int(line.split()[1]) * 1024
            limits.append(max(0, soft - vm))
    except (ImportError, ValueError, OSError):
        pass
    return min(limits) if limits else None


def cpu_info() -> dict:
    """The CPU: model, usable cores, memory, caches (per-core L1/L2, shared last level)."""
    model = ""
    for line in _read("/proc/cpuinfo").splitlines():
        if line.lower().startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    model = model or platform.processor() or platform.machine() or "unknown CPU"
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    caches = _cpu_caches()
    return {
        "name": f"CPU: {model}",
        "kind": "cpu",
        "backend": "numpy",
        "cpu_model": model,
        "cores": int(cores or 1),
        "memory_bytes": _meminfo("MemTotal"),
        **caches,
        "llc_bytes": max(caches.values()) if caches else None,
        "numpy": np.__version__,
        "note": "This is a CPU, not a GPU: NumPy ufuncs run on one core unless hwlib splits the "
        "work into threads; matmul uses every core through BLAS.",
    }
