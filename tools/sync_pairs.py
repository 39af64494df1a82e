"""Superseded by tools/make_colab.py, which renders the Colab notebooks (not jupytext pairs).

python tools/sync_pairs.py [--check]   # the same as: python tools/make_colab.py [--check]
"""

import runpy
import sys
from pathlib import Path

if __name__ == "__main__":
    sys.argv[0] = str(Path(__file__).with_name("make_colab.py"))
    runpy.run_path(sys.argv[0], run_name="__main__")
