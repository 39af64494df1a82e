"""hwlib.memory: bytes per value, weights, training state, KV cache, activations, ZeRO; bad input."""

from types import SimpleNamespace

import numpy as np
import pytest

import badinput
from hwlib import memory, models, specs


@pytest.mark.parametrize(
    "dtype, size",
    [
        ("fp32", 4),
        ("tf32", 4),
        ("bf16", 2),
        ("fp16", 2),
        ("fp8", 1),
        ("fp8_e4m3", 1),
        ("fp8_e5m2", 1),
        ("int8", 1),
        ("int4", 0.5),
        ("fp4", 0.5),
        ("fp4_e2m1", 0.5),
        ("BF16", 2),
        ("bfloat16", 2),
        ("float8_e4m3fn", 1),
        ("FP8-E5M2", 1),
    ],
)
def test_bytes_per_value(dtype, size):
    assert memory.bytes_per_value(dtype) == size


def test_unknown_dtype_lists_accepted():
    with pytest.raises(ValueError) as info:
        memory.bytes_per_value("fp7")
    msg = str(info.value)
    assert "'fp7'" in msg and "Accepted" in msg and "bf16" in msg and "int4" in msg
    with pytest.raises(ValueError):
        memory.bytes_per_value(2)


def test_weights_bytes():
    assert memory.weights_bytes(7e9) == 14e9
    assert memory.weights_bytes(7e9, "int8") == 7e9
    assert memory.weights_bytes(70e9, "bf16") == 140e9
    np.testing.assert_allclose(memory.weights_bytes(np.array([1e9, 2e9]), "fp32"), [4e9, 8e9])


def test_training_state():
    parts = memory.training_state_breakdown(1e9)
    assert parts == {"weights": 2e9, "gradients": 2e9, "master": 4e9, "adam": 8e9}
    assert memory.training_state_bytes(1e9) == 16e9
    assert memory.training_state_bytes(7e9) == 112e9


def test_kv_cache_formula_and_gqa():
    # 2 x L x h_kv x d x s x b x bytes
    assert memory.kv_cache_bytes(2, 3, 5, 7, batch=11, dtype="fp32") == 2 * 2 * 3 * 5 * 7 * 11 * 4
    # vLLM's cross-check: OPT-13B (40 layers, 40 heads x 128) ~ 800 KB per token in fp16
    assert memory.kv_cache_bytes(40, 40, 128, 1, dtype="fp16") == 819_200
    # GQA: Llama 3 8B (32 layers, 8 KV heads x 128) is 4x smaller than MHA with 32 heads
    mha = memory.kv_cache_bytes(32, 32, 128, 8192)
    gqa = memory.kv_cache_bytes(32, 8, 128, 8192)
    assert mha / gqa == 4
    assert gqa == 2 * 32 * 8 * 128 * 8192 * 2  # 1.07e9 B = 1 GiB at 8k context
    np.testing.assert_allclose(memory.kv_cache_bytes(32, 8, 128, [1024, 2048]), [gqa / 8, gqa / 4])


def test_kv_cache_bytes_for_shape_object_and_name():
    shape = SimpleNamespace(n_layers=32, n_kv_heads=8, head_dim=128)
    assert memory.kv_cache_bytes_for(shape, 8192) == memory.kv_cache_bytes(32, 8, 128, 8192)
    assert memory.kv_cache_bytes_for(shape, 8192, batch=4, dtype="fp8") == memory.kv_cache_bytes(
        32, 8, 128, 8192, 4, "fp8"
    )
    with pytest.raises(ValueError, match="n_kv_heads"):
        memory.kv_cache_bytes_for(SimpleNamespace(n_layers=2, head_dim=4), 10)


def test_kv_cache_bytes_for_named_model():
    shape = models.get("llama-3-8b")
    assert memory.kv_cache_bytes_for("llama-3-8b", 8192) == memory.kv_cache_bytes(32, 8, 128, 8192)
    assert memory.kv_cache_bytes_for(shape, 4096) == 2 * 32 * 8 * 128 * 4096 * 2
    # agrees with the shape's own per-token figure inside every sliding window (Gemma 3 1B's is 512)
    for name in models.names():
        m = models.get(name)
        assert memory.kv_cache_bytes_for(m, 500, dtype="fp8") == pytest.approx(500 * m.kv_bytes_per_token("fp8"))
    with pytest.raises(KeyError, match="unknown model"):
        memory.kv_cache_bytes_for("gpt-5", 10)


def test_inference_bytes():
    assert memory.inference_bytes(7e9) == 14e9
    assert memory.inference_bytes(7e9, "int4", kv_bytes=1e9) == 4.5e9


def test_activation_bytes_korthikanti_table2():
    s, b, h, L, a = 2048, 1, 12288, 96, 96  # GPT-3 175B shape
    per_layer = s * b * h * (34 + 5 * a * s / h)
    assert memory.activation_bytes(s, b, h, L, a) == pytest.approx(L * per_layer, rel=1e-12)
    assert memory.activation_bytes(s, b, h, L, a, recompute="selective") == pytest.approx(34 * s * b * h * L)
    assert memory.activation_bytes(s, b, h, L, a, recompute="full") == pytest.approx(2 * s * b * h * L)
    t = 8  # tensor + sequence parallel divides everything by t; without sequence parallelism 10 sbh stays
    assert memory.activation_bytes(s, b, h, L, a, tensor_parallel=t) == pytest.approx(L * per_layer / t)
    assert memory.activation_bytes(s, b, h, L, a, t, "selective", sequence_parallel=False) == pytest.approx(
        s * b * h * L * (10 + 24 / t)
    )
    assert memory.activation_bytes(s, b, h, L, a, t, sequence_parallel=False) == pytest.approx(
        s * b * h * L * (10 + 24 / t + 5 * a * s / (h * t))
    )
    # the attention term dominates at long context: quadratic in s
    assert memory.activation_bytes(2 * s, b, h, L, a) > 2 * memory.activation_bytes(s, b, h, L, a)


def test_activation_variants_from_the_per_tensor_count():
    """Korthikanti et al. §4.1 counts 34·sbh + 5·as²b per layer; 2 sbh of it (and 3·as²b of the
    scores) are dropout masks and outputs. The GPT-3 example of the paper: 5as/h = 80 > 34."""
    s, b, h, L, a = 2048, 1, 12288, 96, 96
    assert 5 * a * s / h == 80
    sbhl = s * b * h * L
    assert memory.activation_bytes(s, b, h, L, a, dropout=False) == pytest.approx(sbhl * (32 + 2 * a * s / h))
    assert memory.activation_bytes(s, b, h, L, a, dropout=False, attention="flash") == pytest.approx(
        sbhl * (32 + 4 * a / h)
    )
    assert memory.activation_bytes(s, b, h, L, a, attention="flash") == pytest.approx(sbhl * (34 + 4 * a / h))
    # selective recompute is the linear term whatever the attention kernel; full stores layer inputs only
    for attention in memory.ATTENTION:
        assert memory.activation_bytes(
            s, b, h, L, a, recompute="selective", dropout=False, attention=attention
        ) == pytest.approx(32 * sbhl)
        assert memory.activation_bytes(s, b, h, L, a, recompute="full", attention=attention) == 2 * sbhl
    # tensor parallelism without sequence parallelism: 8 (+2 masks) replicated, the rest split
    t = 8
    assert memory.activation_bytes(s, b, h, L, a, t, sequence_parallel=False, dropout=False) == pytest.approx(
        sbhl * (8 + 24 / t + 2 * a * s / (h * t))
    )
    # SwiGLU MLP of width f stores 8f/h instead of GELU's 16 (for f = 4h)
    f = 11008
    assert memory.activation_bytes(
        s, b, h, L, a, dropout=False, attention="flash", ffn_hidden=f, gated_mlp=True
    ) == pytest.approx(sbhl * (16 + 8 * f / h + 4 * a / h))
    assert memory.activation_bytes(s, b, h, L, a, ffn_hidden=4 * h) == memory.activation_bytes(s, b, h, L, a)


def test_gqa_keeps_k_and_v_at_their_own_width_llama_3_8b():
    """Llama 3 8B (h = 4096, 32 query heads, 8 KV heads of 128, SwiGLU f = 14336, no dropout,
    FlashAttention), one 4,096-token sequence, tensor by tensor in bf16 bytes per token and layer:
    two norm inputs 2·2h, the QKV input 2h, Q 2h, K and V 2·1024 each (8 heads × 128, not h),
    the output projection's input 2h, the MLP input 2h, SwiGLU gate, up, SiLU and product 4·2f,
    the fp32 log-sum-exp 4 per query head."""
    h, h_kv, f, a, layers, s = 4096, 8 * 128, 14336, 32, 32, 4096
    per_token_layer = 2 * 2 * h + 2 * h + 2 * h + 2 * h_kv + 2 * h_kv + 2 * h + 2 * h + 4 * 2 * f + 4 * a
    assert per_token_layer == 168_064
    by_hand = per_token_layer * s * layers
    assert memory.activation_bytes_for("Llama 3 8B", s) == pytest.approx(by_hand, rel=1e-12)
    assert by_hand == pytest.approx(22.03e9, rel=1e-3)
    mha = memory.activation_bytes(s, 1, h, layers, a, dropout=False, attention="flash", ffn_hidden=f, gated_mlp=True)
    assert mha - by_hand == pytest.approx(2 * 2 * (h - h_kv) * s * layers)  # what the MHA count over-counts
    # an MHA shape is unchanged: h_kv = h
    assert memory.activation_bytes(s, 1, h, layers, a, kv_hidden=h) == memory.activation_bytes(s, 1, h, layers, a)


def test_activation_llama_2_7b_at_4k():
    """Korthikanti-style figures for Llama 2 7B, s = 4096, micro-batch 1: 104 GB as a GPT-3 layer, about half
    without dropout, about a sixth without dropout and with FlashAttention (GELU-width MLP)."""
    args = (4096, 1, 4096, 32, 32)
    assert memory.activation_bytes(*args) == pytest.approx(104.15e9, rel=1e-3)
    assert memory.activation_bytes(*args, dropout=False) == pytest.approx(51.54e9, rel=1e-3)
    assert memory.activation_bytes(*args, dropout=False, attention="flash") == pytest.approx(17.20e9, rel=1e-3)
    # the named shape: no dropout (no biases), SwiGLU d_ff = 11008, FlashAttention by default
    llama = memory.activation_bytes_for("llama-2-7b", 4096)
    assert llama == pytest.approx(4096 * 4096 * 32 * (16 + 8 * 11008 / 4096 + 4 * 32 / 4096))
    gpt2 = memory.activation_bytes_for("gpt-2-small", 1024, attention="standard")
    assert gpt2 == pytest.approx(memory.activation_bytes(1024, 1, 768, 12, 12))  # GPT-2 keeps dropout


def test_activation_formula_text_matches_the_numbers():
    assert memory.activation_formula() == "s·b·h·L·(34 + 5·a·s/h)"
    assert memory.activation_formula(dropout=False) == "s·b·h·L·(32 + 2·a·s/h)"
    assert memory.activation_formula(dropout=False, attention="flash") == "s·b·h·L·(32 + 4·a/h)"
    assert memory.activation_formula("selective") == "s·b·h·L·34"
    assert memory.activation_formula("full", attention="flash") == "2·s·b·h·L"


def test_one_copy_of_each_formula_text():
    """The calculator and the command line print memory.FORMULAS, not their own copies."""
    import inspect

    from hwlib import calculator
    from hwlib.cli import calc as cli_calc

    for module in (calculator, cli_calc):
        source = inspect.getsource(module)
        for text in memory.FORMULAS.values():
            assert f'"{text}"' not in source, (module.__name__, text)
    est = calculator.estimate(model="gpt2")
    assert est["weights_bytes"].formula == memory.FORMULAS["weights_bytes"] == "W = N·b"
    assert est["gpus_to_serve"].formula == memory.FORMULAS["tensor_parallel_devices"]
    bare = calculator.estimate(n_params=7e9)  # no heads to split: the memory count alone
    assert bare["gpus_to_serve"].formula == memory.FORMULAS["devices_needed"]


def test_formula_texts_match_the_numbers():
    for stage, text in enumerate(["16·N", "4·N + 12·N/G", "2·N + 14·N/G", "16·N/G"]):
        assert memory.zero_formula(stage) == text
    assert memory.zero_formula(1, optimizer_bytes_per_param=6) == "4·N + 6·N/G"
    assert (
        memory.activation_formula(dropout=False, attention="flash", gated_mlp=True, ffn_hidden=11008)
        == "s·b·h·L·(12 + 4·h_kv/h + 8·f/h + 4·a/h)"
    )
    assert memory.activation_formula("selective", ffn_hidden=3072) == "s·b·h·L·(14 + 4·h_kv/h + 4·f/h)"


def test_usable_bytes_leaves_headroom_and_context():
    gib = 2**30
    h100 = 80 * gib
    use = memory.usable_bytes(h100)
    assert use == pytest.approx((h100 - 512 * 2**20) / 1.1)
    assert use * 1.1 + memory.CUDA_CONTEXT_BYTES == pytest.approx(h100)
    assert memory.fits(use, h100) and not memory.fits(use * 1.001, h100)
    assert memory.usable_bytes(h100, headroom=0, context_bytes=0) == h100
    # 70B in FP8 (70 GB) fits one H100 with room to spare, 16-bit (140 GB) needs two
    assert memory.devices_needed(70e9, h100) == 1 and memory.devices_needed(140e9, h100) == 2
    assert memory.devices_needed(0, h100) == 1
    with pytest.raises(ValueError, match="leaves nothing"):
        memory.devices_needed(1e9, 1e8)


def test_zero_stages():
    psi, n = 7.5e9, 64
    assert memory.zero_bytes_per_device(psi, n, 0) == 16 * psi
    assert memory.zero_bytes_per_device(psi, n, 1) == pytest.approx(4 * psi + 12 * psi / n)
    assert memory.zero_bytes_per_device(psi, n, 2) == pytest.approx(2 * psi + 14 * psi / n)
    assert memory.zero_bytes_per_device(psi, n, 3) == pytest.approx(16 * psi / n)
    assert memory.zero_bytes_per_device(psi, 1, 3) == 16 * psi  # one device: nothing to shard
    # 8-bit Adam (K = 6) under stage 1
    assert memory.zero_bytes_per_device(1e9, 8, 1, optimizer_bytes_per_param=6) == pytest.approx(4e9 + 6e9 / 8)


BAD = [
    (memory.dtype_name, dict(dtype="int3"), "int3"),
    (memory.bytes_per_value, dict(dtype="fp12"), "fp12"),
    (memory.element_bytes, dict(name="bytes_per_element", value=-1), "bytes_per_element"),
    (memory.weights_bytes, dict(n_params=0), "n_params"),
    (memory.weights_bytes, dict(n_params=7e9, dtype="fp9"), "fp9"),
    (memory.gguf_bytes, dict(n_params=8e9, quant="Q4_K_Z"), "quant"),
    (memory.gguf_bytes, dict(n_params=-1), "n_params"),
    (memory.sequences_that_fit, dict(weights_bytes=-1, kv_bytes_per_sequence=1, capacity_bytes=1e9), "weights_bytes"),
    (memory.max_batch, dict(model="Llama 3 8B", seq_len=4096, capacity_bytes=-1), "capacity_bytes"),
    (memory.weights_bytes, dict(n_params=float("nan")), "n_params"),
    (memory.training_state_bytes, dict(n_params=-7e9), "n_params"),
    (memory.training_state_breakdown, dict(n_params=float("inf")), "n_params"),
    (memory.kv_cache_bytes, dict(n_layers=0, n_kv_heads=8, head_dim=128, seq_len=10), "n_layers"),
    (memory.kv_cache_bytes, dict(n_layers=32, n_kv_heads=8.5, head_dim=128, seq_len=10), "n_kv_heads"),
    (memory.kv_cache_bytes, dict(n_layers=32, n_kv_heads=8, head_dim=-1, seq_len=10), "head_dim"),
    (memory.kv_cache_bytes, dict(n_layers=32, n_kv_heads=8, head_dim=128, seq_len=0), "seq_len"),
    (memory.kv_cache_bytes, dict(n_layers=32, n_kv_heads=8, head_dim=128, seq_len=10, batch=0), "batch"),
    (memory.kv_cache_bytes, dict(n_layers=32, n_kv_heads=8, head_dim=128, seq_len=10, dtype="q4"), "q4"),
    (
        memory.kv_cache_bytes_for,
        dict(model=SimpleNamespace(n_layers=32, n_kv_heads=8, head_dim=128), seq_len=-1),
        "seq_len",
    ),
    (memory.inference_bytes, dict(n_params=7e9, kv_bytes=-1), "kv_bytes"),
    (memory.serving_bytes, dict(weights_bytes=0, kv_bytes=1), "weights_bytes"),
    (memory.kv_replication, dict(tensor_parallel=0, n_kv_heads=8), "tensor_parallel"),
    (memory.kv_replication, dict(tensor_parallel=16, n_kv_heads=0.5), "n_kv_heads"),
    (
        memory.tensor_parallel_devices,
        dict(weights_bytes=1e9, kv_bytes=0, capacity_bytes=80e9, n_heads=0, n_kv_heads=8),
        "n_heads",
    ),
    (
        memory.tensor_parallel_devices,
        dict(weights_bytes=-1, kv_bytes=0, capacity_bytes=80e9, n_heads=8, n_kv_heads=8),
        "weights_bytes",
    ),
    (memory.serving_bytes, dict(weights_bytes=1e9, kv_bytes=-1), "kv_bytes"),
    (memory.quantization_scheme, dict(name="q3"), "q3"),
    (memory.quantized_bits_per_weight, dict(scheme="awq-w3"), "scheme"),
    (memory.quantized_bits_per_weight, dict(scheme="bf16"), "scheme"),
    (memory.quantized_weights_bytes, dict(model=models.get("Llama 3 8B"), scheme="q5"), "scheme"),
    (memory.quantized_params, dict(model=7e9), "model"),
    (memory.model_shape, dict(model=None), "model"),
    (memory.stored_weights_bytes, dict(model=models.get("Llama 3 8B"), dtype="fp9"), "fp9"),
    (memory.weights_read_bytes, dict(model=models.get("Llama 3 8B"), batch=0), "batch"),
    (memory.inference_bytes, dict(n_params=0), "n_params"),
    (memory.activation_bytes, dict(seq_len=0, batch=1, hidden=64, n_layers=2, n_heads=4), "seq_len"),
    (memory.activation_bytes, dict(seq_len=8, batch=1, hidden=64, n_layers=2, n_heads=0), "n_heads"),
    (
        memory.activation_bytes,
        dict(seq_len=8, batch=1, hidden=64, n_layers=2, n_heads=4, tensor_parallel=0),
        "tensor_parallel",
    ),
    (
        memory.activation_bytes,
        dict(seq_len=8, batch=1, hidden=64, n_layers=2, n_heads=4, recompute="some"),
        "recompute",
    ),
    (
        memory.activation_bytes,
        dict(seq_len=8, batch=1, hidden=64, n_layers=2, n_heads=4, sequence_parallel="yes"),
        "sequence_parallel",
    ),
    (memory.activation_bytes, dict(seq_len=8, batch=1, hidden=64, n_layers=2, n_heads=4, dropout="no"), "dropout"),
    (
        memory.activation_bytes,
        dict(seq_len=8, batch=1, hidden=64, n_layers=2, n_heads=4, attention="fast"),
        "attention",
    ),
    (memory.activation_bytes, dict(seq_len=8, batch=1, hidden=64, n_layers=2, n_heads=4, ffn_hidden=0), "ffn_hidden"),
    (memory.activation_bytes, dict(seq_len=8, batch=1, hidden=64, n_layers=2, n_heads=4, gated_mlp=1), "gated_mlp"),
    (memory.activation_bytes, dict(seq_len=8, batch=1, hidden=64, n_layers=2, n_heads=4, kv_hidden=0), "kv_hidden"),
    (memory.activation_bytes_for, dict(model="llama-2-7b", seq_len=0), "seq_len"),
    (memory.activation_formula, dict(recompute="most"), "recompute"),
    (memory.zero_formula, dict(stage=5), "stage"),
    (memory.usable_bytes, dict(capacity_bytes=0), "capacity_bytes"),
    (memory.usable_bytes, dict(capacity_bytes=8e10, headroom=-0.1), "headroom"),
    (memory.fits, dict(need_bytes=-1, capacity_bytes=8e10), "need_bytes"),
    (memory.devices_needed, dict(need_bytes=1e9, capacity_bytes=8e10, context_bytes=-1), "context_bytes"),
    (memory.zero_bytes_per_device, dict(n_params=1e9, n_devices=8, stage=4), "stage"),
    (memory.zero_bytes_per_device, dict(n_params=1e9, n_devices=8, stage=-1), "stage"),
    (memory.zero_bytes_per_device, dict(n_params=1e9, n_devices=0, stage=1), "n_devices"),
    (
        memory.zero_bytes_per_device,
        dict(n_params=1e9, n_devices=8, stage=1, optimizer_bytes_per_param=-12),
        "optimizer_bytes_per_param",
    ),
    (memory.zero_bytes_per_device, dict(n_params=0, n_devices=8, stage=1), "n_params"),
    (memory.training_bytes_per_device, dict(state_bytes=-1, activation_bytes=1e9), "state_bytes"),
    (memory.training_bytes_per_device, dict(state_bytes=1, activation_bytes=1, logits_bytes=-1), "logits_bytes"),
    (memory.logits_bytes, dict(seq_len=8192, batch=1, vocab_size=0), "vocab_size"),
    (memory.logits_bytes, dict(seq_len=0, batch=1, vocab_size=128256), "seq_len"),
    (memory.unfused_activation_bytes, dict(fused_bytes=-1, seq_len=1, batch=1, d_model=8, n_layers=1), "fused_bytes"),
    (memory.unfused_activation_bytes, dict(fused_bytes=1, seq_len=1, batch=1, d_model=8, n_layers=0), "n_layers"),
    (
        memory.unfused_activation_bytes,
        dict(fused_bytes=1, seq_len=1, batch=1, d_model=8, n_layers=1, recompute="half"),
        "recompute",
    ),
    (memory.training_bytes_per_device, dict(state_bytes=1e9, activation_bytes=float("nan")), "activation_bytes"),
]


test_bad_input_names_the_argument, test_every_public_function_has_a_bad_input_case = badinput.make_tests(memory, BAD)


def test_recompute_error_lists_modes():
    with pytest.raises(ValueError, match="none, selective, full"):
        memory.activation_bytes(8, 1, 64, 2, 4, recompute="partial")


def test_logits_buffer_of_llama_3_8b():
    """8,192 tokens x a 128,256-token vocabulary x 4 B (fp32 logits) = 4.2 GB, counted in training memory."""
    from hwlib import calculator

    assert memory.logits_bytes(8192, 1, 128256) == 8192 * 128256 * 4 == pytest.approx(4.2e9, rel=0.01)
    est = calculator.estimate("Llama 3 8B", train_seq_len=8192)
    assert est.logits_bytes == memory.logits_bytes(8192, 1, 128256)
    assert est.training_bytes_per_gpu == est.training_state_per_gpu + est.activation_bytes + est.logits_bytes


def test_fp32_gradients_make_the_training_state_18_bytes_per_parameter():
    assert memory.training_state_bytes(7e9) == 16 * 7e9
    assert memory.training_state_bytes(7e9, fp32_grads=True) == 18 * 7e9
    assert memory.training_state_breakdown(1.0, fp32_grads=True)["gradients"] == 4.0
    with pytest.raises(ValueError, match="fp32_grads must be True or False; got 'yes'"):
        memory.training_state_bytes(7e9, fp32_grads="yes")


def test_sequences_that_fit_use_the_usable_memory_after_the_weights():
    from hwlib import specs

    h100 = specs.get("H100 SXM")
    l3 = models.get("Llama 3 8B")
    w, kv = memory.weights_bytes(l3.n_params()), memory.kv_cache_bytes_for(l3, 4096)
    n = memory.sequences_that_fit(w, kv, h100.visible_memory_bytes())
    room = memory.usable_bytes(h100.visible_memory_bytes()) - w
    assert n == int(room // kv) and n * kv <= room < (n + 1) * kv
    assert memory.sequences_that_fit(200e9, kv, h100.visible_memory_bytes()) == 0  # weights alone too big
    with pytest.raises(ValueError, match="kv_bytes_per_sequence"):
        memory.sequences_that_fit(w, 0, h100.visible_memory_bytes())


def test_max_batch_is_the_kv_caches_that_fit_beside_the_weights():
    h100 = specs.get("H100 SXM")
    shape = models.get("Llama 3 8B")
    kv = 2 * 32 * 8 * 128 * 8192 * 2  # 2·L·h_kv·d_head·s·b: 1 GiB per 8,192-token bf16 sequence
    assert memory.kv_cache_bytes_for(shape, 8192) == kv
    usable = (h100.visible_memory_bytes() - memory.CUDA_CONTEXT_BYTES) / (1 + memory.HEADROOM)
    want = int((usable - 2 * shape.n_params()) // kv)
    assert memory.max_batch(shape, 8192, h100.visible_memory_bytes()) == want == 57
    assert memory.max_batch("Llama 3 8B", 8192, h100.visible_memory_bytes(), kv_dtype="fp8") == int(
        (usable - 2 * shape.n_params()) // (kv / 2)
    )
    assert memory.max_batch("Llama 3 405B", 8192, h100.visible_memory_bytes()) == 0  # 810 GB of weights
    with pytest.raises(ValueError, match="seq_len"):
        memory.max_batch(shape, 0, h100.visible_memory_bytes())


def test_sequences_that_fit_use_the_usable_memory():
    """The counts chapter 8 prints: usable memory minus the weights over the KV cache per sequence."""
    h100, l3 = specs.get("H100 SXM"), models.get("Llama 3 8B")
    room = memory.usable_bytes(h100.memory_bytes) - memory.weights_bytes(l3.n_params())
    fit = {c: int(room // memory.kv_cache_bytes_for(l3, c)) for c in (4096, 8192)}
    assert fit == {4096: 114, 8192: 57}
    w = memory.weights_bytes(l3.n_params())
    one_rule = {
        c: memory.sequences_that_fit(w, memory.kv_cache_bytes_for(l3, c), h100.visible_memory_bytes()) for c in fit
    }
    assert one_rule == fit  # the book's one convention gives the same counts
