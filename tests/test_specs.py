"""hwlib.specs: the spec sheet loads, validates, is dense, and answers by name."""

import copy
import math

import pytest
import yaml

from hwlib import memory, specs

REQUIRED = [
    "T4",
    "L4",
    "A100 40GB SXM",
    "A100 80GB SXM",
    "H100 SXM",
    "H100 PCIe",
    "H200",
    "B200",
    "RTX 4090",
    "MI300X",
    "TPU v4",
    "TPU v5e",
    "TPU v5p",
]


def raw_sheet():
    return yaml.safe_load(specs.SHEET_PATH.read_text(encoding="utf-8"))


def test_required_parts_present():
    assert set(REQUIRED) <= set(specs.names())
    assert [a.name for a in specs.all()] == specs.names()


GiB = 2**30  # device memory is binary: an "80 GB" H100 has 80 GiB (specs.yaml header)


@pytest.mark.parametrize(
    "name, mem, bw, bf16",
    [
        ("H100 SXM", 80 * GiB, 3.35e12, 989.4e12),
        ("A100 80GB SXM", 80 * GiB, 2.039e12, 312e12),
        ("A100 40GB SXM", 40 * GiB, 1.555e12, 312e12),
        ("H200", 141 * GiB, 4.8e12, 989.4e12),
        ("B200", 180 * GiB, 8e12, 2250e12),
        ("MI300X", 192 * GiB, 5.3e12, 1307.4e12),
        ("TPU v4", 32 * GiB, 1.2e12, 275e12),
        ("TPU v5e", 16 * GiB, 819e9, 197e12),
        ("TPU v5p", 95 * GiB, 2765e9, 459e12),
    ],
)
def test_key_numbers(name, mem, bw, bf16):
    acc = specs.get(name)
    assert acc.memory_bytes == pytest.approx(mem)
    assert acc.bandwidth == pytest.approx(bw)
    assert acc.peak_flops("bf16") == pytest.approx(bf16)


def test_device_memory_is_binary_and_above_what_the_driver_shows():
    """One convention: memory_bytes is the capacity in GiB the part has (the header of specs.yaml).
    nvidia-smi shows a little less (the driver keeps some): H100 80GB 81,559 MiB, H200 143,771 MiB."""
    for acc in specs.all():
        assert (acc.memory_bytes / GiB).is_integer(), acc.name
    for name, shown_mib in [("H100 SXM", 81559), ("H200", 143771)]:
        cap = specs.get(name).memory_bytes
        assert 0.99 * cap < shown_mib * 2**20 < cap


def test_interconnect_is_per_direction():
    """NVLink 4 is '900 GB/s' both directions added; the sheet stores 450e9 B/s each way."""
    assert specs.get("H100 SXM").interconnect_bandwidth == 450e9
    assert specs.get("H200").interconnect_bandwidth == 450e9
    assert specs.get("B200").interconnect_bandwidth == 900e9
    assert specs.get("TPU v5e").interconnect_bandwidth == 400e9 / 2


def test_dense_not_sparse():
    """The spec-sheet trap: datasheets print 2:4-sparse numbers. None may leak in as dense."""
    h100 = specs.get("H100 SXM")
    assert h100.peak_flops("bf16") < 1.0e15  # 1,979 TFLOP/s is the sparse figure
    assert h100.peak_flops("fp8") == pytest.approx(2 * h100.peak_flops("bf16"), rel=1e-3)
    assert h100.peak_flops("tf32") == pytest.approx(h100.peak_flops("bf16") / 2, rel=1e-3)
    assert specs.get("H200").peak_flops("bf16") < 1.0e15
    assert specs.get("B200").peak_flops("fp8") == pytest.approx(4.5e15)  # 9,000 is FP4 dense
    assert specs.get("MI300X").peak_flops("fp16") < 2.0e15  # 2,615 is sparse
    assert specs.get("L4").peak_flops("fp8") == pytest.approx(242.5e12)  # 485 is sparse
    assert specs.get("TPU v5e").bandwidth < 1.0e12  # not the 1.6 TB/s ICI mix-up
    assert specs.get("TPU v5p").bandwidth < 3.0e12  # not 4.8 TB/s


def test_ridge_point_is_peak_over_bandwidth():
    h100 = specs.get("h100")
    assert h100.ridge_point("bf16") == pytest.approx(989.4e12 / 3.35e12)
    assert 290 < h100.ridge_point("bf16") < 300  # the lesson's "~300 FLOP/byte"
    for acc in specs.all():
        for p in acc.precisions():
            assert acc.ridge_point(p) == pytest.approx(acc.peak_flops(p) / acc.bandwidth)


@pytest.mark.parametrize(
    "query, canonical",
    [
        ("h100", "H100 SXM"),
        ("H100-SXM", "H100 SXM"),
        ("h100_sxm5", "H100 SXM"),
        ("NVIDIA H100 80GB HBM3", "H100 SXM"),
        ("a100", "A100 80GB SXM"),
        ("NVIDIA A100-SXM4-40GB", "A100 40GB SXM"),
        ("Tesla T4", "T4"),
        ("t4", "T4"),
        ("NVIDIA GeForce RTX 4090", "RTX 4090"),
        ("tpu-v5e", "TPU v5e"),
        ("  mi300x ", "MI300X"),
        ("h100 pcie", "H100 PCIe"),
    ],
)
def test_name_normalisation_and_aliases(query, canonical):
    assert specs.get(query).name == canonical


def test_unknown_name_names_close_matches_and_accepted():
    with pytest.raises(KeyError) as err:
        specs.get("H10")
    msg = str(err.value)
    assert "H10" in msg and "H100 SXM" in msg and "Accepted" in msg and "TPU v5p" in msg
    with pytest.raises(KeyError):
        specs.get(None)
    assert specs.match("Quadro K600") is None
    assert specs.match("Tesla T4").name == "T4"


def test_precision_names():
    h100 = specs.get("H100 SXM")
    assert h100.peak_flops("fp8_e4m3") == h100.peak_flops("fp8_e5m2") == h100.peak_flops("fp8")
    assert h100.peak_flops("BF16") == h100.peak_flops("bfloat16")
    assert specs.get("B200").peak_flops("fp4_e2m1") == specs.get("B200").peak_flops("fp4")
    with pytest.raises(ValueError, match="has fp32, fp16, int8"):
        specs.get("T4").peak_flops("bf16")  # Turing has no bf16
    with pytest.raises(ValueError, match="fp4"):
        h100.peak_flops("fp4")
    with pytest.raises(ValueError, match="Accepted: fp32"):
        h100.peak_flops("fp7")
    assert h100.precisions() == ["fp32", "tf32", "bf16", "fp16", "fp8", "int8"]


def test_every_number_has_source_and_confidence():
    for acc in specs.all():
        fields = ["memory_bytes", "bandwidth", *acc.precisions()]
        for f in fields:
            assert acc.source(f).strip()
            assert acc.confidence(f) in ("high", "medium", "low")
    h100 = specs.get("H100 SXM")
    assert "glennklockwood" in h100.source("bf16")
    assert h100.source("peak_flops.bf16") == h100.source("bf16")
    assert h100.confidence("price_per_hour_usd") == "low"
    with pytest.raises(KeyError, match="l2_bytes"):
        specs.get("B200").source("l2_bytes")  # not found in any source: no number either
    assert specs.get("B200").l2_bytes is None


def test_all_values_positive_finite():
    for acc in specs.all():
        nums = [acc.memory_bytes, acc.bandwidth, *acc.flops.values()]
        nums += [v for v in (acc.l2_bytes, acc.tdp_watts, acc.interconnect_bandwidth) if v is not None]
        assert all(math.isfinite(v) and v > 0 for v in nums), acc.name


@pytest.mark.parametrize(
    "corrupt, message",
    [
        (lambda s: s["accelerators"]["T4"]["bandwidth"].update(value=-1), "finite number > 0"),
        (lambda s: s["accelerators"]["T4"]["bandwidth"].update(value=float("nan")), "finite number > 0"),
        (lambda s: s["accelerators"]["T4"]["bandwidth"].update(value="fast"), "finite number > 0"),
        (lambda s: s["accelerators"]["T4"]["bandwidth"].pop("source"), "exactly value, source"),
        (lambda s: s["accelerators"]["T4"]["bandwidth"].update(source="nowhere"), "not a key of"),
        (lambda s: s["accelerators"]["T4"]["bandwidth"].update(confidence="sure"), "confidence"),
        (
            lambda s: s["accelerators"]["T4"]["peak_flops"].update(
                fp6={"value": 1.0, "source": "stas00", "confidence": "low"}
            ),
            "fp6",
        ),
        (lambda s: s["accelerators"]["T4"].update(bandwith=s["accelerators"]["T4"]["bandwidth"]), "bandwith"),
        (lambda s: s["accelerators"]["T4"].pop("memory_bytes"), "memory_bytes"),
        (lambda s: s["accelerators"]["T4"]["compute_units"].update(value=40.5), "whole number"),
        (lambda s: s["accelerators"]["L4"]["aliases"].append("tesla t4"), "collides"),
    ],
)
def test_validation_rejects_bad_sheets(corrupt, message):
    sheet = raw_sheet()
    assert specs.parse(copy.deepcopy(sheet))  # the shipped sheet is valid
    corrupt(sheet)
    with pytest.raises(ValueError, match=message):
        specs.parse(sheet)


def test_exponent_strings_are_read_as_numbers():
    sheet = raw_sheet()
    sheet["accelerators"]["T4"]["bandwidth"]["value"] = "3.2e11"  # how PyYAML reads 3.2e11
    assert specs.parse(sheet)["T4"].bandwidth == 3.2e11


def test_table():
    rows = specs.table(precision="fp8_e4m3")
    assert [r["name"] for r in rows] == specs.names()
    by = {r["name"]: r for r in rows}
    assert by["H100 SXM"]["peak_flops"] == pytest.approx(1978.9e12)
    assert by["A100 80GB SXM"]["peak_flops"] is None and by["A100 80GB SXM"]["ridge_point"] is None
    sub = specs.table(["h100", "t4"], precision="fp16")
    assert [r["name"] for r in sub] == ["H100 SXM", "T4"]
    assert sub[1]["ridge_point"] == pytest.approx(65e12 / 320e9)
    with pytest.raises(ValueError):
        specs.table(precision="fp64")


def test_accelerator_is_frozen_and_hashable():
    acc = specs.get("T4")
    with pytest.raises(AttributeError):
        acc.bandwidth = 1.0
    with pytest.raises(TypeError):
        acc.flops["fp32"] = 1.0
    assert len({acc, specs.get("tesla t4")}) == 1


def test_docstring_examples():
    import doctest

    result = doctest.testmod(specs)
    assert result.attempted > 0 and result.failed == 0


def test_default_precision_is_the_best_16_bit_format():
    assert specs.get("T4").default_precision() == "fp16"  # Turing has no bf16
    assert specs.get("H100 SXM").default_precision() == "bf16"
    assert specs.get("TPU v4").default_precision() == "bf16"
    for acc in specs.all():
        acc.peak_flops(acc.default_precision())  # every part has its default


def test_the_default_precision_rule_has_one_home():
    """ "bf16 where the part has it, else fp16" lives in Accelerator.default_precision only."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    pattern = re.compile(r"""["']bf16["'] if ["']bf16["'] in \S*precisions\(\)""")
    files = [
        p
        for d in ("hwlib", "chapters", "exercises", "tools")
        for p in (root / d).rglob("*")
        if p.suffix in (".py", ".md")
    ]
    hits = [
        f"{p.relative_to(root)}:{n}"
        for p in files
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if pattern.search(line) and "def default_precision" not in line
    ]
    assert hits == [], f"use Accelerator.default_precision(): {hits}"


def test_gddr_parts_with_ecc_show_a_sixteenth_less():
    """A T4 (15,360 MiB) and an L4 (23,034 MiB) with ECC on, as clouds and Colab run them, keep about
    1/16 of their GDDR for the check bits; HBM parts keep ECC out of band and show what they have."""
    from hwlib import calculator

    for name in ("T4", "L4"):
        acc = specs.get(name)
        assert acc.visible_memory_bytes() == acc.ecc_memory_bytes
        assert acc.visible_memory_bytes() / acc.memory_bytes == pytest.approx(15 / 16, abs=0.001)
    assert specs.get("H100 SXM").visible_memory_bytes() == specs.get("H100 SXM").memory_bytes
    # the calculator's fit uses it: a load between the two budgets does not fit a T4
    t4 = specs.get("T4")
    est = calculator.estimate(n_params=7.3e9, gpu="T4", weights_dtype="bf16")  # 14.6 GB
    assert memory.fits(est.inference_bytes, t4.memory_bytes) and est.gpus_to_serve == 2
