"""One checker for the {value, source, confidence} records of every data file (hwlib.sourced)."""

import pytest

from hwlib import energy, interconnect, sourced, specs

SOURCES = {"paper": "Someone et al. 2024, https://example.org"}
GOOD = {"value": 3.35e12, "source": "paper", "confidence": "high"}


def test_every_loader_uses_the_one_checker():
    assert specs._number is energy._number is interconnect._record is sourced.number


def test_a_good_record_gives_value_source_text_and_confidence():
    assert sourced.number("x", GOOD, SOURCES) == (3.35e12, SOURCES["paper"], "high")
    assert sourced.number("x", dict(GOOD, value=132), SOURCES, integer=True) == (132, SOURCES["paper"], "high")


@pytest.mark.parametrize(
    "change, message",
    [
        ({"value": -1}, r"x\.value must be a finite number > 0; got -1"),
        ({"value": float("nan")}, r"x\.value must be a finite number > 0"),
        ({"value": True}, r"x\.value must be a finite number > 0; got True"),
        ({"value": "fast"}, r"x\.value must be a finite number > 0; got 'fast'"),
        ({"value": 1.5}, r"x\.value must be a whole number; got 1\.5"),
        ({"source": "blog"}, r"x\.source 'blog' is not a key of `sources`; known: paper"),
        ({"confidence": "sure"}, r"x\.confidence must be one of high, medium, low; got 'sure'"),
        ({"note": "extra"}, r"x must be a mapping with exactly value, source, confidence"),
    ],
)
def test_each_bad_field_is_named(change, message):
    with pytest.raises(ValueError, match=message):
        sourced.number("x", dict(GOOD, **change), SOURCES, integer=True)


def test_a_plain_number_is_not_a_record():
    with pytest.raises(ValueError, match="exactly value, source, confidence; got 3"):
        sourced.number("x", 3, SOURCES)
