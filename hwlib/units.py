"""SI constants and human-readable formatting.

hwlib computes in SI base units (bytes, FLOP, seconds, FLOP/s, bytes/s) and only turns numbers into
human units when printing. Decimal prefixes (GB = 1e9 bytes) and binary ones (GiB = 2**30 bytes)
differ by 7 % at the giga scale, so every string here is labelled with the one it uses.

>>> format_bytes(14e9), format_bytes(14e9, binary=True)
('14.0 GB', '13.0 GiB')
>>> format_rate(989.4e12), format_bandwidth(3.35e12), format_flops(3.14e23)
('989 TFLOP/s', '3.35 TB/s', '3.14e23 FLOP')

For prose (a number a reader reads in a sentence) use `format_number` / `format_quantity`: three
significant figures, digits grouped, words for millions to trillions, "× 10ⁿ" beyond, never
e-notation. For a table column use one unit for every row: `format_in(x, "GB")`, with
`common_unit(values)` to choose it.

>>> format_number(530055), format_number(3.77e15), format_quantity(2.41e11, "FLOP")
('530 000', '3.77 × 10¹⁵', '241 billion FLOP')
>>> format_in(50 * 2**20, "MB"), format_in(52.4e6, "MB")       # one L2, one unit
('52.4 MB', '52.4 MB')
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

_SI_PREFIXES = [
    (1e24, "Y"),
    (1e21, "Z"),
    (1e18, "E"),
    (1e15, "P"),
    (1e12, "T"),
    (1e9, "G"),
    (1e6, "M"),
    (1e3, "k"),
    (1.0, ""),
    (1e-3, "m"),
    (1e-6, "µ"),
    (1e-9, "n"),
    (1e-12, "p"),
]
_IEC_PREFIXES = [(2.0**50, "Pi"), (2.0**40, "Ti"), (2.0**30, "Gi"), (2.0**20, "Mi"), (2.0**10, "Ki"), (1.0, "")]
_WORDS = [(1e12, "trillion"), (1e9, "billion"), (1e6, "million")]
_SUPERSCRIPT_DIGITS = {
    "-": "⁻",
    "0": "⁰",
    "1": "¹",
    "2": "²",
    "3": "³",
    "4": "⁴",
    "5": "⁵",
    "6": "⁶",
    "7": "⁷",
    "8": "⁸",
    "9": "⁹",
}
_FIXED_UNITS = {
    "B": 1.0,
    "kB": 1e3,
    "KB": 1e3,
    "MB": 1e6,
    "GB": 1e9,
    "TB": 1e12,
    "PB": 1e15,
    "KiB": 2.0**10,
    "MiB": 2.0**20,
    "GiB": 2.0**30,
    "TiB": 2.0**40,
    "PiB": 2.0**50,
    "B/s": 1.0,
    "MB/s": 1e6,
    "GB/s": 1e9,
    "TB/s": 1e12,
    "FLOP/s": 1.0,
    "GFLOP/s": 1e9,
    "TFLOP/s": 1e12,
    "PFLOP/s": 1e15,
    "ns": 1e-9,
    "µs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "min": 60.0,
    "h": 3600.0,
    "days": 86400.0,
    "years": 365.25 * 86400.0,
}
_TIME_UNITS = [
    (YEAR, "years"),
    (DAY, "days"),
    (HOUR, "h"),
    (MINUTE, "min"),
    (1.0, "s"),
    (1e-3, "ms"),
    (1e-6, "µs"),
    (1e-9, "ns"),
]


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
    for factor, prefix in prefixes:  # noqa: B007 (the prefix the loop stops at is used below)
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


def _superscript(n: int) -> str:
    return "".join([_SUPERSCRIPT_DIGITS[c] for c in str(n)])


def round_sig(x, digits: int = 3) -> float:
    """`x` rounded to `digits` significant figures: 530055 -> 530000.0, 0.012345 -> 0.0123."""
    x, d = _scalar("x", x), _digits(digits)
    return float(f"{x:.{d - 1}e}")


def format_number(x, digits: int = 3) -> str:
    """A number for prose, with `digits` significant figures and never in e-notation:
    below a million, digits grouped by narrow no-break spaces (530055 -> "530 000", 63.2 -> "63.2");
    then words (3.77e9 -> "3.77 billion", 1.01e14 -> "101 trillion"); from 10¹⁵ on, and below 10⁻⁴,
    "3.77 × 10¹⁵". Negative values keep their sign."""
    x, d = _scalar("x", x), _digits(digits)
    if x == 0:
        return "0"
    sign, mag = ("-" if x < 0 else ""), float(f"{abs(x):.{d - 1}e}")
    if mag >= 1e15 or mag < 1e-4:
        mantissa, exponent = f"{mag:.{d - 1}e}".split("e")
        return f"{sign}{mantissa} × 10{_superscript(int(exponent))}"
    for factor, word in _WORDS:
        if mag >= factor:
            return f"{sign}{_sig(mag / factor, d)} {word}"
    if mag >= 1000:
        return sign + f"{mag:,.0f}".replace(",", "\u202f")
    return sign + _sig(mag, d)


def format_quantity(x, unit: str, digits: int = 3) -> str:
    """`format_number(x)` followed by a unit, for prose: 2.41e11, "FLOP" -> "241 billion FLOP";
    530055, "tokens per second" -> "530 000 tokens per second"."""
    return f"{format_number(x, digits)} {unit}".rstrip()


def format_in(x, unit: str, digits: int = 3) -> str:
    """`x` (SI base units) expressed in one fixed `unit`, so that every row of a table column uses the
    same one: 52.4e6, "MB" -> "52.4 MB"; 50 * 2**20, "MiB" -> "50.0 MiB"; 131072, "KiB" -> "128 KiB".
    Byte units (B, kB, MB, GB, TB, PB; KiB … PiB), B/s, FLOP/s (G, T, P) and time units (ns … years).
    Values of 10^digits and more are shown whole with grouped digits."""
    if unit not in _FIXED_UNITS:
        raise ValueError(f"unit must be one of {', '.join(_FIXED_UNITS)}; got {unit!r}")
    v, d = _scalar("x", x) / _FIXED_UNITS[unit], _digits(digits)
    if v == 0:
        return f"0 {unit}"
    if abs(v) >= 10**d:
        return f"{v:,.0f}".replace(",", "\u202f") + f" {unit}"
    return f"{_sig(v, d)} {unit}"


def common_unit(values, binary: bool = False) -> str:
    """The byte unit for a table column of byte counts: the largest prefix the smallest nonzero
    value still fills once (GB for 1.07e9 and 84.8e9; MB for 4e6 and 52e6). `binary`: KiB … PiB."""
    nonzero = [abs(_scalar("values", v)) for v in values if v != 0]
    if not nonzero:
        return "B"
    low = min(nonzero)
    prefixes = _IEC_PREFIXES if binary else [p for p in _SI_PREFIXES if p[0] >= 1 and p[0] <= 1e15]
    for factor, prefix in prefixes:  # noqa: B007 (the prefix the loop stops at is used below)
        if low >= factor:
            return prefix + "B"
    return "B"


def format_flops(x, digits: int = 3) -> str:
    """A FLOP count (not a rate) in scientific notation: 3.14e23 -> "3.14e23 FLOP", for tables and
    the command line. In prose use `format_quantity(x, "FLOP")` ("314 × 10²¹" style, no e-notation).
    For FLOP/s use `format_rate`; keeping the two apart avoids the FLOPs-vs-FLOP/s mix-up."""
    x, d = _scalar("x", x, nonnegative=True), _digits(digits)
    if x == 0:
        return "0 FLOP"
    mantissa, exponent = f"{x:.{d - 1}e}".split("e")
    return f"{mantissa}e{int(exponent)} FLOP"


def format_seconds(s, digits: int = 3) -> str:
    """A duration in the largest unit it fills at least once: ns, µs, ms, s, min, h, days, years
    (Julian, 365.25 days): 44280 -> "12.3 h", 6.05e6 -> "70.0 days". A thousand years and more
    read like `format_number`: 1.19e23 s -> "3.77 × 10¹⁵ years", never sixteen digits."""
    s, d = _scalar("s", s, nonnegative=True), _digits(digits)
    if s == 0:
        return "0 s"
    for factor, unit in _TIME_UNITS:  # noqa: B007 (the unit the loop stops at is used below)
        if float(_sig(s / factor, d)) >= 1:
            break
    if unit == "years" and float(_sig(s / factor, d)) >= 1000:
        return f"{format_number(s / factor, d)} years"
    return f"{_sig(s / factor, d)} {unit}"


def format_usd(x) -> str:
    """US dollars: cents below $100 ("$36.00"), whole dollars with separators below a million
    ("$12,345"), then "$4.56 million", "$1.23 billion", "$101 trillion", and from 10¹⁵ on
    "$3.77 × 10¹⁵" (never "$1.01e+05 billion")."""
    x = _scalar("x", x)
    sign, mag = ("-" if x < 0 else ""), abs(x)
    if float(f"{mag:.2e}") >= 1e15:
        return f"{sign}${format_number(mag, 3)}"
    if float(f"{mag:.2e}") >= 1e12:
        return f"{sign}${_sig(mag / 1e12, 3)} trillion"
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


def format_pct(x, decimals: int = 0) -> str:
    """A fraction as a percentage for prose, with a space before the sign: 0.4 -> '40 %',
    format_pct(0.0123, 1) -> '1.2 %'."""
    value = _scalar("x", x)
    return f"{100 * value:.{_check.integer('decimals', decimals, minimum=0)}f} %"


def format_power_of_two(x) -> str:
    """An exact power of two as 2 with a superscript exponent: 524288 -> '2¹⁹', 0.25 -> '2⁻²'.
    ValueError naming the value if it is not a power of two."""
    value = _scalar("x", x, nonnegative=True)
    exponent = math.log2(value) if value > 0 else math.nan
    if not (math.isfinite(exponent) and exponent == int(exponent)):
        raise ValueError(f"x must be an exact power of two (1, 2, 4, 0.5, ...); got {x!r}")
    return "2" + str(int(exponent)).translate(_SUPERSCRIPT)


def format_sci_html(x, digits: int = 2) -> str:
    """A number for an HTML table: whole numbers below a million grouped (format_count), numbers from
    0.01 to 1e5 with digits + 1 significant figures, others as 'm&nbsp;×&nbsp;10<sup>e</sup>' with
    `digits` significant figures: 3.4e38 -> '3.4&nbsp;×&nbsp;10<sup>38</sup>'."""
    value, d = _scalar("x", x), _digits(digits)
    if value == int(value) and abs(value) < 1e6:
        return format_count(value)
    if 1e-2 <= abs(value) < 1e5:
        return f"{value:.{d + 1}g}"
    mantissa, exponent = f"{value:.{d - 1}e}".split("e")
    return f"{mantissa}&nbsp;×&nbsp;10<sup>{int(exponent)}</sup>"


_COUNT_SUFFIXES = {"k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12}
_DIGITS = "0123456789"


def _is_decimal(s: str) -> bool:
    """True for a plain decimal number: [+-]digits[.digits][e[+-]digits] (no inf, nan or hex)."""
    i, n, digits = 0, len(s), 0
    if i < n and s[i] in "+-":
        i += 1
    while i < n and s[i] in _DIGITS:
        i, digits = i + 1, digits + 1
    if i < n and s[i] == ".":
        i += 1
        while i < n and s[i] in _DIGITS:
            i, digits = i + 1, digits + 1
    if digits == 0:
        return False
    if i < n and s[i] in "eE":
        i += 1
        if i < n and s[i] in "+-":
            i += 1
        exponent = 0
        while i < n and s[i] in _DIGITS:
            i, exponent = i + 1, exponent + 1
        if exponent == 0:
            return False
    return i == n


def parse_number(text, name: str = "value", context: bool = False) -> float:
    """A number as people type it, for the calculators and the command line: '7e9', '350M', '7B',
    '15T', '16_384', '1,000' (k, M, B/G, T; "m" is million, never milli) and '40%' -> 0.4.
    With `context=True` (a context length, as model cards write it) 'k' is 1024: '4k' -> 4096.
    Empty or unreadable text raises ValueError naming `name` and what is accepted."""
    if _check._is_real(text):
        return float(text)
    if not isinstance(text, str):
        raise ValueError(f"{name} must be a number or text such as 7e9, 350M or 15T; got {text!r}")
    s = text.strip().replace("_", "").replace(",", "")
    if s == "":
        raise ValueError(f"{name} is empty; give a number such as 7e9, 350M, 7B, 15T or 40%")
    last = s[-1:].lower()
    if last == "%" and _is_decimal(s[:-1].strip()):
        return float(s[:-1].strip()) / 100.0
    scale = 1.0
    if last in _COUNT_SUFFIXES:
        scale = 1024.0 if context and last == "k" else _COUNT_SUFFIXES[last]
        s = s[:-1].strip()
    if not _is_decimal(s):
        raise ValueError(
            f"{name}: cannot read {text!r} as a number; accepted: 7e9, 350M, 7B, 15T, "
            f"16_384, 40%" + (", 4k (= 4096)" if context else "")
        )
    return float(s) * scale
