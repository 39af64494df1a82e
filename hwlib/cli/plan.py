"""`hwlib estimate` and `hwlib diagnose`: the chapter 9 calculator and the chapter 10 diagnostic on
the command line. Each prints the formula next to every result; `--json` gives SI values.

    hwlib estimate --model llama-3-8b --tokens 15T --gpu h100 --gpus 1024 --mfu 0.4
    hwlib diagnose --flops 2.7e8 --bytes 1.3e8 --gpu h100 [--measured-s 5e-5]
"""

from __future__ import annotations

import json

from .. import calculator, diagnose, models, specs
from .calc import flag, parse_context, parse_count, parse_whole


def cmd_estimate(args) -> int:
    given = [f for f in ("model", "config", "params") if getattr(args, f) is not None]
    if len(given) != 1:
        raise ValueError(
            "give one of --model NAME (see `hwlib.models.names()`), --config PATH (a config.json) or --params N; "
            f"got {', '.join('--' + f for f in given) or 'none'}"
        )
    model = models.from_hf_config(args.config) if args.config else args.model
    est = calculator.estimate(
        model,
        n_params=args.params,
        tokens=args.tokens,
        gpu=args.gpu,
        n_gpus=args.gpus,
        mfu=args.mfu,
        price_per_hour=args.price,
        precision=args.precision,
        weights_dtype=args.dtype,
        kv_dtype=args.kv_dtype or args.dtype,
        seq_len=args.seq,
        batch=args.batch,
        train_seq_len=args.train_seq,
        micro_batch=args.micro_batch,
        attention=args.attention,
        activations=args.activations,
        fp32_grads=args.fp32_grads,
        zero_stage=args.zero,
        recompute=args.recompute,
        finetune=args.finetune,
        lora_rank=args.rank,
    )
    if args.json:
        doc = calculator.validate(est.document("estimate"))
        print(json.dumps(doc, default=str, indent=2, ensure_ascii=False))
    else:
        print(est)
    return 0


def cmd_diagnose(args) -> int:
    precision = calculator.precision_of(specs.get(args.gpu), args.precision)
    d = diagnose.kernel(
        args.flops, args.bytes, args.gpu, precision, name=args.name, kind=args.kind, measured_s=args.measured_s
    )
    if args.json:
        doc = calculator.validate(d.result().document("diagnose"))
        print(json.dumps(doc, default=str, indent=2, ensure_ascii=False))
    else:
        print(d.summary())
    return 0


def register(subparsers) -> None:
    """Add estimate and diagnose to the `hwlib` command line."""
    p = subparsers.add_parser("estimate", help="memory, FLOPs, time and cost of a model on an accelerator")
    flag(p, "--model", help="a named shape, e.g. llama-3-8b (or give --params)")
    flag(p, "--config")
    flag(p, "--params")
    flag(p, "--tokens", help="training tokens D, e.g. 7B (without it: no training time or cost)")
    flag(p, "--gpu", default="H100 SXM")
    flag(p, "--gpus", help="devices G for training (default 1)")
    flag(p, "--mfu")
    flag(p, "--price")
    flag(p, "--precision")
    flag(p, "--dtype", help="storage format of weights and KV cache for inference (default bf16)")
    flag(p, "--kv-dtype")
    flag(p, "--seq", help="serving: tokens of context per sequence, e.g. 4k (default 4096 or the model's context)")
    flag(p, "--batch", help="serving: sequences decoded together (default 1)")
    p.add_argument(
        "--train-seq",
        type=parse_context,
        metavar="S",
        help="training: tokens per sequence (default 4096 or the model's context)",
    )
    p.add_argument("--micro-batch", type=parse_whole, default=1, metavar="b", help="training: sequences per GPU step")
    p.add_argument(
        "--attention",
        choices=("flash", "standard"),
        default="flash",
        help="training activations: FlashAttention (default) or scores stored",
    )
    flag(p, "--activations")
    flag(p, "--fp32-grads")
    p.add_argument("--zero", type=int, default=0, choices=(0, 1, 2, 3), help="ZeRO stage (default 0)")
    p.add_argument(
        "--recompute",
        choices=("none", "selective", "full"),
        default="none",
        help="activation recomputation (default none)",
    )
    p.add_argument(
        "--finetune",
        choices=("none", "lora", "qlora"),
        default="none",
        help="training: every weight (none, default), or LoRA / QLoRA adapters on frozen weights",
    )
    p.add_argument("--rank", type=parse_whole, default=64, metavar="R", help="LoRA rank r (default 64)")
    flag(p, "--json")
    p.set_defaults(func=cmd_estimate)

    p = subparsers.add_parser("diagnose", help="place a kernel on the roofline and name the remedies")
    p.add_argument("--flops", type=parse_count, required=True, help="FLOPs the kernel performs")
    p.add_argument("--bytes", type=parse_count, required=True, help="bytes it moves to and from memory")
    flag(p, "--gpu", required=True)
    flag(p, "--precision")
    p.add_argument("--name", default="kernel")
    p.add_argument(
        "--kind",
        default="generic",
        choices=list(diagnose.KINDS),
        help="what the kernel is; picks the remedies (e.g. gemv for batch-1 decode)",
    )
    p.add_argument("--measured-s", type=float, metavar="T", help="a measured time, to compare with the roof")
    flag(p, "--json")
    p.set_defaults(func=cmd_diagnose)
