"""plot.energy_per_operation draws exactly the data of hwlib.energy."""

import pytest

from hwlib import energy, plot


def test_bars_are_the_energy_table():
    fig, ax = plot.energy_per_operation()
    drawn = sorted(p.get_width() for p in ax.patches)
    rows = [r for r in energy.table() if r["kind"] == "memory" or r["bits"] == 32]
    assert drawn == pytest.approx(sorted(r["joules_per_32bit"] * 1e12 for r in rows))
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert any("HBM2" in t for t in labels) and any("32-bit float multiply" in t for t in labels)
    assert ax.get_xscale() == "log"


def test_empty_rows_refused():
    with pytest.raises(ValueError):
        plot.energy_per_operation(rows=[])
