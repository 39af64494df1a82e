"""hwlib.plot.diagrams: every diagram draws, carries alt text, and the numbers it prints come from the data
files and the simulators (not typed into the drawing code)."""

import math
from importlib import resources

import matplotlib
import numpy as np
import pytest
import yaml

from hwlib import collectives, interconnect, memory, networks, parallel, specs, systolic
from hwlib.plot import diagrams
from hwlib.plot.diagrams import pipeline, ring

HIER = yaml.safe_load(resources.files("hwlib").joinpath("data", "hierarchy.yaml").read_text())


def v(rec):
    return rec["value"]


@pytest.mark.parametrize("name", diagrams.__all__[2:])
def test_every_diagram_draws_with_alt_text(name, tmp_path):
    fig, ax = getattr(diagrams, name)()  # the hwlib.plot convention: (fig, ax), ax a tuple for several panels
    assert isinstance(fig, matplotlib.figure.Figure)
    assert ax == (fig.axes[0] if len(fig.axes) == 1 else tuple(fig.axes))
    fig.savefig(tmp_path / f"{name}.png", dpi=60)
    assert (tmp_path / f"{name}.png").stat().st_size > 5000
    alt = diagrams.alt_text(fig)
    assert len(alt) > 120 and "{" not in alt
    assert diagrams.labels(fig)
    fig.savefig(tmp_path / f"{name}.pdf")  # the PDF edition gets vector output too
    matplotlib.pyplot.close(fig)


def test_alt_text_refuses_other_figures():
    fig = matplotlib.pyplot.figure()
    with pytest.raises(ValueError, match="hwlib.plot.diagrams"):
        diagrams.alt_text(fig)


def test_hierarchy_capacities_and_bandwidths_equal_the_data():
    gpu = specs.get("H200")
    cc = HIER["compute_capabilities"][HIER["parts"]["H200"]]
    got = diagrams.labels(diagrams.memory_hierarchy("H200")[0])
    assert got["registers"][0] == v(cc["registers_per_sm"]) * 4 * gpu.compute_units
    assert got["L1 / shared memory"][0] == v(cc["l1_shared_bytes_per_sm"]) * gpu.compute_units
    assert got["L2 cache"][0] == gpu.l2_bytes
    assert got["HBM"] == (gpu.memory_bytes, gpu.bandwidth)
    host = HIER["host"]["H200 x8 node"]
    assert got["host DRAM"] == (v(host["memory_bytes"]) / v(host["gpus"]), interconnect.get("PCIe 5.0 x16").bandwidth)
    # shared memory: 128 B/clock/SM x SMs x the clock implied by the FP32 peak
    clock = gpu.peak_flops("fp32") / (2 * gpu.compute_units * v(cc["fp32_lanes_per_sm"]))
    assert got["L1 / shared memory"][1] == pytest.approx(128 * gpu.compute_units * clock)
    # L2: the published gpu-benches plateau lies between HBM and shared memory
    assert gpu.bandwidth < got["L2 cache"][1] < got["L1 / shared memory"][1]


def test_sm_counts_are_per_sm_data_over_partitions():
    got = diagrams.labels(diagrams.sm("H100 SXM")[0])
    cc = HIER["compute_capabilities"]["9.0"]
    parts = v(HIER["sm_partitions"]["9.0"]["sub_partitions_per_sm"])
    assert got["sub_partitions"] == parts == 4
    assert got["lanes_per_partition"] * parts == v(cc["fp32_lanes_per_sm"])
    assert got["register_bytes_per_partition"] * parts == 256 * 1024  # "256 KB register file per SM"
    assert got["max_shared_bytes"] == 228 * 1024  # "228 KB shared memory per SM"
    assert got["tensor_cores_per_partition"] == 1
    with pytest.raises(KeyError, match="sm_partitions"):
        diagrams.sm("T4")  # no sub-partition data for sm_75


def test_silicon_budget_counts_lanes_and_cache_from_data():
    got = diagrams.labels(diagrams.silicon_budget()[0])
    cpu = HIER["cpus"]["Xeon Platinum 8480+"]
    assert got["cpu_lanes"] == v(cpu["cores"]) * v(cpu["fp32_lanes_per_core"])
    h100 = specs.get("H100 SXM")
    assert got["gpu_lanes"] == h100.compute_units * 128 == 16896
    assert got["gpu_cache_per_lane"] == pytest.approx((h100.l2_bytes + h100.compute_units * 256 * 1024) / 16896)
    assert got["cpu_cache_per_lane"] > 10 * got["gpu_cache_per_lane"]


def test_hbm_stack_width_and_bandwidth_per_stack():
    got = diagrams.labels(diagrams.hbm_stack("H100 SXM")[0])
    assert got["stacks"] == 5 and got["bus_bits"] == 5120 and got["bits_per_stack"] == 1024
    assert got["bandwidth_per_stack"] == pytest.approx(specs.get("H100 SXM").bandwidth / 5)
    with pytest.raises(KeyError, match="HBM packaging"):
        diagrams.hbm_stack("T4")


def test_systolic_snapshot_matches_the_simulator():
    fig, _ = diagrams.systolic_dataflow(m=5, k=3, n=3, cycles=(1, 3, 5))
    got = diagrams.labels(fig)
    run = systolic.simulate(np.ones((5, 3)), np.ones((3, 3)), trace=True)
    assert got["compute_cycles"] == run.compute_cycles == systolic.compute_cycles(5, 3, 3)
    assert got["busy"] == {t: int((run.row_in_cell[t] >= 0).sum()) for t in (1, 3, 5)}
    with pytest.raises(ValueError, match="cycles must lie"):
        diagrams.systolic_dataflow(cycles=(99,))


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_ring_replay_ends_with_every_contribution_and_formula_bytes(n):
    trace, states, sends = ring.ring_states(n)
    assert len(states) == 2 * (n - 1) + 1
    assert (states[-1] == 2**n - 1).all()  # everyone holds everyone's sum
    after_rs = states[n - 1]
    assert all((after_rs[r] == 2**n - 1).sum() == 1 for r in range(n))  # each rank owns one finished chunk
    got = diagrams.labels(diagrams.ring_allreduce(n, 1e9)[0])
    assert got["bytes_per_link"] == pytest.approx(parallel.ring_allreduce_bytes_per_link(1e9, n))
    assert got["counted_bytes_per_link"] == pytest.approx(got["bytes_per_link"])
    matplotlib.pyplot.close("all")


def test_zero_labels_are_zero_bytes_per_device():
    got = diagrams.labels(diagrams.zero_stages(7.5e9, 64)[0])
    # Rajbhandari et al. 2020, Fig. 1: 7.5B parameters on 64 GPUs -> 120 / 31.4 / 16.6 / 1.9 GB
    for stage, paper in enumerate([120e9, 31.4e9, 16.6e9, 1.9e9]):
        assert got["bytes_per_device"][stage] == memory.zero_bytes_per_device(7.5e9, 64, stage)
        assert got["bytes_per_device"][stage] == pytest.approx(paper, rel=0.02)


@pytest.mark.parametrize("p,m,v", [(4, 8, 2), (4, 4, 2), (2, 6, 3), (8, 16, 2), (4, 12, 4)])
def test_simulated_bubble_equals_the_formula(p, m, v):
    for kind, vv in (("gpipe", 1), ("1f1b", 1), ("interleaved", v)):
        if kind == "interleaved" and m % p:
            continue
        ops = pipeline.simulate(kind, p, m, vv, 1.0, 2.0)
        assert pipeline.bubble_fraction(ops) == pytest.approx(parallel.pipeline_bubble_fraction(p, m, vv))
        assert all(o.end > o.start for o in ops) and len(ops) == 2 * m * p * vv


def test_pipeline_figure_bubble_and_activation_memory():
    got = diagrams.labels(diagrams.pipeline_schedules(4, 8, 2)[0])
    assert got["gpipe"]["bubble"] == pytest.approx(parallel.pipeline_bubble_fraction(4, 8))
    assert got["interleaved"]["bubble"] == pytest.approx(parallel.pipeline_bubble_fraction(4, 8, 2))
    assert got["gpipe"]["peak_activations"] == [8, 8, 8, 8]  # GPipe holds every micro-batch
    assert got["1f1b"]["peak_activations"] == [4, 3, 2, 1]  # 1F1B: stage s holds p - s
    # interleaving costs memory: stage 0 holds p (1 + (p-1)/(p v)) (Narayanan et al. 2021 §2.2)
    assert got["interleaved"]["peak_activations"][0] == pytest.approx(4 * (1 + 3 / 8))
    with pytest.raises(ValueError, match="multiple of n_stages"):
        pipeline.simulate("interleaved", 4, 6, 2)


def test_tensor_parallel_mlp_bytes():
    got = diagrams.labels(diagrams.tensor_parallel_mlp("Llama 3 8B", 4096, 4)[0])
    assert got["activation_bytes"] == 4096 * 4096 * 2
    assert got["bytes_sent_per_device"] == pytest.approx(2 * 3 / 4 * 4096 * 4096 * 2)
    # per layer, forward only: one of the two all-reduces tensor_parallel_comm_bytes counts
    per_layer_fwd = parallel.tensor_parallel_comm_bytes(4096, 1, 4096, 1, 4, training=False) / 2
    assert got["bytes_sent_per_device"] == pytest.approx(per_layer_fwd)


def test_network_diagram_numbers_from_networks_yaml():
    got = diagrams.labels(diagrams.nvswitch_vs_fattree()[0])
    assert got["nvlink"] == networks.system("DGX H100").nvlink == 450e9
    assert got["egress"] == 8 * got["nic"] == 400e9
    assert got["nvswitches"] == 4
    curves = diagrams.labels(diagrams.collective_costs(1e9)[0])
    first = next(iter(curves.values()))
    assert first["allreduce_s"][0] == pytest.approx(networks.allreduce_time_s(1e9, 8))
    assert math.isclose(first["alltoall_s"][0], networks.alltoall_time_s(1e9, 8))
    assert collectives.expected_bytes_per_link(1e9, 8) / 450e9 == pytest.approx(first["allreduce_s"][0])


def test_every_chapter_diagram_cell_has_alt_text_and_a_caption():
    """Each chapter cell that draws a hwlib.plot.diagrams figure declares alt text and a caption in its
    MyST-NB metadata (the chapters' figure convention), and every diagram is used somewhere."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "chapters"
    used = set()
    for md in sorted(root.glob("*.md")):
        for cell in re.findall(r"```\{code-cell\} ipython3\n(.*?)\n```", md.read_text(), flags=re.S):
            calls = re.findall(r"diagrams\.(\w+)\(", cell.split("\n---\n", 1)[-1])
            calls = [c for c in calls if c not in ("labels", "alt_text")]
            if not calls:
                continue
            used.update(calls)
            meta = cell.split("\n---\n", 1)[0]
            assert re.search(r'alt: "[^"]{60,}"', meta), f"{md.name}: {calls} cell has no alt text"
            assert re.search(r'caption: "[^"]{40,}"', meta), f"{md.name}: {calls} cell has no caption"
            assert re.search(r"name: fig-[\w-]+", meta), f"{md.name}: {calls} cell has no figure name"
    assert set(diagrams.__all__[2:]) <= used, f"diagrams no chapter shows: {set(diagrams.__all__[2:]) - used}"
