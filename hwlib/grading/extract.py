"""Get answers out of a learner's kernel as plain data, and nothing else.

The grader appends cells to the submission that turn each named answer into plain Python data
(None, bool, int, float, str, or lists of them) and write its `repr` to a file whose name holds a fresh
random nonce. Functions-as-answers are called inside the kernel on the check's arguments; only their
results leave. The grader reads the file back with `ast.literal_eval` (which never runs code), checks
every type again, and compares in its own process: a submission that redefines `__eq__`,
`numpy.isclose`, `json` or hwlib.grading cannot change how its answers are judged.

The injected code avoids `json` and hwlib altogether, and converts with the base-class methods
(`int.__int__`, `float.__float__`, `str.__str__`), so subclasses with odd `__repr__`s come out as
plain values. The nonce is not a secret (a `pre_run_cell` hook can see the injected source); it only
tells this run's file from anything else. No expected value is ever sent into the kernel.
"""
from __future__ import annotations

import ast
import os
import stat

MAX_FILE_BYTES = 1 << 20
MAX_ITEMS = 10_000
MAX_STR = 2_000
STATUSES = ("ok", "missing", "unsupported", "error", "not_callable")

# Runs inside the learner's kernel (injected cells and hwlib.grading.check). Plain Python only.
PLAIN_SRC = '''
class _Unsupported(Exception):
    pass

def _plain(v, depth=0):
    if v is None or v is True or v is False:
        return v
    if isinstance(v, int):
        try:
            return int.__int__(v) if -2**63 < v < 2**63 else float(int.__int__(v))
        except OverflowError:
            return "inf"
    if isinstance(v, float):
        x = float.__float__(v)
        return x if x - x == 0 else str(x)
    if isinstance(v, str):
        s = str.__str__(v)
        if len(s) > %(max_str)d:
            raise _Unsupported("str longer than %(max_str)d characters")
        return s
    if type(v).__module__ == "numpy" and hasattr(v, "item") and hasattr(v, "ndim"):
        if v.ndim == 0:
            return _plain(v.item(), depth)
        if v.ndim == 1 and depth < 3:
            v = v.tolist()
    if type(v).__name__ == "ellipsis":
        raise _Unsupported("ellipsis")
    if isinstance(v, (list, tuple)) and depth < 3:
        if len(v) > %(max_items)d:
            raise _Unsupported("list longer than %(max_items)d items")
        return [_plain(x, depth + 1) for x in v]
    raise _Unsupported(type(v).__name__)

def _entry(get):
    try:
        return {"status": "ok", "value": _plain(get())}
    except _Unsupported as exc:
        return {"status": "unsupported", "type": str(exc.args[0])[:80]}
    except BaseException as exc:
        return {"status": "error", "error": (type(exc).__name__ + ": " + str(exc))[:300]}
''' % {"max_str": MAX_STR, "max_items": MAX_ITEMS}


def plain_namespace() -> dict:
    """`_plain` and `_entry` for use in this process (the learner's self-check)."""
    ns: dict = {}
    exec(PLAIN_SRC, ns)
    return ns


def _indent(src: str) -> str:
    return "\n".join("    " + line if line else line for line in src.splitlines())


def values_cell(names, path: str, nonce: str) -> str:
    """Source of the cell that saves the named variables' values to `path`."""
    fn = f"_hwlib_extract_{nonce}"
    return f'''# hwlib grader: answer extraction {nonce}
def {fn}():
{_indent(PLAIN_SRC)}
    ns = globals()
    out = {{}}
    for name in {list(names)!r}:
        if name not in ns:
            out[name] = {{"status": "missing"}}
        else:
            out[name] = _entry(lambda: ns[name])
    with open({path!r}, "w", encoding="utf-8") as fh:
        fh.write(repr({{"nonce": {nonce!r}, "answers": out}}))
{fn}()
del {fn}
'''


def call_cell(key: str, answer: str, args, kwargs, path: str, nonce: str) -> str:
    """Source of the cell that calls the learner's function `answer(*args, **kwargs)` and saves the
    result (only the result leaves the kernel) under `key`."""
    fn = f"_hwlib_call_{nonce}"
    return f'''# hwlib grader: function answer {nonce}
def {fn}():
{_indent(PLAIN_SRC)}
    ns = globals()
    f = ns.get({answer!r}, _Unsupported)
    if f is _Unsupported:
        out = {{"status": "missing"}}
    elif not callable(f):
        out = {{"status": "not_callable", "type": type(f).__name__[:80]}}
    else:
        out = _entry(lambda: f(*{list(args or [])!r}, **{dict(kwargs or {})!r}))
    with open({path!r}, "w", encoding="utf-8") as fh:
        fh.write(repr({{"nonce": {nonce!r}, "answers": {{{key!r}: out}}}}))
{fn}()
del {fn}
'''


def _valid_value(v, depth=0) -> bool:
    if v is None or type(v) in (bool, int, float):
        return True
    if type(v) is str:
        return len(v) <= MAX_STR
    if type(v) is list and depth < 3 and len(v) <= MAX_ITEMS:
        return all(_valid_value(x, depth + 1) for x in v)
    return False


def _valid_entry(e) -> bool:
    if type(e) is not dict or type(e.get("status")) is not str or e["status"] not in STATUSES:
        return False
    if e["status"] == "ok":
        return set(e) == {"status", "value"} and _valid_value(e["value"])
    return all(type(k) is str and type(v) is str and len(v) <= 400 for k, v in e.items())


def read_answers(path, nonce: str, keys) -> dict:
    """Answers written by an extraction cell: {key: entry} for the expected keys only. A missing,
    oversized, malformed or foreign file yields {} (the answers count as not extracted)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return {}
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_FILE_BYTES:
            return {}
        text = os.read(fd, MAX_FILE_BYTES + 1).decode("utf-8", errors="strict")
        data = ast.literal_eval(text)
    except Exception:
        return {}
    finally:
        os.close(fd)
    if type(data) is not dict or data.get("nonce") != nonce or type(data.get("answers")) is not dict:
        return {}
    return {k: e for k, e in data["answers"].items() if k in set(keys) and _valid_entry(e)}
