"""Execute one submission in a fresh, limited kernel and bring its answers out as plain data.

Cells run one at a time (nbclient) with a per-cell timeout and a deadline for the whole notebook;
then the injected extraction cells run (hwlib.grading.extract). When a cell kills the kernel
(`os._exit`, a segfault, the memory limit) or ignores the interrupt after its timeout, the grader
starts a new kernel, replays the cells before it and skips the culprit, at most `max_restarts` times,
so answers computed by the other cells still count. Outputs are capped (`max_output_bytes`) so a
flood cannot exhaust the grader's memory.
"""
from __future__ import annotations

import os
import secrets
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbclient.exceptions import DeadKernelError

from . import extract, sandbox

_TIMEOUT_ENAME = "HwlibCellTimeout"


@dataclass
class RunConfig:
    timeout_cell: float = 30.0
    timeout_total: float = 300.0
    limits: sandbox.Limits = field(default_factory=sandbox.Limits)
    use_bwrap: bool | None = None      # None: use bwrap where it works
    max_output_bytes: int = 2 * 2**20
    max_restarts: int = 2
    extract_timeout: float = 10.0       # per extraction cell, on top of the notebook's deadline
    startup_timeout: float = 60.0
    tmp_root: str | None = None        # where the per-submission temp dirs go (default: $TMPDIR)


@dataclass
class RunResult:
    answers: dict                      # key -> entry (see extract.read_answers)
    cell_status: dict                  # notebook cell index -> "ok" | "error: ..." | "timeout" | ...
    notes: list
    sandboxed: bool
    elapsed: float
    notebook: nbformat.NotebookNode    # the executed submission (capped outputs)
    timings: dict = field(default_factory=dict)   # seconds: kernel_start, cells, extraction, shutdown


class _Client(NotebookClient):
    """nbclient with an output budget and the last execute_reply kept."""

    def __init__(self, nb, km, budget: int, **kw):
        super().__init__(nb, km=km, **kw)
        self.budget, self.used, self.flooded, self.last_reply = budget, 0, False, None
        self.on_cell_executed = self._keep_reply

    def _keep_reply(self, cell, cell_index, execute_reply):
        self.last_reply = execute_reply

    def output(self, outs, msg, display_id, cell_index):
        content = msg.get("content", {})
        size = len(str(content.get("text", ""))) + sum(len(str(v)) for v in content.get("data", {}).values())
        self.used += size + 64
        if self.used > self.budget:
            if not self.flooded:
                self.flooded = True
                outs.append(nbformat.v4.new_output("stream", name="stderr",
                                                   text="[hwlib grader: output truncated]\n"))
            return None
        return super().output(outs, msg, display_id, cell_index)


def answer_key(check) -> str:
    """Where a check's extracted answer is stored: the variable name, or call:<check name>."""
    return f"call:{check.name}" if check.is_call else check.answer


def _tasks(nb, checks, workdir: Path, nonce: str) -> list[dict]:
    """The submission's code cells, then the extraction cells."""
    tasks = [{"kind": "cell", "index": i, "source": c.source} for i, c in enumerate(nb.cells)
             if c.cell_type == "code" and c.source.strip()]
    for n, name in enumerate(sorted({c.answer for c in checks if not c.is_call})):
        path = str(workdir / f".answers-{nonce}-value{n}")   # one cell per answer: one bad
        tasks.append({"kind": "extract", "keys": [name], "path": path,  # object costs only itself
                      "source": extract.values_cell([name], path, nonce)})
    for n, c in enumerate(c for c in checks if c.is_call):
        path = str(workdir / f".answers-{nonce}-call{n}")
        tasks.append({"kind": "extract", "keys": [answer_key(c)], "path": path,
                      "source": extract.call_cell(answer_key(c), c.answer, c.args, c.kwargs, path, nonce)})
    return tasks


class Runner:
    def __init__(self, nb, checks, cfg: RunConfig, secrets_paths=()):
        self.nb = nbformat.from_dict(nb)
        for cell in self.nb.cells:
            if cell.cell_type == "code":
                cell.outputs, cell.execution_count = [], None
        self.checks, self.cfg, self.secrets = list(checks), cfg, list(secrets_paths)
        bwrap = sandbox.bwrap_available() if cfg.use_bwrap in (None, True) else None
        if cfg.use_bwrap and not bwrap:
            raise RuntimeError("bwrap was requested but does not work here")
        self.bwrap = bwrap
        self.notes: list[str] = []
        self.status: dict = {}

    def _start(self, root: Path, workdir: Path, attempt: int):
        home = workdir / ".home"
        home.mkdir(exist_ok=True)
        tmp = Path("/tmp") if self.bwrap else workdir / ".tmp"
        tmp.mkdir(exist_ok=True)
        env = sandbox.scrubbed_env(home, tmp)
        argv = sandbox.kernel_argv(self.cfg.limits, self.bwrap, workdir, env, self.secrets)
        kernels = root / "kernels"
        name = sandbox.write_kernelspec(kernels, argv)
        km = AsyncKernelManager(kernel_name=name, kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(kernels)]),
                           transport="ipc", ip=str(workdir / f".kernel{attempt}"),
                           connection_file=str(workdir / f".kernel{attempt}.json"))
        client = _Client(self.nb, km, self.cfg.max_output_bytes, timeout=int(self.cfg.timeout_cell),
                         allow_errors=True, interrupt_on_timeout=True, record_timing=False,
                         error_on_timeout={"ename": _TIMEOUT_ENAME, "evalue": "cell timed out", "traceback": []},
                         startup_timeout=int(self.cfg.startup_timeout), iopub_timeout=2,
                         shutdown_kernel="immediate")
        log = open(root / "kernel.log", "ab")
        try:
            client.start_new_kernel(cwd=str(workdir), env=env, stdout=subprocess.DEVNULL, stderr=log)
        except Exception as exc:
            log.close()
            tail = (root / "kernel.log").read_bytes()[-300:].decode("utf-8", "replace").strip()
            raise RuntimeError(f"{exc} {tail}".strip()) from None
        log.close()
        client.start_new_kernel_client()
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
                os.killpg(pid, signal.SIGKILL)   # the kernel's whole session (start_new_session)
            except (OSError, ProcessLookupError):
                pass

    def _execute(self, client, cell, index: int, timeout: float) -> str:
        """Run one cell: "ok", "error: <name>", "timeout" or "dead"."""
        client.timeout = max(1, int(timeout))
        client.last_reply = None
        try:
            client.execute_cell(cell, index)
        except DeadKernelError:
            return "dead"
        except Exception:  # e.g. the kernel's messages became unreadable (a patched json): start over
            return "dead"
        content = (client.last_reply or {}).get("content", {})
        if content.get("status") == "error":
            return "timeout" if content.get("ename") == _TIMEOUT_ENAME else f"error: {content.get('ename')}"
        return "ok"

    def _responsive(self, client) -> bool:
        self.nb.cells.append(nbformat.v4.new_code_cell("pass"))
        try:
            return self._execute(client, self.nb.cells[-1], len(self.nb.cells) - 1, 3) == "ok"
        except Exception:
            return False
        finally:
            self.nb.cells.pop()

    def _task(self, client, t: int, task: dict, deadline: float, nonce: str, answers: dict) -> str:
        """Run one task (a submission cell or an extraction cell) and record what happened."""
        if task["kind"] == "cell":
            left = deadline - time.monotonic()
            if left <= 0:
                self.status.setdefault(task["index"], "not run (total time limit)")
                return "skipped"
            result = self._execute(client, self.nb.cells[task["index"]], task["index"],
                                   min(self.cfg.timeout_cell, left))
            key = task["index"]
        else:
            self.nb.cells.append(nbformat.v4.new_code_cell(task["source"]))
            n = len(self.nb.cells) - 1
            result = self._execute(client, self.nb.cells[n], n, self.cfg.extract_timeout)
            key = "extract " + ",".join(task["keys"])
            answers.update(extract.read_answers(task["path"], nonce, task["keys"]))
            for k in task["keys"]:
                if k not in answers and result in ("dead", "timeout"):
                    why = "it crashed the kernel" if result == "dead" else "it did not finish in time"
                    answers[k] = {"status": "error", "error": why}
        self.status[key] = {"dead": "crashed the kernel", "timeout": "timed out"}.get(result, result)
        if result == "timeout" and not self._responsive(client):
            self.status[key] = "timed out and ignored the interrupt"
            return "dead"
        return result

    def run(self) -> RunResult:
        t0 = time.monotonic()
        deadline = t0 + self.cfg.timeout_total
        nonce = secrets.token_hex(8)
        root = Path(tempfile.mkdtemp(prefix="hwlib-grade-", dir=self.cfg.tmp_root))
        workdir = root / "work"
        workdir.mkdir()
        tasks = _tasks(self.nb, self.checks, workdir, nonce)
        skip, answers, flooded = set(), {}, False
        timings = dict.fromkeys(("kernel_start", "cells", "extraction", "shutdown"), 0.0)
        for attempt in range(self.cfg.max_restarts + 1):
            t = time.monotonic()
            try:
                client = self._start(root, workdir, attempt)
            except Exception as exc:
                self.notes.append(f"the kernel did not start: {type(exc).__name__}: {str(exc)[:200]}")
                break
            timings["kernel_start"] += time.monotonic() - t
            restart = False
            for i, task in enumerate(tasks):
                if i in skip:
                    continue
                t = time.monotonic()
                result = self._task(client, i, task, deadline, nonce, answers)
                timings["cells" if task["kind"] == "cell" else "extraction"] += time.monotonic() - t
                if result in ("dead", "timeout") or task["kind"] == "extract":
                    skip.add(i)   # never replay a culprit; never extract twice
                if result == "dead":
                    restart = True
                    break
            flooded = flooded or client.flooded
            t = time.monotonic()
            self._stop(client)
            timings["shutdown"] += time.monotonic() - t
            if not restart:
                break
            self.notes.append("the kernel failed too often; the remaining cells were not run"
                              if attempt == self.cfg.max_restarts else
                              "restarted the kernel and replayed the cells before the failing one")
        if flooded:
            self.notes.append("the output was longer than the limit and was truncated")
        result = RunResult(answers, self.status, self.notes, bool(self.bwrap), time.monotonic() - t0,
                           self.nb, {k: round(v, 3) for k, v in timings.items()})
        _remove_tree(root)
        return result


def _remove_tree(root: Path) -> None:
    import shutil

    shutil.rmtree(root, ignore_errors=True)
