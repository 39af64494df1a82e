"""Fine-tuning memory and FLOPs: full, LoRA and QLoRA.

* Full fine-tuning keeps the whole training state: 16 B/param with mixed-precision AdamW
  (``memory.training_state_bytes``); the QLoRA paper counts 12 B/param (16-bit weights and
  gradients, two 32-bit Adam moments), its ">780 GB" for a 65B model.
* LoRA (Hu et al. 2021) freezes W and trains B·A of rank r beside each chosen d_in × d_out matrix:
  r · (d_in + d_out) parameters each. Only those get gradients and optimizer state.
* QLoRA (Dettmers et al. 2023) also stores the frozen W in 4-bit NormalFloat with one absmax per
  64 weights; double quantization stores those constants in 8 bits with one fp32 per 256 of them:
  4 + 8/64 + 32/(64·256) = 4.127 bits per parameter (the paper: 0.5 → 0.127 bits of constants).

Chapter 8 "Fine-tuning on one GPU: LoRA and QLoRA". QLoRA fits a 7B fine-tune in about 10 GB.

>>> round(nf4_bits_per_param(), 3)
4.127
"""

from __future__ import annotations

from . import _check, memory, models

FORMULAS = {
    "lora_params": "N_lora = L · Σ r·(d_in + d_out)",
    "model_finetune_bytes.weights.full": "16 B × N",
    "model_finetune_bytes.weights.lora": "2 B × N",
    "model_finetune_bytes.weights.qlora": "4.127 bit × N (NF4 + double quant)",
    "model_finetune_bytes.adapters": "16 B × N_lora",
    "model_finetune_bytes.activations": "checkpointed layers + one layer recomputed",
    "model_finetune_bytes.total": "weights + adapters + activations",
    "finetune_flops": "(4 or 6)·N·D + 2·N·D recompute",
    "finetune_flops.full": "C = 6·N·D",
    "finetune_flops.adapters": "C = 4·N·D  (frozen weights: no weight gradients)",
}
"""The formula each function of this module evaluates, as the calculators print it (the one copy)."""

LINEARS = ("q", "k", "v", "o", "gate", "up", "down")
METHODS = ("full", "lora", "qlora")


def nf4_bits_per_param(block=64, double_quant=True, block2=256):
    """Storage bits per weight in NF4: 4 + c, c = 32 / block (fp32 absmax per block) or, with double
    quantization, 8 / block + 32 / (block · block2). Dettmers et al. 2023 §3 (0.5 -> 0.127 bits)."""
    bl = _check.integer("block", block)
    if not double_quant:
        return 4.0 + 32.0 / bl
    return 4.0 + 8.0 / bl + 32.0 / (bl * _check.integer("block2", block2))


def _matrices(shape) -> dict:
    """(d_in, d_out) of each linear layer of one block of a ``hwlib.models`` shape."""
    d, kv, ff = shape.d_model, shape.n_kv_heads * shape.head_dim, shape.d_ff
    mats = {"q": (d, d), "k": (d, kv), "v": (d, kv), "o": (d, d), "up": (d, ff), "down": (ff, d)}
    if shape.gated_mlp:
        mats["gate"] = (d, ff)
    return mats


def lora_params(model, rank=64, targets=LINEARS) -> int:
    """Trainable LoRA parameters: n_layers · Σ r · (d_in + d_out) over the target matrices
    (Hu et al. 2021 §4). QLoRA's default targets every linear layer with r = 64. In a mixture of
    experts each expert's MLP matrices get their own adapters (E times the MLP terms)."""
    shape = models.get(model) if isinstance(model, str) else model
    r = _check.integer("rank", rank)
    mats = _matrices(shape)
    unknown = [t for t in targets if t not in LINEARS]
    if unknown or not targets:
        raise ValueError(f"targets must be a non-empty subset of {', '.join(LINEARS)}; got {targets!r}")
    experts = {t: shape.n_experts if t in ("gate", "up", "down") else 1 for t in mats}  # a mixture: per expert
    return shape.n_layers * sum(r * sum(mats[t]) * experts[t] for t in targets if t in mats)


def finetune_bytes(
    n_params,
    method="qlora",
    trainable_params=0.0,
    adapter_state_bytes=16.0,
    full_state_bytes=16.0,
    activation_bytes=0.0,
) -> dict:
    """Memory of a fine-tune, by part  [bytes]:

      full:   N · S_full (16 mixed-precision AdamW; 12 in the QLoRA paper's count)
      lora:   2 N (frozen bf16 weights) + N_lora · S_adapter
      qlora:  N · 4.127 / 8 (NF4 + double quantization) + N_lora · S_adapter
    plus activations (pass ``memory.activation_bytes(...)``, usually with recompute="full").
    S_adapter = 16 B per trainable parameter (weights, gradients, fp32 master and Adam moments).
    Returns {"weights", "adapters", "activations", "total"}.
    """
    n = _check.positive("n_params", n_params)
    m = _check.choice("method", method, METHODS)
    lora = _check.nonnegative("trainable_params", trainable_params)
    act = _check.nonnegative("activation_bytes", activation_bytes)
    if m == "full":
        weights, adapters = n * _check.positive("full_state_bytes", full_state_bytes), 0.0
    else:
        weights = memory.weights_bytes(n, "bf16") if m == "lora" else n * nf4_bits_per_param() / 8.0
        adapters = lora * _check.positive("adapter_state_bytes", adapter_state_bytes)
    return {"weights": weights, "adapters": adapters, "activations": act, "total": weights + adapters + act}


def model_finetune_bytes(
    model, method="qlora", rank=64, seq_len=2048, batch=1, recompute="full", attention="flash"
) -> dict:
    """``finetune_bytes`` for a named ``hwlib.models`` shape: LoRA on every linear layer at `rank`,
    activations from ``memory.activation_bytes_for`` (the model family's dropout, FlashAttention by
    default; gradient checkpointing by default, as QLoRA uses) plus one layer's working set while it
    is recomputed."""
    shape = models.get(model) if isinstance(model, str) else model
    act = memory.activation_bytes_for(shape, seq_len, batch, recompute=recompute, attention=attention)
    if recompute == "full":  # the layer being recomputed holds its full activations for a moment
        act += (
            memory.activation_bytes_for(shape, seq_len, batch, recompute="none", attention=attention) / shape.n_layers
        )
    trainable = 0.0 if method == "full" else lora_params(shape, rank)
    return finetune_bytes(shape.n_params(), method, trainable, activation_bytes=act)


def finetune_flops(n_params, n_tokens, method="qlora", recompute=True):
    """FLOPs of a fine-tune over D tokens: forward 2ND, backward to the activations 2ND, weight
    gradients 2ND only for full fine-tuning (LoRA skips them for frozen W, Hu et al. 2021 §4.2), and
    another forward 2ND when activations are recomputed:  full 6ND (8ND), LoRA/QLoRA 4ND (6ND).
    The calculators time a run from the model FLOPs (recompute=False) at an MFU, as MFU is defined:
    recomputation is hardware work that lowers the MFU, not more model FLOPs (Chowdhery et al. 2022,
    Appendix B). recompute=True gives the hardware FLOPs."""
    n = _check.positive("n_params", n_params)
    d = _check.positive("n_tokens", n_tokens)
    m = _check.choice("method", method, METHODS)
    if not isinstance(recompute, bool):
        raise ValueError(f"recompute must be True or False; got {recompute!r}")
    per = (6.0 if m == "full" else 4.0) + (2.0 if recompute else 0.0)
    return per * n * d
