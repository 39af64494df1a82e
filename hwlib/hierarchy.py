"""The memory-hierarchy data file (hwlib/data/hierarchy.yaml), loaded and read for chapters 1, 2 and 10.

Every entry of that file is a {value, source, confidence} record or a plain value; `value` returns the
number either way. `sm_limits` gives the per-SM resources of a spec-sheet GPU (registers, threads, lanes,
L1/shared bytes), keyed through its compute capability; `latency` the published pointer-chase latencies
(cycles and the clock they were measured at) of one part; `published` a published measurement curve.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Any

import yaml

from hwlib import specs


@lru_cache(maxsize=1)
def _load() -> dict:
    return yaml.safe_load(resources.files("hwlib").joinpath("data", "hierarchy.yaml").read_text(encoding="utf-8"))


def load() -> dict:
    """The whole of hierarchy.yaml as a dict (read once; a fresh shallow copy each call)."""
    return dict(_load())


def value(record):
    """The number of a {value, source, confidence} record (a plain value passes through)."""
    return record["value"] if isinstance(record, dict) and "value" in record else record


def _section(name: str) -> dict:
    data = _load()
    if name not in data:
        raise KeyError(f"hierarchy.yaml has no section {name!r}; it has: {', '.join(data)}")
    return data[name]


def _entry(section: str, key: str) -> Any:  # a table (dict) or, in `parts`, a capability (str)
    table = _section(section)
    if key not in table:
        raise KeyError(f"hierarchy.yaml {section} has no entry {key!r}; it has: {', '.join(table)}")
    return table[key]


def parts() -> list[str]:
    """Spec-sheet names of the GPUs whose per-SM resources the file holds."""
    return list(_section("parts"))


def sm_limits(gpu: str) -> dict:
    """Per-SM resources of a spec-sheet GPU, keyed by its compute capability (plain numbers): e.g.
    max_threads_per_sm, warp_size, registers_per_sm (32-bit), fp32_lanes_per_sm, l1_shared_bytes_per_sm,
    max_shared_bytes_per_sm (bytes). KeyError naming the GPUs the file has otherwise."""
    cc = _entry("parts", specs.get(gpu).name)
    return {k: value(v) for k, v in _entry("compute_capabilities", cc).items()}


def latency(part: str = "H100 PCIe") -> dict:
    """Published latencies of one part as plain numbers: '<tier>_cycles' (cycles) and clock_hz (Hz)."""
    return {k: value(v) for k, v in _entry("latency", part).items()}


def latency_s(tier: str = "dram", part: str = "H100 PCIe") -> float:
    """Latency of one tier in seconds = cycles / clock (published pointer chase, hierarchy.yaml latency)."""
    lat = latency(part)
    key = f"{tier}_cycles"
    if key not in lat:
        tiers = [k.removesuffix("_cycles") for k in lat if k.endswith("_cycles")]
        raise KeyError(f"hierarchy.yaml latency[{part!r}] has no tier {tier!r}; it has: {', '.join(tiers)}")
    return lat[key] / lat["clock_hz"]


def entry(section: str, key: str) -> dict:
    """One entry of a section (e.g. entry('hbm', 'H100 SXM'), entry('published', 'h200_l2_sweep')), with
    its records kept (use `value` for the numbers). KeyError naming what the section has otherwise."""
    return _entry(section, key)


def register_bandwidth(gpu) -> float:
    """Operand traffic the register file must sustain for the FP32 lanes at their peak  [bytes/s]:
    every FMA reads 3 operands of 4 bytes and does 2 FLOPs, so 3 · 4 · π_FP32 / 2. NVIDIA publishes no
    register-file bandwidth; this is a lower bound (tensor-core operands come on top). Chapter 2."""
    acc = specs.get(gpu) if isinstance(gpu, str) else gpu
    return 3 * 4 * acc.peak_flops("fp32") / 2
