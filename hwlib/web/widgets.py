"""HTML builders for the book's in-page calculators: no kernel, no server, no network.

A chapter emits a widget from a hidden code cell::

    from hwlib.web import llm_calculator
    llm_calculator()

Each call returns an ``IPython.display.HTML`` whose text/html is self-contained: a container, the
stylesheet, the JavaScript generated at build time from hwlib's own Python (`transpile.to_js` of
`hwlib.calculator.estimate`, `hwlib.roofline`, `hwlib.units` and what they call), the spec-sheet and
model data as JSON, and the hand-written page code that draws the form and the SVG
(``hwlib/data/web/*.js``), which computes nothing itself.
"""

from __future__ import annotations

import itertools
import json
import math
import uuid
from pathlib import Path

from .. import calculator, dtypes, memory, models, roofline, specs, units
from .transpile import to_js

ASSETS = Path(__file__).resolve().parents[1] / "data" / "web"
_ids = itertools.count(1)
DTYPES = dtypes.CALCULATOR_DTYPES
SHAPE_FIELDS = (
    "vocab_size",
    "d_model",
    "n_layers",
    "n_heads",
    "n_kv_heads",
    "d_ff",
    "max_context",
    "gated_mlp",
    "tied_embeddings",
    "learned_positions",
    "bias",
    "n_experts",
    "top_k",
)
FORMATTERS = [
    units.format_bytes,
    units.format_seconds,
    units.format_usd,
    units.format_rate,
    units.format_bandwidth,
    units.format_flops,
    units.format_si,
    units.format_number,
    units.parse_number,
]

# Kernels placed on the roofline explorer: (label, hwlib function, keyword arguments; the element
# size comes from the chosen precision). Shapes follow chapter 6 (a d = 4096 layer for decoding).
KERNELS = [
    ("vector add  c = a + b", roofline.elementwise_intensity, {"flops_per_element": 1, "reads": 2, "writes": 1}),
    (
        "layer norm (≈ 8 FLOP per element)",
        roofline.elementwise_intensity,
        {"flops_per_element": 8, "reads": 1, "writes": 1},
    ),
    ("decode GEMV, batch 1 (4096×4096)", roofline.matmul_intensity, {"m": 1, "n": 4096, "k": 4096}),
    ("decode GEMM, batch 64", roofline.matmul_intensity, {"m": 64, "n": 4096, "k": 4096}),
    ("matmul 1024³", roofline.matmul_intensity, {"m": 1024, "n": 1024, "k": 1024}),
    ("matmul 8192³", roofline.matmul_intensity, {"m": 8192, "n": 8192, "k": 8192}),
]


def _accelerators() -> list[dict]:
    rows = []
    for acc in specs.all():
        peaks = {p: acc.flops[p] for p in acc.precisions()}
        rows.append(
            {
                "name": acc.name,
                "vendor": acc.vendor,
                "kind": acc.kind,
                "memory_bytes": acc.memory_bytes,
                "bandwidth": acc.bandwidth,
                "flops": peaks,
                "price_per_hour_usd": acc.price_per_hour_usd,
                "source_bandwidth": acc.source("bandwidth"),
                "source_flops": {p: acc.source(p) for p in peaks},
            }
        )
    return rows


def _models() -> list[dict]:
    return [
        {"name": m.name, "source": m.source, **{f: getattr(m, f) for f in SHAPE_FIELDS}}
        for m in map(models.get, models.names())
    ]


def _json(data) -> str:
    """JSON for an inline <script>: NaN/inf refused, '</' escaped so no string can end the script."""
    return json.dumps(data, allow_nan=False, ensure_ascii=False).replace("</", "<\\/")


def _html(kind: str, functions, data: dict, title: str):
    from IPython.display import HTML

    # Unique across the whole book, not just this kernel: the single-page (PDF) build puts every
    # chapter's widgets on one page, so a per-kernel counter alone would repeat ids.
    wid = f"hwlib-{kind}-{next(_ids)}-{uuid.uuid4().hex[:8]}"
    program = to_js([*functions, *FORMATTERS])
    ui = (ASSETS / f"{kind}.js").read_text(encoding="utf-8")
    common = (ASSETS / "widget_common.js").read_text(encoding="utf-8")
    css = (ASSETS / "widgets.css").read_text(encoding="utf-8")
    script = (
        f"(() => {{\nconst root = document.getElementById({json.dumps(wid)});\n"
        "root.dataset.scriptStartMs = performance.now().toFixed(1);\n"
        f"const hw = {program};\nconst DATA = {_json(data)};\n{common}\n{ui}\n}})();"
    )
    if "</script" in script.lower():
        raise ValueError("generated widget script contains '</script'")
    html = (
        f'<div class="hwlib-widget hwlib-{kind} tex2jax_ignore mathjax_ignore" id="{wid}" '
        f'data-hwlib-widget="{kind}" role="group" aria-label="{title}">'
        f"<noscript>This calculator needs JavaScript; the same numbers come from the "
        f"<code>hwlib</code> command line.</noscript></div>\n"
        f"<style>{css}</style>\n<script>\n{script}\n</script>"
    )
    return HTML(html)


def llm_calculator(
    model: str = "Llama 3 8B",
    gpu: str = "H100 SXM",
    tokens: float = 15e12,
    n_gpus: int = 1024,
    mfu: float = 0.4,
    price_per_hour: float | None = None,
    seq_len: int | None = None,
    batch: int = 1,
    train_seq_len: int | None = None,
    micro_batch: int = 1,
):
    """The napkin-math calculator of chapter 9, in the page: `hwlib.calculator.estimate` compiled to
    JavaScript. Model by name, by shape or by parameter count; every quantity with its formula.
    Serving (seq_len, batch) and training (train_seq_len, micro_batch) are separate fields; lengths
    default to 4096 tokens or the model's context when shorter, and reset when the model changes."""
    acc = specs.get(gpu)
    shape = models.get(model)
    default_len = min(calculator.DEFAULT_SEQ_LEN, shape.max_context)
    lengths = {k: default_len if v is None else v for k, v in (("seq_len", seq_len), ("train_seq_len", train_seq_len))}
    calculator.estimate(
        shape, gpu=acc.name, batch=batch, micro_batch=micro_batch, **lengths
    )  # ValueError if impossible
    price = price_per_hour if price_per_hour is not None else acc.price_per_hour_usd
    data = {
        "accelerators": _accelerators(),
        "models": _models(),
        "dtypes": list(DTYPES),
        "precisions": list(specs.PRECISIONS),
        "recompute": list(memory.RECOMPUTE),
        "attention": list(memory.ATTENTION),
        "activations": [
            ["fused", "fused kernels, as Megatron-LM keeps them"],
            ["unfused", "unfused, as a Hugging Face run keeps them (+ fp32 norm inputs)"],
        ],
        "finetune": [
            ["none", "every weight (16 B of state per parameter)"],
            ["lora", "LoRA adapters, frozen bf16 weights"],
            ["qlora", "QLoRA adapters, frozen NF4 weights"],
        ],
        "default_seq_len": calculator.DEFAULT_SEQ_LEN,
        "defaults": {
            "model": shape.name,
            "gpu": acc.name,
            "tokens": tokens,
            "n_gpus": n_gpus,
            "mfu": mfu,
            "price_per_hour": "" if price is None else price,
            "batch": batch,
            "micro_batch": micro_batch,
            **lengths,
        },
    }
    return _html(
        "llm",
        [calculator.estimate, calculator.Quantity.text, models.custom, models.from_config_dict],
        data,
        "LLM memory, compute and cost calculator",
    )


def roofline_explorer(accelerator: str = "H100 SXM", precision: str = "bf16", intensity: float = 10.0):
    """The roofline explorer (chapter 6): accelerator and precision, an intensity slider, known
    kernels placed on the plot, attainable FLOP/s and the bound that sets it."""
    acc = specs.get(accelerator)
    acc.peak_flops(precision)  # ValueError if the part lacks it
    if not (isinstance(intensity, (int, float)) and math.isfinite(intensity) and intensity > 0):
        raise ValueError(f"intensity must be a finite number > 0; got {intensity!r}")
    kernels = [
        {"label": label, "fn": f"{fn.__module__}.{fn.__qualname__}", "kwargs": kwargs} for label, fn, kwargs in KERNELS
    ]
    data = {
        "accelerators": _accelerators(),
        "precisions": list(specs.PRECISIONS),
        "kernels": kernels,
        "defaults": {"accelerator": acc.name, "intensity": float(intensity), "precision": dtypes.rate(precision)},
    }
    functions = [roofline.attainable, roofline.bound, roofline.ridge_point, *dict.fromkeys(fn for _, fn, _ in KERNELS)]
    return _html("roofline", functions, data, "Roofline explorer")


SERVE_MODELS = ("Llama 3 8B", "Llama 3 70B", "Llama 2 7B", "Llama 2 13B", "Llama 2 70B", "Mistral 7B", "Qwen3 8B",
                "Gemma 2 9B")  # fmt: skip
"""Dense models the serving planner offers (mixtures of experts are refused by the planner)."""


def serving_planner(model: str = "Llama 3 8B", gpu: str = "H100 SXM", rate_rps: float = 20.0,
                    prompt_mean: float = 512.0, output_mean: float = 128.0, ttft_slo_s: float = 0.5,
                    tpot_slo_s: float = 0.05, percentile: float = 99.0, n_requests: int = 200):  # fmt: skip
    """The serving planner of chapter 12 in the page: `hwlib.serve_plan.plan` and the simulator it
    runs, compiled to JavaScript, so the page's replicas, percentiles and costs are `hwlib serve`'s."""
    from .. import serve_plan

    serve_plan.plan(model, gpu, None, rate_rps, prompt_mean, output_mean, ttft_slo_s, tpot_slo_s, percentile,
                    n_requests=n_requests)  # fmt: skip  # ValueError if impossible
    data = {
        "accelerators": [a for a in _accelerators() if a["kind"] == "gpu"],
        "models": list(SERVE_MODELS),
        "precisions": list(specs.PRECISIONS),
        "formulas": serve_plan.FORMULAS,
        "defaults": {
            "model": model,
            "gpu": gpu,
            "rate_rps": rate_rps,
            "prompt_mean": prompt_mean,
            "output_mean": output_mean,
            "ttft_slo_s": ttft_slo_s,
            "tpot_slo_s": tpot_slo_s,
            "percentile": percentile,
            "prefix_hit_rate": 0.0,
            "n_requests": n_requests,
        },  # fmt: skip
    }
    return _html("serve", [serve_plan.plan], data, "Serving planner")


__all__ = ["llm_calculator", "roofline_explorer", "serving_planner", "KERNELS", "DTYPES"]
