"""The class's tables: grades.csv (merged by submission), pass_rates.csv and pass_rates.png.

grades.csv has one row per submission folder; grading some learners again replaces their rows and
keeps the others. Every text cell that a spreadsheet would run as a formula (starting with = + - @,
a tab or a carriage return) is prefixed with an apostrophe (OWASP, "CSV Injection"). The learner id
comes from a roster (`--roster FILE`: a CSV with columns `file` and `learner`) or else from the file
name. pass_rates.* give, per check, the share of graded submissions that passed it.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

GRADES = "grades.csv"
FIXED = ["submission", "learner", "file", "status", "score", "max_score"]
_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value) -> str:
    """A CSV cell a spreadsheet shows as text: "=HYPERLINK(...)" -> "'=HYPERLINK(...)"."""
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(_FORMULA) else text


def read_roster(path) -> dict[str, str]:
    """{file name: learner id} from a CSV with a header naming `file` and `learner`."""
    path = Path(path)
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            rows = list(csv.DictReader(fh))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise ValueError(f"--roster {path}: cannot read it ({exc})") from None
    if not rows or not {"file", "learner"} <= set(rows[0]):
        raise ValueError(f"--roster {path}: needs a header with the columns 'file' and 'learner'")
    return {r["file"].strip(): r["learner"].strip() for r in rows if r.get("file")}


def learner_id(identity: str, roster: dict | None) -> str:
    if roster and identity in roster:
        return roster[identity]
    return identity[:-6] if identity.endswith(".ipynb") else identity


def _fmt(x) -> str:
    return f"{x:g}" if isinstance(x, (int, float)) else str(x)


def row(folder: str, res: dict, names) -> dict:
    extra = res.get("extra_data", {})
    by_name = {t["name"]: t["score"] for t in res.get("tests", [])}
    out = {
        "submission": folder,
        "learner": extra.get("learner", ""),
        "file": extra.get("file", ""),
        "status": extra.get("status", "grader_error"),
        "score": _fmt(res.get("score", 0.0)),
        "max_score": _fmt(extra.get("max_score", "")),
        **{n: _fmt(by_name.get(n, 0.0)) for n in names},
        "execution_time_s": res.get("execution_time", ""),
        "reason": (res.get("output") or "").split("\n")[0],
    }
    return {k: safe_cell(v) for k, v in out.items()}


def write_grades(out: Path, exercise, results: dict[str, dict]) -> Path:
    """Merge `results` ({folder: results mapping}) into OUT/grades.csv (rows of other submissions of
    the same exercise and check list are kept) and write it atomically."""
    names = [c.name for c in exercise.checks]
    header = FIXED + names + ["execution_time_s", "reason"]
    path = out / GRADES
    rows: dict[str, dict] = {}
    if path.is_file():
        with open(path, newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            if reader.fieldnames == header:
                rows = {r["submission"]: r for r in reader}
    for folder, res in results.items():
        rows[folder] = row(folder, res, names)
    tmp = path.with_suffix(".csv.tmp")
    with open(tmp, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=header)
        w.writeheader()
        for key in sorted(rows):
            w.writerow(rows[key])
    tmp.replace(path)
    return path


def pass_rates(out: Path, exercise) -> list[dict]:
    """Per check: how many graded submissions passed it (from grades.csv, so the whole class)."""
    with open(out / GRADES, newline="", encoding="utf-8") as fh:
        rows = [
            r
            for r in csv.DictReader(fh)
            if r["status"]
            not in ("not_a_notebook", "empty", "not_a_file", "too_large", "wrong_exercise", "grader_error")
        ]
    rates = []
    for c in exercise.checks:
        passed = sum(1 for r in rows if c.points > 0 and _num(r.get(c.name)) >= c.points)
        rates.append(
            {
                "check": c.name,
                "points": c.points,
                "passed": passed,
                "graded": len(rows),
                "rate": round(passed / len(rows), 4) if rows else 0.0,
            }
        )
    return rates


def _num(text) -> float:
    try:
        return float(str(text).lstrip("'"))
    except ValueError:
        return 0.0


def write_pass_rates(out: Path, exercise) -> list[Path]:
    """OUT/pass_rates.csv and OUT/pass_rates.png (a horizontal bar per check)."""
    rates = pass_rates(out, exercise)
    path = out / "pass_rates.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=["check", "points", "passed", "graded", "rate"])
        w.writeheader()
        w.writerows(rates)
    written = [path]
    try:
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
    except Exception:
        return written
    fig, ax = plt.subplots(figsize=(6, 0.4 * len(rates) + 1.2))
    names = [r["check"] for r in rates][::-1]
    ax.barh(names, [100 * r["rate"] for r in rates][::-1], color="#0072B2")
    ax.set_xlim(0, 100)
    ax.set_xlabel("submissions that passed (%)")
    graded = rates[0]["graded"] if rates else 0
    ax.set_title(f"{exercise.id}: pass rate per check ({graded} graded submissions)", fontsize=9)
    fig.tight_layout()
    fig.savefig(out / "pass_rates.png", dpi=110)
    plt.close(fig)
    written.append(out / "pass_rates.png")
    return written


def load_previous(folder: Path) -> dict | None:
    try:
        return json.loads((folder / "results.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
