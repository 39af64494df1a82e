"""hwlib.models: parameter counts against published sizes, KV cache, names, custom shapes."""

import dataclasses

import pytest

from hwlib import memory, models


@pytest.mark.parametrize(
    "name, published, rel",
    [
        ("GPT-2 small", 124_439_808, 1e-9),  # exact count of the released checkpoint (124M)
        ("GPT-2 medium", 354.8e6, 1e-3),
        ("GPT-2 large", 774.0e6, 1e-3),
        ("GPT-2 XL", 1557.6e6, 1e-3),
        ("GPT-3 175B", 174_600e6, 1e-3),  # N used in GPT-3's Table D.1
        ("Llama 2 7B", 6.74e9, 2e-3),
        ("Llama 2 13B", 13.0e9, 2e-3),
        ("Llama 2 70B", 69.0e9, 2e-3),
        ("Llama 3 8B", 8.03e9, 2e-3),
        ("Llama 3 70B", 70.6e9, 2e-3),
        ("Llama 3 405B", 405.9e9, 2e-3),
    ],
)
def test_parameter_counts_match_published(name, published, rel):
    assert models.get(name).n_params() == pytest.approx(published, rel=rel)


def test_gpt2_small_breakdown_by_hand():
    m = models.get("gpt2")
    assert m.embedding_params() == 50257 * 768 + 1024 * 768  # tied: no separate head
    assert m.attention_params() == 768 * 2304 + 2304 + 768 * 768 + 768
    assert m.mlp_params() == 2 * 768 * 3072 + 3072 + 768
    assert m.norm_params() == (2 * 12 + 1) * 2 * 768
    assert m.n_params_non_embedding() == m.n_params() - 39_383_808


def test_gqa_shrinks_attention_and_kv():
    l2, l3 = models.get("Llama 2 70B"), models.get("Llama 3 70B")
    d, kv = 8192, 8 * 128
    assert l2.attention_params() == 2 * d * d + 2 * d * kv  # W_k, W_v are d x 1024
    assert l3.n_heads // l3.n_kv_heads == 8
    mha = dataclasses.replace(l3, n_kv_heads=l3.n_heads)
    assert mha.kv_bytes_per_token() == 8 * l3.kv_bytes_per_token()


def test_swiglu_has_three_matrices():
    m = models.get("Llama 3 8B")
    assert m.mlp_params() == 3 * 4096 * 14336
    assert models.get("GPT-2 small").mlp_params() == 2 * 768 * 3072 + 3072 + 768


def test_untied_head_counts_twice():
    m = models.get("Llama 2 7B")
    tied = dataclasses.replace(m, tied_embeddings=True)
    assert m.n_params() - tied.n_params() == 32000 * 4096
    assert m.n_params_non_embedding() == tied.n_params_non_embedding()


def test_kv_bytes_per_token():
    m = models.get("Llama 3 8B")
    assert m.head_dim == 128
    assert m.kv_bytes_per_token() == 2 * 32 * 8 * 128 * 2
    assert m.kv_bytes_per_token("fp8") == m.kv_bytes_per_token("bf16") / 2
    assert m.kv_bytes_per_token("fp32") == 2 * m.kv_bytes_per_token()
    assert models.get("Llama 2 13B").kv_bytes_per_token() == 819_200  # vLLM's "~800 KB/token"
    assert m.kv_bytes_per_token() * 4096 == memory.kv_cache_bytes(32, 8, 128, 4096)
    with pytest.raises(ValueError, match="dtype"):
        m.kv_bytes_per_token("fp7")


@pytest.mark.parametrize(
    "query, canonical",
    [
        ("gpt2", "GPT-2 small"),
        ("GPT-2 Small", "GPT-2 small"),
        ("gpt2-xl", "GPT-2 XL"),
        ("llama-3-8b", "Llama 3 8B"),
        ("LLAMA_2_70B", "Llama 2 70B"),
        ("llama 3.1 405b", "Llama 3 405B"),
        ("Meta-Llama-3-8B", "Llama 3 8B"),
        ("gpt-3", "GPT-3 175B"),
    ],
)
def test_names(query, canonical):
    assert models.get(query).name == canonical


def test_unknown_name():
    with pytest.raises(KeyError) as err:
        models.get("llama 3 7b")
    msg = str(err.value)
    assert "did you mean" in msg and "Llama 3 8B" in msg and "Accepted" in msg
    with pytest.raises(KeyError):
        models.get(7)
    assert "Llama 3 405B" in models.names() and len(models.names()) == len(set(models.names()))


def test_custom_matches_builtin_and_validates():
    built = models.custom(
        "mine", vocab_size=128256, d_model=4096, n_layers=32, n_heads=32, n_kv_heads=8, d_ff=14336, max_context=8192
    )
    assert built.n_params() == models.get("Llama 3 8B").n_params()
    gpt = models.custom(
        vocab_size=50257,
        d_model=768,
        n_layers=12,
        n_heads=12,
        max_context=1024,
        tied_embeddings=True,
        gated_mlp=False,
        learned_positions=True,
        bias=True,
    )
    assert gpt.n_params() == 124_439_808 and gpt.d_ff == 3072 and gpt.n_kv_heads == 12
    # the lesson's exercise 1: 32 layers, 32 heads, head_dim 64, 4k context, bf16: "≈1.07 GB",
    # which is exactly 1 GiB
    ex = models.custom(vocab_size=50257, d_model=2048, n_layers=32, n_heads=32)
    assert ex.kv_bytes_per_token() * 4096 == 2**30 == pytest.approx(1.07e9, rel=5e-3)
    with pytest.raises(ValueError, match="multiple of n_heads"):
        models.custom(vocab_size=10, d_model=100, n_layers=1, n_heads=3)
    with pytest.raises(ValueError, match="multiple of n_kv_heads"):
        models.custom(vocab_size=10, d_model=96, n_layers=1, n_heads=12, n_kv_heads=5)
    with pytest.raises(ValueError, match="n_layers"):
        models.custom(vocab_size=10, d_model=96, n_layers=0, n_heads=12)
    with pytest.raises(ValueError, match="d_model"):
        models.custom(vocab_size=10, d_model=96.5, n_layers=1, n_heads=12)
    with pytest.raises(ValueError, match="bias"):
        models.custom(vocab_size=10, d_model=96, n_layers=1, n_heads=12, bias="yes")


def test_table_and_sources():
    rows = models.table()
    assert [r["name"] for r in rows] == models.names()
    assert all(models.get(n).source for n in models.names())
    row = models.table(["llama-3-70b"])[0]
    assert row["n_params"] == models.get("Llama 3 70B").n_params() and row["head_dim"] == 128


def test_docstring_examples():
    import doctest

    result = doctest.testmod(models)
    assert result.attempted > 0 and result.failed == 0
