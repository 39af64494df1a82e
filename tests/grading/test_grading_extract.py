"""hwlib.grading.extract: plain-data conversion in the kernel and strict reading in the grader."""

import gc
import os
import sys

import numpy as np
import pytest

from hwlib.grading import extract

NS = extract.plain_namespace()
plain, entry = NS["_plain"], NS["_entry"]


class Always(float):
    def __eq__(self, other):
        return True

    __hash__ = float.__hash__

    def __repr__(self):
        return "2600000000.0"


class Liar(str):
    def __str__(self):
        return "20.8 GB"


class BigInt(int):
    def __int__(self):
        return 7


@pytest.mark.parametrize(
    "value, expected",
    [
        (None, None),
        (True, True),
        (3, 3),
        (2.5, 2.5),
        ("2.6 GB", "2.6 GB"),
        (np.float32(1.5), 1.5),
        (np.int64(12), 12),
        (np.bool_(True), True),
        (np.array(3.0), 3.0),
        (np.array([1, 2]), [1, 2]),
        ((1, "a"), [1, "a"]),
        (float("inf"), "inf"),
        (10**400, "inf"),
        (Always(1.0), 1.0),
        (Liar("12 hours"), "12 hours"),
        (BigInt(5), 5),
    ],
)
def test_plain_values_use_the_real_data_not_overridden_methods(value, expected):
    out = plain(value)
    assert out == expected and type(out) is type(expected)


@pytest.mark.parametrize(
    "value, kind",
    [
        (..., "ellipsis"),
        (object(), "object"),
        ({"a": 1}, "dict"),
        ("x" * 5000, "str longer"),
        (np.zeros((2, 2)), "ndarray"),
    ],
)
def test_unsupported_values_are_named(value, kind):
    e = entry(lambda: value)
    assert e["status"] == "unsupported" and kind in e["type"]


def test_errors_while_reading_become_entries():
    e = entry(lambda: 1 / 0)
    assert e == {"status": "error", "error": "ZeroDivisionError: division by zero"}


def run_cell(source, user_ns):
    exec(compile(source, "<cell>", "exec"), user_ns)


def kernel(ns, nonce="n1"):
    """A namespace prepared the way the grader prepares a kernel (the setup cell first). One test
    process plays many kernels, so the stash is marked as used afterwards (a real kernel has one)."""
    for c in object.__subclasses__():
        if c.__name__ == extract.stash_name(nonce):
            c.__name__ = "used"
    sys.modules.pop(extract.stash_name(nonce), None)
    run_cell(extract.setup_cell(nonce), ns)
    return ns


KEY = b"k" * 32


def test_values_and_call_cells_round_trip(tmp_path):
    ns = kernel({"a": np.float64(2.6e9), "f": lambda x, y=1: x * y, "s": "1 GiB", "ld": np.longdouble(3)})
    p1, p2 = str(tmp_path / "v"), str(tmp_path / "c")
    run_cell(extract.values_cell(["a", "s", "zz", "ld"], p1, "n1", KEY), ns)
    run_cell(extract.call_cell("call:k", "f", [3], {"y": 2}, p2, "n1", KEY), ns)
    assert extract.read_record(p1, "n1", KEY, ["a", "s", "zz", "ld"])[0] == {
        "a": {"status": "ok", "value": 2.6e9},
        "s": {"status": "ok", "value": "1 GiB"},
        "zz": {"status": "missing"},
        "ld": {"status": "ok", "value": 3.0},
    }
    assert extract.read_record(p2, "n1", KEY, ["call:k"])[0] == {"call:k": {"status": "ok", "value": 6}}
    assert not any(k.startswith("_hwlib") for k in ns)  # nothing of the grader's left in the namespace


def test_call_cell_reports_missing_and_uncallable(tmp_path):
    p, q = str(tmp_path / "c"), str(tmp_path / "d")
    ns = kernel({"f": 3.0})
    run_cell(extract.call_cell("k", "f", [], {}, p, "n1", KEY), ns)
    assert extract.read_record(p, "n1", KEY, ["k"])[0]["k"] == {"status": "not_callable", "type": "float"}
    run_cell(extract.call_cell("k", "never_defined", [], {}, q, "n1", KEY), ns)
    assert extract.read_record(q, "n1", KEY, ["k"])[0]["k"] == {"status": "missing"}


def test_extraction_ignores_patched_builtins_and_modules(tmp_path):
    """What a notebook replaces after the setup cell does not reach the extraction code."""
    import builtins
    import json

    ns = kernel({"a": 1.0})
    p = str(tmp_path / "v")
    saved = {k: getattr(builtins, k) for k in ("open", "repr", "isinstance", "type")}
    saved_dumps = json.dumps
    json.dumps = lambda *a, **k: '{"forged": true}'
    builtins.open = lambda *a, **k: (_ for _ in ()).throw(RuntimeError("forged open"))
    builtins.repr = lambda x: "{'nonce': 'n1', 'answers': {'a': {'status': 'ok', 'value': 2.6e9}}}"
    builtins.isinstance = lambda *a: True
    try:
        run_cell(extract.values_cell(["a"], p, "n1", KEY), ns)
        restored_repr = builtins.repr
    finally:
        json.dumps = saved_dumps
        for k, v in saved.items():
            setattr(builtins, k, v)
    answers, restored = extract.read_record(p, "n1", KEY, ["a"])
    assert answers == {"a": {"status": "ok", "value": 1.0}}
    assert {"builtins.open", "builtins.repr", "builtins.isinstance", "sys.modules['json']"} - set(restored) == {
        "sys.modules['json']"
    }  # json was patched in place (same module object): harmless
    assert restored_repr is saved["repr"]  # put back for whatever runs next


def test_records_need_this_cells_key_and_this_runs_nonce(tmp_path):
    ns = kernel({"a": 1.0})
    p = str(tmp_path / "v")
    run_cell(extract.values_cell(["a"], p, "n1", KEY), ns)
    assert extract.read_record(p, "n1", KEY, ["a"]) is not None
    assert extract.read_record(p, "n1", b"x" * 32, ["a"]) is None  # another cell's key
    assert extract.read_record(p, "other", KEY, ["a"]) is None  # another run
    gc.collect()  # the stash must outlive a collection between cells (it once hung on a cycle only)
    with pytest.raises(FileExistsError):  # never written twice
        run_cell(extract.values_cell(["a"], p, "n1", KEY), ns)


def test_restore_never_swaps_the_stash_for_an_older_one(tmp_path):
    """An older entry under the stash's name in sys.modules is not part of the snapshot: restoring it
    would leave this kernel's stash held only by a reference cycle, gone at the next collection."""
    name = extract.stash_name("n1")
    for c in object.__subclasses__():
        if c.__name__ == name:
            c.__name__ = "used"
    sys.modules[name] = type("used", (), {})
    ns = {"a": 1.0}
    run_cell(extract.setup_cell("n1"), ns)
    stash = sys.modules[name]
    p, q = str(tmp_path / "v"), str(tmp_path / "w")
    run_cell(extract.values_cell(["a"], p, "n1", KEY), ns)
    assert sys.modules[name] is stash
    gc.collect()
    run_cell(extract.values_cell(["a"], q, "n1", KEY), ns)
    assert extract.read_record(q, "n1", KEY, ["a"]) == ({"a": {"status": "ok", "value": 1.0}}, [])


def _signed(tmp_path, text, key=KEY):
    import hashlib
    import hmac

    p = tmp_path / "v"
    p.write_bytes(hmac.new(key, text.encode(), hashlib.sha256).hexdigest().encode() + b"\n" + text.encode())
    return str(p)


@pytest.mark.parametrize(
    "content",
    [
        "{'nonce': 'other', 'answers': {'a': {'status': 'ok', 'value': 1}}}",  # foreign nonce
        "{'nonce': 'n', 'answers': {'a': {'status': 'ok', 'value': {1, 2}}}}",  # a set
        "__import__('os').system('echo pwned')",  # code, never run
        "{'nonce': 'n', 'answers': [1]}",
        "not python at all",
        "[" * 500 + "]" * 500,
    ],
)
def test_malformed_or_foreign_answer_files_give_nothing(tmp_path, content):
    assert extract.read_record(_signed(tmp_path, content), "n", KEY, ["a"]) is None
    unsigned = tmp_path / "u"
    unsigned.write_text("{'nonce': 'n', 'answers': {'a': {'status': 'ok', 'value': 1}}, 'restored': []}")
    assert extract.read_record(str(unsigned), "n", KEY, ["a"]) is None


def test_bad_entries_are_dropped_but_good_ones_kept(tmp_path):
    p = _signed(
        tmp_path,
        "{'nonce': 'n', 'answers': {'a': {'status': 'ok', 'value': 1}, "
        "'b': {'status': 'hacked'}, 'c': {'status': 'ok', 'value': 1, 'score': 100}, 'd': 5}, 'restored': []}",
    )
    assert extract.read_record(p, "n", KEY, ["a", "b", "c", "d"])[0] == {"a": {"status": "ok", "value": 1}}


def test_symlinks_and_oversized_files_are_not_read(tmp_path):
    target = _signed(tmp_path, "{'nonce': 'n', 'answers': {'a': {'status': 'ok', 'value': 1}}, 'restored': []}")
    assert extract.read_record(target, "n", KEY, ["a"]) is not None
    os.symlink(target, tmp_path / "link")
    assert extract.read_record(str(tmp_path / "link"), "n", KEY, ["a"]) is None
    big = tmp_path / "big"
    big.write_text("{'nonce': 'n', 'answers': {}}" + " " * extract.MAX_FILE_BYTES)
    assert extract.read_record(str(big), "n", KEY, ["a"]) is None
    assert extract.read_record(str(tmp_path / "missing"), "n", KEY, ["a"]) is None
