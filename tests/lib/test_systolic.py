"""hwlib.systolic: the clocked weight-stationary array computes A @ B, in the predicted number of
cycles, with the predicted (and far fewer than naive) memory fetches; tiling; traces; bad input."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from hwlib import systolic


def rand(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


@pytest.mark.parametrize("m, k, n", [(1, 1, 1), (3, 3, 3), (5, 4, 3), (2, 7, 6), (16, 8, 8), (1, 8, 8)])
def test_single_pass_product_cycles_and_fetches(m, k, n):
    a, b = rand((m, k), 1), rand((k, n), 2)
    r = systolic.simulate(a, b)
    np.testing.assert_allclose(r.product, a @ b, rtol=1e-12, atol=1e-12)
    assert r.size == max(k, n) and r.tiles == 1
    assert r.compute_cycles == m + (k - 1) + (n - 1) == systolic.compute_cycles(m, k, n)
    assert r.load_cycles == k and r.cycles == r.compute_cycles + k
    assert (r.a_fetches, r.b_fetches, r.c_writes, r.macs) == (m * k, k * n, m * n, m * k * n)
    assert r.fetches == systolic.systolic_fetches(m, n, k, r.size)
    assert r.naive_fetches == 2 * m * n * k


def test_square_reuse_is_n_as_in_exercise_7():
    for n in (4, 8, 16):
        r = systolic.simulate(rand((n, n)), rand((n, n), 3))
        assert r.fetches == 2 * n * n and r.reuse == n
        assert r.compute_cycles == 3 * n - 2


def test_naive_loop_counts_its_fetches():
    a, b = rand((4, 5)), rand((5, 3), 1)
    c, fetches = systolic.naive(a, b)
    np.testing.assert_allclose(c, a @ b)
    assert fetches == systolic.naive_fetches(4, 3, 5) == 120


@pytest.mark.parametrize("m, k, n, s", [(10, 9, 7, 4), (6, 16, 16, 8), (3, 5, 12, 5), (12, 12, 12, 12)])
def test_tiling_bigger_matrices(m, k, n, s):
    a, b = rand((m, k), 4), rand((k, n), 5)
    r = systolic.simulate(a, b, size=s)
    np.testing.assert_allclose(r.product, a @ b, rtol=1e-12, atol=1e-12)
    tk, tn = -(-k // s), -(-n // s)
    assert r.tiles == tk * tn
    assert r.b_fetches == k * n and r.a_fetches == m * k * tn
    assert r.fetches == systolic.systolic_fetches(m, n, k, s)
    assert r.macs == m * k * n and r.c_writes == m * n * tk


def test_tiled_square_count_matches_exercise_formula():
    N, s = 16, 4
    r = systolic.simulate(rand((N, N)), rand((N, N), 1), size=s)
    assert r.fetches == N**2 + N**3 // s
    assert systolic.systolic_fetches(4096, 4096, 4096, 256) == 4096**2 + 4096**3 // 256


def test_utilization_grows_with_the_stream():
    k = n = 8
    utils = [systolic.simulate(rand((m, k)), rand((k, n), 1)).utilization for m in (1, 8, 64, 256)]
    assert utils == sorted(utils) and utils[0] < 0.1 and utils[-1] > 0.9
    for m, u in zip((1, 8, 64, 256), utils):
        assert u == pytest.approx(m / (m + k + n - 2))


def test_trace_shows_the_skewed_wavefront():
    m, k, n = 4, 3, 3
    r = systolic.simulate(rand((m, k)), rand((k, n), 1), trace=True)
    assert r.active.shape == (r.compute_cycles, 3, 3) and r.row_in_cell.shape == r.active.shape
    assert r.active.sum() == r.macs
    for t in range(r.compute_cycles):
        for row in range(k):
            for col in range(n):
                i = t - row - col  # row i of A reaches cell (row, col) at cycle i + row + col
                expected = i if 0 <= i < m else -1
                assert r.row_in_cell[t, row, col] == expected
    assert r.active[0].sum() == 1 and r.active[-1].sum() == 1  # fill starts and drain ends in one cell


def test_idle_cells_outside_a_small_tile():
    r = systolic.simulate(rand((3, 2)), rand((2, 2), 1), size=4, trace=True)
    assert not r.active[:, 2:, :].any() and not r.active[:, :, 2:].any()
    assert r.utilization == pytest.approx(3 * 2 * 2 / (16 * r.compute_cycles))


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 6), st.integers(1, 6), st.integers(1, 6), st.integers(1, 5), st.integers(0, 2**32 - 1))
def test_property_product_and_counts(m, k, n, s, seed):
    a, b = rand((m, k), seed), rand((k, n), seed + 1)
    r = systolic.simulate(a, b, size=s)
    np.testing.assert_allclose(r.product, a @ b, rtol=1e-10, atol=1e-10)
    assert r.fetches == systolic.systolic_fetches(m, n, k, s) <= r.naive_fetches
    assert r.macs == m * n * k
    assert 0 < r.utilization <= 1


def test_integer_inputs_give_exact_products():
    a = np.arange(12).reshape(3, 4)
    b = np.arange(8).reshape(4, 2)
    assert systolic.simulate(a, b).product.tolist() == (a @ b).tolist()


def test_bad_input():
    with pytest.raises(ValueError, match="b must have as many rows as a has columns"):
        systolic.simulate(np.ones((2, 3)), np.ones((2, 3)))
    with pytest.raises(ValueError, match="a must be a non-empty 2-D array"):
        systolic.simulate(np.ones(3), np.ones((3, 1)))
    with pytest.raises(ValueError, match="b must be a non-empty 2-D array"):
        systolic.simulate(np.ones((1, 3)), [["x"], ["y"], ["z"]])
    with pytest.raises(ValueError, match="finite"):
        systolic.simulate(np.array([[np.nan]]), np.ones((1, 1)))
    with pytest.raises(ValueError, match="size must be a whole number >= 1"):
        systolic.simulate(np.ones((2, 2)), np.ones((2, 2)), size=0)
    with pytest.raises(ValueError, match="trace needs one pass"):
        systolic.simulate(np.ones((2, 4)), np.ones((4, 4)), size=2, trace=True)
    with pytest.raises(ValueError, match="m must be a whole number"):
        systolic.compute_cycles(0, 3, 3)
    with pytest.raises(ValueError, match="size must be a whole number"):
        systolic.systolic_fetches(4, 4, 4, 2.5)
    with pytest.raises(ValueError, match="keep m n k"):
        systolic.naive(np.ones((200, 200)), np.ones((200, 200)))


def test_docstring_examples():
    import doctest

    result = doctest.testmod(systolic)
    assert result.attempted >= 1 and result.failed == 0
