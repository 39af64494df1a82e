"""Per-learner numbers (checks.yaml `params:`, format: exercises/FORMAT.md "Parameters"): the
solution computes from the parameters, so it scores full marks under every learner's variant
through the real grader, and the blank notebook 0; no parameter's value is typed by hand outside
the block; every variant's expected values compute; the generator's placeholders and its record of
the sources the stored outputs came from."""

import importlib.util
import itertools
import re
import shutil
from pathlib import Path

import nbformat
import pytest
import yaml

from hwlib import units
from hwlib.grading import grader, selfcheck, spec

ROOT = Path(__file__).resolve().parents[2]
ALL = sorted(p.parent.name for p in (ROOT / "exercises").glob("*/checks.yaml"))
WITH_PARAMS = [e for e in ALL if spec.load_exercise(e).params]


def _make_exercises():
    s = importlib.util.spec_from_file_location("make_exercises", ROOT / "tools" / "make_exercises.py")
    module = importlib.util.module_from_spec(s)
    s.loader.exec_module(module)
    return module


def _learners(ex, n=3) -> list[str]:
    """`n` learner ids with pairwise different variants, the first with other numbers than the book's."""
    chosen, seen = [], [tuple(spec.default_params(ex).items())]
    for i in range(500):
        got = tuple(spec.params(ex, f"s{i:04d}").items())
        if got not in seen:
            chosen.append(f"s{i:04d}")
            seen.append(got)
        if len(chosen) == n:
            return chosen
    raise AssertionError(f"{ex.id}: fewer than {n + 1} distinct variants")


def test_the_reference_exercise_has_parameters():
    assert "ex01_memory_budget" in WITH_PARAMS


@pytest.mark.slow  # grades four notebooks per exercise in fresh kernels
@pytest.mark.parametrize("ex_id", WITH_PARAMS)
def test_solution_scores_full_marks_under_every_learners_numbers(ex_id, tmp_path):
    """Three learners with three variants: two leave LEARNER_ID unset (the grader's HWLIB_LEARNER_ID
    gives their numbers), one sets it in the setup cell as a learner does; all score 100 %."""
    ex = spec.load_exercise(ex_id)
    ex = spec.replace(ex, grading={**ex.grading, "variants": True})
    assert ex.per_learner
    folder = ROOT / "exercises" / ex_id
    ids = _learners(ex)
    subs = tmp_path / "subs"
    subs.mkdir()
    for learner in ids[:2]:
        shutil.copy(folder / "solution.ipynb", subs / f"{learner}.ipynb")
    nb = nbformat.read(folder / "solution.ipynb", as_version=4)
    setup = [c for c in nb.cells if "LEARNER_ID = None" in c.source]
    assert len(setup) == 1, "one setup cell sets LEARNER_ID = None"
    setup[0].source = setup[0].source.replace("LEARNER_ID = None", f"LEARNER_ID = {ids[2]!r}")
    nbformat.write(nb, subs / f"{ids[2]}.ipynb")
    shutil.copy(folder / f"{ex_id}.ipynb", subs / "blank.ipynb")
    files = sorted(subs.glob("*.ipynb"))
    rows = {
        res["extra_data"]["file"]: res
        for _, _, res in grader.grade_batch(
            ex, files, tmp_path / "out", grader.configure(ex), jobs=2, progress=lambda *_: None
        )
    }
    manual = sum(c.points for c in ex.checks if c.kind == "manual")
    for learner in ids:
        res = rows[f"{learner}.ipynb"]
        assert res["extra_data"]["variant"] == spec.params(ex, learner)
        wrong = [t for t in res["tests"] if t["status"] != "passed" and t["score"] < t["max_score"]]
        assert res["score"] == ex.max_score - manual, (learner, wrong[:3], res["output"][:500])
    assert rows["blank.ipynb"]["score"] == 0


@pytest.mark.parametrize("ex_id", WITH_PARAMS)
def test_every_variant_has_sensible_expected_values(ex_id):
    """Every combination of values computes every check (mistakes included), and each parameter a
    learner may get changes at least one expected value (else its variants mean nothing)."""
    ex = spec.load_exercise(ex_id)
    names = sorted(ex.variants)
    base = spec.default_params(ex)
    combos = list(itertools.product(*(ex.variants[n] for n in names)))
    assert 2 <= len(combos) <= 500
    plain = [c for c in ex.checks if not c.inputs and c.kind not in ("manual", "receipt")]
    table = {}
    for combo in combos:
        p = {**base, **dict(zip(names, combo))}
        table[combo] = [repr(spec.expected_value(c, params=p)) for c in plain]
        for c in plain:
            spec.mistake_values(c, {}, p)
    for i, name in enumerate(names):
        varied = {tuple(v for j, v in enumerate(k) if j != i) for k in combos}
        assert any(
            len({tuple(table[k]) for k in combos if tuple(v for j, v in enumerate(k) if j != i) == rest}) > 1
            for rest in varied
        ), f"{ex_id}: parameter {name} changes no expected value"


def _forms(value) -> set[str]:
    """How a parameter's value might be typed by hand: 4096, 4 096, 4,096, 1.3e9, 1.3e+09, 1.3 billion."""
    if isinstance(value, str):
        return {value} if len(value) > 1 else set()
    x = float(value)
    if x.is_integer() and abs(x) < 10:
        return set()  # 2, 4, 8: too common (bytes per value, factors) to tell apart from a typed parameter
    forms = {f"{x:g}", units.format_number(x, 2), units.format_number(x, 3)}
    if x.is_integer():
        forms |= {str(int(x)), f"{int(x):,}", units.format_count(x), units.format_count(x).replace("\u202f", " ")}
    m, e = f"{x:e}".split("e")
    m = m.rstrip("0").rstrip(".")
    forms |= {f"{m}e{int(e)}", f"{m}e+{int(e):02d}", f"{m}e{int(e):+d}"}
    return {f for f in forms if len(f) > 1}


def _outside_block(folder: Path) -> str:
    """source.md and checks.yaml without the `params:` block."""
    text = (folder / "checks.yaml").read_text(encoding="utf-8")
    text = re.sub(r"^params:\n(?:[ #].*\n|\n)*", "", text, flags=re.M)
    return (folder / "source.md").read_text(encoding="utf-8") + "\n" + text


@pytest.mark.parametrize("ex_id", WITH_PARAMS)
def test_no_parameter_is_typed_by_hand_outside_its_block(ex_id):
    ex = spec.load_exercise(ex_id)
    text = _outside_block(ROOT / "exercises" / ex_id)
    assert "params:" not in text.split("\nexercise:")[-1].split("checks:")[0], "one params: block"
    found = []
    for name, p in ex.params.items():
        for value in p.get("values", [p["default"]]):
            for form in _forms(value):
                for m in re.finditer(rf"(?<![\w.]){re.escape(form)}(?![\w]|\.\d)", text):
                    line = text[: m.start()].count("\n") + 1
                    found.append(
                        f"{name}={value!r} typed as {form!r} (line {line}: {text.splitlines()[line - 1][:80]!r})"
                    )
    assert not found, "use {{ name }} in source.md and params['name'] in checks.yaml:\n" + "\n".join(found[:10])


@pytest.mark.parametrize("ex_id", WITH_PARAMS)
def test_hints_name_no_value_and_the_setup_cell_asks_for_the_learners_numbers(ex_id):
    ex = spec.load_exercise(ex_id)
    values = {f for p in ex.params.values() for v in p.get("values", [p["default"]]) for f in _forms(v)}
    for c in ex.checks:
        assert not any(re.search(rf"(?<![\w.]){re.escape(f)}(?!\w)", c.hint) for f in values), (c.name, c.hint)
    source = (ROOT / "exercises" / ex_id / "source.md").read_text(encoding="utf-8")
    assert f'variant("{ex_id}", LEARNER_ID)' in source and "LEARNER_ID = None" in source


def test_variant_prints_the_defaults_or_the_learners_numbers(capsys, monkeypatch):
    ex = spec.load_exercise("ex01_memory_budget")
    assert selfcheck.variant("ex01_memory_budget") == spec.default_params(ex)
    out = capsys.readouterr().out
    assert "default numbers" in out and "n_params = 1.3e9 parameters" in out
    learner = _learners(ex, 1)[0]
    assert selfcheck.variant("ex01_memory_budget", learner) == spec.params(ex, learner) != spec.default_params(ex)
    assert f"learner {learner}" in capsys.readouterr().out
    monkeypatch.setenv("HWLIB_GRADING", "1")  # while graded, the grader's learner id gives the numbers
    monkeypatch.setenv("HWLIB_LEARNER_ID", learner)
    assert selfcheck.variant("ex01_memory_budget", show=False) == spec.params(ex, learner)


def test_params_block_is_validated():
    base = {"exercise": "ex99_p", "checks": [{"name": "x", "kind": "bytes", "expr": "2 * params['n']"}]}
    ok = spec.parse_checks({**base, "params": {"n": {"default": "1e9", "values": ["1e9", "2e9"]}}}, "t")
    assert ok.variants == {"n": [1e9, 2e9]} and spec.default_params(ok) == {"n": 1e9} and not ok.per_learner
    assert spec.expected_value(ok.checks[0]) == 2e9  # the default, without params given
    on = spec.parse_checks(
        {**base, "params": {"n": {"default": 1, "values": [1, 2]}}, "grading": {"variants": True}}, "t"
    )
    assert on.per_learner
    for params, why in [
        ({"n": {"default": 1, "values": [2, 3]}}, "must include the default"),
        ({"n": {"values": [1, 2]}}, "give default"),
        ({"n": {"default": 1, "values": [1]}}, "at least two"),
        ({"n": {"default": 1, "typo": 2}}, "give default"),
        ({"m": {"default": 1}}, r"reads params \['n'\], which the exercise does not declare"),
    ]:
        with pytest.raises(ValueError, match=why):
            spec.parse_checks({**base, "params": params}, "t")
    with pytest.raises(ValueError, match="both params and variants"):
        spec.parse_checks({**base, "params": {"n": {"default": 1}}, "variants": {"n": [1, 2]}}, "t")


def test_placeholders_are_substituted_and_an_unknown_one_is_named():
    make = _make_exercises()
    text = "a {{ n_params / 1e9 }}-billion model, {{ 2 * n_params | bytes }}, {{ seq | count }}, {{ x | .2f }}"
    got = make.substitute(text, {"n_params": 1.3e9, "seq": 4096, "x": 0.5}, "t")
    assert got == "a 1.3-billion model, 2.60 GB, 4\u202f096, 0.50"
    assert make.substitute("{{ specs.get(gpu).name }}", {"gpu": "T4"}, "t") == "T4"
    with pytest.raises(ValueError, match=r"unknown placeholder \['n_parms'\]"):
        make.substitute("{{ n_parms }}", {"n_params": 1}, "cell 3")
    with pytest.raises(ValueError, match="unknown format 'GBx'"):
        make.substitute("{{ n | GBx }}", {"n": 1}, "t")


def test_check_finds_stored_outputs_older_than_their_sources(tmp_path, monkeypatch):
    """--check compares the hashes recorded in each notebook with its sources, without executing."""
    make = _make_exercises()
    folder = ROOT / "exercises" / "ex01_memory_budget"
    deps = make.dependencies(folder)
    assert {folder / "source.md", folder / "checks.yaml", ROOT / "hwlib" / "memory.py"} <= set(deps)
    assert ROOT / "hwlib" / "grading" / "selfcheck.py" in deps and ROOT / "hwlib" / "data" / "specs.yaml" in deps
    real = make.sources(folder)
    assert make.stale(folder) == []
    monkeypatch.setattr(make, "sources", lambda f: {**real, "hwlib/memory.py": "0" * 16})
    problems = make.stale(folder)
    assert len(problems) == 2 and all("stored outputs are older than hwlib/memory.py" in p for p in problems)


def test_hidden_example_sets_use_the_parameters():
    """A hidden check that replaces a public one reads the same params, so it grades every variant."""
    for path in sorted((ROOT / "tests" / "fixtures" / "hidden_checks").glob("ex*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        if data["exercise"] not in WITH_PARAMS:
            continue
        merged = spec.load_exercise(data["exercise"], path.parent)
        for combo in itertools.islice(itertools.product(*merged.variants.values()), 6):
            grader.expected_values(merged, {**spec.default_params(merged), **dict(zip(merged.variants, combo))})
