"""Wrong methods must lose their points, through the real grader, and the feedback must say what is
wrong: each case edits one line of an exercise's solution into a method a learner really writes
(a formula that ignores an argument, a function that always says yes, a roofline without its min,
forward-only FLOPs) and grades the result like a submission."""

from pathlib import Path

import nbformat
import pytest

from hwlib.grading import grader, spec

ROOT = Path(__file__).resolve().parents[2]

# (exercise, line of the solution, the wrong line, {check: words of its diagnosis}, checks that must still pass)
CASES = [
    (
        "ex01_memory_budget",
        "return 2 * n_layers * n_heads * head_dim * seq_len * batch * bytes_per_value",
        "return 2 * n_layers * n_heads * head_dim * seq_len * 2",
        {"kv_cache_fn_batch": "ignores both `batch` and `bytes_per_value`"},
        ["kv_cache_fn", "kv_4k", "max_sequences"],
    ),
    (
        "ex02_time_and_cost",
        "achieved = peak_flops * mfu * n_gpus * scaling_efficiency",
        "achieved = peak_flops * mfu * n_gpus",
        {"training_time_fn_cluster": "ignores `scaling_efficiency`", "time_8gpu": "perfect scaling"},
        ["training_time_fn", "time_1gpu", "cost_1gpu", "gpus_for_1h"],
    ),
    (
        "ex04_decode_bound",
        "return batch / step_time",
        "return 1 / step_time",
        {"decode_fn_batch": "your function ignores `batch`"},
        ["decode_fn", "tps_b1"],
    ),
    (
        "ex05_littles_law",
        "return math.ceil(per_sm / per_warp)",
        "return math.floor(per_sm / per_warp)",
        {"warps_needed_fn": "Rounded down"},
        ["in_flight", "in_flight_per_sm", "warps_float4", "loads_per_thread"],
    ),
    (
        "ex08_intensity",
        "moved = 3 * n**2 * bytes_per_element",
        "moved = 3 * n**2 * 2",
        {"square_intensity_fn_fp32": "ignores `bytes_per_element`"},
        ["square_intensity_fn", "i_square"],
    ),
    (
        "ex09_number_formats",
        "return bool(np.isinf(np.float16(x)))",
        "return True",
        {
            "overflows_fp16_fn_fits": "says every value overflows",
            "overflows_fp16_fn_rounds_down": "rounds DOWN to 65504",
        },
        ["overflows_fp16_fn", "overflows_fp16_fn_rounds_up"],
    ),
    (
        "ex09_number_formats",
        "return bool(np.isinf(np.float16(x)))",
        "return bool(x > 65504)",
        {"overflows_fp16_fn_rounds_down": "comparing with 65504 is not the same as casting"},
        ["overflows_fp16_fn", "overflows_fp16_fn_fits", "overflows_fp16_fn_rounds_up"],
    ),
    (
        "ex10_reading_a_roofline",
        "return min(peak_flops, bandwidth * intensity)",
        "return bandwidth * intensity",
        {"attainable_fn_compute_bound": "capped by the flat one (the peak)"},
        ["attainable_fn", "attainable_fn_at_ridge"],
    ),
    (
        "ex10_reading_a_roofline",
        "beta = max(b / t for b, t in stream_points)",
        "beta = sum(b / t for b, t in stream_points) / len(stream_points)",
        {"beta": "mean of the four kernels"},
        ["pi", "ridge", "attainable_fn", "points_above"],
    ),
    (
        "ex10_reading_a_roofline",
        'gemm_points = [[r["m"], r["n"], r["k"], WEIGHT[2], r["seconds_best"]] for r in mm["results"]]',
        'gemm_points = [[r["m"], r["n"], r["k"], WEIGHT[2], r["seconds_best"] / 1e6] for r in mm["results"]]; '
        'SPEC_NAME = "H100 SXM"',
        {"beta": "broken measurement", "pi": "broken measurement"},
        ["attainable_fn", "crossover_fn", "spec_crossover"],
    ),
    (
        "ex10_reading_a_roofline",
        "return ridge * itemsize * k * n / (2 * k * n - ridge * itemsize * (k + n))",
        "return ridge * itemsize / 2",
        {"crossover_fn": "the approximation I = 2m/b", "spec_crossover": "That is the ridge itself"},
        ["beta", "pi", "attainable_fn"],
    ),
    (
        "ex13_moe_experts",
        "return 4 * tokens * top_k * d_model * bytes_per_value * (n_gpus - 1) / n_gpus",
        "return 4 * tokens * top_k * d_model * bytes_per_value",
        {"all_to_all_fn_fp8": "sends every token away"},
        ["expert_params", "total_params", "compute_s"],
    ),
    (
        "ex13_moe_experts",
        "compute_s = 3 * 2 * T * K3 * 3 * D3 * D_FF3 / (MFU * PEAK)",
        "compute_s = 2 * T * K3 * 3 * D3 * D_FF3 / (MFU * PEAK)",
        {"compute_s": "forward pass only"},
        ["a2a_nvlink_s", "a2a_ib_s", "all_to_all_fn", "bound_nvlink", "bound_ib"],
    ),
    (
        "ex14_diagnose_profile",
        "return (flops / seconds) / min(peak, bandwidth * flops / nbytes)",
        "return (flops / seconds) / peak",
        {
            "attainment_fn_memory": "compares with the peak",
            "attain": "a memory-bound row's roof is bandwidth x intensity",
        },
        ["gemm_cost_fn", "elementwise_cost_fn", "attention_cost_fn", "attainment_fn_compute"],
    ),
    (
        "ex14_diagnose_profile",
        "target_1, target_2 = sorted(saving, key=saving.get, reverse=True)[:2]",
        'target_1, target_2 = sorted(saving, key=lambda n: [r["time_s"] for r in PROFILE if r["name"] == n][0], '
        "reverse=True)[:2]",
        {"target_2": "one of the two longest kernels"},
        ["attain", "broken_row", "target_1", "remedy_1"],
    ),
    (
        "ex15_fermi_estimate",
        "return 6 * n_params * tokens * (1 + overhead) / (mfu * peak_flops) / 3600",
        "return 6 * n_params * tokens * overhead / (mfu * peak_flops) / 3600",
        {"gpu_hours_fn": "multiplies by the overhead itself", "gpu_hours_low": "Hint:"},
        ["cost_low", "cost_high", "matters_most", "why_more_hours"],
    ),
    (
        "ex15_fermi_estimate",
        "gpu_hours_low = gpu_hours(N_PARAMS, tokens_range[0], mfu_range[1], overhead_range[0], PEAK)",
        "gpu_hours_low = gpu_hours(N_PARAMS, tokens_range[0], mfu_range[0], overhead_range[0], PEAK)",
        {"gpu_hours_low": "low end of your mfu_range"},
        ["gpu_hours_fn", "gpu_hours_high", "cost_low"],
    ),
    (
        "ex15_fermi_estimate",
        "mfu_range = (0.30, 0.50)",
        "mfu_range = (0.40, 0.41)",
        {"width": "less than 1.5x wide"},
        ["gpu_hours_low", "gpu_hours_high", "cost_low", "cost_high"],
    ),
    (
        "ex15_fermi_estimate",
        "overhead_range = (0.05, 0.35)",
        "overhead_range = (5, 35)",
        {"gpu_hours_low": "the overhead is a fraction", "gpu_hours_high": "the overhead is a fraction"},
        ["gpu_hours_fn", "why_more_hours"],
    ),
    (
        "ex03_measure_mfu",
        "return 6 * p * batch",
        "return 2 * p * batch",
        {
            "step_flops_fn": "forward pass only",
            "mfu_8": "forward pass only",
            "mfu_64": "forward pass only",
            "mfu_512": "forward pass only",
        },
        ["n_params", "mfu_gain", "receipt"],
    ),
]


# Design exercises: the learner's own plan is graded, with the numbers the solution computed with
# (the book's defaults: per-learner grading is off in the public checks).
DESIGN_CASES = [
    (  # the bubble left out of the step time: a deep pipeline looks as fast as no pipeline
        "ex16_parallel_layout",
        "return (m + pp - 1) * t_mb + once + p2p",
        "return m * t_mb + once + p2p",
        {"step_time_fn_pp4_full": "leaves out the pipeline bubble"},
        ["step_time_fn_tp8", "memory_fn_tp8", "tp_inside_node"],
    ),
    (  # memory without activations: the plan chosen with it does not fit
        "ex16_parallel_layout",
        'per_layer, work = (2 * SEQ * micro_batch * H / tp, acts("none")) if recompute == "full" else (acts(recompute), 0)',
        "per_layer, work = 0, 0",
        {"memory_fn_tp8": "leaves out the activations", "plan_memory_fits": "leaves out the activations"},
        ["step_time_fn_tp8", "why_tp_in_node"],
    ),
    (  # a plan picked by hand without comparing: TP8 x PP8, ZeRO-0, full recompute
        "ex16_parallel_layout",
        "best_s, (tp, pp, dp, zero, micro_batch, recompute) = min(candidates)",
        "best_s, (tp, pp, dp, zero, micro_batch, recompute) = 0, (8, 8, 1, 0, 1, 'full')",
        {"plan_step_near_best": "by more than the margin"},
        ["tp_inside_node", "plan_memory_fits", "plan_bubble", "step_time_fn_tp8"],
    ),
    (  # the decode step reads only the weights: every plan looks fast, the batch grows too large
        "ex17_pick_hardware",
        "read = N_PARAMS * b + batch * context * KV_BF16 * b / 2",
        "read = N_PARAMS * b",
        {"rate_fn_h100_fp8": "reads only the weights", "plan_rate_meets_target": "reads only the weights"},
        ["memory_fn_h100", "why_batch_limit"],
    ),
    (  # a plan chosen by feel: one H100 per replica in bf16, 8 users each (32 replicas for 256 users)
        "ex17_pick_hardware",
        "plan_cost, gpu, gpus_per_replica, precision, batch = min(plans)",
        "plan_cost, gpu, gpus_per_replica, precision, batch = 32 * PRICE['H100 SXM'], 'H100 SXM', 1, 'bf16', 8",
        {"plan_cost_near_best": "cheaper by more than the margin"},
        ["plan_memory_fits", "plan_rate_meets_target", "memory_fn_h100"],
    ),
]


def _wrong_submission(ex_id: str, line: str, wrong: str, path: Path) -> Path:
    nb = nbformat.read(ROOT / "exercises" / ex_id / "solution.ipynb", as_version=4)
    cells = [c for c in nb.cells if c.cell_type == "code" and line in c.source]
    assert len(cells) == 1, f"{ex_id}: the solution line {line!r} moved; update this test"
    cells[0].source = cells[0].source.replace(line, wrong)
    nbformat.write(nb, path)
    return path


@pytest.mark.parametrize(
    "ex_id, line, wrong, diagnosed, still_right", CASES, ids=[f"{c[0][:4]}-{c[2][:28]}" for c in CASES]
)
def test_wrong_method_loses_the_points_and_is_diagnosed(ex_id, line, wrong, diagnosed, still_right, tmp_path):
    _graded_wrong(ex_id, line, wrong, diagnosed, still_right, tmp_path)


def _graded_wrong(ex_id, line, wrong, diagnosed, still_right, tmp_path):
    ex = spec.load_exercise(ex_id)
    # named solution.ipynb: the grader's learner id is then "solution", the solution's own LEARNER_ID,
    # so an exercise with variants grades the same numbers the solution computed
    sub = _wrong_submission(ex_id, line, wrong, tmp_path / "solution.ipynb")
    [(_, _, res)] = list(
        grader.grade_batch(ex, [sub], tmp_path / "out", grader.configure(ex), jobs=1, progress=lambda *_: None)
    )
    assert res["extra_data"]["status"] == "graded", res["output"]
    tests = {t["name"]: t for t in res["tests"]}
    for name, words in diagnosed.items():
        t = tests[name]
        assert t["status"] == "failed" and t["score"] == 0, (name, t)
        assert words in t["output"], (name, t["output"])
        assert "Hint:" in t["output"], t["output"]  # a wrong answer also gets its hint
    for name in still_right:
        assert tests[name]["status"] == "passed", (name, tests[name]["output"])
    lost = ex.max_score - res["score"]
    assert lost >= sum(c.points for c in ex.checks if c.name in diagnosed)


@pytest.mark.parametrize(
    "ex_id, line, wrong, diagnosed, still_right", DESIGN_CASES, ids=[f"{c[0][:4]}-{c[2][:28]}" for c in DESIGN_CASES]
)
def test_wrong_design_loses_the_points_and_is_diagnosed(ex_id, line, wrong, diagnosed, still_right, tmp_path):
    _graded_wrong(ex_id, line, wrong, diagnosed, still_right, tmp_path)
