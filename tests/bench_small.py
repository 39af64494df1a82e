"""Shared by the bench tests: run the experiments at sizes small enough for a test."""

from hwlib import bench


def shrink(monkeypatch, small: dict) -> None:
    """Make `bench.run(name, ...)` (and so `bench.run_all` and `hwlib bench`) run one sample per point,
    with the keyword arguments `small[name]` (sizes, n, ...) on top of the caller's."""
    real = bench.run
    monkeypatch.setattr(
        bench,
        "run",
        lambda name, xp=None, quick=False, progress=None: real(
            name, xp, quick=quick, progress=progress, samples=1, **small.get(name, {})
        ),
    )
