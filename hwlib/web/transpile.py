"""Python → JavaScript for hwlib's functions, so the book's in-page calculators run the same code as
the Python library: one source of formulas for the command line, the library and the page.

`to_js(functions)` reads each function's source with `ast`, follows every hwlib function, dataclass
(with the methods and properties used), constant and cached data loader it needs, across modules,
and emits one JavaScript expression that evaluates to ``{call, fns, signatures, $rt}``. Keyword
arguments are mapped through the Python signature, at build time for calls inside the generated
code and at run time for ``call(name, kwargs)``. Python semantics that plain JS lacks (ZeroDivisionError,
repr, format specs, truthiness, dict and str methods, difflib's close matches) come from
``hwlib/data/web/runtime.js``. Anything outside the supported subset raises `Unsupported` at build
time, so the book build fails instead of the page drifting from the library.

Supported: assignments (also tuple unpacking and ``x[k] = v``), ``if``/``for``/``while``/``break``/
``continue``/``return``/``raise``/``assert``, nested functions (closures), arithmetic, comparisons,
``and``/``or``/``not``, conditional expressions, f-strings, lambdas, list/set/dict/generator
comprehensions, literals, subscripts and slices; calls to hwlib functions, dataclass constructors,
methods and properties, and to the built-ins and ``math``/``numpy``/``difflib`` names of
``_names.CALLS``. A zero-argument ``functools.cache`` function (a data loader such as the spec sheet's)
is called at build time and its value embedded. A function-local ``import`` marks an array-only
branch: in the browser it raises ImportError (the page only sends scalars).

Known differences, all covered by the parity tests: JS has one number type, so a whole float prints
like an int ("4096", Python "4096.0") and ``isinstance(x, int)`` is true for whole floats.

pscript (PyPI) was tried first: it rejects imports, generator and dict comprehensions, cannot map
keyword arguments across modules and turns ``isinstance(x, numbers.Real)`` into a reference error.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import types
from pathlib import Path

from ._function import Function
from ._names import Unsupported, class_id, const_literal, is_hwlib_dataclass

RUNTIME_JS = Path(__file__).resolve().parents[1] / "data" / "web" / "runtime.js"

__all__ = ["to_js", "compile_program", "Unsupported", "js_name"]


def js_name(obj) -> str:
    """Mangled JS identifier of an hwlib function, method or class: hwlib.memory.kv_cache_bytes ->
    hwlib_memory__kv_cache_bytes."""
    return obj.__module__.replace(".", "_") + "__" + obj.__qualname__.replace(".", "__")


def _signature(fn, skip_self: bool) -> dict:
    params = list(inspect.signature(fn).parameters.values())
    return {
        "js": js_name(fn),
        "params": [p.name for p in params],
        "defaults": {
            p.name: p.default
            for p in params
            if p.default is not inspect.Parameter.empty and isinstance(p.default, (int, float, str, bool, type(None)))
        },
        "method": skip_self,
    }


class _Program:
    """The transitive closure of what the entry functions need, and its JS."""

    def __init__(self):
        self.functions: dict[str, str] = {}  # js name -> source ("" while pending)
        self.signatures: dict[str, dict] = {}  # "hwlib.mod.fn" / "hwlib.mod.Class.method" -> call info
        self.constants: dict[str, str] = {}
        self.classes: dict[str, type] = {}  # class id -> class
        self.dynamic: set[str] = set()  # method/attribute names used on objects of unknown class
        self._pending: list = []
        self.modules: set[str] = set()  # hwlib modules whose functions the program holds

    def need_function(self, fn, owner=None) -> str:
        name = js_name(fn)
        if name not in self.functions:
            self.functions[name] = ""
            self._pending.append((fn, owner))
            qual = f"{fn.__module__}.{fn.__qualname__}"
            self.signatures[qual] = _signature(fn, owner is not None)
            self.modules.add(fn.__module__)
        return name

    def need_class(self, cls) -> str:
        cid = class_id(cls)
        if cid not in self.classes:
            self.classes[cid] = cls
            for name in list(self.dynamic):
                self._member(cls, name)
        return "$rt.classes[" + json.dumps(cid) + "]"

    def dynamic_name(self, name: str) -> None:
        if name not in self.dynamic:
            self.dynamic.add(name)
            for cls in list(self.classes.values()):
                self._member(cls, name)

    def _member(self, cls, name: str) -> None:
        attr = inspect.getattr_static(cls, name, None)
        if isinstance(attr, types.FunctionType):
            self.need_function(attr, cls)
        elif isinstance(attr, property):
            self.need_function(attr.fget, cls)

    def need_constant(self, module: str, attr: str, value) -> str:
        name = module.replace(".", "_") + "__" + attr
        if name not in self.constants:
            self.constants[name] = ""
            self.constants[name] = f"const {name} = {const_literal(value, self.need_class)};"
        return name

    def need_snapshot(self, cached) -> str:
        """A zero-argument cached loader: its build-time value, embedded as a constant."""
        fn = cached.__wrapped__
        return self.need_constant(fn.__module__, fn.__qualname__ + "$value", cached())

    def compile(self) -> None:
        while self._pending:
            fn, owner = self._pending.pop()
            self.functions[js_name(fn)] = Function.from_python(self, fn, js_name(fn), owner).emit()

    def class_table(self) -> str:
        """$rt.classes: fields, defaults, methods and properties of every dataclass the code uses."""
        lines = []
        for cid, cls in self.classes.items():
            fields = dataclasses.fields(cls)
            factories = {
                f.name: f.default_factory.__name__ for f in fields if f.default_factory is not dataclasses.MISSING
            }
            if any(v not in ("dict", "list") for v in factories.values()):
                raise Unsupported(f"{cid}: default_factory other than dict/list")
            meta = {
                "id": cid,
                "name": cls.__name__,
                "fields": [f.name for f in fields],
                "defaults": {f.name: f.default for f in fields if f.default is not dataclasses.MISSING},
                "factories": factories,
                "frozen": cls.__dataclass_params__.frozen,
            }
            members = []
            for name in sorted(self.dynamic):
                attr = inspect.getattr_static(cls, name, None)
                if isinstance(attr, types.FunctionType):
                    members.append(
                        f"{json.dumps(name)}: {{method: {js_name(attr)}, "
                        f"params: {json.dumps(self.signatures[f'{attr.__module__}.{attr.__qualname__}']['params'])}}}"
                    )
                elif isinstance(attr, property):
                    members.append(f"{json.dumps(name)}: {{property: {js_name(attr.fget)}}}")
            lines.append(
                f"$rt.classes[{json.dumps(cid)}] = {{...{json.dumps(meta)}, members: {{{', '.join(members)}}}}};"
            )
        return "\n".join(lines)


def compile_program(functions) -> _Program:
    """The compiled closure of `functions` (hwlib functions, or ``Class.method``): every function,
    dataclass and constant they reach; ``.modules`` names the hwlib modules those functions live in."""
    program = _Program()
    for fn in functions:
        owner = None
        if "." in fn.__qualname__:
            owner = inspect.getmodule(fn).__dict__.get(fn.__qualname__.split(".")[0])
            if not is_hwlib_dataclass(owner):
                raise Unsupported(f"{fn.__qualname__}: only module functions and dataclass methods")
            program.need_class(owner)
        program.need_function(fn, owner)
    program.compile()
    return program


def to_js(functions, extra_js: str = "") -> str:
    """One JS expression evaluating to ``{call, fns, signatures, $rt}`` for `functions` (hwlib
    functions, or methods given as ``Class.method``) and everything they use.
    ``call("hwlib.flops.training_flops", {n_params: 7e9, n_tokens: 1e12})`` calls a generated
    function with keyword arguments, as Python would; methods take ``self`` as a keyword."""
    program = compile_program(functions)
    runtime = RUNTIME_JS.read_text(encoding="utf-8").strip()
    body = "\n".join([*program.constants.values(), *program.functions.values(), program.class_table()])
    signatures = json.dumps(program.signatures, sort_keys=True)
    fns = ", ".join(f'"{k}": {v["js"]}' for k, v in sorted(program.signatures.items()))
    return f"""(() => {{
"use strict";
const $rt = {runtime};
// ---- generated from hwlib's Python source by hwlib/web/transpile.py; do not edit ----
{body}
const signatures = {signatures};
const fns = {{{fns}}};
function call(name, kwargs = {{}}) {{
  const sig = signatures[name];
  if (!sig) throw $rt.exc("KeyError", `no generated function ${{name}}`);
  return fns[name](...$rt.bindArgs(name, sig.params, sig.defaults, [], kwargs));
}}
{extra_js}
return {{call, fns, signatures, $rt}};
}})()"""
