"""Grade one submission (`grade_one`), check the machine can grade (`preflight`), and the settings
(`configure`, `setup` from the command line's arguments). A class is graded by hwlib.grading.batch
through `grade_batch` here, which hands it `grade_one`.

Expected values are computed once, in the grader, and never enter a learner's kernel.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from dataclasses import replace
from pathlib import Path

import nbformat

from . import batch, compare, forbid, identity, receipt, results, runner, sandbox, spec, text

MAX_NOTEBOOK_BYTES = identity.MAX_NOTEBOOK_BYTES
EXIT_GRADER = 3
"""Exit status of `hwlib grade` when the grader, not the learner, failed (see hwlib.grading.cli)."""


class GraderSetupError(RuntimeError):
    """Grading cannot work on this machine (no kernel, a broken sandbox): nothing was graded."""


def _source(cell) -> str | None:
    src = cell.get("source", cell.get("input", ""))
    if isinstance(src, list) and all(isinstance(x, str) for x in src):
        src = "".join(src)
    return text.clean_str(src) if isinstance(src, str) else None


def normalize(raw: dict) -> tuple[nbformat.NotebookNode, list[str]]:
    """A clean v4 notebook from a parsed file of any nbformat version nbformat reads (1-4): the code
    and markdown cells' text only (no cell metadata, so a `skip-execution` or `raises-exception` tag
    changes nothing; no outputs), lone surrogates as escapes, and the `hwlib` notebook metadata.
    Returns (notebook, notes on what was dropped). ValueError when no cell list can be found."""
    if "cells" not in raw and "worksheets" not in raw:
        raise ValueError("JSON without a list of cells")
    version = raw.get("nbformat")
    if version != 4 or not isinstance(raw.get("cells"), list):
        try:
            raw = nbformat.reads(json.dumps(raw), as_version=4)
        except Exception as exc:
            raise ValueError(f"nbformat {version!r} could not be converted to version 4 ({str(exc)[:80]})") from None
    cells, notes = [], []
    for i, cell in enumerate(raw.get("cells") or []):
        kind = cell.get("cell_type") if isinstance(cell, dict) else None
        src = _source(cell) if isinstance(cell, dict) else None
        if kind not in ("code", "markdown", "raw") or src is None:
            notes.append(f"cell {i + 1}: not a readable cell (type {str(kind)[:20]!r}), left out")
            continue
        make = {"code": nbformat.v4.new_code_cell, "markdown": nbformat.v4.new_markdown_cell}.get(
            kind, nbformat.v4.new_raw_cell
        )
        cells.append(make(src))
    nb = nbformat.v4.new_notebook(cells=cells)
    meta = raw.get("metadata") if isinstance(raw.get("metadata"), dict) else {}
    if isinstance(meta.get("hwlib"), dict):
        nb.metadata["hwlib"] = text.clean(dict(meta["hwlib"]))
    return nb, notes


def load_submission(path: Path, exercise_id: str):
    """(notebook, None) or (None, (status code, reason)) for a file that cannot be graded. The
    notebook is `normalize`d; what was dropped is in nb.metadata['hwlib_notes']."""
    data, problem = identity.read_submission(path)
    if problem:
        return None, problem
    if not data.strip():
        return None, ("empty", "the file is empty")
    try:
        raw = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        return None, ("not_a_notebook", f"not a Jupyter notebook: the file is not valid JSON ({str(exc)[:80]})")
    if not isinstance(raw, dict):
        return None, ("not_a_notebook", "not a Jupyter notebook: JSON, but not an object with a list of cells")
    try:
        nb, notes = normalize(raw)
    except (ValueError, RecursionError) as exc:
        return None, (
            "not_a_notebook",
            f"not a readable notebook: {str(exc)[:120]} (accepted: a Jupyter notebook, nbformat 1 to 4)",
        )
    other = nb.metadata.get("hwlib", {}).get("exercise")
    if isinstance(other, str) and other != exercise_id:
        return None, ("wrong_exercise", f"this notebook is exercise {other[:60]!r}, not {exercise_id!r}")
    nb.metadata["hwlib_notes"] = notes
    return nb, None


def _code(nb) -> list[str]:
    return [" ".join(c.source.split()) for c in nb.cells if c.cell_type == "code" and c.source.strip()]


def flags(nb, exercise) -> list[str]:
    """What the instructor should look at, never a score: `published_solution` when the notebook's
    metadata says it is the solution variant, or its code cells are the published solution's."""
    out = []
    if nb.metadata.get("hwlib", {}).get("variant") == "solution":
        out.append("published_solution (its metadata says variant: solution)")
    elif exercise.folder is not None and (Path(exercise.folder) / "solution.ipynb").is_file():
        try:
            sol, _ = normalize(json.loads((Path(exercise.folder) / "solution.ipynb").read_text(encoding="utf-8")))
        except (OSError, ValueError):
            sol = None
        if sol is not None and _code(sol) and _code(sol) == _code(nb):
            out.append("published_solution (its code cells are the published solution's)")
    return out


def published_code_sha(c, exercise) -> str | None:
    """The hash of the published benchmark code for a receipt check: `code_sha256` from its config,
    else computed from the exercise's solution notebook; None when neither exists (then only the
    submitted notebook's own code is compared with the receipt)."""
    if c.receipt.get("code_sha256"):
        return str(c.receipt["code_sha256"])
    sol = Path(exercise.folder or ".") / "solution.ipynb"
    if not sol.is_file():
        return None
    nb, _ = normalize(json.loads(sol.read_text(encoding="utf-8")))
    code = "\n".join(c2.source for c2 in nb.cells if c2.cell_type == "code")
    try:
        return receipt.code_hash(receipt.functions_source(_python_only(code), c.receipt["functions"]))
    except ValueError as exc:
        raise ValueError(f"check {c.name}: the published benchmark: {exc}") from None


def _python_only(code: str) -> str:
    """Notebook code without IPython's own syntax (%magics, !shell lines), so that it parses."""
    return "\n".join(
        line[: len(line) - len(line.lstrip())] + "pass" if line.lstrip().startswith(("%", "!")) else line
        for line in code.splitlines()
    )


def expected_values(exercise, params: dict | None = None) -> dict:
    """{check name: expected value} for the variant `params` (default: every parameter's first
    value); ValueError naming every broken check (an authoring error the instructor must fix before
    anything is graded)."""
    if params is None:
        params = spec.default_params(exercise)
    out, broken = {}, []
    for c in exercise.checks:
        if c.inputs:  # recomputed per submission from the learner's own values (expr compiled)
            out[c.name] = None
            continue
        try:
            out[c.name] = (
                published_code_sha(c, exercise) if c.kind == "receipt" else spec.expected_value(c, params=params)
            )
        except ValueError as exc:
            broken.append(str(exc))
    if broken:
        raise ValueError("broken check(s), nothing graded: " + "; ".join(broken))
    return out


def apply_forbid(exercise, nb, verdicts) -> tuple[list, dict]:
    """(verdicts with the checks a used forbidden name zeroes set to 0 and told why, {name: where
    used}) for the exercise's `forbid:` block (hwlib.grading.forbid); unchanged when it has none."""
    if not exercise.forbid:
        return verdicts, {}
    hits = forbid.uses([c.source for c in nb.cells if c.cell_type == "code"], exercise.forbid)
    zero = forbid.zeroed(exercise.forbid, hits, [c.name for c in exercise.checks])
    out = [
        replace(v, score=0.0, passed=False, message=v.message + forbid.note(zero[v.name])) if v.name in zero else v
        for v in verdicts
    ]
    return out, hits


def checks_digest(exercise) -> str:
    """sha256 of everything that decides a grade: every field of every check (inputs, choices,
    visibility and hints included) and the exercise's grading block."""
    return identity.sha256(
        repr((exercise.id, exercise.checks, sorted(exercise.grading.items()), exercise.forbid)).encode()
    )


def settings_digest(cfg: runner.RunConfig) -> str:
    """sha256 of the limits a result was graded under (a --resume under other limits grades again)."""
    return identity.sha256(
        repr((cfg.timeout_cell, cfg.timeout_total, cfg.limits, cfg.use_bwrap, cfg.max_output_bytes)).encode()
    )


def _status(run: runner.RunResult) -> str:
    if run.kernel_error or run.machine_fault:
        return "grader_error"
    codes = {v["code"] for k, v in run.cell_status.items() if isinstance(k, int)}
    for code, status in (
        ("crashed", "kernel_crashed"),
        ("unresponsive", "kernel_crashed"),
        ("timeout", "timeout"),
        ("not_run", "timeout"),
        ("error", "cell_errors"),
    ):
        if code in codes:
            return status
    return "graded"


def _cell_note(i: int, v: dict) -> str:
    text = runner.CELL_TEXT.get(v["code"], v["code"])
    if v["code"] == "error":
        text = f"error: {v['detail']}"
    elif v["code"] == "not_run" and v.get("detail"):
        text = f"not run ({v['detail']})"
    return f"cell {i + 1}: {text}"


def _judge(c, entry, want, code="", mistakes=None):
    if c.kind == "receipt":
        entry = entry or {}
        if entry.get("status") != "ok":
            return compare.judge(c, entry, None)
        passed, msg = receipt.verify(entry.get("value"), c.receipt, code, want)
        return compare.Verdict(c.name, c.points if passed else 0.0, c.points, passed, True, f"`{c.answer}`: {msg}")
    if c.inputs:
        want, why = want
        if why:
            return compare.Verdict(
                c.name, 0.0, c.points, False, True, f"`{c.answer}`: {why}" + compare.hint_for(c, entry)
            )
    try:
        return compare.judge(c, entry, want, public=not c.hidden, mistakes=mistakes)
    except Exception as exc:  # one unreadable answer costs one check, never the notebook
        return compare.Verdict(
            c.name, 0.0, c.points, False, True, f"`{c.answer}`: the answer could not be read ({type(exc).__name__})"
        )


def grade_one(
    exercise,
    expected: dict,
    sub: identity.Submission,
    cfg: runner.RunConfig,
    secrets_paths=(),
    meta: dict | None = None,
) -> tuple[dict, nbformat.NotebookNode | None]:
    """Grade one file: (results mapping, executed notebook or None). Writes nothing."""
    t0 = time.monotonic()
    meta = dict(meta or {})
    nb, problem = load_submission(sub.path, exercise.id)
    if problem:
        status, reason = problem
        res = results.not_graded(
            exercise, reason, submission=sub.identity, status=status, elapsed=time.monotonic() - t0, meta=meta
        )
        return res, None
    dropped = list(nb.metadata.pop("hwlib_notes", []))
    learner = str(meta.get("learner") or sub.identity)
    variant = spec.params(exercise, learner) if exercise.per_learner else {}
    if variant:  # this learner's numbers, from the exercise's own formulas
        expected = expected_values(exercise, variant)
        dropped.insert(0, f"your variant (learner {learner}): {variant!r}")
        cfg = replace(cfg, learner=learner)  # variant(EX, None) in the kernel gives this learner's numbers
    code = _python_only("\n".join(c.source for c in nb.cells if c.cell_type == "code"))
    run = runner.Runner(nb, exercise.checks, cfg, secrets_paths).run()
    verdicts = [
        _judge(
            c,
            run.answers.get(runner.answer_key(c)),
            compare.recomputed(c, run.answers, variant) if c.inputs else expected[c.name],
            code,
            compare.mistakes_for(c, run.answers, variant),
        )
        for c in exercise.checks
    ]
    verdicts, delegated = apply_forbid(exercise, nb, verdicts)
    bad = {k: v for k, v in run.cell_status.items() if isinstance(k, int) and v["code"] != "ok"}
    notes = dropped[:5] + list(run.notes) + [_cell_note(i, v) for i, v in sorted(bad.items())][:20]
    reason = ""
    if run.machine_fault:  # never the learner's score: status grader_error, graded again by --resume
        reason = "grader error: a fault of the grading machine, not of your notebook; your instructor has been told"
        verdicts = results.not_run(exercise, "the grading machine failed (" + run.machine_fault[:120] + ")")
    elif run.kernel_error:
        reason = "grader error: the kernel did not start; your instructor has been told"
        verdicts = results.not_run(exercise, "the grader could not start a kernel")
    res = results.build(
        exercise,
        verdicts,
        submission=sub.identity,
        status=_status(run),
        reason=reason,
        notes=notes,
        elapsed=time.monotonic() - t0,
        sandboxed=run.sandboxed,
        meta=meta,
    )
    res["extra_data"]["timings_s"] = run.timings
    res["extra_data"]["flags"] = flags(nb, exercise) + [
        f"forbidden_call hwlib.{name} ({', '.join(where)})" for name, where in delegated.items()
    ]
    res["extra_data"]["forbidden_calls"] = delegated  # {} unless the exercise's `forbid:` names were used
    written = {c.name: run.answers.get(c.answer, {}).get("value") for c in exercise.checks if c.kind == "manual"}
    if written:
        res["extra_data"]["written"] = {k: v if isinstance(v, str) else "" for k, v in written.items()}
    if variant:
        res["extra_data"]["variant"] = variant
    res["extra_data"]["cells"] = {str(i + 1): v for i, v in sorted(bad.items())}
    res["extra_data"]["output_bytes"] = run.output_bytes
    if run.restored:
        res["extra_data"]["tampering_undone"] = run.restored  # for the instructor; not in `output`
    if run.grader_cell_output.strip():
        res["extra_data"]["printed_during_grader_cells"] = run.grader_cell_output
    if run.kernel_error:
        res["extra_data"]["kernel_error"] = run.kernel_error
    if run.machine_fault:
        res["extra_data"]["machine_fault"] = run.machine_fault
    if run.kernel_log:
        res["extra_data"]["kernel_log_tail"] = run.kernel_log
    return res, run.notebook


def preflight(exercise, cfg: runner.RunConfig, secrets_paths=()) -> None:
    """Grade a one-cell notebook the way submissions will be graded (sandbox, kernel, `import hwlib`,
    setup, restore and extraction); GraderSetupError with the real error when that fails."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import hwlib, hwlib.grading\nprobe_value = 1")]
    check = spec.Check(name="probe_value", kind="dimensionless", answer="probe_value", expected=1)
    try:
        tmp = runner.runtime_dir("hwg-p-")
    except OSError as exc:
        raise GraderSetupError(str(exc)) from None
    try:
        run = runner.Runner(nb, [check], replace(cfg, tmp_root=tmp), secrets_paths).run()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if run.machine_fault:
        raise GraderSetupError(f"the grading machine is at fault: {run.machine_fault}")
    if run.kernel_error:
        raise GraderSetupError(f"no kernel could be started: {run.kernel_error} {run.kernel_log}".strip())
    cell = run.cell_status.get(0, {"code": "ok"})
    if cell["code"] != "ok":
        outs = [o for o in run.notebook.cells[0].outputs if o.get("output_type") == "error"]
        detail = f"{outs[0].get('ename')}: {outs[0].get('evalue')}" if outs else cell.get("detail", "")
        raise GraderSetupError(
            f"the sandboxed kernel cannot import hwlib ({detail}); install hwlib "
            "normally (pip install .) or grade from its source tree"
        )
    if run.answers.get("probe_value") != {"status": "ok", "value": 1}:
        raise GraderSetupError(f"answers could not be read back from the kernel ({run.answers.get('probe_value')})")


def configure(exercise, timeout_cell=None, timeout_total=None, memory_mb=None, use_bwrap=True):
    """RunConfig from the exercise's `grading:` block, overridden by explicit values."""
    g = exercise.grading
    cfg = runner.RunConfig()
    cfg = replace(
        cfg,
        timeout_cell=float(timeout_cell or g.get("timeout_cell", cfg.timeout_cell)),
        timeout_total=float(timeout_total or g.get("timeout_total", cfg.timeout_total)),
        use_bwrap=bool(use_bwrap),
    )
    mem = memory_mb or g.get("memory_mb")
    if mem:
        cfg.limits = replace(cfg.limits, memory_bytes=int(float(mem) * 2**20))
    cfg.limits = replace(cfg.limits, cpu_s=int(cfg.timeout_total) + 30)
    return cfg


def expand(paths):
    return identity.expand(paths)


def setup(args, exercise):
    """The RunConfig for `hwlib grade`'s arguments, after checking them, the exercise's checks and the
    sandbox. Raises ValueError (exit 2) or GraderSetupError (exit 3)."""
    for name, value in (
        ("--jobs", args.jobs),
        ("--timeout-cell", args.timeout_cell),
        ("--timeout-total", args.timeout_total),
        ("--memory-mb", args.memory_mb),
    ):
        if value is not None and not value > 0:
            raise ValueError(f"{name} must be > 0; got {value}")
    expected_values(exercise)  # a broken check stops everything (exit 2)
    if args.no_sandbox:
        print(
            "WARNING: --no-sandbox: submissions run UNSANDBOXED (resource limits and a scrubbed "
            "environment only; they can read your files, see other processes and forge their results)",
            file=sys.stderr,
        )
    else:
        path = sandbox.bwrap_path()
        ok, why = sandbox.probe(path) if path else (False, "bwrap (bubblewrap) is not installed")
        if not ok:
            raise GraderSetupError(
                f"the sandbox does not work here: {why}. Install bubblewrap >= 0.8 (apt-get install "
                "bubblewrap), or pass --no-sandbox inside a throw-away container"
            )
    cfg = configure(exercise, args.timeout_cell, args.timeout_total, args.memory_mb, use_bwrap=not args.no_sandbox)
    return cfg


GRADER_SIDE = batch.GRADER_SIDE
cpu_slots = batch.cpu_slots


def grade_batch(exercise, files, out: Path, cfg: runner.RunConfig, jobs: int = 1, secrets_paths=(), **options):
    """Grade a class with `hwlib.grading.batch.grade_batch` (options: progress, hard_limit, roster,
    resume), each worker calling this module's `grade_one`, `expected_values` and `checks_digest`
    (looked up when called, so batch needs no import of this module)."""
    return batch.grade_batch(
        exercise,
        files,
        out,
        cfg,
        jobs,
        secrets_paths,
        grade_one=lambda *a: grade_one(*a),
        expected_values=lambda e: expected_values(e),
        checks_digest=lambda e: checks_digest(e),
        settings_digest=settings_digest,
        **options,
    )
