"""Compare `hwlib bench bandwidth` (NumPy on the CPU) with a STREAM-style C loop on the same machine.

Compiles tools/stream/stream.c with `gcc -O3 -fopenmp`, then alternates runs of the C program and of
`python -m hwlib bench bandwidth --json --no-sweep` with the same array length, keeps the best rate of
each kernel over the rounds, and prints both with their ratio. On a shared machine other tenants
come and go within seconds; many short alternating rounds give both sides the same quiet moments
(3 rounds under load gave ratios anywhere from 0.5 to 1.6 here; 10 rounds settle).
Bytes are counted the same way on both sides (STREAM: 2 arrays for copy/scale, 3 for add/triad).

    python tools/stream/compare.py [--rounds 10] [--n ELEMENTS] [--min-ratio 0.85]

Exit status 1 when copy or triad falls below --min-ratio of the C loop (0 disables the check).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
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
    subprocess.run([gcc, "-O3", "-fopenmp", os.path.join(HERE, "stream.c"), "-o", exe], check=True)
    return exe


def run_c(exe: str, n: int, ntimes: int = 10) -> dict:
    out = subprocess.run([exe, str(n), str(ntimes)], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def run_hwlib(n: int | None) -> dict:
    cmd = [sys.executable, "-m", "hwlib", "bench", "bandwidth", "--json", "--no-sweep", "--quiet"]
    cmd += ["--n", str(n)] if n else []
    env = dict(os.environ, HWLIB_BACKEND="numpy")
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(out)


def compare(rounds: int = 10, n: int | None = None) -> dict:
    """Best bytes/s per kernel over `rounds` alternating runs: {"n", "threads", "hwlib", "c", "ratio"}."""
    best_c, best_py, threads = {k: 0.0 for k in KERNELS}, {k: 0.0 for k in KERNELS}, None
    with tempfile.TemporaryDirectory() as tmp:
        exe = build(tmp)
        for _ in range(rounds):
            rec = run_hwlib(n)
            n = rec["parameters"]["n"]  # the C loop uses exactly hwlib's array length
            threads = rec["parameters"]["threads"]
            for r in rec["results"]:
                best_py[r["kernel"]] = max(best_py[r["kernel"]], r["bytes_per_s"])
            os.environ["OMP_NUM_THREADS"] = str(threads)  # same thread count as hwlib used
            c = run_c(exe, n)
            for k in KERNELS:
                best_c[k] = max(best_c[k], c[k])
    ratio = {k: best_py[k] / best_c[k] for k in KERNELS}
    return {"n": n, "threads": threads, "hwlib": best_py, "c": best_c, "ratio": ratio,
            "device": rec["device"]["name"]}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=10, help="alternating rounds; best of each side is kept")
    p.add_argument("--n", type=int, default=None, help="elements per array (default: hwlib's choice)")
    p.add_argument("--min-ratio", type=float, default=0.85)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    res = compare(args.rounds, args.n)
    if args.json:
        print(json.dumps(res, indent=1))
    else:
        print(f"{res['device']}: 3 arrays x {res['n']} float64 ({res['n'] * 8 / 2**20:.0f} MiB each), "
              f"{res['threads']} threads, best of {args.rounds} rounds; GB = 1e9 bytes")
        print(f"{'kernel':<8}{'hwlib (NumPy)':>16}{'C -O3 -fopenmp':>17}{'ratio':>8}")
        for k in KERNELS:
            print(f"{k:<8}{res['hwlib'][k] / 1e9:>11.2f} GB/s{res['c'][k] / 1e9:>12.2f} GB/s{res['ratio'][k]:>8.2f}")
    bad = [k for k in ("copy", "triad") if args.min_ratio and res["ratio"][k] < args.min_ratio]
    if bad:
        print(f"below {args.min_ratio:.0%} of the C loop: {', '.join(bad)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
