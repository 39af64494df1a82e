"""hwlib.tiling: tile and wave quantisation, against hand counts and published figures."""

import math

import pytest

from hwlib import tiling


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
