"""Read a learner's answer as a physical quantity: ``2.6e9``, ``"2.6 GB"``, ``"≈ 12 hours"``, ``"$36"``.

Grammar (whitespace allowed between the parts)::

    quantity := [approx] [currency] number [multiplier] [unit]
    approx   := "≈" | "~" | "about" | "approx." | "approximately" | "around" | "roughly" | "circa"
    number   := digits with optional "," "_" or thin-space thousands groups, optional ".digits",
                optional "e±N" or "× 10^N" (also "x10**N", "·10⁻³")
    unit     := term ["/" term] | "%" | "x"       term := [prefix] base   ("per" means "/")

Bases: B/byte (SI prefixes k…Y and binary Ki…Ei: GB = 1e9 B, GiB = 2**30 B), bit/b (Gb = 1e9 bits),
s/min/h/day/week/month/year (and ms, µs, ns), FLOP (a count; FLOPs and flops are counts too, but
FLOPS in capitals is FLOP/s), $/USD, token/tok. Values come back in SI base units
(bytes, seconds, FLOP, US dollars, tokens) with their dimension, so "2.6 GB" and "2.42 GiB" are
different numbers and "12 hours" is not a size. Anything else raises `QuantityError` with a message
meant for the learner.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

YEAR = 365.25 * 86400.0


class QuantityError(ValueError):
    """The text is not a quantity this module understands; the message says why."""


# Dimension: a sorted tuple of (base, power), e.g. (("B", 1), ("s", -1)) for bytes per second.
def _dims(**powers) -> tuple:
    return tuple(sorted((k, v) for k, v in powers.items() if v))


KINDS = {  # kind -> (dimension, SI unit label, example the learner could write)
    "bytes": (_dims(B=1), "bytes", "1.5e9 or '1.5 GB'"),
    "seconds": (_dims(s=1), "seconds", "5400 or '1.5 h'"),
    "usd": (_dims(USD=1), "US dollars", "15 or '$15'"),
    "flop": (_dims(FLOP=1), "FLOP", "3e18 or '3 EFLOP'"),
    "flop_per_s": (_dims(FLOP=1, s=-1), "FLOP/s", "5e14 or '500 TFLOP/s'"),
    "bytes_per_s": (_dims(B=1, s=-1), "bytes/s", "2e12 or '2 TB/s'"),
    "flop_per_byte": (_dims(FLOP=1, B=-1), "FLOP/byte", "100 or '100 FLOP/byte'"),
    "tokens_per_s": (_dims(token=1, s=-1), "tokens/s", "50 or '50 tokens/s'"),
    "dimensionless": (_dims(), "(no unit)", "0.35, '35%' or '16x'"),
}
_DIM_WORDS = {  # how to name a dimension in a message
    _dims(B=1): "a size in bytes",
    _dims(s=1): "a time",
    _dims(USD=1): "an amount of money",
    _dims(FLOP=1): "a count of FLOP",
    _dims(FLOP=1, s=-1): "a rate in FLOP/s",
    _dims(B=1, s=-1): "a bandwidth in bytes/s",
    _dims(FLOP=1, B=-1): "an intensity in FLOP/byte",
    _dims(token=1, s=-1): "a rate in tokens/s",
    _dims(): "a plain number",
}

_SI_BIG = {"k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18, "Z": 1e21, "Y": 1e24}
_SI_SMALL = {"m": 1e-3, "u": 1e-6, "µ": 1e-6, "μ": 1e-6, "n": 1e-9, "p": 1e-12}
_BINARY = {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40, "Pi": 2.0**50, "Ei": 2.0**60}
_WORD_PREFIX = {
    "kilo": 1e3,
    "mega": 1e6,
    "giga": 1e9,
    "tera": 1e12,
    "peta": 1e15,
    "exa": 1e18,
    "kibi": 2.0**10,
    "mebi": 2.0**20,
    "gibi": 2.0**30,
    "tebi": 2.0**40,
    "pebi": 2.0**50,
    "milli": 1e-3,
    "micro": 1e-6,
    "nano": 1e-9,
}

# base symbol -> (factor to SI, dimension, which prefixes it takes)
_B, _S, _F = _dims(B=1), _dims(s=1), _dims(FLOP=1)
_BASES = {
    "B": (1.0, _B, "big+bin"),
    "byte": (1.0, _B, "word"),
    "bytes": (1.0, _B, "word"),
    "bit": (0.125, _B, "big+bin"),
    "bits": (0.125, _B, "big+bin"),
    "s": (1.0, _S, "small"),
    "sec": (1.0, _S, "small"),
    "secs": (1.0, _S, "small"),
    "second": (1.0, _S, "word"),
    "seconds": (1.0, _S, "word"),
    "min": (60.0, _S, ""),
    "mins": (60.0, _S, ""),
    "minute": (60.0, _S, ""),
    "minutes": (60.0, _S, ""),
    "h": (3600.0, _S, ""),
    "hr": (3600.0, _S, ""),
    "hrs": (3600.0, _S, ""),
    "hour": (3600.0, _S, ""),
    "hours": (3600.0, _S, ""),
    "d": (86400.0, _S, ""),
    "day": (86400.0, _S, ""),
    "days": (86400.0, _S, ""),
    "week": (604800.0, _S, ""),
    "weeks": (604800.0, _S, ""),
    "month": (YEAR / 12, _S, ""),
    "months": (YEAR / 12, _S, ""),
    "yr": (YEAR, _S, ""),
    "year": (YEAR, _S, ""),
    "years": (YEAR, _S, ""),
    "FLOP": (1.0, _F, "big"),
    "FLOPs": (1.0, _F, "big"),
    "flop": (1.0, _F, "big+word"),
    "flops": (1.0, _F, "big"),
    "Flop": (1.0, _F, "big"),
    "Flops": (1.0, _F, "big"),
    "OP": (1.0, _F, "big"),
    "OPs": (1.0, _F, "big"),
    "FLOPS": (1.0, _dims(FLOP=1, s=-1), "big"),
    "OPS": (1.0, _dims(FLOP=1, s=-1), "big"),
    "USD": (1.0, _dims(USD=1), ""),
    "usd": (1.0, _dims(USD=1), ""),
    "$": (1.0, _dims(USD=1), ""),
    "dollar": (1.0, _dims(USD=1), ""),
    "dollars": (1.0, _dims(USD=1), ""),
    "token": (1.0, _dims(token=1), "big"),
    "tokens": (1.0, _dims(token=1), "big"),
    "tok": (1.0, _dims(token=1), "big"),
    "toks": (1.0, _dims(token=1), "big"),
    "%": (0.01, _dims(), ""),
    "x": (1.0, _dims(), ""),
    "×": (1.0, _dims(), ""),
    "times": (1.0, _dims(), ""),
}
_AMBIGUOUS = {"kb", "mb", "gb", "tb", "pb", "eb"}  # bytes or bits? say which
_MULTIPLIER_WORDS = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}
_APPROX = re.compile(r"^(≈|~|≃|about|approx\.?|approximately|around|roughly|circa|ca\.)\s*", re.I)
_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
_NUMBER = re.compile(
    r"^(?P<sign>[+-]?)\s*(?P<mant>(?:\d{1,3}(?:[,_ \u202f\u2009\u00a0]\d{3})+|\d+)(?:\.\d*)?|\.\d+)"
    r"(?:[eE](?P<exp>[+-]?\d+))?"
    r"(?:\s*(?:[x×*·]|\\times)\s*10\s*(?:\^|\*\*)?\s*\{?(?P<pow>[+-]?\d+|[⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺]+)\}?)?"
)


@dataclass(frozen=True)
class Quantity:
    """A parsed answer: `value` in SI base units of `dims`; `unit` as written (None if bare)."""

    value: float
    dims: tuple
    unit: str | None = None


def dims_words(dims: tuple) -> str:
    """'a size in bytes', 'a time', ... for a dimension tuple."""
    return _DIM_WORDS.get(dims, "a quantity in " + " ".join(f"{b}^{p}" for b, p in dims))


def _term(term: str) -> tuple[float, tuple]:
    """Factor and dimension of one unit term such as 'GiB', 'ms', 'TFLOP', 'gigabytes'."""
    if term in _BASES:
        return _BASES[term][:2]
    low = term.lower()
    if low in _BASES and _BASES[low][2] in ("word", "", "big+word"):
        return _BASES[low][:2]
    for word, factor in _WORD_PREFIX.items():  # gigabytes, mebibytes, milliseconds
        if low.startswith(word) and low[len(word) :] in ("byte", "bytes", "bit", "bits", "second", "seconds", "flop"):
            base_factor, dims, _ = _BASES[low[len(word) :]]
            return factor * base_factor, dims
    for table, allowed in ((_BINARY, "bin"), (_SI_BIG, "big"), (_SI_SMALL, "small")):
        for prefix, factor in table.items():
            rest = term[len(prefix) :]
            if term.startswith(prefix) and rest in _BASES and allowed in _BASES[rest][2]:
                return factor * _BASES[rest][0], _BASES[rest][1]
            if (
                term.startswith(prefix) and rest == "b" and allowed in ("big", "bin") and prefix[0].isupper()
            ):  # Gb, Mb: bits (network convention)
                return factor * 0.125, _B
    if term in _AMBIGUOUS:
        big = term[0].upper()
        raise QuantityError(f"'{term}' is ambiguous: write {big}B (bytes), {big}iB (binary bytes) or {big}bit (bits)")
    raise QuantityError(f"unknown unit '{term}'")


def parse_unit(text: str) -> tuple[float, tuple]:
    """Factor to SI and dimension of a unit string: 'GB/s' -> (1e9, (('B',1),('s',-1)))."""
    unit = re.sub(r"\s+per\s+", "/", text.strip(), flags=re.I).replace(" / ", "/").strip(" .")
    if unit in ("", "1"):
        return 1.0, _dims()
    parts = [p.strip() for p in unit.split("/")]
    if len(parts) > 2 or not all(parts):
        raise QuantityError(f"cannot read the unit '{text.strip()}'")
    factor, dims = _term(parts[0])
    if len(parts) == 2:
        f2, d2 = _term(parts[1])
        powers = dict(dims)
        for base, p in d2:
            powers[base] = powers.get(base, 0) - p
        factor, dims = factor / f2, _dims(**powers)
    return factor, dims


def parse(text) -> Quantity:
    """Parse a quantity string (see the module docstring); numbers pass through as dimensionless."""
    if isinstance(text, bool) or not isinstance(text, (str, int, float)):
        raise QuantityError(f"expected a number or a string, got {type(text).__name__}")
    if not isinstance(text, str):
        return Quantity(float(text), _dims(), None)
    s = " ".join(text.replace("−", "-").replace("–", "-").split())
    while (m := _APPROX.match(s)) is not None and m.group(0):
        s = s[m.end() :]
    currency = False
    for sym in ("US$", "$", "USD "):
        if s.startswith(sym):
            s, currency = s[len(sym) :].lstrip(), True
            break
    m = _NUMBER.match(s)
    if not m:
        raise QuantityError(f"'{text}' does not start with a number")
    mant = re.sub(r"[,_ \u202f\u2009\u00a0]", "", m.group("mant"))
    try:
        exponent = int(m.group("exp") or 0) + int((m.group("pow") or "0").translate(_SUPERSCRIPT))
    except ValueError:  # "10⁻" or "10⁺⁻3": a sign without digits
        raise QuantityError(f"'{text}': the power of ten has no digits (write e.g. 1.07e-3 or 1.07 × 10⁻³)") from None
    value = float(f"{mant}e{exponent}") if abs(exponent) < 10_000 else math.inf
    if m.group("sign") == "-":
        value = -value
    rest = s[m.end() :].strip()
    if re.match(r"^,\d", rest):
        raise QuantityError(f"'{text}': use a point for decimals (2.6, not 2,6)")
    word = re.match(r"^(thousand|million|billion|trillion)\b\s*", rest, re.I)
    if word:
        value *= _MULTIPLIER_WORDS[word.group(1).lower()]
        rest = rest[word.end() :]
    if currency:
        if rest not in ("", "USD", "usd", "dollars"):
            raise QuantityError(f"'{text}': expected nothing after the amount of money")
        rest = "USD"
    factor, dims = parse_unit(rest)
    value *= factor
    if not math.isfinite(value):
        raise QuantityError(f"'{text}' is not a finite number")
    return Quantity(value, dims, rest or None)


def kind_dims(kind: str) -> tuple:
    """Dimension of a numeric check kind; ValueError for an unknown kind."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}; got {kind!r}")
    return KINDS[kind][0]


def to_si(text, kind: str) -> float:
    """The value of `text` (number or string) in the SI unit of `kind`; a bare number is taken as
    already in that unit. QuantityError if the unit has another dimension."""
    want = kind_dims(kind)
    q = parse(text)
    if q.unit is None:
        return q.value
    if q.dims != want:
        raise QuantityError(f"'{text}' is {dims_words(q.dims)}")
    return q.value
