"""SI constants and human-readable formatting.

hwlib computes in SI base units (bytes, FLOP, seconds, FLOP/s, bytes/s) and only turns numbers into
human units when printing. Decimal prefixes (GB = 1e9 bytes) and binary ones (GiB = 2**30 bytes)
differ by 7 % at the giga scale, so every string here is labelled with the one it uses.

>>> format_bytes(14e9), format_bytes(14e9, binary=True)
('14.0 GB', '13.0 GiB')
>>> format_rate(989.4e12), format_bandwidth(3.35e12), format_flops(3.14e23)
('989 TFLOP/s', '3.35 TB/s', '3.14e23 FLOP')
"""
from __future__ import annotations

import math

from . import _check

# Decimal (SI) byte multiples.
KB, MB, GB, TB, PB = 1e3, 1e6, 1e9, 1e12, 1e15
# Binary (IEC) byte multiples.
KiB, MiB, GiB, TiB, PiB = 2**10, 2**20, 2**30, 2**40, 2**50
# SI prefixes as plain factors, e.g. 989 * TERA FLOP/s.
KILO, MEGA, GIGA, TERA, PETA, EXA = 1e3, 1e6, 1e9, 1e12, 1e15, 1e18
# Time, in seconds. A year is the Julian year, 365.25 days.
MINUTE, HOUR, DAY = 60.0, 3600.0, 86400.0
YEAR = 365.25 * DAY
PF_DAY = 1e15 * DAY
"""One petaFLOP/s sustained for a day, in FLOP (8.64e19), the unit of GPT-3's Table D.1."""

_SI_PREFIXES = [(1e24, "Y"), (1e21, "Z"), (1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"),
                (1e6, "M"), (1e3, "k"), (1.0, ""), (1e-3, "m"), (1e-6, "µ"), (1e-9, "n"),
                (1e-12, "p")]
_IEC_PREFIXES = [(2.0**50, "Pi"), (2.0**40, "Ti"), (2.0**30, "Gi"), (2.0**20, "Mi"),
                 (2.0**10, "Ki"), (1.0, "")]
_TIME_UNITS = [(YEAR, "years"), (DAY, "days"), (HOUR, "h"), (MINUTE, "min"), (1.0, "s"),
               (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")]


def _scalar(name: str, x, nonnegative: bool = False) -> float:
    """A finite real number (>= 0 when `nonnegative`), else ValueError naming `name`."""
    if not _check._is_real(x) or not math.isfinite(float(x)) or (nonnegative and x < 0):
        accepted = "a finite number >= 0" if nonnegative else "a finite number"
        raise ValueError(f"{name} must be {accepted}; got {x!r}")
    return float(x)


def _digits(digits) -> int:
    return _check.integer("digits", digits, minimum=1)


def _sig(x: float, digits: int) -> str:
    """`x` with `digits` significant digits, keeping trailing zeros: 14 -> '14.0' for 3 digits."""
    r = float(f"{x:.{digits - 1}e}")
    if r == 0:
        return "0"
    decimals = max(digits - 1 - math.floor(math.log10(abs(r))), 0)
    return f"{r:.{decimals}f}"


def _scaled(x: float, unit: str, prefixes, digits: int) -> str:
    """Use the largest prefix that leaves a mantissa >= 1 after rounding (999.96 kB -> 1.00 MB)."""
    if x == 0:
        return f"0 {unit}"
    sign, mag = ("-" if x < 0 else ""), abs(x)
    for factor, prefix in prefixes:
        if float(_sig(mag / factor, digits)) >= 1:
            break
    return f"{sign}{_sig(mag / factor, digits)} {prefix}{unit}"


def format_si(x, unit: str, digits: int = 3) -> str:
    """`x` with an SI prefix from pico to yotta and `digits` significant digits: 3.35e12, "B/s"
    -> "3.35 TB/s"; 2.5e-7, "s" -> "250 ns". Negative values keep their sign."""
    return _scaled(_scalar("x", x), unit, _SI_PREFIXES, _digits(digits))


def format_bytes(n, binary: bool = False, digits: int = 3) -> str:
    """A byte count with decimal prefixes (GB = 1e9 B) or, with `binary=True`, IEC prefixes
    (GiB = 2**30 B): 14e9 -> "14.0 GB" or "13.0 GiB". Never smaller than the byte."""
    prefixes = _IEC_PREFIXES if binary else [p for p in _SI_PREFIXES if p[0] >= 1]
    return _scaled(_scalar("n", n, nonnegative=True), "B", prefixes, _digits(digits))


def format_rate(x, unit: str = "FLOP/s", digits: int = 3) -> str:
    """A rate with an SI prefix: 989.4e12 -> "989 TFLOP/s"."""
    return format_si(x, unit, digits)


def format_bandwidth(x, digits: int = 3) -> str:
    """Bytes per second with decimal prefixes: 3.35e12 -> "3.35 TB/s"."""
    return format_si(_scalar("x", x, nonnegative=True), "B/s", digits)


def format_flops(x, digits: int = 3) -> str:
    """A FLOP count (not a rate) in scientific notation: 3.14e23 -> "3.14e23 FLOP".
    For FLOP/s use `format_rate`; keeping the two apart avoids the FLOPs-vs-FLOP/s mix-up."""
    x, d = _scalar("x", x, nonnegative=True), _digits(digits)
    if x == 0:
        return "0 FLOP"
    mantissa, exponent = f"{x:.{d - 1}e}".split("e")
    return f"{mantissa}e{int(exponent)} FLOP"


def format_seconds(s, digits: int = 3) -> str:
    """A duration in the largest unit it fills at least once: ns, µs, ms, s, min, h, days, years
    (Julian, 365.25 days): 44280 -> "12.3 h", 6.05e6 -> "70.0 days"."""
    s, d = _scalar("s", s, nonnegative=True), _digits(digits)
    if s == 0:
        return "0 s"
    for factor, unit in _TIME_UNITS:
        if float(_sig(s / factor, d)) >= 1:
            break
    return f"{_sig(s / factor, d)} {unit}"


def format_usd(x) -> str:
    """US dollars: cents below $100 ("$36.00"), whole dollars with separators below a million
    ("$12,345"), then "$4.56 million" / "$1.23 billion"."""
    x = _scalar("x", x)
    sign, mag = ("-" if x < 0 else ""), abs(x)
    if mag >= 1e9:
        return f"{sign}${mag / 1e9:.3g} billion"
    if mag >= 1e6:
        return f"{sign}${mag / 1e6:.3g} million"
    if mag >= 100:
        return f"{sign}${mag:,.0f}"
    return f"{sign}${mag:,.2f}"


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def format_count(x) -> str:
    """A whole number with SI digit grouping by narrow no-break spaces: 16384 -> '16 384'.

    (A comma would also be ambiguous in prose glued by myst-nb, which re-reads '16,384' as a tuple.)"""
    value = _scalar("x", x)
    return f"{value:,.0f}".replace(",", "\u202f")


def format_sci(x, digits: int = 3) -> str:
    """Scientific notation as text with a superscript exponent: 3.96e14 -> '3.96 × 10¹⁴'."""
    value = _scalar("x", x)
    mantissa, exponent = f"{value:.{_digits(digits) - 1}e}".split("e")
    return f"{mantissa} × 10{str(int(exponent)).translate(_SUPERSCRIPT)}"
