"""Copy browser assets installed by `npm ci` into _vendor/, which the book serves as static files.

The published book must not depend on a CDN: MathJax (and anything else the pages need in the
browser) comes from the npm registry at build time, pinned in package-lock.json.
"""

from __future__ import annotations

import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NODE = ROOT / "node_modules"
VENDOR = ROOT / "_vendor"

# (source under node_modules, destination under _vendor)
ASSETS = [
    ("mathjax/es5/tex-svg.js", "mathjax/tex-svg.js"),
    ("mathjax/LICENSE", "mathjax/LICENSE"),  # Apache-2.0: its notice travels with it (NOTICE.md)
]


def main() -> None:
    for src, dst in ASSETS:
        source = NODE / src
        if not source.exists():
            raise SystemExit(f"missing {source}: run `npm ci` first")
        target = VENDOR / dst
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        print(f"vendored {src} -> _vendor/{dst} ({target.stat().st_size / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
