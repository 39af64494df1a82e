"""Drawing helpers shared by the conceptual diagrams: boxes, arrows, labels, alt text, data access.

The diagrams follow `hwlib.plot`: matplotlib's default opaque white figure (the book's dark theme
shows every cell image on a light card, so dark text on pale fills stays readable there and in the
PDF), the Okabe–Ito colour-blind-safe palette, and no ``plt.show()``. Fills are pale tints of those
colours with a dark outline, so shapes stay apart in greyscale print too; every colour also has a
text label. Each diagram returns ``(fig, ax)`` like every `hwlib.plot` function (``ax``: the Axes,
or a tuple of them for a figure of several panels); the figure carries its alt text (`alt_text`)
and the numbers it printed (`labels`), so tests can check them against the data files.
"""

from __future__ import annotations

import contextlib
from importlib import resources

import matplotlib.colors as mcolors
import matplotlib.pyplot as plt
import yaml
from matplotlib.collections import PolyCollection
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Rectangle

from hwlib import specs
from hwlib.plot._base import OKABE_ITO

INK = "#1a1a1a"  # text and outlines: near-black
MUTED = "#555555"  # secondary text
FONT = 9  # smallest text a diagram uses (points) at its native size
C = OKABE_ITO


def tint(name: str, amount: float = 0.35) -> tuple:
    """A pale version of an Okabe–Ito colour: amount 1 is the colour itself, 0 is white."""
    r, g, b = mcolors.to_rgb(C.get(name, name))
    return (1 - amount * (1 - r), 1 - amount * (1 - g), 1 - amount * (1 - b))


def canvas(width: float, height: float, xlim=(0, 1), ylim=(0, 1)):
    """A figure with one axis-free axes in data coordinates xlim x ylim (aspect kept equal)."""
    fig, ax = plt.subplots(figsize=(width, height), layout="constrained")
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    ax.set_aspect("equal")
    ax.axis("off")
    return fig, ax


def box(
    ax,
    x,
    y,
    w,
    h,
    text="",
    color="sky_blue",
    amount=0.35,
    size=FONT,
    weight="normal",
    rounded=True,
    lw=1.0,
    ha="center",
    va="center",
    text_color=INK,
    hatch=None,
    zorder=2,
):
    """A filled, outlined box with centred text; (x, y) is the lower-left corner."""
    style = "round,pad=0,rounding_size=%g" % (0.06 * min(w, h)) if rounded else "square,pad=0"
    patch = FancyBboxPatch(
        (x, y), w, h, boxstyle=style, facecolor=tint(color, amount), edgecolor=INK, lw=lw, hatch=hatch, zorder=zorder
    )
    ax.add_patch(patch)
    if text:
        tx = x + w / 2 if ha == "center" else (x + 0.02 * w if ha == "left" else x + 0.98 * w)
        ty = y + h / 2 if va == "center" else (y + h - 0.04 * h if va == "top" else y + 0.04 * h)
        ax.text(tx, ty, text, ha=ha, va=va, fontsize=size, color=text_color, weight=weight, zorder=zorder + 1)
    return patch


_BATCHES: dict[int, list] = {}  # id(axes) -> cells waiting for batched()'s collection


def cell(ax, x, y, w, h, face, lw=0.6, zorder=3):
    """A plain square-cornered cell (grid squares, lanes, chunks). Inside `batched(ax)` it is only
    noted, and drawn with the others as one collection when the block ends."""
    if id(ax) in _BATCHES:
        _BATCHES[id(ax)].append((x, y, w, h, face, lw, zorder))
    else:
        ax.add_patch(Rectangle((x, y), w, h, facecolor=face, edgecolor=INK, lw=lw, zorder=zorder))


@contextlib.contextmanager
def batched(ax):
    """Draw every cell() of the block as one PolyCollection per (line width, zorder), in the order
    drawn: thousands of cells as a few artists (one Rectangle each costs ~1 ms to add)."""
    _BATCHES[id(ax)] = []
    try:
        yield ax
    finally:
        groups: dict[tuple, tuple[list, list]] = {}
        for x, y, w, h, face, lw, zorder in _BATCHES.pop(id(ax)):
            verts, faces = groups.setdefault((lw, zorder), ([], []))
            verts.append(((x, y), (x + w, y), (x + w, y + h), (x, y + h)))
            faces.append(face)
        for (lw, zorder), (verts, faces) in groups.items():
            ax.add_collection(PolyCollection(verts, facecolors=faces, edgecolors=INK, linewidths=lw, zorder=zorder))


def arrow(ax, start, end, color=INK, lw=1.4, style="-|>", text="", size=FONT, offset=(0, 0), rad=0.0, zorder=4):
    """An arrow from start to end with an optional label at its middle (+ offset)."""
    ax.add_patch(
        FancyArrowPatch(
            start,
            end,
            arrowstyle=style,
            mutation_scale=10,
            color=color,
            lw=lw,
            connectionstyle=f"arc3,rad={rad}",
            zorder=zorder,
            shrinkA=1,
            shrinkB=1,
        )
    )
    if text:
        mx, my = (start[0] + end[0]) / 2 + offset[0], (start[1] + end[1]) / 2 + offset[1]
        ax.text(
            mx,
            my,
            text,
            ha="center",
            va="center",
            fontsize=size,
            color=INK,
            zorder=zorder + 1,
            bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none", alpha=0.9),
        )


def under_axes(ax, x: float, y: float, text: str, ha: str = "left"):
    """A muted caption hanging down from (x, y) in axes coordinates (0 to 1): the note under a panel."""
    return ax.text(x, y, text, transform=ax.transAxes, ha=ha, va="top", fontsize=FONT - 0.5, color=MUTED)


def finish(fig, alt: str, labels: dict):
    """Attach the alt text and the labelled numbers to the figure; return ``(fig, ax)``, ``ax`` the
    figure's one Axes or the tuple of all of them."""
    fig.hwlib_alt_text = alt
    fig.hwlib_labels = dict(labels)
    axes = tuple(fig.axes)
    return fig, axes[0] if len(axes) == 1 else axes


def alt_text(fig) -> str:
    """The alt text a diagram function attached to its figure (ValueError for other figures)."""
    text = getattr(fig, "hwlib_alt_text", None)
    if not text:
        raise ValueError("this figure was not drawn by hwlib.plot.diagrams (it carries no alt text)")
    return text


def labels(fig) -> dict:
    """The numbers a diagram printed, by name (bytes, bytes/s, counts: SI units)."""
    return dict(getattr(fig, "hwlib_labels", {}))


# --------------------------------------------------------------------------- data files


def data(name: str) -> dict:
    """A YAML file of hwlib/data (e.g. 'hierarchy', 'networks'), loaded."""
    return yaml.safe_load(resources.files("hwlib").joinpath("data", f"{name}.yaml").read_text(encoding="utf-8"))


def value(record):
    """The number of a {value, source, confidence} record (a plain value passes through)."""
    return record["value"] if isinstance(record, dict) and "value" in record else record


def sm_facts(gpu: str) -> dict:
    """Per-SM resources of a spec-sheet GPU (hierarchy.yaml), with its sub-partition counts where the
    data has them. KeyError naming the accepted GPUs otherwise."""
    hier = data("hierarchy")
    acc = specs.get(gpu)
    if acc.name not in hier["parts"]:
        raise KeyError(f"no per-SM data for {acc.name!r}; hierarchy.yaml has: {', '.join(hier['parts'])}")
    cc = hier["parts"][acc.name]
    facts = {k: value(v) for k, v in hier["compute_capabilities"][cc].items()}
    facts.update({k: value(v) for k, v in hier.get("sm_partitions", {}).get(cc, {}).items()})
    facts.update(compute_capability=cc, name=acc.name, sms=acc.compute_units)
    return facts
