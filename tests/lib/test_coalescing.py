"""hwlib.coalescing: 32-byte sectors per warp and shared-memory bank conflicts, against the CUDA guides."""

import math

import pytest

from hwlib import coalescing


def test_sectors_of_a_float32_warp():
    """CUDA Best Practices Guide, 'Coalesced Access to Global Memory': a warp of 4-byte words at unit
    stride is four 32-byte sectors; 'a stride of 2 results in a 50% of load/store efficiency'; a
    misaligned start touches five sectors."""
    assert coalescing.sectors_per_warp(1) == 4 and coalescing.sector_efficiency(1) == 1.0
    assert coalescing.sector_efficiency(2) == 0.5
    assert [coalescing.sectors_per_warp(s) for s in (4, 8, 16, 32)] == [16, 32, 32, 32]
    assert coalescing.sector_efficiency(32) == 4 / 32
    assert coalescing.sectors_per_warp(1, 4, offset_bytes=4) == 5
    assert coalescing.sector_efficiency(1, 4, offset_bytes=32) == 1.0  # a whole sector off: aligned again


def test_wider_elements_and_straddling():
    assert coalescing.sectors_per_warp(1, itemsize=8) == 8  # 256 B of doubles
    assert coalescing.sectors_per_warp(1, itemsize=16) == 16
    # a 4-byte element at byte 30 straddles two sectors
    assert coalescing.sectors_per_warp(1, 4, offset_bytes=30, warp=1) == 2


def test_bank_conflicts_are_gcd_of_stride_and_32():
    """Programming Guide, shared memory: 32 banks of 4-byte words; stride s -> gcd(s, 32)-way."""
    for s in range(1, 70):
        assert coalescing.bank_conflict_ways(s) == coalescing.gcd_ways(s) == math.gcd(s, 32), s
    assert coalescing.bank_conflict_ways(32) == 32  # a column of a 32 x 32 float tile
    assert coalescing.bank_conflict_ways(33) == 1  # the padded row [32][33]


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="stride must be a whole number >= 1"):
        coalescing.sector_efficiency(0)
    with pytest.raises(ValueError, match="offset_bytes must be a whole number >= 0"):
        coalescing.sectors_per_warp(1, 4, offset_bytes=-4)
    with pytest.raises(ValueError, match="stride_words"):
        coalescing.bank_conflict_ways(2.5)
