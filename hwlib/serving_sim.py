"""A small deterministic discrete-event simulator of a continuous-batching LLM server.

Requests arrive as a Poisson process (seeded), each with a prompt of P tokens and an output of O
tokens drawn from geometric distributions (many short, a long tail; the same lengths for every rate
under one seed). The engine runs in *steps*. Before each step it admits waiting requests first come,
first served while it has fewer than `max_seqs` running and free KV blocks for the prompt
(PagedAttention-style allocation: blocks are taken as tokens are written {cite}`kwon2023pagedattention`).
A step then holds

* one decode token for every running sequence past its prefill, and
* with `chunked=True`, prefill chunks of the waiting prompts filling the rest of the
  `max_batched_tokens` budget (chunked prefill {cite}`agrawal2024sarathi`); with `chunked=False` a
  step with any prompt to prefill runs only prefills, whole prompts, and the decodes wait
  (prefill-first scheduling, as vLLM ran before chunked prefill).

Its time is the roofline bound of `hwlib.serving.step_time_s` — the new tokens' FLOPs against the
weights plus every scheduled sequence's cached context read once — plus a fixed `step_overhead_s`.
A prefill that completes emits the request's first token (TTFT = that step's end − arrival); each
decode step emits one more (TPOT = (finish − first token) / (O − 1)). When a step needs more blocks
than are free, the most recently admitted sequence is preempted: its blocks are freed and it is
queued again first, to recompute prompt and output so far (vLLM's recompute preemption).
`policy="static"` admits a new batch only when the previous one has finished (static batching
{cite}`yu2022orca`).

Pure NumPy; a run of a few hundred requests takes a fraction of a second. Units: seconds, tokens.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import numpy as np

from . import _check, memory, models, serving, specs

POLICIES = ("continuous", "static")


@dataclass(frozen=True)
class Engine:
    """What the simulator needs of a model on a device: N parameters, W weight bytes, q KV bytes per
    token, peak FLOP/s π and bandwidth β, the KV pool (`kv_blocks` of `block_tokens`) and the
    scheduler's limits."""

    n_params: float
    weights_bytes: float
    bytes_per_token: float
    peak_flops: float
    bandwidth: float
    kv_blocks: int
    block_tokens: int = 16
    max_seqs: int = 256
    max_batched_tokens: int = 2048
    chunked: bool = True
    policy: str = "continuous"
    step_overhead_s: float = 0.0

    def __post_init__(self):
        for name in ("n_params", "weights_bytes", "bytes_per_token", "peak_flops", "bandwidth"):
            _check.positive(name, getattr(self, name))
        for name in ("kv_blocks", "block_tokens", "max_seqs", "max_batched_tokens"):
            _check.integer(name, getattr(self, name))
        _check.nonnegative("step_overhead_s", self.step_overhead_s)
        _check.choice("policy", self.policy, POLICIES)
        if self.max_batched_tokens < self.max_seqs:
            raise ValueError(
                f"max_batched_tokens ({self.max_batched_tokens}) must be >= max_seqs ({self.max_seqs}): "
                "every running sequence needs its decode token in a step"
            )

    @classmethod
    def for_model(
        cls,
        model="Llama 3 8B",
        accelerator="H100 SXM",
        kv_blocks=None,
        utilization=0.9,
        overhead_bytes=0.0,
        dtype="bf16",
        **scheduler,
    ) -> Engine:
        """An engine for a named model on a spec-sheet device, in `dtype` (weights, cache, peak).
        Without `kv_blocks` the pool is `serving.kv_blocks(serving.kv_budget_bytes(visible memory,
        utilization, W, overhead_bytes), q)`: pass the activation peak and other memory an engine's
        profiling run reports as `overhead_bytes`, or the pool comes out too large."""
        shape, acc = models.get(model), specs.get(accelerator)
        n = shape.n_params()
        w = memory.weights_bytes(n, dtype)
        q = memory.kv_cache_bytes_for(shape, 1, dtype=dtype)
        block = scheduler.get("block_tokens", 16)
        if kv_blocks is None:
            budget = serving.kv_budget_bytes(acc.visible_memory_bytes(), utilization, w, overhead_bytes)
            kv_blocks = serving.kv_blocks(budget, q, block)
        return cls(n, w, q, acc.peak_flops(dtype), acc.bandwidth, int(kv_blocks), **scheduler)

    def step_time_s(self, new_tokens, context_tokens) -> float:
        """One step's time: `serving.step_time_s` + step_overhead_s  [s] (arrays allowed). The
        engine's fields were checked once, so the roofline is evaluated without re-checking them."""
        return self.step_overhead_s + serving._step_time_unchecked(
            self.n_params, self.weights_bytes, new_tokens, context_tokens, self.bytes_per_token,
            self.peak_flops, self.bandwidth,
        )  # fmt: skip


def _blocks(tokens, block_tokens):
    """⌈L/b⌉ for whole-token counts (`serving.blocks_for` without the checks)."""
    return -(-np.asarray(tokens) // block_tokens)


@dataclass(frozen=True)
class Workload:
    """Poisson arrivals at `rate_rps` requests/s, `n_requests` of them; prompt and output lengths
    geometric with the given means, clipped to [1, max]; `seed` fixes everything."""

    rate_rps: float
    n_requests: int = 400
    prompt_mean: float = 512
    output_mean: float = 128
    prompt_max: int = 4096
    output_max: int = 1024
    seed: int = 0

    def __post_init__(self):
        _check.positive("rate_rps", self.rate_rps)
        _check.integer("n_requests", self.n_requests)
        _check.integer("seed", self.seed, minimum=0)
        for name in ("prompt_mean", "output_mean"):
            _check.positive(name, getattr(self, name))
        for name in ("prompt_max", "output_max"):
            _check.integer(name, getattr(self, name))

    def sample(self):
        """(arrival_s, prompt_tokens, output_tokens) arrays. Lengths are drawn before the gaps, and
        the gaps as standard exponentials scaled by 1/rate, so one seed gives the same requests at
        every rate (common random numbers: a rate sweep compares like with like)."""
        rng = np.random.default_rng(self.seed)
        n = self.n_requests
        prompt = np.minimum(rng.geometric(1 / max(self.prompt_mean, 1.0), n), self.prompt_max)
        output = np.minimum(rng.geometric(1 / max(self.output_mean, 1.0), n), self.output_max)
        arrival = np.cumsum(rng.standard_exponential(n)) / self.rate_rps
        return arrival, prompt.astype(np.int64), output.astype(np.int64)


@dataclass
class Result:
    """Per-request outcome of one simulation (seconds, tokens) and the run's totals."""

    arrival_s: np.ndarray
    prompt_tokens: np.ndarray
    output_tokens: np.ndarray
    first_token_s: np.ndarray
    finish_s: np.ndarray
    steps: int
    preemptions: int
    busy_s: float
    engine: Engine = field(repr=False)

    @property
    def ttft_s(self) -> np.ndarray:
        """Time to first token of each request: first token − arrival."""
        return self.first_token_s - self.arrival_s

    @property
    def tpot_s(self) -> np.ndarray:
        """Time per output token after the first: (finish − first) / (O − 1); 0 for O = 1."""
        gaps = np.maximum(self.output_tokens - 1, 1)
        return np.where(self.output_tokens > 1, (self.finish_s - self.first_token_s) / gaps, 0.0)

    @property
    def duration_s(self) -> float:
        """From the first arrival to the last finish."""
        return float(self.finish_s.max() - self.arrival_s.min())

    @property
    def throughput_tok_s(self) -> float:
        """Output tokens per second over the run."""
        return float(self.output_tokens.sum() / self.duration_s)

    def summary(self) -> dict:
        """p50 and p99 of TTFT and TPOT (seconds), throughput (output tokens/s), steps, preemptions."""
        out = {}
        for name, values in (("ttft", self.ttft_s), ("tpot", self.tpot_s)):
            for q in (50, 99):
                out[f"{name}_p{q}_s"] = serving.percentile(values, q)
        out.update(throughput_tok_s=self.throughput_tok_s, steps=self.steps, preemptions=self.preemptions)
        return out


def simulate(engine: Engine, workload: Workload) -> Result:  # noqa: C901 (one event loop; split when next changed)
    """Run the workload through the engine (see the module docstring); deterministic for a seed.
    ValueError if a request can never fit: prompt + output above the KV pool or, without chunking,
    a prompt above max_batched_tokens."""
    arrival, prompt, output = workload.sample()
    b, pool = engine.block_tokens, engine.kv_blocks
    need = serving.blocks_for(prompt + output, b)
    if need.max() > pool:
        raise ValueError(
            f"a request of {int((prompt + output).max())} tokens needs {int(need.max())} KV blocks but the "
            f"pool has {pool}; give the engine more kv_blocks or the workload shorter prompt_max/output_max"
        )
    if not engine.chunked and prompt.max() > engine.max_batched_tokens:
        raise ValueError(
            f"without chunked prefill a prompt must fit one step: prompt_max {int(prompt.max())} > "
            f"max_batched_tokens {engine.max_batched_tokens}"
        )
    n = arrival.size
    cached = np.zeros(n, np.int64)  # tokens whose K and V are in the cache
    goal = np.zeros(n, np.int64)  # tokens the current prefill must reach
    generated = np.zeros(n, np.int64)
    held = np.zeros(n, np.int64)  # KV blocks held
    prefilling = np.zeros(n, bool)
    first = np.full(n, np.nan)
    finish = np.full(n, np.nan)
    waiting: deque = deque()
    running: list = []
    free, t, nxt, steps, preempt, busy = pool, 0.0, 0, 0, 0, 0.0

    while nxt < n or waiting or running:
        if not waiting and not running:
            t = max(t, arrival[nxt])
        while nxt < n and arrival[nxt] <= t:
            waiting.append(nxt)
            nxt += 1
        if engine.policy == "continuous" or not running:
            while waiting and len(running) < engine.max_seqs:
                i = waiting[0]
                if _blocks(prompt[i] + generated[i], b) > free:
                    break
                waiting.popleft()
                running.append(i)
                prefilling[i], goal[i], cached[i] = True, prompt[i] + generated[i], 0
        if not running:  # nothing admitted: wait for the next arrival
            t = max(t, arrival[nxt]) if nxt < n else t
            continue
        run = np.array(running)
        blocked = (
            not waiting
            or len(running) >= engine.max_seqs
            or (engine.policy == "static" or _blocks(prompt[waiting[0]] + generated[waiting[0]], b) > free)
        )
        if blocked and not prefilling[run].any():
            k, dts = _decode_run(
                engine, run, cached, generated, output, held, free, t, arrival[nxt] if nxt < n else None
            )
            if k:
                cached[run] += k
                generated[run] += k
                grown = _blocks(cached[run], b) - held[run]
                held[run] += grown
                free -= int(grown.sum())
                t += float(dts.sum())
                busy += float(dts.sum())
                steps += k
                ended = run[generated[run] >= output[run]]
                finish[ended] = t
                free += int(held[ended].sum())
                held[ended] = 0
                if ended.size:
                    gone = set(ended.tolist())
                    running = [i for i in running if i not in gone]
                continue
        new = _schedule(engine, run, prefilling, goal, cached)
        extra = np.maximum(_blocks(cached[run] + new, b) - held[run], 0)
        while extra.sum() > free:  # preempt the newest sequence and recompute it later
            victim = running.pop()
            free += held[victim]
            held[victim], cached[victim], prefilling[victim] = 0, 0, False
            waiting.appendleft(victim)
            preempt += 1
            run = np.array(running)
            new = _schedule(engine, run, prefilling, goal, cached)
            extra = np.maximum(_blocks(cached[run] + new, b) - held[run], 0)
        if not running:
            continue
        active = new > 0
        dt = engine.step_time_s(new.sum(), (cached[run] + new)[active].sum())
        t += dt
        busy += dt
        steps += 1
        free -= extra.sum()
        held[run] += extra
        was_prefill = prefilling[run]
        cached[run] += new
        done_prefill = was_prefill & (cached[run] >= goal[run])
        emits = (active & ~was_prefill) | done_prefill
        prefilling[run[done_prefill]] = False
        generated[run[emits]] += 1
        fresh = run[emits & np.isnan(first[run])]
        first[fresh] = t
        ended = run[emits & (generated[run] >= output[run])]
        finish[ended] = t
        free += held[ended].sum()
        held[ended] = 0
        if ended.size:
            gone = set(ended.tolist())
            running = [i for i in running if i not in gone]
    return Result(arrival, prompt, output, first, finish, steps, preempt, busy, engine)


def _decode_run(engine, run, cached, generated, output, held, free, t, next_arrival):
    """Fast-forward over a stretch of pure decode steps that nothing can interrupt: no prefill is
    pending and nobody can be admitted, so each step decodes the same B sequences. It ends at the
    first finish, at the step that reaches the next arrival, or before the step whose blocks would not
    be free. Returns (k steps, their times); k = 0 when not even one step's blocks are free (the
    single-step path then preempts)."""
    b = engine.block_tokens
    k = int((output[run] - generated[run]).min())
    j = np.arange(1, k + 1)
    context = cached[run].sum() + j * run.size  # KV read (and the new token written) in step j
    dts = np.broadcast_to(engine.step_time_s(run.size, context), j.shape).astype(float)
    if next_arrival is not None:
        reach = np.flatnonzero(t + np.cumsum(dts) >= next_arrival)
        if reach.size:
            k = int(reach[0]) + 1
    grow = _blocks(cached[run][None, :] + j[:k, None], b) - held[run][None, :]
    ok = np.maximum(grow, 0).sum(axis=1) <= free
    if not ok.all():
        k = int(np.argmin(ok))  # stop before the first step whose blocks are not free
    return k, dts[:k]


def _schedule(engine, run, prefilling, goal, cached) -> np.ndarray:
    """New tokens of each running sequence this step (see the module docstring)."""
    if run.size == 0:
        return np.zeros(0, np.int64)
    pre = prefilling[run]
    remaining = np.where(pre, goal[run] - cached[run], 0)
    new = np.where(pre, 0, 1).astype(np.int64)
    budget = engine.max_batched_tokens
    if engine.chunked:
        budget -= int(new.sum())
        before = np.cumsum(remaining) - remaining  # prefill tokens of the sequences ahead in the queue
        new += np.clip(budget - before, 0, remaining)
        return new
    if pre.any():  # prefill-first: whole prompts that fit the budget, decodes wait
        fits = (np.cumsum(remaining) <= budget) & pre
        fits[np.flatnonzero(pre)[0]] = True
        return np.where(fits, remaining, 0)
    return new
