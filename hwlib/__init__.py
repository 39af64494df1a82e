"""hwlib: the calculators, spec sheet and GPU experiments of the *Hardware for AI* book.

Quantities are plain floats or NumPy arrays in SI base units (bytes, FLOP, seconds, FLOP/s, bytes/s);
`hwlib.units` turns them into human units for printing.
"""

from . import flops, formats, memory, models, parallel, roofline, specs, units  # noqa: F401

# The one copy of the version: pyproject.toml reads it; CHANGELOG.md's newest entry must match
# (tests/install/test_project_meta.py).
__version__ = "0.3.0"
__all__ = ["specs", "roofline", "memory", "flops", "formats", "parallel", "models", "units"]
# Also importable on demand (heavier or more specialised): hwlib.backend (hwlib.bench.backend), hwlib.bench, hwlib.plot,
# hwlib.calculator, hwlib.diagnose, hwlib.systolic, hwlib.collectives, hwlib.grading, hwlib.web.
