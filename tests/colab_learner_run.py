"""Driver of tests/install/test_colab_learner.py, run by the learner's own Python (a fresh venv), not by pytest.

    python colab_learner_run.py OUT.json INSTALL_SPEC WORKDIR NOTEBOOK...

Executes each Colab notebook top to bottom from its own empty folder under WORKDIR, with the install
cell pointed at INSTALL_SPEC (the local checkout's wheel), and writes per notebook: error, wall time,
per-cell times, the text outputs, and what hwlib.book glued (values and the names marked live).
"""

import json
import re
import sys
import time
from datetime import datetime
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

PROBE = (
    "import json\nfrom hwlib import book as _b\n"
    'print("HWLIB-GLUE " + json.dumps({"glued": _b.GLUED, "live": sorted(_b.LIVE)}))'
)


def seconds(meta) -> float:
    t = meta.get("execution", {})
    try:
        start = datetime.fromisoformat(t["iopub.status.busy"].replace("Z", "+00:00"))
        end = datetime.fromisoformat(t["shell.execute_reply"].replace("Z", "+00:00"))
    except (KeyError, ValueError):
        return 0.0
    return (end - start).total_seconds()


def text_of(cell) -> str:
    parts = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream":
            parts.append(out.get("text", ""))
        elif out.get("output_type") == "error":
            parts.append(f"ERROR {out.get('ename')}: {out.get('evalue')}\n")
        elif "text/plain" in out.get("data", {}):
            parts.append(out["data"]["text/plain"] + "\n")  # a figure or table: a line of its own
    return "".join(parts)


def run(path: Path, spec: str, workdir: Path, probe: bool = True, code_cells: int | None = None) -> dict:
    nb = nbformat.read(path, as_version=4)
    if code_cells is not None:  # the page up to its code_cells-th code cell, whatever prose comes between
        ends = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
        nb.cells = nb.cells[: ends[code_cells - 1] + 1]
    first = nb.cells[0]
    first.source = re.sub(r'"hwlib(?: @ git\+[^"]+|==[\w.]+)"', f'"hwlib @ {spec}"', first.source)
    if probe:
        nb.cells.append(nbformat.v4.new_code_cell(PROBE))
    here = workdir / path.stem
    here.mkdir(parents=True, exist_ok=True)
    client = NotebookClient(
        nb,
        timeout=600,
        kernel_name="python3",
        record_timing=True,
        allow_errors=not probe,
        resources={"metadata": {"path": str(here)}},
    )
    start, error = time.perf_counter(), None
    try:
        client.execute()
    except CellExecutionError as exc:
        error = str(exc)[-4000:]
    wall = time.perf_counter() - start
    code = [c for c in nb.cells if c.cell_type == "code"]
    glue = {}
    for line in text_of(code[-1]).splitlines() if probe else []:
        if line.startswith("HWLIB-GLUE "):
            glue = json.loads(line[len("HWLIB-GLUE ") :])
    return {
        "path": str(path),
        "error": error,
        "wall_s": wall,
        "cell_s": [seconds(c.metadata) for c in code],
        "outputs": [text_of(c) for c in code],
        "types": [[o.get("output_type") for o in c.get("outputs", [])] for c in code],
        "glue": glue,
    }


def main(argv):
    out, spec, workdir, *notebooks = argv
    probe = not spec.startswith("nohwlib:")
    results = []
    for nb in notebooks:
        if probe:
            results.append(run(Path(nb), spec, Path(workdir)))
        else:  # hwlib absent: the install cell and the page's first import, nothing else
            results.append(run(Path(nb), spec.split(":", 1)[1], Path(workdir), probe=False, code_cells=2))
    Path(out).write_text(json.dumps(results))


if __name__ == "__main__":
    main(sys.argv[1:])
