"""`hwlib estimate` and `hwlib diagnose`: formulas next to results, JSON in SI units, exit 2 on bad input."""

import json
import subprocess
import sys

import pytest

from hwlib import calculator, cli, diagnose


def run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_estimate_prints_formulas_and_matches_the_calculator(capsys):
    code, out, _ = run(
        capsys, "estimate", "--params", "350M", "--tokens", "7B", "--gpu", "h100", "--mfu", "0.35", "--price", "3"
    )
    assert code == 0
    assert "C = 6·N·D" in out and "t = C / (u·π·G·η)" in out
    est = calculator.estimate(n_params=350e6, tokens=7e9, gpu="h100", mfu=0.35, price_per_hour=3)
    for key in ("training_flops", "training_time_s", "cost_usd"):
        assert est[key].text() in out, key  # 1.47e19 FLOP, 11.8 h, $35.37 — the seed's example


def test_estimate_json_is_si(capsys):
    code, out, _ = run(
        capsys, "estimate", "--params", "350M", "--tokens", "7B", "--gpu", "h100", "--mfu", "0.35", "--json"
    )
    data = json.loads(out)
    by_key = {q["key"]: q for q in data["quantities"]}
    assert by_key["training_flops"]["value"] == pytest.approx(6 * 350e6 * 7e9)
    assert by_key["training_flops"]["unit"] == "FLOP" and by_key["training_time_s"]["unit"] == "s"
    assert all(q["formula"] for k, q in by_key.items() if k != "n_params")  # N was given: an input
    assert by_key["n_params"]["formula"] == "" and by_key["n_params"]["function"] == "argument n_params"


def test_diagnose_json_and_summary(capsys):
    code, out, _ = run(capsys, "diagnose", "--flops", "2.7e8", "--bytes", "1.3e8", "--gpu", "h100", "--json")
    data = json.loads(out)
    v = {q["key"]: q["value"] for q in data["quantities"]}
    expected = diagnose.kernel(2.7e8, 1.3e8, "h100")
    assert code == 0 and v["bound"] == "memory" == expected.bound
    assert v["attainable_flops"] == pytest.approx(expected.attainable_flops)
    assert data["details"]["remedies"] == list(expected.remedies)
    code, out, _ = run(
        capsys, "diagnose", "--flops", "2.7e8", "--bytes", "1.3e8", "--gpu", "h100", "--measured-s", "1e-5", "--json"
    )
    data = json.loads(out)
    assert {q["key"]: q["value"] for q in data["quantities"]}["achieved_flops"] == pytest.approx(2.7e13)
    assert any("faster than the roofline" in w for w in data["warnings"])
    code, out, _ = run(capsys, "diagnose", "--flops", "1e12", "--bytes", "1e9", "--gpu", "h100")
    assert "compute-bound" in out and "try:" in out


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["estimate", "--gpu", "h100"], "--model"),
        (["estimate", "--params", "350M", "--mfu", "2"], "mfu"),
        (["estimate", "--model", "llama-9"], "llama"),
        (["diagnose", "--flops", "-1", "--bytes", "1e9", "--gpu", "h100"], "flops"),
        (["diagnose", "--flops", "1e9", "--bytes", "1e9", "--gpu", "h900"], "h900"),
    ],
)
def test_bad_input_exits_2_with_one_line(argv, needle):
    proc = subprocess.run([sys.executable, "-m", "hwlib", *argv], capture_output=True, text=True)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0].lower() and lines[0].startswith("hwlib: error:")


def test_estimate_separates_training_and_serving_and_aliases_devices(capsys):
    def quantities(*argv):
        code, out, err = run(capsys, "estimate", "--model", "llama-3-8b", *argv, "--json")
        assert code == 0, err
        return {q["key"]: q["value"] for q in json.loads(out)["quantities"]}

    base = quantities()
    served = quantities("--batch", "64")
    assert served["activation_bytes"] == base["activation_bytes"]  # serving batch: KV only
    assert served["kv_cache_bytes"] == 64 * base["kv_cache_bytes"]
    trained = quantities("--micro-batch", "4", "--train-seq", "8k", "--gpus", "8", "--zero", "3")
    assert trained["activation_bytes"] == pytest.approx(8 * base["activation_bytes"], rel=0.01)
    assert quantities("--devices", "8", "--zero", "3") == quantities("--gpus", "8", "--zero", "3")
    code, _, err = run(capsys, "estimate", "--model", "llama-2-7b", "--seq", "8k")
    assert code == 2 and "exceeds the context of Llama 2 7B" in err
