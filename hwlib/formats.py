"""Number formats: their bit layout, range and precision, and what rounding into them does.

Built on ml_dtypes (bfloat16, float8_e4m3fn, float8_e5m2, float4_e2m1fn, int4) and NumPy (float32,
float16, int8): the casts are the library's round-to-nearest-even, not hand-written bit tricks.
TF32 is the exception; ml_dtypes has no such type, so it is emulated (see `_round_tf32`).
Chapter 5 of the book (Micikevicius et al. 2018 and 2022; OCP OFP8 and MX specifications).
AMD's FP8 variants (MI300: float8_e4m3fnuz, float8_e5m2fnuz; Noune et al. 2022) are accepted as
`VARIANTS`: no infinity, no negative zero, one NaN, exponent bias one higher than OCP's.

Overflow differs by format, and `quantize(..., saturate=False)` shows it raw: float8_e4m3fn has
no infinity and turns overflow into NaN, float8_e5m2/fp16/bf16 go to ±inf, float4_e2m1fn clamps
to ±6 (and turns NaN into -0), and the integers wrap around (int4: 8 -> -8). The default,
``saturate=True``, clips to ±max first, as FP8 training recipes do.

>>> float(quantize(1 + 2**-8, "bf16")), float(quantize(500.0, "fp8_e4m3"))
(1.0, 448.0)
>>> decompose(1.5, "fp8_e4m3").bits
'0 0111 100'
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import ml_dtypes
import numpy as np

from . import _check, dtypes

NAMES = dtypes.FORMATS
ALIASES = dict(dtypes.ALIASES, **dtypes.SHORT)
VARIANTS = dtypes.VARIANTS  # accepted everywhere, not listed by names() / table(); fp64 likewise
_DTYPES = {
    "fp32": np.float32,
    "tf32": np.float32,
    "fp16": np.float16,
    "bf16": ml_dtypes.bfloat16,
    "fp8_e4m3": ml_dtypes.float8_e4m3fn,
    "fp8_e5m2": ml_dtypes.float8_e5m2,
    "fp4_e2m1": ml_dtypes.float4_e2m1fn,
    "int8": np.int8,
    "int4": ml_dtypes.int4,
    "fp8_e4m3fnuz": ml_dtypes.float8_e4m3fnuz,
    "fp8_e5m2fnuz": ml_dtypes.float8_e5m2fnuz,
    "fp64": np.float64,
}
_STORAGE_BYTES = {k: int(v) if v == int(v) else v for k, v in dtypes.STORAGE_BYTES.items()}  # 4, 0.5
_USE = {
    "fp32": "master weights, optimizer state, accumulation and sensitive reductions",
    "tf32": "tensor-core matmuls on fp32 data where the framework opts in (Ampere and later); stored as fp32",
    "fp16": "activations and weights in mixed precision; needs loss scaling (narrow range)",
    "bf16": "default for training large models: fp32's range, little precision",
    "fp8_e4m3": "weights and activations in FP8 training and inference; with fine-grained scales, gradients too",
    "fp8_e5m2": "gradients in per-tensor-scaled FP8 training (more range, less precision)",
    "fp4_e2m1": "inference weights with a scale per block (MXFP4, NVFP4; Blackwell)",
    "int8": "inference weights and activations with a scale",
    "int4": "inference weights with per-group scales",
    "fp8_e4m3fnuz": "FP8 weights and activations on AMD MI300 (CDNA 3)",
    "fp8_e5m2fnuz": "FP8 gradients on AMD MI300 (CDNA 3)",
    "fp64": "scientific computing (HPC); not used to train or serve neural networks",
}
_NOTES = {
    "tf32": "Not in ml_dtypes: emulated by rounding the fp32 mantissa to 10 bits (nearest-even). "
    "19 significant bits live in a 32-bit register; range as fp32. Whether tensor cores "
    "keep tf32 subnormals is not verified.",
    "fp8_e4m3": "OCP E4M3 'fn': no infinity; S.1111.111 is NaN, so the top binade stops at 448.",
    "fp8_e5m2": "OCP E5M2: IEEE-like, with infinities and NaNs.",
    "fp4_e2m1": "OCP MX E2M1: 16 codes, ±{0, 0.5, 1, 1.5, 2, 3, 4, 6}; no inf, no NaN.",
    "int8": "two's complement; values are integers, so a scale is always needed.",
    "int4": "two's complement, -8..7; packed two per byte in memory (ml_dtypes uses a byte each).",
    "fp8_e4m3fnuz": "FNUZ variant (AMD MI300): bias 8, no inf, no -0, NaN = 0x80 only; max 240.",
    "fp8_e5m2fnuz": "FNUZ variant (AMD MI300): bias 16, no inf, no -0, NaN = 0x80 only; max 57,344.",
}


@dataclass(frozen=True)
class FormatInfo:
    """Layout and range of one format. Float fields are None where they make no sense (integers)."""

    name: str
    bits: int
    exponent_bits: int
    mantissa_bits: int
    bias: int | None
    max: float
    min: float  # most negative finite value
    min_normal: float | None
    min_subnormal: float | None
    eps: float  # gap from 1 to the next value, 2**-mantissa_bits (1 for ints)
    has_inf: bool
    has_nan: bool
    storage_bytes: float  # bytes per value in memory (int4/fp4 packed two per byte)
    typical_use: str
    notes: str = ""


def canonical(name) -> str:
    """Canonical format name ("FP8" -> "fp8_e4m3"); ValueError listing accepted names."""
    return dtypes.format_name(name, "format")


def names(variants: bool = False) -> list[str]:
    """The book's canonical names (aliases: fp8 = fp8_e4m3, fp4 = fp4_e2m1, bfloat16, ...);
    with variants=True also AMD's FNUZ FP8 variants."""
    return list(NAMES + VARIANTS) if variants else list(NAMES)


def _is_int(name: str) -> bool:
    return name in ("int8", "int4")


def _probe(dtype, value: float) -> float:
    """What the raw cast makes of `value` (used to read off inf/NaN support from ml_dtypes)."""
    with np.errstate(all="ignore"):
        return float(np.array([value], np.float32).astype(dtype).astype(np.float32)[0])


def info(name) -> FormatInfo:
    """Bits, exponent and mantissa widths, bias, max, min_normal, min_subnormal and eps, read from
    ml_dtypes.finfo / iinfo (fp32 ones for tf32, with a 10-bit mantissa); inf/NaN support read off
    the library's casts."""
    return _info(canonical(name))


@functools.cache
def _info(n: str) -> FormatInfo:
    dt = _DTYPES[n]
    if _is_int(n):
        ii = ml_dtypes.iinfo(dt)
        return FormatInfo(
            n,
            ii.bits,
            0,
            0,
            None,
            float(ii.max),
            float(ii.min),
            None,
            None,
            1.0,
            False,
            False,
            _STORAGE_BYTES[n],
            _USE[n],
            _NOTES[n],
        )
    fi = ml_dtypes.finfo(dt)
    bits, mant, bias = int(fi.bits), int(fi.nmant), 1 - int(fi.minexp)
    mx, eps, sub = float(fi.max), float(fi.eps), float(fi.smallest_subnormal)
    if n == "tf32":  # fp32's exponent with a 10-bit mantissa: 1 + 8 + 10 = 19 bits
        bits, mant = 19, 10
        mx, eps, sub = (2 - 2.0**-10) * 2.0**fi.maxexp / 2, 2.0**-10, 2.0 ** (1 - bias - 10)
    has_inf = np.isinf(_probe(dt, np.inf))
    has_nan = bool(np.isnan(_probe(dt, np.nan)))
    return FormatInfo(
        n,
        bits,
        int(fi.nexp),
        mant,
        bias,
        mx,
        -mx,
        float(fi.smallest_normal),
        sub,
        eps,
        bool(has_inf),
        has_nan,
        _STORAGE_BYTES[n],
        _USE[n],
        _NOTES.get(n, "IEEE 754"),
    )


def _round_tf32(x32: np.ndarray) -> np.ndarray:
    """fp32 -> tf32 -> fp32: keep 10 of the 23 mantissa bits, rounding to nearest, ties to even.

    On the raw bits u: add 0x0FFF plus the lowest kept bit (so a tie rounds to the even
    neighbour), then clear the 13 dropped bits. A carry out of the mantissa bumps the exponent,
    which is exactly rounding up to the next binade (or to inf past the max). NaN and inf pass.
    """
    u = x32.view(np.uint32)
    keep_lsb = (u >> np.uint32(13)) & np.uint32(1)
    rounded = ((u + np.uint32(0x0FFF) + keep_lsb) & np.uint32(0xFFFFE000)).view(np.float32)
    return np.where(np.isfinite(x32), rounded, x32)


def _as_float_array(x) -> np.ndarray:
    arr = np.asarray(x)
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.number) or arr.dtype in _DTYPES.values()):
        raise ValueError(f"x must be numbers (a scalar, list or array); got {arr.dtype} {x!r:.60}")
    return arr.astype(np.float64)


def amax_scale(x, name) -> float:
    """Per-tensor scale s = amax(|x|) / max(format), so x / s just fills the format's range
    (FP8 recipes, Micikevicius et al. 2022). 1.0 for an all-zero tensor; NaNs ignored."""
    fmt = info(name)
    amax = float(np.nanmax(np.abs(_as_float_array(x)), initial=0.0))
    if not np.isfinite(amax):
        raise ValueError("x has an infinite value; amax scaling needs finite data")
    return amax / fmt.max if amax > 0 else 1.0


def quantize(x, name, scale=None, saturate: bool = True) -> np.ndarray:
    """Round `x` into format `name` and back: q = s · Q(x / s)  (s = 1 without `scale`).

    The input is first rounded to float32 (as a framework cast of an fp32 tensor would; ml_dtypes
    also converts through float32), then cast with round-to-nearest-even. Every value of every
    format here is a float32, so the result is returned as float32 **exactly**; with a `scale`
    the product s · Q is returned as float64 so that no second rounding happens.

    scale: None, a positive number, or "amax" for `amax_scale(x, name)`.
    saturate=True clips finite values to ±max first (infinities stay where the format has them);
    saturate=False shows the raw cast: e4m3 overflow -> NaN, e5m2/fp16/bf16 -> inf, fp4 clamps,
    ints wrap. NaN stays NaN where the format has NaN; for fp4 and the integers a NaN raises
    ValueError (saturate=False shows fp4's raw NaN -> -0), as does inf into an integer format
    with saturate=False.
    """
    n, fmt = canonical(name), info(name)
    arr = _as_float_array(x)
    s = 1.0
    if isinstance(scale, str):
        if scale != "amax":
            raise ValueError(f"scale must be None, a number > 0 or 'amax'; got {scale!r}")
        s = amax_scale(arr, n)
    elif scale is not None:
        s = _check.positive("scale", scale)
    with np.errstate(all="ignore"):
        v = (arr / s).astype(np.float32)
    nan = np.isnan(v)
    if nan.any() and not fmt.has_nan and (saturate or _is_int(n)):
        raise ValueError(f"x contains NaN, which {n} cannot represent (saturate={saturate})")
    if _is_int(n) and not saturate and np.isinf(v).any():
        raise ValueError(f"x contains inf, which has no raw {n} cast; use saturate=True to clip it")
    if saturate:
        clip = np.isfinite(v) | (not fmt.has_inf)
        v = np.where(clip & ~nan, np.clip(v, fmt.min, fmt.max), v).astype(np.float32)
    with np.errstate(all="ignore"):
        if n == "tf32":
            q = _round_tf32(v)
        elif _is_int(n):
            q = np.rint(v).astype(np.int64).astype(_DTYPES[n]).astype(np.float32)
        else:
            q = v.astype(_DTYPES[n]).astype(np.float32)
    return q if scale is None else q.astype(np.float64) * s


def relative_error(x, name, scale=None) -> np.ndarray:
    """|quantize(x) - x| / |x| in float64, element-wise; 0 where x == 0 and it is kept exactly
    (inf where a zero becomes nonzero), NaN where x is NaN."""
    arr = _as_float_array(x)
    q = quantize(arr, name, scale=scale).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        err = np.abs(q - arr) / np.abs(arr)
    return np.where(arr == 0, np.where(q == 0, 0.0, np.inf), err)


@dataclass(frozen=True)
class Decomposition:
    """The stored bits of one value. For floats: (-1)^sign · 2^(E - bias) · (1 + M / 2^m)
    (normal) or (-1)^sign · 2^(1 - bias) · (M / 2^m) (subnormal, E = 0). For integers the bits
    are two's complement and only `bits`, `sign`, `represented` and the errors apply."""

    name: str
    value: float  # what was asked for
    bits: str  # "s eeee mmm", fields separated by spaces
    sign: int
    exponent_bits: str
    mantissa_bits: str
    biased_exponent: int | None
    unbiased_exponent: int | None
    kind: str  # normal, subnormal, zero, inf, nan, integer
    represented: float  # the value the bits stand for
    error: float  # represented - value
    relative_error: float


def _bit_string(name: str, q32: np.ndarray, fmt: FormatInfo) -> str:
    if name == "tf32":
        return format(int(q32.view(np.uint32)[0]) >> 13, "019b")
    raw = q32.astype(_DTYPES[name]) if not _is_int(name) else q32.astype(np.int64).astype(_DTYPES[name])
    word = {1: np.uint8, 2: np.uint16, 4: np.uint32}[raw.dtype.itemsize]
    return format(int(raw.view(word)[0]) & ((1 << fmt.bits) - 1), f"0{fmt.bits}b")


def decompose(value, name, saturate: bool = True) -> Decomposition:
    """Sign, exponent and mantissa bits of `value` rounded into `name` (bits read from the
    ml_dtypes array viewed as unsigned integers), the value they represent and the rounding error."""
    n, fmt = canonical(name), info(name)
    if not _check._is_real(value):
        raise ValueError(f"value must be a single real number; got {value!r}")
    q = quantize(np.array([float(value)]), n, saturate=saturate)
    raw = _bit_string(n, q, fmt)
    rep = float(q[0])
    err = rep - float(value)
    rel = abs(err) / abs(float(value)) if value != 0 else (0.0 if rep == 0 else np.inf)
    if _is_int(n):
        return Decomposition(n, float(value), raw, int(raw[0]), "", raw[1:], None, None, "integer", rep, err, rel)
    e, m = raw[1 : 1 + fmt.exponent_bits], raw[1 + fmt.exponent_bits :]
    biased = int(e, 2)
    kind = (
        "nan"
        if np.isnan(rep)
        else "inf"
        if np.isinf(rep)
        else "zero"
        if rep == 0
        else "subnormal"
        if biased == 0
        else "normal"
    )
    assert fmt.bias is not None  # every float format has one (None only for integers, returned above)
    unbiased = (1 - fmt.bias) if biased == 0 else biased - fmt.bias  # subnormals use 1 - bias
    return Decomposition(n, float(value), f"{raw[0]} {e} {m}", int(raw[0]), e, m, biased, unbiased, kind, rep, err, rel)


def all_values(name) -> np.ndarray:
    """Every finite value of a format of at most 8 bits, sorted (for plotting the number line)."""
    n, fmt = canonical(name), info(name)
    if fmt.bits > 8:
        raise ValueError(f"format {n!r} has {fmt.bits} bits; all_values lists formats of <= 8 bits")
    vals = np.arange(2**fmt.bits, dtype=np.uint8).view(_DTYPES[n]).astype(np.float64)
    return np.unique(vals[np.isfinite(vals)])


def table() -> list[dict]:
    """The formats table of chapter 5: bits, layout, range, precision, typical use (NAMES, no variants)."""
    rows = []
    for n in NAMES:
        f = info(n)
        rows.append(
            {
                "name": n,
                "bits": f.bits,
                "storage_bytes": f.storage_bytes,
                "exponent_bits": f.exponent_bits,
                "mantissa_bits": f.mantissa_bits,
                "max": f.max,
                "min_normal": f.min_normal,
                "eps": f.eps,
                "has_inf": f.has_inf,
                "has_nan": f.has_nan,
                "typical_use": f.typical_use,
            }
        )
    return rows
