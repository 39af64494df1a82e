"""Tables and figure of the book's hardware gallery (gallery.md): every recorded run of
`hwlib.bench` next to its spec sheet, and the published measurements (not ours) with their sources.

Achieved fraction of spec = best measured rate / spec-sheet peak, per experiment and precision:
bytes/s against `Accelerator.bandwidth`, FLOP/s against `Accelerator.peak_flops(precision)`.
A run whose device is not in the spec sheet (a CPU, an unlisted GPU) is shown without a fraction.
"""

from __future__ import annotations

import html

from hwlib import memory, specs, units
from hwlib.bench import recorded

# experiment -> (rate key in its results, spec number it is compared with, what the rate is)
METRICS = {
    "bandwidth": ("bytes_per_s", "bandwidth", "best STREAM kernel"),
    "matmul": ("flops_per_s", "peak", "matmul FLOP/s"),
    "roofline": ("flops_per_s", "peak", "best point of the empirical roofline"),
    "fusion": ("bytes_per_s", "bandwidth", "elementwise chain, bytes moved per second"),
    "occupancy": ("bytes_per_s", "bandwidth", "bandwidth with the most bytes in flight"),
    "formats": ("flops_per_s", "peak", "matmul FLOP/s per number format"),
    "decode": ("bytes_per_s", "bandwidth", "decode step, weight bytes read per second"),
}


def _precision(row: dict):
    name = row.get("format") or row.get("dtype")
    if not name:
        return None
    try:
        return memory.dtype_name(name)
    except ValueError:
        return None


def _spec_value(acc, kind: str, precision):
    if acc is None:
        return None
    if kind == "bandwidth":
        return acc.bandwidth
    try:
        return acc.peak_flops(precision)
    except ValueError:
        return None


def run_rows(run: dict) -> list[dict]:
    """One row per (experiment, precision) of a loaded run: the best achieved rate, the spec number
    it is compared with (None if the device or precision is not on the sheet) and their ratio."""
    device = run["device"].get("name", "?")
    acc = specs.match(device) if run["device"].get("kind") != "cpu" else None
    rows = []
    for experiment, (key, kind, what) in METRICS.items():
        rec = run["records"].get(experiment)
        if not rec or rec.get("status") != "ok":
            continue
        best = {}
        for r in rec.get("results", []):
            if r.get("status", "ok") != "ok" or not isinstance(r.get(key), (int, float)):
                continue
            p = _precision(r) if kind == "peak" else None
            if r[key] > best.get(p, 0.0):
                best[p] = float(r[key])
        for p, achieved in best.items():
            spec = _spec_value(acc, kind, p)
            rows.append(
                {
                    "device": device,
                    "spec": acc.name if acc else None,
                    "date": run["date"][:10],
                    "backend": run["backend"],
                    "experiment": experiment,
                    "what": what,
                    "precision": p,
                    "kind": kind,
                    "achieved": achieved,
                    "spec_value": spec,
                    "fraction": achieved / spec if spec else None,
                }
            )
    return rows


def _rate(kind: str, value) -> str:
    if value is None:
        return "—"
    return units.format_bandwidth(value) if kind == "bandwidth" else units.format_rate(value)


def _fraction(value) -> str:
    return "—" if value is None else f"{value:.0%}"


def _table(header, rows, caption: str) -> str:
    """An HTML table (myst-nb renders text/html outputs verbatim; cells are escaped here)."""
    head = "".join(f'<th scope="col">{html.escape(h)}</th>' for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return (
        f'<div class="hwlib-scroll"><table class="table hwlib-gallery"><caption>{html.escape(caption)}'
        f"</caption><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>"
    )


def recorded_html(runs=None) -> str:
    """HTML for the recorded runs: an honest sentence when there are none, else one table per run."""
    runs = recorded.load_available() if runs is None else runs
    if not runs:
        return (
            '<p class="hwlib-gallery-empty"><strong>No recorded GPU run is in this repository yet.</strong> '
            "The book has so far been built on machines without a GPU, and nothing on this page is "
            "passed off as a measurement of ours: the next table holds published figures from other "
            "people's benchmarks until a run is recorded.</p>"
        )
    parts = []
    for run in runs:
        rows = run_rows(run)
        name = html.escape(run["device"].get("name", "?"))
        spec = (
            f"spec sheet entry: {html.escape(rows[0]['spec'])}"
            if rows and rows[0]["spec"]
            else "not in the spec sheet, so no fraction of peak"
        )
        caption = (
            f"{name}, recorded {run['date'][:10]} with {run['backend']}"
            f"{' (quick sizes)' if run.get('quick') else ''}; {spec}"
        )
        parts.append(
            _table(
                ["experiment", "what", "precision", "achieved", "spec", "fraction of spec"],
                [
                    [
                        r["experiment"],
                        html.escape(r["what"]),
                        r["precision"] or "—",
                        _rate(r["kind"], r["achieved"]),
                        _rate(r["kind"], r["spec_value"]),
                        _fraction(r["fraction"]),
                    ]
                    for r in rows
                ],
                html.unescape(caption),
            )
        )
    return "\n".join(parts)


def published_rows() -> list[dict]:
    """`recorded.published()` (hwlib/data/published_measurements.yaml); [] while the file is absent."""
    if not recorded.PUBLISHED_PATH.exists():
        return []
    return recorded.published()


def _published_value(m: dict, value) -> str:
    q = m["quantity"]
    if value is None:
        return "—"
    if q == "bytes_per_s":
        return units.format_bandwidth(value)
    if q in ("flops_per_s", "flop_per_s"):
        return units.format_rate(value)
    return html.escape(units.format_quantity(value, str(q)))  # three figures, never e-notation


def _source(text: str) -> str:
    """A source string, escaped, with its URLs as links."""
    out = []
    for word in str(text).split():
        w = html.escape(word)
        out.append(f'<a href="{w}">{w}</a>' if word.startswith(("http://", "https://")) else w)
    return " ".join(out)


def _what(m: dict) -> str:
    detail = m.get("kernel") or m.get("precision")
    return f"{m['experiment']}{' ' + str(detail) if detail else ''}"


def published_html(rows=None) -> str:
    """HTML table of published measurements, each marked "published, not measured by us"."""
    rows = published_rows() if rows is None else rows
    if not rows:
        return "<p>No published measurements are listed yet (hwlib/data/published_measurements.yaml).</p>"
    body = [
        [
            f"{html.escape(str(m['device']))}<br><small><em>published, not measured by us</em></small>",
            f"{html.escape(_what(m))}"
            + (f"<br><small>{html.escape(str(m['method']))}</small>" if m.get("method") else ""),
            _published_value(m, m["value"]),
            _published_value(m, m.get("spec_value")),
            _fraction(m.get("fraction_of_spec")),
            _source(m["source"]),
        ]
        for m in rows
    ]
    return _table(
        ["device", "experiment", "measured", "spec", "fraction of spec", "source"],
        body,
        "Published measurements (not measured by us) next to the spec sheet",
    )


def figure(runs=None, published=None):
    """Horizontal bars: achieved fraction of spec for every recorded row and published measurement
    that has one; recorded in blue, published in orange with hatching (not colour alone). Returns
    (fig, ax), or None when nothing has a spec to compare with."""
    import matplotlib.pyplot as plt

    from hwlib.plot._base import OKABE_ITO

    runs = recorded.load_available() if runs is None else runs
    published = published_rows() if published is None else published
    bars = [
        (f"{r['device']}: {r['experiment']}{' ' + r['precision'] if r['precision'] else ''}", r["fraction"], "recorded")
        for run in runs
        for r in run_rows(run)
        if r["fraction"] is not None
    ]
    bars += [
        (f"{m['device']}: {_what(m)}", m["fraction_of_spec"], "published")
        for m in published
        if m.get("fraction_of_spec")
    ]
    if not bars:
        return None
    fig, ax = plt.subplots(figsize=(7.0, 0.45 * len(bars) + 1.4), layout="constrained")
    style = {
        "recorded": {"color": OKABE_ITO["blue"], "hatch": ""},
        "published": {"color": OKABE_ITO["orange"], "hatch": "//"},
    }
    for i, (_label, frac, kind) in enumerate(bars):
        ax.barh(
            i,
            frac,
            color=style[kind]["color"],
            hatch=style[kind]["hatch"],
            edgecolor="black",
            linewidth=0.6,
            label=("recorded with hwlib.bench" if kind == "recorded" else "published, not measured by us"),
        )
        ax.text(frac + 0.01, i, f"{frac:.0%}", va="center", fontsize=9)
    ax.axvline(1.0, color="black", linestyle="--", linewidth=1)
    ax.set_yticks(range(len(bars)), [b[0] for b in bars], fontsize=9)
    ax.invert_yaxis()
    ax.set_xlabel("achieved ÷ spec-sheet peak")
    ax.set_xlim(0, max(1.15, max(b[1] for b in bars) + 0.15))
    ax.xaxis.set_major_formatter(lambda v, _: f"{v:.0%}")
    handles, labels = ax.get_legend_handles_labels()
    unique = dict(zip(labels, handles))
    ax.legend(unique.values(), unique.keys(), loc="lower right", fontsize=9)
    return fig, ax


def figure_html(runs=None, published=None) -> str:
    """The `figure` as an inline PNG whose alt text lists what it shows (written from the same rows),
    or a sentence when nothing has a spec to compare with."""
    import base64
    import io

    import matplotlib.pyplot as plt

    made = figure(runs, published)
    if made is None:
        return "<p><em>No measurement with a spec-sheet entry to compare with yet, so no chart.</em></p>"
    fig, ax = made
    labels = [t.get_text() for t in ax.get_yticklabels()]
    values = [p.get_width() for p in ax.patches]
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    alt = (
        "Horizontal bar chart of the achieved fraction of the spec-sheet peak, with a dashed line at 100 %: "
        + "; ".join(f"{lab} {val:.0%}" for lab, val in zip(labels, values))
        + ". Recorded runs are solid blue bars, published measurements orange hatched bars."
    )
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    return (
        f'<figure class="hwlib-gallery-figure"><img src="data:image/png;base64,{data}" '
        f'alt="{html.escape(alt)}" style="max-width:100%;height:auto">'
        "<figcaption>Achieved fraction of the spec-sheet peak. Solid blue: recorded with hwlib.bench. "
        "Orange, hatched: published by others, not measured by us.</figcaption></figure>"
    )
