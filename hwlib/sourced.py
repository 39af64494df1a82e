"""Sourced numbers: the ``{value, source, confidence}`` records of hwlib's data files, checked in one place.

Every number in ``hwlib/data/specs.yaml``, ``energy.yaml`` and ``links.yaml`` is written as
``{value: 3.35e+12, source: <key of the file's sources:>, confidence: high|medium|low}``; `number`
checks one record and returns ``(value, source text, confidence)``, raising ValueError that names the
record (``where``) and what is wrong. A leaf module: it imports nothing from hwlib.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

CONFIDENCES = ("high", "medium", "low")
"""How sure a number is (the header of specs.yaml says what each level means)."""


def number(where: str, record, sources: Mapping[str, str], integer: bool = False):
    """Check one ``{value, source, confidence}`` record; return (value, source text, confidence).

    value: a finite number > 0 (a whole number when `integer`); source: a key of `sources`;
    confidence: one of `CONFIDENCES`."""
    if not isinstance(record, dict) or set(record) != {"value", "source", "confidence"}:
        raise ValueError(f"{where} must be a mapping with exactly value, source, confidence; got {record!r}")
    value = record["value"]
    try:
        value = float(value) if not isinstance(value, bool) else math.nan
    except (TypeError, ValueError):
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{where}.value must be a finite number > 0; got {record['value']!r}")
    if integer and value != int(value):
        raise ValueError(f"{where}.value must be a whole number; got {record['value']!r}")
    if record["source"] not in sources:
        raise ValueError(f"{where}.source {record['source']!r} is not a key of `sources`; known: {', '.join(sources)}")
    if record["confidence"] not in CONFIDENCES:
        raise ValueError(f"{where}.confidence must be one of {', '.join(CONFIDENCES)}; got {record['confidence']!r}")
    return (int(value) if integer else value), sources[record["source"]], record["confidence"]
