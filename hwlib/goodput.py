"""Goodput of a long training run: the share of wall-clock time that advances the model, given
interruptions, checkpoints and restarts.

First-order model ({cite}`young1974checkpoint`, {cite}`daly2006checkpoint`), for a job whose interruptions arrive with mean time
between them M, that writes a checkpoint taking δ every τ seconds and needs R to restart:

    goodput ≈ 1 − δ/τ − (τ/2 + R)/M          (lost: checkpoint writes; half an interval redone + restart per failure)
    τ* = √(2 δ M)                             (the interval that minimises the loss, Young's formula)

M comes from published runs (hwlib/data/interruptions.yaml): the Llama 3 pre-training snapshot had
466 interruptions in 54 days on 16,384 GPUs {cite}`dubey2024llama3`. Units: seconds, fractions.
"""

from __future__ import annotations

import functools
import math
from importlib import resources

import yaml

from . import _check, sourced

FORMULAS = {
    "mtbi_s": "M = span / interruptions",
    "optimal_interval_s": "τ* = √(2 δ M)",
    "goodput": "g = 1 − δ/τ − (τ/2 + R)/M",
    "straggler_step_factor": "E[t]/t₀ = 1 + (s − 1)(1 − (1 − p)ⁿ)",
}
"""The formula each function of this module evaluates, as the calculators print it."""

_FIELDS = {"gpus": True, "span_s": False, "interruptions": True, "unexpected_interruptions": True,
           "effective_training_fraction": False}  # fmt: skip


@functools.cache
def runs() -> dict:
    """{run name: {field: value}} from hwlib/data/interruptions.yaml, every number checked and sourced."""
    raw = yaml.safe_load(resources.files("hwlib").joinpath("data", "interruptions.yaml").read_text())
    out = {}
    for name, entry in raw["runs"].items():
        unknown = set(entry) - set(_FIELDS)
        if unknown:
            raise ValueError(f"{name}: unknown field(s) {sorted(unknown)}; accepted: {sorted(_FIELDS)}")
        out[name] = {k: sourced.number(f"{name}.{k}", entry[k], raw["sources"], integer=_FIELDS[k])[0] for k in entry}
    return out


def mtbi_s(span_s, interruptions) -> float:
    """Mean time between interruptions M = span / count, seconds (Llama 3: 54 days / 466 = 2.78 h)."""
    return _check.positive("span_s", span_s) / _check.integer("interruptions", interruptions)


def optimal_interval_s(checkpoint_s, mtbi) -> float:
    """Young's checkpoint interval τ* = √(2 δ M), seconds, for a checkpoint taking δ and M between failures."""
    return math.sqrt(2 * _check.positive("checkpoint_s", checkpoint_s) * _check.positive("mtbi", mtbi))


def goodput(checkpoint_s, interval_s, restart_s, mtbi) -> float:
    """Useful share of wall-clock time, g = 1 − δ/τ − (τ/2 + R)/M (first order in 1/M; 0 if negative)."""
    d, t = _check.positive("checkpoint_s", checkpoint_s), _check.positive("interval_s", interval_s)
    r, m = _check.nonnegative("restart_s", restart_s), _check.positive("mtbi", mtbi)
    return max(0.0, 1 - d / t - (t / 2 + r) / m)


def straggler_step_factor(p_slow, slowdown, n_workers) -> float:
    """Expected step time of a synchronous job over its healthy time, when each of n workers is
    independently slow (by the factor s ≥ 1) in a step with probability p: the step waits for the
    slowest worker, so E[t]/t₀ = 1 + (s − 1)(1 − (1 − p)ⁿ). With 16,384 GPUs even p = 10⁻⁴ slows
    most steps. Source: order statistics of the step's maximum; stragglers in a long run as
    {cite}`dubey2024llama3` describes them."""
    p = _check.nonnegative("p_slow", p_slow)
    if p > 1:
        raise ValueError(f"p_slow must be a probability in [0, 1]; got {p_slow!r}")
    s = _check.positive("slowdown", slowdown)
    if s < 1:
        raise ValueError(f"slowdown must be >= 1 (a slow worker takes s times as long); got {slowdown!r}")
    return 1 + (s - 1) * (1 - (1 - p) ** _check.integer("n_workers", n_workers))
