"""One result model for every calculator: each command's --json is the one
document of `hwlib.calculator.SCHEMA`; every formula text shown is the FORMULAS entry beside the
function that computed the value (no copy in calculator.py or the cli modules); shared flags have
one name, one type and one meaning across commands."""

import argparse
import ast
import importlib
import itertools
import json
from pathlib import Path

import pytest

from hwlib import calculator, cli, memory, models, specs
from hwlib.cli import calc as cli_calc

HWLIB = Path(calculator.__file__).resolve().parent
NOT_CALCULATORS = {"bench", "grade", "grade-package"}  # measurement and grading commands, with their own formats

# One invocation per calculator command (and per variant with different quantities).
COMMANDS = [
    ["train", "--params", "350M", "--tokens", "7B", "--gpu", "h100", "--price", "3"],
    ["train", "--model", "gpt2", "--tokens", "10B", "--gpu", "t4"],
    ["memory", "--model", "llama-3-8b", "--gpu", "h100"],
    ["memory", "--params", "7B"],
    ["decode", "--model", "llama-3-70b", "--gpu", "h100", "--batch", "4"],
    ["decode", "--params", "1.3B", "--gpu", "t4", "--precision", "fp16"],
    ["estimate", "--model", "llama-3-8b", "--tokens", "1T", "--gpus", "8", "--zero", "3", "--price", "2"],
    ["estimate", "--params", "350M", "--tokens", "7B"],
    ["estimate", "--model", "llama-3-70b"],
    ["diagnose", "--flops", "2.7e8", "--bytes", "1.3e8", "--gpu", "h100", "--measured-s", "5e-5"],
    ["diagnose", "--flops", "1e12", "--bytes", "1e9", "--gpu", "t4", "--kind", "gemm"],
    ["roofline", "--gpu", "h100", "--matmul", "16", "4096", "4096"],
    ["roofline", "--gpu", "h100", "--intensity", "100"],
    ["specs", "h100"],
    ["specs"],
    ["moe", "--model", "deepseek-v3", "--ep", "64", "--link", "50e9"],
    ["finetune", "--model", "llama-2-7b", "--method", "qlora", "--tokens", "10M"],
    ["finetune", "--method", "full"],
    ["energy", "--model", "llama-3-8b", "--batch", "16"],
    ["plan-layout", "--model", "llama-3-8b", "--gpus", "16", "--seq", "2k", "--batch-seqs", "64", "--cp", "1"],
    ["speculative", "--batch", "1"],
    ["rent", "--task", "serve-8b"],
    ["rent", "--task", "train-gpt2"],
    ["serve", "--model", "llama-3-8b", "--gpu", "h100", "--rate", "2", "--requests", "200"],
]


def _json(capsys, argv):
    code = cli.main([*argv, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, (argv, err)
    return json.loads(out)


@pytest.fixture(scope="module")
def documents():
    """Each command's document, run once for the whole module."""
    docs = []
    for argv in COMMANDS:
        import io
        from contextlib import redirect_stdout

        buf = io.StringIO()
        with redirect_stdout(buf):
            assert cli.main([*argv, "--json"]) == 0, argv
        docs.append((argv, json.loads(buf.getvalue())))
    return docs


def _subparsers():
    parser = cli.build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {name: p for name, p in action.choices.items() if name not in NOT_CALCULATORS}


def test_every_calculator_command_is_exercised():
    assert {argv[0] for argv in COMMANDS} == set(_subparsers())


def test_every_document_has_the_one_schema(documents):
    for argv, doc in documents:
        calculator.validate(doc)  # raises naming what is wrong
        assert doc["command"] == argv[0]
        assert doc["quantities"], argv
        assert set(doc) == set(calculator.SCHEMA)


def test_validate_rejects_other_shapes():
    good = calculator.estimate(n_params=1e9).document("estimate")
    calculator.validate(json.loads(json.dumps(good)))
    with pytest.raises(ValueError, match="exactly the keys"):
        calculator.validate({"command": "train", "inputs": {}, "outputs": {}, "formulas": {}})
    bad = json.loads(json.dumps(good))
    bad["quantities"][0].pop("formula")
    with pytest.raises(ValueError, match="fields"):
        calculator.validate(bad)
    bad = json.loads(json.dumps(good))
    bad["quantities"][0]["value"] = [1, 2]
    with pytest.raises(ValueError, match="value"):
        calculator.validate(bad)


def _dynamic_formulas() -> dict:
    """Formula texts that depend on arguments, by the function whose value they label."""
    acts = {
        memory.activation_formula(r, d, a, gated_mlp=g, ffn_hidden=f)
        for r, d, a, g, f in itertools.product(
            memory.RECOMPUTE, (True, False), memory.ATTENTION, (True, False), (None, 1)
        )
    }
    return {
        "hwlib.memory.zero_bytes_per_device": {memory.zero_formula(s) for s in range(4)},
        "hwlib.memory.activation_bytes_for": acts,
    }


def _owner(function: str):
    """'hwlib.flops.training_flops' -> (module, 'training_flops'); methods keep 'Class.method'."""
    parts = function.split(".")
    for i in range(len(parts) - 1, 1, -1):
        try:
            return importlib.import_module(".".join(parts[:i])), ".".join(parts[i:])
        except ModuleNotFoundError:
            continue
    raise AssertionError(f"{function!r} names no hwlib module")


def test_every_formula_comes_from_the_formulas_beside_its_function(documents):
    dynamic = _dynamic_formulas()
    seen = 0
    for argv, doc in documents:
        for q in doc["quantities"]:
            if not q["formula"]:  # an input or a number read from the sheet: no formula to show
                assert q["function"].startswith("argument ") or q["function"] == "hwlib.specs.get", (argv, q)
                continue
            module, name = _owner(q["function"])
            table = getattr(module, "FORMULAS", None)
            assert table is not None, f"{module.__name__} has no FORMULAS ({argv}, {q['key']})"
            # the function's own entry, an entry for one part of what it returns, or its *_formula text
            allowed = {v for k, v in table.items() if k == name or k.startswith(name + ".")}
            allowed |= dynamic.get(q["function"], set())
            assert q["formula"] in allowed, (argv, q["key"], q["formula"], q["function"])
            seen += 1
    assert seen > 100


def test_the_formula_homes_name_real_functions():
    for mod in ("flops", "roofline", "memory", "models", "specs", "diagnose", "moe", "finetune", "energy", "attention"):
        module = importlib.import_module(f"hwlib.{mod}")
        for key in module.FORMULAS:
            head, *rest = key.split(".")
            obj = getattr(module, head, None)
            if isinstance(obj, type):  # "Class.method"
                obj = getattr(obj, rest[0], None)
            # a function, or "function.part" for one entry of the dict it returns
            assert callable(obj), f"hwlib.{mod}.FORMULAS[{key!r}] names no function of hwlib.{mod}"


def _strings(path: Path):
    """Every string constant and f-string piece in a module's code (docstrings excluded)."""
    tree = ast.parse(path.read_text())
    docs = {
        id(n.body[0].value)
        for n in ast.walk(tree)
        if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef))
        and n.body
        and isinstance(n.body[0], ast.Expr)
        and isinstance(n.body[0].value, ast.Constant)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            yield node.lineno, node.value


def _all_formulas() -> set:
    texts = set()
    for mod in ("flops", "roofline", "memory", "models", "specs", "diagnose", "moe", "finetune", "energy", "attention"):
        texts |= set(importlib.import_module(f"hwlib.{mod}").FORMULAS.values())
    return texts | set().union(*_dynamic_formulas().values())


@pytest.mark.parametrize("name", ["calculator.py", "cli/__init__.py", "cli/calc.py", "cli/plan.py", "cli/models.py"])
def test_no_formula_text_is_typed_in_the_calculator_or_the_command_line(name):
    formulas = {f for f in _all_formulas() if len(f) > 3}
    for line, text in _strings(HWLIB / name):
        assert text not in formulas, f"{name}:{line} types the formula {text!r}; read it from FORMULAS"
    # the formula argument of every quantity built there is never a literal
    tree = ast.parse((HWLIB / name).read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) in (
            "put",
            "Quantity",
        ):
            if getattr(node.func, "id", getattr(node.func, "attr", "")) == "put":  # put reads FORMULAS itself
                credit = node.args[5] if len(node.args) > 5 else None
                assert isinstance(credit, ast.Constant) and credit.value.startswith(("hwlib.", "argument ")), (
                    f"{name}:{node.lineno}: put credits a function by its name"
                )
                continue
            formula = node.args[4] if len(node.args) > 4 else None
            ok = (
                formula is None
                or not isinstance(formula, (ast.JoinedStr, ast.BinOp))
                and not (isinstance(formula, ast.Constant) and formula.value)
            )
            assert ok, f"{name}:{node.lineno}: a formula typed in place; read it from FORMULAS"
        if isinstance(node, ast.keyword) and node.arg == "formula":
            assert not isinstance(node.value, (ast.Constant, ast.JoinedStr)), f"{name}:{node.value.lineno}"


def test_the_estimate_quantities_use_the_same_homes():
    est = calculator.estimate(model="Llama 3 8B", tokens=1e12, n_gpus=8, zero_stage=2, price_per_hour=2)
    from hwlib import flops, roofline

    assert est["training_flops"].formula == flops.FORMULAS["training_flops"]
    assert est["decode_step_s"].formula == roofline.FORMULAS["time_s"]
    assert est["n_params"].formula == models.FORMULAS["ModelShape.n_params"]
    assert est["peak_flops"].formula == specs.FORMULAS["Accelerator.peak_flops"]
    assert est["training_state_per_gpu"].formula == memory.zero_formula(2)
    assert est["gpu_hours"].value == flops.device_hours(est.training_time_s, 8)
    assert est["usd_per_million_tokens"].value == pytest.approx(
        flops.cost_usd(1e6 / est.decode_tokens_per_s, 2, est.gpus_to_serve)
    )


# ---- one flag vocabulary ------------------------------------------------------------------------


def test_shared_flags_have_one_destination_type_and_help_everywhere():
    for command, parser in _subparsers().items():
        for action in parser._actions:
            for opt in action.option_strings:
                spec = cli_calc.FLAGS.get(opt)
                if spec is None:
                    hidden = [name for name, s in cli_calc.FLAGS.items() if opt in s.get("aliases", ())]
                    if hidden:  # an old spelling: hidden, and the same flag as the new one
                        assert action.help == argparse.SUPPRESS, (command, opt)
                        assert action.dest == hidden[0].lstrip("-").replace("-", "_"), (command, opt)
                    continue
                assert action.dest == opt.lstrip("-").replace("-", "_"), (command, opt, action.dest)
                assert action.type is spec.get("type"), (command, opt, action.type)
    # no command invents its own spelling of a shared idea
    renamed = {"--devices", "--n-gpus", "--num-gpus", "--seq-len", "--context", "--batch-size", "--usd"}
    for command, parser in _subparsers().items():
        visible = {o for a in parser._actions if a.help != argparse.SUPPRESS for o in a.option_strings}
        assert not visible & renamed, (command, visible & renamed)


@pytest.mark.parametrize(
    "flag_args, key, value, commands",
    [
        (
            ["--gpu", "h200"],
            "gpu",
            "H200",
            ["train", "decode", "estimate", "roofline", "memory", "moe", "energy", "speculative", "diagnose"],
        ),
        (["--gpus", "8"], "n_gpus", 8, ["train", "estimate"]),
        (["--devices", "8"], "n_gpus", 8, ["train", "estimate"]),
        (["--mfu", "35%"], "mfu", 0.35, ["train", "estimate", "moe"]),
        (["--price", "2.5"], "price_per_hour", 2.5, ["train", "estimate"]),
        (
            ["--seq", "2k"],
            "seq_len",
            2048,
            ["memory", "decode", "estimate", "moe", "finetune", "energy", "speculative"],
        ),
        (["--batch", "4"], "batch", 4, ["memory", "decode", "estimate", "finetune", "energy", "speculative"]),
        (["--tokens", "1B"], "tokens", 1e9, ["train", "estimate", "finetune"]),
    ],
)
def test_a_flag_means_the_same_input_in_every_command(capsys, flag_args, key, value, commands):
    base = {
        "train": ["--params", "1B", "--tokens", "1B", "--gpu", "h100"],
        "decode": ["--model", "llama-3-8b", "--gpu", "h100"],
        "estimate": ["--model", "llama-3-8b"],
        "roofline": ["--gpu", "h100", "--intensity", "10"],
        "memory": ["--model", "llama-3-8b"],
        "moe": [],
        "energy": [],
        "speculative": [],
        "finetune": [],
        "diagnose": ["--flops", "1e9", "--bytes", "1e8", "--gpu", "h100"],
    }
    for command in commands:
        args = base[command]
        if flag_args[0] in args:  # replace the base value of the same flag
            i = args.index(flag_args[0])
            args = args[:i] + args[i + 2 :]
        doc = _json(capsys, [command, *args, *flag_args])
        assert doc["inputs"][key] == value, (command, flag_args, doc["inputs"])
