"""A sliding window on a kernel that knows nothing of windows (the fast kernels).

fast_prefill and fast_decode take a mask and ``is_causal`` but no window. A window is a band
around the diagonal, so it is run as one call per chunk of CHUNK_Q queries on only the keys
[lo, hi) that the chunk's band reaches (views, no copy), with a [chunk, hi - lo] bool mask for the
band's left edge where it cuts the chunk. The causal edge is the inner kernel's own bottom-right
``is_causal`` (the slice ends where the chunk's last query sits), so the inner kernel still skips
the blocks above the diagonal. Work: O(Tq * (window + CHUNK_Q)) pairs instead of Tq * Tk, and
each chunk's scores are computed by the fast kernel. Decode-sized calls (Tq <= CHUNK_Q) are one
chunk: a one-token step reads only the last window keys, with no mask at all.

Only the window goes this way: softcap and ALiBi change the scores inside the kernel, which the
fast kernels cannot, so functional.attention hands those calls to tiled / decode instead.
"""
from __future__ import annotations

import torch
from torch import Tensor

from multihead.kernels._common import compute_dtype
from multihead.kernels.mods import ScoreMods, rel_positions

CHUNK_Q = 512    # queries per call; the left edge wastes at most CHUNK_Q^2 / 2 pairs per chunk


def attention(kernel, q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, *, is_causal: bool,
              scale: float, mods: ScoreMods, chunk_q: int | None = None) -> tuple[Tensor, Tensor]:
    """``kernel`` (the shared contract of multihead.kernels) with a window. Returns (out, lse)."""
    B, H, Tq, _ = q.shape
    Tk, d_v = k.shape[2], v.shape[-1]
    ct = compute_dtype(q.dtype)
    mods = mods.with_causal(is_causal)
    offset = Tk - Tq
    out = torch.zeros(B, H, Tq, d_v, dtype=ct, device=q.device)
    lse = torch.full((B, H, Tq), float("-inf"), dtype=torch.float64 if ct == torch.float64 else torch.float32,
                     device=q.device)
    cq = chunk_q or CHUNK_Q
    for q0 in range(0, Tq, cq):
        q1 = min(Tq, q0 + cq)
        lo, hi = mods.key_range(q0, q1, offset, Tk)
        if hi <= lo:
            continue                                       # these queries see no key: 0, -inf
        inner_causal = mods.right == 0                      # hi is then q1 + offset: bottom-right
        edges = ScoreMods(mods.left, None if inner_causal else mods.right)
        qc = q[:, :, q0:q1]
        # Keys from `split` on are inside every query's left edge: with no other cut and no user
        # mask they go to the kernel unmasked, and only [lo, split) carries the band's mask (a
        # mask on every key block made the whole chunk take the kernel's slow masked path).
        split = min(hi, q1 - 1 + offset - mods.left) if mods.left is not None else lo
        if mask is None and edges.right is None and lo < split < hi:
            o, l = _band(kernel, qc, k, v, q0, q1, lo, split, offset, mods, scale)
            o2, l2 = kernel(qc, k[:, :, split:hi], v[:, :, split:hi], None, is_causal=inner_causal, scale=scale)
            out[:, :, q0:q1], lse[:, :, q0:q1] = _merge2(o, l, o2, l2)
            continue
        keep = _keep(edges, q0, q1, lo, hi, offset, q.device)
        sub = _combine(slice_mask(mask, q0, q1, lo, hi), keep)
        o, l = kernel(qc, k[:, :, lo:hi], v[:, :, lo:hi], sub, is_causal=inner_causal, scale=scale)
        out[:, :, q0:q1] = o
        lse[:, :, q0:q1] = l
    return out, lse


def _keep(edges: ScoreMods, q0: int, q1: int, k0: int, k1: int, offset: int, device) -> Tensor | None:
    """Bool [q1-q0, k1-k0] of the pairs inside the band's edges, or None if it cuts nothing."""
    if not edges.window_cuts(q0, q1, k0, k1, offset):
        return None
    rel = rel_positions(q0, q1, k0, k1, offset, device)                  # (q1-q0, k1-k0)
    keep = torch.ones_like(rel, dtype=torch.bool)
    if edges.left is not None:
        keep &= rel <= edges.left
    if edges.right is not None:
        keep &= rel >= -edges.right
    return keep


def _band(kernel, qc: Tensor, k: Tensor, v: Tensor, q0: int, q1: int, k0: int, k1: int, offset: int,
          edges: ScoreMods, scale: float) -> tuple[Tensor, Tensor]:
    """The chunk's queries on keys [k0, k1) with both of the band's edges as a bool mask."""
    keep = _keep(edges, q0, q1, k0, k1, offset, qc.device)
    sub = None if keep is None else keep.view(1, 1, *keep.shape)
    return kernel(qc, k[:, :, k0:k1], v[:, :, k0:k1], sub, is_causal=False, scale=scale)


def _merge2(o1: Tensor, l1: Tensor, o2: Tensor, l2: Tensor) -> tuple[Tensor, Tensor]:
    """Two partial attentions over disjoint key sets merged by log-sum-exp (exact):
    lse = log(e^l1 + e^l2), out = e^(l1 - lse) o1 + e^(l2 - lse) o2; rows with no key stay 0, -inf."""
    lse = torch.logaddexp(l1, l2)                                        # (B, H, n)
    seen = torch.isfinite(lse) | torch.isnan(lse)
    base = torch.where(seen, lse, torch.zeros_like(lse))
    w1 = torch.exp(l1 - base).unsqueeze(-1).to(o1.dtype)                  # 0 for an empty part
    w2 = torch.exp(l2 - base).unsqueeze(-1).to(o2.dtype)
    return o1 * w1 + o2 * w2, lse


def slice_mask(mask: Tensor | None, q0: int, q1: int, k0: int, k1: int) -> Tensor | None:
    """Queries q0..q1-1 x keys k0..k1-1 of a 4-dim mask broadcastable to [B, H, Tq, Tk] (a dim of
    size 1 broadcasts, so it is not sliced)."""
    if mask is None:
        return None
    if mask.shape[2] != 1:
        mask = mask[:, :, q0:q1]
    return mask if mask.shape[3] == 1 else mask[..., k0:k1]


def _combine(mask: Tensor | None, keep: Tensor | None) -> Tensor | None:
    """A user mask (bool or float) AND a bool keep [n, c]: bool stays bool, float gets -inf."""
    if keep is None or mask is None:
        return mask if keep is None else keep.view(1, 1, *keep.shape)
    if mask.dtype == torch.bool:
        return mask & keep
    return mask.masked_fill(~keep, float("-inf"))
