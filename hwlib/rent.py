"""Which GPU should I rent? Three tasks priced on every accelerator that has a dated price.

Prices (USD per device-hour, provider, date, source) live in ``hwlib/data/prices.yaml``; the hardware
in ``hwlib/data/specs.yaml``. Each task states its assumptions in ``TASKS``; every number comes from
the same functions the chapters use:

* ``qlora-7b``: QLoRA fine-tune of Llama 2 7B (``calculator.estimate`` with finetune="qlora": frozen
  NF4 weights, adapters, checkpointed activations and the fp32 logits; 4ND at the MFU)
* ``serve-8b``: serve Llama 3 8B in bf16 at 4k context, as large a batch as fits (decode bound)
* ``train-gpt2``: pre-train GPT-2 small on 10B tokens (``calculator.estimate``: 6ND, chapter 9 worked
  example 1; training state, activations with the scores stored, and fp32 logits)

Memory must fit in ``memory.usable_bytes`` of the device, the budget every "fits" of the book uses:
its capacity less a CUDA context, with ``memory.HEADROOM`` kept free for buffers and fragmentation.
Chapter 9 "Which GPU should I rent?".

A serving **fleet** (``fleet``, ``cheapest_fleet``) serves U users at once, each at a full context of
C tokens: R replicas of the model, each on t GPUs of one node (tensor parallelism, its collectives
neglected) with a batch of b users, R = ⌈U / b⌉. Per GPU the replica holds (W + b·C·q)/t; a decode
step reads the weights once and every user's cache, t = max(2·N·b/(t·π), (W + b·C·q)/(t·β))
(``serving.step_time_s``), and each user gets 1/t tokens per second. The fleet costs R·t·price.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from . import _check, calculator, flops, memory, models, serving, specs

DATA_PATH = Path(__file__).with_name("data") / "prices.yaml"

FORMULAS = {
    "fleet.replicas": "R = ⌈U / b⌉",
    "fleet.memory_per_gpu": "M = (W + b·C·q) / t,  W = N·bytes(precision), q = KV bytes per token (precision)",
    "fleet.step_s": "t_step = max(2·N·b / (t·π), (W + b·C·q) / (t·β))",
    "fleet.tokens_per_s_per_user": "r = 1 / t_step",
    "fleet.usd_per_hour": "cost = R · t · price per GPU-hour",
}
"""The formula each quantity of a serving fleet evaluates."""

FLEET_PRECISIONS = {"bf16": 2.0, "fp8": 1.0}
"""Bytes per value of the weights and the KV cache; fp8 needs a GPU with an fp8 peak (Hopper, Ada, Blackwell)."""
FLEET_GPUS_PER_REPLICA = (1, 2, 4, 8)
"""Tensor-parallel degrees of one replica: powers of two inside one 8-GPU node."""

TASKS: dict[str, dict[str, Any]] = {
    "qlora-7b": {
        "title": "fine-tune Llama 2 7B with QLoRA",
        "model": "Llama 2 7B",
        "rank": 64,
        "seq_len": 2048,
        "batch": 1,
        "tokens": 10e6,
        "mfu": 0.25,
        "note": "r = 64 on every linear layer, 2k-token sequences, gradient checkpointing, 10M "
        "training tokens; MFU 0.25 (an assumption: dequantising NF4 costs time)",
    },
    "serve-8b": {
        "title": "serve Llama 3 8B (bf16, 4k context)",
        "model": "Llama 3 8B",
        "seq_len": 4096,
        "max_batch": 64,
        "note": "bf16 weights, every sequence at 4,096 tokens of KV cache, the largest batch up "
        "to 64 that fits; decode rate at the roofline bound",
    },
    "train-gpt2": {
        "title": "pre-train GPT-2 small on 10B tokens",
        "model": "GPT-2 small",
        "tokens": 10e9,
        "mfu": 0.4,
        "seq_len": 1024,
        "batch": 16,
        "attention": "standard",
        "note": "C = 6ND on 10B tokens at MFU 0.4; micro-batch 16 x 1,024 tokens without recompute, "
        "attention scores stored (no FlashAttention), fp32 logits",
    },
}


@dataclass(frozen=True)
class Price:
    accelerator: str
    provider: str
    usd_per_hour: float
    date: str
    source: str
    confidence: str


@functools.lru_cache(maxsize=1)
def prices() -> tuple[Price, ...]:
    """Every dated price, validated: the accelerator must be in the spec sheet, the price > 0."""
    raw = yaml.safe_load(DATA_PATH.read_text())
    rows = []
    for i, row in enumerate(raw["prices"]):
        acc = specs.get(row["accelerator"]).name
        usd = _check.positive(f"prices[{i}].usd_per_hour", row["usd_per_hour"])
        if row["source"] not in raw["sources"] or row["confidence"] not in ("high", "medium", "low"):
            raise ValueError(f"prices[{i}] needs a source key of `sources` and a confidence; got {row!r}")
        rows.append(
            Price(acc, str(row["provider"]), usd, str(row["date"]), raw["sources"][row["source"]], row["confidence"])
        )
    return tuple(rows)


def _acc(accelerator):
    return specs.get(accelerator) if isinstance(accelerator, str) else accelerator


def cheapest(accelerator) -> Price:
    """The lowest dated price for one accelerator; KeyError if none is listed."""
    name = _acc(accelerator).name
    listed = [p for p in prices() if p.accelerator == name]
    if not listed:
        raise KeyError(f"no price for {name}; priced: {', '.join(priced())}")
    return min(listed, key=lambda p: p.usd_per_hour)


def priced() -> list[str]:
    """Accelerators with at least one price, in spec-sheet order."""
    have = {p.accelerator for p in prices()}
    return [n for n in specs.names() if n in have]


def _peak(acc) -> tuple[str, float]:
    precision = acc.default_precision()
    return precision, acc.peak_flops(precision)


def evaluate(task: str, accelerator, usd_per_hour=None) -> dict:
    """One task on one accelerator: memory needed, whether it fits, time and cost (or, for serving,
    the batch, tokens/s and USD per million tokens). SI units; price defaults to the cheapest listed."""
    key = _check.choice("task", task, TASKS)
    t, acc = TASKS[key], _acc(accelerator)
    price = cheapest(acc).usd_per_hour if usd_per_hour is None else _check.positive("usd_per_hour", usd_per_hour)
    usable = memory.usable_bytes(acc.visible_memory_bytes())
    precision, peak = _peak(acc)
    out = {"task": key, "accelerator": acc.name, "usd_per_hour": price, "precision": precision, "usable_bytes": usable}
    shape = models.get(t["model"])
    n = shape.n_params()
    if key == "serve-8b":
        weights = memory.weights_bytes(n, "bf16")
        kv = memory.kv_cache_bytes_for(shape, t["seq_len"])
        batch = min(t["max_batch"], memory.sequences_that_fit(weights, kv, acc.visible_memory_bytes()))
        out.update(memory_bytes=weights + max(batch, 1) * kv, fits=batch >= 1, batch=batch)
        if batch >= 1:
            rate = min(
                flops.decode_tokens_per_s_bound(weights, acc.bandwidth, batch, kv), peak / flops.forward_flops(n, 1)
            )
            out.update(tokens_per_s=rate, usd_per_million_tokens=price / 3600.0 / rate * 1e6)
        return out
    est = training_estimate(key, acc, price)
    out.update(
        memory_bytes=est.training_bytes_per_gpu,
        fits=est.fits_training,
        flops=est.training_flops,
        seconds=est.training_time_s,
        usd=est.cost_usd,
    )
    return out


def training_estimate(task: str, accelerator, usd_per_hour=None):
    """`calculator.estimate` for a training task of `TASKS` on one accelerator: the same training
    memory (state, activations, fp32 logits), fit and time (model FLOPs at the MFU; recomputation
    lowers the MFU, it adds no model FLOPs) as the calculator, the page and `hwlib estimate` give."""
    key = _check.choice("task", task, [k for k in TASKS if k != "serve-8b"])
    t, acc = TASKS[key], _acc(accelerator)
    tune = {"finetune": "qlora", "lora_rank": t["rank"], "recompute": "full"} if key == "qlora-7b" else {}
    if "attention" in t:
        tune["attention"] = t["attention"]
    return calculator.estimate(
        t["model"],
        tokens=t["tokens"],
        gpu=acc,
        mfu=t["mfu"],
        price_per_hour=usd_per_hour,
        train_seq_len=t["seq_len"],
        micro_batch=t["batch"],
        **tune,
    )


def table(task: str) -> list[dict]:
    """``evaluate`` for every priced accelerator, cheapest result first (USD, or USD per million
    tokens for serving); accelerators where the task does not fit come last."""
    rows = [evaluate(task, name) for name in priced()]
    cost = "usd_per_million_tokens" if _check.choice("task", task, TASKS) == "serve-8b" else "usd"
    return sorted(rows, key=lambda r: (not r["fits"], r.get(cost, float("inf"))))


# --------------------------------------------------------------------------- serving fleets


def fleet(accelerator, gpus_per_replica, precision, batch, users, model="Llama 3 70B", context=8192, usd_per_hour=None):
    """One serving plan: `users` users at `context` tokens each, replicas of `gpus_per_replica` GPUs
    serving `batch` users each, weights and KV cache in `precision` (FLEET_PRECISIONS). Returns
    {replicas, n_gpus, memory_per_gpu, usable, fits, step_s, tokens_per_s_per_user, usd_per_hour}
    in SI units (FORMULAS["fleet.*"]); price defaults to the cheapest listed. ValueError naming the
    argument for a precision the GPU lacks, a degree outside FLEET_GPUS_PER_REPLICA, a bad batch."""
    acc = _acc(accelerator)
    t = _check.integer("gpus_per_replica", gpus_per_replica)
    if t not in FLEET_GPUS_PER_REPLICA:
        raise ValueError(
            f"gpus_per_replica must be one of {FLEET_GPUS_PER_REPLICA} (one node); got {gpus_per_replica!r}"
        )
    prec = _check.choice("precision", precision, FLEET_PRECISIONS)
    if prec not in acc.precisions():
        raise ValueError(f"{acc.name} has no {prec} peak; its precisions: {', '.join(acc.precisions())}")
    b = _check.integer("batch", batch)
    u = _check.integer("users", users)
    shape = models.get(model) if isinstance(model, str) else model
    n = shape.n_params()
    weights = n * FLEET_PRECISIONS[prec]
    q = shape.kv_bytes_per_token("bf16") * FLEET_PRECISIONS[prec] / 2.0
    ctx = _check.integer("context", context)
    price = cheapest(acc).usd_per_hour if usd_per_hour is None else _check.positive("usd_per_hour", usd_per_hour)
    step = serving.step_time_s(n, weights, b, b * ctx, q, t * acc.peak_flops(prec), t * acc.bandwidth)
    replicas = -(-u // b)
    usable = memory.usable_bytes(acc.visible_memory_bytes())
    per_gpu = (weights + b * ctx * q) / t
    return {
        "accelerator": acc.name,
        "gpus_per_replica": t,
        "precision": prec,
        "batch": b,
        "replicas": replicas,
        "n_gpus": replicas * t,
        "memory_per_gpu": per_gpu,
        "usable": usable,
        "fits": per_gpu <= usable,
        "step_s": step,
        "tokens_per_s_per_user": 1.0 / step,
        "usd_per_hour": replicas * t * price,
    }


def cheapest_fleet(users, min_tokens_per_s=20.0, model="Llama 3 70B", context=8192, accelerators=None, prices=None):
    """The cheapest `fleet` (by USD per hour) that fits in memory and gives every user at least
    `min_tokens_per_s`, by enumeration: every priced accelerator (or `accelerators`), every degree
    of FLEET_GPUS_PER_REPLICA, every precision the GPU has, every batch from 1 to `users`.
    `prices` ({accelerator name: USD per hour}) overrides the listed prices (a price drop). Returns
    the plan (a `fleet` dict); ValueError when no plan meets the target."""
    u = _check.integer("users", users)
    rate = _check.positive("min_tokens_per_s", min_tokens_per_s)
    names = priced() if accelerators is None else [_acc(a).name for a in accelerators]
    best = None
    for name in names:
        acc = specs.get(name)
        price = (prices or {}).get(name)
        for prec in (p for p in FLEET_PRECISIONS if p in acc.precisions()):
            for t in FLEET_GPUS_PER_REPLICA:
                for b in range(1, u + 1):
                    plan = fleet(acc, t, prec, b, u, model, context, price)
                    if not plan["fits"] or plan["tokens_per_s_per_user"] < rate:
                        break  # a larger batch needs more memory and gives each user less
                    if best is None or plan["usd_per_hour"] < best["usd_per_hour"]:
                        best = plan
    if best is None:
        raise ValueError(f"no plan serves {u} users at {rate:g} tokens/s each on {', '.join(names)}")
    return best
