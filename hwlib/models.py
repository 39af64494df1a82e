"""Named transformer shapes and their parameter counts.

A decoder-only transformer is fixed by a handful of numbers (vocabulary V, width d, layers L, heads
h, KV heads h_kv, MLP width d_ff). From them the parameter count N and the KV cache per token
follow; chapter 8 and chapter 9 (napkin math) use both. Counting rules are in
`ModelShape.n_params`; the tests check them against the published sizes (GPT-2 small 124M,
Llama 2 7B 6.74B, Llama 3 8B 8.03B, 70B 70.6B, 405B 405.9B).

>>> get("llama-3-8b").n_params()
8030261248
>>> get("llama 2 7b").kv_bytes_per_token("bf16")   # 2 * 32 layers * 32 heads * 128 * 2 B
524288.0
"""

from __future__ import annotations

from dataclasses import dataclass

from . import _check, dtypes

FORMULAS = {
    "ModelShape.n_params": "N = embeddings + L·(attention + MLP) + norms",
}
"""The formula each method of this module evaluates, as the calculators print it (the one copy)."""


@dataclass(frozen=True)
class ModelShape:
    """Shape of a decoder-only transformer. GPT-style models (LayerNorm with bias, biased linear
    layers, learned positions, 2-matrix GELU MLP) and Llama-style models (RMSNorm, no biases,
    RoPE, 3-matrix SwiGLU MLP) are both covered by the flags below."""

    name: str
    vocab_size: int
    d_model: int
    n_layers: int
    n_heads: int
    n_kv_heads: int
    d_ff: int
    max_context: int
    tied_embeddings: bool  # output projection shares the token-embedding matrix
    gated_mlp: bool  # SwiGLU: gate, up, down (3 matrices) instead of up, down (2)
    learned_positions: bool  # a max_context x d_model position table (GPT-2/3); False for RoPE
    bias: bool  # biases in every linear layer and LayerNorm (GPT); RMSNorm otherwise
    source: str = ""

    @property
    def head_dim(self) -> int:
        """d_head = d_model / n_heads."""
        return self.d_model // self.n_heads

    def embedding_params(self) -> int:
        """V·d token embedding (+ max_context·d learned positions) (+ V·d untied output head)."""
        n = self.vocab_size * self.d_model
        if self.learned_positions:
            n += self.max_context * self.d_model
        if not self.tied_embeddings:
            n += self.vocab_size * self.d_model
        return n

    def attention_params(self) -> int:
        """One layer: W_q and W_o are d x d; W_k and W_v are d x (h_kv·d_head), smaller under GQA."""
        kv = self.n_kv_heads * self.head_dim
        n = 2 * self.d_model * self.d_model + 2 * self.d_model * kv
        if self.bias:
            n += 2 * self.d_model + 2 * kv
        return n

    def mlp_params(self) -> int:
        """One layer: 3·d·d_ff for SwiGLU (gate, up, down), 2·d·d_ff for a GELU MLP (+ biases)."""
        n = (3 if self.gated_mlp else 2) * self.d_model * self.d_ff
        if self.bias:
            n += self.d_ff + self.d_model
        return n

    def norm_params(self) -> int:
        """Two norms per layer plus a final one; LayerNorm has a gain and a bias, RMSNorm a gain."""
        return (2 * self.n_layers + 1) * self.d_model * (2 if self.bias else 1)

    def n_params(self) -> int:
        """N = embeddings + L·(attention + MLP) + norms, counting every weight and bias once."""
        layers = self.n_layers * (self.attention_params() + self.mlp_params())
        return self.embedding_params() + layers + self.norm_params()

    def n_params_non_embedding(self) -> int:
        """N without the vocabulary- and position-sized matrices (token embedding, learned
        positions, untied output head): the N of Kaplan et al. 2020 and of C ≈ 6ND."""
        return self.n_params() - self.embedding_params()

    def kv_bytes_per_token(self, dtype: str = "bf16") -> float:
        """KV cache per token: 2 (K and V) · n_layers · n_kv_heads · head_dim · bytes  [bytes].
        Bytes per value from `hwlib.dtypes.bytes_per_value`. Chapter 8; Ainslie et al. 2023 (GQA)."""
        return 2.0 * self.n_layers * self.n_kv_heads * self.head_dim * dtypes.bytes_per_value(dtype)


_GPT2 = "Radford et al. 2019; shapes as in karpathy/nanoGPT model.py (vocab 50257, context 1024)"
_GPT3 = "Brown et al. 2020, Table 2.1 (d_ff = 4d, context 2048, GPT-2 architecture)"
_LLAMA2 = "Touvron et al. 2023 (Llama 2), Table 1; Hugging Face meta-llama/Llama-2-*-hf config.json"
_LLAMA3 = "Llama 3 Herd of Models (Dubey et al. 2024), Table 3; HF config.json (vocab 128256)"


def _gpt(name, d, layers, heads, ctx, source, vocab=50257):
    return ModelShape(
        name,
        vocab,
        d,
        layers,
        heads,
        heads,
        4 * d,
        ctx,
        tied_embeddings=True,
        gated_mlp=False,
        learned_positions=True,
        bias=True,
        source=source,
    )


def _llama(name, vocab, d, layers, heads, kv, d_ff, ctx, source):
    return ModelShape(
        name,
        vocab,
        d,
        layers,
        heads,
        kv,
        d_ff,
        ctx,
        tied_embeddings=False,
        gated_mlp=True,
        learned_positions=False,
        bias=False,
        source=source,
    )


_MODELS = {
    m.name: m
    for m in (
        _gpt("GPT-2 small", 768, 12, 12, 1024, _GPT2),
        _gpt("GPT-2 medium", 1024, 24, 16, 1024, _GPT2),
        _gpt("GPT-2 large", 1280, 36, 20, 1024, _GPT2),
        _gpt("GPT-2 XL", 1600, 48, 25, 1024, _GPT2),
        _gpt("GPT-3 175B", 12288, 96, 96, 2048, _GPT3),
        _llama("Llama 2 7B", 32000, 4096, 32, 32, 32, 11008, 4096, _LLAMA2),
        _llama("Llama 2 13B", 32000, 5120, 40, 40, 40, 13824, 4096, _LLAMA2),
        _llama("Llama 2 70B", 32000, 8192, 80, 64, 8, 28672, 4096, _LLAMA2),
        _llama("Llama 3 8B", 128256, 4096, 32, 32, 8, 14336, 8192, _LLAMA3),
        _llama("Llama 3 70B", 128256, 8192, 80, 64, 8, 28672, 8192, _LLAMA3),
        _llama(
            "Llama 3 405B",
            128256,
            16384,
            126,
            128,
            8,
            53248,
            131072,
            _LLAMA3 + "; released as Llama 3.1 with a 128k context",
        ),
    )
}
_ALIASES = {
    "gpt2": "GPT-2 small",
    "gpt-2": "GPT-2 small",
    "gpt2 small": "GPT-2 small",
    "gpt2-medium": "GPT-2 medium",
    "gpt2-large": "GPT-2 large",
    "gpt2-xl": "GPT-2 XL",
    "gpt-3": "GPT-3 175B",
    "gpt3": "GPT-3 175B",
    "davinci": "GPT-3 175B",
    "llama-2-7b-hf": "Llama 2 7B",
    "llama-2-13b-hf": "Llama 2 13B",
    "llama-2-70b-hf": "Llama 2 70B",
    "meta-llama-3-8b": "Llama 3 8B",
    "meta-llama-3-70b": "Llama 3 70B",
    "llama 3.1 405b": "Llama 3 405B",
    "meta-llama-3.1-405b": "Llama 3 405B",
}
_LOOKUP = {_check.normalize(n): n for n in _MODELS}
_LOOKUP.update({_check.normalize(a): t for a, t in _ALIASES.items()})


def names() -> list[str]:
    """Canonical names of the built-in shapes."""
    return list(_MODELS)


def get(name: str) -> ModelShape:
    """A built-in shape by name, ignoring case, spaces, dashes and underscores ("llama-3-8b",
    "gpt2"); unknown names raise KeyError with close matches and the accepted names."""
    lookup = _LOOKUP
    key = _check.normalize(name) if isinstance(name, str) else ""
    if key in lookup:
        return _MODELS[lookup[key]]
    hint = _check.did_you_mean(key, lookup)
    raise KeyError(f"unknown model {name!r}{hint} Accepted: {', '.join(_MODELS)}")


def custom(
    name: str = "custom",
    *,
    vocab_size: int,
    d_model: int,
    n_layers: int,
    n_heads: int,
    n_kv_heads: int | None = None,
    d_ff: int | None = None,
    max_context: int = 2048,
    tied_embeddings: bool = False,
    gated_mlp: bool = True,
    learned_positions: bool = False,
    bias: bool = False,
    source: str = "custom",
) -> ModelShape:
    """A shape from numbers. Defaults are Llama-style (SwiGLU, RoPE, no biases, untied head);
    n_kv_heads defaults to n_heads (plain multi-head attention), d_ff to 4·d_model."""
    dims = {
        k: _check.integer(k, v)
        for k, v in (
            ("vocab_size", vocab_size),
            ("d_model", d_model),
            ("n_layers", n_layers),
            ("n_heads", n_heads),
            ("max_context", max_context),
        )
    }
    kv = _check.integer("n_kv_heads", n_heads if n_kv_heads is None else n_kv_heads)
    ff = _check.integer("d_ff", 4 * dims["d_model"] if d_ff is None else d_ff)
    if dims["d_model"] % dims["n_heads"]:
        raise ValueError(f"d_model ({d_model}) must be a multiple of n_heads ({n_heads})")
    if dims["n_heads"] % kv:
        raise ValueError(f"n_heads ({n_heads}) must be a multiple of n_kv_heads ({n_kv_heads})")
    flags = {
        "tied_embeddings": tied_embeddings,
        "gated_mlp": gated_mlp,
        "learned_positions": learned_positions,
        "bias": bias,
    }
    for k, v in flags.items():
        if not isinstance(v, bool):
            raise ValueError(f"{k} must be True or False; got {v!r}")
    return ModelShape(
        str(name),
        dims["vocab_size"],
        dims["d_model"],
        dims["n_layers"],
        dims["n_heads"],
        kv,
        ff,
        dims["max_context"],
        **flags,
        source=str(source),
    )


def table(names_: list[str] | None = None) -> list[dict]:
    """One dict per shape (for tables in the chapters): the numbers, N, non-embedding N and the
    bf16 KV cache per token in bytes."""
    rows = []
    for m in (get(n) for n in (names_ or names())):
        rows.append(
            {
                "name": m.name,
                "n_params": m.n_params(),
                "n_params_non_embedding": m.n_params_non_embedding(),
                "vocab_size": m.vocab_size,
                "d_model": m.d_model,
                "n_layers": m.n_layers,
                "n_heads": m.n_heads,
                "n_kv_heads": m.n_kv_heads,
                "head_dim": m.head_dim,
                "d_ff": m.d_ff,
                "max_context": m.max_context,
                "kv_bytes_per_token": m.kv_bytes_per_token("bf16"),
            }
        )
    return rows
