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
    fig, ax = plot.roofline([acc], kernels=[("axpy", 0.25), ("gemm", 1000.0, 6e14)], source="live on Toy")
    points = [(float(l.get_xdata()[0]), float(l.get_ydata()[0])) for l in ax.get_lines() if len(l.get_xdata()) == 1]
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


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"intensity_range": (10, 1)}, "intensity_range"),
        ({"kernels": [("bad", -1.0)]}, "intensity"),
        ({"kernels": [("bad",)]}, "kernels"),
    ],
)
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


# --- measured sweeps (synthetic records in the hwlib.bench format) ---------------------------------


def _device(name="Test Device", **extra):
    return {"name": name, "kind": "cpu", "l2_bytes": 1 << 19, "l3_bytes": 32 << 20, **extra}


def _rec(experiment, results, source="live", name="Test Device", **extra):
    return {
        "experiment": experiment,
        "source": source,
        "date": "2026-03-04T05:06:07+00:00",
        "device": _device(name),
        "backend": "numpy",
        "parameters": {},
        "results": results,
        **extra,
    }


def _sweep():
    return [{"working_set_bytes": 3 * 2**k, "bytes_per_s": 1e10 * (2 if k < 20 else 1)} for k in range(14, 26)]


def test_bandwidth_sweep_titles_live_and_recorded():
    live = _rec("bandwidth", [], sweep=_sweep())
    gpu = _rec("bandwidth", [], source="recorded", name="Tesla T4", sweep=_sweep())
    gpu["device"].update(kind="gpu", theoretical_bandwidth=320e9)
    fig, ax = plot.bandwidth_sweep(live, recorded=[gpu])
    title = ax.get_title()
    assert "live on Test Device" in title and "recorded on Tesla T4, 2026-03-04" in title
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "recorded on Tesla T4, 2026-03-04" in labels
    with pytest.raises(ValueError, match="sweep"):
        plot.bandwidth_sweep(_rec("bandwidth", []))


def test_matmul_sweep_draws_spec_peak_for_known_device():
    rows = [
        {"shape": "square", "dtype": "float16", "size": s, "flops_per_s": 1e12 * s / 1024} for s in (256, 512, 1024)
    ]
    rec = _rec("matmul", rows, name="Tesla T4")
    rec["device"]["spec"] = "T4"
    fig, ax = plot.matmul_sweep(rec)
    assert "E2 matmul throughput (square) - live on Tesla T4" == ax.get_title()
    assert any(
        l.get_label().startswith("float16 spec peak") and l.get_ydata()[0] == pytest.approx(65e12)
        for l in ax.get_lines()
    )
    with pytest.raises(ValueError, match="shape"):
        plot.matmul_sweep(rec, shape="tall")


def test_decode_plot_has_bound_line():
    rows = [{"batch": b, "tokens_per_s": 10.0 * b, "bound_tokens_per_s": 20.0 * b} for b in (1, 2, 4)]
    rec = _rec("decode", rows, parameters={"bandwidth_source": "given"})
    fig, ax = plot.decode(rec)
    assert "live on Test Device" in ax.get_title()
    bound = [l for l in ax.get_lines() if l.get_label().startswith("bandwidth bound")][0]
    assert list(bound.get_ydata()) == [20.0, 40.0, 80.0]


def test_measured_roofline_with_spec_and_empirical_roof():
    rows = [
        {"dtype": "float32", "intensity": i, "flops_per_s": min(1e11, 1e10 * i), "bytes_per_s": 1e10}
        for i in (0.25, 1.0, 4.0, 16.0, 64.0)
    ]
    fig, ax = plot.measured_roofline(_rec("roofline", rows), spec=FakeAccelerator("Toy", 2e10, {"fp32": 2e11}))
    assert ax.get_title() == "Empirical roofline - live on Test Device"
    emp = [l for l in ax.get_lines() if l.get_label() == "float32: empirical roof"][0]
    assert max(emp.get_ydata()) == pytest.approx(1e11)
    assert any("spec sheet: Toy fp32" in l.get_label() for l in ax.get_lines())
    fig, ax = plot.measured_roofline(_rec("roofline", rows), recorded=[_rec("roofline", rows, "recorded", "Tesla T4")])
    assert ax.get_title() == "Empirical roofline - live on Test Device; recorded on Tesla T4, 2026-03-04"


def test_generic_sweep_with_theory_line():
    fig, ax = plot.sweep(
        [1, 2, 4], [1.0, 2.0, 3.0], "live on X", theory=5.0, theory_label="peak", title="T - live on X", yunit="B/s"
    )
    theory = [l for l in ax.get_lines() if l.get_label() == "peak"][0]
    assert list(theory.get_ydata()) == [5.0, 5.0, 5.0] and ax.get_title() == "T - live on X"


def test_spec_rooflines_differ_by_line_style_not_only_colour():
    fig, ax = plot.roofline(["A100 80GB", "H100 SXM", "H200"], precision="bf16")
    roofs = [line for line in ax.get_lines() if "ridge" in (line.get_label() or "")]
    assert len(roofs) == 3
    assert len({str(line.get_linestyle()) for line in roofs}) == 3


def test_label_decades_only():
    fig, ax = plot.roofline(["H100 SXM"])
    assert plot.label_decades_only(ax) is ax
    assert isinstance(ax.yaxis.get_minor_formatter(), matplotlib.ticker.NullFormatter)
    with pytest.raises(ValueError, match="axis must be"):
        plot.label_decades_only(ax, "z")


def test_finish_axes():
    fig, ax = matplotlib.pyplot.subplots()
    ax.plot([1, 2, 4], [1, 2, 3], label="x")
    assert (
        plot.finish_axes(ax, "batch", "rate", "t", xbase2=True, yformatter=matplotlib.ticker.PercentFormatter(1.0))
        is ax
    )
    assert (ax.get_xlabel(), ax.get_ylabel(), ax.get_title(), ax.get_xscale()) == ("batch", "rate", "t", "log")
    assert ax.get_legend() is not None and isinstance(
        ax.yaxis.get_major_formatter(), matplotlib.ticker.PercentFormatter
    )
    fig, ax = matplotlib.pyplot.subplots()
    plot.finish_axes(ax, "a", "b", "c", legend_fontsize=None)
    assert ax.get_legend() is None and ax.get_xscale() == "linear"
