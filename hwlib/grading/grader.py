"""Grade submissions: one notebook (`grade_one`) or a class (`grade_batch`, in parallel).

Every submission gets `OUT/submissions/<folder>/results.json` (+ feedback.txt, executed.ipynb),
whatever happens (folder names: hwlib.grading.identity). Each one is graded in its own forked worker
process, which sends its result to the grader over a pipe made for that worker; only the grader
writes into OUT, and a result counts only if it arrived on that pipe with this run's id and this
file's identity. When a worker dies or outlives its hard time limit, the grader writes the result
itself, with the reason; a results.json left from an earlier run is never taken for the new one.
Expected values are computed once, in the grader, and never enter a learner's kernel.
"""
from __future__ import annotations

import json
import multiprocessing
import os
import secrets
import shutil
import signal
import tempfile
import time
import traceback
from dataclasses import replace
from datetime import datetime, timezone
from multiprocessing.connection import wait
from pathlib import Path

import nbformat

from . import classreport, compare, identity, results, runner, spec

MAX_NOTEBOOK_BYTES = identity.MAX_NOTEBOOK_BYTES
GRADER_SIDE = ("grader_error",)


class GraderSetupError(RuntimeError):
    """Grading cannot work on this machine (no kernel, a broken sandbox): nothing was graded."""


def load_submission(path: Path, exercise_id: str):
    """(notebook, None) or (None, (status code, reason)) for a file that cannot be graded."""
    data, problem = identity.read_submission(path)
    if problem:
        return None, problem
    if not data.strip():
        return None, ("empty", "the file is empty")
    try:
        raw = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        return None, ("not_a_notebook", f"not a Jupyter notebook: the file is not valid JSON ({str(exc)[:80]})")
    if not isinstance(raw, dict) or not isinstance(raw.get("cells"), list):
        return None, ("not_a_notebook", "not a Jupyter notebook: JSON without a list of cells")
    try:
        nb = nbformat.reads(json.dumps(raw), as_version=4)
        cells = [c for c in nb.cells if c.get("cell_type") == "code"]
        if not all(isinstance(c.get("source"), str) for c in cells):
            raise ValueError("a code cell has no source text")
    except Exception as exc:
        return None, ("not_a_notebook", f"not a readable notebook: {str(exc)[:120]}")
    meta = nb.metadata.get("hwlib") if isinstance(nb.metadata.get("hwlib"), dict) else {}
    other = meta.get("exercise")
    if isinstance(other, str) and other != exercise_id:
        return None, ("wrong_exercise", f"this notebook is exercise {other[:60]!r}, not {exercise_id!r}")
    return nb, None


def expected_values(exercise) -> dict:
    """{check name: expected value}; ValueError naming every broken check (an authoring error the
    instructor must fix before anything is graded)."""
    out, broken = {}, []
    for c in exercise.checks:
        if c.inputs:      # recomputed per submission from the learner's own values (expr compiled)
            out[c.name] = None
            continue
        try:
            out[c.name] = spec.expected_value(c)
        except ValueError as exc:
            broken.append(str(exc))
    if broken:
        raise ValueError("broken check(s), nothing graded: " + "; ".join(broken))
    return out


def checks_digest(exercise) -> str:
    return identity.sha256(repr([(c.name, c.kind, c.answer, c.expected, c.expr, c.args, c.kwargs,
                                  c.rtol, c.atol, c.points) for c in exercise.checks]).encode())


def _status(run: runner.RunResult) -> str:
    if run.kernel_error:
        return "grader_error"
    codes = {v["code"] for k, v in run.cell_status.items() if isinstance(k, int)}
    for code, status in (("crashed", "kernel_crashed"), ("unresponsive", "kernel_crashed"),
                         ("timeout", "timeout"), ("not_run", "timeout"), ("error", "cell_errors")):
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


def _judge(c, entry, want):
    if c.inputs:
        want, why = want
        if why:
            return compare.Verdict(c.name, 0.0, c.points, False, True, f"`{c.answer}`: {why}")
    try:
        return compare.judge(c, entry, want, public=not c.hidden)
    except Exception as exc:  # one unreadable answer costs one check, never the notebook
        return compare.Verdict(c.name, 0.0, c.points, False, True,
                               f"`{c.answer}`: the answer could not be read ({type(exc).__name__})")


def grade_one(exercise, expected: dict, sub: identity.Submission, cfg: runner.RunConfig,
              secrets_paths=(), meta: dict | None = None) -> tuple[dict, nbformat.NotebookNode | None]:
    """Grade one file: (results mapping, executed notebook or None). Writes nothing."""
    t0 = time.monotonic()
    meta = dict(meta or {})
    nb, problem = load_submission(sub.path, exercise.id)
    if problem:
        status, reason = problem
        res = results.build(exercise, results.not_run(exercise, reason), submission=sub.identity,
                            status=status, reason=reason, elapsed=time.monotonic() - t0, meta=meta)
        return res, None
    run = runner.Runner(nb, exercise.checks, cfg, secrets_paths).run()
    verdicts = [_judge(c, run.answers.get(runner.answer_key(c)),
                       compare.recomputed(c, run.answers) if c.inputs else expected[c.name]) for c in exercise.checks]
    bad = {k: v for k, v in run.cell_status.items() if isinstance(k, int) and v["code"] != "ok"}
    notes = list(run.notes) + [_cell_note(i, v) for i, v in sorted(bad.items())][:20]
    reason = ""
    if run.kernel_error:
        reason = "grader error: the kernel did not start; your instructor has been told"
        verdicts = results.not_run(exercise, "the grader could not start a kernel")
    res = results.build(exercise, verdicts, submission=sub.identity, status=_status(run), reason=reason,
                        notes=notes, elapsed=time.monotonic() - t0, sandboxed=run.sandboxed, meta=meta)
    res["extra_data"]["timings_s"] = run.timings
    res["extra_data"]["cells"] = {str(i + 1): v for i, v in sorted(bad.items())}
    res["extra_data"]["output_bytes"] = run.output_bytes
    if run.restored:
        res["extra_data"]["tampering_undone"] = run.restored   # for the instructor; not in `output`
    if run.kernel_error:
        res["extra_data"]["kernel_error"] = run.kernel_error
    return res, run.notebook


def _worker(exercise, expected, sub, cfg, secrets_paths, meta, conn, cpus):
    os.setpgrp()
    if cpus and hasattr(os, "sched_setaffinity"):
        try:
            os.sched_setaffinity(0, cpus)    # this submission's CPUs, inherited by its kernel
        except OSError:
            pass
    executed = None
    try:
        res, nb = grade_one(exercise, expected, sub, cfg, secrets_paths, meta)
        if nb is not None:
            try:
                executed = nbformat.writes(nb)
            except Exception:
                executed = None
    except BaseException as exc:  # never lose a submission
        reason = f"grader error: {type(exc).__name__}: {str(exc)[:200]}"
        res = results.build(exercise, results.not_run(exercise, reason), submission=sub.identity,
                            status="grader_error", reason=reason, meta=meta)
        res["extra_data"]["traceback"] = traceback.format_exc()[-2000:]
    try:
        conn.send({"run_id": meta["run_id"], "identity": sub.identity, "results": res, "executed": executed})
    finally:
        conn.close()
        os._exit(0)


def _write(folder: Path, res: dict, executed: str | None, title: str) -> None:
    """Replace the folder's files with this run's (the old executed notebook goes too)."""
    folder.mkdir(parents=True, exist_ok=True)
    stale = folder / "executed.ipynb"
    if stale.exists() or stale.is_symlink():
        stale.unlink()
    if executed is not None:
        tmp = folder / ".executed.ipynb.tmp"
        tmp.write_text(executed, encoding="utf-8")
        tmp.replace(stale)
    results.write(folder, res, title)


def cpu_slots(jobs: int) -> list[tuple | None]:
    """CPUs for each of `jobs` parallel slots, disjoint where there are enough CPUs."""
    try:
        cpus = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return [None] * jobs
    if jobs <= 1 or len(cpus) < jobs:
        return [None] * jobs
    return [tuple(cpus[i::jobs]) for i in range(jobs)]


def grade_batch(exercise, files, out: Path, cfg: runner.RunConfig, jobs: int = 1, secrets_paths=(),
                progress=print, hard_limit: float | None = None, roster: dict | None = None,
                resume: bool = False) -> list[tuple[str, str, dict]]:
    """Grade `files` (identity.Submission, or paths) with up to `jobs` workers; write
    OUT/submissions/<folder>/ and merge OUT/grades.csv (also when interrupted: the finished part).
    A worker still running after `hard_limit` seconds is killed and its submission gets a result
    saying so. With `resume`, a submission whose folder already holds a result for the same file
    content and the same checks is not graded again."""
    subs = [f if isinstance(f, identity.Submission) else identity.Submission(Path(f), Path(f).name)
            for f in files]
    subs_dir = out / identity.SUBMISSIONS
    subs_dir.mkdir(parents=True, exist_ok=True)
    expected = expected_values(exercise)
    if hard_limit is None:
        hard_limit = (cfg.timeout_total + cfg.extract_timeout * (len(exercise.checks) + 2)
                      + 30 * (cfg.max_restarts + 3))
    run_id = secrets.token_hex(8)
    digest = checks_digest(exercise)
    started_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    batch_tmp = tempfile.mkdtemp(prefix="hwlib-grade-batch-")
    cfg = replace(cfg, tmp_root=batch_tmp)
    ctx = multiprocessing.get_context("fork")
    slots = cpu_slots(jobs)
    free = list(range(max(1, jobs)))
    todo, running, rows, done = list(subs), {}, [], {}

    def meta_for(sub):
        data, _ = identity.read_submission(sub.path)
        return {"run_id": run_id, "file": sub.identity, "learner": classreport.learner_id(sub.identity, roster),
                "file_sha256": identity.sha256(data) if data is not None else "", "checks_sha256": digest,
                "graded_at": started_at}

    def finish(sub, res, executed=None, reused=False):
        folder = subs_dir / sub.folder_name
        if not reused:
            _write(folder, res, executed, exercise.title)
        rows.append((sub.folder_name, str(sub.path), res))
        done[sub.folder_name] = res
        progress(f"{sub.folder_name}: {res['score']:g}/{exercise.max_score:g}  "
                 f"{res['extra_data']['status']}  {res['execution_time']:.1f} s" + ("  (resumed)" * reused))

    def fail(sub, meta, reason):
        res = results.build(exercise, results.not_run(exercise, reason), submission=sub.identity,
                            status="grader_error", reason=reason, meta=meta)
        finish(sub, res)

    try:
        while todo or running:
            while todo and free:
                sub = todo.pop(0)
                meta = meta_for(sub)
                if resume:
                    old = classreport.load_previous(subs_dir / sub.folder_name)
                    ex = (old or {}).get("extra_data", {})
                    if (old and ex.get("file") == sub.identity and ex.get("file_sha256") == meta["file_sha256"]
                            and ex.get("checks_sha256") == digest and ex.get("exercise") == exercise.id
                            and ex.get("status") not in GRADER_SIDE and meta["file_sha256"]):
                        finish(sub, old, reused=True)
                        continue
                slot = free.pop(0)
                reader, writer = ctx.Pipe(duplex=False)
                proc = ctx.Process(target=_worker, args=(exercise, expected, sub, cfg, tuple(secrets_paths),
                                                         meta, writer, slots[slot]))
                proc.start()
                writer.close()
                running[proc.sentinel] = [proc, sub, meta, time.monotonic(), reader, None, slot]
            if not running:
                continue
            waitables = list(running) + [r[4] for r in running.values() if r[5] is None]
            wait(waitables, timeout=0.5)
            for sentinel, entry in list(running.items()):
                proc, sub, meta, t_start, reader, got, slot = entry
                if got is None and reader.poll():
                    try:
                        got = entry[5] = reader.recv()
                    except (EOFError, OSError, Exception):
                        got = entry[5] = {}
                overdue = time.monotonic() - t_start > hard_limit
                if proc.is_alive() and not overdue:
                    continue
                reason = None
                if proc.is_alive():
                    try:
                        os.killpg(proc.pid, signal.SIGKILL)
                    except OSError:
                        proc.kill()
                    reason = f"grader error: grading took longer than {hard_limit:.0f} s and was stopped"
                proc.join(5)
                if got is None and reader.poll(0.1):
                    try:
                        got = reader.recv()
                    except Exception:
                        got = {}
                reader.close()
                del running[sentinel]
                free.append(slot)
                ok = (isinstance(got, dict) and got.get("run_id") == run_id and got.get("identity") == sub.identity
                      and isinstance(got.get("results"), dict))
                if reason or not ok:
                    fail(sub, meta, reason or "grader error: the grading process ended without a result")
                else:
                    finish(sub, got["results"], got.get("executed"))
    except BaseException:
        for proc, *_ in running.values():
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass
        raise
    finally:
        shutil.rmtree(batch_tmp, ignore_errors=True)
        if done:
            classreport.write_grades(out, exercise, done)
            try:
                classreport.write_pass_rates(out, exercise)
            except Exception:
                pass
    return rows


def preflight(exercise, cfg: runner.RunConfig, secrets_paths=()) -> None:
    """Grade a one-cell notebook the way submissions will be graded (sandbox, kernel, `import hwlib`,
    setup, restore and extraction); GraderSetupError with the real error when that fails."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import hwlib, hwlib.grading\nprobe_value = 1")]
    check = spec.Check(name="probe_value", kind="dimensionless", answer="probe_value", expected=1)
    with tempfile.TemporaryDirectory(prefix="hwlib-grade-preflight-") as tmp:
        run = runner.Runner(nb, [check], replace(cfg, tmp_root=tmp), secrets_paths).run()
    if run.kernel_error:
        raise GraderSetupError(f"no kernel could be started: {run.kernel_error}")
    cell = run.cell_status.get(0, {"code": "ok"})
    if cell["code"] != "ok":
        outs = [o for o in run.notebook.cells[0].outputs if o.get("output_type") == "error"]
        detail = f"{outs[0].get('ename')}: {outs[0].get('evalue')}" if outs else cell.get("detail", "")
        raise GraderSetupError(f"the sandboxed kernel cannot import hwlib ({detail}); install hwlib "
                               "normally (pip install .) or grade from its source tree")
    if run.answers.get("probe_value") != {"status": "ok", "value": 1}:
        raise GraderSetupError(f"answers could not be read back from the kernel ({run.answers.get('probe_value')})")


def configure(exercise, timeout_cell=None, timeout_total=None, memory_mb=None, use_bwrap=True):
    """RunConfig from the exercise's `grading:` block, overridden by explicit values."""
    g = exercise.grading
    cfg = runner.RunConfig()
    cfg = replace(cfg, timeout_cell=float(timeout_cell or g.get("timeout_cell", cfg.timeout_cell)),
                  timeout_total=float(timeout_total or g.get("timeout_total", cfg.timeout_total)),
                  use_bwrap=bool(use_bwrap))
    mem = memory_mb or g.get("memory_mb")
    if mem:
        cfg.limits = replace(cfg.limits, memory_bytes=int(float(mem) * 2**20))
    cfg.limits = replace(cfg.limits, cpu_s=int(cfg.timeout_total) + 30)
    return cfg


def expand(paths):
    return identity.expand(paths)
