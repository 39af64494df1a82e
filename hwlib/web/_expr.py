"""Expressions for hwlib/web/transpile.py: Python expression nodes → JavaScript.

Names that are not locals are resolved at build time in the function's module: hwlib functions
become calls of their generated twins, constants become literals, and known built-ins map onto
hwlib/data/web/runtime.js (`_names.CALLS`). Methods and attributes of objects whose hwlib dataclass
is known statically are called directly; otherwise `$rt.callmethod` / `$rt.getattr` dispatch on the
object's class at run time.
"""
from __future__ import annotations

import ast
import builtins
import functools
import inspect
import json
import types

import numpy as np

from ._names import (BOOL_CALLS, CALLS, EXCEPTIONS, SIGNATURES, TYPES, Unsupported, class_id,
                     const_literal, is_hwlib_dataclass, local_name)

_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*"}
_RT_BINOPS = {ast.Div: "$rt.div", ast.FloorDiv: "$rt.floordiv", ast.Mod: "$rt.mod", ast.Pow: "$rt.pow",
              ast.BitAnd: "$rt.and_"}
_CMP = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Is: "===", ast.IsNot: "!=="}
_MISSING = object()


def _is_snapshot(obj) -> bool:
    """A cached data loader without parameters (functools.cache): evaluated once, at build time."""
    wrapped = getattr(obj, "__wrapped__", None)
    return (isinstance(obj, functools._lru_cache_wrapper) and wrapped is not None
            and not inspect.signature(wrapped).parameters)


class ExprMixin:
    """Expression compiler; the host provides program, globals, where, scopes, types, is_local."""

    def static(self, node, default=_MISSING):
        if isinstance(node, ast.Name) and not self.is_local(node.id):
            if node.id in self.globals:
                return self.globals[node.id]
            if hasattr(builtins, node.id):
                return getattr(builtins, node.id)
            raise Unsupported(f"{self.where}: unknown name {node.id}")
        if isinstance(node, ast.Attribute) and not self.rooted_in_local(node):
            base = self.static(node.value, None)
            if isinstance(base, types.ModuleType):
                return getattr(base, node.attr)
        if default is _MISSING:
            raise Unsupported(f"{self.where}: cannot resolve {ast.unparse(node)}")
        return default

    def reference(self, obj, module: str, attr: str) -> str:
        """JS for a statically known object (`module`.`attr`) used as a value."""
        if isinstance(obj, types.FunctionType) and obj.__module__.startswith("hwlib"):
            return self.program.need_function(obj)
        if isinstance(obj, type) and issubclass(obj, EXCEPTIONS):
            return json.dumps(obj.__name__)
        if isinstance(obj, (bool, int, float, str, type(None))):
            return const_literal(obj)
        return self.program.need_constant(module, attr, obj)

    def rooted_in_local(self, n) -> bool:
        while isinstance(n, ast.Attribute):
            n = n.value
        return isinstance(n, ast.Name) and self.is_local(n.id)

    def expr(self, n) -> str:
        if isinstance(n, ast.Constant):
            return const_literal(n.value)
        if isinstance(n, ast.Name):
            if self.is_local(n.id):
                return local_name(n.id)
            return self.reference(self.static(n), self.module, n.id)
        if isinstance(n, ast.Attribute):
            return self.attribute(n)
        if isinstance(n, ast.BinOp):
            return self.binop(n.op, n.left, n.right)
        if isinstance(n, ast.UnaryOp):
            if isinstance(n.op, ast.Not):
                return f"(!{self.test(n.operand)})"
            if isinstance(n.op, (ast.USub, ast.UAdd)):
                return f"({'-' if isinstance(n.op, ast.USub) else '+'}{self.expr(n.operand)})"
        if isinstance(n, ast.BoolOp):
            if all(self.is_bool(v) for v in n.values):
                return "(" + (" && " if isinstance(n.op, ast.And) else " || ").join(self.expr(v) for v in n.values) + ")"
            fn = "$rt.andThen" if isinstance(n.op, ast.And) else "$rt.or_"
            out = self.expr(n.values[-1])
            for v in reversed(n.values[:-1]):
                out = f"{fn}({self.expr(v)}, () => {out})"
            return out
        if isinstance(n, ast.Compare):
            return self.compare(n)
        if isinstance(n, ast.IfExp):
            return f"({self.test(n.test)} ? {self.expr(n.body)} : {self.expr(n.orelse)})"
        if isinstance(n, ast.Call):
            return self.call(n)
        if isinstance(n, ast.Subscript):
            if isinstance(n.slice, ast.Slice):
                if n.slice.step is not None:
                    raise Unsupported(f"{self.where}: slice with a step")
                lo, hi = (self.expr(x) if x is not None else "null" for x in (n.slice.lower, n.slice.upper))
                return f"$rt.slice({self.expr(n.value)}, {lo}, {hi})"
            return f"$rt.getitem({self.expr(n.value)}, {self.expr(n.slice)})"
        if isinstance(n, (ast.List, ast.Tuple)):
            return "[" + ", ".join(self.expr(e) for e in n.elts) + "]"
        if isinstance(n, ast.Set):
            return "$rt.set([" + ", ".join(self.expr(e) for e in n.elts) + "])"
        if isinstance(n, ast.Dict):
            parts = [f"...{self.expr(v)}" if k is None else f"[{self.expr(k)}]: {self.expr(v)}"
                     for k, v in zip(n.keys, n.values)]
            return "({" + ", ".join(parts) + "})"
        if isinstance(n, ast.JoinedStr):
            return "(" + " + ".join(['""'] + [self.fstring_part(v) for v in n.values]) + ")"
        if isinstance(n, ast.Lambda):
            a = n.args
            if a.vararg or a.kwarg or a.kwonlyargs or a.defaults:
                raise Unsupported(f"{self.where}: lambda with defaults or *args")
            names = [x.arg for x in a.args]
            return self.scoped(names, lambda: f"(({', '.join(map(local_name, names))}) => {self.expr(n.body)})")
        if isinstance(n, (ast.ListComp, ast.GeneratorExp)):
            return self.comprehension(n, lambda: self.expr(n.elt))
        if isinstance(n, ast.SetComp):
            return "$rt.set(" + self.comprehension(n, lambda: self.expr(n.elt)) + ")"
        if isinstance(n, ast.DictComp):
            return "$rt.dict(" + self.comprehension(n, lambda: f"[{self.expr(n.key)}, {self.expr(n.value)}]") + ")"
        raise Unsupported(f"{self.where}, line {getattr(n, 'lineno', '?')}: expression {type(n).__name__}: "
                          f"{ast.unparse(n)}")

    def scoped(self, names, build):
        self.scopes.append(set(names))
        try:
            return build()
        finally:
            self.scopes.pop()

    def comprehension(self, n, element) -> str:
        if len(n.generators) != 1 or n.generators[0].is_async:
            raise Unsupported(f"{self.where}: comprehension with several `for`s")
        g = n.generators[0]
        source = f"$rt.iter({self.expr(g.iter)})"
        names = [x.id for x in ast.walk(g.target) if isinstance(x, ast.Name)]

        def build():
            target = self.assign_target(g.target)
            out = source + "".join(f".filter(({target}) => {self.test(c)})" for c in g.ifs)
            return out + f".map(({target}) => {element()})"
        return self.scoped(names, build)

    def fstring_part(self, v) -> str:
        if isinstance(v, ast.Constant):
            return json.dumps(v.value, ensure_ascii=False)
        value = self.expr(v.value)
        if v.conversion == ord("r"):
            value = f"$rt.repr({value})"
        elif v.conversion == ord("s"):
            value = f"$rt.str({value})"
        elif v.conversion not in (-1, None):
            raise Unsupported(f"{self.where}: f-string conversion !{chr(v.conversion)}")
        spec = self.expr(v.format_spec) if v.format_spec is not None else '""'
        return f"$rt.format({value}, {spec})"

    def binop(self, op, left, right) -> str:
        a, b = self.expr(left), self.expr(right)
        if isinstance(op, ast.Add) and any(isinstance(x, (ast.List, ast.Tuple)) or
                                           isinstance(self.static(x, None), (list, tuple))
                                           for x in (left, right) if not isinstance(x, ast.Constant)):
            return f"$rt.add({a}, {b})"         # sequence concatenation
        if type(op) in _BINOPS:
            return f"({a} {_BINOPS[type(op)]} {b})"
        if type(op) in _RT_BINOPS:
            return f"{_RT_BINOPS[type(op)]}({a}, {b})"
        raise Unsupported(f"{self.where}: operator {type(op).__name__}")

    def compare(self, n) -> str:
        parts, left = [], n.left
        for op, right in zip(n.ops, n.comparators):
            a, b = self.expr(left), self.expr(right)
            if type(op) in _CMP:
                parts.append(f"({a} {_CMP[type(op)]} {b})")
            elif isinstance(op, (ast.Eq, ast.NotEq)):
                parts.append(f"({'' if isinstance(op, ast.Eq) else '!'}$rt.eq({a}, {b}))")
            elif isinstance(op, (ast.In, ast.NotIn)):
                parts.append(f"({'' if isinstance(op, ast.In) else '!'}$rt.contains({b}, {a}))")
            else:
                raise Unsupported(f"{self.where}: comparison {type(op).__name__}")
            left = right
        return parts[0] if len(parts) == 1 else "(" + " && ".join(parts) + ")"

    def is_bool(self, n) -> bool:
        if isinstance(n, ast.Compare) or (isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not)):
            return True
        if isinstance(n, ast.Constant):
            return isinstance(n.value, bool)
        if isinstance(n, ast.BoolOp):
            return all(self.is_bool(v) for v in n.values)
        if isinstance(n, ast.Call) and isinstance(n.func, (ast.Name, ast.Attribute)) and not self.rooted_in_local(n.func):
            return self.static(n.func, None) in BOOL_CALLS
        return False

    def test(self, n) -> str:
        return self.expr(n) if self.is_bool(n) else f"$rt.truthy({self.expr(n)})"

    def known_class(self, node):
        """The hwlib dataclass a local holds, when known statically (annotation, constructor, `self`)."""
        return self.types.get(node.id) if isinstance(node, ast.Name) and self.is_local(node.id) else None

    def attribute(self, n) -> str:
        if not self.rooted_in_local(n):
            base = self.static(n.value, None)
            if isinstance(base, types.ModuleType):
                return self.reference(getattr(base, n.attr), base.__name__, n.attr)
            if isinstance(n.value, (ast.Name, ast.Attribute)):
                raise Unsupported(f"{self.where}: attribute {ast.unparse(n)} of a global object")
        cls, base = self.known_class(n.value), self.expr(n.value)
        if cls is not None:
            attr = inspect.getattr_static(cls, n.attr, None)
            if isinstance(attr, property):
                return f"{self.program.need_function(attr.fget, cls)}({base})"
            if n.attr in cls.__dataclass_fields__:
                return f"{base}.{n.attr}"
            raise Unsupported(f"{self.where}: {cls.__name__}.{n.attr} is not a field or property")
        self.program.dynamic_name(n.attr)
        return f"$rt.getattr({base}, {json.dumps(n.attr)})"

    def spread_call(self, fn, n) -> str:
        """A call with *args or **kwargs to a generated function: bound at run time by signature."""
        qual = json.dumps(f"{fn.__module__}.{fn.__qualname__}")
        name = self.program.need_function(fn)
        pos = ", ".join(f"...$rt.iter({self.expr(a.value)})" if isinstance(a, ast.Starred) else self.expr(a)
                        for a in n.args)
        kw = ", ".join(f"...{self.expr(k.value)}" if k.arg is None else f"{json.dumps(k.arg)}: {self.expr(k.value)}"
                       for k in n.keywords)
        return (f"{name}(...$rt.bindArgs({qual}, signatures[{qual}].params, signatures[{qual}].defaults, "
                f"[{pos}], {{{kw}}}))")

    def call(self, n) -> str:
        f = n.func
        if any(isinstance(a, ast.Starred) for a in n.args) or any(k.arg is None for k in n.keywords):
            callee = self.static(f, None) if isinstance(f, (ast.Name, ast.Attribute)) else None
            if isinstance(callee, types.FunctionType) and callee.__module__.startswith("hwlib"):
                return self.spread_call(callee, n)
            if not is_hwlib_dataclass(callee) or any(isinstance(a, ast.Starred) for a in n.args):
                raise Unsupported(f"{self.where}: *args/**kwargs in a call of {ast.unparse(f)}")
        if isinstance(f, ast.Attribute):
            base = None if self.rooted_in_local(f) else self.static(f.value, None)
            if not isinstance(base, types.ModuleType):
                return self.method_call(n)      # x.lower(), ", ".join(...), shape.n_params()
        if not isinstance(f, (ast.Name, ast.Attribute)) or (isinstance(f, ast.Name) and self.is_local(f.id)):
            if n.keywords:
                raise Unsupported(f"{self.where}: keyword arguments in a call of {ast.unparse(f)}")
            return f"$rt.call({', '.join([self.expr(f)] + [self.expr(a) for a in n.args])})"
        callee = self.static(f)
        if callee is isinstance:
            kinds = n.args[1].elts if isinstance(n.args[1], ast.Tuple) else [n.args[1]]
            names = []
            for t in kinds:
                cls = self.static(t)
                names.append(TYPES.get(cls) or (class_id(cls) if is_hwlib_dataclass(cls) else None))
                if names[-1] is None:
                    raise Unsupported(f"{self.where}: isinstance(..., {ast.unparse(t)})")
                if is_hwlib_dataclass(cls):
                    self.program.need_class(cls)
            return f"$rt.isinstance({self.expr(n.args[0])}, {json.dumps(names)})"
        if callee is map and len(n.args) == 2:
            fn = self.static(n.args[0], None) if isinstance(n.args[0], (ast.Name, ast.Attribute)) else None
            js = CALLS.get(fn) if fn is not None and not isinstance(fn, types.FunctionType) else None
            return f"$rt.iter({self.expr(n.args[1])}).map((v) => $rt.call({js or self.expr(n.args[0])}, v))"
        args = [self.expr(a) for a in n.args]
        if callee is type:
            return f"$rt.type({args[0]})"
        if callee is dict:
            kw = ", ".join(f"...{self.expr(k.value)}" if k.arg is None else f"{json.dumps(k.arg)}: {self.expr(k.value)}"
                           for k in n.keywords)
            return f"({{...$rt.dict($rt.items_of({args[0] if args else '{}'})), {kw}}})"
        if callee is np.where:
            return f"({self.test(n.args[0])} ? {args[1]} : {args[2]})"
        if isinstance(callee, type) and issubclass(callee, EXCEPTIONS):
            return f"$rt.exc({json.dumps(callee.__name__)}, {args[0] if args else chr(34) * 2})"
        if is_hwlib_dataclass(callee):
            return self.construct(callee, n, args)
        if _is_snapshot(callee):
            return self.program.need_snapshot(callee)
        if isinstance(callee, types.FunctionType) and callee.__module__.startswith("hwlib"):
            name = self.program.need_function(callee)
            return f"{name}({', '.join(self.bind(callee, n, inspect.signature(callee)))})"
        if callee in CALLS:
            if n.keywords:
                params = SIGNATURES.get(callee)
                if params is None:
                    raise Unsupported(f"{self.where}: keyword arguments to {ast.unparse(f)}")
                given = dict(zip(params, args)) | {k.arg: self.expr(k.value) for k in n.keywords}
                args = [given.get(p, "undefined") for p in params[:max(params.index(k) for k in given) + 1]]
            return f"{CALLS[callee]}({', '.join(args)})"
        raise Unsupported(f"{self.where}: call to {ast.unparse(f)} ({callee!r:.60})")

    def bind(self, fn, n, sig, skip: int = 0) -> list[str]:
        """Arguments of a call to a generated function, positional in signature order."""
        params = list(sig.parameters.values())[skip:]
        positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        if any(k.arg is None for k in n.keywords) or len(n.args) > len(positional):
            raise Unsupported(f"{self.where}: **kwargs or too many arguments in a call to {fn.__qualname__}")
        given = {p.name: self.expr(a) for p, a in zip(positional, n.args)}
        for k in n.keywords:
            if k.arg not in sig.parameters or k.arg in given:
                raise Unsupported(f"{self.where}: bad keyword {k.arg} for {fn.__qualname__}")
            given[k.arg] = self.expr(k.value)
        out = []
        for p in params:
            if p.name in given:
                out.append(given[p.name])
            elif p.default is not inspect.Parameter.empty:
                out.append(const_literal(p.default))
            else:
                raise Unsupported(f"{self.where}: missing argument {p.name} for {fn.__qualname__}")
        return out

    def construct(self, cls, n, args) -> str:
        meta = self.program.need_class(cls)
        kw = ", ".join(f"...{self.expr(k.value)}" if k.arg is None else f"{k.arg}: {self.expr(k.value)}"
                       for k in n.keywords)
        return f"$rt.construct({meta}, [{', '.join(args)}], {{{kw}}})"

    def method_call(self, n) -> str:
        f = n.func
        cls = self.known_class(f.value)
        if cls is not None:
            attr = inspect.getattr_static(cls, f.attr, None)
            if not isinstance(attr, types.FunctionType):
                raise Unsupported(f"{self.where}: {cls.__name__}.{f.attr} is not a method")
            name = self.program.need_function(attr, cls)
            return f"{name}({', '.join([self.expr(f.value)] + self.bind(attr, n, inspect.signature(attr), skip=1))})"
        self.program.dynamic_name(f.attr)
        kw = ", ".join(f"{json.dumps(k.arg)}: {self.expr(k.value)}" for k in n.keywords if k.arg)
        if any(k.arg is None for k in n.keywords):
            raise Unsupported(f"{self.where}: **kwargs in a method call")
        args = ", ".join(self.expr(a) for a in n.args)
        return f"$rt.callmethod({self.expr(f.value)}, {json.dumps(f.attr)}, [{args}], {{{kw}}})"

    def exception(self, n) -> str:
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and self.is_local(n.func.id):
            return f"$rt.exc({self.expr(n.func)}, {self.expr(n.args[0]) if n.args else chr(34) * 2})"
        if isinstance(n, ast.Call):
            return self.call(n)
        cls = self.static(n)
        if isinstance(cls, type) and issubclass(cls, EXCEPTIONS):
            return f"$rt.exc({json.dumps(cls.__name__)})"
        raise Unsupported(f"{self.where}: raise {ast.unparse(n)}")
