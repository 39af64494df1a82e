"""Compare `hwlib bench bandwidth` (NumPy on the CPU) with a STREAM-style C loop on the same machine.

Compiles tools/stream/stream.c with `gcc -O3 -march=native -fopenmp`, then alternates runs of the C
program and of `python -m hwlib bench bandwidth --json --no-sweep` with the same array length and the
same thread count (OMP_NUM_THREADS = hwlib's threads). Each round gives a ratio per kernel (hwlib's
best rate over C's best rate, both measured within seconds of each other); the reported ratio is the
median over the rounds. On a shared machine other tenants come and go within seconds: a ratio of two
runs far apart measures the neighbours, a ratio within one round mostly does not, and the median
drops the rounds where a neighbour hit only one side. Bytes are counted the same way on both sides
(STREAM: 2 arrays for copy/scale, 3 for add/triad).

    python tools/stream/compare.py [--rounds 9] [--n ELEMENTS] [--min-ratio 0.85] [--max-ratio 1.2]

Exit status 1 when any kernel's median ratio falls outside [--min-ratio, --max-ratio] (0 disables).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
KERNELS = ("copy", "scale", "add", "triad")


def build(workdir: str) -> str:
    gcc = shutil.which("gcc")
    if gcc is None:
        raise SystemExit("compare.py: gcc not found; it is needed to build the C reference")
    exe = os.path.join(workdir, "stream")
    subprocess.run([gcc, "-O3", "-march=native", "-fopenmp", os.path.join(HERE, "stream.c"), "-o", exe], check=True)
    return exe


def run_c(exe: str, n: int, threads: int, ntimes: int = 10) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))  # same thread count as hwlib used
    out = subprocess.run([exe, str(n), str(ntimes)], check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(out)


def run_hwlib(n: int | None) -> dict:
    cmd = [sys.executable, "-m", "hwlib", "bench", "bandwidth", "--json", "--no-sweep", "--quiet"]
    cmd += ["--n", str(n)] if n else []
    env = dict(os.environ, HWLIB_BACKEND="numpy")
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(out)


def compare(rounds: int = 9, n: int | None = None) -> dict:
    """Median per-round ratio per kernel over `rounds` alternating runs:
    {"n", "threads", "hwlib", "c" (median rates), "ratio" (median of per-round ratios), "rounds"}."""
    py_rates, c_rates, ratios = ({k: [] for k in KERNELS} for _ in range(3))
    threads = None
    with tempfile.TemporaryDirectory() as tmp:
        exe = build(tmp)
        for i in range(rounds):
            c_first = i % 2 == 1 and threads is not None  # alternate which side goes first (hwlib in round 0)
            c = run_c(exe, n, threads) if c_first else None
            rec = run_hwlib(n)
            n = rec["parameters"]["n"]  # the C loop uses exactly hwlib's array length and thread count
            threads = rec["parameters"]["threads"]
            c = c or run_c(exe, n, threads)
            py = {r["kernel"]: r["bytes_per_s"] for r in rec["results"]}
            for k in KERNELS:
                py_rates[k].append(py[k])
                c_rates[k].append(c[k])
                ratios[k].append(py[k] / c[k])
    med = statistics.median
    return {
        "n": n,
        "threads": threads,
        "rounds": rounds,
        "hwlib": {k: med(v) for k, v in py_rates.items()},
        "c": {k: med(v) for k, v in c_rates.items()},
        "ratio": {k: med(v) for k, v in ratios.items()},
        "ratios": ratios,
        "device": rec["device"]["name"],
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=9, help="alternating rounds; the median per-round ratio is reported")
    p.add_argument("--n", type=int, default=None, help="elements per array (default: hwlib's choice)")
    p.add_argument("--min-ratio", type=float, default=0.85)
    p.add_argument("--max-ratio", type=float, default=1.2)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    res = compare(args.rounds, args.n)
    if args.json:
        print(json.dumps(res, indent=1))
    else:
        print(
            f"{res['device']}: 3 arrays x {res['n']} float64 ({res['n'] * 8 / 2**20:.0f} MiB each), "
            f"{res['threads']} threads, median of {args.rounds} alternating rounds; GB = 1e9 bytes"
        )
        print(f"{'kernel':<8}{'hwlib (NumPy)':>16}{'C -O3 -march=native':>22}{'ratio':>8}")
        for k in KERNELS:
            print(f"{k:<8}{res['hwlib'][k] / 1e9:>11.2f} GB/s{res['c'][k] / 1e9:>17.2f} GB/s{res['ratio'][k]:>8.2f}")
    bad = [
        k
        for k in KERNELS
        if (args.min_ratio and res["ratio"][k] < args.min_ratio)
        or (args.max_ratio and res["ratio"][k] > args.max_ratio)
    ]
    if bad:
        print(f"outside {args.min_ratio:.2f}-{args.max_ratio:.2f} x the C loop: {', '.join(bad)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
