"""hwlib.grading.check: the learner's self-check inside a notebook (public checks only)."""

from hwlib.grading import check


def answers(**over):
    ns = {
        "weights_bf16": "2.6 GB",
        "weights_int4": 0.65e9,
        "training_state": "20.8 GB",
        "kv_cache": lambda n_layers, n_heads, head_dim, seq_len, batch=1, bytes_per_value=2: 2
        * n_layers
        * n_heads
        * head_dim
        * seq_len
        * batch
        * bytes_per_value,
        "kv_4k": "1 GiB",
        "fits_inference": True,
        "fits_training": "no",
        "max_sequences": 13,
        "why_training": "optimizer_state",
    }
    ns.update(over)
    return ns


def test_all_right(capsys):
    assert check("ex01_memory_budget", answers()) is None
    out = capsys.readouterr().out
    assert out.count("✓") == 10 and "✗" not in out and "Public checks: 10/10 points" in out


def test_specific_feedback_for_each_mistake(capsys):
    check(
        "ex01",
        answers(
            weights_bf16="2.6 GiB", training_state="≈ 12 hours", kv_cache=lambda *a, **k: 1 / 0, fits_training=None
        ),
    )
    out = capsys.readouterr().out
    assert "✗ weights_bf16 (0/1)" in out and "GiB where GB was meant" in out
    assert "'≈ 12 hours' is a time; expected a size in bytes" in out
    assert "calling it raised ZeroDivisionError" in out
    assert "✗ fits_training (0/1): `fits_training`: not answered (None); expected True or False" in out
    assert "✗ kv_cache_fn_batch (0/1)" in out
    assert "✓ fits_inference" in out and "✓ max_sequences" in out  # graded from the learner's own 2.6 GiB
    assert "Public checks: 5/10 points" in out


def test_reads_the_callers_globals(capsys):
    ns = answers()
    exec("from hwlib.grading import check\ncheck('ex01_memory_budget')", ns)
    assert "Public checks: 10/10 points" in capsys.readouterr().out


def test_hidden_checks_are_not_used(capsys):
    check("ex01", answers())  # the example hidden checks add kv_cache_other_model and kv_cache_canary
    out = capsys.readouterr().out
    assert "kv_cache_other_model" not in out and "canary" not in out and out.count("✓") == 10


def test_skipped_while_grading_and_unknown_exercises_do_not_raise(capsys, monkeypatch):
    check("ex99_nope", {})
    assert "self-check unavailable: exercise 'ex99_nope' not found" in capsys.readouterr().out
    monkeypatch.setenv("HWLIB_GRADING", "1")
    check("ex01", answers())
    assert "skipped" in capsys.readouterr().out


def test_a_wrong_explanation_is_told_what_is_wrong(capsys):
    check("ex01", answers(why_training="activations"))
    out = capsys.readouterr().out
    assert "✗ why_training (0/1)" in out and "question 2 counted none" in out
