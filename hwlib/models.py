"""Named transformer shapes and their parameter counts.

A decoder-only transformer is fixed by a handful of numbers (vocabulary V, width d, layers L, heads
h, KV heads h_kv, MLP width d_ff). From them the parameter count N and the KV cache per token
follow; chapter 8 and chapter 9 (napkin math) use both. Counting rules are in
`ModelShape.n_params`; the tests check them against the published sizes (GPT-2 small 124M,
Llama 2 7B 6.74B, Llama 3 8B 8.03B, 70B 70.6B, 405B 405.9B). A mixture of experts (Mixtral 8x7B,
from hwlib/data/moe.yaml) has E MLPs per layer of which each token uses k: memory follows
`n_params()` (46.7B), FLOPs `n_active_params()` (12.9B), decode reads `weights_read_per_step(B)`.

>>> get("llama-3-8b").n_params()
8030261248
>>> get("llama 2 7b").kv_bytes_per_token("bf16")   # 2 * 32 layers * 32 heads * 128 * 2 B
524288.0
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from . import _check, dtypes

FORMULAS = {
    "ModelShape.n_params": "N = embeddings + L·(attention + MLP) + norms",
    "ModelShape.cached_tokens": "s_cache = min(s, W)  (sliding window W)",
    "ModelShape.n_active_params": "N_active = embeddings + L·(attention + k experts + router) + norms",
    "ModelShape.params_read_per_step": "N_read = N − L·(E − E_hit)·N_expert,  E_hit = E·(1 − (1 − k/E)^B)",
    "ModelShape.weights_read_per_step": "W_read = N_read·b,  N_read = N − L·(E − E_hit)·N_expert,  E_hit = E·(1 − (1 − k/E)^B)",
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
    n_experts: int = 1  # mixture of experts: E MLPs ("experts") per layer and a router (1: dense)
    top_k: int = 1  # experts each token runs through (k of E)
    sliding_window: int | None = None  # each layer attends to the last W tokens (Mistral 7B); None: all

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

    def expert_params(self) -> int:
        """One MLP: 3·d·d_ff for SwiGLU (gate, up, down), 2·d·d_ff for a GELU MLP (+ biases)."""
        n = (3 if self.gated_mlp else 2) * self.d_model * self.d_ff
        if self.bias:
            n += self.d_ff + self.d_model
        return n

    def router_params(self) -> int:
        """One layer's router, d × E (none in a dense model)."""
        return self.d_model * self.n_experts if self.n_experts > 1 else 0

    def mlp_params(self) -> int:
        """One layer: E experts and the router; a dense model's single MLP (E = 1)."""
        return self.n_experts * self.expert_params() + self.router_params()

    def active_mlp_params(self) -> int:
        """One layer's MLP weights one token uses: k experts and the router (Jiang et al. 2024)."""
        return self.top_k * self.expert_params() + self.router_params()

    def norm_params(self) -> int:
        """Two norms per layer plus a final one; LayerNorm has a gain and a bias, RMSNorm a gain."""
        return (2 * self.n_layers + 1) * self.d_model * (2 if self.bias else 1)

    def n_params(self) -> int:
        """N = embeddings + L·(attention + MLP) + norms, counting every weight and bias once."""
        layers = self.n_layers * (self.attention_params() + self.mlp_params())
        return self.embedding_params() + layers + self.norm_params()

    def n_active_params(self) -> int:
        """N_active = embeddings + L·(attention + k experts + router) + norms: the weights one token
        runs through, which set its FLOPs (2·N_active forward). Equals n_params() for a dense model."""
        layers = self.n_layers * (self.attention_params() + self.active_mlp_params())
        return self.embedding_params() + layers + self.norm_params()

    def params_read_per_step(self, batch=1) -> float:
        """Weights one decoding step reads for a batch of B tokens. Dense: all N. Mixture of experts,
        with uniform routing of each token to k of E experts, a layer touches E_hit = E·(1 − (1 − k/E)^B)
        experts on average, so N_read = N − L·(E − E_hit)·N_expert: N_active at B = 1, close to N once
        B ≫ E/k. An approximation (real routers are not uniform); chapter 7, "Expert parallelism"."""
        b = _check.positive("batch", batch)
        if self.n_experts == 1:
            return float(self.n_params())
        hit = self.n_experts * (1.0 - (1.0 - self.top_k / self.n_experts) ** b)
        return self.n_params() - self.n_layers * (self.n_experts - hit) * self.expert_params()

    def weights_read_per_step(self, batch=1, dtype: str = "bf16") -> float:
        """W_read = N_read · b: bytes of weights one decoding step of B tokens reads (params_read_per_step
        times `hwlib.dtypes.bytes_per_value(dtype)`)  [bytes]."""
        return self.params_read_per_step(batch) * dtypes.bytes_per_value(dtype)

    def n_params_non_embedding(self) -> int:
        """N without the vocabulary- and position-sized matrices (token embedding, learned
        positions, untied output head): the N of Kaplan et al. 2020 and of C ≈ 6ND."""
        return self.n_params() - self.embedding_params()

    def cached_tokens(self, seq_len) -> float:
        """Positions the KV cache holds for a context of s tokens: min(s, W) with a sliding window of W
        (a rolling buffer, Jiang et al. 2023 §2), else s."""
        s = _check.positive("seq_len", seq_len)
        return s if self.sliding_window is None else min(s, self.sliding_window)

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


def _moe_models() -> tuple[dict, dict]:
    """The shapes of hwlib/data/moe.yaml that this dataclass can hold (GQA attention, every layer MoE or
    every layer dense, no shared experts, a max_context): Mixtral 8x7B and the dense Mistral 7B with
    its sliding window. One home for their numbers; hwlib.moe reads the same rows for its richer
    MoEShape (MLA, shared experts)."""
    import yaml

    raw = yaml.safe_load(Path(__file__).with_name("data").joinpath("moe.yaml").read_text(encoding="utf-8"))
    out, aliases = {}, {}
    for name, row in raw["models"].items():
        att = row["attention"]
        uniform = row["n_dense_layers"] == (0 if row["n_experts"] > 1 else row["n_layers"])
        if not (uniform and att["kind"] == "gqa" and row["n_shared_experts"] == 0 and row.get("max_context")):
            continue

        def whole(key, value, name=name):
            return _check.integer(f"hwlib/data/moe.yaml {name}.{key}", value)

        if whole("d_model", row["d_model"]) != att["n_heads"] * att["head_dim"]:
            raise ValueError(f"hwlib/data/moe.yaml {name}: d_model must equal n_heads × head_dim for hwlib.models")
        out[name] = ModelShape(
            name,
            whole("vocab_size", row["vocab_size"]),
            whole("d_model", row["d_model"]),
            whole("n_layers", row["n_layers"]),
            whole("n_heads", att["n_heads"]),
            whole("n_kv_heads", att["n_kv_heads"]),
            whole("d_ff_expert", row["d_ff_expert"]),
            whole("max_context", row["max_context"]),
            tied_embeddings=False,
            gated_mlp=True,
            learned_positions=False,
            bias=False,
            source=raw["sources"][row["source"]],
            n_experts=whole("n_experts", row["n_experts"]),
            top_k=whole("top_k", row["top_k"]),
            sliding_window=None if row["sliding_window"] is None else whole("sliding_window", row["sliding_window"]),
        )
        aliases.update({a: name for a in row.get("aliases", [])})
    return out, aliases


_MOE_MODELS, _MOE_ALIASES = _moe_models()
_MODELS.update(_MOE_MODELS)
_ALIASES.update(_MOE_ALIASES)
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
    n_experts: int = 1,
    top_k: int = 1,
) -> ModelShape:
    """A shape from numbers. Defaults are Llama-style (SwiGLU, RoPE, no biases, untied head);
    n_kv_heads defaults to n_heads (plain multi-head attention), d_ff to 4·d_model. A mixture of
    experts: n_experts MLPs of width d_ff per layer, top_k of them per token (1 ≤ top_k ≤ n_experts)."""
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
    experts = _check.integer("n_experts", n_experts)
    per_token = _check.integer("top_k", top_k)
    if per_token > experts:
        raise ValueError(
            f"top_k ({top_k}) must be at most n_experts ({n_experts}): a token runs through k of E experts"
        )
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
        n_experts=experts,
        top_k=per_token,
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
