"""hwlib.formats: layouts from ml_dtypes, rounding, overflow, NaN, bit decomposition."""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from hwlib import formats, memory, runs

FLOATS = ["fp32", "tf32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2", "fp4_e2m1"]
ALL = FLOATS + ["int8", "int4"]
any32 = st.floats(allow_nan=False, width=32)  # includes ±inf and the fp32 extremes
finite32 = st.floats(allow_nan=False, allow_infinity=False, width=32)


@pytest.mark.parametrize(
    "name, bits, e, m, mx, min_normal, min_sub, eps",
    [
        ("fp32", 32, 8, 23, 3.4028235e38, 2.0**-126, 2.0**-149, 2.0**-23),
        ("tf32", 19, 8, 10, (2 - 2.0**-10) * 2.0**127, 2.0**-126, 2.0**-136, 2.0**-10),
        ("fp16", 16, 5, 10, 65504, 2.0**-14, 2.0**-24, 2.0**-10),
        ("bf16", 16, 8, 7, 3.3895314e38, 2.0**-126, 2.0**-133, 2.0**-7),
        ("fp8_e4m3", 8, 4, 3, 448, 2.0**-6, 2.0**-9, 0.125),
        ("fp8_e5m2", 8, 5, 2, 57344, 2.0**-14, 2.0**-16, 0.25),
        ("fp4_e2m1", 4, 2, 1, 6, 1.0, 0.5, 0.5),
    ],
)
def test_float_info_matches_facts(name, bits, e, m, mx, min_normal, min_sub, eps):
    f = formats.info(name)
    assert (f.bits, f.exponent_bits, f.mantissa_bits) == (bits, e, m)
    assert f.max == pytest.approx(mx, rel=1e-7) and f.min == -f.max
    assert f.min_normal == min_normal and f.min_subnormal == min_sub and f.eps == eps
    assert f.bias == 2 ** (e - 1) - 1


def test_special_values_and_ints():
    assert (formats.info("fp8_e4m3").has_inf, formats.info("fp8_e4m3").has_nan) == (False, True)
    assert (formats.info("fp8_e5m2").has_inf, formats.info("fp8_e5m2").has_nan) == (True, True)
    assert (formats.info("fp4").has_inf, formats.info("fp4").has_nan) == (False, False)
    i4, i8 = formats.info("int4"), formats.info("int8")
    assert (i4.min, i4.max, i4.bits) == (-8, 7, 4) and (i8.min, i8.max) == (-128, 127)
    assert formats.info("fp8") == formats.info("FP8_E4M3") == formats.info("float8_e4m3fn")


def test_storage_bytes_agree_with_memory():
    for name in ALL:
        assert formats.info(name).storage_bytes == memory.bytes_per_value(name)


def test_bad_names_list_accepted():
    for bad in ("fp7", "float8", None, 3):
        with pytest.raises(ValueError, match="Accepted: fp32, tf32, fp16, bf16, fp8_e4m3"):
            formats.info(bad)
    with pytest.raises(ValueError, match="format"):
        formats.quantize([1.0], "e3m4")
    with pytest.raises(ValueError, match="x must be numbers"):
        formats.quantize(["a"], "bf16")
    with pytest.raises(ValueError, match="scale"):
        formats.quantize([1.0], "fp8", scale=-1)
    with pytest.raises(ValueError, match="amax"):
        formats.quantize([1.0], "fp8", scale="max")


def test_known_values():
    q = formats.quantize
    assert q(1 + 2**-8, "bf16") == 1.0  # a tie, rounded to even
    assert q(1 + 2**-8 + 2**-20, "bf16") == 1 + 2**-7
    assert q(1 + 3 * 2**-8, "bf16") == 1 + 2**-6  # a tie, rounded up to even
    assert q(65504, "fp16") == 65504 and q(448, "fp8_e4m3") == 448
    assert q(70000, "fp16") == 65504  # saturated by default
    np.testing.assert_array_equal(q([0.25, 0.6, 1.25, 2.5, 3.5, 5.0, 7.0], "fp4"), [0, 0.5, 1, 2, 4, 4, 6])
    assert sorted(set(np.abs(formats.all_values("fp4_e2m1")))) == [0, 0.5, 1, 1.5, 2, 3, 4, 6]
    assert len(formats.all_values("fp8_e4m3")) == 253  # 256 codes - 2 NaN - duplicate zero
    assert q(0.1, "fp32").dtype == np.float32 and q(0.1, "fp32") == np.float32(0.1)
    assert q(1 + 2**-11, "tf32") == 1.0 and q(1 + 3 * 2**-11, "tf32") == 1 + 2**-9  # ties to even
    assert q(1 + 2**-11 + 2**-20, "tf32") == 1 + 2**-10
    np.testing.assert_array_equal(q([2.5, -0.5, 3.5, 200], "int8"), [2, -0, 4, 127])


def test_overflow_raw_vs_saturated():
    q = formats.quantize
    raw = q([464, 480, 1e6], "fp8_e4m3", saturate=False)
    assert raw[0] == 448 and np.isnan(raw[1:]).all()  # e4m3fn: overflow -> NaN
    assert np.isinf(q(61440, "fp8_e5m2", saturate=False))  # e5m2 -> inf
    assert q(61440, "fp8_e5m2") == 57344
    assert np.isinf(q(1e5, "fp16", saturate=False))
    assert q(100, "fp4", saturate=False) == 6  # fp4 saturates by itself
    np.testing.assert_array_equal(q([8, -9], "int4", saturate=False), [-8, 7])  # int4 wraps
    np.testing.assert_array_equal(q([8, -9], "int4"), [7, -8])
    np.testing.assert_array_equal(q([200, -200], "int8", saturate=False), [-56, 56])
    assert q(np.inf, "fp8_e4m3") == 448 and q(np.inf, "bf16") == np.inf


def test_nan_handling():
    for name in ["fp32", "tf32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2"]:
        assert np.isnan(formats.quantize([np.nan], name)).all()
    for name in ["fp4", "int8", "int4"]:
        with pytest.raises(ValueError, match="NaN"):
            formats.quantize([1.0, np.nan], name)
    assert formats.quantize(np.nan, "fp4", saturate=False) == 0  # raw ml_dtypes: NaN -> -0
    with pytest.raises(ValueError, match="inf"):
        formats.quantize(np.inf, "int8", saturate=False)
    assert np.isnan(formats.relative_error([np.nan], "bf16")).all()


def test_amax_scaling():
    x = np.array([1e-3, -2.5e-3, 4e-3])
    s = formats.amax_scale(x, "fp8_e4m3")
    assert s == pytest.approx(4e-3 / 448)
    scaled = formats.quantize(x, "fp8_e4m3", scale="amax")
    assert scaled.dtype == np.float64 and scaled[2] == pytest.approx(4e-3)
    assert formats.relative_error(x, "fp8", scale="amax").max() < 2**-4 + 1e-12
    assert formats.relative_error(1e-3, "fp8").max() > 0.2  # unscaled: subnormal, coarse
    assert formats.amax_scale([0.0, 0.0], "fp8") == 1.0
    big = formats.quantize([1e5, -3e5], "fp8_e4m3", scale="amax", saturate=False)
    assert np.isfinite(big).all() and big[1] == pytest.approx(-3e5)


def test_relative_error():
    assert formats.relative_error(0.1, "bf16") == pytest.approx(abs(0.10009765625 - 0.1) / 0.1)
    err = formats.relative_error([0.0, 1e-50], "bf16")
    assert err[0] == 0 and err[1] == 1.0  # 1e-50 underflows to 0


@pytest.mark.parametrize(
    "value, name, bits, biased, unbiased, kind",
    [
        (1.5, "fp8_e4m3", "0 0111 100", 7, 0, "normal"),
        (448, "fp8", "0 1111 110", 15, 8, "normal"),
        (2.0**-9, "fp8_e4m3", "0 0000 001", 0, -6, "subnormal"),
        (57344, "fp8_e5m2", "0 11110 11", 30, 15, "normal"),
        (-6, "fp4", "1 11 1", 3, 2, "normal"),
        (0.5, "fp4", "0 00 1", 0, 0, "subnormal"),
        (1.0, "bf16", "0 01111111 0000000", 127, 0, "normal"),
        (-2.0, "fp16", "1 10000 0000000000", 16, 1, "normal"),
        (1.0, "tf32", "0 01111111 0000000000", 127, 0, "normal"),
        (0.0, "fp32", "0 00000000 " + "0" * 23, 0, -126, "zero"),
    ],
)
def test_decompose_known(value, name, bits, biased, unbiased, kind):
    d = formats.decompose(value, name)
    assert (d.bits, d.biased_exponent, d.unbiased_exponent, d.kind) == (bits, biased, unbiased, kind)
    assert d.represented == float(formats.quantize(value, name))


def test_decompose_specials_and_ints():
    d = formats.decompose(0.1, "bf16")
    assert d.represented == 0.10009765625 and d.error == pytest.approx(0.10009765625 - 0.1)
    assert formats.decompose(np.nan, "fp8").bits == "0 1111 111"
    assert formats.decompose(1e6, "fp8_e5m2", saturate=False).kind == "inf"
    assert formats.decompose(1e6, "fp8_e5m2").represented == 57344
    i = formats.decompose(-3, "int4")
    assert (i.bits, i.sign, i.kind, i.represented) == ("1101", 1, "integer", -3)
    assert formats.decompose(-100, "int8").bits == format(256 - 100, "08b")
    with pytest.raises(ValueError, match="single real number"):
        formats.decompose([1.0, 2.0], "bf16")


@pytest.mark.parametrize("name", FLOATS)
def test_decompose_every_code_round_trips(name):
    """For every finite value of the small formats (and a sample of the big ones), the sign,
    exponent and mantissa fields rebuild exactly the value ml_dtypes stores."""
    values = (
        formats.all_values(name)
        if formats.info(name).bits <= 8
        else np.random.default_rng(0).standard_normal(200) * 10.0 ** np.arange(-20, 20, 0.2)
    )
    f = formats.info(name)
    for v in values:
        d = formats.decompose(float(v), name)
        bits = d.bits.replace(" ", "")
        assert len(bits) == f.bits
        if d.kind in ("normal", "subnormal"):
            lead = 1 if d.kind == "normal" else 0
            rebuilt = (-1) ** d.sign * 2.0**d.unbiased_exponent * (lead + int(d.mantissa_bits, 2) / 2**f.mantissa_bits)
            assert rebuilt == d.represented


@settings(max_examples=200, deadline=None)
@given(xs=st.lists(any32, min_size=1, max_size=20), name=st.sampled_from(ALL))
def test_quantize_idempotent(xs, name):
    once = formats.quantize(xs, name)
    np.testing.assert_array_equal(formats.quantize(once, name), once)


@settings(max_examples=100, deadline=None)
@given(
    xs=st.lists(st.floats(-1e4, 1e4, allow_nan=False), min_size=1, max_size=20),
    name=st.sampled_from(["fp8_e4m3", "fp8_e5m2", "fp4_e2m1", "int4"]),
    scale=st.floats(1e-3, 1e3),
)
def test_quantize_idempotent_with_scale(xs, name, scale):
    once = formats.quantize(xs, name, scale=scale)
    np.testing.assert_allclose(formats.quantize(once, name, scale=scale), once, rtol=1e-12)


@settings(max_examples=200, deadline=None)
@given(xs=st.lists(finite32, min_size=2, max_size=20), name=st.sampled_from(ALL))
def test_quantize_monotone(xs, name):
    xs = np.sort(np.asarray(xs, dtype=np.float32))
    assert (np.diff(formats.quantize(xs, name)) >= 0).all()


@settings(max_examples=200, deadline=None)
@given(x=st.floats(0.02, 400), name=st.sampled_from(["fp16", "bf16", "tf32", "fp8_e4m3"]))
def test_rounding_error_within_half_eps(x, name):
    """Round to nearest in the normal range: relative error <= 2**-(m+1) = eps / 2."""
    assert formats.relative_error(np.float32(x), name) <= formats.info(name).eps / 2


def test_table():
    rows = formats.table()
    assert [r["name"] for r in rows] == formats.names()
    by = {r["name"]: r for r in rows}
    assert by["fp8_e4m3"]["max"] == 448 and by["tf32"]["bits"] == 19 and by["tf32"]["storage_bytes"] == 4
    assert all(r["typical_use"] for r in rows)


def test_docstring_examples():
    import doctest

    result = doctest.testmod(formats)
    assert result.attempted > 0 and result.failed == 0


def test_the_fnuz_fp8_variants_come_from_ml_dtypes():
    e4 = formats.info("fp8_e4m3fnuz")
    assert (e4.max, e4.bias, e4.has_inf, e4.exponent_bits, e4.mantissa_bits) == (240.0, 8, False, 4, 3)
    e5 = formats.info("e5m2fnuz")
    assert (e5.max, e5.bias, e5.has_inf) == (57344.0, 16, False)
    assert float(formats.quantize(300.0, "fp8_e4m3fnuz")) == 240.0  # saturates at its own max
    assert formats.decompose(1.0, "fp8_e4m3fnuz").bits == "0 1000 000"  # bias 8, not 7
    assert "fp8_e4m3fnuz" not in formats.names()  # the book's table is unchanged
    assert "fp8_e4m3fnuz" in formats.names(variants=True)


def test_e4m3_overflow_raw_is_nan_saturating_is_448():
    assert math.isnan(float(formats.quantize([70000.0], "fp8_e4m3", saturate=False)[0]))
    assert float(formats.quantize([70000.0], "fp8_e4m3")[0]) == 448.0
    assert float(formats.quantize([-70000.0], "fp8_e4m3")[0]) == -448.0


def test_bf16_conversion_is_round_to_nearest_even_not_a_cut():
    x = np.array([1.0 + 2**-8 + 2**-12], np.float32)  # above the halfway point of two BF16 neighbours
    assert float(formats.quantize(x, "bf16")[0]) == 1.0 + 2**-7  # a cut would give 1.0


def test_a_14_bit_accumulator_drifts_and_promotion_every_128_fixes_it():
    """The model chapter 5 draws for DeepSeek-V3's recipe: a running sum kept to the recipe's
    accumulator bits, straight through and promoted to a wide sum every promotion interval."""
    recipe = runs.get("deepseek_v3")["fp8_recipe"]
    bits, every = recipe["accumulator_bits"], recipe["promotion_interval"]

    def rnd(x):
        m, e = math.frexp(x)
        return math.ldexp(round(math.ldexp(m, bits)), e - bits)

    prods = np.abs(np.random.default_rng(0).standard_normal(8192)).tolist()
    exact = math.fsum(prods)
    part = total = straight = 0.0
    for i, p in enumerate(prods, 1):
        straight = rnd(straight + p)
        part = rnd(part + p)
        if i % every == 0:
            total, part = total + part, 0.0
    promoted = total + part
    assert abs(straight - exact) / exact > 1e-3  # 2^-14 per step, K = 8192: the sum drifts
    assert abs(promoted - exact) / exact < 1e-4
