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

from . import results
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
        "reason": (extra["reason"] if "reason" in extra else (res.get("output") or "")).split("\n")[0],
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
        rows = [r for r in csv.DictReader(fh) if r["status"] not in (*results.NOT_RUN, "no_submission")]
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


# ---------------------------------------------------------------- hand grading and gradebooks

MANUAL = "manual.csv"
MANUAL_FIELDS = ["submission", "learner", "file", "check", "points", "answer", "score", "comment"]
CANVAS = "canvas.csv"


def write_manual(out: Path, exercise, results: dict[str, dict]) -> Path | None:
    """OUT/manual.csv: one row per written answer (checks of kind `manual`) for hand scoring, merged
    with the rows already there: a score an instructor typed in stays while the answer is unchanged."""
    manual = [c for c in exercise.checks if c.kind == "manual"]
    if not manual:
        return None
    path = out / MANUAL
    old = {}
    if path.is_file():
        with open(path, newline="", encoding="utf-8") as fh:
            old = {(r["submission"], r["check"]): r for r in csv.DictReader(fh)}
    for folder, res in results.items():
        extra = res.get("extra_data", {})
        for c in manual:
            answer = safe_cell((extra.get("written") or {}).get(c.name, ""))
            keep = old.get((folder, c.name), {})
            same = keep.get("answer") == answer
            old[(folder, c.name)] = {
                "submission": folder,
                "learner": safe_cell(extra.get("learner", "")),
                "file": safe_cell(extra.get("file", "")),
                "check": c.name,
                "points": _fmt(c.points),
                "answer": answer,
                "score": keep.get("score", "") if same else "",
                "comment": keep.get("comment", "") if same else "",
            }
    tmp = path.with_suffix(".csv.tmp")
    with open(tmp, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=MANUAL_FIELDS)
        w.writeheader()
        for key in sorted(old):
            w.writerow(old[key])
    tmp.replace(path)
    return path


def merge_manual(out: Path, exercise) -> int:
    """Put the hand scores of OUT/manual.csv into each submission's results.json (the manual
    check's score and the comment), recompute the total and rewrite grades.csv and canvas.csv.
    Returns how many scores were merged; ValueError naming the row when a score is not a number
    between 0 and the check's points."""
    from . import identity, results

    points = {c.name: c.points for c in exercise.checks if c.kind == "manual"}
    path = out / MANUAL
    if not path.is_file():
        raise ValueError(f"no {path}: grade an exercise with written answers first")
    merged, touched = 0, {}
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    for i, r in enumerate(rows, start=2):
        text = (r.get("score") or "").strip()
        if not text:
            continue
        try:
            score = float(text)
        except ValueError:
            score = -1.0
        if r.get("check") not in points or not 0 <= score <= points[r["check"]]:
            raise ValueError(
                f"{path} line {i}: score {text!r} for {r.get('check')!r} must be a number from 0 to "
                f"{_fmt(points.get(r.get('check'), 0))}"
            )
        folder = out / identity.SUBMISSIONS / r["submission"]
        res = touched.get(r["submission"]) or load_previous(folder)
        if res is None:
            raise ValueError(f"{path} line {i}: no result for submission {r['submission']!r} in {out}")
        for t in res["tests"]:
            if t["name"] == r["check"]:
                t["score"] = score
                t["status"] = "passed" if score >= t["max_score"] else "failed"
                t["output"] = "scored by hand" + (f": {r['comment']}" if r.get("comment") else "")
        res["score"] = float(sum(t["score"] for t in res["tests"]))
        touched[r["submission"]] = res
        merged += 1
    for name, res in touched.items():
        results.write(out / identity.SUBMISSIONS / name, res, exercise.title)
    if touched:
        write_grades(out, exercise, touched)
        write_canvas(out, exercise)
    return merged


def write_canvas(out: Path, exercise) -> Path:
    """OUT/canvas.csv for Canvas's gradebook import: Student, ID, SIS User ID, SIS Login ID,
    Section, then one column for the exercise, with a 'Points Possible' row. The learner id goes in
    'SIS User ID' (use the roster to give each file its Canvas SIS id); rows that are not a learner's
    (no learner id) are left out."""
    with open(out / GRADES, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    column = f"{exercise.id}"
    fields = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", column]
    path = out / CANVAS
    tmp = path.with_suffix(".csv.tmp")
    with open(tmp, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=fields)
        w.writeheader()
        w.writerow({"Student": "    Points Possible", column: _fmt(exercise.max_score)})
        for r in sorted(rows, key=lambda r: r["learner"]):
            if r["learner"]:
                w.writerow({"Student": r["learner"], "SIS User ID": r["learner"], column: r["score"]})
    tmp.replace(path)
    return path


def write_manual_pdfs(out: Path, exercise, results: dict[str, dict]) -> list[Path]:
    """OUT/manual_pdfs/<submission>.pdf: one page per written answer, in the order of the checks,
    for a Gradescope assignment with a fixed template (one manually graded question per page): bulk
    upload the PDFs, match each to its learner (the learner id is on every page), grade by question,
    then type the scores into manual.csv (or grade in Gradescope and export). Drawn with matplotlib."""
    import textwrap

    manual = [c for c in exercise.checks if c.kind == "manual"]
    if not manual or not results:
        return []
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_pdf import PdfPages

    folder = out / "manual_pdfs"
    folder.mkdir(exist_ok=True)
    written = []
    for name, res in results.items():
        extra = res.get("extra_data", {})
        path = folder / f"{name}.pdf"
        with PdfPages(path) as pdf:
            for i, c in enumerate(manual, start=1):
                fig = plt.figure(figsize=(8.27, 11.69))  # A4
                answer = clean_str((extra.get("written") or {}).get(c.name) or "(not answered)")
                body = "\n".join(textwrap.fill(p, 90) for p in answer.splitlines() or [""])
                head = f"{exercise.id} - question {i}: {c.name} ({_fmt(c.points)} points)"
                fig.text(0.08, 0.95, head, fontsize=12, weight="bold", va="top")
                who = f"learner: {clean_str(str(extra.get('learner', '')))}   file: {clean_str(str(extra.get('file', '')))}"
                fig.text(0.08, 0.92, who, fontsize=9, va="top")
                fig.text(0.08, 0.88, body[:6000], fontsize=9, va="top", family="monospace")
                pdf.savefig(fig)
                plt.close(fig)
        written.append(path)
    return written
