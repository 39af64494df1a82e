"""`hwlib moe`, `hwlib finetune`, `hwlib energy`, `hwlib speculative`, `hwlib rent`: the chapter 7-9 calculators for
mixtures of experts, LoRA/QLoRA, energy and renting, each line a formula next to its result.

    hwlib moe --model deepseek-v3 --gpu h100 --ep 64 --link 50e9 --tokens 4096 --seq 32k
    hwlib finetune --model llama-2-7b --method qlora --rank 64 --seq 2048
    hwlib energy --model llama-3-8b --gpu h100 --batch 16
    hwlib speculative --model llama-3-8b --gpu h100 --alpha 0.8 --gamma 4 --batch 512
    hwlib rent --task serve-8b
"""

from __future__ import annotations

import json

from . import attention, energy, finetune, flops, memory, models, moe, rent, specs, units
from .cli_calc import Report, _bytes, fmt, parse_context, parse_count


def cmd_moe(args) -> int:
    m = moe.get(args.model)
    acc = specs.get(args.gpu)
    rep = Report(
        "moe",
        model=m.name,
        gpu=acc.name,
        ep=args.ep,
        link_bandwidth=args.link,
        tokens_per_device=args.tokens,
        seq_len=args.seq,
        mfu=args.mfu,
    )
    rep.result("total_params", "N_total (every expert)", None, m.total_params(), units.format_count(m.total_params()))
    rep.result(
        "active_params",
        "N_active (k routed + shared experts)",
        None,
        m.active_params(),
        units.format_count(m.active_params()),
    )
    w = m.weights_bytes("bf16")
    rep.result("weights_bytes", "W = N_total · 2 B", None, w, _bytes(w))
    f = m.forward_flops_per_token()
    rep.result("flops_per_token", "2 · N_active", None, f, units.format_flops(f))
    kv = attention.kv_cache_bytes_for(m, args.seq)
    kind = m.attention["kind"].upper() + (f", window {m.sliding_window}" if m.sliding_window else "")
    rep.result("kv_bytes_per_sequence", f"KV cache ({kind})", None, kv, f"{_bytes(kv)} at {fmt(args.seq)} tokens")
    step = moe.expert_parallel_step(m, args.tokens, args.ep, acc, args.link, args.mfu)
    rep.result(
        "all_to_all_bytes",
        "A = 4·T·k·d·b·(P−1)/P per MoE layer (fwd + bwd)",
        f"4 × {fmt(args.tokens)} × {m.top_k} × {m.d_model} × 2 × {args.ep - 1}/{args.ep}",
        step["all_to_all_bytes"],
        _bytes(step["all_to_all_bytes"]),
    )
    rep.result("all_to_all_s", "A / β_link", None, step["all_to_all_s"], units.format_seconds(step["all_to_all_s"]))
    rep.result(
        "expert_compute_s", "18·T·k·d·d_ff / (u·π)", None, step["compute_s"], units.format_seconds(step["compute_s"])
    )
    rep.result(
        "binding_bandwidth",
        "β* = 2/9 · b · (P−1)/P · u·π / d_ff",
        None,
        step["binding_bandwidth"],
        units.format_bandwidth(step["binding_bandwidth"]),
    )
    rep.outputs["bound"] = step["bound"]
    rep.say(f"bound: {step['bound']} (all-to-all / compute = {step['ratio']:.2f})")
    return rep.emit(args.json)


def cmd_finetune(args) -> int:
    shape = models.get(args.model)
    parts = finetune.model_finetune_bytes(shape, args.method, args.rank, args.seq, args.batch)
    rep = Report("finetune", model=shape.name, method=args.method, rank=args.rank, seq_len=args.seq, batch=args.batch)
    n = shape.n_params()
    if args.method != "full":
        lora = finetune.lora_params(shape, args.rank)
        rep.result(
            "trainable_params",
            "L · Σ r·(d_in + d_out)",
            None,
            lora,
            f"{units.format_count(lora)} ({lora / n:.2%} of N)",
        )
    formula = {"full": "16 B × N", "lora": "2 B × N", "qlora": "4.127 bit × N (NF4 + double quant)"}[args.method]
    rep.result("weights_bytes", formula, None, parts["weights"], _bytes(parts["weights"]))
    rep.result("adapter_bytes", "16 B × N_lora", None, parts["adapters"], _bytes(parts["adapters"]))
    rep.result(
        "activation_bytes",
        "checkpointed layers + one layer recomputed",
        None,
        parts["activations"],
        _bytes(parts["activations"]),
    )
    rep.result("total_bytes", "sum", None, parts["total"], _bytes(parts["total"]))
    if args.tokens:
        c = finetune.finetune_flops(n, args.tokens, args.method)
        rep.result("flops", "(4 or 6)·N·D + 2·N·D recompute", None, c, units.format_flops(c))
    return rep.emit(args.json)


def cmd_energy(args) -> int:
    shape = models.get(args.model)
    acc = specs.get(args.gpu)
    w = memory.weights_bytes(shape.n_params(), "bf16")
    kv = memory.kv_cache_bytes_for(shape, args.seq)
    rate = flops.decode_tokens_per_s_bound(w, acc.bandwidth, args.batch, kv)
    power = args.power or acc.tdp_watts
    rep = Report("energy", model=shape.name, gpu=acc.name, batch=args.batch, seq_len=args.seq, power_w=power)
    rep.result("tokens_per_s", "r = B·β / (W + B·KV)", None, rate, f"{rate:,.0f} tokens/s")
    e = energy.decode_joules_per_token(w, acc, args.batch, kv, power_w=power)
    rep.result("joules_per_token", "E = P / r", f"{fmt(power)} W / {fmt(rate)}", e, f"{e:.3g} J/token")
    hbm = energy.hbm_joules_per_token(w + args.batch * kv, args.batch)
    rep.result("hbm_joules_per_token", "(W + B·KV) · 8 · 3.9 pJ / B", None, hbm, f"{hbm:.3g} J/token")
    kwh = energy.kwh(e * 1e6)
    rep.result("kwh_per_million_tokens", "E · 1e6 / 3.6e6", None, kwh, f"{kwh:.3g} kWh")
    return rep.emit(args.json)


def cmd_speculative(args) -> int:
    shape = models.get(args.model)
    acc = specs.get(args.gpu)
    w = memory.weights_bytes(shape.n_params(), "bf16")
    kv = memory.kv_cache_bytes_for(shape, args.seq)
    r = attention.speculative_decode(
        w,
        flops.forward_flops(shape.n_params(), 1),
        acc,
        args.alpha,
        args.gamma,
        batch=args.batch,
        cost_ratio=args.draft_cost,
        kv_bytes=kv,
    )
    rep = Report(
        "speculative",
        model=shape.name,
        gpu=acc.name,
        alpha=args.alpha,
        gamma=args.gamma,
        batch=args.batch,
        seq_len=args.seq,
        cost_ratio=args.draft_cost,
    )
    e = attention.speculative_expected_tokens(args.alpha, args.gamma)
    rep.result("expected_tokens", "E = (1 − α^(γ+1)) / (1 − α)", f"α = {args.alpha}, γ = {args.gamma}", e, f"{e:.2f}")
    rep.result(
        "plain_tokens_per_s",
        "B / max((W + B·KV)/β, B·2N/π)",
        None,
        r["plain_tokens_per_s"],
        f"{r['plain_tokens_per_s']:,.0f} tokens/s",
    )
    rep.result(
        "speculative_tokens_per_s",
        "B·E / (t(B·(γ+1)) + γ·c·t(B))",
        None,
        r["speculative_tokens_per_s"],
        f"{r['speculative_tokens_per_s']:,.0f} tokens/s",
    )
    rep.result("speedup", "ratio", None, r["speedup"], f"{r['speedup']:.2f}x")
    rep.outputs["verify_bound"] = r["verify_bound"]
    rep.say(
        f"verification pass is {r['verify_bound']}-bound"
        + (" — speculation pays" if r["speedup"] > 1 else " — speculation does not pay at this batch")
    )
    return rep.emit(args.json)


def cmd_rent(args) -> int:
    rows = rent.table(args.task)
    if args.json:
        print(
            json.dumps(
                {"command": "rent", "task": args.task, "assumptions": rent.TASKS[args.task]["note"], "rows": rows},
                indent=2,
            )
        )
        return 0
    print(f"{rent.TASKS[args.task]['title']}: {rent.TASKS[args.task]['note']}")
    for r in rows:
        price = f"${r['usd_per_hour']:.2f}/h"
        if not r["fits"]:
            print(f"  {r['accelerator']:<14} {price:>9}  does not fit ({_bytes(r['memory_bytes'])} needed)")
        elif "usd_per_million_tokens" in r:
            print(
                f"  {r['accelerator']:<14} {price:>9}  batch {r['batch']:>2}, {r['tokens_per_s']:,.0f} tokens/s, "
                f"{units.format_usd(r['usd_per_million_tokens'])} per million tokens"
            )
        else:
            print(
                f"  {r['accelerator']:<14} {price:>9}  {units.format_seconds(r['seconds'])}, "
                f"{units.format_usd(r['usd'])}"
            )
    return 0


def register(subparsers) -> None:
    """Add moe, finetune, energy, speculative and rent to the `hwlib` command line."""
    p = subparsers.add_parser("moe", help="mixture of experts: total vs active, KV cache, all-to-all")
    p.add_argument("--model", default="DeepSeek-V3", help=f"one of: {', '.join(moe.names())}")
    p.add_argument("--gpu", default="H100 SXM", metavar="NAME")
    p.add_argument("--ep", type=int, default=8, metavar="P", help="expert-parallel devices (default 8)")
    p.add_argument(
        "--link",
        type=parse_count,
        default=450e9,
        metavar="B/s",
        help="one-way bandwidth per device, bytes/s (default 450e9, NVLink4)",
    )
    p.add_argument("--tokens", type=parse_count, default=4096, metavar="T", help="tokens per device per step")
    p.add_argument("--seq", type=parse_context, default=4096, metavar="S", help="context for the KV cache")
    p.add_argument("--mfu", type=float, default=0.4)
    p.add_argument("--json", action="store_true", help="print one JSON object (SI units)")
    p.set_defaults(func=cmd_moe)

    p = subparsers.add_parser("finetune", help="memory (and FLOPs) of full, LoRA and QLoRA fine-tuning")
    p.add_argument("--model", default="Llama 2 7B", metavar="NAME")
    p.add_argument("--method", choices=finetune.METHODS, default="qlora")
    p.add_argument("--rank", type=int, default=64)
    p.add_argument("--seq", type=parse_context, default=2048, metavar="S")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--tokens", type=parse_count, metavar="D", help="fine-tuning tokens, for the FLOPs")
    p.add_argument("--json", action="store_true", help="print one JSON object (SI units)")
    p.set_defaults(func=cmd_finetune)

    p = subparsers.add_parser("energy", help="energy per generated token at the decode bound")
    p.add_argument("--model", default="Llama 3 8B", metavar="NAME")
    p.add_argument("--gpu", default="H100 SXM", metavar="NAME")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--seq", type=parse_context, default=4096, metavar="S")
    p.add_argument("--power", type=float, metavar="W", help="board power in watts (default: the TDP)")
    p.add_argument("--json", action="store_true", help="print one JSON object (SI units)")
    p.set_defaults(func=cmd_energy)

    p = subparsers.add_parser("speculative", help="speculative decoding on the roofline: when it pays")
    p.add_argument("--model", default="Llama 3 8B", metavar="NAME")
    p.add_argument("--gpu", default="H100 SXM", metavar="NAME")
    p.add_argument("--alpha", type=float, default=0.8, help="acceptance rate in [0, 1] (default 0.8)")
    p.add_argument("--gamma", type=int, default=4, help="draft tokens per step (default 4)")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--seq", type=parse_context, default=256, metavar="S", help="context for the KV cache")
    p.add_argument("--draft-cost", type=float, default=0.05, metavar="C", help="draft step / target step time")
    p.add_argument("--json", action="store_true", help="print one JSON object (SI units)")
    p.set_defaults(func=cmd_speculative)

    p = subparsers.add_parser("rent", help="which GPU to rent for a task, from dated prices")
    p.add_argument("--task", choices=list(rent.TASKS), default="qlora-7b")
    p.add_argument("--json", action="store_true", help="print one JSON object (SI units)")
    p.set_defaults(func=cmd_rent)
