"""hwlib.goodput: interruptions of a published run, Young's interval, first-order goodput."""

import math

import pytest

from hwlib import goodput

LLAMA3 = "Llama 3 405B pre-training (54-day snapshot)"


def test_llama3_snapshot_is_the_published_one():
    run = goodput.runs()[LLAMA3]
    assert run["span_s"] == 54 * 86400 and run["interruptions"] == 466 and run["gpus"] == 16384
    assert run["unexpected_interruptions"] == 419 and run["effective_training_fraction"] == 0.90
    m = goodput.mtbi_s(run["span_s"], run["interruptions"])
    assert m / 3600 == pytest.approx(54 * 24 / 466)  # 2.78 hours between interruptions, job-wide


def test_youngs_interval_minimises_the_model():
    m, d, r = 3 * 3600.0, 60.0, 600.0
    best = goodput.optimal_interval_s(d, m)
    assert best == pytest.approx(math.sqrt(2 * d * m))
    g = goodput.goodput(d, best, r, m)
    assert g > goodput.goodput(d, best / 2, r, m) and g > goodput.goodput(d, best * 2, r, m)
    # by hand: 1 - 60/1138.4 - (569.2 + 600)/10800 = 0.839
    assert g == pytest.approx(1 - d / best - (best / 2 + r) / m)


def test_llama3_goodput_is_consistent_with_their_90_percent():
    """With Llama 3's interruption rate, a minute-long checkpoint at Young's interval and a few
    minutes' restart, the model lands near the paper's 'higher than 90 %' effective training time."""
    run = goodput.runs()[LLAMA3]
    m = goodput.mtbi_s(run["span_s"], run["interruptions"])
    g = goodput.goodput(60, goodput.optimal_interval_s(60, m), 300, m)
    assert 0.85 < g < 0.95


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="interruptions must be a whole number"):
        goodput.mtbi_s(86400, 0)
    with pytest.raises(ValueError, match="checkpoint_s"):
        goodput.optimal_interval_s(-1, 3600)
    assert goodput.goodput(600, 60, 0, 3600) == 0.0  # checkpointing more often than it writes
