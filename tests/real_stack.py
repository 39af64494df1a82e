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
}
CUPY_VERSIONS = ("14.0.1", "14.2.0")


def cache_dir() -> Path:
    return Path(os.environ.get("HWLIB_TEST_CACHE") or ROOT / ".cache" / "real-stack")


def stack(name: str) -> Path:
    """The folder holding STACKS[name], installed now if it is not there yet."""
    pins = STACKS[name]
    py = f"cp{sys.version_info.major}{sys.version_info.minor}"  # CuPy's wheels are per Python version
    target = cache_dir() / f"{name}-{py}"
    stamp = target / ".hwlib-stamp"
    want = "\n".join(pins)
    if stamp.is_file() and stamp.read_text() == want:
        return target
    cmd = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--upgrade", "--target", str(target), *pins]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"could not install {' '.join(pins)} from the package index:\n{proc.stderr[-2000:]}")
    stamp.write_text(want)
    return target


def run_with(names, code: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run `code` in a fresh interpreter that imports STACKS[name] for each of `names` (a name or a
    list, the first wins) before the test environment's packages, and this repository's hwlib."""
    names = [names] if isinstance(names, str) else list(names)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([*(str(stack(n)) for n in names), str(ROOT)])
    env.pop("HWLIB_BACKEND", None)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=timeout)
