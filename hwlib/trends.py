"""Long-run hardware growth rates (hwlib/data/trends.yaml): how fast peak FLOP/s, DRAM bandwidth and
interconnect bandwidth have grown, the memory wall in three numbers.

Gholami et al. 2024, "AI and Memory Wall": over about 20 years peak server FLOP/s grew 3.0x every
2 years, DRAM bandwidth 1.6x and interconnect bandwidth 1.4x (chapter 4). Growth over t years
is g ** (t / per_years); the gap between two rates compounds as (g1 / g2) ** (t / per_years).
"""

from __future__ import annotations

import functools
from pathlib import Path

import yaml

from . import _check, sourced

DATA_PATH = Path(__file__).with_name("data") / "trends.yaml"


@functools.cache
def _load() -> dict:
    raw = yaml.safe_load(DATA_PATH.read_text(encoding="utf-8"))
    sources = raw["sources"]
    per = _check.positive("trends.yaml per_years", raw["per_years"])
    span = sourced.number("span_years", raw["span_years"], sources)
    growth = {k: sourced.number(f"growth.{k}", v["value"], sources) + (v["label"],) for k, v in raw["growth"].items()}
    return {"per_years": per, "span_years": span, "growth": growth}


def names() -> list[str]:
    """The quantities with a growth rate: "peak_flops", "dram_bandwidth", "interconnect_bandwidth"."""
    return list(_load()["growth"])


def growth(quantity: str) -> float:
    """Factor `quantity` grows by every `per_years()` years (3.0 for peak FLOP/s)."""
    return _load()["growth"][_check.choice("trend", quantity, names(), error=KeyError)][0]


def source(quantity: str) -> str:
    """Where the rate of `quantity` comes from."""
    return _load()["growth"][_check.choice("trend", quantity, names(), error=KeyError)][1]


def label(quantity: str) -> str:
    """Words for `quantity` ("DRAM bandwidth")."""
    return _load()["growth"][_check.choice("trend", quantity, names(), error=KeyError)][3]


def per_years() -> float:
    """The period the growth factors are quoted per: 2 years."""
    return _load()["per_years"]


def span_years() -> float:
    """The period the rates were fitted on: about 20 years."""
    return _load()["span_years"][0]


def growth_over(quantity: str, years) -> float:
    """g ** (years / per_years): how much `quantity` grows in `years` years (3.0 ** 10 over 20 years)."""
    return growth(quantity) ** (_check.nonnegative("years", years) / per_years())
