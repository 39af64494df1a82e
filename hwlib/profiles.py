"""A synthetic kernel profile of one transformer training step's layer on an H100 (exercise 10.1).

`step(seed)` builds the table a profiler (Nsight Systems, torch.profiler) would print for the forward
pass of one decoder layer of a Llama-like model (hidden 4096, 32 query and 8 KV heads of 128, MLP
14336, bf16): one row per kernel with its shape, dtype and a time made from the roofline of an
H100 SXM's dense bf16 roofs (989.4 TFLOP/s, 3.35 TB/s; hwlib.specs) divided by an attainment drawn
from a realistic range for its kind: cuBLAS products 75-85 % of the roof, fused elementwise kernels
65-85 %, FlashAttention 45-60 %. Two of three known problems are planted (the `seed` argument picks which):

* ``softmax`` of unfused attention over fp32 scores at 30-40 % of the roof (remedy: FlashAttention,
  ``flash``), with its two batched products;
* ``o_proj`` left in fp32 (CUDA cores at about 75 % of the fp32 peak, against the bf16 roof: about 5 %;
  remedy: lower precision, ``precision``);
* ``rotary_embedding`` run as a chain of unfused elementwise kernels (4-5 % of the roof counted on the
  fused kernel's bytes; remedy: fusion, ``fuse``).

One other row is impossibly fast (0.4-0.7 x its roofline time): a broken measurement (a missing
synchronize). The planted problems save the most time (time x (1 - attainment)); the generator
checks that the second of them saves at least 1.3 x what any other row does, so ranking is never a
knife edge. Attainment is (FLOPs / time) / min(π, β·I), chapter 6; savings follow Amdahl (chapter 10).
"""

from __future__ import annotations

import numpy as np

from . import roofline, specs

FORMULAS = {
    "gemm_cost": "F = 2·batch·mnk, Q = batch·(mk + kn + mn)·b",
    "elementwise_cost": "F = c·elements, Q = (r + w)·elements·b",
    "attention_cost": "F = 4·batch·S²·d, Q = 4·batch·S·d·b",
    "attainment": "a = (F / t) / min(π, β·F/Q)",
    "saving_s": "t·(1 - a)",
}

GPU = "H100 SXM"
D, HEADS, KV_HEADS, HEAD_DIM, FFN = 4096, 32, 8, 128, 14336
REMEDIES = ("fuse", "batch", "precision", "flash", "none")
PROBLEMS = ("flash", "precision", "fuse")
ITEMSIZE = {"bf16": 2, "fp32": 4}


def gemm_cost(batch, m, n, k, itemsize):
    """[FLOPs, bytes] of `batch` products (m x k)(k x n), each operand read or written once."""
    return [2.0 * batch * m * n * k, float(batch) * roofline.matmul_bytes(m, n, k, itemsize)]


def elementwise_cost(elements, flops_per_element, reads, writes, itemsize):
    """[FLOPs, bytes] of an elementwise kernel: c FLOPs per element, r + w tensors of `elements`."""
    return [float(flops_per_element) * elements, float(reads + writes) * elements * itemsize]


def attention_cost(batch, seq, head_dim, itemsize):
    """[FLOPs, bytes] of fused (Flash) attention over `batch` heads x sequences, non-causal: QK^T and
    PV are 2 S^2 d FLOPs each; only Q, K, V (read) and O (written) touch memory, 4 S d elements."""
    return [4.0 * batch * seq * seq * head_dim, 4.0 * batch * seq * head_dim * itemsize]


def cost(row: dict) -> list:
    """[FLOPs, bytes] of one profile row."""
    s, b = row["shape"], ITEMSIZE[row["dtype"]]
    if row["kind"] == "gemm":
        return gemm_cost(s["batch"], s["m"], s["n"], s["k"], b)
    if row["kind"] == "attention":
        return attention_cost(s["batch"], s["seq"], s["head_dim"], b)
    return elementwise_cost(s["elements"], s["flops_per_element"], s["reads"], s["writes"], b)


def roof_time_s(row: dict) -> float:
    """max(F/π, Q/β) on the H100's dense bf16 roofs [s]."""
    gpu = specs.get(GPU)
    f, q = cost(row)
    return float(roofline.time_s(f, q, gpu.peak_flops("bf16"), gpu.bandwidth))


def attainment(row: dict) -> float:
    """Achieved FLOP/s over the roofline at the row's intensity (> 1: impossible)."""
    return roof_time_s(row) / row["time_s"]


def saving_s(row: dict) -> float:
    """Time the row could save if it reached its roof: t (1 - attainment) [s] (negative if broken)."""
    return row["time_s"] - roof_time_s(row)


def _gemm(name, m, n, k, dtype="bf16", batch=1):
    return {"name": name, "kind": "gemm", "shape": {"batch": batch, "m": m, "n": n, "k": k}, "dtype": dtype}


def _elem(name, elements, c, reads, writes, dtype="bf16"):
    shape = {"elements": elements, "flops_per_element": c, "reads": reads, "writes": writes}
    return {"name": name, "kind": "elementwise", "shape": shape, "dtype": dtype}


def _rows(tokens, seq, planted) -> list:
    """(row, attainment range, remedy) of the layer, without times."""
    kv = KV_HEADS * HEAD_DIM
    seqs = tokens // seq
    rows = [(_elem("rmsnorm_attn", tokens * D, 4, 1, 1), (0.65, 0.85), "none")]
    rows.append((_gemm("qkv_proj", tokens, D + 2 * kv, D), (0.75, 0.85), "none"))
    if "fuse" in planted:
        rows.append((_elem("rotary_embedding", tokens * (D + kv), 6, 1, 1), (0.04, 0.05), "fuse"))
    else:
        rows.append((_elem("rotary_embedding", tokens * (D + kv), 6, 1, 1), (0.65, 0.85), "none"))
    if "flash" in planted:
        rows.append((_gemm("attn_scores", seq, seq, HEAD_DIM, batch=seqs * HEADS), (0.6, 0.75), "flash"))
        rows.append((_elem("softmax", seqs * HEADS * seq * seq, 5, 1, 1, "fp32"), (0.3, 0.4), "flash"))
        rows.append((_gemm("attn_values", seq, HEAD_DIM, seq, batch=seqs * HEADS), (0.6, 0.75), "flash"))
    else:
        flash = {
            "name": "flash_attention",
            "kind": "attention",
            "dtype": "bf16",
            "shape": {"batch": seqs * HEADS, "seq": seq, "head_dim": HEAD_DIM},
        }
        rows.append((flash, (0.45, 0.6), "none"))
    o_dtype = "fp32" if "precision" in planted else "bf16"
    rows.append(
        (
            _gemm("o_proj", tokens, D, D, o_dtype),
            (0.05, 0.055) if o_dtype == "fp32" else (0.75, 0.85),
            "precision" if o_dtype == "fp32" else "none",
        )
    )
    rows.append((_elem("residual_add_attn", tokens * D, 1, 2, 1), (0.7, 0.85), "none"))
    rows.append((_elem("rmsnorm_mlp", tokens * D, 4, 1, 1), (0.65, 0.85), "none"))
    rows.append((_gemm("gate_up_proj", tokens, 2 * FFN, D), (0.75, 0.85), "none"))
    rows.append((_elem("silu_mul", tokens * FFN, 4, 2, 1), (0.7, 0.85), "none"))
    rows.append((_gemm("down_proj", tokens, D, FFN), (0.75, 0.85), "none"))
    rows.append((_elem("residual_add_mlp", tokens * D, 1, 2, 1), (0.7, 0.85), "none"))
    return rows


def _build(seed: int, rng) -> list:
    seq = int(rng.choice([2048, 4096]))
    tokens = int(rng.choice([16384, 32768]))
    planted = [p for i, p in enumerate(PROBLEMS) if i != seed % 3]
    out = []
    for row, (lo, hi), remedy in _rows(tokens, seq, planted):
        row = dict(row, remedy=remedy, broken=False)
        row["time_s"] = float(f"{roof_time_s(row) / rng.uniform(lo, hi):.4g}")
        out.append(row)
    healthy = [i for i, r in enumerate(out) if r["remedy"] == "none"]
    bad = out[int(rng.choice(healthy))]
    bad["time_s"] = float(f"{roof_time_s(bad) * rng.uniform(0.4, 0.7):.4g}")
    bad["broken"] = True
    return out


def step(seed: int) -> list:
    """The profile of variant `seed` (a whole number): a list of rows {name, kind, shape, dtype,
    time_s, remedy, broken}; `table(seed)` is what the learner sees (no remedy, no broken flag)."""
    seed = int(seed)
    for attempt in range(100):
        rows = _build(seed, np.random.default_rng([seed, attempt]))
        save = sorted((saving_s(r) for r in rows if not r["broken"]), reverse=True)
        if save[1] >= 1.3 * save[2]:
            return rows
    raise RuntimeError(f"no well-separated profile for seed {seed}")  # never for the exercise's seeds


def table(seed: int) -> list:
    """The learner's table: [{name, kind, shape, dtype, time_s}] in kernel order."""
    return [{k: r[k] for k in ("name", "kind", "shape", "dtype", "time_s")} for r in step(seed)]


def attainments(seed: int) -> list:
    """Attainment of every row, in table order."""
    return [attainment(r) for r in step(seed)]


def broken_row(seed: int) -> str:
    """Name of the impossibly fast row."""
    return next(r["name"] for r in step(seed) if r["broken"])


def targets(seed: int) -> list:
    """Names of the two rows that save the most time, largest first (the broken row excluded)."""
    rows = sorted((r for r in step(seed) if not r["broken"]), key=saving_s, reverse=True)
    return [rows[0]["name"], rows[1]["name"]]


def longest(seed: int) -> str:
    """Name of the row with the longest time (a tempting wrong target)."""
    return max(step(seed), key=lambda r: r["time_s"])["name"]


def by_time(seed: int) -> list:
    """Row names, longest first (the longest two are a tempting wrong pair of targets)."""
    return [r["name"] for r in sorted(step(seed), key=lambda r: r["time_s"], reverse=True)]


def lowest_attainment(seed: int) -> str:
    """Name of the row furthest below its roof."""
    return min(step(seed), key=attainment)["name"]


def remedy(seed: int, name, default_rank: int = 0) -> str:
    """The remedy of the row `name` (a learner's own target); for a name that is no row, the
    remedy of the true target of rank `default_rank` (so a wrong target costs one answer only)."""
    rows = step(seed)
    by = {r["name"]: r["remedy"] for r in rows}
    key = str(name).strip().lower() if name is not None else ""
    return by.get(key) or by[targets(seed)[default_rank]]


def other_target(seed: int, name) -> list:
    """The target that is not `name` (a learner's own target_1); both when `name` is neither."""
    key = str(name).strip().lower() if name is not None else ""
    return [n for n in targets(seed) if n != key]
