"""`hwlib serve`: the serving planner of chapter 12 on the command line. From an arrival rate, prompt
and output lengths, TTFT and TPOT objectives at a percentile, a model (by name or a config.json), a
precision and a GPU, it prints each tensor-parallel degree the heads allow with the replicas, GPUs,
KV blocks and concurrency it needs, the simulated percentiles, goodput and $/M tokens — each number
beside its formula (`hwlib.serve_plan.FORMULAS`) — and marks the cheapest. `--json` gives SI values;
`--check-published` prints the planner against the published benchmarks it is validated on.

    hwlib serve --model llama-3-8b --gpu h100 --rate 20 --prompt 512 --output 128 --ttft 500ms --tpot 50ms
    hwlib serve --config config.json --gpu a100-80gb --precision bf16 --rate 5 --tp 2 --json
    hwlib serve --check-published
"""

from __future__ import annotations

import argparse
import json

from .. import calculator, serve_plan, units
from .calc import by_flag, flag, parse_amount, parse_count, parse_fraction, parse_whole
from .layout import _model

F = serve_plan.FORMULAS


def parse_seconds(text) -> float:
    """Seconds from '0.5', '500ms', '50 ms' or '2s'."""
    raw = str(text).strip().lower().replace(" ", "")
    scale = 1e-3 if raw.endswith("ms") else 1.0
    raw = raw[:-2] if raw.endswith("ms") else raw[:-1] if raw.endswith("s") else raw
    try:
        value = float(raw) * scale
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a time like 0.5, 500ms or 2s; got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a time > 0; got {text!r}")
    return value


FLAG_OF = {
    "rate_rps": "--rate",
    "prompt_mean": "--prompt",
    "output_mean": "--output",
    "prompt_max": "--prompt-max",
    "output_max": "--output-max",
    "ttft_slo_s": "--ttft",
    "tpot_slo_s": "--tpot",
    "percentile": "--percentile",
    "max_seqs": "--max-seqs",
    "max_batched_tokens": "--max-batched-tokens",
    "prefix_hit_rate": "--prefix-hit",
    "usd_per_gpu_hour": "--price",
    "tp": "--tp",
}
"""The flag of each library argument, to name it in an error."""


def _ms(x) -> str:
    return units.format_seconds(x)


ROWS = [
    ("replicas", "replicas R", "", "plan.replica_rate_rps"),
    ("gpus", "GPUs G", "", "plan.gpus"),
    ("kv_blocks", "KV blocks per replica", "", "plan.kv_blocks"),
    ("kv_budget_bytes", "KV pool per GPU", "bytes", "plan.kv_budget_bytes"),
    ("max_concurrency", "max concurrency per replica", "", "max_concurrency"),
    ("goodput_rps", "goodput", "req/s", "plan.goodput_rps"),
    ("tokens_per_gpu_s", "output tokens per GPU", "tokens/s", "plan.tokens_per_gpu_s"),
    ("usd_per_hour", "cost", "USD/h", "plan.usd_per_hour"),
    ("usd_per_million_tokens", "cost per million output tokens", "USD", "plan.usd_per_million_tokens"),
]


def _document(result) -> dict:
    """The `hwlib.calculator.SCHEMA` document: the best plan's numbers as quantities ("best.gpus",
    ...), every candidate in details."""
    inputs = {k: v for k, v in result["inputs"].items() if v is None or isinstance(v, (str, int, float, bool, list))}
    doc = calculator.Result(inputs=inputs)
    best = result["best"]
    if best is None:
        doc.missing["best"] = "a configuration meeting the SLOs within --max-gpus (see details.candidates)"
    else:
        for key, label, unit, fkey in ROWS:
            if best.get(key) is not None:
                owner = getattr(serve_plan, fkey) if fkey in vars(serve_plan) else serve_plan.plan
                doc.add(calculator.quantity(f"best.{key}", label, best[key], unit, owner, formula=F[fkey]))
        for key, label in (("ttft_s", "TTFT at the percentile"), ("tpot_s", "TPOT at the percentile")):
            q = calculator.quantity(
                f"best.{key}", label, best["judged"][key], "s", serve_plan.plan, formula=F["plan.slo"]
            )
            doc.add(q)
        tp = calculator.quantity("best.tp", "TP degree", best["tp"], "", serve_plan.tp_degrees, formula=F["tp_degrees"])
        doc.add(tp)
    doc.details.update(candidates=result["candidates"], fragmentation=result["fragmentation"])
    return calculator.validate(doc.document("serve"))


def _candidate_lines(c, best) -> list[str]:
    mark = " ← cheapest" if best is not None and c["tp"] == best["tp"] else ""
    if c["replicas"] is None:
        return [f"TP{c['tp']}: no — {c['reason']}"]
    j = c["judged"]
    cost = "no price" if c["usd_per_hour"] is None else (
        f"{units.format_usd(c['usd_per_hour'])}/h, {units.format_usd(c['usd_per_million_tokens'])} per M tokens"
    )  # fmt: skip
    return [
        f"TP{c['tp']} × {c['replicas']} replica{'s' if c['replicas'] > 1 else ''} = {c['gpus']} GPU"
        + ("s" if c["gpus"] > 1 else "")
        + f": {cost}{mark}",
        f"   {F['plan.kv_budget_bytes']} = {units.format_bytes(c['kv_budget_bytes'], binary=True)};  {F['plan.kv_blocks']} = "
        f"{c['kv_blocks']:,};  {F['max_concurrency']} = {c['max_concurrency']}",
        f"   {F['tp_time_s']} = {_ms(c['tp_s_per_step'])} + {_ms(c['tp_s_per_token'])} per token",
        f"   {F['plan.slo']}: TTFT {_ms(j['ttft_s'])}, TPOT {_ms(j['tpot_s'])}; attainment {j['attainment']:.1%}, "
        f"{j['preemptions']} preemptions",
        f"   {F['plan.goodput_rps']} = {c['goodput_rps']:.3g} req/s;  {F['plan.tokens_per_gpu_s']} = {c['tokens_per_gpu_s']:,.0f}"
        + ("" if c["usd_per_hour"] is None else f";  {F['plan.usd_per_million_tokens']}"),
    ]


def _print(result) -> None:
    i = result["inputs"]
    print(
        f"{i['model']} on {i['gpu']} in {i['precision']}: {i['rate_rps']:g} req/s, prompts {i['prompt'][0]} mean "
        f"{i['prompt'][1]:g} (max {i['prompt'][2]}), outputs {i['output'][0]} mean {i['output'][1]:g} (max "
        f"{i['output'][2]}); SLO p{i['percentile']:g} TTFT ≤ {_ms(i['ttft_slo_s'])}, TPOT ≤ {_ms(i['tpot_slo_s'])}"
    )
    print(
        f"{i['n_requests']} simulated requests per replica (seed {i['seed']}), {F['plan.replica_rate_rps']}; compute at "
        f"η = {i['compute_efficiency']:.0%} of {units.format_rate(i['peak_flops'])}, memory at η_β = "
        f"{i['bandwidth_efficiency']:.0%} of {units.format_bandwidth(i['bandwidth'])}; step {F['step_time_s']}"
    )
    print(f"TP degrees the heads allow ({F['tp_degrees']}): {', '.join(str(t) for t in i['tp_degrees'])}")
    for c in result["candidates"]:
        print("\n".join(_candidate_lines(c, result["best"])))
    print(f"KV fragmentation at block {i['block_tokens']}: {F['fragmentation']} = {result['fragmentation']:.2%}")
    if result["best"] is None:
        print("no configuration meets the SLOs within --max-gpus; relax an SLO or allow more GPUs")


def _print_published() -> None:
    print("The planner against published benchmarks (hwlib/data/published_serving.yaml):")
    for key in serve_plan.published():
        r = serve_plan.check_published(key)
        e, unit = r["entry"], "output tokens/s" if r["metric"] == "output_tok_s" else "TTFT"
        show = (lambda v: f"{v:,.0f}") if r["metric"] == "output_tok_s" else _ms
        print(
            f"  {e['name']}: published {show(r['published'])} {unit}, "
            f"planner {show(r['planner'])}, factor {r['factor']:.2f} (bound {e['within_factor']:g}×)"
        )


def cmd_serve(args) -> int:
    if args.check_published:
        _print_published()
        return 0
    model = _model(args)
    try:
        result = serve_plan.plan(
            model, args.gpu, args.precision, args.rate, args.prompt, args.output, args.ttft, args.tpot,
            args.percentile, prompt_dist=args.lengths, output_dist=args.lengths, prompt_max=args.prompt_max,
            output_max=args.output_max, kv_dtype=args.kv_dtype, block_tokens=args.block, max_seqs=args.max_seqs,
            max_batched_tokens=args.max_batched_tokens, chunked=not args.no_chunked, prefix_hit_rate=args.prefix_hit,
            disaggregated=args.disaggregated, compute_efficiency=args.efficiency,
            bandwidth_efficiency=args.bw_efficiency, usd_per_gpu_hour=args.price, n_requests=args.requests,
            seed=args.seed, max_gpus=args.max_gpus, tp=args.tp, admission=args.admission,
            speculative=args.speculative, pipeline_parallel=args.pp,
        )  # fmt: skip
    except ValueError as exc:
        raise ValueError(by_flag(str(exc), FLAG_OF)) from None
    if args.json:
        print(json.dumps(_document(result), default=str, indent=2, ensure_ascii=False))
        return 0
    _print(result)
    return 0


def register(subparsers) -> None:
    """Add `serve` to the `hwlib` command line."""
    p = subparsers.add_parser("serve", help="plan a service: replicas, TP, KV blocks and cost under TTFT/TPOT SLOs")
    flag(p, "--model")
    flag(p, "--config")
    flag(p, "--gpu", default="H100 SXM")
    flag(p, "--precision")
    flag(p, "--kv-dtype")
    p.add_argument("--rate", type=parse_count, default=10.0, metavar="REQ/S", help="arrival rate λ (default 10)")
    p.add_argument("--prompt", type=parse_count, default=512.0, metavar="P", help="mean prompt tokens (default 512)")
    p.add_argument("--output", type=parse_count, default=128.0, metavar="O", help="mean output tokens (default 128)")
    p.add_argument("--prompt-max", type=parse_whole, default=4096, help="longest prompt (default 4096)")
    p.add_argument("--output-max", type=parse_whole, default=1024, help="longest output (default 1024)")
    p.add_argument("--lengths", choices=("geometric", "fixed"), default="geometric", help="length distribution")
    p.add_argument("--ttft", type=parse_seconds, default=0.5, help="TTFT objective, e.g. 500ms (default 0.5 s)")
    p.add_argument("--tpot", type=parse_seconds, default=0.05, help="TPOT objective, e.g. 50ms (default 50 ms)")
    p.add_argument("--percentile", type=float, default=99.0, help="percentile the SLOs hold at (default 99)")
    p.add_argument("--tp", type=parse_whole, default=None, help="only this TP degree (default: every allowed one)")
    p.add_argument("--max-seqs", type=parse_whole, default=256, help="sequences per step (default 256)")
    p.add_argument("--max-batched-tokens", type=parse_whole, default=2048, help="token budget per step (2048)")
    p.add_argument("--block", type=parse_whole, default=16, help="KV block size in tokens (default 16)")
    p.add_argument("--no-chunked", action="store_true", help="prefill-first scheduling instead of chunked prefill")
    p.add_argument("--prefix-hit", type=float, default=0.0, help="share of each prompt found in the prefix cache")
    p.add_argument("--disaggregated", action="store_true", help="separate prefill and decode instances")
    p.add_argument("--admission", choices=("optimistic", "reserve"), default="optimistic", help="KV admission")
    p.add_argument("--efficiency", type=parse_fraction, default=serve_plan.COMPUTE_EFFICIENCY, help="η of the peak")
    p.add_argument(
        "--bw-efficiency", type=parse_fraction, default=serve_plan.BANDWIDTH_EFFICIENCY, help="η_β of the bandwidth"
    )
    p.add_argument("--price", type=parse_amount, default=None, help="USD per GPU-hour (default: the spec sheet's)")
    p.add_argument("--requests", type=parse_whole, default=300, help="simulated requests per replica (300)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--max-gpus", type=parse_whole, default=64, help="most GPUs to consider (default 64)")
    p.add_argument("--speculative", action="store_true", help="speculative decoding (refused: not modelled)")
    p.add_argument("--pp", type=int, default=1, help="pipeline-parallel degree (only 1 is modelled)")
    p.add_argument("--check-published", action="store_true", help="print the planner against published benchmarks")
    flag(p, "--json")
    p.set_defaults(func=cmd_serve)
