"""How the suite is split: markers by what a test needs, and how files run in parallel (pytest-xdist).

Markers (added here from the file a test is in, so a test file does not have to say it):
- `book`: needs the built book (`_build/`, from `make book`); `make unit` leaves these out.
- `slow`: builds an environment, a clone, a wheel or runs whole notebooks in fresh kernels; left
  out of `make unit`, run by `make test`. A file of quick tests marks its one slow test itself
  (`@pytest.mark.slow`); `test_every_grading_test_is_slow` (tests/grading/) finds a grader run
  that is not marked.

Parallel runs (pytest-xdist) use `--dist loadfile`: each file's tests run on one worker, so a
module-scoped fixture (a virtual environment, a graded class, a browser) is built once. (xdist
3.8's `loadgroup` does not group under pytest 9.2: it renames `item._nodeid`, which pytest 9 no
longer reads, so markers cannot keep a fixture's users together.)
"""

from __future__ import annotations

import os

import pytest

# One BLAS thread per process, set before NumPy loads: the xdist workers and the kernels and graders
# they start share the CPUs, and OpenBLAS's spinning threads on a busy machine made one stand-in test
# (test_bench_gpu::test_coalescing_and_tiles_fail_alone) 30 s instead of 5 s. Children inherit it.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

BOOK = {"test_pairs.py", "test_colab_learner.py"}  # and everything under tests/browser/
SLOW = {
    "test_colab_install.py",
    "test_colab_learner.py",
    "test_colab_matrix.py",
    "test_edition.py",
    "test_exercise_hidden_checks.py",
    "test_exercise_wrong_answers.py",
    "test_exercises_nbval.py",
    "test_grading_exercises.py",
    "test_grading_fixtures.py",
    "test_grading_gradescope.py",
    "test_grading_hostile.py",
    "test_grading_robust.py",
    "test_kernels_nvcc.py",
    "test_kernels_nvrtc.py",
    "test_real_cupy.py",
    "test_workflows.py",
}


def pytest_collection_modifyitems(config, items):
    for item in items:
        path = item.path
        if path.name in BOOK or "browser" in path.parts:
            item.add_marker(pytest.mark.book)
        if path.name in SLOW or "browser" in path.parts:
            item.add_marker(pytest.mark.slow)
