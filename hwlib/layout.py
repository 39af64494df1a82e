"""Parallel layouts for training: which TP × CP × PP × DP (ZeRO stage) × EP split of a cluster fits in
memory and how long its optimizer step takes, and the communication-bound condition of each strategy.

A layout cuts G GPUs into t (tensor) × c (context) × p (pipeline) × d (data) groups, t·c·p·d = G, with
e (expert) parallelism carved out of the data-parallel ranks (e divides d·c). Ranks are ordered as
Megatron-LM orders them, tensor innermost, then context, then data, then pipeline: a group of t·c
consecutive ranks sits in one NVLink domain when t·c ≤ the domain size, and the data-parallel and
pipeline neighbours sit in other nodes once t·c (resp. t·c·d) reaches it.

Per GPU, for the heaviest pipeline stage (⌈L/p⌉ layers, plus the embedding on the first stage or the
output head and the fp32 logits on the last):

    memory   M = weights + gradients + optimizer (ZeRO stage z over the data group) + ZeRO-3 gather
               buffers + activations × micro-batches in flight (GPipe: m; 1F1B: min(p, m);
               interleaved: min(p, m)·(1 + (p−1)/(p·v))) + logits
    time     t = (m + (p−1)/v)·t_mb + exposed data-parallel traffic + pipeline P2P,
             t_mb = compute + TP collectives + CP K/V all-gathers + (1 − f_EP)·EP all-to-alls
               (+ exposed ZeRO-3 gathers and ZeRO-2 reduce-scatters of each micro-batch)

What overlaps (stated, not measured): TP and CP collectives sit on the critical path (Megatron-LM's
default); EP all-to-alls hide a fraction `ep_overlap` (DualPipe: all of it); the gradient reduce of
ZeRO 0–2 hides only behind the backward pass of the LAST micro-batch (the earlier ones produce no
finished gradients to send, which is why gradient accumulation leaves DDP's overlap to one micro-batch);
ZeRO-3 gathers each layer's weights again for every micro-batch, forward and backward, prefetched
behind that micro-batch's compute, so its traffic grows with the number of micro-batches. Every
collective is a ring with (N−1) latency steps of α each.

FSDP with full sharding is ZeRO-3 here (FSDP's SHARD_GRAD_OP is ZeRO-2); Megatron-LM's distributed
optimizer is ZeRO-1.

Sources: Narayanan et al. 2021 (Megatron-LM at scale: PTD-P, interleaved schedule, rank order,
bubble (p−1)/(v·m)); Korthikanti et al. 2022 (activations, sequence parallelism, in-flight
micro-batches of 1F1B and interleaving, §4.2.3); Rajbhandari et al. 2020 (ZeRO); Dubey et al. 2024
(Llama 3: CP by all-gathering K and V, §3.3.2); DeepSeek-AI 2024 (DeepSeek-V3: EP all-to-all, DualPipe);
Austin et al. 2025, "How to Scale Your Model" (the communication-bound conditions); chapter 7.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

import yaml

from . import _check, memory, models, parallel, specs

FORMULAS = {
    "stage_layers": "L_s = ⌈L / p⌉  (the heaviest stage sets memory and pace)",
    "evaluate.micro_batches": "m = B / (d·b)  (sequences per step / (data ranks × micro-batch))",
    "in_flight": "n = m (GPipe), min(p, m) (1F1B), min(p, m)·(1 + (p−1)/(p·v)) (interleaved)",
    "evaluate.weights": "W = 2 B·N_gpu / (z = 3 ? D : 1),  N_gpu = L_s·(N_dense/t + N_exp/(t·e)) + N_emb/t",
    "evaluate.gradients": "Gr = 2·N_gpu / (z ≥ 2 ? D : 1)",
    "evaluate.optimizer": "O = 12·N_gpu / (z ≥ 1 ? D : 1)",
    "evaluate.gather_buffers": "B_z3 = (1 + 1 prefetched)·2 B·N_layer/t  (ZeRO-3 only)",
    "evaluate.activations": "A = n × L_s × a_layer(s/c, b, t, recompute)",
    "evaluate.logits": "Z = (s/c)·b·V·4 / t  (last stage)",
    "evaluate.memory": "M = W + Gr + O + B_z3 + A + Z ≤ (M_GPU − C_ctx)/(1 + f)",
    "evaluate.compute": "t_comp = max(L_s·F_l, (L·F_l + 6·V·d·T)/p) / (t·c) / (π·η),  F_l = T·(6·N_l + 3·F_attn + recompute)",
    "evaluate.tp": "t_TP = 4·L_s·2(t−1)/t·(s/c)·b·h·2 B / β_TP  (×1.5 with full recompute)",
    "evaluate.cp": "t_CP = 2·L_s·(c−1)/c·2·s·b·h_kv/t·d_head·2 B / β_CP",
    "evaluate.ep": "t_EP = 4·L_moe,s·(e−1)/e·T·k·h·2 B / β_EP,  T = b·s/(c·t)",
    "evaluate.dp_traffic": "t_DP = k·R,  R = (D−1)/D·2 B·N_gpu/β_DP + (D−1)·α,  k = 2 (ZeRO-0/1), m + 1 (ZeRO-2), 3·m (ZeRO-3)",
    "evaluate.dp_exposed": (
        "ZeRO-0: (2R − φ·t_c)⁺;  1: (R − φ·t_c)⁺ + (R − (1−φ)·t_c)⁺;  "
        "2: m·(R − φ·t_c)⁺ + (R − (1−φ)·t_c)⁺;  3: m·[(R − (1−φ)·t_c)⁺ + (2R − φ·t_c)⁺]"
    ),
    "evaluate.bubble": "t_bubble = (p−1)/(v·m) × m·t_mb",
    "evaluate.p2p": "t_P2P = 2·v·m·(s/c)·b·h·2 B/t / β_PP",
    "evaluate.step": "t = (m + (p−1)/v)·t_mb + t_DP,exposed + t_P2P,  t_mb = t_c + t_TP + t_CP + (1 − f_EP)·t_EP (+ per-micro-batch ZeRO-2/3)",
    "evaluate.mfu": "MFU = (6·N_active·D_tokens + attention) / (t · G · π)",
    "evaluate.hfu": "HFU = MFU + recomputed FLOPs / (t · G · π)  (full: + 2·N_active·D_tokens + attention)",
    "tp_critical_width": "f/t ≥ (2/g)·(t−1)/t · π/β  (g = 3 SwiGLU, 2 GELU matrices)",
    "fsdp_critical_tokens": "T_mb ≥ π/β  (tokens per GPU per micro-batch; ZeRO-3)",
    "dp_critical_tokens": "T_step ≥ π/β  (tokens per GPU per step, hidden behind the backward pass)",
    "ep_critical_width": "f_expert ≥ (2/g)·(e−1)/e · π/β",
    "pp_micro_batches_for_bubble": "m ≥ (p−1)/(v·ε)",
}
"""The formula each quantity of a layout evaluates, as `hwlib plan-layout` prints it (the one copy)."""

SCHEDULES = ("gpipe", "1f1b", "interleaved")
RECOMPUTE = memory.RECOMPUTE
ZERO_STAGES = (0, 1, 2, 3)
OPTIMIZER_BYTES = 12.0
"""Mixed-precision Adam: an fp32 master copy and two fp32 moments per parameter (Rajbhandari et al. 2020)."""
NET_LATENCY_S = 5e-6
"""α, the latency of one ring step between nodes: a few µs for an InfiniBand hop through NCCL. An
order-of-magnitude assumption (it only matters for rings of hundreds of ranks), not a measurement."""
NVLINK_LATENCY_S = 1e-6
"""α for one ring step inside an NVLink domain: about 1 µs; an assumption of the same kind."""
EFFICIENCY = 0.6
"""η, the fraction of the dense peak the matrix multiplications of one GPU reach when nothing waits
on communication: an assumption (large BF16 GEMMs on an H100 reach 60–75 % of the datasheet peak);
give the value you measured. The planner's MFU is η times what communication and the bubble leave."""
BACKWARD_FRACTION = 2.0 / 3.0
"""φ: the backward pass is 4 of the 6 FLOPs per parameter and token."""


@dataclass(frozen=True)
class Cluster:
    """G GPUs of one kind (`gpu`, a spec-sheet name) in NVLink domains of `nvlink_domain` GPUs, each GPU
    with its own network link of `inter_node_bandwidth` bytes/s per direction (a rail-optimised fabric:
    one NIC per GPU; 50e9 = 400 Gb/s InfiniBand NDR). `nvlink_bandwidth` overrides the spec sheet's
    per-direction NVLink (an H800's cut-down NVLink, a measured bus bandwidth); `precision` picks the
    peak π and `efficiency` is η, the fraction of it the matmuls reach (`EFFICIENCY`)."""

    gpu: str
    n_gpus: int
    nvlink_domain: int = 8
    inter_node_bandwidth: float = 50e9  # 400 Gb/s InfiniBand NDR per GPU
    nvlink_bandwidth: float | None = None  # per direction; None: the spec sheet's figure
    precision: str = "bf16"
    efficiency: float = EFFICIENCY

    def __post_init__(self):
        specs.get(self.gpu)  # raises naming the accelerator
        _check.integer("n_gpus", self.n_gpus)
        _check.integer("nvlink_domain", self.nvlink_domain)
        _check.positive("inter_node_bandwidth", self.inter_node_bandwidth)
        if self.nvlink_bandwidth is not None:
            _check.positive("nvlink_bandwidth", self.nvlink_bandwidth)
        _check.fraction("efficiency", self.efficiency)
        specs.get(self.gpu).peak_flops(self.precision)

    @property
    def accelerator(self):
        return specs.get(self.gpu)

    @property
    def peak(self) -> float:
        return self.accelerator.peak_flops(self.precision)

    @property
    def nvlink(self) -> float:
        if self.nvlink_bandwidth is not None:
            return self.nvlink_bandwidth
        bw = self.accelerator.interconnect_bandwidth
        return bw if bw is not None else self.inter_node_bandwidth

    def link(self, group_span: int):
        """(bandwidth, α) of a ring whose ranks lie within `group_span` consecutive GPUs."""
        if group_span <= self.nvlink_domain:
            return self.nvlink, NVLINK_LATENCY_S
        return self.inter_node_bandwidth, NET_LATENCY_S


@dataclass(frozen=True)
class Layout:
    """One way to split the cluster. tp·cp·pp·dp = G; ep divides dp·cp; v = model chunks per GPU."""

    tp: int = 1
    cp: int = 1
    pp: int = 1
    dp: int = 1
    ep: int = 1
    zero: int = 1
    recompute: str = "none"
    schedule: str = "1f1b"
    v: int = 1
    micro_batch: int = 1

    def degrees(self) -> tuple:
        return (self.tp, self.cp, self.pp, self.dp, self.ep)

    def label(self) -> str:
        parts = [f"TP{self.tp}", f"CP{self.cp}", f"PP{self.pp}", f"DP{self.dp}"]
        if self.ep > 1:
            parts.append(f"EP{self.ep}")
        sched = "" if self.pp == 1 else f" {self.schedule}" + (f" v={self.v}" if self.schedule == "interleaved" else "")
        return " × ".join(parts) + f" ZeRO-{self.zero} recompute={self.recompute}{sched} b={self.micro_batch}"


@dataclass
class Plan:
    """A layout evaluated: memory (bytes per GPU, heaviest stage) and time (seconds per step)."""

    layout: Layout
    memory: dict
    time: dict
    mfu: float
    fits: bool
    reason: str = ""
    numbers: dict = field(default_factory=dict)

    @property
    def step_s(self) -> float:
        return self.time["step"]

    def document(self) -> dict:
        """SI values and the formula of each, for --json."""
        return {
            "layout": asdict(self.layout),
            "label": self.layout.label(),
            "fits": self.fits,
            "reason": self.reason,
            "memory_bytes": self.memory,
            "time_s": self.time,
            "mfu": self.mfu,
            "numbers": self.numbers,
        }


# --------------------------------------------------------------------------- model pieces


def _layer_params(model: models.ModelShape) -> tuple[float, float]:
    """(dense, expert) parameters of one transformer layer of the heaviest kind: attention, norms,
    dense MLP or shared experts and router (dense part) and the routed experts (expert part)."""
    attn = model.attention_params() + model.norms_per_layer * model.d_model
    if model.n_experts == 1:
        return float(attn + model.mlp_params()), 0.0
    dense = attn + model.n_shared_experts * model.expert_params() + model.router_params()
    return float(dense), float(model.n_experts * model.expert_params())


def _layer_active_params(model: models.ModelShape) -> float:
    attn = model.attention_params() + model.norms_per_layer * model.d_model
    return float(attn + (model.active_mlp_params() if model.n_experts > 1 else model.mlp_params()))


def _layer_activation(model, seq, micro_batch, tp, recompute) -> float:
    """Activations one layer keeps for one micro-batch of `seq` tokens per GPU  [bytes]
    (`memory.activation_bytes`, FlashAttention, sequence parallelism, dropout for GPT-style shapes;
    full recompute keeps the layer's input, 2·s·b·h/t with sequence parallelism)."""
    if recompute == "full":  # only each layer's input, sequence-parallel: split over the t GPUs
        return 2.0 * seq * micro_batch * model.d_model / tp
    width = (model.top_k + model.n_shared_experts) * model.d_ff if model.n_experts > 1 else model.d_ff
    return memory.activation_bytes(
        seq,
        micro_batch,
        model.d_model,
        1,
        model.n_heads,
        tp,
        recompute,
        True,
        dropout=bool(model.bias),
        attention="flash",
        ffn_hidden=width,
        gated_mlp=bool(model.gated_mlp),
    )


def stage_layers(n_layers: int, pp: int) -> int:
    """L_s = ⌈L / p⌉: layers of the heaviest pipeline stage (uneven splits allowed, as Llama 3's 126
    layers over 16 stages; the slowest stage sets the pace)."""
    return math.ceil(_check.integer("n_layers", n_layers) / _check.integer("pp", pp))


def in_flight(schedule: str, pp: int, m: int, v: int = 1) -> float:
    """Micro-batches whose activations the first stage holds at once: GPipe m (all forwards before any
    backward), 1F1B min(p, m), interleaved min(p, m)·(1 + (p−1)/(p·v)) (Korthikanti et al. 2022 §4.2.3;
    Narayanan et al. 2021 §2.2). One without a pipeline."""
    s = _check.choice("schedule", schedule, SCHEDULES)
    if pp == 1:
        return 1.0
    if s == "gpipe":
        return float(m)
    base = float(min(pp, m))
    return base * (1.0 + (pp - 1) / (pp * v)) if s == "interleaved" else base


def ring_time(n_bytes: float, n: int, bandwidth: float, alpha: float) -> float:
    """A ring reduce-scatter or all-gather of n bytes in total over N ranks: (N−1)/N·n/β + (N−1)·α [s]."""
    if n <= 1 or n_bytes <= 0:
        return 0.0
    return parallel.ring_allgather_time_s(n_bytes, n, bandwidth, alpha)


# --------------------------------------------------------------------------- one layout


def evaluate(
    model,
    cluster: Cluster,
    layout: Layout,
    seq_len: int,
    global_sequences: int,
    ep_overlap: float = 0.0,
    allow_tp_across_nodes: bool = False,
):
    """Memory per GPU [bytes] and step time [s] of one layout: a `Plan` for the heaviest pipeline stage.

    memory  M = W + Gr + O + B_z3 + A + Z (FORMULAS["evaluate.memory"]): ZeRO stage z shards optimizer
            (z ≥ 1), gradients (z ≥ 2) and weights (z = 3) over the D = d·c data ranks (experts over
            d·c/e); A = in-flight micro-batches × ⌈L/p⌉ layers × `memory.activation_bytes` per layer at
            s/c tokens; fits when M ≤ `memory.usable_bytes` of the GPU.
    time    t = (m + (p−1)/v)·t_mb + t_DP,exposed + t_P2P (FORMULAS["evaluate.step"]); t_mb holds the
            compute at η·π, the TP and CP collectives and the unhidden EP all-to-all; the data-parallel
            reduce hides behind the backward pass of the last micro-batch only (ZeRO-3's gathers behind
            each micro-batch's own compute).
    MFU     (6·N_active + 3·F_attn)·tokens / (t·G·π); HFU adds the recomputed FLOPs (numbers["hfu"]).

    `ep_overlap` is the fraction of the all-to-all hidden behind compute (DeepSeek-V3's DualPipe: 1).
    Sources: the module docstring. Raises ValueError naming the problem when the layout is not a
    valid split (`validity` gives the reason without raising)."""
    model = models.get(model) if isinstance(model, str) else model
    why = validity(model, cluster, layout, seq_len, global_sequences, allow_tp_across_nodes)
    if why:
        raise ValueError(why)
    t, c, p, d, e = layout.degrees()
    b, z, rc = layout.micro_batch, layout.zero, layout.recompute
    v = layout.v if layout.schedule == "interleaved" and p > 1 else 1
    m = global_sequences // (d * b)
    ls = stage_layers(model.n_layers, p)
    moe_layers_stage = min(ls, model.n_moe_layers())
    dense_l, expert_l = _layer_params(model)
    emb_in = model.vocab_size * model.d_model + (model.max_context * model.d_model if model.learned_positions else 0)
    emb_out = model.vocab_size * model.d_model  # tied: both end stages hold a copy when p > 1
    d_dense, d_exp = d * c, max(1, d * c // e)  # gradient/ZeRO groups (Megatron reduces over DP×CP)
    s_gpu = seq_len / c
    h = model.d_model
    acc = cluster.accelerator
    capacity = acc.visible_memory_bytes()
    usable = memory.usable_bytes(capacity)

    def state(n_dense, n_exp):
        w = 2.0 * (n_dense / (d_dense if z >= 3 else 1) + n_exp / (d_exp if z >= 3 else 1))
        g = 2.0 * (n_dense / (d_dense if z >= 2 else 1) + n_exp / (d_exp if z >= 2 else 1))
        o = OPTIMIZER_BYTES * (n_dense / (d_dense if z >= 1 else 1) + n_exp / (d_exp if z >= 1 else 1))
        return w, g, o

    layer_dense_gpu = dense_l / t
    layer_exp_gpu = expert_l / (t * e)
    stack_dense = ls * layer_dense_gpu
    stack_exp = moe_layers_stage * layer_exp_gpu
    per_layer_act = _layer_activation(model, s_gpu, b, t, rc)
    work = _layer_activation(model, s_gpu, b, t, "none") if rc == "full" else 0.0
    gather = (2.0 * 2.0 * (layer_dense_gpu + layer_exp_gpu)) if z == 3 else 0.0
    stages = {}
    n_first = in_flight(layout.schedule, p, m, v)
    n_last = float(m) if (layout.schedule == "gpipe" and p > 1) else 1.0
    logits = memory.logits_bytes(s_gpu, b, model.vocab_size) / t
    if p == 1:
        ends = [("only", emb_in + (0 if model.tied_embeddings else emb_out), n_first, logits)]
    else:
        ends = [("first", emb_in, n_first, 0.0), ("last", emb_out, n_last, logits)]
    for name, extra, n_act, z_logits in ends:
        w, g, o = state(stack_dense + extra / t, stack_exp)
        act = n_act * ls * per_layer_act + work
        total = w + g + o + gather + act + z_logits
        stages[name] = {
            "weights": w,
            "gradients": g,
            "optimizer": o,
            "gather_buffers": gather,
            "activations": act,
            "logits": z_logits,
            "total": total,
        }
    worst = max(stages.values(), key=lambda s: s["total"])
    mem = dict(worst, capacity=capacity, usable=usable)
    n_gpu_params = stack_dense + stack_exp + max(emb_in, emb_out if p > 1 else 0) / t

    # time per micro-batch on the heaviest stage
    peak = cluster.peak * cluster.efficiency
    tokens_mb = b * seq_len  # tokens of one micro-batch (whole sequences), split over t·c GPUs
    active_l = _layer_active_params(model)
    attn_fwd_l = model.attention_flops_per_token(seq_len) / model.n_layers
    recompute_fwd = {"none": 0.0, "selective": attn_fwd_l, "full": 2.0 * active_l + attn_fwd_l}[rc]
    flops_layer = tokens_mb * (6.0 * active_l + 3.0 * attn_fwd_l + recompute_fwd)
    head_flops = 6.0 * emb_out * tokens_mb  # the output projection, on the last stage
    # the slowest stage: its whole layers, or an even share of layers and head when stages rebalance
    t_comp = max(ls * flops_layer, (model.n_layers * flops_layer + head_flops) / p) / (t * c) / peak
    bw_tp, a_tp = cluster.link(t)
    passes = 6 if rc == "full" else 4  # collectives per layer: 2 forward, 2 backward, 2 more when recomputing
    t_tp = 0.0
    if t > 1:
        act_bytes = s_gpu * b * h * 2.0
        t_tp = ls * passes * (2.0 * ring_time(act_bytes, t, bw_tp, a_tp))  # all-gather + reduce-scatter
    bw_cp, a_cp = cluster.link(t * c)
    t_cp = 0.0
    if c > 1:
        kv_heads = max(1.0, model.n_kv_heads / t)
        kv_bytes = seq_len * b * 2.0 * kv_heads * model.head_dim * 2.0
        t_cp = ls * (3 if rc == "full" else 2) * ring_time(kv_bytes, c, bw_cp, a_cp)
    t_ep = 0.0
    if e > 1 and moe_layers_stage:
        per_a2a = tokens_mb / (c * t) * model.top_k * h * 2.0 * (e - 1) / e
        in_node = max(1, min(e, cluster.nvlink_domain // (t * c)))
        intra, inter = (in_node - 1) / (e - 1), (e - in_node) / (e - 1)
        one = max(per_a2a * intra / cluster.nvlink, per_a2a * inter / cluster.inter_node_bandwidth)
        t_ep = moe_layers_stage * (6 if rc == "full" else 4) * one * (1.0 - ep_overlap)
    # data-parallel traffic: shard bytes of this GPU's parameters over the data group
    bw_dp, a_dp = cluster.link(t * c * d)
    dense_bytes = 2.0 * (stack_dense + max(emb_in, emb_out if p > 1 else 0) / t)
    exp_bytes = 2.0 * stack_exp
    r = ring_time(dense_bytes, d_dense, bw_dp, a_dp) + ring_time(exp_bytes, d_exp, bw_dp, a_dp)
    fwd, bwd = (1 - BACKWARD_FRACTION) * t_comp, BACKWARD_FRACTION * t_comp
    per_mb_exposed, dp_exposed = 0.0, 0.0
    if z == 0:
        dp_exposed = max(0.0, 2 * r - bwd)
    elif z == 1:
        dp_exposed = max(0.0, r - bwd) + max(0.0, r - fwd)
    elif z == 2:
        per_mb_exposed = max(0.0, r - bwd)
        dp_exposed = max(0.0, r - fwd)
    else:  # ZeRO-3 gathers layer by layer: one ring latency per layer and collective
        r3 = r + ls * ((d_dense - 1) + (d_exp - 1 if stack_exp else 0)) * a_dp
        per_mb_exposed = max(0.0, r3 - fwd) + max(0.0, 2 * r3 - bwd)
    t_mb = t_comp + t_tp + t_cp + t_ep + per_mb_exposed
    bubble = (p - 1) / v * t_mb
    bw_pp, _ = cluster.link(t * c * d * p if p > 1 else 1)
    t_p2p = 2.0 * v * m * s_gpu * b * h * 2.0 / t / bw_pp if p > 1 else 0.0
    step = m * t_mb + bubble + dp_exposed + t_p2p
    time = {
        "compute": m * t_comp,
        "tp": m * t_tp,
        "cp": m * t_cp,
        "ep": m * t_ep,
        "dp_exposed": dp_exposed + m * per_mb_exposed,
        "dp_traffic": r * ({0: 2, 1: 2, 2: m + 1, 3: 3 * m}[z]),
        "bubble": bubble,
        "p2p": t_p2p,
        "step": step,
    }
    model_flops = (
        global_sequences * seq_len * (6.0 * model.n_active_params() + 3.0 * model.attention_flops_per_token(seq_len))
    )
    mfu = model_flops / (step * cluster.n_gpus * cluster.peak)
    fits = mem["total"] <= usable
    reason = "" if fits else f"out of memory by {(mem['total'] - usable) / 2**30:.1f} GiB"
    numbers = {
        "micro_batches": m,
        "stage_layers": ls,
        "in_flight": n_first,
        "params_per_gpu": n_gpu_params,
        "data_group": d_dense,
        "tp_link": "NVLink" if t <= cluster.nvlink_domain else "network",
        "dp_link": "NVLink" if t * c * d <= cluster.nvlink_domain else "network",
        "bubble_fraction": parallel.pipeline_bubble_fraction(p, m, v) if p > 1 else 0.0,
    }
    # hardware FLOPs count the recomputed forward pass too (Korthikanti et al. 2022: HFU vs MFU)
    extra = {"none": 0.0, "selective": 1.0, "full": 1.0}[rc] * model.attention_flops_per_token(seq_len)
    extra += 2.0 * model.n_active_params() if rc == "full" else 0.0
    numbers["hfu"] = (model_flops + global_sequences * seq_len * extra) / (step * cluster.n_gpus * cluster.peak)
    return Plan(layout, mem, time, mfu, fits, reason, numbers)


def validity(
    model, cluster: Cluster, layout: Layout, seq_len: int, global_sequences: int, allow_tp_across_nodes=False
) -> str:
    """Why a layout is not a valid split of this model and cluster ("" when it is): the degrees must
    multiply to G, t must divide the heads, p may not exceed the layers, e must divide the experts and
    the data ranks, c must divide the sequence, the batch must split into d × b, and t stays in one
    NVLink domain unless allowed."""
    t, c, p, d, e = layout.degrees()
    g = cluster.n_gpus
    if t * c * p * d != g:
        return f"tp·cp·pp·dp = {t * c * p * d}, not the {g} GPUs"
    if model.n_heads % t:
        return f"tp={t} does not divide the {model.n_heads} attention heads"
    if t > cluster.nvlink_domain and not allow_tp_across_nodes:
        return f"tp={t} crosses the NVLink domain of {cluster.nvlink_domain} GPUs"
    if p > model.n_layers:
        return f"pp={p} exceeds the {model.n_layers} layers"
    if seq_len % c:
        return f"cp={c} does not divide the sequence of {seq_len} tokens"
    if e > 1 and model.n_experts == 1:
        return "ep > 1 needs a mixture-of-experts model"
    if e > 1 and (model.n_experts % e or (d * c) % e):
        return f"ep={e} must divide both the {model.n_experts} experts and the {d * c} data×context ranks"
    if global_sequences % (d * layout.micro_batch):
        return (
            f"the batch of {global_sequences} sequences does not split into dp={d} × micro-batch {layout.micro_batch}"
        )
    m = global_sequences // (d * layout.micro_batch)
    if layout.schedule == "interleaved" and p > 1:
        if stage_layers(model.n_layers, p) % layout.v:
            return f"v={layout.v} does not divide the {stage_layers(model.n_layers, p)} layers of a stage"
        if m % p:
            return f"interleaving needs the {m} micro-batches to be a multiple of pp={p}"
    return ""


# --------------------------------------------------------------------------- search


def _divisors(n: int) -> list[int]:
    return [k for k in range(1, n + 1) if n % k == 0]


def _powers_of_two(limit: int) -> list[int]:
    out, k = [], 1
    while k <= limit:
        out.append(k)
        k *= 2
    return out


@dataclass
class Search:
    """What `search` found: the plans that fit (fastest first, the best variant of each degree tuple),
    the degree tuples that fit in no variant with the reason (the smallest memory tried), and the
    reasons counted over every variant tried."""

    ranked: list
    rejected: list  # (degrees, reason)
    reasons: dict
    inputs: dict

    def rank_of(self, tp, cp, pp, dp, ep=1) -> int | None:
        """1-based rank of a degree tuple among the fitting ones, None if it does not fit."""
        for i, plan in enumerate(self.ranked, 1):
            if plan.layout.degrees() == (tp, cp, pp, dp, ep):
                return i
        return None

    def plan_of(self, tp, cp, pp, dp, ep=1):
        for plan in self.ranked:
            if plan.layout.degrees() == (tp, cp, pp, dp, ep):
                return plan
        return None

    def why_not(self, tp, cp, pp, dp, ep=1) -> str:
        for degrees, reason in self.rejected:
            if degrees == (tp, cp, pp, dp, ep):
                return reason
        return ""


def search(
    model,
    cluster: Cluster,
    seq_len: int,
    global_sequences: int,
    *,
    tp=None,
    cp=(1, 2, 4, 8, 16),
    pp=None,
    ep=None,
    zero=ZERO_STAGES,
    recompute=RECOMPUTE,
    schedules=SCHEDULES,
    micro_batches=(1, 2, 4, 8),
    virtual_stages=(2, 4, 8),
    ep_overlap: float = 0.0,
    allow_tp_across_nodes: bool = False,
) -> Search:
    """Enumerate TP × CP × PP × DP × EP degree tuples (t: divisors of G up to the heads; c: `cp`;
    p: divisors of G up to L; e: divisors of E) and, for each valid one, every ZeRO stage, recompute
    choice, schedule (v for interleaving) and micro-batch; keep the fastest variant that fits.
    Returns a `Search` ranked by step time (the same work for every layout, so also by MFU)."""
    model = models.get(model) if isinstance(model, str) else model
    s = _check.integer("seq_len", seq_len)
    nseq = _check.integer("global_sequences", global_sequences)
    f = _check.nonnegative("ep_overlap", ep_overlap)
    if f > 1:
        raise ValueError(f"ep_overlap must be a fraction in [0, 1]; got {ep_overlap!r}")
    g = cluster.n_gpus
    tps = [k for k in _divisors(g) if k <= model.n_heads] if tp is None else list(tp)
    pps = [k for k in _divisors(g) if k <= model.n_layers] if pp is None else list(pp)
    eps = ([k for k in _divisors(model.n_experts)] if model.n_experts > 1 else [1]) if ep is None else list(ep)
    for name, opts, allowed in (
        ("zero", zero, ZERO_STAGES),
        ("recompute", recompute, RECOMPUTE),
        ("schedules", schedules, SCHEDULES),
    ):
        bad = [o for o in opts if o not in allowed]
        if bad or not opts:
            raise ValueError(f"{name} must be a non-empty choice of {allowed}; got {list(opts)!r}")
    ranked: list = []
    rejected: list = []
    reasons: dict[str, int] = {}

    def count(reason):
        key = reason_kind(reason)
        reasons[key] = reasons.get(key, 0) + 1

    options = (zero, recompute, schedules, micro_batches, virtual_stages)
    for t, c, p, d, e in _degree_tuples(g, tps, cp, pps, eps):
        base = Layout(t, c, p, d, e)
        why = validity(model, cluster, base, s, nseq, allow_tp_across_nodes)
        if why:  # micro-batch 1 and 1F1B: if these fail, every variant does
            rejected.append((base.degrees(), why))
            count(why)
            continue
        best, smallest, last_why = _best_variant(
            model, cluster, base, s, nseq, f, allow_tp_across_nodes, options, count
        )
        if best is not None:
            ranked.append(best)
        elif smallest is not None:
            rejected.append((base.degrees(), f"{smallest.reason} (smallest variant: {smallest.layout.label()})"))
        else:
            rejected.append((base.degrees(), last_why))
            count(last_why)
    ranked.sort(key=lambda plan: (plan.step_s, plan.memory["total"]))
    inputs = {"model": model.name, "gpu": cluster.accelerator.name, "n_gpus": g, "seq_len": s, "global_sequences": nseq}
    return Search(ranked, rejected, reasons, inputs)


def _degree_tuples(g, tps, cps, pps, eps):
    """(t, c, p, d, e) for every t·c·p that divides the G GPUs (d = G / (t·c·p)) and every e."""
    for t in tps:
        for c in cps:
            for p in pps:
                if g % (t * c * p) == 0:
                    for e in eps:
                        yield t, c, p, g // (t * c * p), e


def _best_variant(model, cluster, base, s, nseq, f, allow_tp_across_nodes, options, count):
    """The fastest variant (ZeRO stage, recompute, schedule, micro-batch) of one degree tuple that
    fits, the smallest-memory one that does not, and the last validity reason seen."""
    best, smallest, last_why = None, None, ""
    t, c, p, d, e = base.tp, base.cp, base.pp, base.dp, base.ep
    for variant in _variants(p, *options):
        lay = Layout(t, c, p, d, e, *variant)
        why = validity(model, cluster, lay, s, nseq, allow_tp_across_nodes)
        if why:
            last_why = why
            continue
        plan = evaluate(model, cluster, lay, s, nseq, f, allow_tp_across_nodes)
        if not plan.fits:
            count(plan.reason)
            if smallest is None or plan.memory["total"] < smallest.memory["total"]:
                smallest = plan
        elif best is None or _faster(plan, best):
            best = plan
    return best, smallest, last_why


def _faster(a: Plan, b: Plan) -> bool:
    """a beats b: a shorter step, or the same step (to 1e-9) in less memory (1F1B over GPipe)."""
    if abs(a.step_s - b.step_s) > 1e-9 * b.step_s:
        return a.step_s < b.step_s
    return a.memory["total"] < b.memory["total"]


def reason_kind(reason: str) -> str:
    """A rejection reason with its numbers replaced by N, to count failures of one kind together."""
    return re.sub(r"\d[\d.,]*", "N", reason.split(" (smallest variant")[0])


def _variants(p, zero, recompute, schedules, micro_batches, virtual_stages):
    """(zero, recompute, schedule, v, micro_batch) choices for a pipeline of p stages."""
    scheds = [("1f1b", 1)] if p == 1 else []
    if p > 1:
        for sc in schedules:
            if sc == "interleaved":
                scheds += [(sc, v) for v in virtual_stages]
            else:
                scheds.append((sc, 1))
    for z in zero:
        for rc in recompute:
            for sc, v in scheds:
                for b in micro_batches:
                    yield (z, rc, sc, v, b)


# --------------------------------------------------------------------------- when is a strategy bound by its links


def tp_critical_width(tp: int, peak_flops: float, link_bandwidth: float, gated_mlp: bool = True) -> float:
    """Per-device MLP width f/t above which the MLP's matmuls outlast its tensor-parallel all-reduce:

        f/t ≥ (2/g)·(t−1)/t · π/β    [values],

    g = 3 weight matrices (SwiGLU) or 2 (GELU). Derivation, forward pass of one MLP on T tokens:
    compute 2·g·T·d·f/t FLOPs at π, one ring all-reduce of T·d·2 B moving 2(t−1)/t of it at β per
    direction. The tensor-parallel form of the ridge of chapter 6: "How to Scale Your Model" (Austin
    et al. 2025, training chapter) states it as per-device MLP width against the ICI ridge."""
    t = _check.integer("tp", tp)
    pi = _check.positive("peak_flops", peak_flops)
    beta = _check.positive("link_bandwidth", link_bandwidth)
    g = 3.0 if gated_mlp else 2.0
    return (2.0 / g) * (t - 1) / t * pi / beta


def fsdp_critical_tokens(peak_flops: float, link_bandwidth: float) -> float:
    """Tokens per GPU per micro-batch above which ZeRO-3/FSDP hides its gathers behind compute:
    T ≥ π/β. Per micro-batch it moves 3 × (D−1)/D × 2N bytes (gather for forward and backward,
    reduce-scatter of gradients) against 6·N·T FLOPs: 6N/β ≤ 6NT/π. Gradient accumulation does NOT
    help here: the gathers repeat for every micro-batch (Rajbhandari et al. 2020; Austin et al. 2025)."""
    return _check.positive("peak_flops", peak_flops) / _check.positive("link_bandwidth", link_bandwidth)


def dp_critical_tokens(peak_flops: float, link_bandwidth: float) -> float:
    """Tokens per GPU per optimizer step from which the backward pass (4N·T FLOPs) lasts as long as
    the gradient all-reduce (2 × 2N bytes at β): T ≥ π/β. Under gradient accumulation only the last
    micro-batch's backward can hide it, so the condition applies to one micro-batch's tokens
    (Li et al. 2020; chapter 7)."""
    return _check.positive("peak_flops", peak_flops) / _check.positive("link_bandwidth", link_bandwidth)


def ep_critical_width(ep: int, peak_flops: float, link_bandwidth: float, gated_mlp: bool = True) -> float:
    """Expert MLP width f above which an expert's matmuls outlast the all-to-all that brings its tokens:
    f ≥ (2/g)·(e−1)/e · π/β. Per token routed: 2·g·d·f FLOPs; dispatch and combine move 2 × d × 2 B,
    (e−1)/e of it off the GPU. Fine-grained experts (small f) are communication-bound across nodes,
    which is why DeepSeek-V3 overlaps the all-to-all with compute (DeepSeek-AI 2024, §3.2)."""
    e = _check.integer("ep", ep)
    pi = _check.positive("peak_flops", peak_flops)
    beta = _check.positive("link_bandwidth", link_bandwidth)
    g = 3.0 if gated_mlp else 2.0
    return (2.0 / g) * (e - 1) / e * pi / beta


def pp_micro_batches_for_bubble(pp: int, bubble: float, v: int = 1) -> int:
    """Micro-batches per step that keep the pipeline bubble (p−1)/(v·m) at or below ε: m ≥ (p−1)/(v·ε).
    Pipeline P2P traffic is rarely the bound (one activation per stage boundary); the bubble is
    (Narayanan et al. 2021 §2.2)."""
    p = _check.integer("pp", pp)
    eps = _check.fraction("bubble", bubble)
    vv = _check.integer("v", v)
    return math.ceil((p - 1) / (vv * eps))


# --------------------------------------------------------------------------- published layouts

PUBLISHED_PATH = Path(__file__).with_name("data") / "published_layouts.yaml"
_SEARCH_KEYS = (
    "tp",
    "cp",
    "pp",
    "ep",
    "zero",
    "recompute",
    "schedules",
    "micro_batches",
    "virtual_stages",
    "ep_overlap",
)


@functools.cache
def published() -> dict:
    """The published layouts of hwlib/data/published_layouts.yaml: {key: entry} (sources inside)."""
    raw = yaml.safe_load(PUBLISHED_PATH.read_text(encoding="utf-8"))
    return raw["layouts"]


def published_model(entry: dict) -> models.ModelShape:
    """The shape of a published run: a named model, or a GPT-style shape of the Megatron-LM tables
    (4h GELU MLP, learned positions, biases, tied embeddings, as Narayanan et al. 2021 train)."""
    spec = entry["model"]
    if isinstance(spec, str):
        return models.get(spec)
    return models.custom(
        entry["name"],
        vocab_size=spec["vocab_size"],
        d_model=spec["d_model"],
        n_layers=spec["n_layers"],
        n_heads=spec["n_heads"],
        gated_mlp=False,
        learned_positions=True,
        bias=True,
        tied_embeddings=True,
        source=entry["source"],
    )


def check_published(key: str) -> dict:
    """Run the planner on a published run's model, cluster and batch and place the published degrees:
    {entry, search, rank (1-based among the degree tuples that fit, None if they do not fit),
    plan (its best variant), best (the planner's first choice), n_fit, why_not, variant (the best
    plan at the published degrees with the paper's recompute choice, where the entry states one)}."""
    table = published()
    if key not in table:
        raise KeyError(f"unknown published layout {key!r}; accepted: {', '.join(table)}")
    entry = table[key]
    model = published_model(entry)
    cl = dict(entry["cluster"])
    cluster = Cluster(cl.pop("gpu"), cl.pop("gpus"), **cl)
    options = {k: v for k, v in (entry.get("planner") or {}).items() if k in _SEARCH_KEYS}
    found = search(model, cluster, entry["seq_len"], entry["global_sequences"], **options)
    deg = entry["degrees"]
    degrees = (deg["tp"], deg["cp"], deg["pp"], deg["dp"], deg["ep"])
    variant = None
    if "recompute" in entry:  # the paper's own recompute choice, at the published degrees
        only = dict(options, tp=[deg["tp"]], cp=[deg["cp"]], pp=[deg["pp"]], ep=[deg["ep"]])
        only["recompute"] = (entry["recompute"],)
        pinned = search(model, cluster, entry["seq_len"], entry["global_sequences"], **only)
        variant = pinned.plan_of(*degrees)
    return {
        "variant": variant,
        "entry": entry,
        "search": found,
        "rank": found.rank_of(*degrees),
        "plan": found.plan_of(*degrees),
        "best": found.ranked[0] if found.ranked else None,
        "n_fit": len(found.ranked),
        "why_not": found.why_not(*degrees),
    }
