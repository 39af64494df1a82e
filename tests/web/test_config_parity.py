"""A reader's config.json gives the same numbers everywhere: `hwlib memory --config PATH` and
`hwlib estimate --config PATH` on the command line, `calculator.estimate` in Python and the page's
pasted config (the JavaScript generated from `models.from_config_dict`, run in Node here; the
built page in Chromium by tests/browser/test_calculators.py)."""

import json

import pytest

from hwlib import calculator, cli, models
from test_web_transpile import needs_node, run_js

NAMES = ["DeepSeek-V3", "Gemma 2 9B", "Gemma 3 1B", "Qwen3 30B-A3B", "Mistral 7B", "GPT-2 small"]
SHARED = ("n_params", "weights_bytes", "training_state_bytes", "kv_cache_bytes", "inference_bytes")


def _write(tmp_path, name) -> tuple:
    cfg = models.catalogue()["models"][name]["config"]
    path = tmp_path / name.replace(" ", "_") / "config.json"
    path.parent.mkdir()
    path.write_text(json.dumps(cfg), encoding="utf-8")
    return cfg, path


def _cli(capsys, *argv) -> dict:
    assert cli.main([*argv, "--json"]) == 0
    return {q["key"]: q["value"] for q in json.loads(capsys.readouterr().out)["quantities"]}


@needs_node
def test_memory_command_estimate_and_page_agree_on_a_config(tmp_path, capsys):
    cases, cli_rows = [], []
    for name in NAMES:
        cfg, path = _write(tmp_path, name)
        seq = min(4096, models.from_config_dict(cfg).max_context)
        memory_doc = _cli(
            capsys, "memory", "--config", str(path), "--seq", str(seq), "--batch", "8", "--kv-dtype", "fp8"
        )
        estimate_doc = _cli(
            capsys, "estimate", "--config", str(path), "--seq", str(seq), "--batch", "8", "--kv-dtype", "fp8"
        )
        cases.append({"model": {"config": cfg}, "seq_len": seq, "batch": 8, "kv_dtype": "fp8"})
        cli_rows.append((name, memory_doc, estimate_doc))
    pages = run_js([("estimate", c) for c in cases])
    for (name, memory_doc, estimate_doc), case, page in zip(cli_rows, cases, pages):
        shape = models.from_config_dict(case["model"]["config"])
        python = calculator.estimate(shape, seq_len=case["seq_len"], batch=8, kv_dtype="fp8")
        js = {r["key"]: r["value"] for r in page["ok"]["rows"]}
        for key in SHARED:
            assert js[key] == pytest.approx(python[key].value, rel=1e-12), (name, key)
            assert estimate_doc[key] == python[key].value, (name, key)
            if key != "n_params":  # `hwlib memory` prints N in its header line, not as a quantity
                assert memory_doc[key] == python[key].value, (name, key)
        assert memory_doc["kv_cache_bytes"] == shape.kv_cache_bytes(case["seq_len"], 8, "fp8")


def test_deepseek_config_file_gives_the_latent_cache(tmp_path, capsys):
    _, path = _write(tmp_path, "DeepSeek-V3")
    doc = _cli(capsys, "memory", "--config", str(path), "--seq", "4096")
    assert doc["kv_cache_bytes"] == 61 * (512 + 64) * 4096 * 2  # 287.8 MB, not 7.16 GB of full K and V
    assert doc["weights_bytes"] == 2 * models.get("DeepSeek-V3").n_params()


def test_config_and_model_are_exclusive(tmp_path, capsys):
    _, path = _write(tmp_path, "Mistral 7B")
    with pytest.raises(SystemExit):
        cli.main(["memory", "--config", str(path), "--model", "mistral"])
    assert "not allowed with" in capsys.readouterr().err
