"""Calculator commands of `hwlib`: specs, roofline, memory, train, decode; and what every calculator
command shares: the flag vocabulary (`FLAGS`, added with `flag`) and the result view (`Report`).

`memory`, `train` and `decode` are views over `calculator.estimate` (`Report.take` shows its quantities);
the others build `hwlib.calculator.Quantity` records through `Report.add`, whose formula text comes
from the FORMULAS beside the function that computed the value; it prints each as "formula = numbers
= result", or with `--json` the one document of `hwlib.calculator.SCHEMA` (SI base units).
Counts accept 7e9, 350M, 7B, 15.6T, 16_384 (k, M, B/G, T; "m" means million, never milli); batches,
device counts and matrix sizes must be whole. Fractions (--mfu, --scaling) accept 0.4 or 40%.
Context lengths (--seq) read "k" as 1024, as model cards do: 4k = 4096, 128k = 131072.
The peak precision defaults to the part's best 16-bit format (bf16, fp16 on a T4).

    hwlib train --params 350M --tokens 7B --gpu h100 --mfu 0.35 --price 3
"""

from __future__ import annotations

import argparse
import json

from .. import calculator, flops, memory, models, roofline, specs, units
from ..calculator import fmt

GPU_HELP = (
    "accelerator from the spec sheet: "
    + ", ".join(specs.names())
    + " (case, spaces and dashes ignored; aliases such as h100, a100, t4 work)"
)


def _number(text, kind, example, context=False, percent=True) -> float:
    """The one flag parser: hwlib.units.parse_number (k, M, B/G, T; '40%'), else argparse's error
    naming what is accepted (`example`)."""
    s = str(text).strip()
    try:
        if s.endswith("%") and not percent:
            raise ValueError(s)
        return units.parse_number(s, kind, context=context)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {example}; got {text!r}") from None


def _whole(value: float, text) -> int:
    if value != int(value) or value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1 like 16, 1k or 16_384; got {text!r}")
    return int(value)


def parse_count(text) -> float:
    """'7e9', '350M', '7B', '15.6T', '4k', '16_384' -> float (no percentages)."""
    return _number(text, "count", "a number like 7e9, 350M, 7B or 15.6T", percent=False)


def parse_whole(text) -> int:
    """A count that must be a whole number >= 1 (batch, devices, matrix sizes): '16', '1k', '16_384'."""
    return _whole(parse_count(text), text)


def parse_context(text) -> int:
    """A context length, a whole number of tokens: like parse_count, but '4k' = 4096 and '128k' = 131072."""
    return _whole(_number(text, "context", "a context length like 4096, 4k or 128k", context=True), text)


def parse_fraction(text) -> float:
    """A fraction such as an MFU: '0.4' or '40%' (the range is checked by the library)."""
    return _number(text, "fraction", "a fraction like 0.4 or 40%")


def parse_amount(text) -> float:
    """A non-negative amount such as a price in USD per hour: '3', '2.49' (the library checks the range)."""
    return _number(text, "amount", "a number like 3 or 2.49", percent=False)


FLAGS = {
    "--model": dict(metavar="NAME", help="a named shape, e.g. llama-3-8b (hwlib.models)"),
    "--config": dict(metavar="PATH", help="a Hugging Face config.json (hwlib.models.from_hf_config)"),
    "--params": dict(type=parse_count, metavar="N", help="parameter count N, e.g. 7e9 or 7B"),
    "--gpu": dict(metavar="NAME", help=GPU_HELP),
    "--gpus": dict(
        type=parse_whole,
        default=1,
        metavar="G",
        aliases=("--devices",),
        help="devices G that share the work (default 1)",
    ),
    "--mfu": dict(
        type=parse_fraction,
        default=0.4,
        metavar="U",
        help="model FLOPs utilisation u in (0, 1], e.g. 0.4 or 40%% (default 0.4)",
    ),
    "--price": dict(type=parse_amount, metavar="USD", help="USD per device-hour (default: the spec sheet's, if any)"),
    "--tokens": dict(type=parse_count, metavar="D", help="tokens D processed in all, e.g. 15.6T"),
    "--seq": dict(
        type=parse_context,
        metavar="S",
        help="tokens of context per sequence (4k = 4096; default 4096 or the model's context when shorter)",
    ),
    "--batch": dict(type=parse_whole, default=1, metavar="B", help="sequences processed together (default 1)"),
    "--dtype": dict(default="bf16", metavar="DTYPE", help="storage format of weights and KV cache (default bf16)"),
    "--kv-dtype": dict(metavar="DTYPE", help="storage format of the KV cache when it differs from --dtype"),
    "--precision": dict(
        metavar="P", help="precision of the peak FLOP/s (default: the part's best 16-bit format, bf16; fp16 on a T4)"
    ),
    "--activations": dict(
        choices=calculator.ACTIVATIONS,
        default="fused",
        help="activation count: fused kernels as Megatron-LM keeps them (default) or an unfused "
        "Hugging Face run (+ fp32 norm inputs)",
    ),
    "--fp32-grads": dict(
        action="store_true", help="gradients accumulated in fp32: 18 B of training state per parameter, not 16"
    ),
    "--json": dict(action="store_true", help="print one JSON document (hwlib.calculator.SCHEMA, SI units)"),
}
"""The flag vocabulary of every calculator command: one name, one type, one meaning. `flag(p, name)`
adds one; `aliases` are old spellings, accepted but hidden from --help."""


def by_flag(message: str, flag_of: dict) -> str:
    """A library error with its argument names replaced by the flags a reader typed: "tp must ..."
    and "'tp'" and "tp=4" name `--tp`, as does a message that starts with the argument's name."""
    for name, flag_name in flag_of.items():
        message = message.replace(f"{name} must", f"{flag_name} must").replace(f"{name!r}", flag_name)
        message = message.replace(f"{name}=", f"{flag_name} ")
        if message.startswith(name + " "):
            message = flag_name + message[len(name) :]
    return message


def flag(parser, name, **overrides):
    """Add the shared flag `name` (a key of FLAGS) to `parser`; overrides change default/required/help."""
    spec = {**FLAGS[name], **overrides}
    aliases = spec.pop("aliases", ())
    dest = name.lstrip("-").replace("-", "_")
    parser.add_argument(name, dest=dest, **spec)
    for alias in aliases:  # hidden: same destination, never overwrites a given value
        hidden = {k: v for k, v in spec.items() if k not in ("help", "default", "required", "metavar")}
        parser.add_argument(alias, dest=dest, default=argparse.SUPPRESS, help=argparse.SUPPRESS, **hidden)


class Report:
    """A command's view over one `hwlib.calculator.Result`: each `add` makes a Quantity (formula from
    the FORMULAS beside its function) and a line "formula = numbers = result"; `emit` prints the
    lines or, with --json, `Result.document(command)`."""

    def __init__(self, command: str, **inputs):
        self.command, self.lines = command, []
        self.result = calculator.Result(inputs=inputs)

    @property
    def inputs(self) -> dict:
        return self.result.inputs

    def say(self, text: str):
        self.lines.append(text)

    def add(self, key, label, value, unit, function, numbers="", human=None, formula=None, line=None):
        """A quantity computed by `function`; `human` is the value as this command prints it, `line`
        the whole printed line when a table reads better than "formula = numbers = result"."""
        q = self.result.add(calculator.quantity(key, label, value, unit, function, numbers or "", formula))
        shown = human or q.text()
        if line is not None:
            self.say(line)
        elif isinstance(value, (bool, str)):  # a verdict: "label: formula, numbers -> verdict"
            self.say(f"{label}: {q.formula}" + (f", {numbers}" if numbers else "") + f" -> {shown}")
        else:
            self.say(" = ".join(p for p in (q.formula, numbers, shown) if p))
        return value

    def take(self, q):
        """Show a Quantity computed elsewhere (by `calculator.estimate`) as it is; bytes also in GiB."""
        self.result.add(q)
        shown = q.text()
        if q.unit == "bytes":
            shown += f" ({units.format_bytes(q.value, binary=True)})"
        if isinstance(q.value, (bool, str)):
            self.say(f"{q.label}: {q.formula}" + (f", {q.inputs}" if q.inputs else "") + f" -> {shown}")
        else:
            self.say(" = ".join(p for p in (q.formula, q.inputs, shown) if p))
        return q.value

    def given(self, key, label, value, unit, source, human=None):
        """A number read, not computed (a spec-sheet field): no formula, its source as the inputs."""
        q = self.result.add(calculator.Quantity(key, label, value, unit, "", "hwlib.specs.get", source))
        return q if human is None else self.say(human)

    def warn(self, text: str):
        self.result.warnings.append(text)
        self.say(f"warning: {text}")

    def emit(self, as_json: bool) -> int:
        if as_json:
            doc = calculator.validate(self.result.document(self.command))
            print(json.dumps(doc, indent=2, ensure_ascii=False, default=str))
        else:
            print("\n".join(self.lines))
        return 0


def _model(args):
    """The model of --model, --config or --params as `calculator.estimate` takes it: (model, n_params)."""
    if getattr(args, "config", None):
        return models.from_hf_config(args.config), None
    if getattr(args, "model", None):
        return models.get(args.model), None
    return None, args.params


def _view(command, est, keys, inputs=None) -> Report:
    """A command's view over `est`: the quantities `keys` (those it has), each printed as "formula =
    numbers = value" with the formula, numbers and value `calculator.estimate` computed; its missing
    entries and warnings for those keys come along."""
    rep = Report(command, **{**est.inputs, "n_params": est.n_params, **(inputs or {})})
    for key in keys:
        if key in est:
            rep.take(est[key])
        elif key in est.missing:
            rep.result.missing[key] = est.missing[key]
    return rep


def _bytes(x) -> str:
    return f"{units.format_bytes(x)} ({units.format_bytes(x, binary=True)})"


def _capacity(acc) -> str:
    """Device memory as the part has it (binary), e.g. '80.0 GiB (85.9 GB)'."""
    return f"{units.format_bytes(acc.memory_bytes, binary=True)} ({units.format_bytes(acc.memory_bytes)})"


def _fit_words(acc) -> str:
    ecc = (
        ""
        if acc.ecc_memory_bytes is None
        else f", {units.format_bytes(acc.ecc_memory_bytes, binary=True)} visible with ECC on as clouds run it"
    )
    return (
        f"{acc.name} has {_capacity(acc)}{ecc}; a fit leaves {memory.HEADROOM:.0%} headroom and "
        f"{units.format_bytes(memory.CUDA_CONTEXT_BYTES, binary=True)} of CUDA context free"
    )


_SPEC_UNITS = {
    "memory_bytes": "bytes",
    "ecc_memory_bytes": "bytes",
    "bandwidth": "bytes/s",
    "l2_bytes": "bytes",
    "compute_units": "",
    "tdp_watts": "W",
    "interconnect_bandwidth": "bytes/s",
    "price_per_hour_usd": "USD/h",
    "release_year": "",
}


def cmd_specs(args) -> int:
    if args.name is None:
        rows = specs.table(precision=args.precision or "bf16")
        if args.json:
            rep = Report("specs", precision=rows[0]["precision"])
            for r in rows:
                if r["ridge_point"]:
                    rep.add(
                        f"ridge_point[{r['name']}]",
                        f"ridge point of {r['name']}",
                        r["ridge_point"],
                        "FLOP/byte",
                        roofline.ridge_point,
                        f"{fmt(r['peak_flops'])} / {fmt(r['bandwidth'])}",
                    )
            rep.result.details["accelerators"] = rows
            return rep.emit(True)
        p = rows[0]["precision"]
        print(f"{'accelerator':<15}{'memory':>10}{'bandwidth':>12}{p + ' peak (dense)':>20}{'ridge I* = π/β':>17}")
        for r in rows:
            peak = units.format_rate(r["peak_flops"]) if r["peak_flops"] else "—"
            ridge = f"{r['ridge_point']:.0f} FLOP/B" if r["ridge_point"] else "—"
            print(
                f"{r['name']:<15}{units.format_bytes(r['memory_bytes'], binary=True):>10}"
                f"{units.format_bandwidth(r['bandwidth']):>12}{peak:>20}{ridge:>17}"
            )
        return 0
    acc = specs.get(args.name)
    args.precision = calculator.precision_of(acc, args.precision)
    fields = [k for k in _SPEC_UNITS if getattr(acc, k) is not None]
    rep = Report("specs", gpu=acc.name, precision=args.precision)
    rep.say(f"{acc.name} ({acc.vendor}, {acc.kind})")
    for k in fields:
        v = getattr(acc, k)
        shown = (
            f"{units.format_bytes(v, binary=True)} ({units.format_bytes(v)})"
            if k.endswith("bytes")
            else units.format_bandwidth(v) + (" per direction" if k == "interconnect_bandwidth" else "")
            if "bandwidth" in k
            else fmt(v)
        )
        rep.given(
            k,
            k.replace("_", " "),
            v,
            _SPEC_UNITS[k],
            acc.source(k),
            f"  {k:<24}{shown:<28}[{acc.confidence(k)}] {acc.source(k)}",
        )
    for p in acc.precisions():
        rep.add(
            f"peak_flops_{p}",
            f"peak {p} (dense)",
            acc.peak_flops(p),
            "FLOP/s",
            specs.Accelerator.peak_flops,
            acc.source(p),
            f"{units.format_rate(acc.peak_flops(p))} [{acc.confidence(p)}]",
        )
    rep.result.details["confidence"] = {k: acc.confidence(k) for k in fields + acc.precisions()}
    pi = acc.peak_flops(args.precision)
    ridge = roofline.ridge_point(pi, acc.bandwidth)
    rep.add(
        "ridge_point",
        f"ridge point ({args.precision})",
        ridge,
        "FLOP/byte",
        roofline.ridge_point,
        f"{fmt(pi)} / {fmt(acc.bandwidth)}",
        f"{ridge:.0f} FLOP/byte",
    )
    return rep.emit(args.json)


def cmd_roofline(args) -> int:
    acc = specs.get(args.gpu)
    args.precision = calculator.precision_of(acc, args.precision)
    pi, beta = acc.peak_flops(args.precision), acc.bandwidth
    rep = Report("roofline", gpu=acc.name, precision=args.precision, peak_flops=pi, bandwidth=beta)
    ridge = rep.add(
        "ridge_point",
        "ridge point",
        roofline.ridge_point(pi, beta),
        "FLOP/byte",
        roofline.ridge_point,
        f"{fmt(pi)} / {fmt(beta)}",
        f"{roofline.ridge_point(pi, beta):.1f} FLOP/byte",
    )
    intensity = args.intensity
    if args.matmul:
        m, n, k = args.matmul
        b = memory.bytes_per_value(args.precision)
        rep.inputs.update(m=m, n=n, k=k, bytes_per_element=b)
        intensity = rep.add(
            "intensity",
            f"intensity of a {m}×{k} by {k}×{n} matmul",
            roofline.matmul_intensity(m, n, k, b),
            "FLOP/byte",
            roofline.matmul_intensity,
            f"2 × {fmt(m)} × {fmt(n)} × {fmt(k)} / (({fmt(m * k)} + {fmt(k * n)} + {fmt(m * n)}) × {fmt(b)})",
            f"{roofline.matmul_intensity(m, n, k, b):.4g} FLOP/byte",
        )
        f, q = flops.matmul_flops(m, n, k), (m * k + k * n + m * n) * b
        t = roofline.time_s(f, q, pi, beta)
        rep.add(
            "time_s",
            "time lower bound",
            t,
            "s",
            roofline.time_s,
            f"max({fmt(f)} / {fmt(pi)}, {fmt(q)} / {fmt(beta)})",
            units.format_seconds(t),
        )
    if intensity is not None:
        rep.inputs["intensity"] = intensity
        p = roofline.attainable(intensity, pi, beta)
        rep.add(
            "attainable_flops_per_s",
            "attainable FLOP/s",
            p,
            "FLOP/s",
            roofline.attainable,
            f"min({fmt(pi)}, {fmt(beta)} × {fmt(intensity)})",
            f"{units.format_rate(p)} ({100 * p / pi:.0f} % of peak)",
        )
        side = roofline.bound(intensity, pi, beta)
        rep.add(
            "bound",
            "bound",
            side,
            "",
            roofline.bound,
            f"I = {intensity:.4g} {'<' if intensity < ridge else '≥'} I* = {ridge:.1f}",
            f"{side}-bound",
        )
    return rep.emit(args.json)


MEMORY_KEYS = ("weights_bytes", "training_state_bytes", "kv_cache_bytes", "inference_bytes", "activation_bytes")
MEMORY_KEYS += ("activation_bytes_unfused", "logits_bytes", "training_bytes_per_gpu")
TRAIN_KEYS = ("active_params", "peak_flops", "training_flops", "attention_flops", "model_flops", "training_time_s")
TRAIN_KEYS += ("training_tokens_per_s", "gpu_hours", "cost_usd")
DECODE_KEYS = ("weights_bytes", "kv_cache_bytes", "weights_read_per_step", "fits_serving", "ridge_point")
DECODE_KEYS += ("decode_intensity", "decode_bound", "decode_step_s", "decode_tokens_per_s", "usd_per_million_tokens")
"""The quantities of `calculator.estimate` that `hwlib memory`, `train` and `decode` show."""


def memory_estimate(args):
    """`calculator.estimate` as `hwlib memory` asks it: --seq and --batch for serving and training."""
    model, n = _model(args)
    dtype = args.dtype
    return calculator.estimate(
        model,
        n_params=n,
        gpu=args.gpu or "H100 SXM",
        weights_dtype=dtype,
        kv_dtype=args.kv_dtype or dtype,
        seq_len=args.seq,
        batch=args.batch,
        train_seq_len=args.seq,
        micro_batch=args.batch,
        activations=args.activations,
        fp32_grads=args.fp32_grads,
    )


def cmd_memory(args) -> int:
    est = memory_estimate(args)
    keys = MEMORY_KEYS + (("gpus_to_serve", "fits_training") if args.gpu else ())
    rep = _view("memory", est, keys, {"gpu": est.inputs["gpu"] if args.gpu else None})
    shape = _model(args)[0]
    if shape:
        rep.lines.insert(0, f"{shape.name}: N = {est.n_params:,.0f} parameters ({shape.source})")
    n = est.n_params
    breakdown = memory.training_state_breakdown(n, args.fp32_grads)
    rep.result.details["training_state_breakdown"] = breakdown
    at = 2 if shape else 1
    rows = [f"  {part:<10}{v / n:g} B/param × {fmt(n)} = {_bytes(v)}" for part, v in breakdown.items()]
    rep.lines[at + 1 : at + 1] = rows
    if not shape:
        rep.say("KV cache and activations: need a model shape; use --model or --config (see hwlib.models.names())")
    if args.gpu:
        rep.say(_fit_words(specs.get(args.gpu)))
        for w in est.warnings:
            if "GPUs" in w or "tensor parallelism" in w:  # the serving count's caveats
                rep.warn(w)
    return rep.emit(args.json)


def train_estimate(args):
    """`calculator.estimate` as `hwlib train` asks it."""
    model, n = _model(args)
    return calculator.estimate(
        model,
        n_params=n,
        tokens=args.tokens,
        gpu=args.gpu,
        n_gpus=args.gpus,
        mfu=args.mfu,
        price_per_hour=args.price,
        precision=args.precision,
        scaling_efficiency=args.scaling,
        train_seq_len=args.seq,
    )


def cmd_train(args) -> int:
    est = train_estimate(args)
    rep = _view("train", est, TRAIN_KEYS)
    if "cost_usd" not in est:
        rep.result.missing["cost_usd"] = f"--price USD_PER_HOUR (the sheet has no price for {est.inputs['gpu']})"
        rep.say(f"cost: no price for {est.inputs['gpu']} in the sheet; pass --price USD_PER_HOUR")
    for w in est.warnings:
        if "attention adds" in w:
            rep.warn(w)
    return rep.emit(args.json)


def decode_estimate(args):
    """`calculator.estimate` as `hwlib decode` asks it: one device (serve_gpus=1)."""
    model, n = _model(args)
    return calculator.estimate(
        model,
        n_params=n,
        gpu=args.gpu,
        precision=args.precision,
        price_per_hour=args.price,
        weights_dtype=args.dtype,
        kv_dtype=args.kv_dtype or args.dtype,
        seq_len=args.seq,
        batch=args.batch,
        serve_gpus=1,
    )


def cmd_decode(args) -> int:
    est = decode_estimate(args)
    rep = _view("decode", est, DECODE_KEYS)
    if not est.fits_serving:
        rep.warn(
            f"weights + KV cache ({units.format_bytes(est.inference_bytes)}) do not fit one {est.inputs['gpu']} "
            f"({_fit_words(specs.get(args.gpu))}): they need {est.gpus_to_serve} devices; the decode rows "
            "assume one device held them"
        )
    return rep.emit(args.json)


def _common(p, fn, params_or_model=False):
    flag(p, "--json")
    p.set_defaults(func=fn)
    if params_or_model:
        g = p.add_mutually_exclusive_group(required=True)
        flag(g, "--params")
        flag(g, "--model")
        flag(g, "--config")


def register(subparsers) -> None:
    """Add specs, roofline, memory, train and decode to the `hwlib` command line."""
    p = subparsers.add_parser("specs", help="accelerator spec sheet (all, or one with sources)")
    p.add_argument("name", nargs="?", help="accelerator, e.g. h100; omit for the table")
    flag(
        p,
        "--precision",
        help="precision for peak and ridge (default: the part's best 16-bit format, bf16 or fp16; bf16 for the table)",
    )
    _common(p, cmd_specs)

    p = subparsers.add_parser("roofline", help="ridge point, attainable FLOP/s and bound of a kernel")
    flag(p, "--gpu", required=True)
    flag(p, "--precision")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--intensity", type=float, metavar="I", help="arithmetic intensity, FLOP/byte")
    g.add_argument("--matmul", type=parse_whole, nargs=3, metavar=("M", "N", "K"), help="an M×K by K×N matmul")
    _common(p, cmd_roofline)

    p = subparsers.add_parser(
        "memory", help="weights, KV cache, training state, activations and logits in bytes (estimate's rows)"
    )
    flag(p, "--dtype")
    flag(p, "--kv-dtype")
    flag(p, "--seq")
    flag(p, "--batch")
    flag(p, "--gpu", help="say whether it fits this accelerator; " + GPU_HELP)
    flag(p, "--activations")
    flag(p, "--fp32-grads")
    _common(p, cmd_memory, params_or_model=True)

    p = subparsers.add_parser("train", help="training FLOPs (6ND, attention), time and cost (estimate's rows)")
    flag(p, "--tokens", required=True, help="training tokens D, e.g. 15.6T")
    flag(p, "--gpu", required=True)
    flag(p, "--gpus")
    flag(p, "--mfu")
    p.add_argument(
        "--scaling",
        type=parse_fraction,
        default=1.0,
        metavar="ETA",
        help="scaling efficiency η across devices (default 1)",
    )
    flag(p, "--price")
    flag(p, "--precision")
    flag(p, "--seq", help="training tokens per sequence, for the attention FLOPs (4k = 4096; default 4096)")
    _common(p, cmd_train, params_or_model=True)

    p = subparsers.add_parser(
        "decode", help="one decode step on one device: roofline time and tokens/s (estimate's rows)"
    )
    flag(p, "--gpu", required=True)
    flag(p, "--dtype")
    flag(p, "--kv-dtype")
    flag(p, "--batch")
    flag(p, "--seq")
    flag(p, "--precision")
    flag(p, "--price")
    _common(p, cmd_decode, params_or_model=True)
