"""Conceptual diagrams of the machine, drawn by code from the data files and the simulators.

Each function returns ``(fig, ax)`` like the rest of `hwlib.plot` (``ax`` a tuple of Axes for a figure
of several panels); `alt_text(fig)` gives its alt text and `labels(fig)` the numbers it printed (SI
units), so a test can check each against hwlib/data and the simulators.

    from hwlib.plot import diagrams
    fig, ax = diagrams.zero_stages(7.5e9, 4)

    silicon_budget()        CPU vs GPU: lanes and cache per lane          (chapter 1)
    sm()                    an SM and its sub-partitions                  (chapter 2)
    memory_hierarchy()      capacity and bandwidth of each tier           (chapter 2)
    hbm_stack()             HBM stacks on the interposer                  (chapter 2)
    systolic_dataflow()     a weight-stationary array, cycle by cycle     (chapter 3)
    ring_allreduce()        a ring all-reduce step by step                (chapter 7)
    zero_stages()           ZeRO stages 0-3: who holds what               (chapter 7)
    pipeline_schedules()    GPipe, 1F1B, interleaved 1F1B: bubble, memory (chapter 7)
    tensor_parallel_mlp()   column- then row-parallel MLP, one all-reduce (chapter 7)
    nvswitch_vs_fattree()   NVSwitch node vs rail-optimised fat tree      (chapter 7)
    collective_costs()      all-reduce / all-to-all time beyond one node  (chapter 7, hwlib.networks)
"""

from ._draw import alt_text, labels
from .chip import hbm_stack, silicon_budget, sm
from .dataflow import systolic_dataflow
from .hierarchy import memory_hierarchy
from .network import collective_costs, nvswitch_vs_fattree
from .parallelism import tensor_parallel_mlp, zero_stages
from .pipeline import pipeline_schedules
from .ring import ring_allreduce

__all__ = [
    "alt_text",
    "labels",
    "silicon_budget",
    "sm",
    "memory_hierarchy",
    "hbm_stack",
    "systolic_dataflow",
    "ring_allreduce",
    "zero_stages",
    "pipeline_schedules",
    "tensor_parallel_mlp",
    "nvswitch_vs_fattree",
    "collective_costs",
]
