"""`hwlib memory`, `train` and `decode` are views over `calculator.estimate`: every quantity they print
is one of estimate's, with the same value, formula, function and numbers, for named shapes, a mixture,
a latent-attention model, a parameter count and a shape loaded from a config.json."""

import json

import pytest

from hwlib import calculator, cli, models
from hwlib.cli import calc as cli_calc

CASES = [
    (["--model", "llama-3-8b"], "Llama 3 8B"),
    (["--model", "mixtral"], "Mixtral 8x7B"),
    (["--model", "gemma-2-9b"], "Gemma 2 9B"),
    (["--params", "7B"], None),
    ("config", "DeepSeek-V3"),
    ("config", "Qwen3 30B-A3B"),
]


def _argv(tmp_path, how, name):
    if how != "config":
        return how
    path = tmp_path / (name.replace(" ", "_") + ".json")
    path.write_text(json.dumps(models.catalogue()["models"][name]["config"]), encoding="utf-8")
    return ["--config", str(path)]


def _doc(capsys, *argv) -> dict:
    assert cli.main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _model(how, name, src):
    if how == "config":  # the shape the command line loads, named after its file
        return models.from_hf_config(src[1]), None
    return (None, 7e9) if name is None else (models.get(name), None)


def _same_rows(doc, est, keys):
    rows = {q["key"]: q for q in doc["quantities"]}
    assert set(rows) == {k for k in keys if k in est}, "a view shows exactly estimate's rows it names"
    for key, row in rows.items():
        q = est[key]
        assert (row["value"], row["formula"], row["function"], row["inputs"]) == (
            q.value,
            q.formula,
            q.function,
            q.inputs,
        ), key
    return rows


@pytest.mark.parametrize("how, name", CASES)
def test_memory_train_and_decode_print_estimates_quantities(tmp_path, capsys, how, name):
    src = _argv(tmp_path, how, name)
    model, n = _model(how, name, src)
    seq = 2048
    est = calculator.estimate(
        model,
        n_params=n,
        gpu="L4",
        weights_dtype="int4",
        kv_dtype="fp8",
        seq_len=seq,
        train_seq_len=seq,
        batch=4,
        micro_batch=4,
    )
    doc = _doc(
        capsys, "memory", *src, "--gpu", "l4", "--dtype", "int4", "--kv-dtype", "fp8", "--seq", "2k", "--batch", "4"
    )
    rows = _same_rows(doc, est, cli_calc.MEMORY_KEYS + ("gpus_to_serve", "fits_training"))
    assert "weights_bytes" in rows and ("kv_cache_bytes" in rows) == (model is not None)

    est = calculator.estimate(
        model, n_params=n, tokens=1e12, gpu="A100 80GB", n_gpus=64, mfu=0.35, scaling_efficiency=0.9, train_seq_len=seq
    )
    doc = _doc(
        capsys,
        "train",
        *src,
        "--tokens",
        "1T",
        "--gpu",
        "a100",
        "--gpus",
        "64",
        "--mfu",
        "35%",
        "--scaling",
        "0.9",
        "--seq",
        "2k",
    )
    rows = _same_rows(doc, est, cli_calc.TRAIN_KEYS)
    assert rows["training_time_s"]["value"] == est.training_time_s

    est = calculator.estimate(
        model, n_params=n, gpu="H100 SXM", batch=8, seq_len=seq, serve_gpus=1, weights_dtype="fp8", kv_dtype="bf16"
    )
    doc = _doc(
        capsys, "decode", *src, "--gpu", "h100", "--batch", "8", "--seq", "2k", "--dtype", "fp8", "--kv-dtype", "bf16"
    )
    rows = _same_rows(doc, est, cli_calc.DECODE_KEYS)
    assert rows["decode_tokens_per_s"]["value"] == est.decode_tokens_per_s
    assert (not rows["fits_serving"]["value"]) == any("do not fit" in w for w in doc["warnings"])


def test_the_command_line_and_the_calculator_share_one_number_format():
    assert cli_calc.fmt is calculator.fmt
    assert [calculator.fmt(x) for x in (16384, 3.5e8, 0.35, 9.894e14, 1, 4096.0)] == [
        "16384",
        "3.5e8",
        "0.35",
        "9.89e14",
        "1",
        "4096",
    ]


def test_memory_and_estimate_take_fp32_gradients(capsys):
    doc = _doc(capsys, "memory", "--model", "llama-2-7b", "--fp32-grads")
    n = models.get("Llama 2 7B").n_params()
    rows = {q["key"]: q["value"] for q in doc["quantities"]}
    assert rows["training_state_bytes"] == 18 * n and doc["details"]["training_state_breakdown"]["gradients"] == 4 * n
    est = _doc(capsys, "estimate", "--model", "llama-2-7b", "--fp32-grads")
    assert {q["key"]: q["value"] for q in est["quantities"]}["training_state_per_gpu"] == 18 * n
