"""Execute one submission in a fresh, limited kernel and bring its answers out as plain data.

Cells run one at a time (nbclient) with a per-cell timeout and a deadline for the whole notebook.
Before the first cell the grader's setup cell runs; after the last, the restore cell and then one
extraction cell per answer (hwlib.grading.extract). When a cell kills the kernel (`os._exit`, a
segfault, the memory limit) or ignores the interrupt after its timeout, the grader starts a new
kernel, replays the cells before it and skips the culprit, at most `max_restarts` times; after that
one last kernel replays only the cells that had finished and reads the answers, so what was already
computed still counts. Every kernel message counts against `max_output_bytes` by its serialized
size (streams, tracebacks, display data and metadata, display updates, comm/widget messages); a
single message larger than the budget is dropped by ZeroMQ before it is read.

Cell outcomes are structured: {"code": "ok" | "error" | "timeout" | "unresponsive" | "crashed" |
"not_run", "detail": "..."}.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionComplete, DeadKernelError

from . import extract, sandbox

_TIMEOUT_ENAME = "HwlibCellTimeout"
CELL_TEXT = {
    "timeout": "timed out",
    "unresponsive": "timed out and ignored the interrupt",
    "crashed": "crashed the kernel",
    "not_run": "not run",
}


SUN_PATH_MAX = 107  # bytes in a Linux AF_UNIX socket path (sun_path is 108 with its NUL)
SHORT_BASE_MAX = 40  # a temp base longer than this leaves too little room for the ipc socket names
_DISK_ERRNOS = ("[Errno 28]", "[Errno 122]", "[Errno 30]", "[Errno 5]")  # ENOSPC EDQUOT EROFS EIO


def runtime_dir(prefix: str = "hwg-") -> str:
    """A new private (0700) temp folder whose path is short enough for ZeroMQ ipc sockets under it:
    in $TMPDIR when that is short, else in /tmp, /dev/shm or /var/tmp. OSError naming the fault
    when none is writable (a TMPDIR of 100 characters must not make every kernel fail to start)."""
    tried = []
    for base in (tempfile.gettempdir(), "/tmp", "/dev/shm", "/var/tmp"):
        if base in tried:
            continue
        tried.append(base)
        if len(base) <= SHORT_BASE_MAX and os.path.isdir(base) and os.access(base, os.W_OK | os.X_OK):
            return tempfile.mkdtemp(prefix=prefix, dir=base)
    raise OSError(
        f"no writable temp folder with a path of at most {SHORT_BASE_MAX} characters for the kernels' ipc "
        f"sockets (tried {', '.join(tried)}); set TMPDIR to a short folder such as /tmp"
    )


def disk_fault(outputs, where) -> str:
    """A machine fault seen by a grader cell: a disk error in its traceback, or `where` (a folder)
    with less than 1 MiB free. "" when neither."""
    for o in outputs or []:
        value = f"{o.get('ename', '')}: {o.get('evalue', '')}"
        if any(e in value for e in _DISK_ERRNOS):
            return value[:200]
    try:
        free = shutil.disk_usage(where).free
    except OSError as exc:
        return f"the grader's temp folder cannot be read ({exc})"
    return f"less than 1 MiB free in the grader's temp folder ({free} bytes)" if free < 2**20 else ""


@dataclass
class RunConfig:
    timeout_cell: float = 30.0
    timeout_total: float = 300.0
    limits: sandbox.Limits = field(default_factory=sandbox.Limits)
    use_bwrap: bool = True  # False only with --no-sandbox
    max_output_bytes: int = 2 * 2**20
    max_restarts: int = 2
    extract_timeout: float = 10.0  # per extraction cell, on top of the notebook's deadline
    startup_timeout: float = 60.0
    tmp_root: str | None = None  # where the per-submission temp dirs go (default: $TMPDIR)
    learner: str = ""  # per-learner variants: the roster id, HWLIB_LEARNER_ID in the kernel


@dataclass
class RunResult:
    answers: dict  # key -> entry (see extract.read_record)
    cell_status: dict  # notebook cell index -> {"code": ..., "detail": ...}
    notes: list
    sandboxed: bool
    elapsed: float
    notebook: nbformat.NotebookNode  # the executed submission (capped outputs)
    timings: dict = field(default_factory=dict)  # seconds: kernel_start, cells, extraction, shutdown
    kernel_error: str | None = None  # the kernel could not be started (a grader-side failure)
    restored: list = field(default_factory=list)  # what the restore step had to undo
    output_bytes: int = 0
    grader_cell_output: str = ""  # what the notebook printed while grader cells ran (tampering)
    machine_fault: str = ""  # the machine, not the notebook, failed (a full disk): never a score
    kernel_log: str = ""  # the tail of the kernel's log when it did not start (instructor only)


def _msg_size(msg) -> int:
    """Serialized size of a kernel message: header, metadata, content and binary buffers."""
    size = 0
    for part in ("header", "parent_header", "metadata", "content"):
        try:
            size += len(json.dumps(msg.get(part, {}), default=str))
        except (TypeError, ValueError, RecursionError):
            size += 1 << 20
    return size + sum(len(b) for b in msg.get("buffers", []) or [])


class _Client(NotebookClient):
    """nbclient with a budget on every message and the last execute_reply kept."""

    def __init__(self, nb, km, budget: int, **kw):
        super().__init__(nb, km=km, **kw)
        self.budget, self.used, self.flooded, self.last_reply = budget, 0, False, None
        self.in_grader_cell, self.held_back = False, []
        self.on_cell_executed = self._keep_reply

    def _keep_reply(self, cell, cell_index, execute_reply):
        self.last_reply = execute_reply

    def process_message(self, msg, cell, cell_index):
        self.used += _msg_size(msg)
        if self.used > self.budget and msg.get("msg_type") != "status":
            if not self.flooded:
                self.flooded = True
                cell.outputs.append(
                    nbformat.v4.new_output("stream", name="stderr", text="[hwlib grader: output truncated]\n")
                )
            return None
        if self.in_grader_cell and msg.get("msg_type") == "update_display_data":
            # would rewrite an earlier cell's output in executed.ipynb (which the learner may get
            # back) with what ran during a grader cell, e.g. a hidden argument: kept for the instructor
            data = (msg.get("content") or {}).get("data") or {}
            self.held_back.append(str(data.get("text/plain", ""))[:2000])
            return None
        try:
            return super().process_message(msg, cell, cell_index)
        except CellExecutionComplete:
            raise
        except Exception:  # a malformed message (e.g. a widget comm without its state): drop it
            return None


def answer_key(check) -> str:
    """Where a check's extracted answer is stored: the variable name, or call:<check name>."""
    return f"call:{check.name}" if check.is_call else check.answer


def _tasks(nb, checks, workdir: Path, nonce: str) -> list[dict]:
    """Setup, the submission's code cells, restore, then the extraction cells (each its own key)."""

    def record(kind, keys, make):
        path = str(workdir / f".answers-{secrets.token_hex(8)}")
        key = extract.new_key()
        return {"kind": kind, "keys": keys, "path": path, "key": key, "source": make(path, key)}

    tasks = [{"kind": "setup", "source": extract.setup_cell(nonce)}]
    tasks += [
        {"kind": "cell", "index": i, "source": c.source}
        for i, c in enumerate(nb.cells)
        if c.cell_type == "code" and c.source.strip()
    ]
    tasks.append(record("restore", [], lambda p, k: extract.restore_cell(p, nonce, k)))
    names = {c.answer for c in checks if not c.is_call} | {i for c in checks for i in c.inputs}
    for name in sorted(names):  # one cell per answer: one bad
        tasks.append(
            record(
                "extract",
                [name],  # object costs only itself
                lambda p, k, name=name: extract.values_cell([name], p, nonce, k),
            )
        )
    for c in (c for c in checks if c.is_call):
        tasks.append(
            record(
                "extract",
                [answer_key(c)],
                lambda p, k, c=c: extract.call_cell(answer_key(c), c.answer, c.args, c.kwargs, p, nonce, k),
            )
        )
    return tasks


class Runner:
    def __init__(self, nb, checks, cfg: RunConfig, secrets_paths=()):
        self.nb = nbformat.from_dict(nb)
        for cell in self.nb.cells:
            if cell.cell_type == "code":
                cell.outputs, cell.execution_count = [], None
        self.checks, self.cfg, self.secrets = list(checks), cfg, list(secrets_paths)
        self.bwrap = sandbox.bwrap_path() if cfg.use_bwrap else None
        if cfg.use_bwrap and not self.bwrap:
            raise RuntimeError("bwrap was requested but is not installed")
        self.notes: list[str] = []
        self.status: dict = {}
        self.restored: list[str] = []
        self.injected_text = ""
        self.injected_outputs: list = []
        self.machine_fault = ""
        self.kernel_log = ""

    def _start(self, root: Path, workdir: Path, attempt: int):
        """A kernel whose files (connection file, ipc sockets, HOME with IPYTHONDIR, TMPDIR) are in a
        new folder with an unguessable name: nothing the notebook planted before a restart is where
        the new kernel looks (an IPython startup file, a folder in place of a socket)."""
        try:
            os.chmod(workdir, 0o700)  # a notebook may have made its folder read-only
        except OSError:
            pass
        kdir = workdir / f".k{attempt}{secrets.token_hex(3)}"
        kdir.mkdir(mode=0o700)
        home = kdir / "h"
        home.mkdir()
        tmp = Path("/tmp") if self.bwrap else kdir / "t"
        tmp.mkdir(exist_ok=True)
        ipc = kdir / "s"
        if len(os.fsencode(str(ipc))) + 4 > SUN_PATH_MAX:
            raise OSError(f"the kernel's ipc socket path would be longer than {SUN_PATH_MAX} bytes: {ipc}")
        env = sandbox.scrubbed_env(home, tmp)
        if self.cfg.learner:  # read by hwlib.grading.variant(EX, None): this learner's own numbers
            env["HWLIB_LEARNER_ID"] = self.cfg.learner
        argv = sandbox.kernel_argv(self.cfg.limits, self.bwrap, workdir, env, self.secrets)
        kernels = root / "kernels"
        name = sandbox.write_kernelspec(kernels, argv)
        km = AsyncKernelManager(
            kernel_name=name,
            kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(kernels)]),
            transport="ipc",
            ip=str(ipc),
            connection_file=str(kdir / "c.json"),
        )
        try:
            import zmq

            km.context.setsockopt(zmq.MAXMSGSIZE, self.cfg.max_output_bytes + (1 << 20))
        except Exception:
            pass
        client = _Client(
            self.nb,
            km,
            self.cfg.max_output_bytes,
            timeout=int(self.cfg.timeout_cell),
            allow_errors=True,
            interrupt_on_timeout=True,
            record_timing=False,
            error_on_timeout={"ename": _TIMEOUT_ENAME, "evalue": "cell timed out", "traceback": []},
            startup_timeout=int(self.cfg.startup_timeout),
            iopub_timeout=2,
            shutdown_kernel="immediate",
        )
        log_path = root / "kernel.log"
        log = open(log_path, "ab")
        try:
            client.start_new_kernel(cwd=str(workdir), env=env, stdout=log, stderr=log)
            client.start_new_kernel_client()
        except Exception as exc:
            log.close()
            self._stop(client)
            tail = log_path.read_bytes()[-600:].decode("utf-8", "replace").strip()
            self.kernel_log = tail  # for the instructor only: the notebook's own stderr may be in it
            raise RuntimeError(f"{type(exc).__name__}: {str(exc)[:200]}") from None
        log.close()
        return client

    @staticmethod
    def _stop(client):
        if client is None:
            return
        pid = getattr(getattr(client.km, "provisioner", None), "pid", None)
        try:
            client._cleanup_kernel()
        except Exception:
            pass
        if pid:
            try:
                os.killpg(pid, signal.SIGKILL)  # the kernel's whole session (start_new_session)
            except (OSError, ProcessLookupError):
                pass

    def _execute(self, client, cell, index: int, timeout: float) -> tuple[str, str]:
        """Run one cell: (code, detail) with code "ok", "error", "timeout" or "crashed"."""
        client.timeout = max(1, int(timeout))
        client.last_reply = None
        try:
            client.execute_cell(cell, index)
        except DeadKernelError:
            return "crashed", ""
        except Exception as exc:  # e.g. the kernel's messages became unreadable (a patched json)
            return "crashed", type(exc).__name__
        content = (client.last_reply or {}).get("content", {})
        if content.get("status") == "error":
            if content.get("ename") == _TIMEOUT_ENAME:
                return "timeout", ""
            return "error", str(content.get("ename"))[:80]
        return "ok", ""

    def _responsive(self, client) -> bool:
        self.nb.cells.append(nbformat.v4.new_code_cell("pass"))
        try:
            return self._execute(client, self.nb.cells[-1], len(self.nb.cells) - 1, 3)[0] == "ok"
        except Exception:
            return False
        finally:
            self.nb.cells.pop()

    def _injected(self, client, task: dict, timeout: float) -> tuple[str, str]:
        """Run a grader cell; it is not kept in the executed notebook (which may be handed back to
        the learner, so hidden names and arguments must not be in it)."""
        self.nb.cells.append(nbformat.v4.new_code_cell(task["source"]))
        n = len(self.nb.cells) - 1
        client.in_grader_cell = True
        try:
            return self._execute(client, self.nb.cells[n], n, timeout)
        finally:
            client.in_grader_cell = False
            if client.held_back and len(self.injected_text) < 32000:
                self.injected_text += "[display update held back] " + " | ".join(client.held_back)[:4000] + "\n"
                client.held_back = []
            cell = self.nb.cells.pop()
            self.injected_outputs = list(cell.outputs)
            if len(self.injected_text) < 32000:
                self.injected_text += "".join(str(o.get("text", "")) + str(o.get("evalue", "")) for o in cell.outputs)[
                    :32000
                ]

    def _task(self, client, task: dict, deadline: float, nonce: str, answers: dict) -> str:
        """Run one task and record what happened; returns the outcome code."""
        kind = task["kind"]
        if kind == "cell":
            left = deadline - time.monotonic()
            if left <= 0:
                self.status.setdefault(task["index"], {"code": "not_run", "detail": "total time limit"})
                return "skipped"
            code, detail = self._execute(
                client, self.nb.cells[task["index"]], task["index"], min(self.cfg.timeout_cell, left)
            )
            key = task["index"]
        elif kind == "setup":
            code, detail = self._injected(client, task, self.cfg.extract_timeout)
            if code != "ok":
                raise RuntimeError(f"the grader's setup cell failed in the kernel ({code} {detail})")
            return code
        else:
            try:
                os.unlink(task["path"])  # a restore cell runs again in each new kernel
            except OSError:
                pass
            code, detail = self._injected(client, task, self.cfg.extract_timeout)
            key = f"{kind} " + ",".join(task["keys"])
            rec = extract.read_record(task["path"], nonce, task["key"], task["keys"]) if code == "ok" else None
            if rec is None and not self.machine_fault:
                self.machine_fault = disk_fault(
                    self.injected_outputs if code == "error" else [], os.path.dirname(task["path"])
                )
            if rec is not None:
                got, restored = rec
                answers.update(got)
                self.restored += [r for r in restored if r not in self.restored]
            for k in task["keys"]:
                if k not in answers:
                    why = {"crashed": "it crashed the kernel", "timeout": "it did not finish in time"}.get(
                        code, "the answer could not be read back"
                    )
                    answers[k] = {"status": "error", "error": why}
        if code == "timeout" and not self._responsive(client):
            code = "unresponsive"
        self.status[key] = {"code": code, "detail": detail}
        return code

    def run(self) -> RunResult:
        t0 = time.monotonic()
        deadline = t0 + self.cfg.timeout_total
        nonce = secrets.token_hex(8)
        root = Path(tempfile.mkdtemp(prefix="hwg-", dir=self.cfg.tmp_root or runtime_dir("hwg-r-")))
        workdir = root / "work"
        workdir.mkdir()
        tasks = _tasks(self.nb, self.checks, workdir, nonce)
        skip, answers, flooded, used, kernel_error = set(), {}, False, 0, None
        salvage, restart_cause = False, ""
        timings = dict.fromkeys(("kernel_start", "cells", "extraction", "shutdown"), 0.0)
        for attempt in range(self.cfg.max_restarts + 2):
            t = time.monotonic()
            try:
                client = self._start(root, workdir, attempt)
            except Exception as exc:
                self.machine_fault = self.machine_fault or disk_fault([], workdir)
                if attempt and restart_cause:  # the notebook's doing (files it planted): its outcome
                    self.notes.append(
                        f"the kernel could not be started again after {restart_cause} ({str(exc)[:120]}); "
                        "the cells after it were not run"
                    )
                    break
                kernel_error = str(exc)[:600]
                self.notes.append("the grader could not start a kernel; your instructor has been told")
                break
            timings["kernel_start"] += time.monotonic() - t
            restart = False
            for i, task in enumerate(tasks):
                if i in skip:
                    continue
                if salvage and task["kind"] == "cell" and self.status.get(task["index"], {}).get("code") != "ok":
                    self.status.setdefault(task["index"], {"code": "not_run", "detail": "the kernel failed too often"})
                    continue
                t = time.monotonic()
                try:
                    code = self._task(client, task, deadline, nonce, answers)
                except RuntimeError as exc:
                    if attempt and restart_cause:
                        self.notes.append(
                            f"the grader's setup failed in the kernel started again after {restart_cause}"
                        )
                    else:
                        kernel_error = str(exc)
                        self.notes.append("the grader's setup cell failed; your instructor has been told")
                    break
                timings["cells" if task["kind"] == "cell" else "extraction"] += time.monotonic() - t
                if code in ("crashed", "timeout", "unresponsive") or task["kind"] == "extract":
                    skip.add(i)  # never replay a culprit; never extract twice
                if code in ("crashed", "unresponsive"):
                    restart = True
                    restart_cause = (
                        f"cell {task['index'] + 1} crashed the kernel" if task["kind"] == "cell" else "a crash"
                    )
                    break
            flooded = flooded or client.flooded
            used += client.used
            t = time.monotonic()
            self._stop(client)
            timings["shutdown"] += time.monotonic() - t
            if not restart or kernel_error or salvage:
                break
            if attempt >= self.cfg.max_restarts:
                salvage = True
                self.notes.append(
                    "the kernel failed too often: the cells that had not run yet were "
                    "skipped, the finished ones replayed and the answers read"
                )
            else:
                self.notes.append("restarted the kernel and replayed the cells before the failing one")
        if flooded:
            self.notes.append("the output was longer than the limit and was truncated")
        result = RunResult(
            answers,
            self.status,
            self.notes,
            bool(self.bwrap),
            time.monotonic() - t0,
            self.nb,
            {k: round(v, 3) for k, v in timings.items()},
            kernel_error,
            list(self.restored),
            used,
            self.injected_text[:32000],
            self.machine_fault,
        )
        result.kernel_log = self.kernel_log
        shutil.rmtree(root, ignore_errors=True)
        return result
