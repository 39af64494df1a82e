"""Real GPU software from the package index, installed once into a cache folder for the tests: the
NVRTC wheel hwlib's kernels are compiled with, and the CuPy wheels hwlib supports (Colab's 14.0.1 and
ours, 14.2.0). None of it needs a GPU: NVRTC only compiles, and `import cupy` works without a driver
(only calls that reach the device fail).

Each package set goes into its own `pip install --no-deps --target` folder under
$HWLIB_TEST_CACHE (default: .cache/real-stack in the repository, git-ignored), marked done by a stamp
file naming the exact pins, so a second run downloads nothing; pip's own cache keeps a fresh clone
from downloading twice on the same machine. A failed install fails the test that needed it, with
pip's message: these checks must run in CI, never silently skip.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# name -> pinned requirements (cuda-pathfinder: CuPy 14's one run-time dependency besides NumPy)
STACKS = {
    "nvrtc-12.9": ("nvidia-cuda-nvrtc-cu12==12.9.86",),
    "cupy-14.0.1": ("cupy-cuda12x==14.0.1", "cuda-pathfinder==1.3.4"),
    "cupy-14.2.0": ("cupy-cuda12x==14.2.0", "cuda-pathfinder==1.3.4"),
    "numpy-2.0.2": ("numpy==2.0.2",),  # Colab's pinned runtimes: CuPy 14 has no bfloat16 with it
    "numpy-2.1.3": ("numpy==2.1.3",),  # Colab's current runtime
    # Colab's Python 3.13 stack for hwlib.bench (it imports numpy, ml_dtypes and yaml only)
    "colab-py313": ("numpy==2.1.3", "ml_dtypes==0.6.0", "pyyaml==6.0.3"),
}
CUPY_VERSIONS = ("14.0.1", "14.2.0")


def cache_dir() -> Path:
    return Path(os.environ.get("HWLIB_TEST_CACHE") or ROOT / ".cache" / "real-stack")


def python313() -> str | None:
    """A working Python 3.13 interpreter on this machine (Colab's version), or None. A pyenv shim that
    names a version not selected exits 127, so each candidate must run."""
    import glob
    import shutil

    for cand in [*sorted(glob.glob("/root/.pyenv/versions/3.13*/bin/python3.13")), shutil.which("python3.13")]:
        if cand and subprocess.run([cand, "-c", "import sys; assert sys.version_info[:2] == (3, 13)"],
                                   capture_output=True).returncode == 0:  # fmt: skip
            return cand
    return None


def _tag(python: str) -> str:
    if python == sys.executable:
        return f"cp{sys.version_info.major}{sys.version_info.minor}"
    out = subprocess.run([python, "-c", "import sys; print(sys.version_info[0], sys.version_info[1])"],
                         capture_output=True, text=True, check=True).stdout.split()  # fmt: skip
    return f"cp{out[0]}{out[1]}"


def stack(name: str, python: str | None = None) -> Path:
    """The folder holding STACKS[name] for `python` (default: this interpreter), installed now if it
    is not there yet (wheels are per Python version)."""
    pins = STACKS[name]
    python = python or sys.executable
    target = cache_dir() / f"{name}-{_tag(python)}"
    stamp = target / ".hwlib-stamp"
    want = "\n".join(pins)
    if stamp.is_file() and stamp.read_text() == want:
        return target
    cmd = [python, "-m", "pip", "install", "-q", "--no-deps", "--upgrade", "--target", str(target), *pins]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"could not install {' '.join(pins)} from the package index:\n{proc.stderr[-2000:]}")
    stamp.write_text(want)
    return target


def run_with(names, code: str, timeout: float = 300, python: str | None = None, args=()) -> subprocess.CompletedProcess:
    """Run `code` in a fresh `python` (default: this one) that imports STACKS[name] for each of `names`
    (a name or a list, the first wins) before its own packages, then this repository's hwlib and tests."""
    names = [names] if isinstance(names, str) else list(names)
    python = python or sys.executable
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([*(str(stack(n, python)) for n in names), str(ROOT), str(ROOT / "tests")])
    env.pop("HWLIB_BACKEND", None)
    return subprocess.run([python, "-c", code, *args], capture_output=True, text=True, env=env, timeout=timeout)
