"""hwlib.tiling: tile and wave quantisation, against hand counts and published figures."""

import math

import pytest

from hwlib import specs, tiling
from hwlib.hierarchy import sm_limits


def test_pad_vocabulary_like_nanogpt():
    """nanoGPT: GPT-2's vocab_size of 50257 'padded up to nearest multiple of 64' is 50304 (Karpathy)."""
    assert tiling.pad_to(50257, 64) == 50304 == 64 * 786
    assert tiling.pad_to(4096, 128) == 4096 and tiling.pad_to(4097, 128) == 4224


def test_tile_and_wave_counts_by_hand():
    assert tiling.tile_count(4096, 4096) == 32 * 32
    assert tiling.tile_count(4097, 4096) == 33 * 32
    assert tiling.waves(1024, 132) == 8 and tiling.waves(1056, 132) == 8 and tiling.waves(1057, 132) == 9
    assert tiling.wave_efficiency(1024, 132) == pytest.approx(1024 / 1056)
    assert tiling.wave_efficiency(132 * 8, 132) == 1.0
    assert tiling.wave_efficiency(1024, 132, tiles_per_sm=2) == pytest.approx(1024 / (4 * 264))


def test_efficiency_is_the_product_and_drops_just_past_a_tile_multiple():
    for n in (3968, 4096, 4097, 4224):
        t = tiling.tile_count(n, n)
        assert tiling.gemm_efficiency(n, n, 132) == pytest.approx(
            tiling.tile_efficiency(n, n) * t / (math.ceil(t / 132) * 132)
        )
    assert tiling.gemm_efficiency(4097, 4097, 132) < 0.9 * tiling.gemm_efficiency(4096, 4096, 132)
    assert tiling.tile_efficiency(4097, 4097) == pytest.approx((4097 / 4224) ** 2)
    rows = tiling.sweep([4096, 4097], 132)
    assert [(r["n"], r["tiles"], r["waves"]) for r in rows] == [(4096, 1024, 8), (4097, 1089, 9)]


def test_wave_quantisation_of_a_small_grid_on_a100():
    """108 SMs (A100), 128 x 128 tiles: a 1536 x 1536 output is 144 tiles = 1.33 waves, the second
    wave a third full: 144 / 216 = 2/3 of the SM-slots do work."""
    assert tiling.wave_efficiency(tiling.tile_count(1536, 1536), 108) == pytest.approx(2 / 3)


@pytest.mark.parametrize("bad", [0, -1, 1.5, "128", None])
def test_bad_input_names_the_argument(bad):
    with pytest.raises(ValueError, match="tile_m must be a whole number"):
        tiling.tile_count(4096, 4096, tile_m=bad)
    with pytest.raises(ValueError, match="sms must be a whole number"):
        tiling.gemm_efficiency(4096, 4096, bad)


@pytest.mark.parametrize("gpu", ["H100 SXM", "H200", "B200"])
def test_tensor_core_formats_need_the_same_tile_from_a_tier(gpu):
    """t >= b_f * pi_f / beta is the same for TF32 (4 B), BF16 (2 B) and FP8 (1 B), because each
    halving of the element size doubles the dense peak; FP32 on the CUDA cores needs far less."""
    acc = specs.get(gpu)
    bpi = {f: b * acc.peak_flops(f) for f, b in [("tf32", 4), ("bf16", 2), ("fp8", 1)]}
    # 3 %: the B200's TF32 peak is printed rounded (1.1 PFLOP/s, not 1.125)
    assert max(bpi.values()) == pytest.approx(min(bpi.values()), rel=0.03)
    assert 4 * acc.peak_flops("fp32") < 0.2 * bpi["bf16"]


def test_tile_problem_arithmetic():
    """GEMM reuse is set by the output tile; the FP32 accumulator is what binds, not shared memory."""
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
