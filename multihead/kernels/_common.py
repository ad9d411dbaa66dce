"""Small pieces every attention kernel shares: upcasting, mask application, the causal rule."""
from __future__ import annotations

import functools
from pathlib import Path

import torch
from torch import Tensor

from multihead.softmax_ops import compute_dtype

__all__ = ["compute_dtype", "apply_mask", "causal_keep", "grouped_mask", "safe_max", "last_level_cache_bytes"]

NEG_INF = float("-inf")


def apply_mask(s: Tensor, mask: Tensor | None) -> Tensor:
    """Apply a normalized mask to scores ``s`` in place: bool keeps True, float is added.

    ``mask`` must broadcast to ``s``. Returns ``s``.
    """
    if mask is None:
        return s
    if mask.dtype == torch.bool:
        return s.masked_fill_(~mask, NEG_INF)
    return s.add_(mask)


def causal_keep(q0: int, q1: int, k0: int, k1: int, offset: int, device) -> Tensor:
    """Bool [q1-q0, k1-k0]: query i sees key j iff j <= i + offset, offset = Tk - Tq (bottom-right)."""
    qi = torch.arange(q0, q1, device=device).unsqueeze(1)   # (q, 1)
    kj = torch.arange(k0, k1, device=device).unsqueeze(0)   # (1, k)
    return kj <= qi + offset                                # (q, k)


def grouped_mask(mask: Tensor | None, B: int, H: int, H_kv: int, Tq: int, Tk: int) -> Tensor | None:
    """View a mask broadcastable to [B, H, Tq, Tk] as [B, H_kv, G, Tq, Tk] without copying.

    Query head h = kv * G + g (G = H / H_kv), so splitting the head dim as (H_kv, G) lines each
    query head up with the KV head it reads, h // G.
    """
    if mask is None:
        return None
    return mask.expand(B, H, Tq, Tk).unflatten(1, (H_kv, H // H_kv))   # (B, H_kv, G, Tq, Tk)


def safe_max(s: Tensor, dim: int = -1) -> Tensor:
    """Max over ``dim`` (kept), with 0 for rows that are all -inf so exp(s - max) gives 0, not NaN."""
    m = s.amax(dim=dim, keepdim=True)
    return torch.where(torch.isneginf(m), torch.zeros_like(m), m)


# The fast kernels' signature as torch.compile sees it: (out, lse) in the compute dtype.
_ATTENTION_OP_SCHEMA = "(Tensor q, Tensor k, Tensor v, Tensor? mask, bool is_causal, float scale) -> (Tensor, Tensor)"


def register_attention_op(name: str, impl) -> None:
    """Register ``impl(q, k, v, mask, *, is_causal, scale) -> (out, lse)`` as the custom op
    ``torch.ops.multihead.<name>``. torch.compile then sees the kernel as one opaque op (ctypes
    calls, data pointers and worker threads cannot be traced): the real implementation runs eagerly
    inside the compiled graph, and the fake one gives the compiler the output shapes and dtypes."""
    def run(q, k, v, mask, is_causal, scale):
        return impl(q, k, v, mask, is_causal=is_causal, scale=scale)

    op = torch.library.custom_op(f"multihead::{name}", run, mutates_args=(), schema=_ATTENTION_OP_SCHEMA)

    @op.register_fake
    def _fake(q, k, v, mask, is_causal, scale):
        B, H, Tq, _ = q.shape                                   # out [B, H, Tq, d_v], lse [B, H, Tq]
        ct = compute_dtype(q.dtype)
        return q.new_empty(B, H, Tq, v.shape[-1], dtype=ct), q.new_empty(B, H, Tq, dtype=ct)


@functools.cache
def last_level_cache_bytes() -> int:
    """Size of the largest CPU cache (Linux sysfs), or 32 MiB when it cannot be read."""
    best = 0
    for idx in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*"):
        try:
            text = (idx / "size").read_text().strip()
            mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
            best = max(best, int(text.rstrip("KMG")) * mult)
        except (OSError, ValueError):
            continue
    return best or 32 << 20
