"""Number-format names, their spellings and their sizes: the one table every hwlib module reads.

`hwlib.memory` asks for bytes per value, `hwlib.specs` for the spec-sheet rate a format runs at,
`hwlib.formats` for the format itself and the in-page calculators for the dtypes they offer; all
accept the same names and reject an unknown one with the same list (chapter 5, the number-format
table). Names: "fp32", "tf32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2", "fp4_e2m1", "int8", "int4";
"fp8" and "fp4" are the short names where only the size matters (e4m3 and e2m1, as in the design);
"fp64" and AMD's FNUZ FP8 variants are accepted but not listed in the book's tables.

This module is a leaf (it imports only `hwlib._check`) and stays inside the transpiler's subset
(CONTRIBUTING.md): the page's calculators run it too.
"""

from __future__ import annotations

from . import _check

FORMATS = ("fp32", "tf32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2", "fp4_e2m1", "int8", "int4")
"""The formats of the book's tables, in display order (`hwlib.formats.names()`)."""

SHORT = {"fp8": "fp8_e4m3", "fp4": "fp4_e2m1"}
"""Size-only names and the format each stands for."""

VARIANTS = ("fp8_e4m3fnuz", "fp8_e5m2fnuz")
"""AMD MI300's FP8 (no infinity, one NaN, bias one higher than OCP's; Noune et al. 2022)."""

EXTRA = ("fp64",) + VARIANTS
"""Accepted everywhere, not listed in the book's tables."""

ACCEPTED = FORMATS + tuple(SHORT) + EXTRA
"""Every canonical name, in the order error messages list them."""

ALIASES = {
    "float64": "fp64",
    "float32": "fp32",
    "float": "fp32",
    "float16": "fp16",
    "half": "fp16",
    "bfloat16": "bf16",
    "e4m3": "fp8_e4m3",
    "float8_e4m3fn": "fp8_e4m3",
    "e5m2": "fp8_e5m2",
    "float8_e5m2": "fp8_e5m2",
    "e2m1": "fp4_e2m1",
    "float4_e2m1fn": "fp4_e2m1",
    "e4m3fnuz": "fp8_e4m3fnuz",
    "float8_e4m3fnuz": "fp8_e4m3fnuz",
    "e5m2fnuz": "fp8_e5m2fnuz",
    "float8_e5m2fnuz": "fp8_e5m2fnuz",
}
"""Other spellings (NumPy / ml_dtypes / PyTorch names) -> canonical name."""

STORAGE_BYTES = {
    "fp64": 8.0,
    "fp32": 4.0,
    "tf32": 4.0,
    "bf16": 2.0,
    "fp16": 2.0,
    "fp8": 1.0,
    "fp8_e4m3": 1.0,
    "fp8_e5m2": 1.0,
    "fp8_e4m3fnuz": 1.0,
    "fp8_e5m2fnuz": 1.0,
    "int8": 1.0,
    "int4": 0.5,
    "fp4": 0.5,
    "fp4_e2m1": 0.5,
}
"""Bytes one value occupies in memory. tf32 is stored in 4 bytes (its 19 bits exist only inside the
tensor core); int4 and fp4 pack two values per byte. Chapter 5; chapter 9."""

RATE = {
    "fp64": "fp64",
    "fp32": "fp32",
    "tf32": "tf32",
    "fp16": "fp16",
    "bf16": "bf16",
    "fp8_e4m3": "fp8",
    "fp8_e5m2": "fp8",
    "fp8_e4m3fnuz": "fp8",
    "fp8_e5m2fnuz": "fp8",
    "fp4_e2m1": "fp4",
    "int8": "int8",
    "int4": "int4",
}
"""Format -> the spec-sheet precision whose tensor-core rate it runs at (both FP8 encodings share one
rate; `hwlib.specs.PRECISIONS` lists the ones the sheet has numbers for)."""

CALCULATOR_DTYPES = ("fp32", "bf16", "fp16", "fp8", "int8", "int4", "fp4")
"""The weight / KV-cache dtypes the in-page calculator offers, in menu order."""


def name(value, kind: str = "number format") -> str:
    """The canonical name of `value` ("BF16", "bfloat16" -> "bf16"; "fp8" stays "fp8"); unknown ->
    ValueError "unknown <kind> ...", naming close matches and listing `ACCEPTED`."""
    return _check.choice(kind, value, ACCEPTED, ALIASES)


def format_name(value, kind: str = "format") -> str:
    """The format `value` names, short names resolved: "fp8" -> "fp8_e4m3", "FP4" -> "fp4_e2m1"."""
    n = name(value, kind)
    return SHORT.get(n, n)


def bytes_per_value(value, kind: str = "dtype") -> float:
    """Storage bytes per value of `value` (see `STORAGE_BYTES`)."""
    return STORAGE_BYTES[name(value, kind)]


def rate(value, kind: str = "precision") -> str:
    """The spec-sheet precision `value` runs at: "fp8_e5m2" -> "fp8", "bfloat16" -> "bf16"."""
    return RATE[format_name(value, kind)]
