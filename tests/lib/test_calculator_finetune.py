"""LoRA and QLoRA in the LLM calculator (`calculator.estimate(finetune=...)`): the same memory and
FLOPs as hwlib.finetune, the chapter 8 counts, and clear refusals."""

import pytest

from hwlib import calculator, finetune, memory, models


@pytest.mark.parametrize("method", ["lora", "qlora"])
def test_finetune_memory_and_flops_are_hwlib_finetunes(method):
    e = calculator.estimate(
        "Llama 2 7B",
        tokens=1e8,
        gpu="A100 80GB SXM",
        finetune=method,
        lora_rank=64,
        recompute="full",
        train_seq_len=2048,
    )
    parts = finetune.model_finetune_bytes("Llama 2 7B", method, 64, 2048, 1, recompute="full")
    assert e["trainable_params"].value == finetune.lora_params("Llama 2 7B", 64)
    assert e["finetune_weights_bytes"].value == parts["weights"]
    assert e["adapter_bytes"].value == parts["adapters"]
    assert e["activation_bytes"].value == parts["activations"]
    assert e["training_bytes_per_gpu"].value == pytest.approx(parts["total"] + e["logits_bytes"].value)  # + fp32 logits
    n = models.get("Llama 2 7B").n_params()
    assert e["training_flops"].value == 4 * n * 1e8  # frozen weights: no weight gradients
    assert "training_state_bytes" not in e.quantities and "training_state_per_gpu" not in e.quantities


def test_qlora_fits_a_7b_fine_tune_on_a_t4_and_full_training_does_not():
    q = calculator.estimate("Llama 2 7B", gpu="T4", finetune="qlora", recompute="full", train_seq_len=2048)
    full = calculator.estimate("Llama 2 7B", gpu="T4", recompute="full", train_seq_len=2048)
    assert q.fits_training and not full.fits_training
    assert q["training_bytes_per_gpu"].value < 10e9 < full["training_bytes_per_gpu"].value


def test_without_recompute_the_activations_are_the_memory_modules():
    e = calculator.estimate("Llama 3 8B", finetune="lora", recompute="selective", train_seq_len=4096)
    assert e["activation_bytes"].value == memory.activation_bytes_for("Llama 3 8B", 4096, 1, recompute="selective")


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"model": None, "n_params": 7e9, "finetune": "lora"}, "needs a model shape"),
        ({"model": "Llama 3 8B", "finetune": "lora", "zero_stage": 2}, "give zero_stage=0"),
        ({"model": "Llama 3 8B", "finetune": "dora"}, "finetune"),
        ({"model": "Llama 3 8B", "finetune": "qlora", "lora_rank": 0}, "lora_rank"),
    ],
)
def test_refusals_name_what_was_wrong(kwargs, message):
    with pytest.raises(ValueError, match=message):
        calculator.estimate(**kwargs)


def test_cli_estimate_takes_the_same_finetune_choice(capsys):
    import json

    from hwlib import cli

    argv = [
        "estimate",
        "--model",
        "llama-2-7b",
        "--gpu",
        "t4",
        "--finetune",
        "qlora",
        "--recompute",
        "full",
        "--train-seq",
        "2k",
        "--tokens",
        "1e8",
        "--json",
    ]
    assert cli.main(argv) == 0
    got = {q["key"]: q["value"] for q in json.loads(capsys.readouterr().out)["quantities"]}
    want = calculator.estimate(
        "Llama 2 7B", gpu="T4", finetune="qlora", recompute="full", train_seq_len=2048, tokens=1e8
    )
    assert got["training_bytes_per_gpu"] == want["training_bytes_per_gpu"].value and got["fits_training"] is True
    assert cli.main(["estimate", "--model", "llama-2-7b", "--finetune", "lora", "--zero", "3"]) == 2
    assert "give zero_stage=0" in capsys.readouterr().err
