"""hwlib.runs: published training runs, one value per fact, consistent with the book's formulas."""

import pytest

from hwlib import flops, runs, specs


def test_gpt3_compute_is_the_paper_figure_and_6nd_agrees():
    g = runs.get("gpt3_175b")
    assert g["training_flops"] == 3.14e23  # Brown et al. 2020, Table D.1
    assert flops.training_flops(g["params"], g["tokens"]) == pytest.approx(g["training_flops"], rel=2e-3)
    assert flops.pf_days(g["training_flops"]) == pytest.approx(3640, rel=2e-3)


def test_llama3_layouts_mfu_matches_tflops_over_the_dense_h100_peak():
    l3 = runs.get("llama3_405b")
    peak = specs.get("H100 SXM").peak_flops("bf16")
    assert [x["mfu"] for x in l3["layouts"]] == [0.43, 0.41, 0.38]
    for x in l3["layouts"]:
        # the paper rounds MFU to a whole percent; the rate / peak agrees to that rounding
        assert flops.mfu(x["tflops_per_gpu"], peak) == pytest.approx(x["mfu"], abs=0.006)
        assert x["gpus"] % (x["tp"] * x["cp"] * x["pp"]) == 0
    assert flops.training_flops(l3["params"], l3["tokens"]) == pytest.approx(l3["training_flops"], rel=0.01)


def test_palm_mfu_is_flagged_as_counting_attention_and_hfu_exceeds_mfu():
    p = runs.get("palm_540b")
    assert p["mfu"] == 0.462 and p["mfu_counts_attention"] is True
    for key in ("palm_540b", "megatron_22b", "megatron_175b", "megatron_530b", "megatron_1t"):
        r = runs.get(key)
        assert r["hfu"] >= r["mfu"]


def test_every_run_has_a_source_and_a_citation_in_the_bibliography():
    from pathlib import Path

    bib = (Path(__file__).resolve().parents[2] / "references.bib").read_text(encoding="utf-8")
    assert len(runs.names()) >= 8
    for key in runs.names():
        r = runs.get(key)
        assert r["source"] and "{" + r["cite"] + "," in bib.replace("@misc{", "{").replace("@article{", "{").replace(
            "@inproceedings{", "{"
        ), key


def test_get_returns_a_copy_and_unknown_names_the_keys():
    runs.get("llama3_405b")["layouts"].clear()
    assert len(runs.get("llama3_405b")["layouts"]) == 3
    with pytest.raises(KeyError, match="gpt3_175b"):
        runs.get("gpt-5")


def test_published_mfus_are_every_reported_value_and_their_span():
    got = runs.published_mfus()
    layouts = [x["mfu"] for x in runs.get("llama3_405b")["layouts"]]
    assert sorted(v for k, v in got.items() if k.startswith("Llama 3 405B")) == sorted(layouts)
    assert got["PaLM 540B"] == runs.get("palm_540b")["mfu"]
    assert min(got.values()) == 0.38 and max(got.values()) == runs.get("megatron_1t")["mfu"] == 0.563
    assert all(0 < v <= 1 for v in got.values())


def test_runs_doctests_hold():
    import doctest

    assert doctest.testmod(runs).failed == 0


def test_deepseek_v3_fp8_recipe_is_stored_as_the_report_states_it():
    """DeepSeek-V3 report, section 3.3."""
    recipe = runs.get("deepseek_v3")["fp8_recipe"]
    assert recipe["fp8_gemms"] == ["Fprop", "Dgrad", "Wgrad"]
    kept = " ".join(recipe["higher_precision"])
    for op in ("embedding", "output head", "gating", "normalization", "attention"):
        assert op in kept
    assert (recipe["activation_tile"], recipe["weight_block"], recipe["promotion_interval"]) == (128, 128, 128)
    assert recipe["accumulator_bits"] == 14


def test_llama3_model_card_hours_imply_15_6_and_27_9_percent_mfu():
    from hwlib import energy, models

    peak = specs.get("H100 SXM").peak_flops("bf16")
    got = {}
    for key, name in (("llama3_8b_card", "Llama 3 8B"), ("llama3_70b_card", "Llama 3 70B")):
        r = runs.get(key)
        got[name] = flops.training_flops(models.get(name).n_params(), r["tokens"]) / (r["gpu_hours"] * 3600) / peak
    assert got["Llama 3 8B"] == pytest.approx(0.156, abs=0.001)
    assert got["Llama 3 70B"] == pytest.approx(0.279, abs=0.001)
    # one home per fact: the energy data's Llama 3 8B hours are the same figure
    assert energy.published("llama3_8b")["gpu_hours"] == runs.get("llama3_8b_card")["gpu_hours"]


def test_megatron_table_is_marked_as_single_replica_benchmarks_and_the_530b_run_is_separate():
    for key in ("megatron_22b", "megatron_175b", "megatron_530b", "megatron_1t"):
        assert runs.get(key)["data_parallel"] == 1
    run = runs.get("megatron_530b_run")
    assert (run["mfu"], run["gpus"]) == (0.542, 2240)


def test_the_mtnlg_production_run_is_its_own_entry_with_its_throughput():
    """Korthikanti et al.'s 54.2 % is their measurement; Megatron-Turing NLG's run reports 113-126 TFLOP/s."""
    run = runs.get("mtnlg_530b")
    a100 = specs.get("A100 80GB SXM").peak_flops("bf16")
    assert a100 == 312e12
    assert [round(f / a100, 3) for f in run["flops_per_gpu"]] == [0.404, 0.388, 0.362]
    assert run["gpus"] == [2240, 2800, 3360] and "mfu" not in run  # hardware throughput, not an MFU
    assert "54.2%" in runs.get("megatron_530b_run")["source"]
