"""hwlib.grading.sandbox: what a submission's kernel can see and do."""

import subprocess
import sys
from pathlib import Path

import pytest

import speed
from hwlib.grading import sandbox

ROOT = Path(__file__).resolve().parents[2]
BWRAP = sandbox.bwrap_available()
needs_bwrap = pytest.mark.skipif(not BWRAP, reason="bubblewrap missing: .ci/run installs it")

PROBE = r"""
import os, socket, sys
def can(f):
    try:
        f(); return True
    except Exception:
        return False
print("tests:", os.path.exists(sys.argv[1]))
print("hwlib:", os.path.exists(sys.argv[2]))
print("write hwlib:", can(lambda: open(os.path.join(sys.argv[2], "_x"), "w")))
print("write work:", can(lambda: open("out.txt", "w").write("x")))
print("net:", can(lambda: socket.create_connection(("1.1.1.1", 53), timeout=2)))
print("pids:", len([p for p in os.listdir("/proc") if p.isdigit()]))
print("env:", sorted(os.environ))
"""


def test_scrubbed_env_inherits_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "s3cr3t")
    env = sandbox.scrubbed_env(tmp_path, tmp_path)
    assert "AWS_SECRET_ACCESS_KEY" not in env and env["HOME"] == str(tmp_path)
    assert env["HWLIB_GRADING"] == "1" and set(env) >= {"PATH", "LANG", "MPLBACKEND"}


def test_kernel_argv_sets_limits_then_starts_ipykernel(tmp_path):
    limits = sandbox.Limits(memory_bytes=123, cpu_s=45)
    argv = sandbox.kernel_argv(limits, None, tmp_path, {})
    assert argv[0] == sys.executable and argv[3:5] == ["123", "45"] and "{connection_file}" in argv
    assert "kernelapp.launch_new_instance()" in argv[2] and "RLIMIT_AS" in argv[2]


def test_bwrap_command_line_exposes_only_what_it_must(tmp_path):
    secret = sandbox.HWLIB_DIR / "grading"  # pretend the hidden checks were put in here
    args = sandbox.bwrap_args("bwrap", tmp_path, secrets=[str(secret), "/not/visible/anyway"])
    assert {"--unshare-all", "--die-with-parent", "--clearenv"} <= set(args)
    assert args[args.index("--cap-drop") + 1] == "ALL"
    binds = [(a, args[i + 1]) for i, a in enumerate(args) if a in ("--bind", "--ro-bind")]
    assert ("--bind", str(tmp_path)) in binds and ("--ro-bind", "/") not in binds
    assert all(b != str(ROOT) for _, b in binds)
    assert args[args.index(str(secret)) - 1] == "--tmpfs" and "/not/visible/anyway" not in args


@needs_bwrap
def test_inside_bwrap(tmp_path):
    cmd = sandbox.bwrap_args(BWRAP, tmp_path) + [
        "--setenv",
        "PATH",
        "/usr/bin",
        "--",
        sys.executable,
        "-c",
        PROBE,
        str(ROOT / "tests"),
        str(sandbox.HWLIB_DIR),
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=speed.scaled(60), env={"LEAKME": "1"}).stdout
    assert "tests: False" in out and "hwlib: True" in out  # the repo is not mounted, hwlib is
    assert "write hwlib: False" in out and "write work: True" in out
    assert "net: False" in out
    assert int(out.split("pids:")[1].split()[0]) <= 3  # its own pid namespace
    assert "LEAKME" not in out and "'PATH'" in out  # nothing inherited
    assert (tmp_path / "out.txt").read_text() == "x"
