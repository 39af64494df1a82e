"""hwlib.plot: figures carry their device and data source in the title; bad input is refused."""
from dataclasses import dataclass

import matplotlib
import numpy as np
import pytest

from hwlib import plot


@dataclass
class FakeAccelerator:
    name: str
    bandwidth: float
    peaks: dict

    def peak_flops(self, precision):
        if precision not in self.peaks:
            raise ValueError(f"no {precision}")
        return self.peaks[precision]


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    matplotlib.pyplot.close("all")


def test_backend_is_not_interactive_in_tests():
    assert matplotlib.get_backend().lower() in {"agg", "module://matplotlib_inline.backend_inline"}


def test_roofline_from_spec_sheet_names():
    fig, ax = plot.roofline(["H100 SXM", "H200"], precision="bf16")
    title = ax.get_title()
    assert "spec sheet" in title and "H100" in title and "H200" in title
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"


def test_roofline_shape_and_ridge():
    acc = FakeAccelerator("Toy", 2e12, {"bf16": 1e15})
    fig, ax = plot.roofline([acc], "bf16", intensity_range=(1, 1e4))
    line = ax.get_lines()[0]
    x, y = line.get_xdata(), line.get_ydata()
    np.testing.assert_allclose(y, np.minimum(1e15, 2e12 * x))
    ridge_marker = ax.get_lines()[1]
    assert ridge_marker.get_xdata()[0] == pytest.approx(500.0)  # seed §4 worked example: I* = 500
    assert "ridge 500 FLOP/B" in line.get_label()


def test_roofline_kernels_and_measured_points():
    acc = FakeAccelerator("Toy", 2e12, {"bf16": 1e15})
    fig, ax = plot.roofline([acc], kernels=[("axpy", 0.25), ("gemm", 1000.0, 6e14)],
                            source="live on Toy")
    points = [(float(l.get_xdata()[0]), float(l.get_ydata()[0])) for l in ax.get_lines()
              if len(l.get_xdata()) == 1]
    assert (0.25, pytest.approx(0.5e12)) in points  # memory roof: 2e12 B/s * 0.25 FLOP/B
    assert (1000.0, pytest.approx(1e15)) in points  # compute roof
    assert (1000.0, pytest.approx(6e14)) in points  # the measured point
    labels = [l.get_label() for l in ax.get_lines()]
    assert "gemm: live on Toy" in labels
    assert "live on Toy" in ax.get_title()


def test_roofline_skips_devices_without_the_precision():
    a = FakeAccelerator("HasBF16", 2e12, {"bf16": 1e15})
    b = FakeAccelerator("NoBF16", 3e11, {"fp16": 6.5e13})
    fig, ax = plot.roofline([a, b], "bf16")
    assert "HasBF16" in ax.get_title() and "NoBF16" not in ax.get_title()
    assert any("no bf16 peak: NoBF16" in t.get_text() for t in ax.get_legend().get_texts())
    with pytest.raises(ValueError, match="precision"):
        plot.roofline([b], "bf16")


@pytest.mark.parametrize("kwargs, match", [
    ({"intensity_range": (10, 1)}, "intensity_range"),
    ({"kernels": [("bad", -1.0)]}, "intensity"),
    ({"kernels": [("bad",)]}, "kernels"),
])
def test_roofline_bad_input(kwargs, match):
    acc = FakeAccelerator("Toy", 2e12, {"bf16": 1e15})
    with pytest.raises(ValueError, match=match):
        plot.roofline([acc], **kwargs)


def test_roofline_unknown_name_is_keyerror():
    with pytest.raises(KeyError):
        plot.roofline(["no such gpu 9000"])


def test_source_label():
    assert plot.source_label("recorded", "Tesla T4", "2026-05-01") == "recorded on Tesla T4, 2026-05-01"
    with pytest.raises(ValueError, match="kind"):
        plot.source_label("guessed", "x")
