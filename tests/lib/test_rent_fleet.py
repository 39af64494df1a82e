"""Serving fleets (hwlib.rent.fleet, cheapest_fleet; Exercise 12.1): the formulas on one plan, the
enumeration against a brute force, the errors, and the grader's expr scope that ex16/ex17 use."""

import math

import pytest

from hwlib import memory, models, rent, serving, specs
from hwlib.grading import spec

L8 = models.get("Llama 3 8B")


def test_fleet_follows_its_formulas():
    h100 = specs.get("H100 SXM")
    p = rent.fleet("H100 SXM", 2, "fp8", 100, 250, "Llama 3 8B", 8192)
    w, q = L8.n_params() * 1.0, L8.kv_bytes_per_token("bf16") / 2
    assert p["replicas"] == 3 and p["n_gpus"] == 6
    assert p["memory_per_gpu"] == pytest.approx((w + 100 * 8192 * q) / 2)
    step = max(2 * L8.n_params() * 100 / (2 * h100.peak_flops("fp8")), (w + 100 * 8192 * q) / (2 * h100.bandwidth))
    assert (
        p["step_s"]
        == pytest.approx(step)
        == pytest.approx(
            serving.step_time_s(L8.n_params(), w, 100, 100 * 8192, q, 2 * h100.peak_flops("fp8"), 2 * h100.bandwidth)
        )
    )
    assert p["usd_per_hour"] == pytest.approx(6 * rent.cheapest("H100 SXM").usd_per_hour)
    assert p["usable"] == memory.usable_bytes(h100.visible_memory_bytes())


def test_cheapest_fleet_is_the_brute_force_minimum():
    best = rent.cheapest_fleet(256, 20, "Llama 3 8B")
    costs = [
        rent.fleet(g, t, prec, b, 256, "Llama 3 8B")
        for g in rent.priced()
        for prec in rent.FLEET_PRECISIONS
        if prec in specs.get(g).precisions()
        for t in rent.FLEET_GPUS_PER_REPLICA
        for b in (1, 8, 32, 64, 86, 128, 256)
    ]
    ok = [p["usd_per_hour"] for p in costs if p["fits"] and p["tokens_per_s_per_user"] >= 20]
    assert best["usd_per_hour"] <= min(ok) and best["fits"] and best["tokens_per_s_per_user"] >= 20
    cheaper = rent.cheapest_fleet(256, 20, "Llama 3 8B", prices={"H100 SXM": 1.0})  # a price drop
    assert cheaper["accelerator"] == "H100 SXM" and cheaper["usd_per_hour"] < best["usd_per_hour"]
    assert math.isclose(cheaper["usd_per_hour"], cheaper["n_gpus"] * 1.0)


def test_fleet_refuses_bad_plans_by_name():
    with pytest.raises(ValueError, match="A100 80GB SXM has no fp8 peak"):
        rent.fleet("A100 80GB SXM", 1, "fp8", 8, 8)
    with pytest.raises(ValueError, match="gpus_per_replica must be one of"):
        rent.fleet("H100 SXM", 3, "bf16", 8, 8)
    with pytest.raises(ValueError, match="no plan serves"):
        rent.cheapest_fleet(10, 10_000)


def test_the_grader_expr_scope_has_the_planner_and_the_fleet():
    check = spec.Check(
        name="x",
        kind="seconds",
        answer="x",
        expr="layout.evaluate('Llama 3 8B', layout.Cluster('H100 SXM', 8), layout.Layout(tp=8), 4096, 8).step_s"
        " + 0 * rent.fleet('H100 SXM', 1, 'bf16', 1, 1)['step_s'] + 0 * serving.kv_block_bytes(1)",
    )
    assert spec.expected_value(check) > 0
