"""Mixture-of-experts terms of the GPU-time model that dense GEMMs do not have (no torch).

1. Expert-parallel load imbalance (decode). With expert parallelism over N GPUs each GPU holds E/N
   whole experts; a step of T tokens touches each expert with probability p = 1 - (1 - k/E)^T (uniform
   routing), so the experts one GPU must read are X ~ Binomial(E/N, p), and the step waits for the GPU
   with the most: E[max of N such X] / E[X] >= 1 (ep_imbalance; the GPUs' counts taken as independent,
   which ignores their small negative correlation for E >> N). Tensor parallelism slices every expert
   over the GPUs instead, so each reads 1/N of every touched expert: no imbalance.
2. Grouped-GEMM tile padding (prefill). A grouped GEMM (vLLM's fused_moe, SGLang's) runs each expert's
   tokens in tiles of M rows; an expert with m tokens fills max(M, m + M/2) rows on average (one tile
   at least; half a tile wasted beyond), so the routed experts' FLOPs grow by that over m
   (padding_factor). M = 64, fused_moe's BLOCK_SIZE_M for more tokens than experts (vLLM's
   get_default_config).
3. Expert-parallel all-to-all (DP attention + EP, SGLang's --enable-dp-attention, DeepEP): each MoE
   layer dispatches every token of a GPU to the GPUs of its k experts and combines the results back:
   per GPU t_local * k * (N-1)/N * D elements each way, dispatch in fp8 (1 byte, DeepEP's low-latency
   mode) and combine in bf16 (2 bytes): 2 * latency + 3 * t_local * k * (N-1)/N * D / (link * efficiency).
"""
from __future__ import annotations

import math

TILE_M = 64
DISPATCH_BYTES = 1      # fp8 dispatch (DeepEP low-latency kernels)
COMBINE_BYTES = 2       # bf16 combine


def touched_probability(num_experts: int, k: int, tokens: float) -> float:
    """P(an expert is used by at least one of ``tokens`` tokens), each choosing k of E uniformly."""
    if tokens <= 0:
        return 0.0
    return 1.0 - (1.0 - k / num_experts) ** tokens


def _binomial_cdf(n: int, p: float) -> list[float]:
    """CDF of Binomial(n, p) at 0..n (log-space terms: exact enough for n <= a few hundred)."""
    if p <= 0.0:
        return [1.0] * (n + 1)
    if p >= 1.0:
        return [0.0] * n + [1.0]
    lp, lq = math.log(p), math.log1p(-p)
    pmf = [math.exp(math.lgamma(n + 1) - math.lgamma(x + 1) - math.lgamma(n - x + 1) + x * lp + (n - x) * lq)
           for x in range(n + 1)]
    out, acc = [], 0.0
    for v in pmf:
        acc += v
        out.append(min(1.0, acc))
    out[-1] = 1.0
    return out


def ep_imbalance(num_experts: int, k: int, tokens: float, ep: int) -> float:
    """E[max over ``ep`` GPUs of the experts each must read] / E[one GPU's]: 1 at ep = 1 or when
    every expert is touched; above 1 for few tokens over many GPUs."""
    if ep <= 1:
        return 1.0
    n = num_experts // ep
    p = touched_probability(num_experts, k, tokens)
    if n < 1 or p <= 0.0:
        return 1.0
    cdf = _binomial_cdf(n, p)
    expected_max = sum(1.0 - cdf[x] ** ep for x in range(n))
    return max(1.0, expected_max / (n * p))


def padding_factor(tokens: float, k: int, num_experts: int, tile: int = TILE_M) -> float:
    """Rows a grouped GEMM computes over the rows it needs, for ``tokens`` tokens routed to k of E
    experts: the touched experts each fill max(tile, m + tile/2) rows, m = tokens*k / touched."""
    rows = tokens * k
    if rows <= 0:
        return 1.0
    touched = num_experts * touched_probability(num_experts, k, tokens)
    m = rows / touched
    return touched * max(tile, m + tile / 2) / rows


def all_to_all_seconds(tokens_per_gpu: float, k: int, hidden: int, n: int, bandwidth: float, latency: float,
                       efficiency: float) -> float:
    """One MoE layer's dispatch + combine over ``n`` GPUs (term 3 of the module docstring)."""
    if n <= 1 or tokens_per_gpu <= 0:
        return 0.0
    elements = tokens_per_gpu * k * (n - 1) / n * hidden
    return 2 * latency + elements * (DISPATCH_BYTES + COMBINE_BYTES) / (bandwidth * efficiency)


def routed_expert_bytes(setup, tokens: float) -> float:
    """Bytes of routed experts one GPU reads in a forward over ``tokens`` tokens (its 1/N share of the
    touched experts, N = the GPUs the experts are spread over)."""
    from multihead.cost.counts.formulas import expected_distinct_experts
    from multihead.cost.counts.memory import weight_bytes
    from multihead.cost.counts.params import param_counts
    from multihead.cost.spec.units import dtype_bytes
    s = setup.spec
    m, c = s.moe, param_counts(s)
    if m is None or c is None or s.params is not None:
        return 0.0
    w = weight_bytes(s, setup.weights, setup.quantization, gpus=setup.tp)
    per_param = w.bytes_per_quantized if w.quantization else dtype_bytes(w.plain_dtype)
    read = expected_distinct_experts(m.num_experts, m.experts_per_token, max(1, round(tokens)))
    return c.n_moe_layers * read * c.expert * per_param / setup.tp


def imbalance_extra_bytes(setup, tokens: float) -> float:
    """The routed-expert bytes the slowest GPU reads beyond the average (term 1), when the experts are
    expert-parallel over all ``tp`` GPUs (expert_parallel_size > 1)."""
    ep = getattr(setup, "expert_parallel_size", 1)
    m = setup.spec.moe
    if ep <= 1 or m is None:
        return 0.0
    f = ep_imbalance(m.num_experts, m.experts_per_token, tokens, ep)
    return (f - 1.0) * routed_expert_bytes(setup, tokens)


def routed_flops_per_gpu(setup, tokens: float) -> float:
    """2 FLOPs per routed-expert weight per token-expert pair, this GPU's share."""
    from multihead.cost.counts.params import param_counts
    s = setup.spec
    m, c = s.moe, param_counts(s)
    if m is None or c is None:
        return 0.0
    return 2.0 * tokens * m.experts_per_token * c.expert * c.n_moe_layers / setup.tp


def padding_extra_flops(setup, tokens: float) -> float:
    """FLOPs the grouped GEMMs compute beyond the routed experts' own in a prefill of ``tokens`` (term 2)."""
    m = setup.spec.moe
    if m is None or tokens <= 0:
        return 0.0
    return (padding_factor(tokens, m.experts_per_token, m.num_experts) - 1.0) * routed_flops_per_gpu(setup, tokens)


def dp_attention_comm_seconds(setup, tokens: float, bandwidth: float) -> float:
    """Communication of a forward with DP attention (SGLang's --enable-dp-attention, vLLM's DP + EP):
    attention runs data-parallel over ``data_parallel_size`` groups of tp / dp GPUs (an all-reduce of
    its local tokens per layer inside a group), and each MoE layer's tokens reach their experts over all
    tp GPUs by all-to-all (term 3); dense layers' MLP all-reduce inside the group as attention does.
    Not modelled: the replicated attention weights and each group's own KV (the memory terms still
    treat the group as one tensor-parallel group)."""
    from multihead.cost.time.timing import allreduce_seconds
    s, c = setup.spec, setup.constants
    dp, n = setup.data_parallel_size, setup.tp
    group = max(1, n // dp)
    local = tokens / dp
    nbytes = local * s.hidden_size * setup.act_bytes
    inter = bandwidth != setup.gpu.link_bandwidth
    ar = allreduce_seconds(nbytes, group, bandwidth, c, setup.gpu.link, setup.engine, inter_node=inter)
    m = s.moe
    moe_layers = m.moe_layers if m is not None else 0
    a2a = all_to_all_seconds(local, m.experts_per_token, s.hidden_size, n, bandwidth,
                             c.allreduce_latency(setup.gpu.link, setup.engine), c.link_efficiency) if m else 0.0
    return s.num_layers * ar + (s.num_layers - moe_layers) * ar + moe_layers * a2a
