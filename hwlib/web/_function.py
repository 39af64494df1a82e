"""Functions and statements for hwlib/web/transpile.py: one Python function (a module function, a
method or property getter of an hwlib dataclass, or a function nested in one) → one JS function.
"""

from __future__ import annotations

import ast
import inspect
import json
import textwrap

from ._expr import ExprMixin
from ._names import Unsupported, is_hwlib_dataclass, local_name


def _store_names(node) -> set:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def assigned_names(body) -> set:
    """Names a function body binds (Python scoping: function-wide), not those of nested scopes."""
    names, stack = set(), list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            continue
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.GeneratorExp, ast.DictComp, ast.SetComp)):
            continue
        if isinstance(node, ast.Assign):
            for t in node.targets:
                names |= _store_names(t)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For)):
            names |= _store_names(node.target)
        stack.extend(ast.iter_child_nodes(node))
    return names


class Function(ExprMixin):
    """Compiles one function to JS. `fn` is the Python object (top level) or None (nested)."""

    def __init__(
        self,
        program,
        node,
        globals_,
        module: str,
        qualname: str,
        js_name: str,
        owner=None,
        fn=None,
        scopes=None,
        types=None,
    ):
        self.program, self.node, self.globals, self.module = program, node, globals_, module
        self.where, self.js_name, self.owner, self.fn = f"{module}.{qualname}", js_name, owner, fn
        self.scopes = list(scopes or [])
        self.types = dict(types or {})

    @classmethod
    def from_python(cls, program, fn, js_name: str, owner=None):
        node = ast.parse(textwrap.dedent(inspect.getsource(fn))).body[0]
        if not isinstance(node, ast.FunctionDef):
            raise Unsupported(f"{fn.__qualname__}: not a plain function")
        return cls(program, node, fn.__globals__, fn.__module__, fn.__qualname__, js_name, owner, fn)

    def is_local(self, name: str) -> bool:
        return any(name in scope for scope in self.scopes)

    def emit(self, depth: int = 0) -> str:
        a = self.node.args
        if a.vararg or a.kwarg or a.posonlyargs:
            raise Unsupported(f"{self.where}: *args, **kwargs or positional-only parameters")
        params = [p.arg for p in a.args + a.kwonlyargs]
        defaults = [None] * (len(a.args) - len(a.defaults)) + list(a.defaults) + list(a.kw_defaults)
        if self.owner is not None and params:
            self.types[params[0]] = self.owner
        for p in a.args + a.kwonlyargs:
            cls = self.annotation_class(p.annotation)
            if cls is not None:
                self.types.setdefault(p.arg, cls)
        assigned = assigned_names(self.node.body) - set(params)
        self.scopes.append(set(params) | assigned)
        js_params = [local_name(p) + ("" if d is None else " = " + self.expr(d)) for p, d in zip(params, defaults)]
        body = self.node.body
        doc = ast.get_docstring(self.node)
        if doc:
            body = body[1:]
        pad = "  " * depth
        lines = [
            f"{pad}// {self.where}: {doc.splitlines()[0]}" if doc else f"{pad}// {self.where}",
            f"{pad}function {self.js_name}({', '.join(js_params)}) {{",
        ]
        defs = {d.name for d in self.node.body if isinstance(d, ast.FunctionDef)}
        if assigned - defs:
            lines.append(f"{pad}  let " + ", ".join(sorted(local_name(n) for n in assigned - defs)) + ";")
        lines += self.block(body, depth + 1)
        lines += [f"{pad}  return null;", f"{pad}}}"]
        self.scopes.pop()
        return "\n".join(lines)

    # --- statements --------------------------------------------------------------------------
    def block(self, stmts, depth: int) -> list[str]:
        pad, out = "  " * depth, []
        for stmt in stmts:
            if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                mods = ", ".join(a.name for a in stmt.names) if isinstance(stmt, ast.Import) else stmt.module
                message = json.dumps(f"{mods} (array input) is not available in the browser")
                out.append(f'{pad}throw $rt.exc("ImportError", {message});')
                break  # the rest of this block needs that module
            out += self.statement(stmt, depth)
        return out

    def statement(self, s, depth: int) -> list[str]:
        pad = "  " * depth
        if isinstance(s, ast.Expr):
            if isinstance(s.value, ast.Constant) and isinstance(s.value.value, str):
                return []
            return [f"{pad}{self.expr(s.value)};"]
        if isinstance(s, ast.FunctionDef):
            inner = Function(
                self.program,
                s,
                self.globals,
                self.module,
                f"{self.where.split('.')[-1]}.{s.name}",
                local_name(s.name),
                scopes=self.scopes,
                types=self.types,
            )
            return [inner.emit(depth)]
        if isinstance(s, ast.Assign):
            value = self.expr(s.value)
            for t in s.targets:
                self.record_type(t, s.value)
            return [f"{pad}{self.assign(t, value)};" for t in s.targets]
        if isinstance(s, ast.AnnAssign):
            cls = self.annotation_class(s.annotation)
            if cls is not None and isinstance(s.target, ast.Name):
                self.types[s.target.id] = cls
            return [] if s.value is None else [f"{pad}{self.assign(s.target, self.expr(s.value))};"]
        if isinstance(s, ast.AugAssign):
            if not isinstance(s.target, ast.Name):
                raise Unsupported(f"{self.where}: augmented assignment to {ast.unparse(s.target)}")
            load = ast.Name(s.target.id, ast.Load())
            return [f"{pad}{local_name(s.target.id)} = {self.binop(s.op, load, s.value)};"]
        if isinstance(s, ast.If):
            out = [f"{pad}if ({self.test(s.test)}) {{"] + self.block(s.body, depth + 1)
            if s.orelse:
                out += [f"{pad}}} else {{"] + self.block(s.orelse, depth + 1)
            return out + [f"{pad}}}"]
        if isinstance(s, (ast.For, ast.While)) and s.orelse:
            raise Unsupported(f"{self.where}: for/while with else")
        if isinstance(s, ast.For):
            head = f"{pad}for ({self.assign_target(s.target)} of $rt.iter({self.expr(s.iter)})) {{"
            return [head] + self.block(s.body, depth + 1) + [f"{pad}}}"]
        if isinstance(s, ast.While):
            return [f"{pad}while ({self.test(s.test)}) {{"] + self.block(s.body, depth + 1) + [f"{pad}}}"]
        if isinstance(s, (ast.Break, ast.Continue)):
            return [f"{pad}{'break' if isinstance(s, ast.Break) else 'continue'};"]
        if isinstance(s, ast.Pass):
            return []
        if isinstance(s, ast.Return):
            return [f"{pad}return {self.expr(s.value) if s.value else 'null'};"]
        if isinstance(s, ast.Raise):
            if s.exc is None:
                raise Unsupported(f"{self.where}: bare raise")
            return [f"{pad}throw {self.exception(s.exc)};"]
        if isinstance(s, ast.Assert):
            msg = self.expr(s.msg) if s.msg else '""'
            return [f'{pad}if (!({self.test(s.test)})) throw $rt.exc("AssertionError", {msg});']
        raise Unsupported(f"{self.where}, line {s.lineno}: statement {type(s).__name__}")

    def assign_target(self, t) -> str:
        if isinstance(t, ast.Name):
            return local_name(t.id)
        if isinstance(t, (ast.Tuple, ast.List)) and all(isinstance(e, ast.Name) for e in t.elts):
            return "[" + ", ".join(local_name(e.id) for e in t.elts) + "]"
        raise Unsupported(f"{self.where}: assignment target {ast.unparse(t)}")

    def assign(self, t, value: str) -> str:
        if isinstance(t, ast.Subscript):
            return f"$rt.setitem({self.expr(t.value)}, {self.expr(t.slice)}, {value})"
        if isinstance(t, (ast.Tuple, ast.List)):
            return f"{self.assign_target(t)} = $rt.unpack({value}, {len(t.elts)})"
        return f"{self.assign_target(t)} = {value}"

    # --- static types: which hwlib dataclass a local holds ------------------------------------
    def record_type(self, target, value) -> None:
        """`x = Shape(...)`, or `x = f(...)` where f is annotated `-> Shape`."""
        if not (isinstance(target, ast.Name) and isinstance(value, ast.Call)):
            return
        f = value.func
        callee = (
            None
            if isinstance(f, ast.Attribute) and self.rooted_in_local(f)
            else self.static(f, None)
            if isinstance(f, (ast.Name, ast.Attribute))
            else None
        )
        cls = callee if is_hwlib_dataclass(callee) else None
        if cls is None and callable(callee) and hasattr(callee, "__annotations__"):
            cls = self.annotation_class(callee.__annotations__.get("return"), getattr(callee, "__globals__", None))
        if cls is not None:
            self.types[target.id] = cls
        else:
            self.types.pop(target.id, None)

    def annotation_class(self, ann, globals_=None):
        if isinstance(ann, ast.AST):
            ann = ast.unparse(ann)
        if isinstance(ann, str):
            try:
                ann = eval(ann, globals_ or self.globals)  # noqa: S307 - our own annotations
            except Exception:
                return None
        return ann if is_hwlib_dataclass(ann) else None


__all__ = ["Function", "assigned_names"]
