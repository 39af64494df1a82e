"""Errata of the third expert pass (issue 20): published recipes as the papers state them, tiling
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


def _reader_pages() -> dict[str, str]:
    pages = {p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8") for p in (ROOT / "chapters").glob("*.md")}
    for rel in ("glossary.md", "formulas.md", "intro.md", "references.bib"):
        pages[rel] = _text(rel)
    for p in (ROOT / "exercises").glob("ex*/source.md"):
        pages[p.relative_to(ROOT).as_posix()] = p.read_text(encoding="utf-8")
    return pages


# --- item 1: DeepSeek-V3's FP8 recipe (report section 3.3)


def test_deepseek_v3_fp8_recipe_is_stored_as_the_report_states_it():
    recipe = runs.get("deepseek_v3")["fp8_recipe"]
    assert recipe["fp8_gemms"] == ["Fprop", "Dgrad", "Wgrad"]
    kept = " ".join(recipe["higher_precision"])
    for op in ("embedding", "output head", "gating", "normalization", "attention"):
        assert op in kept
    assert (recipe["activation_tile"], recipe["weight_block"], recipe["promotion_interval"]) == (128, 128, 128)
    assert recipe["accumulator_bits"] == 14


def test_no_page_says_deepseek_ran_every_matrix_product_in_fp8():
    bad = re.compile(r"(every|all)\s+(matrix[- ]product|GEMM|matmul)\s+inputs?|inputs of every matrix product", re.I)
    hits = [rel for rel, text in _reader_pages().items() if bad.search(text)]
    assert hits == [], f"DeepSeek-V3 ran only the linear layers' GEMMs in FP8: {hits}"


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


# --- item 12: E4M3 overflow is NaN in a raw cast, the largest finite value in a saturating one


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


# --- item 2: GEMM reuse is set by the output tile; the FP32 accumulator binds


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
