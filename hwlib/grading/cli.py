"""`hwlib grade EXERCISE SUBMISSION... [--checks DIR] [--out DIR] [--jobs N] [--timeout-cell S]
[--timeout-total S]`: grade a class's notebooks (registered by hwlib.cli)."""
from __future__ import annotations

import sys
from pathlib import Path


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "grade", help="grade exercise notebooks (results.json per submission, grades.csv)",
        description="Run each submission in a fresh, sandboxed kernel and grade its answers against "
                    "the exercise's public checks and, with --checks, the instructor's hidden checks.")
    p.add_argument("exercise", help="exercise id or folder, e.g. ex01_memory_budget or exercises/ex01_memory_budget")
    p.add_argument("submissions", nargs="+", help="notebooks, or folders of them")
    p.add_argument("--checks", metavar="DIR", help="folder of hidden checks: DIR/<id>.yaml or DIR/<id>/checks.yaml")
    p.add_argument("--out", metavar="DIR", default="grades", help="output folder (default: ./grades)")
    p.add_argument("--jobs", type=int, default=1, metavar="N", help="submissions graded in parallel (default 1)")
    p.add_argument("--timeout-cell", type=float, metavar="S", help="seconds per cell (default: exercise's, else 30)")
    p.add_argument("--timeout-total", type=float, metavar="S", help="seconds per notebook (default: exercise's, else 300)")
    p.add_argument("--memory-mb", type=float, metavar="MB", help="address-space limit of a kernel (default 2048)")
    box = p.add_mutually_exclusive_group()
    box.add_argument("--no-sandbox", action="store_true", help="do not use bwrap even where it works")
    box.add_argument("--require-sandbox", action="store_true", help="refuse to grade without a working bwrap")
    p.set_defaults(func=run)


def run(args) -> int:
    from . import grader, sandbox, spec

    for name, value in (("--jobs", args.jobs), ("--timeout-cell", args.timeout_cell),
                        ("--timeout-total", args.timeout_total), ("--memory-mb", args.memory_mb)):
        if value is not None and not value > 0:
            raise ValueError(f"{name} must be > 0; got {value}")
    exercise = spec.load_exercise(args.exercise, args.checks)
    files = grader.expand(args.submissions)
    if not files:
        raise ValueError("no submissions found in " + ", ".join(args.submissions))
    use_bwrap = False if args.no_sandbox else (True if args.require_sandbox else None)
    if use_bwrap is not False and not sandbox.bwrap_available():
        if use_bwrap:
            raise ValueError("--require-sandbox: bwrap is missing or cannot create namespaces here")
        print("WARNING: bwrap (bubblewrap) not available: submissions run UNSANDBOXED "
              "(resource limits and a scrubbed environment only; they can read your files and the network)",
              file=sys.stderr)
        use_bwrap = False
    elif use_bwrap is False:
        print("WARNING: --no-sandbox: submissions run UNSANDBOXED (resource limits and a scrubbed "
              "environment only)", file=sys.stderr)
    cfg = grader.configure(exercise, args.timeout_cell, args.timeout_total, args.memory_mb, use_bwrap)
    out = Path(args.out)
    secrets = [p for p in (args.checks, str(out)) if p] + [str(f.parent) for f in files]
    hidden = sum(c.hidden for c in exercise.checks)
    print(f"grading {len(files)} submission(s) of {exercise.id}: {len(exercise.checks)} checks "
          f"({hidden} hidden), {exercise.max_score:g} points; sandbox: "
          f"{'bwrap' if use_bwrap is not False else 'none'}; jobs: {args.jobs}")
    rows = grader.grade_batch(exercise, files, out, cfg, args.jobs, secrets)
    print(f"wrote {len(rows)} results and {out / 'grades.csv'}")
    return 0
