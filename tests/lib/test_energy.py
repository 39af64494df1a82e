"""hwlib.energy against the published tables and runs it is built from."""

import math

import pytest

from hwlib import energy, specs


def test_horowitz_table_values():
    # Horowitz ISSCC 2014 (45 nm): fp32 add 0.9 pJ, mult 3.7 pJ; 64-bit 8 KB SRAM read 10 pJ; DRAM 1.3-2.6 nJ
    assert energy.get("fp32_add") == pytest.approx(0.9e-12)
    assert energy.get("fp32_mult") == pytest.approx(3.7e-12)
    assert energy.per_byte("sram_8kb") == pytest.approx(10e-12 / 8)
    assert energy.per_word("dram_low", 64) == pytest.approx(1.3e-9)
    assert energy.per_word("dram_high", 64) == pytest.approx(2.6e-9)


def test_hbm_per_bit_and_ordering():
    # O'Connor et al. 2017: HBM2 ~3.9 pJ/bit, GDDR5 ~14 pJ/bit
    assert energy.per_byte("hbm2") == pytest.approx(8 * 3.9e-12)
    assert energy.per_byte("gddr5") / energy.per_byte("hbm2") == pytest.approx(14 / 3.9)
    words = {r["key"]: r["joules_per_32bit"] for r in energy.table()}
    # moving a word gets dearer the farther it goes; every move off chip costs more than a multiply
    assert words["sram_8kb"] < words["sram_1mb"] < words["hbm2"] < words["gddr5"] < words["dram_low"]
    assert words["hbm2"] > words["fp32_mult"]


def test_training_energy_matches_patterson_gpt3():
    g = energy.published("gpt3")
    joules = energy.run_energy_j(g["n_devices"], g["days"] * 86400, g["power_w"], g["pue"])
    assert energy.kwh(joules) / 1e3 == pytest.approx(g["energy_mwh"], rel=0.01)


def test_llama3_card_energy():
    card = energy.published("llama3_8b")
    mwh = energy.kwh(energy.gpu_hours_energy_j(card["gpu_hours"], card["power_w"])) / 1e3
    assert mwh == pytest.approx(1.3e6 * 0.7 / 1e3)


def test_decode_energy_is_power_over_rate():
    h100 = specs.get("H100 SXM")
    e = energy.decode_joules_per_token(14e9, h100, batch=1)
    assert e == pytest.approx(h100.tdp_watts / (h100.bandwidth / 14e9))
    # batching divides the energy per token (same power, more tokens per weight read)
    assert energy.decode_joules_per_token(14e9, h100, batch=16) < e / 10
    # the HBM reads are a part of the board power, not more than it
    assert energy.hbm_joules_per_token(14e9) < e


def test_training_run_consistent():
    run = energy.training_run(6 * 8e9 * 15e12, "H100 SXM", 0.4, n_devices=1024, pue=1.1, usd_per_kwh=0.1)
    assert run["energy_j"] == pytest.approx(run["gpu_hours"] * 3600 * 700 * 1.1)
    assert run["electricity_usd"] == pytest.approx(run["energy_kwh"] * 0.1)


def test_energy_ridge():
    # below e_byte / e_flop FLOP/byte data movement dominates the energy
    e_f, e_b = energy.get("fp16_mult"), energy.per_byte("hbm2")
    ridge = e_b / e_f
    assert energy.kernel_energy_j(ridge * 0.5, 1, e_f, e_b) < 2 * e_b
    assert math.isclose(energy.kernel_energy_j(ridge, 1, e_f, e_b), 2 * e_b)


@pytest.mark.parametrize(
    "call",
    [
        lambda: energy.get("fp64_fma"),
        lambda: energy.run_energy_j(8, 3600, 700, pue=0.9),
        lambda: energy.joules_per_token(700, 0),
        lambda: energy.facility("pue_mars"),
        lambda: energy.decode_joules_per_token(14e9, "TPU v5e"),
    ],
)
def test_bad_input(call):
    with pytest.raises((ValueError, KeyError)) as err:
        call()
    assert str(err.value)
