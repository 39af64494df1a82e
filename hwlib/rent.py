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
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from . import _check, calculator, flops, memory, models, specs

DATA_PATH = Path(__file__).with_name("data") / "prices.yaml"

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
