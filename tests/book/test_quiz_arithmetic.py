"""Quizzes that ask for a computation give round inputs in the question and work the answer in the
explanation. Those hand-worked numbers are checked here against the hwlib function the chapter
teaches, so a wrong quiz answer fails a test like a wrong glued value would."""

import re
from pathlib import Path

import numpy as np
import pytest

from hwlib import flops, memory, models, parallel, roofline, specs
from hwlib.units import GiB
from test_prose_numbers import QUANTITY

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^(```|~~~)\{quiz\}\s*(.*?)\n(.*?)^\1\s*$", re.S | re.M)
NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


def quizzes(chapter: str) -> list[dict]:
    out = []
    for _, question, body in FENCE.findall((ROOT / "chapters" / chapter).read_text()):
        options, _, explanation = body.partition("\n---\n")
        opts = [re.match(r"\s*- \[( |x)\] (.*)", ln).groups() for ln in options.splitlines() if ln.strip()]
        out.append({"q": question, "options": [(c == "x", t) for c, t in opts], "why": explanation})
    return out


def quiz(chapter: str, starts: str) -> dict:
    found = [q for q in quizzes(chapter) if q["q"].startswith(starts)]
    assert len(found) == 1, f"{chapter}: expected one quiz starting {starts!r}, found {len(found)}"
    return found[0]


def numbers(text: str) -> list[float]:
    return [float(n.replace(",", "")) for n in NUMBER.findall(text)]


def correct(q) -> str:
    (text,) = [t for ok, t in q["options"] if ok]
    return text


def near(value, expected, rel=0.06):
    return value == pytest.approx(expected, rel=rel)


def test_roofline_quiz_answer_is_the_memory_roof():
    q = quiz("06_roofline.md", "An accelerator peaks at 400 TFLOP/s")
    pi, beta, intensity = 400e12, 2e12, 50
    assert numbers(q["q"])[:3] == [400, 2, 50]
    assert near(numbers(correct(q))[0] * 1e12, roofline.attainable(intensity, pi, beta))
    assert f"{roofline.ridge_point(pi, beta):.0f} FLOP/byte" in q["why"]


def test_ring_allreduce_quiz_answer_and_its_distractor():
    q = quiz("07_scaling_out.md", "Eight GPUs all-reduce 2 GB")
    n, size, link = 8, 2e9, 50e9
    t = parallel.ring_allreduce_time_s(size, n, link)
    assert near(numbers(correct(q))[0] / 1e3, t)
    assert f"= {parallel.ring_allreduce_bytes_per_link(size, n) / 1e9:g} GB" in q["why"]
    naive = (n - 1) * size / link  # everything through one GPU's link
    assert f"{naive * 1e3:.0f} ms" in q["why"] and any(f"{naive * 1e3:.0f} ms" in t for _, t in q["options"])


def test_kv_cache_quiz_matches_the_model_card_shape():
    q = quiz("08_training_inference.md", "Llama 3 8B has 32 layers")
    m = models.get("Llama 3 8B")
    assert numbers(q["q"])[2:5] == [m.n_layers, m.n_kv_heads, m.head_dim]  # after "Llama 3 8B"
    per_token = memory.kv_cache_bytes_for(m, seq_len=1)
    assert numbers(correct(q))[0] * 1024 == per_token
    assert f"{per_token:,.0f} bytes" in q["why"]
    assert memory.kv_cache_bytes_for(m, seq_len=8192) == 1 * GiB and "8,192-token sequence holds 1 GiB" in q["why"]


def test_training_state_quiz_is_sixteen_bytes_per_parameter():
    q = quiz("09_napkin_math.md", "How much memory does full training of a 7B")
    assert near(numbers(correct(q))[0] * 1e9, memory.training_state_bytes(7e9), rel=0.01)
    wrong = sorted(numbers(t)[0] for ok, t in q["options"] if not ok)
    assert wrong == [memory.weights_bytes(7e9) / 1e9, 2 * memory.weights_bytes(7e9) / 1e9]
    h100 = specs.get("H100 SXM").memory_bytes
    assert f"{h100 / GiB:.0f} GiB ({h100 / 1e9:.1f} GB)" in q["why"] and memory.training_state_bytes(7e9) > h100


def test_int4_decode_quiz_ceiling():
    q = quiz("09_napkin_math.md", "A 13B-parameter model with int4 weights")
    bound = flops.decode_tokens_per_s_bound(memory.weights_bytes(13e9, "int4"), 1e12)
    assert near(numbers(correct(q))[0], bound) and f"\\approx {bound:.0f}$ tokens/s" in q["why"]
    bf16 = flops.decode_tokens_per_s_bound(memory.weights_bytes(13e9, "bf16"), 1e12)
    assert f"about {bf16:.0f}" in q["why"] and f"{memory.weights_bytes(13e9, 'bf16') / 1e9:.0f} GB" in q["why"]


def test_bandwidth_quiz_quotes_a_real_spec_sheet_value():
    q = quiz("10_pitfalls.md", "A bandwidth benchmark in a notebook reports 30 TB/s")
    assert f"{specs.get('H100 SXM').bandwidth / 1e12:.2f} TB/s" in q["q"]


def test_gemv_quiz_intensities():
    q = quiz("10_pitfalls.md", "Batch-1 decoding multiplies each 8192")
    d = 8192
    one = roofline.matmul_intensity(1, d, d, 2)
    assert near(one, 1.0, rel=0.01) and "= 1$ FLOP/byte" in q["why"]
    assert near(roofline.matmul_intensity(16, d, d, 2), 16, rel=0.01) and "about\n16 FLOP/byte" in q["why"]
    assert near(roofline.matmul_intensity(1, d, d, 0.5), 4, rel=0.01) and "int4 weights about 4" in q["why"]


CHECKED = {
    ("06_roofline.md", "An accelerator peaks at 400 TFLOP/s"),
    ("06_roofline.md", "A kernel has intensity 20 FLOP/byte"),  # conceptual: left of any 300 FLOP/byte ridge
    ("07_scaling_out.md", "Eight GPUs all-reduce 2 GB"),
    ("08_training_inference.md", "Llama 3 8B has 32 layers"),
    ("08_training_inference.md", "A faster GPU with the same HBM"),  # "near 1 FLOP/byte": the GEMV test above
    ("09_napkin_math.md", "How much memory does full training of a 7B"),
    ("09_napkin_math.md", "A 13B-parameter model with int4 weights"),
    ("10_pitfalls.md", "A bandwidth benchmark in a notebook reports 30 TB/s"),
    ("10_pitfalls.md", "Batch-1 decoding multiplies each 8192"),
    ("10_pitfalls.md", "A kernel on an H100 runs at 2 %"),  # a hypothetical reading, no answer depends on it
}


@pytest.mark.parametrize("md", sorted((ROOT / "chapters").glob("*.md")), ids=lambda p: p.name)
def test_every_quiz_with_typed_quantities_is_checked_here(md):
    """A new quiz that types a quantity (outside glue and math) must get a check in this file."""
    unchecked = []
    for q in quizzes(md.name):
        text = "\n".join([q["q"], *(t for _, t in q["options"]), q["why"]])
        text = re.sub(r"\{glue:?\w*\}`[^`]*`", "", text)
        text = re.sub(r"\$[^$]*\$", "", text)
        text = re.sub(r"`[^`]*`", "", text)
        typed = QUANTITY.search(text)
        if typed and not any(md.name == c and q["q"].startswith(s) for c, s in CHECKED):
            unchecked.append((q["q"][:60], typed.group(0)))
    assert unchecked == [], f"{md.name}: these quizzes type a quantity: glue it or check it here"


def quiz_answers(text: str) -> list[int]:
    """Index of the first correct option of every quiz in a chapter source (``` or ~~~ fences)."""
    answers = []
    for block in re.findall(r"^(?:```|~~~)\{quiz\}.*?\n(.*?)^(?:```|~~~)\s*$", text, flags=re.S | re.M):
        options = [ln for ln in block.split("\n---")[0].splitlines() if re.match(r"\s*[-*]\s*\[[ xX]\]", ln)]
        answers.append(next(i for i, ln in enumerate(options) if re.match(r"\s*[-*]\s*\[[xX]\]", ln)))
    return answers


def test_quiz_answers_are_spread_over_the_options():
    answers = [a for md in sorted((ROOT / "chapters").glob("[0-9][0-9]_*.md")) for a in quiz_answers(md.read_text())]
    assert len(answers) >= 50
    counts = np.bincount(answers, minlength=3)
    assert counts.max() <= 0.5 * len(answers), f"correct option positions (a, b, c, ...): {counts}"
    assert (counts[:3] > 0).all()


def test_chapters_1_to_5_each_ask_for_a_computation_with_glued_values():
    for md in sorted((ROOT / "chapters").glob("0[1-5]_*.md")):
        quizzes = re.findall(r"^~~~\{quiz\}(.*?)^~~~\s*$", md.read_text(), flags=re.S | re.M)
        assert any("{glue:text}" in q for q in quizzes), f"{md.name}: no quiz asks for a computed value"
