"""Serving-engine arithmetic: how an LLM server spends its memory and its steps.

The formulas behind a serving engine's own reports (chapter 12, "Serving systems and long runs"), in SI units
(bytes, seconds, FLOPs, tokens):

* **KV blocks.** An engine in the style of vLLM {cite}`kwon2023pagedattention` caps its use of the
  device at a share u of the memory M it sees, loads the weights W, runs one profiling step to find
  the activation peak A and the memory outside its allocator O (CUDA context, NCCL and cuBLAS
  workspaces, CUDA-graph pools G), and cuts what is left into blocks of b tokens:
      K = u·M − W − A − O − G,     blocks = ⌊K / (b·q)⌋,     q = KV bytes per token.
* **Fragmentation.** A block is the unit of allocation, so a sequence of L tokens wastes
  ⌈L/b⌉·b − L ≤ b − 1 slots; a contiguous reservation of L_max per request wastes L_max − L.
* **Prefix caching.** A cached share h of a P-token prompt is not recomputed: the prefill does
  2·N·(1 − h)·P FLOPs instead of 2·N·P.
* **Steps on the roofline.** One engine step runs T new tokens (decode tokens plus prefill chunks)
  through the N-parameter model, reading the weights once and the cached context C of every
  sequence: t = max(2·N·T / π, (W + C·q) / β)  (`hwlib.roofline.time_s`).
* **Disaggregation.** Handing a P-token prompt's cache from a prefill to a decode device moves P·q
  bytes: t = P·q / B_link + latency.
* **Goodput under SLOs** {cite}`zhong2024distserve`: a request counts when its time to first token
  (TTFT) and its time per output token (TPOT) both meet their objectives; goodput is the rate of
  such requests.
* **Static batching** keeps every slot of a batch until its longest output ends: the useful share
  of the slot-steps is ΣL_i / (B·max L_i) {cite}`yu2022orca`.
"""

from __future__ import annotations

import functools
from importlib import resources

import numpy as np
import yaml

from . import _check, roofline, sourced

FORMULAS = {
    "kv_budget_bytes": "K = u·M − W − A − O − G",
    "kv_block_bytes": "b·q",
    "kv_blocks": "⌊K / (b·q)⌋",
    "paged_waste_tokens": "⌈L/b⌉·b − L",
    "paged_waste_fraction": "Σ(⌈L/b⌉·b − L) / Σ⌈L/b⌉·b",
    "reserved_waste_fraction": "1 − ΣL / (n·L_max)",
    "static_batch_utilization": "ΣL_i / (B·max L_i)",
    "prefill_flops": "F = 2·N·(1 − h)·P",
    "step_time_s": "t = max(2·N·T / π, (W + C·q) / β)",
    "kv_transfer_time_s": "t = P·q / B_link + latency",
    "slo_attainment": "share with TTFT ≤ SLO_TTFT and TPOT ≤ SLO_TPOT",
    "goodput_rps": "max λ with attainment(λ) ≥ target",
}
"""The formula each function of this module evaluates, as the calculators print it."""

GIB = 2**30


@functools.cache
def _raw() -> dict:
    return yaml.safe_load(resources.files("hwlib").joinpath("data", "serving.yaml").read_text(encoding="utf-8"))


def published(section: str, field: str) -> float:
    """One published figure from hwlib/data/serving.yaml, e.g. ("vllm_paper", "paged_waste_max");
    KeyError names what is known. Values as printed (GiB fields in GiB)."""
    raw = _raw()
    sections = {k: v for k, v in raw.items() if k != "sources"}
    if section not in sections:
        raise KeyError(f"unknown section {section!r}; known: {', '.join(sections)}")
    if field not in sections[section]:
        raise KeyError(f"{section} has no field {field!r}; known: {', '.join(sections[section])}")
    return sourced.number(f"{section}.{field}", sections[section][field], raw["sources"])[0]


def published_source(section: str, field: str) -> str:
    """The source text of one published figure (see `published`)."""
    published(section, field)
    return _raw()["sources"][_raw()[section][field]["source"]]


def kv_budget_bytes(total_bytes, utilization, weights_bytes, activation_peak_bytes, other_bytes=0.0, graph_bytes=0.0):
    """Memory an engine leaves for its KV cache: K = u·M − W − A − O − G  [bytes].

    M: device memory the engine sees (vLLM's total_gpu_memory); u: its share (gpu_memory_utilization,
    vLLM's default 0.9); W: weights; A: activation peak of the profiling step (a prefill of the
    longest batch the scheduler may form); O: memory outside the tensor allocator (CUDA context,
    NCCL/cuBLAS workspaces); G: CUDA-graph pools when the engine counts them separately.
    ValueError when nothing is left. Source: vLLM's memory profiler (vllm_pr_10511 in
    hwlib/data/serving.yaml) and {cite}`kwon2023pagedattention`.
    """
    m = _check.positive("total_bytes", total_bytes)
    u = _check.fraction("utilization", utilization)
    used = sum(
        _check.nonnegative(n, v)
        for n, v in (
            ("weights_bytes", weights_bytes),
            ("activation_peak_bytes", activation_peak_bytes),
            ("other_bytes", other_bytes),
            ("graph_bytes", graph_bytes),
        )
    )
    left = u * m - used
    if left <= 0:
        raise ValueError(
            f"no memory left for the KV cache: utilization × total = {u * m:.4g} B but weights, activations "
            f"and the rest take {used:.4g} B; raise utilization or use a device with more memory"
        )
    return left


def kv_block_bytes(bytes_per_token, block_tokens=16):
    """Bytes of one KV block: b·q, for b tokens of q bytes each (K and V of every layer)  [bytes].
    vLLM's default b is 16 tokens {cite}`kwon2023pagedattention`."""
    return _check.integer("block_tokens", block_tokens) * _check.positive("bytes_per_token", bytes_per_token)


def kv_blocks(budget_bytes, bytes_per_token, block_tokens=16) -> int:
    """Blocks an engine allocates: ⌊K / (b·q)⌋ — the "# GPU blocks" of vLLM's log.
    budget_bytes from `kv_budget_bytes`; q from `hwlib.memory.kv_cache_bytes_for(model, 1)`."""
    k = _check.positive("budget_bytes", budget_bytes)
    return int(k // kv_block_bytes(bytes_per_token, block_tokens))


def blocks_for(tokens, block_tokens=16):
    """Blocks a sequence of L tokens occupies: ⌈L/b⌉ (0 for L = 0)."""
    b = _check.integer("block_tokens", block_tokens)
    return np.ceil(np.asarray(_check.nonnegative("tokens", tokens)) / b).astype(int)


def paged_waste_tokens(tokens, block_tokens=16):
    """Token slots allocated but unused in a sequence's last block: ⌈L/b⌉·b − L, between 0 and b − 1.
    Source: {cite}`kwon2023pagedattention` (internal fragmentation is bounded by one block)."""
    b = _check.integer("block_tokens", block_tokens)
    length = np.asarray(_check.nonnegative("tokens", tokens))
    waste = blocks_for(length, b) * b - length
    return float(waste) if np.ndim(waste) == 0 else waste


def paged_waste_fraction(tokens, block_tokens=16) -> float:
    """Share of the allocated KV slots that hold no token, over sequences of lengths L_i in blocks of
    b: Σ(⌈L/b⌉·b − L) / Σ⌈L/b⌉·b."""
    length = np.atleast_1d(_check.positive("tokens", tokens))
    allocated = blocks_for(length, block_tokens) * _check.integer("block_tokens", block_tokens)
    return float((allocated - length).sum() / allocated.sum())


def reserved_waste_fraction(tokens, reserved_tokens) -> float:
    """Share of the KV memory wasted when each of n requests reserves a contiguous buffer for
    L_max tokens (prompt plus the longest output allowed) but uses L_i: 1 − ΣL_i / (n·L_max).
    The systems before PagedAttention did this {cite}`kwon2023pagedattention`."""
    length = np.atleast_1d(_check.positive("tokens", tokens))
    cap = _check.positive("reserved_tokens", reserved_tokens)
    if (length > cap).any():
        raise ValueError(f"tokens must be <= reserved_tokens ({cap:g}); got {length.max():g}")
    return float(1 - length.sum() / (length.size * cap))


def static_batch_utilization(output_tokens) -> float:
    """Useful share of the slot-steps of one static batch: ΣL_i / (B·max L_i). Every sequence holds
    its slot until the longest of the B outputs is done {cite}`yu2022orca`."""
    length = np.atleast_1d(_check.positive("output_tokens", output_tokens))
    return float(length.sum() / (length.size * length.max()))


def prefill_flops(n_params, prompt_tokens, hit_rate=0.0):
    """Prefill FLOPs of a P-token prompt whose share h is found in the prefix cache:
    F = 2·N·(1 − h)·P  [FLOP] (the 2N per token of chapter 8; attention's extra FLOPs left out)."""
    n = _check.positive("n_params", n_params)
    p = _check.positive("prompt_tokens", prompt_tokens)
    h = _check.nonnegative("hit_rate", hit_rate)
    if np.any(np.asarray(h) >= 1):
        raise ValueError(f"hit_rate must be in [0, 1): at least the last token is computed; got {hit_rate!r}")
    return 2.0 * n * (1 - h) * p


def step_time_s(n_params, weights_bytes, new_tokens, context_tokens, bytes_per_token, peak_flops, bandwidth):
    """Roofline time of one engine step that pushes T new tokens (decode tokens plus prefill chunks)
    through the model while reading the weights once and the C cached tokens of every sequence in the
    step (each written token adds q bytes too, counted in C):
    t = max(2·N·T / π, (W + C·q) / β)  [s], via `hwlib.roofline.time_s`.
    Source: chapter 8 (prefill is compute-bound, decode memory-bound); {cite}`agrawal2024sarathi`
    (chunked prefill mixes both in one step)."""
    t = _check.positive("new_tokens", new_tokens)
    c = _check.nonnegative("context_tokens", context_tokens)
    q = _check.positive("bytes_per_token", bytes_per_token)
    w = _check.positive("weights_bytes", weights_bytes)
    return roofline.time_s(2.0 * _check.positive("n_params", n_params) * t, w + c * q, peak_flops, bandwidth)


def _step_time_unchecked(n_params, weights_bytes, new_tokens, context_tokens, bytes_per_token, peak_flops, bandwidth):
    """`step_time_s` without the argument checks, for a simulator that checked its engine once and
    calls this thousands of times: max(2NT/π, (W + Cq)/β), the same roofline as `roofline.time_s`
    (tests hold the two equal)."""
    result = np.maximum(
        2.0 * n_params * np.asarray(new_tokens) / peak_flops,
        (weights_bytes + np.asarray(context_tokens) * bytes_per_token) / bandwidth,
    )
    return float(result) if np.ndim(result) == 0 else result


def kv_transfer_time_s(prompt_tokens, bytes_per_token, link_bandwidth, latency_s=0.0):
    """Time to hand a prompt's KV cache from a prefill device to a decode device:
    t = P·q / B_link + latency  [s] (B_link one direction, bytes/s). Source: {cite}`zhong2024distserve`."""
    p = _check.positive("prompt_tokens", prompt_tokens)
    q = _check.positive("bytes_per_token", bytes_per_token)
    return p * q / _check.positive("link_bandwidth", link_bandwidth) + _check.nonnegative("latency_s", latency_s)


def slo_attainment(ttft_s, tpot_s, ttft_slo_s, tpot_slo_s) -> float:
    """Share of requests whose TTFT ≤ SLO_TTFT and TPOT ≤ SLO_TPOT (arrays of per-request seconds;
    a request with one output token has TPOT 0). Source: {cite}`zhong2024distserve`."""
    ttft = np.atleast_1d(_check.nonnegative("ttft_s", ttft_s))
    tpot = np.atleast_1d(_check.nonnegative("tpot_s", tpot_s))
    if ttft.shape != tpot.shape:
        raise ValueError(f"ttft_s and tpot_s must have one value per request; got {ttft.size} and {tpot.size}")
    ok = (ttft <= _check.positive("ttft_slo_s", ttft_slo_s)) & (tpot <= _check.positive("tpot_slo_s", tpot_slo_s))
    return float(ok.mean())


def goodput_rps(rates_rps, attainments, target=0.9) -> float:
    """Goodput in DistServe's sense: the highest request rate λ whose SLO attainment is still ≥ the
    target (90 % by default), from a sweep of rates; 0.0 if none meets it. Requests/s.
    Source: {cite}`zhong2024distserve`."""
    rates = np.atleast_1d(_check.positive("rates_rps", rates_rps))
    att = np.atleast_1d(_check.nonnegative("attainments", attainments))
    if rates.shape != att.shape:
        raise ValueError(f"rates_rps and attainments must pair up; got {rates.size} and {att.size}")
    ok = att >= _check.fraction("target", target)
    return float(rates[ok].max()) if ok.any() else 0.0


def percentile(values, q) -> float:
    """The q-th percentile (0–100) of per-request values, linear interpolation (NumPy's default):
    p50 is the median, p99 the value 99 % of requests stay under."""
    v = np.atleast_1d(_check.nonnegative("values", values))
    if not 0 <= q <= 100:
        raise ValueError(f"q must be a percentile between 0 and 100; got {q!r}")
    return float(np.percentile(v, q))


def gib(x) -> float:
    """GiB as an engine prints them → bytes (× 2^30)."""
    return _check.nonnegative("x", x) * GIB


def tokens_in_blocks(blocks, block_tokens=16) -> int:
    """Tokens the KV pool holds: blocks × b (vLLM v1 prints this as "GPU KV cache size")."""
    return _check.integer("blocks", blocks, minimum=0) * _check.integer("block_tokens", block_tokens)
