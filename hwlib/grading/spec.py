"""Exercises and their checks: read `exercises/<id>/checks.yaml` (format: exercises/FORMAT.md),
merge an instructor's hidden checks, and compute expected values in the grader process.

Expected values are computed here, outside any learner kernel: either a literal (`expected`, in SI
units or a string with a unit) or a Python expression (`expr`) over math, numpy and the hwlib modules.
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import math
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

import yaml

from . import forbid as _forbid, quantity

EXERCISES_DIR = Path(__file__).resolve().parents[2] / "exercises"
PUBLIC_DIR = Path(__file__).resolve().parent / "public"  # copies shipped inside hwlib (for Colab)
OTHER_KINDS = ("bool", "choice", "string", "manual", "receipt")  # manual: scored by hand; receipt: grading.receipt
VISIBILITIES = ("visible", "hidden", "after_due_date", "after_published")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_KEYS = {
    "name",
    "answer",
    "kind",
    "expected",
    "expr",
    "args",
    "kwargs",
    "rtol",
    "atol",
    "points",
    "hint",
    "source",
    "choices",
    "visibility",
    "inputs",
    "receipt",
    "mistakes",
}
_HWLIB_MODULES = (
    "specs",
    "memory",
    "flops",
    "roofline",
    "formats",
    "parallel",
    "units",
    "models",
    "runs",
    "profiles",
    "roofline_fit",
    "layout",
    "serving",
    "rent",
    "hierarchy",
)


class Rejected(ValueError):
    """Raised by `reject(message)` in an expr with `inputs`: the learner's own data cannot give a
    gradable value (a measured point above the roof, an estimate's range that misses the published
    figure). The grader and the self-check show `message` to the learner (never the expr)."""


def _reject(message):
    raise Rejected(str(message))


@dataclass(frozen=True)
class Check:
    """One graded answer. `hidden` is True for checks that came from an instructor's folder."""

    name: str
    kind: str
    answer: str
    expected: object = None
    expr: str | None = None
    args: tuple | None = None
    kwargs: dict | None = None
    rtol: float = 0.02
    atol: object = 0.0
    points: float = 1.0
    hint: str = ""
    source: str = ""
    choices: tuple = ()
    visibility: str = "visible"
    hidden: bool = False
    inputs: tuple = ()  # learner variables the expr reads as inputs[...] (their own measurements)
    receipt: dict | None = None  # kind receipt: functions, batches, layers, min_samples, max_spread, code_sha256
    mistakes: tuple = ()  # ({"expr" or "expected": ..., "says": ...}, ...): known wrong answers, diagnosed
    defaults: dict = field(default_factory=dict)  # the exercise's default parameters (params[...] in expr)

    @property
    def is_call(self) -> bool:
        return self.args is not None or self.kwargs is not None


@dataclass(frozen=True)
class Exercise:
    id: str
    title: str = ""
    grading: dict = field(default_factory=dict)
    checks: tuple = ()
    folder: Path | None = None
    variants: dict = field(default_factory=dict)  # parameter name -> the values a learner may get
    difficulty: int | None = None  # 1 (one formula) .. 5 (open design); shown in the chapter boxes
    minutes: int | None = None  # a typical learner's time
    params: dict = field(default_factory=dict)  # name -> {default, values, unit, note} (the `params:` block)

    @property
    def per_learner(self) -> bool:
        """Whether the grader gives each learner their own numbers: always for a `variants:` block,
        and for `params:` values when the grading block (usually the hidden checks') says
        `variants: true`."""
        return bool(self.variants) and (
            bool(self.grading.get("variants")) or any(k not in self.params for k in self.variants)
        )

    forbid: tuple = ()  # forbid.Forbidden entries: hwlib names whose use zeroes (or flags) checks

    @property
    def max_score(self) -> float:
        return float(sum(c.points for c in self.checks))


def _plain_literal(value, where: str, depth: int = 0):
    """Arguments sent into a learner's kernel must be plain literals (numbers, strings, lists)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)) and depth < 3:
        return [_plain_literal(v, where, depth + 1) for v in value]
    raise ValueError(f"{where}: arguments must be numbers, strings, booleans, None or lists of them; got {value!r}")


def _check_from_dict(d: dict, where: str, hidden: bool) -> Check:
    if not isinstance(d, dict):
        raise ValueError(f"{where}: each check must be a mapping, got {d!r}")
    unknown = set(d) - _KEYS
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {sorted(unknown)}; accepted: {sorted(_KEYS)}")
    name = d.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"{where}: name must be an identifier like 'weights_bf16'; got {name!r}")
    where = f"{where} ({name})"
    kind = d.get("kind")
    if kind not in quantity.KINDS and kind not in OTHER_KINDS:
        raise ValueError(f"{where}: kind must be one of {list(quantity.KINDS) + list(OTHER_KINDS)}; got {kind!r}")
    answer = d.get("answer", name)
    if not isinstance(answer, str) or not _NAME.match(answer):
        raise ValueError(f"{where}: answer must be a variable name; got {answer!r}")
    if kind in ("manual", "receipt"):
        if "expected" in d or "expr" in d or "args" in d or "kwargs" in d or "inputs" in d:
            raise ValueError(f"{where}: a {kind} check takes no expected, expr, args or inputs")
        cfg = d.get("receipt")
        if kind == "receipt" and (
            not isinstance(cfg, dict)
            or not isinstance(cfg.get("functions"), list)
            or not cfg["functions"]
            or not isinstance(cfg.get("batches"), list)
        ):
            raise ValueError(f"{where}: a receipt check needs 'receipt: {{functions: [...], batches: [...]}}'")
    elif ("expected" in d) == ("expr" in d):
        raise ValueError(f"{where}: give exactly one of 'expected' and 'expr'")
    if "expr" in d and not isinstance(d["expr"], str):
        raise ValueError(f"{where}: expr must be a string (a Python expression); got {d['expr']!r}")
    args = d.get("args")
    kwargs = d.get("kwargs")
    if args is not None and not isinstance(args, list):
        raise ValueError(f"{where}: args must be a list; got {args!r}")
    if kwargs is not None and (
        not isinstance(kwargs, dict) or not all(isinstance(k, str) and _NAME.match(k) for k in kwargs)
    ):
        raise ValueError(f"{where}: kwargs must map argument names to values; got {kwargs!r}")
    num = {}
    for key, default in (("rtol", 0.02), ("points", 1.0)):
        value = d.get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
            raise ValueError(f"{where}: {key} must be a number >= 0; got {value!r}")
        num[key] = float(value)
    atol = d.get("atol", 0.0)
    if kind in quantity.KINDS:
        atol = quantity.to_si(atol, kind) if isinstance(atol, (str, int, float)) else -1
        if not (isinstance(atol, float) and atol >= 0):
            raise ValueError(f"{where}: atol must be a number >= 0 or a quantity string")
    choices = d.get("choices", [])
    if kind == "choice" and (
        not isinstance(choices, list) or len(choices) < 2 or not all(isinstance(c, str) for c in choices)
    ):
        raise ValueError(f"{where}: a choice check needs 'choices', a list of at least two strings")
    visibility = d.get("visibility", "after_published" if hidden else "visible")
    if visibility not in VISIBILITIES:
        raise ValueError(f"{where}: visibility must be one of {VISIBILITIES}; got {visibility!r}")
    check = Check(
        name=name,
        kind=kind,
        answer=answer,
        expected=d.get("expected"),
        expr=d.get("expr"),
        args=None if args is None and kwargs is None else tuple(_plain_literal(args or [], where)),
        kwargs=None if kwargs is None else {k: _plain_literal(v, where) for k, v in kwargs.items()},
        rtol=num["rtol"],
        atol=float(atol or 0.0),
        points=num["points"],
        hint=str(d.get("hint", "")),
        source=str(d.get("source", "")),
        choices=tuple(choices),
        visibility=visibility,
        hidden=hidden,
        inputs=_inputs(d, where),
        receipt=dict(d["receipt"]) if isinstance(d.get("receipt"), dict) else None,
        mistakes=_mistakes(d, where, kind),
    )
    if "expected" in d:
        expected_value(check)  # a literal that cannot be read is an authoring error: fail at load
    return check


def _mistakes(d: dict, where: str, kind: str) -> tuple:
    """`mistakes`: a list of known wrong answers, each {expr: ... | expected: ..., says: ...}; an
    answer that fails the check but equals one (within the check's tolerance) gets `says` as the
    diagnosis. `expr` is evaluated like the check's (args, kwargs, params and the listed inputs)."""
    items = d.get("mistakes", [])
    if not isinstance(items, list):
        raise ValueError(f"{where}: mistakes must be a list of {{expr or expected, says}}")
    if items and kind in ("manual", "receipt"):
        raise ValueError(f"{where}: a {kind} check takes no mistakes")
    out = []
    for i, m in enumerate(items, 1):
        w = f"{where}: mistake {i}"
        if not isinstance(m, dict) or set(m) - {"expr", "expected", "says"} or ("expr" in m) == ("expected" in m):
            raise ValueError(f"{w}: give exactly one of 'expr' and 'expected', and 'says'")
        if not isinstance(m.get("says"), str) or not m["says"].strip():
            raise ValueError(f"{w}: 'says' must say what is wrong (a non-empty string)")
        if "expr" in m:
            if not isinstance(m["expr"], str):
                raise ValueError(f"{w}: expr must be a string (a Python expression)")
            try:
                tree = ast.parse(m["expr"], "<mistake>", "eval")
            except SyntaxError as exc:
                raise ValueError(f"{w}: expr is not a Python expression: {exc.msg}") from None
            unlisted = sorted(_inputs_read(tree, w) - set(d.get("inputs", [])))
            if unlisted:
                raise ValueError(f"{w}: expr reads inputs {unlisted} that the check does not list")
        out.append(dict(m))
    return tuple(out)


def mistake_values(check: Check, inputs: dict | None = None, params: dict | None = None) -> list:
    """[(value in the check's terms, what it says), ...] for the check's known mistakes; a mistake
    whose value cannot be computed (e.g. inputs missing) is left out."""
    out = []
    for i, m in enumerate(check.mistakes):
        probe = replace(
            check, name=f"{check.name}.mistake{i + 1}", expr=m.get("expr"), expected=m.get("expected"), mistakes=()
        )
        try:
            out.append((expected_value(probe, inputs if inputs is not None else {}, params), m["says"]))
        except ValueError:
            continue
    return out


def _inputs(d: dict, where: str) -> tuple:
    inputs = d.get("inputs", [])
    if not isinstance(inputs, list) or not all(isinstance(i, str) and _NAME.match(i) for i in inputs):
        raise ValueError(f"{where}: inputs must be a list of variable names; got {inputs!r}")
    if inputs and "expr" not in d:
        raise ValueError(f"{where}: inputs need an expr that uses them (inputs['name'])")
    if inputs:
        try:
            tree = ast.parse(d["expr"], "<check>", "eval")
        except SyntaxError as exc:
            raise ValueError(f"{where}: expr is not a Python expression: {exc.msg}") from None
        read = _inputs_read(tree, where)
        unlisted = sorted(read - set(inputs))
        if unlisted:
            raise ValueError(
                f"{where}: expr reads inputs {unlisted} that are not listed in inputs {inputs}; "
                "list every learner variable the expression uses"
            )
    return tuple(inputs)


def _inputs_read(tree, where: str) -> set:
    """The names an expr reads from `inputs`: only inputs['name'] (a quoted name) is accepted, so
    that every value a learner must provide is listed and checked before anything is graded."""
    read = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == "inputs":
            parent = getattr(node, "_hwlib_parent", None)
            ok = (
                isinstance(parent, ast.Subscript)
                and parent.value is node
                and isinstance(parent.slice, ast.Constant)
                and isinstance(parent.slice.value, str)
            )
            if not ok:
                raise ValueError(f"{where}: expr must read learner values as inputs['name'] (a quoted name)")
            read.add(parent.slice.value)
        for child in ast.iter_child_nodes(node):
            child._hwlib_parent = node
    return read


def parse_checks(data, where: str, hidden: bool = False, folder: Path | None = None) -> Exercise:
    """Validate a checks mapping (as read from YAML)."""
    if not isinstance(data, dict) or not isinstance(data.get("checks"), list):
        raise ValueError(f"{where}: expected a mapping with 'exercise' and a list 'checks'")
    ex_id = data.get("exercise")
    if not isinstance(ex_id, str) or not _NAME.match(ex_id):
        raise ValueError(f"{where}: 'exercise' must be the exercise id, e.g. ex01_memory_budget")
    variants = data.get("variants") or {}
    if not isinstance(variants, dict) or not all(
        isinstance(k, str)
        and _NAME.match(k)
        and isinstance(v, list)
        and v
        and all(isinstance(x, (int, float, str)) and not isinstance(x, bool) for x in v)
        for k, v in variants.items()
    ):
        raise ValueError(f"{where}: variants must map parameter names to non-empty lists of numbers or strings")
    grading = data.get("grading") or {}
    if not isinstance(grading, dict) or set(grading) - {"timeout_cell", "timeout_total", "memory_mb", "variants"}:
        raise ValueError(f"{where}: grading accepts timeout_cell, timeout_total, memory_mb and variants")
    if not isinstance(grading.get("variants", False), bool):
        raise ValueError(f"{where}: grading: variants must be true or false (per-learner numbers on or off)")
    variants = {k: [_yaml_number(x) for x in v] for k, v in variants.items()}
    block = parse_params(data.get("params"), where)
    both = sorted(set(block) & set(variants))
    if both:
        raise ValueError(f"{where}: {both} are given in both params and variants; give each parameter once")
    variants.update({k: list(p["values"]) for k, p in block.items() if "values" in p})
    defaults = {k: p["default"] for k, p in block.items()}
    checks = tuple(
        replace(_check_from_dict(c, f"{where}: check {i + 1}", hidden), defaults=defaults)
        for i, c in enumerate(data["checks"])
    )
    names = [c.name for c in checks]
    if len(set(names)) != len(names):
        raise ValueError(f"{where}: check names must be unique; got {names}")
    if not hidden:
        _check_params_read(checks, {*block, *variants}, where)
    difficulty, minutes = data.get("difficulty"), data.get("minutes")
    if difficulty is not None and (isinstance(difficulty, bool) or difficulty not in (1, 2, 3, 4, 5)):
        raise ValueError(f"{where}: difficulty must be a whole number from 1 to 5; got {difficulty!r}")
    if minutes is not None and (isinstance(minutes, bool) or not isinstance(minutes, int) or minutes <= 0):
        raise ValueError(f"{where}: minutes must be a whole number of minutes > 0; got {minutes!r}")
    ex = Exercise(
        ex_id, str(data.get("title", "")), dict(grading), checks, folder, variants, difficulty, minutes, block
    )
    return _with_forbid(ex, data.get("forbid"), where, hidden)


_PARAM_KEYS = {"default", "values", "unit", "note"}


def parse_params(block, where: str) -> dict:
    """The `params:` block: {name: {default, values?, unit?, note?}}, the one place an exercise's
    given numbers are typed. `default` is what the book page shows; `values` (which must include
    the default) are what a learner's variant may get; numbers or strings."""
    if block is None:
        return {}
    if not isinstance(block, dict):
        raise ValueError(f"{where}: params must map parameter names to {{default, values, unit, note}}")
    out = {}
    for name, p in block.items():
        w = f"{where}: params: {name}"
        if not isinstance(name, str) or not _NAME.match(name):
            raise ValueError(f"{where}: params: {name!r} is not a parameter name (letters, digits, _)")
        if not isinstance(p, dict) or "default" not in p or set(p) - _PARAM_KEYS:
            raise ValueError(f"{w}: give default (and optionally values, unit, note); got {p!r}")
        default = _param_value(p["default"], w)
        entry = {"default": default, "unit": str(p.get("unit", "")), "note": str(p.get("note", ""))}
        if "values" in p:
            values = p["values"]
            if not isinstance(values, list) or len(values) < 2:
                raise ValueError(f"{w}: values must list at least two values a learner may get")
            values = [_param_value(v, w) for v in values]
            if default not in values:
                raise ValueError(f"{w}: values {values} must include the default {default!r}")
            if len(set(map(repr, values))) != len(values):
                raise ValueError(f"{w}: values {values} repeat a value")
            entry["values"] = values
        out[name] = entry
    return out


def _param_value(x, where: str):
    x = _yaml_number(x)
    if isinstance(x, bool) or not isinstance(x, (int, float, str)):
        raise ValueError(f"{where}: a parameter's value must be a number or a string; got {x!r}")
    return x


def _params_read(expr: str) -> set:
    """The names an expression reads as params['name']."""
    try:
        tree = ast.parse(expr, "<expr>", "eval")
    except SyntaxError:
        return set()  # reported where the expression is evaluated
    return {
        n.slice.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Subscript)
        and isinstance(n.value, ast.Name)
        and n.value.id == "params"
        and isinstance(n.slice, ast.Constant)
    }


def _check_params_read(checks, declared: set, where: str) -> None:
    """Every params['name'] a check's (or a mistake's) expr reads is a declared parameter."""
    for c in checks:
        exprs = [c.expr or ""] + [m.get("expr", "") for m in c.mistakes]
        unknown = sorted(set().union(*(_params_read(e) for e in exprs)) - declared)
        if unknown:
            raise ValueError(
                f"{where}: check {c.name} reads params {unknown}, which the exercise does not declare "
                f"(declared: {sorted(declared) or 'none'})"
            )


def _with_forbid(ex: Exercise, block, where: str, hidden: bool) -> Exercise:
    """`ex` with its `forbid:` block (hwlib.grading.forbid); a public block may name only its own checks."""
    entries = _forbid.parse(block, where)
    known = {c.name for c in ex.checks}
    for f in entries:
        unknown = sorted(set(f.checks) - known)
        if unknown and not hidden:
            raise ValueError(f"{where}: forbid {f.name}: no check named {unknown}; checks: {sorted(known)}")
    return replace(ex, forbid=entries)


def _yaml_number(x):
    """'1.3e9' -> 1.3e9: YAML 1.1 reads an exponent without a sign as a string."""
    if isinstance(x, str):
        try:
            return float(x) if re.fullmatch(r"[+-]?\d+(\.\d*)?[eE][+-]?\d+", x.strip()) else x
        except ValueError:
            return x
    return x


def load_checks(path, hidden: bool = False) -> Exercise:
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ValueError(f"cannot read checks file {path}: {exc}") from None
    return parse_checks(data, str(path), hidden, path.parent)


def find_exercise(name) -> Path:
    """The checks file of an exercise given its id ('ex01_memory_budget'), a unique prefix ('ex01'),
    its folder, or a file inside that folder."""
    p = Path(name)
    if p.is_file() and p.name != "checks.yaml":
        p = p.parent
    if p.is_dir() and (p / "checks.yaml").is_file():
        return p / "checks.yaml"
    if p.is_file():
        return p
    for base in (EXERCISES_DIR, PUBLIC_DIR):
        if (base / str(name) / "checks.yaml").is_file():
            return base / str(name) / "checks.yaml"
        if (base / f"{name}.yaml").is_file():
            return base / f"{name}.yaml"
    places = {p.stem: p for p in PUBLIC_DIR.glob("ex*.yaml")}  # the copies installed with hwlib,
    places.update(
        {
            d.name: d / "checks.yaml"
            for d in EXERCISES_DIR.glob("ex*")  # else the checkout's
            if (d / "checks.yaml").is_file()
        }
    )
    known = sorted(places)
    matches = [k for k in known if k.startswith(str(name))] if str(name) else []
    if len(matches) == 1:
        return places[matches[0]]
    raise KeyError(f"exercise {str(name)!r} not found; known exercises: {', '.join(known) or 'none'}")


def load_exercise(name, checks_dir=None) -> Exercise:
    """Public checks of an exercise, extended/overridden by `checks_dir/<id>.yaml` (or
    `checks_dir/<id>/checks.yaml`) when a hidden-checks folder is given."""
    ex = load_checks(find_exercise(name))
    if checks_dir is None:
        return ex
    return merge(ex, load_checks(hidden_file(ex.id, checks_dir), hidden=True))


def hidden_file(exercise_id: str, checks_dir) -> Path:
    """The hidden-checks file of `exercise_id` in `checks_dir`, found by what it says (`exercise:`),
    whatever it is called: `ex01_memory_budget.yaml`, `ex01.yaml`, `ex01/checks.yaml`, any *.yml.
    ValueError when the folder has none for this exercise (an instructor who passes --checks
    expects hidden checks: a class must never be graded on public checks only by a typo) or
    more than one."""
    base = Path(checks_dir)
    if not base.is_dir():
        raise ValueError(f"--checks must be a folder of hidden checks; got {str(base)!r}")
    files = sorted({*base.glob("*.yaml"), *base.glob("*.yml"), *base.glob("*/checks.yaml"), *base.glob("*/checks.yml")})
    found, named = [], {}
    for f in files:
        try:
            data = yaml.safe_load(f.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
            raise ValueError(f"--checks {base}: cannot read {f.name} ({str(exc)[:100]})") from None
        ex_id = data.get("exercise") if isinstance(data, dict) else None
        named[f] = ex_id
        if ex_id == exercise_id:
            found.append(f)
    if len(found) == 1:
        return found[0]
    if found:
        raise ValueError(
            f"--checks {base}: {len(found)} files hold hidden checks for {exercise_id}: "
            + ", ".join(str(f.relative_to(base)) for f in found)
            + "; keep one"
        )
    seen = (
        ", ".join(f"{f.relative_to(base)} ({e or 'no exercise: field'})" for f, e in named.items()) or "no YAML files"
    )
    raise ValueError(
        f"--checks {base} holds no hidden checks for {exercise_id} (found: {seen[:400]}); a hidden-checks file "
        f"is any DIR/*.yaml whose 'exercise:' is {exercise_id}"
    )


def merge(public: Exercise, hidden: Exercise) -> Exercise:
    """Hidden checks replace public ones of the same name and add the others, in file order."""
    if hidden.id != public.id:
        raise ValueError(f"hidden checks are for {hidden.id!r}, not {public.id!r}")
    defaults = {k: p["default"] for k, p in {**public.params, **hidden.params}.items()}
    by_name = {c.name: replace(c, defaults={**defaults, **c.defaults}) for c in hidden.checks}
    checks = [by_name.pop(c.name, c) for c in public.checks] + list(by_name.values())
    names = {c.name for c in checks}
    for f in hidden.forbid:
        if set(f.checks) - names:
            raise ValueError(
                f"hidden checks of {public.id}: forbid {f.name}: no check named {sorted(set(f.checks) - names)}"
            )
    merged = replace(
        public,
        checks=tuple(checks),
        grading={**public.grading, **hidden.grading},
        variants={**public.variants, **hidden.variants},
        params={**public.params, **hidden.params},
        forbid=_forbid.merge(public.forbid, hidden.forbid),
    )
    _check_params_read(merged.checks, {*merged.params, *merged.variants}, f"hidden checks of {public.id}")
    return merged


def params(exercise: Exercise, learner: str) -> dict:
    """The parameters of `learner`'s variant of `exercise`: each picked from its list by
    sha256(exercise id, learner id, parameter name), so the grader and the learner's self-check
    compute the same numbers from the id alone, and two learners share all of them with probability
    1 / (product of the list lengths). Parameters without values keep their default; {} for an
    exercise without parameters."""
    out = default_params(exercise)
    for name in sorted(exercise.variants):
        values = exercise.variants[name]
        h = hashlib.sha256(f"{exercise.id}\0{learner}\0{name}".encode("utf-8", "backslashreplace")).digest()
        out[name] = values[int.from_bytes(h[:8], "big") % len(values)]
    return out


def default_params(exercise: Exercise) -> dict:
    """Every parameter's default (`params:`), and the first value of every `variants:` list: the
    numbers of the book's page, and of a notebook graded without per-learner variants."""
    out = {k: p["default"] for k, p in exercise.params.items()}  # in the order of the block
    return out | {k: v[0] for k, v in exercise.variants.items() if k not in out}


def grading_params(exercise: Exercise, learner: str | None) -> dict:
    """The parameters a submission is graded with: `learner`'s variant when the exercise gives each
    learner their own numbers (`Exercise.per_learner`), else the defaults."""
    if exercise.per_learner and learner:
        return params(exercise, learner)
    return default_params(exercise)


def _own(value, kind: str, reference: float, factor: float = 2.0) -> float:
    """A learner's earlier answer `value` (number or quantity string) in SI units when it lies within
    `factor` of `reference`, else `reference`: a later answer is graded from the learner's own
    earlier value (no cascade), but never from one so wrong (or unreadable) it makes no sense."""
    try:
        v = quantity.to_si(value, kind)
    except (ValueError, TypeError):
        return float(reference)
    return v if math.isfinite(v) and reference / factor <= v <= reference * factor else float(reference)


_BUILTINS = {
    "abs": abs,
    "min": min,
    "max": max,
    "round": round,
    "int": int,
    "float": float,
    "sum": sum,
    "len": len,
    "range": range,
    "bool": bool,
    "list": list,
    "si": lambda value, kind: quantity.to_si(value, kind),  # a learner's "2.6 GB" as 2.6e9 (inputs)
    "own": _own,
    "reject": _reject,  # an expr's verdict on the learner's own data, shown to them (Rejected)
}


class _Scope(dict):
    """Names an `expr` may use; hwlib modules are imported on first use."""

    def __missing__(self, key):
        if key in _HWLIB_MODULES:
            self[key] = importlib.import_module(f"hwlib.{key}")
            return self[key]
        raise KeyError(key)


def _number(value, check: Check):
    if isinstance(value, (list, tuple)) or type(value).__name__ == "ndarray":
        return [_number(v, check) for v in list(value)]
    if isinstance(value, str):
        return quantity.to_si(value, check.kind)
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"check {check.name}: expected value is not finite ({value})")
    return value


def expected_value(check: Check, inputs: dict | None = None, params: dict | None = None):
    """The expected answer in SI units (float or list of floats), a bool, or a tuple of accepted
    strings. Runs `expr` in this (the grader's) process; errors name the check. A check with
    `inputs` needs them: {name: the learner's plain value} (extracted from their notebook)."""
    raw = check.expected
    if check.inputs and inputs is None:
        raise ValueError(f"check {check.name}: needs the learner's values of {list(check.inputs)}")
    if check.expr is not None:
        scope = _Scope(
            math=math,
            args=list(check.args or []),
            kwargs=dict(check.kwargs or {}),
            inputs=dict(inputs or {}),
            params={**check.defaults, **(params or {})},
            np=importlib.import_module("numpy"),
            __builtins__=_BUILTINS,
        )
        try:
            raw = eval(compile(check.expr, f"<check {check.name}>", "eval"), scope)
        except Rejected:
            raise
        except Exception as exc:
            raise ValueError(f"check {check.name}: expr {check.expr!r} failed: {type(exc).__name__}: {exc}") from exc
    if check.kind in ("manual", "receipt"):
        return None
    if check.kind in quantity.KINDS:
        return _number(raw, check)
    if check.kind == "bool":
        if type(raw).__name__ not in ("bool", "bool_"):
            raise ValueError(f"check {check.name}: expected must be true or false; got {raw!r}")
        return bool(raw)
    accepted = tuple(raw) if isinstance(raw, (list, tuple)) else (raw,)
    if not accepted or not all(isinstance(a, str) for a in accepted):
        raise ValueError(f"check {check.name}: expected must be a string or a list of strings")
    if check.kind == "choice":
        wrong = [a for a in accepted if a.strip().casefold() not in {c.strip().casefold() for c in check.choices}]
        if wrong:
            raise ValueError(f"check {check.name}: expected {wrong} not among choices {list(check.choices)}")
    return accepted
