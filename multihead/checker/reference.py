"""The checker's own float64 attention: the yardstick every probe compares against.

Deliberately independent of the code under test (it imports nothing else from multihead) and
written for clarity, not speed: it materializes the [B, H, Tq, Tk] score matrix, which is fine
for the probe sizes (T <= 32).

    out = softmax(scale * q k^T + M) v,   M = 0 where attended, -inf where masked

A fully masked row has no keys to average over; its output is defined as 0 (PyTorch's choice
since 2.1), so every row of `out` is either a convex combination of value rows or zero.
"""
from __future__ import annotations

import math

import torch


def causal_mask(t_q: int, t_k: int, align: str = "bottom-right") -> torch.Tensor:
    """Bool [Tq, Tk], True = attend.

    bottom-right: query i sits at absolute position (Tk - Tq + i), so it sees keys 0..Tk-Tq+i
    (the KV-cache convention of FlashAttention: the last query sees every key).
    top-left: query i sees keys 0..i (torch SDPA's convention when Tq != Tk).
    The two agree when Tq == Tk.
    """
    if align not in ("bottom-right", "top-left"):
        raise ValueError(f"align: expected 'bottom-right' or 'top-left', got {align!r}")
    offset = t_k - t_q if align == "bottom-right" else 0
    i = torch.arange(t_q)[:, None]
    j = torch.arange(t_k)[None, :]
    return j <= i + offset


def expand_kv(x: torch.Tensor, n_heads: int, grouping: str = "interleave") -> torch.Tensor:
    """[B, H_kv, T, d] -> [B, H, T, d].

    interleave (correct): query head h reads KV head h // (H / H_kv), as repeat_interleave does.
    tile (the classic mistake, `.repeat`): query head h reads KV head h % H_kv.
    """
    h_kv = x.shape[1]
    if n_heads % h_kv:
        raise ValueError(f"n_heads: expected a multiple of H_kv={h_kv}, got {n_heads}")
    g = n_heads // h_kv
    if grouping == "interleave":
        return x.repeat_interleave(g, dim=1)
    if grouping == "tile":
        return x.repeat(1, g, 1, 1)
    raise ValueError(f"grouping: expected 'interleave' or 'tile', got {grouping!r}")


def normal(*shape: int, generator: torch.Generator, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """float64 standard normal samples of ``shape`` for inputs of ``dtype``: drawn in float32 (torch
    draws float32 normals 5-6x faster than float64 ones, 1.8 vs 10 ms for 0.5 M on one core, the
    probes' largest cost) and exact in float32 and narrower dtypes; drawn in float64 for float64
    inputs, whose full mantissa is what shows a target that stores or computes in float32."""
    draw = torch.float64 if dtype == torch.float64 else torch.float32
    return torch.randn(*shape, generator=generator, dtype=draw).to(torch.float64)


def reference_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *,
                        mask: torch.Tensor | None = None, is_causal: bool = False,
                        align: str = "bottom-right", scale: float | None = None,
                        grouping: str = "interleave", return_weights: bool = False):
    """Float64 attention on the CPU.

    q: [B, H, Tq, d]; k, v: [B, H_kv, Tk, d] (H % H_kv == 0); mask: broadcastable to
    [B, H, Tq, Tk], bool (True = attend) or float (added to the scaled scores, as torch SDPA
    does; -inf drops a key). Returns out [B, H, Tq, d] float64 (and the weights [B, H, Tq, Tk]
    when return_weights).
    """
    q, k, v = (t.detach().to("cpu", torch.float64) for t in (q, k, v))
    n_heads, t_q, d = q.shape[1], q.shape[2], q.shape[3]
    k = expand_kv(k, n_heads, grouping)                        # (B, H, Tk, d)
    v = expand_kv(v, n_heads, grouping)                        # (B, H, Tk, d)
    t_k = k.shape[2]
    s = 1.0 / math.sqrt(d) if scale is None else float(scale)
    logits = (q @ k.transpose(-2, -1)) * s                     # (B, H, Tq, Tk)
    keep = torch.ones(t_q, t_k, dtype=torch.bool)
    if is_causal:
        keep = keep & causal_mask(t_q, t_k, align)
    if mask is not None and mask.dtype == torch.bool:
        keep = keep & mask.detach().to("cpu")
    elif mask is not None:                                     # additive: biases and -inf
        logits = logits + mask.detach().to("cpu", torch.float64)
    keep = keep.expand_as(logits)
    logits = logits.masked_fill(~keep, float("-inf"))
    # Stable softmax with empty rows sent to 0 instead of 0/0: subtract a finite row max.
    row_max = logits.amax(-1, keepdim=True)
    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))
    e = torch.exp(logits - row_max)                            # exp(-inf) = 0 on masked keys
    denom = e.sum(-1, keepdim=True)
    w = torch.where(denom > 0, e / denom.clamp_min(1e-300), torch.zeros_like(e))
    out = w @ v                                                # (B, H, Tq, d)
    return (out, w) if return_weights else out
