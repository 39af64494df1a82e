"""Command line: `hwlib <command> ...` (also `python -m hwlib ...`).

Each command family registers itself from its own module so the calculators, the benchmarks and the
grader stay separate: hwlib.cli.calc (specs, roofline, memory, train, decode, and the shared flag
vocabulary and result view), hwlib.cli.plan (estimate, diagnose), hwlib.cli.models (moe, finetune,
energy, speculative, rent), hwlib.cli.layout (plan-layout), hwlib.cli.bench (bench) and
hwlib.grading.cli (grade). A new family is a module `hwlib/cli/<name>.py` with `register(subparsers)`,
named in COMMAND_MODULES. Every calculator's
--json is one document of `hwlib.calculator.SCHEMA`. Bad arguments: one line on stderr, exit status 2.
`hwlib` alone prints the usage; output piped into `head` ends quietly. `hwlib --version` prints the
edition (hwlib.__version__). The grader's commands need the `grading` extra (nbclient, nbformat,
ipykernel); without it they stop with one line saying what to install.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import sys

# Modules that define `register(subparsers)`; each subcommand sets `func(args) -> int`.
COMMAND_MODULES = ["hwlib.cli.calc", "hwlib.cli.plan", "hwlib.cli.models", "hwlib.cli.bench", "hwlib.grading.cli"]
COMMAND_MODULES.append("hwlib.cli.layout")  # plan-layout: the parallel-layout planner (chapter 7)
COMMAND_MODULES.append("hwlib.cli.serve")  # serve: the serving planner (chapter 12)
# Commands that run notebooks, and the modules of the `grading` extra they import (pyproject.toml).
GRADING_COMMANDS = ("grade", "grade-package")
GRADING_MODULES = ("nbclient", "nbformat", "ipykernel")


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2
        self.exit(2, f"hwlib: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    from .. import __version__

    parser = _Parser(prog="hwlib", description="Hardware for AI calculators, benchmarks and grader")
    parser.add_argument("--version", action="version", version=f"hwlib {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name in COMMAND_MODULES:  # a name that does not import is an error, never a silently missing command
        importlib.import_module(name).register(sub)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv:  # bare `hwlib`: what it can do, not an error
        parser.print_help()
        return 0
    args = parser.parse_args(argv)
    missing = missing_grading_modules() if args.command in GRADING_COMMANDS else []
    if missing:
        print(
            f"hwlib: error: {args.command} needs the grading extra (missing: {', '.join(missing)}): "
            'pip install "hwlib[grading]"',
            file=sys.stderr,
        )
        return 2
    try:
        return int(args.func(args) or 0)
    except (ValueError, KeyError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"hwlib: error: {msg}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `hwlib specs | head`: the reader left; no traceback
        _silence_stdout()
        return 141  # 128 + SIGPIPE, what a shell reports for a closed pipe


def missing_grading_modules() -> list[str]:
    """The modules of the `grading` extra that this environment cannot import."""
    return [name for name in GRADING_MODULES if importlib.util.find_spec(name) is None]


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush does not raise again (Python docs,
    "Note on SIGPIPE")."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout without a file descriptor (captured in tests)
        pass


if __name__ == "__main__":
    sys.exit(main())
