"""Input validation shared by every hwlib calculator.

Bad input gets a clear error, never a silent wrong number: each helper names the argument,
shows the value it got and says what is accepted.
"""

from __future__ import annotations

import difflib
import math
import numbers

# NumPy is imported only when an array comes in, so scalar calculators also run where NumPy is absent
# (e.g. the in-browser calculators of the static book).


def _is_real(x) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def _as_checked(name: str, x, accepted: str, ok):
    """Return `x` as float (scalar) or float ndarray after checking `ok(array)` element-wise."""
    if _is_real(x):
        value = float(x)
        if math.isnan(value) or math.isinf(value) or not ok(value):
            raise ValueError(f"{name} must be {accepted}; got {x!r}")
        return value
    if isinstance(x, (list, tuple)) or type(x).__module__ == "numpy":
        import numpy as np

        arr = np.asarray(x)
        if arr.ndim == 0 and np.issubdtype(arr.dtype, np.number) and arr.dtype != bool:
            return _as_checked(name, arr.item(), accepted, ok)
        if arr.dtype == bool or not np.issubdtype(arr.dtype, np.number):
            raise ValueError(f"{name} must be {accepted} (numbers); got an array of {arr.dtype}")
        arr = arr.astype(np.float64)
        bad = ~np.isfinite(arr) | ~ok(arr)
        if bad.any():
            raise ValueError(f"{name} must be {accepted}; got {arr[bad].ravel()[0]!r} among {arr.size} values")
        return arr
    raise ValueError(f"{name} must be {accepted}; got {type(x).__name__} {x!r}")


def positive(name: str, x):
    """A finite number (or array of them) > 0."""
    return _as_checked(name, x, "a finite number > 0", lambda a: a > 0)


def nonnegative(name: str, x):
    """A finite number (or array of them) >= 0."""
    return _as_checked(name, x, "a finite number >= 0", lambda a: a >= 0)


def fraction(name: str, x):
    """A number in (0, 1], e.g. an MFU or a scaling efficiency."""
    return _as_checked(name, x, "a fraction in (0, 1] (e.g. 0.4 for 40 %)", lambda a: (a > 0) & (a <= 1))


def integer(name: str, x, minimum: int = 1) -> int:
    """A whole number >= minimum (floats with an integral value are accepted)."""
    if _is_real(x) and not (isinstance(x, float) and (math.isnan(x) or math.isinf(x))) and float(x) == int(x):
        if int(x) >= minimum:
            return int(x)
    raise ValueError(f"{name} must be a whole number >= {minimum}; got {x!r}")


def normalize(name: str) -> str:
    """Lower-case, drop spaces, dashes, underscores: "H100-SXM" -> "h100sxm"."""
    return "".join(ch for ch in str(name).lower() if ch.isalnum() or ch == ".")


def choice(kind: str, value, options, aliases: dict | None = None, error=ValueError) -> str:
    """Return the canonical option for `value` (normalised, aliases allowed) or raise `error`
    naming the closest accepted options."""
    table = {normalize(o): o for o in options}
    for alias, target in (aliases or {}).items():
        table.setdefault(normalize(alias), target)
    key = normalize(value) if isinstance(value, str) else None
    if key in table:
        return table[key]
    raise error(f"unknown {kind} {value!r}{did_you_mean(key or '', table)} Accepted: {', '.join(map(str, options))}")


def did_you_mean(key: str, lookup: dict) -> str:
    """The hint of every "unknown name" error: "; did you mean 'A', 'B'?" naming the canonical names
    (`lookup`: normalised label -> canonical name) of the up to three labels closest to the normalised
    `key` (difflib ratio >= 0.5), sorted; "" when none is close."""
    close = difflib.get_close_matches(key, list(lookup), n=3, cutoff=0.5)
    return f"; did you mean {', '.join(sorted({repr(lookup[c]) for c in close}))}?" if close else ""
