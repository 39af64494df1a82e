"""Cost models for spreading work over many devices: collectives, data / tensor / pipeline parallelism.

Bytes, seconds, bytes/s. Bandwidths are per device, one direction (what each device can send
while it also receives). Ring algorithms: every device sends and receives the same amount, so
one device's link sets the time.

Sources: chapter 7 of this book; Patarasuk & Yuan 2009 (bandwidth-optimal ring all-reduce);
Shoeybi et al. 2019 (Megatron-LM, tensor parallelism: two all-reduces per layer per pass);
Narayanan et al. 2021 (pipeline bubble, interleaved schedule); Rajbhandari et al. 2020 (ZeRO communication volume); Li et al. 2020
(PyTorch DDP: bucketed gradient all-reduce overlapped with the backward pass only).
"""

from __future__ import annotations

import numpy as np

from . import _check
from .memory import element_bytes


def ring_allreduce_bytes_per_link(n_bytes, n_devices):
    """Bytes each device sends (and receives) in a ring all-reduce: 2(N−1)/N × n  [bytes].

    Reduce-scatter then all-gather, each (N−1) steps of n/N bytes. Tends to 2n for large N.
    """
    n = _check.positive("n_bytes", n_bytes)
    g = _check.integer("n_devices", n_devices)
    return 2.0 * (g - 1) / g * n


def ring_allreduce_time_s(n_bytes, n_devices, link_bandwidth, latency_s=0.0):
    """Ring all-reduce time t = 2(N−1)/N × n/B + 2(N−1) × α  [s] (α = per-step latency).

    Bandwidth term almost independent of N: adding devices does not make gradients cheaper to sync.
    Source: Patarasuk & Yuan 2009; chapter 7.
    """
    bw = _check.positive("link_bandwidth", link_bandwidth)
    alpha = _check.nonnegative("latency_s", latency_s)
    g = _check.integer("n_devices", n_devices)
    return ring_allreduce_bytes_per_link(n_bytes, n_devices) / bw + 2.0 * (g - 1) * alpha


def ring_allgather_time_s(n_bytes, n_devices, link_bandwidth, latency_s=0.0):
    """Ring all-gather (or reduce-scatter) of a tensor of n bytes in total:
    t = (N−1)/N × n/B + (N−1) × α  [s] — half an all-reduce. ZeRO-3/FSDP gathers parameters with it.
    """
    n = _check.positive("n_bytes", n_bytes)
    g = _check.integer("n_devices", n_devices)
    bw = _check.positive("link_bandwidth", link_bandwidth)
    alpha = _check.nonnegative("latency_s", latency_s)
    return (g - 1) / g * n / bw + (g - 1) * alpha


def data_parallel_comm_bytes(n_params, n_devices, dtype="bf16", zero_stage=0):
    """Gradient traffic each device sends per optimizer step in data parallelism  [bytes]:
    2(N−1)/N × Ψ × b for ZeRO stages 0–2 (all-reduce = reduce-scatter + all-gather),
    1.5 × that for stage 3 (parameters gathered in forward and backward, gradients reduce-scattered).

    Proportional to the parameter count, not the batch. Source: Rajbhandari et al. 2020 §7.
    """
    psi = _check.positive("n_params", n_params)
    stage = _check.integer("zero_stage", zero_stage, minimum=0)
    if stage > 3:
        raise ValueError(f"zero_stage must be a ZeRO stage 0, 1, 2 or 3; got {zero_stage!r}")
    grads = psi * element_bytes("dtype", dtype)
    return ring_allreduce_bytes_per_link(grads, n_devices) * (1.5 if stage == 3 else 1.0)


def tensor_parallel_comm_bytes(seq_len, batch, hidden, n_layers, tensor_parallel, dtype="bf16", training=True):
    """Bytes each device sends for Megatron tensor parallelism over one batch  [bytes]:
    per layer, 2 all-reduces of the s·B·h activation (B = `batch` sequences of s tokens) in the forward
    pass (after attention and after the MLP) and 2 more in the backward pass, each 2(t−1)/t × s·B·h·b
    bytes per device (b = bytes per element of `dtype`).

    It scales with tokens × hidden per layer, which is why it is kept on NVLink inside a node.
    Source: Shoeybi et al. 2019 (Megatron-LM) §3; chapter 7.
    """
    s = _check.positive("seq_len", seq_len)
    b = _check.positive("batch", batch)
    h = _check.integer("hidden", hidden)
    layers = _check.integer("n_layers", n_layers)
    t = _check.integer("tensor_parallel", tensor_parallel)
    per_allreduce = ring_allreduce_bytes_per_link(s * b * h * element_bytes("dtype", dtype), t)
    return layers * (4 if training else 2) * per_allreduce


def pipeline_bubble_fraction(n_stages, n_microbatches, virtual_stages=1):
    """Idle fraction of a pipeline schedule (GPipe / 1F1B): (p−1) / (v·m + p−1)  (v = 1 by default).

    p stages, m micro-batches, v model chunks per device (interleaved schedule). In [0, 1).
    Source: Narayanan et al. 2021 §2.2 (bubble time (p−1)/v per m micro-batches); chapter 7.
    """
    p = _check.integer("n_stages", n_stages)
    m = _check.integer("n_microbatches", n_microbatches)
    v = _check.integer("virtual_stages", virtual_stages)
    return (p - 1) / (v * m + p - 1)


def step_time_s(compute_s, comm_s, overlap=1.0):
    """Step time when a fraction `overlap` (one number) of the communication can hide behind compute  [s]:
    t = max(T_comp, f·T_comm) + (1 − f)·T_comm; f = 1 gives max(T_comp, T_comm), f = 0 gives the sum.

    It assumes the communication may overlap with the whole step; for data parallelism, where only the
    backward pass can hide the gradient all-reduce, use `ddp_step_time_s`. Source: chapter 7.
    """
    c = _check.nonnegative("compute_s", compute_s)
    m = _check.nonnegative("comm_s", comm_s)
    f = _check.nonnegative("overlap", overlap)
    if np.ndim(f) != 0 or f > 1:
        raise ValueError(f"overlap must be one fraction in [0, 1] (e.g. 0.8 for 80 %); got {overlap!r}")
    result = np.maximum(c, f * m) + (1.0 - f) * m
    return float(result) if np.ndim(result) == 0 else result


DDP_BUCKET_BYTES = 25 * 2**20
"""PyTorch DDP's default gradient bucket, bucket_cap_mb = 25 (MiB) (Li et al. 2020; torch docs)."""


def ddp_bucket_count(grad_bytes, bucket_bytes=DDP_BUCKET_BYTES):
    """Gradient buckets DDP all-reduces one after another: k = ceil(gradient bytes / bucket bytes)."""
    g = _check.positive("grad_bytes", grad_bytes)
    b = _check.positive("bucket_bytes", bucket_bytes)
    return int(np.ceil(g / b))


def _backward_fraction(value) -> float:
    """φ, the backward pass's share of the training FLOPs: one number in (0, 1] (4N of 6N: 2/3)."""
    phi = _check.positive("backward_fraction", value)
    if np.ndim(phi) != 0 or phi > 1:
        raise ValueError(f"backward_fraction must be one fraction in (0, 1] (4N of 6N FLOPs: 2/3); got {value!r}")
    return phi


def ddp_step_time_s(compute_s, comm_s, n_buckets=None, backward_fraction=2 / 3):
    """Step time of data parallelism when the gradient all-reduce can hide only behind the backward pass  [s]:

        t = t_fwd + max(t_bwd + t_comm / k,  t_bwd / k + t_comm),
        t_fwd = (1 − φ)·t_compute,  t_bwd = φ·t_compute,

    with φ = `backward_fraction` (4N of the 6N FLOPs per token: 2/3) and k = `n_buckets` gradient buckets
    produced evenly through the backward pass. A bucket is all-reduced once it is ready and after the
    one before it, so either the last bucket's reduce is exposed after the backward pass (t_comm/k), or
    the link is the bottleneck and the reduces run back to back from the first bucket on. k = 1: nothing
    overlaps (t_compute + t_comm); k → ∞: t_fwd + max(t_bwd, t_comm). None (default) means k → ∞.
    The forward pass never overlaps: the next step's forward needs the updated weights.
    Compared with `step_time_s(..., overlap=1)`, data parallelism is compute-bound only once
    t_comm ≤ t_bwd, i.e. from about u·π / B_link tokens per GPU (not (2/3)·u·π / B_link).
    Source: Li et al. 2020 (PyTorch DDP §3.3, bucketing and overlap with backward); chapter 7.
    """
    c = _check.nonnegative("compute_s", compute_s)
    m = _check.nonnegative("comm_s", comm_s)
    phi = _backward_fraction(backward_fraction)
    if n_buckets is None:
        inv_k = 0.0
    else:
        inv_k = 1.0 / _check.integer("n_buckets", n_buckets)
    t_fwd, t_bwd = (1.0 - phi) * c, phi * c
    result = t_fwd + np.maximum(t_bwd + m * inv_k, t_bwd * inv_k + m)
    return float(result) if np.ndim(result) == 0 else result


def backward_hides_comm_tokens(comm_s, n_params, peak_flops, mfu, backward_fraction=2 / 3):
    """Tokens per device per step from which the backward pass lasts as long as a communication of
    `comm_s` seconds, so DDP can hide it:  T = t_comm · u·π / (φ · 6N)  [tokens],
    with φ = `backward_fraction` of the 6N training FLOPs per token, u = `mfu`, π = `peak_flops`
    (FLOP/s). Source: Li et al. 2020 (DDP overlaps with the backward pass only); chapter 10."""
    m = _check.nonnegative("comm_s", comm_s)
    n = _check.positive("n_params", n_params)
    pi = _check.positive("peak_flops", peak_flops)
    u = _check.positive("mfu", mfu)
    phi = _backward_fraction(backward_fraction)
    return m * u * pi / (phi * 6.0 * n)
