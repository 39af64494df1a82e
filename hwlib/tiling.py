"""Tile and wave quantisation of a tiled matrix multiply on a GPU.

A GEMM C = A·B (C is M x N) is cut into output tiles of tile_m x tile_n; each tile is one thread
block's work, and the SMs run the tiles in *waves* of (SMs x tiles per SM) at a time. Two roundings
waste work (NVIDIA, "Matrix Multiplication Background User's Guide", sections "Tile quantization"
and "Wave quantization"; chapter 11, {ref}`ch11-tiles`):

* tile quantisation: a dimension that is not a multiple of the tile computes a partly empty last
  tile: useful share  e_tile = M·N / (⌈M/t_m⌉·t_m · ⌈N/t_n⌉·t_n);
* wave quantisation: a tile count that is not a multiple of the wave size leaves SMs idle in the
  last wave: e_wave = T / (⌈T / (S·p)⌉ · S·p), with T tiles, S SMs and p tiles resident per SM.

The time of the GEMM is (number of waves) x (time of one tile, ∝ K), so the attainable fraction of
peak is e_tile · e_wave. Padding a dimension to a multiple of 64 or 128 (a vocabulary of 50,257 ->
50,304 in nanoGPT; Karpathy) removes the tile loss and keeps tensor-core loads aligned.
Units: counts and fractions (dimensionless).
"""

from __future__ import annotations

from . import _check

FORMULAS = {
    "tile_count": "T = ⌈M/t_m⌉ · ⌈N/t_n⌉",
    "waves": "W = ⌈T / (S·p)⌉",
    "tile_efficiency": "e_tile = M·N / (⌈M/t_m⌉·t_m · ⌈N/t_n⌉·t_n)",
    "wave_efficiency": "e_wave = T / (W · S·p)",
    "gemm_efficiency": "e = e_tile · e_wave",
    "pad_to": "n' = ⌈n/q⌉ · q",
}
"""The formula each function of this module evaluates, as the calculators print it."""


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def pad_to(n, multiple=64) -> int:
    """n rounded up to a multiple of `multiple`: n' = ⌈n/q⌉·q (50,257 -> 50,304 for q = 64)."""
    n, q = _check.integer("n", n), _check.integer("multiple", multiple)
    return _ceil_div(n, q) * q


def tile_count(m, n, tile_m=128, tile_n=128) -> int:
    """Output tiles of an M x N result cut into tile_m x tile_n blocks: ⌈M/t_m⌉·⌈N/t_n⌉."""
    m, n = _check.integer("m", m), _check.integer("n", n)
    tile_m, tile_n = _check.integer("tile_m", tile_m), _check.integer("tile_n", tile_n)
    return _ceil_div(m, tile_m) * _ceil_div(n, tile_n)


def waves(tiles, sms, tiles_per_sm=1) -> int:
    """Waves needed to run `tiles` tiles on `sms` SMs holding `tiles_per_sm` each: ⌈T/(S·p)⌉."""
    tiles, sms = _check.integer("tiles", tiles), _check.integer("sms", sms)
    return _ceil_div(tiles, sms * _check.integer("tiles_per_sm", tiles_per_sm))


def tile_efficiency(m, n, tile_m=128, tile_n=128) -> float:
    """Share of the computed tile area that is the real M x N result (1.0 when both divide)."""
    m, n = _check.integer("m", m), _check.integer("n", n)
    tile_m, tile_n = _check.integer("tile_m", tile_m), _check.integer("tile_n", tile_n)
    return m * n / (_ceil_div(m, tile_m) * tile_m * _ceil_div(n, tile_n) * tile_n)


def wave_efficiency(tiles, sms, tiles_per_sm=1) -> float:
    """Share of SM-slots busy over all waves: T / (⌈T/(S·p)⌉·S·p). 132 SMs, 1,024 tiles: 8 waves,
    the last with 100 of 132 busy, e = 1024/1056 = 0.970."""
    n_waves = waves(tiles, sms, tiles_per_sm)  # checks every argument
    return tiles / (n_waves * sms * tiles_per_sm)


def gemm_efficiency(m, n, sms, tile_m=128, tile_n=128, tiles_per_sm=1) -> float:
    """Attainable fraction of peak for an M x N (x any K) GEMM after both roundings: e_tile·e_wave."""
    tiles = tile_count(m, n, tile_m, tile_n)
    return tile_efficiency(m, n, tile_m, tile_n) * wave_efficiency(tiles, sms, tiles_per_sm)


def sweep(sizes, sms, tile=128, tiles_per_sm=1) -> list:
    """Rows {n, tiles, waves, tile_efficiency, wave_efficiency, efficiency} for square N x N GEMMs."""
    rows = []
    for n in sizes:
        t = tile_count(n, n, tile, tile)
        rows.append(
            {
                "n": int(n),
                "tiles": t,
                "waves": waves(t, sms, tiles_per_sm),
                "tile_efficiency": tile_efficiency(n, n, tile, tile),
                "wave_efficiency": wave_efficiency(t, sms, tiles_per_sm),
                "efficiency": gemm_efficiency(n, n, sms, tile, tile, tiles_per_sm),
            }
        )
    return rows
