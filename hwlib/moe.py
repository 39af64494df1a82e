"""Mixture-of-experts arithmetic beyond the shape: the all-to-all of expert parallelism.

An MoE layer replaces the dense MLP with E experts and a router that sends each token to k of them
(plus any shared experts every token uses). Memory follows the TOTAL parameter count (every expert
must be stored); FLOPs follow the ACTIVE count (each token runs through k experts only):
forward ≈ 2 · N_active FLOP per token, training ≈ 6 · N_active · D. Both counts are methods of the one
shape, `hwlib.models.ModelShape` (`n_params`, `n_active_params`, `expert_params`, `router_params`),
read from the configs of ``hwlib/data/models.yaml``; `get` returns that shape. This module adds what
spreading the experts over devices costs: the dispatch/combine all-to-all, its time against the
expert matmuls, and the link bandwidth at which it binds. Chapter 7 "Expert parallelism";
Lepikhin et al. 2021 (GShard).

>>> m = get("Mixtral 8x7B")
>>> round(m.n_params() / 1e9, 1), round(m.n_active_params() / 1e9, 1)
(46.7, 12.9)
"""

from __future__ import annotations

from . import _check, flops, memory, models

FORMULAS = {
    "all_to_all_bytes": "A = 4·T·k·d·b·(P−1)/P per MoE layer (fwd + bwd)",
    "expert_parallel_step.all_to_all_s": "t_a2a = A / β_link",
    "expert_parallel_step.compute_s": "t_c = 18·T·k·d·d_ff / (u·π)",
    "binding_bandwidth": "β* = 2/9 · b · (P−1)/P · u·π / d_ff",
}
"""The formula each function of this module evaluates, as the calculators print it (the one copy).
Parameter counts, weights and forward FLOPs are `hwlib.models.FORMULAS`, `memory.FORMULAS`, `flops.FORMULAS`."""

NAMES = ("Mistral 7B", "Mixtral 8x7B", "DeepSeek-V3")
"""The shapes of hwlib.models this module offers: the dense Mistral 7B the MoE grew from and two
mixtures (GQA and MLA attention, with and without shared experts and dense first layers)."""

MoEShape = models.ModelShape
"""Deprecated alias: the same class as `hwlib.models.ModelShape` (`n_params`, `n_active_params`,
`d_ff`), kept so that code naming `hwlib.moe.MoEShape` still imports."""


def _lookup() -> dict:
    """{normalized name or alias: canonical name} of the NAMES shapes."""
    lookup = {_check.normalize(a): t for a, t in models._ALIASES.items() if t in NAMES}
    lookup.update({_check.normalize(n): n for n in NAMES})
    return lookup


def names() -> list[str]:
    """Canonical names of the built-in shapes."""
    return list(NAMES)


def get(name) -> models.ModelShape:
    """The `hwlib.models.ModelShape` of a built-in shape by name ("mixtral", "DeepSeek-V3"), or a shape
    itself; unknown -> KeyError with the accepted names."""
    if isinstance(name, models.ModelShape):
        return name
    lookup = _lookup()
    key = _check.normalize(name) if isinstance(name, str) else ""
    if key in lookup:
        return models.get(lookup[key])
    return models.get(_check.choice("MoE model", name, list(NAMES), error=KeyError))


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
    return factor * b * (p - 1) / p * _check.fraction("mfu", mfu) * peak / s.d_ff


def table(names_: list[str] | None = None) -> list[dict]:
    """One dict per shape: total (`ModelShape.n_params`) and active (`ModelShape.n_active_params`)
    parameters, their ratio, bf16 weights N·2 B (`memory.weights_bytes`) and forward FLOP per token
    2·N_active (`flops.forward_flops` of one token)."""
    rows = []
    for s in (get(n) for n in (names_ or names())):
        total, active = s.n_params(), s.n_active_params()
        rows.append(
            {
                "name": s.name,
                "total_params": total,
                "active_params": active,
                "active_fraction": active / total,
                "weights_bf16": memory.weights_bytes(total, "bf16"),
                "flops_per_token": flops.forward_flops(active, 1),
                "n_experts": s.n_experts,
                "top_k": s.top_k,
                "n_shared_experts": s.n_shared_experts,
            }
        )
    return rows
