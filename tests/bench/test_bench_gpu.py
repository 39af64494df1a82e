"""hwlib.bench against a CuPy stand-in that fails like a GPU (tests/gpu_standin.py): one test per way
the experiments can go wrong on real hardware (launch-bound timings, launch shapes from
assumptions, a failure costing the whole run, blocking copies, missing bfloat16, broken PyTorch)."""

import json

import numpy as np
import pytest

import bench_small
import gpu_standin as gs
from hwlib import backend, bench
from hwlib.bench import recorded


@pytest.fixture(autouse=True)
def _fresh(monkeypatch):
    monkeypatch.delenv(backend.ENV_VAR, raising=False)
    monkeypatch.delenv("CUPY_TF32", raising=False)
    backend._cache.clear()
    yield
    backend._cache.clear()


SMALL = bench_small.GPU_SMALL


def small_run(monkeypatch, bk, names=None):
    bench_small.shrink(monkeypatch, SMALL)
    return bench.run_all(bk, names=names)


# --- 1. a failure costs one entry, never the run -------------------------------------------------


def test_out_of_memory_in_one_experiment_keeps_the_run(monkeypatch, tmp_path):
    oom = gs.OutOfMemoryError("Out of memory allocating 8,589,934,592 bytes")
    bk, dev = gs.install(monkeypatch, "H200", fail={"matmul": oom})
    run = small_run(monkeypatch, bk, names=["bandwidth", "matmul", "fusion"])
    recs = run["records"]
    assert recs["matmul"]["status"] == "failed" and "Out of memory" in recs["matmul"]["reason"]
    assert recs["bandwidth"]["status"] == "ok" and recs["fusion"]["status"] == "ok"
    recorded.load(recorded.save(run, tmp_path / "run.json"))  # the partial run is still a valid run


def test_cuda_error_in_a_kernel_costs_that_experiment_only(monkeypatch):
    err = gs.CUDARuntimeError("cudaErrorLaunchFailure: unspecified launch failure")
    bk, _ = gs.install(monkeypatch, "A100", fail={"branchy": err})
    run = small_run(monkeypatch, bk, names=["divergence", "transfer"])
    assert run["records"]["divergence"]["status"] == "failed"
    assert "cudaErrorLaunchFailure" in run["records"]["divergence"]["reason"]
    assert run["records"]["transfer"]["status"] == "ok"


@pytest.mark.parametrize("mode, words", [("scaled_mm_fails", "CUBLAS_STATUS_NOT_SUPPORTED"), ("old", "float8")])
def test_torch_present_but_failing_costs_only_fp8(monkeypatch, mode, words):
    bk, _ = gs.install(monkeypatch, "H200", torch=gs.fake_torch(mode))
    rec = bench.formats(bk, n=16, samples=1)
    got = {r["format"]: r for r in rec["results"]}
    assert [got[f]["status"] for f in ("fp32", "tf32", "fp16", "bf16")] == ["ok"] * 4
    assert got["fp8"]["status"] == "failed" and words in got["fp8"]["reason"]
    assert got["fp8"]["rel_error_emulated"] > 0  # the emulated accuracy is still reported


def test_cupy_13_without_bfloat16_skips_bf16_and_says_why(monkeypatch):
    bk, _ = gs.install(monkeypatch, "T4", version="13.6.0", bf16=False)
    got = {r["format"]: r for r in bench.formats(bk, n=16, samples=1)["results"]}
    assert got["bf16"]["status"] == "skipped" and "CuPy 13.6.0" in got["bf16"]["reason"]
    assert "14" in got["bf16"]["reason"]  # names the version that has it
    assert got["fp32"]["status"] == "ok" and got["fp16"]["status"] == "ok"
    assert got["tf32"]["status"] == "skipped" and "sm_75" in got["tf32"]["reason"]


# --- 2. timings that measure the GPU, not Python --------------------------------------------------


def test_launch_bound_points_are_marked_and_the_l2_plateau_shows(monkeypatch):
    """H200: a 24 MiB triad is ~2.5 us of L2 work against ~10 us of launch cost. Repeating the traversal
    inside one launch must show L2 bandwidth (above DRAM), and any point still launch-bound says so."""
    bk, dev = gs.install(monkeypatch, "H200")
    p = dev.p
    rec = bench.bandwidth(bk, n=1 << 14, sweep_sizes=[3 << 12, 24 << 20], samples=2)
    small, l2 = rec["sweep"]
    assert all("launch_bound" in pt for pt in rec["sweep"] + rec["results"])
    assert l2["launch_bound"] is False
    assert l2["bytes_per_s"] > 1.3 * p["dram"]  # the L2 plateau, above HBM
    assert l2["bytes_per_s"] == pytest.approx(p["l2_bw"], rel=0.3)
    assert small["bytes_per_s"] <= l2["bytes_per_s"]


def test_decode_at_batch_1_on_h200_is_not_launch_bound(monkeypatch):
    """The default layers outlast their launches with plain cupy.matmul calls, as real CuPy must run
    them (it refuses cuBLAS inside a CUDA-graph capture): batch 1 is device-bound, and reads 1 GiB of
    weights from DRAM at the H200's rate, even with a host cost per call of 30 us."""
    bk, dev = gs.install(monkeypatch, "H200", host_cost_s=30e-6)
    rec = bench.decode(bk, batches=[1], samples=3)
    row = rec["results"][0]
    assert rec["parameters"]["weight_bytes"] == 2 * 16384**2 * 2
    assert row["launch_bound"] is False and "graph" not in row and row["timed_as"].startswith("plain launches")
    assert row["bytes_per_s"] == pytest.approx(dev.p["dram"], rel=0.1)


def test_small_decode_layers_stay_launch_bound_and_say_so(monkeypatch):
    """Layers of 8 MiB take ~2 us on an H200, less than the 10 us launch: the point says launch_bound
    (the old design hid this behind a CUDA graph that real CuPy cannot capture)."""
    bk, dev = gs.install(monkeypatch, "H200")
    row = bench.decode(bk, d=2048, layers=4, batches=[1], samples=3)["results"][0]
    assert row["launch_bound"] is True and dev.graph_launches == 0


def test_divergence_quick_size_keeps_every_launch_busy(monkeypatch):
    bk, dev = gs.install(monkeypatch, "H200")
    rec = bench.divergence(bk, quick=True, ways=(1, 32), samples=3)
    assert rec["status"] == "ok" and all(r["launch_bound"] is False for r in rec["results"])


def test_measure_marks_a_launch_bound_call(monkeypatch):
    from hwlib.bench import timing

    bk, dev = gs.install(monkeypatch, "H200", host_cost_s=20e-6)
    x = bk.xp.ones(1 << 10, dtype=np.float32)
    t = timing.measure(lambda: bk.xp.multiply(x, 2.0, out=x), bk, samples=3)
    assert t.launch_bound and t.host_per_call_s > 0.5 * t.median_s


# --- 3. launch configurations from the device -----------------------------------------------------


@pytest.mark.parametrize("profile", ["A100", "H200"])
def test_roofline_grid_is_whole_waves_of_resident_blocks(monkeypatch, profile):
    bk, dev = gs.install(monkeypatch, profile)
    rec = bench.roofline(bk, n=1 << 12, iters=[0, 8], samples=1)
    for name, grid, block, _kinds, options in dev.launches:
        resident = dev.p["sms"] * gs.occupancy_blocks(dev, name, block, options)
        assert grid % resident == 0, f"{name}: grid {grid} is {grid / resident:.2f} waves of {resident} blocks"
    for r in rec["results"]:
        name = "fma_sweep_" + ("f32" if r["dtype"] == "float32" else "f64")
        assert r["blocks_per_sm"] == gs.occupancy_blocks(dev, name, 256, (f"-DITERS={r['iters']}",))


@pytest.mark.parametrize("profile", ["A10", "L4", "T4", "H200"])
def test_occupancy_reaches_every_sms_thread_limit(monkeypatch, profile):
    bk, dev = gs.install(monkeypatch, profile)
    rec = bench.occupancy(bk, n=1 << 14, ilps=(1,), samples=1)
    full = dev.p["sms"] * dev.p["threads_per_sm"]
    assert max(r["threads"] for r in rec["results"]) == full
    top = max(rec["results"], key=lambda r: r["threads"])
    assert top["occupancy"] == pytest.approx(1.0)
    for name, grid, block, _kinds, options in dev.launches:  # every launch fits on the SMs as one wave
        assert grid <= dev.p["sms"] * gs.occupancy_blocks(dev, name, block, options)


@pytest.mark.parametrize("profile", list(gs.PROFILES))
def test_dram_working_sets_exceed_every_l2(monkeypatch, profile):
    from hwlib.bench import e4_fusion

    bk, dev = gs.install(monkeypatch, profile)
    for quick in (True, False):
        assert max(e4_fusion.default_sizes(bk, quick)) * 4 >= 4 * dev.p["l2"]


def test_transfer_directions_are_timed_alike(monkeypatch):
    """Both directions are cudaMemcpyAsync on the stream (never a blocking ndarray.get()); the pageable
    ones block the host all the same, as on a real GPU, and are labelled synchronous, not launch-bound."""
    bk, dev = gs.install(monkeypatch, "L4")
    rec = bench.transfer(bk, sizes=[1 << 22], samples=3)
    assert {name for name, _ in dev.copies} == {"memcpyAsync"}
    for r in rec["results"]:
        assert r["synchronous"] is (r["host_memory"] == "pageable")
        assert r["launch_bound"] is False
    assert {(r["direction"], r["host_memory"]) for r in rec["results"]} == {
        (d, m) for d in ("h2d", "d2h") for m in ("pageable", "pinned")
    }
    rates = {(r["direction"], r["host_memory"]): r["bytes_per_s"] for r in rec["results"]}
    assert rates[("d2h", "pinned")] == pytest.approx(rates[("h2d", "pinned")], rel=0.5)


def test_zero_memory_clock_does_not_crash(monkeypatch):
    bk, _ = gs.install(monkeypatch, "H200", MemoryClockRate=0, GlobalMemoryBusWidth=0)
    info = bk.device_info()
    assert info["theoretical_bandwidth"] is None and "memory clock" in info["bandwidth_note"]
    assert info["spec"] == "H200"
    rec = bench.decode(bk, d=32, layers=1, batches=[1], samples=1)
    assert rec["parameters"]["bandwidth_source"] == "spec sheet (H200)"


def test_zero_clock_on_an_unknown_gpu_still_decodes(monkeypatch):
    bk, _ = gs.install(monkeypatch, {**gs.PROFILES["A10"], "name": b"NVIDIA Mystery GPU"}, MemoryClockRate=0)
    rec = bench.decode(bk, d=32, layers=1, batches=[1], samples=1)
    assert rec["status"] == "ok" and rec["results"][0]["bound_tokens_per_s"] is None
    assert "unknown" in rec["parameters"]["bandwidth_source"]


def test_tf32_state_is_recorded_beside_fp32(monkeypatch):
    monkeypatch.setenv("CUPY_TF32", "1")
    bk, _ = gs.install(monkeypatch, "A100")
    e2 = bench.matmul(bk, sizes=[16], dtypes=["float32"], batches=[2], weight_shape=(32, 32), samples=1)
    assert e2["parameters"]["tf32"]["CUPY_TF32"] == "1" and all(r["tf32"] for r in e2["results"])
    got = {r["format"]: r for r in bench.formats(bk, n=16, which=["fp32", "tf32"], samples=1)["results"]}
    assert got["fp32"]["tf32"] is True and got["tf32"]["tf32"] is True


def test_sm75_t4_runs_everything_with_reasons(monkeypatch):
    bk, dev = gs.install(monkeypatch, "T4")
    run = small_run(monkeypatch, bk)
    assert {r["status"] for r in run["records"].values()} == {"ok"}
    fmt = {r["format"]: r for r in run["records"]["formats"]["results"]}
    assert fmt["fp8"]["status"] == "skipped" and "sm_75" in fmt["fp8"]["reason"]
    assert "no bf16 tensor cores" in fmt["bf16"]["note"]
    json.dumps(run)


def test_stream_kernels_compute_stream_values_on_the_stand_in(monkeypatch):
    bk, dev = gs.install(monkeypatch, "A10")
    from hwlib.bench import e1_bandwidth

    a, b, c = (bk.xp.full(1000, v, dtype=np.float32) for v in (1.0, 2.0, 0.0))
    ks = e1_bandwidth._kernels(bk, a, b, c, threads=1)
    for name in ("copy", "scale", "add", "triad"):
        ks[name]()
    assert (np.asarray(c) == 4.0).all() and (np.asarray(b) == 3.0).all() and (np.asarray(a) == 15.0).all()


def test_run_progress_counts_steps(monkeypatch):
    bk, _ = gs.install(monkeypatch, "H200")
    seen = []
    bench_small.shrink(monkeypatch, SMALL)
    bench.run_all(bk, names=["fusion", "transfer"], progress=seen.append)
    assert any(m.startswith("[1/2] fusion") for m in seen) and any(m.startswith("[2/2] transfer") for m in seen)


def test_cache_cliff_figure_shows_the_l2_plateau_and_rings_launch_bound_points(monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    from hwlib import plot

    bk, dev = gs.install(monkeypatch, "T4")  # 4 MiB L2: an in-L2 sweep and a DRAM one fit in a test
    rec = bench.bandwidth(bk, n=1 << 14, sweep_sizes=[3 << 17, 3 << 18, 3 << 19, 3 << 23], samples=2)
    rec["sweep"][0]["launch_bound"] = True  # as a busy host would leave it
    fig, ax = plot.bandwidth_sweep(rec)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    plateau = next(t for t in labels if t.startswith("L2 plateau"))
    level = float(plateau.split("(")[1].split()[0]) * 1e9
    assert level == pytest.approx(dev.p["l2_bw"], rel=0.3) and level > 2 * rec["sweep"][-1]["bytes_per_s"]
    assert any(t.startswith("launch-bound") for t in labels)
    matplotlib.pyplot.close(fig)


# --- E10 / E11: tile and wave quantisation, coalescing --------------------------------------------


def test_tiles_default_sweep_is_device_bound_and_steps_past_4096(monkeypatch):
    """Every default point (N 3840...4352 fp16) outlasts the launch on an H200, and the stand-in's
    cuBLAS (128 x 128 tiles in waves over 132 SMs) is slower per FLOP just past 4096 than at 4096."""
    from hwlib import tiling
    from hwlib.bench import e10_tiles

    bk, dev = gs.install(monkeypatch, "H200")
    sizes = [4096, 4097, 4224, 4352]
    rec = bench.tiles(bk, sizes=sizes, vocab=[50257, 50304], tokens=2048, d_model=2048, samples=1)
    assert rec["status"] == "ok" and rec["parameters"]["sm_count"] == 132
    rate = {r["n"]: r["flops_per_s"] for r in rec["results"] if r["shape"] == "square"}
    assert rate[4097] < 0.9 * rate[4096] and rate[4224] < rate[4352]
    for r in rec["results"]:
        assert not r["launch_bound"], r["n"]
        assert r["model_efficiency"] == tiling.gemm_efficiency(r["m"], r["n"], 132, 128, 128)
    vocab = {r["n"]: r for r in rec["results"] if r["shape"] == "vocab"}
    # padding to 50,304 fills tiles the last one computed anyway: more useful FLOP/s for no more time
    assert vocab[50304]["seconds"] <= vocab[50257]["seconds"] and vocab[50304]["aligned"]
    assert vocab[50304]["flops_per_s"] > vocab[50257]["flops_per_s"] and not vocab[50257]["aligned"]
    assert min(e10_tiles.gpu_sizes(quick=True)) == 3840 and {4095, 4097} <= set(e10_tiles.gpu_sizes())


def test_coalescing_useful_bandwidth_follows_the_sectors(monkeypatch):
    """Stride s reads 1/s of each sector until one sector per lane (s = 8); a misaligned warp costs an
    extra L2 sector, not DRAM bytes. Launch shape: whole waves of resident blocks, exact C types."""
    bk, dev = gs.install(monkeypatch, "H200")
    rec = bench.coalescing(bk, strides=(1, 2, 4, 8, 32), offsets=(0, 1), elements=1 << 26, samples=1)
    got = {(r["stride"], r["offset_bytes"]): r for r in rec["results"]}
    assert [r["model_efficiency"] for r in rec["results"]] == [1.0, 0.5, 0.25, 0.125, 0.125, 0.8]
    for s in (2, 4, 8, 32):
        assert got[(s, 0)]["useful_fraction"] == pytest.approx(got[(s, 0)]["model_efficiency"], rel=0.1)
    assert 0.8 < got[(1, 4)]["useful_fraction"] <= 1.0 + 1e-6  # a ratio of two timings: rounding only
    assert not any(r["launch_bound"] for r in rec["results"])
    p = rec["parameters"]
    assert p["grid"] == 132 * p["blocks_per_sm"] and p["occupancy"] == 1.0  # 32 registers: 2048 threads/SM
    launches = [launch for launch in dev.launches if launch[0] == "strided_read"]
    assert launches and all(k == ["array", "array", "int64", "int32", "int32"] for _, _, _, k, _ in launches)


def test_coalescing_and_tiles_fail_alone(monkeypatch):
    err = gs.CUDARuntimeError("cudaErrorIllegalAddress: an illegal memory access was encountered")
    bk, _ = gs.install(monkeypatch, "L4", fail={"strided_read": err})
    run = small_run(monkeypatch, bk, names=["coalescing", "tiles"])
    assert run["records"]["coalescing"]["status"] == "failed"
    assert "cudaErrorIllegalAddress" in run["records"]["coalescing"]["reason"]
    assert run["records"]["tiles"]["status"] == "ok"
