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
