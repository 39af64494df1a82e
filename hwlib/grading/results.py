"""What the grader writes: Gradescope's results.json, a readable feedback.txt, the class grades.csv.

results.json follows https://gradescope-autograders.readthedocs.io/en/latest/specs/: a total `score`,
`execution_time`, a top-level `output` (the reason when the run failed, and any notes) and `tests`,
one per check, with name, score, max_score, status, output and visibility. Our own fields go in
`extra_data` (exercise, submission, status, sandbox, max_score).
"""
from __future__ import annotations

import csv
import json
from pathlib import Path

from .compare import Verdict


def _fmt(x: float) -> str:
    return f"{x:g}"


def build(exercise, verdicts: list[Verdict], *, submission: str, status: str, reason: str = "",
          notes=(), elapsed: float = 0.0, sandboxed: bool = False) -> dict:
    """The results.json mapping for one submission."""
    visibility = {c.name: c.visibility for c in exercise.checks}
    tests = [{"name": v.name, "score": v.score, "max_score": v.max_score,
              "status": "passed" if v.passed else "failed", "output": v.message,
              "visibility": visibility.get(v.name, "visible")} for v in verdicts]
    output = "\n".join([reason] * bool(reason) + list(notes))
    return {"score": float(sum(v.score for v in verdicts)), "execution_time": round(elapsed, 2),
            "output": output, "tests": tests,
            "extra_data": {"exercise": exercise.id, "submission": submission, "status": status,
                           "sandbox": "bwrap" if sandboxed else "none",
                           "max_score": exercise.max_score}}


def not_run(exercise, reason: str) -> list[Verdict]:
    """Zero for every check, when the submission could not be run at all."""
    return [Verdict(c.name, 0.0, c.points, False, False, f"not graded: {reason}") for c in exercise.checks]


def feedback_text(results: dict, title: str = "") -> str:
    extra = results["extra_data"]
    lines = [f"{extra['exercise']}{' — ' + title if title else ''}: {extra['submission']}",
             f"Score: {_fmt(results['score'])}/{_fmt(extra['max_score'])} (status: {extra['status']}, "
             f"sandbox: {extra['sandbox']}, {results['execution_time']:.1f} s)"]
    if results.get("output"):
        lines.append(results["output"])
    for t in results["tests"]:
        mark = "✓" if t["status"] == "passed" else "✗"
        lines.append(f"{mark} {t['name']} ({_fmt(t['score'])}/{_fmt(t['max_score'])}): {t['output']}")
    return "\n".join(lines) + "\n"


def write(folder: Path, results: dict, title: str = "") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "results.json").write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n",
                                         encoding="utf-8")
    (folder / "feedback.txt").write_text(feedback_text(results, title), encoding="utf-8")


def write_csv(path: Path, exercise, rows: list[tuple[str, str, dict]]) -> None:
    """grades.csv: one row per submission (name, file, status, score, max_score, one column per
    check, execution time, reason)."""
    names = [c.name for c in exercise.checks]
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["submission", "file", "status", "score", "max_score", *names, "execution_time_s", "reason"])
        for stem, file, res in sorted(rows, key=lambda r: r[0]):
            by_name = {t["name"]: t["score"] for t in res.get("tests", [])}
            extra = res.get("extra_data", {})
            w.writerow([stem, file, extra.get("status", "grader error"), _fmt(res.get("score", 0.0)),
                        _fmt(exercise.max_score), *[_fmt(by_name.get(n, 0.0)) for n in names],
                        res.get("execution_time", ""), (res.get("output") or "").split("\n")[0]])
