"""hwlib.units: constants and formatting, GB vs GiB always labelled."""

import math

import numpy as np
import pytest

from hwlib import units


def test_constants():
    assert units.GB == 1e9 and units.GiB == 2**30
    assert units.KB == 1e3 and units.KiB == 1024 and units.MiB == 1024**2 and units.TiB == 1024**4
    assert units.GiB / units.GB == pytest.approx(1.073741824)
    assert units.PF_DAY == pytest.approx(8.64e19)
    assert units.YEAR == 365.25 * 86400


@pytest.mark.parametrize(
    "n, binary, expected",
    [
        (14e9, False, "14.0 GB"),
        (14e9, True, "13.0 GiB"),
        (2**30, True, "1.00 GiB"),
        (2**30, False, "1.07 GB"),
        (112e9, False, "112 GB"),
        (512, False, "512 B"),
        (0.5, False, "0.500 B"),
        (0, False, "0 B"),
        (999.96e3, False, "1.00 MB"),  # rounding moves up a prefix, never "1000 kB"
        (1023.99 * 2**20, True, "1.00 GiB"),
        (41943040, True, "40.0 MiB"),
        (3.5e15, False, "3.50 PB"),
        (np.float64(80e9), False, "80.0 GB"),
        (np.int64(4096), False, "4.10 kB"),
    ],
)
def test_format_bytes(n, binary, expected):
    assert units.format_bytes(n, binary=binary) == expected


def test_format_bytes_digits_and_errors():
    assert units.format_bytes(1.0737e9, digits=2) == "1.1 GB"
    assert units.format_bytes(14e9, binary=True, digits=4) == "13.04 GiB"
    for bad in (-1, float("nan"), float("inf"), "14 GB", None, [1, 2]):
        with pytest.raises(ValueError, match="n must be"):
            units.format_bytes(bad)
    with pytest.raises(ValueError, match="digits"):
        units.format_bytes(1e9, digits=0)


@pytest.mark.parametrize(
    "x, unit, expected",
    [
        (989.4e12, "FLOP/s", "989 TFLOP/s"),
        (3.35e12, "B/s", "3.35 TB/s"),
        (2.5e-7, "s", "250 ns"),
        (-0.004, "V", "-4.00 mV"),
        (1.0, "W", "1.00 W"),
        (0, "W", "0 W"),
        (7e24, "FLOP", "7.00 YFLOP"),
    ],
)
def test_format_si(x, unit, expected):
    assert units.format_si(x, unit) == expected


def test_rates_and_bandwidth():
    assert units.format_rate(989.4e12) == "989 TFLOP/s"
    assert units.format_rate(2.25e15) == "2.25 PFLOP/s"
    assert units.format_rate(1.2e9, unit="token/s") == "1.20 Gtoken/s"
    assert units.format_bandwidth(3.35e12) == "3.35 TB/s"
    assert units.format_bandwidth(900e9) == "900 GB/s"
    with pytest.raises(ValueError):
        units.format_bandwidth(-1.0)


def test_format_flops_is_a_count():
    assert units.format_flops(3.14e23) == "3.14e23 FLOP"
    assert units.format_flops(6 * 124e6 * 10e9) == "7.44e18 FLOP"
    assert units.format_flops(3.8e25, digits=2) == "3.8e25 FLOP"
    assert units.format_flops(0) == "0 FLOP"
    assert "/s" not in units.format_flops(1e15)
    with pytest.raises(ValueError):
        units.format_flops(math.nan)


@pytest.mark.parametrize(
    "s, expected",
    [
        (3e-9, "3.00 ns"),
        (2.5e-6, "2.50 µs"),
        (4.2e-3, "4.20 ms"),
        (1.5, "1.50 s"),
        (59.999, "1.00 min"),
        (600, "10.0 min"),
        (12.3 * 3600, "12.3 h"),
        (1.7 * 3600, "1.70 h"),
        (3 * 86400, "3.00 days"),
        (70 * 86400, "70.0 days"),
        (2 * 365.25 * 86400, "2.00 years"),
        (0, "0 s"),
    ],
)
def test_format_seconds(s, expected):
    assert units.format_seconds(s) == expected


def test_format_seconds_rejects_negative():
    with pytest.raises(ValueError, match="s must be a finite number >= 0"):
        units.format_seconds(-1)


@pytest.mark.parametrize(
    "x, expected",
    [
        (0.05, "$0.05"),
        (36, "$36.00"),
        (1234.5, "$1,234"),
        (123456, "$123,456"),
        (4.56e6, "$4.56 million"),
        (1.234e9, "$1.23 billion"),
        (-20, "-$20.00"),
    ],
)
def test_format_usd(x, expected):
    assert units.format_usd(x) == expected


def test_docstring_examples():
    import doctest

    result = doctest.testmod(units)
    assert result.attempted > 0 and result.failed == 0


def test_format_count_groups_digits_with_narrow_spaces():
    from hwlib.units import format_count

    assert format_count(16384) == "16\u202f384"
    assert format_count(1234567.4) == "1\u202f234\u202f567"
    assert format_count(999) == "999"
    with pytest.raises(ValueError, match="x must be"):
        format_count(float("nan"))


def test_format_sci_superscript_exponent():
    from hwlib.units import format_sci

    assert format_sci(3.96e14) == "3.96 × 10¹⁴"
    assert format_sci(6.1035e-5, 2) == "6.1 × 10⁻⁵"
    with pytest.raises(ValueError, match="digits"):
        format_sci(1.0, 0)


@pytest.mark.parametrize(
    "x, expected",
    [
        (530055, "530\u202f000"),
        (4946.7, "4\u202f950"),
        (63.24, "63.2"),
        (0.35123, "0.351"),
        (0, "0"),
        (3.77e9, "3.77 billion"),
        (1.01e14, "101 trillion"),
        (2.5e6, "2.50 million"),
        (-2e6, "-2.00 million"),
        (999.96e3, "1.00 million"),
        (3.77e15, "3.77 × 10¹⁵"),
        (1.2e-5, "1.20 × 10⁻⁵"),
        (1e23, "1.00 × 10²³"),
    ],
)
def test_format_number_for_prose_never_uses_e_notation(x, expected):
    assert units.format_number(x) == expected
    assert "e+" not in expected and "e-" not in expected


def test_format_number_digits_quantity_and_round_sig():
    assert units.format_number(530055, digits=2) == "530\u202f000"
    assert units.format_number(0.12345, digits=2) == "0.12"
    assert units.format_quantity(2.41e11, "FLOP") == "241 billion FLOP"
    assert units.format_quantity(530055, "tokens per second") == "530\u202f000 tokens per second"
    assert units.round_sig(530055) == 530000.0 and units.round_sig(0.012345, 2) == 0.012
    for bad in (math.nan, math.inf, "12", None):
        with pytest.raises(ValueError, match="x must be"):
            units.format_number(bad)


def test_long_durations_and_big_costs_read_like_numbers():
    assert units.format_seconds(3.77e15 * units.YEAR) == "3.77 × 10¹⁵ years"  # not 3770000000000000
    assert units.format_seconds(1.01e5 * units.YEAR) == "101\u202f000 years"
    assert units.format_seconds(999 * units.YEAR) == "999 years"
    assert units.format_usd(1.01e23) == "$1.01 × 10²³"  # not $1.01e+14 billion
    assert units.format_usd(1.01e14) == "$101 trillion"
    assert units.format_usd(999.9e9) == "$1.00 trillion"


def test_one_unit_per_column():
    assert units.format_in(50 * 2**20, "MB") == "52.4 MB" and units.format_in(52.4e6, "MB") == "52.4 MB"
    assert units.format_in(131072, "KiB") == "128 KiB" and units.format_in(131072 * 8192, "GiB") == "1.00 GiB"
    assert units.format_in(1.2e13, "GB") == "12\u202f000 GB"
    assert units.format_in(0, "GB") == "0 GB" and units.format_in(2.5e-3, "ms") == "2.50 ms"
    assert units.common_unit([1.07e9, 84.8e9]) == "GB" and units.common_unit([4e6, 52e6]) == "MB"
    assert units.common_unit([131072, 4 * 2**30], binary=True) == "KiB" and units.common_unit([0]) == "B"
    with pytest.raises(ValueError, match="unit must be one of"):
        units.format_in(1.0, "gigabytes")


@pytest.mark.parametrize(
    "text, context, expected",
    [
        ("15T", False, 15e12),
        ("7e9", False, 7e9),
        (" 350M ", False, 350e6),
        ("16_384", False, 16384),
        ("1,000", False, 1000),
        ("40%", False, 0.4),
        ("4k", False, 4000),
        ("4k", True, 4096),
        ("128K", True, 131072),
        ("7B", False, 7e9),
        ("2G", False, 2e9),
        ("1m", False, 1e6),
        (0.35, False, 0.35),
        (8, True, 8.0),
    ],
)
def test_parse_number_reads_what_people_type(text, context, expected):
    assert units.parse_number(text, context=context) == pytest.approx(expected)


@pytest.mark.parametrize("text", ["", "   ", "abc", "1e", ".", "inf", "nan", "15X", "%", "1.2.3", "0x10", None])
def test_parse_number_names_the_field(text):
    with pytest.raises(ValueError, match="^micro-batch b"):
        units.parse_number(text, "micro-batch b")


def test_format_pct():
    assert units.format_pct(0.4) == "40 %" and units.format_pct(0.01234, 2) == "1.23 %"
    with pytest.raises(ValueError, match="decimals"):
        units.format_pct(0.4, 1.5)
