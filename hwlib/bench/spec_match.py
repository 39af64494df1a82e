"""Which spec-sheet entry (hwlib.specs) a GPU's reported name belongs to.

CUDA reports names such as "NVIDIA H200", "Tesla T4" or "NVIDIA A100-SXM4-80GB". Exact names and
aliases are tried first (specs.match); otherwise the chip model must agree and every form-factor word
the device reports (PCIe, SXM, NVL) must appear in the entry, so a PCIe or NVL card is never given an
SXM part's numbers; among several candidates the one with the closest memory size wins.
"""

from __future__ import annotations

import re

_VENDOR_WORDS = {"nvidia", "tesla", "geforce", "amd"}
_FORMS = ("pcie", "sxm", "nvl")


def match_spec(device_name: str, memory_bytes: float | None = None):
    """The spec-sheet entry (hwlib.specs) for a reported GPU name, or None when unknown."""
    try:
        from hwlib import specs

        hit = specs.match(device_name)
    except Exception:  # spec sheet unavailable: no match rather than a crash
        return None
    if hit is not None:
        return hit
    model = _model_token(device_name)
    dev = _norm(device_name)
    forms = [f for f in _FORMS if f in dev]
    cands = [
        specs.get(n)
        for n in specs.names()
        if model
        and _model_token(n) == model
        and all(f in _norm(n) for f in forms)
        and (forms or "pcie" not in _norm(n))
    ]
    if not cands:
        return None
    if memory_bytes:
        return min(cands, key=lambda a: abs(float(a.memory_bytes) - float(memory_bytes)))
    return cands[0]


def _norm(s: str) -> str:
    return "".join(ch for ch in str(s).lower() if ch.isalnum())


def _strip_vendor(name: str) -> str:
    return " ".join(w for w in str(name).replace("-", " ").split() if w.lower() not in _VENDOR_WORDS)


def _model_token(name: str) -> str:
    """The chip model in a name: "NVIDIA A100-SXM4-80GB" -> "a100", "Tesla T4" -> "t4"."""
    for word in re.split(r"[\s\-_/]+", _strip_vendor(name).lower()):
        if re.fullmatch(r"[a-z]{1,3}\d{1,4}[a-z]?", word) and not word.startswith(("sxm", "pcie", "hbm", "gddr")):
            return word
    return ""
