"""hwlib.interconnect: link bandwidths per direction (sourced), NVLink halved from the spec sheet,
the tier order of a DGX H100-class node, lookups and bad input."""

import copy

import pytest
import yaml

from hwlib import interconnect, specs


def test_pcie_generations_double():
    bw = [interconnect.get(f"PCIe {g}.0 x16").bandwidth for g in (3, 4, 5)]
    assert bw == [15.75e9, 31.5e9, 63.0e9]
    # 5.0: 32 GT/s x 16 lanes x 128/130 / 8 bits = 63.0 GB/s per direction (PCI-SIG: "128 GB/s" both ways)
    assert bw[2] == pytest.approx(32e9 * 16 * 128 / 130 / 8, rel=0.001)


def test_infiniband_bits_to_bytes():
    assert interconnect.get("InfiniBand NDR").bandwidth == 400e9 / 8
    assert interconnect.get("InfiniBand HDR").bandwidth == 200e9 / 8


def test_nvlink_is_per_direction_half_the_vendor_figure():
    # vendors quote both directions added: NVLink 3 "600 GB/s", NVLink 4 "900 GB/s", NVLink 5 "1.8 TB/s"
    for name, vendor_both_ways in [("H100 SXM", 900e9), ("A100 80GB SXM", 600e9), ("B200", 1.8e12)]:
        link = interconnect.nvlink(name)
        assert link.bandwidth == vendor_both_ways / 2
        assert link.bandwidth == specs.get(name).interconnect_bandwidth  # the sheet is per direction
        assert link.kind == "scale-up" and "NVLink" in link.name and link.source


def test_tiers_are_a_hierarchy():
    tiers = interconnect.tiers()
    assert [t.kind for t in tiers] == ["scale-up", "host bus", "network"]
    assert tiers[0].bandwidth / tiers[2].bandwidth == pytest.approx(9.0)  # 450 GB/s vs 50 GB/s


def test_lookup_by_alias_and_accelerator():
    assert interconnect.get("pcie5").name == "PCIe 5.0 x16"
    assert interconnect.get("IB").name == "InfiniBand NDR"
    assert interconnect.get("h100").bandwidth == 450e9
    assert interconnect.names()[0].startswith("PCIe")


def test_unknown_link_and_missing_nvlink():
    with pytest.raises(KeyError, match="did you mean"):
        interconnect.get("PCIe 5 x16x")
    with pytest.raises(ValueError, match="no scale-up link"):
        interconnect.nvlink("T4")


def test_every_link_is_sourced():
    for name in interconnect.names():
        link = interconnect.get(name)
        assert link.bandwidth > 0 and "http" in link.source and link.confidence in ("high", "medium")


@pytest.fixture()
def raw():
    return yaml.safe_load(interconnect.LINKS_PATH.read_text())


@pytest.mark.parametrize(
    "mutate, match",
    [
        (lambda r: r.pop("sources"), "top-level"),
        (lambda r: r["links"]["PCIe 3.0 x16"].update(kind="bus"), "kind"),
        (lambda r: r["links"]["PCIe 3.0 x16"]["bandwidth"].update(value=-1), "value"),
        (lambda r: r["links"]["PCIe 3.0 x16"]["bandwidth"].update(source="nowhere"), "source"),
        (lambda r: r["links"]["PCIe 3.0 x16"]["bandwidth"].update(confidence="sure"), "confidence"),
    ],
)
def test_parse_rejects_bad_tables(raw, mutate, match):
    bad = copy.deepcopy(raw)
    mutate(bad)
    with pytest.raises(ValueError, match=match):
        interconnect.parse(bad)
