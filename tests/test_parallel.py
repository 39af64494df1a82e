"""hwlib.parallel: collective cost models, DP/TP traffic, pipeline bubble, overlap; bad input."""

import numpy as np
import pytest

import badinput

from hwlib import parallel


def test_ring_allreduce():
    assert parallel.ring_allreduce_bytes_per_link(1e9, 1) == 0.0
    assert parallel.ring_allreduce_bytes_per_link(1e9, 2) == 1e9
    assert parallel.ring_allreduce_bytes_per_link(1e9, 8) == pytest.approx(1.75e9)
    # 2(N-1)/N * n/B + 2(N-1) * latency
    assert parallel.ring_allreduce_time_s(1e9, 8, 100e9) == pytest.approx(0.0175)
    assert parallel.ring_allreduce_time_s(1e9, 8, 100e9, latency_s=1e-5) == pytest.approx(0.0175 + 14e-5)
    # the bandwidth term saturates at 2n/B
    assert parallel.ring_allreduce_time_s(1e9, 1024, 100e9) < 2e9 / 100e9


def test_ring_allgather_is_half_an_allreduce():
    for n in (2, 8, 64):
        ag = parallel.ring_allgather_time_s(1e9, n, 50e9, latency_s=2e-6)
        ar = parallel.ring_allreduce_time_s(1e9, n, 50e9, latency_s=2e-6)
        assert ag == pytest.approx(ar / 2)


def test_data_parallel_comm():
    # 7B bf16 gradients over 8 GPUs: 2 * 7/8 * 14 GB = 24.5 GB sent per device per step
    assert parallel.data_parallel_comm_bytes(7e9, 8) == pytest.approx(24.5e9)
    assert parallel.data_parallel_comm_bytes(7e9, 8, zero_stage=2) == pytest.approx(24.5e9)
    assert parallel.data_parallel_comm_bytes(7e9, 8, zero_stage=3) == pytest.approx(1.5 * 24.5e9)
    assert parallel.data_parallel_comm_bytes(7e9, 8, dtype="fp32") == pytest.approx(49e9)


def test_tensor_parallel_comm():
    s, b, h, L, t = 2048, 1, 8192, 80, 8
    per = 2 * (t - 1) / t * s * b * h * 2
    assert parallel.tensor_parallel_comm_bytes(s, b, h, L, t) == pytest.approx(4 * L * per)
    assert parallel.tensor_parallel_comm_bytes(s, b, h, L, t, training=False) == pytest.approx(2 * L * per)
    assert parallel.tensor_parallel_comm_bytes(s, b, h, L, 1) == 0.0


def test_pipeline_bubble():
    assert parallel.pipeline_bubble_fraction(1, 8) == 0.0
    assert parallel.pipeline_bubble_fraction(4, 1) == 0.75
    assert parallel.pipeline_bubble_fraction(4, 8) == pytest.approx(3 / 11)
    assert parallel.pipeline_bubble_fraction(16, 64) == pytest.approx(15 / 79)
    # interleaving v chunks per device shrinks the bubble
    assert parallel.pipeline_bubble_fraction(4, 8, virtual_stages=2) == pytest.approx(3 / 19)


def test_step_time_overlap():
    assert parallel.step_time_s(1.0, 0.4, overlap=1.0) == 1.0
    assert parallel.step_time_s(1.0, 0.4, overlap=0.0) == 1.4
    assert parallel.step_time_s(1.0, 3.0, overlap=1.0) == 3.0
    assert parallel.step_time_s(1.0, 0.4, overlap=0.5) == pytest.approx(1.2)
    np.testing.assert_allclose(parallel.step_time_s(1.0, np.array([0.5, 2.0])), [1.0, 2.0])


BAD = [
    (parallel.ring_allreduce_bytes_per_link, dict(n_bytes=0, n_devices=8), "n_bytes"),
    (parallel.ring_allreduce_bytes_per_link, dict(n_bytes=1e9, n_devices=0), "n_devices"),
    (parallel.ring_allreduce_time_s, dict(n_bytes=1e9, n_devices=8, link_bandwidth=0), "link_bandwidth"),
    (parallel.ring_allreduce_time_s, dict(n_bytes=1e9, n_devices=8, link_bandwidth=1e9, latency_s=-1), "latency_s"),
    (parallel.ring_allreduce_time_s, dict(n_bytes=float("nan"), n_devices=8, link_bandwidth=1e9), "n_bytes"),
    (parallel.ring_allreduce_time_s, dict(n_bytes=1e9, n_devices=1.5, link_bandwidth=1e9), "n_devices"),
    (parallel.ring_allgather_time_s, dict(n_bytes=1e9, n_devices=0, link_bandwidth=1e9), "n_devices"),
    (parallel.ring_allgather_time_s, dict(n_bytes=-1, n_devices=2, link_bandwidth=1e9), "n_bytes"),
    (parallel.ring_allgather_time_s, dict(n_bytes=1, n_devices=2, link_bandwidth=1e9, latency_s=float("inf")), "latency_s"),
    (parallel.data_parallel_comm_bytes, dict(n_params=0, n_devices=8), "n_params"),
    (parallel.data_parallel_comm_bytes, dict(n_params=1e9, n_devices=8, zero_stage=4), "zero_stage"),
    (parallel.data_parallel_comm_bytes, dict(n_params=1e9, n_devices=8, dtype="fp5"), "fp5"),
    (parallel.data_parallel_comm_bytes, dict(n_params=1e9, n_devices=-8), "n_devices"),
    (parallel.tensor_parallel_comm_bytes, dict(seq_len=0, batch=1, hidden=64, n_layers=2, tensor_parallel=2), "seq_len"),
    (parallel.tensor_parallel_comm_bytes, dict(seq_len=8, batch=1, hidden=64, n_layers=2, tensor_parallel=0), "tensor_parallel"),
    (parallel.tensor_parallel_comm_bytes, dict(seq_len=8, batch=1, hidden=0, n_layers=2, tensor_parallel=2), "hidden"),
    (parallel.pipeline_bubble_fraction, dict(n_stages=0, n_microbatches=4), "n_stages"),
    (parallel.pipeline_bubble_fraction, dict(n_stages=4, n_microbatches=0), "n_microbatches"),
    (parallel.pipeline_bubble_fraction, dict(n_stages=4, n_microbatches=4, virtual_stages=0), "virtual_stages"),
    (parallel.step_time_s, dict(compute_s=-1, comm_s=1), "compute_s"),
    (parallel.step_time_s, dict(compute_s=1, comm_s=float("nan")), "comm_s"),
    (parallel.step_time_s, dict(compute_s=1, comm_s=1, overlap=1.5), "overlap"),
    (parallel.step_time_s, dict(compute_s=1, comm_s=1, overlap=[0.5, 0.6]), "overlap"),
]


test_bad_input_names_the_argument, test_every_public_function_has_a_bad_input_case = badinput.make_tests(parallel, BAD)
