"""hwlib.grading.extract: plain-data conversion in the kernel and strict reading in the grader."""
import os

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


@pytest.mark.parametrize("value, expected", [
    (None, None), (True, True), (3, 3), (2.5, 2.5), ("2.6 GB", "2.6 GB"),
    (np.float32(1.5), 1.5), (np.int64(12), 12), (np.bool_(True), True), (np.array(3.0), 3.0),
    (np.array([1, 2]), [1, 2]), ((1, "a"), [1, "a"]), (float("inf"), "inf"), (10**400, "inf"),
    (Always(1.0), 1.0), (Liar("12 hours"), "12 hours"), (BigInt(5), 5),
])
def test_plain_values_use_the_real_data_not_overridden_methods(value, expected):
    out = plain(value)
    assert out == expected and type(out) is type(expected)


@pytest.mark.parametrize("value, kind", [(..., "ellipsis"), (object(), "object"), ({"a": 1}, "dict"),
                                         ("x" * 5000, "str longer"), (np.zeros((2, 2)), "ndarray")])
def test_unsupported_values_are_named(value, kind):
    e = entry(lambda: value)
    assert e["status"] == "unsupported" and kind in e["type"]


def test_errors_while_reading_become_entries():
    e = entry(lambda: 1 / 0)
    assert e == {"status": "error", "error": "ZeroDivisionError: division by zero"}


def run_cell(source, user_ns):
    exec(compile(source, "<cell>", "exec"), user_ns)


def test_values_and_call_cells_round_trip(tmp_path):
    ns = {"a": np.float64(2.6e9), "f": lambda x, y=1: x * y, "s": "1 GiB"}
    p1, p2 = str(tmp_path / "v"), str(tmp_path / "c")
    run_cell(extract.values_cell(["a", "s", "zz"], p1, "n1"), ns)
    run_cell(extract.call_cell("call:k", "f", [3], {"y": 2}, p2, "n1"), ns)
    assert extract.read_answers(p1, "n1", ["a", "s", "zz"]) == {
        "a": {"status": "ok", "value": 2.6e9}, "s": {"status": "ok", "value": "1 GiB"},
        "zz": {"status": "missing"}}
    assert extract.read_answers(p2, "n1", ["call:k"]) == {"call:k": {"status": "ok", "value": 6}}
    assert not any(k.startswith("_hwlib") for k in ns)  # the helpers clean up after themselves


def test_call_cell_reports_missing_and_uncallable(tmp_path):
    p = str(tmp_path / "c")
    run_cell(extract.call_cell("k", "f", [], {}, p, "n"), {"f": 3.0})
    assert extract.read_answers(p, "n", ["k"])["k"] == {"status": "not_callable", "type": "float"}


def test_extraction_ignores_a_patched_json_module(tmp_path):
    import json
    saved = json.dumps
    json.dumps = lambda *a, **k: '{"forged": true}'
    try:
        p = str(tmp_path / "v")
        run_cell(extract.values_cell(["a"], p, "n"), {"a": 1.0})
    finally:
        json.dumps = saved
    assert extract.read_answers(p, "n", ["a"]) == {"a": {"status": "ok", "value": 1.0}}


@pytest.mark.parametrize("content", [
    "{'nonce': 'other', 'answers': {'a': {'status': 'ok', 'value': 1}}}",     # foreign nonce
    "{'nonce': 'n', 'answers': {'a': {'status': 'ok', 'value': {1, 2}}}}",    # a set
    "__import__('os').system('echo pwned')",                                   # code, never run
    "{'nonce': 'n', 'answers': [1]}",
    "not python at all",
    "[" * 500 + "]" * 500,
])
def test_malformed_or_foreign_answer_files_give_nothing(tmp_path, content):
    p = tmp_path / "v"
    p.write_text(content)
    assert extract.read_answers(str(p), "n", ["a"]) == {}


def test_bad_entries_are_dropped_but_good_ones_kept(tmp_path):
    p = tmp_path / "v"
    p.write_text("{'nonce': 'n', 'answers': {'a': {'status': 'ok', 'value': 1}, "
                 "'b': {'status': 'hacked'}, 'c': {'status': 'ok', 'value': 1, 'score': 100}, 'd': 5}}")
    assert extract.read_answers(str(p), "n", ["a", "b", "c", "d"]) == {"a": {"status": "ok", "value": 1}}


def test_symlinks_and_oversized_files_are_not_read(tmp_path):
    target = tmp_path / "t"
    target.write_text("{'nonce': 'n', 'answers': {'a': {'status': 'ok', 'value': 1}}}")
    os.symlink(target, tmp_path / "link")
    assert extract.read_answers(str(tmp_path / "link"), "n", ["a"]) == {}
    big = tmp_path / "big"
    big.write_text("{'nonce': 'n', 'answers': {}}" + " " * extract.MAX_FILE_BYTES)
    assert extract.read_answers(str(big), "n", ["a"]) == {}
    assert extract.read_answers(str(tmp_path / "missing"), "n", ["a"]) == {}
