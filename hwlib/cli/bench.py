"""`hwlib bench NAME [--quick] [--json]`, `hwlib bench all [--quick] [--out FILE]` and
`hwlib bench predict [--part NAME]` (what the experiments should give on T4 ... H200: hwlib.bench.predict).

Registered by hwlib.cli through `register(subparsers)`. Progress of long sweeps goes to stderr, with
a step count ("[3/9] roofline (2/6): ..."), so `--json` output on stdout stays machine-readable.
`bench all` prints a summary table (one line per experiment: status and headline number); with --out
it also saves the run after every experiment, so an interrupted run keeps what it measured. An
out-of-memory ends the command with one line (exit status 1), never a traceback.
"""

from __future__ import annotations

import json
import sys

from hwlib import bench


def _elements(text) -> int:
    """--n: a whole number of elements >= 1 ('0' is an error, not "the default size")."""
    from hwlib.cli.calc import parse_whole

    return parse_whole(text)


def register(subparsers) -> None:
    names = list(bench.EXPERIMENTS) + ["all", "info", "predict"]
    p = subparsers.add_parser(
        "bench",
        help="measure this machine (GPU via CuPy, else CPU via NumPy)",
        description="Run the book's experiments on this machine. NAME: "
        + "; ".join(f"{k}: {v[1]}" for k, v in bench.EXPERIMENTS.items())
        + "; all: every experiment, summary table (--out saves the run); "
        "info: the device and backend; predict: the results a model predicts on T4, L4, A100, H100 "
        "and H200 (no GPU needed).",
    )
    p.add_argument("name", metavar="NAME", choices=names, help=" | ".join(names))
    p.add_argument("--quick", action="store_true", help="smaller sizes: seconds, not minutes")
    p.add_argument("--json", action="store_true", help="print the record as JSON on stdout")
    p.add_argument("--out", metavar="FILE", help="write the run (all) or record (NAME) as JSON to FILE")
    p.add_argument("--no-sweep", action="store_true", help="bandwidth: skip the working-set sweep")
    p.add_argument(
        "--n",
        type=_elements,
        metavar="ELEMENTS",
        help="bandwidth: elements per array, a whole number >= 1 (e.g. 16M; default: by size)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress messages on stderr")
    p.add_argument("--part", action="append", metavar="GPU", help="predict: only this part (repeatable)")
    p.set_defaults(func=main)


def main(args) -> int:
    from hwlib.bench import backend

    progress = not args.quiet
    if args.name == "predict":
        return _predict(args)
    if args.name == "info":
        b = backend.announce(file=sys.stderr)
        info = b.device_info()
        print(
            json.dumps({"backend": b.name, "reason": b.reason, "device": info}, indent=2)
            if args.json
            else "\n".join(f"{k}: {v}" for k, v in info.items())
        )
        return 0
    backend.announce(file=sys.stderr)
    try:
        return _run(args, progress)
    except MemoryError as exc:
        from hwlib.bench import _common

        print(
            f"hwlib bench {args.name}: out of memory ({_common.one_line(exc)}); try --quick"
            + (" or a smaller --n" if args.name == "bandwidth" else ""),
            file=sys.stderr,
        )
        return 1


def _predict(args) -> int:
    from hwlib.bench import predict

    names = tuple(args.part or predict.PARTS)
    try:
        out = json.dumps(predict.table(names), indent=1) if args.json else predict.format_table(names)
    except ValueError as exc:
        print(f"hwlib bench predict: {exc}", file=sys.stderr)
        return 2
    print(out)
    return 0


def _run(args, progress) -> int:
    if args.name == "all":
        from hwlib.bench import recorded

        save = (lambda name, rec, run: recorded.save(run, args.out)) if args.out else None
        run = bench.run_all(quick=args.quick, progress=progress, on_record=save)
        if args.out:
            recorded.save(run, args.out)
            print(f"saved {len(run['records'])} records to {args.out}", file=sys.stderr)
        print(json.dumps(run, indent=1) if args.json else summary_table(run))
        return 0
    extra = {}
    if args.name == "bandwidth":
        extra = {"sweep": not args.no_sweep, **({"n": args.n} if args.n is not None else {})}
    rec = bench.run(args.name, quick=args.quick, progress=progress, **extra)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rec, f, indent=1)
    print(json.dumps(rec, indent=1) if args.json else format_record(rec))
    return 1 if rec.get("status") == "failed" else 0


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
        return "\n".join(lines + [f"{rec.get('status', 'skipped')}: {rec.get('reason')}"])
    keep = (
        "kernel",
        "variant",
        "pattern",
        "format",
        "status",
        "shape",
        "dtype",
        "direction",
        "host_memory",
        "n",
        "size",
        "batch",
        "iters",
        "threads",
        "ilp",
        "stride",
        "offset_bytes",
        "working_set_bytes",
        "bytes",
        "bytes_moved",
        "seconds",
        "bytes_per_s",
        "flops_per_s",
        "useful_bytes_per_s",
        "useful_fraction",
        "model_efficiency",
        "tokens_per_s",
        "bound_tokens_per_s",
        "speedup",
        "slowdown",
        "rel_error",
        "reason",
        "reps_per_launch",
        "launch_bound",
    )
    for row in rec.get("results", []):
        lines.append("  " + "  ".join(f"{k}={_human(k, row[k])}" for k in keep if k in row))
    lines += [f"  note: {n}" for n in rec.get("notes", [])]
    return "\n".join(lines)


def _ok(rows, key):
    vals = [r[key] for r in rows if isinstance(r.get(key), (int, float)) and r.get("status", "ok") == "ok"]
    return max(vals) if vals else None


def headline(name: str, rec: dict) -> str:
    """One short result per experiment (GB = 1e9 bytes): the number the book quotes from it."""
    rows = rec.get("results", [])
    if rec.get("status") != "ok":
        return str(rec.get("reason", ""))[:90]
    if name == "bandwidth":
        best = {r["kernel"]: r["bytes_per_s"] for r in rows}
        text = "  ".join(f"{k} {v / 1e9:.1f}" for k, v in best.items()) + " GB/s"
        sweep = rec.get("sweep") or []
        if sweep:
            text += f"; sweep peak {max(p['bytes_per_s'] for p in sweep) / 1e9:.1f} GB/s"
        return text + ("; sweep: " + rec["sweep_error"][:40] if rec.get("sweep_error") else "")
    if name in ("matmul", "roofline"):
        return f"best {(_ok(rows, 'flops_per_s') or 0) / 1e12:.3g} TFLOP/s over {len(rows)} points"
    if name == "fusion":
        return f"fused speedup up to {_ok(rows, 'speedup') or 0:.1f}x"
    if name == "divergence":
        return f"slowdown up to {_ok(rows, 'slowdown') or 0:.1f}x"
    if name in ("occupancy", "transfer"):
        return f"best {(_ok(rows, 'bytes_per_s') or 0) / 1e9:.1f} GB/s over {len(rows)} points"
    if name == "formats":
        return (
            "  ".join(
                f"{r['format']} {r['flops_per_s'] / 1e12:.3g}"
                if r.get("status") == "ok"
                else f"{r['format']} {r.get('status')}"
                for r in rows
            )
            + " (TFLOP/s)"
        )
    if name == "decode":
        b1 = next((r for r in rows if r["batch"] == rows[0]["batch"]), None)
        return (
            (
                f"batch {b1['batch']}: {b1['tokens_per_s']:.4g} tokens/s; batch {rows[-1]['batch']}: "
                f"{rows[-1]['tokens_per_s']:.4g} tokens/s"
            )
            if b1
            else ""
        )
    if name == "tiles":
        sq = [r for r in rows if r.get("shape") == "square"]
        rates = [r["flops_per_s"] for r in sq]
        return (f"square N {sq[0]['n']}-{sq[-1]['n']}: {min(rates) / 1e12:.3g}-{max(rates) / 1e12:.3g} TFLOP/s"
                if sq else f"{len(rows)} points")  # fmt: skip
    if name == "coalescing":
        worst = min((r["useful_fraction"] for r in rows), default=None)
        return f"useful bandwidth down to {worst:.2f} x stride 1" if worst is not None else ""
    return f"{len(rows)} points"


def summary_table(run: dict) -> str:
    """A readable table of a run: experiment, status, launch-bound points, headline result."""
    dev = run.get("device", {}).get("name", "?")
    lines = [
        f"hwlib bench all - {dev} ({run.get('backend')}){' quick' if run.get('quick') else ''}",
        f"{'experiment':<11} {'status':<8} {'launch-bound':>12}  result",
    ]
    for name, rec in run["records"].items():
        rows = rec.get("results", []) + rec.get("sweep", [])
        bound = sum(1 for r in rows if r.get("launch_bound"))
        lines.append(
            f"{name:<11} {rec.get('status', '?'):<8} {f'{bound}/{len(rows)}' if rows else '-':>12}  "
            f"{headline(name, rec)}"
        )
    return "\n".join(lines)
