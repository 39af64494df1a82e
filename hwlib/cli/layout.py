"""`hwlib plan-layout`: the parallel-layout planner of chapter 7 on the command line. It searches
TP × CP × PP × DP (ZeRO stage) × EP layouts of a cluster for a model and a global batch, prints the
fastest layouts that fit with their per-GPU memory and step time, each number beside its formula
(`hwlib.layout.FORMULAS`), and counts why the others fail. `--json` gives SI values.

    hwlib plan-layout --model "Llama 3 405B" --gpu h100 --gpus 16384 --seq 8192 --batch-tokens 16M
    hwlib plan-layout --config config.json --gpu a100 --gpus 64 --seq 4k --batch-seqs 512 --json
"""

from __future__ import annotations

import argparse
import json

from .. import calculator, layout, models, specs, units
from .calc import by_flag, flag, parse_count, parse_fraction, parse_whole

F = layout.FORMULAS


def _int_list(text) -> tuple:
    try:
        values = tuple(int(x) for x in str(text).split(",") if x.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected whole numbers separated by commas like 1,2,4; got {text!r}"
        ) from None
    if not values or min(values) < 0:
        raise argparse.ArgumentTypeError(f"expected whole numbers >= 0 separated by commas; got {text!r}")
    return values


def _model(args):
    given = [f for f in ("model", "config") if getattr(args, f) is not None]
    if len(given) != 1:
        raise ValueError(
            "give one of --model NAME (" + ", ".join(models.names()) + ") or --config PATH (a config.json); "
            f"got {', '.join('--' + f for f in given) or 'none'}"
        )
    if args.config:
        return models.from_hf_config(args.config)
    try:
        return models.get(args.model)
    except KeyError as exc:
        raise ValueError(f"--model: {exc.args[0]}") from None


def _batch(args) -> int:
    if (args.batch_tokens is None) == (args.batch_seqs is None):
        raise ValueError(
            "give one of --batch-tokens N (tokens per optimizer step) or --batch-seqs N (sequences per step)"
        )
    if args.batch_seqs is not None:
        return args.batch_seqs
    n = args.batch_tokens / args.seq
    if n < 1 or abs(n - round(n)) > 1e-9 * n:
        raise ValueError(
            f"--batch-tokens {args.batch_tokens:g} is not a whole number of --seq {args.seq}-token sequences "
            f"({n:.3f}); give a multiple of {args.seq} or use --batch-seqs"
        )
    return int(round(n))


FLAG_OF = {
    "n_gpus": "--gpus",
    "nvlink_domain": "--nvlink-domain",
    "inter_node_bandwidth": "--inter-node-bw",
    "nvlink_bandwidth": "--nvlink-bw",
    "efficiency": "--efficiency",
    "ep_overlap": "--ep-overlap",
    "recompute": "--recompute",
    "precision": "--precision",
}
"""The flag of each library argument, to name it in an error."""


_PARTS = [
    ("weights", "weights per GPU", "bytes", "evaluate.weights"),
    ("gradients", "gradients per GPU", "bytes", "evaluate.gradients"),
    ("optimizer", "optimizer state per GPU", "bytes", "evaluate.optimizer"),
    ("gather_buffers", "ZeRO-3 gather buffers", "bytes", "evaluate.gather_buffers"),
    ("activations", "activations in flight", "bytes", "evaluate.activations"),
    ("logits", "fp32 logits", "bytes", "evaluate.logits"),
    ("total", "memory per GPU (heaviest stage)", "bytes", "evaluate.memory"),
]
_TIMES = [
    ("compute", "compute per step", "evaluate.compute"),
    ("tp", "TP collectives per step", "evaluate.tp"),
    ("cp", "CP K/V gathers per step", "evaluate.cp"),
    ("ep", "EP all-to-all per step (not hidden)", "evaluate.ep"),
    ("bubble", "pipeline bubble", "evaluate.bubble"),
    ("dp_traffic", "data-parallel traffic", "evaluate.dp_traffic"),
    ("dp_exposed", "data-parallel traffic not hidden", "evaluate.dp_exposed"),
    ("p2p", "pipeline P2P", "evaluate.p2p"),
    ("step", "step time", "evaluate.step"),
]


def _document(found, cluster, top) -> dict:
    """The `hwlib.calculator.SCHEMA` document: one quantity per number of each printed layout
    (keys "layout1.step_s", ...), the rejected degree tuples and their reasons in details."""
    inputs = dict(
        found.inputs,
        nvlink_domain=cluster.nvlink_domain,
        inter_node_bandwidth=cluster.inter_node_bandwidth,
        nvlink_bandwidth=cluster.nvlink,
        precision=cluster.precision,
        efficiency=cluster.efficiency,
    )
    result = calculator.Result(inputs=inputs)
    for i, plan in enumerate(top, 1):
        tag = f"layout{i}"
        put = result.add
        q = calculator.quantity
        put(
            q(
                f"{tag}.micro_batches",
                "micro-batches per step",
                plan.numbers["micro_batches"],
                "",
                layout.evaluate,
                formula=F["evaluate.micro_batches"],
            )
        )
        for key, label, unit, fkey in _PARTS:
            put(q(f"{tag}.memory.{key}_bytes", label, plan.memory[key], unit, layout.evaluate, formula=F[fkey]))
        for key, label, fkey in _TIMES:
            put(q(f"{tag}.time.{key}_s", label, plan.time[key], "s", layout.evaluate, formula=F[fkey]))
        put(q(f"{tag}.mfu", "model FLOPs utilisation", plan.mfu, "", layout.evaluate, formula=F["evaluate.mfu"]))
        hfu_label = "hardware FLOPs utilisation (recompute counted)"
        put(q(f"{tag}.hfu", hfu_label, plan.numbers["hfu"], "", layout.evaluate, formula=F["evaluate.hfu"]))
    if not top:
        result.missing["layout1"] = "a layout that fits: every degree tuple fails (see details.rejected)"
    result.details.update(
        n_fit=len(found.ranked),
        layouts=[p.document() for p in top],
        rejected=[{"degrees": dict(zip(("tp", "cp", "pp", "dp", "ep"), d)), "reason": r} for d, r in found.rejected],
        reasons=found.reasons,
    )
    return calculator.validate(result.document("plan-layout"))


def _gib(x) -> str:
    return units.format_bytes(x, binary=True)


def _plan_lines(i: int, plan) -> list[str]:
    mem, t, num = plan.memory, plan.time, plan.numbers
    lay = plan.layout
    out = [
        f"{i}. {lay.label()}: step {units.format_seconds(t['step'])}, MFU {units.format_pct(plan.mfu, 1)} "
        f"(HFU {units.format_pct(num['hfu'], 1)}), {_gib(mem['total'])} per GPU"
    ]
    out.append(
        f"   {F['evaluate.micro_batches']} = {num['micro_batches']};  {F['stage_layers']} = {num['stage_layers']}"
    )
    out.append(
        f"   memory {F['evaluate.memory']}: weights {_gib(mem['weights'])} + grads {_gib(mem['gradients'])} + optimizer "
        f"{_gib(mem['optimizer'])} + ZeRO-3 buffers {_gib(mem['gather_buffers'])} + activations "
        f"{_gib(mem['activations'])} ({num['in_flight']:.2f} micro-batches in flight) + logits {_gib(mem['logits'])} "
        f"≤ {_gib(mem['usable'])}"
    )
    out.append(
        f"   time {F['evaluate.step']}: compute {units.format_seconds(t['compute'])}, TP {units.format_seconds(t['tp'])} "
        f"({num['tp_link']}), CP {units.format_seconds(t['cp'])}, EP {units.format_seconds(t['ep'])}, bubble "
        f"{units.format_seconds(t['bubble'])} ({num['bubble_fraction']:.1%} of the step), DP exposed "
        f"{units.format_seconds(t['dp_exposed'])} of {units.format_seconds(t['dp_traffic'])} traffic ({num['dp_link']}), "
        f"P2P {units.format_seconds(t['p2p'])}"
    )
    return out


def cmd_plan_layout(args) -> int:
    model = _model(args)
    try:
        specs.get(args.gpu)
    except KeyError as exc:
        raise ValueError(f"--gpu: {exc.args[0]}") from None
    nseq = _batch(args)
    for flag_name, values, allowed in (("--zero", args.zero, layout.ZERO_STAGES), ("--cp", args.cp, None)):
        if allowed is not None and any(v not in allowed for v in values):
            raise ValueError(f"{flag_name} takes ZeRO stages from 0, 1, 2, 3; got {','.join(map(str, values))}")
        if allowed is None and any(v < 1 for v in values):
            raise ValueError(f"{flag_name} takes degrees >= 1; got {','.join(map(str, values))}")
    try:
        cluster = layout.Cluster(
            args.gpu,
            args.gpus,
            nvlink_domain=args.nvlink_domain,
            inter_node_bandwidth=args.inter_node_bw,
            nvlink_bandwidth=args.nvlink_bw,
            precision=args.precision or specs.get(args.gpu).default_precision(),
            efficiency=args.efficiency,
        )
        found = layout.search(
            model,
            cluster,
            args.seq,
            nseq,
            cp=args.cp,
            zero=args.zero,
            recompute=tuple(args.recompute.split(",")),
            ep_overlap=args.ep_overlap,
            allow_tp_across_nodes=args.allow_tp_across_nodes,
        )
    except ValueError as exc:
        raise ValueError(by_flag(str(exc), FLAG_OF)) from None
    top = found.ranked[: args.top]
    if args.json:
        print(json.dumps(_document(found, cluster, top), default=str, indent=2, ensure_ascii=False))
        return 0
    acc = cluster.accelerator
    print(
        f"{model.name} on {cluster.n_gpus} × {acc.name} ({cluster.nvlink_domain} per NVLink domain at "
        f"{units.format_bandwidth(cluster.nvlink)}, network {units.format_bandwidth(cluster.inter_node_bandwidth)} per GPU), "
        f"{nseq} sequences of {args.seq} tokens per step; compute at η = {cluster.efficiency:.0%} of the "
        f"{cluster.precision} peak {units.format_rate(cluster.peak)}"
    )
    print(F["evaluate.mfu"])
    if not top:
        print("no layout fits; the closest failures:")
    for i, plan in enumerate(top, 1):
        print("\n".join(_plan_lines(i, plan)))
    print(f"{len(found.ranked)} degree tuples fit; {len(found.rejected)} do not. Why layouts fail (variants tried):")
    for reason, n in sorted(found.reasons.items(), key=lambda kv: -kv[1]):
        print(f"  {n:>6} × {reason}")
    shown = {}
    for degrees, reason in found.rejected:  # one example of each kind of failure
        shown.setdefault(layout.reason_kind(reason), (degrees, reason))
    for degrees, reason in shown.values():
        print("  e.g. TP{} CP{} PP{} DP{} EP{}: ".format(*degrees) + reason)
    return 0


def register(subparsers) -> None:
    """Add plan-layout to the `hwlib` command line."""
    p = subparsers.add_parser("plan-layout", help="search TP × CP × PP × DP × EP layouts of a cluster for a model")
    flag(p, "--model")
    flag(p, "--config")
    flag(p, "--gpu", default="H100 SXM")
    flag(p, "--gpus", required=True, help="GPUs G in the cluster, e.g. 1024 or 16k")
    p.add_argument("--nvlink-domain", type=parse_whole, default=8, help="GPUs per NVLink domain (default 8)")
    p.add_argument(
        "--inter-node-bw",
        type=parse_count,
        default=50e9,
        metavar="B/s",
        help="network bandwidth per GPU and direction, bytes/s (default 50G: 400 Gb/s InfiniBand NDR)",
    )
    p.add_argument(
        "--nvlink-bw",
        type=parse_count,
        default=None,
        metavar="B/s",
        help="NVLink bandwidth per GPU and direction (default: the spec sheet's)",
    )
    flag(p, "--seq", required=True, help="tokens per training sequence (8k = 8192)")
    p.add_argument("--batch-tokens", type=parse_count, help="tokens per optimizer step, e.g. 16M")
    p.add_argument("--batch-seqs", type=parse_whole, help="sequences per optimizer step")
    flag(p, "--precision")
    p.add_argument(
        "--efficiency",
        type=parse_fraction,
        default=layout.EFFICIENCY,
        help=f"fraction of the peak the matmuls reach, η (default {layout.EFFICIENCY})",
    )
    p.add_argument(
        "--cp", type=_int_list, default=(1, 2, 4, 8, 16), help="context-parallel degrees to try (default 1,2,4,8,16)"
    )
    p.add_argument("--zero", type=_int_list, default=layout.ZERO_STAGES, help="ZeRO stages to try (default 0,1,2,3)")
    p.add_argument(
        "--recompute", default="none,selective,full", help="recompute choices to try (default none,selective,full)"
    )
    p.add_argument(
        "--ep-overlap", type=parse_fraction, default=0.0, help="fraction of the EP all-to-all hidden behind compute"
    )
    p.add_argument("--allow-tp-across-nodes", action="store_true", help="let TP leave the NVLink domain")
    p.add_argument("--top", type=parse_whole, default=5, help="layouts to print (default 5)")
    flag(p, "--json")
    p.set_defaults(func=cmd_plan_layout)
