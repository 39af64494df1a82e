"""`hwlib moe`, `hwlib finetune`, `hwlib energy`, `hwlib speculative`, `hwlib rent`: the chapter 7-9 calculators for
mixtures of experts, LoRA/QLoRA, energy and renting, each line a formula next to its result;
`--json` prints the one document of `hwlib.calculator.SCHEMA` (views over Quantity records).

    hwlib moe --model deepseek-v3 --gpu h100 --ep 64 --link 50e9 --tokens-per-device 4096 --seq 32k
    hwlib finetune --model llama-2-7b --method qlora --rank 64 --seq 2048
    hwlib energy --model llama-3-8b --gpu h100 --batch 16
    hwlib speculative --model llama-3-8b --gpu h100 --alpha 0.8 --gamma 4 --batch 512
    hwlib rent --task serve-8b
"""

from __future__ import annotations

from .. import attention, energy, finetune, flops, memory, models, moe, rent, specs, units
from .calc import Report, _bytes, flag, fmt, parse_count, parse_fraction, parse_whole


def _of(module, key):
    """The formula `key` from the FORMULAS beside `module`'s function (a part of a dict it returns)."""
    return module.FORMULAS[key]


def cmd_moe(args) -> int:
    m = moe.get(args.model)
    acc = specs.get(args.gpu)
    rep = Report(
        "moe",
        model=m.name,
        gpu=acc.name,
        ep=args.ep,
        link_bandwidth=args.link,
        tokens_per_device=args.tokens_per_device,
        seq_len=args.seq,
        mfu=args.mfu,
    )
    total, active = m.n_params(), m.n_active_params()
    rep.add(
        "total_params",
        "parameters (every expert)",
        total,
        "params",
        models.ModelShape.n_params,
        "",
        units.format_count(total),
    )
    rep.add(
        "active_params",
        "parameters active per token",
        active,
        "params",
        models.ModelShape.n_active_params,
        f"k = {m.top_k}",
        units.format_count(active),
    )
    w = memory.weights_bytes(total, "bf16")
    rep.add(
        "weights_bytes",
        "weights (bf16)",
        w,
        "bytes",
        memory.weights_bytes,
        f"{fmt(total)} × 2 B",
        _bytes(w),
    )
    f = flops.forward_flops(active, 1)
    rep.add(
        "flops_per_token",
        "forward FLOPs per token",
        f,
        "FLOP",
        flops.forward_flops,
        f"2 × {fmt(active)} × 1 token",
        units.format_flops(f),
    )
    kv = attention.kv_cache_bytes_for(m.name, args.seq)
    kind = ("MLA" if m.mla else "GQA") + (f", window {m.sliding_window}" if m.sliding_window else "")
    rep.add(
        "kv_bytes_per_sequence",
        f"KV cache of one sequence ({kind})",
        kv,
        "bytes",
        attention.kv_cache_bytes_for,
        f"s = {fmt(args.seq)}",
        f"{_bytes(kv)} at {fmt(args.seq)} tokens",
    )
    step = moe.expert_parallel_step(m, args.tokens_per_device, args.ep, acc, args.link, args.mfu)
    rep.add(
        "all_to_all_bytes",
        "all-to-all bytes per device and MoE layer",
        step["all_to_all_bytes"],
        "bytes",
        moe.all_to_all_bytes,
        f"4 × {fmt(args.tokens_per_device)} × {m.top_k} × {m.d_model} × 2 × {args.ep - 1}/{args.ep}",
        _bytes(step["all_to_all_bytes"]),
    )
    rep.add(
        "all_to_all_s",
        "all-to-all time",
        step["all_to_all_s"],
        "s",
        moe.expert_parallel_step,
        f"{fmt(step['all_to_all_bytes'])} / {fmt(args.link)}",
        units.format_seconds(step["all_to_all_s"]),
        formula=_of(moe, "expert_parallel_step.all_to_all_s"),
    )
    rep.add(
        "expert_compute_s",
        "expert compute time",
        step["compute_s"],
        "s",
        moe.expert_parallel_step,
        f"u = {fmt(args.mfu)}, π = {fmt(acc.peak_flops(acc.default_precision()))}",
        units.format_seconds(step["compute_s"]),
        formula=_of(moe, "expert_parallel_step.compute_s"),
    )
    rep.add(
        "binding_bandwidth",
        "link bandwidth at which the all-to-all binds",
        step["binding_bandwidth"],
        "bytes/s",
        moe.binding_bandwidth,
        f"P = {args.ep}, d_ff = {m.d_ff}",
        units.format_bandwidth(step["binding_bandwidth"]),
    )
    rep.result.details.update(bound=step["bound"], ratio=step["ratio"])
    rep.say(f"bound: {step['bound']} (all-to-all / compute = {step['ratio']:.2f})")
    return rep.emit(args.json)


def cmd_finetune(args) -> int:
    shape = models.get(args.model)
    parts = finetune.model_finetune_bytes(shape, args.method, args.rank, args.seq, args.batch)
    rep = Report(
        "finetune",
        model=shape.name,
        method=args.method,
        rank=args.rank,
        seq_len=args.seq,
        batch=args.batch,
        tokens=args.tokens,
    )
    n = shape.n_params()
    if args.method != "full":
        lora = finetune.lora_params(shape, args.rank)
        rep.add(
            "trainable_params",
            "trainable (adapter) parameters",
            lora,
            "params",
            finetune.lora_params,
            f"r = {args.rank}, L = {shape.n_layers}",
            f"{units.format_count(lora)} ({lora / n:.2%} of N)",
        )
    fn = finetune.model_finetune_bytes
    rep.add(
        "weights_bytes",
        f"frozen weights ({args.method})",
        parts["weights"],
        "bytes",
        fn,
        f"N = {fmt(n)}",
        _bytes(parts["weights"]),
        formula=_of(finetune, f"model_finetune_bytes.weights.{args.method}"),
    )
    for key, part, label in (
        ("adapter_bytes", "adapters", "adapters + their optimizer state"),
        ("activation_bytes", "activations", f"activations ({args.batch} × {args.seq} tokens)"),
        ("state_and_activations_bytes", "total", finetune.FORMULAS["model_finetune_bytes.total"]),
    ):
        rep.add(
            key,
            label,
            parts[part],
            "bytes",
            fn,
            "",
            _bytes(parts[part]),
            formula=_of(finetune, f"model_finetune_bytes.{part}"),
        )
    logits = memory.logits_bytes(args.seq, args.batch, shape.vocab_size)
    rep.add(
        "logits_bytes",
        f"logits for the loss (fp32, {args.batch} × {args.seq} tokens × V = {shape.vocab_size})",
        logits,
        "bytes",
        memory.logits_bytes,
        f"s = {args.seq}, b = {args.batch}, V = {shape.vocab_size}",
        _bytes(logits),
    )
    total = memory.training_bytes_per_device(parts["weights"] + parts["adapters"], parts["activations"], logits)
    rep.add(
        "total_bytes",
        "total (with the logits)",
        total,
        "bytes",
        memory.training_bytes_per_device,
        "",
        _bytes(total),
        formula=memory.FORMULAS["training_bytes_per_device.logits"],
    )
    if args.tokens:
        n_act = shape.n_active_params()  # a mixture of experts computes with its active experts only
        c = finetune.finetune_flops(n_act, args.tokens, args.method, recompute=False)  # model FLOPs, as at an MFU
        rep.add(
            "training_flops",
            "fine-tuning model FLOPs" + (" (N = active parameters)" if n_act != n else ""),
            c,
            "FLOP",
            finetune.finetune_flops,
            f"N = {fmt(n_act)}, D = {fmt(args.tokens)}",
            units.format_flops(c),
            formula=_of(finetune, "finetune_flops." + ("full" if args.method == "full" else "adapters")),
        )
    else:
        rep.result.missing["training_flops"] = "--tokens D (the fine-tuning tokens)"
    return rep.emit(args.json)


def _decode_inputs(shape, acc, seq, batch=1):
    """Weights one decode step reads (all of them; for a mixture of experts, those the batch's tokens
    are routed to) and one sequence's KV cache, bf16  [bytes]."""
    return shape.weights_read_per_step(batch, "bf16"), memory.kv_cache_bytes_for(shape, seq)


def cmd_energy(args) -> int:
    shape = models.get(args.model)
    acc = specs.get(args.gpu)
    w, kv = _decode_inputs(shape, acc, args.seq, args.batch)
    power = args.power or acc.tdp_watts
    rep = Report("energy", model=shape.name, gpu=acc.name, batch=args.batch, seq_len=args.seq, power_w=power)
    rate = rep.add(
        "tokens_per_s",
        f"decode tokens/s (batch {args.batch})",
        flops.decode_tokens_per_s_bound(w, acc.bandwidth, args.batch, kv),
        "tokens/s",
        flops.decode_tokens_per_s_bound,
        f"{fmt(args.batch)} × {fmt(acc.bandwidth)} / ({fmt(w)} + {fmt(args.batch)} × {fmt(kv)})",
        f"{flops.decode_tokens_per_s_bound(w, acc.bandwidth, args.batch, kv):,.0f} tokens/s",
    )
    e = energy.decode_joules_per_token(w, acc, args.batch, kv, power_w=power)
    rep.add(
        "joules_per_token",
        "energy per token",
        e,
        "J",
        energy.joules_per_token,
        f"{fmt(power)} W / {fmt(rate)}",
        f"{e:.3g} J/token",
    )
    hbm = energy.hbm_joules_per_token(w + args.batch * kv, args.batch)
    rep.add(
        "hbm_joules_per_token",
        "of which reading HBM",
        hbm,
        "J",
        energy.hbm_joules_per_token,
        f"({fmt(w)} + {fmt(args.batch)} × {fmt(kv)}) B, B = {args.batch}",
        f"{hbm:.3g} J/token",
    )
    kwh = energy.kwh(e * 1e6)
    rep.add(
        "kwh_per_million_tokens",
        "energy per million tokens",
        kwh,
        "kWh",
        energy.kwh,
        f"{fmt(e)} J × 10⁶",
        f"{kwh:.3g} kWh",
    )
    return rep.emit(args.json)


def cmd_speculative(args) -> int:
    shape = models.get(args.model)
    if shape.n_experts > 1:
        raise ValueError(
            f"--model {args.model}: speculative decoding of a mixture of experts is not modelled (a verify "
            "step of γ+1 tokens reaches more experts than a plain step); give a dense model, e.g. llama-3-8b"
        )
    acc = specs.get(args.gpu)
    w, kv = _decode_inputs(shape, acc, args.seq)
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
    rep.add(
        "expected_tokens",
        "tokens accepted per target step",
        e,
        "tokens",
        attention.speculative_expected_tokens,
        f"α = {args.alpha}, γ = {args.gamma}",
        f"{e:.2f}",
    )
    fn = attention.speculative_decode
    for key, label in (("plain_tokens_per_s", "plain decoding"), ("speculative_tokens_per_s", "speculative decoding")):
        rep.add(
            key,
            label,
            r[key],
            "tokens/s",
            fn,
            f"B = {args.batch}, c = {args.draft_cost}",
            f"{r[key]:,.0f} tokens/s",
            formula=_of(attention, f"speculative_decode.{key}"),
        )
    rep.add(
        "speedup",
        "speed-up",
        r["speedup"],
        "",
        fn,
        "",
        f"{r['speedup']:.2f}x",
        formula=_of(attention, "speculative_decode.speedup"),
    )
    rep.result.details["verify_bound"] = r["verify_bound"]
    rep.say(
        f"verification pass is {r['verify_bound']}-bound"
        + (" — speculation pays" if r["speedup"] > 1 else " — speculation does not pay at this batch")
    )
    return rep.emit(args.json)


def cmd_rent(args) -> int:
    rows = rent.table(args.task)
    rep = Report("rent", task=args.task)
    rep.result.details.update(assumptions=rent.TASKS[args.task]["note"], rows=rows)
    rep.say(f"{rent.TASKS[args.task]['title']}: {rent.TASKS[args.task]['note']}")
    rep.say(f"  cost: {flops.FORMULAS['usd_per_million_tokens' if args.task == 'serve-8b' else 'cost_usd']}")
    for r in rows:
        price = f"${r['usd_per_hour']:.2f}/h"
        where = f"{r['accelerator']:<14} {price:>9}"
        if not r["fits"]:
            rep.result.missing[f"usd[{r['accelerator']}]"] = f"more memory: {_bytes(r['memory_bytes'])} needed"
            rep.say(f"  {where}  does not fit ({_bytes(r['memory_bytes'])} needed)")
        elif "usd_per_million_tokens" in r:
            rep.add(
                f"usd_per_million_tokens[{r['accelerator']}]",
                f"serving cost on {r['accelerator']}",
                r["usd_per_million_tokens"],
                "USD",
                flops.usd_per_million_tokens,
                f"p = {r['usd_per_hour']:g} USD/h, r = {fmt(r['tokens_per_s'])} tokens/s (batch {r['batch']})",
                line=f"  {where}  batch {r['batch']:>2}, {r['tokens_per_s']:,.0f} tokens/s, "
                f"{units.format_usd(r['usd_per_million_tokens'])} per million tokens",
            )
        else:
            rep.add(
                f"usd[{r['accelerator']}]",
                f"cost on {r['accelerator']}",
                r["usd"],
                "USD",
                flops.cost_usd,
                f"t = {units.format_seconds(r['seconds'])}, p = {r['usd_per_hour']:g} USD/h",
                line=f"  {where}  {units.format_seconds(r['seconds'])}, {units.format_usd(r['usd'])}",
            )
    return rep.emit(args.json)


def register(subparsers) -> None:
    """Add moe, finetune, energy, speculative and rent to the `hwlib` command line."""
    p = subparsers.add_parser("moe", help="mixture of experts: total vs active, KV cache, all-to-all")
    flag(p, "--model", default="DeepSeek-V3", help=f"one of: {', '.join(moe.names())}")
    flag(p, "--gpu", default="H100 SXM")
    p.add_argument("--ep", type=parse_whole, default=8, metavar="P", help="expert-parallel devices (default 8)")
    p.add_argument(
        "--link",
        type=parse_count,
        default=450e9,
        metavar="B/s",
        help="one-way bandwidth per device, bytes/s (default 450e9, NVLink4)",
    )
    p.add_argument(
        "--tokens-per-device",
        type=parse_count,
        default=4096,
        metavar="T",
        help="tokens per device per step (default 4096)",
    )
    flag(p, "--seq", default=4096)
    flag(p, "--mfu")
    flag(p, "--json")
    p.set_defaults(func=cmd_moe)

    p = subparsers.add_parser("finetune", help="memory (and FLOPs) of full, LoRA and QLoRA fine-tuning")
    flag(p, "--model", default="Llama 2 7B")
    p.add_argument("--method", choices=finetune.METHODS, default="qlora")
    p.add_argument("--rank", type=parse_whole, default=64, metavar="R", help="LoRA rank r (default 64)")
    flag(p, "--seq", default=2048)
    flag(p, "--batch")
    flag(p, "--tokens", help="fine-tuning tokens D, for the FLOPs")
    flag(p, "--json")
    p.set_defaults(func=cmd_finetune)

    p = subparsers.add_parser("energy", help="energy per generated token at the decode bound")
    flag(p, "--model", default="Llama 3 8B")
    flag(p, "--gpu", default="H100 SXM")
    flag(p, "--batch")
    flag(p, "--seq", default=4096)
    p.add_argument("--power", type=float, metavar="W", help="board power in watts (default: the TDP)")
    flag(p, "--json")
    p.set_defaults(func=cmd_energy)

    p = subparsers.add_parser("speculative", help="speculative decoding on the roofline: when it pays")
    flag(p, "--model", default="Llama 3 8B")
    flag(p, "--gpu", default="H100 SXM")
    p.add_argument("--alpha", type=parse_fraction, default=0.8, help="acceptance rate in [0, 1] (default 0.8)")
    p.add_argument("--gamma", type=parse_whole, default=4, help="draft tokens per step (default 4)")
    flag(p, "--batch")
    flag(p, "--seq", default=256)
    p.add_argument("--draft-cost", type=float, default=0.05, metavar="C", help="draft step / target step time")
    flag(p, "--json")
    p.set_defaults(func=cmd_speculative)

    p = subparsers.add_parser("rent", help="which GPU to rent for a task, from dated prices")
    p.add_argument("--task", choices=list(rent.TASKS), default="qlora-7b")
    flag(p, "--json")
    p.set_defaults(func=cmd_rent)
