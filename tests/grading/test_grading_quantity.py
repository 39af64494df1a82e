"""hwlib.grading.quantity: the answer grammar (numbers with units, GB vs GiB, refusals)."""

import math

import pytest
from hypothesis import given, strategies as st

from hwlib.grading import quantity as q

B, S = q.KINDS["bytes"][0], q.KINDS["seconds"][0]


@pytest.mark.parametrize(
    "text, kind, value",
    [
        ("2.6e9", "bytes", 2.6e9),
        ("2.6 GB", "bytes", 2.6e9),
        ("2.42 GiB", "bytes", 2.42 * 2**30),
        ("~0.65GB", "bytes", 0.65e9),
        ("650 MB", "bytes", 650e6),
        ("2.6 gigabytes", "bytes", 2.6e9),
        ("16 Gbit", "bytes", 2e9),
        ("7 kB", "bytes", 7e3),
        ("≈ 12 hours", "seconds", 43200.0),
        ("1.7 h", "seconds", 6120.0),
        ("about 90 min", "seconds", 5400.0),
        ("42 000 s", "seconds", 42000.0),
        ("2 ms", "seconds", 2e-3),
        ("3 days", "seconds", 259200.0),
        ("$36", "usd", 36.0),
        ("$1,200", "usd", 1200.0),
        ("36 USD", "usd", 36.0),
        ("36 dollars", "usd", 36.0),
        ("295 FLOP/byte", "flop_per_byte", 295.0),
        ("295 FLOP/B", "flop_per_byte", 295.0),
        ("3.35 TB/s", "bytes_per_s", 3.35e12),
        ("3.35 TB per second", "bytes_per_s", 3.35e12),
        ("989 TFLOPS", "flop_per_s", 989e12),
        ("989 TFLOP/s", "flop_per_s", 989e12),
        ("1.47e19 FLOPs", "flop", 1.47e19),
        ("1.47 × 10^19 FLOP", "flop", 1.47e19),
        ("1.47×10¹⁹ FLOP", "flop", 1.47e19),
        ("14.7 EFLOP", "flop", 14.7e18),
        ("48 tok/s", "tokens_per_s", 48.0),
        ("35%", "dimensionless", 0.35),
        ("16x", "dimensionless", 16.0),
        ("1.3 billion", "dimensionless", 1.3e9),
        ("12", "dimensionless", 12.0),
        (12, "dimensionless", 12.0),
        (2.6e9, "bytes", 2.6e9),
    ],
)
def test_accepted_answers(text, kind, value):
    assert q.to_si(text, kind) == pytest.approx(value, rel=1e-12)


def test_gb_and_gib_are_different_answers():
    gb, gib = q.to_si("2.6 GB", "bytes"), q.to_si("2.6 GiB", "bytes")
    assert gb == 2.6e9 and gib == 2.6 * 2**30
    assert gib / gb == pytest.approx(2**30 / 1e9)


def test_flops_capitalisation_separates_count_and_rate():
    assert q.parse("5 TFLOPs").dims == q.KINDS["flop"][0]
    assert q.parse("5 TFLOPS").dims == q.KINDS["flop_per_s"][0]
    with pytest.raises(q.QuantityError, match="rate in FLOP/s"):
        q.to_si("5 TFLOPS", "flop")


@pytest.mark.parametrize(
    "text, kind, message",
    [
        ("12 hours", "bytes", "is a time"),
        ("2.6 GB", "seconds", "is a size in bytes"),
        ("3.35 TB/s", "bytes", "bandwidth"),
        ("lots", "bytes", "does not start with a number"),
        ("2,6 GB", "bytes", "use a point for decimals"),
        ("2.6 gb", "bytes", "ambiguous"),
        ("12 parsecs", "seconds", "unknown unit 'parsecs'"),
        ("1 TB/s/s", "bytes_per_s", "cannot read the unit"),
        ("1e400 B", "bytes", "not a finite number"),
        ("$36 per hour", "usd", "expected nothing after the amount"),
    ],
)
def test_refused_with_a_message(text, kind, message):
    with pytest.raises(q.QuantityError, match=message):
        q.to_si(text, kind)


@pytest.mark.parametrize("bad", [None, True, [1, 2], {"a": 1}])
def test_non_quantities_are_refused_not_crashed(bad):
    with pytest.raises(q.QuantityError):
        q.parse(bad)


def test_unknown_kind_is_a_value_error_naming_the_kinds():
    with pytest.raises(ValueError, match="bytes, seconds"):
        q.kind_dims("furlongs")


@given(
    st.floats(min_value=1e-3, max_value=1e15, allow_nan=False),
    st.sampled_from([("kB", 1e3), ("MB", 1e6), ("GB", 1e9), ("GiB", 2**30), ("MiB", 2**20), ("B", 1)]),
)
def test_any_number_with_a_byte_unit_round_trips(x, unit):
    name, factor = unit
    assert q.to_si(f"{x!r} {name}", "bytes") == pytest.approx(x * factor, rel=1e-12)
    assert q.to_si(f"≈ {x!r}{name}", "bytes") == pytest.approx(x * factor, rel=1e-12)


@given(st.text(max_size=30))
def test_arbitrary_text_never_crashes(text):
    try:
        value = q.to_si(text, "bytes")
    except q.QuantityError:
        return
    assert math.isfinite(value)
