"""Energy: what an operation and a byte moved cost in joules, per token, and per training run.

Data (with a source per number) in ``hwlib/data/energy.yaml``: Horowitz's ISSCC 2014 table for 45 nm
(a 32-bit float multiply 3.7 pJ, a 64-bit read of an 8 KB SRAM 10 pJ, of DRAM 1.3-2.6 nJ) and
O'Connor et al. (MICRO 2017) for HBM2 (about 3.9 pJ/bit) and GDDR5 (about 14 pJ/bit). Chapter 4
("What a byte costs in energy") and chapter 9 ("Energy per token and the electricity bill").
SI units: joules, watts, seconds, bytes; ``kwh`` converts for printing (1 kWh = 3.6e6 J).

>>> round(per_word("dram_low") / get("fp32_mult"))   # a 32-bit DRAM read vs a 32-bit float multiply
176
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

from . import _check, sourced

FORMULAS = {
    "joules_per_token": "E = P / r",
    "decode_joules_per_token": "E = P / r, r = B·β / (W + B·KV)",
    "hbm_joules_per_token": "E_HBM = (W + B·KV) · 8 bit · e_bit / B",
    "kwh": "E / 3.6e6 J/kWh",
}
"""The formula each function of this module evaluates, as the calculators print it (the one copy)."""

DATA_PATH = Path(__file__).with_name("data") / "energy.yaml"
J_PER_KWH = 3.6e6


@dataclass(frozen=True)
class Entry:
    """One row of the energy table: joules per operation, or per access of `bits` bits."""

    key: str
    label: str
    kind: str  # "compute" or "memory"
    bits: int
    joules: float
    source: str
    confidence: str
    tier: str = ""  # memory rows: on-chip, on-package, off-package

    @property
    def joules_per_byte(self) -> float:
        """Memory rows: joules / (bits / 8). Compute rows: joules per byte of one operand."""
        return self.joules / (self.bits / 8.0)


_number = sourced.number  # the {value, source, confidence} checker of every data file


@functools.lru_cache(maxsize=1)
def _load() -> dict:
    raw = yaml.safe_load(DATA_PATH.read_text())
    sources = raw["sources"]
    entries = {}
    for kind, section in (("compute", "operations"), ("memory", "memory")):
        for key, row in raw[section].items():
            value, source, conf = _number(f"{section}.{key}", row["value"], sources)
            entries[key] = Entry(key, row["label"], kind, int(row["bits"]), value, source, conf, row.get("tier", ""))
    facility = {k: _number(f"facility.{k}", v["value"], sources) for k, v in raw["facility"].items()}
    published = {
        run: {k: _number(f"published.{run}.{k}", v, sources)[0] for k, v in fields.items()}
        for run, fields in raw["published"].items()
    }
    return {"entries": entries, "facility": facility, "published": published, "sources": sources}


def names() -> list[str]:
    """Keys of the energy table (operations first, then memory accesses, near to far)."""
    return list(_load()["entries"])


def entry(key: str) -> Entry:
    """One row by key ("fp32_mult", "hbm2", ...); unknown keys -> KeyError listing the accepted."""
    key = _check.choice("energy entry", key, names(), error=KeyError)
    return _load()["entries"][key]


def get(key: str) -> float:
    """Joules per operation (compute rows) or per access of the row's `bits` (memory rows)."""
    return entry(key).joules


def per_byte(key: str) -> float:
    """Joules per byte moved: access energy / (bits / 8). HBM2 3.9 pJ/bit -> 31.2 pJ/byte."""
    return entry(key).joules_per_byte


def per_word(key: str, bits: int = 32) -> float:
    """Joules to move one `bits`-bit word: per_byte × bits / 8 (a 32-bit DRAM read at 1.3 nJ per
    64 bits costs 650 pJ, 176 times a 32-bit float multiply)."""
    b = _check.integer("bits", bits)
    return per_byte(key) * b / 8.0


def table() -> list[dict]:
    """Every row as a dict (label, kind, tier, bits, joules, joules per 32-bit word, source,
    confidence), for the chapter's table and figure."""
    rows = []
    for e in _load()["entries"].values():
        word = e.joules if e.kind == "compute" else per_word(e.key, 32)
        rows.append(
            {
                "key": e.key,
                "label": e.label,
                "kind": e.kind,
                "tier": e.tier,
                "bits": e.bits,
                "joules": e.joules,
                "joules_per_32bit": word,
                "source": e.source,
                "confidence": e.confidence,
            }
        )
    return rows


def facility(key: str) -> float:
    """A facility number: "pue_gpt3" (1.10), "pue_average" (1.56), "usd_per_kwh" (an assumption)."""
    table_ = _load()["facility"]
    key = _check.choice("facility value", key, list(table_), error=KeyError)
    return table_[key][0]


def published(run: str) -> dict:
    """Inputs and result of a published run ("gpt3": Patterson et al. 2021; "llama3_8b": model card)."""
    runs = _load()["published"]
    run = _check.choice("published run", run, list(runs), error=KeyError)
    return dict(runs[run])


def kernel_energy_j(flops, bytes_moved, joules_per_flop, joules_per_byte):
    """First-order energy of a kernel: E = F · e_flop + B · e_byte  [J] (F in FLOP, B in bytes).

    The data-movement term dominates whenever B · e_byte > F · e_flop, i.e. when the intensity
    F / B is below e_byte / e_flop: an "energy ridge point", like the roofline's (chapter 4).
    """
    f = _check.nonnegative("flops", flops)
    b = _check.nonnegative("bytes_moved", bytes_moved)
    return f * _check.nonnegative("joules_per_flop", joules_per_flop) + b * _check.nonnegative(
        "joules_per_byte", joules_per_byte
    )


def joules_per_token(power_w, tokens_per_s):
    """Energy per generated token at a steady rate: E = P / r  [J/token] (P in W, r in tokens/s)."""
    return _check.positive("power_w", power_w) / _check.positive("tokens_per_s", tokens_per_s)


def decode_joules_per_token(model_bytes, gpu, batch=1, kv_bytes=0.0, power_w=None):
    """Energy per token of bandwidth-bound decoding on `gpu` drawing `power_w` (default: its TDP):
    r = batch · β / (W + batch · KV) (``flops.decode_tokens_per_s_bound``), E = P / r  [J/token].

    TDP is the board's power limit, so this is an upper estimate for a busy GPU; the HBM reads alone
    cost ``hbm_joules_per_token`` of it. Source: chapter 8 (decode bound); TDP from hwlib.specs.
    """
    from . import flops, specs

    acc = specs.get(gpu) if isinstance(gpu, str) else gpu
    power = acc.tdp_watts if power_w is None else power_w
    if power is None:
        raise ValueError(f"{acc.name} has no TDP in the spec sheet; pass power_w (watts)")
    rate = flops.decode_tokens_per_s_bound(model_bytes, acc.bandwidth, batch=batch, kv_bytes=kv_bytes)
    return joules_per_token(power, rate)


def hbm_joules_per_token(bytes_per_step, batch=1, memory_key="hbm2"):
    """HBM read energy per token: bytes read per decode step × e_byte / batch  [J/token]
    (e_byte from the table, HBM2 31.2 pJ/byte; O'Connor et al. 2017)."""
    b = _check.positive("bytes_per_step", bytes_per_step)
    return b * per_byte(memory_key) / _check.positive("batch", batch)


def run_energy_j(n_devices, seconds, power_w, pue=1.0):
    """Energy of a run at the wall socket: E = G · t · P · PUE  [J] (G devices for t seconds at P
    watts each, PUE = facility power / IT power). Patterson et al. 2021, Table 4 method."""
    g = _check.positive("n_devices", n_devices)
    t = _check.positive("seconds", seconds)
    p = _check.positive("power_w", power_w)
    u = _check.positive("pue", pue)
    if min(np.atleast_1d(u)) < 1:
        raise ValueError(f"pue must be >= 1 (facility power / IT power); got {pue!r}")
    return g * t * p * u


def gpu_hours_energy_j(gpu_hours, power_w, pue=1.0):
    """E = GPU-hours × 3600 × P × PUE  [J] (the Llama model cards' method with P = TDP, PUE = 1)."""
    return run_energy_j(gpu_hours, 3600.0, power_w, pue)


def kwh(joules):
    """Joules -> kilowatt-hours (1 kWh = 3.6e6 J)."""
    return _check.nonnegative("joules", joules) / J_PER_KWH


def electricity_usd(joules, usd_per_kwh=None):
    """Electricity bill: kWh × price  [USD]; default price is the table's stated assumption."""
    price = facility("usd_per_kwh") if usd_per_kwh is None else _check.positive("usd_per_kwh", usd_per_kwh)
    return kwh(joules) * price


def training_run(total_flops, gpu, mfu, n_devices=1, pue=None, usd_per_kwh=None, power_w=None):
    """Time, GPU-hours, energy and electricity cost of a training run of `total_flops` (e.g. 6ND):
    t = C / (u · π · G), E = G · t · P · PUE, cost = E[kWh] × price. Defaults: P = TDP,
    PUE = the 2024 survey average, price = the stated assumption. Returns a dict in SI units."""
    from . import flops, specs

    acc = specs.get(gpu) if isinstance(gpu, str) else gpu
    precision = acc.default_precision()
    power = acc.tdp_watts if power_w is None else power_w
    if power is None:
        raise ValueError(f"{acc.name} has no TDP in the spec sheet; pass power_w (watts)")
    seconds = flops.training_time_s(total_flops, acc.peak_flops(precision), mfu, n_devices)
    pue_ = facility("pue_average") if pue is None else pue
    joules = run_energy_j(n_devices, seconds, power, pue_)
    return {
        "seconds": seconds,
        "gpu_hours": seconds * n_devices / 3600.0,
        "power_w": power,
        "pue": pue_,
        "energy_j": joules,
        "energy_kwh": kwh(joules),
        "electricity_usd": electricity_usd(joules, usd_per_kwh),
        "precision": precision,
    }
