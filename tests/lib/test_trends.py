"""hwlib.trends reads the published growth rates (Gholami et al. 2024) from hwlib/data/trends.yaml."""

import copy

import pytest
import yaml

from hwlib import trends


def test_published_rates():
    assert trends.names() == ["peak_flops", "dram_bandwidth", "interconnect_bandwidth"]
    rates = [trends.growth(q) for q in ("peak_flops", "DRAM bandwidth", "Interconnect-Bandwidth")]
    assert rates == [3.0, 1.6, 1.4]
    assert trends.per_years() == 2 and trends.span_years() == 20
    assert "2403.14123" in trends.source("peak_flops") and trends.label("dram_bandwidth") == "DRAM bandwidth"


def test_growth_compounds():
    assert trends.growth_over("peak_flops", 20) == pytest.approx(3.0**10)
    assert trends.growth_over("dram_bandwidth", 0) == 1.0
    gap = trends.growth_over("peak_flops", 20) / trends.growth_over("dram_bandwidth", 20)
    assert gap == pytest.approx((3.0 / 1.6) ** 10)  # the memory wall: ~540x in 20 years
    with pytest.raises(ValueError, match="years must be a finite number >= 0"):
        trends.growth_over("peak_flops", -1)
    with pytest.raises(KeyError, match="unknown trend 'sram'"):
        trends.growth("sram")


def test_every_rate_is_sourced(monkeypatch, tmp_path):
    raw = yaml.safe_load(trends.DATA_PATH.read_text())
    bad = copy.deepcopy(raw)
    bad["growth"]["peak_flops"]["value"]["source"] = "a blog"
    path = tmp_path / "trends.yaml"
    path.write_text(yaml.safe_dump(bad))
    monkeypatch.setattr(trends, "DATA_PATH", path)
    trends._load.cache_clear()
    try:
        with pytest.raises(ValueError, match=r"growth\.peak_flops\.source 'a blog'"):
            trends.names()
    finally:
        trends._load.cache_clear()
