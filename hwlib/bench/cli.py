"""`hwlib bench NAME [--quick] [--json]` and `hwlib bench all [--quick] --out FILE`.

Registered by hwlib.cli through `register(subparsers)`. Progress of long sweeps goes to stderr so
`--json` output on stdout stays machine-readable.
"""
from __future__ import annotations

import json
import sys

from hwlib import bench


def register(subparsers) -> None:
    names = list(bench.EXPERIMENTS) + ["all", "info"]
    p = subparsers.add_parser("bench", help="measure this machine (GPU via CuPy, else CPU via NumPy)",
                              description="Run the book's experiments on this machine. NAME: " +
                              "; ".join(f"{k}: {v[1]}" for k, v in bench.EXPERIMENTS.items()) +
                              "; all: every experiment (needs --out); info: the device and backend.")
    p.add_argument("name", metavar="NAME", choices=names, help=" | ".join(names))
    p.add_argument("--quick", action="store_true", help="smaller sizes: seconds, not minutes")
    p.add_argument("--json", action="store_true", help="print the record as JSON on stdout")
    p.add_argument("--out", metavar="FILE", help="write the run (all) or record (NAME) as JSON to FILE")
    p.add_argument("--no-sweep", action="store_true", help="bandwidth: skip the working-set sweep")
    p.add_argument("--n", type=int, metavar="ELEMENTS", help="bandwidth: elements per array")
    p.add_argument("--quiet", action="store_true", help="no progress messages on stderr")
    p.set_defaults(func=main)


def main(args) -> int:
    from hwlib import backend
    progress = not args.quiet
    if args.name == "info":
        b = backend.announce(file=sys.stderr)
        info = b.device_info()
        print(json.dumps({"backend": b.name, "reason": b.reason, "device": info}, indent=2) if args.json
              else "\n".join(f"{k}: {v}" for k, v in info.items()))
        return 0
    backend.announce(file=sys.stderr)
    if args.name == "all":
        if not args.out:
            raise ValueError("bench all needs --out FILE (where to save the run); got none")
        from hwlib.bench import recorded
        run = bench.run_all(quick=args.quick, progress=progress)
        recorded.save(run, args.out)
        print(f"saved {len(run['records'])} records to {args.out}", file=sys.stderr)
        if args.json:
            print(json.dumps(run, indent=1))
        return 0
    extra = {}
    if args.name == "bandwidth":
        extra = {"sweep": not args.no_sweep, **({"n": args.n} if args.n else {})}
    rec = bench.run(args.name, quick=args.quick, progress=progress, **extra)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rec, f, indent=1)
    print(json.dumps(rec, indent=1) if args.json else format_record(rec))
    return 0


def _human(key: str, value) -> str:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return str(value)
    if isinstance(value, int) and not key.endswith("bytes"):
        return str(value)
    if key.endswith("bytes_per_s"):
        return f"{value / 1e9:.2f} GB/s"
    if key.endswith("flops_per_s"):
        return f"{value / 1e9:.1f} GFLOP/s"
    if key.endswith("tokens_per_s"):
        return f"{value:.4g} tokens/s"
    if key.startswith("seconds") or key.endswith("_s"):
        return f"{value * 1e3:.3f} ms"
    if key.endswith("bytes"):
        return f"{value / 2**20:.1f} MiB" if value >= 2**20 else f"{value:.0f} B"
    return f"{value:.4g}"


def format_record(rec: dict) -> str:
    """A short human-readable table of a record (GB = 1e9 bytes, MiB = 2**20 bytes)."""
    dev = rec.get("device", {}).get("name", "?")
    lines = [f"{rec.get('title', rec.get('experiment'))} - live on {dev} ({rec.get('backend')})"]
    if rec.get("status") != "ok":
        return "\n".join(lines + [f"skipped: {rec.get('reason')}"])
    keep = ("kernel", "variant", "pattern", "format", "status", "shape", "dtype", "direction", "host_memory",
            "n", "size", "batch", "iters", "threads", "ilp", "working_set_bytes", "bytes", "bytes_moved", "seconds",
            "bytes_per_s", "flops_per_s", "tokens_per_s", "bound_tokens_per_s", "speedup", "slowdown", "rel_error",
            "reason")
    for row in rec.get("results", []):
        lines.append("  " + "  ".join(f"{k}={_human(k, row[k])}" for k in keep if k in row))
    lines += [f"  note: {n}" for n in rec.get("notes", [])]
    return "\n".join(lines)
