"""Block-scaled number formats: small values that share one scale per block (chapter 5).

* **MXFP4** (OCP Microscaling Formats v1.0, 2023; Rouhani et al. 2023): blocks of 32 E2M1 values
  share one 8-bit power-of-two scale (E8M0), 2^(floor(log2 amax) - emax) with emax the element
  format's largest exponent; the values are then rounded into the format (clipped at its max).
* **NVFP4** (NVIDIA, "Introducing NVFP4", 2025): blocks of 16 E2M1 values, each block scaled by an
  E4M3 number, the block scales themselves scaled by one FP32 factor per tensor,
  g = amax / (max_E2M1 x max_E4M3).

Storage per value: element bits + scale bits / block size (4 + 8/32 = 4.25 for MXFP4, 4 + 8/16 = 4.5
for NVFP4; the one per-tensor FP32 is left out). Arrays are NumPy; the size must be a multiple of the
block.
"""

from __future__ import annotations

import numpy as np

from . import _check, formats

SCHEMES = {
    "mxfp4": {
        "element": "fp4_e2m1",
        "block": 32,
        "scale": "e8m0",
        "scale_bits": 8,
        "source": "OCP Microscaling Formats (MX) Specification v1.0, 2023 (blocks of 32 sharing one E8M0 scale)",
    },
    "nvfp4": {
        "element": "fp4_e2m1",
        "block": 16,
        "scale": "fp8_e4m3",
        "scale_bits": 8,
        "source": "NVIDIA Technical Blog, 'Introducing NVFP4 for Efficient and Accurate Low-Precision "
        "Inference', 2025 (blocks of 16 with an E4M3 scale, one FP32 scale per tensor)",
    },
}
"""The block-scaled formats: element format, block size (values), scale format and its bits, source."""


def _scheme(name: str) -> dict:
    return SCHEMES[_check.choice("block-scaled format", name, SCHEMES)]


def block_size(name: str) -> int:
    """Values per shared scale: 32 for "mxfp4", 16 for "nvfp4"."""
    return _scheme(name)["block"]


def bits_per_value(name: str) -> float:
    """Storage bits per value including the block's share of its scale: b_elem + b_scale / block."""
    s = _scheme(name)
    return formats.info(s["element"]).bits + s["scale_bits"] / s["block"]


def _blocks(x, block: int) -> np.ndarray:
    arr = np.asarray(x, dtype=np.float64)
    if arr.size == 0 or arr.size % block:
        raise ValueError(f"x must hold a positive multiple of the block size {block} values; got {arr.size}")
    return arr.reshape(-1, block)


def mx_quantize(x, name: str = "fp4_e2m1", block: int | None = None) -> np.ndarray:
    """OCP MX block scaling of `x` into element format `name` (blocks of 32 unless `block` is given):
    each block's scale is 2^(floor(log2 amax) - emax), emax = floor(log2(max of the format))."""
    block = block_size("mxfp4") if block is None else _check.integer("block", block)
    emax = np.floor(np.log2(formats.info(name).max))
    blocks = _blocks(x, block)
    amax = np.abs(blocks).max(axis=1, keepdims=True)
    scale = np.exp2(np.floor(np.log2(np.where(amax > 0, amax, 1.0))) - emax)
    return (formats.quantize(blocks / scale, name) * scale).reshape(np.shape(x))


def nvfp4_quantize(x, block: int | None = None) -> np.ndarray:
    """NVFP4 of `x`: E2M1 values in blocks of 16 (or `block`), E4M3 block scales, one FP32 tensor scale
    g = amax / (max_E2M1 x max_E4M3)."""
    block = block_size("nvfp4") if block is None else _check.integer("block", block)
    fp4_max, e4m3_max = formats.info("fp4_e2m1").max, formats.info("fp8_e4m3").max
    blocks = _blocks(x, block)
    g = np.abs(blocks).max() / (fp4_max * e4m3_max)
    if g == 0:
        return np.zeros(np.shape(x))
    s_block = formats.quantize(np.abs(blocks).max(axis=1, keepdims=True) / fp4_max / g, "fp8_e4m3")
    s = np.where(s_block > 0, s_block, 1.0) * g
    return (formats.quantize(blocks / s, "fp4_e2m1") * s).reshape(np.shape(x))
