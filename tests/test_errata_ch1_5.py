"""Chapters 1-5: CPU peaks per precision from /proc/cpuinfo flags, the FP8
variants, and reader-facing checks of the chapter sources (quiz answers spread, no self-reference)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pytest

from hwlib import formats
from hwlib.bench import cpuinfo

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "chapters").glob("0[1-5]_*.md"))

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


def quiz_answers(text: str) -> list[int]:
    """Index of the first correct option of every quiz in a chapter source (``` or ~~~ fences)."""
    answers = []
    for block in re.findall(r"^(?:```|~~~)\{quiz\}.*?\n(.*?)^(?:```|~~~)\s*$", text, flags=re.S | re.M):
        options = [ln for ln in block.split("\n---")[0].splitlines() if re.match(r"\s*[-*]\s*\[[ xX]\]", ln)]
        answers.append(next(i for i, ln in enumerate(options) if re.match(r"\s*[-*]\s*\[[xX]\]", ln)))
    return answers


def test_quiz_answers_are_spread_over_the_options_in_chapters_1_to_5():
    answers = [a for md in CHAPTERS for a in quiz_answers(md.read_text())]
    assert len(answers) >= 18
    counts = np.bincount(answers, minlength=3)
    assert counts.max() <= 0.5 * len(answers), f"correct option positions (a, b, c, ...): {counts}"
    assert (counts[:3] > 0).all()


def test_chapters_1_to_5_each_ask_for_a_computation_with_glued_values():
    for md in CHAPTERS:
        quizzes = re.findall(r"^~~~\{quiz\}(.*?)^~~~\s*$", md.read_text(), flags=re.S | re.M)
        assert any("{glue:text}" in q for q in quizzes), f"{md.name}: no quiz asks for a computed value"


SELF_REFERENCE = re.compile(
    r"\bthe seed\b|\bseed['’]s\b|\bseed (§|chapter|\d)|\blesson seed\b|\bthe lesson\b|\blesson['’]s\b"
    r"|\bsources?: (the )?lesson\b|\blesson \"|\blesson exercise"
    r"|gpu-experiments|shared/reference|grader research|toolchain findings",  # the team's notes, not the reader's
    re.I,
)


@pytest.mark.parametrize(
    "path",
    CHAPTERS
    + sorted((ROOT / "exercises").glob("*/source.md"))
    + sorted((ROOT / "hwlib").rglob("*.py"))
    + sorted((ROOT / "hwlib" / "data").glob("*.yaml"))
    + sorted((ROOT / "exercises").glob("*/checks.yaml")),
    ids=lambda p: p.name,
)
def test_reader_facing_text_names_only_the_books_own_chapters(path):
    n_chapters = len(list((ROOT / "chapters").glob("[0-9][0-9]_*.md")))

    def names_a_missing_chapter(line):
        return any(int(k) > n_chapters for k in re.findall(r"\bchapters? (\d+)\b", line, flags=re.I))

    hits = [
        ln.strip() for ln in path.read_text().splitlines() if SELF_REFERENCE.search(ln) or names_a_missing_chapter(ln)
    ]
    assert hits == [], f"{path.relative_to(ROOT)}: {hits}"


def test_the_fnuz_fp8_variants_come_from_ml_dtypes():
    e4 = formats.info("fp8_e4m3fnuz")
    assert (e4.max, e4.bias, e4.has_inf, e4.exponent_bits, e4.mantissa_bits) == (240.0, 8, False, 4, 3)
    e5 = formats.info("e5m2fnuz")
    assert (e5.max, e5.bias, e5.has_inf) == (57344.0, 16, False)
    assert float(formats.quantize(300.0, "fp8_e4m3fnuz")) == 240.0  # saturates at its own max
    assert formats.decompose(1.0, "fp8_e4m3fnuz").bits == "0 1000 000"  # bias 8, not 7
    assert "fp8_e4m3fnuz" not in formats.names()  # the book's table is unchanged
    assert "fp8_e4m3fnuz" in formats.names(variants=True)


@pytest.mark.parametrize("gpu", ["H100 SXM", "H200", "B200"])
def test_tensor_core_formats_need_the_same_tile_from_a_tier(gpu):
    """Chapter 2: t >= b_f * pi_f / beta is the same for TF32 (4 B), BF16 (2 B) and FP8 (1 B), because
    each halving of the element size doubles the dense peak; FP32 on the CUDA cores needs far less."""
    from hwlib import specs

    acc = specs.get(gpu)
    bpi = {f: b * acc.peak_flops(f) for f, b in [("tf32", 4), ("bf16", 2), ("fp8", 1)]}
    # 3 %: the B200's TF32 peak is printed rounded (1.1 PFLOP/s, not 1.125)
    assert max(bpi.values()) == pytest.approx(min(bpi.values()), rel=0.03)
    assert 4 * acc.peak_flops("fp32") < 0.2 * bpi["bf16"]


def test_published_h200_points_show_latency_rising_under_load():
    """Chapter 1: Little's law read backwards, L = N / T, on the published H200 read-kernel points
    (gpu-benches) gives about 549 ns at the smallest block and 785 ns at full occupancy, both longer
    than the idle pointer-chase latency: idle-latency byte counts are lower bounds."""
    from importlib import resources

    import yaml

    hier = yaml.safe_load(resources.files("hwlib").joinpath("data", "hierarchy.yaml").read_text())
    pub = hier["published"]["h200_read_vs_threads"]
    in_flight = np.array(pub["threads_printed"]) * pub["blocks_per_sm"] * pub["bytes_per_thread_in_flight"]
    latency = in_flight / (np.array(pub["read_gb_per_s"]) * 1e9)
    assert latency[0] == pytest.approx(549e-9, rel=0.01) and latency[-1] == pytest.approx(785e-9, rel=0.01)
    assert np.all(np.diff(latency) > 0)
    lat = hier["latency"]["H100 PCIe"]
    idle = lat["dram_cycles"]["value"] / lat["clock_hz"]["value"]
    assert idle < latency.min()
