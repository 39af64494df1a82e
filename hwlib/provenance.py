"""Where a number came from, in words: the labels every figure and table puts on measured data.

A record is *live* (measured in this session), *recorded* (a stored run of `hwlib.bench`: device and
date), *published* (someone else's measurement, with its source) or *spec* (the vendor's sheet,
`hwlib.specs`). Never label a CPU or simulated result as a GPU one: the label names the device the
record says produced it. A leaf module (no hwlib imports), shared by `hwlib.plot` and
`hwlib.bench.recorded`.
"""

from __future__ import annotations

RUN_SCHEMA = "hwlib.bench.run"
"""The ``schema`` field of a saved run of `hwlib.bench` (see `hwlib.bench.recorded`)."""

KINDS = ("live", "recorded", "spec", "published")


def source_label(kind: str, device: str, date: str | None = None) -> str:
    """'live on <device>', 'recorded on <device>, <date>' or 'spec sheet: <device>'."""
    labels = {
        "live": f"live on {device}",
        "spec": f"spec sheet: {device}",
        "recorded": f"recorded on {device}, {date}" if date else f"recorded on {device}",
        "published": f"published (not ours): {device}",
    }
    if kind in labels:
        return labels[kind]
    raise ValueError(f"kind must be 'live', 'recorded', 'spec' or 'published'; got {kind!r}")


def label(rec: dict) -> str:
    """'live on <device>' / 'recorded on <device>, <date>' / 'published (not ours): <device>',
    for a record or a whole run (a saved run is always 'recorded')."""
    device = rec.get("device", {})
    name = device.get("name", "?") if isinstance(device, dict) else str(device)
    kind = "recorded" if rec.get("schema") == RUN_SCHEMA else rec.get("source", "live")
    return source_label(kind, name, str(rec.get("date", ""))[:10] or None)
