"""Create or refresh the jupytext .ipynb pair (no outputs) of every chapter, for the Colab button.

    python tools/sync_pairs.py                       # refresh every pair that is missing or stale
    python tools/sync_pairs.py chapters/05_x.md      # refresh just these chapters
    python tools/sync_pairs.py --check               # exit 1 if any pair is missing or out of sync

Pairs already in sync are left untouched (no churn of cell ids).
"""
from __future__ import annotations

import sys
from pathlib import Path

import jupytext
import nbformat

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "chapters"


def cells(nb) -> list[tuple]:
    """What must match between the pair: cell kinds, sources and metadata (tags, figure captions)."""
    def meta(cell):
        return {k: v for k, v in cell.metadata.items() if k not in ("execution", "id", "trusted")}
    return [(c.cell_type, c.source.strip(), meta(c)) for c in nb.cells]


def problems(paths=None) -> list[str]:
    found = []
    for md in paths or sorted(CHAPTERS.glob("*.md")):
        pair = md.with_suffix(".ipynb")
        if not pair.exists():
            found.append(f"{pair.relative_to(ROOT)} is missing (run: python tools/sync_pairs.py)")
            continue
        text_nb = jupytext.read(md)
        pair_nb = nbformat.read(pair, as_version=4)
        if cells(text_nb) != cells(pair_nb):
            found.append(f"{pair.relative_to(ROOT)} differs from {md.name} (run: python tools/sync_pairs.py)")
        if any(c.get("outputs") for c in pair_nb.cells if c.cell_type == "code"):
            found.append(f"{pair.relative_to(ROOT)} has stored outputs; the Colab copy must be clean")
    return found


def write_all(paths=None) -> None:
    for md in paths or sorted(CHAPTERS.glob("*.md")):
        if not problems([md]):
            continue
        nb = jupytext.read(md)
        nb.metadata["jupytext"] = {"formats": "ipynb,md:myst"}
        nb.metadata.setdefault("colab", {"provenance": []})
        nb.metadata["accelerator"] = "GPU"
        for cell in nb.cells:
            if cell.cell_type == "code":
                cell.outputs, cell.execution_count = [], None
        jupytext.write(nb, md.with_suffix(".ipynb"))
        print(f"wrote {md.with_suffix('.ipynb').relative_to(ROOT)}")


if __name__ == "__main__":
    if "--check" in sys.argv:
        issues = problems()
        print("\n".join(issues) or "all chapter pairs in sync")
        sys.exit(1 if issues else 0)
    write_all([Path(p).resolve() for p in sys.argv[1:]] or None)
