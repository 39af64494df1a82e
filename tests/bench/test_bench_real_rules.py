"""The experiments under what real CuPy refuses and what the real compiler makes of the kernels, as
the stand-in now models them (tests/gpu_standin.py; the refusals are CuPy's own, see
cupy_backends/cuda/libs/cublas.pyx, and the register counts NVRTC's, hwlib/data/kernel_registers.yaml).
Each test here failed, or could not be written, against the stand-in that let cuBLAS be captured."""

import pytest

import gpu_standin as gs
from hwlib import backend, bench
from hwlib.bench import _common, timing


@pytest.fixture(autouse=True)
def _fresh(monkeypatch):
    monkeypatch.delenv(backend.ENV_VAR, raising=False)
    backend._cache.clear()
    yield
    backend._cache.clear()


# --- what real CuPy refuses ---------------------------------------------------------------------


def test_cublas_inside_a_capture_raises_as_in_cupy(monkeypatch):
    bk, _ = gs.install(monkeypatch, "H200")
    cp = bk.xp
    a = cp.ones((4, 4), dtype=cp.float32)
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        s.begin_capture()
        with pytest.raises(NotImplementedError, match="cuBLAS API during stream capture"):
            cp.matmul(a, a)
        s.end_capture()


def test_capture_on_the_default_stream_is_refused(monkeypatch):
    bk, _ = gs.install(monkeypatch, "H200")
    with pytest.raises(gs.CUDARuntimeError, match="cudaErrorStreamCaptureUnsupported"):
        bk.xp.cuda.Stream.null.begin_capture()
    assert bk.xp.cuda.get_current_stream() is bk.xp.cuda.Stream.null


def test_a_graph_of_matmuls_falls_back_and_says_why(monkeypatch):
    """timing.measure(graph=True) around cupy.matmul: real CuPy's refusal lands in graph_error."""
    bk, dev = gs.install(monkeypatch, "H200")
    a = bk.xp.ones((8, 8), dtype=bk.xp.float16)
    t = timing.measure(lambda: bk.xp.matmul(a, a), bk, samples=1, graph=True)
    assert t.graph is False and "cuBLAS API during stream capture" in t.graph_error and dev.graph_launches == 0


@pytest.mark.parametrize("numpy_version, ok", [("2.0.2", False), ("2.1.3", True)])
def test_bf16_follows_cupys_numpy_gate_by_probing(monkeypatch, numpy_version, ok):
    """CuPy 14.0.1 (Colab's) with NumPy 2.0.2 (Colab's pinned runtimes) has no bfloat16; with 2.1.3 it has."""
    bk, _ = gs.install(monkeypatch, "A100", version="14.0.1", numpy_version=numpy_version)
    dt, why = _common.bf16_support(bk)
    assert (dt is not None) is ok
    got = {r["format"]: r for r in bench.formats(bk, n=16, which=["bf16"], samples=1)["results"]}
    if ok:
        assert why is None and got["bf16"]["status"] == "ok"
    else:
        assert got["bf16"]["status"] == "skipped"
        assert "Unsupported dtype bfloat16" in why and "NumPy >= 2.1.2" in got["bf16"]["reason"]


def test_matmul_skips_a_bf16_this_cupy_cannot_hold_instead_of_calling_it_bad_input(monkeypatch):
    bk, _ = gs.install(monkeypatch, "A100", version="14.0.1", numpy_version="2.0.2")
    rec = bench.matmul(bk, sizes=[16], dtypes=["float16", "bfloat16"], batches=[2], weight_shape=(32, 32), samples=1)
    assert rec["status"] == "ok" and {r["dtype"] for r in rec["results"]} == {"float16"}
    assert rec["skipped"][0]["dtype"] == "bfloat16" and "NumPy >= 2.1.2" in rec["skipped"][0]["reason"]


@pytest.mark.parametrize(
    "exc",
    [
        RuntimeError("CUBLAS_STATUS_ALLOC_FAILED"),
        RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB"),
        gs.CUDARuntimeError("cudaErrorMemoryAllocation: out of memory"),
    ],
)
def test_out_of_memory_from_cublas_torch_or_the_runtime_is_labelled(monkeypatch, exc):
    bk, _ = gs.install(monkeypatch, "T4", fail={"matmul": exc})
    rec = bench.get("matmul")(bk, sizes=[16], batches=[2], weight_shape=(32, 32), samples=1)
    assert rec["status"] == "failed" and rec["reason"].startswith("out of memory:")


def test_other_failures_are_not_called_out_of_memory():
    assert not _common.is_out_of_memory(RuntimeError("CUBLAS_STATUS_NOT_SUPPORTED"))


# --- the device is timed, not the launch --------------------------------------------------------


def test_small_squares_are_one_strided_batched_call(monkeypatch):
    """With a host cost of 30 us per cupy.matmul, the default sizes still time the device on an H200."""
    bk, dev = gs.install(monkeypatch, "H200", host_cost_s=30e-6)
    rec = bench.matmul(bk, sizes=[256, 4096], dtypes=["float16"], batches=[1], samples=2)
    sq = {r["size"]: r for r in rec["results"] if r["shape"] == "square"}
    assert sq[256]["count"] == (1 << 30) // (3 * 256 * 256 * 2) and "strided-batched" in sq[256]["timed_as"]
    assert sq[4096]["count"] == 1
    assert not any(r["launch_bound"] for r in rec["results"])
    # per GEMM, on the roofline: 2730 side-by-side 256^3 fp16 products have intensity 256 / 3 FLOP/B,
    # below the H200's ridge, so they run at intensity x DRAM rate, not at the tensor peak
    for r in sq.values():
        assert r["flops_per_s"] == pytest.approx(min(dev.p["tensor"], r["intensity"] * dev.p["dram"]), rel=0.1)


def test_batch_count_keeps_operands_within_a_gib(monkeypatch):
    from hwlib.bench import e2_matmul

    bk, _ = gs.install(monkeypatch, "T4")
    for n in (64, 128, 256, 512, 1024):
        c = e2_matmul.batch_count(bk, n, 4)
        assert 1 <= c <= (4096 // n) ** 3 and 3 * c * n * n * 4 <= 1 << 30
    assert e2_matmul.batch_count(bk, 4096, 2) == 1


# --- loads in flight (Little's law) -------------------------------------------------------------


def _strip_unroll(src: str) -> str:
    return src.replace("#define UNROLL 4", "#define UNROLL 1")


@pytest.mark.parametrize("profile, floor", [("H200", 0.85), ("A100", 0.85), ("T4", 0.85)])
def test_stream_copy_reaches_the_dram_rate_with_loads_batched(monkeypatch, profile, floor):
    """STREAM copy on a DRAM-sized array: >= 85 % of the part's DRAM rate with 4 loads in flight per thread."""
    bk, dev = gs.install(monkeypatch, profile)
    rec = bench.bandwidth(bk, sweep=False, samples=2)
    copy = next(r for r in rec["results"] if r["kernel"] == "copy")
    assert copy["bytes_per_s"] >= floor * dev.p["dram"]


def test_one_load_per_thread_cannot_fill_hbm(monkeypatch):
    """The kernel as it was (each load followed by its store): ~0.8 MB in flight on an H200, a third of
    what 4.3 TB/s x 620 ns needs - the stand-in shows what the audit predicted (27-41 %)."""
    from hwlib.bench import e1_bandwidth

    src = _common.kernel_source("stream.cu")
    monkeypatch.setattr(_common, "kernel_source", lambda name: _strip_unroll(src) if name == "stream.cu" else src)
    e1_bandwidth._RAW.clear()
    bk, dev = gs.install(monkeypatch, "H200")
    rec = bench.bandwidth(bk, sweep=False, samples=2)
    copy = next(r for r in rec["results"] if r["kernel"] == "copy")
    assert 0.2 * dev.p["dram"] < copy["bytes_per_s"] < 0.5 * dev.p["dram"]
    e1_bandwidth._RAW.clear()


def test_occupancy_latency_comes_out_as_the_modelled_one(monkeypatch):
    """With #pragma unroll 1, loads in flight = ILP, so bytes_in_flight / bandwidth on the rising part
    is the DRAM latency itself, and ILP 4 and 8 differ."""
    bk, dev = gs.install(monkeypatch, "H200")
    rec = bench.occupancy(bk, ilps=(1, 4, 8), samples=1)
    rising = [r for r in rec["results"] if r["bytes_per_s"] < 0.5 * dev.p["dram"]]
    assert rising
    for r in rising:
        assert r["implied_latency_s"] == pytest.approx(dev.p["latency"], rel=0.15)
    by = {(r["ilp"], r["warps_per_sm"]): r["bytes_per_s"] for r in rec["results"]}
    assert by[(8, 1)] == pytest.approx(2 * by[(4, 1)], rel=0.1)


def test_two_way_divergence_costs_two_times(monkeypatch):
    bk, _ = gs.install(monkeypatch, "A100")
    rec = bench.divergence(bk, quick=True, ways=(1,), samples=2)
    slow = {r["pattern"]: r["slowdown"] for r in rec["results"]}
    assert slow["warp_uniform"] == pytest.approx(1.0, abs=0.05)
    assert slow["lane_alternating"] == pytest.approx(2.0, rel=0.05) and slow["random"] == pytest.approx(2.0, rel=0.05)


def test_fp64_rates_follow_the_part(monkeypatch):
    """A T4 does fp64 at 1/32 of fp32, an H200 at 1/2: E3's compute-bound fp64 points say so."""
    ratios = {}
    for profile in ("T4", "H200"):
        bk, dev = gs.install(monkeypatch, profile)
        rec = bench.roofline(bk, n=1 << 22, iters=[1024], dtypes=["float32", "float64"], samples=1)
        assert not any(r["launch_bound"] for r in rec["results"])
        rate = {r["dtype"]: r["flops_per_s"] for r in rec["results"]}
        ratios[profile] = rate["float64"] / rate["float32"]
    assert ratios["T4"] == pytest.approx(1 / 32, rel=0.2) and ratios["H200"] == pytest.approx(0.5, rel=0.2)


def test_t4_bf16_runs_at_fp32_speed_not_tensor_speed(monkeypatch):
    bk, dev = gs.install(monkeypatch, "T4")
    got = {r["format"]: r for r in bench.formats(bk, n=2048, which=["fp16", "bf16"], samples=1)["results"]}
    assert got["bf16"]["flops_per_s"] < 0.2 * got["fp16"]["flops_per_s"]


def test_pinned_copies_run_at_the_parts_pcie_rate(monkeypatch):
    rates = {}
    for profile in ("T4", "H200"):
        bk, dev = gs.install(monkeypatch, profile)
        rec = bench.transfer(bk, sizes=[64 << 20], samples=2)
        rates[profile] = next(r["bytes_per_s"] for r in rec["results"] if r["host_memory"] == "pinned")
        assert rates[profile] == pytest.approx(dev.p["pinned"], rel=0.1)
    assert rates["H200"] > 3 * rates["T4"]  # PCIe 5 against PCIe 3


# --- clocks per point ---------------------------------------------------------------------------


def _fake_nvml(sm_mhz):
    import types

    nvml = types.ModuleType("pynvml")
    nvml.NVML_CLOCK_SM, nvml.NVML_CLOCK_MEM = 1, 2
    nvml.nvmlInit = lambda: None
    nvml.nvmlDeviceGetHandleByIndex = lambda i: ("gpu", i)
    nvml.nvmlDeviceGetClockInfo = lambda h, kind: sm_mhz.pop(0) if kind == 1 and len(sm_mhz) > 1 else (
        sm_mhz[0] if kind == 1 else 2619)  # fmt: skip
    return nvml


def test_each_point_carries_the_clocks_nvml_reports(monkeypatch):
    """A T4 that settles from 1590 to 1140 MHz: each point says at which SM clock it was measured."""
    import sys

    from hwlib.bench import clocks

    clocks.reset()
    monkeypatch.setitem(sys.modules, "pynvml", _fake_nvml([1590, 1590, 1140]))
    bk, _ = gs.install(monkeypatch, "T4")
    rec = bench.bandwidth(bk, n=1 << 16, sweep=False, samples=1)
    got = [r["sm_clock_hz"] for r in rec["results"]]
    assert got[0] == 1590e6 and got[-1] == 1140e6 and all(r["mem_clock_hz"] == 2619e6 for r in rec["results"])
    assert {r["clock_source"] for r in rec["results"]} == {"NVML"}
    clocks.reset()


def test_without_nvml_no_clock_is_made_up(monkeypatch):
    import sys

    from hwlib.bench import clocks

    clocks.reset()
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import fails
    bk, _ = gs.install(monkeypatch, "T4")
    rec = bench.bandwidth(bk, n=1 << 16, sweep=False, samples=1)
    assert not any("sm_clock_hz" in r for r in rec["results"])
    clocks.reset()
