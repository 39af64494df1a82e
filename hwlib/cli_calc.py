"""Calculator commands of `hwlib`: specs, roofline, memory, train, decode; and what every calculator
command shares: the flag vocabulary (`FLAGS`, added with `flag`) and the result view (`Report`).

Each command builds `hwlib.calculator.Quantity` records through `Report.add`, whose formula text comes
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

from . import calculator, flops, memory, models, roofline, specs, units

GPU_HELP = (
    "accelerator from the spec sheet: "
    + ", ".join(specs.names())
    + " (case, spaces and dashes ignored; aliases such as h100, a100, t4 work)"
)


def parse_count(text) -> float:
    """'7e9', '350M', '7B', '15.6T', '4k', '16_384' -> float (hwlib.units.parse_number, without
    percentages); else argparse.ArgumentTypeError."""
    s = str(text).strip()
    try:
        if s.endswith("%"):
            raise ValueError(s)
        return units.parse_number(s, "count")
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number like 7e9, 350M, 7B or 15.6T; got {text!r}") from None


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


def parse_amount(text) -> float:
    """A non-negative amount such as a price in USD per hour: '3', '2.49' (the library checks the range)."""
    try:
        return units.parse_number(str(text).strip(), "amount")
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number like 3 or 2.49; got {text!r}") from None


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
    "--json": dict(action="store_true", help="print one JSON document (hwlib.calculator.SCHEMA, SI units)"),
}
"""The flag vocabulary of every calculator command: one name, one type, one meaning. `flag(p, name)`
adds one; `aliases` are old spellings, accepted but hidden from --help."""


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


def _model_and_params(args):
    """(shape or None, N) from --model, --config or --params."""
    if getattr(args, "config", None):
        shape = models.from_hf_config(args.config)
        return shape, float(shape.n_params())
    if getattr(args, "model", None):
        shape = models.get(args.model)
        return shape, float(shape.n_params())
    return None, args.params


def _weights_row(rep, shape, n, dtype):
    """The weights row: N·b, or for a shape in a sub-16-bit format the checkpoint scheme it stands for
    (group scales and zeros; embeddings, head and norms 16-bit), as `calculator.estimate` counts it."""
    scheme = memory.quantization_scheme(dtype) if shape is not None else None
    if scheme is None:
        w = memory.weights_bytes(n, dtype)
        return rep.add(
            "weights_bytes",
            f"weights ({dtype})",
            w,
            "bytes",
            memory.weights_bytes,
            f"{fmt(n)} × {fmt(memory.bytes_per_value(dtype))} B",
            _bytes(w),
        )
    n_lin = memory.quantized_params(shape)
    w = memory.quantized_weights_bytes(shape, scheme)
    return rep.add(
        "weights_bytes",
        f"weights ({dtype} as {memory.quantization_data()['schemes'][scheme]['name']}; embeddings, head and norms 16-bit)",
        w,
        "bytes",
        memory.quantized_weights_bytes,
        f"{fmt(n_lin)} × {memory.quantized_bits_per_weight(scheme):.4g} bit / 8 + {fmt(n - n_lin)} × 2 B",
        _bytes(w),
    )


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
    args.precision = _precision(acc, args.precision)
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
    args.precision = _precision(acc, args.precision)
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


def cmd_memory(args) -> int:
    shape, n = _model_and_params(args)
    memory.bytes_per_value(args.dtype)  # ValueError naming the accepted formats
    kv_dtype = args.kv_dtype or args.dtype
    memory.bytes_per_value(kv_dtype)  # ValueError naming the accepted formats
    args.seq = _seq(shape, args.seq)
    rep = Report(
        "memory",
        model=shape.name if shape else None,
        n_params=n,
        dtype=args.dtype,
        kv_dtype=kv_dtype,
        seq_len=args.seq,
        batch=args.batch,
        gpu=None,
    )
    if shape:
        rep.say(f"{shape.name}: N = {n:,.0f} parameters ({shape.source})")
    w = _weights_row(rep, shape, n, args.dtype)
    s = rep.add(
        "training_state_bytes",
        "training state (AdamW, mixed precision)",
        memory.training_state_bytes(n),
        "bytes",
        memory.training_state_bytes,
        f"16 × {fmt(n)} B",
        _bytes(memory.training_state_bytes(n)),
    )
    for part, v in memory.training_state_breakdown(n).items():
        rep.result.details.setdefault("training_state_breakdown", {})[part] = v
        rep.say(f"  {part:<10}{v / n:g} B/param × {fmt(n)} = {_bytes(v)}")
    need = w
    if shape:
        kv = shape.kv_cache_bytes(args.seq, args.batch, kv_dtype)
        rep.add(
            "kv_cache_bytes",
            f"KV cache ({kv_dtype}, {args.batch} × {args.seq} tokens)",
            kv,
            "bytes",
            models.ModelShape.kv_cache_bytes,
            shape.kv_numbers(args.seq, args.batch, kv_dtype),
            _bytes(kv),
            formula=shape.kv_formula(),
        )
        need = rep.add(
            "inference_bytes",
            "inference memory (weights + KV)",
            memory.serving_bytes(w, kv),
            "bytes",
            memory.serving_bytes,
            f"{fmt(w)} + {fmt(kv)} B",
            _bytes(memory.serving_bytes(w, kv)),
        )
    else:
        rep.result.missing["kv_cache_bytes"] = "a model shape: use --model (see hwlib.models.names())"
        rep.say("KV cache: needs a model shape; use --model (see hwlib.models.names())")
    if args.gpu:
        acc = specs.get(args.gpu)
        rep.inputs["gpu"] = acc.name
        rep.say(_fit_words(acc) + ":")
        for what, m in (("inference", need), ("training_state", s)):
            ok = memory.fits(m, acc.visible_memory_bytes())
            rep.add(
                f"fits_{what}",
                f"{what.replace('_', ' ')} fits one {acc.name}",
                ok,
                "",
                memory.fits,
                f"M = {units.format_bytes(m)}",
                "fits" if ok else "does not fit",
            )
            rep.add(
                f"gpus_needed_{what}",
                f"{acc.name} GPUs for the {what.replace('_', ' ')}",
                memory.devices_needed(m, acc.visible_memory_bytes()),
                "",
                memory.devices_needed,
                f"M = {units.format_bytes(m)}",
                f"{memory.devices_needed(m, acc.visible_memory_bytes())} GPU(s)",
            )
        rep.say("(activations not counted; `hwlib estimate` adds them)")
    return rep.emit(args.json)


def cmd_train(args) -> int:
    shape, n = _model_and_params(args)
    acc = specs.get(args.gpu)
    args.precision = _precision(acc, args.precision)
    pi = acc.peak_flops(args.precision)
    price = args.price if args.price is not None else acc.price_per_hour_usd
    g = args.gpus
    rep = Report(
        "train",
        model=shape.name if shape else None,
        n_params=n,
        tokens=args.tokens,
        gpu=acc.name,
        precision=args.precision,
        peak_flops=pi,
        n_gpus=g,
        mfu=args.mfu,
        scaling_efficiency=args.scaling,
        price_per_hour=price,
    )
    n_act = float(shape.n_active_params()) if shape is not None else n  # a mixture: FLOPs of the active experts
    c = rep.add(
        "training_flops",
        "training compute" + (f" (N = {fmt(n_act)} active parameters)" if n_act != n else ""),
        flops.training_flops(n_act, args.tokens),
        "FLOP",
        flops.training_flops,
        f"6 × {fmt(n_act)} × {fmt(args.tokens)}",
        units.format_flops(flops.training_flops(n_act, args.tokens)),
    )
    t = flops.training_time_s(c, pi, args.mfu, g, args.scaling)
    rep.add(
        "training_time_s",
        f"training time on {g} × {acc.name}",
        t,
        "s",
        flops.training_time_s,
        f"{fmt(c)} / ({fmt(args.mfu)} × {fmt(pi)} × {fmt(g)} × {fmt(args.scaling)})",
        f"{fmt(t)} s = {units.format_seconds(t)}",
    )
    h = flops.device_hours(t, g)
    rep.add(
        "gpu_hours",
        "GPU-hours",
        h,
        "GPU-h",
        flops.device_hours,
        f"{fmt(g)} × {fmt(t)} / 3600",
        f"{fmt(h)} {acc.name}-hours",
    )
    if price is None:
        rep.result.missing["cost_usd"] = f"--price USD_PER_HOUR (the sheet has no price for {acc.name})"
        rep.say(f"cost: no price for {acc.name} in the sheet; pass --price USD_PER_HOUR")
    else:
        cost = flops.cost_usd(t, price, g)
        rep.add(
            "cost_usd",
            "training cost",
            cost,
            "USD",
            flops.cost_usd,
            f"{fmt(g)} × {fmt(t)} / 3600 × {fmt(price)}",
            units.format_usd(cost),
        )
    return rep.emit(args.json)


def cmd_decode(args) -> int:
    shape, n = _model_and_params(args)
    acc = specs.get(args.gpu)
    args.precision = _precision(acc, args.precision)
    args.seq = _seq(shape, args.seq)
    kv_dtype = args.kv_dtype or args.dtype
    kv = shape.kv_cache_bytes(args.seq, 1, kv_dtype) if shape else 0.0
    rep = Report(
        "decode",
        model=shape.name if shape else None,
        n_params=n,
        dtype=args.dtype,
        kv_dtype=kv_dtype,
        gpu=acc.name,
        precision=args.precision,
        bandwidth=acc.bandwidth,
        batch=args.batch,
        seq_len=args.seq if shape else None,
    )
    w = _weights_row(rep, shape, n, args.dtype)
    if shape:
        rep.add(
            "kv_bytes_per_sequence",
            f"KV cache of one sequence ({kv_dtype}, {args.seq} tokens)",
            kv,
            "bytes",
            models.ModelShape.kv_cache_bytes,
            shape.kv_numbers(args.seq, 1, kv_dtype),
            _bytes(kv),
            formula=shape.kv_formula(),
        )
    else:
        rep.result.missing["kv_bytes_per_sequence"] = "a model shape: use --model"
    w_read, n_act = w, n
    if shape is not None:  # routed experts only (a mixture), B rows of an untied input embedding
        n_act = shape.n_active_params()
        w_read = memory.weights_read_bytes(shape, args.batch, args.dtype)
        routed = f", k={shape.top_k} of E={shape.n_experts} experts, uniform routing" if shape.n_experts > 1 else ""
        rows = "" if shape.tied_embeddings else ", B rows of the input embedding"
        rep.add(
            "weights_read_per_step",
            f"weights read per step (batch {args.batch}{routed}{rows})",
            w_read,
            "bytes",
            memory.weights_read_bytes,
            (f"E={shape.n_experts}, k={shape.top_k}, N_expert={fmt(shape.expert_params())}, " if routed else "")
            + f"W = {fmt(w)} B, V={shape.vocab_size}, d={shape.d_model}, B={args.batch}",
            _bytes(w_read),
        )
    tps = flops.decode_tokens_per_s_bound(w_read, acc.bandwidth, args.batch, kv)
    rep.add(
        "tokens_per_s_bound",
        f"bandwidth ceiling (batch {args.batch})",
        tps,
        "tokens/s",
        flops.decode_tokens_per_s_bound,
        f"{fmt(args.batch)} × {fmt(acc.bandwidth)} / ({fmt(w_read)} + {fmt(args.batch)} × {fmt(kv)})",
        f"{units.format_quantity(tps, 'tokens/s')} ({units.format_quantity(tps / args.batch, 'per sequence')})",
    )
    need = w + args.batch * kv
    gpus = memory.devices_needed(need, acc.visible_memory_bytes())
    rep.add(
        "fits_one_device",
        f"weights + KV cache fit one {acc.name}",
        gpus == 1,
        "",
        memory.fits,
        f"M = {units.format_bytes(need)}",
        "fits" if gpus == 1 else "does not fit",
    )
    if gpus > 1:
        rep.warn(
            f"weights + KV cache ({units.format_bytes(need)}) do not fit one {acc.name} "
            f"({units.format_bytes(acc.visible_memory_bytes(), binary=True)} visible, less {memory.HEADROOM:.0%} headroom "
            f"and the CUDA context): they need {gpus} devices; the ceilings assume one device held them"
        )
    if args.precision not in acc.precisions():  # e.g. a T4 has no bf16 rate: the bandwidth bound still stands
        why = f"{acc.name} has no {args.precision} rate (it has {', '.join(acc.precisions())})"
        rep.result.missing["tokens_per_s_compute_bound"] = why
        rep.say(f"compute ceiling not shown: {why}")
    else:
        pi = acc.peak_flops(args.precision)
        compute = flops.decode_tokens_per_s_compute_bound(n_act, pi)
        rep.add(
            "tokens_per_s_compute_bound",
            f"compute ceiling ({args.precision}{', active parameters' if n_act != n else ''})",
            compute,
            "tokens/s",
            flops.decode_tokens_per_s_compute_bound,
            f"{fmt(pi)} / (2 × {fmt(n_act)})",
            units.format_quantity(compute, "tokens/s"),
        )
        rep.say(
            "memory-bound: the bandwidth ceiling is the lower one"
            if tps < compute
            else "compute-bound at this batch: the compute ceiling is the lower one"
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

    p = subparsers.add_parser("memory", help="weights, training state and KV cache in bytes")
    flag(p, "--dtype")
    flag(p, "--kv-dtype")
    flag(p, "--seq")
    flag(p, "--batch")
    flag(p, "--gpu", help="say whether it fits this accelerator; " + GPU_HELP)
    _common(p, cmd_memory, params_or_model=True)

    p = subparsers.add_parser("train", help="training FLOPs (6ND), time and cost")
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
    _common(p, cmd_train, params_or_model=True)

    p = subparsers.add_parser("decode", help="bandwidth ceiling on decoding tokens/s")
    flag(p, "--gpu", required=True)
    flag(p, "--dtype")
    flag(p, "--kv-dtype")
    flag(p, "--batch")
    flag(p, "--seq")
    flag(p, "--precision")
    _common(p, cmd_decode, params_or_model=True)
