"""Record what llm-analysis 0.2.2 (Cheng Li, PyPI `llm-analysis`) computes for the shapes hwlib ships,
into tests/fixtures/llm_analysis.json, so tests/lib/test_llm_analysis.py can compare hwlib with it
without installing it (it pulls in transformers). Run in a throwaway venv:

    python3.11 -m venv /tmp/llma && /tmp/llma/bin/pip install llm-analysis==0.2.2
    PYTHONPATH=.:/tmp/llma/lib/python3.11/site-packages .venv/bin/python tools/record_llm_analysis.py

Each case is a model's config.json fields (from hwlib/data/models.yaml) given to llm-analysis'
ModelConfig; a shape it cannot express is recorded with the error it raises."""

import json
import pathlib
import sys

from llm_analysis.analysis import LLMAnalysis
from llm_analysis.config import DtypeConfig, GPUConfig, ModelConfig, ParallelismConfig

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
from hwlib import models  # noqa: E402

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "llm_analysis.json"
MODELS = ["Llama 2 7B", "Llama 2 70B", "Llama 3 8B", "Mistral 7B", "Mixtral 8x7B", "DeepSeek-V3"]
SEQ, BATCH = 4096, 1
TIMED = ["Llama 2 7B", "Llama 3 8B", "Mistral 7B", "Mixtral 8x7B"]
TRAIN_TOKENS, MFU = 1e9, 0.4


def gpu():
    return GPUConfig(
        name="h100",
        mem_per_GPU_in_GB=80,
        hbm_bandwidth_in_GB_per_sec=3350,
        intra_node_bandwidth_in_GB_per_sec=900,
        intra_node_min_message_latency=8e-06,
        peak_fp16_TFLOPS=989,
        peak_i8_TFLOPS=1979,
        peak_i4_TFLOPS=1979,
        inter_node_bandwidth_in_GB_per_sec=200,
    )


def _config(m):
    return ModelConfig(
        name=m.name,
        num_layers=m.n_layers,
        n_head=m.n_heads,
        hidden_dim=m.d_model,
        vocab_size=m.vocab_size,
        max_seq_len=m.max_context,
        num_key_value_heads=m.n_kv_heads,
        ffn_embed_dim=m.d_ff,
        expansion_ratio=m.d_ff / m.d_model,
        moe_num_experts=m.n_experts,
        moe_top_k=m.top_k,
    )


def record(name):
    m = models.get(name)
    try:
        a = LLMAnalysis(_config(m), gpu(), DtypeConfig(), ParallelismConfig())
    except Exception as exc:  # noqa: BLE001 - the error is the record
        return {"model": name, "error": f"{type(exc).__name__}: {exc}"}
    return {
        "model": name,
        "params_total": a.get_num_params_total(),
        "params_embedding": a.get_num_params_embedding(),
        "params_mlp_per_layer": a.get_num_params_per_layer_mlp(),
        "kv_cache_bytes_bf16": a.model_config.num_layers * a.get_memory_kv_cache_per_layer(BATCH, SEQ, 2),
        "seq_len": SEQ,
        "batch": BATCH,
    }


def record_bundled(config_name, name):
    """llm-analysis' own bundled config of a model (its Llama 2 7B folds the gated MLP into d_ff = 4d)."""
    from llm_analysis.config import get_model_config_by_name

    a = LLMAnalysis(get_model_config_by_name(config_name), gpu(), DtypeConfig(), ParallelismConfig())
    return {"model": name, "bundled_config": config_name, "params_total": a.get_num_params_total()}


def record_times(name):
    """Training time of TRAIN_TOKENS at MFU 0.4 (its flops_efficiency) and the latency of one decode
    step (batch 1, SEQ tokens of context) at the full HBM bandwidth, on the H100 of `gpu()`."""
    m = models.get(name)
    a = LLMAnalysis(
        _config(m), gpu(), DtypeConfig(), ParallelismConfig(), flops_efficiency=MFU, hbm_memory_efficiency=1.0
    )
    t = a.training(batch_size_per_gpu=BATCH, seq_len=SEQ, total_num_tokens=TRAIN_TOKENS, global_batch_size=BATCH)
    i = a.inference(batch_size_per_gpu=BATCH, seq_len=SEQ, num_tokens_to_generate=1)
    keep = ("kv_cache_latency", "kv_cache_memory_per_gpu", "weight_memory_per_gpu", "weight_memory_embedding_per_gpu")
    keep += ("decode_latency", "decode_latency_fwd_input_embedding", "decode_latency_fwd_output_embedding_loss")
    return {
        "model": name,
        "times": True,
        "seq_len": SEQ,
        "batch": BATCH,
        "mfu": MFU,
        "train_tokens": TRAIN_TOKENS,
        "train_flops_per_micro_batch": t["num_flops_total_per_micro_batch"],
        "train_latency_per_micro_batch_s": t["latency_per_micro_batch"],
        "total_training_latency_s": t["total_training_latency"],
        **{k: i[k] for k in keep},
    }


def main():
    rows = [record(n) for n in MODELS] + [record_bundled("NousResearch_Llama-2-7b-hf", "Llama 2 7B")]
    rows += [record_times(n) for n in TIMED]
    OUT.write_text(json.dumps({"llm_analysis": "0.2.2", "cases": rows}, indent=1) + "\n")
    print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
