"""Tick labelling shared by the book's log-scale figures."""

from __future__ import annotations

from matplotlib.ticker import NullFormatter


def label_decades_only(ax, axis: str = "y"):
    """Leave the minor ticks of a log axis unlabelled, so only the decades carry numbers (a crowded
    log axis otherwise prints 2×10¹³, 3×10¹³, ...). `axis` is "x", "y" or "both". Returns ax."""
    if axis not in ("x", "y", "both"):
        raise ValueError(f"axis must be 'x', 'y' or 'both'; got {axis!r}")
    for name in ("x", "y") if axis == "both" else (axis,):
        getattr(ax, f"{name}axis").set_minor_formatter(NullFormatter())
    return ax


def finish_axes(ax, xlabel: str, ylabel: str, title: str, *, xbase2: bool = False, yformatter=None, legend_fontsize=8):
    """The closing touches of a book figure: a base-2 log x axis (`xbase2`, e.g. batch sizes or
    sequence lengths), the y tick formatter (e.g. EngFormatter(unit="B")), axis labels, the title and a
    legend at `legend_fontsize` (None: no legend). Returns ax."""
    if xbase2:
        ax.set_xscale("log", base=2)
    if yformatter is not None:
        ax.yaxis.set_major_formatter(yformatter)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    if legend_fontsize is not None:
        ax.legend(fontsize=legend_fontsize)
    return ax
