"""hwlib.blockscale: MXFP4 and NVFP4 block scaling (OCP MX v1.0; NVIDIA 2025)."""

import numpy as np
import pytest

from hwlib import blockscale, formats

FP4_GRID = set(np.abs(formats.all_values("fp4_e2m1")))


def _weights(n=32 * 256, seed=2):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(n)
    w[rng.choice(n, n // 1000, replace=False)] *= 30  # rare outliers
    return w


def _rel(q, w):
    return np.linalg.norm(q - w) / np.linalg.norm(w)


def test_sizes_follow_the_specifications():
    assert blockscale.block_size("MXFP4") == 32 and blockscale.block_size("nvfp4") == 16
    assert blockscale.bits_per_value("mxfp4") == 4 + 8 / 32
    assert blockscale.bits_per_value("nvfp4") == 4 + 8 / 16
    with pytest.raises(ValueError, match="unknown block-scaled format 'mxfp6'"):
        blockscale.block_size("mxfp6")


def test_mx_blocks_share_a_power_of_two_scale_and_land_on_the_fp4_grid():
    w = _weights()
    q = blockscale.mx_quantize(w)
    for blk_w, blk_q in zip(w.reshape(-1, 32), q.reshape(-1, 32)):
        scale = 2.0 ** (np.floor(np.log2(np.abs(blk_w).max())) - 2)  # emax of E2M1 is 2 (max 6)
        assert set(np.abs(blk_q / scale)) <= FP4_GRID
    per_tensor = formats.quantize(w, "fp4_e2m1", scale="amax")
    assert _rel(q, w) < _rel(per_tensor, w) / 2  # outliers cost one block, not the tensor


def test_nvfp4_is_finer_than_mx_and_handles_zeros():
    w = _weights()
    assert _rel(blockscale.nvfp4_quantize(w), w) < _rel(blockscale.mx_quantize(w), w)
    assert not blockscale.nvfp4_quantize(np.zeros(32)).any()
    assert not blockscale.mx_quantize(np.zeros(32)).any()


def test_sizes_must_fill_whole_blocks():
    with pytest.raises(ValueError, match="multiple of the block size 32 values; got 40"):
        blockscale.mx_quantize(np.ones(40))
    with pytest.raises(ValueError, match="block must be a whole number"):
        blockscale.nvfp4_quantize(np.ones(32), block=0)
