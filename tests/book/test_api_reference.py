"""The API reference page (api.md, written by tools/api_reference.py): current, complete for the
public API the chapters and outside code call, and every section link pointing at a real heading."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import api_reference  # noqa: E402

# The public API that chapters, exercises and code outside the repository call (the design's list).
PUBLIC = [
    "specs.get", "specs.names", "specs.Accelerator.peak_flops", "specs.Accelerator.ridge_point",
    "roofline.ridge_point", "roofline.attainable", "roofline.bound", "roofline.matmul_intensity",
    "roofline.elementwise_intensity", "roofline.in_flight_bytes",
    "memory.bytes_per_value", "memory.weights_bytes", "memory.training_state_bytes",
    "memory.training_state_breakdown", "memory.kv_cache_bytes", "memory.activation_bytes",
    "memory.zero_bytes_per_device",
    "flops.matmul_flops", "flops.forward_flops", "flops.training_flops", "flops.training_time_s",
    "flops.cost_usd", "flops.mfu", "flops.decode_tokens_per_s_bound",
    "formats.info", "formats.quantize", "formats.decompose",
    "parallel.ring_allreduce_time_s", "parallel.pipeline_bubble_fraction",
]  # fmt: skip
UNTAUGHT = {"specs.names"}  # public, but no chapter needs it (the CLI's `hwlib specs` lists the sheet)


@pytest.fixture(scope="module")
def page() -> str:
    return (ROOT / "api.md").read_text()


def test_the_page_is_what_the_tool_writes():
    run = subprocess.run(
        [sys.executable, "tools/api_reference.py", "--check"], cwd=ROOT, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr


def test_every_public_function_has_an_entry_that_says_where_it_is_taught(page):
    blocks = page.split("```python\n")[1:]
    found = {b.split("(", 1)[0]: b for b in blocks}
    for name in PUBLIC:
        assert name in found, f"{name} has no entry in api.md"
        taught = "Taught in {doc}`/chapters/" in found[name]
        assert taught != (name in UNTAUGHT), f"{name}: api.md says {'a' if taught else 'no'} chapter calls it"


def test_each_entry_shows_the_signature_and_formula_of_the_library():
    from hwlib import roofline

    text = api_reference.render()
    assert "roofline.attainable(intensity, peak_flops, bandwidth)" in text
    assert roofline.FORMULAS["attainable"] in text
    assert "specs.Accelerator.peak_flops(precision" in text  # a method, shown without self


def test_section_links_point_at_headings_that_exist(page):
    links = re.findall(r"\]\((chapters/[\w]+)\.md#([\w-]+)\)", page)
    assert len(links) > 100
    for doc, slug in set(links):
        headings = re.findall(r"^#{2,3}\s+(.+?)\s*$", (ROOT / (doc + ".md")).read_text(), re.M)
        slugs = {api_reference.default_slugify(h) for h in headings}
        assert slug in slugs, f"api.md links {doc}#{slug}, which is not a heading there"


def test_calls_are_found_through_aliases_and_from_imports():
    import ast

    tree = ast.parse(
        "from hwlib import serving_sim as sim\nfrom hwlib.units import format_bytes\nsim.simulate(e, w)\nformat_bytes(3)\n"
    )
    aliases: dict = {}
    api_reference._aliases(tree, aliases)
    assert api_reference._calls(tree, aliases, {}) == {("serving_sim", "simulate"), ("units", "format_bytes")}


def test_machinery_is_left_out_and_teaching_modules_are_in():
    modules = api_reference.teaching_modules()
    assert {"roofline", "memory", "flops", "specs", "models", "formats", "parallel"} <= set(modules)
    assert not {m for m in modules if m.startswith(("cli", "_")) or m in ("backend", "book", "gallery")}
