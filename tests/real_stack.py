"""Real GPU software from the package index, installed once into a cache folder for the tests: the
NVRTC wheel hwlib's kernels are compiled with, and the CuPy wheels hwlib supports (Colab's 14.0.1 and
ours, 14.2.0). None of it needs a GPU: NVRTC only compiles, and `import cupy` works without a driver
(only calls that reach the device fail).

Each package set goes into its own `pip install --no-deps --target` folder under
$HWLIB_TEST_CACHE (default: hwlib-tests/real-stack in the user's cache folder, $XDG_CACHE_HOME or
~/.cache, so every clone on a machine shares it). The folder's name holds a hash of the exact pins
and the Python tag, so a changed pin gets a new folder and a fresh clone downloads and unpacks
nothing; installs go to a temporary folder renamed into place under a file lock, so parallel test
workers (and two clones) never see half a stack. A failed install fails the test that needed it,
with pip's message: these checks must run in CI, never silently skip.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
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


def user_cache() -> Path:
    """This machine's cache folder for the tests' installs, shared by every clone."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "hwlib-tests"


def cache_dir() -> Path:
    return Path(os.environ.get("HWLIB_TEST_CACHE") or user_cache() / "real-stack")


def pin_hash(*parts: str) -> str:
    """A short hash of what an install holds (the exact pins, the Python tag): its folder's key."""
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:12]


@contextlib.contextmanager
def locked(path: Path):
    """An exclusive lock on `path`.lock (blocks until free), for one installer at a time."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(f"{path}.lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def build_once(target: Path, build) -> Path:
    """`target`, made by build(tmp) into a temporary folder beside it and renamed into place, once:
    parallel callers wait on the lock, then find it done."""
    with locked(target):
        if not target.is_dir():
            tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
            try:
                build(tmp)
                tmp.rename(target)
            except BaseException:
                shutil.rmtree(tmp, ignore_errors=True)
                raise
    return target


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
    tag = _tag(python)
    target = cache_dir() / f"{name}-{tag}-{pin_hash(tag, *pins)}"

    def install(tmp: Path) -> None:
        cmd = [python, "-m", "pip", "install", "-q", "--no-deps", "--target", str(tmp), *pins]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"could not install {' '.join(pins)} from the package index:\n{proc.stderr[-2000:]}")

    return build_once(target, install)


def run_with(names, code: str, timeout: float = 300, python: str | None = None, args=()) -> subprocess.CompletedProcess:
    """Run `code` in a fresh `python` (default: this one) that imports STACKS[name] for each of `names`
    (a name or a list, the first wins) before its own packages, then this repository's hwlib and tests."""
    names = [names] if isinstance(names, str) else list(names)
    python = python or sys.executable
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([*(str(stack(n, python)) for n in names), str(ROOT), str(ROOT / "tests")])
    env.pop("HWLIB_BACKEND", None)
    return subprocess.run([python, "-c", code, *args], capture_output=True, text=True, env=env, timeout=timeout)


def venv_template(name: str, python: str, key: tuple[str, ...], install) -> Path:
    """A virtual environment made once per `key` (what decides its contents: pins, a package list
    and the date it was made for, the Python version) under the user cache: `python -m venv`, then
    install(env_python). Use it through clone_venv; never install into the template itself."""
    tag = _tag(python)
    target = user_cache() / "venvs" / f"{name}-{tag}-{pin_hash(tag, *key)}"

    def build(tmp: Path) -> None:
        subprocess.run([python, "-m", "venv", str(tmp)], check=True, capture_output=True)
        install(tmp / "bin" / "python")

    return build_once(target, build)


def clone_venv(template: Path, dest: Path) -> Path:
    """A copy of a template venv at `dest`, to install into (the interpreter link and pyvenv.cfg
    carry over; use `dest/bin/python -m ...`, as script shebangs still name the template)."""
    shutil.copytree(template, dest, symlinks=True)
    return dest
