"""hwlib.calculator: the book's worked examples and exercises through one call, composition with the
functions that own each formula, display, and bad input."""

import math

import pytest

from hwlib import calculator, finetune, flops, memory, models, roofline, specs

HOUR, DAY = 3600.0, 86400.0
H100 = specs.get("H100 SXM")


def test_exercise1_memory_budget_1_3b():
    est = calculator.estimate(n_params=1.3e9, n_layers=32, n_kv_heads=32, head_dim=64, seq_len=4096)
    assert est.weights_bytes == pytest.approx(2.6e9)  # ≈ 2.6 GB in bf16
    assert est.training_state_bytes == pytest.approx(20.8e9)  # ≈ 21 GB
    assert est.kv_cache_bytes == 2**30  # 1.07 GB = 1 GiB exactly
    assert est.inference_bytes == pytest.approx(2.6e9 + 2**30)
    int4 = calculator.estimate(n_params=1.3e9, weights_dtype="int4")
    assert int4.weights_bytes == pytest.approx(0.65e9)  # ≈ 0.65 GB
    assert "kv_cache_bytes" not in int4 and int4.inference_bytes == pytest.approx(0.65e9)


def test_exercise2_time_and_cost_350m():
    est = calculator.estimate(n_params=350e6, tokens=7e9, gpu="H100 SXM", mfu=0.35, price_per_hour=3.0)
    assert est.training_flops == pytest.approx(1.47e19)
    assert est.training_time_s / HOUR == pytest.approx(11.8, abs=0.05)  # "≈ 12 hours"
    assert est.cost_usd == pytest.approx(35.4, abs=0.05)  # "≈ $36"
    eight = calculator.estimate(
        n_params=350e6, tokens=7e9, n_gpus=8, mfu=0.35, scaling_efficiency=0.9, price_per_hour=3.0
    )
    assert eight.training_time_s / HOUR == pytest.approx(1.64, abs=0.01)  # "≈ 1.7 hours on eight"
    assert eight.gpu_hours == pytest.approx(est.gpu_hours / 0.9)  # same work, 10 % lost


def test_worked_examples_from_model_shapes():
    gpt2 = calculator.estimate(model="GPT-2 small", tokens=10e9, mfu=0.4, price_per_hour=3.0)
    assert gpt2.n_params == models.get("gpt2").n_params() == 124_439_808
    assert 4.5 * HOUR < gpt2.training_time_s < 5.5 * HOUR  # "≈ 5 hours"
    assert gpt2.cost_usd < 20  # "under $20"
    llama = calculator.estimate(model="Llama 3 405B", tokens=15.6e12, n_gpus=16_384, mfu=0.4)
    assert llama.training_flops == pytest.approx(3.8e25, rel=0.01)  # Llama 3 paper: 3.8e25
    assert 60 * DAY < llama.training_time_s < 75 * DAY  # "≈ two months"
    assert llama.cost_usd == pytest.approx(llama.gpu_hours * H100.price_per_hour_usd)  # sheet price


def test_every_value_equals_the_function_that_owns_the_formula():
    m = models.get("Llama 3 8B")
    est = calculator.estimate(
        model=m,
        tokens=1e12,
        n_gpus=64,
        mfu=0.45,
        seq_len=8192,
        batch=2,
        train_seq_len=4096,
        micro_batch=3,
        zero_stage=2,
        recompute="selective",
        price_per_hour=2.5,
    )
    n = m.n_params()
    assert est.weights_bytes == memory.weights_bytes(n, "bf16")
    assert est.training_state_per_gpu == memory.zero_bytes_per_device(n, 64, 2)
    # training: micro-batch 3 of 4096 tokens, Llama as trained (no dropout, FlashAttention, SwiGLU)
    assert est.activation_bytes == memory.activation_bytes(
        4096,
        3,
        4096,
        32,
        32,
        recompute="selective",
        dropout=False,
        attention="flash",
        ffn_hidden=14336,
        gated_mlp=True,
        kv_hidden=8 * 128,  # grouped-query attention: K and V are 8 heads of 128 wide
    )
    assert est.kv_cache_bytes == memory.kv_cache_bytes_for(m, 8192, batch=2)
    assert est.training_time_s == flops.training_time_s(
        flops.training_flops(n, 1e12), H100.peak_flops("bf16"), 0.45, 64
    )
    assert est.cost_usd == flops.cost_usd(est.training_time_s, 2.5, 64)
    assert est.ridge_point == H100.ridge_point("bf16")
    for row in est.rows():
        assert row["formula"] and row["function"] and row["text"]


def test_decode_ceiling_is_bandwidth_over_model_bytes_at_batch_1():
    est = calculator.estimate(n_params=7e9, gpu="H100 SXM")  # no shape: no KV cache
    assert est.decode_tokens_per_s == pytest.approx(239.3, abs=0.1)  # 3.35e12 / 14e9
    assert est.decode_tokens_per_s == pytest.approx(flops.decode_tokens_per_s_bound(14e9, H100.bandwidth))
    assert est.decode_bound == "memory-bound"
    assert est.decode_intensity == pytest.approx(1.0)  # 2N FLOP / 2N bytes


def test_decode_turns_compute_bound_past_the_ridge():
    est = calculator.estimate(n_params=7e9, batch=1024)
    assert est.decode_intensity == pytest.approx(1024) and est.decode_bound == "compute-bound"
    # past the ridge the step is F/π: tokens/s = π / 2N, whatever the batch
    assert est.decode_tokens_per_s == pytest.approx(H100.peak_flops("bf16") / (2 * 7e9))
    assert est.decode_step_s == roofline.time_s(2 * 7e9 * 1024, 14e9, H100.peak_flops("bf16"), H100.bandwidth)


def test_serving_gpus_and_fit():
    est = calculator.estimate(model="Llama 3 70B", seq_len=8192)
    usable = (80 * 2**30 - memory.CUDA_CONTEXT_BYTES) / (1 + memory.HEADROOM)  # 80 GiB less context, headroom
    assert est.gpus_to_serve == math.ceil(est.inference_bytes / usable) == 2
    # a step reads the weights but only B rows of the input embedding, and the KV cache
    l3 = models.get("Llama 3 70B")
    read = est.inference_bytes - (l3.vocab_size - 1) * l3.d_model * 2
    assert est.weights_read_per_step == est.weights_bytes - (l3.vocab_size - 1) * l3.d_model * 2
    assert est.decode_step_s == pytest.approx(read / (2 * H100.bandwidth))
    assert "ideal split" in est["decode_step_s"].label
    seven = calculator.estimate(model="Llama 2 7B", train_seq_len=1024)
    assert seven.training_state_bytes > H100.memory_bytes and not seven.fits_training
    sharded = calculator.estimate(model="Llama 2 7B", train_seq_len=1024, n_gpus=8, zero_stage=3, recompute="full")
    assert sharded.training_state_per_gpu == pytest.approx(seven.training_state_bytes / 8)
    assert sharded.fits_training


def test_fits_leaves_headroom_and_the_cuda_context():
    # 70B in fp8 (70.6 GB) on one 80 GiB H100: under the raw 85.9 GB, and under the 77.6 GB usable
    est = calculator.estimate(model="Llama 3 70B", weights_dtype="fp8", kv_dtype="fp8", seq_len=1024)
    assert est.gpus_to_serve == 1
    # 7B training state 112 GB on 2 GPUs with ZeRO-3: 56 GB + activations fits; the check is memory.fits
    z3 = calculator.estimate(model="Llama 2 7B", n_gpus=2, zero_stage=3, train_seq_len=1024)
    assert z3.fits_training == memory.fits(z3.training_bytes_per_gpu, H100.memory_bytes)
    # a total just under the raw capacity does not "fit": headroom and the context are kept free
    assert not memory.fits(0.99 * H100.memory_bytes, H100.memory_bytes)
    forced = calculator.estimate(model="Llama 3 70B", serve_gpus=1)
    assert forced.fits_serving is False and "fit 1 × H100 SXM" in forced["fits_serving"].label
    assert "fits_serving" not in calculator.estimate(model="Llama 3 70B")


def test_training_and_serving_shapes_are_separate():
    """A serving batch of 64 must not multiply the training activations (was: 'activations 6.67 TB')."""
    one = calculator.estimate(model="Llama 3 8B", batch=1)
    many = calculator.estimate(model="Llama 3 8B", batch=64)
    assert many.activation_bytes == one.activation_bytes
    assert many.kv_cache_bytes == 64 * one.kv_cache_bytes
    mb4 = calculator.estimate(model="Llama 3 8B", micro_batch=4)
    assert mb4.activation_bytes == pytest.approx(4 * one.activation_bytes)
    assert mb4.kv_cache_bytes == one.kv_cache_bytes
    assert "no dropout, FlashAttention" in one["activation_bytes"].label
    gpt2 = calculator.estimate(model="gpt2", attention="standard")
    assert "dropout, scores stored" in gpt2["activation_bytes"].label
    assert gpt2["activation_bytes"].formula == "s·b·h·L·(14 + 4·h_kv/h + 4·f/h + 5·a·s/h)"  # h_kv = h for GPT-2
    assert gpt2.activation_bytes == memory.activation_bytes(1024, 1, 768, 12, 12)  # Korthikanti's GPT layer


def test_sequence_lengths_may_not_exceed_the_model_context():
    with pytest.raises(ValueError, match=r"seq_len=8192 exceeds the context of Llama 2 7B \(4096 tokens\)"):
        calculator.estimate(model="Llama 2 7B", seq_len=8192)
    with pytest.raises(ValueError, match="train_seq_len=4096 exceeds the context of GPT-2 small"):
        calculator.estimate(model="gpt2", train_seq_len=4096)
    assert calculator.estimate(n_params=7e9, seq_len=32768).inputs["seq_len"] == 32768  # no shape: no limit


def test_default_sequence_is_capped_at_the_model_context():
    assert calculator.estimate(model="gpt2").inputs["seq_len"] == 1024  # GPT-2's context
    assert calculator.estimate(model="Llama 3 8B").inputs["seq_len"] == 4096
    assert calculator.estimate(model="gpt2", seq_len=512).inputs["seq_len"] == 512  # explicit wins
    assert calculator.estimate(model="gpt2").inputs["train_seq_len"] == 1024
    gpt2 = models.get("gpt2")
    assert calculator.estimate(model=gpt2).kv_cache_bytes == memory.kv_cache_bytes_for(gpt2, 1024)


def test_precision_defaults_to_what_the_part_has():
    t4 = calculator.estimate(n_params=1e9, gpu="T4")
    assert t4.inputs["precision"] == "fp16" and t4.peak_flops == specs.get("T4").peak_flops("fp16")
    fp8 = calculator.estimate(n_params=1e9, precision="fp8")
    assert fp8.peak_flops == pytest.approx(2 * calculator.estimate(n_params=1e9).peak_flops, rel=1e-3)
    with pytest.raises(ValueError, match="T4"):
        calculator.estimate(n_params=1e9, gpu="T4", precision="bf16")


def test_missing_quantities_say_what_they_need():
    est = calculator.estimate(n_params=1e9, gpu="T4")
    with pytest.raises(AttributeError, match="tokens="):
        est.training_time_s
    with pytest.raises(KeyError, match="model shape"):
        est["activation_bytes"]
    est = calculator.estimate(n_params=1e9, gpu="T4", tokens=1e10)
    with pytest.raises(AttributeError, match="price_per_hour"):
        est.cost_usd


def test_display_lists_formula_and_units():
    est = calculator.estimate(model="gpt2", tokens=10e9, price_per_hour=3.0)
    text = str(est)
    assert "C = 6·N·D" in text and "7.47e18 FLOP" in text and "$15.72" in text
    html = est._repr_html_()
    assert html.startswith("<table") and "flops.training_time_s" in html and "C = 6·N·D" in html
    d = est.to_dict()
    assert d["training_flops"] == est.training_flops and d["inputs"]["gpu"] == "H100 SXM"
    assert est["training_time_s"].text() == "5.24 h"


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({}, "n_params"),
        ({"n_params": -1}, "n_params"),
        ({"n_params": 1e9, "mfu": 1.5}, "mfu"),
        ({"n_params": 1e9, "n_gpus": 0}, "n_gpus"),
        ({"n_params": 1e9, "tokens": 0}, "tokens"),
        ({"n_params": 1e9, "price_per_hour": -3}, "price_per_hour"),
        ({"n_params": 1e9, "n_layers": 32}, "n_kv_heads"),
        ({"model": "gpt2", "recompute": "some"}, "recompute"),
        ({"model": "gpt2", "zero_stage": 4}, "stage"),
        ({"model": 42}, "model"),
        ({"model": "gpt2", "micro_batch": 0}, "micro_batch"),
        ({"model": "gpt2", "train_seq_len": 2.5}, "train_seq_len"),
        ({"model": "gpt2", "attention": "fast"}, "attention"),
        ({"n_params": 1e9, "batch": 1.5}, "batch"),
        ({"n_params": 1e9, "weights_dtype": "fp12"}, "dtype"),
    ],
)
def test_bad_input_names_the_argument(kwargs, match):
    with pytest.raises(ValueError, match=match):
        calculator.estimate(**kwargs)


def test_unknown_names_raise_keyerror():
    with pytest.raises(KeyError, match="accelerator"):
        calculator.estimate(n_params=1e9, gpu="H1000")
    with pytest.raises(KeyError, match="model"):
        calculator.estimate(model="Llama 9 1T")


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"n_gpus": 1e30}, "n_gpus=1e30"),
        ({"batch": 10**12}, "batch=1e12"),
        ({"tokens": 1e30}, "tokens=1e30"),
        ({"model": None, "n_params": 8e37}, "n_params=8e37"),
        ({"finetune": "lora", "lora_rank": 8192}, "lora_rank=8192"),
        ({"model": "Llama 3 405B", "serve_gpus": 11}, "serve_gpus=11"),
    ],
)
def test_absurd_inputs_are_refused_by_field_name(kwargs, field):
    with pytest.raises(ValueError, match=field.replace("+", r"\+")):
        calculator.estimate(**({"model": "Llama 3 8B"} | kwargs))


def test_serving_uses_a_tensor_parallel_degree_the_heads_allow():
    est = calculator.estimate(model="Llama 3 405B", seq_len=4096)
    m = models.get("Llama 3 405B")
    held = memory.devices_needed(est.inference_bytes, H100.memory_bytes)
    assert held == 11 and est.gpus_to_serve == 16 and m.n_heads % 16 == 0  # 11 is no divisor of 128 heads
    assert any("16 GPUs serve it" in w for w in est.warnings)
    # 16-way tensor parallelism over 8 KV heads keeps each KV head on two GPUs
    assert est.kv_replication == 2 == memory.kv_replication(16, m.n_kv_heads)
    usable = memory.usable_bytes(H100.memory_bytes)
    assert est.weights_bytes + 2 * est.kv_cache_bytes <= 16 * usable
    assert memory.tensor_parallel_devices(est.weights_bytes, est.kv_cache_bytes, H100.memory_bytes, 128, 8) == 16
    one = calculator.estimate(model="Llama 3 8B")
    assert one.gpus_to_serve == 1 and not one.warnings and "kv_replication" not in one


def test_a_formula_credited_to_the_wrong_function_is_an_error():
    """estimate's put() checks every row against the FORMULAS of the function it names."""
    with pytest.raises(ValueError, match="not one of hwlib.flops.forward_flops's"):
        calculator.check_credit("x", flops.FORMULAS["training_flops"], "hwlib.flops.forward_flops")
    with pytest.raises(ValueError, match="has no formula"):  # the old credit of the QLoRA weights row
        calculator.check_credit("x", "4.127 bit × N (NF4 + double quant)", "hwlib.finetune.finetune_bytes")
    calculator.check_credit(
        "x", models.FORMULAS["ModelShape.kv_cache_bytes.mla"], "hwlib.models.ModelShape.kv_cache_bytes"
    )
    est = calculator.estimate("Llama 2 7B", tokens=1e9, finetune="qlora")
    assert (
        est["finetune_weights_bytes"].function == est["adapter_bytes"].function == "hwlib.finetune.model_finetune_bytes"
    )
    assert est["finetune_weights_bytes"].formula == finetune.FORMULAS["model_finetune_bytes.weights.qlora"]


def test_put_reads_the_formula_of_the_function_it_credits():
    """estimate's one `put` looks the formula up by the credited function's name: a wrong credit raises."""
    est = calculator.Estimate(inputs={})
    assert calculator.put(est, "w", "weights", 16e9, "bytes", "hwlib.memory.weights_bytes") == 16e9
    assert est["w"].formula == memory.FORMULAS["weights_bytes"] and est["w"].function == "hwlib.memory.weights_bytes"
    calculator.put(est, "f", "frozen", 1.0, "bytes", "hwlib.finetune.model_finetune_bytes", variant="weights.qlora")
    assert est["f"].formula == finetune.FORMULAS["model_finetune_bytes.weights.qlora"]
    # the old credit of the QLoRA weights row: finetune_bytes has no such formula
    with pytest.raises(ValueError, match="hwlib.finetune.FORMULAS has no entry 'finetune_bytes.weights.qlora'"):
        calculator.put(est, "x", "frozen", 1.0, "bytes", "hwlib.finetune.finetune_bytes", variant="weights.qlora")
    with pytest.raises(ValueError, match="no entry 'no_such_function'"):
        calculator.put(est, "x", "x", 1.0, "", "hwlib.flops.no_such_function")
    with pytest.raises(ValueError, match="not one of hwlib.flops.forward_flops's"):  # a text it does not own
        calculator.put(est, "x", "x", 1.0, "", "hwlib.flops.forward_flops", formula=flops.FORMULAS["training_flops"])
    assert "x" not in est


def test_activation_count_says_it_is_the_fused_kernel_count():
    est = calculator.estimate(model="Llama 3 8B", tokens=1e9)
    assert "fused-kernel count as Megatron-LM keeps them" in est["activation_bytes"].label
    assert "unfused Hugging Face run keeps more" in est["activation_bytes"].label


def test_unfused_activations_add_the_fp32_norm_inputs_and_say_so():
    fused = calculator.estimate(model="Llama 3 8B", train_seq_len=4096)
    eager = calculator.estimate(model="Llama 3 8B", train_seq_len=4096, activations="unfused")
    m = models.get("Llama 3 8B")
    extra = 8 * 4096 * 1 * m.d_model * m.n_layers  # two norms per layer, 4 B more per element each
    assert eager.activation_bytes == fused.activation_bytes  # the fused row stays, the unfused one is added
    assert eager.activation_bytes_unfused == fused.activation_bytes + extra
    assert 1.15 < eager.activation_bytes_unfused / fused.activation_bytes < 1.2  # 52.0 / 44.0 per s·b·h·L
    assert eager.training_bytes_per_gpu - fused.training_bytes_per_gpu == extra
    assert "Hugging Face" in eager["activation_bytes_unfused"].label
    assert eager["activation_bytes_unfused"].formula == memory.FORMULAS["unfused_activation_bytes"]
    full = calculator.estimate(model="Llama 3 8B", activations="unfused", recompute="full")
    assert full.activation_bytes_unfused == full.activation_bytes  # only the layer inputs are kept
    with pytest.raises(ValueError, match="activations"):
        calculator.estimate(model="Llama 3 8B", activations="eager")


def test_fp32_gradients_make_the_state_18_bytes_per_parameter_under_every_zero_stage():
    n, g = models.get("Llama 2 7B").n_params(), 8
    for stage, expected in ((0, 18 * n), (1, 6 * n + 12 * n / g), (2, 2 * n + 16 * n / g), (3, 18 * n / g)):
        est = calculator.estimate("Llama 2 7B", n_gpus=g, zero_stage=stage, fp32_grads=True)
        assert est.training_state_bytes == 18 * n == memory.training_state_bytes(n, fp32_grads=True)
        assert est.training_state_per_gpu == pytest.approx(expected, rel=1e-12)
        assert est["training_state_bytes"].formula == memory.FORMULAS["training_state_bytes.fp32_grads"]
        plain = calculator.estimate("Llama 2 7B", n_gpus=g, zero_stage=stage)
        assert est.training_state_per_gpu - plain.training_state_per_gpu == pytest.approx(
            2 * n / (g if stage >= 2 else 1)
        )
    assert calculator.estimate("Llama 2 7B", fp32_grads=True)["training_state_per_gpu"].formula == "18·N"
    with pytest.raises(ValueError, match="fp32_grads"):
        calculator.estimate("Llama 2 7B", finetune="lora", fp32_grads=True)
