"""hwlib.bench.recorded: runs survive a save/load round trip, are labelled as recorded, bad files are
refused with a clear message; published numbers carry a source and are marked as not ours."""

import json

import pytest

from hwlib import backend, plot
from hwlib.bench import recorded


@pytest.fixture
def run(monkeypatch):
    monkeypatch.setenv(backend.ENV_VAR, "numpy")
    backend._cache.clear()
    from hwlib import bench

    recs = {"fusion": bench.fusion(sizes=[1 << 12], samples=1), "divergence": bench.divergence()}
    yield recorded.make_run(recs, quick=True)
    backend._cache.clear()


def test_round_trip(tmp_path, run):
    path = recorded.save(run, tmp_path / "sub" / "cpu_run.json")
    back = recorded.load(path)
    assert back["schema"] == recorded.SCHEMA and back["schema_version"] == 1
    assert back["device"] == run["device"] and back["date"] == run["date"] and back["versions"]["numpy"]
    for name, rec in run["records"].items():
        got = back["records"][name]
        assert got["source"] == "recorded"  # never mistaken for a live measurement
        assert {k: v for k, v in got.items() if k != "source"} == {k: v for k, v in rec.items() if k != "source"}
    assert recorded.label(back["records"]["fusion"]).startswith(f"recorded on {run['device']['name']}, 20")
    assert recorded.label(run).startswith("recorded on")  # a run is recorded even before it is saved


@pytest.mark.parametrize(
    "change, match",
    [
        (lambda r: r.pop("records"), "missing keys"),
        (lambda r: r.update(schema="something else"), "schema must be"),
        (lambda r: r.update(schema_version=99), "schema_version"),
        (lambda r: r.update(device={"kind": "gpu"}), "device"),
    ],
)
def test_load_refuses_bad_runs(tmp_path, run, change, match):
    change(run)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(run))
    with pytest.raises(ValueError, match=match):
        recorded.load(path)


def test_load_refuses_non_json(tmp_path):
    path = tmp_path / "x.json"
    path.write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        recorded.load(path)


def test_make_run_needs_records():
    with pytest.raises(ValueError, match="records"):
        recorded.make_run({})


def test_available_lists_json_only(tmp_path, monkeypatch, run):
    monkeypatch.setattr(recorded, "RECORDED_DIR", tmp_path)
    (tmp_path / "README.md").write_text("format")
    recorded.save(run, tmp_path / "b_run.json")
    recorded.save(run, tmp_path / "a_run.json")
    assert [p.name for p in recorded.available()] == ["a_run.json", "b_run.json"]
    assert len(recorded.records(recorded.load_available(), "fusion")) == 2
    assert len(recorded.load_all("fusion")) == 2 and recorded.load_all("matmul") == []
    with pytest.raises(KeyError, match="unknown experiment"):
        recorded.load_all("empirical_roofline")


def shipping_problems(runs) -> list:
    """Why each loaded run may not ship as recorded GPU data (CPU runs never do); [] when all may."""
    problems = []
    for run in runs:
        if run["backend"] != "cupy" or run["device"].get("kind") != "gpu":
            problems.append(f"{run['path']}: backend {run['backend']!r} on a {run['device'].get('kind')!r} device")
        problems += [
            f"{run['path']}: record {name} is not marked recorded"
            for name, r in run["records"].items()
            if r.get("source") != "recorded"
        ]
    return problems


def test_shipped_runs_load():
    """Every shipped run loads, and is a GPU run (CPU runs are never shipped as 'recorded GPU' data).
    There may be none yet: the next test gives this check synthetic files, so it is known to bite."""
    assert recorded.RECORDED_DIR.joinpath("README.md").is_file()
    assert shipping_problems(recorded.load_available()) == []


def test_shipping_check_and_loader_on_synthetic_run_files(tmp_path, monkeypatch, run):
    monkeypatch.setattr(recorded, "RECORDED_DIR", tmp_path)
    gpu = json.loads(json.dumps(run))
    gpu["backend"] = "cupy"
    gpu["device"] = dict(gpu["device"], kind="gpu", name="Tesla T4")
    for rec in gpu["records"].values():
        rec.pop("device", None)  # the loader gives each record its run's device and date
        rec.pop("date", None)  # (a record made a second after the run began carries its own)
    recorded.save(gpu, tmp_path / "t4_2026-01-01.json")
    assert shipping_problems(recorded.load_available()) == []
    loaded = recorded.load_available()[0]
    assert all(r["device"]["name"] == "Tesla T4" and r["date"] == gpu["date"] for r in loaded["records"].values())
    recorded.save(run, tmp_path / "cpu_2026-01-01.json")  # a CPU run is never shipped
    (problem,) = shipping_problems(recorded.load_available())
    assert "cpu_2026-01-01.json" in problem and "'numpy'" in problem
    (tmp_path / "zz_broken.json").write_text(json.dumps(dict(gpu, schema_version=0)))
    with pytest.raises(ValueError, match=r"zz_broken\.json: schema_version must be 1\.\.1"):
        recorded.load_available()


def test_published_measurements_have_sources():
    ms = recorded.published()
    assert len(ms) >= 20
    for m in ms:
        assert m["published"] and m["source"] and m["value"] > 0
        if m["fraction_of_spec"] is not None:  # measured below (or at) the vendor's number
            assert 0.3 < m["fraction_of_spec"] <= 1.05, m
    t4 = [m for m in ms if m["device"].startswith("T4") and m.get("precision") == "fp16"]
    assert {round(m["value"] / 1e12) for m in t4} == {42, 24}  # burst vs power-capped sustained
    assert plot.source_label("published", "T4") == "published (not ours): T4"
