"""references.bib renders as a reader sees it: proper nouns keep their capitals, "$20" and "60 %"
come out as written, no key is defined twice (pybtex, the library sphinxcontrib-bibtex uses)."""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pybtex = pytest.importorskip("pybtex")


@pytest.fixture(scope="module")  # parsed and formatted once (seconds), on one xdist worker
def rendered() -> dict:
    from pybtex.database import parse_file
    from pybtex.plugin import find_plugin

    db = parse_file(str(ROOT / "references.bib"))  # raises on a repeated key
    style = find_plugin("pybtex.style.formatting", "unsrt")()  # the book's default style family
    return {e.key: e.text.render_as("text") for e in style.format_bibliography(db)}


def test_proper_nouns_keep_their_capitals(rendered):
    text = rendered
    assert "FlashAttention: fast" in text["dao2022flashattention"]
    assert "Megatron-LM: training" in text["shoeybi2019megatron"]
    assert "using Megatron-LM" in text["narayanan2021megatron"]
    assert "NVIDIA H100 Tensor Core GPU" in text["nvidia2022h100"]
    assert "PagedAttention" in text["kwon2023pagedattention"]
    assert "(124M)" in text["karpathy2024llmc"]


def test_dollar_and_percent_render_as_written(rendered):
    llmc = rendered["karpathy2024llmc"]
    assert "for $20" in llmc and "\\$" not in llmc
    assert "60\u00a0% MFU" in llmc and "\\," not in llmc
    for key, text in rendered.items():
        assert "\\" not in text, f"{key}: a LaTeX escape reaches the reader: {text!r}"
