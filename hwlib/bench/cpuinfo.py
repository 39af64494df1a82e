"""This machine's CPU: cores, reported clock, vector width and matrix extensions, and its peak FLOP/s
per precision, read from /proc/cpuinfo (Linux; elsewhere the fields are None).

Peak per precision p (FLOP/s):

    pi_p = cores x f_clock x (FLOP per cycle per core in p)

with, per core and cycle (n_FMA = FMA units per core, an assumption: the OS does not report it):

* fp32, SIMD FMA:  lanes x 2 x n_FMA, lanes = 16 (AVX-512), 8 (AVX/AVX2) or 4 (SSE);
* fp64:            half the fp32 lanes;
* bf16, AVX512-BF16 (VDPBF16PS): each fp32 lane accumulates two bf16 products, 2 x the fp32 rate;
* fp16, AVX512-FP16: 32 fp16 lanes per 512-bit FMA, 2 x the fp32 rate
  (both assume these instructions issue as often as an FP32 FMA; some cores issue them less often);
* bf16, AMX-BF16 (tile matrix multiply unit): 1,024 FLOP per cycle per core (Intel, 4th-generation
  Xeon; int8: 2,048 operations).

Sources: Intel Architecture Instruction Set Extensions Programming Reference (VDPBF16PS, AVX512-FP16,
AMX); Intel's AMX solution brief for the 1,024 BF16 FLOP per cycle (references.bib: intel_isa_ext,
intel_amx_brief). NumPy's matmul runs float32/float64 BLAS and has no bfloat16 BLAS path, so it uses
neither AMX nor AVX512-BF16: a NumPy measurement is an FP32 (or FP64) measurement.
"""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass

from .. import _check

AMX_BF16_FLOP_PER_CYCLE = 1024  # per core, Intel 4th-gen Xeon (Sapphire Rapids) AMX-BF16
DEFAULT_FMA_UNITS = 2  # assumption: two FMA pipes per core (recent Intel server, AMD Zen)
PRECISIONS = ("fp64", "fp32", "bf16", "fp16")


@dataclass(frozen=True)
class CPUInfo:
    """What /proc/cpuinfo says about this CPU. `flags` is the set of instruction-set flags."""

    model: str
    cores: int
    clock_hz: float | None  # the first "cpu MHz" line: nominal, cores may boost above it
    flags: frozenset

    @property
    def fp32_lanes(self) -> int | None:
        """Single-precision lanes of the widest vector unit (16 AVX-512, 8 AVX, 4 SSE)."""
        return 16 if "avx512f" in self.flags else 8 if "avx" in self.flags else 4 if "sse" in self.flags else None

    @property
    def simd(self) -> str:
        return {16: "AVX-512", 8: "AVX/AVX2", 4: "SSE"}.get(self.fp32_lanes, "unknown")

    @property
    def fma(self) -> bool:
        return "fma" in self.flags or "avx512f" in self.flags

    @property
    def amx_bf16(self) -> bool:
        return "amx_bf16" in self.flags

    @property
    def avx512_bf16(self) -> bool:
        return "avx512_bf16" in self.flags

    @property
    def avx512_fp16(self) -> bool:
        return "avx512_fp16" in self.flags

    def matrix_extensions(self) -> list[str]:
        """The low-precision matrix/vector extensions present, in the kernel's flag names."""
        return [f for f in ("amx_bf16", "amx_int8", "amx_fp16", "avx512_bf16", "avx512_fp16") if f in self.flags]


def parse(text: str, cores: int | None = None) -> CPUInfo:
    """A CPUInfo from the text of /proc/cpuinfo. `cores` defaults to the CPUs this process may use."""
    flags, mhz, model = frozenset(), None, platform.processor() or platform.machine() or "unknown CPU"
    for line in text.splitlines():
        key, _, val = line.partition(":")
        key = key.strip()
        if key == "flags" and not flags:
            flags = frozenset(val.split())
        elif key == "cpu MHz" and mhz is None:
            try:
                mhz = float(val)
            except ValueError:
                mhz = None
        elif key == "model name":
            model = val.strip()
    if cores is None:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return CPUInfo(model, int(cores), mhz * 1e6 if mhz else None, flags)


def read(path: str = "/proc/cpuinfo", cores: int | None = None) -> CPUInfo:
    """This machine's CPUInfo; fields are None/empty where the file does not exist (not Linux)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError:
        text = ""
    return parse(text, cores)


def flop_per_cycle(cpu: CPUInfo, precision: str = "fp32", fma_units: int = DEFAULT_FMA_UNITS):
    """(FLOP per cycle per core, the hardware path) for `precision`, or (None, reason) when the CPU
    has no hardware path for it (a bf16 matmul would then be emulated in software)."""
    p = _check.choice(
        "precision",
        precision,
        PRECISIONS,
        aliases={"bfloat16": "bf16", "float32": "fp32", "float16": "fp16", "float64": "fp64"},
    )
    _check.positive("fma_units", fma_units)
    lanes = cpu.fp32_lanes
    if lanes is None:
        return None, "vector width unknown"
    fp32 = lanes * (2 if cpu.fma else 1) * fma_units
    if p == "fp32":
        return fp32, f"{cpu.simd} FMA"
    if p == "fp64":
        return fp32 / 2, f"{cpu.simd} FMA"
    if p == "bf16":
        if cpu.amx_bf16:
            return AMX_BF16_FLOP_PER_CYCLE, "AMX-BF16"
        if cpu.avx512_bf16:
            return 2 * fp32, "AVX512-BF16"
        return None, "no bf16 instructions (emulated in software)"
    if cpu.avx512_fp16:
        return 2 * fp32, "AVX512-FP16"
    return None, "no fp16 arithmetic instructions (emulated in software)"


def peak_flops(cpu: CPUInfo, precision: str = "fp32", fma_units: int = DEFAULT_FMA_UNITS):
    """pi = cores x clock x FLOP per cycle per core (module docstring), FLOP/s; None when the clock or
    the vector width is unknown or the CPU has no hardware path for `precision`."""
    per_cycle, _ = flop_per_cycle(cpu, precision, fma_units)
    if per_cycle is None or not cpu.clock_hz:
        return None
    return cpu.cores * cpu.clock_hz * per_cycle
