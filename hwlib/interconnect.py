"""Interconnect tiers: how many bytes per second one device can send to another, per direction.

The bandwidth hierarchy of chapter 7 (scaling out), mirroring the memory hierarchy: NVLink (through an
NVSwitch) inside a node, PCIe between a GPU and its host, InfiniBand with RDMA between nodes.

* NVLink comes from the accelerator spec sheet (`hwlib.specs`, field ``interconnect_bandwidth``),
  which stores it per direction (vendors quote both directions added: H100 "900 GB/s" = 450e9 B/s
  each way; the sheet halved those figures once, in the data file).
* PCIe and InfiniBand come from ``data/links.yaml``, one sourced record per link, already per
  direction.

Every `Link.bandwidth` is bytes/s in ONE direction: the ``link_bandwidth`` that
`hwlib.parallel.ring_allreduce_time_s` expects (in a ring every device sends and receives at once).

>>> get("InfiniBand NDR").bandwidth      # 400 Gb/s = 50e9 bytes/s
50000000000.0
>>> nvlink("H100 SXM").bandwidth         # vendors' "900 GB/s" adds both ways: 450 GB/s each way
450000000000.0
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import yaml

from . import _check, sourced, specs

LINKS_PATH = Path(__file__).with_name("data") / "links.yaml"
"""The YAML table of host-bus and network links (sources inside)."""

_KINDS = ("host bus", "network")


@dataclass(frozen=True)
class Link:
    """One interconnect tier. `bandwidth` is bytes/s per direction for one device."""

    name: str
    kind: str  # "scale-up" (NVLink, from the spec sheet), "host bus" or "network"
    bandwidth: float  # bytes/s, one direction
    source: str
    confidence: str
    notes: str = ""


_record = sourced.number  # the {value, source, confidence} checker of every data file


def parse(raw: dict) -> dict[str, tuple[Link, tuple[str, ...]]]:
    """Validate a loaded links table: {name: (Link, aliases)}. Raises ValueError naming the bad entry."""
    if not isinstance(raw, dict) or set(raw) != {"sources", "links"}:
        raise ValueError("links table must have exactly two top-level keys: sources, links")
    sources = raw["sources"]
    table = {}
    for name, entry in raw["links"].items():
        if not isinstance(entry, dict) or entry.get("kind") not in _KINDS:
            raise ValueError(f"{name}.kind must be one of {_KINDS}; got {entry!r}")
        value, source, confidence = _record(f"{name}.bandwidth", entry.get("bandwidth"), sources)
        link = Link(str(name), entry["kind"], value, source, confidence, str(entry.get("notes", "")))
        table[str(name)] = (link, tuple(str(a) for a in entry.get("aliases", [])))
    return table


@functools.cache
def _table() -> dict[str, tuple[Link, tuple[str, ...]]]:
    return parse(yaml.safe_load(LINKS_PATH.read_text(encoding="utf-8")))


def names() -> list[str]:
    """Names of the host-bus and network links in the table (NVLink: see `nvlink`)."""
    return list(_table())


def nvlink(accelerator) -> Link:
    """The scale-up link of an accelerator from the spec sheet, per direction:
    B_link = interconnect_bandwidth  [bytes/s] (the sheet stores one direction; a vendor's
    both-directions figure is twice this).

    `accelerator` is a spec-sheet name ("H100 SXM") or an `Accelerator`. ValueError if the sheet has
    no interconnect figure for it (T4, L4 and RTX 4090 have no NVLink).
    """
    acc = specs.get(accelerator) if isinstance(accelerator, str) else accelerator
    bandwidth = getattr(acc, "interconnect_bandwidth", None)
    if bandwidth is None:
        raise ValueError(
            f"accelerator {acc.name!r} has no scale-up link in the spec sheet "
            f"(it talks to other GPUs over PCIe); use get('PCIe 4.0 x16') or similar"
        )
    return Link(
        f"{acc.interconnect} ({acc.name})",
        "scale-up",
        bandwidth,
        acc.source("interconnect_bandwidth"),
        acc.confidence("interconnect_bandwidth"),
        "spec-sheet figure, one direction (vendors quote twice this, both directions added)",
    )


def get(name: str) -> Link:
    """A link by name or alias ("PCIe 5.0 x16", "pcie4", "InfiniBand NDR", "ib"), ignoring case,
    spaces and dashes; an accelerator name from the spec sheet ("H100 SXM") gives its NVLink.
    Unknown names raise KeyError listing close matches and what is accepted."""
    lookup = {}
    for canonical, (_, aliases) in _table().items():
        for label in (canonical, *aliases):
            lookup[_check.normalize(label)] = canonical
    key = _check.normalize(name) if isinstance(name, str) else ""
    if key in lookup:
        return _table()[lookup[key]][0]
    acc = specs.match(name) if isinstance(name, str) else None
    if acc is not None:
        return nvlink(acc)
    hint = _check.did_you_mean(key, lookup)
    raise KeyError(
        f"unknown link {name!r}{hint} Accepted: {', '.join(names())}, "
        f"or an accelerator with NVLink in the spec sheet (e.g. 'H100 SXM')"
    )


def tiers(accelerator: str = "H100 SXM", host_bus: str = "PCIe 5.0 x16", network: str = "InfiniBand NDR") -> list[Link]:
    """The three tiers a GPU of a training cluster sees, fastest first: its NVLink, its host bus and
    the cluster network. Defaults describe a DGX H100-class node."""
    return sorted([nvlink(accelerator), get(host_bus), get(network)], key=lambda link: -link.bandwidth)
