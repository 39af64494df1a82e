"""Published recipes as the papers state them (DeepSeek-V3's FP8, Megatron's MFU), tiling
arithmetic with the right constraint, and rules that agree with the book's own tables."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

from hwlib import formats, runs, specs
from hwlib.hierarchy import sm_limits

ROOT = Path(__file__).resolve().parents[1]


def _text(rel: str) -> str:
    return (ROOT / rel).read_text(encoding="utf-8")


# --- DeepSeek-V3's FP8 recipe (report section 3.3)


def test_deepseek_v3_fp8_recipe_is_stored_as_the_report_states_it():
    recipe = runs.get("deepseek_v3")["fp8_recipe"]
    assert recipe["fp8_gemms"] == ["Fprop", "Dgrad", "Wgrad"]
    kept = " ".join(recipe["higher_precision"])
    for op in ("embedding", "output head", "gating", "normalization", "attention"):
        assert op in kept
    assert (recipe["activation_tile"], recipe["weight_block"], recipe["promotion_interval"]) == (128, 128, 128)
    assert recipe["accumulator_bits"] == 14


def test_a_14_bit_accumulator_drifts_and_promotion_every_128_fixes_it():
    """The model the chapter draws: a running sum kept to 14 significant bits."""

    def rnd(x, bits):
        m, e = math.frexp(x)
        return math.ldexp(round(math.ldexp(m, bits)), e - bits)

    prods = np.abs(np.random.default_rng(0).standard_normal(8192)).tolist()
    exact = math.fsum(prods)
    part = total = 0.0
    straight = 0.0
    for i, p in enumerate(prods, 1):
        straight = rnd(straight + p, 14)
        part = rnd(part + p, 14)
        if i % 128 == 0:
            total, part = total + part, 0.0
    promoted = total + part
    assert abs(straight - exact) / exact > 1e-3  # 2^-14 per step, K = 8192: the sum drifts
    assert abs(promoted - exact) / exact < 1e-4


# --- E4M3 overflow is NaN in a raw cast, the largest finite value in a saturating one


def test_e4m3_overflow_raw_is_nan_saturating_is_448():
    assert math.isnan(float(formats.quantize([70000.0], "fp8_e4m3", saturate=False)[0]))
    assert float(formats.quantize([70000.0], "fp8_e4m3")[0]) == 448.0
    assert float(formats.quantize([-70000.0], "fp8_e4m3")[0]) == -448.0
    ch5 = _text("chapters/05_number_formats.md")
    assert "__NV_SATFINITE" in ch5 and "ml_dtypes" in ch5


def test_bf16_conversion_is_round_to_nearest_even_not_a_cut():
    x = np.array([1.0 + 2**-8 + 2**-12], np.float32)  # above the halfway point of two BF16 neighbours
    assert float(formats.quantize(x, "bf16")[0]) == 1.0 + 2**-7  # a cut would give 1.0
    assert "low 16 bits cut off" not in _text("chapters/05_number_formats.md")


# --- GEMM reuse is set by the output tile; the FP32 accumulator binds


def test_tile_problem_arithmetic():
    h200 = specs.get("H200")
    lim = sm_limits("H200")
    t = 2 * h200.peak_flops("bf16") / h200.bandwidth  # t = b·π/β for BF16 from HBM
    assert t == pytest.approx(412, abs=1)
    slab = 2 * t * 64 * 2  # A and B slabs, k_blk = 64, BF16
    assert slab / 2**10 == pytest.approx(103, abs=1) and slab < lim["max_shared_bytes_per_sm"]
    acc = t**2 * 4
    assert acc > lim["registers_per_sm"] * 4  # the FP32 accumulator is what does not fit
    assert 2 * 128 * 256 / ((128 + 256) * 2) == pytest.approx(85.3, abs=0.1)


def test_shared_memory_tile_is_64_per_clock():
    """Dense BF16 FLOP per clock per SM against 128 shared-memory bytes per clock per SM, one clock."""
    h100 = specs.get("H100 SXM")
    flop_per_clk_sm = h100.peak_flops("bf16") / (h100.compute_units * 1.83e9)
    assert flop_per_clk_sm == pytest.approx(4096, rel=0.01)
    assert 2 * 4096 / 128 == 64
    ch2 = _text("chapters/02_gpu_anatomy.md")
    assert 'f_h200 = implied["H200"]' not in ch2


# --- speculative decoding, the rule the formula gives


def _spec(batch):
    from hwlib import attention, flops, memory, models

    h100, l3 = specs.get("H100 SXM"), models.get("Llama 3 8B")
    w, f = memory.weights_bytes(l3.n_params()), flops.forward_flops(l3.n_params(), 1)
    kv = memory.kv_cache_bytes_for(l3, 256)
    return attention.speculative_decode(w, f, h100, 0.8, 4, batch=batch, cost_ratio=0.05, kv_bytes=kv), (w, f, kv)


def test_speculation_gains_e_over_1_plus_gamma_c_while_verification_is_memory_bound():
    from hwlib import attention

    e = attention.speculative_expected_tokens(0.8, 4)
    r, _ = _spec(16)
    assert r["verify_bound"] == "memory"
    assert r["speedup"] == pytest.approx(e / (1 + 4 * 0.05))


def test_speculation_still_gains_when_verification_is_compute_bound_and_loses_while_plain_is_memory_bound():
    r128, _ = _spec(128)
    assert r128["verify_bound"] == "compute" and r128["speedup"] == pytest.approx(1.76, abs=0.01)
    r512, (w, f, kv) = _spec(512)
    h100 = specs.get("H100 SXM")
    assert r512["speedup"] < 1
    assert (w + 512 * kv) / h100.bandwidth > 512 * f / h100.peak_flops("bf16")  # plain decode: memory-bound


# --- MLA attends in the latent


def test_absorbed_mla_decode_attention_does_about_242_flop_per_cached_byte():
    from hwlib import moe

    a = moe.get("DeepSeek-V3")
    flop = a.n_heads * 2 * ((a.kv_lora_rank + a.qk_rope_head_dim) + a.kv_lora_rank)
    byte = (a.kv_lora_rank + a.qk_rope_head_dim) * 2
    assert flop / byte == pytest.approx(241.8, abs=0.1)
    for rel in ("chapters/08_training_inference.md", "glossary.md"):
        assert "re-expand" not in _text(rel), rel


# --- the evidence against "a third to a half"


def test_llama3_model_card_hours_imply_15_6_and_27_9_percent_mfu():
    from hwlib import energy, flops, models

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
    ch8 = _text("chapters/08_training_inference.md")
    assert "smith2022mtnlg" in ch8 and "530B model trained on" not in ch8


# --- minor: hwlib docstrings cite chapters, not section numbers that drift


def test_hwlib_docstrings_cite_no_book_section_numbers():
    book_section = re.compile(r"[Cc]hapter \d+,? §\d|(?<![\w)] )§\d+\.\d+ ?\(?[\"“]")
    hits = []
    for p in (ROOT / "hwlib").rglob("*.py"):
        if {"bench", "grading", "kernels"} & set(p.parts):
            continue
        text = p.read_text(encoding="utf-8")
        hits += [f"{p.name}:{m.group(0)}" for m in book_section.finditer(text)]
    assert hits == []
    roof = _text("hwlib/roofline.py")
    assert "chapter 7" not in roof  # the roofline is chapter 6


# --- one quantity, one value


def test_littles_law_latency_is_the_published_pointer_chase_everywhere():
    from hwlib import hierarchy

    lat = hierarchy.entry("latency", "H100 PCIe")
    latency = hierarchy.value(lat["dram_cycles"]) / hierarchy.value(lat["clock_hz"])
    assert latency == pytest.approx(375.2e-9, rel=1e-3)
    for rel in ("formulas.md", "exercises/ex05_littles_law/source.md", "exercises/ex05_littles_law/checks.yaml"):
        assert "550e-9" not in _text(rel) and "5.5e-7" not in _text(rel), rel
    assert 'hierarchy.entry("latency", "H100 PCIe")' in _text("exercises/ex05_littles_law/source.md")


def test_sequences_that_fit_use_the_usable_memory_in_chapter_8():
    from hwlib import memory, models

    h100, l3 = specs.get("H100 SXM"), models.get("Llama 3 8B")
    room = memory.usable_bytes(h100.memory_bytes) - memory.weights_bytes(l3.n_params())
    fit = {c: int(room // memory.kv_cache_bytes_for(l3, c)) for c in (4096, 8192)}
    assert fit == {4096: 114, 8192: 57}
    w = memory.weights_bytes(l3.n_params())
    one_rule = {
        c: memory.sequences_that_fit(w, memory.kv_cache_bytes_for(l3, c), h100.visible_memory_bytes()) for c in fit
    }
    assert one_rule == fit  # the book's one convention gives the same counts
    ch8 = _text("chapters/08_training_inference.md")
    assert "memory.sequences_that_fit(" in ch8
    assert "units.format_bytes(h100.memory_bytes - w8)" not in ch8


def test_formula_sheet_examples_match_the_chapters():
    f = _text("formulas.md")
    assert "memory.activation_bytes_for(l2, 4096)" in f  # SwiGLU width, as chapters 8 and 9
    assert "kv_bytes=memory.kv_cache_bytes_for(l3, 4096)" in f  # energy per token as chapter 9's table


# --- primary sources


REJECTED_HOSTS = (
    "grokipedia",
    "lzwjava",
    "geektopia",
    "sysrqmts",
    "fpsbench",
    "cheap5v",
    "store.sourcecode",
    "archive-lib.hpctech",
    "upb-pc2",
    "gpu.blog",
    "hpc-notes",
    "firmwaresecurity",
    "soylentnews",
    "techbytes",
    "wiaix",
    "ada_l4_die",
)


def test_no_data_file_or_bibliography_entry_cites_a_rejected_secondary_source():
    texts = {p.name: p.read_text(encoding="utf-8") for p in (ROOT / "hwlib" / "data").glob("*.yaml")}
    texts["references.bib"] = _text("references.bib")
    hits = [(name, host) for name, text in texts.items() for host in REJECTED_HOSTS if host in text]
    assert hits == []


def test_prices_come_from_the_providers_own_pages_with_a_date():
    """Every rent price is read from the provider's own page (its domain in the source), dated, and the
    hourly figure is the page's per-second rate x 3600 where the page prices by the second."""
    import yaml

    from hwlib import rent

    raw = yaml.safe_load((ROOT / "hwlib" / "data" / "prices.yaml").read_text(encoding="utf-8"))
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
    bib = _text("references.bib")
    assert "runpod2026serverlesspricing" in bib and "techbytes" not in bib


PRESS_HOSTS = (
    "wccftech",
    "tomshardware",
    "spheron",
    "verda.com",
    "world-today-news",
    "svethardware",
    "pcguia",
    "theregister",
    "eminentnews",
    "awesomeagents",
    "macmegasite",
    "hmc-tech",
    "stencel",
    "thefpsreview",
    "pocketmags",
    "vultr",
)


def test_a_figure_from_the_press_or_a_blog_is_never_high_confidence():
    import yaml

    raw = yaml.safe_load((ROOT / "hwlib" / "data" / "specs.yaml").read_text(encoding="utf-8"))
    press = {k for k, v in raw["sources"].items() if any(h in v for h in PRESS_HOSTS)}
    assert press  # the class exists: these parts have no vendor datasheet in the data yet

    def walk(node, path):
        if isinstance(node, dict) and "source" in node and "confidence" in node:
            yield path, node
        elif isinstance(node, dict):
            for k, v in node.items():
                yield from walk(v, f"{path}.{k}")

    high = [p for p, v in walk(raw["accelerators"], "") if v["source"] in press and v["confidence"] == "high"]
    assert high == []


def test_l4_sm_count_and_l2_are_what_the_card_reports():
    l4 = specs.get("L4")
    assert l4.compute_units == 58 and l4.l2_bytes == 48 * 2**20
    raw = (ROOT / "hwlib" / "data" / "specs.yaml").read_text(encoding="utf-8")
    src = raw[raw.index("  l4_devicequery:") :].splitlines()[0]
    assert "(58) Multiprocessors" in src and "50331648" in src
    assert l4.ecc_memory_bytes == 23034 * 2**20 and specs.get("T4").ecc_memory_bytes == 15360 * 2**20


def test_chapter_3_covers_trillium_ironwood_and_vmem():
    ch3 = _text("chapters/03_accelerators.md")
    assert 'specs.get("TPU7x")' in ch3 and 'specs.get("TPU v6e")' in ch3 and "VMEM" in ch3
    v7, b200 = specs.get("TPU7x"), specs.get("B200")
    assert v7.peak_flops("fp8") == 2 * v7.peak_flops("bf16")  # "an FP8 rate above its BF16 one"
    assert v7.ridge_point("bf16") > b200.ridge_point("bf16")  # "above a B200's"


def test_h200_was_announced_in_2023():
    assert specs.get("H200").release_year == 2023 and specs.get("B200").release_year == 2024


# --- build-machine results live in their own box


@pytest.mark.parametrize(
    "rel",
    [
        "chapters/01_why_gpus.md",
        "chapters/02_gpu_anatomy.md",
        "chapters/04_arithmetic_intensity.md",
        "chapters/05_number_formats.md",
    ],
)
def test_build_machine_ratios_are_in_the_live_box(rel):
    text = _text(rel)
    assert ":::{admonition} On the machine that ran this page" in text
    for name in ("gap_fp32_spec", "gap_bf16_spec", "gap_fp32_meas", "hbm_vs_here", "f_live", "sk_own", "e7_fp32"):
        for m in re.finditer(r"\{glue:text\}`" + name + "`", text):
            before = text[: m.start()]
            assert before.rfind(":::{admonition} On the machine that ran this page") > before.rfind("\n:::\n"), (
                rel,
                name,
            )
