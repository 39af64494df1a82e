"""Calls for hwlib/web/transpile.py: hwlib functions (keyword arguments bound through the Python
signature at build time, or at run time for ``*args``/``**kwargs``), dataclass constructors, methods
(static when the object's class is known, `$rt.callmethod` otherwise), exceptions, and the built-ins
of `_names.CALLS`.
"""

from __future__ import annotations

import ast
import inspect
import json
import types

import numpy as np

from ._names import CALLS, EXCEPTIONS, SIGNATURES, TYPES, Unsupported, class_id, const_literal, is_hwlib_dataclass


def _is_snapshot(obj) -> bool:
    """A cached data loader without parameters (functools.cache): evaluated once, at build time."""
    import functools

    wrapped = getattr(obj, "__wrapped__", None)
    return (
        isinstance(obj, functools._lru_cache_wrapper)
        and wrapped is not None
        and not inspect.signature(wrapped).parameters
    )


class CallMixin:
    """Call compiler; the host (ExprMixin + Function) provides expr, static, test, program, ..."""

    def spread_call(self, fn, n) -> str:
        """A call with *args or **kwargs to a generated function: bound at run time by signature."""
        qual = json.dumps(f"{fn.__module__}.{fn.__qualname__}")
        name = self.program.need_function(fn)
        pos = ", ".join(
            f"...$rt.iter({self.expr(a.value)})" if isinstance(a, ast.Starred) else self.expr(a) for a in n.args
        )
        kw = ", ".join(
            f"...{self.expr(k.value)}" if k.arg is None else f"{json.dumps(k.arg)}: {self.expr(k.value)}"
            for k in n.keywords
        )
        return (
            f"{name}(...$rt.bindArgs({qual}, signatures[{qual}].params, signatures[{qual}].defaults, "
            f"[{pos}], {{{kw}}}))"
        )

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
                return self.method_call(n)  # x.lower(), ", ".join(...), shape.n_params()
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
            kw = ", ".join(
                f"...{self.expr(k.value)}" if k.arg is None else f"{json.dumps(k.arg)}: {self.expr(k.value)}"
                for k in n.keywords
            )
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
                args = [given.get(p, "undefined") for p in params[: max(params.index(k) for k in given) + 1]]
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
        kw = ", ".join(
            f"...{self.expr(k.value)}" if k.arg is None else f"{k.arg}: {self.expr(k.value)}" for k in n.keywords
        )
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
