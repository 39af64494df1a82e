"""Shared by the bench tests: run the experiments at sizes small enough for a test."""

from hwlib import bench
from hwlib.bench import e1_bandwidth

# Sizes for each experiment on the GPU path (the stand-in), small enough for a test.
GPU_SMALL = {
    "bandwidth": dict(n=1 << 12, sweep_sizes=[3 << 12]),
    "matmul": dict(sizes=[16], batches=[2], weight_shape=(32, 32)),
    "roofline": dict(n=1 << 12, iters=[0, 8]),
    "fusion": dict(sizes=[1 << 10]),
    "divergence": dict(n=1 << 12, iters=4),
    "occupancy": dict(n=1 << 14, ilps=(1,)),
    "formats": dict(n=16),
    "decode": dict(d=32, layers=2, batches=[1]),
    "transfer": dict(sizes=[1 << 12]),
    "tiles": dict(sizes=[256, 257], vocab=[200, 256], tokens=128, d_model=64),
    "coalescing": dict(strides=(1, 8), offsets=(0, 1), elements=1 << 14),
}


def shrink(monkeypatch, small: dict) -> None:
    """Make `bench.run(name, ...)` (and so `bench.run_all` and `hwlib bench`) run one sample per point,
    with the keyword arguments `small[name]` (sizes, n, ...) on top of the caller's; E1's default
    array size becomes `small["bandwidth"]["n"]` too (E8 measures with it on a CPU)."""
    real = bench.run
    monkeypatch.setattr(
        bench,
        "run",
        lambda name, xp=None, quick=False, progress=None: real(
            name, xp, quick=quick, progress=progress, samples=1, **small.get(name, {})
        ),
    )
    n = small.get("bandwidth", {}).get("n")
    if n:  # E8 measures a CPU's bandwidth for its bound with E1 at E1's default size: that too at n
        monkeypatch.setattr(e1_bandwidth, "default_n", lambda bk, dtype, quick: (n, None))
