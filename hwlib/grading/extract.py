"""Get answers out of a learner's kernel as plain data, and nothing else.

Three kinds of injected cell (the grader sends them; none holds an expected value):

1. `setup_cell`, run BEFORE the learner's first cell: keeps pristine references (the builtins, the
   modules, `os.open`/`os.write`, `_hashlib.hmac_digest`, `compile`/`exec`, the IPython shell's hooks
   and methods) in a class that later cells find through `object.__subclasses__()`, a path that
   needs no name the learner can rebind.
2. `restore_cell`, run AFTER the learner's last cell and before any hidden name or argument is sent:
   removes hooks, tracers and patched kernel methods and puts back replaced builtins and modules,
   so an IPython hook cannot read the extraction cells that follow (what it undid is reported).
3. `values_cell` / `call_cell`: turn one named answer into plain Python data (None, bool, int,
   float, str, or lists of them); a function answer is called on the check's arguments inside the
   kernel and only its result leaves. The code runs with the pristine builtins, so a notebook that
   replaced `open`, `repr`, `isinstance` or `json` changes nothing; the record is written with
   `os.open(O_EXCL)` and authenticated with HMAC-SHA256 under a key made for that one cell and
   sent only in it, after the learner's cells have finished.

The grader reads a record back with `ast.literal_eval` (never runs code), accepts it only when the
tag verifies with that cell's key, the nonce is this run's and the cell itself finished without an
error, checks every type again, and compares in its own process.

Limits (see README, "What it does not protect against"): code in the kernel that deliberately
searches the interpreter for the grader's snapshot, an audit hook (`sys.addaudithook` cannot be
removed) or a thread left running can still alter what its own kernel reports. What it gains is at
most the value it already knows: expected values never enter the kernel, and one cell's key cannot
authenticate another check's record.
"""

from __future__ import annotations

import ast
import hashlib
import hmac
import os
import secrets
import stat

MAX_FILE_BYTES = 1 << 20
MAX_ITEMS = 10_000
MAX_STR = 2_000
STATUSES = ("ok", "missing", "unsupported", "error", "not_callable")

# Runs inside the learner's kernel (extraction cells and hwlib.grading.check). Plain Python only.
PLAIN_SRC = """
class _Unsupported(Exception):
    pass

def _plain(v, depth=0):
    if v is None or v is True or v is False:
        return v
    if depth > 6:
        raise _Unsupported("nested too deeply")
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
    numpyish = type(v).__module__ == "numpy" or any(
        c.__module__ == "numpy" and c.__name__ == "generic" for c in type(v).__mro__
    )  # numpy scalars and arrays, and scalars of numpy's extension types (ml_dtypes.bfloat16, float8, int4)
    if numpyish and hasattr(v, "item") and hasattr(v, "ndim"):
        if v.ndim == 0:
            item = v.item()
            if type(item) is type(v):          # np.longdouble, np.clongdouble: .item() is itself
                try:
                    item = float(v)
                except Exception:
                    raise _Unsupported(type(v).__name__) from None
            return _plain(item, depth + 1)
        if v.ndim == 1 and depth < 3:
            v = v.tolist()
    if type(v).__name__ == "ellipsis":
        raise _Unsupported("ellipsis")
    if isinstance(v, (list, tuple)) and depth < 3:
        if len(v) > %(max_items)d:
            raise _Unsupported("list longer than %(max_items)d items")
        return [_plain(x, depth + 1) for x in list(v)]
    raise _Unsupported(type(v).__name__)

def _text(x, n):
    try:
        s = str(x)
        return str.__str__(s)[:n] if isinstance(s, str) else "?"
    except BaseException:
        return "?"

def _entry(get):
    try:
        return {"status": "ok", "value": _plain(get())}
    except _Unsupported as exc:
        return {"status": "unsupported", "type": _text(exc.args[0], 80)}
    except BaseException as exc:
        return {"status": "error", "error": (_text(type(exc).__name__, 80) + ": " + _text(exc, 200))[:300]}
""" % {"max_str": MAX_STR, "max_items": MAX_ITEMS}

# The snapshot, taken before any learner code runs. NS: the notebook's namespace; NAME: the class.
_SETUP_SRC = r"""
import builtins, sys, os, threading, _hashlib
try:
    ip = get_ipython()
except NameError:
    ip = None
def _classes(obj):
    return [(c, dict(c.__dict__)) for c in type(obj).__mro__ if c is not object]
S = {"builtins_mod": builtins, "builtins": dict(builtins.__dict__),
     "modules": {k: m for k, m in sys.modules.items() if k != NAME},   # never "restore" an older stash
     "sys": sys, "threading": threading, "user_ns": NS, "ip": ip,
     "os_open": os.open, "os_write": os.write, "os_close": os.close, "os_chmod": os.chmod,
     "flags": os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0),
     "hmac": _hashlib.hmac_digest, "compile": compile, "exec": exec,
     "hooks": (sys.displayhook, sys.excepthook, sys.breakpointhook), "classes": [], "lists": {},
     "events": {}, "inst": {}, "events_obj": None}
if ip is not None:
    S["classes"] = _classes(ip) + (_classes(ip.kernel) if getattr(ip, "kernel", None) else [])
    S["events_obj"] = ip.events
    S["events"] = {k: list(v) for k, v in ip.events.callbacks.items()}
    for name in ("input_transformers_cleanup", "input_transformers_post", "ast_transformers"):
        if isinstance(getattr(ip, name, None), list):
            S["lists"][name] = list(getattr(ip, name))
    kernel = getattr(ip, "kernel", ip)
    S["inst"] = {id(ip): (ip, set(vars(ip))), id(kernel): (kernel, set(vars(kernel)))}
# Everything an extraction cell's source passes through on its way to `exec` (zmq, the session, the
# kernel's handlers, the shell, its compiler and transformers, ast, codeop ...): the callables of the
# machinery's modules, the dicts of their classes, and the callables, machinery objects and handler
# tables held by machinery instances reachable from the shell (instance dicts and traitlets values).
_MACH = ("IPython", "ipykernel", "jupyter_client", "jupyter_core", "traitlets", "zmq", "tornado", "comm",
         "asyncio", "codeop", "ast", "json", "inspect", "types", "functools", "io", "os", "posix", "hmac",
         "hashlib", "_hashlib", "sys", "threading", "_thread", "codecs", "pickle", "copy", "re", "struct",
         "selectors", "select", "socket", "signal", "time", "uuid", "contextlib", "weakref", "gc", "traceback",
         "linecache", "tokenize", "dis", "warnings", "logging", "queue", "atexit", "builtins", "_io")
def _mach(name):
    return isinstance(name, str) and (name in _MACH or name.split(".", 1)[0] in _MACH)
# Not restored: the namespaces (the learner's own), state the kernel changes per cell (IPython wraps
# stream.write in each run_cell; ipykernel sets builtins.input per request), hooks handled apart.
_SKIP = ("user_ns", "user_global_ns", "user_ns_hidden", "ns_table", "user_module", "_main_mod_cache", "db",
         "write", "displayhook", "excepthook", "breakpointhook", "unraisablehook", "input", "raw_input",
         "get_ipython", "display", "exit", "quit", "_", "__", "___")
_SHELL = ("IPython", "ipykernel", "jupyter_client", "zmq", "traitlets", "comm")
def _obj_mach(v):
    # an instance of the shell's machinery (not a class or module): walked, and put back if swapped
    m = getattr(type(v), "__module__", None)
    return not isinstance(v, (type, type(sys))) and isinstance(m, str) and m.split(".", 1)[0] in _SHELL
def _fn(v):
    return callable(v) and not isinstance(v, type)
def _changed(v, cur):
    # a value the restore puts back: a callable replaced, or a machinery object of another type
    return cur is not v and (_fn(v) or _fn(cur) or (_obj_mach(v) and type(cur) is not type(v)))
S["mods"], S["cls"], S["objs"] = [], [], []
S["changed"], S["skip"], S["fn"] = _changed, _SKIP, _fn
_seen_cls = set()
for _k, _m in list(sys.modules.items()):
    if _m is None or not _mach(_k) or _k == NAME:
        continue
    try:
        _d = vars(_m)
    except TypeError:
        continue
    S["mods"].append((_m, {k: v for k, v in _d.items() if callable(v) and k not in _SKIP}))
    for _v in list(_d.values()):
        if isinstance(_v, type) and id(_v) not in _seen_cls and _mach(getattr(_v, "__module__", None)):
            _seen_cls.add(id(_v))
            S["cls"].append((_v, dict(_v.__dict__)))
def _state(o):
    out = {}
    for src in (getattr(o, "__dict__", None), getattr(o, "_trait_values", None)):
        if isinstance(src, dict):
            out[id(src)] = (src, dict(src))
    return out
_todo, _done_ids = [(ip, 0)] if ip is not None else [], set()
while _todo:
    _o, _depth = _todo.pop()
    if id(_o) in _done_ids or len(_done_ids) > 3000:
        continue
    _done_ids.add(id(_o))
    st = _state(_o)
    S["objs"].append((_o, st))
    for src, saved in st.values():
        for k, v in saved.items():
            if k in _SKIP:
                continue
            if type(v) is dict and v and all(callable(x) for x in v.values()):
                S["objs"].append((v, {id(v): (v, dict(v))}))
            elif _obj_mach(v) and _depth < 3:
                _todo.append((v, _depth + 1))
sys.modules[NAME] = type(NAME, (), {"S": S})   # a strong reference, added after the snapshot
if "" not in sys.path:
    sys.path.insert(0, "")   # the kernel started without its folder on the path; the learner's cells get it
"""

# Runs with the pristine builtins; returns the list of what had been changed (tamper evidence).
_RESTORE_SRC = r"""
_LIBS = ("matplotlib", "IPython", "ipykernel", "ipywidgets")

def _same(a, b):
    return type(a) is list and len(a) == len(b) and all(x is y for x, y in zip(a, b))

def _put_back(done):
    # callables of the machinery's modules, its classes' dicts, and the machinery instances'
    # callables, objects and handler tables, as they were when the setup cell ran
    for m, saved in S["mods"]:
        d = m.__dict__
        for k, v in saved.items():
            if d.get(k, d) is not v:
                d[k] = v
                done.append(str(m.__name__) + "." + k)
    for cls, saved in S["cls"]:
        now = cls.__dict__
        for k, v in saved.items():
            if now.get(k, now) is not v:
                try:
                    type.__setattr__(cls, k, v)
                    done.append(cls.__name__ + "." + k)
                except BaseException:
                    pass
        for k in [k for k in now if k not in saved and callable(now[k])]:
            try:
                type.__delattr__(cls, k)
                done.append(cls.__name__ + "." + k + " (added)")
            except BaseException:
                pass
    for obj, states in S["objs"]:
        for src, saved in states.values():
            for k, v in saved.items():
                cur = src.get(k, src)
                if k not in S["skip"] and S["changed"](v, cur):
                    src[k] = v
                    done.append(type(obj).__name__ + "." + str(k))
            if type(obj) is dict:
                for k in [k for k in src if k not in saved]:
                    del src[k]
                    done.append("handler " + str(k) + " (added)")
            else:
                for k in [k for k in src if k not in saved and S["fn"](src[k]) and k not in S["skip"]]:
                    del src[k]
                    done.append("instance attribute " + str(k))

def _restore():
    done = []
    sys, th = S["sys"], S["threading"]
    _put_back(done)
    try:
        if sys.gettrace() is not None or sys.getprofile() is not None:
            done.append("a trace or profile function")
        sys.settrace(None); sys.setprofile(None); th.settrace(None); th.setprofile(None)
    except BaseException:
        done.append("tracing could not be reset")
    if (sys.displayhook, sys.excepthook, sys.breakpointhook) != S["hooks"]:
        done.append("sys hooks")
        sys.displayhook, sys.excepthook, sys.breakpointhook = S["hooks"]
    bd = S["builtins_mod"].__dict__
    for k, v in S["builtins"].items():
        if k in ("_", "__", "___") or k.startswith("_i"):
            continue
        if bd.get(k, bd) is not v and k not in ("exit", "quit", "get_ipython", "display", "input", "raw_input"):
            done.append("builtins." + k)
            bd[k] = v
    mods = sys.modules
    for k, m in S["modules"].items():
        if mods.get(k) is not m:
            done.append("sys.modules[" + repr(k) + "]")
            mods[k] = m
    ip = S["ip"]
    if ip is None:
        return done
    for cls, saved in S["classes"]:
        now = cls.__dict__
        for k, v in saved.items():
            if now.get(k, now) is not v:
                try:
                    setattr(cls, k, v)
                    done.append(cls.__name__ + "." + k)
                except BaseException:
                    pass
    for obj, keys in S["inst"].values():
        d = vars(obj)
        for k in [k for k in d if k not in keys and callable(d[k]) and hasattr(type(obj), k)]:
            del d[k]
            done.append("instance attribute " + k)
    if getattr(ip, "events", None) is not S["events_obj"]:
        done.append("IPython events")
        try:
            ip.events = S["events_obj"]
        except BaseException:
            pass
    cb = S["events_obj"].callbacks
    for k in list(cb):
        if not _same(cb[k], S["events"].get(k, [])):
            added = [f for f in cb[k] if not any(f is g for g in S["events"].get(k, []))]
            if any(not str(getattr(f, "__module__", "")).startswith(_LIBS) for f in added):
                done.append("IPython event " + k)      # matplotlib's own redraw hook is not news
            cb[k][:] = S["events"].get(k, [])
    for name, saved in S["lists"].items():
        cur = getattr(ip, name, None)
        if not isinstance(cur, list) or not _same(cur, saved):
            done.append("IPython " + name)
            try:
                setattr(ip, name, list(saved))
            except BaseException:
                pass
    return done
"""

_RECORD_SRC = r"""
def _record(answers, restored):
    text = repr({"nonce": A["nonce"], "answers": answers, "restored": restored[:40]})
    data = text.encode("utf-8")
    tag = S["hmac"](A["key"], data, "sha256").hex()
    try:
        S["os_chmod"](A["path"].rsplit("/", 1)[0], 0o700)   # the notebook may have made it read-only
    except BaseException:
        pass
    fd = S["os_open"](A["path"], S["flags"], 0o600)
    try:
        S["os_write"](fd, tag.encode("ascii") + b"\n" + data)
    finally:
        S["os_close"](fd)
"""

_VALUES_BODY = r"""
restored = _restore()
ns, out = S["user_ns"], {}
for name in A["names"]:
    if not dict.__contains__(ns, name):
        out[name] = {"status": "missing"}
    else:
        out[name] = _entry(lambda: dict.__getitem__(ns, name))
_record(out, restored)
"""

_CALL_BODY = r"""
restored = _restore()
ns = S["user_ns"]
f = dict.get(ns, A["answer"], _Unsupported)
if f is _Unsupported:
    out = {"status": "missing"}
elif not callable(f):
    out = {"status": "not_callable", "type": _text(type(f).__name__, 80)}
else:
    out = _entry(lambda: f(*A["args"], **A["kwargs"]))
    restored += _restore()        # the function itself may have patched something
_record({A["key_name"]: out}, restored)
"""

# The only code an injected cell runs in the notebook's namespace: literals and attribute lookups on
# built-in types (which Python code cannot change), then `exec` from the snapshot.
_LAUNCH = (
    '(lambda T: (lambda S: S["exec"](S["compile"]({body!r}, "<hwlib grader>", "exec"), '
    '{{"__builtins__": S["builtins"], "S": S, "A": {args!r}}}))('
    '[T.__dict__["__dict__"].__get__(c)["S"] for c in ().__class__.__base__.__subclasses__() '
    'if T.__dict__["__name__"].__get__(c) == {name!r}][0]))(().__class__.__class__)'
)


def new_key() -> bytes:
    return secrets.token_bytes(32)


def stash_name(nonce: str) -> str:
    return f"_HwlibGraderStash_{nonce}"


def setup_cell(nonce: str) -> str:
    """Source of the cell that runs before the learner's first cell (no secrets in it)."""
    return (
        f"# hwlib grader: setup {nonce}\n"
        f"exec(compile({_SETUP_SRC!r}, '<hwlib grader setup>', 'exec'), "
        f"{{'__builtins__': __builtins__, 'NS': globals(), 'NAME': {stash_name(nonce)!r}}})\n"
    )


def _launch(comment: str, body: str, args: dict, nonce: str) -> str:
    src = PLAIN_SRC + _RESTORE_SRC + _RECORD_SRC + body
    return f"# hwlib grader: {comment} {nonce}\n" + _LAUNCH.format(body=src, args=args, name=stash_name(nonce)) + "\n"


def restore_cell(path: str, nonce: str, key: bytes) -> str:
    """Source of the cell that undoes the notebook's hooks and patches before answers are read."""
    return _launch("restore the kernel", _VALUES_BODY, {"names": [], "path": path, "nonce": nonce, "key": key}, nonce)


def values_cell(names, path: str, nonce: str, key: bytes) -> str:
    """Source of the cell that saves the named variables' values to `path`."""
    return _launch(
        "answer extraction", _VALUES_BODY, {"names": list(names), "path": path, "nonce": nonce, "key": key}, nonce
    )


def call_cell(key_name: str, answer: str, args, kwargs, path: str, nonce: str, key: bytes) -> str:
    """Source of the cell that calls the learner's function `answer(*args, **kwargs)` and saves the
    result (only the result leaves the kernel) under `key_name`."""
    return _launch(
        "function answer",
        _CALL_BODY,
        {
            "key_name": key_name,
            "answer": answer,
            "args": list(args or []),
            "kwargs": dict(kwargs or {}),
            "path": path,
            "nonce": nonce,
            "key": key,
        },
        nonce,
    )


def plain_namespace() -> dict:
    """`_plain` and `_entry` for use in this process (the learner's self-check)."""
    ns: dict = {}
    exec(PLAIN_SRC, ns)
    return ns


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


def read_record(path, nonce: str, key: bytes, keys) -> tuple[dict, list] | None:
    """({key: entry}, restored) from an extraction cell's record, or None when the file is missing,
    not a regular file, oversized, malformed, from another run or not authenticated by `key`."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_FILE_BYTES:
            return None
        raw = os.read(fd, MAX_FILE_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    tag, _, data = raw.partition(b"\n")
    want = hmac.new(key, data, hashlib.sha256).hexdigest().encode("ascii")
    if not hmac.compare_digest(tag, want):
        return None
    try:
        rec = ast.literal_eval(data.decode("utf-8", errors="strict"))
    except Exception:
        return None
    if (
        type(rec) is not dict
        or rec.get("nonce") != nonce
        or type(rec.get("answers")) is not dict
        or type(rec.get("restored")) is not list
    ):
        return None
    answers = {k: e for k, e in rec["answers"].items() if k in set(keys) and _valid_entry(e)}
    restored = [str(r)[:120] for r in rec["restored"] if type(r) is str][:40]
    return answers, restored
