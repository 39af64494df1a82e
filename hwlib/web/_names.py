"""Name tables of the transpiler (hwlib/web/transpile.py): which built-in, `math`, `numpy` and
`difflib` callables the generated code may use and what they become in hwlib/data/web/runtime.js,
JS literals for Python constants, and JS-safe local names. numpy names map to their scalar meaning:
the page only ever sends scalars.
"""

from __future__ import annotations

import builtins
import dataclasses
import difflib
import json
import math
import numbers
import types

import numpy as np


class Unsupported(NotImplementedError):
    """Python the transpiler cannot translate faithfully: the build fails instead of drifting."""


CALLS = {
    builtins.float: "$rt.float",
    builtins.int: "$rt.int",
    builtins.str: "$rt.str",
    builtins.len: "$rt.len",
    builtins.bool: "$rt.bool",
    builtins.sum: "$rt.sum",
    builtins.min: "$rt.min",
    builtins.max: "$rt.max",
    builtins.abs: "$rt.abs",
    builtins.sorted: "$rt.sorted",
    builtins.repr: "$rt.repr",
    builtins.list: "$rt.list",
    builtins.tuple: "$rt.list",
    builtins.set: "$rt.set",
    builtins.hasattr: "$rt.hasattr",
    builtins.getattr: "$rt.getattr",
    builtins.any: "$rt.any",
    builtins.all: "$rt.all",
    builtins.range: "$rt.range",
    math.isnan: "$rt.isnan",
    math.isinf: "$rt.isinf",
    math.isfinite: "$rt.isfinite",
    math.sqrt: "$rt.sqrt",
    math.log: "$rt.log",
    math.log10: "$rt.log10",
    math.log2: "$rt.log2",
    math.exp: "$rt.exp",
    math.floor: "$rt.floor",
    math.ceil: "$rt.ceil",
    math.fabs: "$rt.abs",
    np.minimum: "Math.min",
    np.maximum: "Math.max",
    np.sqrt: "Math.sqrt",
    np.log: "Math.log",
    np.log2: "Math.log2",
    np.log10: "Math.log10",
    np.exp: "Math.exp",
    np.abs: "Math.abs",
    np.ndim: "$rt.ndim",
    difflib.get_close_matches: "$rt.get_close_matches",
}
SIGNATURES = {difflib.get_close_matches: ["word", "possibilities", "n", "cutoff"]}
BOOL_CALLS = {builtins.isinstance, builtins.hasattr, math.isnan, math.isinf, math.isfinite, builtins.any, builtins.all}
TYPES = {
    numbers.Real: "number",
    numbers.Number: "number",
    float: "number",
    int: "int",
    bool: "bool",
    str: "str",
    list: "list",
    tuple: "list",
    dict: "dict",
    type(None): "NoneType",
}
EXCEPTIONS = (ValueError, KeyError, TypeError, ZeroDivisionError, OverflowError, IndexError, AttributeError)
JS_RESERVED = set(
    """abstract arguments await boolean break byte case catch char class const continue
debugger default delete do double else enum eval export extends false final finally float for function
goto if implements import in instanceof int interface let long native new null package private
protected public return short static super switch synchronized this throw throws transient true try
typeof var void volatile while with yield undefined NaN Infinity Math Number Object Array String JSON
Error Map Boolean""".split()
)


def local_name(name: str) -> str:
    """A Python local as a JS identifier (reserved words and JS globals get a trailing $)."""
    return name + "$" if name in JS_RESERVED else name


def class_id(cls) -> str:
    """Identifier of an hwlib dataclass in generated code: "hwlib.models.ModelShape"."""
    return f"{cls.__module__}.{cls.__qualname__}"


def is_hwlib_dataclass(obj) -> bool:
    return isinstance(obj, type) and dataclasses.is_dataclass(obj) and obj.__module__.startswith("hwlib")


def const_literal(value, on_class=None) -> str:
    """A Python constant as a JS literal: numbers, strings, None, bools, exception classes, lists,
    tuples, dicts and hwlib dataclass instances (``on_class(cls)`` registers their class)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, numbers.Real):
        if isinstance(value, numbers.Integral) and abs(int(value)) > 2**53:
            raise Unsupported(f"integer {value} is not exact as a JS number")
        v = float(value)
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
        return repr(int(value)) if isinstance(value, numbers.Integral) else repr(v)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, type) and issubclass(value, EXCEPTIONS):
        return json.dumps(value.__name__)
    rec = lambda v: const_literal(v, on_class)  # noqa: E731
    if isinstance(value, (list, tuple, frozenset)):
        return "[" + ", ".join(rec(v) for v in value) + "]"
    if isinstance(value, (dict, types.MappingProxyType)):
        return "{" + ", ".join(f"{json.dumps(str(k), ensure_ascii=False)}: {rec(v)}" for k, v in value.items()) + "}"
    if is_hwlib_dataclass(type(value)) and on_class is not None:
        on_class(type(value))
        fields = [f'"__class__": {json.dumps(class_id(type(value)))}']
        fields += [f"{json.dumps(f.name)}: {rec(getattr(value, f.name))}" for f in dataclasses.fields(value)]
        return "{" + ", ".join(fields) + "}"
    raise Unsupported(f"constant {value!r:.80} of type {type(value).__name__}")
