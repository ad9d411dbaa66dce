"""All-reduce time with the algorithm chosen smoothly, and in-switch reduction where the link has it (no torch).

An engine (vLLM's custom all-reduce and NCCL behind it, TensorRT-LLM's plugin, PyTorch's intra-node
comm) picks, for each message size, the faster of the algorithms it has. Choosing by a fixed size
threshold makes the modelled step jump where the threshold sits (session 4: 9.9 -> 19.7 ms between
batch 16 and 32 on MI300X) while measured latency grows smoothly; taking the cheapest algorithm at
every size is continuous (a minimum of continuous costs) and is what the thresholds approximate.
The candidates, over n GPUs of one node, b bytes, wire = link bandwidth x efficiency:

    one-stage (every GPU reads its peers' buffers):   latency + (n - 1) b / wire
    two-stage (reduce-scatter + all-gather):          latency + step + 2 (n - 1) / n * b / wire
    ring (NCCL):                                      latency + step log2(n) + 2 (n - 1) / n * b / wire
    in-switch (NVLink SHARP, links that have it):     latency + step + b / wire

Across nodes only the ring is available. The in-switch reduction (NVSwitch 3 and later: HGX H100/H200,
B200; "in_switch_reduction" in catalog/interconnect.json) sends each GPU's data to the switch once and
receives the sum once, so its traffic per GPU is b instead of 2 (n - 1) / n * b.
"""
from __future__ import annotations

import math


def in_switch(link: str) -> bool:
    from multihead.cost.time.timing import interconnect_catalog
    return bool(interconnect_catalog()["links"].get(link, {}).get("in_switch_reduction"))


def algorithm_costs(nbytes: float, n: int, bandwidth: float, latency: float, step: float, efficiency: float,
                    link: str = "", inter_node: bool = False) -> dict[str, float]:
    """Seconds of each all-reduce algorithm available for this message (module docstring)."""
    wire = bandwidth * efficiency
    ring_traffic = 2.0 * (n - 1) / n * nbytes / wire
    costs = {"ring": latency + step * math.log2(n) + ring_traffic}
    if not inter_node:
        costs["one-stage"] = latency + (n - 1) * nbytes / wire
        costs["two-stage"] = latency + step + ring_traffic
        if in_switch(link):
            costs["in-switch"] = latency + step + nbytes / wire
    return costs


def allreduce_seconds(nbytes: float, n: int, bandwidth: float, c, link: str = "default", engine: str = "",
                      inter_node: bool = False) -> float:
    """One all-reduce of ``nbytes`` over n GPUs: the cheapest algorithm available (continuous in nbytes)."""
    if n <= 1:
        return 0.0
    costs = algorithm_costs(nbytes, n, bandwidth, c.allreduce_latency(link, engine), c.allreduce_step_s,
                            c.link_efficiency, link, inter_node)
    return min(costs.values())


def chosen_algorithm(nbytes: float, n: int, bandwidth: float, c, link: str = "default", engine: str = "",
                     inter_node: bool = False) -> str:
    costs = algorithm_costs(nbytes, n, bandwidth, c.allreduce_latency(link, engine), c.allreduce_step_s,
                            c.link_efficiency, link, inter_node)
    return min(costs, key=costs.get)
