"""`hwlib moe | finetune | energy | rent`: formulas beside results, JSON equal to the library, exit 2 on bad input."""

import json

import pytest

from hwlib import attention, cli, energy, finetune, memory, moe, rent


def run(capsys, *argv):
    rc = cli.main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


def values(out) -> dict:
    """{key: value} of the quantities of one calculator JSON document."""
    return {q["key"]: q["value"] for q in json.loads(out)["quantities"]}


def test_moe_json_matches_library(capsys):
    rc, out, _ = run(capsys, "moe", "--model", "deepseek-v3", "--ep", "64", "--link", "50e9", "--json")
    data = values(out)
    m = moe.get("DeepSeek-V3")
    assert rc == 0 and data["total_params"] == m.n_params() and data["active_params"] == m.n_active_params()
    assert data["weights_bytes"] == memory.weights_bytes(m.n_params(), "bf16")
    assert data["flops_per_token"] == 2 * m.n_active_params()
    doc = json.loads(out)
    credit = {q["key"]: q["function"] for q in doc["quantities"]}
    assert credit["total_params"] == "hwlib.models.ModelShape.n_params"
    assert credit["active_params"] == "hwlib.models.ModelShape.n_active_params"
    step = moe.expert_parallel_step(m, 4096, 64, "H100 SXM", 50e9)
    assert data["all_to_all_s"] == pytest.approx(step["all_to_all_s"])
    assert json.loads(out)["details"]["bound"] == "all-to-all"
    assert data["kv_bytes_per_sequence"] == attention.kv_cache_bytes_for(m.name, 4096)


def test_text_output_shows_formulas(capsys):
    rc, out, _ = run(capsys, "finetune", "--model", "llama-2-7b", "--tokens", "10M")
    assert rc == 0 and "4.127 bit" in out and "r·(d_in + d_out)" in out
    rc, out, _ = run(capsys, "energy", "--model", "llama-3-8b", "--batch", "16")
    assert rc == 0 and "E = P / r" in out
    rc, out, _ = run(capsys, "rent", "--task", "serve-8b")
    assert rc == 0 and "does not fit" in out and "per million tokens" in out


def test_finetune_and_energy_json(capsys):
    _, out, _ = run(capsys, "finetune", "--method", "qlora", "--json")
    v, parts = values(out), finetune.model_finetune_bytes("Llama 2 7B")
    assert v["state_and_activations_bytes"] == parts["total"]
    # the fp32 logits of the loss come on top: s·b·V·4 B (2048 × 1 × 32000 × 4 = 262 MB by default)
    assert v["logits_bytes"] == memory.logits_bytes(2048, 1, 32000)
    assert v["total_bytes"] == pytest.approx(parts["total"] + v["logits_bytes"], rel=1e-12)
    _, out, _ = run(capsys, "rent", "--task", "train-gpt2", "--json")
    rows = json.loads(out)["details"]["rows"]
    assert [r["accelerator"] for r in rows] == [r["accelerator"] for r in rent.table("train-gpt2")]
    fitting = [r for r in rows if r["fits"]]
    assert values(out) == {f"usd[{r['accelerator']}]": r["usd"] for r in fitting} and fitting
    _, out, _ = run(capsys, "energy", "--power", "350", "--json")
    assert json.loads(out)["inputs"]["power_w"] == 350
    assert values(out)["joules_per_token"] == pytest.approx(energy.joules_per_token(350, values(out)["tokens_per_s"]))


def test_speculative_pays_only_when_memory_bound(capsys):
    _, out, _ = run(capsys, "speculative", "--batch", "1", "--json")
    small, small_bound = values(out), json.loads(out)["details"]["verify_bound"]
    _, out, _ = run(capsys, "speculative", "--batch", "1024", "--json")
    large, large_bound = values(out), json.loads(out)["details"]["verify_bound"]
    assert small_bound == "memory" and small["speedup"] > 1
    assert large_bound == "compute" and large["speedup"] < 1
    assert small["expected_tokens"] == pytest.approx(attention.speculative_expected_tokens(0.8, 4))


@pytest.mark.parametrize(
    "command", [["speculative"], ["energy", "--model", "llama-3-8b"], ["moe", "--model", "mixtral-8x7b"]]
)
def test_the_free_colab_t4_works_with_defaults(capsys, command):
    """A T4 has no bf16: every command that reads a peak uses the part's best 16-bit format (fp16)."""
    rc, out, err = run(capsys, *command, "--gpu", "t4", "--json")
    assert rc == 0, err
    assert json.loads(out)["quantities"]


def test_speculative_on_a_t4_uses_its_fp16_peak():
    from hwlib import specs

    t4 = specs.get("T4")
    r = attention.speculative_decode(16e9, 16e9, t4, 0.8, 4, batch=1024)
    assert r == attention.speculative_decode(16e9, 16e9, t4, 0.8, 4, batch=1024, precision="fp16")


@pytest.mark.parametrize(
    "argv",
    [
        ["moe", "--model", "gpt-9"],
        ["speculative", "--alpha", "1.5"],
        ["finetune", "--method", "adapters"],
        ["energy", "--gpu", "h900"],
        ["rent", "--task", "nope"],
    ],
)
def test_bad_input_exit_2(capsys, argv):
    rc = None
    try:
        rc = cli.main(argv)
    except SystemExit as exc:
        rc = exc.code
    assert rc == 2
    assert "error" in capsys.readouterr().err
