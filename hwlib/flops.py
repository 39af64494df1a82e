"""How much arithmetic a model costs, how long it takes, and what it costs in money.

FLOP counts are plain floats (FLOP), rates FLOP/s, times seconds, money US dollars.
N = parameters (non-embedding, dense), D = tokens, π = peak FLOP/s per device, u = MFU,
G = devices.

Sources: chapters 8 and 9 (C ≈ 6ND, t = 6ND / (u·π·G); decode is memory-bound;
forward 2N FLOP/token, worked problems, exercises 2–4);
Kaplan et al. 2020 (Table 1); Transformer Math 101 (EleutherAI 2023); Hoffmann et al. 2022.
"""

from __future__ import annotations

from . import _check

SECONDS_PER_HOUR = 3600.0
PF_DAY_FLOP = 1e15 * 24 * 3600  # one petaFLOP/s sustained for a day

FORMULAS = {
    "matmul_flops": "F = 2·m·n·k",
    "forward_flops": "F = 2·N·D",
    "forward_flops_shaped": "F = 2·(N − N_lookup)·D",
    "forward_flops.per_token": "F/D = 2·N per token",
    "forward_flops_shaped.per_token": "F/D = 2·(N − N_lookup) per token",
    "training_flops": "C = 6·N·D",
    "prefill_flops": "F = 2·N·s·B",
    "attention_flops": "F = 2·L·n_ctx·d_attn·D",
    "attention_training_flops": "C_attn = 3·F_attn·D",
    "model_flops": "C_model = C + C_attn",
    "training_time_s": "t = C / (u·π·G·η)",
    "cost_usd": "$ = G·t/3600 × p",
    "device_hours": "G·t / 3600 s",
    "tokens_per_s": "r = D / t",
    "usd_per_million_tokens": "$/10⁶ tokens = G·p · 10⁶ / (3600·r)",
    "mfu": "u = achieved FLOP/s / π",
    "training_flops_per_s": "6·N·r",
    "decode_tokens_per_s_bound": "r ≤ B·β / (W + B·KV)",
    "decode_tokens_per_s_compute_bound": "r ≤ π / (2·N)",
    "pf_days": "C / (10¹⁵ × 86400)",
    "chinchilla_tokens": "D ≈ 20·N",
}
"""The formula each function of this module evaluates, as the calculators print it (the one copy:
`hwlib.calculator`, the command line and the in-page calculator read it from here)."""


def matmul_flops(m, n, k):
    """(m×k)·(k×n): F = 2mnk  [FLOP], one multiply and one add per inner-product term. chapter 2, chapter 4."""
    return 2.0 * _check.positive("m", m) * _check.positive("n", n) * _check.positive("k", k)


def forward_flops(n_params, n_tokens):
    """Forward pass: F = 2ND  [FLOP] (each weight is used in one multiply-add per token).

    Attention's context-dependent FLOPs are a small correction unless the context is long
    (see attention_flops). Source: chapter 9 "FLOPs: the 6ND rule"; Kaplan et al. 2020.
    """
    return 2.0 * _check.positive("n_params", n_params) * _check.positive("n_tokens", n_tokens)


def forward_flops_shaped(n_params, lookup_params, n_tokens):
    """Forward pass of a known shape: F = 2·(N − N_lookup)·D  [FLOP]. N_lookup are the weights a
    token only looks up and never multiplies: an untied input embedding (V·d) and learned positions;
    a tied embedding is multiplied once as the output head, so it stays in. Llama 3 8B (untied,
    V·d = 525M of 8.03B): 2·7.50e9 per token, 7 % below 2N. Kaplan et al. 2020 count non-embedding
    parameters for the same reason."""
    n = _check.positive("n_params", n_params)
    lookup = _check.nonnegative("lookup_params", lookup_params)
    if lookup >= n:
        raise ValueError(f"lookup_params must be below n_params ({n:.3g}); got {lookup:.3g}")
    return 2.0 * (n - lookup) * _check.positive("n_tokens", n_tokens)


def training_flops(n_params, n_tokens):
    """Training: C ≈ 6ND  [FLOP] = forward 2ND + backward 4ND (gradients w.r.t. activations and weights).

    GPT-3: 6 × 175e9 × 300e9 = 3.15e23 (paper: 3.14e23). Source: chapter 8; Kaplan et al. 2020.
    """
    return 3.0 * forward_flops(n_params, n_tokens)


def prefill_flops(n_params, prompt_tokens, batch=1):
    """Prefill (processing the prompt in one pass): F = 2·N·s·B  [FLOP], attention excluded. chapter 8."""
    s = _check.positive("prompt_tokens", prompt_tokens)
    b = _check.positive("batch", batch)
    return forward_flops(n_params, s * b)


def attention_flops(n_layers, context_len, d_attn, n_tokens=1):
    """Context-dependent forward FLOPs (QKᵀ and attention × V): F = 2·L·n_ctx·d_attn per token  [FLOP].

    Kaplan et al. 2020, Table 1 (C_forward ≈ 2N + 2·n_layer·n_ctx·d_attn); causal masking
    halves the useful part in practice. Multiply by 3 for training.
    """
    layers = _check.integer("n_layers", n_layers)
    ctx = _check.positive("context_len", context_len)
    d = _check.integer("d_attn", d_attn)
    return 2.0 * layers * ctx * d * _check.positive("n_tokens", n_tokens)


def attention_training_flops(attention_flops_per_token, n_tokens):
    """Training FLOPs of attention's context-sized products: C_attn = 3·F_attn·D  [FLOP], forward F_attn
    per token (`hwlib.models.ModelShape.attention_flops_per_token`) and twice that backward (these
    products have no weights, so a LoRA fine-tune does the same). PaLM's 12·L·h·d_head·s per token
    (Chowdhery et al. 2022, Appendix B)."""
    return (
        3.0
        * _check.positive("attention_flops_per_token", attention_flops_per_token)
        * _check.positive("n_tokens", n_tokens)
    )


def model_flops(parameter_flops, attention_flops=0.0):
    """Model FLOPs: C_model = C + C_attn  [FLOP], the weights' 6ND (or a fine-tune's 4ND) plus attention's
    context-sized products, the count that published MFUs (PaLM's, Llama 3's) divide by."""
    return _check.positive("parameter_flops", parameter_flops) + _check.nonnegative("attention_flops", attention_flops)


def training_time_s(total_flops, peak_flops, mfu, n_devices=1, scaling_efficiency=1.0):
    """Wall-clock time t = C / (u · π · G · η)  [s]; η = scaling efficiency across devices.

    350M params on 7B tokens on one H100 (989.4 TFLOP/s bf16) at u = 0.35: 4.25e4 s ≈ 11.8 h.
    Source: chapter 9 (t ≈ 6ND / (u·π·G)); exercise 2 (η = 0.9 on 8 GPUs).
    """
    c = _check.positive("total_flops", total_flops)
    pi = _check.positive("peak_flops", peak_flops)
    u = _check.fraction("mfu", mfu)
    g = _check.integer("n_devices", n_devices)
    eta = _check.fraction("scaling_efficiency", scaling_efficiency)
    return c / (u * pi * g * eta)


def cost_usd(seconds, price_per_device_hour, n_devices=1):
    """Rental cost $ = t/3600 × price × G  [USD]; price in USD per device-hour.

    11.8 h on one H100 at $3/h ≈ $35. Source: chapter 9 "Throughput, latency and cost".
    """
    t = _check.nonnegative("seconds", seconds)
    price = _check.nonnegative("price_per_device_hour", price_per_device_hour)
    g = _check.integer("n_devices", n_devices)
    return t / SECONDS_PER_HOUR * price * g


def mfu(achieved_flops_per_s, peak_flops):
    """Model FLOPs utilisation u = achieved model FLOP/s ÷ peak FLOP/s, in (0, 1].

    Count model FLOPs (e.g. 6N per trained token), not recomputation. Typical large runs: 0.3–0.5.
    An achieved rate above peak is an error (wrong peak, wrong FLOP count or a bad timer).
    Source: chapters 8 and 9; Chowdhery et al. 2022 (PaLM) define MFU.
    """
    a = _check.positive("achieved_flops_per_s", achieved_flops_per_s)
    pi = _check.positive("peak_flops", peak_flops)
    u = a / pi
    return _check.fraction("mfu (achieved_flops_per_s / peak_flops)", u)


def training_flops_per_s(n_params, tokens_per_s):
    """Model FLOP/s achieved by a training run: 6 · N · tokens/s  [FLOP/s] (numerator of MFU).

    Source: Exercise 8.1 ("count the FLOPs with the 6N rule"); chapter 9.
    """
    return 6.0 * _check.positive("n_params", n_params) * _check.positive("tokens_per_s", tokens_per_s)


def decode_tokens_per_s_bound(model_bytes, bandwidth, batch=1, kv_bytes=0.0):
    """Bandwidth ceiling on decoding: tokens/s ≤ B · β / (W + B · KV)  [tokens/s, all sequences].

    Each step reads every weight once (W bytes) for the whole batch B, plus each sequence's KV
    cache (kv_bytes per sequence, default 0). 7B bf16 (14 GB) on 3.35 TB/s: ≈ 239 tokens/s at B = 1.
    It ignores the compute roof, which takes over once B approaches the ridge point.
    Source: chapter 8; chapter 9; exercise 4.
    """
    w = _check.positive("model_bytes", model_bytes)
    beta = _check.positive("bandwidth", bandwidth)
    b = _check.positive("batch", batch)
    kv = _check.nonnegative("kv_bytes", kv_bytes)
    return b * beta / (w + b * kv)


def decode_tokens_per_s_compute_bound(n_params, peak_flops):
    """Compute ceiling on decoding: tokens/s ≤ π / 2N  [tokens/s] (2N FLOP per token, at peak).

    Binds once the batch passes the ridge point. Source: chapter 8; chapter 9.
    """
    return _check.positive("peak_flops", peak_flops) / forward_flops(n_params, 1)


def device_hours(seconds, n_devices=1):
    """Device-hours G·t / 3600 s  [device-h]: what a cloud bill counts. Source: chapter 9."""
    return _check.nonnegative("seconds", seconds) * _check.integer("n_devices", n_devices) / SECONDS_PER_HOUR


def tokens_per_s(n_tokens, seconds):
    """Throughput r = D / t  [tokens/s]: tokens processed in `seconds`. Source: chapter 9."""
    return _check.positive("n_tokens", n_tokens) / _check.positive("seconds", seconds)


def usd_per_million_tokens(tokens_per_second, price_per_device_hour, n_devices=1):
    """Serving cost per million tokens: G·p · 10⁶ / (3600 · r)  [USD], r = tokens/s of all G devices.

    One H100 at $3/h decoding 2,000 tokens/s: $0.42 per million. Source: chapter 9.
    """
    r = _check.positive("tokens_per_second", tokens_per_second)
    return cost_usd(1e6 / r, price_per_device_hour, n_devices)


def pf_days(total_flops):
    """Convert FLOP to petaFLOP/s-days: C / (1e15 × 86,400). GPT-3: 3.14e23 FLOP ≈ 3,640 PF-days.

    Source: Brown et al. 2020, Table D.1; Transformer Math 101.
    """
    return _check.positive("total_flops", total_flops) / PF_DAY_FLOP


def chinchilla_tokens(n_params, tokens_per_param=20.0):
    """Compute-optimal data size D ≈ 20 · N  [tokens] (Hoffmann et al. 2022, Table 3: 1B -> 20.2B).

    The paper prints no "20" rule; it is the usual reading of its Table 3.
    """
    return _check.positive("n_params", n_params) * _check.positive("tokens_per_param", tokens_per_param)
