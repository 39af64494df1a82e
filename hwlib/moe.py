"""Mixture-of-experts shapes: total vs active parameters, and the all-to-all of expert parallelism.

An MoE layer replaces the dense MLP with E experts and a router that sends each token to k of them
(plus any shared experts every token uses). Memory follows the TOTAL parameter count (every expert
must be stored); FLOPs follow the ACTIVE count (each token runs through k experts only):
forward ≈ 2 · N_active FLOP per token, training ≈ 6 · N_active · D. Shapes (with sources) are the
configs of ``hwlib/data/models.yaml``, read by ``hwlib.models`` (the one home of every shape); tests check the counts against Mixtral 8x7B's 46.7B / 12.9B and
DeepSeek-V3's 671B / 37B. Chapter 7 "Expert parallelism"; Lepikhin et al. 2021 (GShard).

>>> m = get("Mixtral 8x7B")
>>> round(m.total_params() / 1e9, 1), round(m.active_params() / 1e9, 1)
(46.7, 12.9)
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from . import _check, memory, models

FORMULAS = {
    "MoEShape.total_params": "N_total = every expert + attention + embeddings",
    "MoEShape.active_params": "N_active = k routed + shared experts + attention + embeddings",
    "MoEShape.weights_bytes": "W = N_total·b",
    "MoEShape.forward_flops_per_token": "F = 2·N_active",
    "all_to_all_bytes": "A = 4·T·k·d·b·(P−1)/P per MoE layer (fwd + bwd)",
    "expert_parallel_step.all_to_all_s": "t_a2a = A / β_link",
    "expert_parallel_step.compute_s": "t_c = 18·T·k·d·d_ff / (u·π)",
    "binding_bandwidth": "β* = 2/9 · b · (P−1)/P · u·π / d_ff",
}
"""The formula each function of this module evaluates, as the calculators print it (the one copy)."""

NAMES = ("Mistral 7B", "Mixtral 8x7B", "DeepSeek-V3")
"""The shapes of hwlib.models this module offers: the dense Mistral 7B the MoE grew from and two
mixtures (GQA and MLA attention, with and without shared experts and dense first layers)."""


@dataclass(frozen=True)
class MoEShape:
    """A decoder-only transformer whose MLPs (after the first n_dense_layers) are MoE layers.
    Llama-style blocks: RMSNorm, no biases, SwiGLU experts (3 matrices), untied output head."""

    name: str
    vocab_size: int
    d_model: int
    n_layers: int
    n_dense_layers: int
    d_ff_dense: int
    d_ff_expert: int
    n_experts: int  # routed experts per MoE layer
    n_shared_experts: int  # experts every token uses
    top_k: int  # routed experts per token
    attention: dict  # {"kind": "gqa", n_heads, n_kv_heads, head_dim} or {"kind": "mla", ...}
    sliding_window: int | None = None
    source: str = ""
    published: dict | None = None

    @property
    def n_moe_layers(self) -> int:
        return self.n_layers - self.n_dense_layers

    def attention_params(self) -> int:
        """One layer. GQA: W_q, W_o are d × h·d_h; W_k, W_v are d × h_kv·d_h. MLA (DeepSeek-V2 §2.1):
        W_DQ d × r_q (+ norm), W_UQ r_q × h(d_nope + d_rope), W_DKV d × (r_kv + d_rope) (+ norm),
        W_UKV r_kv × h(d_nope + d_v), W_O h·d_v × d."""
        a, d = self.attention, self.d_model
        if a["kind"] == "gqa":
            return 2 * d * a["n_heads"] * a["head_dim"] + 2 * d * a["n_kv_heads"] * a["head_dim"]
        h, rq, rkv = a["n_heads"], a["q_lora_rank"], a["kv_lora_rank"]
        nope, rope, v = a["qk_nope_head_dim"], a["qk_rope_head_dim"], a["v_head_dim"]
        return d * rq + rq + rq * h * (nope + rope) + d * (rkv + rope) + rkv + rkv * h * (nope + v) + h * v * d

    def expert_params(self) -> int:
        """One SwiGLU expert: 3 · d · d_ff_expert."""
        return 3 * self.d_model * self.d_ff_expert

    def moe_layer_params(self) -> int:
        """(E + shared) experts and the router (d × E) of one MoE layer."""
        return (self.n_experts + self.n_shared_experts) * self.expert_params() + self.d_model * self.n_experts

    def _common(self) -> int:
        """Embedding + untied head (2·V·d), attention and 2 RMSNorms per layer, a final norm, dense MLPs."""
        return (
            2 * self.vocab_size * self.d_model
            + self.n_layers * (self.attention_params() + 2 * self.d_model)
            + self.d_model
            + self.n_dense_layers * 3 * self.d_model * self.d_ff_dense
        )

    def total_params(self) -> int:
        """Every weight stored: what memory is sized by."""
        return self._common() + self.n_moe_layers * self.moe_layer_params()

    def active_params(self) -> int:
        """Weights one token uses: the shared part, k routed + the shared experts, the router."""
        per_layer = (self.top_k + self.n_shared_experts) * self.expert_params() + self.d_model * self.n_experts
        return self._common() + self.n_moe_layers * per_layer

    def forward_flops_per_token(self) -> float:
        """2 · N_active FLOP (attention over the context excluded, as in 2ND)."""
        return 2.0 * self.active_params()

    def weights_bytes(self, dtype="bf16") -> float:
        """N_total × bytes per value: every expert has to be in memory somewhere."""
        return memory.weights_bytes(self.total_params(), dtype)


def _view(m) -> MoEShape:
    """A MoEShape of a `hwlib.models` shape: the same numbers, read from the one config."""
    if m.mla:
        attention = {
            "kind": "mla",
            "n_heads": m.n_heads,
            "q_lora_rank": m.q_lora_rank,
            "kv_lora_rank": m.kv_lora_rank,
            "qk_nope_head_dim": m.head_dim,
            "qk_rope_head_dim": m.qk_rope_head_dim,
            "v_head_dim": m.v_head_dim,
        }
    else:
        attention = {"kind": "gqa", "n_heads": m.n_heads, "n_kv_heads": m.n_kv_heads, "head_dim": m.head_dim}
    mixture = m.n_experts > 1
    return MoEShape(
        m.name,
        vocab_size=m.vocab_size,
        d_model=m.d_model,
        n_layers=m.n_layers,
        n_dense_layers=m.n_dense_layers if mixture else m.n_layers,
        d_ff_dense=(m.d_ff_dense or m.d_ff) if mixture else m.d_ff,
        d_ff_expert=m.d_ff,
        n_experts=m.n_experts,
        n_shared_experts=m.n_shared_experts,
        top_k=m.top_k,
        attention=attention,
        sliding_window=m.sliding_window,
        source=m.source,
        published=models.published(m.name),
    )


@functools.lru_cache(maxsize=1)
def _load() -> tuple[dict, dict]:
    shapes = {name: _view(models.get(name)) for name in NAMES}
    lookup = {_check.normalize(a): t for a, t in models._ALIASES.items() if t in shapes}
    lookup.update({_check.normalize(n): n for n in shapes})
    return shapes, lookup


def names() -> list[str]:
    """Canonical names of the built-in shapes."""
    return list(_load()[0])


def get(name) -> MoEShape:
    """A built-in shape by name ("mixtral", "DeepSeek-V3"); unknown -> KeyError with the accepted names."""
    if isinstance(name, MoEShape):
        return name
    shapes, lookup = _load()
    key = _check.normalize(name) if isinstance(name, str) else ""
    if key in lookup:
        return shapes[lookup[key]]
    return shapes[_check.choice("MoE model", name, list(shapes), error=KeyError)]


def all_to_all_bytes(tokens_per_device, d_model, top_k, n_devices, dtype="bf16", training=True):
    """Bytes one device sends per MoE layer per step in expert parallelism over `n_devices`:

        A = 2 · T · k · d · b · (P − 1) / P      (forward: dispatch + combine)
    and twice that with the backward pass (training=True). T tokens per device, each sent to k
    experts, d values of b bytes; with uniform routing a fraction (P−1)/P of the copies leaves the
    device. Received bytes are the same. Source: GShard (Lepikhin et al. 2021) dispatch/combine;
    DeepSeek-V3 report §3.2 (dispatch and combine all-to-all).
    """
    t = _check.positive("tokens_per_device", tokens_per_device)
    d = _check.integer("d_model", d_model)
    k = _check.integer("top_k", top_k)
    p = _check.integer("n_devices", n_devices)
    b = memory.element_bytes("dtype", dtype)
    return (4.0 if training else 2.0) * t * k * d * b * (p - 1) / p


def expert_flops(tokens_per_device, shape, training=True) -> float:
    """Expert FLOPs per MoE layer per device: T · k · 2 · 3 · d · d_ff (×3 with the backward pass)."""
    s = get(shape)
    t = _check.positive("tokens_per_device", tokens_per_device)
    return (3.0 if training else 1.0) * t * s.top_k * 2.0 * s.expert_params()


def expert_parallel_step(
    shape, tokens_per_device, n_devices, gpu, link_bandwidth, mfu=0.4, dtype="bf16", training=True
) -> dict:
    """Per MoE layer: all-to-all time A / β_link vs expert compute time F / (u · π). The all-to-all
    binds when its time is the larger. `link_bandwidth` is bytes/s ONE WAY per device (NVLink4:
    450e9; a 400 Gb/s InfiniBand NIC per GPU: 50e9). Both scale with T, so the verdict does not depend
    on the batch (``binding_bandwidth``)."""
    from . import specs

    s = get(shape)
    acc = specs.get(gpu) if isinstance(gpu, str) else gpu
    peak = acc.peak_flops(acc.default_precision())
    comm = all_to_all_bytes(tokens_per_device, s.d_model, s.top_k, n_devices, dtype, training)
    comm_s = comm / _check.positive("link_bandwidth", link_bandwidth)
    compute_s = expert_flops(tokens_per_device, s, training) / (_check.fraction("mfu", mfu) * peak)
    return {
        "all_to_all_bytes": comm,
        "all_to_all_s": comm_s,
        "compute_s": compute_s,
        "ratio": comm_s / compute_s,
        "bound": "all-to-all" if comm_s > compute_s else "compute",
        "binding_bandwidth": binding_bandwidth(s, acc, n_devices, mfu, dtype, training),
    }


def binding_bandwidth(shape, gpu, n_devices, mfu=0.4, dtype="bf16", training=True) -> float:
    """The one-way link bandwidth below which the all-to-all outlasts the expert matmuls: bytes sent
    over FLOPs done, A / F = (4 or 2) · b · (P−1)/P / ((18 or 6) · d_ff), times u · π:
    β* = 2/9 · b · (P − 1)/P · u · π / d_ff for training, 1/3 · ... for a forward pass  [bytes/s].
    Fine-grained experts (small d_ff, as in DeepSeek-V3) raise it: less compute per byte sent."""
    from . import specs

    s = get(shape)
    acc = specs.get(gpu) if isinstance(gpu, str) else gpu
    peak = acc.peak_flops(acc.default_precision())
    p = _check.integer("n_devices", n_devices)
    b = memory.element_bytes("dtype", dtype)
    factor = 4.0 / 18.0 if training else 2.0 / 6.0
    return factor * b * (p - 1) / p * _check.fraction("mfu", mfu) * peak / s.d_ff_expert


def table(names_: list[str] | None = None) -> list[dict]:
    """One dict per shape: total and active parameters, their ratio, bf16 weights, FLOP per token."""
    rows = []
    for s in (get(n) for n in (names_ or names())):
        rows.append(
            {
                "name": s.name,
                "total_params": s.total_params(),
                "active_params": s.active_params(),
                "active_fraction": s.active_params() / s.total_params(),
                "weights_bf16": s.weights_bytes("bf16"),
                "flops_per_token": s.forward_flops_per_token(),
                "n_experts": s.n_experts,
                "top_k": s.top_k,
                "n_shared_experts": s.n_shared_experts,
            }
        )
    return rows
