"""hwlib.collectives: the simulated ring all-reduce sums correctly and moves exactly 2(N-1)/N x n
bytes per link; the naive all-reduce overloads rank 0; the NCCL path falls back on a CPU; bad input."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from hwlib import collectives, parallel

ranks = st.integers(min_value=1, max_value=9)


def _random(n_ranks, size, dtype, seed):
    rng = np.random.default_rng(seed)
    if np.issubdtype(dtype, np.integer):
        return [rng.integers(-1000, 1000, size=size).astype(dtype) for _ in range(n_ranks)]
    return [rng.standard_normal(size).astype(dtype) for _ in range(n_ranks)]


@settings(max_examples=60, deadline=None)
@given(n_ranks=ranks, size=st.integers(min_value=1, max_value=300), seed=st.integers(0, 2**31))
def test_ring_result_is_the_sum_on_every_rank_integers(n_ranks, size, seed):
    arrays = _random(n_ranks, size, np.int64, seed)
    trace = collectives.ring_allreduce(arrays)
    expected = np.sum(arrays, axis=0)
    assert len(trace.outputs) == n_ranks
    for out in trace.outputs:
        np.testing.assert_array_equal(out, expected)  # integers: exact, whatever the order


@settings(max_examples=40, deadline=None)
@given(n_ranks=ranks, rows=st.integers(1, 20), cols=st.integers(1, 20), seed=st.integers(0, 2**31))
def test_ring_result_is_the_sum_floats_and_shape_kept(n_ranks, rows, cols, seed):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal((rows, cols)) for _ in range(n_ranks)]
    trace = collectives.ring_allreduce(arrays)
    for out in trace.outputs:
        assert out.shape == (rows, cols)
        np.testing.assert_allclose(out, np.sum(arrays, axis=0), rtol=1e-12, atol=1e-12)


def test_inputs_are_not_modified():
    arrays = _random(4, 64, np.float32, 1)
    before = [a.copy() for a in arrays]
    collectives.ring_allreduce(arrays)
    for a, b in zip(arrays, before):
        np.testing.assert_array_equal(a, b)


@settings(max_examples=60, deadline=None)
@given(n_ranks=ranks, chunks=st.integers(1, 50), itemsize=st.sampled_from([np.float16, np.float32, np.float64]))
def test_bytes_per_link_equal_the_formula_when_chunks_are_even(n_ranks, chunks, itemsize):
    arrays = _random(n_ranks, n_ranks * chunks, itemsize, 0)
    n = arrays[0].nbytes
    trace = collectives.ring_allreduce(arrays)
    expected = 2 * (n_ranks - 1) / n_ranks * n
    assert expected == pytest.approx(parallel.ring_allreduce_bytes_per_link(n, n_ranks))
    np.testing.assert_array_equal(trace.bytes_sent, np.full(n_ranks, expected))
    np.testing.assert_array_equal(trace.bytes_received, np.full(n_ranks, expected))
    assert trace.steps == 2 * (n_ranks - 1)


@settings(max_examples=60, deadline=None)
@given(n_ranks=st.integers(2, 9), size=st.integers(1, 200))
def test_bytes_per_link_close_to_formula_for_uneven_chunks(n_ranks, size):
    arrays = _random(n_ranks, size, np.float32, 0)
    trace = collectives.ring_allreduce(arrays)
    n = arrays[0].nbytes
    # each link skips two chunks (one per phase); chunk sizes differ by at most one element
    slack = 2 * arrays[0].itemsize
    assert np.all(np.abs(trace.bytes_sent - collectives.expected_bytes_per_link(n, n_ranks)) <= slack)
    assert trace.bytes_sent.sum() == pytest.approx(trace.bytes_received.sum())


def test_messages_only_go_to_the_right_neighbour():
    trace = collectives.ring_allreduce(_random(5, 50, np.float32, 2), keep_log=True)
    assert len(trace.log) == 5 * trace.steps  # every rank sends in every step
    for _phase, _step, src, dst, _chunk, nbytes in trace.log:
        assert dst == (src + 1) % 5
        assert nbytes == 10 * 4
    assert {p for p, *_ in trace.log} == {"reduce-scatter", "all-gather"}


def test_per_link_bytes_stay_below_2n_while_naive_grows_with_n():
    n_bytes = None
    for n_ranks in (2, 4, 8, 16):
        arrays = _random(n_ranks, 16 * 16, np.float32, 3)
        n_bytes = arrays[0].nbytes
        ring = collectives.ring_allreduce(arrays)
        naive = collectives.naive_allreduce(arrays)
        assert ring.max_link_bytes < 2 * n_bytes
        assert naive.max_link_bytes == (n_ranks - 1) * n_bytes  # rank 0 receives everyone's vector
        np.testing.assert_allclose(naive.outputs[-1], np.sum(arrays, axis=0), rtol=1e-5, atol=1e-5)
        if n_ranks >= 3:
            assert ring.max_link_bytes < naive.max_link_bytes


def test_one_rank_moves_nothing():
    trace = collectives.ring_allreduce([np.arange(5.0)])
    assert trace.steps == 0 and trace.max_link_bytes == 0
    np.testing.assert_array_equal(trace.outputs[0], np.arange(5.0))


def test_allreduce_falls_back_to_the_simulation_without_gpus(monkeypatch):
    monkeypatch.setattr(collectives, "gpu_count", lambda: 0)
    arrays = _random(4, 1000, np.float32, 4)
    rec = collectives.allreduce(arrays)
    assert rec["method"] == "simulated ring"
    assert "at least 2 GPUs" in rec["reason"]
    assert rec["matches_sum"] is True
    assert rec["n_bytes"] == 4000 and rec["n_devices"] == 4
    assert rec["bytes_per_link"] == rec["expected_bytes_per_link"] == pytest.approx(6000)
    np.testing.assert_allclose(rec["result"], np.sum(arrays, axis=0), rtol=1e-5, atol=1e-5)
    with pytest.raises(RuntimeError, match="nccl"):
        collectives.allreduce(arrays, method="nccl")


def test_allreduce_falls_back_when_fewer_gpus_than_ranks(monkeypatch):
    monkeypatch.setattr(collectives, "nccl_status", lambda: (True, "NCCL over 2 GPUs"))
    monkeypatch.setattr(collectives, "gpu_count", lambda: 2)
    rec = collectives.allreduce(_random(4, 8, np.float64, 5))
    assert rec["method"] == "simulated ring"
    assert "only 2 GPUs" in rec["reason"]


def test_nccl_status_on_this_machine_is_consistent():
    ok, why = collectives.nccl_status()
    assert isinstance(why, str) and why
    assert ok == (collectives.gpu_count() >= 2 and "NCCL over" in why)


def test_matches_sum_detects_a_wrong_result(monkeypatch):
    def broken(arrays, keep_log=False):
        trace = real(arrays, keep_log)
        trace.outputs[1] = trace.outputs[1] + 1.0
        return trace

    real = collectives.ring_allreduce
    monkeypatch.setattr(collectives, "ring_allreduce", broken)
    monkeypatch.setattr(collectives, "gpu_count", lambda: 0)
    assert collectives.allreduce(_random(3, 30, np.float64, 6))["matches_sum"] is False


@pytest.mark.parametrize(
    "arrays, match",
    [
        ([], "at least one"),
        ([np.zeros(3), np.zeros(4)], r"arrays\[1\]"),
        ([np.zeros(3, np.float32), np.zeros(3, np.float64)], r"arrays\[1\]"),
        ([np.array(["a", "b"]), np.array(["c", "d"])], "numbers"),
    ],
)
def test_bad_input(arrays, match):
    with pytest.raises(ValueError, match=match):
        collectives.ring_allreduce(arrays)


def test_bad_method():
    with pytest.raises(ValueError, match="method"):
        collectives.allreduce([np.zeros(2)] * 2, method="mpi")
