"""Run E1-E9 at test sizes on the NumPy path and on the CuPy stand-in (as a T4 with Colab's CuPy
14.0.1), in whatever Python and NumPy run this script, and print one JSON line: per backend, per
experiment, its status and reason, plus the bf16 row of E7. Used by tests/install/test_colab_matrix.py under
Colab's pinned stacks (Python 3.13; NumPy 2.1.3 and 2.0.2)."""

import json
import os
import platform
import sys


class Patch:
    """The two monkeypatch methods gpu_standin.install and bench_small.shrink use, without pytest."""

    def __init__(self):
        self.undo = []

    def setitem(self, d, k, v):
        self.undo.append((d.__setitem__, k, d.get(k)) if k in d else (lambda k, _v, d=d: d.pop(k, None), k, None))
        d[k] = v

    def setattr(self, obj, name, value):
        self.undo.append((lambda n, v, o=obj: setattr(o, n, v), name, getattr(obj, name)))
        setattr(obj, name, value)

    def close(self):
        for fn, k, v in reversed(self.undo):
            fn(k, v)


def summary(run) -> dict:
    out = {}
    for name, rec in run["records"].items():
        out[name] = {"status": rec["status"], "reason": rec.get("reason")}
        if name == "formats":
            out[name]["bf16"] = next((r for r in rec["results"] if r["format"] == "bf16"), None)
    return out


def main() -> None:
    import numpy as np

    import bench_small
    import gpu_standin as gs
    from hwlib import backend, bench

    result = {"python": platform.python_version(), "numpy": np.__version__}
    os.environ["HWLIB_BACKEND"] = "numpy"
    backend._cache.clear()
    mp = Patch()
    bench_small.shrink(mp, bench_small.GPU_SMALL)
    result["numpy_path"] = summary(bench.run_all(backend.get()))
    os.environ.pop("HWLIB_BACKEND")
    bk, _ = gs.install(mp, "T4", version="14.0.1")
    result["standin_t4"] = summary(bench.run_all(bk))
    mp.close()
    print(json.dumps(result, default=str))


if __name__ == "__main__":
    sys.exit(main())
