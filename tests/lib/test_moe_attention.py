"""hwlib.moe and hwlib.attention against the papers' published figures."""

import numpy as np
import pytest

from hwlib import attention, memory, models, moe, specs


@pytest.mark.parametrize(
    "name, total, active",
    [
        ("Mixtral 8x7B", 46.7e9, 12.9e9),  # Jiang et al. 2024 / model card
        ("DeepSeek-V3", 671e9, 37e9),  # DeepSeek-V3 report (without the MTP module)
        ("Mistral 7B", 7.24e9, 7.24e9),  # Jiang et al. 2023
    ],
)
def test_parameter_counts_match_papers(name, total, active):
    m = moe.get(name)
    assert m is models.get(name)  # one config, one shape, one count
    assert m.n_params() == pytest.approx(total, rel=0.005)
    assert m.n_active_params() == pytest.approx(active, rel=0.015)
    assert models.published(name) == {"total": total, **({"active": active} if active != total else {})}


def test_memory_from_total_flops_from_active():
    m = moe.get("mixtral")
    row = {r["name"]: r for r in moe.table()}["Mixtral 8x7B"]
    assert row["weights_bf16"] == 2 * m.n_params() and row["total_params"] == m.n_params()
    assert row["flops_per_token"] == 2 * m.n_active_params() and row["active_params"] == m.n_active_params()
    row = {r["name"]: r for r in moe.table()}["DeepSeek-V3"]
    assert row["active_fraction"] == pytest.approx(37 / 671, rel=0.02)


def test_all_to_all_matches_a_routing_simulation():
    """Count the bytes that leave each device when tokens are routed at random to top-k experts."""
    rng = np.random.default_rng(0)
    devices, experts, k, tokens, d = 8, 64, 4, 4096, 1024
    sent = np.zeros(devices)
    for dev in range(devices):
        choice = np.array([rng.choice(experts, k, replace=False) for _ in range(tokens)])
        owner = choice // (experts // devices)
        sent[dev] = np.sum(owner != dev) * d * 2  # bf16 dispatch
    expected = moe.all_to_all_bytes(tokens, d, k, devices, "bf16", training=False) / 2  # dispatch only
    assert sent.mean() == pytest.approx(expected, rel=0.01)


def test_all_to_all_binding_verdict():
    h100 = specs.get("H100 SXM")
    nvlink = moe.expert_parallel_step("DeepSeek-V3", 4096, 8, h100, 450e9)
    ib = moe.expert_parallel_step("DeepSeek-V3", 4096, 64, h100, 50e9)
    assert nvlink["bound"] == "compute" and ib["bound"] == "all-to-all"
    # the verdict flips exactly at the binding bandwidth, independent of the token count
    beta = moe.binding_bandwidth("DeepSeek-V3", h100, 64)
    for t in (512, 8192):
        assert moe.expert_parallel_step("DeepSeek-V3", t, 64, h100, beta * 1.01)["bound"] == "compute"
        assert moe.expert_parallel_step("DeepSeek-V3", t, 64, h100, beta * 0.99)["bound"] == "all-to-all"


def test_mla_cache_is_deepseek_v2_formula():
    # DeepSeek-V2 Table 1: MLA caches (d_c + d_h^R) l = 9/2 d_h l values per token (d_h = 128)
    per_token = attention.mla_kv_cache_bytes(1, 512, 64, 1, dtype="fp32") / 4
    assert per_token == 4.5 * 128
    v3 = attention.kv_cache_bytes_for("DeepSeek-V3", 4096)
    assert v3 == 61 * 576 * 4096 * 2
    # DeepSeek-V2 Table 1's comparison: MHA 2·n_h·d_h with d_h = 128 against MLA's 512 + 64 = 576 values
    assert attention.mha_equivalent_kv_bytes("DeepSeek-V3", 4096) / v3 == pytest.approx(2 * 128 * 128 / 576)


def test_sliding_window_eight_times_smaller_at_32k():
    # Mistral 7B §2: W = 4096, at 32k tokens the rolling buffer cache uses 8x less memory
    swa = attention.kv_cache_bytes_for("Mistral 7B", 32768)
    full = memory.kv_cache_bytes(32, 8, 128, 32768)
    assert full / swa == 8
    assert attention.kv_cache_bytes_for("Mistral 7B", 2000) == memory.kv_cache_bytes(32, 8, 128, 2000)


def test_speculative_expected_tokens_formula_and_simulation():
    assert attention.speculative_expected_tokens(0.0, 5) == 1
    assert attention.speculative_expected_tokens(1.0, 5) == 6
    rng = np.random.default_rng(1)
    alpha, gamma = 0.7, 4
    accepted = rng.random((200_000, gamma)) < alpha
    # tokens per step: accepted prefix + 1 (the target's own token)
    prefix = np.where(accepted.all(axis=1), gamma, np.argmin(accepted, axis=1))
    assert (prefix + 1).mean() == pytest.approx(attention.speculative_expected_tokens(alpha, gamma), rel=0.01)
    # Leviathan et al. Theorem 3.8 with c = 0 is the expected token count
    assert attention.speculative_speedup(alpha, gamma, 0) == attention.speculative_expected_tokens(alpha, gamma)


def test_speculative_helps_only_when_memory_bound():
    small = attention.speculative_decode(16e9, 16e9, "H100 SXM", 0.8, 4, batch=1)
    large = attention.speculative_decode(16e9, 16e9, "H100 SXM", 0.8, 4, batch=512)
    assert small["verify_bound"] == "memory" and small["speedup"] > 2
    assert small["speedup"] == pytest.approx(attention.speculative_speedup(0.8, 4, 0.05))
    assert large["verify_bound"] == "compute" and large["speedup"] < 1


@pytest.mark.parametrize(
    "call",
    [
        lambda: moe.get("mixtrol 9x9"),
        lambda: attention.speculative_expected_tokens(1.2, 3),
        lambda: attention.swa_kv_cache_bytes(32, 8, 128, 4096, 0),
        lambda: moe.all_to_all_bytes(100, 4096, 2, 0),
    ],
)
def test_bad_input(call):
    with pytest.raises((ValueError, KeyError)) as err:
        call()
    assert str(err.value)


def _spec(batch):
    from hwlib import flops

    h100, l3 = specs.get("H100 SXM"), models.get("Llama 3 8B")
    w, f = memory.weights_bytes(l3.n_params()), flops.forward_flops(l3.n_params(), 1)
    kv = memory.kv_cache_bytes_for(l3, 256)
    return attention.speculative_decode(w, f, h100, 0.8, 4, batch=batch, cost_ratio=0.05, kv_bytes=kv), (w, f, kv)


def test_speculation_gains_e_over_1_plus_gamma_c_while_verification_is_memory_bound():
    e = attention.speculative_expected_tokens(0.8, 4)
    r, _ = _spec(16)
    assert r["verify_bound"] == "memory"
    assert r["speedup"] == pytest.approx(e / (1 + 4 * 0.05))


def test_speculation_still_gains_when_verification_is_compute_bound_and_loses_while_plain_is_memory_bound():
    r128, _ = _spec(128)
    assert r128["verify_bound"] == "compute" and r128["speedup"] == pytest.approx(1.76, abs=0.01)
    r512, (w, f, kv) = _spec(512)
    h100 = specs.get("H100 SXM")
    assert r512["speedup"] < 1
    assert (w + 512 * kv) / h100.bandwidth > 512 * f / h100.peak_flops("bf16")  # plain decode: memory-bound


def test_absorbed_mla_decode_attention_does_about_242_flop_per_cached_byte():
    """MLA attends in the latent: per cached token, the latent and the RoPE part are read once."""
    a = moe.get("DeepSeek-V3")
    flop = a.n_heads * 2 * ((a.kv_lora_rank + a.qk_rope_head_dim) + a.kv_lora_rank)
    byte = (a.kv_lora_rank + a.qk_rope_head_dim) * 2
    assert flop / byte == pytest.approx(241.8, abs=0.1)
