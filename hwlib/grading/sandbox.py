"""How a submission's kernel is started: resource limits, a scrubbed environment, and `bwrap`.

Every kernel gets RLIMIT_AS (memory), RLIMIT_CPU, RLIMIT_FSIZE (largest file), RLIMIT_NPROC and
RLIMIT_NOFILE, set by a tiny launcher before ipykernel starts, and an environment holding only what
Python needs (no inherited secrets, HOME inside the submission's temp dir, HWLIB_GRADING=1).

The kernel runs inside `bwrap` (Debian: `apt-get install bubblewrap`): new user, pid, network, ipc
and uts namespaces (no network at all, not even to the host's loopback), all capabilities dropped, and
a file system made of /usr, a few /etc files, the Python environment and hwlib read-only, a private
/tmp, and read-write only the submission's own temp dir. The checks folder, the output folder and
other submissions are not mounted. The kernel talks to the grader over ZeroMQ ipc sockets in that temp
dir (TCP is unreachable without a network). `probe` runs the kernels' exact command line (an older
bwrap without `--size` or `--clearenv` fails it) with a launcher that imports ipykernel and hwlib;
`hwlib grade` refuses to grade when it fails, unless `--no-sandbox` is given.

What this does NOT protect against: kernel exploits, side channels, and (with --no-sandbox) a
submission reading any file the grading user can read, e.g. hidden checks, another process's
environment, or the output folder (found through /proc).
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import site
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

HWLIB_DIR = Path(__file__).resolve().parents[1]  # the hwlib package (read-only in the sandbox)

# Sets the limits, then becomes the ipykernel (argv: AS CPU FSIZE NPROC NOFILE -f connection_file).
_LAUNCH_HEAD = """
import resource, sys
names = ("RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_NPROC", "RLIMIT_NOFILE")
for name, value in zip(names, map(int, sys.argv[1:6])):
    limit = getattr(resource, name, None)
    if limit is not None and value > 0:
        soft, hard = resource.getrlimit(limit)
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        try:
            resource.setrlimit(limit, (value, value))
        except (ValueError, OSError):
            pass
del sys.argv[1:6]
try:  # die with the grader (Linux: PR_SET_PDEATHSIG = 1, SIGKILL = 9)
    import ctypes
    ctypes.CDLL(None).prctl(1, 9)
except Exception:
    pass
if sys.path and sys.path[0] == "":
    del sys.path[0]
"""
LAUNCHER = _LAUNCH_HEAD + "from ipykernel import kernelapp\nkernelapp.launch_new_instance()\n"
# The probe: the same command line, but it only imports what a kernel needs and says so.
PROBE_LAUNCHER = _LAUNCH_HEAD + "import ipykernel, hwlib, hwlib.grading\nprint('hwlib-grader-probe-ok')\n"

_ETC = [
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/localtime",
    "/etc/fonts",
    "/etc/ssl/certs",
    "/etc/alternatives",
]


@dataclass(frozen=True)
class Limits:
    memory_bytes: int = 2 * 2**30
    cpu_s: int = 600
    file_bytes: int = 64 * 2**20
    nproc: int = 256
    open_files: int = 512


def bwrap_path() -> str | None:
    return shutil.which("bwrap")


def probe(bwrap: str | None, limits: Limits | None = None, secrets=()) -> tuple[bool, str]:
    """Run the exact command line kernels get (the same bwrap options, limits and environment), with
    a launcher that only imports ipykernel and hwlib. (True, "") or (False, the real error, e.g.
    "bwrap: Unknown option --size" or "ModuleNotFoundError: No module named 'ipykernel'")."""
    import tempfile

    limits = limits or Limits()
    with tempfile.TemporaryDirectory(prefix="hwlib-grade-probe-") as tmp:
        work = Path(tmp)
        (work / ".home").mkdir()
        env = scrubbed_env(work / ".home", Path("/tmp") if bwrap else work)
        argv = kernel_argv(limits, bwrap, work, env, secrets)
        argv[argv.index(LAUNCHER)] = PROBE_LAUNCHER
        argv = [a.replace("{connection_file}", str(work / "probe.json")) for a in argv]
        try:
            proc = subprocess.run(argv, capture_output=True, timeout=60, cwd=tmp, env=None if bwrap else env)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return False, f"{type(exc).__name__}: {exc}"
    if proc.returncode == 0 and b"hwlib-grader-probe-ok" in proc.stdout:
        return True, ""
    err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
    return False, (err[-1] if err else f"exit status {proc.returncode}")[:300]


@functools.lru_cache(maxsize=1)
def bwrap_available() -> str | None:
    """Path of a bwrap that runs the kernels' exact command line here (namespaces, --size,
    --clearenv, the read-only Python environment, `import hwlib`), else None."""
    path = bwrap_path()
    return path if path and probe(path)[0] else None


def scrubbed_env(home: Path, tmp: Path) -> dict:
    """The kernel's whole environment: nothing is inherited from the grader."""
    venv_bin = str(Path(sys.executable).parent)
    return {
        "PATH": f"{venv_bin}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TMPDIR": str(tmp),
        "MPLBACKEND": "Agg",
        "MPLCONFIGDIR": str(home / ".matplotlib"),
        "IPYTHONDIR": str(home / ".ipython"),
        "JUPYTER_RUNTIME_DIR": str(home / ".jupyter-runtime"),
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "HWLIB_GRADING": "1",
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        **_source_tree_path(),
    }


def _source_tree_path() -> dict:
    """PYTHONPATH for a kernel when the grader's hwlib is a source tree (an editable install or a
    checkout on PYTHONPATH): the kernel then imports the grader's own hwlib, the one mounted
    read-only in the sandbox, not whatever an editable finder points at."""
    parent = str(HWLIB_DIR.parent)
    if any(_under(parent, r) for r in (sys.prefix, sys.base_prefix)) or "site-packages" in parent:
        return {}
    return {"PYTHONPATH": parent}


def _readonly_roots() -> list[str]:
    """The Python environment and hwlib, read-only inside the sandbox."""
    roots = {
        sys.prefix,
        sys.base_prefix,
        sys.exec_prefix,
        sys.base_exec_prefix,
        str(Path(os.path.realpath(sys.executable)).parent.parent),
        str(HWLIB_DIR),
    }
    user_site = site.getusersitepackages() if site.ENABLE_USER_SITE else None
    if user_site and user_site in sys.path and os.path.isdir(user_site):
        roots.add(user_site)  # packages installed with pip --user
    return sorted(r for r in roots if r and not r.startswith("/usr/") and r != "/usr")


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def bwrap_args(bwrap: str, workdir: Path, secrets=()) -> list[str]:
    """bwrap command line (up to `--`) that exposes only `workdir` (read-write) and the read-only
    Python environment; any of `secrets` that would still be visible is covered by an empty tmpfs."""
    args = [
        bwrap,
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
        "--hostname",
        "grader",
        "--ro-bind",
        "/usr",
        "/usr",
    ]
    for link in ("/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"):
        if os.path.islink(link):
            args += ["--symlink", os.readlink(link), link]
        elif os.path.isdir(link):
            args += ["--ro-bind", link, link]
    for etc in _ETC:
        args += ["--ro-bind-try", etc, etc]
    args += ["--proc", "/proc", "--dev", "/dev", "--size", str(256 * 2**20), "--tmpfs", "/tmp"]
    roots = _readonly_roots()
    for root in roots:
        args += ["--ro-bind", root, root]
    args += ["--bind", str(workdir), str(workdir)]
    visible = roots + ["/usr", "/etc", str(workdir)]
    for secret in secrets:
        secret = os.path.realpath(secret)
        if any(_under(secret, v) for v in visible) and os.path.exists(secret):
            args += ["--tmpfs", secret] if os.path.isdir(secret) else ["--ro-bind", "/dev/null", secret]
    args += ["--chdir", str(workdir), "--clearenv"]
    return args


def kernel_argv(limits: Limits, bwrap: str | None, workdir: Path, env: dict, secrets=()) -> list[str]:
    """The kernelspec argv ("{connection_file}" is filled in by jupyter_client)."""
    inner = [
        sys.executable,
        "-c",
        LAUNCHER,
        str(limits.memory_bytes),
        str(limits.cpu_s),
        str(limits.file_bytes),
        str(limits.nproc),
        str(limits.open_files),
        "-f",
        "{connection_file}",
        "--HistoryManager.enabled=False",
        "--IPKernelApp.ignore_cwd=True",  # no module the notebook wrote is imported before the setup cell
    ]
    if not bwrap:
        return inner
    outer = bwrap_args(bwrap, workdir, secrets)
    for key, value in env.items():
        outer += ["--setenv", key, value]
    return outer + ["--"] + inner


def write_kernelspec(kernels_dir: Path, argv: list[str], name: str = "hwlib-grader") -> str:
    """A kernelspec in `kernels_dir/name`; interrupts go by message (a signal to bwrap would kill it)."""
    spec_dir = kernels_dir / name
    spec_dir.mkdir(parents=True, exist_ok=True)
    (spec_dir / "kernel.json").write_text(
        json.dumps(
            {
                "argv": argv,
                "display_name": "hwlib grader",
                "language": "python",
                "interrupt_mode": "message",
                "metadata": {"debugger": False},
            }
        )
    )
    return name
