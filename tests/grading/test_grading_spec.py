"""hwlib.grading.spec: checks.yaml validation, hidden-check merging, expected values."""

from pathlib import Path

import pytest

from hwlib.grading import spec

HIDDEN = Path(__file__).resolve().parents[1] / "fixtures" / "grading" / "hidden"


def checks(*entries, **top):
    return {"exercise": "ex99_demo", "checks": list(entries), **top}


def test_reference_exercise_loads_with_expected_values_from_hwlib():
    ex = spec.load_exercise("ex01_memory_budget")
    assert ex.id == "ex01_memory_budget" and ex.max_score == 10
    solution = {"weights_bf16": 2.6e9, "kv_4k": 2 * 32 * 32 * 64 * 4096 * 2, "training_state": 20.8e9}
    want = {c.name: spec.expected_value(c, {i: solution[i] for i in c.inputs} if c.inputs else None) for c in ex.checks}
    assert want["weights_bf16"] == pytest.approx(2.6e9)
    assert want["weights_int4"] == pytest.approx(0.65e9)
    assert want["training_state"] == pytest.approx(20.8e9)
    assert want["kv_4k"] == 2 * 32 * 32 * 64 * 4096 * 2
    assert want["fits_inference"] is True and want["fits_training"] is False
    assert want["max_sequences"] == 13  # (16 GiB - 2.6 GB) // 1.07 GB: the T4 has 16 GiB (binary)


def test_exercise_found_by_prefix_folder_or_file():
    by_id = spec.find_exercise("ex01_memory_budget")
    assert spec.find_exercise("ex01") == by_id
    assert spec.find_exercise(str(by_id.parent)) == by_id
    assert spec.find_exercise(str(by_id.parent / "solution.ipynb")) == by_id


def test_unknown_exercise_is_a_key_error_listing_the_known_ones():
    with pytest.raises(KeyError, match="ex01_memory_budget"):
        spec.find_exercise("ex99_nope")


def test_hidden_checks_override_and_extend_public_ones():
    ex = spec.load_exercise("ex01", HIDDEN)
    names = [c.name for c in ex.checks]
    assert names[:10] == [c.name for c in spec.load_exercise("ex01").checks]
    assert names[10:] == ["kv_cache_other_model", "kv_cache_canary"]
    kv = next(c for c in ex.checks if c.name == "kv_4k")
    assert kv.hidden and kv.rtol == 0.0001 and kv.visibility == "after_published"
    assert next(c for c in ex.checks if c.name == "kv_cache_canary").visibility == "hidden"
    assert ex.max_score == 12


def test_hidden_checks_for_another_exercise_are_refused():
    public = spec.parse_checks(checks({"name": "a", "kind": "bytes", "expected": 1}), "x")
    other = spec.parse_checks({**checks({"name": "a", "kind": "bytes", "expected": 1}), "exercise": "ex98"}, "y")
    with pytest.raises(ValueError, match="ex98"):
        spec.merge(public, other)


def test_literal_expected_values_with_units_and_lists():
    ex = spec.parse_checks(
        checks(
            {"name": "t", "kind": "seconds", "expected": "12 h"},
            {"name": "l", "kind": "bytes", "expected": [1, "1 KiB"]},
            {"name": "c", "kind": "choice", "choices": ["memory", "compute"], "expected": "Memory"},
            {"name": "f", "kind": "bool", "expected": False},
        ),
        "x",
    )
    assert [spec.expected_value(c) for c in ex.checks] == [43200.0, [1.0, 1024.0], ("Memory",), False]


def test_expr_sees_args_and_hwlib_and_reports_its_errors():
    ok = spec.parse_checks(
        checks({"name": "f", "answer": "g", "kind": "flop", "args": [2, 3, 4], "expr": "flops.matmul_flops(*args)"}),
        "x",
    ).checks[0]
    assert ok.is_call and spec.expected_value(ok) == 2 * 2 * 3 * 4
    bad = spec.parse_checks(checks({"name": "f", "kind": "bytes", "expr": "1 / 0"}), "x").checks[0]
    with pytest.raises(ValueError, match="check f: expr '1 / 0' failed: ZeroDivisionError"):
        spec.expected_value(bad)


@pytest.mark.parametrize(
    "entry, message",
    [
        ({"name": "bad name", "kind": "bytes", "expected": 1}, "name must be an identifier"),
        ({"name": "a", "kind": "furlongs", "expected": 1}, "kind must be one of"),
        ({"name": "a", "kind": "bytes"}, "exactly one of 'expected' and 'expr'"),
        ({"name": "a", "kind": "bytes", "expected": 1, "expr": "1"}, "exactly one of"),
        ({"name": "a", "kind": "bytes", "expected": "12 hours"}, "is a time"),
        ({"name": "a", "kind": "bytes", "expected": 1, "rtol": -1}, "rtol must be a number >= 0"),
        ({"name": "a", "kind": "bytes", "expected": 1, "points": "many"}, "points must be"),
        ({"name": "a", "kind": "bytes", "expected": 1, "tolerance": 1}, "unknown key"),
        ({"name": "a", "kind": "choice", "expected": "x", "choices": ["x"]}, "at least two strings"),
        ({"name": "a", "kind": "choice", "expected": "z", "choices": ["x", "y"]}, "not among choices"),
        ({"name": "a", "kind": "bool", "expected": "yes"}, "true or false"),
        ({"name": "a", "kind": "bytes", "expected": 1, "args": {"x": 1}}, "args must be a list"),
        ({"name": "a", "kind": "bytes", "expected": 1, "args": [object()]}, "arguments must be numbers"),
        ({"name": "a", "kind": "bytes", "expected": 1, "visibility": "secret"}, "visibility must be"),
    ],
)
def test_authoring_errors_name_the_check_and_the_rule(entry, message):
    with pytest.raises(ValueError, match=message):
        spec.parse_checks(checks(entry), "checks.yaml")


def test_duplicate_names_and_bad_top_level_are_refused():
    with pytest.raises(ValueError, match="unique"):
        spec.parse_checks(
            checks({"name": "a", "kind": "bytes", "expected": 1}, {"name": "a", "kind": "bytes", "expected": 2}), "x"
        )
    with pytest.raises(ValueError, match="list 'checks'"):
        spec.parse_checks({"exercise": "ex99"}, "x")
    with pytest.raises(ValueError, match="grading accepts"):
        spec.parse_checks(checks(grading={"timeout": 3}), "x")


def test_missing_hidden_folder_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="--checks must be a folder"):
        spec.load_exercise("ex01", tmp_path / "nope")
