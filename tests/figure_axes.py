"""What the figure tests read off a drawn matplotlib figure (tests/book/test_figures_*.py)."""


def legend_texts(ax) -> list[str]:
    """The labels of an axes' legend, in order."""
    return [t.get_text() for t in ax.get_legend().get_texts()]


def fake_device(name, kind="cpu", **extra) -> dict:
    """A device record as hwlib.bench reports one, for figures that label measured data."""
    return {"name": name, "kind": kind, **extra}


def line_named(ax, label):
    """The line of `ax` whose label is `label`; fails naming the labels there are."""
    found = [ln for ln in ax.get_lines() if ln.get_label() == label]
    assert found, f"no line {label!r}; have {[ln.get_label() for ln in ax.get_lines()]}"
    return found[0]
