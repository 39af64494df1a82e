"""hwlib.diagnose: classification against the roofline, remedies per side, measured-time warnings,
hierarchical tiers, and bad input."""

import types

import pytest

from hwlib import diagnose, interconnect, roofline, specs

H100 = specs.get("H100 SXM")
PI, BETA = H100.peak_flops("bf16"), H100.bandwidth


def test_decode_gemv_is_memory_bound_and_only_batching_or_fewer_bytes_help():
    d = 8192
    diag = diagnose.kernel(2 * d * d, 2 * d * d, "H100 SXM", name="GEMV", kind="gemv")
    assert diag.bound == "memory" and not diag.near_ridge and diag.kind == "gemv"
    assert diag.intensity == pytest.approx(1.0)
    assert diag.attainable_flops == pytest.approx(BETA * 1.0)
    assert diag.fraction_of_peak == pytest.approx(BETA / PI)
    assert diag.time_lower_bound_s == pytest.approx(2 * d * d / BETA)
    assert diag.remedies[:2] == ("batching", "quantization")
    assert "fusion" not in diag.remedies and "tiling" not in diag.remedies and "tensor cores" not in diag.remedies
    assert any(w.startswith("fusion") for w in diag.will_not_help)
    assert any(w.startswith("tiling") for w in diag.will_not_help)
    assert any("peak FLOP/s" in w for w in diag.will_not_help)
    assert "gemv" in diag.summary()


def test_remedies_follow_the_kind_of_kernel():
    # the same memory-bound intensity, four kinds of kernel, four different first levers
    f, q = 1e9, 6e9
    first = {
        k: diagnose.kernel(f, q, "H100", kind=k).remedies[0] for k in ("elementwise", "reduction", "attention", "gemm")
    }
    assert first == {"elementwise": "fusion", "reduction": "fusion", "attention": "fused attention", "gemm": "tiling"}
    ew = diagnose.kernel(f, q, "H100", kind="elementwise")
    assert "tiling" not in ew.remedies and "batching" not in ew.remedies
    att = diagnose.kernel(f, q, "H100", kind="attention")
    assert "batching" not in att.remedies and "fewer KV bytes" in att.remedies
    assert any(w.startswith("batching") for w in att.will_not_help)
    # the generic list is unchanged and every named remedy has an explanation
    assert diagnose.kernel(f, q, "H100").remedies[:2] == ("fusion", "tiling")
    for sides in diagnose.KINDS.values():
        for remedies, _ in sides.values():
            for r in remedies:
                assert diagnose.explain(r)
    # compute-bound kernels of any kind get the compute-side remedies
    big = diagnose.kernel(1e15, 1e9, "H100", kind="gemv")
    assert big.bound == "compute" and big.remedies[0] == "tensor cores"


def test_big_matmul_is_compute_bound_with_compute_remedies():
    n = 8192
    diag = diagnose.kernel(2 * n**3, 3 * n * n * 2, "H100 SXM")
    assert diag.bound == "compute" and diag.fraction_of_peak == 1.0
    assert diag.time_lower_bound_s == pytest.approx(2 * n**3 / PI)
    assert "tensor cores" in diag.remedies and "fusion" not in diag.remedies


def test_agrees_with_roofline_for_a_sweep_of_intensities():
    for i in [0.25, 1, 10, 100, 294, 296, 1000, 1e4]:
        diag = diagnose.kernel(i * 1e9, 1e9, H100)
        assert diag.bound == roofline.bound(i, PI, BETA)
        assert diag.attainable_flops == pytest.approx(roofline.attainable(i, PI, BETA))
        assert diag.near_ridge == (PI / BETA / 2 < i < 2 * PI / BETA)


def test_precision_moves_the_ridge():
    bf16 = diagnose.kernel(400e9, 1e9, "H100", "bf16")
    fp8 = diagnose.kernel(400e9, 1e9, "H100", "fp8")
    assert bf16.bound == "compute" and fp8.bound == "memory"  # 400 sits between 295 and 591
    assert fp8.ridge_point == pytest.approx(2 * bf16.ridge_point, rel=1e-3)


def test_measured_faster_than_the_roof_is_flagged():
    # a vector add "measured" at 10x the HBM roof: the naive-CPU-timer signature
    flops, moved = 1e8, 6e8
    honest = moved / BETA
    diag = diagnose.kernel(flops, moved, "H100", measured_s=honest / 10)
    assert diag.fraction_of_attainable == pytest.approx(10.0)
    assert any("faster than the roofline" in w and "synchronize" in w for w in diag.warnings)
    ok = diagnose.kernel(flops, moved, "H100", measured_s=honest / 0.8)
    assert ok.fraction_of_attainable == pytest.approx(0.8) and ok.warnings == ()


def test_far_below_the_roof_names_latency_or_occupancy():
    tiny = diagnose.kernel(1e3, 6e3, "H100", measured_s=5e-6)  # roof time ~2 ns
    assert any("launch-bound" in w for w in tiny.warnings)
    assert any("Little's law" in w for w in tiny.warnings)
    slow = diagnose.kernel(1e9, 6e9, "H100", measured_s=3 * 6e9 / BETA)  # big, at a third of the roof
    assert any("well below the roof" in w for w in slow.warnings)


def test_other_tiers_and_duck_typed_devices():
    link = interconnect.nvlink("H100 SXM").bandwidth
    diag = diagnose.kernel(1e12, 1e9, "H100", bandwidth=link, tier="NVLink")
    assert diag.ridge_point == pytest.approx(PI / link) and diag.tier == "NVLink"
    cpu = types.SimpleNamespace(name="my CPU", bandwidth=20e9, peak_flops=lambda p: 1e12)
    d = diagnose.kernel(1e9, 1e9, cpu, "fp64")
    assert d.gpu == "my CPU" and d.ridge_point == 50 and d.bound == "memory"


def test_tiers_find_the_binding_roof():
    flops = 6 * 7e9 * 4096  # one step of 4096 tokens on a 7B model
    grads = 2 * 7e9 * 2 * 7 / 8  # ring all-reduce of bf16 grads over 8 GPUs
    nvlink = interconnect.nvlink("H100 SXM").bandwidth
    ib = interconnect.get("InfiniBand NDR").bandwidth
    h = diagnose.tiers(flops, {"HBM": (3 * 14e9, BETA), "NVLink": (grads, nvlink)}, "H100")
    assert h.binding == "compute" and h.time_lower_bound_s == pytest.approx(flops / PI)
    h = diagnose.tiers(flops, {"HBM": (3 * 14e9, BETA), "InfiniBand": (grads, ib)}, "H100")
    assert h.binding == "InfiniBand"
    assert h.time_lower_bound_s == pytest.approx(grads / ib)
    # HBM traffic overlaps with the arithmetic inside the kernels (max, not sum); the all-reduce adds in full
    assert h.no_overlap_time_s == pytest.approx(max(flops / PI, 3 * 14e9 / BETA) + grads / ib)
    assert "binding = InfiniBand" in h.summary()


def test_tiers_time_compute_at_the_planned_mfu():
    flops = 6 * 7e9 * 4096
    grads = 2 * 7e9 * 2 * 15 / 16
    ib = interconnect.get("InfiniBand NDR").bandwidth
    at_peak = diagnose.tiers(flops, {"HBM": (36 * 7e9, BETA), "IB": (grads, ib)}, "H100")
    at_40 = diagnose.tiers(flops, {"HBM": (36 * 7e9, BETA), "IB": (grads, ib)}, "H100", mfu=0.4)
    assert at_40.compute_time_s == pytest.approx(at_peak.compute_time_s / 0.4) == pytest.approx(flops / (0.4 * PI))
    assert at_40.no_overlap_time_s == pytest.approx(max(flops / (0.4 * PI), 36 * 7e9 / BETA) + grads / ib)
    assert "40% MFU" in at_40.summary()
    assert at_40.per_tier["IB"].ridge_point == pytest.approx(0.4 * PI / ib)  # same rate on every roof
    assert at_40.per_tier["IB"].time_lower_bound_s == pytest.approx(max(flops / (0.4 * PI), grads / ib))
    assert at_peak.per_tier["IB"].ridge_point == pytest.approx(PI / ib)
    # an on-chip tier can be declared: nothing but compute and L2 overlap here
    h = diagnose.tiers(flops, {"L2": (1e12, 10e12), "HBM": (1e11, BETA)}, "H100", on_chip=("L2",))
    assert h.no_overlap_time_s == pytest.approx(max(flops / PI, 0.1) + 1e11 / BETA)
    with pytest.raises(ValueError, match="mfu"):
        diagnose.tiers(flops, {"HBM": (1e9, BETA)}, "H100", mfu=40)


def test_summary_and_dict():
    d = diagnose.kernel(1e9, 1e9, "H100", name="softmax", measured_s=1e-3)
    text = d.summary()
    assert "softmax on H100 SXM" in text and "memory-bound" in text and "try: fusion" in text
    assert d.to_dict()["bound"] == "memory" and str(d) == text
    assert "shared memory" in diagnose.explain("tiling")
    with pytest.raises(KeyError, match="unknown remedy"):
        diagnose.explain("prayer")


@pytest.mark.parametrize(
    "args, kwargs, match",
    [
        ((0, 1e9, "H100"), {}, "flops"),
        ((1e9, -1, "H100"), {}, "bytes_moved"),
        ((1e9, float("nan"), "H100"), {}, "bytes_moved"),
        ((1e9, 1e9, "H100", "fp4"), {}, "fp4"),
        ((1e9, 1e9, "H100", "bf17"), {}, "precision"),
        ((1e9, 1e9, "H100"), {"measured_s": 0}, "measured_s"),
        ((1e9, 1e9, "H100"), {"bandwidth": -5}, "bandwidth"),
        ((1e9, 1e9, 42), {}, "gpu"),
        ((1e9, 1e9, "H100"), {"kind": "gemvv"}, "kind"),
    ],
)
def test_bad_input(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        diagnose.kernel(*args, **kwargs)


def test_bad_input_unknown_gpu_and_tiers():
    with pytest.raises(KeyError, match="H1000"):
        diagnose.kernel(1e9, 1e9, "H1000")
    with pytest.raises(ValueError, match="traffic"):
        diagnose.tiers(1e9, {}, "H100")
    with pytest.raises(ValueError, match="HBM"):
        diagnose.tiers(1e9, {"HBM": 3e9}, "H100")
