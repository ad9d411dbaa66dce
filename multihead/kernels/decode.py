"""The decode backend: few queries against a long KV sequence (split-K, "flash-decoding").

One query row cannot keep a machine busy by itself, so the key sequence is cut into chunks of
CHUNK keys, every chunk is attended independently (one batched matmul over all chunks), and the
partial results are merged. Chunk c keeps its max m_c, its sum l_c = sum exp(s - m_c) and its
normalized output o_c; with m = max_c m_c:

    w_c = exp(m_c - m) * l_c        out = sum_c w_c o_c / sum_c w_c        lse = m + log sum_c w_c

since w_c is chunk c's share of the softmax denominator (times exp(-m)). A chunk with no visible
key has l_c = 0 and weight 0. The max and the sum are kept apart on purpose: merging by
lse_c = m_c + log l_c alone loses l_c when |m_c| is huge (a row masked by finfo.min everywhere:
finfo.min + log 512 rounds to finfo.min, so a 512-key chunk and a 1-key chunk weighed the same). GQA: the G = H / H_kv query heads of a KV head are stacked
along the query axis ([B, H_kv, G*Tq, d]), so each KV head is read once for its G query heads
and K/V are never repeated. Scores take O(B * H * Tq * Tk): meant for small Tq (decode steps).
"""
from __future__ import annotations

import torch
from torch import Tensor

from multihead.kernels._common import apply_mask, causal_keep, compute_dtype, grouped_mask, safe_max
from multihead.kernels.mods import NO_MODS, ScoreMods

CHUNK = 512


def _chunks(q: Tensor, k: Tensor, v: Tensor, mask5: Tensor | None, keep: Tensor | None,
            k0: int, k1: int, n: int, G: int, Tq: int, mods: ScoreMods, rel: Tensor | None,
            slopes: Tensor | None) -> tuple[Tensor, Tensor, Tensor]:
    """Attend q [B, H_kv, 1, G*Tq, d] to keys k0..k1 split into n equal chunks.

    Returns normalized outputs (B, H_kv, n, G*Tq, d_v), their maxes and sums (B, H_kv, n, G*Tq, 1).
    """
    B, H_kv = k.shape[:2]
    c = (k1 - k0) // n
    kc = k[:, :, k0:k1].to(q.dtype).unflatten(2, (n, c))           # (B, H_kv, n, c, d)
    vc = v[:, :, k0:k1].to(q.dtype).unflatten(2, (n, c))           # (B, H_kv, n, c, d_v)
    s = torch.matmul(q, kc.transpose(-2, -1))                       # (B, H_kv, n, G*Tq, c)
    s6 = s.view(B, H_kv, n, G, Tq, c)
    if mods.active:                                                 # rel (Tq, k1-k0) -> (n, 1, Tq, c)
        s6 = mods.apply(s6, rel[:, k0:k1].unflatten(-1, (n, c)).transpose(0, 1).unsqueeze(1), slopes)
        s = s6.view(B, H_kv, n, G * Tq, c)
    if mask5 is not None:                                           # (B, H_kv, G, Tq, k1-k0) ->
        apply_mask(s6, mask5[..., k0:k1].unflatten(-1, (n, c)).permute(0, 1, 4, 2, 3, 5))
    if keep is not None:                                            # (Tq, k1-k0) -> (n, 1, Tq, c)
        apply_mask(s6, keep[:, k0:k1].unflatten(-1, (n, c)).transpose(0, 1).unsqueeze(1))
    m = safe_max(s)                                                 # (B, H_kv, n, G*Tq, 1)
    p = torch.exp(s - m)
    l = p.sum(dim=-1, keepdim=True)
    o = torch.matmul(p, vc) / torch.where(l > 0, l, torch.ones_like(l))   # (B, H_kv, n, G*Tq, d_v)
    return o, m, l


def attention(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, *, is_causal: bool, scale: float,
              mods: ScoreMods = NO_MODS, chunk: int | None = None) -> tuple[Tensor, Tensor]:
    """See multihead.kernels for the shared kernel contract. Returns (out, lse).

    With a window (``mods``) only the keys [lo, hi) that some query's band reaches are read."""
    B, H, Tq, d = q.shape
    H_kv, Tk, d_v = k.shape[1], k.shape[2], v.shape[-1]
    G = H // H_kv
    ct = compute_dtype(q.dtype)
    mask5 = grouped_mask(mask, B, H, H_kv, Tq, Tk)                  # (B, H_kv, G, Tq, Tk) or None
    keep = causal_keep(0, Tq, 0, Tk, Tk - Tq, q.device) if is_causal else None   # (Tq, Tk), Tq small
    mods = mods.with_causal(is_causal)
    lo, hi = mods.key_range(0, Tq, Tk - Tq, Tk)
    rel = slopes = None
    if mods.active:
        if hi <= lo:                                                # no query sees any key
            return (torch.zeros(B, H, Tq, d_v, dtype=ct, device=q.device),
                    torch.full((B, H, Tq), float("-inf"), dtype=torch.float64 if ct == torch.float64
                               else torch.float32, device=q.device))
        rel = torch.arange(Tk - Tq, Tk, device=q.device)[:, None] - torch.arange(lo, hi, device=q.device)
        slopes = None if mods.alibi is None else mods.alibi.view(B, H_kv, 1, G, 1, 1)
        k, v = k[:, :, lo:hi], v[:, :, lo:hi]
        mask5 = None if mask5 is None else mask5[..., lo:hi]
        keep = None if keep is None else keep[:, lo:hi]
        Tk = hi - lo
    C = min(chunk or CHUNK, Tk)
    qg = (q.to(ct) * scale).reshape(B, H_kv, 1, G * Tq, d)          # (B, H_kv, 1, G*Tq, d)

    n_full = Tk // C
    args = (G, Tq, mods, rel, slopes)
    parts = [_chunks(qg, k, v, mask5, keep, 0, n_full * C, n_full, *args)]
    if n_full * C < Tk:                                             # the ragged tail: one more chunk
        parts.append(_chunks(qg, k, v, mask5, keep, n_full * C, Tk, 1, *args))
    o = torch.cat([p[0] for p in parts], dim=2)                     # (B, H_kv, N, G*Tq, d_v)
    m_c = torch.cat([p[1] for p in parts], dim=2)                   # (B, H_kv, N, G*Tq, 1)
    l_c = torch.cat([p[2] for p in parts], dim=2)                   # (B, H_kv, N, G*Tq, 1)

    m_c = m_c.masked_fill(l_c == 0, float("-inf"))                  # an empty chunk must not set m
    m = safe_max(m_c, dim=2)                                        # (B, H_kv, 1, G*Tq, 1), finite
    w = torch.exp(m_c - m) * l_c                                    # chunk weights, unnormalized
    total = w.sum(dim=2, keepdim=True)
    out = (w * o).sum(dim=2) / torch.where(total > 0, total, torch.ones_like(total)).squeeze(2)
    lse = (m + torch.log(total)).reshape(B, H, Tq)
    return out.reshape(B, H, Tq, d_v), lse.to(torch.float64 if ct == torch.float64 else torch.float32)
