"""E1's working-set sweep (chapter 2): bandwidth against working-set bytes, the device's caches marked,
with a published curve and this book's recorded runs beside the live one."""

from __future__ import annotations

from matplotlib.ticker import EngFormatter

from hwlib import units
from hwlib.plot._base import _axes, _label, _title, l2_plateau, mark_launch_bound
from hwlib.plot.sources import SOURCE_COLOR


def _cache_lines(ax, dev: dict, points) -> None:
    """CPU: a dotted line and its size at each cache level; GPU: the L2 size and the in-L2 plateau."""
    if dev.get("kind") == "gpu":
        if dev.get("l2_bytes"):
            ax.axvline(dev["l2_bytes"], color=SOURCE_COLOR["live"], ls=":", lw=1)
        l2_plateau(ax, points, dev.get("l2_bytes"), SOURCE_COLOR["live"])
        return
    for lvl in ("l1_bytes", "l2_bytes", "l3_bytes"):
        if dev.get(lvl):
            ax.axvline(dev[lvl], color=SOURCE_COLOR["live"], ls=":", lw=1)
            ax.annotate(
                f"{lvl[:2].upper()} {units.format_bytes(dev[lvl], binary=True)}",
                (dev[lvl], 0.5),
                xycoords=("data", "axes fraction"),
                rotation=90,
                fontsize="x-small",
                ha="right",
                color="0.3",
            )


def bandwidth_sweep(record: dict, recorded=(), ax=None, published=None, theory: bool = True):
    """E1 working-set sweep: triad bytes/s (live, o-) against working-set bytes (a + b + c), the
    device's caches marked (CPU: L1/L2/L3 sizes; GPU: L2 size and in-L2 plateau), launch-bound points
    ringed, recorded runs (^-) overlaid.

    published: optional (working-set bytes, bytes/s, label, L2 bytes or None), another device's curve
    (s-, dashed line at its L2); then a record without a sweep is drawn as that curve alone. theory: draw the device's theoretical DRAM bandwidth (GPU:
    2 x clock x bus / 8) where the record has one. Returns (fig, ax)."""
    pts = record.get("sweep") or []
    if not pts and published is None:  # with a published curve, a failed live sweep still leaves a figure
        raise ValueError("record has no 'sweep' (run hwlib.bench.bandwidth with sweep=True)")
    dev = record["device"]
    fig, ax = _axes(ax)
    ws, bw = [p["working_set_bytes"] for p in pts], [p["bytes_per_s"] for p in pts]
    if pts:
        ax.loglog(ws, bw, "o-", color=SOURCE_COLOR["live"], label=_label(record) + " (triad)")
    mark_launch_bound(ax, ws, bw, [p.get("launch_bound") for p in pts])
    _cache_lines(ax, dev, pts)
    if published is not None:
        px, py, plabel, pl2 = published
        ax.loglog(px, py, "s-", ms=4, color=SOURCE_COLOR["published"], label=plabel)
        if pl2:
            ax.axvline(pl2, color=SOURCE_COLOR["published"], ls="--", lw=1)
    for rec in recorded:
        if rec.get("sweep"):
            ax.loglog(
                [p["working_set_bytes"] for p in rec["sweep"]],
                [p["bytes_per_s"] for p in rec["sweep"]],
                "^-",
                ms=4,
                color=SOURCE_COLOR["recorded"],
                label=_label(rec),
            )
    if theory and dev.get("theoretical_bandwidth"):
        ax.axhline(
            dev["theoretical_bandwidth"],
            color="black",
            lw=1.2,
            label="theoretical DRAM bandwidth (2 x clock x bus / 8)",
        )
    ax.xaxis.set_major_formatter(EngFormatter(unit="B"))
    ax.yaxis.set_major_formatter(EngFormatter(unit="B/s"))
    ax.set_xlabel("working set (bytes)")
    ax.set_ylabel("bandwidth")
    ax.set_title(_title("Bandwidth vs working set", record, recorded))
    ax.legend(fontsize="x-small", loc="lower left")
    return fig, ax
