"""The calculator commands: in-process through hwlib.cli.main, and as `python -m hwlib` subprocesses
for exit codes. Every JSON output is checked against the library functions it wraps."""

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hwlib import cli, flops, memory, models, roofline, specs
from hwlib.cli import calc as cli_calc

ROOT = Path(__file__).resolve().parents[2]
H100 = specs.get("H100 SXM")


def run(capsys, *argv):
    """main(argv) in-process -> (exit code, stdout, stderr)."""
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys, *argv):
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)


def values(doc) -> dict:
    """{key: value} of a calculator document's quantities."""
    return {q["key"]: q["value"] for q in doc["quantities"]}


@pytest.mark.parametrize(
    "text, value",
    [
        ("7e9", 7e9),
        ("350M", 350e6),
        ("350m", 350e6),
        ("7B", 7e9),
        ("15.6T", 15.6e12),
        ("16_384", 16384),
        ("4k", 4000),
        ("1.3b", 1.3e9),
        ("12", 12),
        ("2,048", 2048),
        ("70G", 70e9),
    ],
)
def test_parse_count(text, value):
    assert cli_calc.parse_count(text) == pytest.approx(value)


def test_parse_context_uses_binary_k():
    assert cli_calc.parse_context("4k") == 4096
    assert cli_calc.parse_context("128K") == 131072
    assert cli_calc.parse_context("2048") == 2048


@pytest.mark.parametrize("text", ["7X", "", "abc", "1e9e9", "B"])
def test_parse_count_rejects(text):
    with pytest.raises(argparse.ArgumentTypeError, match="350M"):
        cli_calc.parse_count(text)


@pytest.mark.parametrize(
    "x, text",
    [(16384, "16384"), (3.5e8, "3.5e8"), (0.35, "0.35"), (9.894e14, "9.89e14"), (1, "1"), (1.47e19, "1.47e19")],
)
def test_fmt(x, text):
    assert cli_calc.fmt(x) == text


def test_train_prints_formula_and_matches_library(capsys):
    code, out, _ = run(
        capsys, "train", "--params", "350M", "--tokens", "7B", "--gpu", "h100", "--mfu", "0.35", "--price", "3"
    )
    assert code == 0
    assert "C = 6·N·D = 6 × 3.5e8 × 7e9 = 1.47e19 FLOP" in out
    assert "t = C / (u·π·G·η) = 1.47e19 / (0.35 × 9.89e14 × 1 × 1) = 11.8 h" in out
    assert "$35.37" in out
    data = run_json(
        capsys,
        "train",
        "--params",
        "350M",
        "--tokens",
        "7B",
        "--gpu",
        "h100",
        "--mfu",
        "0.35",
        "--price",
        "3",
        "--devices",
        "8",
        "--scaling",
        "0.9",
    )
    assert data["command"] == "train"
    assert data["inputs"]["n_params"] == 350e6 and values(data)["peak_flops"] == H100.peak_flops("bf16")
    c = flops.training_flops(350e6, 7e9)
    t = flops.training_time_s(c, H100.peak_flops("bf16"), 0.35, 8, 0.9)
    v = values(data)
    assert v["training_flops"] == c
    assert v["training_time_s"] == pytest.approx(t, rel=1e-12)
    assert v["cost_usd"] == pytest.approx(flops.cost_usd(t, 3.0, 8))
    assert v["gpu_hours"] == pytest.approx(8 * t / 3600)
    assert {q["key"]: q["formula"] for q in data["quantities"]}["training_flops"] == flops.FORMULAS["training_flops"]


def test_train_price_defaults_to_sheet_or_is_omitted(capsys):
    data = run_json(capsys, "train", "--params", "1B", "--tokens", "20B", "--gpu", "h100")
    assert data["inputs"]["price_per_hour"] == H100.price_per_hour_usd
    assert "cost_usd" in values(data)
    priceless = next(a.name for a in specs.all() if a.price_per_hour_usd is None and "bf16" in a.precisions())
    code, out, _ = run(capsys, "train", "--params", "1B", "--tokens", "20B", "--gpu", priceless)
    assert code == 0 and "--price" in out
    assert (
        "--price"
        in run_json(capsys, "train", "--params", "1B", "--tokens", "20B", "--gpu", priceless)["missing"]["cost_usd"]
    )


def test_train_with_model_uses_its_parameter_count(capsys):
    data = run_json(capsys, "train", "--model", "gpt2", "--tokens", "10B", "--gpu", "h100")
    assert data["inputs"]["n_params"] == models.get("gpt2").n_params()


def test_memory(capsys):
    code, out, _ = run(capsys, "memory", "--params", "7e9")
    assert code == 0
    assert "W = N·b = 7e9 × 2 B = 14.0 GB (13.0 GiB)" in out
    assert "112 GB" in out and "adam" in out
    assert "--model" in out  # no shape -> explains how to get a KV cache
    data = run_json(capsys, "memory", "--model", "llama-3-8b", "--seq", "8k", "--batch", "4", "--gpu", "h100")
    n = models.get("llama-3-8b").n_params()
    v = values(data)
    assert v["weights_bytes"] == memory.weights_bytes(n)
    assert v["training_state_bytes"] == 16 * n
    assert data["details"]["training_state_breakdown"]["adam"] == 8 * n
    assert v["kv_cache_bytes"] == memory.kv_cache_bytes(32, 8, 128, 8192, 4) == 4 * 2**30
    # training counts the activations and fp32 logits of 4 sequences of 8k tokens, as estimate does
    assert v["logits_bytes"] == 8192 * 4 * 128256 * 4
    assert v["training_bytes_per_gpu"] == 16 * n + v["activation_bytes"] + v["logits_bytes"]
    assert v["gpus_to_serve"] == 1 and v["fits_training"] is False
    unfused = values(run_json(capsys, "memory", "--model", "llama-3-8b", "--activations", "unfused"))
    assert unfused["activation_bytes_unfused"] > unfused["activation_bytes"]


def test_roofline(capsys):
    code, out, _ = run(capsys, "roofline", "--gpu", "h100", "--intensity", "100")
    assert code == 0
    assert "I* = π / β = 9.89e14 / 3.35e12 = 295.3 FLOP/byte" in out
    assert "P = min(π, β·I) = min(9.89e14, 3.35e12 × 100) = 335 TFLOP/s" in out
    assert "memory-bound" in out
    data = run_json(capsys, "roofline", "--gpu", "h100", "--matmul", "8192", "8192", "8192")
    v = values(data)
    assert v["intensity"] == pytest.approx(roofline.matmul_intensity(8192, 8192, 8192, 2))
    assert v["bound"] == "compute"
    assert v["attainable_flops_per_s"] == H100.peak_flops("bf16")
    data = run_json(capsys, "roofline", "--gpu", "h100", "--precision", "fp8", "--matmul", "16", "4096", "4096")
    assert data["inputs"]["bytes_per_element"] == 1 and values(data)["bound"] == "memory"


def test_decode(capsys):
    code, out, _ = run(capsys, "decode", "--params", "7B", "--gpu", "h100")
    assert code == 0
    assert "239 tokens/s" in out and "memory-bound" in out  # 3.35e12 / 14e9, three figures
    assert "warning" not in out
    data = run_json(capsys, "decode", "--model", "llama-3-8b", "--gpu", "h100", "--batch", "16", "--seq", "4k")
    shape = models.get("llama-3-8b")
    kv = memory.kv_cache_bytes_for(shape, 4096)
    # a step reads every weight but only the 16 looked-up rows of the untied input embedding
    read = memory.weights_bytes(shape.n_params() - (shape.vocab_size - 16) * shape.d_model)
    expected = flops.decode_tokens_per_s_bound(read, H100.bandwidth, 16, kv)
    assert values(data)["decode_tokens_per_s"] == pytest.approx(expected)
    assert values(data)["kv_cache_bytes"] == 16 * kv and values(data)["decode_bound"] == "memory-bound"
    # the T4 has no bf16: the peak defaults to its fp16 (the free Colab GPU works as is)
    data = run_json(capsys, "decode", "--params", "1.3B", "--gpu", "t4")
    v = values(data)
    assert v["decode_tokens_per_s"] == pytest.approx(specs.get("T4").bandwidth / 2.6e9)
    assert data["inputs"]["precision"] == "fp16" and data["inputs"]["n_params"] == 1.3e9
    assert v["fits_serving"] is True
    # a precision the part lacks is refused by name, not replaced
    code, _, err = run(capsys, "decode", "--params", "1.3B", "--gpu", "t4", "--precision", "bf16")
    assert code == 2 and "bf16" in err


def test_decode_warns_when_the_weights_do_not_fit(capsys):
    code, out, _ = run(capsys, "decode", "--model", "llama-3-70b", "--gpu", "h100")
    assert code == 0 and "warning: weights + KV cache" in out and "need 2 devices" in out
    data = run_json(capsys, "decode", "--model", "llama-3-70b", "--gpu", "h100")
    assert values(data)["fits_serving"] is False and "need 2 devices" in data["warnings"][0]


@pytest.mark.parametrize(
    "argv",
    [
        ["specs", "t4"],
        ["train", "--gpu", "t4", "--params", "124M", "--tokens", "10B"],
        ["roofline", "--gpu", "t4", "--intensity", "10"],
        ["diagnose", "--flops", "1e9", "--bytes", "1e8", "--gpu", "t4"],
    ],
)
def test_the_colab_t4_works_with_defaults(capsys, argv):
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    assert "fp16" in out or "6.5e13" in out or "65" in out


def test_bare_hwlib_prints_usage_and_gpu_help_lists_names(capsys):
    code, out, err = run(capsys)
    assert code == 0 and out.startswith("usage: hwlib") and "COMMAND" in out and err == ""
    with pytest.raises(SystemExit):
        cli.main(["train", "--help"])
    out = capsys.readouterr().out
    assert "H100 SXM" in out and "T4" in out and "MI300X" in out


def test_integer_and_fraction_flags(capsys):
    data = run_json(capsys, "train", "--params", "1B", "--tokens", "1B", "--gpu", "h100", "--mfu", "40%", "--gpus", "8")
    assert data["inputs"]["mfu"] == 0.4 and data["inputs"]["n_gpus"] == 8
    same = run_json(
        capsys, "train", "--params", "1B", "--tokens", "1B", "--gpu", "h100", "--mfu", "0.4", "--devices", "8"
    )
    assert same == data  # --devices is the same flag as --gpus
    for argv in (
        ["roofline", "--gpu", "h100", "--matmul", "1.5", "2", "3"],
        ["decode", "--params", "7B", "--gpu", "h100", "--batch", "2.5"],
        ["memory", "--model", "gpt2", "--seq", "100.5"],
        ["bench", "bandwidth", "--n", "0"],
    ):
        with pytest.raises(SystemExit) as exc:
            cli.main(argv)
        assert exc.value.code == 2
        assert "whole number" in capsys.readouterr().err


def test_context_longer_than_the_model_is_refused(capsys):
    code, _, err = run(capsys, "memory", "--model", "llama-2-7b", "--seq", "8k")
    assert code == 2 and "exceeds the context of Llama 2 7B (4096 tokens)" in err
    data = run_json(capsys, "memory", "--model", "gpt2")  # default capped at 1024
    assert data["inputs"]["seq_len"] == 1024


def test_piped_output_ends_without_a_traceback():
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run(
        f"{sys.executable} -m hwlib specs --json | head -c 20",
        shell=True,
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.stdout.startswith("{") and "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr


def test_specs(capsys):
    code, out, _ = run(capsys, "specs")
    assert code == 0
    assert all(name in out for name in specs.names())
    assert "295 FLOP/B" in out
    code, out, _ = run(capsys, "specs", "H100", "--precision", "fp8")
    assert code == 0 and H100.source("bf16") in out and H100.source("bandwidth") in out
    data = run_json(capsys, "specs", "h100")
    v = values(data)
    assert v["bandwidth"] == H100.bandwidth
    assert v["peak_flops_bf16"] == H100.peak_flops("bf16")
    assert v["ridge_point"] == pytest.approx(H100.ridge_point("bf16"))
    assert {q["key"]: q["inputs"] for q in data["quantities"]}["bandwidth"] == H100.source("bandwidth")
    table = run_json(capsys, "specs", "--precision", "fp8")
    assert {r["name"] for r in table["details"]["accelerators"]} == set(specs.names())


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["train", "--params", "1x", "--tokens", "1B", "--gpu", "h100"], "--params"),
        (["train", "--params", "1B", "--tokens", "1B", "--gpu", "h100", "--mfu", "40"], "0.4 for 40 %"),
        (["train", "--params", "-5", "--tokens", "1B", "--gpu", "h100"], "n_params"),
        (["train", "--params", "1B", "--tokens", "1B", "--gpu", "h100", "--devices", "0"], "--devices"),
        (["train", "--params", "1B", "--tokens", "1B", "--gpu", "h100", "--price", "-1"], "price"),
        (["train", "--params", "1B", "--tokens", "1B", "--gpu", "h999"], "unknown accelerator"),
        (["train", "--params", "1B", "--gpu", "h100"], "--tokens"),
        (["roofline", "--gpu", "t4", "--precision", "bf16"], "bf16"),
        (["roofline", "--gpu", "h100", "--intensity", "-1"], "intensity"),
        (["roofline", "--gpu", "h100", "--intensity", "1", "--matmul", "1", "1", "1"], "not allowed"),
        (["memory", "--params", "7B", "--dtype", "fp7"], "fp7"),
        (["memory", "--params", "7B", "--model", "gpt2"], "not allowed"),
        (["memory", "--model", "gpt-5"], "unknown model"),
        (["memory"], "--params"),
        (["decode", "--params", "7B", "--gpu", "h100", "--batch", "0"], "batch"),
        (["specs", "h10"], "did you mean"),
        (["specs", "--precision", "fp9"], "fp9"),
    ],
)
def test_bad_arguments_one_line_exit_2(capsys, argv, needle):
    code, out, err = None, "", ""
    try:
        code, out, err = run(capsys, *argv)
    except SystemExit as exc:  # argparse errors exit from inside parse_args
        code = exc.code
        out, err = capsys.readouterr()
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("hwlib: error:")
    assert needle in err


def _subprocess(*argv):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run(
        [sys.executable, "-m", "hwlib", *argv], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )


def test_subprocess_exit_codes():
    ok = _subprocess("train", "--params", "405B", "--tokens", "15.6T", "--gpu", "h100", "--devices", "16384", "--json")
    assert ok.returncode == 0, ok.stderr
    data = json.loads(ok.stdout)
    assert values(data)["training_time_s"] / 86400 == pytest.approx(67.7, abs=0.1)
    for argv in (
        ["train", "--params", "7B", "--tokens", "1T", "--gpu", "h100", "--mfu", "1.5"],
        ["decode", "--params", "lots", "--gpu", "h100"],
        ["specs", "nope"],
    ):
        bad = _subprocess(*argv)
        assert bad.returncode == 2, (argv, bad.stderr)
        assert bad.stdout == ""
        assert len(bad.stderr.strip().splitlines()) == 1 and bad.stderr.startswith("hwlib: error:")
