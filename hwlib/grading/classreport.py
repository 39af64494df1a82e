"""The class's tables: grades.csv (merged by submission), pass_rates.csv and pass_rates.png.

grades.csv has one row per submission folder; grading some learners again replaces their rows and
keeps the others. Every text cell that a spreadsheet would run as a formula (starting with = + - @,
a tab or a carriage return) is prefixed with an apostrophe (OWASP, "CSV Injection"). The learner id
comes from a roster (`--roster FILE`: a CSV with columns `file` and `learner`) or else from the file
name. pass_rates.* give, per check, the share of graded submissions that passed it.
"""

from __future__ import annotations

import csv
import hashlib
import json
import unicodedata
from pathlib import Path

from .text import clean_str

GRADES = "grades.csv"
FIXED = ["submission", "learner", "file", "status", "score", "max_score"]
_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value) -> str:
    """A CSV cell a spreadsheet shows as text: "=HYPERLINK(...)" -> "'=HYPERLINK(...)"."""
    text = clean_str("" if value is None else str(value))
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


def roster_key(name: str) -> str:
    """How a roster's `file` and a submission's identity are compared: Unicode NFC (a macOS zip
    writes NFD names), case-folded, `\\` as `/`, without a trailing `.ipynb`."""
    key = unicodedata.normalize("NFC", name.strip().replace("\\", "/")).casefold()
    return key[:-6] if key.endswith(".ipynb") else key


def match_roster(roster: dict, identities) -> tuple[dict, list, list]:
    """({identity: learner}, roster files that match no submission, identities with no roster row).
    A roster row matches a submission by `roster_key`: the whole identity (`alice/ex01.ipynb`), its
    file name alone (`ex01`) when that is unique, or its first folder (`alice`, GitHub Classroom)."""
    keys = {roster_key(f): (f, learner) for f, learner in roster.items()}
    matched, used = {}, set()
    idents = list(identities)
    names: dict[str, list] = {}
    for ident in idents:
        names.setdefault(roster_key(ident.rsplit("/", 1)[-1]), []).append(ident)
    for ident in idents:
        full = roster_key(ident)
        for cand in (full, full.split("/", 1)[0] if "/" in full else None, roster_key(ident.rsplit("/", 1)[-1])):
            if cand is None or cand not in keys:
                continue
            if cand == roster_key(ident.rsplit("/", 1)[-1]) and cand != full and len(names.get(cand, [])) > 1:
                continue  # one file name for several learners: only a full path or folder decides
            matched[ident] = keys[cand][1]
            used.add(cand)
            break
    unmatched = sorted(f for k, (f, _) in keys.items() if k not in used)
    return matched, unmatched, sorted(i for i in idents if i not in matched)


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
        "flags": "; ".join(extra.get("flags") or []),
    }
    return {k: safe_cell(v) for k, v in out.items()}


MANIFEST = "grading.json"


def claim_out(out: Path, exercise, checks_digest: str, write: bool = True) -> None:
    """Make OUT this exercise's and this check list's, or refuse (ValueError, exit 2) when it holds
    another's: grading a second exercise, or a changed check list, into one --out would otherwise
    replace the first's rows and results without a word."""
    path = out / MANIFEST
    want = {"exercise": exercise.id, "checks_sha256": checks_digest, "checks": [c.name for c in exercise.checks]}
    if path.is_file():
        try:
            have = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            have = {}
        if have.get("exercise") != exercise.id:
            raise ValueError(
                f"--out {out} holds grades of {have.get('exercise') or 'an unknown exercise'}, not {exercise.id}; "
                "give each exercise its own --out folder"
            )
        if have.get("checks_sha256") != checks_digest:
            raise ValueError(
                f"--out {out} was graded with another check list for {exercise.id} (checks then: "
                f"{', '.join(have.get('checks') or []) or '?'}); grade into a new --out folder so that both "
                "results stay (or delete that folder to start again)"
            )
        return
    if (out / GRADES).is_file() and (out / "submissions").is_dir():
        raise ValueError(
            f"--out {out} already holds grades from an earlier hwlib without a {MANIFEST}; grade into a new --out"
        )
    if not write:
        return
    out.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(want, indent=1) + "\n", encoding="utf-8")


def digest(*parts) -> str:
    return hashlib.sha256(repr(parts).encode("utf-8", "backslashreplace")).hexdigest()


def no_submission_rows(exercise, unmatched: list[str], roster: dict) -> dict[str, dict]:
    """grades.csv rows (status no_submission, score 0) for roster learners without a file."""
    names = [c.name for c in exercise.checks]
    rows = {}
    for f in unmatched:
        folder = "(no file) " + f
        res = {
            "score": 0.0,
            "execution_time": 0,
            "output": "no submission matched this roster row",
            "tests": [],
            "extra_data": {"learner": roster[f], "file": f, "status": "no_submission", "max_score": exercise.max_score},
        }
        rows[folder] = row(folder, res, names)
    return rows


def write_grades(out: Path, exercise, results: dict[str, dict], extra_rows: dict | None = None) -> Path:
    """Merge `results` ({folder: results mapping}) into OUT/grades.csv (rows of other submissions of
    the same exercise and check list are kept) and write it atomically."""
    names = [c.name for c in exercise.checks]
    header = FIXED + names + ["execution_time_s", "reason", "flags"]
    path = out / GRADES
    rows: dict[str, dict] = {}
    if path.is_file():
        with open(path, newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            if reader.fieldnames == header:
                rows = {r["submission"]: r for r in reader}
    rows = {k: v for k, v in rows.items() if not v["status"] == "no_submission"}
    for folder, res in results.items():
        rows[folder] = row(folder, res, names)
    rows.update(
        {k: v for k, v in (extra_rows or {}).items() if not any(r["learner"] == v["learner"] for r in rows.values())}
    )
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
            not in (
                "not_a_notebook",
                "empty",
                "not_a_file",
                "too_large",
                "wrong_exercise",
                "grader_error",
                "no_submission",
            )
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
