"""hwlib against the real CuPy wheels it supports (Colab's cupy-cuda12x 14.0.1 and ours, 14.2.0), on
the CPU: `import cupy` needs no GPU or driver, so every CuPy name hwlib calls can be looked up in each
release, and what CuPy decides before it reaches the device (the bfloat16 gate) can be run for real.
The wheels are installed once into a cache by tests/real_stack.py."""

import json
import re
from pathlib import Path

import pytest

import gpu_standin as gs
import real_stack

ROOT = Path(__file__).resolve().parents[2]
# every CuPy attribute path hwlib reaches (cp./xp./bk.xp./cupy. in hwlib/**/*.py, normalised to "cupy."),
# plus what it reaches through a local (rt = cp.cuda.runtime, core = cp._core, kern = cp.RawKernel(...))
NAMES = {
    "cupy.__version__", "cupy.matmul", "cupy.float32", "cupy.int32", "cupy.int64", "cupy.uint8",
    "cupy.empty", "cupy.zeros", "cupy.ones", "cupy.full", "cupy.empty_like", "cupy.arange", "cupy.linspace",
    "cupy.asarray", "cupy.asnumpy", "cupy.multiply", "cupy.add", "cupy.fuse", "cupy.RawKernel",
    "cupy.ElementwiseKernel", "cupy.random.default_rng", "cupy.get_default_memory_pool",
    "cupy.cuda", "cupy.cuda.Device", "cupy.cuda.Device.attributes", "cupy.cuda.Device.compute_capability",
    "cupy.cuda.Device.synchronize", "cupy.cuda.Event", "cupy.cuda.Event.record", "cupy.cuda.Event.synchronize",
    "cupy.cuda.get_elapsed_time", "cupy.cuda.Stream", "cupy.cuda.Stream.begin_capture",
    "cupy.cuda.Stream.end_capture", "cupy.cuda.Stream.null", "cupy.cuda.graph.Graph.launch",
    "cupy.cuda.get_current_stream", "cupy.cuda.runtime", "cupy.cuda.runtime.getDeviceCount",
    "cupy.cuda.runtime.runtimeGetVersion", "cupy.cuda.runtime.driverGetVersion",
    "cupy.cuda.runtime.getDeviceProperties", "cupy.cuda.runtime.memcpyAsync",
    "cupy.cuda.runtime.memcpyHostToDevice", "cupy.cuda.runtime.memcpyDeviceToHost",
    "cupy.cuda.runtime.CUDARuntimeError", "cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor",
    "cupy.cuda.memory.OutOfMemoryError", "cupy.cuda.nccl", "cupy._core", "cupy._core.get_compute_type",
    "cupy._core.set_compute_type", "cupy.RawKernel.num_regs", "cupy.RawKernel.kernel",
    "cupy.RawKernel.max_threads_per_block", "cupy.ndarray.get", "cupy.ndarray.data", "cupyx.empty_pinned",
}  # fmt: skip
# Device.attributes keys hwlib.device_info reads; CuPy names them after the runtime's cudaDevAttr* enum
ATTRIBUTES = ("MemoryClockRate", "GlobalMemoryBusWidth", "MaxThreadsPerMultiProcessor", "MultiProcessorCount",
              "ClockRate", "L2CacheSize", "MaxBlocksPerMultiprocessor", "MaxRegistersPerMultiprocessor",
              "MaxThreadsPerBlock", "WarpSize")  # fmt: skip
OPTIONAL = {"cupy.cuda.nccl"}  # a wheel may ship without NCCL; hwlib.collectives says so when it is absent


def _used_names() -> set:
    pat = re.compile(r"\b(self\.bk\.xp|self\.xp|bk\.xp|xp|cp|cupy|cupyx)\.([A-Za-z_][A-Za-z0-9_.]*)")
    found = set()
    for path in (ROOT / "hwlib").rglob("*.py"):
        for head, rest in pat.findall(path.read_text()):
            found.add(("cupyx." if head == "cupyx" else "cupy.") + rest)
    return {n for n in found if not re.search(r"\.(shape|dtype|size|nbytes|T)$", n)}


def test_the_list_holds_every_name_hwlib_calls():
    """A new CuPy call in hwlib must be added to NAMES, so the lookups below cover it."""
    missing = sorted(_used_names() - NAMES)
    assert not missing, f"add to NAMES in {__file__}: {missing}"


def _lookup(stack_names) -> dict:
    code = """
import importlib, json
names, attrs = json.loads(%r)
import cupy, cupyx, cupy.cuda.graph
from cupy.cuda import runtime
def has(path):
    mod, *parts = path.split(".")
    try:
        obj = importlib.import_module(mod)
        for i, p in enumerate(parts):
            try:
                obj = getattr(obj, p)
            except AttributeError:
                obj = importlib.import_module(".".join([mod, *parts[: i + 1]]))
        return True
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
print(json.dumps({
    "version": cupy.__version__,
    "missing": {n: r for n in names if (r := has(n)) is not True},
    "attrs": [a for a in attrs if not hasattr(runtime, "cudaDevAttr" + a)],
}))
""" % json.dumps([sorted(NAMES), list(ATTRIBUTES)])
    proc = real_stack.run_with(stack_names, code)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("version", real_stack.CUPY_VERSIONS)
def test_every_cupy_name_hwlib_calls_exists(version):
    got = _lookup(f"cupy-{version}")
    assert got["version"] == version
    assert set(got["missing"]) <= OPTIONAL, got["missing"]
    assert not got["attrs"], f"Device.attributes has no {got['attrs']} in CuPy {version}"


INSTANCE_MEMBERS = {"attributes", "compute_capability", "synchronize", "record", "num_regs", "kernel",
                    "max_threads_per_block", "get", "data", "end_capture", "launch"}  # fmt: skip


def test_the_stand_in_models_the_names_real_cupy_has():
    """Every module-level name hwlib calls resolves on the stand-in too (and, above, on real CuPy), so
    the experiments meet the same API in the tests as on a GPU."""
    cp, cupyx, _ = gs.make_cupy("T4")
    for path in sorted(NAMES - OPTIONAL - {"cupy.cuda.graph.Graph.launch"}):
        obj = cupyx if path.startswith("cupyx.") else cp
        for part in path.split(".")[1:]:
            if part in INSTANCE_MEMBERS:
                break
            assert hasattr(obj, part), f"the stand-in has no {path}"
            obj = getattr(obj, part)


BF16 = """
import json, numpy, ml_dtypes, cupy
from hwlib import backend
from hwlib.bench import _common
try:
    cupy.zeros(1, dtype=ml_dtypes.bfloat16)
    how = "allocated"
except Exception as exc:
    how = type(exc).__name__ + ": " + str(exc)
bk = backend.Backend(cupy, "cupy", "real CuPy without a GPU", True)
print(json.dumps({"numpy": numpy.__version__, "zeros": how, "probe": _common.bf16_support(bk)[1]}))
"""


@pytest.mark.parametrize("numpy_stack, refused", [("numpy-2.0.2", True), (None, False)])
def test_real_cupy_refuses_bf16_exactly_where_the_stand_in_does(numpy_stack, refused):
    """CuPy 14.0.1 checks the dtype before it reaches the device: with NumPy 2.0.2 it raises
    ValueError('Unsupported dtype bfloat16'), with the test environment's NumPy (>= 2.1.2) it goes on to
    the device (here: no driver, CUDARuntimeError). The stand-in must draw the same line."""
    stacks = [numpy_stack, "cupy-14.0.1"] if numpy_stack else ["cupy-14.0.1"]
    proc = real_stack.run_with(stacks, BF16)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["zeros"].startswith("ValueError: Unsupported dtype bfloat16") is refused, got
    if refused:
        assert "NumPy >= 2.1.2" in got["probe"] and "Unsupported dtype bfloat16" in got["probe"]
    cp, _, _ = gs.make_cupy("A100", version="14.0.1", numpy_version=got["numpy"])
    import ml_dtypes

    try:
        cp.zeros(1, dtype=ml_dtypes.bfloat16)
        stand_in_refused = False
    except ValueError:
        stand_in_refused = True
    assert stand_in_refused is refused
