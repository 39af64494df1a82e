"""The napkin-math calculator of chapter 9, and the one result model of every hwlib calculator.

>>> est = estimate(model="GPT-2 small", tokens=10e9, gpu="H100 SXM", mfu=0.4, price_per_hour=3.0)
>>> round(est.training_time_s / 3600, 1)          # 6ND / (u·π·G), in hours
5.2
>>> est["training_flops"].formula
'C = 6·N·D'

This module owns no formula. Each quantity is computed by the hwlib function that defines it
(`hwlib.models`, `memory`, `flops`, `roofline`, `specs`, ...), and its formula text is that
function's entry in the `FORMULAS` dict of its own module (`flops.FORMULAS["training_flops"]`;
methods as "Class.method"; `memory.zero_formula` / `activation_formula` for texts that depend on
their arguments). `estimate` only wires them together, one section function per part (inputs, model
size, training memory, serving memory, time, decode), and keeps, for every quantity, a `Quantity`:
its value in SI units, unit, formula, the function that computed it and the numbers that went in.
Every row goes through `put`, which reads the formula from the FORMULAS entry of the function it
credits, so a row credited to the wrong function is an error.

One result model. `Quantity` is the only result record; `Result` (`Estimate`) holds them with the
inputs, what could not be computed and warnings. Every calculator command of the command line
(`hwlib train`, `memory`, `decode`, `estimate`, `diagnose`, `roofline`, `specs NAME`, `moe`,
`finetune`, `energy`, `speculative`, `rent`) is a view over such a Result, and `--json` prints
`Result.document(command)`, always this schema (`SCHEMA`, checked by `validate`)::

    {"command":    str,                       # the subcommand
     "inputs":     {name: value},             # every argument after defaults, SI units
     "quantities": [{"key": str,              # e.g. "training_time_s"
                     "label": str,            # what it is, for people
                     "value": number | bool | str,   # SI units (bytes, FLOP, s, USD, ...)
                     "unit": str,             # "bytes", "FLOP", "FLOP/s", "s", "USD", "" ...
                     "text": str,             # the value in human units ("11.8 h")
                     "formula": str,          # from FORMULAS beside `function`; "" for an input
                     "function": str,         # "hwlib.flops.training_time_s"
                     "inputs": str}, ...],    # the numbers put into the formula
     "missing":    {key: what it would need},
     "warnings":   [str],
     "details":    {...}}                     # command-specific data that is not a quantity
                                              # (remedy lists, sources, table rows); may be {}

Sources: chapter 9 of the book (the whole calculator, its worked problems and exercises 1-2) and
chapter 8 (C ≈ 6ND, t = 6ND / (u·π·G), 16 B/param, decode).
"""

from __future__ import annotations

import html
import importlib
import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass, field

from . import _check, finetune as ft, flops, memory, models, roofline, specs, units


@dataclass(frozen=True)
class Quantity:
    """One line of an estimate: value in SI units, formula, the hwlib function and its inputs."""

    key: str
    label: str
    value: object  # float (SI units), int, bool or str
    unit: str  # "params", "bytes", "FLOP", "FLOP/s", "FLOP/byte", "s", "h", "USD", ...
    formula: str
    function: str
    inputs: str = ""

    def text(self) -> str:
        """The value in human units (GB, TFLOP/s, h, $), labelled; never used for arithmetic."""
        u = self.unit
        if isinstance(self.value, bool) or not isinstance(self.value, numbers.Real):
            return str(self.value)
        v = float(self.value)
        fmt: dict[str, Callable[[float], str]] = {
            "bytes": units.format_bytes,
            "FLOP": units.format_flops,
            "FLOP/s": units.format_rate,
            "s": units.format_seconds,
            "USD": units.format_usd,
        }
        if u in fmt:
            return fmt[u](v)
        if u == "params":
            return units.format_si(v, "", 3).strip() + " params"
        if abs(v) < 1e6 and v == math.floor(v):  # counts (GPUs, tokens) stay exact
            return (f"{v:,.0f}".replace(",", "\u202f") + f" {u}").strip()
        return units.format_quantity(v, u)  # 3 significant figures, no e-notation


@dataclass(repr=False)
class Estimate:
    """What `estimate` returns: `est.key` is a value (SI units), `est["key"]` its Quantity."""

    inputs: dict
    quantities: dict = field(default_factory=dict)
    missing: dict = field(default_factory=dict)  # key -> what it would need
    warnings: list = field(default_factory=list)  # sentences a reader must see beside the numbers
    details: dict = field(default_factory=dict)  # command-specific data that is not a quantity

    def __getitem__(self, key: str) -> Quantity:
        if key in self.quantities:
            return self.quantities[key]
        raise KeyError(self._why(key))

    def __getattr__(self, key: str):
        if key.startswith("_") or key in ("inputs", "quantities", "missing", "warnings", "details"):
            raise AttributeError(key)
        try:
            return self[key].value
        except KeyError as exc:
            raise AttributeError(exc.args[0]) from None

    def __contains__(self, key: str) -> bool:
        return key in self.quantities

    def _why(self, key: str) -> str:
        if key in self.missing:
            return f"{key} was not computed: it needs {self.missing[key]}"
        return f"no quantity {key!r}; available: {', '.join(self.quantities)}"

    def rows(self) -> list[dict]:
        """One dict per quantity (for tables): key, label, value, unit, text, formula, function, inputs."""
        return [
            {
                "key": q.key,
                "label": q.label,
                "value": q.value,
                "unit": q.unit,
                "text": q.text(),
                "formula": q.formula,
                "function": q.function,
                "inputs": q.inputs,
            }
            for q in self.quantities.values()
        ]

    def add(self, q: Quantity) -> Quantity:
        """Add one quantity (its key must be new) and return it."""
        if q.key in self.quantities:
            raise ValueError(f"quantity {q.key!r} is already in this result")
        self.quantities[q.key] = q
        return q

    def document(self, command: str) -> dict:
        """The JSON document of `SCHEMA`: what every calculator command prints with --json."""
        return {
            "command": command,
            "inputs": dict(self.inputs),
            "quantities": self.rows(),
            "missing": dict(self.missing),
            "warnings": list(self.warnings),
            "details": dict(self.details),
        }

    def to_dict(self) -> dict:
        """{key: value} in SI units, plus the inputs under "inputs"."""
        return {"inputs": dict(self.inputs), **{k: q.value for k, q in self.quantities.items()}}

    def __repr__(self) -> str:
        if "n_gpus" not in self.inputs:
            return f"<Result {self.inputs}: {len(self.quantities)} quantities>"
        what = self.inputs.get("model") or f"N={self.inputs.get('n_params'):.3g}"
        where = f"{self.inputs.get('n_gpus')} x {self.inputs.get('gpu')}"
        return f"<Estimate {what} on {where}: {len(self.quantities)} quantities>"

    def __str__(self) -> str:
        rows = self.rows()
        w1 = max(len(r["label"]) for r in rows)
        w2 = max(len(r["text"]) for r in rows)
        lines = [f"{r['label']:<{w1}}  {r['text']:>{w2}}   {r['formula']}" for r in rows]
        notes = [f"({k}: needs {v})" for k, v in self.missing.items()] + [f"warning: {w}" for w in self.warnings]
        return "\n".join(lines + notes)

    def _repr_html_(self) -> str:
        cells = "".join(
            f"<tr><td>{html.escape(r['label'])}</td><td style='text-align:right'>{html.escape(r['text'])}"
            f"</td><td>{html.escape(r['formula'])}</td><td>{html.escape(r['inputs'])}</td>"
            f"<td>{html.escape(r['function'].removeprefix('hwlib.'))}</td></tr>"
            for r in self.rows()
        )
        return (
            "<table style='font-size:85%'><thead><tr><th>quantity</th><th>value</th><th>formula</th>"
            f"<th>numbers</th><th>hwlib function</th></tr></thead><tbody>{cells}</tbody></table>"
        )


Result = Estimate
"""Every calculator's result: `Estimate` is the name `estimate` has always returned."""

_FIELDS = {"key": str, "label": str, "unit": str, "text": str, "formula": str, "function": str, "inputs": str}
SCHEMA = {"command": str, "inputs": dict, "quantities": list, "missing": dict, "warnings": list, "details": dict}
"""Top-level keys of `Result.document` and their JSON types; each quantity has `_FIELDS` and "value"."""


def validate(doc) -> dict:
    """Check a calculator JSON document against `SCHEMA`; return it, or raise ValueError naming the field."""
    if not isinstance(doc, dict) or set(doc) != set(SCHEMA):
        got = sorted(doc) if isinstance(doc, dict) else type(doc).__name__
        raise ValueError(f"a calculator document has exactly the keys {sorted(SCHEMA)}; got {got}")
    for key, kind in SCHEMA.items():
        if not isinstance(doc[key], kind):
            raise ValueError(f"{key!r} must be a {kind.__name__}; got {type(doc[key]).__name__}")
    keys = [q.get("key") for q in doc["quantities"] if isinstance(q, dict)]
    if len(set(keys)) != len(doc["quantities"]):
        raise ValueError(f"quantities must be dicts with distinct keys; got {keys}")
    for q in doc["quantities"]:
        if set(q) != set(_FIELDS) | {"value"}:
            raise ValueError(
                f"quantity {q['key']!r} has the fields {sorted(q)}; expected {sorted(set(_FIELDS) | {'value'})}"
            )
        bad = [f for f, kind in _FIELDS.items() if not isinstance(q[f], kind)]
        if bad or not isinstance(q["value"], (int, float, bool, str)):
            raise ValueError(f"quantity {q['key']!r}: {bad or ['value']} of the wrong type")
    return doc


def formula_of(function) -> str:
    """The formula text of an hwlib function or method: its entry in its module's FORMULAS."""
    module = importlib.import_module(function.__module__)
    table = getattr(module, "FORMULAS", {})
    if function.__qualname__ not in table:
        raise KeyError(
            f"{function.__module__}.FORMULAS has no entry {function.__qualname__!r}; "
            "add the formula text beside the function"
        )
    return table[function.__qualname__]


def function_name(function) -> str:
    """'hwlib.flops.training_flops' for flops.training_flops (methods: 'hwlib.models.ModelShape.n_params')."""
    return f"{function.__module__}.{function.__qualname__}"


def quantity(key, label, value, unit, function, inputs="", formula=None) -> Quantity:
    """A Quantity computed by `function`: its formula from FORMULAS beside that function, unless a
    `formula` computed by that module (e.g. `memory.zero_formula(stage)`) is given."""
    text = formula_of(function) if formula is None else formula
    return Quantity(key, label, value, unit, text, function_name(function), inputs)


MAX_GPUS = 10**6
"""More GPUs than any cluster has (the largest announced ones have a few times 10^5): refused."""
MAX_BATCH = 10**6
"""Sequences decoded or trained together per step beyond which an input is refused as a typo."""
MAX_TOKENS = 1e17
"""Training tokens beyond which an input is refused (the largest runs use about 10^13-10^14)."""
MAX_PARAMS = 1e15
"""Parameter counts beyond which an input is refused (the largest models have about 10^12)."""


def _owned_formulas() -> dict:
    """{"hwlib.module.function": [formula texts]}: every FORMULAS entry of the modules estimate draws on,
    under its function and (for variants such as "kv_cache_bytes.mla") under the function it refines."""
    owned: dict[str, list[str]] = {}
    for module in (models, memory, flops, roofline, specs, ft):
        for name, text in module.FORMULAS.items():
            parts = name.split(".")
            for i in range(1, len(parts) + 1):
                owned.setdefault(f"{module.__name__}.{'.'.join(parts[:i])}", []).append(text)
    return owned


OWNED_FORMULAS = _owned_formulas()
"""The formula texts each hwlib function owns: a Quantity may only print one of its function's."""
BUILT_FORMULAS = ("hwlib.memory.zero_bytes_per_device", "hwlib.memory.activation_bytes_for")
"""Functions whose formula text is built from their arguments (memory.zero_formula, activation_formula)."""


def check_credit(key, formula, function):
    """Refuse a quantity whose formula is not one its function owns (OWNED_FORMULAS): a formula credited
    to the wrong function is an error, not a wrong line in the table. Functions whose formula text
    is built from their arguments (memory.zero_formula, activation_formula) own no fixed text."""
    if not formula or function in BUILT_FORMULAS:
        return
    owned = OWNED_FORMULAS.get(function)
    if owned is None:
        raise ValueError(f"quantity {key!r}: {function} has no formula in its module's FORMULAS")
    if formula not in owned:
        raise ValueError(f"quantity {key!r}: the formula {formula!r} is not one of {function}'s")


FUSED_NOTE = "fused-kernel count as Megatron-LM keeps them; an unfused Hugging Face run keeps more"
"""Said beside every fused activation count: Korthikanti et al. 2022 count what fused kernels keep; an
unfused run also keeps fp32 copies around the norms and a second copy of each projection's input
(activations="unfused" adds them: memory.unfused_activation_bytes)."""
UNFUSED_NOTE = "unfused eager count as a Hugging Face run keeps them: + fp32 norm inputs and a second projection input"
"""Said beside the activation count of activations="unfused"."""
ACTIVATIONS = ("fused", "unfused")
"""How the activations are counted: the fused-kernel count of Megatron-LM (default) or an unfused run."""

DEFAULT_SEQ_LEN = 4096
"""Tokens per sequence when `estimate` is not given seq_len / train_seq_len (capped at the model's
context)."""

FORMULA_TABLES = {module.__name__: module.FORMULAS for module in (models, memory, flops, roofline, specs, ft)}
"""The FORMULAS table of every module estimate credits, by module name: `put` reads a row's formula here."""


def fmt(x) -> str:
    """A number inside a formula line: whole numbers below 10^6 exact (16384), else three figures with
    the exponent written without '+' and padding (8.03e9, 0.35)."""
    x = float(x)
    if abs(x) < 1e6 and x == int(x):
        return str(int(x))
    s = f"{x:.3g}"
    if "e" in s:
        mantissa, exponent = s.split("e")
        return f"{mantissa}e{int(exponent)}"
    return s


def put(est, key, label, value, unit, function, inputs="", variant="", formula=None):
    """Add one quantity to `est` and return its value. `function` ("hwlib.memory.weights_bytes",
    methods "hwlib.models.ModelShape.n_params") is the hwlib function that computed it; the formula is
    that function's entry in its module's FORMULAS (`variant` picks "name.variant"), so a row credited
    to a function whose module has no such entry raises ValueError. A formula text built from
    arguments (`formula=`: memory.zero_formula, activation_formula, ModelShape.kv_formula) must be one
    its function owns (check_credit). "argument NAME" credits an input, with no formula."""
    if function.startswith("argument "):
        text = ""
    elif formula is not None:
        check_credit(key, formula, function)
        text = formula
    else:
        parts = function.split(".")
        module = ".".join(parts[:2])
        entry = ".".join(parts[2:]) + ("." + variant if variant else "")
        table = FORMULA_TABLES.get(module)
        if table is None or entry not in table:
            raise ValueError(
                f"quantity {key!r}: {module}.FORMULAS has no entry {entry!r}; credit the function that computed it"
            )
        text = table[entry]
    est.quantities[key] = Quantity(key, label, value, unit, text, function, inputs)
    return value


def _shape(model):
    if model is None or isinstance(model, models.ModelShape):
        return model
    if isinstance(model, str):
        return models.get(model)
    raise ValueError(
        f"model must be a name from hwlib.models ({', '.join(models.names())}), a ModelShape or None; got {model!r}"
    )


def context(name, value, shape, default=DEFAULT_SEQ_LEN):
    """A sequence length: `default` capped at the model's context when not given; a given one must
    fit the model's context (a model cannot attend past the positions it was trained on)."""
    if value is None:
        return default if shape is None else min(default, shape.max_context)
    s = _check.integer(name, value)
    if shape is not None and s > shape.max_context:
        raise ValueError(
            f"{name}={s} exceeds the context of {shape.name} ({shape.max_context} tokens); "
            f"give at most {shape.max_context}"
        )
    return s


def _at_most(name, value, limit, what):
    """`value`, or ValueError naming the field when it is past what any real setup has."""
    if value > limit:
        raise ValueError(f"{name}={fmt(value)} is more than {fmt(limit)} {what}: no real setup has that many")
    return value


def _kv_kind(shape) -> str:
    """What the KV-cache label says about a shape's attention: MLA, a window on all or some layers."""
    if shape.mla:
        return f", MLA latent {shape.kv_lora_rank} + {shape.qk_rope_head_dim}"
    if shape.sliding_window is None:
        return ""
    if shape.window_layers() == shape.n_layers:
        return f", sliding window {shape.sliding_window}"
    return f", window {shape.sliding_window} on {shape.window_layers()} of {shape.n_layers} layers"


def precision_of(gpu, precision):
    """bf16 where the part has it, else fp16 (T4); an explicit precision is checked by the spec sheet."""
    if precision is not None:
        gpu.peak_flops(precision)  # ValueError naming the part's precisions
        return precision
    return gpu.default_precision()


def _fit_text(acc) -> str:
    """The memory budget beside every "fits" and "GPUs needed" row."""
    return (
        f"{units.format_bytes(acc.visible_memory_bytes(), binary=True)}"
        + ("" if acc.ecc_memory_bytes is None else " visible with ECC on")
        + f", f = {memory.HEADROOM:g}, "
        f"C_ctx = {units.format_bytes(memory.CUDA_CONTEXT_BYTES, binary=True)}"
    )


def estimate(
    model=None,
    *,
    n_params=None,
    tokens=None,
    gpu="H100 SXM",
    n_gpus=1,
    mfu=0.4,
    price_per_hour=None,
    precision=None,
    weights_dtype="bf16",
    kv_dtype="bf16",
    seq_len=None,
    batch=1,
    zero_stage=0,
    recompute="none",
    scaling_efficiency=1.0,
    serve_gpus=None,
    n_layers=None,
    n_kv_heads=None,
    head_dim=None,
    train_seq_len=None,
    micro_batch=1,
    attention="flash",
    finetune="none",
    lora_rank=64,
    activations="fused",
    fp32_grads=False,
) -> Estimate:
    """Napkin math for a model on an accelerator (chapter 9, "Napkin math").

    model: a name from `hwlib.models` ("Llama 3 8B"), a ModelShape, or None with `n_params`.
    n_params: parameter count N (overrides the shape's count). tokens: training tokens D (optional;
    without it there is no training time or cost). gpu: spec-sheet name or Accelerator. n_gpus: G
    for training. mfu: u in (0, 1]. price_per_hour: USD per GPU-hour (default: the spec sheet's,
    where it has one). precision: the peak used for time (default bf16, fp16 where the part has no
    bf16). weights_dtype / kv_dtype: storage formats for inference.
    Serving: batch sequences of seq_len tokens of context each, for the KV cache and decoding.
    Training: micro_batch sequences of train_seq_len tokens per GPU step, for the activations;
    attention ("flash" or "standard") and the model's family (dropout for GPT-style shapes with
    biases, none for Llama-style ones) choose the activation count (memory.activation_bytes_for);
    activations="fused" (default) is the fused-kernel count of Megatron-LM, "unfused" adds what an
    eager Hugging Face run also keeps (memory.unfused_activation_bytes).
    Both lengths default to 4096 tokens, or the model's context when shorter, and may not exceed it.
    zero_stage, recompute: see memory.zero_bytes_per_device and memory.activation_bytes.
    fp32_grads: gradients accumulated in fp32 (4 B instead of 2: 18 B of state per parameter, as
    DeepSpeed and Megatron-LM keep them for gradient accumulation); full training only.
    finetune: "none" (train every weight: 16 B of state per parameter, ZeRO-shardable), "lora" or
    "qlora" (frozen bf16 or NF4 weights plus adapters of rank lora_rank on every linear layer:
    hwlib.finetune; no weight gradients, so 4·N·D FLOPs instead of 6·N·D; needs a model shape).
    Time is the model FLOPs at the MFU (recomputation lowers the MFU; it adds no model FLOPs).
    "Fits" and "GPUs needed" leave memory.HEADROOM and a CUDA context free (memory.fits,
    memory.devices_needed). serve_gpus: GPUs for serving (default: the fewest that hold weights + KV
    cache that way); decoding on several assumes an ideal split with no communication.
    n_layers, n_kv_heads, head_dim: KV-cache shape when no ModelShape is given (Exercise 9.1).
    Returns an Estimate; `print(est)` shows every quantity with its formula.

    Each section is its own function, in this order: `_inputs` (checks and defaults), `_model_size`,
    `_training_memory`, `_serving_memory`, `_time` and `_decode`; each adds its rows with `put`.
    """
    est, c = _inputs(
        model=model,
        n_params=n_params,
        tokens=tokens,
        gpu=gpu,
        n_gpus=n_gpus,
        mfu=mfu,
        price_per_hour=price_per_hour,
        precision=precision,
        weights_dtype=weights_dtype,
        kv_dtype=kv_dtype,
        seq_len=seq_len,
        batch=batch,
        zero_stage=zero_stage,
        recompute=recompute,
        scaling_efficiency=scaling_efficiency,
        serve_gpus=serve_gpus,
        n_layers=n_layers,
        n_kv_heads=n_kv_heads,
        head_dim=head_dim,
        train_seq_len=train_seq_len,
        micro_batch=micro_batch,
        attention=attention,
        finetune=finetune,
        lora_rank=lora_rank,
        activations=activations,
        fp32_grads=fp32_grads,
    )
    _model_size(est, c)
    _training_memory(est, c)
    _serving_memory(est, c)
    _time(est, c)
    _decode(est, c)
    return est


def _inputs(
    model,
    n_params,
    tokens,
    gpu,
    n_gpus,
    mfu,
    price_per_hour,
    precision,
    weights_dtype,
    kv_dtype,
    seq_len,
    batch,
    zero_stage,
    recompute,
    scaling_efficiency,
    serve_gpus,
    n_layers,
    n_kv_heads,
    head_dim,
    train_seq_len,
    micro_batch,
    attention,
    finetune,
    lora_rank,
    activations,
    fp32_grads,
):
    """Inputs: every argument checked (ValueError naming the field) and defaulted; (Estimate, context)."""
    shape = _shape(model)
    if n_params is None and shape is None:
        raise ValueError(
            "give model= (a name from hwlib.models or a ModelShape) or n_params= (a parameter count); got neither"
        )
    acc = specs.get(gpu) if isinstance(gpu, str) else gpu
    prec = precision_of(acc, precision)
    g = _at_most("n_gpus", _check.integer("n_gpus", n_gpus), MAX_GPUS, "GPUs")
    u = _check.fraction("mfu", mfu)
    s_len = context("seq_len", seq_len, shape)
    s_train = context("train_seq_len", train_seq_len, shape)
    b = _at_most("batch", _check.integer("batch", batch), MAX_BATCH, "sequences")
    mb = _at_most("micro_batch", _check.integer("micro_batch", micro_batch), MAX_BATCH, "sequences")
    attn = _check.choice("attention", attention, memory.ATTENTION)
    acts = _check.choice("activations", activations, ACTIVATIONS)
    memory.bytes_per_value(kv_dtype)  # ValueError naming the accepted formats
    tune = _check.choice("finetune", finetune, ("none",) + tuple(m for m in ft.METHODS if m != "full"))
    if tune != "none" and shape is None:
        raise ValueError(f"finetune={tune!r} needs a model shape (model=...), for the adapter matrices; got none")
    if not isinstance(fp32_grads, bool):
        raise ValueError(f"fp32_grads must be True or False; got {fp32_grads!r}")
    if tune != "none" and fp32_grads:
        raise ValueError(
            f"fp32_grads=True is for training every weight; a {tune} fine-tune keeps its adapters' state "
            "(16 B per adapter parameter): give fp32_grads=False"
        )
    if tune != "none" and zero_stage != 0:
        raise ValueError(
            f"zero_stage={zero_stage!r} shards a full training state; a {tune} fine-tune keeps its frozen "
            "weights on every GPU: give zero_stage=0"
        )
    price = acc.price_per_hour_usd if price_per_hour is None else _check.nonnegative("price_per_hour", price_per_hour)
    kv_shape = (n_layers, n_kv_heads, head_dim)
    if any(v is not None for v in kv_shape) and not all(v is not None for v in kv_shape):
        raise ValueError(
            f"n_layers, n_kv_heads and head_dim go together (the KV-cache shape); got "
            f"n_layers={n_layers!r}, n_kv_heads={n_kv_heads!r}, head_dim={head_dim!r}"
        )
    if serve_gpus is not None:
        g_s = _check.integer("serve_gpus", serve_gpus)
        if g_s > MAX_GPUS:
            raise ValueError(f"serve_gpus={serve_gpus!r} is more than {MAX_GPUS} GPUs; give a count a cluster has")
        if shape is not None and shape.n_heads % g_s:
            raise ValueError(
                f"serve_gpus={serve_gpus!r}: tensor parallelism splits the {shape.n_heads} attention heads of "
                f"{shape.name} evenly; give a divisor of {shape.n_heads}"
            )
    est = Estimate(
        inputs=dict(
            model=getattr(shape, "name", None),
            n_params=n_params,
            tokens=tokens,
            gpu=acc.name,
            n_gpus=g,
            mfu=u,
            price_per_hour=price,
            precision=prec,
            weights_dtype=weights_dtype,
            kv_dtype=kv_dtype,
            seq_len=s_len,
            batch=b,
            train_seq_len=s_train,
            micro_batch=mb,
            attention=attn,
            activations=acts,
            fp32_grads=fp32_grads,
            finetune=tune,
            lora_rank=lora_rank if tune != "none" else None,
            zero_stage=zero_stage,
            recompute=recompute,
            scaling_efficiency=scaling_efficiency,
            serve_gpus=serve_gpus,
        )
    )
    c = dict(
        shape=shape,
        given_n=n_params,
        tokens=tokens,
        acc=acc,
        prec=prec,
        g=g,
        u=u,
        price=price,
        weights_dtype=weights_dtype,
        kv_dtype=kv_dtype,
        s_len=s_len,
        s_train=s_train,
        b=b,
        mb=mb,
        attn=attn,
        acts=acts,
        fp32_grads=fp32_grads,
        tune=tune,
        lora_rank=lora_rank,
        zero_stage=zero_stage,
        recompute=recompute,
        scaling_efficiency=scaling_efficiency,
        serve_gpus=serve_gpus,
        kv_shape=kv_shape,
    )
    return est, c


def _model_size(est, c):
    """Model size: N (or the one given), the active parameters of a mixture, the weights in their
    storage format (a real checkpoint's bytes for the quantised schemes)."""
    shape, n_params, wd = c["shape"], c["given_n"], c["weights_dtype"]
    if n_params is not None:
        n = put(
            est,
            "n_params",
            "parameters N (given)",
            _at_most("n_params", _check.positive("n_params", n_params), MAX_PARAMS, "parameters"),
            "params",
            "argument n_params",
        )
    else:
        n = put(
            est,
            "n_params",
            "parameters N",
            float(shape.n_params()),
            "params",
            "hwlib.models.ModelShape.n_params",
            f"{shape.name}: V={shape.vocab_size}, d={shape.d_model}, L={shape.n_layers}, "
            f"h={shape.n_heads}, h_kv={shape.n_kv_heads}, d_ff={shape.d_ff}"
            + (f", E={shape.n_experts} experts" if shape.n_experts > 1 else ""),
        )
    n_act = n
    if shape is not None and shape.n_experts > 1 and n_params is None:
        n_act = put(
            est,
            "active_params",
            f"active parameters per token (k={shape.top_k} of E={shape.n_experts} experts)",
            float(shape.n_active_params()),
            "params",
            "hwlib.models.ModelShape.n_active_params",
            f"{shape.name}: k={shape.top_k}, E={shape.n_experts}, expert MLP {fmt(shape.expert_params())} params",
        )
    c["n"] = n
    c["n_act"] = n_act
    scheme = memory.quantization_scheme(wd) if shape is not None and n_params is None else None
    if scheme is None:
        c["w"] = put(
            est,
            "weights_bytes",
            f"weights ({wd})",
            memory.weights_bytes(n, wd),
            "bytes",
            "hwlib.memory.weights_bytes",
            f"{fmt(n)} × {memory.bytes_per_value(wd):g} B",
        )
    else:  # a real checkpoint: group scales and zeros, embeddings and head in 16-bit
        n_lin = memory.quantized_params(shape)
        c["w"] = put(
            est,
            "weights_bytes",
            f"weights ({wd} as {memory.quantization_data()['schemes'][scheme]['name']}; "
            "embeddings, head and norms 16-bit)",
            memory.quantized_weights_bytes(shape, scheme),
            "bytes",
            "hwlib.memory.quantized_weights_bytes",
            f"{fmt(n_lin)} × {memory.quantized_bits_per_weight(scheme):.4g} bit / 8 + {fmt(n - n_lin)} × 2 B",
        )


def _training_memory(est, c):
    """Training memory per GPU: the training state (AdamW under ZeRO, or a fine-tune's frozen weights
    and adapters), the activations, the fp32 logits of the loss, their sum and whether it fits."""
    shape, n, g, tune, acc = c["shape"], c["n"], c["g"], c["tune"], c["acc"]
    s_train, mb, attn, recompute = c["s_train"], c["mb"], c["attn"], c["recompute"]
    if tune == "none":
        fp32 = c["fp32_grads"]
        grad = 4 if fp32 else 2
        put(
            est,
            "training_state_bytes",
            "training state (AdamW, mixed precision" + (", fp32 gradients)" if fp32 else ")"),
            memory.training_state_bytes(n, fp32),
            "bytes",
            "hwlib.memory.training_state_bytes",
            f"{16 + grad - 2} × {fmt(n)}",
            variant="fp32_grads" if fp32 else "",
        )
        state = put(
            est,
            "training_state_per_gpu",
            f"training state per GPU (ZeRO stage {c['zero_stage']}, G={g}" + (", fp32 gradients)" if fp32 else ")"),
            memory.zero_bytes_per_device(n, g, c["zero_stage"], gradient_bytes_per_param=grad),
            "bytes",
            "hwlib.memory.zero_bytes_per_device",
            f"N={fmt(n)}, G={g}",
            formula=memory.zero_formula(c["zero_stage"], gradient_bytes_per_param=grad),
        )
    else:
        rank = _check.integer("lora_rank", c["lora_rank"])
        if rank > shape.d_model:
            raise ValueError(
                f"lora_rank={c['lora_rank']!r} is more than d_model ({shape.d_model}) of {shape.name}: a "
                f"low-rank adapter has rank at most the width; give at most {shape.d_model}"
            )
        lora = put(
            est,
            "trainable_params",
            f"trainable adapter parameters (rank {rank}, every linear layer)",
            float(ft.lora_params(shape, rank)),
            "params",
            "hwlib.finetune.lora_params",
            f"r={rank}, L={shape.n_layers}" + (f", E={shape.n_experts} experts" if shape.n_experts > 1 else ""),
        )
        parts = ft.model_finetune_bytes(shape, tune, rank, s_train, mb, recompute=recompute, attention=attn)
        c["finetune_parts"] = parts
        frozen = put(
            est,
            "finetune_weights_bytes",
            f"frozen weights ({'NF4, double quantization' if tune == 'qlora' else 'bf16'})",
            parts["weights"],
            "bytes",
            "hwlib.finetune.model_finetune_bytes",
            f"N={fmt(n)}",
            variant="weights." + tune,
        )
        adapters = put(
            est,
            "adapter_bytes",
            "adapters + their gradients and AdamW state",
            parts["adapters"],
            "bytes",
            "hwlib.finetune.model_finetune_bytes",
            f"N_lora={fmt(lora)}",
            variant="adapters",
        )
        state = frozen + adapters
    if shape is None:
        est.missing["activation_bytes"] = "a model shape (model=...), for hidden size, layers and heads"
        return
    act = _activations(est, c)
    z = put(
        est,
        "logits_bytes",
        f"logits for the loss (fp32, {mb} × {s_train} tokens × V = {shape.vocab_size})",
        memory.logits_bytes(s_train, mb, shape.vocab_size),
        "bytes",
        "hwlib.memory.logits_bytes",
        f"{s_train} × {mb} × {shape.vocab_size} × 4 B",
    )
    total = put(
        est,
        "training_bytes_per_gpu",
        "training memory per GPU" + ("" if tune == "none" else f" ({tune} fine-tune)"),
        memory.training_bytes_per_device(state, act, z),
        "bytes",
        "hwlib.memory.training_bytes_per_device",
        f"{units.format_bytes(state)} + {units.format_bytes(act)} + {units.format_bytes(z)}",
        variant="logits",
    )
    put(
        est,
        "fits_training",
        f"training fits one {acc.name}",
        memory.fits(total, acc.visible_memory_bytes()),
        "",
        "hwlib.memory.fits",
        _fit_text(acc),
    )


def _activations(est, c):
    """The activation row of `_training_memory`: the fused-kernel count, or with activations="unfused"
    what an eager run keeps (memory.unfused_activation_bytes, which adds nothing under full recompute)."""
    shape, s_train, mb, attn, tune = c["shape"], c["s_train"], c["mb"], c["attn"], c["tune"]
    mode = _check.choice("recompute", c["recompute"], memory.RECOMPUTE)
    dropout = bool(shape.bias)
    variant = ("dropout" if dropout else "no dropout") + (", FlashAttention" if attn == "flash" else ", scores stored")
    numbers = f"s={s_train}, b={mb}, h={shape.d_model}, L={shape.n_layers}, a={shape.n_heads}"
    note = FUSED_NOTE if c["acts"] == "fused" else "fused-kernel count"
    if tune != "none" and mode == "full":  # hwlib.finetune's count: + the layer being recomputed
        act = put(
            est,
            "activation_bytes",
            f"activations ({variant}, recompute=full, + the layer being recomputed; {note})",
            c["finetune_parts"]["activations"],
            "bytes",
            "hwlib.finetune.model_finetune_bytes",
            numbers,
            variant="activations",
        )
    else:
        act = put(
            est,
            "activation_bytes",
            f"activations ({variant}, recompute={mode}; {note})",
            memory.activation_bytes_for(shape, s_train, mb, recompute=mode, attention=attn),
            "bytes",
            "hwlib.memory.activation_bytes_for",
            numbers + ", " + (f"f={shape.top_k} × {shape.d_ff}" if shape.top_k > 1 else f"f={shape.d_ff}"),
            formula=memory.activation_formula(
                mode, dropout, attn, gated_mlp=bool(shape.gated_mlp), ffn_hidden=shape.top_k * shape.d_ff
            ),
        )
    if c["acts"] == "fused":
        return act
    return put(
        est,
        "activation_bytes_unfused",
        f"activations kept by an unfused run (recompute={mode}; {UNFUSED_NOTE})",
        memory.unfused_activation_bytes(act, s_train, mb, shape.d_model, shape.n_layers, recompute=mode),
        "bytes",
        "hwlib.memory.unfused_activation_bytes",
        f"{units.format_bytes(act)} + 8 × {s_train} × {mb} × {shape.d_model} × {shape.n_layers} B"
        if mode != "full"
        else units.format_bytes(act),
        variant="full" if mode == "full" else "",
    )


def _serving_memory(est, c):
    """Serving memory: the KV cache of `batch` sequences, weights + KV, the GPUs that hold it (a
    tensor-parallel degree the heads allow), the KV copies that degree keeps and whether it fits."""
    shape, acc, w, b, s_len, kv_dtype = c["shape"], c["acc"], c["w"], c["b"], c["s_len"], c["kv_dtype"]
    kv_shape, serve_gpus = c["kv_shape"], c["serve_gpus"]
    fit_text = _fit_text(acc)
    kv = 0.0
    if shape is not None and kv_shape[0] is None:  # the shape counts its own layers: windows, MLA latent
        kv = put(
            est,
            "kv_cache_bytes",
            f"KV cache ({kv_dtype}, {b} × {s_len} tokens" + _kv_kind(shape) + ")",
            shape.kv_cache_bytes(s_len, b, kv_dtype),
            "bytes",
            "hwlib.models.ModelShape.kv_cache_bytes",
            shape.kv_numbers(s_len, b, kv_dtype),
            formula=shape.kv_formula(),
        )
    elif kv_shape[0] is not None:
        kv = put(
            est,
            "kv_cache_bytes",
            f"KV cache ({kv_dtype}, {b} × {s_len} tokens)",
            memory.kv_cache_bytes(kv_shape[0], kv_shape[1], kv_shape[2], s_len, b, kv_dtype),
            "bytes",
            "hwlib.memory.kv_cache_bytes",
            f"2 × {kv_shape[0]} × {kv_shape[1]} × {kv_shape[2]} × {s_len} × {b} × "
            f"{memory.bytes_per_value(kv_dtype):g} B",
        )
    else:
        est.missing["kv_cache_bytes"] = "a model shape or n_layers, n_kv_heads and head_dim"
    m_inf = put(
        est,
        "inference_bytes",
        "inference memory (weights + KV)",
        memory.serving_bytes(w, kv),
        "bytes",
        "hwlib.memory.serving_bytes",
        f"{units.format_bytes(w)} + {units.format_bytes(kv)}",
    )
    cap = acc.visible_memory_bytes()
    need = memory.devices_needed(m_inf, cap)
    kv_heads = None if shape is None else 1 if shape.mla else shape.n_kv_heads
    tp = 0 if shape is None else memory.tensor_parallel_devices(w, kv, cap, shape.n_heads, kv_heads)
    if shape is not None and tp:
        put(
            est,
            "gpus_to_serve",
            f"{acc.name} GPUs to serve it (tensor parallel: a divisor of the {shape.n_heads} heads)",
            tp,
            "",
            "hwlib.memory.tensor_parallel_devices",
            f"W = {units.format_bytes(w)}, KV = {units.format_bytes(kv)}, h = {shape.n_heads}, "
            f"h_kv = {kv_heads}; {fit_text}",
        )
        if tp > need:
            est.warnings.append(
                f"{need} × {acc.name} hold the weights and KV cache, but tensor parallelism splits the "
                f"{shape.n_heads} attention heads evenly: {tp} GPUs serve it"
            )
    else:
        put(
            est,
            "gpus_to_serve",
            f"{acc.name} GPUs needed to hold it",
            need,
            "",
            "hwlib.memory.devices_needed",
            f"M = {units.format_bytes(m_inf)}; {fit_text}",
        )
        if shape is not None:
            est.warnings.append(
                f"no tensor-parallel degree that divides the {shape.n_heads} heads holds it on {acc.name}s: "
                f"{need} GPUs is a memory count only (a pipeline across nodes is not modelled)"
            )
    g_s = (tp or need) if serve_gpus is None else serve_gpus
    kv_copies = 1.0 if shape is None else memory.kv_replication(g_s, kv_heads)
    if kv_copies > 1:
        put(
            est,
            "kv_replication",
            f"KV-cache copies on {g_s} GPUs ({kv_heads} KV head{'s' if kv_heads > 1 else ''} each held by "
            f"{kv_copies:g} GPUs)",
            kv_copies,
            "",
            "hwlib.memory.kv_replication",
            f"t = {g_s}, h_kv = {kv_heads}",
        )
    if serve_gpus is not None:
        put(
            est,
            "fits_serving",
            f"weights + KV cache fit {g_s} × {acc.name}",
            memory.fits((w + kv_copies * kv) / g_s, cap),
            "",
            "hwlib.memory.fits",
            f"M = ({units.format_bytes(w)} + {kv_copies:g} × {units.format_bytes(kv)}) / {g_s} GPUs; {fit_text}",
        )
    c["kv"] = kv
    c["g_s"] = g_s
    c["kv_copies"] = kv_copies


def _time(est, c):
    """Compute, time and cost: the peak, forward FLOPs per token, training (or fine-tuning) FLOPs, the
    attention FLOPs published MFUs count, and the time, throughput, GPU-hours and cost at the MFU."""
    shape, acc, prec, n, n_act, tokens = c["shape"], c["acc"], c["prec"], c["n"], c["n_act"], c["tokens"]
    g, u, eta, price, tune, s_train = c["g"], c["u"], c["scaling_efficiency"], c["price"], c["tune"], c["s_train"]
    active = " (N = active parameters)" if n_act != n else ""
    peak = put(
        est,
        "peak_flops",
        f"peak per GPU ({prec}, dense)",
        acc.peak_flops(prec),
        "FLOP/s",
        "hwlib.specs.Accelerator.peak_flops",
        acc.name,
    )
    c["peak"] = peak
    if shape is not None and c["given_n"] is None:
        lookup = float(shape.lookup_params())
        put(
            est,
            "forward_flops_per_token",
            "forward FLOPs per token (multiplied weights: the input-embedding lookup left out)" + active,
            flops.forward_flops_shaped(n_act, lookup, 1),
            "FLOP",
            "hwlib.flops.forward_flops_shaped",
            f"2 × ({fmt(n_act)} − {fmt(lookup)})" + (" (active parameters)" if n_act != n else ""),
            variant="per_token",
        )
    else:
        put(
            est,
            "forward_flops_per_token",
            "forward FLOPs per token (2N: every parameter multiplied)" + active,
            flops.forward_flops(n_act, 1),
            "FLOP",
            "hwlib.flops.forward_flops",
            f"2 × {fmt(n_act)}" + (" (active parameters)" if n_act != n else ""),
            variant="per_token",
        )
    if tokens is None:
        for key in ("training_flops", "training_time_s", "cost_usd"):
            est.missing[key] = "tokens= (the number of training tokens D)"
        return
    d = _at_most("tokens", _check.positive("tokens", tokens), MAX_TOKENS, "tokens")
    if tune == "none":
        cost = put(
            est,
            "training_flops",
            "training compute" + active,
            flops.training_flops(n_act, d),
            "FLOP",
            "hwlib.flops.training_flops",
            f"6 × {fmt(n_act)} × {fmt(d)}" + (" (active parameters)" if n_act != n else ""),
        )
    else:
        cost = put(
            est,
            "training_flops",
            f"fine-tuning compute ({tune}: no weight gradients for frozen weights)",
            ft.finetune_flops(n_act, d, tune, recompute=False),
            "FLOP",
            "hwlib.finetune.finetune_flops",
            f"4 × {fmt(n_act)} × {fmt(d)}" + (" (active parameters)" if n_act != n else ""),
            variant="adapters",
        )
    if shape is not None:  # attention's QKᵀ and AV over the training context: published MFUs count them
        f_attn = shape.attention_flops_per_token(s_train)
        c_att = put(
            est,
            "attention_flops",
            f"attention FLOPs (QKᵀ and AV over s = {s_train} tokens)",
            flops.attention_training_flops(f_attn, d),
            "FLOP",
            "hwlib.flops.attention_training_flops",
            f"3 × {fmt(f_attn)} × {fmt(d)}  (F_attn: {models.FORMULAS['ModelShape.attention_flops_per_token']})",
        )
        put(
            est,
            "model_flops",
            "model FLOPs (weights + attention: what published MFUs count)",
            flops.model_flops(cost, c_att),
            "FLOP",
            "hwlib.flops.model_flops",
            f"{fmt(cost)} + {fmt(c_att)}",
        )
        if c_att > 0.1 * cost:
            est.warnings.append(
                f"attention adds {units.format_pct(c_att / cost)} to the weights' FLOPs at {s_train} tokens "
                "of context; the published MFUs count it, so the time below, from the weights' FLOPs "
                "at such an MFU, is that much too short (model_flops has both)"
            )
    t = put(
        est,
        "training_time_s",
        f"training time on {g} × {acc.name}",
        flops.training_time_s(cost, peak, u, g, eta),
        "s",
        "hwlib.flops.training_time_s",
        f"{fmt(cost)} / ({u:g} × {fmt(peak)} × {g} × {fmt(eta)})",
    )
    put(
        est,
        "training_tokens_per_s",
        "training throughput",
        flops.tokens_per_s(d, t),
        "tokens/s",
        "hwlib.flops.tokens_per_s",
        f"{fmt(d)} / {fmt(t)} s",
    )
    put(
        est,
        "gpu_hours",
        "GPU-hours",
        flops.device_hours(t, g),
        "GPU-h",
        "hwlib.flops.device_hours",
        f"{g} × {fmt(t)} s / 3600",
    )
    if price is None:
        est.missing["cost_usd"] = f"price_per_hour= (the spec sheet has no price for {acc.name})"
        return
    put(
        est,
        "cost_usd",
        "training cost",
        flops.cost_usd(t, price, g),
        "USD",
        "hwlib.flops.cost_usd",
        f"{g} × {fmt(t)} s / 3600 × {price:g} USD/h",
    )


def _decode(est, c):
    """Decoding on the serving GPUs, a roofline of one step: the weights read (routed experts, B rows
    of an untied embedding), the ridge point, the step's intensity and bound, its time, the tokens/s
    and the serving cost per million tokens."""
    shape, acc, prec, n, n_act, b, w = c["shape"], c["acc"], c["prec"], c["n"], c["n_act"], c["b"], c["w"]
    peak, g_s, price = c["peak"], c["g_s"], c["price"]
    step_flops = flops.forward_flops(n_act, b)
    w_read = w
    if shape is not None and c["given_n"] is None:  # routed experts only; B rows of an untied embedding
        w_read = put(
            est,
            "weights_read_per_step",
            f"weights read per decode step (batch {b}"
            + (", uniform routing" if shape.n_experts > 1 else "")
            + (", B rows of the input embedding" if not shape.tied_embeddings else "")
            + ")",
            memory.weights_read_bytes(shape, b, c["weights_dtype"]),
            "bytes",
            "hwlib.memory.weights_read_bytes",
            (
                f"E={shape.n_experts}, k={shape.top_k}, B={b}, N_expert={fmt(shape.expert_params())}, "
                if n_act != n
                else ""
            )
            + f"W = {units.format_bytes(w)}, V={shape.vocab_size}, d={shape.d_model}, B={b}",
        )
    step_bytes = w_read + c["kv_copies"] * c["kv"]  # each GPU reads its share of the weights and its KV copies
    put(
        est,
        "ridge_point",
        f"ridge point of {acc.name} ({prec})",
        roofline.ridge_point(peak, acc.bandwidth),
        "FLOP/byte",
        "hwlib.roofline.ridge_point",
        f"{fmt(peak)} / {fmt(acc.bandwidth)}",
    )
    i_dec = put(
        est,
        "decode_intensity",
        f"decode intensity (batch {b})",
        roofline.intensity(step_flops, step_bytes),
        "FLOP/byte",
        "hwlib.roofline.intensity",
        f"F = {fmt(step_flops)} FLOP (batch {b}), Q = {fmt(step_bytes)} bytes of weights read and KV cache",
    )
    put(
        est,
        "decode_bound",
        "decode is",
        roofline.bound(i_dec, peak, acc.bandwidth) + "-bound",
        "",
        "hwlib.roofline.bound",
    )
    split = " (ideal split: no communication counted)" if g_s > 1 else ""
    step = put(
        est,
        "decode_step_s",
        f"time per decode step on {g_s} GPU(s){split}",
        roofline.time_s(step_flops, step_bytes, peak * g_s, acc.bandwidth * g_s),
        "s",
        "hwlib.roofline.time_s",
        f"F = {fmt(step_flops)} FLOP, Q = {fmt(step_bytes)} bytes, π and β of {g_s} GPU(s) "
        "(weights and KV split evenly, no communication)",
    )
    tps = put(
        est,
        "decode_tokens_per_s",
        f"decode throughput (batch {b})",
        flops.tokens_per_s(b, step),
        "tokens/s",
        "hwlib.flops.tokens_per_s",
        f"{b} / {fmt(step)} s",
    )
    if price is not None:
        put(
            est,
            "usd_per_million_tokens",
            "serving cost per million tokens",
            flops.usd_per_million_tokens(tps, price, g_s),
            "USD",
            "hwlib.flops.usd_per_million_tokens",
            f"G = {g_s}, p = {price:g} USD/h, r = {fmt(tps)} tokens/s",
        )
