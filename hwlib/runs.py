"""Published training runs, as their papers and model cards print them (hwlib/data/training_runs.yaml).

One home for every such fact, so two chapters cannot quote two values: GPT-3's 3.14e23 FLOP, Llama 3
405B's layouts and 38–43 % MFU, PaLM's 46.2 % MFU (which counts attention FLOPs), Megatron-LM's MFU and
HFU, and the GPU-hours of the Llama 2 paper and the Llama 3.1 model card.

>>> get("gpt3_175b")["training_flops"]
3.14e+23
>>> [layout["mfu"] for layout in get("llama3_405b")["layouts"]]
[0.43, 0.41, 0.38]

Each entry keeps `source` (where in the document) and `cite` (its references.bib key). Values are SI:
FLOP, FLOP/s, tokens, parameters; GPU-hours in hours; MFU and HFU as fractions.
"""

from __future__ import annotations

import copy
from functools import lru_cache
from importlib import resources

_FILE = "training_runs.yaml"


@lru_cache(maxsize=1)
def _load() -> dict:
    import yaml

    data = yaml.safe_load(resources.files("hwlib").joinpath("data", _FILE).read_text(encoding="utf-8"))
    runs = data.get("runs") if isinstance(data, dict) else None
    if not isinstance(runs, dict) or not runs:
        raise ValueError(f"hwlib/data/{_FILE} must hold a non-empty mapping 'runs'")
    for key, run in runs.items():
        missing = [k for k in ("name", "cite", "source") if k not in run]
        if missing:
            raise ValueError(f"hwlib/data/{_FILE}: run {key!r} lacks {missing}")
        for field, value in run.items():
            if field in ("mfu", "hfu") and not 0 < value <= 1:
                raise ValueError(f"hwlib/data/{_FILE}: run {key!r} {field} must be a fraction in (0, 1]; got {value!r}")
    return runs


def names() -> list[str]:
    """Keys of every published run, e.g. 'gpt3_175b', 'llama3_405b', 'palm_540b'."""
    return sorted(_load())


def get(key: str) -> dict:
    """One run as a dict (a copy: editing it does not change the data). KeyError names the keys."""
    runs = _load()
    if key not in runs:
        raise KeyError(f"unknown training run {key!r}; known: {', '.join(sorted(runs))}")
    return copy.deepcopy(runs[key])


def published_mfus() -> dict[str, float]:
    """Every MFU a paper in the data file reports, {label: fraction}: one entry per run, and one per
    layout where a run reports several (Llama 3 405B's three). What "well-tuned large runs reach"
    means in this book is the span of these values, not a rule of thumb.

    >>> round(min(published_mfus().values()), 2), round(max(published_mfus().values()), 3)
    (0.38, 0.563)
    """
    out: dict[str, float] = {}
    for run in _load().values():
        if "mfu" in run:
            out[run["name"]] = run["mfu"]
        for layout in run.get("layouts", []):
            if "mfu" in layout:
                out[f"{run['name']} ({layout['gpus']:,} GPUs, {layout['seq_len']:,} tokens)"] = layout["mfu"]
    return out
