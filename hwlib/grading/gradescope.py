"""Gradescope: grade the one submission in an autograder folder, and package an exercise as an
autograder zip.

Gradescope (https://gradescope-autograders.readthedocs.io/en/latest/specs/) unpacks the zip into
`/autograder/source`, runs `setup.sh` once when the image is built, and for every submission runs
`/autograder/run_autograder` in a fresh container with the learner's files in
`/autograder/submission`; the score is read from `/autograder/results/results.json`. One container
per submission is how a class outgrows one machine.

`hwlib grade EX --gradescope [--autograder-root DIR]` picks the notebook deterministically (the only
`.ipynb`, else the one named `<exercise id>.ipynb`, else it refuses with a result saying which files
it found) and writes results.json itself. `hwlib grade-package EX --checks DIR --out FILE.zip`
writes setup.sh, run_autograder, requirements.txt (the grader's own versions, pinned), the hidden
checks of EX and a wheel of hwlib.
"""

from __future__ import annotations

import importlib.metadata as md
import json
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from . import identity, results, spec, text

RUNTIME = [
    "numpy",
    "ml_dtypes",
    "matplotlib",
    "pyyaml",
    "nbclient",
    "nbformat",
    "ipykernel",
    "jupyter_client",
    "pyzmq",
    "ipython",
    "traitlets",
]


def pick(submission_dir: Path, exercise_id: str) -> tuple[Path | None, str]:
    """(the notebook to grade, "") or (None, why none was chosen)."""
    if not submission_dir.is_dir():
        return None, f"no submission folder ({submission_dir})"
    books = sorted(
        p for p in submission_dir.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts and not p.name.startswith(".")
    )
    if len(books) == 1:
        return books[0], ""
    named = [p for p in books if p.name == f"{exercise_id}.ipynb"]
    if len(named) == 1:
        return named[0], ""
    found = ", ".join(str(p.relative_to(submission_dir)) for p in books[:10]) or "none"
    return None, (f"upload exactly one notebook (or name it {exercise_id}.ipynb); found: {found}")


def learner_of(root: Path) -> str | None:
    """The learner id Gradescope gives the submission (submission_metadata.json: the first user's
    sid, else email, else id), for variants and grades.csv; None when it is not there."""
    try:
        meta = json.loads((root / "submission_metadata.json").read_text(encoding="utf-8"))
        user = (meta.get("users") or [{}])[0]
    except (OSError, ValueError, AttributeError, IndexError, TypeError):
        return None
    for key in ("sid", "email", "id"):
        if isinstance(user, dict) and user.get(key) not in (None, ""):
            return str(user[key])
    return None


def _write_results(root: Path, res: dict) -> Path:
    out = root / "results"
    out.mkdir(parents=True, exist_ok=True)
    path = out / "results.json"
    tmp = out / ".results.json.tmp"
    tmp.write_text(json.dumps(text.clean(res), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def run_gradescope(args, exercise) -> int:
    from . import grader

    root = Path(args.autograder_root)
    chosen, why = pick(root / "submission", exercise.id)
    if chosen is None:
        res = results.not_graded(exercise, why, submission="(none)", status="not_a_file")
        print(f"refused: {why}; wrote {_write_results(root, res)}")
        return 0
    sub = identity.Submission(chosen, chosen.name)
    with tempfile.TemporaryDirectory(prefix="hwlib-gradescope-") as tmp:
        try:
            cfg = grader.setup(args, exercise)
            grader.preflight(exercise, cfg, [p for p in (args.checks,) if p])
        except grader.GraderSetupError as exc:
            reason = "The autograder could not run on the grader's side; your instructor has been told."
            res = results.not_graded(exercise, reason, submission=sub.identity, status="grader_error")
            res["extra_data"]["grader_error"] = str(exc)
            _write_results(root, res)
            print(f"hwlib: grader error: {exc}", file=sys.stderr)
            return grader.EXIT_GRADER
        learner = learner_of(root)
        rows = grader.grade_batch(
            exercise,
            [sub],
            Path(tmp),
            cfg,
            1,
            [p for p in (args.checks,) if p],
            progress=lambda *_: None,
            roster={sub.identity: learner} if learner else None,
        )
    ((_, _, res),) = rows
    path = _write_results(root, res)
    print(f"{sub.identity}: {res['score']:g}/{exercise.max_score:g} {res['extra_data']['status']}; wrote {path}")
    return grader.EXIT_GRADER if res["extra_data"]["status"] in grader.GRADER_SIDE else 0


# ---------------------------------------------------------------------------------- packaging

BASE_IMAGE = "Ubuntu 22.04"  # Gradescope's default autograder base image; its archive has python3.11
SETUP_SH = """#!/usr/bin/env bash
# Gradescope runs this once while it builds the autograder image (written by hwlib grade-package).
# The pins in requirements.txt were taken from CPython {py} (the grader that packaged this), so the
# venv is made with python{py}: on Gradescope's {base} base image (python3 there is 3.10) it comes
# from Ubuntu's archive. Choose that base image in the assignment's settings.
set -euo pipefail
PY=python{py}
apt-get update
apt-get install -y --no-install-recommends bubblewrap "$PY" "$PY-venv" || {{
  echo "hwlib: $PY is not in this image's archive: choose the {base} base image, or package again" \
       "with hwlib grade-package from a grader running the image's Python" >&2
  exit 1
}}
"$PY" -m venv /opt/hwlib-venv
/opt/hwlib-venv/bin/python -c 'import sys; assert sys.version_info[:2] == ({major}, {minor}), sys.version'
/opt/hwlib-venv/bin/pip install --no-cache-dir -r /autograder/source/requirements.txt
/opt/hwlib-venv/bin/pip install --no-cache-dir --no-deps /autograder/source/{wheel}
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope runs this for every submission, in its own container (written by hwlib grade-package).
# AUTOGRADER_ROOT and HWLIB_BIN exist so the same script can be tried on a copy of the layout.
ROOT="${{AUTOGRADER_ROOT:-/autograder}}"
HWLIB="${{HWLIB_BIN:-/opt/hwlib-venv/bin/hwlib}}"
exec "$HWLIB" grade {exercise} --gradescope --autograder-root "$ROOT"{checks}{extra}
"""


def _closure(names) -> list[str]:
    """`names` and every distribution they require (markers evaluated here, extras not followed),
    as installed in this environment."""
    try:
        from packaging.requirements import Requirement
    except ImportError:  # pragma: no cover - packaging comes with pip and ipykernel
        return list(names)
    seen, todo = {}, list(names)
    while todo:
        name = todo.pop()
        key = name.lower().replace("_", "-")
        if key in seen:
            continue
        try:
            dist = md.distribution(name)
        except md.PackageNotFoundError:
            continue
        seen[key] = dist.metadata["Name"]
        for line in dist.requires or []:
            try:
                req = Requirement(line)
            except Exception:
                continue
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return sorted(seen.values(), key=str.lower)


def pinned_requirements() -> str:
    """requirements.txt for the autograder: what grading needs (hwlib's runtime, the kernel, the
    notebook client: RUNTIME) and everything they require, pinned to this grader's versions, for
    this grader's Python (said in the header)."""
    v = sys.version_info
    lines = [
        f"# pinned from the grader that packaged this: CPython {v.major}.{v.minor}.{v.micro} on {sys.platform}",
        f"# (setup.sh makes the venv with python{v.major}.{v.minor}; Gradescope base image: {BASE_IMAGE})",
    ]
    for name in _closure(RUNTIME):
        if name.lower() in ("hwlib", "pip", "setuptools"):
            continue
        lines.append(f"{name}=={md.version(name)}")
    return "\n".join(lines) + "\n"


def wheel_from_installed(dest: Path) -> Path:
    """A wheel of the hwlib installed here (pip install hwlib, no checkout): its installed files and
    dist-info, zipped as a py3-none-any wheel with a new RECORD (PEP 427)."""
    import base64
    import hashlib

    dist = md.distribution("hwlib")
    name, version = dist.metadata["Name"], dist.version
    base = Path(dist.locate_file(""))
    info = f"{name}-{version}.dist-info"
    files = [
        f
        for f in dist.files or []
        if (str(f).startswith("hwlib/") or str(f).startswith(info + "/"))
        and "__pycache__" not in str(f)
        and not str(f).endswith((".pyc", "RECORD", "INSTALLER", "direct_url.json", "REQUESTED"))
    ]
    if not any(str(f).startswith("hwlib/grading/") for f in files):
        raise ValueError("the installed hwlib has no files to pack (an editable install?); pass --wheel FILE")
    out = dest / f"{name}-{version}-py3-none-any.whl"
    record = []
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for f in files:
            data = (base / f).read_bytes()
            z.writestr(str(f), data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append(f"{f},sha256={digest},{len(data)}")
        if not any(str(f) == f"{info}/WHEEL" for f in files):
            wheel = "Wheel-Version: 1.0\nGenerator: hwlib grade-package\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
            z.writestr(f"{info}/WHEEL", wheel)
            record.append(f"{info}/WHEEL,,")
        record.append(f"{info}/RECORD,,")
        z.writestr(f"{info}/RECORD", "\n".join(record) + "\n")
    return out


def build_wheel(dest: Path) -> Path:
    """A wheel of this hwlib: built from its source tree (pip wheel --no-deps) when it runs from
    one, else packed from the installed files (`wheel_from_installed`)."""
    tree = Path(spec.__file__).resolve().parents[2]
    if not (tree / "pyproject.toml").is_file():
        return wheel_from_installed(dest)
    project = dest / "src"  # build from a copy: nothing is written into the source tree
    shutil.copytree(tree / "hwlib", project / "hwlib", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("pyproject.toml", "README.md", "LICENSE", "LICENSES"):
        src = tree / name
        if src.is_dir():
            shutil.copytree(src, project / name)
        elif src.is_file():
            shutil.copy(src, project / name)
    for isolation in ([], ["--no-build-isolation"]):  # the second for a machine without an index
        proc = subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", *isolation, "-q", "-w", str(dest), str(project)],
            capture_output=True,
            text=True,
            timeout=600,
        )
        if proc.returncode == 0:
            break
    wheels = sorted(dest.glob("hwlib-*.whl"))
    if proc.returncode != 0 or not wheels:
        raise ValueError(f"building the hwlib wheel failed: {(proc.stderr or proc.stdout).strip()[-300:]}")
    return wheels[-1]


def package(exercise_name, checks_dir, out: Path, wheel: Path | None = None, allow_unsandboxed: bool = False) -> Path:
    """Write the autograder zip for one exercise; returns its path."""
    exercise = spec.load_exercise(exercise_name, checks_dir)
    from . import grader

    grader.expected_values(exercise)  # a broken check fails here, not on Gradescope
    with tempfile.TemporaryDirectory(prefix="hwlib-package-") as tmp:
        tmp = Path(tmp)
        wheel = Path(wheel) if wheel else build_wheel(tmp)
        if not wheel.is_file() or wheel.suffix != ".whl":
            raise ValueError(f"--wheel must be a .whl file; got {str(wheel)!r}")
        hidden = spec.hidden_file(exercise.id, checks_dir) if checks_dir else None
        out = Path(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        extra = " --no-sandbox" if allow_unsandboxed else ""
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:

            def add(name, text, mode=0o644):
                info = zipfile.ZipInfo(name)
                info.external_attr = (0o100000 | mode) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                z.writestr(info, text)

            v = sys.version_info
            setup = SETUP_SH.format(
                wheel=wheel.name, py=f"{v.major}.{v.minor}", major=v.major, minor=v.minor, base=BASE_IMAGE
            )
            add("setup.sh", setup, 0o755)
            add(
                "run_autograder",
                RUN_AUTOGRADER.format(
                    exercise=exercise.id, extra=extra, checks=' --checks "$ROOT/source/hidden"' * bool(hidden)
                ),
                0o755,
            )
            add("requirements.txt", pinned_requirements())
            add("hidden/README.txt", "Hidden checks for the autograder (never shown to learners).\n")
            if hidden:
                add(f"hidden/{exercise.id}.yaml", hidden.read_text(encoding="utf-8"))
            z.write(wheel, wheel.name)
    return out


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "grade-package",
        help="package an exercise as a Gradescope autograder zip",
        description="Write a Gradescope autograder zip: setup.sh, run_autograder, "
        "pinned requirements.txt, the hidden checks and a wheel of hwlib.",
    )
    p.add_argument("exercise", help="exercise id, prefix (ex01) or folder")
    p.add_argument("--checks", metavar="DIR", help="folder of hidden checks (DIR/<id>.yaml)")
    p.add_argument("--out", metavar="FILE", default="autograder.zip", help="zip to write (default autograder.zip)")
    p.add_argument("--wheel", metavar="FILE", help="a built hwlib wheel (default: build one from this source tree)")
    p.add_argument(
        "--allow-unsandboxed",
        action="store_true",
        help="grade with --no-sandbox where Gradescope's container cannot run bwrap (a submission "
        "can then read the hidden checks in /autograder/source)",
    )
    p.set_defaults(func=_package_cmd)


def _package_cmd(args) -> int:
    if args.checks and not Path(args.checks).is_dir():
        raise ValueError(f"--checks must be a folder of hidden checks; got {args.checks!r}")
    path = package(args.exercise, args.checks, Path(args.out), args.wheel, args.allow_unsandboxed)
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
    print(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB): {', '.join(names)}")
    return 0


def unpack_for_test(zip_path: Path, root: Path) -> Path:
    """Lay out `root` as Gradescope would (root/source from the zip, root/run_autograder)."""
    src = root / "source"
    src.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(zip_path) as z:
        z.extractall(src)
    shutil.copy(src / "run_autograder", root / "run_autograder")
    (root / "run_autograder").chmod(0o755)
    (root / "submission").mkdir(exist_ok=True)
    return root
