"""The serving planner: how many GPUs, in which tensor-parallel replicas, serve a request stream within
its latency objectives, and what a million output tokens costs.

From an arrival rate λ, prompt and output length distributions, SLOs on time to first token (TTFT)
and time per output token (TPOT) at a percentile, a model, a precision and a GPU, it tries every
tensor-parallel degree t the heads allow (t divides both the attention and the KV heads and stays in
one NVLink domain) whose weights fit, sizes the replica's paged KV pool, and runs the discrete-event
simulator of chapter 12 (`hwlib.serving_sim`) on the λ/R requests per second one of R replicas sees
(a Poisson stream split at random stays Poisson). The fewest replicas whose simulated p-th
percentiles meet both SLOs give the configuration; the cheapest over t is the plan.

Per GPU of a TP-t replica (SI units):

    KV pool   K = u·M − W/t − O,  blocks = ⌊K / (b·q/t)⌋        (`serving.kv_budget_bytes`, `kv_blocks`)
    step      t_step = max(2·N·T / (t·η·π), (W/t + C·q/t) / (η_β·β)) + t_TP      (`serving.step_time_s`)
    TP        t_TP = 2L·[2(t−1)/t · T·d·2 B / B_NVLink + 2(t−1)·α]   (two ring all-reduces per layer)
    cost      $/M tokens = G · price/h / (3600 · λ · E[O]) · 10^6

Options: the scheduler's `max_seqs` and token budget, chunked prefill or prefill-first, KV block size
(its fragmentation is reported), a prefix-cache hit rate, and prefill/decode disaggregation (each
replica a prefill and a decode instance of t GPUs; the cache crosses NVLink one request at a time).
Refused by name: mixture-of-experts models (expert-parallel serving), speculative decoding, pipeline
parallel serving, TP degrees the heads do not allow, and GPUs without an NVLink figure for t > 1.

Efficiencies (assumptions, stated): η = 0.6 of the dense peak (`layout.EFFICIENCY`) and η_β = 0.75 of
the datasheet bandwidth (gpu-stream's triad reaches 3.53 of the H200's 4.8 TB/s,
hwlib/data/published_measurements.yaml). O = vLLM's own report for Llama 3 8B on an H100, 1.79 GiB
outside PyTorch + 1.26 GiB activation peak (hwlib/data/serving.yaml), for every model. Attention's
own FLOPs and kernel overheads are left out, so real engines run slower: the published checks
(hwlib/data/published_serving.yaml, `check_published`) state by how much. Sources: chapter 12,
{cite}`kwon2023pagedattention`, {cite}`agrawal2024sarathi`, {cite}`zhong2024distserve`.
"""

from __future__ import annotations

import functools
from pathlib import Path

import yaml

from . import _check, layout, memory, models, rent, serving, serving_sim as sim, specs

FORMULAS = {
    "tp_degrees": "t | n_heads,  t | n_kv_heads,  t ≤ NVLink domain",
    "plan.kv_budget_bytes": "K = u·M − W/t − O",
    "plan.kv_blocks": "⌊K / (b·q/t)⌋",
    "max_concurrency": "min(max_seqs, ⌊blocks / ⌈(E[P] + E[O])/b⌉⌋)",
    "fragmentation": "Σ(⌈L/b⌉·b − L) / Σ⌈L/b⌉·b",
    "step_time_s": "max(2·N·T / (t·η·π), (W/t + C·q/t) / (η_β·β)) + t_TP",
    "tp_time_s": "2L·[2(t−1)/t · T·d·2 B / B_NVLink + 2(t−1)·α]",
    "kv_transfer_s": "P·q / B_NVLink  (disaggregated: one request at a time)",
    "plan.replica_rate_rps": "λ / R",
    "plan.slo": "p-th percentile TTFT ≤ SLO_TTFT and TPOT ≤ SLO_TPOT (simulated requests)",
    "plan.goodput_rps": "λ × share of requests meeting both SLOs",
    "plan.gpus": "G = R · t  (· 2 disaggregated)",
    "plan.usd_per_hour": "G · price per GPU-hour",
    "plan.usd_per_million_tokens": "G · price/h / (3600 · λ · E[O]) · 10^6",
    "plan.tokens_per_gpu_s": "λ · E[O] / G",
}
"""The formula behind each number the planner prints (`hwlib serve`, the page, chapter 12)."""

COMPUTE_EFFICIENCY = layout.EFFICIENCY
BANDWIDTH_EFFICIENCY = 0.75
"""η_β: the share of the datasheet bandwidth a decode step's reads reach. gpu-stream's triad kernel
reaches 3.53 TB/s of an H200's 4.8 (hwlib/data/published_measurements.yaml); an assumption."""
OVERHEAD_BYTES = serving.gib(
    serving.published("profile_llama3_8b_h100", "non_torch_gib")
    + serving.published("profile_llama3_8b_h100", "activation_peak_gib")
)
"""O: memory outside weights and cache per GPU, from vLLM's report for Llama 3 8B on one H100."""
ACTIVATION_BYTES = 2.0
"""Bytes per value of the activations TP all-reduces (bf16, also in fp8 serving)."""


def _listed_prices() -> dict:
    out: dict = {}
    for p in rent.prices():
        if p.accelerator not in out or p.usd_per_hour < out[p.accelerator]:
            out[p.accelerator] = p.usd_per_hour
    return out


LISTED_PRICES = _listed_prices()
"""The cheapest dated price per GPU-hour of each accelerator in hwlib/data/prices.yaml (`hwlib.rent`)."""
REFUSED = {
    "speculative": "speculative decoding (draft tokens verified in one step) is not modelled",
    "pipeline_parallel": "pipeline-parallel serving is not modelled: replicas are tensor-parallel only",
    "moe": "mixture-of-experts serving (expert parallelism, routed expert reads) is not modelled",
}
"""What the planner cannot model, by name: it refuses instead of answering."""


def _shape(model):
    return models.get(model) if isinstance(model, str) else model


def tp_degrees(model, nvlink_domain=8):
    """Tensor-parallel degrees t the heads allow: t divides both the attention heads and the KV heads
    (each GPU keeps whole heads and its own share of the cache), t ≤ the NVLink domain."""
    shape = _shape(model)
    out = []
    for t in range(1, _check.integer("nvlink_domain", nvlink_domain) + 1):
        if shape.n_heads % t == 0 and shape.n_kv_heads % t == 0:
            out.append(t)
    return out


def _refuse(shape, speculative, pipeline_parallel):
    if speculative:
        raise ValueError(REFUSED["speculative"] + "; plan without it (hwlib speculative estimates its speed-up)")
    if pipeline_parallel != 1:
        raise ValueError(REFUSED["pipeline_parallel"] + f"; got pipeline_parallel={pipeline_parallel!r}")
    if shape.n_experts > 1:
        raise ValueError(
            f"{shape.name} is a mixture of {shape.n_experts} experts: " + REFUSED["moe"] + "; plan a dense model"
        )


def _precision(acc, precision):
    p = acc.default_precision() if precision is None else precision
    acc.peak_flops(p)  # ValueError naming the precisions the part has
    return p


def replica(model, gpu, precision, tp, *, kv_dtype=None, utilization=0.9, block_tokens=16, max_seqs=256,
            max_batched_tokens=2048, chunked=True, prefix_hit_rate=0.0, compute_efficiency=COMPUTE_EFFICIENCY,
            bandwidth_efficiency=BANDWIDTH_EFFICIENCY, step_overhead_s=0.0, admission="optimistic"):  # fmt: skip
    """One TP-`tp` replica of `model` on `gpu`: its memory per GPU, KV pool and simulator engine.
    Returns {"tp", "weights_bytes", "kv_budget_bytes", "kv_blocks", "bytes_per_token", "engine",
    "tp_s_per_token", "tp_s_per_step"} (per GPU), or {"tp", "reason"} when the weights do not fit."""
    shape, acc = _shape(model), specs.get(gpu)
    p = _precision(acc, precision)
    kv = p if kv_dtype is None else kv_dtype
    n = shape.n_params()
    w = memory.weights_bytes(n, p) / tp
    q = shape.kv_cache_bytes(1, 1, kv) / tp  # memory.kv_cache_bytes_for of a ModelShape
    left = _check.fraction("utilization", utilization) * acc.visible_memory_bytes() - w - OVERHEAD_BYTES
    if left <= block_tokens * q:
        need = (w + OVERHEAD_BYTES) / 2**30
        return {"tp": tp, "reason": f"TP{tp}: weights and overhead need {need:.1f} GiB per GPU, more than "
                f"{utilization:.0%} of the {acc.visible_memory_bytes() / 2**30:.0f} GiB it has"}  # fmt: skip
    blocks = int(left // (block_tokens * q))
    per_token, per_step = tp_times(shape, acc, tp)
    engine = sim.Engine(
        n / tp, w, q, _check.fraction("compute_efficiency", compute_efficiency) * acc.peak_flops(p),
        _check.fraction("bandwidth_efficiency", bandwidth_efficiency) * acc.bandwidth, blocks, block_tokens,
        max_seqs, max_batched_tokens, chunked, "continuous", step_overhead_s, prefix_hit_rate, per_step, per_token,
        _check.choice("admission", admission, sim.ADMISSIONS),
    )  # fmt: skip
    return {"tp": tp, "weights_bytes": w, "kv_budget_bytes": left, "kv_blocks": blocks, "bytes_per_token": q,
            "engine": engine, "tp_s_per_token": per_token, "tp_s_per_step": per_step}  # fmt: skip


def tp_times(shape, acc, tp):
    """(seconds per new token, seconds per step) of a TP replica's all-reduces: two ring all-reduces of
    the T·d activations per layer, 2(t−1)/t of the bytes over NVLink each way and 2(t−1) latency hops
    of α (`layout.NVLINK_LATENCY_S`). (0, 0) for t = 1; ValueError without an NVLink figure."""
    if tp == 1:
        return 0.0, 0.0
    link = acc.interconnect_bandwidth
    if link is None:
        raise ValueError(f"TP{tp} needs a GPU-to-GPU link and the spec sheet has none for {acc.name}; use tp 1")
    per_token = 2 * shape.n_layers * 2.0 * (tp - 1) / tp * shape.d_model * ACTIVATION_BYTES / link
    per_step = 2 * shape.n_layers * 2.0 * (tp - 1) * layout.NVLINK_LATENCY_S
    return per_token, per_step


def workload(rate_rps, n_requests, prompt, output, seed):
    """Requests as lists (`serving_sim.sample_requests`): prompt/output = (dist, mean, max)."""
    return sim.sample_requests(rate_rps, n_requests, prompt[0], prompt[1], prompt[2], output[0], output[1],
                               output[2], seed)  # fmt: skip


def run_replica(rep, requests, disaggregated=False):
    """Simulate one replica on (arrival, prompt, output) lists: per-request TTFT and TPOT lists, the
    duration and the output tokens. Disaggregated: a prefill instance (each request's output ends at
    its first token), the cache over NVLink one request at a time, then a decode instance."""
    arrival, prompt, output = requests
    engine = rep["engine"]
    if disaggregated:
        first = sim.run_requests(engine, arrival, prompt, [1 for _ in prompt])["first"]
        link = rep.get("link_bandwidth") or 0.0
        handed, ready = [], 0.0
        for i in range(len(arrival)):
            ready = max(ready, first[i]) + (prompt[i] * rep["bytes_per_token"] / link if link > 0 else 0.0)
            handed.append(ready)
        run = sim.run_requests(engine, handed, prompt, output, True)
        run["first"] = first
    else:
        run = sim.run_requests(engine, arrival, prompt, output)
    return _latencies(run, arrival, output)


def _latencies(run, arrival, output):
    ttft, tpot = [], []
    end, start, tokens = 0.0, arrival[0], 0
    for i in range(len(arrival)):
        ttft.append(run["first"][i] - arrival[i])
        tpot.append((run["finish"][i] - run["first"][i]) / (output[i] - 1) if output[i] > 1 else 0.0)
        end = max(end, run["finish"][i])
        start = min(start, arrival[i])
        tokens = tokens + output[i]
    return {"ttft_s": ttft, "tpot_s": tpot, "duration_s": end - start, "output_tokens": tokens,
            "preemptions": run["preemptions"]}  # fmt: skip


def judge(lat, ttft_slo_s, tpot_slo_s, percentile):
    """The p-th percentiles of a run's TTFT and TPOT, whether both meet their SLOs, and the share of
    requests meeting both."""
    ok = 0
    for i in range(len(lat["ttft_s"])):
        if lat["ttft_s"][i] <= ttft_slo_s and lat["tpot_s"][i] <= tpot_slo_s:
            ok = ok + 1
    ttft = sim.percentile_of(lat["ttft_s"], percentile)
    tpot = sim.percentile_of(lat["tpot_s"], percentile)
    return {"ttft_s": ttft, "tpot_s": tpot, "meets": ttft <= ttft_slo_s and tpot <= tpot_slo_s,
            "attainment": ok / len(lat["ttft_s"]), "throughput_tok_s": lat["output_tokens"] / lat["duration_s"],
            "preemptions": lat["preemptions"]}  # fmt: skip


def _fewest_replicas(rep, args, max_replicas):
    """The fewest replicas R ≤ max_replicas meeting the SLOs (doubling, then bisection) and its
    judged run; (None, the run at max_replicas) when even that misses."""
    cache = {}

    def trial(r):
        if r not in cache:
            reqs = workload(args["rate_rps"] / r, args["n_requests"], args["prompt"], args["output"], args["seed"])
            lat = run_replica(rep, reqs, args["disaggregated"])
            cache[r] = judge(lat, args["ttft_slo_s"], args["tpot_slo_s"], args["percentile"])
        return cache[r]

    hi = 1
    while not trial(hi)["meets"]:
        if hi >= max_replicas:
            return None, trial(hi)
        hi = min(2 * hi, max_replicas)
    lo = hi // 2  # trial(lo) missed (or lo = 0)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if trial(mid)["meets"]:
            hi = mid
        else:
            lo = mid
    return hi, trial(hi)


def _lengths(dist, mean, cap, name):
    _check.choice(name + "_dist", dist, sim.LENGTHS)
    m = _check.positive(name + "_mean", mean)
    c = _check.integer(name + "_max", cap)
    if m > c:
        raise ValueError(f"{name}_mean {m:g} is above {name}_max {c}")
    return (dist, m, c)


def _candidate(rep, args, gpus_per_replica, price, max_gpus):
    """One TP degree evaluated: replicas, GPUs, judged percentiles, goodput and cost."""
    r, judged = _fewest_replicas(rep, args, max(1, max_gpus // gpus_per_replica))
    out = {"tp": rep["tp"], "kv_blocks": rep["kv_blocks"], "kv_budget_bytes": rep["kv_budget_bytes"],
           "weights_bytes": rep["weights_bytes"], "bytes_per_token": rep["bytes_per_token"],
           "tp_s_per_token": rep["tp_s_per_token"], "tp_s_per_step": rep["tp_s_per_step"],
           "max_concurrency": max_concurrency(rep, args), "judged": judged, "replicas": r}  # fmt: skip
    if r is None:
        out["reason"] = (
            f"TP{rep['tp']}: even {max(1, max_gpus // gpus_per_replica)} replicas miss the SLOs (p{args['percentile']:g} "
            f"TTFT {judged['ttft_s'] * 1e3:.1f} ms, TPOT {judged['tpot_s'] * 1e3:.2f} ms)"
        )
        return out
    g = r * gpus_per_replica
    tokens_s = args["rate_rps"] * args["mean_output"]
    out["gpus"] = g
    out["goodput_rps"] = args["rate_rps"] * judged["attainment"]
    out["tokens_per_gpu_s"] = tokens_s / g
    out["usd_per_hour"] = None if price is None else g * price
    out["usd_per_million_tokens"] = None if price is None else g * price / (3600.0 * tokens_s) * 1e6
    return out


def max_concurrency(rep, args):
    """Sequences the KV pool holds at the mean lengths, capped by the scheduler's max_seqs."""
    b = rep["engine"].block_tokens
    per = -(-int(args["prompt"][1] + args["output"][1] + 0.5) // b)
    return min(rep["engine"].max_seqs, rep["kv_blocks"] // per)


def fragmentation(prompt, output, block_tokens):
    """Share of allocated KV slots left empty in the last blocks of the finished sequences."""
    waste, allocated = 0, 0
    for i in range(len(prompt)):
        length = prompt[i] + output[i]
        blocks = -(-length // block_tokens)
        allocated = allocated + blocks * block_tokens
        waste = waste + blocks * block_tokens - length
    return waste / allocated


def plan(model="Llama 3 8B", gpu="H100 SXM", precision=None, rate_rps=10.0, prompt_mean=512.0,
         output_mean=128.0, ttft_slo_s=0.5, tpot_slo_s=0.05, percentile=99.0, *, prompt_dist="geometric",
         output_dist="geometric", prompt_max=4096, output_max=1024, kv_dtype=None, block_tokens=16,
         max_seqs=256, max_batched_tokens=2048, chunked=True, prefix_hit_rate=0.0, disaggregated=False,
         utilization=0.9, compute_efficiency=COMPUTE_EFFICIENCY, bandwidth_efficiency=BANDWIDTH_EFFICIENCY,
         step_overhead_s=0.0, usd_per_gpu_hour=None, n_requests=300, seed=0, max_gpus=64, tp=None,
         nvlink_domain=8, admission="optimistic", speculative=False, pipeline_parallel=1):  # fmt: skip
    """Plan a service (module docstring): every allowed TP degree t (or only `tp`), the fewest
    replicas meeting both SLOs at the `percentile` in simulation, and the cheapest configuration.
    Returns a dict: "inputs", "candidates" (one per t, each with its replicas, GPUs, KV blocks, max
    concurrency, judged percentiles, goodput, $/h, $/M tokens, or the reason it fails), "best" (the
    fewest GPUs, then the cheapest), "fragmentation" of the sampled lengths. Prices per GPU-hour:
    `usd_per_gpu_hour`, else the spec sheet's, else the cheapest in hwlib/data/prices.yaml. ValueError for what it cannot model (`REFUSED`)."""
    shape, acc = _shape(model), specs.get(gpu)
    _refuse(shape, speculative, pipeline_parallel)
    p = _precision(acc, precision)
    args = {"rate_rps": _check.positive("rate_rps", rate_rps), "n_requests": _check.integer("n_requests", n_requests),
            "prompt": _lengths(prompt_dist, prompt_mean, prompt_max, "prompt"),
            "output": _lengths(output_dist, output_mean, output_max, "output"),
            "seed": _check.integer("seed", seed, 0), "disaggregated": bool(disaggregated),
            "ttft_slo_s": _check.positive("ttft_slo_s", ttft_slo_s), "tpot_slo_s": _check.positive("tpot_slo_s", tpot_slo_s),
            "percentile": _percentile(percentile)}  # fmt: skip
    reqs = workload(1.0, args["n_requests"], args["prompt"], args["output"], args["seed"])
    args["mean_output"] = _mean(reqs[2])
    degrees = _degrees(shape, tp, nvlink_domain)
    if _check.nonnegative("prefix_hit_rate", prefix_hit_rate) >= 1:
        raise ValueError(f"prefix_hit_rate must be in [0, 1); got {prefix_hit_rate!r}")
    price = (
        acc.price_per_hour_usd if usd_per_gpu_hour is None else _check.positive("usd_per_gpu_hour", usd_per_gpu_hour)
    )
    options = {"kv_dtype": kv_dtype, "utilization": utilization, "block_tokens": _check.integer("block_tokens", block_tokens),
               "max_seqs": _check.integer("max_seqs", max_seqs), "max_batched_tokens": _scheduler(max_seqs, max_batched_tokens),
               "chunked": bool(chunked), "prefix_hit_rate": prefix_hit_rate, "compute_efficiency": compute_efficiency,
               "bandwidth_efficiency": bandwidth_efficiency, "step_overhead_s": _check.nonnegative("step_overhead_s", step_overhead_s),
               "admission": _check.choice("admission", admission, sim.ADMISSIONS)}  # fmt: skip
    candidates = []
    for t in degrees:
        candidates.append(_evaluate(shape, acc, p, t, options, args, price, _check.integer("max_gpus", max_gpus)))
    inputs = {"model": shape.name, "gpu": acc.name, "precision": p, "usd_per_gpu_hour": price,
              "nvlink_bandwidth": acc.interconnect_bandwidth, "peak_flops": acc.peak_flops(p), "bandwidth": acc.bandwidth,
              "overhead_bytes": OVERHEAD_BYTES, "mean_prompt": _mean(reqs[1]), "mean_output": args["mean_output"],
              "tp_degrees": degrees, **{k: v for k, v in args.items() if k not in ("prompt", "output")},
              "prompt": list(args["prompt"]), "output": list(args["output"]), **options}  # fmt: skip
    return {"inputs": inputs, "candidates": candidates, "best": _best(candidates),
            "fragmentation": fragmentation(reqs[1], reqs[2], block_tokens)}  # fmt: skip


def _evaluate(shape, acc, p, t, options, args, price, max_gpus):
    rep = replica(shape, acc.name, p, t, **options)
    if "reason" in rep:
        return {"tp": t, "replicas": None, "reason": rep["reason"]}
    longest = args["prompt"][2] + args["output"][2]
    if -(-longest // options["block_tokens"]) > rep["kv_blocks"]:
        return {"tp": t, "replicas": None, "reason": f"TP{t}: a request of {longest} tokens needs more than the "
                f"{rep['kv_blocks']} KV blocks a replica holds"}  # fmt: skip
    if not options["chunked"] and args["prompt"][2] > options["max_batched_tokens"]:
        raise ValueError(f"without chunked prefill a prompt must fit one step: prompt_max {args['prompt'][2]} > "
                         f"max_batched_tokens {options['max_batched_tokens']}")  # fmt: skip
    rep["link_bandwidth"] = acc.interconnect_bandwidth
    per_replica = t * (2 if args["disaggregated"] else 1)
    return _candidate(rep, args, per_replica, price, max_gpus)


def _best(candidates):
    """The candidate with the fewest GPUs; among equals the cheapest, then the lowest TP."""
    best = None
    for c in candidates:
        if c["replicas"] is not None and (best is None or _before(c, best)):
            best = c
    return best


def _before(a, b):
    if a["gpus"] != b["gpus"]:
        return a["gpus"] < b["gpus"]
    cost_a, cost_b = a["usd_per_hour"] or 0.0, b["usd_per_hour"] or 0.0
    if cost_a != cost_b:
        return cost_a < cost_b
    return a["tp"] < b["tp"]


def _price(acc, usd_per_gpu_hour):
    """USD per GPU-hour: the one given, else the spec sheet's, else the cheapest dated price; None
    when hwlib has none (costs are then left out)."""
    if usd_per_gpu_hour is not None:
        return _check.positive("usd_per_gpu_hour", usd_per_gpu_hour)
    if acc.price_per_hour_usd is not None:
        return acc.price_per_hour_usd
    return LISTED_PRICES.get(acc.name)


def _mean(values):
    total = 0
    for v in values:
        total = total + v
    return total / len(values)


def _percentile(q):
    v = _check.positive("percentile", q)
    if v > 100:
        raise ValueError(f"percentile must be in (0, 100], e.g. 99 for p99; got {q!r}")
    return v


def _scheduler(max_seqs, max_batched_tokens):
    tokens = _check.integer("max_batched_tokens", max_batched_tokens)
    if tokens < max_seqs:
        raise ValueError(
            f"max_batched_tokens ({tokens}) must be >= max_seqs ({max_seqs}): every running sequence needs its "
            "decode token in a step"
        )
    return tokens


def _degrees(shape, tp, nvlink_domain):
    allowed = tp_degrees(shape, nvlink_domain)
    if tp is None:
        return allowed
    t = _check.integer("tp", tp)
    if t not in allowed:
        raise ValueError(
            f"tp={t} is not a degree {shape.name} allows ({shape.n_heads} heads, {shape.n_kv_heads} KV heads, "
            f"NVLink domain {nvlink_domain}); allowed: {', '.join(str(x) for x in allowed)}"
        )
    return [t]


# --------------------------------------------------------------------------- published benchmarks

PUBLISHED_PATH = Path(__file__).with_name("data") / "published_serving.yaml"


@functools.cache
def published() -> dict:
    """The benchmark setups of hwlib/data/published_serving.yaml: {key: entry} (sources inside)."""
    return yaml.safe_load(PUBLISHED_PATH.read_text(encoding="utf-8"))["setups"]


def check_published(key: str) -> dict:
    """Run the planner's replica on a published setup and compare: {key, entry, metric, published,
    planner, factor (planner / published), within (factor inside the entry's stated bound)}.
    Throughput setups ("output_tok_s") send every request at once (an offline benchmark's infinite
    rate) with fixed lengths; latency setups ("ttft_s") send one request to an idle replica."""
    table = published()
    if key not in table:
        raise KeyError(f"unknown published serving setup {key!r}; accepted: {', '.join(table)}")
    e = table[key]
    opts = dict(e.get("planner") or {})
    opts.pop("why", None)
    rep = replica(e["model"], e["gpu"], e["precision"], e["tp"], **opts)
    if "reason" in rep:
        raise ValueError(f"{key}: {rep['reason']}")
    n = 1 if e["metric"] == "ttft_s" else e.get("planner_requests", 2000)
    rate = 1.0 if n == 1 else 1e9
    reqs = workload(rate, n, ("fixed", e["input_tokens"], e["input_tokens"]),
                    ("fixed", e["output_tokens"], e["output_tokens"]), 0)  # fmt: skip
    lat = run_replica(rep, reqs)
    if e["metric"] == "ttft_s":
        value = lat["ttft_s"][0]
    else:
        value = lat["output_tokens"] / lat["duration_s"]
    factor = value / e["value"]
    bound = e["within_factor"]
    return {"key": key, "entry": e, "metric": e["metric"], "published": e["value"], "planner": value,
            "factor": factor, "within": 1 / bound <= factor <= bound}  # fmt: skip
