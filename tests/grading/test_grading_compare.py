"""hwlib.grading.compare: one answer against one check, with messages that never crash or leak."""

import pytest

from hwlib.grading import spec
from hwlib.grading.compare import judge


def make(**kw):
    base = {"name": "x", "kind": "bytes", "hint": "2 bytes per parameter."}
    if "expr" not in kw:
        base["expected"] = 2.6e9
    return spec.parse_checks({"exercise": "ex99", "checks": [{**base, **kw}]}, "t").checks[0]


def ok(value):
    return {"status": "ok", "value": value}


@pytest.mark.parametrize("value", [2.6e9, 2600000000, "2.6 GB", "≈ 2.6GB", "2.42 GiB", "2600 MB", [2.6e9][0]])
def test_right_answers_in_any_notation(value):
    c = make()
    v = judge(c, ok(value), spec.expected_value(c))
    assert v.passed and v.score == 1 and v.answered


def test_gib_for_gb_fails_and_the_public_message_spots_the_slip():
    c = make()
    v = judge(c, ok("2.6 GiB"), 2.6e9)
    assert not v.passed and v.score == 0
    assert "GiB where GB was meant" in v.message and "Hint: 2 bytes per parameter." in v.message


def test_bare_number_in_gb_gets_a_unit_note():
    v = judge(make(), ok(2.6), 2.6e9)
    assert not v.passed and "without the unit" in v.message


@pytest.mark.parametrize(
    "entry, words",
    [
        (None, "not answered"),
        ({"status": "missing"}, "not answered: no variable named x"),
        (ok(None), "not answered (None)"),
        ({"status": "unsupported", "type": "ellipsis"}, "still `...`"),
        ({"status": "unsupported", "type": "DataFrame"}, "a DataFrame cannot be graded"),
        ({"status": "error", "error": "ZeroDivisionError: division by zero"}, "raised ZeroDivisionError"),
        (ok("12 hours"), "is a time; expected a size in bytes"),
        (ok("lots"), "does not start with a number"),
        (ok(True), "is a truth value"),
        (ok("nan"), "not a finite number"),
        (ok([1, 2]), "expected"),
    ],
)
def test_wrong_or_missing_answers_get_a_message_and_zero(entry, words):
    v = judge(make(), entry, 2.6e9)
    assert v.score == 0 and not v.passed and words in v.message


def test_unanswered_is_distinguished_from_wrong():
    assert not judge(make(), {"status": "missing"}, 2.6e9).answered
    assert judge(make(), ok(1.0), 2.6e9).answered


def test_hidden_check_messages_never_show_the_expected_value():
    c = make(expected=1234567.0, hint="")
    for raw in (1234.567, "1.234567 GB", "1234567 s", 1.234567):
        v = judge(c, ok(raw), 1234567.0, public=False)
        assert not v.passed
        assert "1234567" not in v.message.replace(str(raw), "") and "1.235e6" not in v.message


def test_tolerances():
    c = make(rtol=0.05)
    assert judge(c, ok("2.7 GB"), 2.6e9).passed
    assert not judge(make(rtol=0), ok(2.6e9 + 1), 2.6e9).passed
    assert judge(make(rtol=0, atol="1 kB"), ok(2.6e9 + 999), 2.6e9).passed


def test_lists_are_compared_item_by_item():
    c = make(expected=[1e9, 2e9])
    assert judge(c, ok(["1 GB", 2e9]), [1e9, 2e9]).passed
    v = judge(c, ok([1e9, 3e9]), [1e9, 2e9])
    assert not v.passed and "item 2 of 2" in v.message
    assert "a list of 2 values" in judge(c, ok(1e9), [1e9, 2e9]).message


def test_bool_choice_and_string_kinds():
    b = make(kind="bool", expected=True)
    assert judge(b, ok("yes"), True).passed and judge(b, ok(True), True).passed
    assert not judge(b, ok(False), True).passed and "True or False" in judge(b, ok(3), True).message
    ch = make(kind="choice", expected="memory", choices=["memory", "compute"])
    assert judge(ch, ok("  Memory "), ("memory",)).passed
    assert "not one of the choices" in judge(ch, ok("disk"), ("memory",)).message
    s = make(kind="string", expected=["memory bound", "memory-bound"])
    assert judge(s, ok("Memory   Bound"), ("memory bound", "memory-bound")).passed


def test_function_answers_are_named_as_calls():
    c = make(answer="f", args=[1])
    assert "`f`(...): not answered: no function named f" in judge(c, {"status": "missing"}, 1.0).message
    assert "should be a function" in judge(c, {"status": "not_callable", "type": "float"}, 1.0).message


def test_unit_slips_need_units_and_tight_windows():
    gib = judge(make(), ok(2.6e9 * 2**30 / 1e9), 2.6e9)
    assert "GiB where GB was meant" in gib.message
    near = judge(make(), ok(2.6e9 * 1.06), 2.6e9)  # 6 % off is an arithmetic error, not GiB for GB
    assert "looks like" not in near.message
    assert "bits where bytes" in judge(make(), ok(2.6e9 * 8), 2.6e9).message
    assert "looks like" not in judge(make(), ok(2.6e9 * 8.1), 2.6e9).message
    for kind, want in (("usd", 36.0), ("dimensionless", 448.0), ("dimensionless", 13.0)):
        c = make(kind=kind, expected=want)
        for factor in (8, 0.125, 2**30 / 1e9, 1e-9, 100):
            assert "looks like" not in judge(c, ok(want * factor), want).message, (kind, want, factor)
    frac = make(kind="dimensionless", expected=0.35)
    assert "percentage where a fraction" in judge(frac, ok(35), 0.35).message
    hours = make(kind="seconds", expected=42450.0)
    assert "hours without the unit" in judge(hours, ok(42450.0 / 3600), 42450.0).message
    assert "bits" not in judge(hours, ok(42450.0 * 8), 42450.0).message


def test_hint_only_after_a_wrong_answer():
    assert "Hint:" not in judge(make(), {"status": "missing"}, 2.6e9).message
    assert "Hint:" not in judge(make(), ok(None), 2.6e9).message
    assert "Hint: 2 bytes per parameter." in judge(make(), ok(1.0e9), 2.6e9).message
    assert "Hint:" not in judge(make(), ok(2.6e9), 2.6e9).message


def test_known_mistakes_are_diagnosed():
    c = make(
        answer="f",
        args=[3, 4],
        expr="args[0] * args[1] * 2",
        mistakes=[{"expr": "args[0] * args[1]", "says": "You forgot the factor 2."}],
    )
    mistakes = spec.mistake_values(c)
    assert mistakes == [(12.0, "You forgot the factor 2.")]
    v = judge(c, ok(12), 24.0, mistakes=mistakes)
    assert not v.passed and "You forgot the factor 2." in v.message
    assert "forgot" not in judge(c, ok(13), 24.0, mistakes=mistakes).message
    b = make(kind="bool", expected=False, mistakes=[{"expected": True, "says": "It always says yes."}])
    assert "always says yes" in judge(b, ok(True), False, mistakes=spec.mistake_values(b)).message
    ch = make(
        kind="choice", choices=["A", "B"], expected="A", mistakes=[{"expected": "B", "says": "B confuses x with y."}]
    )
    assert "confuses" in judge(ch, ok("b"), ("A",), mistakes=spec.mistake_values(ch)).message


@pytest.mark.parametrize(
    "bad, words",
    [
        ({"says": "x"}, "exactly one of"),
        ({"expr": "1", "expected": 1, "says": "x"}, "exactly one of"),
        ({"expr": "1", "says": ""}, "must say what is wrong"),
        ({"expr": "inputs['t']", "says": "x"}, "does not list"),
    ],
)
def test_bad_mistakes_are_refused_at_load(bad, words):
    with pytest.raises(ValueError, match=words):
        make(mistakes=[bad])


def test_own_uses_the_learners_value_only_when_plausible():
    c = make(kind="bool", inputs=["w"], expr="own(inputs['w'], 'bytes', 2.6e9) <= 2.7e9")
    assert spec.expected_value(c, {"w": "2.6 GB"}) is True
    assert spec.expected_value(c, {"w": "2.8 GB"}) is False  # the learner's own value decides
    assert spec.expected_value(c, {"w": 2.6}) is True  # 1e9 times off: the right value is used
    assert spec.expected_value(c, {"w": "12 hours"}) is True  # not a size: the right value is used
