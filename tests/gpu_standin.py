"""A CuPy stand-in that can fail like a GPU: NumPy arrays underneath, a simulated device clock on top.

Not a GPU emulator: it models the things that decide whether hwlib.bench measures a real GPU right.

* Devices with their real numbers (PROFILES: T4 sm_75, A10 sm_86, L4 sm_89, A100 sm_80, H200 sm_90):
  SM count, L2 size, threads / blocks / registers per SM, memory clock and bus width, DRAM and L2
  bandwidth, FP32 and tensor-core peaks.
* Asynchronous launches: every launch costs the host `host_cost_s` and queues `work` seconds on a
  simulated device timeline; events read that timeline. So when the work per launch is shorter than
  the host cost, events measure the host, as on a real GPU. The host's clock is simulated too
  (HostClock, in place of time.perf_counter while installed): it advances by the modelled host costs
  and waits only, so a loaded test machine cannot turn a device-bound point launch-bound.
* An L2 model: an array touched again before more than L2 bytes of other data went through is a
  hit (L2 bandwidth), otherwise DRAM bandwidth. Raw kernels with a `reps` argument repeat their
  traversal; grids that are not whole waves of resident blocks pay for the partial wave.
* Registers per kernel and architecture as the real NVRTC makes them (hwlib/data/kernel_registers.yaml,
  written by tests/nvrtc_build.py) and the driver's occupancy query, so launch shapes can be checked.
* Little's law for the raw kernels: a memory rate is at most the bytes in flight / the memory's
  latency, with the loads in flight per thread read from the kernel source as compiled (STREAM: UNROLL
  loads per input array when stream.cu batches them, else 1; read_ilp: ILP with `#pragma unroll 1`,
  else 4 x ILP up to 16 - what the compiler's unrolling gave in sm_90 SASS) and the resident threads.
* What real CuPy refuses (cupy_backends/cuda/libs/cublas.pyx, cupy/_core): any cuBLAS call during
  stream capture (NotImplementedError), capture on the default stream (cudaErrorStreamCaptureUnsupported),
  bfloat16 on CuPy < 14 or with NumPy < 2.1.2 (ValueError: Unsupported dtype bfloat16); and pageable
  host copies block the host until they finish (cudaMemcpyAsync from pageable memory is synchronous).
* Failures: a CuPy without bfloat16 (version 13), out-of-memory against `memory_bytes`, CUDA errors
  raised by named kernels or operations, and a PyTorch that imports but fails (`fake_torch`).
* CUDA graphs: stream capture records launches; one graph launch costs one small host cost.

Kernels that hwlib launches by name are emulated where tests check values (STREAM kernels on up to
2^16 elements); the others (roofline, divergence, occupancy probes) only cost simulated time.
Matmuls compute for operands of up to 2^18 elements, copies up to 64 KiB; larger ones are timed, not
computed, so the host's cost of a launch stays the modelled one.
"""

from __future__ import annotations

import ctypes
import math
import re
import time
import types
import weakref
from collections import OrderedDict

import numpy as np

# name, cc, SMs, L2, threads/SM, blocks/SM, regs/SM, mem clock kHz, bus bits, memory, DRAM B/s, L2 B/s,
# fp32 FLOP/s, fp16 tensor FLOP/s  (vendor datasheets / CUDA deviceQuery; DRAM and L2 rates are
# ~90 % of peak and published microbenchmarks, leads only); fp64 FLOP/s (T4 1/32 of fp32, GA102/AD104
# (A10, L4) 1/64, A100 9.7 and H200 34 TFLOP/s: vendor datasheets); pinned / pageable host-copy B/s
# (PCIe 3 x16 on a T4, 4 on A10/L4/A100, 5 on the H200: ~75-80 % of the link, pageable about half or
# less); bf16_tensor (Turing has no bf16 tensor cores); latency: DRAM load latency in seconds
# (published pointer-chase microbenchmarks, ~480-620 ns, leads only). H200 L2: 50 MiB (deviceQuery).
PROFILES = {
    "T4": dict(
        name=b"Tesla T4",
        cc="75",
        sms=40,
        l2=4 << 20,
        threads_per_sm=1024,
        blocks_per_sm=16,
        regs_per_sm=65536,
        mem_khz=5_001_000,
        bus=256,
        memory=15_828_320_256,
        dram=2.9e11,
        l2_bw=1.3e12,
        fp32=8.1e12,
        tensor=6.5e13,
        fp64=2.5e11,
        pinned=12.0e9,
        pageable=6.0e9,
        bf16_tensor=False,
        latency=480e-9,
    ),
    "A10": dict(
        name=b"NVIDIA A10",
        cc="86",
        sms=72,
        l2=6 << 20,
        threads_per_sm=1536,
        blocks_per_sm=16,
        regs_per_sm=65536,
        mem_khz=6_251_000,
        bus=384,
        memory=23_836_229_632,
        dram=5.4e11,
        l2_bw=2.0e12,
        fp32=3.1e13,
        tensor=1.25e14,
        fp64=4.9e11,
        pinned=24.0e9,
        pageable=10.0e9,
        bf16_tensor=True,
        latency=520e-9,
    ),
    "L4": dict(
        name=b"NVIDIA L4",
        cc="89",
        sms=58,
        l2=48 << 20,
        threads_per_sm=1536,
        blocks_per_sm=24,
        regs_per_sm=65536,
        mem_khz=6_251_000,
        bus=192,
        memory=23_034_920_960,
        dram=2.7e11,
        l2_bw=1.6e12,
        fp32=3.0e13,
        tensor=1.21e14,
        fp64=4.7e11,
        pinned=24.0e9,
        pageable=10.0e9,
        bf16_tensor=True,
        latency=520e-9,
    ),
    "A100": dict(
        name=b"NVIDIA A100-SXM4-80GB",
        cc="80",
        sms=108,
        l2=40 << 20,
        threads_per_sm=2048,
        blocks_per_sm=32,
        regs_per_sm=65536,
        mem_khz=1_593_000,
        bus=5120,
        memory=85_031_714_816,
        dram=1.8e12,
        l2_bw=5.0e12,
        fp32=1.95e13,
        tensor=3.12e14,
        fp64=9.7e12,
        pinned=24.0e9,
        pageable=10.0e9,
        bf16_tensor=True,
        latency=560e-9,
    ),
    "H200": dict(
        name=b"NVIDIA H200",
        cc="90",
        sms=132,
        l2=50 << 20,
        threads_per_sm=2048,
        blocks_per_sm=32,
        regs_per_sm=65536,
        mem_khz=3_201_000,
        bus=6144,
        memory=150_110_011_392,
        dram=4.3e12,
        l2_bw=1.0e13,
        fp32=6.7e13,
        tensor=9.9e14,
        fp64=3.4e13,
        pinned=50.0e9,
        pageable=18.0e9,
        bf16_tensor=True,
        latency=620e-9,
    ),
}
LARGE = 1 << 22  # arrays of more elements are timed, not computed (ufuncs, astype, random normals)
L2_LATENCY_S = 200e-9  # an L2 hit, all parts (published microbenchmarks: ~150-270 ns)


def _register_table() -> dict:
    from pathlib import Path

    import yaml

    path = Path(__file__).resolve().parents[1] / "hwlib" / "data" / "kernel_registers.yaml"
    return yaml.safe_load(path.read_text())["registers"]


REGISTERS = _register_table()  # kernel -> compile option ('' for none) -> sm_XX -> registers per thread


def _version(text) -> tuple:
    return tuple(int(x) for x in re.findall(r"\d+", str(text))[:3])


class CUDARuntimeError(RuntimeError):
    """Stands in for cupy_backends.cuda.api.runtime.CUDARuntimeError."""


class OutOfMemoryError(MemoryError):
    """Stands in for cupy.cuda.memory.OutOfMemoryError (a MemoryError, as in CuPy)."""


class HostClock:
    """The host's time as the stand-in models it: it advances only by the modelled host costs and
    waits, never by how busy the machine running the tests is, so launch-bound decisions are the same
    on a loaded 2-core runner as on an idle one. install() puts `now` in place of time.perf_counter."""

    def __init__(self):
        self.t = time.perf_counter()

    def now(self) -> float:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += max(0.0, float(seconds))

    def wait_until(self, when: float) -> None:
        self.t = max(self.t, when)


class Device:
    """The simulated GPU: a timeline, an L2 model, memory accounting, counters."""

    def __init__(self, profile, host_cost_s, graph_cost_s, memory_bytes, fail):
        self.p = dict(PROFILES[profile]) if isinstance(profile, str) else dict(profile)
        self.host_cost_s, self.graph_cost_s = host_cost_s, graph_cost_s
        self.memory_bytes = memory_bytes or self.p["memory"]
        self.allocated = 0
        self.fail = dict(fail or {})
        self.busy_until = 0.0
        self.lru: OrderedDict = OrderedDict()
        self.capturing = None  # list of queued works while a stream captures
        self.launches = []  # (name, grid, block, args kinds, options)
        self.blocking_calls = 0  # host waits inside operations (e.g. a blocking .get())
        self.graph_launches = 0
        self.copies = []  # (operation, pinned) per host <-> device copy
        self.clock = HostClock()

    # --- memory --------------------------------------------------------------------------------
    def alloc(self, arr):
        nbytes = int(arr.nbytes)
        if self.allocated + nbytes > self.memory_bytes:
            raise OutOfMemoryError(
                f"Out of memory allocating {nbytes:,} bytes (allocated so far: {self.allocated:,} bytes)."
            )
        self.allocated += nbytes
        weakref.finalize(arr, self._free, nbytes)
        return arr

    def _free(self, nbytes):
        self.allocated -= nbytes

    # --- time ----------------------------------------------------------------------------------
    def bandwidth(self, arrays, inflight=None) -> float:
        """Seconds to stream `arrays` once, from L2 where each was touched recently, else DRAM; with
        `inflight` bytes of loads outstanding, at most inflight / latency (Little's law)."""
        total = 0.0
        for a in arrays:
            key = (int(a.__array_interface__["data"][0]), int(a.nbytes))
            since, hit = 0, False
            if key in self.lru:
                keys = list(self.lru)
                since = sum(self.lru[k] for k in keys[keys.index(key) + 1 :])
                hit = since + a.nbytes <= self.p["l2"]
                self.lru.pop(key)
            self.lru[key] = int(a.nbytes)
            while len(self.lru) > 64:
                self.lru.popitem(last=False)
            rate = self.p["l2_bw"] if hit else self.p["dram"]
            if inflight:
                rate = min(rate, inflight / (L2_LATENCY_S if hit else self.p["latency"]))
            total += a.nbytes / rate
        return total

    def launch(self, name, work_s, host_cost=None):
        if name in self.fail:
            raise self.fail[name]
        self.clock.advance(self.host_cost_s if host_cost is None else host_cost)
        work_s = max(float(work_s), 1.5e-6)  # a kernel never takes less than ~1.5 us on the device
        if self.capturing is not None:
            self.capturing.append(work_s)
            return
        start = max(self.clock.now(), self.busy_until)
        self.busy_until = start + work_s

    def copy(self, name, nbytes, pinned):
        """A host <-> device copy: asynchronous from pinned memory; from pageable memory the driver
        stages it through a bounce buffer and the host waits until it is done (synchronous)."""
        self.copies.append((name, pinned))
        self.launch(name, nbytes / self.p["pinned" if pinned else "pageable"])
        if not pinned and self.capturing is None:
            self.blocking_calls += 1
            self.clock.wait_until(self.busy_until)

    def run_graph(self, works):
        self.clock.advance(self.graph_cost_s)
        self.graph_launches += 1
        start = max(self.clock.now(), self.busy_until)
        self.busy_until = start + sum(works)

    def now_on_device(self) -> float:
        return max(self.clock.now(), self.busy_until)

    def wave_factor(self, name, grid, block, options=()) -> float:
        """Partial-wave penalty: ceil(waves) / waves for a grid of equal blocks."""
        resident = self.p["sms"] * occupancy_blocks(self, name, block, options)
        waves = grid / max(1, resident)
        return math.ceil(waves) / waves if waves > 0 else 1.0


def registers(dev, name, options=()) -> int:
    """Registers per thread of kernel `name` built with `options` for this device's architecture
    (the nearest lower one in the table, as a newer GPU runs an older build)."""
    table = REGISTERS[name]
    define = " ".join(o for o in options if o.startswith("-D"))
    row = table.get(define) or table[next(iter(table))]
    cc = int(dev.p["cc"])
    return row[str(max((int(a) for a in row if int(a) <= cc), default=min(int(a) for a in row)))]


def occupancy_blocks(dev, name, block, options=()) -> int:
    """Resident blocks per SM: the smallest of the thread, block and register limits (256-register
    allocation granularity per warp, as the CUDA occupancy calculator counts)."""
    regs = registers(dev, name, options)
    per_warp = math.ceil(regs * 32 / 256) * 256
    warps = dev.p["regs_per_sm"] // per_warp
    by_regs = warps // max(1, block // 32)
    return max(0, min(dev.p["blocks_per_sm"], dev.p["threads_per_sm"] // block, by_regs))


def make_cupy(
    profile="H200",
    *,
    version="14.2.0",
    numpy_version=None,
    bf16=None,
    host_cost_s=10e-6,
    graph_cost_s=4e-6,
    memory_bytes=None,
    fail=None,
    compute_limit=1 << 25,
    **attr_overrides,
):
    """(cupy module, cupyx module, Device). `fail`: {operation or kernel name: exception} raised at
    launch; operation names: "matmul", "alloc", ElementwiseKernel / RawKernel names. attr_overrides
    replace device attributes (e.g. MemoryClockRate=0). bf16 (None: as real CuPy decides - CuPy >= 14
    with NumPy >= 2.1.2; numpy_version defaults to the NumPy running the tests) forces bfloat16 on or off."""
    dev = Device(profile, host_cost_s, graph_cost_s, memory_bytes, fail)
    p = dev.p
    if bf16 is None:
        bf16 = _version(version) >= (14,) and _version(numpy_version or np.__version__) >= (2, 1, 2)
    bf16_dtype = None
    try:
        import ml_dtypes

        bf16_dtype = np.dtype(ml_dtypes.bfloat16)
    except ImportError:
        pass

    def check_dtype(dtype):
        if dtype is not None and not bf16 and bf16_dtype is not None and np.dtype(dtype) == bf16_dtype:
            raise ValueError(f"Unsupported dtype {np.dtype(dtype)}")  # CuPy 13, or CuPy 14 on NumPy < 2.1.2

    class DevArray(np.ndarray):
        """A 'device' array: NumPy memory, CuPy's .get/.set and .data.ptr."""

        @property
        def data(self):
            return types.SimpleNamespace(ptr=int(self.__array_interface__["data"][0]))

        def set(self, arr, stream=None):
            dev.copy("set", arr.nbytes, pinned=False)
            np.copyto(np.asarray(self), arr)

        def get(self, stream=None, order="C", out=None, blocking=True):
            if blocking:
                dev.blocking_calls += 1  # cupy.ndarray.get synchronizes the stream by default
            dev.copy("get", self.nbytes, pinned=False)
            if out is None:
                return np.array(np.asarray(self))
            np.copyto(out, np.asarray(self))
            return out

        def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
            """Every ufunc on device arrays is one kernel launch (a + b, x * 2, ...), as in CuPy."""
            plain = [np.asarray(x) if isinstance(x, DevArray) else x for x in inputs]
            outs = tuple(np.asarray(o) if isinstance(o, DevArray) else o for o in out) if out else None
            arrays = [x for x in tuple(inputs) + tuple(out or ()) if isinstance(x, np.ndarray)]
            dev.launch(ufunc.__name__, dev.bandwidth(arrays))
            if max(a.size for a in arrays) > LARGE and method == "__call__" and ufunc.nout == 1:
                if out:  # large: timed, not computed (the host cost stays the launch cost)
                    return out[0]
                shape = np.broadcast_shapes(*[np.shape(x) for x in inputs])
                return wrap(np.empty(shape, dtype=np.result_type(*plain)))
            with np.errstate(all="ignore"):  # a GPU raises no floating-point warnings
                res = getattr(ufunc, method)(*plain, **({"out": outs} if outs else {}), **kwargs)
            if out:
                return out[0] if len(out) == 1 else out
            return res.view(DevArray) if isinstance(res, np.ndarray) else res

        def astype(self, dtype, *args, **kwargs):
            check_dtype(dtype)
            if self.size > LARGE:  # timed, not computed
                dev.launch("astype", dev.bandwidth([self]))
                return wrap(np.empty(self.shape, dtype=dtype))
            return wrap(np.asarray(self).astype(dtype, *args, **kwargs))

    def wrap(arr):
        arr = np.asarray(arr)
        if "alloc" in dev.fail:
            raise dev.fail["alloc"]
        check_dtype(arr.dtype)
        return dev.alloc(arr.view(DevArray))

    def creator(fn):
        def make(*args, **kwargs):
            check_dtype(kwargs.get("dtype"))
            return wrap(fn(*args, **kwargs))

        return make

    cp = types.ModuleType("cupy")
    cp.__name__, cp.__version__ = "cupy", version
    cp.ndarray = DevArray
    for attr in ("float16", "float32", "float64", "int32", "int64", "uint8", "dtype"):
        setattr(cp, attr, getattr(np, attr))
    for attr in ("full", "zeros", "empty", "ones", "arange", "linspace", "empty_like"):
        setattr(cp, attr, creator(getattr(np, attr)))
    cp.asarray = creator(lambda a, dtype=None: np.array(a, dtype=dtype))
    cp.asnumpy = lambda a: np.array(np.asarray(a))

    cp.multiply, cp.add = np.multiply, np.add  # dispatch to DevArray.__array_ufunc__: one launch each

    def matmul(a, b, out=None):
        if dev.capturing is not None:  # cupy_backends/cuda/libs/cublas.pyx, setStream
            raise NotImplementedError("calling cuBLAS API during stream capture is currently unsupported")
        a_, b_ = np.asarray(a), np.asarray(b)
        m, k = a_.shape[-2], a_.shape[-1]
        n = b_.shape[-1]
        count = int(np.prod(np.broadcast_shapes(a_.shape[:-2], b_.shape[:-2]), dtype=np.int64))  # batched GEMMs
        is_bf16 = bf16_dtype is not None and a_.dtype == bf16_dtype
        tensor = a_.dtype.itemsize <= 2 and int(p["cc"]) >= 70 and (p["bf16_tensor"] or not is_bf16)
        peak = p["tensor"] if tensor else (p["fp64"] if a_.dtype == np.float64 else p["fp32"])
        arrays = [a, b] + ([out] if out is not None else [])
        compute = 2.0 * count * m * n * k / peak / quantised(count, m, n)
        dev.launch("matmul", max(compute, dev.bandwidth(arrays)) + 2e-6)
        if count * m * n * k <= compute_limit and max(a_.size, b_.size) <= 1 << 18:
            wide = np.float64 if a_.dtype == np.float64 else np.float32  # BLAS speed; rounded back below
            res = np.matmul(a_.astype(wide), b_.astype(wide))
            res = res.astype(a_.dtype)
            if out is None:
                return wrap(res)
            np.copyto(np.asarray(out), res)
            return out
        return out if out is not None else wrap(np.empty((*a_.shape[:-2], m, n), dtype=a_.dtype))

    def quantised(count, m, n, tile=128):
        """Share of the SMs' tile work that is useful: 128 x 128 output tiles, one per SM at a time,
        run in waves (NVIDIA's matmul guide: tile and wave quantisation). Shapes thinner than a tile
        (decode's skinny GEMMs) get a kernel of their own in cuBLAS, so they are not rounded here."""
        if min(m, n) < tile:
            return 1.0
        rows, cols = -(-m // tile), -(-n // tile)
        tiles = count * rows * cols
        waves = -(-tiles // p["sms"])
        return (m * n * count) / (waves * p["sms"] * tile * tile)

    cp.matmul = matmul

    class Generator:
        def __init__(self, seed=None):
            self.g = np.random.default_rng(seed)

        def standard_normal(self, shape, dtype=np.float32):
            if math.prod(np.atleast_1d(shape)) > LARGE:  # timed, not computed: pages stay untouched
                return wrap(np.empty(shape, dtype=dtype))
            return wrap(self.g.standard_normal(shape, dtype=dtype))

        def random(self, n, dtype=np.float64):
            return wrap(self.g.random(n, dtype=dtype))

    cp.random = types.SimpleNamespace(default_rng=Generator)

    class ElementwiseKernel:
        def __init__(self, ins, outs, op, name):
            self.names = [s.split()[-1] for s in (ins + ", " + outs).split(",")]
            self.target, self.expr = (s.strip() for s in op.split("=", 1))
            self.name = name

        def __call__(self, *args):
            env = dict(zip(self.names, args))
            arrays = [a for a in args if isinstance(a, np.ndarray)]
            dev.launch(self.name, dev.bandwidth(arrays))
            env_np = {k: np.asarray(v) if isinstance(v, np.ndarray) else v for k, v in env.items()}
            if self.target in env:
                np.copyto(env_np[self.target], eval(self.expr, {}, env_np))
                return env[self.target]
            return wrap(eval(self.expr, {}, env_np))

    def fuse(kernel_name=None):
        def deco(f):
            def run(*args):
                arrays = [a for a in args if isinstance(a, np.ndarray)]
                dev.launch(kernel_name or f.__name__, 2 * dev.bandwidth(arrays))
                return wrap(f(*[np.asarray(a) if isinstance(a, np.ndarray) else a for a in args]))

            return run

        return deco

    stream_ops = {"copy": ("a", "c"), "scale": ("c", "b"), "add": ("ab", "c"), "triad": ("bc", "a")}

    class RawKernel:
        def __init__(self, code, name, options=(), **kwargs):
            assert re.search(rf"\b{name}\s*\(", code), f"{name} not in the CUDA source"
            self.name, self.options, self.code = name, tuple(options), code

        @property
        def kernel(self):
            return types.SimpleNamespace(ptr=id(self))

        @property
        def num_regs(self):
            return registers(dev, self.name, self.options)

        def loads_per_thread(self) -> int:
            """Independent loads a thread keeps in flight, from the source as the compiler treats it."""
            if self.name == "read_ilp":
                ilp = int(next((o.split("=")[1] for o in self.options if o.startswith("-DILP=")), 1))
                unrolled = "#pragma unroll 1" not in self.code  # the outer loop unrolled 4 x, up to 16 loads
                return min(4 * ilp, 16) if unrolled else ilp
            inputs = 1 if re.search(r"stream_(copy|scale)", self.name) else 2
            m = re.search(r"#define\s+UNROLL\s+(\d+)", self.code)
            return inputs * (int(m.group(1)) if m else 1)  # no batching: each load waits on its store

        def resident_threads(self, grid, block) -> int:
            return min(grid * block, p["sms"] * occupancy_blocks(dev, self.name, block, self.options) * block)

        @property
        def max_threads_per_block(self):
            return 1024

        def __call__(self, grid, block, args, shared_mem=0):
            assert isinstance(grid, tuple) and isinstance(block, tuple)
            kinds = ["array" if isinstance(a, np.ndarray) else type(a).__name__ for a in args]
            dev.launches.append((self.name, grid[0], block[0], kinds, self.options))
            arrays = [a for a in args if isinstance(a, np.ndarray)]
            wave = dev.wave_factor(self.name, grid[0], block[0], self.options)
            inflight = self.resident_threads(grid[0], block[0]) * self.loads_per_thread() * arrays[0].itemsize
            if self.name.startswith("stream_"):
                work = self._stream(args, arrays, inflight)
            elif self.name.startswith("fma_sweep"):
                k = int(self.options[0].split("=")[1]) if self.options else 1
                n = int(args[2])
                rate = p["fp64"] if self.name.endswith("f64") else p["fp32"]
                work = max((2 * k + 1) * n / rate, dev.bandwidth(arrays[:1]))
            elif self.name == "branchy":
                n, iters = int(args[3]), int(args[4])
                head = min(n, 1 << 14) // 32 * 32  # the first 512 warps stand for all (keeps the launch cheap)
                sel = np.asarray(arrays[1])[:head].reshape(-1, 32) != 0
                mixed = float(np.mean(sel.any(axis=1) & ~sel.all(axis=1))) if sel.size else 0.0
                work = 2.0 * n * iters * (1.0 + mixed) / p["fp32"]  # a mixed warp runs both paths
            elif self.name == "branchy32":
                n, iters, ways = int(args[-3]), int(args[-2]), int(args[-1])
                work = 2.0 * n * iters * min(ways, 32) / p["fp32"]
            elif self.name == "strided_read":  # x[k * stride + offset] for k < n: 32-byte sectors
                n, stride, offset = int(args[2]), int(args[3]), int(args[4])
                per_thread = min(32, 4 * stride)  # bytes of sectors per float read, one warp's share
                dram_bytes = n * per_thread
                l2_bytes = dram_bytes * (5 / 4 if stride == 1 and (4 * offset) % 32 else 1.0)
                unroll = int(re.search(r"#define\s+UNROLL\s+(\d+)", self.code).group(1))
                flight = self.resident_threads(grid[0], block[0]) * unroll * per_thread
                rate = min(p["dram"], flight / p["latency"])
                work = max(dram_bytes / rate, l2_bytes / p["l2_bw"])
            elif self.name == "read_ilp":  # reads its first n elements (args[2]), not the whole array
                n = int(args[2])
                hit = n * 4 <= p["l2"] and dev.bandwidth(arrays[:1]) < n * 4 / p["dram"]
                rate = min(p["l2_bw"] if hit else p["dram"], inflight / (L2_LATENCY_S if hit else p["latency"]))
                work = n * 4 / rate
            else:
                work = dev.bandwidth(arrays[:1], inflight)
            memory = self.name in ("read_ilp", "strided_read") or self.name.startswith("stream_")  # in flight
            dev.launch(self.name, work * (1.0 if memory else wave))

        def _stream(self, args, arrays, inflight):
            op = self.name.split("_")[1]
            reps = int(args[-1])
            ins, out = stream_ops[op]
            first = dev.bandwidth(arrays, inflight)
            again = dev.bandwidth(arrays, inflight) if reps > 1 else 0.0
            a, b, c = None, None, None
            named = dict(zip({"copy": "ac", "scale": "cb", "add": "abc", "triad": "bca"}[op], arrays))
            s = next((x for x in args if isinstance(x, (np.floating, float)) and not isinstance(x, np.ndarray)), None)
            a, b, c = (np.asarray(named[k]) if k in named else None for k in "abc")
            if arrays[0].size > (1 << 16):  # large: timed, not computed (keeps the host cost the launch cost)
                pass
            elif op == "copy":
                np.copyto(c, a)
            elif op == "scale":
                np.multiply(c, s, out=b)
            elif op == "add":
                np.add(a, b, out=c)
            else:
                np.add(b, s * c, out=a)
            return first + (reps - 1) * again

    class Event:
        def __init__(self, *a, **k):
            self.t = None

        def record(self, stream=None):
            self.t = dev.now_on_device()

        def synchronize(self):
            dev.clock.wait_until(self.t)

    def get_elapsed_time(a, b):
        return (b.t - a.t) * 1e3

    class Graph:
        def __init__(self, works):
            self.works = works

        def launch(self, stream=None):
            dev.run_graph(self.works)

    current = []  # streams made current by `with stream:`

    class Stream:
        def __init__(self, non_blocking=False, null=False, ptr=0):
            self.null = null
            self.ptr = 0 if null else (ptr or id(self))

        def __enter__(self):
            current.append(self)
            return self

        def __exit__(self, *exc):
            current.pop()
            return False

        def begin_capture(self, mode=None):
            if self.null:  # the legacy default stream cannot be captured
                raise CUDARuntimeError(
                    "cudaErrorStreamCaptureUnsupported: operation not permitted when stream is capturing"
                )
            dev.capturing = []

        def end_capture(self):
            works, dev.capturing = dev.capturing, None
            return Graph(works)

        def synchronize(self):
            dev.clock.wait_until(dev.busy_until)

    attributes = {
        "MultiProcessorCount": p["sms"],
        "ClockRate": 1_590_000,
        "MemoryClockRate": p["mem_khz"],
        "GlobalMemoryBusWidth": p["bus"],
        "L2CacheSize": p["l2"],
        "MaxThreadsPerMultiProcessor": p["threads_per_sm"],
        "MaxBlocksPerMultiprocessor": p["blocks_per_sm"],
        "MaxRegistersPerMultiprocessor": p["regs_per_sm"],
        "MaxThreadsPerBlock": 1024,
        "WarpSize": 32,
    }
    attributes.update(attr_overrides)
    device = types.SimpleNamespace(
        id=0,
        attributes=attributes,
        compute_capability=p["cc"],
        synchronize=lambda: dev.clock.wait_until(dev.busy_until),
    )
    compute = {}
    pool = types.SimpleNamespace(free_all_blocks=lambda: None, used_bytes=lambda: dev.allocated)
    cp.get_default_memory_pool = lambda: pool
    cp.ElementwiseKernel, cp.RawKernel, cp.fuse = ElementwiseKernel, RawKernel, fuse
    cp._core = types.SimpleNamespace(
        get_compute_type=lambda dt: compute.get(np.dtype(dt), 1),
        set_compute_type=lambda dt, c: compute.__setitem__(np.dtype(dt), c),
    )
    pinned: dict = {}

    def memcpy_async(dst, src, size, kind, stream):
        host = src if kind == 1 else dst
        dev.copy("memcpyAsync", size, pinned=any(lo <= host < lo + n for lo, n in pinned.items()))
        if size <= 1 << 16 and dev.capturing is None:  # large copies are timed, not made
            ctypes.memmove(dst, src, size)

    def occupancy(func_ptr, block, smem):
        kern = next(k for k in _kernels if id(k) == func_ptr)
        return occupancy_blocks(dev, kern.name, block, kern.options)

    _kernels = weakref.WeakSet()
    orig_init = RawKernel.__init__

    def init(self, *a, **k):
        orig_init(self, *a, **k)
        _kernels.add(self)

    RawKernel.__init__ = init

    null_stream = Stream(null=True)
    Stream.null = null_stream
    runtime = types.SimpleNamespace(
        getDeviceCount=lambda: 1,
        runtimeGetVersion=lambda: 12090,
        driverGetVersion=lambda: 12090,
        getDeviceProperties=lambda i: {"name": p["name"], "totalGlobalMem": p["memory"]},
        memcpyAsync=memcpy_async,
        memcpyHostToDevice=1,
        memcpyDeviceToHost=2,
        CUDARuntimeError=CUDARuntimeError,
    )
    cp.cuda = types.SimpleNamespace(
        Event=Event,
        get_elapsed_time=get_elapsed_time,
        Device=lambda *a: device,
        Stream=Stream,
        get_current_stream=lambda: current[-1] if current else null_stream,
        runtime=runtime,
        driver=types.SimpleNamespace(occupancyMaxActiveBlocksPerMultiprocessor=occupancy),
        memory=types.SimpleNamespace(OutOfMemoryError=OutOfMemoryError),
    )
    cupyx = types.ModuleType("cupyx")

    def empty_pinned(n, dtype=np.uint8):
        arr = np.empty(n, dtype)
        pinned[int(arr.__array_interface__["data"][0])] = arr.nbytes
        return arr

    cupyx.empty_pinned = empty_pinned
    return cp, cupyx, dev


def fake_torch(mode="scaled_mm_fails"):
    """A PyTorch that imports and sees CUDA but fails: "scaled_mm_fails" (cuBLASLt refuses the fp8
    case), "old" (no float8 dtypes: torch < 2.1), "no_cuda" (torch.cuda.is_available() is False)."""
    torch = types.ModuleType("torch")
    torch.__version__ = "2.0.1" if mode == "old" else "2.11.0"

    class Tensor:
        def __init__(self, shape):
            self.shape = shape

        def to(self, dtype):
            return self

        def t(self):
            return Tensor(self.shape[::-1])

    torch.cuda = types.SimpleNamespace(is_available=lambda: mode != "no_cuda")
    torch.randn = lambda *shape, device=None: Tensor(shape)
    torch.tensor = lambda v, device=None: Tensor(())
    torch.bfloat16 = "bfloat16"
    if mode != "old":
        torch.float8_e4m3fn = "float8_e4m3fn"

    def scaled_mm(*a, **k):
        raise RuntimeError(
            "CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling cublasLtMatmul with "
            "transpose_mat1 0 transpose_mat2 0 m 2048 n 2048 k 2048"
        )

    torch._scaled_mm = scaled_mm
    return torch


def install(monkeypatch, profile="H200", torch=None, **kwargs):
    """Put the stand-in in sys.modules (cupy, cupyx, and torch: None = absent, or a module);
    returns (hwlib Backend on it, Device)."""
    import sys

    from hwlib import backend

    cp, cupyx, dev = make_cupy(profile, **kwargs)
    monkeypatch.setattr(time, "perf_counter", dev.clock.now)  # the host's time is the modelled one
    monkeypatch.setitem(sys.modules, "cupy", cp)
    monkeypatch.setitem(sys.modules, "cupyx", cupyx)
    monkeypatch.setitem(sys.modules, "torch", torch)
    return backend.from_xp(cp), dev
