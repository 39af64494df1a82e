"""Time limits that scale with how fast this machine runs now, so a loaded or slow machine gets
proportionally more time instead of a failure (the suite also runs beside a CPU-bound process).

factor() times a fixed pure-Python loop (300 000 multiply-adds) a few times and divides the
median by REFERENCE_S, what one quiet core of a current x86 server takes; it is never below 1.
Use scaled(limit) for a limit a correct run must stay under (a grader's per-cell limit for a correct
notebook, a subprocess's hang guard); a limit meant to be hit (an infinite loop) needs no scaling.
"""

from __future__ import annotations

import functools
import os
import statistics
import time

REFERENCE_S = 0.04


def _loop() -> float:
    t0, s = time.perf_counter(), 0
    for i in range(300_000):
        s += i * i
    return time.perf_counter() - t0


@functools.cache
def factor() -> float:
    """How many times slower than the reference this machine runs now (>= 1); HWLIB_TEST_SLOWDOWN
    overrides the measurement."""
    if os.environ.get("HWLIB_TEST_SLOWDOWN"):
        return max(1.0, float(os.environ["HWLIB_TEST_SLOWDOWN"]))
    return max(1.0, statistics.median(_loop() for _ in range(5)) / REFERENCE_S)


def scaled(seconds: float) -> float:
    """`seconds` times factor(), rounded up to a whole second."""
    return float(-(-seconds * factor() // 1))


def arg(seconds: float) -> str:
    """scaled(seconds) as a command-line argument ("--timeout-cell", arg(3))."""
    return f"{scaled(seconds):g}"
