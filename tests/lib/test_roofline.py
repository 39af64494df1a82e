"""hwlib.roofline: formulas against hand-computed values, arrays, and bad input for every function."""

import math

import numpy as np
import pytest

import badinput
from hwlib import roofline

PI, BETA = 1e15, 2e12  # the seed's example machine (§4.2): ridge 500 FLOP/byte


def test_ridge_point_is_peak_over_bandwidth():
    assert roofline.ridge_point(PI, BETA) == 500.0
    assert roofline.ridge_point(989.4e12, 3.35e12) == pytest.approx(295.34, abs=0.01)


def test_attainable_takes_the_lower_roof():
    # §7.1: I = 100 is memory-bound and attains beta * I = 2e14, a fifth of peak
    assert roofline.attainable(100, PI, BETA) == 2e14
    assert roofline.attainable(500, PI, BETA) == PI
    assert roofline.attainable(1e4, PI, BETA) == PI
    assert isinstance(roofline.attainable(100, PI, BETA), float)


def test_attainable_arrays():
    out = roofline.attainable(np.array([1.0, 250.0, 500.0, 5000.0]), PI, BETA)
    np.testing.assert_allclose(out, [2e12, 5e14, 1e15, 1e15], rtol=0)
    assert roofline.attainable([1.0, 2.0], PI, BETA).shape == (2,)


def test_bound_and_the_ridge_convention():
    assert roofline.bound(100, PI, BETA) == "memory"
    assert roofline.bound(500, PI, BETA) == "compute"  # documented: at the ridge the kernel reaches peak
    assert roofline.bound(math.nextafter(500, 0), PI, BETA) == "memory"
    assert list(roofline.bound([1, 499.9, 500, 501], PI, BETA)) == ["memory", "memory", "compute", "compute"]


def test_matmul_intensity_square_and_skinny():
    # square N x N: 2N / (3b)
    assert roofline.matmul_intensity(1500, 1500, 1500, 2) == pytest.approx(500.0, rel=1e-12)
    assert roofline.matmul_intensity(1500, 1500, 1500, "bf16") == pytest.approx(500.0, rel=1e-12)
    assert roofline.matmul_intensity(3, 3, 3, 4) == pytest.approx(54 / (27 * 4))
    # batch of 8 tokens through a 4096x4096 bf16 weight: intensity ~ batch (lesson)
    i = roofline.matmul_intensity(8, 4096, 4096, "bf16")
    assert 7.9 < i < 8.0
    # exact formula for a non-square case
    m, n, k = 64, 128, 256
    assert roofline.matmul_intensity(m, n, k, 2) == pytest.approx(2 * m * n * k / ((m * k + k * n + m * n) * 2))


def test_elementwise_intensity():
    assert roofline.elementwise_intensity(1, 2) == 0.25  # c / (2b): bias add in bf16
    assert roofline.elementwise_intensity(1, "fp32", reads=2, writes=1) == pytest.approx(1 / 12)  # a + b
    assert roofline.elementwise_intensity(1, 4, reads=1, writes=0) == 0.25  # a reduction that writes ~nothing


def test_intensity_time_and_littles_law():
    assert roofline.intensity(2e9, 1e9) == 2.0
    # time bound: the slower of compute and memory
    assert roofline.time_s(1e15, 1e9, PI, BETA) == 1.0
    assert roofline.time_s(1e12, 2e12, PI, BETA) == 1.0
    assert roofline.time_s(1e12, 1e9, PI, BETA) == pytest.approx(1e-3)  # max(1e-3 s compute, 5e-4 s memory)
    f, q = 3e13, 4e11
    assert roofline.time_s(f, q, PI, BETA) == pytest.approx(f / roofline.attainable(f / q, PI, BETA))
    # Little's law: 2 TB/s x 300 ns = 600 kB in flight (§1.2 "hundreds of kilobytes")
    assert roofline.in_flight_bytes(2e12, 300e-9) == pytest.approx(6e5)


BAD = [
    (roofline.matmul_bytes, dict(m=0, n=8, k=8, bytes_per_element=2), "m"),
    (roofline.matmul_bytes, dict(m=8, n=8, k=8, bytes_per_element="fp5"), "fp5"),
    (roofline.ridge_point, dict(peak_flops=0, bandwidth=1), "peak_flops"),
    (roofline.ridge_point, dict(peak_flops=1e15, bandwidth=-2), "bandwidth"),
    (roofline.ridge_point, dict(peak_flops=float("nan"), bandwidth=1), "peak_flops"),
    (roofline.attainable, dict(intensity=-1, peak_flops=PI, bandwidth=BETA), "intensity"),
    (roofline.attainable, dict(intensity=[1, float("inf")], peak_flops=PI, bandwidth=BETA), "intensity"),
    (roofline.attainable, dict(intensity=1, peak_flops="fast", bandwidth=BETA), "peak_flops"),
    (roofline.bound, dict(intensity=0, peak_flops=PI, bandwidth=BETA), "intensity"),
    (roofline.bound, dict(intensity=1, peak_flops=PI, bandwidth=0), "bandwidth"),
    (roofline.intensity, dict(flop_count=1, bytes_moved=0), "bytes_moved"),
    (roofline.intensity, dict(flop_count=-1, bytes_moved=1), "flop_count"),
    (roofline.matmul_intensity, dict(m=0, n=1, k=1, bytes_per_element=2), "m"),
    (roofline.matmul_intensity, dict(m=1, n=1, k=float("nan"), bytes_per_element=2), "k"),
    (roofline.matmul_intensity, dict(m=1, n=1, k=1, bytes_per_element="fp7"), "fp7"),
    (roofline.matmul_intensity, dict(m=1, n=1, k=1, bytes_per_element=0), "bytes_per_element"),
    (roofline.elementwise_intensity, dict(flops_per_element=0, bytes_per_element=2), "flops_per_element"),
    (
        roofline.elementwise_intensity,
        dict(flops_per_element=1, bytes_per_element=2, reads=0, writes=0),
        "reads + writes",
    ),
    (roofline.elementwise_intensity, dict(flops_per_element=1, bytes_per_element=2, reads=-1), "reads"),
    (roofline.elementwise_intensity, dict(flops_per_element=1, bytes_per_element=2, writes=1.5), "writes"),
    (roofline.in_flight_bytes, dict(bandwidth=2e12, latency_s=0), "latency_s"),
    (roofline.in_flight_bytes, dict(bandwidth=-1, latency_s=1e-6), "bandwidth"),
    (roofline.time_s, dict(flop_count=1, bytes_moved=1, peak_flops=0, bandwidth=1), "peak_flops"),
    (roofline.time_s, dict(flop_count=1, bytes_moved=-5, peak_flops=1, bandwidth=1), "bytes_moved"),
]


test_bad_input_names_the_argument, test_every_public_function_has_a_bad_input_case = badinput.make_tests(roofline, BAD)


def test_docstrings_state_formula_and_source():
    for name in ("ridge_point", "attainable", "bound", "matmul_intensity", "elementwise_intensity", "in_flight_bytes"):
        doc = getattr(roofline, name).__doc__
        assert "chapter" in doc or "et al." in doc, name  # a source: a chapter of the book or a paper


def test_matmul_bytes_with_matmul_flops_gives_matmul_intensity():
    from hwlib import flops

    assert roofline.matmul_bytes(64, 8192, 8192, 2) == (64 * 8192 * 2 + 8192 * 8192) * 2
    assert flops.matmul_flops(64, 8192, 4096) / roofline.matmul_bytes(64, 8192, 4096, "bf16") == pytest.approx(
        roofline.matmul_intensity(64, 8192, 4096, 2)
    )
