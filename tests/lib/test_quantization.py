"""Quantized weights as real checkpoints store them (hwlib.memory.quantized_weights_bytes): group
scales and zeros per weight, embeddings, head and norms in 16-bit; checked against the published
sizes of real checkpoints in hwlib/data/quantization.yaml (within 3 %)."""

import pytest

from hwlib import calculator, finetune, memory, models

DATA = memory.quantization_data()


@pytest.mark.parametrize("ckpt", DATA["checkpoints"], ids=lambda c: f"{c['model']}-{c['scheme']}")
def test_published_checkpoint_sizes(ckpt):
    m = models.get(ckpt["model"])
    if ckpt["scheme"] == "bf16":
        ours = memory.weights_bytes(m.n_params(), "bf16")
    else:
        ours = memory.quantized_weights_bytes(m, ckpt["scheme"])
    assert ours == pytest.approx(ckpt["bytes"], rel=0.03)
    assert ckpt["source"] in DATA["sources"]


def test_llama_3_8b_awq_is_5_73_gb_not_4_02():
    m = models.get("Llama 3 8B")
    naive = memory.weights_bytes(m.n_params(), "int4")  # 0.5 B for every parameter
    real = memory.quantized_weights_bytes(m, "awq-w4-g128")
    assert naive == pytest.approx(4.015e9, rel=1e-3) and real == pytest.approx(5.73e9, rel=0.005)
    # 6.98e9 linear weights at 4 + 20/128 bits, 2 x 525M embedding/head weights and the norms at 2 B
    n_lin = 32 * (2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 14336)
    assert memory.quantized_params(m) == n_lin
    assert real == n_lin * (4 + 20 / 128) / 8 + (m.n_params() - n_lin) * 2


def test_bits_per_weight_of_each_scheme():
    assert memory.quantized_bits_per_weight("awq-w4-g128") == 4 + 20 / 128
    assert memory.quantized_bits_per_weight("int4") == memory.quantized_bits_per_weight("awq-w4-g128")
    assert memory.quantized_bits_per_weight("nvfp4") == 4.5
    # NF4 with double quantization: the QLoRA paper's 4.127 bits, the same as hwlib.finetune's count
    assert memory.quantized_bits_per_weight("nf4-dq") == pytest.approx(finetune.nf4_bits_per_param())
    assert memory.quantization_scheme("bf16") is None and memory.quantization_scheme("fp8") == "fp8"


def test_the_calculator_names_the_scheme_and_keeps_embeddings_16_bit():
    est = calculator.estimate("Llama 3 8B", weights_dtype="int4")
    q = est["weights_bytes"]
    assert q.value == memory.quantized_weights_bytes(models.get("Llama 3 8B"), "awq-w4-g128")
    assert "AWQ w4 g128" in q.label and q.function == "hwlib.memory.quantized_weights_bytes"
    assert est.inference_bytes == q.value + est.kv_cache_bytes
    # a bare parameter count has no shape to split: N·b as before, said by its formula
    bare = calculator.estimate(n_params=8e9, weights_dtype="int4")
    assert bare.weights_bytes == 4e9 and bare["weights_bytes"].formula == memory.FORMULAS["weights_bytes"]


def test_decode_reads_b_rows_of_an_untied_embedding():
    m = models.get("Llama 3 8B")
    one = memory.weights_read_bytes(m, 1, "bf16")
    assert one == 2 * (m.n_params() - (m.vocab_size - 1) * m.d_model)
    assert memory.weights_read_bytes(m, 10**6, "bf16") == 2 * m.n_params()  # a batch past V reads all rows
    tied = models.get("Gemma 2 9B")  # the tied matrix is read whole as the output head
    assert memory.weights_read_bytes(tied, 1) == memory.weights_bytes(tied.n_params())
    q = memory.weights_read_bytes(m, 1, "int4")
    assert q == memory.quantized_weights_bytes(m) - (m.vocab_size - 1) * m.d_model * 2


@pytest.mark.parametrize("quant", list(DATA["gguf"]["types"]))
def test_gguf_sizes_match_llama_cpp_table(quant):
    # llama.cpp's own table: bits per weight and the file size in GiB for Llama 3.1 8B
    row = DATA["gguf"]["types"][quant]
    n = models.get(DATA["gguf"]["model"]).n_params()
    assert memory.gguf_bytes(n, quant) / 2**30 == pytest.approx(row["gib"], abs=0.006)
    assert DATA["gguf"]["source"] in DATA["sources"]


def test_gguf_refuses_unknown_type_by_name():
    with pytest.raises(ValueError, match="GGUF types.*Q4_K_M.*got 'Q4_K_Z'"):
        memory.gguf_bytes(8e9, "Q4_K_Z")


def test_every_checkpoint_size_says_how_sure_it_is():
    assert all(c.get("confidence") in {"high", "medium", "low"} for c in DATA["checkpoints"])


def test_every_checkpoint_size_says_where_and_when_it_was_read():
    for c in DATA["checkpoints"]:
        assert str(c["verified"]).startswith("20"), c
        src = DATA["sources"][c["source"]]
        assert "huggingface.co/" in src or "hub-docs" in src, c  # the repository listing or the Hub's index


def test_llama_3_8b_bf16_checkpoint_is_two_bytes_per_parameter_exactly():
    """The index's metadata.total_size is the sum of the tensors' bytes: 2 B x N to the byte."""
    ckpt = next(c for c in DATA["checkpoints"] if c["model"] == "Llama 3 8B" and c["scheme"] == "bf16")
    assert ckpt["bytes"] == 16_060_522_496 == memory.weights_bytes(models.get("Llama 3 8B").n_params(), "bf16")
