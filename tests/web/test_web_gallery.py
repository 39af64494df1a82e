"""hwlib.plot.gallery: recorded runs next to the spec sheet, published numbers marked as not ours."""

from __future__ import annotations

import re

import pytest

from hwlib import specs
from hwlib.bench import recorded
from hwlib.plot import gallery


def fake_run(device="NVIDIA H100 80GB HBM3", kind="gpu"):
    """A run in hwlib.bench's format, as `hwlib bench all` would save it (numbers made up)."""
    dev = {"name": device, "kind": kind}
    ok = {"status": "ok", "device": dev}
    return recorded.validate(
        {
            "schema": recorded.SCHEMA,
            "schema_version": 1,
            "date": "2026-11-30T12:00:00+00:00",
            "device": dev,
            "backend": "cupy",
            "quick": False,
            "records": {
                "bandwidth": {
                    **ok,
                    "results": [{"kernel": "copy", "bytes_per_s": 2.9e12}, {"kernel": "triad", "bytes_per_s": 3.0e12}],
                },
                "matmul": {
                    **ok,
                    "results": [
                        {"dtype": "float16", "flops_per_s": 6.0e14},
                        {"dtype": "float16", "flops_per_s": 7.0e14},
                        {"dtype": "float32", "flops_per_s": 5.0e13},
                    ],
                },
                "formats": {
                    **ok,
                    "results": [
                        {"format": "fp8", "flops_per_s": 1.2e15, "status": "ok"},
                        {"format": "fp4", "flops_per_s": 9.9e15, "status": "skipped"},
                    ],
                },
                "divergence": {"status": "skipped", "results": []},
            },
        }
    )


def test_rows_compare_the_best_rate_with_the_matching_spec():
    rows = {(r["experiment"], r["precision"]): r for r in gallery.run_rows(fake_run())}
    h100 = specs.get("H100 SXM")
    assert rows[("bandwidth", None)]["fraction"] == pytest.approx(3.0e12 / h100.bandwidth)
    assert rows[("matmul", "fp16")]["achieved"] == 7.0e14
    assert rows[("matmul", "fp16")]["fraction"] == pytest.approx(7.0e14 / h100.peak_flops("fp16"))
    assert rows[("matmul", "fp32")]["fraction"] == pytest.approx(5.0e13 / h100.peak_flops("fp32"))
    assert rows[("formats", "fp8")]["spec_value"] == h100.peak_flops("fp8")
    assert ("formats", "fp4") not in rows  # a skipped point is not a measurement
    assert not any(r["experiment"] == "divergence" for r in rows.values())


def test_a_cpu_or_unknown_device_gets_no_fraction():
    for run in (fake_run("CPU: AMD EPYC", kind="cpu"), fake_run("Some Future GPU 9000")):
        rows = gallery.run_rows(run)
        assert rows and all(r["fraction"] is None and r["spec_value"] is None for r in rows)
        html = gallery.recorded_html([run])
        assert "not in the spec sheet" in html and "%" not in html


def test_no_recorded_run_is_said_plainly():
    text = gallery.recorded_html([])
    assert "No recorded GPU run is in this repository yet" in text
    assert "<table" not in text


def test_recorded_table_names_device_date_and_spec():
    html = gallery.recorded_html([fake_run()])
    assert "NVIDIA H100 80GB HBM3, recorded 2026-11-30 with cupy" in html
    assert "spec sheet entry: H100 SXM" in html
    assert "3.00 TB/s" in html and "3.35 TB/s" in html and f"{3.0e12 / 3.35e12:.0%}" in html


def test_published_measurements_are_marked_and_sourced():
    rows = gallery.published_rows()
    if not recorded.PUBLISHED_PATH.exists():
        pytest.fail("hwlib/data/published_measurements.yaml is missing")
    html = gallery.published_html(rows)
    assert html.count("published, not measured by us") == len(rows) > 0
    for m in rows:
        assert str(m["source"]).split()[0] in html
    assert "<script" not in html


def test_figure_alt_text_lists_every_bar():
    html = gallery.figure_html([fake_run()], [])
    alt = re.search(r'alt="([^"]*)"', html).group(1)
    assert "NVIDIA H100 80GB HBM3: bandwidth" in alt and f"{3.0e12 / 3.35e12:.0%}" in alt
    assert html.count("<img") == 1 and "data:image/png;base64," in html
    assert "no chart" in gallery.figure_html([], [])
