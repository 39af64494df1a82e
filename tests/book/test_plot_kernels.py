"""hwlib.plot.kernels: the chapter 11 figures draw the records' values and the models beside them."""

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

import gpu_standin as gs  # noqa: E402
from hwlib import bench, plot, tiling  # noqa: E402


def _lines(ax):
    return {line.get_label(): line for line in ax.get_lines()}


def test_wave_model_is_hwlib_tiling():
    fig, ax = plot.wave_model([4096, 4097, 4224], 132)
    solid = next(line for label, line in _lines(ax).items() if label.startswith("model: tile x wave"))
    assert list(solid.get_ydata()) == [tiling.gemm_efficiency(n, n, 132) for n in (4096, 4097, 4224)]


def test_tile_sweep_draws_measured_and_model(monkeypatch):
    bk, _ = gs.install(monkeypatch, "H200")
    rec = bench.tiles(bk, sizes=[4096, 4097], vocab=[256], tokens=128, d_model=128, samples=1)
    fig, ax = plot.tile_sweep(rec)
    lines = _lines(ax)
    measured = next(line for label, line in lines.items() if label.startswith("measured"))
    assert list(measured.get_xdata()) == [4096, 4097] and max(measured.get_ydata()) == 1.0
    assert "N not a multiple of 8" in lines and any(k.startswith("model") for k in lines)
    assert "H200" in ax.get_title()
    with pytest.raises(ValueError, match="no square points"):
        plot.tile_sweep({"results": [], "device": {"name": "x"}})


def test_stride_sweep_on_a_cpu_record_says_cache_lines():
    rec = bench.coalescing(strides=(1, 2, 32), elements=1 << 14, samples=1)
    fig, ax = plot.stride_sweep(rec)
    lines = _lines(ax)
    assert list(lines["model: 64-byte cache lines"].get_ydata()) == [1.0, 0.5, 1 / 16]
    measured = next(line for label, line in lines.items() if label.startswith("measured"))
    assert list(measured.get_xdata()) == [1, 2, 32] and measured.get_ydata()[0] == 1.0
