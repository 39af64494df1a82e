"""Predicted results of the experiments on a named GPU, so a run can be compared with what the book
expects (`hwlib bench predict`). A model, not a measurement: every row says how it was computed.

Little's law (chapter 1; Little 1961) sets the memory rates: a kernel with B bytes of loads in flight
against a DRAM latency L moves at most B / L bytes per second, and never more than the STREAM share of
the theoretical bandwidth (gpu_model.yaml: stream_efficiency):
    bandwidth = min(stream_efficiency x spec bandwidth, bytes_in_flight / (L x loaded_latency_factor))
    bytes_in_flight = resident threads x loads in flight per thread x bytes per load
Resident threads per SM follow the CUDA occupancy rules (as hwlib.bench._common.resident_blocks) from
the kernel's register count for the part's architecture (kernel_registers.yaml, the real NVRTC's) and
the SM limits (gpu_model.yaml). Loads in flight per thread are what hwlib/kernels make the compiler
emit: STREAM 4 per input array (copy and scale 4, add and triad 8), read_ilp exactly ILP.
Compute rows use the spec sheet's peaks (specs.yaml) as upper bounds; host copies the PCIe link of
links.yaml at pcie_efficiency. Sources for every number are in those data files.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources

import yaml

from hwlib import coalescing, specs, tiling

PARTS = ("T4", "L4", "A100 80GB SXM", "H100 SXM", "H200")
STREAM_LOADS = {"copy": 4, "scale": 4, "add": 8, "triad": 8}  # UNROLL (4) per input array, stream.cu
STREAM_ARRAYS = {"copy": 2, "scale": 2, "add": 3, "triad": 3}  # STREAM's byte count per element
E8_WEIGHT_BYTES = 2 * 16384 * 16384 * 2  # E8's GPU default: 2 layers of 16384^2 fp16
E2_SKINNY_WEIGHT_BYTES = 16384 * 16384 * 2  # E2's GPU default skinny weight, fp16
BLOCK = 256


@functools.cache
def _data(name: str) -> dict:
    return yaml.safe_load(resources.files("hwlib").joinpath("data", name).read_text())


def _value(entry):
    return float(entry["value"]) if isinstance(entry, dict) else entry


@dataclass(frozen=True)
class Part:
    """One GPU as the model sees it (SI units)."""

    name: str
    cc: str
    sms: int
    threads_per_sm: int
    blocks_per_sm: int
    registers_per_sm: int
    bandwidth: float  # spec sheet, B/s
    latency_s: float  # idle DRAM latency
    loaded_latency_s: float
    fp32_flops: float
    fp64_flops: float
    fp16_flops: float
    bf16_flops: float | None  # None: no bf16 tensor cores
    link: str
    link_bandwidth: float  # B/s per direction


def part(name: str) -> Part:
    """The model of part `name` (one of PARTS); a ValueError names the parts there are."""
    model = _data("gpu_model.yaml")
    if name not in model["parts"]:
        raise ValueError(f"no GPU model for {name!r}; parts with one: {', '.join(model['parts'])}")
    raw, acc = model["parts"][name], specs.get(name)
    links = _data("links.yaml")["links"]
    latency = _value(raw["dram_latency_s"])
    return Part(
        name=name,
        cc=str(raw["compute_capability"]),
        sms=int(acc.compute_units),
        threads_per_sm=int(_value(raw["max_threads_per_sm"])),
        blocks_per_sm=int(_value(raw["max_blocks_per_sm"])),
        registers_per_sm=int(_value(raw["registers_per_sm"])),
        bandwidth=float(acc.bandwidth),
        latency_s=latency,
        loaded_latency_s=latency * _value(model["loaded_latency_factor"]),
        fp32_flops=acc.peak_flops("fp32"),
        fp64_flops=_value(raw["fp64_flops"]),
        fp16_flops=acc.peak_flops("fp16"),
        bf16_flops=acc.peak_flops("bf16") if "bf16" in acc.precisions() else None,
        link=raw["host_link"],
        link_bandwidth=_value(links[raw["host_link"]]["bandwidth"]),
    )


def registers(kernel: str, cc: str, define: str = "") -> int:
    """Registers per thread of `kernel` built with `define` for sm_`cc` (kernel_registers.yaml)."""
    table = _data("kernel_registers.yaml")["registers"]
    if kernel not in table or define not in table[kernel]:
        raise ValueError(f"no register count for {kernel!r} {define!r}; kernels: {', '.join(sorted(table))}")
    return int(table[kernel][define][cc])


def resident_threads(p: Part, kernel: str, define: str = "", block: int = BLOCK) -> int:
    """Threads of `kernel` resident on the whole GPU at once: SMs x blocks per SM x block, with blocks
    per SM = min(block limit, threads limit // block, register limit) and registers allocated per warp
    in units of 256 (the CUDA occupancy calculator's rule)."""
    regs = registers(kernel, p.cc, define)
    per_warp = -(-regs * 32 // 256) * 256
    by_regs = (p.registers_per_sm // per_warp) // (block // 32)
    return p.sms * min(p.blocks_per_sm, p.threads_per_sm // block, by_regs) * block


def little(p: Part, bytes_in_flight: float) -> float:
    """Bytes/s with `bytes_in_flight` outstanding: min(STREAM ceiling, in flight / loaded latency)."""
    ceiling = _value(_data("gpu_model.yaml")["stream_efficiency"]) * p.bandwidth
    return min(ceiling, bytes_in_flight / p.loaded_latency_s)


def stream(p: Part, kernel: str = "copy", itemsize: int = 4) -> dict:
    """E1: the STREAM kernel's predicted bandwidth and what sets it."""
    threads = resident_threads(p, f"stream_{kernel}_{'f32' if itemsize == 4 else 'f64'}")
    in_flight = threads * STREAM_LOADS[kernel] * itemsize
    bw = little(p, in_flight)
    return {"threads": threads, "bytes_in_flight": in_flight, "bytes_per_s": bw, "fraction_of_spec": bw / p.bandwidth}


def read_ilp(p: Part, ilp: int, threads: int | None = None) -> float:
    """E6: bytes/s of read_ilp with `threads` threads (default: all that fit) and ILP loads each."""
    full = resident_threads(p, "read_ilp", f"-DILP={ilp}")
    return little(p, min(threads or full, full) * ilp * 4)


def predict(name: str) -> list:
    """Rows {experiment, quantity, value, unit, how} of the predictions for part `name`."""
    p = part(name)
    copy, triad = stream(p, "copy"), stream(p, "triad")
    need = p.bandwidth * _value(_data("gpu_model.yaml")["stream_efficiency"]) * p.loaded_latency_s
    full_ilp1 = resident_threads(p, "read_ilp", "-DILP=1")
    bw = copy["bytes_per_s"]
    strided = resident_threads(p, "strided_read")
    coalesced = little(p, strided * 4 * 4)  # UNROLL (4) float loads in flight per thread, coalescing.cu
    rows = [
        ("E1", "copy bandwidth", bw, "B/s", f"{copy['bytes_in_flight'] / 1e6:.2f} MB in flight / loaded latency"),
        ("E1", "copy / spec bandwidth", copy["fraction_of_spec"], "ratio", "bar for a GPU run: >= 0.85"),
        ("E1", "triad bandwidth", triad["bytes_per_s"], "B/s", f"{triad['bytes_in_flight'] / 1e6:.2f} MB in flight"),
        ("E1", "bytes in flight needed", need, "B", "STREAM ceiling x loaded latency (Little's law)"),
        ("E2", "fp16 8192^3 time, at least", 2 * 8192**3 / p.fp16_flops, "s", "2 N^3 / fp16 tensor peak"),
        ("E2", "skinny batch 1 time", E2_SKINNY_WEIGHT_BYTES / bw, "s", "512 MiB weight / E1 copy bandwidth"),
        ("E3", "fp32 ridge", p.fp32_flops / triad["bytes_per_s"], "FLOP/B", "fp32 peak / E1 triad"),
        ("E3", "fp64 ridge", p.fp64_flops / triad["bytes_per_s"], "FLOP/B", "fp64 peak / E1 triad"),
        ("E5", "two-way divergence slowdown", 2.0, "ratio", "a split warp runs both paths (SIMT)"),
        ("E6", "ILP 1 at full occupancy", read_ilp(p, 1), "B/s", f"{full_ilp1} threads x 4 B in flight"),
        ("E6", "ILP 4 at full occupancy", read_ilp(p, 4), "B/s", "4 loads per thread"),
        ("E6", "implied latency, rising part", p.loaded_latency_s, "s", "bytes in flight / bandwidth"),
        ("E7", "bf16 tensor peak", p.bf16_flops or 0.0, "FLOP/s", "0: no bf16 tensor cores, slower than fp32"),
        ("E8", "batch 1 step (1 GiB of weights)", E8_WEIGHT_BYTES / bw, "s", "weights / E1 copy bandwidth"),
        ("E8", "batch 1 / bandwidth bound", bw / p.bandwidth, "ratio", "bar for a GPU run: >= 0.80"),
        ("E9", "pinned host copy", _value(_data("gpu_model.yaml")["pcie_efficiency"]) * p.link_bandwidth, "B/s",
         f"{p.link} at pcie_efficiency"),
        ("E10", "N 4096 tile x wave efficiency", tiling.gemm_efficiency(4096, 4096, p.sms), "ratio",
         f"1,024 tiles of 128 x 128 in waves of {p.sms} SMs"),
        ("E10", "N 4097 tile x wave efficiency", tiling.gemm_efficiency(4097, 4097, p.sms), "ratio",
         "33 x 33 tiles, the last row and column nearly empty"),
        ("E11", "stride 1 useful bandwidth", coalesced, "B/s",
         f"{strided} threads x 4 loads x 4 B in flight (Little's law)"),
        ("E11", "stride 2 / stride 1", coalescing.sector_efficiency(2), "ratio", "8 sectors per warp for 4 useful"),
        ("E11", "stride >= 8 / stride 1", coalescing.sector_efficiency(8), "ratio", "one 32-B sector per 4-B float"),
    ]  # fmt: skip
    return [dict(zip(("experiment", "quantity", "value", "unit", "how"), r)) for r in rows]


def table(names=PARTS) -> dict:
    """{part: rows} for every part in `names`."""
    return {n: predict(n) for n in names}


def _fmt(value: float, unit: str) -> str:
    from hwlib import units

    if unit == "B/s":
        return units.format_bandwidth(value)
    if unit == "s":
        return units.format_seconds(value)
    if unit == "B":
        return f"{value / 1e6:.2f} MB"
    if unit == "FLOP/s":
        return f"{value / 1e12:.0f} TFLOP/s" if value else "none"
    if unit == "ratio":
        return f"{value:.2f}"
    return f"{value:.3g} {unit}"


def format_table(names=PARTS) -> str:
    """The predictions as a plain-text table: one row per quantity, one column per part."""
    t = table(names)
    first = t[names[0]]
    head = ["exp", "quantity"] + list(names)
    rows = [
        [r["experiment"], r["quantity"]] + [_fmt(t[n][i]["value"], r["unit"]) for n in names]
        for i, r in enumerate(first)
    ]
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    line = lambda cells: "  ".join(str(c).ljust(w) for c, w in zip(cells, widths))  # noqa: E731
    return "\n".join([line(head), line(["-" * w for w in widths])] + [line(r) for r in rows])
