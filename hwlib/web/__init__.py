"""The book's in-page calculators: JavaScript generated from hwlib's Python at build time.

>>> from hwlib.web import llm_calculator, roofline_explorer   # in a hidden cell of a chapter
>>> html = llm_calculator()          # an IPython HTML object; myst-nb puts its text/html in the page

`transpile.to_js` turns hwlib functions into JavaScript (one source of formulas: the page runs
`hwlib.calculator.estimate` and `hwlib.roofline` themselves), `widgets` builds the self-contained
HTML. (The gallery's tables are `hwlib.plot.gallery`; the parity tests' inputs live in tests/parity.py.)
"""

from .transpile import Unsupported, to_js
from .widgets import llm_calculator, roofline_explorer, serving_planner

__all__ = ["llm_calculator", "roofline_explorer", "serving_planner", "to_js", "Unsupported"]
