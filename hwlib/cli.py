"""Command line: `hwlib <command> ...` (also `python -m hwlib ...`).

Each command family registers itself from its own module so the calculators, the benchmarks and the
grader stay separate: hwlib.cli_calc (specs, roofline, memory, train, decode), hwlib.cli_plan
(estimate, diagnose), hwlib.bench.cli (bench) and hwlib.grading.cli (grade). Bad arguments: one
line on stderr, exit status 2.
"""
from __future__ import annotations

import argparse
import importlib
import sys

# Modules that define `register(subparsers)`; each subcommand sets `func(args) -> int`.
COMMAND_MODULES = ["hwlib.cli_calc", "hwlib.cli_plan", "hwlib.cli_models", "hwlib.bench.cli", "hwlib.grading.cli"]


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2
        self.exit(2, f"hwlib: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="hwlib", description="Hardware for AI calculators, benchmarks and grader")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:  # that family is not installed/written yet
                continue
            raise
        module.register(sub)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (ValueError, KeyError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"hwlib: error: {msg}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
