"""Beyond one node: all-reduce and all-to-all cost inside an NVLink domain (an 8-GPU node, a 72-GPU
NVL72 rack) and across domains over an InfiniBand fat tree, rail-optimised or not, with and without
in-network reduction (SHARP). Data: ``data/networks.yaml`` (NVLink generations, systems, fabrics).

Bandwidths are bytes/s per GPU, one direction. N GPUs = M domains of d GPUs; W_nvl is a GPU's NVLink
bandwidth, W_nic its network port. Source for every formula: Austin et al. 2025, *How to Scale Your
Model*, "How to Think About GPUs" (collectives on GPUs), which derives them for NVSwitch nodes and
the DGX SuperPOD fat tree; Patarasuk & Yuan 2009 (ring); Graham et al. 2016 (SHARP).

* **All-reduce of n bytes** (every GPU holds n, ends with the sum). Inside one domain, a ring:
  t = 2(d-1)/d x n / W_nvl; with in-switch reduction (NVLS/SHARP) each GPU sends its n once and
  receives the result once: t = n / W_nvl. Across M domains, hierarchically: reduce-scatter in the
  domain, all-reduce of each GPU's n/d shard with its peers in the other domains over the network,
  all-gather in the domain; chunks are pipelined, so
      t = max( 2(d-1)/d x n / W_nvl ,  2(M-1)/M x (n/d) / W_net )       (ring)
      t = max( n / W_nvl ,  (n/d) / W_net )                             (SHARP in the switches)
  i.e. the scale-out term is n / (d W_nic) = n / node egress, times ~2 without SHARP.
* **All-to-all** (every GPU holds n bytes, 1/N for each GPU): inside a domain
  t = (N-1)/N x n / W_nvl (the scaling book's B(N-1)/(W N^2) with B = N n); across domains the
  off-domain share (N-d)/N of n goes through the GPU's own NIC: t = max(on-domain / W_nvl,
  (N-d)/N x n / W_net). All-to-all does not shrink with d the way an all-reduce does.
* **Rail-optimised** fabrics put GPU i of every node on leaf switch i (its rail; DGX SuperPOD):
  the hierarchical all-reduce only ever talks along rails, so up to a scalable unit (32 nodes) it
  never crosses the spine. All-to-all traffic between different rails is first moved over NVLink
  to the GPU on the destination's rail (NCCL's PXN), costing (d-1)/d of the off-domain bytes again
  on NVLink. Without rails, all of a node's GPUs share a top-of-rack leaf, which reaches only the
  few nodes on the same leaf without the spine. Traffic that does cross the spine sees
  W_net = W_nic / oversubscription (1 for the full fat tree of the SuperPOD, 7 in the Llama 3
  cluster's aggregation layer).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from pathlib import Path

import yaml

from . import _check

NETWORKS_PATH = Path(__file__).with_name("data") / "networks.yaml"


@functools.cache
def _data() -> dict:
    return yaml.safe_load(NETWORKS_PATH.read_text(encoding="utf-8"))


def _v(record):
    return record["value"]


def nvlink_generation(name: str) -> dict:
    """One NVLink generation: links per GPU, per-link and per-GPU bandwidth (bytes/s, one direction),
    NVSwitches per node, domain size. gpu_bandwidth = links x link_bandwidth."""
    gens = _data()["nvlink_generations"]
    key = next((g for g in gens if _check.normalize(g) == _check.normalize(str(name))), None)
    if key is None:
        raise KeyError(f"unknown NVLink generation {name!r}; known: {', '.join(gens)}")
    g = gens[key]
    out = {k: _v(r) for k, r in g.items() if isinstance(r, dict)}
    out.update(name=key, gpu=g["gpu"], gpu_bandwidth=out["links_per_gpu"] * out["link_bandwidth"])
    return out


@dataclass(frozen=True)
class System:
    """An NVLink domain of `domain_gpus` GPUs, each with `nvlink` and `nic` bytes/s (one direction)."""

    name: str
    domain_gpus: int
    nvlink: float
    nic: float
    generation: str

    @property
    def egress(self) -> float:
        """Bytes/s the whole domain can send into the network: d x W_nic."""
        return self.domain_gpus * self.nic

    @property
    def bisection(self) -> float:
        """Bytes/s across any even split of the domain, both directions added: d x W_nvl."""
        return self.domain_gpus * self.nvlink


def system(name: str = "DGX H100") -> System:
    """A system of networks.yaml ("DGX H100", "DGX B200", "GB200 NVL72"); KeyError lists them."""
    systems = _data()["systems"]
    key = next((s for s in systems if _check.normalize(s) == _check.normalize(str(name))), None)
    if key is None:
        raise KeyError(f"unknown system {name!r}; known: {', '.join(systems)}")
    raw = systems[key]
    gen = nvlink_generation(raw["nvlink"])
    return System(key, int(_v(raw["domain_gpus"])), gen["gpu_bandwidth"], _v(raw["nic_bandwidth"]), gen["name"])


def _split(n_gpus, sys: System) -> tuple[int, int]:
    """(d, M): GPUs per domain used and domains spanned. Across domains N must fill whole domains."""
    n = _check.integer("n_gpus", n_gpus, minimum=2)
    if n <= sys.domain_gpus:
        return n, 1
    if n % sys.domain_gpus:
        raise ValueError(f"n_gpus beyond one {sys.name} domain must be a multiple of {sys.domain_gpus}; got {n}")
    return sys.domain_gpus, n // sys.domain_gpus


def _net_bandwidth(sys, domains, rail_optimized, oversubscription, fabric="DGX H100 SuperPOD"):
    """W_net: the NIC's bandwidth, divided by the oversubscription when traffic must cross the spine
    (a non-rail, top-of-rack fabric: beyond the nodes one leaf switch serves, half its ports facing
    down; a rail-optimised one: beyond a scalable unit)."""
    over = _check.positive("oversubscription", oversubscription)
    if over < 1:
        raise ValueError(f"oversubscription must be >= 1 (1 = full bisection, 7 = 1:7); got {oversubscription!r}")
    fab = _data()["fabrics"][fabric]
    per_su = int(_v(fab["nodes_per_su"]))
    per_leaf = max(1, int(_v(fab["switch_ports"])) // 2 // sys.domain_gpus)  # a top-of-rack leaf: half its ports down
    crosses_spine = domains > (per_su if rail_optimized else per_leaf)
    return sys.nic / over if crosses_spine else sys.nic


def allreduce_terms(
    n_bytes, n_gpus, system_name="DGX H100", sharp=False, rail_optimized=True, oversubscription=1.0
) -> dict:
    """The two terms of the all-reduce time [s] (module docstring) and which one binds."""
    n = _check.positive("n_bytes", n_bytes)
    sys = system(system_name)
    d, m = _split(n_gpus, sys)
    t_nvl = (1.0 if sharp else 2.0 * (d - 1) / d) * n / sys.nvlink
    t_net = 0.0
    if m > 1:
        w = _net_bandwidth(sys, m, rail_optimized, oversubscription)
        t_net = (1.0 if sharp else 2.0 * (m - 1) / m) * (n / d) / w
    return {
        "nvlink_s": t_nvl,
        "network_s": t_net,
        "time_s": max(t_nvl, t_net),
        "bound": "network" if t_net > t_nvl else "NVLink",
        "domain_gpus": d,
        "domains": m,
    }


def allreduce_time_s(
    n_bytes, n_gpus, system_name="DGX H100", sharp=False, rail_optimized=True, oversubscription=1.0
) -> float:
    """All-reduce time of n_bytes per GPU over n_gpus of `system_name`  [s] (bandwidth terms only)."""
    return allreduce_terms(n_bytes, n_gpus, system_name, sharp, rail_optimized, oversubscription)["time_s"]


def alltoall_time_s(n_bytes, n_gpus, system_name="DGX H100", rail_optimized=True, oversubscription=1.0) -> float:
    """All-to-all time when every GPU holds n_bytes, 1/N of it for each GPU  [s] (module docstring)."""
    n = _check.positive("n_bytes", n_bytes)
    sys = system(system_name)
    d, m = _split(n_gpus, sys)
    total = d * m
    on_domain = (d - 1) / total * n
    off_domain = (total - d) / total * n
    nvl_bytes = on_domain + (off_domain * (d - 1) / d if rail_optimized and m > 1 else 0.0)
    t_net = off_domain / _net_bandwidth(sys, m, rail_optimized, oversubscription) if m > 1 else 0.0
    return max(nvl_bytes / sys.nvlink, t_net)


def allgather_bandwidth_by_level(system_name="DGX H100", fabric="DGX H100 SuperPOD") -> dict:
    """Effective all-gather / reduce-scatter bandwidth of each level of the tree, D_i W_i / (D_i - 1)
    [bytes/s] (D_i children per level, W_i the bandwidth of each child's uplink); the smallest sets
    the cost. Scaling book: node 514 GB/s, leaf 413 GB/s, spine 17.1 TB/s for the DGX H100 SuperPOD."""
    sys, fab = system(system_name), _data()["fabrics"][fabric]
    levels = {
        "node": (sys.domain_gpus, sys.nvlink),
        "leaf": (int(_v(fab["nodes_per_su"])), sys.egress),
        "spine": (int(_v(fab["scalable_units"])), _v(fab["spine_bandwidth_per_su"])),
    }
    return {k: dd * w / (dd - 1) for k, (dd, w) in levels.items()}


def published(name: str) -> float:
    """A published measurement of networks.yaml (other people's runs), by key."""
    pub = _data()["published"]
    if name not in pub:
        raise KeyError(f"unknown published figure {name!r}; known: {', '.join(pub)}")
    return _v(pub[name])


def fabric_value(fabric: str, key: str) -> float:
    """One number of a fabric of networks.yaml (e.g. 'Llama 3 cluster', 'oversubscription')."""
    return _v(_data()["fabrics"][fabric][key])


def domains_needed(n_gpus: int, system_name: str = "DGX H100") -> int:
    """How many NVLink domains n_gpus fill: ceil(N / d)."""
    return math.ceil(_check.integer("n_gpus", n_gpus) / system(system_name).domain_gpus)
