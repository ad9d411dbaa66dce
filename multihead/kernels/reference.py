"""The reference backend: materialize the score matrix, softmax it, multiply by V.

    S = (Q * scale) K^T          (B, H, Tq, Tk)
    P = softmax(S + mask)        rows with no visible key -> 0
    O = P V                      (B, H, Tq, d_v)

Exactly two matmuls (Q K^T and P V), so torch's FlopCounterMode counts
4 * B * H * Tq * Tk * d = multihead.cost.counts.formulas.attention_flops(...). GQA does not repeat K/V:
the G = H / H_kv query heads that share a KV head are stacked along the query axis,
q [B, H, Tq, d] -> [B, H_kv, G*Tq, d], which multiplies against k [B, H_kv, Tk, d] directly.
Memory is O(B * H * Tq * Tk): functional.attention refuses it above MAX_SCORE_BYTES.
``mods`` (window, softcap, ALiBi; multihead.kernels.mods) are applied to the whole score matrix.
"""
from __future__ import annotations

import torch
from torch import Tensor

from multihead.kernels._common import apply_mask, causal_keep, compute_dtype, grouped_mask, safe_max
from multihead.kernels.mods import NO_MODS, ScoreMods, rel_positions


def attention(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, *, is_causal: bool,
              scale: float, mods: ScoreMods = NO_MODS) -> tuple[Tensor, Tensor]:
    """See multihead.kernels for the shared kernel contract. Returns (out, lse)."""
    B, H, Tq, d = q.shape
    H_kv, Tk, d_v = k.shape[1], k.shape[2], v.shape[-1]
    G = H // H_kv
    ct = compute_dtype(q.dtype)
    qg = (q.to(ct) * scale).reshape(B, H_kv, G * Tq, d)        # (B, H_kv, G*Tq, d)
    s = torch.matmul(qg, k.to(ct).transpose(-2, -1))            # (B, H_kv, G*Tq, Tk)
    s5 = s.view(B, H_kv, G, Tq, Tk)                             # (B, H_kv, G, Tq, Tk)
    if mods.active:
        slopes = None if mods.alibi is None else mods.alibi.view(B, H_kv, G, 1, 1)
        s5 = mods.apply(s5, rel_positions(0, Tq, 0, Tk, Tk - Tq, q.device), slopes)
        s = s5.view(B, H_kv, G * Tq, Tk)
    apply_mask(s5, grouped_mask(mask, B, H, H_kv, Tq, Tk))
    if is_causal:
        apply_mask(s5, causal_keep(0, Tq, 0, Tk, Tk - Tq, q.device))   # (Tq, Tk) broadcasts
    m = safe_max(s)                                             # (B, H_kv, G*Tq, 1)
    p = torch.exp(s - m)                                        # exponents <= 0
    l = p.sum(dim=-1, keepdim=True)                             # (B, H_kv, G*Tq, 1)
    p = p / torch.where(l > 0, l, torch.ones_like(l))           # all-masked row: 0 / 1 = 0
    out = torch.matmul(p, v.to(ct))                             # (B, H_kv, G*Tq, d_v)
    lse = (m + torch.log(l)).reshape(B, H, Tq)                  # log(0) = -inf for empty rows
    return out.reshape(B, H, Tq, d_v), lse.to(torch.float64 if ct == torch.float64 else torch.float32)
