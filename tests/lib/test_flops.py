"""hwlib.flops: FLOP counts, time, cost, MFU, decode bound; bad input for every function."""

import numpy as np
import pytest

import badinput
from hwlib import flops


def test_counts():
    assert flops.matmul_flops(2, 3, 4) == 48
    assert flops.forward_flops(7e9, 1) == 14e9
    assert flops.training_flops(1e9, 1e9) == 6e18
    assert flops.training_flops(1e9, 1e9) == 3 * flops.forward_flops(1e9, 1e9)
    assert flops.prefill_flops(7e9, 1000, batch=4) == 2 * 7e9 * 1000 * 4
    # Kaplan Table 1: 2 * n_layer * n_ctx * d_attn per token
    assert flops.attention_flops(12, 1024, 768) == 2 * 12 * 1024 * 768
    assert flops.attention_flops(12, 1024, 768, n_tokens=10) == 10 * 2 * 12 * 1024 * 768
    np.testing.assert_allclose(flops.training_flops(np.array([1e9, 2e9]), 1e10), [6e19, 1.2e20])


def test_training_time_and_cost():
    c = 1e18
    assert flops.training_time_s(c, 1e15, 0.5) == 2000.0
    assert flops.training_time_s(c, 1e15, 0.5, n_devices=4) == 500.0
    assert flops.training_time_s(c, 1e15, 0.5, n_devices=4, scaling_efficiency=0.5) == 1000.0
    assert flops.cost_usd(3600, 3.0) == 3.0
    assert flops.cost_usd(7200, 2.5, n_devices=8) == 40.0
    assert flops.cost_usd(0, 3.0) == 0.0
    assert flops.cost_usd(3600, 0.0) == 0.0  # a free Colab GPU


def test_mfu_and_throughput():
    assert flops.mfu(4e14, 1e15) == 0.4
    assert flops.mfu(1e15, 1e15) == 1.0
    assert flops.training_flops_per_s(1e8, 1e5) == 6e13
    assert flops.mfu(flops.training_flops_per_s(1e8, 1e5), 1.2e14) == pytest.approx(0.5)


def test_decode_bound():
    assert flops.decode_tokens_per_s_bound(14e9, 3.35e12) == pytest.approx(239.2857, rel=1e-6)
    assert flops.decode_tokens_per_s_bound(14e9, 3.35e12, batch=16) == pytest.approx(16 * 239.2857, rel=1e-6)
    # KV cache reads make batching less than linear
    with_kv = flops.decode_tokens_per_s_bound(14e9, 3.35e12, batch=16, kv_bytes=1e9)
    assert with_kv == pytest.approx(16 * 3.35e12 / (14e9 + 16e9))


def test_pf_days_and_chinchilla():
    assert flops.pf_days(86400e15) == 1.0
    assert flops.chinchilla_tokens(70e9) == 1.4e12
    assert flops.chinchilla_tokens(1e9, tokens_per_param=25) == 25e9


def test_mfu_error_suggests_a_fraction():
    with pytest.raises(ValueError, match=r"e\.g\. 0\.4 for 40 %"):
        flops.training_time_s(1e18, 1e15, 40)
    with pytest.raises(ValueError, match="achieved_flops_per_s / peak_flops"):
        flops.mfu(1.2e15, 1e15)  # above peak: a bad timer or a wrong peak, never an MFU of 120 %


BAD = [
    (flops.matmul_flops, dict(m=0, n=1, k=1), "m"),
    (flops.matmul_flops, dict(m=1, n=-1, k=1), "n"),
    (flops.forward_flops, dict(n_params=float("nan"), n_tokens=1), "n_params"),
    (flops.forward_flops, dict(n_params=1, n_tokens=0), "n_tokens"),
    (flops.forward_flops_shaped, dict(n_params=1e6, lookup_params=-1, n_tokens=1), "lookup_params"),
    (flops.training_flops, dict(n_params=-1, n_tokens=1), "n_params"),
    (flops.attention_training_flops, dict(attention_flops_per_token=0, n_tokens=1), "attention_flops_per_token"),
    (flops.attention_training_flops, dict(attention_flops_per_token=1e9, n_tokens=-1), "n_tokens"),
    (flops.model_flops, dict(parameter_flops=1e20, attention_flops=-1), "attention_flops"),
    (flops.model_flops, dict(parameter_flops=float("nan")), "parameter_flops"),
    (flops.training_flops, dict(n_params=1, n_tokens=float("inf")), "n_tokens"),
    (flops.prefill_flops, dict(n_params=1e9, prompt_tokens=0), "prompt_tokens"),
    (flops.prefill_flops, dict(n_params=1e9, prompt_tokens=10, batch=0), "batch"),
    (flops.attention_flops, dict(n_layers=0, context_len=10, d_attn=64), "n_layers"),
    (flops.attention_flops, dict(n_layers=2, context_len=10, d_attn=64.5), "d_attn"),
    (flops.attention_flops, dict(n_layers=2, context_len=-1, d_attn=64), "context_len"),
    (flops.training_time_s, dict(total_flops=0, peak_flops=1e15, mfu=0.4), "total_flops"),
    (flops.training_time_s, dict(total_flops=1, peak_flops=-1, mfu=0.4), "peak_flops"),
    (flops.training_time_s, dict(total_flops=1, peak_flops=1e15, mfu=0), "mfu"),
    (flops.training_time_s, dict(total_flops=1, peak_flops=1e15, mfu=1.5), "mfu"),
    (flops.training_time_s, dict(total_flops=1, peak_flops=1e15, mfu=float("nan")), "mfu"),
    (flops.training_time_s, dict(total_flops=1, peak_flops=1e15, mfu=0.4, n_devices=0), "n_devices"),
    (flops.training_time_s, dict(total_flops=1, peak_flops=1e15, mfu=0.4, n_devices=2.5), "n_devices"),
    (
        flops.training_time_s,
        dict(total_flops=1, peak_flops=1e15, mfu=0.4, scaling_efficiency=1.1),
        "scaling_efficiency",
    ),
    (flops.cost_usd, dict(seconds=-1, price_per_device_hour=3), "seconds"),
    (flops.cost_usd, dict(seconds=1, price_per_device_hour=-3), "price_per_device_hour"),
    (flops.cost_usd, dict(seconds=1, price_per_device_hour=3, n_devices=0), "n_devices"),
    (flops.device_hours, dict(seconds=-1, n_devices=8), "seconds"),
    (flops.device_hours, dict(seconds=3600, n_devices=0), "n_devices"),
    (flops.tokens_per_s, dict(n_tokens=0, seconds=1), "n_tokens"),
    (flops.tokens_per_s, dict(n_tokens=1, seconds=0), "seconds"),
    (flops.usd_per_million_tokens, dict(tokens_per_second=0, price_per_device_hour=3), "tokens_per_second"),
    (flops.usd_per_million_tokens, dict(tokens_per_second=1e3, price_per_device_hour=-3), "price_per_device_hour"),
    (flops.decode_tokens_per_s_compute_bound, dict(n_params=7e9, peak_flops=0), "peak_flops"),
    (flops.decode_tokens_per_s_compute_bound, dict(n_params=-1, peak_flops=1e15), "n_params"),
    (flops.mfu, dict(achieved_flops_per_s=0, peak_flops=1e15), "achieved_flops_per_s"),
    (flops.mfu, dict(achieved_flops_per_s=1, peak_flops=0), "peak_flops"),
    (flops.mfu, dict(achieved_flops_per_s=2e15, peak_flops=1e15), "mfu"),
    (flops.training_flops_per_s, dict(n_params=1e9, tokens_per_s=0), "tokens_per_s"),
    (flops.decode_tokens_per_s_bound, dict(model_bytes=0, bandwidth=1e12), "model_bytes"),
    (flops.decode_tokens_per_s_bound, dict(model_bytes=1e9, bandwidth=float("nan")), "bandwidth"),
    (flops.decode_tokens_per_s_bound, dict(model_bytes=1e9, bandwidth=1e12, batch=-2), "batch"),
    (flops.decode_tokens_per_s_bound, dict(model_bytes=1e9, bandwidth=1e12, kv_bytes=-1), "kv_bytes"),
    (flops.pf_days, dict(total_flops=-1), "total_flops"),
    (flops.chinchilla_tokens, dict(n_params=0), "n_params"),
    (flops.chinchilla_tokens, dict(n_params=1e9, tokens_per_param=0), "tokens_per_param"),
]


test_bad_input_names_the_argument, test_every_public_function_has_a_bad_input_case = badinput.make_tests(flops, BAD)


def test_attention_flops_are_palms_count():
    """PaLM (Chowdhery et al. 2022, Appendix B): training FLOPs per token 6N + 12·L·h·d_head·s."""
    from hwlib import calculator, models

    m = models.get("Llama 3 405B")
    per_token = m.attention_flops_per_token(8192)
    assert per_token == 2 * m.n_heads * 2 * m.head_dim * m.n_layers * 8192
    assert flops.attention_training_flops(per_token, 1) == 12 * m.n_layers * m.n_heads * m.head_dim * 8192
    est = calculator.estimate(m, tokens=15.6e12, train_seq_len=8192, n_gpus=16384)
    assert est.model_flops == est.training_flops + est.attention_flops
    assert est.attention_flops / est.training_flops == pytest.approx(0.0833, abs=1e-3)  # 8 % at 8k: no warning
    assert not [w for w in est.warnings if "attention adds" in w]
    # at 128k context attention outweighs the weights: the estimate says so
    long = calculator.estimate("Llama 3 8B", tokens=1e12, train_seq_len=131072 // 16)
    assert long.attention_flops > 0.1 * long.training_flops and any("attention adds" in w for w in long.warnings)
    # a window caps what a sliding layer attends to: Gemma 2 9B's 21 window layers stop at 4096
    g = models.get("Gemma 2 9B")
    assert g.attention_flops_per_token(8192) == 2 * g.n_heads * 2 * g.head_dim * (21 * 8192 + 21 * 4096)
    # MLA: queries and keys are d_head + d_rope = 192 wide, values 128
    v3 = models.get("DeepSeek-V3")
    assert v3.attention_flops_per_token(4096) == 2 * 128 * (192 + 128) * 61 * 4096


def test_forward_flops_leave_out_the_input_embedding_lookup():
    from hwlib import calculator, models

    m = models.get("Llama 3 8B")  # untied: V·d = 128256 × 4096 looked up, not multiplied
    assert m.lookup_params() == 128256 * 4096
    f = flops.forward_flops_shaped(m.n_params(), m.lookup_params(), 1)
    assert f == 2 * (m.n_params() - 128256 * 4096)
    assert flops.forward_flops(m.n_params(), 1) / f == pytest.approx(1.07, abs=0.005)
    # tied (Gemma 2 2B): the matrix is the output head too, so every weight is multiplied
    g = models.get("Gemma 2 2B")
    assert g.tied_embeddings and g.lookup_params() == 0
    est = calculator.estimate(model="Llama 3 8B")
    q = est["forward_flops_per_token"]
    assert q.value == f and q.function == "hwlib.flops.forward_flops_shaped" and "lookup" in q.label
    # a bare parameter count keeps the public 2N
    assert calculator.estimate(n_params=8e9)["forward_flops_per_token"].value == 1.6e10
    with pytest.raises(ValueError, match="lookup_params must be below n_params"):
        flops.forward_flops_shaped(1e6, 2e6, 1)
