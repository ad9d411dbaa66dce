"""Seconds of attention calls and decode steps: the roofline, plus a measured profile's terms.

For a catalog GPU only the roofline terms are non-zero (F = peak * flops_efficiency, BW = datasheet
bandwidth * bandwidth_efficiency, decode FLOPs hidden under the memory traffic). A measured profile
(cost/time/cpu_profile.py) adds its kernels' per-call, per-score, per-row, spill and cache terms.
"""
from __future__ import annotations

from multihead.cost.time.cpu_profile import PrefillCosts, backend_for, decode_costs, prefill_costs
from multihead.cost.time.device import DeviceSpec, memory_seconds
from multihead.cost.counts.formulas import attention_flops, kv_cache_bytes
from multihead.cost.spec.units import dtype_bytes

def attention_seconds(device: DeviceSpec, flops: float, dtype: str = "fp16", *,
                      head_dim: int | None = None, rows: float | None = None, calls: int = 1,
                      heads: int | None = None, batch: int = 1, tokens: int | None = None,
                      kv_tokens: int | None = None, causal: bool | None = None) -> float:
    """Time of ``calls`` attention calls (QK^T, softmax, PV) doing ``flops`` in all.

    t = calls * overhead + flops / F + scores * c_score + rows * c_row, where scores =
    flops / (4 * head_dim) (each computed score costs 4 d FLOPs) and ``rows`` = query rows of all
    calls, B * H * Tq * calls (default: from ``heads`` and ``tokens``). With ``flops`` alone this
    is the roofline flops / F plus one call's overhead (a catalog GPU has only the F term).

    Shape, for a measured profile of ``multihead.attention``: ``heads`` and ``batch`` per call,
    ``tokens`` = Tq per call (default rows / (calls * batch * heads)), ``kv_tokens`` = Tk (default
    Tq), ``causal`` (default: inferred, flops below 3/4 of the full count). With them the model
    picks the kernel ``attention(backend="auto")`` runs for that shape, and, when that kernel
    computes every score and masks afterwards, counts the B * H * Tq * Tk scores it computes.
    ``flops`` is the caller's count (causal or not, sliding windows included).
    """
    if rows is None:
        rows = calls * batch * heads * tokens if heads and tokens else 0.0
    if tokens is None and heads and rows:
        tokens = max(1, round(rows / (calls * batch * heads)))
    kv = kv_tokens or tokens
    shaped = bool(head_dim and heads and tokens)
    if causal is None and shaped:
        causal = flops < 0.75 * 4 * head_dim * calls * batch * heads * tokens * kv
    backend = backend_for(device, batch, heads, tokens, kv, dtype) if shaped else None
    c = prefill_costs(device, dtype, backend)
    scores = flops / (4 * head_dim) if head_dim else 0.0
    masked = 0.0
    if causal and shaped and not c.skips_masked:
        scores = masked = calls * batch * heads * tokens * kv     # all computed, then masked
        flops = 4 * head_dim * scores
    spilled = scores if spills(device, c, scores / max(calls, 1)) else 0.0
    return (calls * c.overhead_s + flops / c.flops_per_s + scores * c.seconds_per_score
            + spilled * c.seconds_per_spilled_score + masked * c.seconds_per_masked_score
            + rows * c.seconds_per_row)


SPILL_BYTES_PER_SCORE = 8    # an out-of-place pass over fp32 scores: read one copy, write another


def spills(device: DeviceSpec, costs: PrefillCosts, scores_per_call: float) -> bool:
    """Does one pass over a call's materialized scores (source and destination, fp32) overflow
    the last-level cache?"""
    return bool(costs.materializes and device.cache_bytes
                and SPILL_BYTES_PER_SCORE * scores_per_call > device.cache_bytes)


def attention_prefill_seconds(device: DeviceSpec, *, n_heads: int, tq: int, tk: int,
                              head_dim: int, batch: int = 1, causal: bool = True,
                              dtype: str = "fp16", layers: int = 1) -> float:
    """Time of ``layers`` attention calls on q [batch, n_heads, tq, head_dim] (any H_kv).

    FLOPs come from ``cost.formulas`` (causal: only the kept pairs, about half).
    """
    flops = attention_flops(batch, n_heads, tq, tk, head_dim, causal=causal)
    return attention_seconds(device, layers * flops, dtype, head_dim=head_dim, heads=n_heads,
                             tokens=tq, kv_tokens=tk, batch=batch, calls=layers, causal=causal)


def decode_step_seconds(device: DeviceSpec, kv_bytes: float, weight_bytes: float, *,
                        dtype: str | None = None, flops: float = 0.0, calls: int = 1,
                        rows_per_kv_head: int | None = None) -> float:
    """One generated token reads every weight and the whole KV cache once.

    t = calls * overhead + KV / BW_kv + flops / F_decode + W / BW: ``kv_bytes`` read by the
    attention kernel (in ``dtype``), ``flops`` of its QK^T and PV (4 * B * H * Tk * d), ``calls``
    = layers, ``rows_per_kv_head`` = G * Tq picks the kernel's row-grouping terms when a measured
    profile has them. For a kernel whose reads and arithmetic overlap (``DecodeCosts.overlapped``) the
    attention term is max(KV / BW_kv, flops / F_decode) instead of the sum. With a catalog GPU
    this is the plain roofline (KV + W) / BW.
    """
    c = decode_costs(device, dtype, rows_per_kv_head)
    compute = flops / c.flops_per_s if c.flops_per_s else 0.0
    rate = c.bytes_per_s
    if c.spilled_bytes_per_s and device.cache_bytes and kv_bytes / max(calls, 1) > device.cache_bytes:
        rate = c.spilled_bytes_per_s
    reads = kv_bytes / rate
    attention = max(reads, compute) if c.overlapped else reads + compute
    return calls * c.overhead_s + attention + memory_seconds(weight_bytes, device)


def decode_attention_seconds(device: DeviceSpec, *, n_heads: int, n_kv_heads: int, tk: int,
                             head_dim: int, batch: int = 1, dtype: str = "fp16",
                             layers: int = 1) -> float:
    """Attention time of one decode step (one query per sequence, ``tk`` cached tokens, no weights)."""
    kv = kv_cache_bytes(layers, n_kv_heads, head_dim, tk, dtype_bytes(dtype), batch)
    flops = layers * attention_flops(batch, n_heads, 1, tk, head_dim)
    return decode_step_seconds(device, kv, 0.0, dtype=dtype, flops=flops, calls=layers,
                               rows_per_kv_head=n_heads // n_kv_heads)
