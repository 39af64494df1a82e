"""Calculator commands of `hwlib`: specs, roofline, memory, train, decode.

Each command prints the formula it used, the numbers put into it and the result, or with `--json`
one object {"command", "inputs", "outputs", "formulas"} with every quantity in SI base units.
Counts accept 7e9, 350M, 7B, 15.6T, 16_384 (k, M, B/G, T; "m" means million, never milli); batches,
device counts and matrix sizes must be whole. Fractions (--mfu, --scaling) accept 0.4 or 40%.
Context lengths (--seq) read "k" as 1024, as model cards do: 4k = 4096, 128k = 131072.
The peak precision defaults to the part's best 16-bit format (bf16, fp16 on a T4).

    hwlib train --params 350M --tokens 7B --gpu h100 --mfu 0.35 --price 3
"""
from __future__ import annotations

import argparse
import json

from . import flops, memory, models, roofline, specs, units

_STATE_BYTES = {"weights": 2, "gradients": 2, "master": 4, "adam": 8}
GPU_HELP = ("accelerator from the spec sheet: " + ", ".join(specs.names()) +
            " (case, spaces and dashes ignored; aliases such as h100, a100, t4 work)")


def parse_count(text) -> float:
    """'7e9', '350M', '7B', '15.6T', '4k', '16_384' -> float (hwlib.units.parse_number, without
    percentages); else argparse.ArgumentTypeError."""
    s = str(text).strip()
    try:
        if s.endswith("%"):
            raise ValueError(s)
        return units.parse_number(s, "count")
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a number like 7e9, 350M, 7B or 15.6T; got {text!r}") from None


def _whole(value: float, text) -> int:
    if value != int(value) or value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1 like 16, 1k or 16_384; got {text!r}")
    return int(value)


def parse_whole(text) -> int:
    """A count that must be a whole number >= 1 (batch, devices, matrix sizes): '16', '1k', '16_384'."""
    return _whole(parse_count(text), text)


def parse_context(text) -> int:
    """A context length, a whole number of tokens: like parse_count, but '4k' = 4096 and '128k' = 131072."""
    try:
        value = units.parse_number(str(text).strip(), "context", context=True)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a context length like 4096, 4k or 128k; got {text!r}") from None
    return _whole(value, text)


def parse_fraction(text) -> float:
    """A fraction such as an MFU: '0.4' or '40%' (the range is checked by the library)."""
    try:
        return units.parse_number(str(text).strip(), "fraction")
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a fraction like 0.4 or 40%; got {text!r}") from None


def _seq(shape, seq) -> int:
    """--seq, or 4096 tokens capped at the model's context; one longer than the context is an error."""
    if seq is None:
        return 4096 if shape is None else min(4096, shape.max_context)
    if shape is not None and seq > shape.max_context:
        raise ValueError(f"--seq {seq} exceeds the context of {shape.name} ({shape.max_context} tokens)")
    return seq


def _precision(acc, precision):
    """The precision asked for, or the part's best 16-bit format (bf16; fp16 on a T4)."""
    return acc.default_precision() if precision is None else precision


def fmt(x) -> str:
    """A number for a formula line: 16384 -> '16384', 3.5e8 -> '3.5e8', 0.35 -> '0.35'."""
    x = float(x)
    if x == int(x) and abs(x) < 1e6:
        return str(int(x))
    s = f"{x:.3g}"
    if "e" in s:
        mantissa, exponent = s.split("e")
        s = f"{mantissa}e{int(exponent)}"
    return s


def _unit(key: str) -> str:
    """The SI unit of an output, from its name (the names follow hwlib's: *_bytes, *_s, ...)."""
    if "tokens_per_s" in key:
        return "tokens/s"
    if "flops_per_s" in key:
        return "FLOP/s"
    if key.endswith("bytes") or "bytes_per" in key:
        return "bytes"
    if key.endswith("_s"):
        return "s"
    named = {"flops": "FLOP", "ridge_point": "FLOP/byte", "intensity": "FLOP/byte", "cost_usd": "USD",
             "device_hours": "device-h"}
    return named.get(key, "")


class Report:
    """Collects formula lines (for people) and, for --json, one record per result in the schema of
    `hwlib estimate`: {"command", "inputs", "quantities": [{key, value, unit, formula, inputs, text}]},
    plus "outputs" {key: value} and "formulas" {key: formula} for scripts written against them."""

    def __init__(self, command: str, **inputs):
        self.command, self.inputs, self.outputs, self.formulas, self.lines = command, inputs, {}, {}, []
        self.quantities = []

    def say(self, text: str):
        self.lines.append(text)

    def result(self, key: str, formula: str, numbers: str | None, value, human: str):
        self.outputs[key], self.formulas[key] = value, formula
        self.quantities.append({"key": key, "value": value, "unit": _unit(key), "formula": formula,
                                "inputs": numbers or "", "text": human})
        self.say(" = ".join(p for p in (formula, numbers, human) if p))

    def emit(self, as_json: bool) -> int:
        if as_json:
            print(json.dumps({"command": self.command, "inputs": self.inputs, "quantities": self.quantities,
                              "outputs": self.outputs, "formulas": self.formulas}, indent=2, ensure_ascii=False))
        else:
            print("\n".join(self.lines))
        return 0


def _model_and_params(args):
    """(shape or None, N) from --model or --params."""
    if getattr(args, "model", None):
        shape = models.get(args.model)
        return shape, float(shape.n_params())
    return None, args.params


def _bytes(x) -> str:
    return f"{units.format_bytes(x)} ({units.format_bytes(x, binary=True)})"


def _capacity(acc) -> str:
    """Device memory as the part has it (binary), e.g. '80.0 GiB (85.9 GB)'."""
    return f"{units.format_bytes(acc.memory_bytes, binary=True)} ({units.format_bytes(acc.memory_bytes)})"


def _fit_words(acc) -> str:
    return (f"{acc.name} has {_capacity(acc)}; a fit leaves {memory.HEADROOM:.0%} headroom and "
            f"{units.format_bytes(memory.CUDA_CONTEXT_BYTES, binary=True)} of CUDA context free")


def cmd_specs(args) -> int:
    if args.name is None:
        rows = specs.table(precision=args.precision or "bf16")
        if args.json:
            print(json.dumps({"command": "specs", "precision": rows[0]["precision"], "accelerators": rows},
                             indent=2, ensure_ascii=False))
            return 0
        p = rows[0]["precision"]
        print(f"{'accelerator':<15}{'memory':>10}{'bandwidth':>12}{p + ' peak (dense)':>20}{'ridge I* = π/β':>17}")
        for r in rows:
            peak = units.format_rate(r["peak_flops"]) if r["peak_flops"] else "—"
            ridge = f"{r['ridge_point']:.0f} FLOP/B" if r["ridge_point"] else "—"
            print(f"{r['name']:<15}{units.format_bytes(r['memory_bytes'], binary=True):>10}"
                  f"{units.format_bandwidth(r['bandwidth']):>12}{peak:>20}{ridge:>17}")
        return 0
    acc = specs.get(args.name)
    args.precision = _precision(acc, args.precision)
    fields = [k for k in ("memory_bytes", "bandwidth", "l2_bytes", "compute_units", "tdp_watts",
                          "interconnect_bandwidth", "price_per_hour_usd", "release_year")
              if getattr(acc, k) is not None]
    rep = Report("specs", name=acc.name, precision=args.precision)
    rep.outputs.update({k: getattr(acc, k) for k in fields})
    rep.outputs["peak_flops"] = {p: acc.peak_flops(p) for p in acc.precisions()}
    rep.outputs["sources"] = {k: acc.source(k) for k in fields + acc.precisions()}
    rep.say(f"{acc.name} ({acc.vendor}, {acc.kind})")
    for k in fields:
        v = getattr(acc, k)
        shown = (f"{units.format_bytes(v, binary=True)} ({units.format_bytes(v)})" if k.endswith("bytes")
                 else units.format_bandwidth(v) + (" per direction" if k == "interconnect_bandwidth" else "")
                 if "bandwidth" in k else fmt(v))
        rep.say(f"  {k:<24}{shown:<28}[{acc.confidence(k)}] {acc.source(k)}")
    for p in acc.precisions():
        rep.say(f"  {'peak ' + p + ' (dense)':<24}{units.format_rate(acc.peak_flops(p)):<28}"
                f"[{acc.confidence(p)}] {acc.source(p)}")
    pi = acc.peak_flops(args.precision)
    ridge = roofline.ridge_point(pi, acc.bandwidth)
    rep.result("ridge_point", "I* = π/β", f"{fmt(pi)} / {fmt(acc.bandwidth)}", ridge, f"{ridge:.0f} FLOP/byte")
    return rep.emit(args.json)


def cmd_roofline(args) -> int:
    acc = specs.get(args.gpu)
    args.precision = _precision(acc, args.precision)
    pi, beta = acc.peak_flops(args.precision), acc.bandwidth
    rep = Report("roofline", gpu=acc.name, precision=args.precision, peak_flops=pi, bandwidth=beta)
    ridge = roofline.ridge_point(pi, beta)
    rep.result("ridge_point", "I* = π/β", f"{fmt(pi)} / {fmt(beta)}", ridge, f"{ridge:.1f} FLOP/byte")
    intensity = args.intensity
    if args.matmul:
        m, n, k = args.matmul
        b = memory.bytes_per_value(args.precision)
        intensity = roofline.matmul_intensity(m, n, k, b)
        rep.inputs.update(m=m, n=n, k=k, bytes_per_element=b)
        rep.result("intensity", "I = 2mnk / ((mk + kn + mn)·b)",
                   f"2 × {fmt(m)} × {fmt(n)} × {fmt(k)} / (({fmt(m * k)} + {fmt(k * n)} + {fmt(m * n)}) × {fmt(b)})",
                   intensity, f"{intensity:.4g} FLOP/byte")
        f, q = 2 * m * n * k, (m * k + k * n + m * n) * b
        t = roofline.time_s(f, q, pi, beta)
        rep.result("time_s", "t ≥ max(2mnk/π, bytes/β)", f"max({fmt(f)} / {fmt(pi)}, {fmt(q)} / {fmt(beta)})",
                   t, units.format_seconds(t))
    if intensity is not None:
        rep.inputs["intensity"] = intensity
        p = roofline.attainable(intensity, pi, beta)
        rep.result("attainable_flops_per_s", "P = min(π, β·I)",
                   f"min({fmt(pi)}, {fmt(beta)} × {fmt(intensity)})", p,
                   f"{units.format_rate(p)} ({100 * p / pi:.0f} % of peak)")
        rep.outputs["bound"] = roofline.bound(intensity, pi, beta)
        rep.formulas["bound"] = "memory if I < I* else compute"
        rep.say(f"{rep.outputs['bound']}-bound (I = {intensity:.4g} {'<' if intensity < ridge else '≥'} I* = {ridge:.1f})")
    return rep.emit(args.json)


def cmd_memory(args) -> int:
    shape, n = _model_and_params(args)
    b = memory.bytes_per_value(args.dtype)
    args.seq = _seq(shape, args.seq)
    rep = Report("memory", n_params=n, dtype=args.dtype, seq_len=args.seq, batch=args.batch,
                 model=shape.name if shape else None)
    if shape:
        rep.say(f"{shape.name}: N = {n:,.0f} parameters ({shape.source})")
    w = memory.weights_bytes(n, args.dtype)
    rep.result("weights_bytes", memory.FORMULAS["weights_bytes"], f"{fmt(n)} × {fmt(b)} B", w, _bytes(w))
    s = memory.training_state_bytes(n)
    rep.result("training_state_bytes", memory.FORMULAS["training_state_bytes"], f"16 × {fmt(n)} B", s, _bytes(s))
    for part, v in memory.training_state_breakdown(n).items():
        rep.outputs[f"training_{part}_bytes"] = v
        rep.say(f"  {part:<10}{_STATE_BYTES[part]} B/param × {fmt(n)} = {_bytes(v)}")
    if shape:
        kv = memory.kv_cache_bytes_for(shape, args.seq, args.batch, args.dtype)
        rep.result("kv_cache_bytes", memory.FORMULAS["kv_cache_bytes"],
                   f"2 × {shape.n_layers} × {shape.n_kv_heads} × {shape.head_dim} × {fmt(args.seq)} × "
                   f"{fmt(args.batch)} × {fmt(b)} B", kv, _bytes(kv))
        total = memory.inference_bytes(n, args.dtype, kv)
        rep.result("inference_bytes", memory.FORMULAS["inference_bytes"], f"{fmt(w)} + {fmt(kv)} B", total, _bytes(total))
    else:
        rep.say("KV cache: needs a model shape; use --model (see hwlib.models.names())")
    if args.gpu:
        acc = specs.get(args.gpu)
        need = rep.outputs.get("inference_bytes", w)
        fits = {"inference": memory.fits(need, acc.memory_bytes), "training_state": memory.fits(s, acc.memory_bytes)}
        rep.outputs["fits"] = fits
        rep.outputs["gpus_needed"] = {"inference": memory.devices_needed(need, acc.memory_bytes),
                                      "training_state": memory.devices_needed(s, acc.memory_bytes)}
        rep.formulas["fits"] = memory.FORMULAS["fits"] + " (hwlib.memory.fits)"
        rep.say(f"{_fit_words(acc)}: inference {'fits' if fits['inference'] else 'does not fit'} "
                f"({rep.outputs['gpus_needed']['inference']} GPU(s)), training state "
                f"{'fits' if fits['training_state'] else 'does not fit'} "
                f"({rep.outputs['gpus_needed']['training_state']} GPU(s); activations not counted)")
    return rep.emit(args.json)


def cmd_train(args) -> int:
    shape, n = _model_and_params(args)
    acc = specs.get(args.gpu)
    args.precision = _precision(acc, args.precision)
    pi = acc.peak_flops(args.precision)
    price = args.price if args.price is not None else acc.price_per_hour_usd
    rep = Report("train", n_params=n, n_tokens=args.tokens, gpu=acc.name, precision=args.precision,
                 peak_flops=pi, n_devices=args.devices, mfu=args.mfu, scaling_efficiency=args.scaling,
                 price_per_device_hour=price)
    c = flops.training_flops(n, args.tokens)
    rep.result("flops", "C = 6ND", f"6 × {fmt(n)} × {fmt(args.tokens)}", c, units.format_flops(c))
    t = flops.training_time_s(c, pi, args.mfu, args.devices, args.scaling)
    rep.result("time_s", "t = 6ND / (u·π·G·η)",
               f"{fmt(c)} / ({fmt(args.mfu)} × {fmt(pi)} × {fmt(args.devices)} × {fmt(args.scaling)})",
               t, f"{fmt(t)} s = {units.format_seconds(t)}")
    gpu_hours = t * args.devices / 3600
    rep.result("device_hours", "t × G / 3600", None, gpu_hours, f"{fmt(gpu_hours)} {acc.name}-hours")
    if price is None:
        rep.say(f"cost: no price for {acc.name} in the sheet; pass --price USD_PER_HOUR")
    else:
        cost = flops.cost_usd(t, price, args.devices)
        rep.result("cost_usd", "$ = t/3600 × p × G", f"{fmt(t)} / 3600 × {fmt(price)} × {fmt(args.devices)}",
                   cost, units.format_usd(cost))
    return rep.emit(args.json)


def cmd_decode(args) -> int:
    shape, n = _model_and_params(args)
    acc = specs.get(args.gpu)
    args.precision = _precision(acc, args.precision)
    args.seq = _seq(shape, args.seq)
    w = memory.weights_bytes(n, args.dtype)
    kv = memory.kv_cache_bytes_for(shape, args.seq, 1, args.dtype) if shape else 0.0
    rep = Report("decode", n_params=n, dtype=args.dtype, gpu=acc.name, bandwidth=acc.bandwidth,
                 batch=args.batch, seq_len=args.seq if shape else None, model=shape.name if shape else None)
    rep.result("model_bytes", memory.FORMULAS["weights_bytes"], f"{fmt(n)} × {fmt(memory.bytes_per_value(args.dtype))} B", w, _bytes(w))
    if shape:
        rep.result("kv_bytes_per_sequence", "KV = 2·L·h_kv·d_head·s·b", None, kv,
                   f"{_bytes(kv)} at {fmt(args.seq)} tokens")
    tps = flops.decode_tokens_per_s_bound(w, acc.bandwidth, args.batch, kv)
    rep.result("tokens_per_s_bound", "tokens/s ≤ B·β / (W + B·KV)",
               f"{fmt(args.batch)} × {fmt(acc.bandwidth)} / ({fmt(w)} + {fmt(args.batch)} × {fmt(kv)})",
               tps, f"{units.format_quantity(tps, 'tokens/s')} ({units.format_quantity(tps / args.batch, 'per sequence')})")
    need = w + args.batch * kv
    gpus = memory.devices_needed(need, acc.memory_bytes)
    rep.outputs["fits_one_device"] = gpus == 1
    if gpus > 1:
        warning = (f"warning: weights + KV cache ({units.format_bytes(need)}) do not fit one {acc.name} "
                   f"({units.format_bytes(acc.memory_bytes, binary=True)}, less {memory.HEADROOM:.0%} headroom "
                   f"and the CUDA context): they need {gpus} devices; the ceilings assume one device held them")
        rep.outputs["warnings"] = [warning]
        rep.say(warning)
    try:
        pi = acc.peak_flops(args.precision)
    except ValueError as exc:  # e.g. a T4 has no bf16 rate: the bandwidth bound still stands
        rep.say(f"compute ceiling not shown: {exc}")
    else:
        compute = pi / flops.forward_flops(n, 1)
        rep.result("tokens_per_s_compute_bound", "tokens/s ≤ π / 2N", f"{fmt(pi)} / (2 × {fmt(n)})",
                   compute, units.format_quantity(compute, "tokens/s"))
        rep.say("memory-bound: the bandwidth ceiling is the lower one" if tps < compute
                else "compute-bound at this batch: the compute ceiling is the lower one")
    return rep.emit(args.json)


def _common(p, fn, params_or_model=False):
    p.add_argument("--json", action="store_true", help="print one JSON object (SI units)")
    p.set_defaults(func=fn)
    if params_or_model:
        g = p.add_mutually_exclusive_group(required=True)
        g.add_argument("--params", type=parse_count, metavar="N", help="parameter count, e.g. 7e9 or 7B")
        g.add_argument("--model", metavar="NAME", help="a named shape, e.g. llama-3-8b (hwlib.models)")


def register(subparsers) -> None:
    """Add specs, roofline, memory, train and decode to the `hwlib` command line."""
    p = subparsers.add_parser("specs", help="accelerator spec sheet (all, or one with sources)")
    p.add_argument("name", nargs="?", help="accelerator, e.g. h100; omit for the table")
    p.add_argument("--precision", help="precision for peak and ridge (default: the part's best 16-bit "
                                        "format, bf16 or fp16; bf16 for the table)")
    _common(p, cmd_specs)

    p = subparsers.add_parser("roofline", help="ridge point, attainable FLOP/s and bound of a kernel")
    p.add_argument("--gpu", required=True, metavar="NAME", help=GPU_HELP)
    p.add_argument("--precision", help="default: the part's best 16-bit format (bf16; fp16 on a T4)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--intensity", type=float, metavar="I", help="arithmetic intensity, FLOP/byte")
    g.add_argument("--matmul", type=parse_whole, nargs=3, metavar=("M", "N", "K"), help="an M×K by K×N matmul")
    _common(p, cmd_roofline)

    p = subparsers.add_parser("memory", help="weights, training state and KV cache in bytes")
    p.add_argument("--dtype", default="bf16", help="weights/KV dtype (default bf16)")
    p.add_argument("--seq", type=parse_context, help="context length for the KV cache (4k = 4096; default 4096 "
                                                    "or the model's context when shorter)")
    p.add_argument("--batch", type=parse_whole, default=1, help="sequences for the KV cache")
    p.add_argument("--gpu", metavar="NAME", help="say whether it fits this accelerator; " + GPU_HELP)
    _common(p, cmd_memory, params_or_model=True)

    p = subparsers.add_parser("train", help="training FLOPs (6ND), time and cost")
    p.add_argument("--tokens", type=parse_count, required=True, metavar="D", help="training tokens, e.g. 15.6T")
    p.add_argument("--gpu", required=True, metavar="NAME", help=GPU_HELP)
    p.add_argument("--gpus", "--devices", dest="devices", type=parse_whole, default=1, metavar="G",
                   help="devices G (default 1; --devices is the same flag)")
    p.add_argument("--mfu", type=parse_fraction, default=0.4, help="model FLOPs utilisation in (0, 1], e.g. 0.4 or 40%% (default 0.4)")
    p.add_argument("--scaling", type=parse_fraction, default=1.0, help="scaling efficiency across devices (default 1)")
    p.add_argument("--price", type=float, help="USD per device-hour (default: the sheet's, if any)")
    p.add_argument("--precision", help="peak used (default: the part's best 16-bit format, bf16 or fp16)")
    _common(p, cmd_train, params_or_model=True)

    p = subparsers.add_parser("decode", help="bandwidth ceiling on decoding tokens/s")
    p.add_argument("--gpu", required=True, metavar="NAME", help=GPU_HELP)
    p.add_argument("--dtype", default="bf16", help="weights/KV dtype (default bf16)")
    p.add_argument("--batch", type=parse_whole, default=1, metavar="B", help="sequences decoded together")
    p.add_argument("--seq", type=parse_context, help="context per sequence (KV read, with --model; 4k = 4096; "
                                                    "default 4096 or the model's context)")
    p.add_argument("--precision", help="precision of the compute ceiling (default: the part's best 16-bit format)")
    _common(p, cmd_decode, params_or_model=True)
