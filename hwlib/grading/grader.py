"""Grade submissions: one notebook (`grade_one`) or a class (`grade_batch`, in parallel).

Every submission gets `OUT/<stem>/results.json` (+ feedback.txt, executed.ipynb), whatever happens:
each one is graded in its own forked worker process; when the worker fails or outlives its hard time
limit, the parent writes the results.json itself, with the reason. Expected values are computed once,
in the parent, and never enter a learner's kernel.
"""
from __future__ import annotations

import json
import multiprocessing
import os
import re
import shutil
import tempfile
import time
import traceback
from dataclasses import replace
from multiprocessing.connection import wait
from pathlib import Path

import nbformat

from . import compare, results, runner, spec

MAX_NOTEBOOK_BYTES = 20 * 2**20


def load_submission(path: Path, exercise_id: str):
    """(notebook, None) or (None, (status, reason)) for a file that cannot be graded."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        return None, ("not a notebook", f"cannot read the file: {exc.strerror}")
    if not data.strip():
        return None, ("empty", "the file is empty")
    if len(data) > MAX_NOTEBOOK_BYTES:
        return None, ("not a notebook", f"the file is larger than {MAX_NOTEBOOK_BYTES // 2**20} MiB")
    try:
        raw = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        return None, ("not a notebook", f"not a Jupyter notebook: the file is not valid JSON ({str(exc)[:80]})")
    if not isinstance(raw, dict) or not isinstance(raw.get("cells"), list):
        return None, ("not a notebook", "not a Jupyter notebook: JSON without a list of cells")
    try:
        nb = nbformat.reads(json.dumps(raw), as_version=4)
        cells = [c for c in nb.cells if c.get("cell_type") == "code"]
        if not all(isinstance(c.get("source"), str) for c in cells):
            raise ValueError("a code cell has no source text")
    except Exception as exc:
        return None, ("not a notebook", f"not a readable notebook: {str(exc)[:120]}")
    meta = nb.metadata.get("hwlib") if isinstance(nb.metadata.get("hwlib"), dict) else {}
    other = meta.get("exercise")
    if isinstance(other, str) and other != exercise_id:
        return None, ("wrong exercise", f"this notebook is exercise {other[:60]!r}, not {exercise_id!r}")
    return nb, None


def expected_values(exercise) -> dict:
    """{check name: expected value or a ValueError} (an exercise bug must not stop the batch)."""
    out = {}
    for c in exercise.checks:
        try:
            out[c.name] = spec.expected_value(c)
        except ValueError as exc:
            out[c.name] = exc
    return out


def grade_one(exercise, expected: dict, path: Path, folder: Path, cfg: runner.RunConfig,
              secrets=(), verbose_name: str | None = None) -> dict:
    """Grade one file, write results.json/feedback.txt (+ executed.ipynb) into `folder`, return
    the results mapping."""
    t0 = time.monotonic()
    name = verbose_name or path.name
    nb, problem = load_submission(path, exercise.id)
    if problem:
        status, reason = problem
        res = results.build(exercise, results.not_run(exercise, reason), submission=name,
                            status=status, reason=reason, elapsed=time.monotonic() - t0)
        results.write(folder, res, exercise.title)
        return res
    run = runner.Runner(nb, exercise.checks, cfg, secrets).run()
    verdicts = []
    for c in exercise.checks:
        want = expected[c.name]
        if isinstance(want, ValueError):
            verdicts.append(compare.Verdict(c.name, 0.0, c.points, False, False,
                                            f"not graded: the check is broken ({want}); tell your instructor"))
            continue
        entry = run.answers.get(runner.answer_key(c))
        verdicts.append(compare.judge(c, entry, want, public=not c.hidden))
    bad = {k: v for k, v in run.cell_status.items() if isinstance(k, int) and v != "ok"}
    status = "graded"
    if any("crashed" in v for v in bad.values()):
        status = "kernel crashed"
    elif any("time" in v for v in bad.values()):
        status = "timeout"
    elif bad:
        status = "cell errors"
    if run.notes and "did not start" in run.notes[0]:
        status = "grader error"
    notes = list(run.notes) + [f"cell {i + 1}: {v}" for i, v in sorted(bad.items())][:20]
    res = results.build(exercise, verdicts, submission=name, status=status, notes=notes,
                        elapsed=time.monotonic() - t0, sandboxed=run.sandboxed)
    res["extra_data"]["timings_s"] = run.timings
    results.write(folder, res, exercise.title)
    try:
        nbformat.write(run.notebook, folder / "executed.ipynb")
    except Exception:
        pass
    return res


def expand(paths) -> list[Path]:
    """Files to grade: each path, or the regular non-hidden files of a folder (sorted)."""
    files = []
    for p in map(Path, paths):
        if p.is_dir():
            files += sorted(f for f in p.iterdir() if f.is_file() and not f.name.startswith("."))
        else:
            files.append(p)
    return files


def stems(files) -> list[str]:
    """A unique, file-system-safe output folder name per submission."""
    seen, out = {}, []
    for f in files:
        base = re.sub(r"[^A-Za-z0-9._-]", "_", f.stem).strip("._")[:80] or "submission"
        n = seen.get(base, 0) + 1
        seen[base] = n
        out.append(base if n == 1 else f"{base}-{n}")
    return out


def _worker(exercise, expected, path, folder, cfg, secrets):
    os.setpgrp()
    try:
        grade_one(exercise, expected, path, folder, cfg, secrets)
    except BaseException as exc:  # never lose a submission
        reason = f"grader error: {type(exc).__name__}: {str(exc)[:200]}"
        res = results.build(exercise, results.not_run(exercise, reason), submission=path.name,
                            status="grader error", reason=reason)
        res["extra_data"]["traceback"] = traceback.format_exc()[-2000:]
        results.write(folder, res, exercise.title)
    os._exit(0)


def grade_batch(exercise, files, out: Path, cfg: runner.RunConfig, jobs: int = 1, secrets=(),
                progress=print, hard_limit: float | None = None) -> list[tuple[str, str, dict]]:
    """Grade `files` with up to `jobs` workers; write OUT/<stem>/results.json and OUT/grades.csv.
    A worker still running after `hard_limit` seconds (default: the notebook's total timeout plus
    room for extraction and restarts) is killed and its submission gets a result saying so."""
    out.mkdir(parents=True, exist_ok=True)
    expected = expected_values(exercise)
    if hard_limit is None:
        hard_limit = (cfg.timeout_total + cfg.extract_timeout * len(exercise.checks)
                      + 30 * (cfg.max_restarts + 2))
    batch_tmp = tempfile.mkdtemp(prefix="hwlib-grade-batch-")  # removed at the end, even after kills
    cfg = replace(cfg, tmp_root=batch_tmp)
    ctx = multiprocessing.get_context("fork")
    todo = list(zip(stems(files), files))
    running, rows = {}, []

    def finish(stem, path, reason=None):
        folder = out / stem
        res_path = folder / "results.json"
        if reason or not res_path.is_file():
            reason = reason or "grader error: the grading process ended without a result"
            res = results.build(exercise, results.not_run(exercise, reason), submission=path.name,
                                status="grader error", reason=reason)
            results.write(folder, res, exercise.title)
        res = json.loads(res_path.read_text(encoding="utf-8"))
        rows.append((stem, str(path), res))
        progress(f"{stem}: {res['score']:g}/{exercise.max_score:g}  {res['extra_data']['status']}  "
                 f"{res['execution_time']:.1f} s")

    while todo or running:
        while todo and len(running) < max(1, jobs):
            stem, path = todo.pop(0)
            (out / stem).mkdir(parents=True, exist_ok=True)
            proc = ctx.Process(target=_worker, args=(exercise, expected, path, out / stem, cfg, tuple(secrets)))
            proc.start()
            running[proc.sentinel] = (proc, stem, path, time.monotonic())
        wait(list(running), timeout=0.5)
        for sentinel, (proc, stem, path, started) in list(running.items()):
            overdue = time.monotonic() - started > hard_limit
            if proc.is_alive() and not overdue:
                continue
            reason = None
            if proc.is_alive():
                try:
                    os.killpg(proc.pid, 9)
                except OSError:
                    proc.kill()
                reason = f"grader error: grading took longer than {hard_limit:.0f} s and was stopped"
            proc.join(5)
            del running[sentinel]
            finish(stem, path, reason)
    shutil.rmtree(batch_tmp, ignore_errors=True)
    results.write_csv(out / "grades.csv", exercise, rows)
    return rows


def configure(exercise, timeout_cell=None, timeout_total=None, memory_mb=None, use_bwrap=None):
    """RunConfig from the exercise's `grading:` block, overridden by explicit values."""
    g = exercise.grading
    cfg = runner.RunConfig()
    cfg = replace(cfg, timeout_cell=float(timeout_cell or g.get("timeout_cell", cfg.timeout_cell)),
                  timeout_total=float(timeout_total or g.get("timeout_total", cfg.timeout_total)),
                  use_bwrap=use_bwrap)
    mem = memory_mb or g.get("memory_mb")
    if mem:
        cfg.limits = replace(cfg.limits, memory_bytes=int(float(mem) * 2**20))
    cfg.limits = replace(cfg.limits, cpu_s=int(cfg.timeout_total) + 30)
    return cfg
