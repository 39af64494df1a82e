"""`hwlib grade` (grade a class's notebooks) and `hwlib grade-package` (a Gradescope autograder zip);
registered by hwlib.cli.

Exit status: 0 every submission has a result from its own run; 2 bad arguments or a broken check
(nothing graded); 3 a grader-side failure (no kernel, a sandbox that does not work, or a submission
whose result is `grader_error`); 130 interrupted (grades.csv then holds the part that finished).
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path


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


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def run(args) -> int:
    from . import classreport, grader, identity, spec

    exercise = spec.load_exercise(args.exercise, args.checks)
    if args.gradescope:
        from . import gradescope

        return gradescope.run_gradescope(args, exercise)
    if not args.submissions:
        raise ValueError("no submissions given: name notebooks or folders (or use --gradescope)")
    subs = identity.expand(args.submissions)
    if not subs:
        raise ValueError("no submissions found in " + ", ".join(args.submissions))
    roster = classreport.read_roster(args.roster) if args.roster else None
    out = Path(args.out)
    try:
        cfg = grader.setup(args, exercise)
        secrets = [p for p in (args.checks, str(out)) if p] + sorted({str(s.path.parent) for s in subs})
        grader.preflight(exercise, cfg, secrets)
    except grader.GraderSetupError as exc:
        print(f"hwlib: grader error: {exc}", file=sys.stderr)
        return grader.EXIT_GRADER
    if args.jobs > 1:
        slots = grader.cpu_slots(args.jobs)
        print(
            f"note: --jobs {args.jobs}: "
            + (
                "each submission gets its own CPUs; memory and process counts are not isolated between them"
                if slots[0]
                else "fewer CPUs than jobs: submissions "
                "share CPUs, so one can slow its neighbour's timeouts (use --jobs 1 for fair timing)"
            ),
            file=sys.stderr,
        )
    hidden = sum(c.hidden for c in exercise.checks)
    print(
        f"grading {len(subs)} submission(s) of {exercise.id}: {len(exercise.checks)} checks "
        f"({hidden} hidden), {exercise.max_score:g} points; sandbox: "
        f"{'bwrap' if cfg.use_bwrap else 'none'}; jobs: {args.jobs}"
    )
    old = signal.signal(signal.SIGTERM, _interrupt)
    try:
        rows = grader.grade_batch(exercise, subs, out, cfg, args.jobs, secrets, roster=roster, resume=args.resume)
    except KeyboardInterrupt:
        print(
            f"interrupted: {out / classreport.GRADES} holds the submissions that finished; "
            "run again with --resume to grade the rest",
            file=sys.stderr,
        )
        return 130
    finally:
        signal.signal(signal.SIGTERM, old)
    print(
        f"wrote {len(rows)} results under {out / identity.SUBMISSIONS}, {out / classreport.GRADES} "
        f"and {out / 'pass_rates.csv'}"
    )
    failed = [f for f, _, res in rows if res["extra_data"]["status"] in grader.GRADER_SIDE]
    if failed:
        print(
            f"hwlib: grader error: {len(failed)} of {len(rows)} submission(s) could not be graded for a "
            f"reason on the grader's side (status grader_error), e.g. {failed[0]}",
            file=sys.stderr,
        )
        return grader.EXIT_GRADER
    return 0
