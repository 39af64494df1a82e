"""How the suite is split: markers by what a test needs, and groups for parallel runs (pytest-xdist).

Markers (added here from the file a test is in, so a test file does not have to say it):
- `book`: needs the built book (`_build/`, from `make book`); `make unit` leaves these out.
- `slow`: builds an environment, a clone, a wheel or runs whole notebooks in fresh kernels; left
  out of `make unit`, run by `make test`.

Groups: under `pytest -n N --dist loadgroup` (what `make test` and `make unit` run), the tests that
share a module- or session-scoped fixture defined in tests/ run on one worker, so that fixture
(a virtual environment, a graded class, a browser) is built once, not once per worker. A test
marked `serial` joins one group with every other `serial` test: they run one after another, on one
worker (other workers go on with other tests).
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


def _shared_fixture_scope(item) -> str | None:
    """The node id of the module (or folder, for a conftest's session fixture) whose expensive
    fixture this test uses, or None. pytest's own fixtures (tmp_path_factory...) do not count."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    for name in info.names_closure:
        for fixdef in info.name2fixturedefs.get(name, ()):
            if fixdef.scope in ("module", "package", "session") and fixdef.baseid.startswith("tests"):
                return fixdef.baseid
    return None


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups (it names them in the node ids)
def pytest_collection_modifyitems(config, items):
    grouping = config.pluginmanager.hasplugin("xdist")  # without pytest-xdist there are no workers
    for item in items:
        path = item.path
        if path.name in BOOK or "browser" in path.parts:
            item.add_marker(pytest.mark.book)
        if path.name in SLOW or "browser" in path.parts:
            item.add_marker(pytest.mark.slow)
        if not grouping or item.get_closest_marker("xdist_group"):
            continue
        if item.get_closest_marker("serial"):
            item.add_marker(pytest.mark.xdist_group("serial"))
        elif (scope := _shared_fixture_scope(item)) is not None:
            item.add_marker(pytest.mark.xdist_group(scope))
