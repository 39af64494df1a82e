"""How many bytes a model needs: weights, training state, KV cache, activations, ZeRO shards.

Every function returns bytes (a float, or a NumPy array when given arrays). GB = 1e9 B and
GiB = 2**30 B are different; format with `hwlib.units` only when printing.

Sources: chapters 8 and 9 of the book (16 B/param, KV cache; memory for training and inference),
Korthikanti et al. 2022 "Reducing Activation
Recomputation in Large Transformer Models" (Table 2, §4.1), Dao et al. 2022 "FlashAttention",
Rajbhandari et al. 2020 "ZeRO" (§5, Fig. 1). Device capacities (`Accelerator.memory_bytes`) are
binary; `usable_bytes`, `fits` and `devices_needed` leave headroom and the CUDA context free.
"""

from __future__ import annotations

import functools
import math
from pathlib import Path

from . import _check, dtypes, models

BYTES_PER_VALUE = dtypes.STORAGE_BYTES
"""Storage bytes per value by dtype name: `hwlib.dtypes.STORAGE_BYTES`, the one table."""
RECOMPUTE = ("none", "selective", "full")
FORMULAS = {
    "weights_bytes": "W = N·b",
    "quantized_bits_per_weight": "b_q = b + (s + z)/g + s₂/(g·g₂)",
    "weights_read_bytes": "W_read = W − (N − N_read)·b_lin − (V − min(B, V))·d·b_emb  (B rows of an untied embedding)",
    "quantized_weights_bytes": "W_q = N_lin·b_q/8 + (N − N_lin)·2 B  (embeddings, head, norms in 16-bit)",
    "training_state_bytes": "S = (2 + 2 + 4 + 8)·N = 16·N",
    "training_state_bytes.fp32_grads": "S = (2 + 4 + 4 + 8)·N = 18·N",
    "kv_cache_bytes": "KV = 2·L·h_kv·d_head·s·B·b",
    "inference_bytes": "M = N·b + KV",
    "serving_bytes": "M = W + KV",
    "fits": "M·(1 + f) + C_ctx ≤ GPU memory",
    "kv_replication": "r = max(1, t / h_kv)  (MLA: r = t, one latent per token)",
    "tensor_parallel_devices": "t = min{t ≥ 1 : h mod t = 0, (W + r(t)·KV)·(1 + f) ≤ t·(GPU memory − C_ctx)}",
    "devices_needed": "⌈M·(1 + f) / (GPU memory − C_ctx)⌉",
    "sequences_that_fit": "B_max = ⌊(usable(M_GPU) − W) / M_KV(s)⌋",
    "max_batch": "B_max = ⌊(usable(M_GPU) − N·b_w) / M_KV(s)⌋",
    "training_bytes_per_device": "M = state per GPU + activations",
    "training_bytes_per_device.logits": "M = state per GPU + activations + logits",
    "logits_bytes": "Z = s·b·V·4 B  (fp32 logits for the loss)",
    "unfused_activation_bytes": "A_unfused = A + 8·s·b·h·L  (fp32 norm inputs, second copy of each projection input)",
    "unfused_activation_bytes.full": "A_unfused = A  (full recompute keeps only the layer inputs)",
}
"""The formula each function of this module evaluates, as the calculators print it (one copy: the
calculator, the command line and the page read it from here; `activation_formula` and
`zero_formula` give the ones that depend on their arguments)."""
ATTENTION = ("standard", "flash")
"""How attention keeps its state for backward: "standard" stores the a·s² softmax scores (and, with
dropout, its mask and output); "flash" (FlashAttention, Dao et al. 2022) recomputes them from Q, K, V
and keeps only a 4-byte log-sum-exp per head and token."""

CUDA_CONTEXT_BYTES = 512 * 2**20
"""Device memory a CUDA process holds before its first tensor (context, kernel images, cuBLAS
workspace): about 0.5 GiB, taken as 512 MiB. A PyTorch process shows 723 MiB after one 4-byte
tensor (PyTorch forum, "What is the reason for pytorch's GPU memory floor?", 2020); an H100 80GB
reports 81,559 MiB of its 81,920 MiB before any process. Order of magnitude, not a measurement."""

HEADROOM = 0.10
"""Fraction of the GPU kept free for temporary buffers and allocator fragmentation: the lower end of
the 10–20 % that chapter 9 budgets (Transformer Math 101, EleutherAI 2023, uses about 20 %)."""


def dtype_name(dtype) -> str:
    """Canonical dtype name ("BF16", "bfloat16" -> "bf16"); unknown -> ValueError listing the accepted."""
    return dtypes.name(dtype, "dtype")


def bytes_per_value(dtype) -> float:
    """Bytes one value occupies in memory: fp32 4, bf16/fp16 2, fp8/int8 1, int4/fp4 0.5.

    Source: chapter 5; chapter 9.
    """
    return dtypes.bytes_per_value(dtype, "dtype")


def element_bytes(name: str, value):
    """Bytes per element given either a dtype name ("bf16") or a positive number of bytes."""
    if isinstance(value, str):
        return bytes_per_value(value)
    return _check.positive(name, value)


def weights_bytes(n_params, dtype="bf16"):
    """Weights alone: W = N × b  [bytes], b = bytes_per_value(dtype).

    7B in bf16: 7e9 × 2 = 14 GB; int4 quarters that. Source: chapter 9 "Memory for inference".
    """
    n = _check.positive("n_params", n_params)
    return n * bytes_per_value(dtype)


QUANTIZATION_PATH = Path(__file__).with_name("data") / "quantization.yaml"


@functools.cache
def quantization_data() -> dict:
    """hwlib/data/quantization.yaml: schemes (bits, group, scale and zero bits, source), the scheme each
    sub-16-bit format stands for, and published checkpoint sizes."""
    import yaml

    return yaml.safe_load(QUANTIZATION_PATH.read_text(encoding="utf-8"))


def quantization_scheme(name) -> str | None:
    """The scheme key for a scheme ("awq-w4-g128") or a calculator format that stands for one ("int4"
    -> "awq-w4-g128"); None for a 16-bit or wider format, which stores every weight alike."""
    data = quantization_data()
    if name in data["schemes"]:
        return name
    key = dtypes.name(name, "dtype")
    if key in data["formats"]:
        return data["formats"][key]
    return None


def quantized_bits_per_weight(scheme) -> float:
    """Stored bits per quantized weight: b_q = b + (s + z)/g + s₂/(g·g₂), with b bits per weight, a scale
    of s and a zero point of z bits per group of g weights, and (double quantization) a second-level
    scale of s₂ bits per g₂ groups. AWQ/GPTQ w4 g128: 4 + 20/128 = 4.156; NF4 with double
    quantization: 4 + 8/64 + 32/(64·256) = 4.127 (Dettmers et al. 2023 §3); NVFP4: 4 + 8/16 = 4.5."""
    data = quantization_data()
    if scheme not in data["schemes"] and scheme not in data["formats"]:
        raise ValueError(
            f"scheme must be one of {', '.join(data['schemes'])} or a format that stands for one "
            f"({', '.join(data['formats'])}); got {scheme!r}"
        )
    s = data["schemes"][quantization_scheme(scheme)]
    bits = float(s["bits"])
    if s["group"]:
        bits += (s["scale_bits"] + s["zero_bits"]) / s["group"]
        if s.get("group2"):
            bits += s["scale2_bits"] / (s["group"] * s["group2"])
    return bits


def model_shape(model):
    """A `hwlib.models.ModelShape`, or its name looked up in hwlib.models; anything else: ValueError."""
    if isinstance(model, str):
        return models.get(model)
    if not isinstance(model, models.ModelShape):
        raise ValueError(f"model must be a hwlib.models.ModelShape or a model name; got {model!r}")
    return model


def quantized_params(model) -> float:
    """N_lin: the weights a quantization scheme stores in its format, the linear layers of the blocks
    (attention and MLP experts): N minus the token embedding, output head, learned positions, norms
    and MoE routers, which checkpoints keep in 16-bit. `model`: a ModelShape or its name."""
    model = model_shape(model)
    routers = model.n_moe_layers() * model.router_params()
    return float(model.n_params() - model.embedding_params() - model.norm_params() - routers)


def quantized_weights_bytes(model, scheme="awq-w4-g128"):
    """Weights as a quantized checkpoint stores them: W_q = N_lin·b_q/8 + (N − N_lin)·2  [bytes], the
    linear layers at `quantized_bits_per_weight(scheme)` and the rest (embeddings, head, norms,
    routers) in 16-bit. Llama 3 8B in AWQ w4 g128: 5.73 GB, not the 4.02 GB of 0.5 B per parameter.
    Checked against published checkpoint sizes (hwlib/data/quantization.yaml)."""
    model = model_shape(model)
    n_lin = quantized_params(model)
    return n_lin * quantized_bits_per_weight(scheme) / 8.0 + (model.n_params() - n_lin) * 2.0


def gguf_bytes(n_params, quant="Q4_K_M"):
    """A GGUF (llama.cpp) file of `quant`: W = N·bpw/8  [bytes], bpw the average bits per weight of the
    whole file as llama.cpp measured it for Llama 3.1 8B (hwlib/data/quantization.yaml, `gguf`;
    Q4_K_M 4.89, Q8_0 8.50). k-quant mixtures differ a little from model to model, so this is the
    published average, not a per-tensor count."""
    types = quantization_data()["gguf"]["types"]
    if quant not in types:
        raise ValueError(f"quant must be one of the GGUF types {', '.join(types)}; got {quant!r}")
    return _check.positive("n_params", n_params) * types[quant]["bpw"] / 8.0


def stored_weights_bytes(model, dtype="bf16"):
    """Weights of a shape as stored in `dtype`: a sub-16-bit format as the checkpoint scheme it stands for
    (`quantization_scheme`: int4 -> AWQ w4 g128, with 16-bit embeddings and head), else N·b  [bytes]."""
    model = model_shape(model)
    scheme = quantization_scheme(dtype)
    if scheme is None:
        return weights_bytes(model.n_params(), dtype)
    return quantized_weights_bytes(model, scheme)


def weights_read_bytes(model, batch=1, dtype="bf16"):
    """Weight bytes one decoding step of B tokens reads: the stored weights W (`stored_weights_bytes`)
    less the experts no token of the batch is routed to, (N − N_read)·b_lin
    (`ModelShape.params_read_per_step`), and less the rows of an untied input embedding it does not
    look up, (V − min(B, V))·d·b_emb (`ModelShape.unread_embedding_params`). b_lin and b_emb are the
    stored bytes of a linear-layer and an embedding weight (16-bit embeddings in a quantized scheme)."""
    model = model_shape(model)
    scheme = quantization_scheme(dtype)
    b_lin = bytes_per_value(dtype) if scheme is None else quantized_bits_per_weight(scheme) / 8.0
    b_emb = bytes_per_value(dtype) if scheme is None else 2.0
    unread_experts = model.n_params() - model.params_read_per_step(batch)
    return stored_weights_bytes(model, dtype) - unread_experts * b_lin - model.unread_embedding_params(batch) * b_emb


def training_state_breakdown(n_params, fp32_grads=False) -> dict:
    """Mixed-precision AdamW state per parameter, in bytes: bf16 weights 2, bf16 gradients 2,
    fp32 master weights 4, Adam's two fp32 moments 8 (16 in total). With fp32_grads the gradients
    are accumulated in fp32, 4 B (18 in total), as DeepSpeed and Megatron-LM do for gradient
    accumulation and as Rajbhandari et al. 2020 (ZeRO) count K = 12 + fp32 copies.

    Source: chapter 9 "Memory for training"; Micikevicius et al. 2018.
    Activations, buffers and fragmentation come on top.
    """
    n = _check.positive("n_params", n_params)
    if not isinstance(fp32_grads, bool):
        raise ValueError(f"fp32_grads must be True or False; got {fp32_grads!r}")
    grad = 4.0 if fp32_grads else 2.0
    return {"weights": 2.0 * n, "gradients": grad * n, "master": 4.0 * n, "adam": 8.0 * n}


def training_state_bytes(n_params, fp32_grads=False):
    """Model + gradient + optimizer state for mixed-precision AdamW: S = 16 N  [bytes], or S = 18 N
    with fp32 gradients (fp32_grads=True).

    7B -> 112 GB (does not fit one 80 GiB = 85.9 GB GPU); 126 GB with fp32 gradients. Source: chapter 9.
    """
    parts = training_state_breakdown(n_params, fp32_grads)
    return parts["weights"] + parts["gradients"] + parts["master"] + parts["adam"]


def kv_cache_bytes(n_layers, n_kv_heads, head_dim, seq_len, batch=1, dtype="bf16"):
    """Key-value cache: KV = 2 × L × h_kv × d_head × s × B × b  [bytes] (2 = one K and one V).

    Uses the number of KV heads, so grouped-query attention (h_kv < h) shrinks it by h / h_kv.
    32 layers × 32 heads × 64 dims at 4,096 tokens in bf16: 1.07e9 B (= 1 GiB) per sequence.
    Source: chapter 9 "Memory for inference"; Exercise 9.1; Ainslie et al. 2023.
    """
    layers = _check.integer("n_layers", n_layers)
    heads = _check.integer("n_kv_heads", n_kv_heads)
    dim = _check.integer("head_dim", head_dim)
    s = _check.positive("seq_len", seq_len)
    b = _check.positive("batch", batch)
    return 2.0 * layers * heads * dim * s * b * bytes_per_value(dtype)


def kv_cache_bytes_for(model, seq_len, batch=1, dtype="bf16"):
    """kv_cache_bytes for a named shape: a `hwlib.models` shape (or its name, e.g. "llama-3-8b").

    A ModelShape counts its own layers (`ModelShape.kv_cache_bytes`): min(s, W) positions in each
    sliding-window layer (Mistral 7B: all; Gemma 2: half), s in the others, and the 512 + 64 latent
    of multi-head latent attention (DeepSeek-V3). Any other object must provide n_layers, n_kv_heads
    and head_dim: KV = 2·L·h_kv·d_head·s·B·b.
    """
    if isinstance(model, str):
        model = models.get(model)
    if hasattr(model, "kv_cache_bytes"):
        return model.kv_cache_bytes(seq_len, batch, dtype)
    missing = [a for a in ("n_layers", "n_kv_heads", "head_dim") if not hasattr(model, a)]
    if missing:
        raise ValueError(f"model must have n_layers, n_kv_heads and head_dim; {model!r} lacks {missing}")
    return kv_cache_bytes(model.n_layers, model.n_kv_heads, model.head_dim, seq_len, batch, dtype)


def inference_bytes(n_params, dtype="bf16", kv_bytes=0.0):
    """Serving memory: weights + KV cache, M = N × b + KV  [bytes]; no gradients, no optimizer.

    Budget 10–20 % on top for buffers and fragmentation (chapter 9); Transformer Math 101
    suggests ≈ 1.2 × the weights. Source: chapter 9 "Memory for inference".
    """
    kv = _check.nonnegative("kv_bytes", kv_bytes)
    return weights_bytes(n_params, dtype) + kv


def serving_bytes(weights_bytes, kv_bytes=0.0):
    """Serving memory from stored weights: M = W + KV  [bytes] (W from `stored_weights_bytes` for a
    quantized checkpoint, where `inference_bytes`' N × b would undercount the 16-bit embeddings)."""
    return _check.positive("weights_bytes", weights_bytes) + _check.nonnegative("kv_bytes", kv_bytes)


def usable_bytes(capacity_bytes, headroom=HEADROOM, context_bytes=CUDA_CONTEXT_BYTES):
    """What a budget may fill on one device: M_use = (M_GPU − C_ctx) / (1 + f)  [bytes], so that
    the budget, f of it again as headroom, and the CUDA context together fit in M_GPU.

    H100 SXM (80 GiB), f = 0.10, C_ctx = 512 MiB: (85.9e9 − 0.54e9) / 1.1 = 77.6e9 B (72.3 GiB).
    `capacity_bytes` is `Accelerator.memory_bytes` (binary: the capacity the part has).
    Sources: chapter 9 (10–20 % headroom); `CUDA_CONTEXT_BYTES`.
    """
    cap = _check.positive("capacity_bytes", capacity_bytes)
    f = _check.nonnegative("headroom", headroom)
    ctx = _check.nonnegative("context_bytes", context_bytes)
    return max((cap - ctx) / (1.0 + f), 0.0)


def fits(need_bytes, capacity_bytes, headroom=HEADROOM, context_bytes=CUDA_CONTEXT_BYTES) -> bool:
    """True when need·(1 + f) + C_ctx ≤ M_GPU: the bytes fit with the headroom and the CUDA context
    left free (see `usable_bytes`)."""
    need = _check.nonnegative("need_bytes", need_bytes)
    return bool(need <= usable_bytes(capacity_bytes, headroom, context_bytes))


def sequences_that_fit(
    weights_bytes, kv_bytes_per_sequence, capacity_bytes, headroom=HEADROOM, context_bytes=CUDA_CONTEXT_BYTES
) -> int:
    """How many sequences fit on one device, the book's one convention: B_max = ⌊(usable(M_GPU) − W) /
    M_KV(s)⌋, the KV caches of s-token sequences in what `usable_bytes` leaves (the headroom and the
    CUDA context set aside) after the weights W; 0 when the weights do not fit. Pass the memory the
    device reports (Accelerator.visible_memory_bytes, ECC on for T4/L4). Activations of a decode step
    are small next to the KV cache and come out of the headroom."""
    w = _check.nonnegative("weights_bytes", weights_bytes)
    kv = _check.positive("kv_bytes_per_sequence", kv_bytes_per_sequence)
    free = usable_bytes(capacity_bytes, headroom, context_bytes) - w
    return max(0, int(free // kv))


def max_batch(model, seq_len, capacity_bytes, weights_dtype="bf16", kv_dtype="bf16") -> int:
    """The largest decode batch of `seq_len`-token sequences one device holds for a named shape:
    B_max = ⌊(usable(M_GPU) − N·b_w) / M_KV(s)⌋ (`sequences_that_fit` of `weights_bytes` and
    `kv_cache_bytes_for`), 0 when the weights do not fit. `model`: a `hwlib.models` shape or its name;
    `capacity_bytes`: the memory the device reports (`Accelerator.visible_memory_bytes`).

    Llama 3 8B, bf16 weights and cache, 8,192 tokens, H100 SXM: ⌊(77.6e9 − 16.1e9) / 1.07e9⌋ = 57.
    Source: chapter 8 (the batch the KV cache allows) and chapter 9 (headroom, CUDA context)."""
    if isinstance(model, str):
        model = models.get(model)
    weights = weights_bytes(model.n_params(), weights_dtype)
    return sequences_that_fit(weights, kv_cache_bytes_for(model, seq_len, dtype=kv_dtype), capacity_bytes)


def devices_needed(need_bytes, capacity_bytes, headroom=HEADROOM, context_bytes=CUDA_CONTEXT_BYTES) -> int:
    """The fewest devices that hold `need_bytes` split evenly, each keeping its headroom and CUDA
    context free: G = ⌈need / M_use⌉, at least 1 (see `usable_bytes`)."""
    need = _check.nonnegative("need_bytes", need_bytes)
    use = usable_bytes(capacity_bytes, headroom, context_bytes)
    if use <= 0:
        raise ValueError(
            f"capacity_bytes={capacity_bytes!r} leaves nothing after headroom={headroom!r} "
            f"and context_bytes={context_bytes!r}"
        )
    return max(1, math.ceil(need / use))


def activation_bytes(
    seq_len,
    batch,
    hidden,
    n_layers,
    n_heads,
    tensor_parallel=1,
    recompute="none",
    sequence_parallel=True,
    *,
    dropout=True,
    attention="standard",
    ffn_hidden=None,
    gated_mlp=False,
    kv_hidden=None,
):
    """Activations kept for the backward pass of L transformer layers, 16-bit activations  [bytes].

    Default (dropout=True, attention="standard", a GELU MLP of width 4h): the GPT-3 layer of
    Korthikanti et al. 2022, Table 2 (s = seq_len, b = batch, h = hidden, a = heads, t = tensor_parallel):
      recompute="none":       s·b·h·L·(34/t + 5·a·s/(h·t))          with sequence parallelism
                              s·b·h·L·(10 + 24/t + 5·a·s/(h·t))     without (sequence_parallel=False)
      recompute="selective":  s·b·h·L·34/t   (resp. s·b·h·L·(10 + 24/t)): attention scores recomputed
      recompute="full":       2·s·b·h·L      (only each layer's input is stored)
    With t = 1 both forms are s·b·h·(34 + 5·a·s/h) per layer. Embedding and output layers are not
    counted.

    The same paper's per-tensor count (§4.1), in bytes per s·b·h, gives the variants:
      norms' inputs 4, QKV and MLP inputs 2 + 2, dropout masks 1 + 1 (dropout=True),
      Q, K, V and the output projection's input 8 (split by t): Q 2, K 2, V 2, projection input 2;
        with grouped-query attention (kv_hidden = h_kv = n_kv_heads·d_head < h) the K and V
        projections' outputs are h_kv wide, so K and V keep 2·h_kv/h each: 4 + 4·h_kv/h in all
        (Llama 3 8B, 8 of 32 heads: 5 instead of 8),
      MLP: GELU 2·(2f/h) = 16 for f = 4h; SwiGLU (gated_mlp=True) 4·(2f/h), f = ffn_hidden,
      scores: standard with dropout 5·a·s/h (softmax 2, mask 1, dropout output 2);
              standard without dropout 2·a·s/h (the softmax output only);
              flash 4·a/h (a float32 log-sum-exp per head and token; no s² term).
    Llama models train without dropout and with FlashAttention: Llama 2 7B at s = 4,096, b = 1 keeps
    104 GB in the GPT-3 form, 52 GB without dropout, 17 GB without dropout and with FlashAttention
    (GELU-width MLP; its SwiGLU MLP adds ≈ 5.5·s·b·h per layer). selective recompute drops the
    score term. Sources: Korthikanti et al. 2022 (Table 2, §4.1); Dao et al. 2022 (FlashAttention);
    Touvron et al. 2023 (Llama 2, no dropout); Ainslie et al. 2023 (GQA).
    """
    s = _check.positive("seq_len", seq_len)
    b = _check.positive("batch", batch)
    h = _check.integer("hidden", hidden)
    layers = _check.integer("n_layers", n_layers)
    a = _check.integer("n_heads", n_heads)
    t = _check.integer("tensor_parallel", tensor_parallel)
    mode = _check.choice("recompute", recompute, RECOMPUTE)
    attn = _check.choice("attention", attention, ATTENTION)
    if not isinstance(sequence_parallel, bool):
        raise ValueError(f"sequence_parallel must be True or False; got {sequence_parallel!r}")
    if not isinstance(dropout, bool):
        raise ValueError(f"dropout must be True or False; got {dropout!r}")
    if not isinstance(gated_mlp, bool):
        raise ValueError(f"gated_mlp must be True or False; got {gated_mlp!r}")
    f = 4 * h if ffn_hidden is None else _check.integer("ffn_hidden", ffn_hidden)
    kv = h if kv_hidden is None else _check.integer("kv_hidden", kv_hidden)
    replicated = 8.0 + (2.0 if dropout else 0.0)  # norms, QKV and MLP inputs, dropout masks
    mlp = (8.0 if gated_mlp else 4.0) * f / h
    split = 4.0 + 4.0 * kv / h + mlp  # Q and projection input 2 + 2, K and V 2·h_kv/h each, MLP
    linear = (replicated + split) / t if sequence_parallel else replicated + split / t
    if attn == "flash":
        scores = 4.0 * a / (h * t)
    else:
        scores = (5.0 if dropout else 2.0) * a * s / (h * t)
    per_token_hidden = {"none": linear + scores, "selective": linear, "full": 2.0}[mode]
    return s * b * h * layers * per_token_hidden


def activation_formula(
    recompute="none", dropout=True, attention="standard", *, gated_mlp=False, ffn_hidden=None
) -> str:
    """The formula `activation_bytes` evaluates for t = 1, as text: with a 4h GELU MLP
    "s·b·h·L·(34 + 5·a·s/h)" for the GPT-3 layer, "s·b·h·L·(32 + 2·a·s/h)" without dropout,
    "s·b·h·L·(32 + 4·a/h)" with FlashAttention and no dropout; with an MLP of width f given
    (`ffn_hidden`, `gated_mlp`, the form `activation_bytes_for` uses) the linear term is written
    out with the K/V width h_kv = n_kv_heads·d_head, e.g. "12 + 4·h_kv/h + 8·f/h" for SwiGLU
    (h_kv = h without grouped-query attention)."""
    mode = _check.choice("recompute", recompute, RECOMPUTE)
    attn = _check.choice("attention", attention, ATTENTION)
    if mode == "full":
        return "2·s·b·h·L"
    if gated_mlp or ffn_hidden is not None:
        linear = ("14" if dropout else "12") + " + 4·h_kv/h" + (" + 8·f/h" if gated_mlp else " + 4·f/h")
    else:
        linear = "34" if dropout else "32"
    if mode == "selective":
        return f"s·b·h·L·({linear})" if "+" in linear else f"s·b·h·L·{linear}"
    scores = "4·a/h" if attn == "flash" else ("5·a·s/h" if dropout else "2·a·s/h")
    return f"s·b·h·L·({linear} + {scores})"


def activation_bytes_for(
    model,
    seq_len,
    batch=1,
    *,
    recompute="none",
    tensor_parallel=1,
    sequence_parallel=True,
    dropout=None,
    attention="flash",
):
    """activation_bytes for a named shape (a `hwlib.models` shape or its name), with its MLP width
    and kind. dropout=None follows the model family: GPT-style shapes (biases, LayerNorm) trained
    with dropout, Llama-style ones (no biases) without (Touvron et al. 2023). attention defaults to
    "flash", as training is done today; "standard" gives the paper's s² term. A mixture-of-experts
    shape keeps the MLP activations of the k experts each token runs through: f = k·d_ff. K and V
    are n_kv_heads·d_head wide (grouped-query attention keeps fewer of them than Q); an MLA shape
    is counted with K and V of width h (its per-head expansion in training is not modelled)."""
    if isinstance(model, str):
        from . import models

        model = models.get(model)
    drop = bool(model.bias) if dropout is None else dropout
    return activation_bytes(
        seq_len,
        batch,
        model.d_model,
        model.n_layers,
        model.n_heads,
        tensor_parallel,
        recompute,
        sequence_parallel,
        dropout=drop,
        attention=attention,
        ffn_hidden=model.top_k * model.d_ff,  # a mixture of experts: the MLPs of k experts per token
        gated_mlp=bool(model.gated_mlp),
        kv_hidden=None if model.mla else model.n_kv_heads * model.head_dim,
    )


def kv_replication(tensor_parallel, n_kv_heads) -> float:
    """Copies of the KV cache tensor parallelism over t GPUs keeps: each GPU holds h_kv / t KV heads,
    and when t exceeds h_kv each head is held by t / h_kv GPUs: r = max(1, t / h_kv). An MLA latent
    is one shared "head" (h_kv = 1): every GPU keeps the whole latent cache."""
    t = _check.integer("tensor_parallel", tensor_parallel)
    kv = _check.integer("n_kv_heads", n_kv_heads)
    return max(1.0, t / kv)


def tensor_parallel_devices(weights_bytes, kv_bytes, capacity_bytes, n_heads, n_kv_heads) -> int:
    """The fewest GPUs that serve a model by tensor parallelism: a degree t that divides the h attention
    heads (each GPU computes h / t of them; Shoeybi et al. 2019) and holds the weights and the KV cache
    with its replication r(t) (`kv_replication`) under `fits`' headroom and CUDA context. 0 when no
    divisor of h holds it (a pipeline across nodes would be needed, which this does not model)."""
    w = _check.positive("weights_bytes", weights_bytes)
    kv = _check.nonnegative("kv_bytes", kv_bytes)
    heads = _check.integer("n_heads", n_heads)
    use = usable_bytes(capacity_bytes)
    t = 1
    while t <= heads:
        if heads % t == 0 and (w + kv_replication(t, n_kv_heads) * kv) <= t * use:
            return t
        t += 1
    return 0


def training_bytes_per_device(state_bytes, activation_bytes, logits_bytes=0.0):
    """Training memory per device M = state per GPU + activations (+ logits)  [bytes] (ZeRO shard from
    `zero_bytes_per_device`, activations from `activation_bytes`, the loss's logits from
    `logits_bytes`). Source: chapter 9, memory budget."""
    return (
        _check.nonnegative("state_bytes", state_bytes)
        + _check.nonnegative("activation_bytes", activation_bytes)
        + _check.nonnegative("logits_bytes", logits_bytes)
    )


def logits_bytes(seq_len, batch, vocab_size, bytes_per_value=4.0):
    """The output logits a training step keeps for the cross-entropy loss: Z = s·b·V·4  [bytes] in fp32,
    as frameworks upcast them (the activation count, a per-layer one, leaves them out). Llama 3 8B at
    8,192 tokens and a 128,256-token vocabulary: 4.2 GB per sequence."""
    s = _check.positive("seq_len", seq_len)
    b = _check.positive("batch", batch)
    v = _check.integer("vocab_size", vocab_size)
    return s * b * v * _check.positive("bytes_per_value", bytes_per_value)


def unfused_activation_bytes(fused_bytes, seq_len, batch, d_model, n_layers, recompute="none"):
    """The activations an unfused run (eager PyTorch, as a Hugging Face model trains out of the box)
    keeps, from the fused-kernel count A that `activation_bytes` gives as Megatron-LM keeps them
    (Korthikanti et al. 2022): A_unfused = A + 8·s·b·h·L  [bytes].

    Each of a layer's two norms (RMSNorm/LayerNorm) upcasts its 2-byte input to fp32 and autograd keeps
    that 4-byte copy (+2 B per element over the 2 B the fused count has), and it keeps the normalised
    tensor before the norm weight as well as the weighted output the next projection saves (+2 B):
    4·s·b·h per norm, 8·s·b·h per layer. For Llama-style shapes with FlashAttention that is 18-21 %
    more (Llama 3 8B: 44.0 -> 52.0 bytes per s·b·h·L); with the a·s² scores stored it is a few %.
    With full recomputation only each layer's input is kept, so nothing is added."""
    a = _check.nonnegative("fused_bytes", fused_bytes)
    mode = _check.choice("recompute", recompute, RECOMPUTE)
    if mode == "full":
        return a
    s = _check.positive("seq_len", seq_len)
    b = _check.positive("batch", batch)
    h = _check.integer("d_model", d_model)
    n_layers = _check.integer("n_layers", n_layers)
    return a + 8.0 * s * b * h * n_layers


def zero_formula(stage, optimizer_bytes_per_param=12, gradient_bytes_per_param=2) -> str:
    """The formula `zero_bytes_per_device` evaluates for a ZeRO stage, as text with K (and the gradient
    bytes g) filled in: stage 0 "16·N", 1 "4·N + 12·N/G", 2 "2·N + 14·N/G", 3 "16·N/G" for K = 12
    (mixed-precision Adam) and g = 2; with fp32 gradients (g = 4) "18·N", "6·N + 12·N/G", ..."""
    st = _check.integer("stage", stage, minimum=0)
    if st > 3:
        raise ValueError(f"stage must be a ZeRO stage 0, 1, 2 or 3; got {stage!r}")
    k = _check.nonnegative("optimizer_bytes_per_param", optimizer_bytes_per_param)
    g = _check.nonnegative("gradient_bytes_per_param", gradient_bytes_per_param)
    return [f"{2 + g + k:g}·N", f"{2 + g:g}·N + {k:g}·N/G", f"2·N + {g + k:g}·N/G", f"{2 + g + k:g}·N/G"][st]


def zero_bytes_per_device(n_params, n_devices, stage, optimizer_bytes_per_param=12, gradient_bytes_per_param=2):
    """Model-state bytes per data-parallel device under ZeRO (Rajbhandari et al. 2020, Fig. 1):

      stage 0 (plain DP):        (2 + 2 + K)·Ψ
      stage 1 (P_os):            2Ψ + 2Ψ + K·Ψ/N
      stage 2 (P_os+g):          2Ψ + (2 + K)·Ψ/N
      stage 3 (P_os+g+p):        (2 + 2 + K)·Ψ/N
    Ψ = n_params, N = n_devices, K = optimizer_bytes_per_param (12 for mixed-precision Adam:
    fp32 master + two moments). 7.5B on 64 GPUs: 120 / 31.4 / 16.6 / 1.9 GB. Activations excluded.
    The gradients take gradient_bytes_per_param (2 in the paper; 4 when they are accumulated in fp32).
    """
    psi = _check.positive("n_params", n_params)
    n = _check.integer("n_devices", n_devices)
    k = _check.nonnegative("optimizer_bytes_per_param", optimizer_bytes_per_param)
    st = _check.integer("stage", stage, minimum=0)
    if st > 3:
        raise ValueError(f"stage must be a ZeRO stage 0, 1, 2 or 3; got {stage!r}")
    gb = _check.nonnegative("gradient_bytes_per_param", gradient_bytes_per_param)
    weights = 2.0 * psi / (n if st >= 3 else 1)
    grads = gb * psi / (n if st >= 2 else 1)
    optim = k * psi / (n if st >= 1 else 1)
    return weights + grads + optim
