"""The experiments of `hwlib.bench` by name: which module runs each and what it measures.

A leaf of the package (no imports), so both `hwlib.bench` (which runs them) and
`hwlib.bench.recorded` (which reads stored runs of them) can check a name without importing each other.
"""

from __future__ import annotations

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
    "tiles": ("e10_tiles", "E10 tile and wave quantisation: matmul rate in steps of N around 4096"),
    "coalescing": ("e11_coalescing", "E11 memory coalescing: useful bandwidth vs stride and misalignment"),
}
"""name -> (module of hwlib.bench, one-line description); modules load on first use."""


def check(name: str) -> None:
    """KeyError naming the unknown experiment and the accepted ones; nothing if `name` is known."""
    if name not in EXPERIMENTS:
        raise KeyError(f"unknown experiment {name!r}; accepted: {', '.join(EXPERIMENTS)}")


def check_all(names) -> None:
    """KeyError listing every unknown name of `names` and the accepted ones."""
    unknown = [n for n in names if n not in EXPERIMENTS]
    if unknown:
        raise KeyError(f"unknown experiment(s) {unknown}; accepted: {', '.join(EXPERIMENTS)}")
