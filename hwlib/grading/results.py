"""What the grader writes: Gradescope's results.json, a readable feedback.txt, the class grades.csv.

results.json follows https://gradescope-autograders.readthedocs.io/en/latest/specs/: a total `score`,
`execution_time`, a top-level `output` (the reason when the run failed, and any notes) and `tests`,
one per check, with name, score, max_score, status, output and visibility. Our own fields go in
`extra_data` (exercise, submission, status, sandbox, max_score, and the run's identity: run_id, file,
learner, file_sha256, checks_sha256, graded_at).

`status` is a code: graded, cell_errors, timeout, kernel_crashed (the learner's notebook), or
not_a_notebook, empty, not_a_file, too_large, wrong_exercise (the file), or grader_error (the
grader's side: the instructor must look; `hwlib grade` then exits 3).
"""

from __future__ import annotations

import json
from pathlib import Path

from .compare import Verdict
from .text import clean


def _fmt(x: float) -> str:
    return f"{x:g}"


NOT_RUN = ("not_a_notebook", "empty", "not_a_file", "too_large", "wrong_exercise", "grader_error")
"""Statuses of a submission whose notebook was never run to the end by the grader (no answers to count)."""
STATUSES = ("graded", "cell_errors", "timeout", "kernel_crashed", *NOT_RUN)


def build(
    exercise,
    verdicts: list[Verdict],
    *,
    submission: str,
    status: str,
    reason: str = "",
    notes=(),
    elapsed: float = 0.0,
    sandboxed: bool = False,
    meta: dict | None = None,
) -> dict:
    """The results.json mapping for one submission."""
    visibility = {c.name: c.visibility for c in exercise.checks}
    tests = [
        {
            "name": v.name,
            "score": v.score,
            "max_score": v.max_score,
            "status": "passed" if v.passed else "failed",
            "output": v.message,
            "visibility": visibility.get(v.name, "visible"),
        }
        for v in verdicts
    ]
    if status not in STATUSES:
        raise ValueError(f"unknown status {status!r}; known: {STATUSES}")
    output = "\n".join([reason] * bool(reason) + list(notes))
    return {
        "score": float(sum(v.score for v in verdicts)),
        "execution_time": round(elapsed, 2),
        "output": output,
        "tests": tests,
        "extra_data": {
            "exercise": exercise.id,
            "submission": submission,
            "status": status,
            "sandbox": "bwrap" if sandboxed else "none",
            "max_score": exercise.max_score,
            "reason": reason,
            **(meta or {}),
        },
    }


def not_run(exercise, reason: str) -> list[Verdict]:
    """Zero for every check, when the submission could not be run at all."""
    return [Verdict(c.name, 0.0, c.points, False, False, f"not graded: {reason}") for c in exercise.checks]


def not_graded(exercise, reason: str, *, submission: str, status: str, **kw) -> dict:
    """The results.json mapping for a submission that was never run: every check scores zero with
    `reason`, which is also the mapping's reason; `kw` as for `build` (elapsed, meta)."""
    return build(exercise, not_run(exercise, reason), submission=submission, status=status, reason=reason, **kw)


SHOWN_NOW = ("visible",)  # Gradescope's other visibilities show a test only after the due date or release


def feedback_text(results: dict, title: str = "") -> str:
    """The learner's feedback: the checks shown now with their messages, the total so far over them,
    and the names and points of the checks hidden until release (their results are not shown)."""
    extra = results["extra_data"]
    shown = [t for t in results["tests"] if t.get("visibility", "visible") in SHOWN_NOW]
    later = [t for t in results["tests"] if t.get("visibility", "visible") not in SHOWN_NOW]
    so_far = sum(t["score"] for t in shown)
    lines = [
        f"{extra['exercise']}{' — ' + title if title else ''}: {extra['submission']}",
        f"Total so far: {_fmt(so_far)}/{_fmt(sum(t['max_score'] for t in shown))} on the checks shown now "
        f"(status: {extra['status']}, sandbox: {extra['sandbox']}, {results['execution_time']:.1f} s)",
    ]
    if later:
        lines.append(
            f"Hidden until release: {len(later)} check(s), {_fmt(sum(t['max_score'] for t in later))} points: "
            + ", ".join(t["name"] for t in later)
            + f"; the final score is out of {_fmt(extra['max_score'])}"
        )
    if results.get("output"):
        lines.append(results["output"])
    for t in shown:
        mark = "✓" if t["status"] == "passed" else "…" if t["output"].endswith("for hand grading") else "✗"
        lines.append(f"{mark} {t['name']} ({_fmt(t['score'])}/{_fmt(t['max_score'])}): {t['output']}")
    return "\n".join(lines) + "\n"


def instructor_feedback(results: dict, title: str = "") -> str:
    """Every check with its result (for the instructor, or for learners after release)."""
    return feedback_text({**results, "tests": [{**t, "visibility": "visible"} for t in results["tests"]]}, title)


def _atomic(path: Path, text: str) -> None:
    tmp = path.with_name("." + path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def write(folder: Path, results: dict, title: str = "") -> None:
    """results.json and feedback.txt (every string made UTF-8-safe by hwlib.grading.text.clean)."""
    results = clean(results)
    folder.mkdir(parents=True, exist_ok=True)
    _atomic(folder / "results.json", json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    _atomic(folder / "feedback.txt", feedback_text(results, title))
    _atomic(folder / "feedback_all.txt", instructor_feedback(results, title))
