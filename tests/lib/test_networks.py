"""hwlib.networks: NVLink generations, NVL72, fat trees, rails and SHARP, against published figures
(Austin et al. 2025, How to Scale Your Model, GPU chapter; NVIDIA; the Llama 3 paper)."""

import pytest
import yaml

from hwlib import interconnect, networks, parallel

DATA = yaml.safe_load(networks.NETWORKS_PATH.read_text())


def test_every_record_is_sourced():
    def walk(node, path=()):
        if isinstance(node, dict):
            if set(node) == {"value", "source", "confidence"}:
                assert node["source"] in DATA["sources"], path
                assert isinstance(node["value"], (int, float)) and node["value"] > 0, path
                return 1
            return sum(walk(v, path + (k,)) for k, v in node.items() if k != "sources")
        return 0

    assert walk(DATA) > 25


@pytest.mark.parametrize(
    "gen,gpu,per_gpu",
    [("NVLink 3", "A100 80GB SXM", 300e9), ("NVLink 4", "H100 SXM", 450e9), ("NVLink 5", "B200", 900e9)],
)
def test_nvlink_generations_match_the_spec_sheet(gen, gpu, per_gpu):
    g = networks.nvlink_generation(gen)
    assert g["gpu_bandwidth"] == per_gpu  # links x per-link, scaling-book table
    assert interconnect.nvlink(gpu).bandwidth == pytest.approx(per_gpu)  # spec sheet, one direction


def test_published_node_and_rack_figures():
    h100 = networks.system("DGX H100")
    assert h100.bisection == pytest.approx(3.6e12)  # 8 x 450 GB/s (NVSwitch Hot Chips 2022)
    assert h100.egress == pytest.approx(400e9)  # 8 x 400 Gb/s NDR
    assert networks.system("GB200 NVL72").egress == pytest.approx(3.6e12)  # 4 x 18 x 400 Gb/s / 8
    assert networks.system("gb200 nvl72").domain_gpus == 72


def test_allgather_bandwidth_by_level_of_the_superpod():
    bw = networks.allgather_bandwidth_by_level()
    assert bw["node"] == pytest.approx(514e9, rel=0.002)  # 450e9 x 8 / 7
    assert bw["leaf"] == pytest.approx(413e9, rel=0.002)  # 400e9 x 32 / 31
    assert bw["spine"] == pytest.approx(17.1e12, rel=0.002)  # 12.8e12 x 4 / 3
    assert min(bw, key=bw.get) == "leaf"


def test_allreduce_inside_a_node_is_the_ring_and_sharp_saves_75_percent_of_it():
    n = 1e9
    ring = networks.allreduce_time_s(n, 8)
    assert ring == pytest.approx(parallel.ring_allreduce_time_s(n, 8, 450e9))
    sharp = networks.allreduce_time_s(n, 8, sharp=True)
    assert sharp == pytest.approx(n / 450e9)  # T = bytes / W with in-network reduction
    assert ring / sharp == pytest.approx(1.75)  # the scaling book's "predicted 75 %"
    measured = networks.published("sharp_measured_gain")  # about 30 % measured (NCCL 2.27.5)
    assert 0 < measured < ring / sharp - 1


def test_allreduce_across_nodes_is_bound_by_node_egress():
    n = 1e9
    t = networks.allreduce_terms(n, 1024)
    assert t["domains"] == 128 and t["bound"] == "network"
    assert t["network_s"] == pytest.approx(2 * 127 / 128 * n / 400e9)  # ~ 2 bytes / W_node egress
    sharp = networks.allreduce_terms(n, 1024, sharp=True)
    assert sharp["network_s"] == pytest.approx(n / 400e9)
    # the all-reduce hardly grows with N: 16 GPUs vs 1024 within 30 %
    assert networks.allreduce_time_s(n, 1024) / networks.allreduce_time_s(n, 16) < 1.3


def test_nvl72_keeps_a_72_gpu_all_reduce_on_nvlink():
    n = 1e9
    rack = networks.allreduce_terms(n, 72, "GB200 NVL72")
    assert rack["domains"] == 1 and rack["network_s"] == 0
    assert rack["time_s"] == pytest.approx(2 * 71 / 72 * n / 900e9)
    assert rack["time_s"] < networks.allreduce_time_s(n, 72, "DGX H100") / 2


def test_rails_and_oversubscription():
    n, over = 1e9, networks.fabric_value("Llama 3 cluster", "oversubscription")
    assert over == 7
    rail = networks.allreduce_time_s(n, 256)  # 32 nodes: one scalable unit
    tor = networks.allreduce_time_s(n, 256, rail_optimized=False, oversubscription=over)
    assert tor / rail == pytest.approx(7 * 2 * 31 / 32 * (n / 8) / 50e9 / rail)
    assert tor > 5 * rail
    # without oversubscription the two fabrics cost the same bandwidth
    assert networks.allreduce_time_s(n, 256, rail_optimized=False) == pytest.approx(rail)


def test_alltoall_inside_and_across_nodes():
    b_total = 8 * 1e9  # scaling book's B: all GPUs' bytes
    inside = networks.alltoall_time_s(1e9, 8)
    assert inside == pytest.approx(b_total * 7 / (450e9 * 64))  # B (N-1) / (W N^2)
    two = networks.alltoall_time_s(1e9, 16)
    assert two == pytest.approx(8 / 16 * 1e9 / 50e9)  # off-node half through the NIC
    assert two / inside > 4  # "a more than 4x degradation"


@pytest.mark.parametrize(
    "bad,match",
    [
        (dict(n_gpus=12), "multiple of 8"),
        (dict(n_gpus=1), "n_gpus"),
        (dict(oversubscription=0.5, n_gpus=64), "oversubscription"),
    ],
)
def test_bad_input_names_the_argument(bad, match):
    kw = dict(n_bytes=1e9, n_gpus=16) | bad
    with pytest.raises(ValueError, match=match):
        networks.allreduce_time_s(**kw)
    with pytest.raises(KeyError, match="known"):
        networks.system("DGX Z9000")
