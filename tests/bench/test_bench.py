"""hwlib.bench on NumPy with small sizes: every record makes physical sense; the CLI's JSON shape."""

import json
import math
import os
import shutil
import subprocess
import sys
import time
import types

import numpy as np
import pytest

import bench_small
from hwlib import backend, bench
from hwlib.bench import cpu, timing

CPU_BW_CEILING = 1e12  # no 2-core VM streams 1 TB/s from DRAM or cache
CPU_PEAK_CEILING = cpu.cores() * 5e9 * 64  # cores x 5 GHz x 64 FLOP/cycle (2 AVX-512 FMA units, fp32)


@pytest.fixture(autouse=True)
def _numpy_backend(monkeypatch):
    monkeypatch.setenv(backend.ENV_VAR, "numpy")
    backend._cache.clear()
    yield
    backend._cache.clear()


def sane(x, hi):
    return x is not None and math.isfinite(x) and 0 < x < hi


def test_record_shape_and_device():
    rec = bench.fusion(sizes=[1 << 12], samples=1)
    for key in (
        "experiment",
        "title",
        "status",
        "source",
        "date",
        "backend",
        "device",
        "parameters",
        "results",
        "notes",
    ):
        assert key in rec
    assert rec["backend"] == "numpy" and rec["source"] == "live" and rec["device"]["kind"] == "cpu"
    json.dumps(rec)  # plain, JSON-ready


# --- timing --------------------------------------------------------------------------------------


def test_measure_grows_repeats_until_samples_are_long_enough():
    calls = []
    t = timing.measure(lambda: calls.append(1), samples=3, min_sample_s=2e-3)
    assert t.repeats > 1 and t.repeats * t.median_s >= 1e-3  # each sample lasted >= ~min_sample_s
    assert 0 < t.best_s <= t.median_s and len(t.samples_s) == 3 and t.clock == "perf_counter"
    assert len(calls) >= 1 + 2 + 3 * t.repeats  # first call + warm-up + samples


def test_measure_times_a_known_sleep_and_reports_first_call_apart():
    state = {"first": True}

    def fn():
        time.sleep(0.02 if state.pop("first", False) else 0.002)

    t = timing.measure(fn, samples=3, warmup=1)
    assert t.first_call_s >= 0.02 and 0.0019 < t.median_s < 0.015  # generous: a loaded machine oversleeps


def test_measure_with_cache_flush_times_calls_one_by_one(monkeypatch):
    """Each call is flushed before, outside the timing; a call far shorter than min_sample_s is timed
    in as many calls as keep the flushes within max_total_s (here 0.5 s / (2 samples x 50 ms) = 5 a
    sample), not in the hundreds that would reach min_sample_s (minutes of flushing on a CPU)."""
    flushes = []
    real = timing.flush_cache
    monkeypatch.setattr(timing, "flush_cache", lambda bk: flushes.append(1) or real(bk))
    monkeypatch.setattr(timing, "_flush_wall_s", lambda bk: 0.05)
    t = timing.measure(lambda: None, samples=2, min_sample_s=1e-4, flush=True, max_total_s=0.5)
    assert t.flushed and t.median_s < 1e-3  # the flush itself (64 MiB write) stays outside the timing
    assert t.repeats == 5 and len(flushes) == 1 + 5 + 5, (t.repeats, len(flushes))


def test_measure_gpu_path_uses_events_in_milliseconds():
    """The CUDA-event clock with a stand-in Event (perf_counter underneath): ms -> s conversion."""

    class Event:
        def record(self, stream=None):
            self.t = time.perf_counter()

        def synchronize(self):
            pass

    fake = types.SimpleNamespace(
        cuda=types.SimpleNamespace(
            Event=Event,
            get_elapsed_time=lambda a, b: (b.t - a.t) * 1e3,
            Device=lambda: types.SimpleNamespace(synchronize=lambda: None),
        )
    )
    bk = backend.Backend(fake, "cupy", "test", True, _info={"name": "fake", "l2_bytes": 1 << 20})
    t = timing.measure(lambda: time.sleep(0.001), bk, samples=2, warmup=0)
    assert t.clock == "cuda-events" and 0.0009 < t.median_s < 0.015


def test_measure_rejects_bad_arguments():
    with pytest.raises(ValueError, match="samples"):
        timing.measure(lambda: None, samples=0)


# --- CPU kernels ---------------------------------------------------------------------------------


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_stream_kernels_compute_stream_values(threads):
    n = 100_003  # odd, several L2 chunks: exercises slicing and the chunk tail
    a, b, c = np.full(n, 1.0), np.full(n, 2.0), np.zeros(n)
    k = cpu.stream_kernels(a, b, c, 3.0, threads)
    for name in ("copy", "scale", "add", "triad"):
        k[name]()
    assert (c == 4.0).all() and (b == 3.0).all() and (a == 15.0).all()  # c=1, b=3, c=4, a=3+3*4


def test_triad_chunk_follows_the_cores_own_l2():
    assert cpu.triad_chunk_bytes(1 << 20, 2) == 512 << 10  # half of a 1 MiB per-core L2
    assert cpu.triad_chunk_bytes(64 << 10) == 64 << 10  # small L2: the call-overhead floor
    assert cpu.triad_chunk_bytes(32 << 20) == 1 << 20  # never an L3-sized chunk
    assert cpu.triad_chunk_bytes(None, 2) == 256 << 10


BIG_VM_CACHES = {"l1_bytes": 48 << 10, "l2_bytes": 1 << 20, "l3_bytes": 480 << 20}  # a VM reporting the host's L3


def test_e1_chunks_by_l2_not_by_a_huge_llc(monkeypatch):
    """A VM that reports a 480 MiB L3: the triad chunk still comes from the 1 MiB L2."""
    from hwlib.bench import device_info

    monkeypatch.setattr(device_info, "_cpu_caches", lambda: dict(BIG_VM_CACHES))
    seen = []
    real = cpu.stream_kernels
    monkeypatch.setattr(cpu, "stream_kernels", lambda *a, **k: seen.append(a[-1]) or real(*a, **k))
    bench.bandwidth(n=1 << 14, sweep=False, samples=1)
    assert seen and all(ck == 512 << 10 for ck in seen)


def test_split_covers_the_range_once():
    for n, parts in [(10, 3), (1000, 7), (5, 8), (1 << 20, 2)]:
        s = cpu.split(n, parts)
        assert s[0][0] == 0 and s[-1][1] == n and all(s[i][1] == s[i + 1][0] for i in range(len(s) - 1))


# --- experiments ---------------------------------------------------------------------------------


def test_e1_bandwidth():
    n = 1 << 18
    rec = bench.bandwidth(n=n, sweep_sizes=[3 * (1 << 14), 3 * (1 << 22)], samples=3)
    got = {r["kernel"]: r for r in rec["results"]}
    assert list(got) == ["copy", "scale", "add", "triad"]
    for k, arrays in (("copy", 2), ("scale", 2), ("add", 3), ("triad", 3)):
        assert got[k]["bytes"] == arrays * n * 8
        assert sane(got[k]["bytes_per_s"], CPU_BW_CEILING) and got[k]["bytes_per_s"] >= got[k]["bytes_per_s_median"]
    assert rec["extra"][0]["bytes_moved"] == 5 * n * 8
    assert [p["working_set_bytes"] for p in rec["sweep"]] == [3 * (1 << 14), 3 * (1 << 22)]
    assert all(sane(p["bytes_per_s"], CPU_BW_CEILING) for p in rec["sweep"])


def test_e2_matmul():
    rec = bench.matmul(sizes=[32, 96], batches=[1, 8], weight_shape=(256, 128), samples=2)
    square = [r for r in rec["results"] if r["shape"] == "square"]
    skinny = [r for r in rec["results"] if r["shape"] == "skinny"]
    assert {(r["dtype"], r["size"]) for r in square} == {(d, s) for d in ("float32", "float64") for s in (32, 96)}
    assert [r["batch"] for r in skinny] == [1, 8] and all(r["k"] == 256 and r["n"] == 128 for r in skinny)
    for r in rec["results"]:
        assert r["flops"] == 2.0 * r["m"] * r["n"] * r["k"]
        assert sane(r["flops_per_s"], CPU_PEAK_CEILING)
    assert skinny[1]["intensity"] > skinny[0]["intensity"]  # more rows reuse the same weight


def test_e3_roofline():
    rec = bench.roofline(n=1 << 16, iters=[0, 4], samples=2)
    r0, r4 = rec["results"]
    assert r0["flops"] == (2 * 0 + 1) * r0["n"] and r4["flops"] == (2 * 4 + 1) * r4["n"]
    assert r4["intensity"] == pytest.approx(9 / 8)
    assert all(
        sane(r["flops_per_s"], CPU_PEAK_CEILING) and sane(r["bytes_per_s"], CPU_BW_CEILING) for r in rec["results"]
    )


def test_e4_fusion_moves_fewer_bytes_when_fused():
    rec = bench.fusion(sizes=[1 << 12, 1 << 16], samples=2)
    for n in (1 << 12, 1 << 16):
        moved = {r["variant"]: r["bytes_moved"] for r in rec["results"] if r["n"] == n}
        assert moved == {"expression": 12 * 4 * n, "out_buffers": 9 * 4 * n, "cache_blocked": 2 * 4 * n}
    assert all(sane(r["seconds"], 1.0) and r["speedup"] > 0 for r in rec["results"])


def test_e5_divergence_needs_a_gpu():
    rec = bench.divergence()
    assert rec["status"] == "skipped" and "GPU" in rec["reason"] and rec["results"] == []


def test_e6_occupancy_cpu_is_labelled():
    rec = bench.occupancy(n=1 << 18, threads=[1, 2], samples=2)
    assert "CPU" in rec["title"] and [r["threads"] for r in rec["results"]] == [1, 2]
    assert all(sane(r["bytes_per_s"], CPU_BW_CEILING) for r in rec["results"])


def test_e7_formats():
    rec = bench.formats(n=64, samples=2)
    got = {r["format"]: r for r in rec["results"]}
    assert set(got) == {"fp64", "fp32", "tf32", "fp16", "bf16", "fp8"}
    assert got["tf32"]["status"] == "skipped" and "TF32" in got["tf32"]["reason"]
    assert got["fp8"]["status"] == "skipped" and got["fp8"]["reason"]
    assert got["bf16"]["emulated"] and "emulation" in got["bf16"]["note"]
    for f in ("fp64", "fp32", "fp16", "bf16"):
        assert sane(got[f]["flops_per_s"], CPU_PEAK_CEILING)
    errors = [
        got["fp64"]["rel_error"],
        got["fp32"]["rel_error"],
        got["fp16"]["rel_error"],
        got["bf16"]["rel_error"],
        got["fp8"]["rel_error_emulated"],
    ]
    assert errors == sorted(errors) and errors[0] < 1e-12 and 1e-3 < errors[3] < 1e-2 < errors[4] < 0.2


def test_e8_decode_against_the_bandwidth_bound():
    rec = bench.decode(d=128, layers=2, batches=[1, 4], bandwidth=1e10, samples=2)
    w = 2 * 128 * 128 * 4
    assert rec["parameters"]["weight_bytes"] == w and rec["parameters"]["bandwidth_source"] == "given"
    for r in rec["results"]:
        assert r["bound_tokens_per_s"] == pytest.approx(r["batch"] * 1e10 / w)
        assert sane(r["tokens_per_s"], 1e9) and r["intensity"] == pytest.approx(2 * r["batch"] / 4)


def test_e9_transfer_not_applicable_on_cpu():
    rec = bench.transfer()
    assert rec["status"] == "skipped" and "not applicable" in rec["reason"]


def test_e10_tiles_on_a_cpu_has_no_wave_model():
    rec = bench.tiles(sizes=[64, 65], vocab=[96, 128], tokens=16, d_model=32, samples=1)
    assert rec["status"] == "ok" and rec["parameters"]["dtype"] == "float32"
    square = [r for r in rec["results"] if r["shape"] == "square"]
    assert [(r["n"], r["aligned"]) for r in square] == [(64, True), (65, False)]
    assert all(r["model_efficiency"] is None for r in rec["results"])  # a CPU has no SMs to fill
    assert all(r["flops"] == 2 * r["m"] * r["n"] * r["k"] for r in rec["results"])
    assert any("no SMs" in note for note in rec["notes"])
    assert all(sane(r["flops_per_s"], CPU_PEAK_CEILING) for r in rec["results"])


def test_e11_coalescing_on_a_cpu_counts_cache_lines():
    rec = bench.coalescing(strides=(1, 4, 32), elements=1 << 16, samples=1)
    assert [r["stride"] for r in rec["results"]] == [1, 4, 32] and rec["parameters"]["offsets"] == [0]
    assert [r["model_efficiency"] for r in rec["results"]] == [1.0, 0.25, 1 / 16]  # 64-byte lines
    assert [r["n"] for r in rec["results"]] == [1 << 16, 1 << 14, 1 << 11]
    assert rec["results"][0]["useful_fraction"] == 1.0
    assert all(sane(r["useful_bytes_per_s"], CPU_BW_CEILING) for r in rec["results"])
    with pytest.raises(ValueError, match="offsets"):
        bench.coalescing(offsets=(-1,))


def test_bad_sizes_are_refused():
    with pytest.raises(ValueError, match="sizes"):
        bench.fusion(sizes=[0])
    with pytest.raises(ValueError, match="which"):
        bench.formats(which=["fp7"])
    with pytest.raises(KeyError, match="unknown experiment"):
        bench.get("speed")


# --- CLI -----------------------------------------------------------------------------------------


def test_cli_bandwidth_json_shape(capsys):
    from hwlib.cli import main

    assert main(["bench", "bandwidth", "--json", "--n", "65536", "--no-sweep", "--quiet"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"device", "backend", "results"} <= set(out) and out["backend"] == "numpy"
    assert [r["kernel"] for r in out["results"]] == ["copy", "scale", "add", "triad"]
    assert all(r["bytes_per_s"] > 0 for r in out["results"])


SMALL = {
    "bandwidth": dict(n=1 << 14, sweep_sizes=[3 << 14]),
    "matmul": dict(sizes=[32], batches=[2], weight_shape=(64, 64)),
    "roofline": dict(n=1 << 14, iters=[1]),
    "fusion": dict(sizes=[1 << 12]),
    "occupancy": dict(n=1 << 14, threads=[1]),
    "formats": dict(n=32),
    "decode": dict(d=64, layers=1, batches=[1], bandwidth=1e10),
    "tiles": dict(sizes=[64, 65], vocab=[96, 128], tokens=16, d_model=32),
    "coalescing": dict(strides=(1, 8), elements=1 << 14),
}


def test_cli_all_writes_a_loadable_run(tmp_path, monkeypatch, capsys):
    from hwlib.bench import recorded
    from hwlib.cli import main

    bench_small.shrink(monkeypatch, SMALL)
    out = tmp_path / "run.json"
    assert main(["bench", "all", "--quick", "--out", str(out)]) == 0
    run = recorded.load(out)
    assert set(run["records"]) == set(bench.EXPERIMENTS) and run["quick"] is True
    assert "[hwlib bench]" in capsys.readouterr().err  # progress went to stderr


def test_cli_all_without_out_prints_a_summary_table(monkeypatch, capsys):
    from hwlib.cli import main

    bench_small.shrink(monkeypatch, SMALL)
    assert main(["bench", "all", "--quick"]) == 0
    captured = capsys.readouterr()
    lines = captured.out.strip().splitlines()
    assert lines[1].split() == ["experiment", "status", "launch-bound", "result"]
    rows = {line.split()[0]: line.split()[1] for line in lines[2:]}
    assert rows == {
        "bandwidth": "ok",
        "matmul": "ok",
        "roofline": "ok",
        "fusion": "ok",
        "divergence": "skipped",
        "occupancy": "ok",
        "formats": "ok",
        "decode": "ok",
        "transfer": "skipped",
        "tiles": "ok",
        "coalescing": "ok",
    }
    assert "GB/s" in captured.out and "[1/11] bandwidth" in captured.err and "[11/11] coalescing" in captured.err


def test_cli_out_of_memory_is_one_line_not_a_traceback(monkeypatch, capsys):
    from hwlib.cli import main

    def boom(*a, **k):
        raise MemoryError("Unable to allocate 512. MiB for an array with shape (67108864,) and data type float64")

    monkeypatch.setattr(bench, "run", boom)
    assert main(["bench", "bandwidth", "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "out of memory" in err and "--quick" in err and "Traceback" not in err
    assert len([line for line in err.splitlines() if not line.startswith("hwlib backend:")]) == 1


def test_cli_failed_experiment_is_one_line_and_exit_1(monkeypatch, capsys):
    """Out of memory inside an experiment: a failed record (the reason in one line), exit status 1."""
    from hwlib.bench import e4_fusion
    from hwlib.cli import main

    def boom(*a, **k):
        raise MemoryError("Unable to allocate 4.00 GiB for an array with shape (1073741824,) and data type float32")

    monkeypatch.setattr(e4_fusion, "fusion", boom)
    assert main(["bench", "fusion", "--quiet"]) == 1
    out = capsys.readouterr().out
    assert "failed: out of memory: MemoryError: Unable to allocate 4.00 GiB" in out and "Traceback" not in out


def test_direct_experiment_calls_return_failed_records_but_raise_on_bad_input(monkeypatch):
    from hwlib.bench import e6_occupancy

    def broken(*a, **k):
        raise RuntimeError("cudaErrorIllegalAddress")

    monkeypatch.setattr(e6_occupancy, "occupancy", broken)
    rec = bench.occupancy()
    assert rec["status"] == "failed" and rec["reason"] == "RuntimeError: cudaErrorIllegalAddress"
    with pytest.raises(ValueError, match="sizes"):
        bench.fusion(sizes=[0])


def test_cli_all_saves_after_each_experiment(monkeypatch, tmp_path, capsys):
    """A run that dies half-way (here: killed after the second experiment) keeps what it measured."""
    from hwlib.bench import recorded
    from hwlib.cli import main

    real, done = bench.run, []

    def run(name, xp=None, quick=False, progress=None):
        if len(done) == 2:
            raise KeyboardInterrupt
        done.append(name)
        return real(name, xp, quick=quick, progress=progress, samples=1, **SMALL.get(name, {}))

    monkeypatch.setattr(bench, "run", run)
    out = tmp_path / "run.json"
    with pytest.raises(KeyboardInterrupt):
        main(["bench", "all", "--quick", "--quiet", "--out", str(out)])
    assert list(recorded.load(out)["records"]) == ["bandwidth", "matmul"]


# --- CPU sizes on a laptop and on a big VM (a 480 MiB "LLC", 8 GiB free) -------------------------------


@pytest.fixture
def big_vm(monkeypatch):
    from hwlib.bench import device_info

    monkeypatch.setattr(device_info, "_cpu_caches", lambda: dict(BIG_VM_CACHES))
    monkeypatch.setattr(device_info, "available_memory_bytes", lambda: 8 << 30)
    backend._cache.clear()
    return backend.get()


def test_cpu_arrays_are_capped_by_available_memory(big_vm):
    from hwlib.bench import e1_bandwidth

    n_full, note = e1_bandwidth.default_n(big_vm, np.float64, quick=False)
    n_quick, _ = e1_bandwidth.default_n(big_vm, np.float64, quick=True)
    assert 3 * n_full * 8 <= 0.4 * (8 << 30) and "available memory" in note  # 4 x 480 MiB x 3 would be 5.6 GiB
    assert n_quick < n_full and 3 * n_quick * 8 <= 2 << 30 and n_quick * 8 > 480 << 20  # quick: <= 2 GiB, > LLC
    assert max(e1_bandwidth.default_sweep_sizes(big_vm, quick=False)) <= 0.4 * (8 << 30)
    assert max(e1_bandwidth.default_sweep_sizes(big_vm, quick=True)) <= 2 << 30


def test_quick_runs_stay_under_2_gib_on_a_big_vm(big_vm):
    from hwlib.bench import e4_fusion

    assert 6 * max(e4_fusion.default_sizes(big_vm, quick=True)) * 4 <= 2 << 30  # the expression holds 6 arrays
    assert 6 * max(e4_fusion.default_sizes(big_vm, quick=False)) * 4 <= 0.4 * (8 << 30)


def test_bandwidth_record_says_it_was_capped(big_vm, monkeypatch):
    from hwlib.bench import e1_bandwidth

    note = "arrays capped at 0 MiB each by available memory"
    monkeypatch.setattr(e1_bandwidth, "default_n", lambda bk, dtype, quick: (1 << 14, note))
    rec = bench.bandwidth(sweep=False, samples=1)
    assert rec["parameters"]["capped_by_memory"] and any("available memory" in n for n in rec["notes"])


def test_decode_quick_measures_a_quick_bandwidth(monkeypatch):
    from hwlib.bench import e1_bandwidth

    calls = []
    real = e1_bandwidth.bandwidth
    monkeypatch.setattr(e1_bandwidth, "bandwidth", lambda *a, **k: calls.append(k) or real(*a, **dict(k, n=1 << 14)))
    bench.decode(d=64, layers=1, batches=[1], quick=True, samples=1)
    assert calls and calls[0]["quick"] is True and calls[0]["sweep"] is False


def test_out_of_memory_in_the_sweep_keeps_the_stream_results(monkeypatch):
    from hwlib.bench import e1_bandwidth

    real = e1_bandwidth._arrays

    def arrays(bk, n, dtype):
        if n > 1 << 16:
            raise MemoryError(f"Unable to allocate {3 * n * 8} bytes")
        return real(bk, n, dtype)

    monkeypatch.setattr(e1_bandwidth, "_arrays", arrays)
    rec = bench.bandwidth(n=1 << 14, sweep_sizes=[3 << 14, 3 << 20, 3 << 22], samples=1)
    assert [r["kernel"] for r in rec["results"]] == ["copy", "scale", "add", "triad"]
    assert len(rec["sweep"]) == 1 and "out of memory after 1 sweep points" in rec["sweep_error"]


def test_cli_runs_as_a_module():
    env = dict(os.environ, HWLIB_BACKEND="numpy")
    p = subprocess.run([sys.executable, "-m", "hwlib", "bench", "divergence"], capture_output=True, text=True, env=env)
    assert p.returncode == 0 and "skipped: needs a GPU" in p.stdout and "hwlib backend: numpy" in p.stderr


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")
def test_stream_c_reference_builds_and_reports_json(tmp_path):
    src = os.path.join(os.path.dirname(__file__), "..", "..", "tools", "stream", "stream.c")
    exe = tmp_path / "stream"
    subprocess.run(["gcc", "-O3", "-march=native", "-fopenmp", src, "-o", str(exe)], check=True)  # as compare.py
    out = json.loads(subprocess.run([str(exe), "100000", "3"], capture_output=True, text=True, check=True).stdout)
    assert out["n"] == 100000 and all(0 < out[k] < CPU_BW_CEILING for k in ("copy", "scale", "add", "triad"))


# --- the GPU code paths, driven by the CuPy stand-in (tests/gpu_standin.py) --------------------------
# No GPU here: this checks the CuPy-side Python (names, argument order, record shapes) of every
# experiment; tests/bench/test_bench_gpu.py checks the timing and launch-shape behaviour.


def test_gpu_code_paths_with_a_numpy_stand_in(monkeypatch):
    import gpu_standin as gs

    bk, dev = gs.install(monkeypatch, "H200")  # torch absent -> fp8 is skipped with a reason
    info = bk.device_info()
    assert info["spec"] == "H200" and info["theoretical_bandwidth"] == pytest.approx(4.9e12, rel=0.01)
    e1 = bench.bandwidth(bk, n=1 << 12, sweep_sizes=[3 << 12], samples=1)
    assert [r["kernel"] for r in e1["results"]] == ["copy", "scale", "add", "triad"] and "extra" not in e1
    e2 = bench.matmul(bk, sizes=[16], batches=[2], weight_shape=(32, 32), samples=1)
    assert {r["dtype"] for r in e2["results"]} == {"float16", "float32"}
    e3 = bench.roofline(bk, n=1 << 12, iters=[0, 8], samples=1)
    assert [r["iters"] for r in e3["results"]] == [0, 8, 0, 8]  # float32 then float64
    e4 = bench.fusion(bk, sizes=[1 << 10], samples=1)  # results are checked against the expression
    assert {r["variant"] for r in e4["results"]} == {"expression", "out_buffers", "fuse", "elementwise_kernel"}
    e5 = bench.divergence(bk, n=1 << 10, iters=4, ways=(1, 32), samples=1)
    assert [r["pattern"] for r in e5["results"]] == [
        "all_zero",
        "warp_uniform",
        "lane_alternating",
        "random",
        "ways_1",
        "ways_32",
    ]
    e6 = bench.occupancy(bk, n=1 << 14, ilps=(1, 4), samples=1)
    warps = [1, 2, 4, 8, 16, 32, 64]  # 2048 threads per SM on sm_90
    assert [(r["ilp"], r["warps_per_sm"]) for r in e6["results"]] == [(i, w) for i in (1, 4) for w in warps]
    e7 = bench.formats(bk, n=16, samples=1)
    got = {r["format"]: r for r in e7["results"]}
    assert [got[f]["status"] for f in ("fp32", "tf32", "fp16", "bf16", "fp8")] == ["ok"] * 4 + ["skipped"]
    e8 = bench.decode(bk, d=32, layers=2, batches=[1, 2], samples=1)
    assert e8["parameters"]["bandwidth_source"] == "spec sheet (H200)"
    assert "compute_bound_tokens_per_s" in e8["results"][0]
    e9 = bench.transfer(bk, sizes=[1 << 12], samples=1)
    assert {(r["direction"], r["host_memory"]) for r in e9["results"]} == {
        ("h2d", "pageable"),
        ("d2h", "pageable"),
        ("h2d", "pinned"),
        ("d2h", "pinned"),
    }
    # exact C argument types for every raw launch: pointers are arrays, scalars are numpy-typed
    kinds = {
        (name.rsplit("_", 1)[0] if name.startswith("stream") else name, tuple(k)) for name, _, _, k, _ in dev.launches
    }
    assert kinds == {
        ("stream_copy", ("array", "array", "int64", "int32")),
        ("stream_scale", ("array", "array", "float32", "int64", "int32")),
        ("stream_add", ("array", "array", "array", "int64", "int32")),
        ("stream_triad", ("array", "array", "array", "float32", "int64", "int32")),
        ("fma_sweep_f32", ("array", "array", "int64", "float32", "float32")),
        ("fma_sweep_f64", ("array", "array", "int64", "float64", "float64")),
        ("branchy", ("array", "array", "array", "int64", "int32")),
        ("branchy32", ("array", "array", "int64", "int32", "int32")),
        ("read_ilp", ("array", "array", "int64")),
    }
    assert {opts for *_, opts in dev.launches} >= {("-DITERS=0",), ("-DITERS=8",), ("-DILP=1",), ("-DILP=4",)}
