"""hwlib.dtypes is the one table of number-format names: memory, specs, formats and the page's
calculator accept exactly the same names and reject an unknown one with the same message."""

import re

import pytest

from hwlib import dtypes, formats, memory, specs
from hwlib.web import widgets

H100 = specs.get("H100 SXM")
SPELLINGS = sorted(set(dtypes.ACCEPTED) | set(dtypes.ALIASES))


def _sheet_rate(name):
    """The spec sheet's answer: a rate, or None when the part has none in that (known) precision."""
    try:
        return H100.peak_flops(name)
    except ValueError as exc:
        if "has no" in str(exc):
            return None
        raise


@pytest.mark.parametrize("spelling", SPELLINGS + ["BF16", "Float8_E4M3FN", "fp8-e5m2", " e2m1 "])
def test_every_spelling_is_accepted_everywhere(spelling):
    n = dtypes.name(spelling)
    fmt = dtypes.format_name(spelling)
    assert memory.dtype_name(spelling) == n
    assert memory.bytes_per_value(spelling) == dtypes.STORAGE_BYTES[n]
    assert formats.canonical(spelling) == fmt
    assert formats.info(spelling).storage_bytes == memory.bytes_per_value(spelling)
    rate = _sheet_rate(spelling)
    assert (rate is None) == (dtypes.rate(spelling) not in H100.precisions())
    if rate is not None:
        assert rate == H100.flops[dtypes.rate(spelling)]


def test_the_issue_example_agrees():
    """memory.bytes_per_value("e4m3") was 1 while peak_flops("e4m3") raised: both know it now."""
    assert memory.bytes_per_value("e4m3") == 1.0
    assert H100.peak_flops("e4m3") == H100.peak_flops("fp8") == H100.peak_flops("fp8_e5m2")
    assert H100.peak_flops("float32") == H100.peak_flops("fp32")


def test_sizes_and_rates_cover_every_name():
    assert set(dtypes.STORAGE_BYTES) == set(dtypes.ACCEPTED)
    assert set(dtypes.RATE) == set(dtypes.FORMATS) | set(dtypes.EXTRA)
    assert set(dtypes.ALIASES.values()) <= set(dtypes.ACCEPTED)
    assert set(specs.PRECISIONS) <= set(dtypes.RATE.values())
    assert formats.names() == list(dtypes.FORMATS)
    for short, full in dtypes.SHORT.items():
        assert dtypes.STORAGE_BYTES[short] == dtypes.STORAGE_BYTES[full]
        assert dtypes.rate(short) == short  # the sheet names its FP8/FP4 rates by the short name


def test_calculator_offers_only_known_dtypes():
    assert widgets.DTYPES == dtypes.CALCULATOR_DTYPES
    assert all(dtypes.name(d) == d for d in widgets.DTYPES)


def _message(call, name):
    with pytest.raises(ValueError) as info:
        call(name)
    return str(info.value)


@pytest.mark.parametrize("bad", ["fp7", "float8", "e3m4", "", None, 3])
def test_unknown_names_are_rejected_with_one_message(bad):
    messages = {
        "dtype": _message(memory.bytes_per_value, bad),
        "precision": _message(H100.peak_flops, bad),
        "format": _message(formats.info, bad),
    }
    same = {re.sub(rf"^unknown {kind} ", "unknown ", msg) for kind, msg in messages.items()}
    assert len(same) == 1, messages
    (msg,) = same
    assert f"unknown {bad!r}" in msg and "Accepted: " + ", ".join(dtypes.ACCEPTED) in msg
