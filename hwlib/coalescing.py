"""Memory access patterns of a warp: 32-byte sectors of global memory, and shared-memory banks.

Global memory (NVIDIA, CUDA C++ Best Practices Guide, "Coalesced Access to Global Memory"; chapter
11, {ref}`ch11-coalescing`): the 32 threads of a warp issue one load instruction together and the
memory system serves it in 32-byte *sectors*. The sectors touched are the distinct 32-byte blocks
holding any requested byte; the useful share is

    e = 32 · b / (sectors · 32)      (b bytes per thread, one element each)

A unit-stride float32 warp reads 128 B in 4 sectors (e = 1); stride s touches min(32, 4s) sectors,
so e falls as 1/s until each thread has its own sector (s >= 8: e = 1/8). A start offset that is not
a multiple of 32 B costs one sector more per warp (5 for 4: e = 0.8 at the L2), though from DRAM the
extra sector is the next warp's and is usually served from L2.

Shared memory (CUDA C++ Programming Guide, "Shared Memory" of compute capability 5.x and later): 32
banks of 4-byte words; word address w lives in bank w mod 32. A warp whose threads read distinct
words in the same bank is serialised into as many passes as the most-loaded bank has distinct words
(an n-way conflict). Stride s words: ways = gcd(s, 32); padding a row of 32 floats to 33 makes a
column read conflict-free. Units: bytes, counts, fractions.
"""

from __future__ import annotations

import math

from . import _check

SECTOR_BYTES = 32
"""Granularity of a global-memory access (L1/L2 sector), bytes."""
WARP = 32
BANKS = 32
BANK_WORD_BYTES = 4

FORMULAS = {
    "sectors_per_warp": "sectors = |{⌊a_i/32⌋}|, a_i = offset + i·s·b",
    "sector_efficiency": "e = 32·b / (sectors·32)",
    "bank_conflict_ways": "ways = max over banks of distinct words (= gcd(s, 32))",
}
"""The formula each function of this module evaluates, as the calculators print it."""


def _addresses(stride, itemsize, offset_bytes, warp):
    stride = _check.integer("stride", stride)
    itemsize = _check.integer("itemsize", itemsize)
    offset = _check.integer("offset_bytes", offset_bytes, minimum=0)
    warp = _check.integer("warp", warp)
    return [offset + i * stride * itemsize for i in range(warp)], itemsize


def sectors_per_warp(stride=1, itemsize=4, offset_bytes=0, warp=WARP) -> int:
    """Distinct 32-byte sectors one warp's load touches: thread i reads `itemsize` bytes at
    offset_bytes + i·stride·itemsize. Float32, stride 1: 4; stride 2: 8; stride >= 8: 32."""
    starts, itemsize = _addresses(stride, itemsize, offset_bytes, warp)
    return len({s for a in starts for s in range(a // SECTOR_BYTES, (a + itemsize - 1) // SECTOR_BYTES + 1)})


def sector_efficiency(stride=1, itemsize=4, offset_bytes=0, warp=WARP) -> float:
    """Useful share of the bytes the sectors bring: warp·itemsize / (sectors·32)."""
    sectors = sectors_per_warp(stride, itemsize, offset_bytes, warp)
    return warp * itemsize / (sectors * SECTOR_BYTES)


def bank_conflict_ways(stride_words=1, warp=WARP, banks=BANKS) -> int:
    """Passes a warp needs when thread i reads 4-byte word i·stride_words of shared memory: the most
    distinct words falling in one bank (bank = word mod 32). Equals gcd(stride, 32): stride 1 -> 1,
    2 -> 2, 32 (a column of a 32-float row) -> 32, 33 (the padded row) -> 1."""
    s = _check.integer("stride_words", stride_words)
    warp, banks = _check.integer("warp", warp), _check.integer("banks", banks)
    per_bank: dict[int, set] = {}
    for i in range(warp):
        w = i * s
        per_bank.setdefault(w % banks, set()).add(w)
    return max(len(words) for words in per_bank.values())


def gcd_ways(stride_words: int, banks: int = BANKS) -> int:
    """The closed form of `bank_conflict_ways` for a full warp: gcd(stride, banks)."""
    return math.gcd(_check.integer("stride_words", stride_words), banks)
