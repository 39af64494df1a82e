"""Mixture-of-experts shapes in hwlib.models (read from hwlib/data/models.yaml) and in the calculator:
memory from the total parameter count, FLOPs from the active one, decode bytes from the experts a
batch touches (chapter 7, "Expert parallelism")."""

import pytest

from hwlib import calculator, flops, memory, models, moe


def test_mixtral_in_models_is_the_same_shape_as_in_moe():
    m = models.get("mixtral-8x7b")
    assert moe.get("Mixtral 8x7B") is m is models.get("Mixtral 8x7B") and "Mixtral 8x7B" in models.names()
    assert moe.get(m) is m and moe.MoEShape is models.ModelShape  # the old name is the same class
    assert m.n_params() == pytest.approx(models.published("Mixtral 8x7B")["total"], rel=0.005)
    assert m.n_active_params() == pytest.approx(models.published("Mixtral 8x7B")["active"], rel=0.005)
    assert (m.n_experts, m.top_k, m.max_context, m.kv_bytes_per_token("bf16")) == (8, 2, 32768, 131072.0)


# Counts the separate hwlib.moe shape class gave before it became hwlib.models.ModelShape (its own
# formulas: 2·V·d + L·(attention + 2d) + d + dense MLPs + L_moe·((E + shared)·3·d·d_ff + d·E)); the one
# class must give the same numbers, and they are the papers' 7.24B, 46.7B / 12.9B (Jiang et al. 2023,
# 2024) and 671B / 37B (DeepSeek-AI 2024, without the MTP module).
_BEFORE = {
    "Mistral 7B": (7_241_732_096, 7_241_732_096, 7.24e9, 7.24e9),
    "Mixtral 8x7B": (46_702_792_704, 12_879_925_248, 46.7e9, 12.9e9),
    "DeepSeek-V3": (671_026_404_352, 37_552_282_624, 671e9, 37e9),
}


@pytest.mark.parametrize("name", list(_BEFORE))
def test_moe_counts_are_those_of_the_former_moe_shape_class(name, capsys):
    import json

    from hwlib import cli

    total, active, published_total, published_active = _BEFORE[name]
    m, row = moe.get(name), {r["name"]: r for r in moe.table()}[name]
    assert (m.n_params(), m.n_active_params()) == (row["total_params"], row["active_params"]) == (total, active)
    assert row["weights_bf16"] == memory.weights_bytes(total, "bf16") == 2.0 * total
    assert row["flops_per_token"] == flops.forward_flops(active, 1) == 2.0 * active
    assert total == pytest.approx(published_total, rel=0.005)
    assert active == pytest.approx(published_active, rel=0.015)
    assert cli.main(["moe", "--model", name, "--json"]) == 0
    got = {q["key"]: q["value"] for q in json.loads(capsys.readouterr().out)["quantities"]}
    assert (got["total_params"], got["active_params"]) == (total, active)
    assert (got["weights_bytes"], got["flops_per_token"]) == (2.0 * total, 2.0 * active)


@pytest.mark.parametrize("name", [n for n in models.names() if models.get(n).n_experts == 1])
def test_dense_models_are_unchanged(name):
    m = models.get(name)
    assert m.n_active_params() == m.n_params() == m.params_read_per_step(64)
    assert m.router_params() == 0 and m.mlp_params() == m.expert_params()


def test_weights_read_per_step_run_from_active_to_total():
    m = models.get("Mixtral 8x7B")
    reads = [m.params_read_per_step(b) for b in (1, 2, 4, 16, 64, 1024)]
    assert reads[0] == pytest.approx(m.n_active_params(), rel=1e-12)
    assert all(a < b for a, b in zip(reads, reads[1:-1]))
    assert reads[-1] == pytest.approx(m.n_params(), rel=1e-9)
    # two tokens, top-2 of 8 each: E_hit = 8·(1 − (6/8)²) = 3.5 experts per layer on average
    hit = 8 * (1 - (6 / 8) ** 2)
    assert reads[1] == pytest.approx(m.n_params() - m.n_layers * (8 - hit) * m.expert_params())
    with pytest.raises(ValueError, match="batch"):
        m.params_read_per_step(0)


def test_the_calculator_sizes_memory_by_total_and_compute_by_active():
    m = models.get("Mixtral 8x7B")
    e = calculator.estimate("Mixtral 8x7B", tokens=1e12, gpu="H100 SXM", n_gpus=64, batch=1, seq_len=4096)
    assert e["weights_bytes"].value == memory.weights_bytes(m.n_params(), "bf16")
    assert e["training_state_bytes"].value == 16 * m.n_params()
    assert e["active_params"].value == m.n_active_params()
    assert e["training_flops"].value == flops.training_flops(m.n_active_params(), 1e12)
    # forward FLOPs per token of a known shape: 2(N_active − N_lookup), the input embedding is a lookup
    assert e["forward_flops_per_token"].value == 2 * (m.n_active_params() - m.lookup_params())
    assert m.lookup_params() == m.vocab_size * m.d_model
    # batch 1: the active weights, less the rows of the input embedding the one token does not look up
    unread_rows = (m.vocab_size - 1) * m.d_model
    assert e["weights_read_per_step"].value == pytest.approx(memory.weights_bytes(m.n_active_params() - unread_rows))
    dense = calculator.estimate("Llama 3 8B", tokens=1e12)
    assert "active_params" not in dense.quantities


def test_moe_activations_keep_k_experts_mlps():
    m = models.get("Mixtral 8x7B")
    got = memory.activation_bytes_for(m, 4096, 1)
    want = memory.activation_bytes(
        4096,
        1,
        m.d_model,
        m.n_layers,
        m.n_heads,
        dropout=False,
        attention="flash",
        ffn_hidden=2 * m.d_ff,
        gated_mlp=True,
        kv_hidden=m.n_kv_heads * m.head_dim,  # grouped-query attention: 8 KV heads of 128
    )
    assert got == want


def test_batch_one_decode_of_mixtral_reads_active_weights_only():
    """At batch 1 Mixtral decodes about as fast as a 13B dense model, not a 47B one."""
    moe_est = calculator.estimate("Mixtral 8x7B", gpu="H200", seq_len=4096)
    dense_bound = calculator.estimate(n_params=models.get("Mixtral 8x7B").n_params(), gpu="H200")
    assert moe_est["decode_tokens_per_s"].value > 3 * dense_bound["decode_tokens_per_s"].value


def test_a_custom_mixture_of_experts_shape_is_checked():
    m = models.custom(
        vocab_size=32000,
        d_model=4096,
        n_layers=32,
        n_heads=32,
        n_kv_heads=8,
        d_ff=14336,
        max_context=32768,
        n_experts=8,
        top_k=2,
    )
    assert m.n_params() == models.get("Mixtral 8x7B").n_params()
    with pytest.raises(ValueError, match=r"top_k \(3\) must be at most n_experts \(2\)"):
        models.custom(vocab_size=10, d_model=8, n_layers=1, n_heads=1, n_experts=2, top_k=3)
    with pytest.raises(ValueError, match="n_experts"):
        models.custom(vocab_size=10, d_model=8, n_layers=1, n_heads=1, n_experts=0)


def test_cli_decode_of_a_mixture_reads_the_routed_experts(capsys):
    import json

    from hwlib import cli, specs

    m, h200 = models.get("Mixtral 8x7B"), specs.get("H200")
    for batch in (1, 64):
        assert cli.main(["decode", "--model", "mixtral", "--gpu", "h200", "--batch", str(batch), "--json"]) == 0
        doc = json.loads(capsys.readouterr().out)
        got = {q["key"]: q["value"] for q in doc["quantities"]}
        unread_rows = (m.vocab_size - batch) * m.d_model  # an untied embedding: B rows looked up
        w_read = memory.weights_bytes(m.params_read_per_step(batch) - unread_rows, "bf16")
        kv = memory.kv_cache_bytes_for(m, 4096, 1, "bf16")
        assert got["weights_bytes"] == memory.weights_bytes(m.n_params(), "bf16")  # memory: every expert
        assert got["weights_read_per_step"] == pytest.approx(w_read)
        step = max(2 * m.n_active_params() * batch / h200.peak_flops("bf16"), (w_read + batch * kv) / h200.bandwidth)
        assert got["decode_tokens_per_s"] == pytest.approx(batch / step)
        assert got["decode_tokens_per_s"] == pytest.approx(
            flops.decode_tokens_per_s_bound(w_read, h200.bandwidth, batch, kv)
        )  # memory-bound at both batches
    assert cli.main(["decode", "--model", "llama-3-8b", "--gpu", "h100", "--json"]) == 0
    dense = {q["key"]: q for q in json.loads(capsys.readouterr().out)["quantities"]}
    assert "experts" not in dense["weights_read_per_step"]["label"]  # a dense model reads every layer


def test_lora_on_a_mixture_adapts_every_experts_mlp():
    from hwlib import finetune

    m, r = models.get("Mixtral 8x7B"), 64
    d, kv, ff = m.d_model, m.n_kv_heads * m.head_dim, m.d_ff
    attention = r * (2 * (d + d) + 2 * (d + kv))
    mlp = r * 3 * (d + ff)
    assert finetune.lora_params(m, r) == m.n_layers * (attention + m.n_experts * mlp)
    dense = models.get("Llama 3 8B")  # same attention and MLP shapes, one expert
    assert finetune.lora_params(dense, r) == dense.n_layers * (attention + mlp)


def test_cli_energy_of_a_mixture_counts_the_bytes_it_reads(capsys):
    import json

    from hwlib import cli, energy, specs

    m, h200 = models.get("Mixtral 8x7B"), specs.get("H200")
    assert cli.main(["energy", "--model", "mixtral", "--gpu", "h200", "--batch", "4", "--json"]) == 0
    got = {q["key"]: q["value"] for q in json.loads(capsys.readouterr().out)["quantities"]}
    w, kv = m.weights_read_per_step(4, "bf16"), memory.kv_cache_bytes_for(m, 4096)
    assert got["tokens_per_s"] == pytest.approx(flops.decode_tokens_per_s_bound(w, h200.bandwidth, 4, kv))
    assert got["joules_per_token"] == pytest.approx(energy.decode_joules_per_token(w, h200, 4, kv))


def test_cli_train_and_finetune_count_the_active_flops_and_speculative_refuses(capsys):
    import json

    from hwlib import cli, finetune

    m = models.get("Mixtral 8x7B")
    assert cli.main(["train", "--model", "mixtral", "--tokens", "1e12", "--gpu", "h100", "--json"]) == 0
    got = {q["key"]: q["value"] for q in json.loads(capsys.readouterr().out)["quantities"]}
    assert got["training_flops"] == flops.training_flops(m.n_active_params(), 1e12)
    assert cli.main(["finetune", "--model", "mixtral", "--tokens", "1e9", "--json"]) == 0
    got = {q["key"]: q["value"] for q in json.loads(capsys.readouterr().out)["quantities"]}
    assert got["training_flops"] == finetune.finetune_flops(m.n_active_params(), 1e9, "qlora", recompute=False)
    assert got["weights_bytes"] == pytest.approx(m.n_params() * finetune.nf4_bits_per_param() / 8)  # memory: all
    assert cli.main(["speculative", "--model", "mixtral", "--gpu", "h100"]) == 2
    assert "mixture of experts is not modelled" in capsys.readouterr().err
