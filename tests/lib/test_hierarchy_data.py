"""hwlib/data/hierarchy.yaml: every number sourced, in SI units, and consistent with the spec sheet
(per-SM lanes x SMs x clock reproduces the FP32 peaks; HBM widths and rates reproduce bandwidths)."""

from importlib import resources

import numpy as np
import pytest
import yaml

from hwlib import hierarchy, specs

DATA = yaml.safe_load(resources.files("hwlib").joinpath("data", "hierarchy.yaml").read_text())


def records(node, path=()):
    """Every {value, source, confidence} record in the file, with its path."""
    if isinstance(node, dict):
        if set(node) == {"value", "source", "confidence"}:
            yield path, node
            return
        for key, child in node.items():
            yield from records(child, path + (str(key),))
    elif isinstance(node, list):
        for i, child in enumerate(node):
            yield from records(child, path + (str(i),))


def val(*path):
    node = DATA
    for key in path:
        node = node[key]
    return node["value"]


def test_every_record_is_sourced_positive_and_numeric():
    found = list(records({k: v for k, v in DATA.items() if k != "sources"}))
    assert len(found) > 30
    for path, rec in found:
        assert rec["source"] in DATA["sources"], f"{'.'.join(path)}: unknown source {rec['source']!r}"
        assert rec["confidence"] in ("high", "medium", "low"), path
        assert isinstance(rec["value"], (int, float)) and not isinstance(rec["value"], bool), (
            f"{'.'.join(path)}: value must be a number (write exponents with a sign), got {rec['value']!r}"
        )
        assert rec["value"] > 0, path


def test_published_curves_name_a_source_and_line_up():
    for name, curve in DATA["published"].items():
        assert curve["source"] in DATA["sources"], name
        lists = [v for v in curve.values() if isinstance(v, list)]
        assert len(lists) == 2 and len(lists[0]) == len(lists[1]) >= 5, name
        assert list(lists[0]) == sorted(lists[0]), f"{name}: x values must increase"


def test_parts_are_spec_sheet_names_with_known_compute_capability():
    for part, cc in DATA["parts"].items():
        assert specs.get(part).name == part
        assert cc in DATA["compute_capabilities"], part


@pytest.mark.parametrize("part", list(DATA["parts"]))
def test_fp32_lanes_reproduce_the_spec_peak_at_a_real_clock(part):
    """pi_fp32 = SMs x lanes x 2 x f: the implied boost clock must be a plausible GPU clock."""
    gpu = specs.get(part)
    lanes = val("compute_capabilities", DATA["parts"][part], "fp32_lanes_per_sm")
    clock = gpu.peak_flops("fp32") / (2 * gpu.compute_units * lanes)
    assert 1.2e9 < clock < 2.7e9, f"{part}: implied clock {clock / 1e9:.2f} GHz"


def test_h100_clock_and_tensor_rate_match_the_quoted_clocks():
    h100 = specs.get("H100 SXM")
    lanes = val("compute_capabilities", "9.0", "fp32_lanes_per_sm")
    implied = h100.peak_flops("fp32") / (2 * h100.compute_units * lanes)
    assert implied == pytest.approx(val("clocks", "H100 SXM", "fp32_clock_hz"), rel=0.01)
    per_clock_per_sm = h100.peak_flops("bf16") / (h100.compute_units * val("clocks", "H100 SXM", "tensor_clock_hz"))
    assert per_clock_per_sm == pytest.approx(4096, rel=0.01)  # 4 tensor cores x 512 FMA x 2 FLOP


def test_register_file_is_256_kib_per_sm_everywhere():
    for cc, row in DATA["compute_capabilities"].items():
        assert row["registers_per_sm"]["value"] * 4 == 256 * 1024, cc
        assert row["max_shared_bytes_per_sm"]["value"] <= row["l1_shared_bytes_per_sm"]["value"], cc


def test_hbm_width_and_rate_reproduce_bandwidths():
    rate, per_stack = (
        val("hbm", "HBM3 standard", "pin_rate_bits_per_s"),
        val("hbm", "HBM3 standard", "bandwidth_per_stack"),
    )
    width = 8 * per_stack / rate
    assert width == pytest.approx(1024, rel=0.01)  # bits per stack
    h100 = specs.get("H100 SXM")
    stacks, bus = val("hbm", "H100 SXM", "stacks"), val("hbm", "H100 SXM", "bus_bits")
    assert bus == stacks * 1024
    assert 8 * h100.bandwidth / bus < rate  # runs below the JEDEC maximum
    t4 = specs.get("T4")
    assert val("gddr", "T4", "bus_bits") * val("gddr", "T4", "pin_rate_bits_per_s") / 8 == pytest.approx(t4.bandwidth)


def test_published_h200_curves_sit_below_their_physical_ceilings():
    h200 = specs.get("H200")
    l2 = DATA["published"]["h200_l2_sweep"]
    bw = np.array(l2["gb_per_s"]) * 1e9
    kib = np.array(l2["kib"]) * 1024
    assert bw[kib > 4 * h200.l2_bytes].max() < h200.bandwidth  # DRAM plateau below spec
    assert bw[kib < 0.5 * h200.l2_bytes].min() > h200.bandwidth  # L2 hits beat DRAM
    stream = DATA["published"]["h200_read_vs_threads"]
    resident = np.array(stream["threads_printed"]) * stream["blocks_per_sm"]
    assert resident.max() == h200.compute_units * val("compute_capabilities", "9.0", "max_threads_per_sm")
    assert max(stream["read_gb_per_s"]) * 1e9 < h200.bandwidth


def test_latencies_grow_down_the_hierarchy():
    lat = DATA["latency"]["H100 PCIe"]
    cycles = [lat[k]["value"] for k in ("l1_cycles", "l2_cycles", "dram_cycles")]
    assert cycles == sorted(cycles)
    assert 200e-9 < lat["dram_cycles"]["value"] / lat["clock_hz"]["value"] < 1e-6


def test_register_bandwidth_is_one_formula_for_the_pyramid_and_the_bars():
    from hwlib import hierarchy, specs
    from hwlib.plot import diagrams

    h200 = specs.get("H200")
    want = 3 * 4 * h200.peak_flops("fp32") / 2  # 3 FP32 operands per FMA, 2 FLOPs per FMA
    assert hierarchy.register_bandwidth("H200") == want
    regs = next(t for t in diagrams.hierarchy.tiers("H200") if t["name"] == "registers")
    assert regs["bandwidth"] == want


def test_published_h200_points_show_latency_rising_under_load():
    """Little's law read backwards, L = N / T, on the published H200 read-kernel points (gpu-benches)
    gives about 549 ns at the smallest block and 785 ns at full occupancy, both longer than the idle
    pointer-chase latency: idle-latency byte counts are lower bounds."""
    pub = DATA["published"]["h200_read_vs_threads"]
    in_flight = np.array(pub["threads_printed"]) * pub["blocks_per_sm"] * pub["bytes_per_thread_in_flight"]
    latency = in_flight / (np.array(pub["read_gb_per_s"]) * 1e9)
    assert latency[0] == pytest.approx(549e-9, rel=0.01) and latency[-1] == pytest.approx(785e-9, rel=0.01)
    assert np.all(np.diff(latency) > 0)
    lat = DATA["latency"]["H100 PCIe"]
    idle = lat["dram_cycles"]["value"] / lat["clock_hz"]["value"]
    assert idle < latency.min()


def test_littles_law_latency_is_the_published_pointer_chase():
    lat = hierarchy.entry("latency", "H100 PCIe")
    latency = hierarchy.value(lat["dram_cycles"]) / hierarchy.value(lat["clock_hz"])
    assert latency == pytest.approx(375.2e-9, rel=1e-3)
