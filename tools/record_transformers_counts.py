"""Record what Hugging Face transformers builds from each config of hwlib/data/models.yaml.

Each config becomes a transformers model on the meta device (no weights, no network); the script
writes its parameter count, the parameters of the input embedding and the bytes its DynamicCache
holds after a prefill of 256 and of `--seq` tokens in bf16, to tests/fixtures/transformers_counts.json, which
tests/lib/test_models_configs.py compares with hwlib.models. Needs torch and transformers (not part of
the book's requirements); run it in a separate environment:

    python tools/record_transformers_counts.py            # writes the fixture
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "hwlib" / "data" / "models.yaml"
OUT = ROOT / "tests" / "fixtures" / "transformers_counts.json"
SMALL_CACHE = {"GPT-2 small", "Llama 3 8B", "Mistral 7B", "Mixtral 8x7B", "Qwen3 8B", "Gemma 2 2B", "Gemma 3 1B"}
SHORT_SEQ = 256
"""A prefill shorter than every sliding window (Gemma 3 1B's is 512), beside --seq."""
"""Models whose KV cache is also measured (a prefill on the meta device runs the real attention code)."""


def build(config: dict):
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    cfg = dict(config)
    kind = cfg.pop("model_type")
    hf = AutoConfig.for_model(kind, **cfg)
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(hf, torch_dtype=torch.bfloat16)
    return hf, model


def cache_bytes(model, seq: int) -> int:
    """Bytes of K and V a DynamicCache holds after a prefill of `seq` tokens (meta tensors: shapes only)."""
    import torch

    ids = torch.zeros((1, seq), dtype=torch.long, device="meta")
    with torch.no_grad():
        out = model(input_ids=ids, use_cache=True)
    total = 0
    for layer in out.past_key_values.layers:
        for t in (layer.keys, layer.values):
            total += t.numel() * t.element_size()
    return total


def main(argv=None) -> int:
    import torch
    import transformers

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seq", type=int, default=4096, help="prefill length for the cache (default 4096)")
    p.add_argument("--out", type=Path, default=OUT)
    args = p.parse_args(argv)
    rows = {}
    for name, row in yaml.safe_load(DATA.read_text(encoding="utf-8"))["models"].items():
        hf, model = build(row["config"])
        # a tied head is one tensor: parameters() yields it once, as hwlib counts it
        n = sum(t.numel() for t in model.parameters())
        emb = model.get_input_embeddings().weight.numel()
        rec = {"n_params": n, "input_embedding_params": emb, "tied": bool(hf.tie_word_embeddings)}
        if name in SMALL_CACHE:
            rec["kv_cache_bytes"] = {str(s): cache_bytes(model, s) for s in (SHORT_SEQ, args.seq)}
        rows[name] = rec
        print(f"{name}: {n:,} parameters", rec.get("kv_cache_bytes", ""))
        del model
    doc = {
        "generator": "tools/record_transformers_counts.py",
        "transformers": transformers.__version__,
        "torch": torch.__version__,
        "dtype": "bfloat16",
        "models": rows,
    }
    args.out.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
