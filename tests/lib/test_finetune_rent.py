"""hwlib.finetune (LoRA/QLoRA) and hwlib.rent against published figures and their own data."""

from pathlib import Path

import pytest
import yaml

from hwlib import finetune, memory, models, rent, specs


def test_nf4_double_quant_bits():
    # Dettmers et al. 2023 §3: constants cost 32/64 = 0.5 bits per parameter, 0.127 with double quantization
    assert finetune.nf4_bits_per_param(double_quant=False) == 4.5
    assert finetune.nf4_bits_per_param() - 4 == pytest.approx(0.127, abs=5e-4)


def test_qlora_paper_65b_figures():
    # QLoRA abstract: finetuning a 65B model needs >780 GB (16-bit, 12 B/param); QLoRA fits it in 48 GB
    n = 65.2e9
    full = finetune.finetune_bytes(n, "full", full_state_bytes=12)["total"]
    assert full > 780e9
    lora = 80 * 64 * (4 * (8192 + 8192) + 3 * (8192 + 22016))  # every linear of LLaMA-65B at r = 64
    assert finetune.finetune_bytes(n, "qlora", lora)["total"] < 48e9


def test_qlora_7b_about_10_gb():
    # the lesson: QLoRA fits a 7B fine-tune in about 10 GB; full fine-tuning needs 16 B/param
    parts = finetune.model_finetune_bytes("Llama 2 7B", "qlora")
    assert 5e9 < parts["total"] < 11e9
    full = finetune.model_finetune_bytes("Llama 2 7B", "full")
    assert full["weights"] == memory.training_state_bytes(models.get("Llama 2 7B").n_params())
    assert parts["total"] == pytest.approx(parts["weights"] + parts["adapters"] + parts["activations"])


def test_lora_param_count_hu_et_al():
    # Hu et al. 2021 §4.2: GPT-3 175B with r = 4 on W_q and W_v: checkpoint 350 GB -> 35 MB (~10,000x)
    gpt3 = models.get("GPT-3 175B")
    checkpoint = 2 * finetune.lora_params(gpt3, 4, ("q", "v"))  # fp16 adapters
    assert checkpoint == pytest.approx(35e6, rel=0.1)
    assert 350e9 / checkpoint == pytest.approx(1e4, rel=0.1)


def test_finetune_flops():
    assert finetune.finetune_flops(7e9, 1e6, "full", recompute=False) == 6 * 7e9 * 1e6
    assert finetune.finetune_flops(7e9, 1e6, "qlora", recompute=False) == 4 * 7e9 * 1e6
    assert finetune.finetune_flops(7e9, 1e6, "lora", recompute=True) == 6 * 7e9 * 1e6


def test_prices_file_every_row_sourced_and_dated():
    raw = yaml.safe_load(rent.DATA_PATH.read_text())
    assert len({p["accelerator"] for p in raw["prices"]}) >= 4
    for p in raw["prices"]:
        assert p["source"] in raw["sources"] and str(p["date"]).startswith("20")
        specs.get(p["accelerator"])


def test_rent_tables_follow_the_formulas():
    for task in rent.TASKS:
        rows = rent.table(task)
        assert {r["accelerator"] for r in rows} == set(rent.priced())
        fits = [r["fits"] for r in rows]
        assert fits == sorted(fits, reverse=True)
    h100 = rent.evaluate("train-gpt2", "H100 SXM", usd_per_hour=2.0)
    n = models.get("GPT-2 small").n_params()
    assert h100["seconds"] == pytest.approx(6 * n * 10e9 / (0.4 * specs.get("H100 SXM").peak_flops("bf16")))
    assert h100["usd"] == pytest.approx(h100["seconds"] / 3600 * 2.0)
    t4 = rent.evaluate("serve-8b", "T4")
    assert not t4["fits"]  # 16 GB of bf16 weights do not fit a 16 GB card
    serve = rent.evaluate("serve-8b", "H100 SXM", usd_per_hour=3.6)
    assert serve["usd_per_million_tokens"] == pytest.approx(1e6 / serve["tokens_per_s"] / 1000)


@pytest.mark.parametrize(
    "call",
    [
        lambda: finetune.finetune_bytes(7e9, "prefix-tuning"),
        lambda: finetune.lora_params("llama-2-7b", 8, ("qkv",)),
        lambda: rent.evaluate("train-gpt5", "H100"),
        lambda: rent.cheapest("MI300X"),
    ],
)
def test_bad_input(call):
    with pytest.raises((ValueError, KeyError)) as err:
        call()
    assert str(err.value)


def test_rent_fits_under_the_books_one_memory_budget():
    """A task "fits" exactly when memory.fits says so: headroom and a CUDA context, as everywhere."""
    checked = 0
    for task in ("qlora-7b", "train-gpt2"):
        for acc in specs.all():
            try:
                r = rent.evaluate(task, acc.name)
            except (KeyError, ValueError):  # no dated price for this part
                continue
            # the memory a program sees: a T4 or L4 with ECC on (as clouds run them) shows 1/16 less
            assert r["usable_bytes"] == memory.usable_bytes(acc.visible_memory_bytes())
            assert r["fits"] == memory.fits(r["memory_bytes"], acc.visible_memory_bytes()), (task, acc.name)
            checked += 1
    assert checked >= 10


def _qlora_7b_on_a_t4(**extra):
    """calculator.estimate asked, argument by argument, what rent's qlora-7b task asks on a T4."""
    from hwlib import calculator

    t = rent.TASKS["qlora-7b"]
    return calculator.estimate(
        t["model"],
        tokens=t["tokens"],
        gpu="T4",
        mfu=t["mfu"],
        finetune="qlora",
        lora_rank=t["rank"],
        train_seq_len=t["seq_len"],
        micro_batch=t["batch"],
        recompute="full",
        **extra,
    )


def test_one_recompute_convention_model_flops_at_the_mfu():
    """rent, the calculator and `hwlib finetune` time a QLoRA run from the same model FLOPs (4ND):
    recomputation lowers the MFU, it is not counted as more model FLOPs."""
    t = rent.TASKS["qlora-7b"]
    r = rent.evaluate("qlora-7b", "T4")
    est = _qlora_7b_on_a_t4()
    assert (
        r["flops"]
        == est.training_flops
        == finetune.finetune_flops(models.get(t["model"]).n_params(), t["tokens"], "qlora", recompute=False)
    )
    assert r["seconds"] == pytest.approx(est.training_time_s)
    assert est["training_flops"].formula == finetune.FORMULAS["finetune_flops.adapters"]


def test_qlora_7b_on_a_t4_gives_the_same_hours_and_bytes_everywhere(capsys):
    """rent, calculator.estimate, `hwlib estimate` and `hwlib rent`: one memory count (with the fp32
    logits of the loss) and one time (4ND at the MFU) for QLoRA 7B on a T4."""
    import json

    from hwlib import cli

    t = rent.TASKS["qlora-7b"]
    r = rent.evaluate("qlora-7b", "T4")
    est = _qlora_7b_on_a_t4(price_per_hour=r["usd_per_hour"])
    shape = models.get(t["model"])
    logits = memory.logits_bytes(t["seq_len"], t["batch"], shape.vocab_size)
    assert logits == 2048 * 32000 * 4  # 262 MB of fp32 logits
    parts = finetune.model_finetune_bytes(shape, "qlora", t["rank"], t["seq_len"], t["batch"])
    assert r["memory_bytes"] == est.training_bytes_per_gpu == parts["total"] + logits
    assert r["seconds"] == est.training_time_s and r["usd"] == est.cost_usd
    assert r["seconds"] / 3600 == pytest.approx(4.61, abs=0.005)  # 4·6.74e9·1e7 / (0.25 · 65 TFLOP/s)
    argv = ["estimate", "--model", "llama-2-7b", "--gpu", "t4", "--tokens", "10M", "--mfu", "0.25"]
    argv += ["--finetune", "qlora", "--rank", "64", "--train-seq", "2048", "--recompute", "full", "--json"]
    assert cli.main(argv) == 0
    doc = {q["key"]: q["value"] for q in json.loads(capsys.readouterr().out)["quantities"]}
    assert doc["training_time_s"] == r["seconds"] and doc["training_bytes_per_gpu"] == r["memory_bytes"]
    assert cli.main(["rent", "--task", "qlora-7b", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["details"]["rows"]
    t4 = next(row for row in rows if row["accelerator"] == "T4")
    assert t4["seconds"] == r["seconds"] and t4["memory_bytes"] == r["memory_bytes"]


def test_gpt2_pretraining_in_rent_is_the_calculators_training_memory():
    est = rent.training_estimate("train-gpt2", "H100 SXM")
    r = rent.evaluate("train-gpt2", "H100 SXM")
    assert r["memory_bytes"] == est.training_bytes_per_gpu
    assert est.logits_bytes == 16 * 1024 * 50257 * 4  # 3.29 GB: the vocabulary is most of it
    assert r["memory_bytes"] == est.training_state_bytes + est.activation_bytes + est.logits_bytes


def test_prices_come_from_the_providers_own_pages_with_a_date():
    """Every rent price is read from the provider's own page (its domain in the source), dated, and the
    hourly figure is the page's per-second rate x 3600 where the page prices by the second."""
    root = Path(__file__).resolve().parents[2]
    raw = yaml.safe_load((root / "hwlib" / "data" / "prices.yaml").read_text(encoding="utf-8"))
    own = {"Runpod serverless": "docs.runpod.io", "Google Cloud (GPU only)": "cloud.google.com"}
    for row in raw["prices"]:
        text = raw["sources"][row["source"]]
        assert own[row["provider"]] in text and "read" in text.lower(), row
        assert str(row["date"]) >= "2026-12-01"
    per_second = {"L4": 0.00019, "A100 80GB SXM": 0.00076, "H100 SXM": 0.00116, "H200": 0.00155, "B200": 0.00240}
    for acc, usd_s in per_second.items():
        assert f"${usd_s:.5f}" in raw["sources"]["runpod_serverless"]
        assert rent.cheapest(acc).usd_per_hour == pytest.approx(usd_s * 3600, rel=1e-9)
    assert rent.cheapest("T4").confidence == "low"  # not re-read: the data says so
    assert "runpod2026serverlesspricing" in (root / "references.bib").read_text(encoding="utf-8")
