"""hwlib.bench.cpuinfo: the CPU's peak per precision from /proc/cpuinfo's flags, clock and the cores
this process may use; a missing file or clock gives no peak, a bad precision is named."""

from __future__ import annotations

import os

import pytest

from hwlib.bench import cpuinfo

SPR = """processor\t: 0
model name\t: Intel(R) Xeon(R) Platinum 8480+
cpu MHz\t\t: 2000.000
flags\t\t: fpu sse avx avx2 fma avx512f avx512_bf16 avx512_fp16 amx_bf16 amx_int8 amx_tile
processor\t: 1
cpu MHz\t\t: 3800.000
"""
ZEN3 = "model name\t: AMD EPYC 7B13\ncpu MHz\t\t: 2450.000\nflags\t\t: fpu sse avx avx2 fma\n"


def test_sapphire_rapids_flags_give_amx_bf16_and_an_fp32_simd_peak():
    cpu = cpuinfo.parse(SPR, cores=56)
    assert cpu.model.startswith("Intel") and cpu.clock_hz == 2.0e9  # the first cpu MHz line
    assert cpu.fp32_lanes == 16 and cpu.amx_bf16 and cpu.avx512_fp16
    assert cpu.matrix_extensions() == ["amx_bf16", "amx_int8", "avx512_bf16", "avx512_fp16"]
    # 56 cores x 2 GHz x 16 lanes x 2 (FMA) x 2 units
    assert cpuinfo.peak_flops(cpu, "fp32") == pytest.approx(56 * 2e9 * 16 * 2 * 2)
    assert cpuinfo.peak_flops(cpu, "fp64") == pytest.approx(56 * 2e9 * 8 * 2 * 2)
    assert cpuinfo.flop_per_cycle(cpu, "bf16") == (1024, "AMX-BF16")  # Intel: 1,024 BF16 ops/cycle/core
    assert cpuinfo.peak_flops(cpu, "bf16") == pytest.approx(56 * 2e9 * 1024)
    assert cpuinfo.peak_flops(cpu, "fp16") == pytest.approx(2 * cpuinfo.peak_flops(cpu, "fp32"))


def test_a_cpu_without_16_bit_paths_has_no_bf16_peak_and_says_why():
    cpu = cpuinfo.parse(ZEN3, cores=8)
    assert cpu.simd == "AVX/AVX2" and cpu.matrix_extensions() == []
    assert cpuinfo.peak_flops(cpu, "fp32") == pytest.approx(8 * 2.45e9 * 8 * 2 * 2)
    per_cycle, why = cpuinfo.flop_per_cycle(cpu, "bfloat16")
    assert per_cycle is None and "emulated" in why
    assert cpuinfo.peak_flops(cpu, "bf16") is None


def test_avx512_bf16_without_amx_doubles_the_fp32_rate():
    cpu = cpuinfo.parse("cpu MHz : 2600\nflags : sse avx avx512f avx512_bf16\n", cores=2)
    assert cpuinfo.flop_per_cycle(cpu, "bf16") == (128, "AVX512-BF16")


def test_unknown_clock_or_file_gives_no_peak_and_bad_precision_is_named():
    assert cpuinfo.read("/nonexistent/cpuinfo").flags == frozenset()
    assert cpuinfo.peak_flops(cpuinfo.parse("flags : avx512f fma\n", cores=4), "fp32") is None
    with pytest.raises(ValueError, match="precision.*Accepted: fp64, fp32, bf16, fp16"):
        cpuinfo.flop_per_cycle(cpuinfo.parse(ZEN3, cores=1), "int3")


def test_this_machine_reads_as_its_cpuinfo_file_says(tmp_path):
    """read() is parse() of the file, with the CPUs this process may use as its cores."""
    copy = tmp_path / "cpuinfo"
    copy.write_text(SPR)
    assert cpuinfo.read(str(copy)) == cpuinfo.parse(SPR)
    assert cpuinfo.read(str(copy)).cores == len(os.sched_getaffinity(0))
    assert cpuinfo.read(str(copy), cores=56) == cpuinfo.parse(SPR, cores=56)
