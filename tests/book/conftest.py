"""Figures drawn by a test are closed after it, so hundreds of figure tests hold no memory."""

import sys

import pytest


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")
