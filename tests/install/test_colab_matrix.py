"""Colab's real stack as a test matrix: E1-E9 on the NumPy path and on the CuPy stand-in (a T4 with
Colab's CuPy 14.0.1) under Colab's pinned versions - NumPy 2.1.3 and 2.0.2 (the pinned runtimes), and
Python 3.13 with NumPy 2.1.3, ml_dtypes 0.6.0 and PyYAML 6.0.3 - as well as under ours. Nothing may
fail; bf16 must run where CuPy 14 allows it (NumPy >= 2.1.2) and be skipped with the reason elsewhere.
The packages come from the package index into tests/real_stack.py's cache."""

import json

import pytest

import real_stack

RUN = "import colab_matrix_run as m; m.main()"
MATRIX = [
    ("numpy-2.1.3", None, True),
    ("numpy-2.0.2", None, False),
    ("colab-py313", "py313", True),
]


def _run(stack, python):
    proc = real_stack.run_with([stack] if stack else [], RUN, python=python, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _check(got, bf16_ok):
    for side in ("numpy_path", "standin_t4"):
        bad = {k: v for k, v in got[side].items() if v["status"] == "failed"}
        assert not bad, (got["python"], got["numpy"], side, bad)
    bf16 = got["standin_t4"]["formats"]["bf16"]
    if bf16_ok:
        assert bf16["status"] == "ok", bf16
    else:
        assert bf16["status"] == "skipped" and "NumPy >= 2.1.2" in bf16["reason"], bf16


@pytest.mark.parametrize("stack, python, bf16_ok", MATRIX, ids=[m[0] for m in MATRIX])
def test_experiments_under_colabs_stack(stack, python, bf16_ok):
    if python == "py313":
        python = real_stack.python313()
        if python is None:
            pytest.skip("no Python 3.13 interpreter on this machine (Colab's); the NumPy rows still ran")
    got = _run(stack, python)
    want = real_stack.STACKS[stack][0].split("==")[1]
    assert got["numpy"] == want
    if python:
        assert got["python"].startswith("3.13")
    _check(got, bf16_ok)


def test_experiments_under_our_stack():
    got = _run(None, None)
    _check(got, bf16_ok=True)
