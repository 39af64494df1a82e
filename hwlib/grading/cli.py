"""`hwlib grade` (grade a class's notebooks) and `hwlib grade-package` (a Gradescope autograder zip);
registered by hwlib.cli.

Exit status: 0 every submission has a result from its own run; 2 bad arguments or a broken check
(nothing graded); 3 a grader-side failure (no kernel, a sandbox that does not work, or a submission
whose result is `grader_error`); 130 interrupted by Ctrl-C, SIGTERM or SIGHUP (grades.csv then holds the part that finished, and no temp
folder is left).
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path

from . import identity
from .text import clean_str


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "grade",
        help="grade exercise notebooks (results.json per submission, grades.csv)",
        description="Run each submission in a fresh, sandboxed kernel and grade its answers against "
        "the exercise's public checks and, with --checks, the instructor's hidden checks.",
    )
    p.add_argument("exercise", help="exercise id, prefix or folder: ex01_memory_budget, ex01, exercises/ex01_...")
    p.add_argument("submissions", nargs="*", help="notebooks, or folders of them (not with --gradescope)")
    p.add_argument("--checks", metavar="DIR", help="folder of hidden checks: DIR/<id>.yaml or DIR/<id>/checks.yaml")
    p.add_argument("--out", metavar="DIR", default="grades", help="output folder (default: ./grades)")
    p.add_argument(
        "--jobs",
        type=int,
        default=1,
        metavar="N",
        help="submissions graded in parallel (default 1; each gets its own CPUs where there "
        "are enough, but memory and process counts are shared)",
    )
    p.add_argument("--timeout-cell", type=float, metavar="S", help="seconds per cell (default: exercise's, else 30)")
    p.add_argument(
        "--timeout-total", type=float, metavar="S", help="seconds per notebook (default: exercise's, else 300)"
    )
    p.add_argument("--memory-mb", type=float, metavar="MB", help="address-space limit of a kernel (default 2048)")
    p.add_argument("--roster", metavar="CSV", help="CSV with columns file, learner: the learner id of each file")
    p.add_argument(
        "--resume",
        action="store_true",
        help="keep results already in --out for unchanged files and checks; grade the rest",
    )
    p.add_argument(
        "--merge-manual",
        action="store_true",
        help="put the hand scores typed into OUT/manual.csv into the results, grades.csv and canvas.csv",
    )
    p.add_argument(
        "--gradescope",
        action="store_true",
        help="Gradescope mode: grade the one notebook in ROOT/submission, write ROOT/results/results.json",
    )
    p.add_argument(
        "--autograder-root",
        metavar="DIR",
        default="/autograder",
        help="the autograder folder in --gradescope mode (default /autograder)",
    )
    box = p.add_mutually_exclusive_group()
    box.add_argument(
        "--no-sandbox",
        action="store_true",
        help="grade without bwrap (submissions can read your files and forge results: "
        "only inside a throw-away container or VM)",
    )
    box.add_argument(
        "--require-sandbox", action="store_true", help="(the default) refuse to grade without a working bwrap"
    )
    p.set_defaults(func=run)
    from . import gradescope

    gradescope.register(subparsers)


class Interrupted(KeyboardInterrupt):
    """SIGINT, SIGTERM or SIGHUP (a closed terminal, a dropped ssh session) while grading."""


_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")


def _interrupt(signum, frame):
    from . import batch

    if not batch.request_stop(signum):  # while grading, the batch stops itself at its next turn
        raise Interrupted(signum)


def _say(text: str) -> None:
    """Print to stderr; a closed terminal (after SIGHUP) must not turn a clean stop into a crash."""
    try:
        print(clean_str(text), file=sys.stderr)
    except (OSError, ValueError):
        pass


def run(args) -> int:
    """`hwlib grade`: SIGTERM and SIGHUP stop it as Ctrl-C does (grades.csv of what finished, no
    temp folder left, exit 130)."""
    old = {}
    for name in _SIGNALS:
        if hasattr(signal, name):
            old[name] = signal.signal(getattr(signal, name), _interrupt)
    try:
        return _run(args)
    except KeyboardInterrupt:
        _say("interrupted before grading started: nothing was graded")
        return 130
    finally:
        for name, handler in old.items():
            signal.signal(getattr(signal, name), handler)


def _check_out(out: Path, folders) -> None:
    """--out inside a submissions folder is left out of the submissions (the grader never grades its
    own files); a submissions folder that is --out itself, or inside it, is refused."""
    for folder in folders:
        if identity._inside(folder, out):
            raise ValueError(
                f"the submissions folder {folder} is inside --out {out}: the grader's own files would be graded "
                "as submissions; choose an output folder outside it"
            )
        if identity._inside(out, folder):
            _say(f"note: --out {out} is inside the submissions folder {folder}; its files are not submissions")


def _run(args) -> int:
    from . import classreport, grader, identity, spec

    exercise = spec.load_exercise(args.exercise, args.checks)
    if args.gradescope:
        from . import gradescope

        return gradescope.run_gradescope(args, exercise)
    if args.merge_manual:
        n = classreport.merge_manual(Path(args.out), exercise)
        print(f"merged {n} hand score(s) from {Path(args.out) / classreport.MANUAL}")
        return 0
    if not args.submissions:
        raise ValueError("no submissions given: name notebooks or folders (or use --gradescope)")
    out = Path(args.out)
    _check_out(out, [p for p in map(Path, args.submissions) if p.is_dir()])
    subs = identity.expand(args.submissions, exclude=[out])
    if not subs:
        raise ValueError("no submissions found in " + ", ".join(args.submissions))
    roster, extra_rows = None, {}
    if args.roster:
        rows = classreport.read_roster(args.roster)
        roster, unmatched, unlisted = classreport.match_roster(rows, [s.identity for s in subs])
        if unmatched:
            _say(
                f"warning: {len(unmatched)} roster row(s) match no submission (learners without a file; "
                f"grades.csv gets a no_submission row for each): {', '.join(unmatched[:10])}"
            )
            extra_rows = classreport.no_submission_rows(exercise, unmatched, rows)
        if unlisted:
            _say(
                f"warning: {len(unlisted)} submission(s) have no roster row (their learner id is the file name): "
                + ", ".join(unlisted[:10])
            )
    try:
        cfg = grader.setup(args, exercise)
        classreport.claim_out(out, exercise, grader.checks_digest(exercise), write=False)
        secrets = [p for p in (args.checks, str(out)) if p] + sorted({str(s.path.parent) for s in subs})
        grader.preflight(exercise, cfg, secrets)
    except grader.GraderSetupError as exc:
        _say(f"hwlib: grader error: {exc}")
        return grader.EXIT_GRADER
    classreport.claim_out(out, exercise, grader.checks_digest(exercise))
    if args.jobs > 1:
        slots = grader.cpu_slots(args.jobs)
        _say(
            f"note: --jobs {args.jobs}: "
            + (
                "each submission gets its own CPUs; memory and process counts are not isolated between them"
                if slots[0]
                else "fewer CPUs than jobs: submissions "
                "share CPUs, so one can slow its neighbour's timeouts (use --jobs 1 for fair timing)"
            )
        )
    hidden = sum(c.hidden for c in exercise.checks)
    print(
        f"grading {len(subs)} submission(s) of {exercise.id}: {len(exercise.checks)} checks "
        f"({hidden} hidden), {exercise.max_score:g} points; sandbox: "
        f"{'bwrap' if cfg.use_bwrap else 'none'}; jobs: {args.jobs}"
    )
    try:
        rows = grader.grade_batch(
            exercise, subs, out, cfg, args.jobs, secrets, roster=roster, resume=args.resume, extra_rows=extra_rows
        )
    except KeyboardInterrupt:
        _say(
            f"interrupted: {out / classreport.GRADES} holds the submissions that finished; "
            "run again with --resume to grade the rest"
        )
        return 130
    try:
        print(
            f"wrote {len(rows)} results under {out / identity.SUBMISSIONS}, {out / classreport.GRADES} "
            f"and {out / 'pass_rates.csv'}"
        )
    except (OSError, ValueError):
        pass
    failed = [f for f, _, res in rows if res["extra_data"]["status"] in grader.GRADER_SIDE]
    if failed:
        _say(
            f"hwlib: grader error: {len(failed)} of {len(rows)} submission(s) could not be graded for a "
            f"reason on the grader's side (status grader_error), e.g. {failed[0]}"
        )
        return grader.EXIT_GRADER
    return 0
