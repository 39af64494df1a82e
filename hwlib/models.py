"""Named transformer shapes and their parameter counts.

A decoder-only transformer is fixed by a handful of numbers (vocabulary V, width d, layers L, heads
h, KV heads h_kv, head size d_head, MLP width d_ff) and a few architectural choices: which layers use
a sliding window (Mistral: all; Gemma 2: every other; Gemma 3: five of six), multi-head latent
attention (DeepSeek-V3 caches a 512 + 64 latent per token instead of K and V), a mixture of experts
with shared experts and dense first layers, tied or untied embeddings. From them the parameter count
N and the KV cache follow; chapter 8 and chapter 9 (napkin math) use both. Every named shape is the
`config.json` of the released model, in hwlib/data/models.yaml, read by `from_hf_config` (which
also takes a reader's own config); tests check the counts against the published totals and against
transformers' modules built from the same configs. Memory follows `n_params()`, FLOPs
`n_active_params()`, decode reads `weights_read_per_step(B)`.

>>> get("llama-3-8b").n_params()
8030261248
>>> get("llama 2 7b").kv_bytes_per_token("bf16")   # 2 * 32 layers * 32 heads * 128 * 2 B
524288.0
>>> round(get("DeepSeek-V3").kv_cache_bytes(4096) / 1e6)   # 61 layers * (512 + 64) * 2 B * 4096
288
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path

from . import _check, dtypes

FORMULAS = {
    "ModelShape.n_params": "N = embeddings + Σ_layers (attention + MLP) + norms",
    "ModelShape.cached_tokens": "s_cache = min(s, W)  (sliding window W)",
    "ModelShape.n_active_params": "N_active = embeddings + Σ_layers (attention + dense MLP or k routed + shared experts + router) + norms",
    "ModelShape.params_read_per_step": "N_read = N − L_moe·(E − E_hit)·N_expert,  E_hit = E·(1 − (1 − k/E)^B)",
    "ModelShape.weights_read_per_step": "W_read = N_read·b,  N_read = N − L_moe·(E − E_hit)·N_expert,  E_hit = E·(1 − (1 − k/E)^B)",
    "ModelShape.attention_flops_per_token": "F_attn = 2·h·(d_qk + d_v)·(L_global·s + L_window·min(s, W))",
    "ModelShape.kv_cache_bytes": "KV = 2·h_kv·d_head·(L_global·s + L_window·min(s, W))·B·b",
    "ModelShape.kv_cache_bytes.full": "KV = 2·L·h_kv·d_head·s·B·b",
    "ModelShape.kv_cache_bytes.window": "KV = 2·L·h_kv·d_head·min(s, W)·B·b  (sliding window W)",
    "ModelShape.kv_cache_bytes.mla": "KV = L·(d_c + d_rope)·s·B·b  (MLA latent, weights absorbed)",
}
"""The formula each method of this module evaluates, as the calculators print it (the one copy)."""

DATA_PATH = Path(__file__).with_name("data") / "models.yaml"


@dataclass(frozen=True)
class ModelShape:
    """Shape of a decoder-only transformer. GPT-style models (LayerNorm with bias, biased linear
    layers, learned positions, 2-matrix GELU MLP) and Llama-style models (RMSNorm, no biases,
    RoPE, 3-matrix SwiGLU MLP) are both covered by the flags below; the fields after `top_k` describe
    what newer models add (explicit head size, hybrid sliding-window layers, MLA, shared experts)."""

    name: str
    vocab_size: int
    d_model: int
    n_layers: int
    n_heads: int
    n_kv_heads: int
    d_ff: int  # MLP width; in a mixture of experts, the width of one expert
    max_context: int
    tied_embeddings: bool  # output projection shares the token-embedding matrix
    gated_mlp: bool  # SwiGLU: gate, up, down (3 matrices) instead of up, down (2)
    learned_positions: bool  # a max_context x d_model position table (GPT-2/3); False for RoPE
    bias: bool  # biases in every linear layer and LayerNorm (GPT); RMSNorm otherwise
    source: str = ""
    n_experts: int = 1  # mixture of experts: E routed MLPs ("experts") per MoE layer and a router (1: dense)
    top_k: int = 1  # routed experts each token runs through (k of E)
    sliding_window: int | None = None  # window layers attend to the last W tokens; None: no window
    d_head: int | None = None  # head size when the config gives it (Qwen3, Gemma: not d/h); None: d/h
    n_window_layers: int | None = None  # layers with the sliding window (Gemma 2: half); None: all of them
    n_shared_experts: int = 0  # experts every token runs through, beside the k routed ones (DeepSeek)
    n_dense_layers: int = 0  # first layers with a dense MLP in a mixture of experts (DeepSeek-V3: 3)
    d_ff_dense: int = 0  # width of those dense MLPs
    kv_lora_rank: int = 0  # MLA: latent d_c cached per token (DeepSeek-V3: 512); 0: no MLA
    q_lora_rank: int = 0  # MLA: low-rank query projection (0: a full d x h·d_qk query)
    qk_rope_head_dim: int = 0  # MLA: decoupled RoPE key per head, cached once per token (64)
    v_head_dim: int = 0  # MLA: value head size (0: d_head)
    norms_per_layer: int = 2  # RMSNorm/LayerNorm per block (Gemma 2/3: 4, before and after each half)
    qk_norm: bool = False  # an RMSNorm of size d_head on queries and keys in every layer (Qwen3, Gemma 3)

    @property
    def head_dim(self) -> int:
        """d_head: the config's head_dim, else d_model / n_heads."""
        return self.d_model // self.n_heads if self.d_head is None else self.d_head

    @property
    def mla(self) -> bool:
        """Multi-head latent attention (DeepSeek-V2/V3): a compressed KV latent is cached."""
        return self.kv_lora_rank > 0

    def embedding_params(self) -> int:
        """V·d token embedding (+ max_context·d learned positions) (+ V·d untied output head)."""
        n = self.vocab_size * self.d_model
        if self.learned_positions:
            n += self.max_context * self.d_model
        if not self.tied_embeddings:
            n += self.vocab_size * self.d_model
        return n

    def attention_params(self) -> int:
        """One layer. Standard/GQA: W_q (d x h·d_head), W_o (h·d_head x d), W_k and W_v (d x h_kv·d_head),
        + biases, + QK-norm gains. MLA (DeepSeek-V2 §2.1): W_DQ (d x d_q) and its norm, W_UQ
        (d_q x h·(d_head + d_rope)), W_DKV (d x (d_c + d_rope)) and its norm, W_UKV (d_c x h·(d_head + d_v)),
        W_O (h·d_v x d)."""
        d, h = self.d_model, self.n_heads
        if self.mla:
            qk = self.head_dim + self.qk_rope_head_dim
            v = self.v_head_dim or self.head_dim
            if self.q_lora_rank:
                q = d * self.q_lora_rank + self.q_lora_rank + self.q_lora_rank * h * qk
            else:
                q = d * h * qk
            kv = d * (self.kv_lora_rank + self.qk_rope_head_dim) + self.kv_lora_rank
            kv += self.kv_lora_rank * h * (self.head_dim + v)
            return q + kv + h * v * d
        q = h * self.head_dim
        kv = self.n_kv_heads * self.head_dim
        n = 2 * d * q + 2 * d * kv
        if self.bias:
            n += q + 2 * kv + d
        if self.qk_norm:
            n += 2 * self.head_dim
        return n

    def expert_params(self) -> int:
        """One MLP of width d_ff: 3·d·d_ff for SwiGLU (gate, up, down), 2·d·d_ff for a GELU MLP (+ biases)."""
        return self._mlp(self.d_ff)

    def _mlp(self, width) -> int:
        n = (3 if self.gated_mlp else 2) * self.d_model * width
        if self.bias:
            n += width + self.d_model
        return n

    def router_params(self) -> int:
        """One MoE layer's router, d × E (none in a dense model)."""
        return self.d_model * self.n_experts if self.n_experts > 1 else 0

    def n_moe_layers(self) -> int:
        """Layers whose MLP is a mixture of experts: L − n_dense_layers (0 in a dense model)."""
        return self.n_layers - self.n_dense_layers if self.n_experts > 1 else 0

    def mlp_params(self) -> int:
        """One MoE layer: E routed and the shared experts and the router; a dense model's single MLP (E = 1)."""
        return (self.n_experts + self.n_shared_experts) * self.expert_params() + self.router_params()

    def active_mlp_params(self) -> int:
        """One MoE layer's MLP weights one token uses: k routed and the shared experts and the router
        (Jiang et al. 2024; DeepSeek-AI 2024)."""
        return (self.top_k + self.n_shared_experts) * self.expert_params() + self.router_params()

    def dense_mlp_params(self) -> int:
        """All the dense first layers' MLPs of a mixture of experts (width d_ff_dense)."""
        return self.n_dense_layers * self._mlp(self.d_ff_dense) if self.n_experts > 1 else 0

    def norm_params(self) -> int:
        """norms_per_layer norms per layer plus a final one; LayerNorm has a gain and a bias, RMSNorm a gain."""
        return (self.norms_per_layer * self.n_layers + 1) * self.d_model * (2 if self.bias else 1)

    def _layers(self, mlp_per_moe_layer) -> int:
        if self.n_experts == 1:
            return self.n_layers * (self.attention_params() + mlp_per_moe_layer)
        return (
            self.n_layers * self.attention_params() + self.dense_mlp_params() + self.n_moe_layers() * mlp_per_moe_layer
        )

    def n_params(self) -> int:
        """N = embeddings + Σ_layers (attention + MLP) + norms, counting every weight and bias once."""
        return self.embedding_params() + self._layers(self.mlp_params()) + self.norm_params()

    def n_active_params(self) -> int:
        """N_active = embeddings + Σ_layers (attention + dense MLP, or k routed + shared experts + router)
        + norms: the weights one token runs through, which set its FLOPs (2·N_active forward). Equals
        n_params() for a dense model."""
        return self.embedding_params() + self._layers(self.active_mlp_params()) + self.norm_params()

    def params_read_per_step(self, batch=1) -> float:
        """Weights one decoding step reads for a batch of B tokens. Dense: all N. Mixture of experts,
        with uniform routing of each token to k of E experts, a layer touches E_hit = E·(1 − (1 − k/E)^B)
        experts on average, so N_read = N − L_moe·(E − E_hit)·N_expert: N_active at B = 1, close to N
        once B ≫ E/k. An approximation (real routers are not uniform); chapter 7, "Expert parallelism"."""
        b = _check.positive("batch", batch)
        if self.n_experts == 1:
            return float(self.n_params())
        hit = self.n_experts * (1.0 - (1.0 - self.top_k / self.n_experts) ** b)
        return self.n_params() - self.n_moe_layers() * (self.n_experts - hit) * self.expert_params()

    def lookup_params(self) -> int:
        """Weights a token looks up but never multiplies: V·d of an untied input embedding (a tied one is
        the output head's matrix too) plus max_context·d learned positions. See flops.forward_flops_shaped."""
        n = 0 if self.tied_embeddings else self.vocab_size * self.d_model
        if self.learned_positions:
            n += self.max_context * self.d_model
        return n

    def unread_embedding_params(self, batch=1) -> float:
        """Input-embedding weights a decoding step of B tokens does not read: (V − min(B, V))·d for an
        untied embedding (a lookup reads B rows), 0 when tied (the output head reads the whole matrix)."""
        b = _check.positive("batch", batch)
        if self.tied_embeddings:
            return 0.0
        return float((self.vocab_size - min(b, self.vocab_size)) * self.d_model)

    def weights_read_per_step(self, batch=1, dtype: str = "bf16") -> float:
        """W_read = N_read · b: bytes of weights one decoding step of B tokens reads (params_read_per_step
        times `hwlib.dtypes.bytes_per_value(dtype)`)  [bytes]."""
        return self.params_read_per_step(batch) * dtypes.bytes_per_value(dtype)

    def n_params_non_embedding(self) -> int:
        """N without the vocabulary- and position-sized matrices (token embedding, learned
        positions, untied output head): the N of Kaplan et al. 2020 and of C ≈ 6ND."""
        return self.n_params() - self.embedding_params()

    def window_layers(self) -> int:
        """Layers that attend through the sliding window: n_window_layers, all L when the shape has a
        window and does not say, 0 without a window."""
        if self.sliding_window is None:
            return 0
        return self.n_layers if self.n_window_layers is None else self.n_window_layers

    def cached_tokens(self, seq_len) -> float:
        """Positions a sliding-window layer's KV cache holds for a context of s tokens: min(s, W) with a
        window of W (a rolling buffer, Jiang et al. 2023 §2), else s. Layers without the window
        (Gemma's global layers) hold all s: see `kv_cache_bytes`."""
        s = _check.positive("seq_len", seq_len)
        return s if self.sliding_window is None else min(s, self.sliding_window)

    def kv_values_per_position(self) -> int:
        """Values one layer caches per position: 2·h_kv·d_head (K and V), or d_c + d_rope under MLA
        with the up-projections absorbed into the query and output (DeepSeek-V2 §2.1.2)."""
        if self.mla:
            return self.kv_lora_rank + self.qk_rope_head_dim
        return 2 * self.n_kv_heads * self.head_dim

    def kv_bytes_per_token(self, dtype: str = "bf16") -> float:
        """KV cache per token held by every layer: 2 (K and V) · n_layers · n_kv_heads · head_dim · bytes,
        or n_layers·(d_c + d_rope)·bytes under MLA  [bytes]. Past a sliding window W only the global
        layers keep adding this much (`kv_cache_bytes`). Chapter 8; Ainslie et al. 2023 (GQA)."""
        return float(self.n_layers * self.kv_values_per_position()) * dtypes.bytes_per_value(dtype)

    def kv_cache_bytes(self, seq_len, batch=1, dtype: str = "bf16") -> float:
        """KV cache of B sequences of s tokens: per position 2·h_kv·d_head values (MLA: d_c + d_rope) in
        each of the L − L_window global layers for all s positions and in each window layer for
        min(s, W) positions, times B and the bytes per value  [bytes]."""
        s = _check.positive("seq_len", seq_len)
        b = _check.positive("batch", batch)
        windowed = self.window_layers()
        positions = (self.n_layers - windowed) * s + windowed * self.cached_tokens(s)
        return self.kv_values_per_position() * positions * b * dtypes.bytes_per_value(dtype)

    def attention_flops_per_token(self, seq_len) -> float:
        """Forward FLOPs per token of attention's two context-sized products, QKᵀ and the weighted sum of
        V, which no parameter counts: 2·h·(d_qk + d_v) per position attended, s positions in a global
        layer and min(s, W) in a window layer [FLOP]. Counted over the whole context, causal mask or
        not, as PaLM (Chowdhery et al. 2022, Appendix B: 6ND + 12·L·h·d_head·s for training) and the
        published MFUs that use its count do. MLA: d_qk = d_head + d_rope, d_v = v_head_dim."""
        s = _check.positive("seq_len", seq_len)
        d_qk = self.head_dim + (self.qk_rope_head_dim if self.mla else 0)
        d_v = (self.v_head_dim or self.head_dim) if self.mla else self.head_dim
        windowed = self.window_layers()
        positions = (self.n_layers - windowed) * s + windowed * self.cached_tokens(s)
        return 2.0 * self.n_heads * (d_qk + d_v) * positions

    def kv_formula(self) -> str:
        """The formula `kv_cache_bytes` evaluates for this shape, from FORMULAS: MLA's latent, one window
        for every layer (Mistral), hybrid window and global layers (Gemma), or full attention."""
        if self.mla:
            return FORMULAS["ModelShape.kv_cache_bytes.mla"]
        if self.sliding_window is None:
            return FORMULAS["ModelShape.kv_cache_bytes.full"]
        if self.window_layers() == self.n_layers:
            return FORMULAS["ModelShape.kv_cache_bytes.window"]
        return FORMULAS["ModelShape.kv_cache_bytes"]

    def kv_numbers(self, seq_len, batch=1, dtype: str = "bf16") -> str:
        """The numbers put into `kv_formula()`, as the calculators print them beside the value."""
        b = dtypes.bytes_per_value(dtype)
        tail = f"{batch:g} × {b:g} B"
        if self.mla:
            return f"{self.n_layers} × ({self.kv_lora_rank} + {self.qk_rope_head_dim}) × {seq_len:g} × {tail}"
        head = f"2 × {self.n_kv_heads} × {self.head_dim}"
        if self.sliding_window is None:
            return f"2 × {self.n_layers} × {self.n_kv_heads} × {self.head_dim} × {seq_len:g} × {tail}"
        cached = f"min({seq_len:g}, {self.sliding_window})"
        if self.window_layers() == self.n_layers:
            return f"2 × {self.n_layers} × {self.n_kv_heads} × {self.head_dim} × {cached} × {tail}"
        n_global = self.n_layers - self.window_layers()
        return f"{head} × ({n_global} × {seq_len:g} + {self.window_layers()} × {cached}) × {tail}"


def _layer_count(cfg, kind, n_layers) -> int:
    """Layers of a config's `layer_types` list with this kind ("sliding_attention")."""
    types = cfg["layer_types"]
    if not isinstance(types, list) or len(types) != n_layers:
        raise ValueError(f"config field 'layer_types' must list one type per layer ({n_layers}); got {types!r}")
    return sum(1 for t in types if t == kind)


FAMILIES = ("gpt2", "llama", "mistral", "mixtral", "qwen3", "qwen3_moe", "gemma2", "gemma3_text", "deepseek_v3")
"""The config.json `model_type`s `from_hf_config` reads (Hugging Face transformers' names)."""

_TIED_DEFAULT = {"gpt2": True, "gemma2": True, "gemma3_text": True}
"""transformers' default of tie_word_embeddings for a config that leaves it out (others: False)."""


def _field(cfg, key, minimum=1):
    """A whole-number config field; missing or not a whole number: ValueError naming the field."""
    if key not in cfg or cfg[key] is None:
        raise ValueError(f"config.json has no {key!r} (a whole number): it is needed for this model_type")
    return _check.integer(f"config field {key!r}", cfg[key], minimum)


def _optional(cfg, key, default, minimum=1):
    """A whole-number config field that transformers itself defaults when absent or null."""
    return default if cfg.get(key) is None else _check.integer(f"config field {key!r}", cfg[key], minimum)


def from_hf_config(config, name: str | None = None, source: str | None = None) -> ModelShape:
    """A ModelShape from a Hugging Face config.json: a dict, or a path to the file (its folder names
    the shape). The fields read and the refusals are those of `from_config_dict`."""
    if isinstance(config, (str, Path)):
        path = Path(config)
        try:
            cfg = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(f"config {str(path)!r} is not a readable config.json: {exc}") from None
        return from_config_dict(cfg, name or path.parent.name or path.name, source or f"config.json at {path}")
    return from_config_dict(config, name, source)


def from_config_dict(cfg, name=None, source=None) -> ModelShape:
    """A ModelShape from a parsed config.json (the page's pasted config runs this one, compiled to
    JavaScript). Reads what the `model_type`s of FAMILIES define: hidden_size, num_hidden_layers,
    num_attention_heads, num_key_value_heads, head_dim (Qwen3, Gemma), intermediate_size, vocab_size,
    max_position_embeddings, tie_word_embeddings, sliding_window with the layers it applies to
    (layer_types; Gemma 2 alternates, Gemma 3 has sliding_window_pattern), experts (num_local_experts
    or num_experts or n_routed_experts, num_experts_per_tok, n_shared_experts, moe_intermediate_size,
    first_k_dense_replace) and MLA (q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim,
    v_head_dim). A multimodal config's `text_config` is read (the vision tower is not counted).
    A required field that is missing, or a model_type it does not know, raises ValueError by name;
    a field transformers itself defaults (num_key_value_heads, head_dim, tie_word_embeddings) takes
    transformers' default."""
    if not isinstance(cfg, dict):
        raise ValueError(f"config must be a dict (a parsed config.json) or a path to one; got {type(cfg).__name__}")
    text = cfg.get("text_config")
    if isinstance(text, dict):
        merged = dict(text)
        if "model_type" not in merged:
            merged["model_type"] = cfg.get("model_type")
        cfg = merged
    kind = cfg.get("model_type")
    if kind == "gemma3":
        kind = "gemma3_text"
    if kind not in FAMILIES:
        raise ValueError(f"config field 'model_type' must be one of {', '.join(FAMILIES)}; got {kind!r}")
    name = str(name or cfg.get("_name_or_path") or kind)
    source = str(source or "config.json")
    tied = cfg.get("tie_word_embeddings", _TIED_DEFAULT.get(kind, False))
    if not isinstance(tied, bool):
        raise ValueError(f"config field 'tie_word_embeddings' must be true or false; got {tied!r}")
    if kind == "gpt2":
        d = _field(cfg, "n_embd")
        return ModelShape(
            name,
            _field(cfg, "vocab_size"),
            d,
            _field(cfg, "n_layer"),
            _field(cfg, "n_head"),
            _field(cfg, "n_head"),
            _optional(cfg, "n_inner", 4 * d),
            _field(cfg, "n_positions"),
            tied_embeddings=tied,
            gated_mlp=False,
            learned_positions=True,
            bias=True,
            source=source,
        )
    d = _field(cfg, "hidden_size")
    layers = _field(cfg, "num_hidden_layers")
    heads = _field(cfg, "num_attention_heads")
    kv_heads = _optional(cfg, "num_key_value_heads", heads)
    if heads % kv_heads:
        raise ValueError(
            f"config: num_attention_heads ({heads}) must be a multiple of num_key_value_heads ({kv_heads})"
        )
    gemma = kind in ("gemma2", "gemma3_text")
    head = _field(cfg, "head_dim") if gemma else _optional(cfg, "head_dim", None)
    if head is None and d % heads:
        raise ValueError(f"config: hidden_size ({d}) is not a multiple of num_attention_heads ({heads}); give head_dim")
    window = _optional(cfg, "sliding_window", None)
    window_layers = None
    if kind in ("qwen3", "qwen3_moe") and not cfg.get("use_sliding_window", False):
        window = None
    elif kind in ("qwen3", "qwen3_moe") and window is not None:
        window_layers = layers - _optional(cfg, "max_window_layers", layers, 0)
    if window is not None and "layer_types" in cfg:
        window_layers = _layer_count(cfg, "sliding_attention", layers)
    elif window is not None and kind == "gemma2":
        window_layers = (layers + 1) // 2  # layers 0, 2, 4, ... slide (transformers' Gemma2Config)
    elif window is not None and kind == "gemma3_text":
        pattern = _optional(cfg, "sliding_window_pattern", 6)
        window_layers = layers - layers // pattern  # every pattern-th layer is global
    experts, top_k, shared, dense, ff, ff_dense = 1, 1, 0, 0, _field(cfg, "intermediate_size"), 0
    if kind == "mixtral":
        experts, top_k = _field(cfg, "num_local_experts"), _field(cfg, "num_experts_per_tok")
    elif kind == "qwen3_moe":
        if _optional(cfg, "decoder_sparse_step", 1) != 1:
            raise ValueError("config field 'decoder_sparse_step' must be 1 (every layer a mixture of experts)")
        experts, top_k, ff_dense = _field(cfg, "num_experts"), _field(cfg, "num_experts_per_tok"), ff
        dense, ff = len(cfg.get("mlp_only_layers") or []), _field(cfg, "moe_intermediate_size")
    elif kind == "deepseek_v3":
        if _optional(cfg, "moe_layer_freq", 1) != 1:
            raise ValueError("config field 'moe_layer_freq' must be 1 (every layer after the dense ones a mixture)")
        experts, top_k, ff_dense = _field(cfg, "n_routed_experts"), _field(cfg, "num_experts_per_tok"), ff
        shared = _optional(cfg, "n_shared_experts", 0, 0)
        dense, ff = _optional(cfg, "first_k_dense_replace", 0, 0), _field(cfg, "moe_intermediate_size")
    if dense > layers:
        raise ValueError(f"config: {dense} dense first layers is more than num_hidden_layers ({layers})")
    if top_k > experts:
        raise ValueError(f"config: num_experts_per_tok ({top_k}) must be at most the number of experts ({experts})")
    mla = {}
    if kind == "deepseek_v3":
        head = _field(cfg, "qk_nope_head_dim")
        mla = dict(
            kv_lora_rank=_field(cfg, "kv_lora_rank"),
            q_lora_rank=_optional(cfg, "q_lora_rank", 0, 0),
            qk_rope_head_dim=_field(cfg, "qk_rope_head_dim"),
            v_head_dim=_field(cfg, "v_head_dim"),
        )
    return ModelShape(
        name,
        _field(cfg, "vocab_size"),
        d,
        layers,
        heads,
        kv_heads,
        ff,
        _field(cfg, "max_position_embeddings"),
        tied_embeddings=tied,
        gated_mlp=True,
        learned_positions=False,
        bias=bool(cfg.get("attention_bias", False)) if kind == "llama" else False,
        source=source,
        n_experts=experts,
        top_k=top_k,
        sliding_window=window,
        d_head=head,
        n_window_layers=window_layers,
        n_shared_experts=shared,
        n_dense_layers=dense,
        d_ff_dense=ff_dense,
        norms_per_layer=4 if gemma else 2,
        qk_norm=kind in ("qwen3", "qwen3_moe", "gemma3_text"),
        **mla,
    )


@functools.cache
def catalogue() -> dict:
    """hwlib/data/models.yaml: {"sources": {key: text}, "models": {name: row}}, each row a config.json's
    fields with its source key, aliases and the published parameter counts."""
    import yaml

    return yaml.safe_load(DATA_PATH.read_text(encoding="utf-8"))


def published(name: str) -> dict:
    """The parameter counts the source of a named shape states ({"total": 8.03e9, ...}; may be {})."""
    return dict(catalogue()["models"][get(name).name].get("published") or {})


def _load() -> tuple[dict, dict]:
    raw = catalogue()
    shapes, aliases = {}, {}
    for name, row in raw["models"].items():
        shapes[name] = from_hf_config(row["config"], name=name, source=raw["sources"][row["source"]])
        aliases.update({a: name for a in row.get("aliases", [])})
    return shapes, aliases


_MODELS, _ALIASES = _load()
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
    head_dim: int | None = None,
) -> ModelShape:
    """A shape from numbers. Defaults are Llama-style (SwiGLU, RoPE, no biases, untied head);
    n_kv_heads defaults to n_heads (plain multi-head attention), d_ff to 4·d_model, head_dim to
    d_model / n_heads (give it where a model's heads are not d/h wide, as Qwen3's and Gemma's). A mixture
    of experts: n_experts MLPs of width d_ff per layer, top_k of them per token (1 ≤ top_k ≤ n_experts).
    Richer shapes (hybrid sliding windows, MLA, shared experts) come from `from_hf_config`."""
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
    head = None if head_dim is None else _check.integer("head_dim", head_dim)
    if head is None and dims["d_model"] % dims["n_heads"]:
        raise ValueError(f"d_model ({d_model}) must be a multiple of n_heads ({n_heads}), or give head_dim")
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
        d_head=head,
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
