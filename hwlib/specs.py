"""The accelerator spec sheet: memory, bandwidth and dense peak FLOP/s per precision.

The numbers live in ``hwlib/data/specs.yaml``, one ``{value, source, confidence}`` record per
number, in SI base units (bytes, bytes/s, FLOP/s, W). Two conventions hold for every part:

* ``memory_bytes`` is **binary**, the capacity the part has: an "80 GB" H100 has 80 GiB =
  85,899,345,920 B of HBM (nvidia-smi shows 81,559 MiB of it; the driver keeps the rest). Vendors'
  "GB" for HBM and GDDR means GiB; bandwidths and FLOP/s stay decimal (1 TB/s = 1e12 B/s).
* ``interconnect_bandwidth`` is **per direction**: NVLink 4's "900 GB/s" adds both directions,
  so the sheet stores 450e9 B/s, what a ring all-reduce can use (`hwlib.interconnect`).

Tensor-core figures are **dense**: vendors often print 2:4-sparse figures, twice the dense rate,
and those were halved (chapter 3, the spec table; chapter 10, pitfall "peak vs attainable").

>>> gpu = get("h100")
>>> gpu.name, gpu.bandwidth, gpu.memory_bytes / 2**30      # 80 GiB of HBM3
('H100 SXM', 3350000000000.0, 80.0)
>>> round(gpu.ridge_point("bf16"))   # 989.4e12 FLOP/s / 3.35e12 B/s
295
"""

from __future__ import annotations

import builtins
import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import yaml

from . import _check, dtypes, roofline, sourced

PRECISIONS = ("fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4", "int4")
"""The precisions the sheet has tensor-core rates for, in display order. `Accelerator.peak_flops`
accepts every format name of `hwlib.dtypes` and maps it to one of these ("fp8_e5m2" -> "fp8")."""

FORMULAS = {
    "Accelerator.peak_flops": "π (spec sheet, dense)",
}
"""What the calculators print beside a number read from this sheet (the one copy). The ridge point
is `roofline.ridge_point`'s, with its formula there: `Accelerator.ridge_point` calls it."""


_NUMBER_FIELDS = (
    "memory_bytes",
    "ecc_memory_bytes",
    "bandwidth",
    "l2_bytes",
    "compute_units",
    "tdp_watts",
    "interconnect_bandwidth",
    "price_per_hour_usd",
    "release_year",
    "gpu_memory_fraction",
)
_INTEGER_FIELDS = ("compute_units", "release_year")
_TEXT_FIELDS = ("vendor", "kind", "notes", "compute_unit_kind", "interconnect")
_KINDS = ("gpu", "tpu", "asic")
_VENDOR_PREFIXES = ("nvidia", "amd", "google", "tesla", "intel", "apple")
SHEET_PATH = Path(__file__).with_name("data") / "specs.yaml"
"""The YAML file the sheet is read from (once per process)."""


@dataclass(frozen=True)
class Accelerator:
    """One row of the spec sheet. Quantities in SI base units; ``None`` where no source had it."""

    name: str
    vendor: str
    kind: str  # "gpu", "tpu" or "asic" (Gaudi)
    memory_bytes: float  # device memory (HBM/GDDR), bytes; binary capacity (80 GiB)
    bandwidth: float  # device-memory bandwidth, bytes/s
    ecc_memory_bytes: float | None = None  # what a GDDR part exposes with ECC on (clouds, Colab), bytes
    l2_bytes: float | None = None  # last on-chip cache before device memory, bytes
    compute_units: int | None = None  # SMs (NVIDIA), CUs (AMD), TensorCores (TPU)
    compute_unit_kind: str | None = None
    tdp_watts: float | None = None
    interconnect: str | None = None
    interconnect_bandwidth: float | None = None  # scale-up link per device, ONE direction, bytes/s
    price_per_hour_usd: float | None = None
    release_year: int | None = None
    gpu_memory_fraction: float | None = None  # unified memory (Apple): share the GPU may wire, 0-1
    aliases: tuple[str, ...] = ()
    notes: str = ""
    flops: Mapping[str, float] = field(default_factory=dict, compare=False, repr=False)
    sources: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)
    confidences: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)

    def visible_memory_bytes(self) -> float:
        """Device memory a program can see, bytes; the budget of `hwlib.memory.fits` starts here.
        With ECC on, as clouds and Colab run GDDR parts, a T4 or L4 keeps 1/16 of its memory for the
        check bits (ecc_memory_bytes); HBM parts keep ECC out of band and show memory_bytes; a unified
        memory shows the share the GPU may wire (`gpu_memory_bytes`). Source: specs.yaml."""
        seen = self.memory_bytes if self.ecc_memory_bytes is None else self.ecc_memory_bytes
        return min(seen, self.gpu_memory_bytes())

    def precisions(self) -> list[str]:
        """The precisions this part has a dense peak for, e.g. ``['fp32', 'bf16', 'int8']``."""
        return [p for p in PRECISIONS if p in self.flops]

    def default_precision(self) -> str:
        """The part's best 16-bit tensor format, the default for peaks and times: "bf16" where it has
        it, else "fp16" (T4), else its first precision."""
        have = self.precisions()
        return "bf16" if "bf16" in have else "fp16" if "fp16" in have else have[0]

    def peak_flops(self, precision: str) -> float:
        """Dense peak FLOP/s (OPS/s for integers) in `precision`; ValueError if the part lacks it."""
        p = _precision(precision)
        if p not in self.flops:
            raise ValueError(
                f"precision {precision!r}: {self.name} has no {p} rate in the spec sheet; "
                f"it has {', '.join(self.precisions())}"
            )
        return self.flops[p]

    def gpu_memory_bytes(self) -> float:
        """Memory the accelerator's kernels may hold, bytes: ``memory_bytes × f``, where f is the
        share of a unified memory the GPU may wire (Apple's Metal recommendedMaxWorkingSetSize,
        about 0.75 on large Macs) and 1 for parts with their own HBM/GDDR. Source: specs.yaml."""
        return self.memory_bytes * (1.0 if self.gpu_memory_fraction is None else self.gpu_memory_fraction)

    def ridge_point(self, precision: str) -> float:
        """Machine balance of this part in `precision`, FLOP/byte: `roofline.ridge_point` (I* = π / β,
        chapter 4; chapter 6) of its dense peak and its memory bandwidth."""
        return roofline.ridge_point(self.peak_flops(precision), self.bandwidth)

    def source(self, field_name: str) -> str:
        """Where a number came from. `field_name` is a field ("bandwidth") or a precision ("bf16")."""
        return self.sources[self._key(field_name)]

    def confidence(self, field_name: str) -> str:
        """ "high", "medium" or "low" for a field or a precision (see the header of specs.yaml)."""
        return self.confidences[self._key(field_name)]

    def _key(self, field_name: str) -> str:
        key = str(field_name).strip()
        if key.startswith("peak_flops"):
            key = key[len("peak_flops") :].lstrip(".:[]'\"").rstrip("]'\"")
        if key not in _NUMBER_FIELDS:
            try:
                key = "peak_flops." + _precision(key)
            except ValueError:
                pass
        if key not in self.sources:
            raise KeyError(
                f"field {field_name!r}: {self.name} has no sourced value for it; "
                f"fields with a source: {', '.join(self.sources)}"
            )
        return key


def _precision(precision) -> str:
    """The sheet's precision for any number-format name (`hwlib.dtypes`): "fp8_e5m2" -> "fp8"."""
    p = dtypes.rate(precision, "precision")
    if p not in PRECISIONS:
        raise ValueError(f"precision {precision!r}: the spec sheet has no {p} rates; it has {', '.join(PRECISIONS)}")
    return p


_number = sourced.number  # the {value, source, confidence} checker of every data file


def _accelerator(name: str, raw: dict, sources: Mapping[str, str]) -> Accelerator:
    allowed = set(_NUMBER_FIELDS) | set(_TEXT_FIELDS) | {"aliases", "peak_flops"}
    unknown = set(raw) - allowed
    if unknown:
        raise ValueError(f"{name}: unknown field(s) {sorted(unknown)}; accepted: {sorted(allowed)}")
    for required in ("vendor", "kind", "memory_bytes", "bandwidth", "peak_flops"):
        if required not in raw:
            raise ValueError(f"{name}: missing required field {required!r}")
    if raw["kind"] not in _KINDS:
        raise ValueError(f"{name}.kind must be one of {_KINDS}; got {raw['kind']!r}")
    values: dict[str, Any] = {}
    srcs, confs, flops = {}, {}, {}
    for key in _NUMBER_FIELDS:
        if key in raw:
            values[key], srcs[key], confs[key] = _number(
                f"{name}.{key}", raw[key], sources, integer=key in _INTEGER_FIELDS
            )
    if values.get("gpu_memory_fraction", 0.0) > 1.0:
        raise ValueError(f"{name}.gpu_memory_fraction must be a share in (0, 1]; got {values['gpu_memory_fraction']}")
    if not isinstance(raw["peak_flops"], dict) or not raw["peak_flops"]:
        raise ValueError(f"{name}.peak_flops must be a non-empty mapping precision -> record")
    for prec, record in raw["peak_flops"].items():
        if prec not in PRECISIONS:
            raise ValueError(f"{name}.peak_flops: unknown precision {prec!r}; accepted: {PRECISIONS}")
        key = f"peak_flops.{prec}"
        flops[prec], srcs[key], confs[key] = _number(f"{name}.{key}", record, sources)
    aliases = raw.get("aliases", [])
    if not isinstance(aliases, list) or not builtins.all(isinstance(a, (str, int)) for a in aliases):
        raise ValueError(f"{name}.aliases must be a list of names; got {aliases!r}")
    return Accelerator(
        name=name,
        **values,
        **_texts(raw),
        aliases=tuple(str(a) for a in aliases),
        flops=MappingProxyType(flops),
        sources=MappingProxyType(srcs),
        confidences=MappingProxyType(confs),
    )


def _texts(raw: dict) -> dict[str, Any]:
    return {k: str(raw[k]) for k in _TEXT_FIELDS if k in raw}


def parse(raw: dict) -> dict[str, Accelerator]:
    """Validate a loaded spec sheet and build the Accelerators (every number positive, finite,
    sourced; no two names or aliases colliding). Raises ValueError naming the bad entry."""
    if not isinstance(raw, dict) or set(raw) != {"sources", "accelerators"}:
        raise ValueError("spec sheet must have exactly two top-level keys: sources, accelerators")
    sources = raw["sources"]
    if not isinstance(sources, dict) or not builtins.all(isinstance(v, str) and v.strip() for v in sources.values()):
        raise ValueError("`sources` must map ids to non-empty descriptions")
    table: dict[str, Accelerator] = {}
    owner: dict[str, str] = {}
    for name, entry in raw["accelerators"].items():
        acc = _accelerator(str(name), entry, sources)
        for label in (acc.name, *acc.aliases):
            key = _check.normalize(label)
            if key in owner and owner[key] != acc.name:
                raise ValueError(f"name or alias {label!r} of {acc.name} collides with {owner[key]}")
            owner[key] = acc.name
        table[acc.name] = acc
    return table


@functools.cache
def _sheet() -> dict[str, Accelerator]:
    text = SHEET_PATH.read_text(encoding="utf-8")
    return parse(yaml.safe_load(text))


@functools.cache
def _lookup() -> dict[str, str]:
    return {_check.normalize(label): acc.name for acc in _sheet().values() for label in (acc.name, *acc.aliases)}


def get(name: str) -> Accelerator:
    """The accelerator called `name`, ignoring case, spaces, dashes, underscores and a leading
    vendor word ("NVIDIA H100 80GB HBM3" works). Unknown names raise KeyError with close matches."""
    lookup = _lookup()
    key = _check.normalize(name) if isinstance(name, str) else ""
    for prefix in ("",) + _VENDOR_PREFIXES:
        if key.startswith(prefix) and key[len(prefix) :] in lookup:
            return _sheet()[lookup[key[len(prefix) :]]]
    hint = _check.did_you_mean(key, lookup)
    raise KeyError(
        f"unknown accelerator {name!r}{hint} Accepted: {', '.join(names())} "
        f"(case, spaces and dashes ignored; aliases such as 'h100', 'a100' work)"
    )


def match(device_name: str) -> Accelerator | None:
    """Like `get`, but None for an unknown device (for names reported by a driver or CuPy)."""
    try:
        return get(device_name)
    except KeyError:
        return None


def names() -> list[str]:
    """Canonical names of every accelerator in the sheet, in sheet order."""
    return list(_sheet())


def all() -> list[Accelerator]:  # noqa: A001 - the design names it specs.all()
    """Every Accelerator in the sheet, in sheet order."""
    return list(_sheet().values())


def table(names: list[str] | None = None, precision: str = "bf16") -> list[dict]:
    """One dict per accelerator for tables in the chapters: memory, bandwidth, dense peak and
    ridge point in `precision` (None where the part lacks that precision), power, link, year."""
    p = _precision(precision)
    accs = [get(n) for n in names] if names is not None else all()
    rows = []
    for acc in accs:
        peak = acc.flops.get(p)
        rows.append(
            {
                "name": acc.name,
                "vendor": acc.vendor,
                "kind": acc.kind,
                "precision": p,
                "memory_bytes": acc.memory_bytes,
                "bandwidth": acc.bandwidth,
                "peak_flops": peak,
                "ridge_point": None if peak is None else peak / acc.bandwidth,
                "tdp_watts": acc.tdp_watts,
                "interconnect_bandwidth": acc.interconnect_bandwidth,
                "release_year": acc.release_year,
            }
        )
    return rows
