"""hwlib.specs: the spec sheet loads, validates, is dense, and answers by name."""

import copy
import math
from pathlib import Path

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

    root = Path(__file__).resolve().parents[2]
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


# ---- Parts for what readers rent or own. Published figures, not our own numbers. ----

ADDED = ["MI325X", "MI355X", "Gaudi 3", "TPU v6e", "TPU7x", "GB200", "B300", "RTX 5090", "M4 Max"]


def test_added_parts_are_present_after_the_original_ones():
    names = specs.names()
    assert set(ADDED) <= set(names)
    assert names[: len(REQUIRED)] == REQUIRED  # appended, the existing order unchanged


@pytest.mark.parametrize(
    "name, mem_gib, bw, precision, peak",
    [
        ("MI325X", 256, 6.0e12, "fp8", 2614.9e12),  # AMD: FP8 2,614.9 dense / 5,229.8 sparse
        ("MI355X", 288, 8.0e12, "fp8", 5.0e15),  # AMD at ISSCC: "five petaflops" FP8
        (
            "Gaudi 3",
            128,
            3.67e12,
            "bf16",
            1835e12,
        ),  # Intel (Hot Chips 2024 table): 1,835 TFLOPS BF16 and FP8, 3.67 TB/s
        ("TPU v6e", 32, 1638e9, "bf16", 918e12),  # Google's v6e table
        ("TPU7x", 192, 7.37e12, "fp8", 4614e12),  # Google's TPU7x table
        ("GB200", 186, 8.0e12, "bf16", 2.5e15),
        ("B300", 288, 8.0e12, "fp4", 15e15),
        ("RTX 5090", 32, 1792e9, "fp32", 104.8e12),
        ("M4 Max", 128, 546e9, "fp32", 17.2e12),
    ],
)
def test_added_parts_match_published_figures(name, mem_gib, bw, precision, peak):
    acc = specs.get(name)
    assert acc.memory_bytes == mem_gib * GiB
    assert acc.bandwidth == pytest.approx(bw)
    assert acc.peak_flops(precision) == pytest.approx(peak, rel=0.01)


def test_added_parts_are_dense_against_the_vendors_sparse_and_system_figures():
    # NVIDIA's GB200 NVL72 rack: 1,440 PFLOPS FP4 and 720 PFLOPS FP8 "with sparsity", 72 GPUs.
    gb200 = specs.get("GB200")
    assert 72 * gb200.peak_flops("fp4") * 2 == pytest.approx(1440e15)
    assert 72 * gb200.peak_flops("fp8") * 2 == pytest.approx(720e15)
    # GB300 NVL72: "1.1 EF dense FP4".
    assert 72 * specs.get("B300").peak_flops("fp4") == pytest.approx(1.1e18, rel=0.03)
    # Google: a 9,216-chip Ironwood pod is 42.5 EFLOPS FP8; a 256-chip v6e pod 234.9 PFLOPS BF16.
    assert 9216 * specs.get("TPU7x").peak_flops("fp8") == pytest.approx(42.5e18, rel=0.002)
    assert 256 * specs.get("TPU v6e").peak_flops("bf16") == pytest.approx(234.9e15, rel=0.002)
    # MI355X: 256 CUs x 8,192 FP8 FLOP/clock x 2.4 GHz; AMD's 20.1 PFLOPS FP4 is sparse.
    mi355 = specs.get("MI355X")
    assert mi355.peak_flops("fp8") == pytest.approx(256 * 8192 * 2.4e9, rel=1e-4)
    assert 2 * mi355.peak_flops("fp4") == pytest.approx(20.1e15, rel=0.01)
    assert mi355.peak_flops("bf16") == pytest.approx(mi355.peak_flops("fp8") / 2)
    # RTX 5090: the printed 838.4 FP16 is sparse with FP16 accumulate; dense FP32-accumulate is a quarter,
    # which NVIDIA's RTX Blackwell whitepaper prints as 209.5.
    assert specs.get("RTX 5090").peak_flops("bf16") == pytest.approx(838.4e12 / 4, rel=1e-3)
    assert specs.get("RTX 5090").peak_flops("bf16") == 209.5e12
    assert specs.get("RTX 5090").peak_flops("fp4") == pytest.approx(3352e12 / 2)  # "3,352 AI TOPS" is sparse
    # Gaudi 3 has no sparsity and FP8 at the BF16 rate; TPU v6e's int8 is twice bf16.
    assert specs.get("Gaudi 3").peak_flops("fp8") == specs.get("Gaudi 3").peak_flops("bf16")
    assert specs.get("TPU v6e").peak_flops("int8") == 2 * specs.get("TPU v6e").peak_flops("bf16")


def test_links_are_per_direction_for_the_added_parts():
    assert specs.get("GB200").interconnect_bandwidth == 1.8e12 / 2  # NVLink 5 "1.8 TB/s"
    assert specs.get("B300").interconnect_bandwidth == 1.8e12 / 2
    assert specs.get("TPU v6e").interconnect_bandwidth == 800e9 / 2  # "800 GBps bidirectional"
    assert specs.get("TPU7x").interconnect_bandwidth == 1.2e12 / 2  # "1.2 TBps bidirectional"
    assert specs.get("Gaudi 3").interconnect_bandwidth == 24 * 200e9 / 8  # 24 x 200 GbE, full duplex
    assert specs.get("RTX 5090").interconnect_bandwidth is None  # no NVLink on the card


def test_unified_memory_share_the_gpu_may_use():
    """Apple's Metal caps the GPU's working set at about 75 % of RAM: 96 of 128 GiB on an M4 Max.
    Parts with their own HBM/GDDR keep all of it."""
    m4 = specs.get("Apple M4 Max")
    assert m4.gpu_memory_fraction == 0.75
    assert m4.gpu_memory_bytes() == 96 * GiB
    assert specs.get("H100 SXM").gpu_memory_bytes() == specs.get("H100 SXM").memory_bytes
    sheet = raw_sheet()
    sheet["accelerators"]["M4 Max"]["gpu_memory_fraction"]["value"] = 1.5
    with pytest.raises(ValueError, match="gpu_memory_fraction must be a share"):
        specs.parse(sheet)


@pytest.mark.parametrize(
    "query, canonical",
    [
        ("Intel Gaudi 3", "Gaudi 3"),
        ("ironwood", "TPU7x"),
        ("trillium", "TPU v6e"),
        ("gb300", "B300"),
        ("AMD Instinct MI355X", "MI355X"),
        ("NVIDIA GeForce RTX 5090", "RTX 5090"),
        ("apple m4 max", "M4 Max"),
    ],
)
def test_added_names_resolve(query, canonical):
    assert specs.get(query).name == canonical


def test_gaudi_is_neither_gpu_nor_tpu():
    assert specs.get("Gaudi 3").kind == "asic"
    sheet = raw_sheet()
    sheet["accelerators"]["Gaudi 3"]["kind"] = "npu"
    with pytest.raises(ValueError, match="kind must be one of"):
        specs.parse(sheet)


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


def test_visible_memory_is_the_share_a_unified_memory_lets_the_gpu_wire():
    """One budget for every fit: ECC on GDDR parts and the GPU's share of a unified memory alike."""
    assert specs.get("M4 Max").visible_memory_bytes() == 96 * GiB
    assert specs.get("T4").visible_memory_bytes() == specs.get("T4").ecc_memory_bytes


PRESS_HOSTS = (
    "wccftech",
    "tomshardware",
    "spheron",
    "verda.com",
    "world-today-news",
    "svethardware",
    "pcguia",
    "theregister",
    "eminentnews",
    "awesomeagents",
    "macmegasite",
    "hmc-tech",
    "stencel",
    "thefpsreview",
    "pocketmags",
    "vultr",
)


def test_a_figure_from_the_press_or_a_blog_is_never_high_confidence():
    raw = yaml.safe_load((Path(__file__).resolve().parents[2] / "hwlib" / "data" / "specs.yaml").read_text())
    press = {k for k, v in raw["sources"].items() if any(h in v for h in PRESS_HOSTS)}
    assert press  # the class exists: these parts have no vendor datasheet in the data yet

    def walk(node, path):
        if isinstance(node, dict) and "source" in node and "confidence" in node:
            yield path, node
        elif isinstance(node, dict):
            for k, v in node.items():
                yield from walk(v, f"{path}.{k}")

    high = [p for p, v in walk(raw["accelerators"], "") if v["source"] in press and v["confidence"] == "high"]
    assert high == []


def test_l4_sm_count_and_l2_are_what_the_card_reports():
    l4 = specs.get("L4")
    assert l4.compute_units == 58 and l4.l2_bytes == 48 * 2**20
    raw = (Path(__file__).resolve().parents[2] / "hwlib" / "data" / "specs.yaml").read_text(encoding="utf-8")
    src = raw[raw.index("  l4_devicequery:") :].splitlines()[0]
    assert "(58) Multiprocessors" in src and "50331648" in src
    assert l4.ecc_memory_bytes == 23034 * 2**20 and specs.get("T4").ecc_memory_bytes == 15360 * 2**20


def test_tpu7x_has_an_fp8_rate_and_a_ridge_above_the_b200():
    v7, b200 = specs.get("TPU7x"), specs.get("B200")
    assert v7.peak_flops("fp8") == 2 * v7.peak_flops("bf16")  # "an FP8 rate above its BF16 one"
    assert v7.ridge_point("bf16") > b200.ridge_point("bf16")  # "above a B200's"


def test_h200_was_announced_in_2023():
    assert specs.get("H200").release_year == 2023 and specs.get("B200").release_year == 2024
