"""hwlib.bench.predict: the bytes-in-flight / latency model of the experiments on T4 ... H200,
checked against its own formula worked by hand, the real NVRTC register counts, and published runs."""

import subprocess
import sys

import pytest

from hwlib import specs
from hwlib.bench import predict, recorded


def test_h200_copy_by_hand():
    """H200, stream_copy_f32 on sm_90: 32 registers (kernel_registers.yaml) -> 1024 per warp -> 64 warps
    -> 8 blocks of 256 = 2048 threads per SM, x 132 SMs; 4 loads x 4 B each in flight."""
    p = predict.part("H200")
    assert predict.registers("stream_copy_f32", "90") == 32
    got = predict.stream(p, "copy")
    assert got["threads"] == 132 * 2048
    assert got["bytes_in_flight"] == 132 * 2048 * 4 * 4
    ceiling = 0.90 * 4.8e12
    assert got["bytes_per_s"] == pytest.approx(min(ceiling, got["bytes_in_flight"] / (275e-9 * 1.42)))


def test_t4_is_limited_by_its_1024_threads_per_sm():
    p = predict.part("T4")
    assert predict.resident_threads(p, "stream_triad_f32") == 40 * 1024  # 41 registers still fit 4 blocks
    assert predict.resident_threads(p, "read_ilp", "-DILP=8") == 40 * 1024


def test_every_part_reaches_the_e1_bar_with_batched_loads():
    """The bar a GPU run must meet (E1 copy >= 85 % of theoretical) holds in the model on every part,
    and one load per thread would not be enough on the HBM parts (what the fix was for)."""
    for name in predict.PARTS:
        p = predict.part(name)
        assert predict.stream(p, "copy")["fraction_of_spec"] >= 0.85, name
        one_load = predict.little(p, predict.resident_threads(p, "stream_copy_f32") * 4)
        if p.bandwidth > 1e12:
            assert one_load < 0.85 * p.bandwidth, name


def test_little_law_rises_then_saturates():
    p = predict.part("A100 80GB SXM")
    rates = [predict.read_ilp(p, 1, threads=t) for t in (4096, 8192, 16384)]
    assert rates[1] == pytest.approx(2 * rates[0]) and rates[2] == pytest.approx(2 * rates[1])
    assert predict.read_ilp(p, 8) == pytest.approx(0.90 * p.bandwidth)


def test_the_model_agrees_with_published_stream_runs():
    """gpu-benches' triad on an A100 80GB (1.759 TB/s) is within 10 % of the model's; its occupancy-limited
    H200 run (2 blocks/SM) is below the model's full-occupancy rate, as it must be."""
    pub = {
        (m.get("device"), m.get("kernel")): m["value"] for m in recorded.published() if m["experiment"] == "bandwidth"
    }
    a100 = next(v for (d, k), v in pub.items() if d.startswith("A100 80GB") and k == "triad")
    assert predict.stream(predict.part("A100 80GB SXM"), "triad")["bytes_per_s"] == pytest.approx(a100, rel=0.10)
    assert pub[("H200", "triad")] < predict.stream(predict.part("H200"), "triad")["bytes_per_s"]


def test_rows_cover_every_experiment_and_come_from_the_data():
    rows = {r["quantity"]: r for r in predict.predict("T4")}
    assert {r["experiment"] for r in rows.values()} == {"E1", "E2", "E3", "E5", "E6", "E7", "E8", "E9", "E10", "E11"}
    assert rows["bf16 tensor peak"]["value"] == 0.0  # Turing: no bf16 tensor cores
    assert rows["pinned host copy"]["value"] == pytest.approx(0.80 * 15.75e9)  # PCIe 3.0 x16
    h200 = {r["quantity"]: r for r in predict.predict("H200")}
    assert h200["pinned host copy"]["value"] == pytest.approx(0.80 * 63.0e9)
    assert h200["fp32 ridge"]["value"] == pytest.approx(
        specs.get("H200").peak_flops("fp32") / h200["triad bandwidth"]["value"]
    )
    assert rows["fp64 ridge"]["value"] < rows["fp32 ridge"]["value"] / 30  # T4: fp64 at 1/32


def test_unknown_part_and_kernel_are_named():
    with pytest.raises(ValueError, match="no GPU model for 'B300'.*H200"):
        predict.part("B300")
    with pytest.raises(ValueError, match="no register count for 'nope'"):
        predict.registers("nope", "90")


def test_cli_prints_the_table():
    out = subprocess.run(
        [sys.executable, "-m", "hwlib", "bench", "predict", "--part", "T4", "--part", "H200"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    head = out.splitlines()[0].split()
    assert head[-2:] == ["T4", "H200"] and "copy bandwidth" in out and "PCIe" not in head


def test_tile_and_coalescing_rows_follow_the_formulas():
    """H100 (132 SMs): N = 4096 is 1,024 tiles in 8 waves (1024 / 1056 = 0.970); N = 4097 is 1,089
    tiles, (4097 / 4224)^2 of them useful, in 9 waves. Strided reads: 1/2 at stride 2, 1/8 from 8 on."""
    rows = {r["quantity"]: r["value"] for r in predict.predict("H100 SXM")}
    assert rows["N 4096 tile x wave efficiency"] == pytest.approx(1024 / 1056)
    assert rows["N 4097 tile x wave efficiency"] == pytest.approx((4097 / 4224) ** 2 * 1089 / (9 * 132))
    assert rows["stride 2 / stride 1"] == 0.5 and rows["stride >= 8 / stride 1"] == 0.125
    t4 = {r["quantity"]: r["value"] for r in predict.predict("T4")}
    assert t4["N 4096 tile x wave efficiency"] == pytest.approx(1024 / 1040)  # 25.6 waves of 40 SMs -> 26
    assert 0 < t4["stride 1 useful bandwidth"] <= specs.get("T4").bandwidth
