"""Modern attention and decoding: MLA's latent KV cache, sliding windows, speculative decoding.

Companions to ``memory.kv_cache_bytes`` (chapter 8) with the same units (bytes) and dtype names:

* Multi-head latent attention (DeepSeek-V2 §2.1, DeepSeek-V3): per layer and token the cache holds one
  compressed latent c_KV of r_kv values and one shared RoPE key of d_R values, not 2 · h · d_h.
* Sliding-window attention (Mistral 7B §2): each layer attends to the last W tokens, so a rolling
  buffer of W positions suffices; the cache stops growing at W.
* Speculative decoding (Leviathan et al. 2023): a draft model proposes γ tokens, the target verifies
  them in one pass; with acceptance rate α a step yields (1 − α^(γ+1)) / (1 − α) tokens on average.

FlashAttention's saving is in the activations, not the cache: see ``memory.activation_bytes``.

>>> mla_kv_cache_bytes(61, 512, 64, 1) / 61      # DeepSeek-V3: 576 values per layer per token, bf16
1152.0
>>> round(speculative_expected_tokens(0.8, 4), 3)
3.362
"""

from __future__ import annotations

from . import _check, memory

FORMULAS = {
    "kv_cache_bytes_for": "KV = Σ_layers per-position cache (MLA latent or 2·h_kv·d_head) × min(s, W_layer) × B·b",
    "speculative_expected_tokens": "E = (1 − α^(γ+1)) / (1 − α)",
    "speculative_decode.plain_tokens_per_s": "r = B / max((W + B·KV)/β, B·2N/π)",
    "speculative_decode.speculative_tokens_per_s": "r_spec = B·E / (t(B·(γ+1)) + γ·c·t(B))",
    "speculative_decode.speedup": "r_spec / r",
}
"""The formula each function of this module evaluates, as the calculators print it (the one copy)."""


def mla_kv_cache_bytes(n_layers, kv_lora_rank, rope_dim, seq_len, batch=1, dtype="bf16"):
    """MLA cache: L · (r_kv + d_R) · s · B · b  [bytes]. DeepSeek-V2 Table 1: (d_c + d_h^R) · l values
    per token, ≈ 4.5 · d_h · l for d_c = 4 d_h, d_h^R = d_h / 2 (GQA with 2.25 groups)."""
    layers = _check.integer("n_layers", n_layers)
    r = _check.integer("kv_lora_rank", kv_lora_rank)
    rope = _check.integer("rope_dim", rope_dim, minimum=0)
    s = _check.positive("seq_len", seq_len)
    b = _check.positive("batch", batch)
    return layers * (r + rope) * s * b * memory.bytes_per_value(dtype)


def swa_kv_cache_bytes(n_layers, n_kv_heads, head_dim, seq_len, window, batch=1, dtype="bf16"):
    """Sliding-window cache: 2 · L · h_kv · d_h · min(s, W) · B · b  [bytes] (a rolling buffer of W
    positions; Mistral 7B §2: at 32k tokens and W = 4096 the cache is 8x smaller)."""
    s = _check.positive("seq_len", seq_len)
    w = _check.integer("window", window)
    return memory.kv_cache_bytes(n_layers, n_kv_heads, head_dim, min(s, w), batch, dtype)


def _model(shape):
    """A `hwlib.models` shape from a shape or its name (`hwlib.moe.get` hands out the same shapes)."""
    from . import models

    if isinstance(shape, models.ModelShape):
        return shape
    return models.get(shape if isinstance(shape, str) else getattr(shape, "name", shape))


def kv_cache_bytes_for(shape, seq_len, batch=1, dtype="bf16"):
    """KV cache of a ``hwlib.models`` shape or its name ("DeepSeek-V3", "Mistral 7B", "Gemma 2 9B"):
    the one count, `memory.kv_cache_bytes_for` (MLA latent, sliding-window layers, GQA from its config)."""
    return memory.kv_cache_bytes_for(_model(shape), seq_len, batch, dtype)


def mha_equivalent_kv_bytes(shape, seq_len, batch=1, dtype="bf16"):
    """What the same shape would cache with full multi-head attention (2 · L · h · d_h per token).
    For MLA d_h is the per-head dimension without the decoupled RoPE part (d_nope = 128 in
    DeepSeek-V2/V3), as DeepSeek-V2 Table 1 compares MHA's 2·n_h·d_h·l with MLA's (d_c + d_h^R)·l."""
    s = _model(shape)
    return memory.kv_cache_bytes(s.n_layers, s.n_heads, s.head_dim, seq_len, batch, dtype)


def _alpha(alpha):
    a = _check.nonnegative("alpha", alpha)
    if a > 1:
        raise ValueError(f"alpha (acceptance rate) must be in [0, 1]; got {alpha!r}")
    return a


def speculative_expected_tokens(alpha, gamma):
    """Expected tokens per target pass: E = (1 − α^(γ+1)) / (1 − α), γ + 1 when α = 1
    (Leviathan, Kalman & Matias 2023, eq. 1). α = acceptance rate, γ = draft tokens per step."""
    a = _alpha(alpha)
    g = _check.integer("gamma", gamma, minimum=0)
    if a == 1.0:
        return float(g + 1)
    return (1.0 - a ** (g + 1)) / (1.0 - a)


def speculative_speedup(alpha, gamma, cost_ratio):
    """Walltime improvement when each target pass costs the same for 1 or γ + 1 tokens (the
    memory-bound case): (1 − α^(γ+1)) / ((1 − α)(γ c + 1)), c = draft time / target time
    (Leviathan et al. 2023, Theorem 3.8)."""
    c = _check.nonnegative("cost_ratio", cost_ratio)
    g = _check.integer("gamma", gamma, minimum=0)
    return speculative_expected_tokens(alpha, g) / (g * c + 1.0)


def speculative_decode(
    model_bytes, flops_per_token, gpu, alpha, gamma, batch=1, cost_ratio=0.05, kv_bytes=0.0, precision=None
) -> dict:
    """Speculative decoding on the roofline. A target step over n tokens takes
    t(n) = max((W + B·KV) / β, n · F / π): it reads the weights once, whatever n is.
    Plain decoding: n = B per step. Speculative: n = B · (γ + 1) verified, plus γ draft steps of
    c · t(B) each, for B · E tokens (E = ``speculative_expected_tokens``). Speedup =
    (B · E / t_spec) / (B / t(B)). While t(n) is memory-bound the γ extra tokens are free and the
    speedup is Leviathan's; once n · F / π exceeds the read time (large batch) they cost full price
    and the speedup falls below 1. ``precision`` defaults to the part's best 16-bit format (bf16, else
    fp16 on a T4). Returns a dict of the times (s), rates (tokens/s) and speedup."""
    from . import specs

    acc = specs.get(gpu) if isinstance(gpu, str) else gpu
    w = _check.positive("model_bytes", model_bytes)
    f = _check.positive("flops_per_token", flops_per_token)
    b = _check.positive("batch", batch)
    kv = _check.nonnegative("kv_bytes", kv_bytes)
    g = _check.integer("gamma", gamma, minimum=0)
    c = _check.nonnegative("cost_ratio", cost_ratio)
    peak = acc.peak_flops(precision or acc.default_precision())
    read_s = (w + b * kv) / acc.bandwidth

    def step(n):
        return max(read_s, n * f / peak)

    plain_s = step(b)
    spec_s = step(b * (g + 1)) + g * c * plain_s
    tokens = b * speculative_expected_tokens(alpha, g)
    return {
        "plain_step_s": plain_s,
        "speculative_step_s": spec_s,
        "plain_tokens_per_s": b / plain_s,
        "speculative_tokens_per_s": tokens / spec_s,
        "speedup": (tokens / spec_s) / (b / plain_s),
        "verify_bound": "memory" if read_s >= b * (g + 1) * f / peak else "compute",
    }
