"""The first diagnostic of chapter 10: estimate intensity, place it on the roofline, pick the remedy.

>>> d = kernel(flops=2 * 8192**2, bytes_moved=2 * 8192**2, gpu="H100 SXM", name="decode GEMV", kind="gemv")
>>> d.bound, round(d.intensity, 2), f"{d.fraction_of_peak:.2%}"
('memory', 1.0, '0.34%')
>>> d.remedies[:2]
('batching', 'quantization')
>>> "fusion" in d.remedies
False

Nothing here is a new formula: intensity, ridge, attainable FLOP/s and the time lower bound come from
`hwlib.roofline` (I = F/Q, I* = π/β, P = min(π, βI), t = max(F/π, Q/β)); peaks from `hwlib.specs`.
This module adds the *reading*: which side of the ridge the kernel is on, which remedies can help
there and which cannot, and what a measured time says (faster than the roof = a broken measurement;
far below it = latency, occupancy or a lower ceiling).

The remedies depend on the kind of kernel as well as on the side of the ridge (`KINDS`): a batch-1
decoding GEMV reads each weight once for one multiply–add, so only more tokens per weight read
(batching) or fewer bytes per weight (quantization) raise its intensity — fusing or tiling it does
not; an elementwise kernel has no reuse to tile for, so fusion is its lever; attention's is a fused
kernel that keeps the scores on chip. `kind="generic"` (the default) gives the side's general list.

Sources: chapter 6 (roofline, ridge, hierarchical roofs) and chapter 10 (this diagnostic and its
pitfalls) of this book; Williams, Waterman & Patterson 2009 (the roofline); Dao et al. 2022
(FlashAttention: IO-aware fused attention); launch overhead of a few µs from published
microbenchmarks (te42kyfo/gpu-benches).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from . import _check, calculator, roofline, specs, units

FORMULAS = {
    "kernel.fraction_of_peak": "P / π",
    "kernel.achieved_flops": "F / t_measured",
    "kernel.fraction_of_attainable": "(F / t_measured) / P",
    "kernel.near_ridge": "I*/2 < I < 2·I*",
}
"""The formulas this module adds to `hwlib.roofline.FORMULAS` (the one copy, as `Diagnosis.result` prints them)."""

LAUNCH_OVERHEAD_S = 5e-6
"""Order of magnitude of one kernel launch [s]: ~2.5 µs back to back on an H200 and ~6 µs cold in
published launch-overhead microbenchmarks (CuPy and PyTorch issue threads; chapter 10). Below it, the roofline does not bind."""

NEAR_RIDGE = 2.0
"""A kernel within this factor of the ridge (I*/2 < I < 2·I*) is near it: both roofs matter."""

REMEDIES = {
    "memory": {
        "fusion": "fuse with neighbouring kernels so intermediates stay on chip: fewer HBM round trips",
        "tiling": "tile and reuse operands in shared memory and registers: more FLOPs per byte fetched",
        "quantization": "store weights, activations or KV cache in fewer bits (bf16 -> fp8/int8/int4)",
        "batching": "serve more tokens or sequences per weight read (a GEMV becomes a GEMM)",
        "fused attention": "one attention kernel (FlashAttention) that keeps the score matrix on chip",
        "fewer KV bytes": "grouped- or multi-query attention, or a quantized KV cache: fewer bytes per token",
        "more bandwidth": "a part with faster memory (HBM3e): the only hardware change that helps here",
    },
    "compute": {
        "tensor cores": "run the math on tensor cores (bf16/fp16/tf32 GEMMs with aligned shapes)",
        "lower-precision math": "fp8/int8 tensor-core modes roughly double the peak of bf16",
        "fewer FLOPs": "avoid recomputation, skip masked work, use a cheaper algorithm",
        "more devices": "split the work across GPUs (tensor or data parallelism)",
    },
}
_MORE_FLOPS = "a chip with more peak FLOP/s but the same bandwidth, or more tensor cores"
_MATH_ONLY = "lower-precision arithmetic while the data stays in the same storage format"
_NOT_BW = "fusion or smaller storage formats to save bandwidth: bandwidth is not the limit"
_COMPUTE = (
    ("tensor cores", "lower-precision math", "fewer FLOPs", "more devices"),
    (_NOT_BW, "a part with more bandwidth but the same peak"),
)
KINDS: dict[str, dict[str, tuple[tuple[str, ...], tuple[str, ...]]]] = {  # kind -> side -> (remedies, will not help)
    "generic": {
        "memory": (("fusion", "tiling", "quantization", "batching", "more bandwidth"), (_MORE_FLOPS, _MATH_ONLY)),
        "compute": _COMPUTE,
    },
    "gemv": {  # a weight matrix times one (or a few) vectors: each weight is used once per token
        "memory": (
            ("batching", "quantization", "more bandwidth"),
            (
                "fusion: the weights are read once per step already; fusing saves only the small activation vectors",
                "tiling: a weight used for one multiply-add has no reuse to tile for",
                _MORE_FLOPS,
                _MATH_ONLY,
            ),
        ),
        "compute": _COMPUTE,
    },
    "gemm": {  # a matrix product with reuse: tiles decide how often each operand is fetched
        "memory": (("tiling", "batching", "quantization", "fusion", "more bandwidth"), (_MORE_FLOPS, _MATH_ONLY)),
        "compute": _COMPUTE,
    },
    "elementwise": {  # each element read and written once, a few FLOPs each
        "memory": (
            ("fusion", "quantization", "more bandwidth"),
            (
                "tiling: each element is used once, there is no reuse to tile for",
                "batching: the FLOPs per byte of an elementwise kernel do not depend on the batch",
                _MORE_FLOPS,
                _MATH_ONLY,
            ),
        ),
        "compute": _COMPUTE,
    },
    "reduction": {  # norms, softmax: a pass or two over the data, a few FLOPs per element
        "memory": (
            ("fusion", "quantization", "more bandwidth"),
            ("batching: the FLOPs per byte of a reduction do not depend on the batch", _MORE_FLOPS, _MATH_ONLY),
        ),
        "compute": _COMPUTE,
    },
    "attention": {  # scores and softmax over the context; at decode, each sequence reads its own KV cache
        "memory": (
            ("fused attention", "fewer KV bytes", "more bandwidth"),
            (
                "batching: every sequence reads its own keys and values, so a bigger batch adds bytes in proportion",
                _MORE_FLOPS,
                _MATH_ONLY,
            ),
        ),
        "compute": _COMPUTE,
    },
}
WILL_NOT_HELP = {side: KINDS["generic"][side][1] for side in ("memory", "compute")}


@dataclass(frozen=True)
class Diagnosis:
    """Where a kernel sits on one roofline and what to do about it. SI units throughout."""

    name: str
    gpu: str
    precision: str
    kind: str  # "generic", "gemv", "gemm", "elementwise", "reduction", "attention"
    tier: str  # which bandwidth the bytes cross ("HBM", "NVLink", ...)
    flops: float  # FLOP
    bytes_moved: float  # bytes across `tier`
    peak_flops: float  # π, FLOP/s
    bandwidth: float  # β of `tier`, bytes/s
    intensity: float  # I = F / Q, FLOP/byte
    ridge_point: float  # I* = π / β
    bound: str  # "memory" or "compute"
    near_ridge: bool
    attainable_flops: float  # min(π, β·I)
    fraction_of_peak: float  # attainable / π
    time_lower_bound_s: float  # max(F/π, Q/β)
    remedies: tuple
    will_not_help: tuple
    measured_s: float | None = None
    achieved_flops: float | None = None
    fraction_of_attainable: float | None = None
    warnings: tuple = ()

    def to_dict(self) -> dict:
        return asdict(self)

    def result(self) -> calculator.Result:
        """This diagnosis as `hwlib.calculator` Quantity records (what `hwlib diagnose --json` prints):
        the roofline numbers with the formulas beside `hwlib.roofline`'s functions, the remedies and
        the will-not-help list under details."""
        res = calculator.Result(
            inputs={
                "name": self.name,
                "gpu": self.gpu,
                "precision": self.precision,
                "kind": self.kind,
                "tier": self.tier,
                "flops": self.flops,
                "bytes_moved": self.bytes_moved,
                "measured_s": self.measured_s,
            }
        )
        f, q, pi, beta = _g(self.flops), _g(self.bytes_moved), _g(self.peak_flops), _g(self.bandwidth)
        rows = [
            (
                "peak_flops",
                f"peak ({self.precision})",
                self.peak_flops,
                "FLOP/s",
                specs.Accelerator.peak_flops,
                self.gpu,
            ),
            ("bandwidth", f"bandwidth of {self.tier}", self.bandwidth, "bytes/s", None, self.gpu),
            ("intensity", "arithmetic intensity", self.intensity, "FLOP/byte", roofline.intensity, f"{f} / {q}"),
            ("ridge_point", "ridge point", self.ridge_point, "FLOP/byte", roofline.ridge_point, f"{pi} / {beta}"),
            (
                "bound",
                "bound",
                self.bound,
                "",
                roofline.bound,
                f"I = {_g(self.intensity)}, I* = {_g(self.ridge_point)}",
            ),
            (
                "attainable_flops",
                "attainable FLOP/s",
                self.attainable_flops,
                "FLOP/s",
                roofline.attainable,
                f"min({pi}, {beta} × {_g(self.intensity)})",
            ),
            (
                "fraction_of_peak",
                "fraction of peak",
                self.fraction_of_peak,
                "",
                _FRACTION_OF_PEAK,
                f"{_g(self.attainable_flops)} / {pi}",
            ),
            (
                "time_lower_bound_s",
                "time lower bound",
                self.time_lower_bound_s,
                "s",
                roofline.time_s,
                f"max({f} / {pi}, {q} / {beta})",
            ),
            (
                "near_ridge",
                "near the ridge",
                self.near_ridge,
                "",
                "near_ridge",
                f"I = {_g(self.intensity)}, I* = {_g(self.ridge_point)}",
            ),
        ]
        if self.measured_s is not None:
            rows += [
                (
                    "achieved_flops",
                    "achieved FLOP/s",
                    self.achieved_flops,
                    "FLOP/s",
                    _ACHIEVED,
                    f"{f} / {_g(self.measured_s)} s",
                ),
                (
                    "fraction_of_attainable",
                    "fraction of the roof",
                    self.fraction_of_attainable,
                    "",
                    _FRACTION_OF_ATTAINABLE,
                    f"{_g(self.achieved_flops)} / {_g(self.attainable_flops)}",
                ),
            ]
        for key, label, value, unit, fn, numbers in rows:
            if fn is None:  # read from the sheet or given: no formula
                res.add(calculator.Quantity(key, label, value, unit, "", "hwlib.specs.get", numbers))
            elif isinstance(fn, str):
                res.add(
                    calculator.Quantity(
                        key, label, value, unit, FORMULAS[f"kernel.{fn}"], "hwlib.diagnose.kernel", numbers
                    )
                )
            else:
                res.add(calculator.quantity(key, label, value, unit, fn, numbers))
        res.warnings.extend(self.warnings)
        res.details.update(remedies=list(self.remedies), will_not_help=list(self.will_not_help))
        return res

    def summary(self) -> str:
        """A few lines a reader can paste into a lab notebook."""
        side = f"{self.bound}-bound" + (" (near the ridge: both roofs matter)" if self.near_ridge else "")
        what = "" if self.kind == "generic" else f"{self.kind}, "
        lines = [
            f"{self.name} on {self.gpu} ({what}{self.precision}, {self.tier}): I = {self.intensity:.3g} FLOP/B "
            f"vs ridge {self.ridge_point:.3g} -> {side}",
            f"  attainable {units.format_rate(self.attainable_flops)} = {self.fraction_of_peak:.1%} of peak; "
            f"time >= {units.format_seconds(self.time_lower_bound_s)}",
        ]
        if self.measured_s is not None:
            lines.append(
                f"  measured {units.format_seconds(self.measured_s)} -> "
                f"{units.format_rate(self.achieved_flops)} = {self.fraction_of_attainable:.1%} of the roof"
            )
        lines.append("  try: " + "; ".join(self.remedies))
        lines.append("  won't help: " + "; ".join(self.will_not_help))
        lines += [f"  warning: {w}" for w in self.warnings]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()


_FRACTION_OF_PEAK, _ACHIEVED, _FRACTION_OF_ATTAINABLE = "fraction_of_peak", "achieved_flops", "fraction_of_attainable"


def _g(x) -> str:
    """A number inside a formula line: three figures, no '+' in the exponent (2.7e8)."""
    s = f"{x:.3g}"
    return s.replace("e+0", "e").replace("e+", "e").replace("e-0", "e-")


def _accelerator(gpu):
    """A spec-sheet name -> Accelerator; any object with .name, .bandwidth and .peak_flops() passes."""
    if isinstance(gpu, str):
        return specs.get(gpu)
    if not (hasattr(gpu, "bandwidth") and callable(getattr(gpu, "peak_flops", None))):
        raise ValueError(
            f"gpu must be a spec-sheet name (e.g. 'H100 SXM') or an object with .bandwidth and "
            f".peak_flops(precision); got {gpu!r}"
        )
    return gpu


def _measured_warnings(achieved, attainable, bound_s, launch_s) -> list:
    out = []
    if achieved > 1.05 * attainable:
        out.append(
            "faster than the roofline allows: the timer probably missed asynchronous GPU work "
            "(no synchronize / CUDA events), the data sat in a cache (L2) instead of crossing this "
            "tier, or the FLOP or byte count is wrong"
        )
    elif achieved < 0.1 * attainable and bound_s < 10 * launch_s:
        out.append(
            "far below the roof and tiny: launch overhead and latency dominate (Little's law); "
            "batch more work per launch, fuse kernels or use CUDA graphs"
        )
    elif achieved < 0.5 * attainable:
        out.append(
            "well below the roof: too few bytes in flight (occupancy, Little's law), uncoalesced "
            "access, or a lower ceiling than this one (L2, shared-memory bank conflicts, no tensor cores)"
        )
    return out


def kernel(
    flops,
    bytes_moved,
    gpu,
    precision="bf16",
    *,
    name="kernel",
    kind="generic",
    measured_s=None,
    bandwidth=None,
    tier="HBM",
    launch_overhead_s=LAUNCH_OVERHEAD_S,
) -> Diagnosis:
    """Classify a kernel on the roofline of `gpu` and name the remedies for its side of the ridge.

    flops: FLOP the kernel performs; bytes_moved: bytes it moves across `tier` (HBM by default);
    gpu: spec-sheet name or Accelerator-like object; precision: the peak to use ("bf16", "fp8", ...);
    kind: what the kernel is, which decides the remedies (one of `KINDS`: "gemv" for decode-style
    weight-times-vector products, "gemm", "elementwise", "reduction" for norms and softmax,
    "attention", or "generic" for the side's general list);
    measured_s (optional): a measured run time, compared with the roof; bandwidth (optional): the
    tier's bytes/s when it is not HBM (e.g. `hwlib.interconnect.nvlink(gpu).bandwidth`);
    launch_overhead_s: below this bound the kernel is launch-bound, not roofline-bound.
    Formulas: I = F/Q, I* = π/β, P = min(π, β·I), t >= max(F/π, Q/β) (hwlib.roofline; chapters 6 and 10).
    """
    acc = _accelerator(gpu)
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}; got {kind!r}")
    f = _check.positive("flops", flops)
    q = _check.positive("bytes_moved", bytes_moved)
    pi = acc.peak_flops(precision)
    beta = acc.bandwidth if bandwidth is None else _check.positive("bandwidth", bandwidth)
    launch = _check.nonnegative("launch_overhead_s", launch_overhead_s)
    i = roofline.intensity(f, q)
    ridge = roofline.ridge_point(pi, beta)
    side = roofline.bound(i, pi, beta)
    attainable = roofline.attainable(i, pi, beta)
    t_min = roofline.time_s(f, q, pi, beta)
    warnings = []
    if t_min < launch:
        warnings.append(
            f"launch-bound: the roofline time {units.format_seconds(t_min)} is below the "
            f"~{units.format_seconds(launch)} cost of "
            "launching a kernel; fuse it with its neighbours or batch more work per launch"
        )
    achieved = fraction = None
    if measured_s is not None:
        m = _check.positive("measured_s", measured_s)
        achieved = f / m
        fraction = achieved / attainable
        warnings += _measured_warnings(achieved, attainable, t_min, launch)
    remedies, will_not = KINDS[kind][side]
    return Diagnosis(
        name=str(name),
        gpu=str(getattr(acc, "name", acc)),
        precision=str(precision),
        kind=kind,
        tier=str(tier),
        flops=f,
        bytes_moved=q,
        peak_flops=pi,
        bandwidth=beta,
        intensity=i,
        ridge_point=ridge,
        bound=side,
        near_ridge=bool(ridge / NEAR_RIDGE < i < ridge * NEAR_RIDGE),
        attainable_flops=attainable,
        fraction_of_peak=attainable / pi,
        time_lower_bound_s=t_min,
        remedies=tuple(remedies),
        will_not_help=tuple(will_not),
        measured_s=None if measured_s is None else float(measured_s),
        achieved_flops=achieved,
        fraction_of_attainable=fraction,
        warnings=tuple(warnings),
    )


def explain(remedy: str) -> str:
    """What a remedy named in `Diagnosis.remedies` means, e.g. explain("fusion")."""
    for side in REMEDIES.values():
        if remedy in side:
            return side[remedy]
    known = [r for side in REMEDIES.values() for r in side]
    raise KeyError(f"unknown remedy {remedy!r}; known: {', '.join(known)}")


class _AtMFU:
    """An accelerator whose peak is u·π: the rate a plan at MFU u assumes (for `tiers`)."""

    def __init__(self, acc, u):
        self.name, self.bandwidth, self._acc, self._u = getattr(acc, "name", str(acc)), acc.bandwidth, acc, u

    def peak_flops(self, precision):
        return self._u * self._acc.peak_flops(precision)


ON_CHIP_TIERS = ("registers", "shared memory", "SMEM", "L1", "L2", "HBM")
"""Tiers whose traffic kernels overlap with their own arithmetic (the roofline's max): memory on the
device. Other tiers (NVLink, PCIe, a network) are collectives that may or may not overlap."""


@dataclass(frozen=True)
class Hierarchy:
    """A kernel against several bandwidth tiers at once: each tier is its own roof (chapter 6)."""

    name: str
    per_tier: dict  # tier -> Diagnosis, each against u·π and that tier's bandwidth
    compute_time_s: float  # F / (u·π): the arithmetic at the MFU given (u = 1: the peak)
    binding: str  # the tier with the longest transfer time, or "compute"
    time_lower_bound_s: float  # max(compute, every transfer): everything overlaps
    no_overlap_time_s: float  # max(compute, on-chip transfers) + Σ off-chip transfers
    mfu: float = 1.0  # u used for compute_time_s

    def summary(self) -> str:
        rate = "at peak" if self.mfu == 1.0 else f"at {self.mfu:.0%} MFU"
        t = units.format_seconds
        lines = [
            f"{self.name}: binding = {self.binding}, time >= {t(self.time_lower_bound_s)} if every transfer "
            f"overlaps, {t(self.no_overlap_time_s)} if the off-chip ones do not "
            f"(compute alone {t(self.compute_time_s)} {rate})"
        ]
        for tier, d in self.per_tier.items():
            lines.append(
                f"  {tier:>10}: I = {d.intensity:,.4g} FLOP/B, ridge {d.ridge_point:,.4g}, "
                f"transfer {t(d.bytes_moved / d.bandwidth)}, {d.bound}-bound on this roof"
            )
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()


def tiers(flops, traffic, gpu, precision="bf16", *, name="kernel", mfu=1.0, on_chip=ON_CHIP_TIERS) -> Hierarchy:
    """Diagnose one kernel (or step) against every tier it crosses. traffic: {tier: (bytes_moved, bandwidth)}.

    Compute time t_c = F / (u·π) with u = `mfu` (1 = the peak; pass the MFU the plan assumes so every
    time in the answer is at the same rate; the per-tier diagnoses then use u·π as their flat roof, so
    their ridges are u·π/β). Transfer times t_i = Q_i / β_i. The binding tier is the
    one with the longest t_i, or "compute" if t_c is longer than all of them.
    time_lower_bound_s = max(t_c, t_i ...): every transfer overlaps with compute.
    no_overlap_time_s = max(t_c, t_i for on-chip tiers) + Σ t_i for the other tiers: inside a kernel
    the arithmetic and its own memory traffic overlap (the roofline's max, never their sum); a
    collective over a link that does not overlap adds in full. `on_chip` names the tiers of the first
    kind (default `ON_CHIP_TIERS`). Intensity against HBM alone can look healthy while the interconnect
    or L2 is what binds (chapter 10).
    """
    if not isinstance(traffic, dict) or not traffic:
        raise ValueError(f"traffic must be a non-empty dict tier -> (bytes_moved, bandwidth); got {traffic!r}")
    acc = _accelerator(gpu)
    u = _check.positive("mfu", mfu)
    if u > 1:
        raise ValueError(f"mfu must be a fraction in (0, 1] (e.g. 0.4 for 40 %); got {mfu!r}")
    rated = acc if u == 1.0 else _AtMFU(acc, u)  # every roof at the same rate as the compute time
    per = {}
    for tier, pair in traffic.items():
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
            raise ValueError(f"traffic[{tier!r}] must be (bytes_moved, bandwidth); got {pair!r}")
        per[str(tier)] = kernel(flops, pair[0], rated, precision, name=name, bandwidth=pair[1], tier=str(tier))
    compute_s = float(flops) / (u * acc.peak_flops(precision))
    transfer = {t: d.bytes_moved / d.bandwidth for t, d in per.items()}
    worst = max(transfer, key=lambda t: transfer[t])
    binding = worst if transfer[worst] > compute_s else "compute"
    inside = max([compute_s] + [t for k, t in transfer.items() if k in on_chip])
    exposed = sum(t for k, t in transfer.items() if k not in on_chip)
    return Hierarchy(
        name=str(name),
        per_tier=per,
        compute_time_s=compute_s,
        binding=binding,
        time_lower_bound_s=max([compute_s] + list(transfer.values())),
        no_overlap_time_s=inside + exposed,
        mfu=u,
    )
