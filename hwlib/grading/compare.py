"""Judge one extracted answer against one check, in the grader's process.

`judge(check, entry, expected)` returns a `Verdict`: score, whether it passed, and a message for the
learner that says what was expected in kind and unit and gives the hint, but never the expected value
of a hidden check. Nothing here raises on bad learner input.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from . import quantity, spec
from .spec import Check

_TRUE = {"true", "yes", "y"}
_FALSE = {"false", "no", "n"}


@dataclass(frozen=True)
class Verdict:
    name: str
    score: float
    max_score: float
    passed: bool
    answered: bool
    message: str


def describe(check: Check) -> str:
    """What the answer should look like, e.g. "a size in bytes (e.g. 1.5e9 or '1.5 GB')"."""
    if check.kind in quantity.KINDS:
        dims, _unit, example = quantity.KINDS[check.kind]
        return f"{quantity.dims_words(dims)} (e.g. {example})"
    if check.kind == "bool":
        return "True or False"
    if check.kind == "choice":
        return "one of " + ", ".join(repr(c) for c in check.choices)
    if check.kind == "manual":
        return "a written answer (a string), scored by hand"
    if check.kind == "receipt":
        return "the receipt made by hwlib.grading.receipt.make (a JSON string)"
    return "a string"


def _show(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _num(x: float) -> str:
    """Short form: 650000000.0 -> '6.5e8', 12.0 -> '12'."""
    return f"{x:.4g}".replace("e+0", "e").replace("e+", "e").replace("e-0", "e-")


def _si(value, kind: str) -> str:
    unit = quantity.KINDS[kind][1]
    return f"{_num(value)} {unit}" if unit != "(no unit)" else _num(value)


_MULTIPLIERS = [  # (got / expected, what the learner probably did): a number without its prefix
    (1e-3, "a number in k-units without the unit"),
    (1e-6, "a number in M-units without the unit"),
    (1e-9, "a number in G-units without the unit (write e.g. '2.5 GB')"),
    (1e-12, "a number in T-units without the unit"),
    (1e-15, "a number in P-units without the unit"),
]
_BYTES = [  # only for sizes and bandwidths
    (2**30 / 1e9, 0.003, "GiB where GB was meant (or the reverse)"),
    (1e9 / 2**30, 0.003, "GB where GiB was meant"),
    (2**40 / 1e12, 0.003, "TiB where TB was meant (or the reverse)"),
    (1e12 / 2**40, 0.003, "TB where TiB was meant"),
    (8.0, 0.005, "bits where bytes were meant (a count in bits is 8 times the bytes)"),
    (0.125, 0.005, "bytes divided by 8 once too often, or bits where bytes were meant"),
]
_TIMES = [  # only for times
    (1 / 60, "minutes without the unit"),
    (1 / 3600, "hours without the unit"),
    (1 / 86400, "days without the unit"),
    (1e3, "milliseconds without the unit"),
    (1e6, "microseconds without the unit"),
    (1e9, "nanoseconds without the unit"),
]
SLIP_WINDOW = 0.005  # a slip is suggested only when the ratio is this close to the unit's factor


def slips_for(kind: str, want: float) -> list:
    """[(factor, window, what), ...]: the unit slips worth suggesting for an answer of `kind`.
    Only quantities with units have unit slips: never dollars, and for a plain number only a
    percentage written for a fraction (an expected value between 0 and 1)."""
    if kind == "dimensionless":
        return [(100.0, SLIP_WINDOW, "a percentage where a fraction was meant")] if 0 < abs(want) <= 1 else []
    if kind not in quantity.KINDS or kind == "usd":
        return []
    out = [(f, SLIP_WINDOW, what) for f, what in _MULTIPLIERS]
    if kind in ("bytes", "bytes_per_s"):
        out += _BYTES
    if kind == "seconds":
        out += [(f, SLIP_WINDOW, what) for f, what in _TIMES]
    return out


def _scale_note(got: float, want: float, kind: str) -> str:
    """For public checks: spot a unit slip (GB vs GiB, a missing 1e9, bits vs bytes, hours, %)."""
    if want == 0 or got == 0:
        return ""
    ratio = got / want
    for factor, window, what in slips_for(kind, want):
        if abs(ratio / factor - 1) <= window:
            return f" Your value would be right if it were off by that unit: it looks like {what}."
    return ""


def _mistake_note(check: Check, got, mistakes) -> str:
    """The diagnosis of a known mistake that `got` (SI float, bool or normalised text) equals."""
    for value, says in mistakes or ():
        if isinstance(value, list) or isinstance(got, list):
            continue
        if isinstance(value, tuple):  # accepted strings of a choice/string mistake
            same = isinstance(got, str) and got in {" ".join(a.split()).casefold() for a in value}
        elif isinstance(value, bool) or isinstance(got, bool):
            same = isinstance(value, bool) and isinstance(got, bool) and value == got
        elif isinstance(got, str):
            same = False
        else:
            same = abs(got - value) <= check.atol + max(check.rtol, 1e-9) * abs(value)
        if same:
            return f" {says}"
    return ""


def _numeric(check: Check, raw, want, public: bool, mistakes=None):
    """(passed, message) for a number or quantity string against `want` (SI float or list)."""
    if isinstance(want, list):
        if not isinstance(raw, list) or len(raw) != len(want):
            return False, f"expected a list of {len(want)} values, each {describe(check)}; got {_show(raw)}"
        results = [_numeric(check, r, w, public) for r, w in zip(raw, want)]
        bad = [i for i, (ok, _) in enumerate(results) if not ok]
        if not bad:
            return True, "all values correct"
        return False, f"item {bad[0] + 1} of {len(want)}: {results[bad[0]][1]}"
    if isinstance(raw, bool):
        return False, f"{_show(raw)} is a truth value; expected {describe(check)}"
    if isinstance(raw, str) and raw.strip().lower() in ("nan", "inf", "-inf"):
        return False, f"{raw} is not a finite number; expected {describe(check)}"
    try:
        got = quantity.to_si(raw, check.kind)
    except quantity.QuantityError as exc:
        return False, f"{exc}; expected {describe(check)}."
    shown = _show(raw) if isinstance(raw, str) else _si(got, check.kind)
    if abs(got - want) <= check.atol + check.rtol * abs(want):
        return True, f"{shown} is correct"
    tol = f"within {check.rtol * 100:.3g}%" if check.rtol and not check.atol else "within the tolerance"
    note = _mistake_note(check, got, mistakes) or (_scale_note(got, want, check.kind) if public else "")
    if isinstance(raw, str):
        shown += f" (= {_si(got, check.kind)})"
    return False, f"{shown} is not {tol} of the expected value.{note}"


def _text(check: Check, raw, accepted, mistakes=None) -> tuple[bool, str]:
    if not isinstance(raw, str):
        return False, f"expected {describe(check)}; got {_show(raw)}"
    norm = " ".join(raw.split()).casefold()
    if check.kind == "choice" and norm not in {" ".join(c.split()).casefold() for c in check.choices}:
        return False, f"{_show(raw)} is not one of the choices: " + ", ".join(map(repr, check.choices))
    if norm in {" ".join(a.split()).casefold() for a in accepted}:
        return True, f"{_show(raw)} is correct"
    return False, f"{_show(raw)} is not the expected answer." + _mistake_note(check, norm, mistakes)


def _boolean(check: Check, raw, want: bool, mistakes=None) -> tuple[bool, str]:
    value = raw
    if isinstance(raw, str) and raw.strip().lower() in _TRUE | _FALSE:
        value = raw.strip().lower() in _TRUE
    if not isinstance(value, bool):
        return False, f"expected True or False; got {_show(raw)}"
    if value == want:
        return True, f"{value} is correct"
    return False, f"{value} is not correct." + _mistake_note(check, value, mistakes)


def judge(check: Check, entry: dict | None, expected, public: bool = True, mistakes=None) -> Verdict:
    """Compare one extracted `entry` ({"status": ..., "value": ...}) with the `expected` value from
    `spec.expected_value`. `public=False` leaves out unit-slip notes for hidden checks. `mistakes`
    ([(value, says)] from `spec.mistake_values`) diagnoses a wrong answer that equals a known
    mistake. The hint is shown only after a wrong answer, never to a learner who has not answered."""
    who = f"`{check.answer}`" + ("(...)" if check.is_call else "")

    def verdict(passed, answered, msg):
        text = f"{who}: {msg}"
        if not passed and answered and check.hint:
            text += f" Hint: {check.hint}"
        return Verdict(check.name, check.points if passed else 0.0, check.points, passed, answered, text)

    entry = entry or {"status": "not_extracted"}
    status = entry.get("status")
    if status == "missing":
        defined = "function" if check.is_call else "variable"
        return verdict(False, False, f"not answered: no {defined} named {check.answer}; expected {describe(check)}.")
    if status == "not_callable":
        return verdict(False, True, f"should be a function, but it is a {entry.get('type')}.")
    if status == "error":
        what = "calling it" if check.is_call else "reading it"
        return verdict(False, True, f"{what} raised {entry.get('error')}")
    if status == "unsupported":
        if entry.get("type") == "ellipsis":
            return verdict(False, False, f"not answered (still `...`); expected {describe(check)}.")
        return verdict(False, True, f"a {entry.get('type')} cannot be graded; expected {describe(check)}.")
    if status != "ok":
        return verdict(
            False, False, "not answered: the notebook did not get far enough to read this answer (see the run's notes)."
        )
    raw = entry["value"]
    if check.kind == "manual":
        if isinstance(raw, str) and raw.strip():
            return Verdict(
                check.name, 0.0, check.points, False, True, f"{who}: written answer recorded for hand grading"
            )
        return verdict(False, False, "not answered: expected a written answer (a string)")
    if raw is None:
        return verdict(False, False, f"not answered (None); expected {describe(check)}.")
    if check.kind in quantity.KINDS:
        passed, msg = _numeric(check, raw, expected, public, mistakes)
    elif check.kind == "bool":
        passed, msg = _boolean(check, raw, expected, mistakes)
    else:
        passed, msg = _text(check, raw, expected, mistakes)
    if not passed and isinstance(raw, float) and math.isnan(raw):
        msg = "NaN is not an answer"
    return verdict(passed, True, msg)


def _inputs_of(c, answers: dict) -> dict:
    """{input name: the learner's plain value, or None when missing or unanswered}."""
    out = {}
    for name in c.inputs:
        e = answers.get(name) or {}
        out[name] = e["value"] if e.get("status") == "ok" else None
    return out


def mistakes_for(c, answers: dict, params: dict | None = None) -> list:
    """The known mistakes of check `c` for this submission ([] when it has none or they cannot be
    computed from the learner's values)."""
    if not c.mistakes:
        return []
    return spec.mistake_values(c, _inputs_of(c, answers), params)


def hint_for(c, entry: dict | None) -> str:
    """ " Hint: ..." for a check whose expected value could not be recomputed (a `reject`ed range, a
    missing input) when the learner did answer it; "" when they did not (hints follow answers only)."""
    entry = entry or {}
    answered = entry.get("status") == "ok" and entry.get("value") is not None
    return f" Hint: {c.hint}" if answered and c.hint else ""


def recomputed(c, answers: dict, params: dict | None = None):
    """(expected, None) for a check with `inputs`, from the learner's own extracted values, or
    (None, message) when they are missing or cannot be used. A missing input is passed as None, so
    an expr that falls back on the right value (`own(...)`) still grades a later answer when an
    earlier one is unanswered; one that needs the value (a measurement) fails with the message."""
    values = _inputs_of(c, answers)
    missing = [name for name, v in values.items() if v is None]
    try:
        return spec.expected_value(c, values, params), None
    except spec.Rejected as exc:  # the expr's own verdict on the learner's data: shown as written
        return None, str(exc)
    except Exception as exc:
        if missing:
            return None, f"needs your recorded `{missing[0]}`, which the notebook did not provide"
        return None, (f"could not be recomputed from your recorded {', '.join(c.inputs)} ({type(exc).__name__})")
