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
import inspect
import json
import types

from ._calls import CallMixin
from ._names import BOOL_CALLS, EXCEPTIONS, Unsupported, const_literal, local_name

_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*"}
_RT_BINOPS = {
    ast.Div: "$rt.div",
    ast.FloorDiv: "$rt.floordiv",
    ast.Mod: "$rt.mod",
    ast.Pow: "$rt.pow",
    ast.BitAnd: "$rt.and_",
}
_CMP = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Is: "===", ast.IsNot: "!=="}
_MISSING = object()


class ExprMixin(CallMixin):
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
                return (
                    "(" + (" && " if isinstance(n.op, ast.And) else " || ").join(self.expr(v) for v in n.values) + ")"
                )
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
            parts = [
                f"...{self.expr(v)}" if k is None else f"[{self.expr(k)}]: {self.expr(v)}"
                for k, v in zip(n.keys, n.values)
            ]
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
        raise Unsupported(
            f"{self.where}, line {getattr(n, 'lineno', '?')}: expression {type(n).__name__}: {ast.unparse(n)}"
        )

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
        if isinstance(op, ast.Add) and any(
            isinstance(x, (ast.List, ast.Tuple)) or isinstance(self.static(x, None), (list, tuple))
            for x in (left, right)
            if not isinstance(x, ast.Constant)
        ):
            return f"$rt.add({a}, {b})"  # sequence concatenation
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
        if (
            isinstance(n, ast.Call)
            and isinstance(n.func, (ast.Name, ast.Attribute))
            and not self.rooted_in_local(n.func)
        ):
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
