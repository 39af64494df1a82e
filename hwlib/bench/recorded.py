"""Recorded runs: every experiment's record from one device, saved as JSON, shown beside live results.

A book built on a CPU still shows real GPU curves - always labelled "recorded on <device>, <date>",
never passed off as live. File format (schema "hwlib.bench.run", version 1; see
hwlib/data/recorded/README.md):

    {"schema": "hwlib.bench.run", "schema_version": 1, "date": "<UTC ISO 8601>",
     "device": {...backend.device_info()...}, "backend": "cupy", "quick": false,
     "versions": {"python": ..., "numpy": ..., "cupy": ..., "cuda_runtime": ..., "hwlib": ...},
     "records": {"bandwidth": {...E1 record...}, "matmul": {...}, ...}}

`published()` reads hwlib/data/published_measurements.yaml: numbers quoted from public benchmarks
(not measured by this project), each with its source, for the book's gallery.
"""

from __future__ import annotations

import json
import os
import platform
from pathlib import Path

from hwlib import provenance
from hwlib.bench import _common, registry

SCHEMA = provenance.RUN_SCHEMA
SCHEMA_VERSION = 1
DATA_DIR = Path(__file__).resolve().parent.parent / "data"
RECORDED_DIR = DATA_DIR / "recorded"
PUBLISHED_PATH = DATA_DIR / "published_measurements.yaml"
_REQUIRED = ("schema", "schema_version", "date", "device", "backend", "records")


def versions(backend_name: str | None = None) -> dict:
    """Library versions that shaped the numbers."""
    import numpy as np

    import hwlib

    out = {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "hwlib": getattr(hwlib, "__version__", "?"),
        "platform": platform.platform(),
    }
    if backend_name == "cupy":
        import cupy

        out.update(
            cupy=cupy.__version__,
            cuda_runtime=int(cupy.cuda.runtime.runtimeGetVersion()),
            cuda_driver=int(cupy.cuda.runtime.driverGetVersion()),
        )
    return out


def make_run(records: dict, quick: bool = False) -> dict:
    """Wrap experiment records (name -> record) from one device into a run."""
    if not records:
        raise ValueError("records must hold at least one experiment record; got none")
    first = next(iter(records.values()))
    return {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "date": _common.now(),
        "device": first["device"],
        "backend": first["backend"],
        "quick": bool(quick),
        "versions": versions(first["backend"]),
        "records": dict(records),
    }


def validate(run, where: str = "run") -> dict:
    """Check a run's shape; ValueError naming `where` and what is wrong."""
    if not isinstance(run, dict):
        raise ValueError(f"{where}: a run must be a JSON object; got {type(run).__name__}")
    missing = [k for k in _REQUIRED if k not in run]
    if missing:
        raise ValueError(f"{where}: missing keys {missing}; a run needs {list(_REQUIRED)}")
    if run["schema"] != SCHEMA:
        raise ValueError(f"{where}: schema must be {SCHEMA!r}; got {run['schema']!r}")
    if not isinstance(run["schema_version"], int) or not 1 <= run["schema_version"] <= SCHEMA_VERSION:
        raise ValueError(f"{where}: schema_version must be 1..{SCHEMA_VERSION}; got {run['schema_version']!r}")
    if not isinstance(run["records"], dict) or not all(isinstance(r, dict) for r in run["records"].values()):
        raise ValueError(f"{where}: records must map experiment names to record objects")
    if not isinstance(run["device"], dict) or "name" not in run["device"]:
        raise ValueError(f"{where}: device must be an object with a name")
    return run


def save(run: dict, path) -> Path:
    """Write a run as JSON (validated first); returns the path."""
    validate(run)
    path = Path(path)
    if path.parent and not path.parent.exists():
        path.parent.mkdir(parents=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(run, indent=1, allow_nan=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def load(path) -> dict:
    """Read a run; every record is marked source="recorded" and carries the run's device and date."""
    path = Path(path)
    try:
        run = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON ({exc})") from None
    validate(run, str(path))
    for rec in run["records"].values():
        rec["source"] = "recorded"
        rec.setdefault("device", run["device"])
        rec.setdefault("date", run["date"])
    run["path"] = str(path)
    run["source"] = "recorded"
    return run


def available() -> list:
    """Paths of the recorded runs shipped with hwlib (hwlib/data/recorded/*.json), sorted."""
    return sorted(RECORDED_DIR.glob("*.json")) if RECORDED_DIR.is_dir() else []


def load_available() -> list:
    """Every shipped run, loaded."""
    return [load(p) for p in available()]


def records(runs, experiment: str) -> list:
    """The `experiment` record of each run that has it (runs from load / load_available)."""
    return [run["records"][experiment] for run in runs if experiment in run.get("records", {})]


def load_all(experiment: str) -> list:
    """The `experiment` records of every shipped run (an empty list until a GPU run is recorded)."""
    registry.check(experiment)  # KeyError naming the accepted experiments
    return records(load_available(), experiment)


label = provenance.label  # 'recorded on <device>, <date>' for a run or one of its records


def published() -> list:
    """Published measurements (not ours) with a source each; fraction of spec added where known."""
    import yaml

    from hwlib import specs

    data = yaml.safe_load(PUBLISHED_PATH.read_text(encoding="utf-8"))
    out = []
    for i, m in enumerate(data["measurements"]):
        missing = [k for k in ("device", "experiment", "quantity", "value", "source") if k not in m]
        if missing:
            raise ValueError(f"{PUBLISHED_PATH.name} entry {i} ({m.get('device')}): missing {missing}")
        for key in ("value", "spec_value"):
            if m.get(key) is not None and not isinstance(m[key], (int, float)):
                raise ValueError(
                    f"{PUBLISHED_PATH.name} entry {i} ({m['device']}): {key} must be a number "
                    f"(write 3.5e+12, YAML needs the exponent sign); got {m[key]!r}"
                )
        m = dict(m, published=True, source_kind="published")
        spec_value = m.get("spec_value")
        if spec_value is None and m.get("spec"):
            acc = specs.get(m["spec"])
            spec_value = acc.bandwidth if m["quantity"] == "bytes_per_s" else acc.peak_flops(m["precision"])
        m["spec_value"] = spec_value
        m["fraction_of_spec"] = m["value"] / spec_value if spec_value else None
        out.append(m)
    return out


def ok_records(experiment: str) -> list:
    """The `experiment` records of every shipped run that ran (status ok); [] when none are stored."""
    return [r for r in load_all(experiment) if r.get("status", "ok") == "ok"]


def published_rate(spec_name: str, precision: str) -> dict | None:
    """A published matmul FLOP/s measurement (published_measurements.yaml) of a spec-sheet part in one
    precision, the crowd-sourced PyTorch benchmark first (the same benchmark for every part); None if
    there is none."""
    rows = [
        m
        for m in published()
        if m.get("spec") == spec_name and m.get("precision") == precision and m["quantity"] == "flops_per_s"
    ]
    rows.sort(key=lambda m: "torch-performance" not in m["source"])
    return rows[0] if rows else None
