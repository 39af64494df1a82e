"""Random inputs and comparisons for checking the generated JavaScript against hwlib's Python
(tests/web/test_web_transpile.py runs it in Node, tests/browser/ in the built book's pages).

An estimate "case" is the keyword set of `hwlib.calculator.estimate`, except that a custom model
is written ``{"custom": {...models.custom keywords...}}`` so it can travel as JSON; `to_python`
turns it into a ModelShape, the page's JS builds it with the generated `models.custom`.
"""

from __future__ import annotations

import math
import random
import re

from hwlib import calculator, memory, models, roofline, specs
from hwlib.web.widgets import DTYPES, KERNELS

_WHOLE = re.compile(r"(?<![\d.])(-?\d+)\.0(?![\d])")


def normalize_message(message: str) -> str:
    """Python prints 4096.0 where the page prints 4096 (JS has one number type): compare modulo '.0'."""
    return _WHOLE.sub(r"\1", str(message))


def _log_uniform(rng: random.Random, lo: float, hi: float) -> float:
    return 10 ** rng.uniform(math.log10(lo), math.log10(hi))


def shape_inputs(rng: random.Random) -> dict:
    """Keywords for `models.custom` (a valid decoder-only shape)."""
    n_heads = rng.choice([1, 2, 4, 8, 12, 16, 32, 64, 128])
    return {
        "vocab_size": rng.randint(100, 260000),
        "d_model": n_heads * rng.choice([16, 64, 128]),
        "n_layers": rng.randint(1, 128),
        "n_heads": n_heads,
        "n_kv_heads": rng.choice([h for h in (1, 2, 4, 8, n_heads) if n_heads % h == 0]),
        "d_ff": rng.randint(1, 60000),
        "max_context": rng.randint(1, 131072),
        "tied_embeddings": rng.random() < 0.5,
        "gated_mlp": rng.random() < 0.5,
        "learned_positions": rng.random() < 0.5,
        "bias": rng.random() < 0.5,
        **_experts(rng),
    }


def _experts(rng: random.Random) -> dict:
    """Dense half the time, else a mixture of E experts with k of them per token."""
    e = rng.choice([1, 1, 1, 2, 8, 16, 64, 256])
    return {"n_experts": e, "top_k": rng.randint(1, min(e, 8))}


def config_inputs(rng: random.Random) -> dict:
    """A shipped config.json (hwlib/data/models.yaml), half the time with another layer count, as a
    reader pastes it into the page."""
    cfg = dict(models.catalogue()["models"][rng.choice(models.names())]["config"])
    key = "n_layer" if "n_layer" in cfg else "num_hidden_layers"
    if rng.random() < 0.5:
        cfg[key] = rng.randint(cfg.get("first_k_dense_replace", 0) + 1, 2 * cfg[key])
    return cfg


def config_context(cfg: dict) -> int:
    return cfg.get("max_position_embeddings") or cfg["n_positions"]


def estimate_case(rng: random.Random) -> dict:
    """One valid keyword set for `calculator.estimate`, drawn at random (see the module docstring)."""
    acc = rng.choice(specs.all())
    pick = rng.random()
    case = {
        "model": rng.choice(models.names())
        if pick < 0.3
        else {"config": config_inputs(rng)}
        if pick < 0.45
        else {"custom": shape_inputs(rng)}
        if pick < 0.7
        else None,
        "tokens": None if rng.random() < 0.1 else _log_uniform(rng, 1e6, 3e13),
        "gpu": acc.name,
        "n_gpus": rng.randint(1, 16384),
        "mfu": rng.uniform(1e-3, 1.0),
        "price_per_hour": None if rng.random() < 0.3 else rng.uniform(0.0, 12.0),
        "precision": None if rng.random() < 0.5 else rng.choice(acc.precisions()),
        "weights_dtype": rng.choice(DTYPES),
        "kv_dtype": rng.choice(DTYPES),
        "batch": rng.randint(1, 512),
        "micro_batch": rng.randint(1, 16),
        "zero_stage": rng.randint(0, 3),
        "recompute": rng.choice(memory.RECOMPUTE),
        "attention": rng.choice(memory.ATTENTION),
        "activations": rng.choice(calculator.ACTIVATIONS),
        "scaling_efficiency": rng.uniform(0.05, 1.0),
    }
    model = case["model"]  # lengths within the model's context (a longer one is refused: bad cases)
    context = (
        models.get(model).max_context
        if isinstance(model, str)
        else model["custom"]["max_context"]
        if isinstance(model, dict) and "custom" in model
        else config_context(model["config"])
        if isinstance(model, dict)
        else 131072
    )
    case["seq_len"] = rng.randint(1, context)
    case["train_seq_len"] = None if rng.random() < 0.3 else rng.randint(1, context)
    if case["model"] is not None and rng.random() < 0.3:  # a LoRA / QLoRA fine-tune (frozen weights: no ZeRO)
        width = (
            models.get(model).d_model
            if isinstance(model, str)
            else model["custom"]["d_model"]
            if "custom" in model
            else models.from_config_dict(model["config"]).d_model
        )
        ranks = [r for r in (4, 8, 16, 64, 256) if r <= width]  # a rank above d_model is refused
        case.update(finetune=rng.choice(["lora", "qlora"]), lora_rank=rng.choice(ranks), zero_stage=0)
    case["fp32_grads"] = "finetune" not in case and rng.random() < 0.3  # full training only
    if case["model"] is None:
        case["n_params"] = _log_uniform(rng, 1e6, 2e12)
        if rng.random() < 0.8:
            case.update(n_layers=rng.randint(1, 160), n_kv_heads=rng.choice([1, 8, 32]), head_dim=rng.choice([64, 128]))
    return case


def bad_estimate_cases(rng: random.Random) -> list[dict]:
    """Impossible inputs that `calculator.estimate` refuses (and so must the page)."""
    base = {**estimate_case(rng), "model": "Llama 3 8B", "tokens": 1e12}
    changes = [{"n_gpus": v} for v in (-1, 0, 2.5, math.nan)] + [{"mfu": v} for v in (1.5, 0.0, -0.2, math.nan)]
    changes += [{"tokens": v} for v in (-1.0, 0.0, math.nan, math.inf)] + [{"seq_len": v} for v in (0, -5, 1.5)]
    changes += [{"seq_len": 8193}, {"train_seq_len": 10**6}, {"micro_batch": 0}, {"attention": "fast"}, {"batch": 2.5}]
    changes += [{"finetune": "dora"}, {"finetune": "lora", "zero_stage": 3}, {"finetune": "qlora", "lora_rank": 0}]
    changes += [{"finetune": "lora", "model": None, "n_params": 7e9}, {"finetune": "lora", "lora_rank": 8192}]
    changes += [{"n_gpus": 1e30}, {"batch": 10**12}, {"tokens": 1e30}, {"micro_batch": 10**9}]
    changes += [{"model": None, "n_params": 8e37}, {"model": "Llama 3 405B", "serve_gpus": 11}]
    changes += [
        {"batch": 0},
        {"price_per_hour": -3.0},
        {"price_per_hour": math.nan},
        {"scaling_efficiency": 1.5},
        {"scaling_efficiency": 0.0},
        {"zero_stage": 4},
        {"zero_stage": -1},
        {"weights_dtype": "bf17"},
        {"recompute": "sometimes"},
        {"activations": "fast"},
        {"finetune": "lora", "fp32_grads": True},
        {"precision": "fp64"},
        {"gpu": "H1000"},
        {"model": "Llama 9"},
        {"model": None},
        {"model": None, "n_params": -1.0},
        {"model": None, "n_params": math.nan},
        {"model": None, "n_params": 7e9, "n_layers": 32},
        {"model": {"custom": {"vocab_size": 32000, "d_model": 100, "n_layers": 2, "n_heads": 7}}},
        {"model": {"custom": {"vocab_size": 32000, "d_model": 64, "n_layers": 2, "n_heads": 8, "n_kv_heads": 3}}},
        {"model": {"custom": {"vocab_size": -5, "d_model": 64, "n_layers": 2, "n_heads": 8}}},
        {"model": {"config": {"model_type": "bert", "hidden_size": 768}}},
        {"model": {"config": {"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32}}},
        {
            "model": {
                "config": {"model_type": "gemma2", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2}
            }
        },
    ]
    return [{**base, **c} for c in changes]


def to_python(case: dict) -> dict:
    """The keywords `calculator.estimate` takes (a custom model becomes a ModelShape)."""
    model = case.get("model")
    if isinstance(model, dict) and "config" in model:
        model = models.from_config_dict(model["config"], "pasted config", "pasted config.json")
    elif isinstance(model, dict):
        model = models.custom("custom shape", **model["custom"])
    return {**case, "model": model}


def estimate_outcome(case: dict):
    """("ok", {"rows": [...], "missing": {...}}) or ("error", type name, message) in Python."""
    try:
        est = calculator.estimate(**to_python(case))
    except (ValueError, KeyError) as err:
        return ("error", type(err).__name__, str(err.args[0]) if err.args else "")
    return ("ok", {"rows": est.rows(), "missing": dict(est.missing), "warnings": list(est.warnings)})


def compare_estimate(py: dict, js: dict) -> float:
    """Assert the page's estimate equals Python's (text modulo '.0'); return the worst relative error."""
    assert [r["key"] for r in js["rows"]] == [r["key"] for r in py["rows"]], "different quantities"
    worst = 0.0
    for a, b in zip(py["rows"], js["rows"]):
        for k in ("label", "unit", "text", "formula", "inputs"):
            assert normalize_message(a[k]) == normalize_message(b[k]), (a["key"], k, a[k], b[k])
        err = relative_error(a["value"], b["value"])
        assert err <= 1e-12, (a["key"], a["value"], b["value"])
        worst = max(worst, err)
    assert py["missing"] == js["missing"]
    if "warnings" in js:  # the page shows them beside the numbers (tests/browser reads the table only)
        assert [normalize_message(w) for w in py["warnings"]] == [normalize_message(w) for w in js["warnings"]]
    return worst


def roofline_case(rng: random.Random) -> dict:
    """Keywords for roofline.attainable/bound: an intensity and one accelerator's π and β."""
    acc = rng.choice(specs.all())
    return {
        "intensity": _log_uniform(rng, 1e-3, 1e6),
        "peak_flops": acc.peak_flops(rng.choice(acc.precisions())),
        "bandwidth": acc.bandwidth,
    }


def roofline_outcome(case: dict) -> dict:
    """What the explorer shows for one point, computed by hwlib.roofline in Python."""
    return {
        "ridge": roofline.ridge_point(case["peak_flops"], case["bandwidth"]),
        "attainable": roofline.attainable(**case),
        "bound": roofline.bound(**case),
    }


def kernel_intensities(precision: str) -> list[float]:
    """The explorer's kernels' intensities with elements of `precision`."""
    return [fn(**kwargs, bytes_per_element=precision) for _, fn, kwargs in KERNELS]


def relative_error(py, js) -> float:
    """Relative difference of two numbers (0 for equal non-numbers, inf for different ones)."""
    if isinstance(py, (bool, str)) or py is None or isinstance(js, (bool, str)) or js is None:
        return 0.0 if py == js else math.inf
    py, js = float(py), float(js)
    if py == js:
        return 0.0
    if not (math.isfinite(py) and math.isfinite(js)):
        return math.inf
    return abs(py - js) / max(abs(py), 1e-300)


# JavaScript that runs one case with a generated program `hw` (Node tests and the book's pages).
ESTIMATE_JS = """(hw, c) => {
  const kw = {...c};
  const pasted = {name: "pasted config", source: "pasted config.json"};
  if (kw.model && typeof kw.model === "object" && kw.model.config) kw.model = hw.call("hwlib.models.from_config_dict", {cfg: kw.model.config, ...pasted});
  else if (kw.model && typeof kw.model === "object") kw.model = hw.call("hwlib.models.custom", {name: "custom shape", ...kw.model.custom});
  const est = hw.call("hwlib.calculator.estimate", kw);
  const rows = Object.values(est.quantities).map((q) => ({key: q.key, label: q.label, value: q.value, unit: q.unit,
    text: hw.call("hwlib.calculator.Quantity.text", {self: q}), formula: q.formula, inputs: q.inputs}));
  return {rows, missing: est.missing, warnings: est.warnings};
}"""


SERVE_MODELS = ("Llama 3 8B", "Llama 2 7B", "Qwen3 8B", "GPT-2 small", "Gemma 2 2B", "Llama 3 70B")


def serve_case(rng: random.Random) -> dict:
    """Keywords for `hwlib.serve_plan.plan` (the page's "Plan a service" form), drawn at random."""
    acc = rng.choice([a for a in specs.all() if a.kind == "gpu" and a.bandwidth > 1e12])
    return {
        "model": rng.choice(SERVE_MODELS),
        "gpu": acc.name,
        "precision": rng.choice([None, acc.default_precision()]),
        "rate_rps": _log_uniform(rng, 0.2, 80.0),
        "prompt_mean": float(rng.randint(8, 2048)),
        "output_mean": float(rng.randint(2, 512)),
        "ttft_slo_s": _log_uniform(rng, 0.02, 5.0),
        "tpot_slo_s": _log_uniform(rng, 0.002, 0.2),
        "percentile": rng.choice([50.0, 90.0, 99.0]),
        "prompt_dist": rng.choice(["geometric", "fixed"]),
        "output_dist": rng.choice(["geometric", "fixed"]),
        "chunked": rng.random() < 0.7,
        "max_batched_tokens": 4096,
        "prefix_hit_rate": rng.choice([0.0, 0.0, 0.5, 0.9]),
        "disaggregated": rng.random() < 0.25,
        "admission": rng.choice(["optimistic", "reserve"]),
        "n_requests": rng.randint(10, 80),
        "seed": rng.randint(0, 1000),
        "max_gpus": rng.choice([8, 16, 32]),
    }


def serve_outcome(case: dict):
    """("ok", plan as JSON-able data) or ("error", type name, message) in Python."""
    from hwlib import serve_plan

    try:
        result = serve_plan.plan(**case)
    except (ValueError, KeyError) as err:
        return ("error", type(err).__name__, str(err.args[0]) if err.args else "")
    return ("ok", _plain(result))


def _plain(x):
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    return x


def compare_serve(py, js, path="plan") -> None:
    """Assert the page's plan equals Python's: the same keys, numbers equal (the simulator is exact in
    doubles), strings equal modulo '.0'."""
    if isinstance(py, dict):
        assert isinstance(js, dict) and set(js) == set(py), (
            path,
            sorted(py),
            sorted(js) if isinstance(js, dict) else js,
        )
        for k in py:
            compare_serve(py[k], js[k], f"{path}.{k}")
    elif isinstance(py, list):
        assert isinstance(js, list) and len(js) == len(py), path
        for i, (a, b) in enumerate(zip(py, js)):
            compare_serve(a, b, f"{path}[{i}]")
    elif isinstance(py, str):
        assert normalize_message(py) == normalize_message(js), (path, py, js)
    else:
        assert relative_error(py, js) == 0.0, (path, py, js)
