"""The learner's self-check: `from hwlib.grading import check; check("ex01_memory_budget")`.

Runs the exercise's PUBLIC checks against the caller's variables and prints one line per check
(✓/✗, what was expected in kind and unit, the hint). The instructor's grader runs the same
comparisons (hwlib.grading.compare) outside the kernel, plus any hidden checks.
"""

from __future__ import annotations

import inspect
import os
import re

from . import compare, extract, forbid, spec


def _format_points(x: float) -> str:
    return f"{x:g}"


def variant(exercise: str, learner: str | None = None, show: bool = True) -> dict:
    """The numbers of `learner`'s variant of `exercise`, {name: value} (the grader computes the same
    ones from the learner id on the class roster). Without a learner id: the exercise's default
    numbers (the book's), except while the notebook is graded with per-learner variants, when they
    are the graded learner's (the grader sets HWLIB_LEARNER_ID). `show` prints them, with their
    units and notes. {} for an exercise without parameters."""
    ex = spec.load_checks(spec.find_exercise(exercise))
    if learner is None and os.environ.get("HWLIB_GRADING") == "1":
        learner = os.environ.get("HWLIB_LEARNER_ID") or None
    numbers = spec.params(ex, str(learner)) if learner is not None else spec.default_params(ex)
    if show and numbers:
        print(_describe(ex, numbers, learner))
    return numbers


def _describe(ex, numbers: dict, learner) -> str:
    if learner is None:
        head = f"The default numbers of {ex.id} (set LEARNER_ID to your roster id if your instructor asks, for yours):"
    else:
        head = f"Your numbers for {ex.id} (learner {learner}):"
    lines = [head]
    for name, value in numbers.items():
        p = ex.params.get(name, {})
        shown = re.sub(r"e\+?0*(\d)", r"e\1", f"{value:g}") if isinstance(value, float) else str(value)  # 1.3e9
        unit = f" {p['unit']}" if p.get("unit") else ""
        note = f"  ({p['note']})" if p.get("note") else ""
        lines.append(f"  {name} = {shown}{unit}{note}")
    return "\n".join(lines)


def verdicts(ex, namespace: dict, params: dict | None = None) -> list:
    """[(Verdict or None, message)] for every public check of `ex` against the variables in
    `namespace`, judged as the grader judges them (compare.judge, known mistakes diagnosed)."""
    params = params or {}
    plain = extract.plain_namespace()

    def entry_of(name, call=None):
        if name not in namespace:
            return {"status": "missing"}
        if call is None:
            return plain["_entry"](lambda: namespace[name])
        f = namespace[name]
        if not callable(f):
            return {"status": "not_callable", "type": type(f).__name__}
        return plain["_entry"](lambda: f(*(call.args or ()), **(call.kwargs or {})))

    out = []
    for c in ex.checks:
        entry = entry_of(c.answer, c if c.is_call else None)
        answers = {i: entry_of(i) for i in c.inputs}
        try:
            if c.inputs:
                expected, why = compare.recomputed(c, answers, params)
                if why:
                    msg = f"`{c.answer}`: {why}" + compare.hint_for(c, entry)
                    out.append((compare.Verdict(c.name, 0.0, c.points, False, True, msg), None))
                    continue
            else:
                expected = spec.expected_value(c, params=params)
        except ValueError as exc:
            out.append((None, f"? {c.name}: cannot compute the expected value ({exc}); please report this"))
            continue
        try:
            v = compare.judge(c, entry, expected, public=True, mistakes=compare.mistakes_for(c, answers, params))
        except Exception as exc:  # one unreadable answer costs one line, never the self-check
            v = compare.Verdict(
                c.name, 0.0, c.points, False, True, f"`{c.answer}`: the answer could not be read ({type(exc).__name__})"
            )
        out.append((v, None))
    return out


def check(exercise: str, namespace: dict | None = None, learner: str | None = None) -> None:
    """Print feedback on the public checks of `exercise` for the variables in `namespace`
    (default: the calling notebook's globals). For an exercise with variants, `learner` (default:
    the notebook's LEARNER_ID) picks the numbers. Returns None; never raises on a wrong answer."""
    if os.environ.get("HWLIB_GRADING") == "1":
        print("(self-check skipped: this notebook is being graded)")
        return None
    try:
        ex = spec.load_checks(spec.find_exercise(exercise))
    except (KeyError, ValueError) as exc:
        print(f"self-check unavailable: {exc.args[0] if exc.args else exc}")
        return None
    if namespace is None:
        frame = inspect.currentframe()
        namespace = frame.f_back.f_globals if frame and frame.f_back else {}
    params = spec.default_params(ex)
    learner = learner if learner is not None else namespace.get("LEARNER_ID")
    if ex.variants and isinstance(learner, str) and learner:
        params = spec.params(ex, learner)
    elif ex.variants and not ex.params:  # a bare `variants:` block: every learner has their own numbers
        print(
            f"self-check of {ex.id}: set LEARNER_ID = 'your id on the class roster' first (your numbers depend on it)"
        )
        return None
    total = score = 0.0
    lines = []
    hits = forbid.uses([c for c in namespace.get("In") or [] if isinstance(c, str)], ex.forbid) if ex.forbid else {}
    zero = forbid.zeroed(ex.forbid, hits, [c.name for c in ex.checks])
    for v, problem in verdicts(ex, namespace, params):
        if v is not None and v.name in zero:
            v = compare.Verdict(v.name, 0.0, v.max_score, False, v.answered, v.message + forbid.note(zero[v.name]))
        if v is None:
            lines.append(problem)
            continue
        total += v.max_score
        score += v.score
        mark = "✓" if v.passed else "✗"
        lines.append(f"{mark} {v.name} ({_format_points(v.score)}/{_format_points(v.max_score)}): {v.message}")
    title = f" — {ex.title}" if ex.title else ""
    print(f"Self-check of {ex.id}{title}")
    print("\n".join(lines))
    print(
        f"Public checks: {_format_points(score)}/{_format_points(total)} points. "
        "Your instructor may run further checks."
    )
    return None
