"""The release steps of .github/workflows/release.yml, runnable here (`make release` calls them).

    python tools/release.py verify-tag v0.3.0      # the tag names this edition, or exit 1 saying why
    python tools/release.py autograders --wheel-dir _build/dist --out _build/release
    python tools/release.py collect --dist _build/dist --out _build/release

`autograders` writes one Gradescope autograder zip per exercise (`hwlib grade-package`, public checks
only, holding the wheel just built). `collect` gathers what a release attaches into --out:

    dist/hwlib-X.Y.Z-py3-none-any.whl, dist/hwlib-X.Y.Z.tar.gz   (also published to the package index)
    hardware-for-ai.pdf                                          (the whole book, tools/build_pdf.py)
    autograders/<exercise id>.zip                                (one per exercise)
    site.tar.gz                                                  (the built site, _build/html)
    NOTES.md                                                     (this version's changelog entry)
    MANIFEST.txt                                                 (every file above with its size and SHA-256)
"""

from __future__ import annotations

import argparse
import hashlib
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import edition  # noqa: E402

PDF = ROOT / "_build" / "pdf" / "hardware-for-ai.pdf"
SITE = ROOT / "_build" / "html"


def exercises(root: Path = ROOT) -> list[str]:
    return sorted(p.parent.name for p in root.glob("exercises/ex*/source.md"))


def changelog_section(version: str, root: Path = ROOT) -> str:
    """The text of CHANGELOG.md's entry for `version` (its heading line included)."""
    text = (root / "CHANGELOG.md").read_text(encoding="utf-8")
    parts = re.split(r"(?m)^(?=## )", text)
    for part in parts:
        if re.match(rf"^## \[?{re.escape(version)}\]?\b", part):
            return part.strip() + "\n"
    raise SystemExit(f"release: CHANGELOG.md has no entry '## {version}'")


def verify_tag(tag: str, root: Path = ROOT) -> list[str]:
    """Why `tag` cannot be released as this edition (empty when it can)."""
    ed = edition.load(root)
    problems = []
    if tag != ed.tag:
        problems.append(f"tag {tag!r} is not this edition's: hwlib/__init__.py says {ed.version} (tag {ed.tag})")
    versions = re.findall(r"(?m)^## \[?(\d+\.\d+\.\d+)\]?", (root / "CHANGELOG.md").read_text(encoding="utf-8"))
    if not versions or versions[0] != ed.version:
        problems.append(f"CHANGELOG.md's newest entry is {versions[:1]}, not {ed.version}")
    stale = edition.stale(root)
    if stale:
        names = ", ".join(str(p.relative_to(root)) for p in stale)
        problems.append(f"files still name another edition or home: {names} (run: python tools/edition.py)")
    return problems


def build_autograders(wheel_dir: Path, out: Path) -> list[Path]:
    wheels = sorted(wheel_dir.glob("hwlib-*.whl"))
    if len(wheels) != 1:
        raise SystemExit(f"release: expected one hwlib wheel in {wheel_dir}, found {[w.name for w in wheels]}")
    target = out / "autograders"
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    made = []
    for ex in exercises():
        zip_path = target / f"{ex}.zip"
        cmd = [sys.executable, "-m", "hwlib", "grade-package", ex, "--wheel", str(wheels[0]), "--out", str(zip_path)]
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"release: grade-package {ex} failed: {proc.stderr.strip()[-500:]}")
        made.append(zip_path)
    return made


def collect(dist: Path, out: Path, pdf: Path = PDF, site: Path = SITE) -> list[Path]:
    ed = edition.load(ROOT)
    for need, what in ((pdf, "the PDF (make pdf)"), (site / "index.html", "the built site (make book)")):
        if not need.is_file():
            raise SystemExit(f"release: {need} is missing: build {what} first")
    files = sorted(dist.glob(f"hwlib-{ed.version}*"))
    kinds = {f.name.endswith(".whl") for f in files} | {f.name.endswith(".tar.gz") for f in files}
    if len(files) != 2 or kinds != {True, False}:
        raise SystemExit(
            f"release: {dist} must hold hwlib {ed.version}'s wheel and sdist; found {[f.name for f in files]}"
        )
    (out / "dist").mkdir(parents=True, exist_ok=True)
    for f in files:
        shutil.copy2(f, out / "dist" / f.name)
    shutil.copy2(pdf, out / pdf.name)
    with tarfile.open(out / "site.tar.gz", "w:gz") as tar:
        tar.add(site, arcname=f"hardware-for-ai-{ed.tag}")
    (out / "NOTES.md").write_text(changelog_section(ed.version), encoding="utf-8")
    artefacts = sorted(p for p in out.rglob("*") if p.is_file() and p.name != "MANIFEST.txt")
    lines = [
        f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.stat().st_size:>10}  {p.relative_to(out)}" for p in artefacts
    ]
    (out / "MANIFEST.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return artefacts


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="tools/release.py", description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="step", required=True)
    v = sub.add_parser("verify-tag")
    v.add_argument("tag")
    a = sub.add_parser("autograders")
    a.add_argument("--wheel-dir", type=Path, required=True)
    a.add_argument("--out", type=Path, required=True)
    c = sub.add_parser("collect")
    c.add_argument("--dist", type=Path, required=True)
    c.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    if args.step == "verify-tag":
        problems = verify_tag(args.tag)
        print("\n".join(problems) or f"{args.tag} is this edition")
        return 1 if problems else 0
    if args.step == "autograders":
        for path in build_autograders(args.wheel_dir, args.out):
            print(f"wrote {path}")
        return 0
    for path in collect(args.dist, args.out):
        print(f"release: {path.relative_to(args.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
