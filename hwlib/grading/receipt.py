"""Measurement receipts: a timing made on the learner's GPU, checked by a grader that has none.

The learner's notebook makes the receipt where it measures (`make`, e.g. on Colab): the device's name
and fingerprint (SM count, SM clock, memory, driver and runtime, compute capability, as CUDA reports
them through hwlib.backend.device_info), the sha256 of the benchmark code that ran (its tokens, so
comments and spacing do not count), the raw samples (seconds per step, every sample), the batch
each measured and the precision. It is a JSON string, so it travels in the notebook
as one variable (`RECEIPT`).

The grader (`verify`, for a check of kind `receipt`, format: exercises/FORMAT.md) recomputes
everything it can from the receipt and the submitted notebook, and passes it only when all hold:

1. consistent: the fingerprint is the hash of the device fields; the batches are the check's;
   every batch has at least `min_samples` finite, positive samples; the slowest is at most
   `max_spread` x the fastest (a sample can be slowed by a busy machine, rarely by 100x);
2. possible: the device is on the spec sheet (hwlib.specs, matched by name and memory) and, for a
   GPU, its SM count is the sheet's; the best sample's rate is below that exact device's dense peak
   in the receipt's precision (MFU <= 1);
3. plausible: the MFU of each batch lies inside the band of recorded runs of that device
   (hwlib/data/recorded/ex03_*.json) when there are any (there are none yet: no GPU run has been made
   for the project, and no number is typed in; the check then says the band was not checked).
   The FLOPs are the exercise's own formula (6 x weights x batch, from the check's `layers`);
4. unchanged: the receipt's code hash is the published benchmark's (computed from the exercise's
   solution notebook, or given as `code_sha256`) and the submitted notebook's own benchmark code
   hashes to the same value.

A receipt can be forged by a learner who rewrites it by hand; what it makes hard is an honest
mistake passing (a time in ms, a changed benchmark, a number from another GPU) and a typed-in
number passing unnoticed: a forger must invent samples consistent with a real device's peak.
"""

from __future__ import annotations

import ast
import hashlib
import io
import json
import math
import tokenize
from pathlib import Path

VERSION = 1
DEVICE_FIELDS = (
    "name",
    "kind",
    "sm_count",
    "sm_clock_hz",
    "memory_bytes",
    "memory_clock_hz",
    "memory_bus_bits",
    "compute_capability",
    "cuda_driver",
    "cuda_runtime",
    "cupy",
    "cpu_model",
    "cores",
)


def code_hash(source: str) -> str:
    """sha256 of a code's tokens (names, operators, literals), so comments, blank lines and spacing
    do not change it; works across Python versions (no ast.unparse)."""
    toks = []
    skip = (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER)
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type not in skip:
            toks.append(tok.string)
    return hashlib.sha256("\x1f".join(toks).encode("utf-8")).hexdigest()


def functions_source(code: str, names) -> str:
    """The source of the top-level functions `names` in `code` (a notebook's code joined), in the
    order given; ValueError naming those it lacks."""
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        raise ValueError(f"the code does not parse ({exc.msg})") from None
    found = {n.name: ast.get_source_segment(code, n) for n in tree.body if isinstance(n, ast.FunctionDef)}
    missing = [n for n in names if n not in found]
    if missing:
        raise ValueError(f"no function {', '.join(missing)} in the code")
    return "\n".join(found[n] for n in names)


def fingerprint(device: dict) -> str:
    """sha256 of the device fields the receipt keeps (sorted JSON)."""
    keep = {k: device.get(k) for k in DEVICE_FIELDS}
    return hashlib.sha256(json.dumps(keep, sort_keys=True, default=str).encode("utf-8")).hexdigest()


def make(device: dict, functions, samples, batches, precision: str = "fp32") -> str:
    """The receipt (a JSON string) of a measurement: `device` (hwlib.backend's device_info(); the
    CUDA driver version is added on a GPU), `functions` (the benchmark's functions, hashed from their
    source), `samples` (one list of seconds per step per batch) and `batches`."""
    import inspect
    import textwrap

    source = "\n".join(textwrap.dedent(inspect.getsource(f)) for f in functions)
    dev = {k: device.get(k) for k in DEVICE_FIELDS}
    if dev.get("kind") == "gpu" and dev.get("cuda_driver") is None:
        try:
            import cupy

            dev["cuda_driver"] = int(cupy.cuda.runtime.driverGetVersion())
        except Exception:
            pass
    return json.dumps(
        {
            "receipt": VERSION,
            "device": dev,
            "fingerprint": fingerprint(dev),
            "code_sha256": code_hash(source),
            "precision": precision,
            "batches": [int(b) for b in batches],
            "samples": [[float(f"{s:.6g}") for s in row] for row in samples],
        },
        separators=(",", ":"),
    )


def recorded_bands(device_name: str, folder: Path | None = None) -> dict:
    """{batch: (lowest MFU, highest MFU)} over the recorded runs of this device
    (hwlib/data/recorded/ex03_*.json, each a receipt plus its MFUs), widened by 2x each way; {} when
    none is recorded."""
    folder = folder or Path(__file__).resolve().parents[1] / "data" / "recorded"
    bands: dict = {}
    for path in sorted(folder.glob("ex03_*.json")):
        try:
            run = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if run.get("device", {}).get("name") != device_name:
            continue
        for b, m in zip(run.get("batches", []), run.get("mfu", [])):
            lo, hi = bands.get(b, (m, m))
            bands[b] = (min(lo, m), max(hi, m))
    return {b: (lo / 2, min(1.0, hi * 2)) for b, (lo, hi) in bands.items()}


def verify(raw, config: dict, submission_code: str, published_sha: str | None) -> tuple[bool, str]:
    """(passed, message) for a receipt against a check's `receipt:` config (functions, batches,
    layers, precision, min_samples, max_spread); see the module docstring for what is checked."""
    from hwlib.bench.spec_match import match_spec

    if not isinstance(raw, str):
        return False, "expected the receipt made by hwlib.grading.receipt.make (a JSON string)"
    try:
        rec = json.loads(raw)
    except ValueError:
        return False, "the receipt is not valid JSON (was it edited by hand?)"
    if not isinstance(rec, dict) or rec.get("receipt") != VERSION:
        return False, f"not a version-{VERSION} receipt"
    dev = rec.get("device") or {}
    if not isinstance(dev, dict) or rec.get("fingerprint") != fingerprint(dev):
        return False, "the device fingerprint does not match the device fields (the receipt was changed)"
    batches, samples = rec.get("batches"), rec.get("samples")
    want_batches = [int(b) for b in config.get("batches", [])]
    if batches != want_batches or not isinstance(samples, list) or len(samples) != len(want_batches):
        return False, f"the receipt must hold samples for the batches {want_batches}; it has {batches}"
    layers = config.get("layers") or []
    weights = sum(m * n for m, n in zip(layers[:-1], layers[1:]))
    flops = [6 * weights * b for b in batches]  # the exercise's own formula, never the learner's
    n_min, spread = int(config.get("min_samples", 5)), float(config.get("max_spread", 100.0))
    for b, row in zip(batches, samples):
        ok = isinstance(row, list) and len(row) >= n_min
        ok = ok and all(isinstance(s, (int, float)) and math.isfinite(s) and s > 0 for s in row)
        if not ok:
            return False, f"batch {b}: at least {n_min} positive, finite samples (seconds per step) are needed"
        if max(row) > spread * min(row):
            return False, f"batch {b}: the slowest sample is over {spread:g}x the fastest (not one measurement)"
    sha = rec.get("code_sha256")
    try:
        own = code_hash(functions_source(submission_code, config.get("functions", [])))
    except (ValueError, tokenize.TokenError) as exc:
        return False, f"the notebook's benchmark code cannot be read ({exc})"
    if published_sha and sha != published_sha:
        return False, "the benchmark code that made the receipt is not the published one (changed code)"
    if sha != own:
        return False, "the receipt was made by other code than this notebook's benchmark (changed after measuring)"
    precision = str(rec.get("precision", "fp32"))
    if dev.get("kind") != "gpu" or not weights:
        return True, "receipt consistent (a CPU run: no spec-sheet peak to compare with, band not checked)"
    spec = match_spec(str(dev.get("name")), dev.get("memory_bytes"))
    if spec is None:
        return False, f"the device {str(dev.get('name'))[:60]!r} is not on the spec sheet: its peak is unknown"
    if spec.compute_units and dev.get("sm_count") != spec.compute_units:
        return False, f"{spec.name} has {spec.compute_units} SMs; the receipt says {dev.get('sm_count')}"
    try:
        peak = spec.peak_flops(precision)
    except ValueError:
        return False, f"{spec.name} has no {precision} peak on the spec sheet"
    mfus = [f / min(row) / peak for f, row in zip(flops, samples)]
    over = [b for b, m in zip(batches, mfus) if m > 1.0]
    if over:
        return False, f"batch {over[0]}: faster than the {precision} peak of a {spec.name} (MFU > 1): not possible"
    bands = recorded_bands(str(dev.get("name")))
    if not bands:
        return True, f"receipt consistent and possible on a {spec.name} (no recorded runs of it: band not checked)"
    for b, m in zip(batches, mfus):
        lo, hi = bands.get(b, (0.0, 1.0))
        if not lo <= m <= hi:
            return False, f"batch {b}: MFU {m:.3g} is outside the {lo:.3g}-{hi:.3g} of recorded runs on a {spec.name}"
    return True, f"receipt consistent, possible and plausible on a {spec.name}"
