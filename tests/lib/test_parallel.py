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


def test_ddp_overlaps_only_the_backward_pass():
    c, m = 3.0, 1.0  # t_fwd = 1, t_bwd = 2
    # one bucket: nothing overlaps; infinitely many: t_fwd + max(t_bwd, t_comm)
    assert parallel.ddp_step_time_s(c, m, n_buckets=1) == pytest.approx(c + m)
    assert parallel.ddp_step_time_s(c, m) == pytest.approx(1.0 + 2.0)
    assert parallel.ddp_step_time_s(c, 5.0) == pytest.approx(1.0 + 5.0)  # link-bound: forward still exposed
    # k buckets, comm faster than production: the last bucket's reduce (m/k) is exposed
    assert parallel.ddp_step_time_s(c, m, n_buckets=4) == pytest.approx(1.0 + 2.0 + 1.0 / 4)
    # k buckets, link-bound: first bucket ready after t_bwd/k, then back to back
    assert parallel.ddp_step_time_s(c, 5.0, n_buckets=4) == pytest.approx(1.0 + 2.0 / 4 + 5.0)
    # never faster than the ideal full-overlap model, never slower than no overlap
    for mm in (0.1, 1.0, 2.0, 3.0, 10.0):
        for k in (1, 2, 8, 100):
            t = parallel.ddp_step_time_s(c, mm, n_buckets=k)
            ideal, none = parallel.step_time_s(c, mm, overlap=1.0), parallel.step_time_s(c, mm, overlap=0.0)
            assert ideal <= t + 1e-12 <= none + 2e-12
    np.testing.assert_allclose(parallel.ddp_step_time_s(np.array([3.0, 6.0]), 1.0), [3.0, 6.0])


def test_ddp_threshold_is_u_pi_over_b_not_two_thirds_of_it():
    # 6N T/(u pi) compute against 2 * 2N bytes / B: compute-bound from T = u pi / B (N -> large)
    u, pi, bw, n = 0.4, 989.4e12, 50e9, 8e9
    t_star = u * pi / bw
    for T, bound in ((0.99 * t_star, False), (1.01 * t_star, True)):
        comp = 6 * n * T / (u * pi)
        comm = 2 * 2 * n / bw
        assert (parallel.ddp_step_time_s(comp, comm) == pytest.approx(comp)) is bound
    assert parallel.ddp_bucket_count(14e9) == int(np.ceil(14e9 / (25 * 2**20)))
    assert parallel.ddp_bucket_count(1, bucket_bytes=1) == 1


BAD = [
    (parallel.ring_allreduce_bytes_per_link, dict(n_bytes=0, n_devices=8), "n_bytes"),
    (parallel.ring_allreduce_bytes_per_link, dict(n_bytes=1e9, n_devices=0), "n_devices"),
    (parallel.ring_allreduce_time_s, dict(n_bytes=1e9, n_devices=8, link_bandwidth=0), "link_bandwidth"),
    (parallel.ring_allreduce_time_s, dict(n_bytes=1e9, n_devices=8, link_bandwidth=1e9, latency_s=-1), "latency_s"),
    (parallel.ring_allreduce_time_s, dict(n_bytes=float("nan"), n_devices=8, link_bandwidth=1e9), "n_bytes"),
    (parallel.ring_allreduce_time_s, dict(n_bytes=1e9, n_devices=1.5, link_bandwidth=1e9), "n_devices"),
    (parallel.ring_allgather_time_s, dict(n_bytes=1e9, n_devices=0, link_bandwidth=1e9), "n_devices"),
    (parallel.ring_allgather_time_s, dict(n_bytes=-1, n_devices=2, link_bandwidth=1e9), "n_bytes"),
    (
        parallel.ring_allgather_time_s,
        dict(n_bytes=1, n_devices=2, link_bandwidth=1e9, latency_s=float("inf")),
        "latency_s",
    ),
    (parallel.data_parallel_comm_bytes, dict(n_params=0, n_devices=8), "n_params"),
    (parallel.data_parallel_comm_bytes, dict(n_params=1e9, n_devices=8, zero_stage=4), "zero_stage"),
    (parallel.data_parallel_comm_bytes, dict(n_params=1e9, n_devices=8, dtype="fp5"), "fp5"),
    (parallel.data_parallel_comm_bytes, dict(n_params=1e9, n_devices=-8), "n_devices"),
    (
        parallel.tensor_parallel_comm_bytes,
        dict(seq_len=0, batch=1, hidden=64, n_layers=2, tensor_parallel=2),
        "seq_len",
    ),
    (
        parallel.tensor_parallel_comm_bytes,
        dict(seq_len=8, batch=1, hidden=64, n_layers=2, tensor_parallel=0),
        "tensor_parallel",
    ),
    (parallel.tensor_parallel_comm_bytes, dict(seq_len=8, batch=1, hidden=0, n_layers=2, tensor_parallel=2), "hidden"),
    (parallel.ddp_step_time_s, dict(compute_s=-1, comm_s=1), "compute_s"),
    (parallel.ddp_step_time_s, dict(compute_s=1, comm_s=1, n_buckets=0), "n_buckets"),
    (parallel.ddp_step_time_s, dict(compute_s=1, comm_s=1, backward_fraction=1.5), "backward_fraction"),
    (parallel.ddp_bucket_count, dict(grad_bytes=0), "grad_bytes"),
    (parallel.pipeline_bubble_fraction, dict(n_stages=0, n_microbatches=4), "n_stages"),
    (parallel.pipeline_bubble_fraction, dict(n_stages=4, n_microbatches=0), "n_microbatches"),
    (parallel.pipeline_bubble_fraction, dict(n_stages=4, n_microbatches=4, virtual_stages=0), "virtual_stages"),
    (parallel.step_time_s, dict(compute_s=-1, comm_s=1), "compute_s"),
    (parallel.step_time_s, dict(compute_s=1, comm_s=float("nan")), "comm_s"),
    (parallel.step_time_s, dict(compute_s=1, comm_s=1, overlap=1.5), "overlap"),
    (parallel.step_time_s, dict(compute_s=1, comm_s=1, overlap=[0.5, 0.6]), "overlap"),
    (parallel.backward_hides_comm_tokens, dict(comm_s=-1, n_params=1e9, peak_flops=1e15, mfu=0.4), "comm_s"),
    (parallel.backward_hides_comm_tokens, dict(comm_s=1, n_params=0, peak_flops=1e15, mfu=0.4), "n_params"),
    (
        parallel.backward_hides_comm_tokens,
        dict(comm_s=1, n_params=1e9, peak_flops=1e15, mfu=0.4, backward_fraction=1.5),
        "backward_fraction",
    ),
]


test_bad_input_names_the_argument, test_every_public_function_has_a_bad_input_case = badinput.make_tests(parallel, BAD)


def test_backward_hides_comm_tokens_formula_and_errors():
    assert parallel.backward_hides_comm_tokens(1.0, 1e9, 1e15, 0.5) == pytest.approx(1.0 * 0.5e15 / (2 / 3 * 6e9))
    with pytest.raises(ValueError, match="mfu"):
        parallel.backward_hides_comm_tokens(1.0, 1e9, 1e15, 0)
