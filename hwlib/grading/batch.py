"""Grade a class: every submission in its own forked worker, up to `jobs` at a time.

Every submission gets `OUT/submissions/<folder>/results.json` (+ feedback.txt, executed.ipynb),
whatever happens (folder names: hwlib.grading.identity). Each worker sends its result to the grader
over a pipe made for that worker; only the grader writes into OUT, and a result counts only if it
arrived on that pipe with this run's id and this file's identity. When a worker dies or outlives its
hard time limit, the grader writes the result itself, with the reason; a results.json left from an
earlier run is never taken for the new one. With `jobs` > 1 each worker (and its kernel) is pinned
to its own CPUs where there are enough (os.sched_setaffinity); memory and process counts are not
isolated between neighbours.
"""

from __future__ import annotations

import multiprocessing
import os
import secrets
import shutil
import signal
import time
import traceback
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from multiprocessing.connection import Connection, wait
from pathlib import Path

import nbformat

from . import classreport, identity, results, runner, text

META_KEYS = ("run_id", "file", "learner", "file_sha256", "checks_sha256", "settings_sha256", "graded_at")
GRADER_SIDE = ("grader_error",)  # statuses that mean the grader, not the learner, failed
_STOP = {"active": False, "signal": None}  # a stop asked for by a signal while a batch runs


def request_stop(signum) -> bool:
    """Called by a signal handler: while a batch runs, note the signal (the batch stops at its next
    turn, every 0.5 s at most, and raises KeyboardInterrupt where nothing can swallow it) and return
    True; else False (the caller then raises itself)."""
    if _STOP["active"]:
        _STOP["signal"] = signum
        return True
    return False


def _subreaper() -> bool:
    """Make this worker the parent of every orphaned descendant (Linux PR_SET_CHILD_SUBREAPER), so
    a daemon started by a kernel (double fork, setsid) is still ours to kill."""
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) == 0
    except Exception:
        return False


def reap_descendants(rounds: int = 20) -> int:
    """SIGKILL and wait for every child of this process (with a subreaper: every descendant that
    outlived its parent), until none is left; returns how many were killed."""
    me, killed = str(os.getpid()), 0
    for _ in range(rounds):
        children = []
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                try:
                    stat = open(f"/proc/{entry.name}/stat", "rb").read().decode("latin-1")
                except OSError:
                    continue
                if stat.rsplit(")", 1)[-1].split()[1] == me:
                    children.append(int(entry.name))
        if not children:
            break
        for pid in children:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except OSError:
                pass
        for pid in children:
            try:
                os.waitpid(pid, 0)
            except OSError:
                pass
    return killed


def _worker(grade_one, exercise, expected, sub, cfg, secrets_paths, meta, conn, cpus):
    os.setpgrp()
    for name in ("SIGTERM", "SIGHUP", "SIGINT"):  # the grader decides when a worker stops
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    reaper = _subreaper()
    if cpus and hasattr(os, "sched_setaffinity"):
        try:
            os.sched_setaffinity(0, cpus)  # this submission's CPUs, inherited by its kernel
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
        res = results.not_graded(exercise, reason, submission=sub.identity, status="grader_error", meta=meta)
        res["extra_data"]["traceback"] = traceback.format_exc()[-2000:]
    left = reap_descendants() if reaper and os.path.isdir("/proc") else 0
    if left:
        res.setdefault("extra_data", {})["processes_killed_after_grading"] = left
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
        tmp.write_text(text.clean_str(executed), encoding="utf-8")
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


@dataclass
class _Job:
    """One submission being graded: its forked worker, the pipe its result comes back on, and the
    CPU slot it holds until it ends."""

    proc: multiprocessing.process.BaseProcess
    sub: identity.Submission
    meta: dict
    reader: Connection
    slot: int
    started: float = field(default_factory=time.monotonic)
    got: dict | None = None  # what arrived on the pipe ({} when something unreadable did)

    def receive(self, timeout: float = 0.0) -> None:
        """Take the worker's message off the pipe if one is there (within `timeout` seconds)."""
        if self.got is None and self.reader.poll(timeout):
            try:
                self.got = self.reader.recv()
            except Exception:
                self.got = {}

    def kill(self) -> None:
        """SIGKILL the worker's process group (its kernel and what that started), or the worker."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except OSError:
            self.proc.kill()

    def result(self, run_id: str) -> dict | None:
        """The results the worker sent, if they are this run's and this file's; else None."""
        got = self.got
        ok = (
            isinstance(got, dict)
            and got.get("run_id") == run_id
            and got.get("identity") == self.sub.identity
            and isinstance(got.get("results"), dict)
        )
        return got if ok else None


def _reusable(old: dict | None, sub, meta: dict, exercise) -> bool:
    """With --resume: the result already in the submission's folder is for the same file content,
    checks, settings, learner and exercise, and not one the grader itself failed."""
    ex = (old or {}).get("extra_data", {})
    return bool(
        old
        and meta["file_sha256"]
        and ex.get("file") == sub.identity
        and ex.get("learner") == meta["learner"]
        and ex.get("exercise") == exercise.id
        and ex.get("status") not in GRADER_SIDE
        and all(ex.get(k) == meta[k] for k in ("file_sha256", "checks_sha256", "settings_sha256"))
    )


def _kill_all(jobs) -> None:
    """SIGKILL every worker, also one whose start() an interrupt cut short before it was registered."""
    procs = {job.proc.pid: job.proc for job in jobs}
    procs.update({p.pid: p for p in multiprocessing.active_children()})
    for proc in procs.values():
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            try:
                proc.kill()
            except Exception:
                pass


def _write_tables(out: Path, exercise, done: dict, extra_rows, say) -> None:
    """grades.csv (a failure marks every result grader_error) and the tables beside it (a failure
    there only warns: a table beside grades.csv never costs a grade)."""
    try:
        classreport.write_grades(out, exercise, done, extra_rows)
    except OSError as exc:
        say(f"hwlib: grader error: {out / classreport.GRADES} could not be written: {exc}")
        for res in done.values():
            res["extra_data"]["status"] = "grader_error"
    tables = [
        (classreport.write_manual, (out, exercise, done)),
        (classreport.write_manual_pdfs, (out, exercise, done)),
        (classreport.write_canvas, (out, exercise)),
        (classreport.write_pass_rates, (out, exercise)),
    ]
    for table, args in tables:
        try:
            table(*args)
        except Exception as exc:
            say(f"hwlib: warning: {table.__name__}: {type(exc).__name__}: {exc}")


def default_hard_limit(exercise, cfg: runner.RunConfig) -> float:
    """Seconds a worker may run before it is killed: the notebook's total limit, each check's
    extraction limit (+2 for the set-up), and 30 s per kernel start it may need."""
    return cfg.timeout_total + cfg.extract_timeout * (len(exercise.checks) + 2) + 30 * (cfg.max_restarts + 3)


def grade_batch(
    exercise,
    files,
    out: Path,
    cfg: runner.RunConfig,
    jobs: int = 1,
    secrets_paths=(),
    progress=print,
    hard_limit: float | None = None,
    roster: dict | None = None,
    resume: bool = False,
    *,
    grade_one,
    expected_values,
    checks_digest,
    settings_digest=lambda cfg: "",
    extra_rows: dict | None = None,
) -> list[tuple[str, str, dict]]:
    """Grade `files` (identity.Submission, or paths) with up to `jobs` workers; write
    OUT/submissions/<folder>/ and merge OUT/grades.csv (also when interrupted: the finished part).
    A worker still running after `hard_limit` seconds is killed and its submission gets a result
    saying so. With `resume`, a submission whose folder already holds a result for the same file
    content and the same checks is not graded again. grade_one, expected_values and checks_digest
    are hwlib.grading.grader's (call `grader.grade_batch`, which passes them)."""
    subs = [f if isinstance(f, identity.Submission) else identity.Submission(Path(f), Path(f).name) for f in files]
    batch = _Batch(
        exercise,
        out,
        cfg,
        jobs,
        progress,
        default_hard_limit(exercise, cfg) if hard_limit is None else hard_limit,
        roster,
        digest=checks_digest(exercise),
        settings=settings_digest(cfg),
        worker_args=(grade_one, exercise, expected_values(exercise)),
        secrets_paths=tuple(secrets_paths),
    )
    return batch.run(subs, resume, extra_rows)


class _Batch:
    """The state of one grade_batch call: the submissions waiting, the jobs running, the results."""

    def __init__(
        self, exercise, out, cfg, jobs, progress, hard_limit, roster, *, digest, settings, worker_args, secrets_paths
    ):
        self.exercise, self.out, self.progress, self.hard_limit, self.roster = (
            exercise,
            out,
            progress,
            hard_limit,
            roster,
        )
        self.subs_dir = out / identity.SUBMISSIONS
        self.subs_dir.mkdir(parents=True, exist_ok=True)
        self.digest, self.settings = digest, settings
        self.run_id = secrets.token_hex(8)
        self.started_at = datetime.now(UTC).isoformat(timespec="seconds")
        self.tmp = runner.runtime_dir("hwg-b-")  # short: the kernels' ipc sockets live under it
        self.cfg = replace(cfg, tmp_root=self.tmp)
        self.worker_args, self.secrets_paths = worker_args, secrets_paths
        self.ctx = multiprocessing.get_context("fork")
        self.slots = cpu_slots(jobs)
        self.free = list(range(max(1, jobs)))
        self.running: dict[int, _Job] = {}  # by the worker's sentinel
        self.rows: list[tuple[str, str, dict]] = []
        self.done: dict[str, dict] = {}

    def say(self, line: str) -> None:
        try:
            self.progress(text.clean_str(line))
        except (OSError, ValueError):  # a closed terminal (SIGHUP) must not stop the grading
            pass

    def meta_for(self, sub) -> dict:
        data, _ = identity.read_submission(sub.path)
        return {
            "run_id": self.run_id,
            "file": sub.identity,
            "learner": classreport.learner_id(sub.identity, self.roster),
            "file_sha256": identity.sha256(data) if data is not None else "",
            "checks_sha256": self.digest,
            "settings_sha256": self.settings,
            "graded_at": self.started_at,
        }

    def finish(self, sub, res: dict, executed: str | None = None, reused: bool = False) -> None:
        if not reused:
            try:
                _write(self.subs_dir / sub.folder_name, res, executed, self.exercise.title)
            except OSError as exc:  # the output disk is full or gone: the grader's fault, named
                res = results.not_graded(
                    self.exercise,
                    f"grader error: the result could not be written ({exc.strerror or exc})",
                    submission=sub.identity,
                    status="grader_error",
                    meta={k: v for k, v in res.get("extra_data", {}).items() if k in META_KEYS},
                )
        self.rows.append((sub.folder_name, str(sub.path), res))
        self.done[sub.folder_name] = res
        self.say(
            f"{sub.folder_name}: {res['score']:g}/{self.exercise.max_score:g}  "
            f"{res['extra_data']['status']}  {res['execution_time']:.1f} s" + ("  (resumed)" * reused)
        )

    def start(self, sub, meta: dict) -> None:
        slot = self.free.pop(0)
        reader, writer = self.ctx.Pipe(duplex=False)
        proc = self.ctx.Process(
            daemon=True,  # never joined at exit: an interrupt during start() must not hang the grader
            target=_worker,
            args=(*self.worker_args, sub, self.cfg, self.secrets_paths, meta, writer, self.slots[slot]),
        )
        proc.start()
        writer.close()
        self.running[proc.sentinel] = _Job(proc, sub, meta, reader, slot)

    def end(self, sentinel: int, job: _Job) -> None:
        """The worker exited or is overdue: kill it if needed, free its slot, record its result."""
        reason = None
        if job.proc.is_alive():
            job.kill()
            reason = f"grader error: grading took longer than {self.hard_limit:.0f} s and was stopped"
        job.proc.join(5)
        job.receive(timeout=0.1)
        job.reader.close()
        del self.running[sentinel]
        self.free.append(job.slot)
        got = job.result(self.run_id)
        if reason or got is None:
            reason = reason or "grader error: the grading process ended without a result"
            res = results.not_graded(
                self.exercise, reason, submission=job.sub.identity, status="grader_error", meta=job.meta
            )
            self.finish(job.sub, res)
        else:
            self.finish(job.sub, got["results"], got.get("executed"))

    def fill(self, todo: list, resume: bool) -> None:
        """Start workers while there are free slots (a resumable submission takes none)."""
        while todo and self.free:
            sub = todo.pop(0)
            meta = self.meta_for(sub)
            old = classreport.load_previous(self.subs_dir / sub.folder_name) if resume else None
            if resume and _reusable(old, sub, meta, self.exercise):
                self.finish(sub, old, reused=True)
            else:
                self.start(sub, meta)

    def poll(self) -> None:
        """Wait up to 0.5 s for a worker to send or end; end each that has ended or is overdue."""
        running = self.running
        wait([*running, *(job.reader for job in running.values() if job.got is None)], timeout=0.5)
        for sentinel, job in list(running.items()):
            job.receive()
            if not job.proc.is_alive() or time.monotonic() - job.started > self.hard_limit:
                self.end(sentinel, job)

    def run(self, subs: list, resume: bool, extra_rows) -> list[tuple[str, str, dict]]:
        todo = list(subs)
        _STOP.update(active=True, signal=None)
        try:
            while todo or self.running:
                if _STOP["signal"] is not None:
                    raise KeyboardInterrupt(_STOP["signal"])
                self.fill(todo, resume)
                if self.running:
                    self.poll()
        except BaseException:
            _kill_all(self.running.values())
            raise
        finally:
            _STOP.update(active=False, signal=None)
            shutil.rmtree(self.tmp, ignore_errors=True)
            if self.done:
                _write_tables(self.out, self.exercise, self.done, extra_rows, self.say)
        return self.rows
