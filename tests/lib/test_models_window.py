"""Sliding-window attention in hwlib.models and the calculators: Mistral 7B (read from
hwlib/data/models.yaml) caches only the last W = 4096 positions (Jiang et al. 2023 §2)."""

import json

import pytest

from hwlib import attention, calculator, cli, memory, models, moe


def test_mistral_is_the_papers_shape_with_its_window():
    m = models.get("mistral-7b")
    assert moe.get("Mistral 7B") is m  # one shape, whichever module hands it out
    assert m.n_params() == pytest.approx(models.published("Mistral 7B")["total"], rel=0.005)
    assert (m.sliding_window, m.max_context, m.n_experts) == (4096, 8192, 1)
    assert [m.cached_tokens(s) for s in (1, 4096, 8192)] == [1, 4096, 4096]
    windowed = {n for n in models.names() if models.get(n).sliding_window is not None}
    assert windowed == {"Mistral 7B", "Gemma 2 2B", "Gemma 2 9B", "Gemma 3 1B"}
    assert m.window_layers() == m.n_layers  # Mistral: every layer slides


@pytest.mark.parametrize("seq", [1024, 4096, 8192])
def test_the_cache_stops_growing_at_the_window_everywhere(seq):
    m = models.get("Mistral 7B")
    want = attention.swa_kv_cache_bytes(m.n_layers, m.n_kv_heads, m.head_dim, seq, 4096)
    assert memory.kv_cache_bytes_for(m, seq) == want == attention.kv_cache_bytes_for("Mistral 7B", seq)
    e = calculator.estimate("Mistral 7B", seq_len=seq, batch=2)
    assert e["kv_cache_bytes"].value == 2 * want
    assert ("sliding window" in e["kv_cache_bytes"].label) and "min(s, W)" in e["kv_cache_bytes"].formula


def test_cli_memory_shows_the_windowed_cache(capsys):
    assert cli.main(["memory", "--model", "mistral", "--seq", "8k", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    kv = next(q for q in doc["quantities"] if q["key"] == "kv_cache_bytes")
    assert kv["value"] == memory.kv_cache_bytes(32, 8, 128, 4096) and "min(8192, 4096)" in kv["inputs"]
    assert kv["formula"] == models.FORMULAS["ModelShape.kv_cache_bytes.window"]
