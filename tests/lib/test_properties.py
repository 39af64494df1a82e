"""Property-based tests (hypothesis) of the calculators: roofs, monotonicity, linearity, ranges."""

import math

import pytest
from hypothesis import given, settings, strategies as st

from hwlib import flops, memory, parallel, roofline

SETTINGS = settings(max_examples=60, deadline=None)  # per test, so other files keep their own profile

pos = st.floats(min_value=1e-3, max_value=1e18, allow_nan=False, allow_infinity=False)
peak = st.floats(min_value=1e9, max_value=1e19)
bw = st.floats(min_value=1e8, max_value=1e14)
params = st.floats(min_value=1e6, max_value=1e13)
count = st.integers(min_value=1, max_value=4096)
small = st.integers(min_value=1, max_value=256)
factor = st.integers(min_value=2, max_value=64)
dtype = st.sampled_from(sorted(memory.BYTES_PER_VALUE))
frac = st.floats(min_value=1e-3, max_value=1.0)


# --- roofline ---------------------------------------------------------------------------------


@SETTINGS
@given(pos, peak, bw)
def test_attainable_never_above_either_roof(i, p, b):
    a = roofline.attainable(i, p, b)
    assert a <= p and a <= b * i
    assert a == p or a == b * i


@SETTINGS
@given(pos, pos, peak, bw)
def test_attainable_monotone_in_intensity(i1, i2, p, b):
    lo, hi = sorted((i1, i2))
    assert roofline.attainable(lo, p, b) <= roofline.attainable(hi, p, b)


@SETTINGS
@given(pos, peak, bw)
def test_bound_flips_exactly_at_the_ridge(i, p, b):
    ridge = roofline.ridge_point(p, b)
    assert roofline.bound(i, p, b) == ("memory" if i < ridge else "compute")
    assert roofline.bound(ridge, p, b) == "compute"
    assert roofline.bound(math.nextafter(ridge, 0), p, b) == "memory"
    assert roofline.attainable(ridge, p, b) == pytest.approx(p, rel=1e-12)


@SETTINGS
@given(count, count, count, st.sampled_from([0.5, 1, 2, 4]))
def test_matmul_intensity_bounded_and_grows(m, n, k, b):
    i = roofline.matmul_intensity(m, n, k, b)
    # (mk + kn + mn) >= the product of the two largest dims, so I <= 2 min(m, n, k) / b
    assert 0 < i <= 2 * min(m, n, k) / b
    assert roofline.matmul_intensity(2 * m, 2 * n, 2 * k, b) == pytest.approx(2 * i)


@SETTINGS
@given(pos, bw, frac)
def test_little_law_linear(latency, b, f):
    assert roofline.in_flight_bytes(b, latency * f) == pytest.approx(f * roofline.in_flight_bytes(b, latency))


# --- memory -----------------------------------------------------------------------------------


@SETTINGS
@given(params, params, dtype)
def test_weights_monotone_and_linear(n1, n2, d):
    lo, hi = sorted((n1, n2))
    assert memory.weights_bytes(lo, d) <= memory.weights_bytes(hi, d)
    assert memory.weights_bytes(3 * n1, d) == pytest.approx(3 * memory.weights_bytes(n1, d))
    assert memory.training_state_bytes(n1) == pytest.approx(16 * n1)
    assert sum(memory.training_state_breakdown(n1).values()) == memory.training_state_bytes(n1)


@SETTINGS
@given(small, small, small, count, small, factor, dtype)
def test_kv_cache_linear_in_seq_and_batch(layers, heads, dim, seq, batch, k, d):
    base = memory.kv_cache_bytes(layers, heads, dim, seq, batch, d)
    assert memory.kv_cache_bytes(layers, heads, dim, k * seq, batch, d) == pytest.approx(k * base)
    assert memory.kv_cache_bytes(layers, heads, dim, seq, k * batch, d) == pytest.approx(k * base)
    assert memory.kv_cache_bytes(k * layers, heads, dim, seq, batch, d) == pytest.approx(k * base)


@SETTINGS
@given(
    count,
    small,
    st.sampled_from([256, 1024, 4096]),
    small,
    st.sampled_from([1, 2, 4, 8]),
    st.sampled_from(memory.RECOMPUTE),
    factor,
)
def test_activations_monotone(seq, batch, hidden, layers, heads, mode, k):
    a = memory.activation_bytes(seq, batch, hidden, layers, heads, recompute=mode)
    assert memory.activation_bytes(k * seq, batch, hidden, layers, heads, recompute=mode) >= k * a * (1 - 1e-12)
    assert memory.activation_bytes(seq, k * batch, hidden, layers, heads, recompute=mode) == pytest.approx(k * a)
    assert (
        memory.activation_bytes(seq, batch, hidden, layers, heads, recompute="full")
        <= memory.activation_bytes(seq, batch, hidden, layers, heads, recompute="selective")
        <= memory.activation_bytes(seq, batch, hidden, layers, heads, recompute="none")
    )


@SETTINGS
@given(params, count, count, st.floats(min_value=0, max_value=16))
def test_zero_non_increasing_in_stage_and_devices(n, g1, g2, k):
    by_stage = [memory.zero_bytes_per_device(n, g1, s, k) for s in range(4)]
    assert all(a >= b * (1 - 1e-12) for a, b in zip(by_stage, by_stage[1:]))
    assert by_stage[0] == pytest.approx((4 + k) * n)
    lo, hi = sorted((g1, g2))
    for s in range(4):
        assert memory.zero_bytes_per_device(n, hi, s, k) <= memory.zero_bytes_per_device(n, lo, s, k) * (1 + 1e-12)


# --- flops ------------------------------------------------------------------------------------


@SETTINGS
@given(params, params, factor)
def test_flops_linear(n, d, k):
    assert flops.training_flops(n, k * d) == pytest.approx(k * flops.training_flops(n, d))
    assert flops.training_flops(k * n, d) == pytest.approx(k * flops.training_flops(n, d))
    assert flops.training_flops(n, d) == pytest.approx(3 * flops.forward_flops(n, d))


@SETTINGS
@given(st.floats(min_value=1e10, max_value=1e26), peak, frac, count, st.floats(min_value=0.01, max_value=10))
def test_time_scales_and_cost_is_conserved(c, p, u, g, price):
    t1 = flops.training_time_s(c, p, u)
    tg = flops.training_time_s(c, p, u, n_devices=g)
    assert tg == pytest.approx(t1 / g)
    # with perfect scaling, G devices finish G times sooner for the same bill
    assert flops.cost_usd(tg, price, g) == pytest.approx(flops.cost_usd(t1, price))
    # imperfect scaling costs more
    assert flops.training_time_s(c, p, u, g, 0.5) == pytest.approx(2 * tg)


@SETTINGS
@given(frac, peak)
def test_mfu_round_trip(u, p):
    assert flops.mfu(u * p, p) == pytest.approx(u)


@SETTINGS
@given(pos, bw, small)
def test_decode_linear_in_batch_without_kv(w, b, batch):
    assert flops.decode_tokens_per_s_bound(w, b, batch) == pytest.approx(batch * flops.decode_tokens_per_s_bound(w, b))
    assert flops.decode_tokens_per_s_bound(w, b, batch, kv_bytes=w) <= flops.decode_tokens_per_s_bound(w, b, batch)


# --- parallel ---------------------------------------------------------------------------------


@SETTINGS
@given(count, count, st.integers(min_value=1, max_value=8))
def test_pipeline_bubble_in_unit_interval(p, m, v):
    f = parallel.pipeline_bubble_fraction(p, m, v)
    assert 0 <= f < 1
    assert parallel.pipeline_bubble_fraction(p, m + 1, v) <= f  # more micro-batches, less bubble
    assert parallel.pipeline_bubble_fraction(p + 1, m, v) >= f  # more stages, more bubble


@SETTINGS
@given(st.floats(min_value=1, max_value=1e12), count, count, bw, st.floats(min_value=0, max_value=1e-3))
def test_allreduce_grows_with_devices_but_bandwidth_term_saturates(n, g1, g2, b, lat):
    lo, hi = sorted((g1, g2))
    assert parallel.ring_allreduce_time_s(n, lo, b, lat) <= parallel.ring_allreduce_time_s(n, hi, b, lat) * (1 + 1e-12)
    assert parallel.ring_allreduce_bytes_per_link(n, hi) < 2 * n


@SETTINGS
@given(st.floats(min_value=0, max_value=1e3), st.floats(min_value=0, max_value=1e3), frac)
def test_overlap_between_max_and_sum(c, m, f):
    t = parallel.step_time_s(c, m, f)
    assert max(c, m) * (1 - 1e-12) <= t <= (c + m) * (1 + 1e-12)
