"""hwlib.web.transpile: the JavaScript generated from hwlib's Python gives the same numbers, strings
and refusals as the Python (run in Node here; tests/browser/ runs it in the built book)."""

from __future__ import annotations

import functools
import json
import math
import random
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest

import parity
from hwlib import calculator, memory, models, roofline, units
from hwlib.web import widgets
from hwlib.web.transpile import Unsupported, to_js

NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="Node.js is not installed: cannot run the generated JS here")
ENTRY = (
    calculator.estimate,
    calculator.Quantity.text,
    models.custom,
    models.from_config_dict,
    roofline.attainable,
    roofline.bound,
    roofline.ridge_point,
    roofline.matmul_intensity,
    roofline.elementwise_intensity,
    *widgets.FORMATTERS,
)
RUNNER = """
const hw = %s;
const estimate = %s;
const decode = (v) => (v && typeof v === "object" && "__float__" in v ? Number(v.__float__) : v);
const calls = JSON.parse(require("fs").readFileSync(0, "utf8"), (k, v) => decode(v));
const enc = (k, v) => (typeof v === "number" && !Number.isFinite(v) ? {__float__: String(v)} : v);
const out = calls.map(([name, kwargs]) => {
  try {
    if (name === "estimate") return {ok: estimate(hw, kwargs)};
    if (name.startsWith("$rt.")) return {ok: hw.$rt[name.slice(4)](...kwargs)};
    return {ok: hw.call(name, kwargs)};
  } catch (e) { return e instanceof hw.$rt.PyError ? {error: [e.pytype, e.message]} : {crash: String(e.stack)}; }
});
process.stdout.write(JSON.stringify(out, enc));
"""


def _encode(obj):
    if isinstance(obj, float) and not math.isfinite(obj):
        return {"__float__": "NaN" if math.isnan(obj) else ("Infinity" if obj > 0 else "-Infinity")}
    if isinstance(obj, dict):
        return {k: _encode(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_encode(v) for v in obj]
    return obj


def _decode(obj):
    if isinstance(obj, dict):
        if set(obj) == {"__float__"}:
            return float(obj["__float__"].replace("Infinity", "inf"))
        return {k: _decode(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_decode(v) for v in obj]
    return obj


@functools.lru_cache(maxsize=4)
def _program(functions) -> str:
    return to_js(list(functions))


def run_js(calls, functions=ENTRY):
    """Evaluate [(name, kwargs)] with the JS generated for `functions`; returns outcome dicts."""
    script = RUNNER % (_program(tuple(functions)), parity.ESTIMATE_JS)
    with tempfile.TemporaryDirectory() as tmp:  # a file: one argv string is limited to 128 KiB
        path = Path(tmp) / "run.js"
        path.write_text(script, encoding="utf-8")
        proc = subprocess.run(
            [NODE, str(path)], input=json.dumps(_encode(calls)), capture_output=True, text=True, timeout=120
        )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = _decode(json.loads(proc.stdout))
    crashes = [o["crash"] for o in out if "crash" in o]
    assert not crashes, crashes[0]
    return out


def _same_refusal(py, js):
    assert "error" in js, (py, js)
    assert js["error"][0] == py[1]
    assert parity.normalize_message(js["error"][1]) == parity.normalize_message(py[2])


@needs_node
def test_estimate_matches_python_for_300_random_inputs():
    rng = random.Random(7)
    cases = [parity.estimate_case(rng) for _ in range(300)]
    worst = 0.0
    for case, js in zip(cases, run_js([("estimate", c) for c in cases])):
        py = parity.estimate_outcome(case)
        assert py[0] == "ok", (case, py)
        assert "ok" in js, (case, js)
        worst = max(worst, parity.compare_estimate(py[1], js["ok"]))
    assert worst <= 1e-12


@needs_node
def test_every_named_model_counts_the_same_parameters():
    out = run_js([("estimate", {"model": n}) for n in models.names()])
    assert [o["ok"]["rows"][0]["value"] for o in out] == [float(models.get(n).n_params()) for n in models.names()]


@needs_node
def test_roofline_functions_and_kernels_match_python():
    rng = random.Random(9)
    cases = [parity.roofline_case(rng) for _ in range(300)]
    calls = [(f"hwlib.roofline.{f}", c) for c in cases for f in ("attainable", "bound")]
    calls += [
        ("hwlib.roofline.ridge_point", {"peak_flops": c["peak_flops"], "bandwidth": c["bandwidth"]}) for c in cases
    ]
    got = [o["ok"] for o in run_js(calls)]
    want = [parity.roofline_outcome(c)[k] for c in cases for k in ("attainable", "bound")]
    want += [parity.roofline_outcome(c)["ridge"] for c in cases]
    assert max(parity.relative_error(w, g) for w, g in zip(want, got)) <= 1e-12
    for precision in specs_precisions():
        calls = [
            (f"{fn.__module__}.{fn.__qualname__}", {**kw, "bytes_per_element": precision})
            for _, fn, kw in widgets.KERNELS
        ]
        got = [o["ok"] for o in run_js(calls)]
        assert max(map(parity.relative_error, parity.kernel_intensities(precision), got)) <= 1e-12


def specs_precisions():
    from hwlib import specs

    return list(specs.PRECISIONS)


@needs_node
def test_impossible_inputs_are_refused_with_pythons_message():
    rng = random.Random(10)
    cases = parity.bad_estimate_cases(rng)
    for case, js in zip(cases, run_js([("estimate", c) for c in cases])):
        py = parity.estimate_outcome(case)
        assert py[0] == "error", case
        _same_refusal(py, js)
    bad = [{**parity.roofline_case(rng), "intensity": v} for v in (-1.0, 0.0, math.nan, math.inf)]
    for case, js in zip(bad, run_js([("hwlib.roofline.attainable", c) for c in bad])):
        try:
            roofline.attainable(**case)
        except ValueError as err:
            _same_refusal(("error", "ValueError", str(err)), js)
        else:
            pytest.fail(f"Python accepted {case}")


@needs_node
def test_unit_formatters_print_the_same_strings():
    rng = random.Random(11)
    values = [0.0, 1.0, 999.96e3, 14e9, 2**30, 0.125, 2.5, 1e-9, 44280.0, 6.05e6, 3.14e23, 99.995, 1234.5]
    values += [10 ** rng.uniform(-10, 25) for _ in range(200)]
    calls, expected = [], []
    for v in values:
        for name, kwargs in [
            ("format_bytes", {"n": v}),
            ("format_bytes", {"n": v, "binary": True}),
            ("format_seconds", {"s": v}),
            ("format_usd", {"x": v}),
            ("format_rate", {"x": v}),
            ("format_flops", {"x": v}),
            ("format_si", {"x": -v, "unit": "B"}),
            ("format_number", {"x": v}),
            ("format_number", {"x": -v, "digits": 2}),
        ]:
            calls.append((f"hwlib.units.{name}", kwargs))
            expected.append(getattr(units, name)(**kwargs))
    texts = ["15T", "7e9", " 350M ", "16_384", "1,000", "40%", "4k", "-2.5e-3", "7B", "0.4", ".5", "1e3"]
    for text in texts:
        for context in (False, True):
            calls.append(("hwlib.units.parse_number", {"text": text, "name": "field", "context": context}))
            expected.append(units.parse_number(text, "field", context))
    got = [o.get("ok", o) for o in run_js(calls)]
    mismatches = [(c, e, g) for c, e, g in zip(calls, expected, got) if e != g]
    assert not mismatches, mismatches[:5]
    bad = ["", "  ", "abc", "1e", ".", "inf", "nan", "15X", "%", "1.2.3", "0x10"]
    out = run_js([("hwlib.units.parse_number", {"text": b, "name": "training tokens D"}) for b in bad])
    for text, o in zip(bad, out):
        with pytest.raises(ValueError) as err:
            units.parse_number(text, "training tokens D")
        assert o.get("error") == ["ValueError", str(err.value)], (text, o)
        assert str(err.value).startswith("training tokens D")


@needs_node
def test_runtime_keeps_python_semantics():
    specs_ = ["", ".3g", ".2f", ",.0f", ",.2f", ".1%", ".3e", ".0f", ".6g", "+.2e"]
    xs = [0.5, 1.5, 2.5, 0.125, 0.375, -2.5, 1e16, 1e-5, 123.0, 0.1, 1 / 3, 2**53, 9.995, 1e22, 5e-324]
    calls = [("$rt.format", [x, s]) for x in xs for s in specs_]
    calls += [("$rt.repr", [x]) for x in xs + [-1.5, 1e-4, 1.5e16]]
    calls += [("$rt.floordiv", [a, b]) for a, b in [(7, 2), (-7, 2), (7, -2), (-7.5, 2)]]
    calls += [("$rt.mod", [a, b]) for a, b in [(7, 3), (-7, 3), (7, -3), (-7.5, 2)]]
    got = [o.get("ok", o) for o in run_js(calls)]
    want = [parity.normalize_message(format(x, s)) if not s else format(x, s) for x in xs for s in specs_]
    want += [parity.normalize_message(repr(float(x))) for x in xs + [-1.5, 1e-4, 1.5e16]]
    want += [a // b for a, b in [(7, 2), (-7, 2), (7, -2), (-7.5, 2)]] + [
        a % b for a, b in [(7, 3), (-7, 3), (7, -3), (-7.5, 2)]
    ]
    got = [g if isinstance(g, str) else float(g) for g in got]
    want = [w if isinstance(w, str) else float(w) for w in want]
    assert [(c, g, w) for c, g, w in zip(calls, got, want) if g != w] == []


@needs_node
def test_division_by_zero_and_domain_errors_raise_like_python():
    out = run_js([("$rt.div", [1, 0]), ("$rt.mod", [1, 0]), ("$rt.int", [float("nan")]), ("$rt.float", ["abc"])])
    assert [o["error"][0] for o in out] == ["ZeroDivisionError", "ZeroDivisionError", "ValueError", "ValueError"]
    assert out[3]["error"][1] == "could not convert string to float: 'abc'"


# --- the transpiler refuses what it cannot translate faithfully -------------------------------
def _uses_try(x):
    try:
        return 1.0 / x
    except ZeroDivisionError:
        return 0.0


def _uses_asarray(x):
    return np.asarray(x) * 2


def _uses_with(path):
    with open(path) as f:
        return f.read()


def _uses_star(*xs):
    return xs


@pytest.mark.parametrize("fn", [_uses_try, _uses_asarray, _uses_with, _uses_star])
def test_unsupported_python_fails_the_build(fn):
    with pytest.raises(Unsupported):
        to_js([fn])


def test_generated_code_is_hwlibs_own_functions():
    js = to_js([calculator.estimate])
    for fn in (
        "hwlib_memory__kv_cache_bytes",
        "hwlib_flops__training_time_s",
        "hwlib__check__fraction",
        "hwlib_models__ModelShape__n_params",
        "hwlib_specs__get",
        "hwlib_roofline__time_s",
    ):
        assert f"function {fn}(" in js
    assert "// hwlib.flops.training_time_s: Wall-clock time" in js
    assert '"bf16": 2.0' in js and memory.BYTES_PER_VALUE["bf16"] == 2.0
    assert "hwlib_specs___sheet$value" in js  # the spec sheet, loaded at build time


@needs_node
@pytest.mark.parametrize("batch", [1, 8, 256])
def test_a_mixture_of_experts_estimate_matches_python(batch):
    case = {"model": "Mixtral 8x7B", "tokens": 1e12, "n_gpus": 64, "batch": batch, "seq_len": 8192}
    (js,) = run_js([("estimate", case)])
    py = parity.estimate_outcome(case)
    assert py[0] == "ok" and "ok" in js
    assert parity.compare_estimate(py[1], js["ok"]) <= 1e-12
    keys = [r["key"] for r in js["ok"]["rows"]]
    assert "active_params" in keys and "weights_read_per_step" in keys


@needs_node
def test_serving_planner_page_matches_python_on_random_inputs():
    """The page's "Plan a service" runs `serve_plan.plan` generated from the Python: every simulated
    percentile, replica count and cost is the same number, and a refusal the same message."""
    from hwlib import serve_plan

    rng = random.Random(27)
    cases = [parity.serve_case(rng) for _ in range(12)]
    cases += [dict(cases[0], model="Mixtral 8x7B"), dict(cases[0], percentile=0.0), dict(cases[0], prompt_dist="zipf")]
    js = run_js([("hwlib.serve_plan.plan", c) for c in cases], functions=(serve_plan.plan,))
    oks = 0
    for case, out in zip(cases, js):
        py = parity.serve_outcome(case)
        if py[0] == "error":
            _same_refusal(py, out)
            continue
        assert "ok" in out, (case, out)
        parity.compare_serve(py[1], out["ok"])
        oks += 1
    assert oks >= 8
