"""hwlib.web widget builders: self-contained HTML with the generated program, data from hwlib, and
the same refusals as the library for bad arguments (the page itself is tested in tests/browser/)."""

from __future__ import annotations

import json
import re

import pytest

from hwlib import calculator, models, specs
from hwlib.web import llm_calculator, roofline_explorer, serving_planner, to_js


def _data(html: str) -> dict:
    return json.loads(re.search(r"const DATA = (\{.*?\});\n", html).group(1).replace("<\\/", "</"))


@pytest.mark.parametrize("build", [llm_calculator, roofline_explorer, serving_planner])
def test_widget_html_is_self_contained_and_offline(build):
    html = build().data
    kind = {llm_calculator: "llm", roofline_explorer: "roofline", serving_planner: "serve"}[build]
    assert f'data-hwlib-widget="{kind}"' in html and "tex2jax_ignore" in html
    script = html[html.index("<script>") + len("<script>") : html.rindex("</script>")]
    assert "</script" not in script.lower()
    for call in ("fetch(", "XMLHttpRequest", "import(", "Worker(", "WebSocket"):
        assert call not in script, f"the widget must not load anything ({call})"
    assert "<link" not in html and "src=" not in html  # nothing fetched: CSS and JS are inline
    data = _data(html)
    names = [a["name"] for a in data["accelerators"]]
    assert names == (specs.names() if kind != "serve" else [a.name for a in specs.all() if a.kind == "gpu"])


def test_every_call_gets_its_own_element_id():
    ids = {re.search(r'id="(hwlib-llm-\d+-[0-9a-f]{8})"', llm_calculator().data).group(1) for _ in range(3)}
    assert len(ids) == 3


def test_llm_data_comes_from_hwlib():
    data = _data(llm_calculator(model="GPT-2 small", gpu="T4").data)
    assert data["defaults"]["model"] == "GPT-2 small" and data["defaults"]["gpu"] == "T4"
    by_name = {m["name"]: m for m in data["models"]}
    for name in models.names():
        shape = models.get(name)
        assert by_name[name]["d_model"] == shape.d_model and by_name[name]["n_kv_heads"] == shape.n_kv_heads
    h100 = {a["name"]: a for a in data["accelerators"]}["H100 SXM"]
    assert h100["flops"]["bf16"] == specs.get("H100 SXM").peak_flops("bf16")
    assert h100["source_bandwidth"] == specs.get("H100 SXM").source("bandwidth")


def test_bad_arguments_are_refused_like_hwlib():
    with pytest.raises(KeyError, match="unknown model"):
        llm_calculator(model="Llama 9")
    with pytest.raises(KeyError, match="unknown accelerator"):
        llm_calculator(gpu="H1000")
    with pytest.raises(ValueError, match="T4 has no bf16"):
        roofline_explorer(accelerator="T4", precision="bf16")
    for bad in (0, -1.0, float("nan"), "10"):
        with pytest.raises(ValueError, match="intensity"):
            roofline_explorer(intensity=bad)


def test_generated_program_is_deterministic():
    assert to_js([calculator.estimate]) == to_js([calculator.estimate])


@pytest.mark.parametrize("page", ["calculators", "gallery"])
def test_book_pages_have_an_in_sync_colab_pair(page):
    """calculators.md and gallery.md are notebooks too: their Colab button needs the .ipynb pair."""
    from pathlib import Path

    import jupytext
    import nbformat

    root = Path(__file__).resolve().parents[2]
    text = jupytext.read(root / f"{page}.md")
    pair = nbformat.read(root / f"{page}.ipynb", as_version=4)  # the Colab edition (tools/make_colab.py)
    untitled = lambda s: s.split("\n", 1)[1] if s.startswith("# @title") else s  # noqa: E731
    cells = lambda nb: [
        untitled(c.source).strip()
        for c in nb.cells  # noqa: E731
        if c.cell_type == "code" and "google.colab" not in c.source
    ]
    assert cells(text) == cells(pair), f"{page}.ipynb is out of date: python tools/make_colab.py"
    assert not any(c.get("outputs") for c in pair.cells if c.cell_type == "code")
    first = next(c for c in text.cells if c.cell_type == "code")
    assert "remove-cell" in first.metadata.get("tags", []) and "google.colab" in first.source


def test_ids_differ_across_kernels():
    """Each chapter runs in its own kernel, yet the single-page/PDF build puts all widgets on one page."""
    import subprocess
    import sys

    code = 'from hwlib.web import roofline_explorer; import re; print(re.search(r\'id="([^"]+)"\', roofline_explorer().data).group(1))'
    ids = {
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
        for _ in range(2)
    }
    assert len(ids) == 2


def test_serving_planner_refuses_like_the_planner():
    with pytest.raises(ValueError, match="mixture-of-experts serving"):
        serving_planner(model="Mixtral 8x7B")
    data = _data(serving_planner(rate_rps=5.0).data)
    assert data["defaults"]["rate_rps"] == 5.0 and "Mixtral 8x7B" not in data["models"]
