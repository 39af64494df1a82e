"""hwlib.serving and hwlib.serving_sim: serving-engine arithmetic against its formulas and against
published figures (vLLM's memory reports, the PagedAttention paper's waste figures, nccl-tests'
bus-bandwidth convention), and the continuous-batching simulator's behaviour under fixed seeds."""

import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from hwlib import (  # noqa: E402
    collectives,
    goodput,
    memory,
    models,
    networks,
    plot,
    serving,
    serving_sim as sim,  # noqa: E402
    specs,
)

GIB = 2**30
L3 = models.get("Llama 3 8B")
Q3 = memory.kv_cache_bytes_for(L3, 1)
H100 = specs.get("H100 SXM")


# --------------------------------------------------------------------------- KV blocks from a budget


def test_a_llama3_8b_block_is_two_mib():
    # 2 (K and V) x 32 layers x 8 KV heads x 128 dims x 2 bytes = 128 KiB per token; 16 tokens per block
    assert Q3 == 2 * 32 * 8 * 128 * 2
    assert serving.kv_block_bytes(Q3, 16) == 2 * 2**20
    assert serving.kv_blocks(10 * 2**20 + 1, Q3) == 5


def test_vllm_llama3_8b_h100_report_is_the_budget_formula():
    """vLLM's profile of Llama 3 8B on an H100 (hwlib/data/serving.yaml, vLLM PR 10511): the KV memory
    it printed is u·M − W − A − O, and our weight count matches its weights line."""
    p = {f: serving.published("profile_llama3_8b_h100", f) for f in
         ("total_gib", "utilization", "weights_gib", "non_torch_gib", "activation_peak_gib", "kv_cache_gib")}  # fmt: skip
    budget = serving.kv_budget_bytes(
        serving.gib(p["total_gib"]), p["utilization"], serving.gib(p["weights_gib"]),
        serving.gib(p["activation_peak_gib"]), serving.gib(p["non_torch_gib"]),
    )  # fmt: skip
    assert budget / GIB == pytest.approx(p["kv_cache_gib"], abs=0.015)  # the log rounds to 0.01 GiB
    assert memory.weights_bytes(L3.n_params(), "bf16") / GIB == pytest.approx(p["weights_gib"], abs=0.01)
    blocks = serving.kv_blocks(serving.gib(p["kv_cache_gib"]), Q3)
    assert blocks == math.floor(p["kv_cache_gib"] * GIB / (16 * Q3)) == 27284
    assert serving.tokens_in_blocks(blocks) == 436544


def test_vllm_llama2_7b_a100_block_count_is_consistent():
    """vLLM PR 2031 printed '# GPU blocks: 7351' for Llama 2 7B on one A100-80GB. Llama 2 7B's blocks
    are 8 MiB (32 KV heads); what the formula leaves for activations and the rest, with the visible
    memory of an 80 GiB part as the H100 report shows it, is the size of those profiled overheads
    (1–3.5 GiB), not zero and not several GiB."""
    l2 = models.get("Llama 2 7B")
    q = memory.kv_cache_bytes_for(l2, 1)
    assert serving.kv_block_bytes(q) == 8 * 2**20
    blocks = serving.published("blocks_llama2_7b_a100", "gpu_blocks")
    u = serving.published("blocks_llama2_7b_a100", "utilization")
    visible = serving.gib(serving.published("profile_llama3_8b_h100", "total_gib"))
    w = memory.weights_bytes(l2.n_params(), "fp16")
    overhead = u * visible - w - blocks * serving.kv_block_bytes(q)
    assert 1.0 * GIB < overhead < 3.5 * GIB
    assert serving.kv_blocks(serving.kv_budget_bytes(visible, u, w, overhead), q) == blocks


def test_budget_refuses_a_device_that_is_full():
    with pytest.raises(ValueError, match="no memory left for the KV cache"):
        serving.kv_budget_bytes(16 * GIB, 0.9, 16e9, 1e9)
    with pytest.raises(ValueError, match="utilization must be a fraction"):
        serving.kv_budget_bytes(80 * GIB, 1.5, 16e9, 1e9)
    with pytest.raises(ValueError, match="block_tokens must be a whole number"):
        serving.kv_block_bytes(Q3, 0)


# --------------------------------------------------------------------------- fragmentation


@pytest.mark.parametrize("block", [1, 8, 16, 32])
def test_paged_waste_is_under_one_block_per_sequence(block):
    lengths = np.arange(1, 500)
    waste = serving.paged_waste_tokens(lengths, block)
    assert waste.min() == 0 and waste.max() == block - 1
    assert np.all((lengths + waste) % block == 0)


def test_paging_beats_reservation_as_the_vllm_paper_reports():
    """PagedAttention paper: existing systems used only 20.4–38.2 % of their KV memory for token
    states; vLLM wastes under 4 %. With lengths of a chat workload (geometric, mean 500 tokens)
    reserved at a 2,048-token maximum, contiguous reservation lands in the published band and
    16-token blocks under the published bound."""
    rng = np.random.default_rng(0)
    lengths = np.minimum(rng.geometric(1 / 500, 10_000), 2048)
    lo = 1 - serving.published("vllm_paper", "prior_used_high")
    hi = 1 - serving.published("vllm_paper", "prior_used_low")
    reserved = serving.reserved_waste_fraction(lengths, 2048)
    assert lo < reserved < hi
    assert reserved == pytest.approx(1 - lengths.mean() / 2048)
    paged = serving.paged_waste_fraction(lengths, int(serving.published("vllm_paper", "block_tokens")))
    assert paged < serving.published("vllm_paper", "paged_waste_max")
    with pytest.raises(ValueError, match="reserved_tokens"):
        serving.reserved_waste_fraction([10, 3000], 2048)


def test_static_batching_holds_slots_for_the_longest_output():
    assert serving.static_batch_utilization([100, 100, 100, 100]) == 1.0
    assert serving.static_batch_utilization([10, 10, 10, 970]) == pytest.approx(1000 / 3880)


# --------------------------------------------------------------------------- prefill, steps, transfer


def test_prefix_cache_saves_its_hit_rate_of_the_prefill():
    full = serving.prefill_flops(8e9, 2048)
    assert full == 2 * 8e9 * 2048
    assert serving.prefill_flops(8e9, 2048, hit_rate=0.75) == pytest.approx(full / 4)
    with pytest.raises(ValueError, match="hit_rate must be in \\[0, 1\\)"):
        serving.prefill_flops(8e9, 2048, hit_rate=1.0)


def test_step_time_is_the_roofline_of_the_step():
    n, w = L3.n_params(), memory.weights_bytes(L3.n_params())
    decode1 = serving.step_time_s(n, w, 1, 1000, Q3, H100.peak_flops("bf16"), H100.bandwidth)
    assert decode1 == pytest.approx((w + 1000 * Q3) / H100.bandwidth)  # memory-bound
    chunk = serving.step_time_s(n, w, 2048, 2048, Q3, H100.peak_flops("bf16"), H100.bandwidth)
    assert chunk == pytest.approx(2 * n * 2048 / H100.peak_flops("bf16"))  # compute-bound
    # a decode batch rides along a prefill chunk almost for free: same weight read, few more FLOPs
    mixed = serving.step_time_s(n, w, 2048 + 64, 2048 + 64 * 1000, Q3, H100.peak_flops("bf16"), H100.bandwidth)
    assert mixed < chunk * 1.05


def test_the_simulators_fast_step_time_is_the_checked_one():
    e = sim.Engine.for_model("Llama 3 8B", "H100 SXM", kv_blocks=1000, step_overhead_s=1e-4)
    for new, ctx in ((1, 10), (64, 64_000), (2048, 2048), (4096, 500_000)):
        checked = serving.step_time_s(
            e.n_params, e.weights_bytes, new, ctx, e.bytes_per_token, e.peak_flops, e.bandwidth
        )
        assert e.step_time_s(new, ctx) == pytest.approx(checked + 1e-4, rel=1e-12)


def test_kv_transfer_is_bytes_over_the_link():
    t = serving.kv_transfer_time_s(2048, Q3, 50e9, latency_s=1e-5)
    assert t == pytest.approx(2048 * 131072 / 50e9 + 1e-5)  # 5.4 ms over one NDR port
    assert serving.kv_transfer_time_s(2048, Q3, 450e9) < t / 8


def test_slo_attainment_and_goodput():
    ttft = np.array([0.1, 0.2, 0.3, 2.0])
    tpot = np.array([0.01, 0.05, 0.02, 0.01])
    assert serving.slo_attainment(ttft, tpot, 0.5, 0.03) == 0.5
    assert serving.goodput_rps([1, 2, 4, 8], [1.0, 0.95, 0.85, 0.3], target=0.9) == 2
    assert serving.goodput_rps([1, 2], [0.5, 0.4]) == 0.0
    with pytest.raises(ValueError, match="one value per request"):
        serving.slo_attainment([0.1], [0.1, 0.2], 1, 1)
    assert serving.percentile([1, 2, 3, 4, 100], 50) == 3


def test_published_lookups_name_what_is_known():
    assert "arxiv.org/abs/2309.06180" in serving.published_source("vllm_paper", "block_tokens")
    with pytest.raises(KeyError, match="known: .*vllm_paper"):
        serving.published("vllm", "x")
    with pytest.raises(KeyError, match="no field 'x'"):
        serving.published("vllm_paper", "x")


# --------------------------------------------------------------------------- links: busbw and algbw


def test_nccl_bus_bandwidth_convention():
    assert collectives.bus_factor("allreduce", 8) == pytest.approx(2 * 7 / 8)
    assert collectives.bus_factor("all_gather", 8) == pytest.approx(7 / 8)
    assert collectives.bus_factor("broadcast", 8) == 1.0
    # an 8-GPU all-reduce of 1 GiB in 5 ms: algbw 215 GB/s, busbw 1.75 x that
    algbw = collectives.alg_bandwidth(GIB, 5e-3)
    assert collectives.bus_bandwidth(GIB, 5e-3, "allreduce", 8) == pytest.approx(algbw * 1.75)
    with pytest.raises(ValueError, match="unknown collective 'allsum'"):
        collectives.bus_factor("allsum", 8)


def test_measured_nvlink_busbw_is_a_derate_of_the_spec():
    """8 x H100 all-reduce busbw about 370 GB/s for large messages (How to Scale Your Model, in
    hwlib/data/networks.yaml) against 450 GB/s per direction on the spec sheet: a planning derate
    near 0.8."""
    derate = networks.published("h100_node_allreduce_busbw") / H100.interconnect_bandwidth
    assert 0.75 < derate < 0.9


def test_llama3_goodput_with_fast_checkpoints_reaches_the_published_90_percent():
    """Llama 3 405B: 466 interruptions in 54 days and 'higher than 90 %' effective training time
    (hwlib/data/interruptions.yaml). Half-minute checkpoints at Young's interval and a three-minute
    restart (chapter 12's assumptions) land at the published figure; ten-minute checkpoints cannot."""
    run = goodput.runs()["Llama 3 405B pre-training (54-day snapshot)"]
    m = goodput.mtbi_s(run["span_s"], run["interruptions"])
    fast = goodput.goodput(30, goodput.optimal_interval_s(30, m), 180, m)
    slow = goodput.goodput(600, goodput.optimal_interval_s(600, m), 180, m)
    assert fast == pytest.approx(run["effective_training_fraction"], abs=0.01)
    assert slow < 0.75


def test_stragglers_slow_most_steps_of_a_large_job():
    assert goodput.straggler_step_factor(0.0, 2.0, 16384) == 1.0
    f = goodput.straggler_step_factor(1e-4, 1.5, 16384)
    assert f == pytest.approx(1 + 0.5 * (1 - (1 - 1e-4) ** 16384))
    assert f > 1.3
    with pytest.raises(ValueError, match="slowdown must be >= 1"):
        goodput.straggler_step_factor(0.1, 0.5, 8)


# --------------------------------------------------------------------------- the simulator


def _engine(**kw):
    return sim.Engine.for_model("Llama 3 8B", "H100 SXM", kv_blocks=kw.pop("kv_blocks", 27284), **kw)


def test_simulation_is_deterministic_for_a_seed():
    a = sim.simulate(_engine(), sim.Workload(20, n_requests=120, seed=3))
    b = sim.simulate(_engine(), sim.Workload(20, n_requests=120, seed=3))
    c = sim.simulate(_engine(), sim.Workload(20, n_requests=120, seed=4))
    assert np.array_equal(a.finish_s, b.finish_s) and np.array_equal(a.ttft_s, b.ttft_s)
    assert not np.array_equal(a.prompt_tokens, c.prompt_tokens)


def test_one_seed_gives_the_same_requests_at_every_rate():
    slow, fast = sim.Workload(5, seed=1).sample(), sim.Workload(50, seed=1).sample()
    assert np.array_equal(slow[1], fast[1]) and np.array_equal(slow[2], fast[2])
    assert np.allclose(slow[0], fast[0] * 10)


def test_every_request_finishes_and_no_faster_than_the_roofline():
    e = _engine()
    r = sim.simulate(e, sim.Workload(30, n_requests=200, seed=0))
    assert np.isfinite(r.finish_s).all() and np.isfinite(r.first_token_s).all()
    assert (r.first_token_s >= r.arrival_s).all() and (r.finish_s >= r.first_token_s).all()
    # TTFT at least the prompt's own prefill on an idle GPU; TPOT at least one weight read
    alone = np.array([e.step_time_s(p, p) for p in r.prompt_tokens])
    assert (r.ttft_s >= alone * (1 - 1e-9)).all()
    many = r.output_tokens > 1
    assert (r.tpot_s[many] >= e.weights_bytes / e.bandwidth * (1 - 1e-9)).all()
    assert r.busy_s <= r.duration_s + 1e-9
    assert r.throughput_tok_s == pytest.approx(r.output_tokens.sum() / r.duration_s)


def test_light_load_decodes_at_the_weight_read():
    r = sim.simulate(_engine(), sim.Workload(0.5, n_requests=60, seed=2))
    w_read = memory.weights_bytes(L3.n_params()) / H100.bandwidth
    assert serving.percentile(r.tpot_s, 50) == pytest.approx(w_read, rel=0.1)


def test_continuous_beats_static_batching_on_time_to_first_token():
    w = sim.Workload(10, n_requests=200, seed=0)
    cont = sim.simulate(_engine(max_seqs=32), w).summary()
    stat = sim.simulate(_engine(max_seqs=32, policy="static"), w).summary()
    assert stat["ttft_p50_s"] > 5 * cont["ttft_p50_s"]
    assert stat["throughput_tok_s"] <= cont["throughput_tok_s"] * 1.01


def test_chunked_prefill_protects_time_per_output_token():
    w = sim.Workload(60, n_requests=300, seed=0)
    chunked = sim.simulate(_engine(chunked=True, max_batched_tokens=2048), w).summary()
    first = sim.simulate(_engine(chunked=False, max_batched_tokens=4096), w).summary()
    assert first["tpot_p99_s"] > 1.5 * chunked["tpot_p99_s"]


def test_a_small_pool_preempts_and_still_finishes():
    r = sim.simulate(_engine(kv_blocks=400), sim.Workload(20, n_requests=150, seed=0))
    assert r.preemptions > 0 and np.isfinite(r.finish_s).all()
    big = sim.simulate(_engine(), sim.Workload(20, n_requests=150, seed=0))
    assert big.preemptions == 0 and serving.percentile(r.ttft_s, 99) > serving.percentile(big.ttft_s, 99)


@pytest.mark.parametrize("admission", ["optimistic", "reserve"])
@pytest.mark.parametrize("chunked", [True, False])
@pytest.mark.parametrize("kv_blocks", [300, 1200])
def test_the_decode_fast_forward_changes_nothing(monkeypatch, admission, chunked, kv_blocks):
    """`_decode_stretch` jumps over decode steps nothing can interrupt: every request's first and
    last token, the step count and the preemptions must equal those of stepping one by one."""
    engine = _engine(kv_blocks=kv_blocks, admission=admission, chunked=chunked, max_batched_tokens=4096)
    rng = np.random.default_rng(kv_blocks)
    arrival = list(np.cumsum(rng.exponential(1 / 40, 120)))
    prompt, output = [int(x) for x in rng.integers(1, 2000, 120)], [int(x) for x in rng.integers(1, 300, 120)]
    jumps, real = [], sim._decode_stretch
    monkeypatch.setattr(sim, "_decode_stretch", lambda engine, st: jumps.append(1) or real(engine, st))
    fast = sim.run_requests(engine, arrival, prompt, output)
    monkeypatch.setattr(sim, "_decode_stretch", lambda engine, st: False)
    slow = sim.run_requests(engine, arrival, prompt, output)
    assert (fast["steps"], fast["preemptions"]) == (slow["steps"], slow["preemptions"])
    assert jumps and fast["steps"] > len(jumps), "the fast path ran and skipped steps"
    if admission == "optimistic" and kv_blocks == 300:
        assert fast["preemptions"] > 0, "the small pool runs dry (reserve admission never preempts)"
    np.testing.assert_allclose(fast["first"], slow["first"], rtol=1e-12)
    np.testing.assert_allclose(fast["finish"], slow["finish"], rtol=1e-12)


def test_bad_engines_and_workloads_are_refused():
    with pytest.raises(ValueError, match="needs .* KV blocks but the pool has 10"):
        sim.simulate(_engine(kv_blocks=10), sim.Workload(1, n_requests=20))
    with pytest.raises(ValueError, match="without chunked prefill a prompt must fit one step"):
        sim.simulate(_engine(chunked=False, max_batched_tokens=512), sim.Workload(1, n_requests=50))
    with pytest.raises(ValueError, match="unknown policy 'fifo'"):
        _engine(policy="fifo")
    with pytest.raises(ValueError, match="max_batched_tokens .* must be >= max_seqs"):
        _engine(max_seqs=512, max_batched_tokens=256)
    with pytest.raises(ValueError, match="rate_rps must be a finite number > 0"):
        sim.Workload(0)


def test_for_model_without_blocks_uses_the_budget():
    e = sim.Engine.for_model("Llama 3 8B", "H100 SXM", overhead_bytes=3 * GIB)
    w = memory.weights_bytes(L3.n_params())
    assert e.kv_blocks == serving.kv_blocks(0.9 * H100.visible_memory_bytes() - w - 3 * GIB, Q3)


# --------------------------------------------------------------------------- figures


def test_pareto_figure_draws_each_scheduler_and_the_slos():
    runs = [sim.simulate(_engine(), sim.Workload(r, n_requests=80, seed=0)).summary() for r in (5, 40)]
    fig, (a1, a2) = plot.serving_pareto({"chunked": runs}, ttft_slo_s=0.5, tpot_slo_s=0.05)
    assert len(a1.get_lines()) == 3 and len(a2.get_lines()) == 3  # p99, p50, SLO
    assert list(a1.get_lines()[0].get_xdata()) == [r["throughput_tok_s"] for r in runs]
    assert a2.get_lines()[2].get_ydata()[0] == 0.05
    plt.close(fig)
    with pytest.raises(ValueError, match="non-empty list"):
        plot.serving_pareto({"x": []})


def test_goodput_figure_marks_youngs_interval():
    m = goodput.mtbi_s(54 * 86400, 466)
    fig, ax = plot.goodput_vs_interval([30, 300], 600, m)
    marks = [line for line in ax.get_lines() if len(line.get_xdata()) == 1]
    assert [float(line.get_xdata()[0]) for line in marks] == pytest.approx(
        [goodput.optimal_interval_s(d, m) for d in (30, 300)]
    )
    plt.close(fig)
