"""One checker for the {value, source, confidence} records of every data file (hwlib.sourced)."""

from pathlib import Path

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


REJECTED_HOSTS = (
    "grokipedia",
    "lzwjava",
    "geektopia",
    "sysrqmts",
    "fpsbench",
    "cheap5v",
    "store.sourcecode",
    "archive-lib.hpctech",
    "upb-pc2",
    "gpu.blog",
    "hpc-notes",
    "firmwaresecurity",
    "soylentnews",
    "techbytes",
    "wiaix",
    "ada_l4_die",
)


def test_no_data_file_or_bibliography_entry_cites_a_rejected_secondary_source():
    """Secondary sources checked and found wrong or unsourced are not cited again."""
    root = Path(__file__).resolve().parents[2]
    texts = {p.name: p.read_text(encoding="utf-8") for p in (root / "hwlib" / "data").glob("*.yaml")}
    texts["references.bib"] = (root / "references.bib").read_text(encoding="utf-8")
    hits = [(name, host) for name, text in texts.items() for host in REJECTED_HOSTS if host in text]
    assert hits == []
