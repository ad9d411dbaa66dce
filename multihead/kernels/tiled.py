"""The tiled backend: online softmax over key blocks, never holding the [Tq, Tk] score matrix.

For each block of queries we stream over blocks of keys, keeping per query row a running max m,
a running sum l = sum exp(s - m) and an unnormalized accumulator acc = sum exp(s - m) v. When a
new block raises the max to m', the old terms are rescaled by alpha = exp(m - m'):

    m' = max(m, rowmax(S_blk))     l' = alpha * l + rowsum(exp(S_blk - m'))
    acc' = alpha * acc + exp(S_blk - m') V_blk          out = acc / l,   lse = m + log l

which is exact (the same identity as max subtraction, applied incrementally). With a causal
mask, key blocks entirely above the diagonal are never computed, and only blocks that straddle
it build a mask. A window (``mods``, multihead.kernels.mods) works the same way: each query block
visits only the keys [lo, hi) that its band can reach, so the work is O(Tq * window), and only
blocks that the band's edges cut build a mask. Extra memory: the output and the per-row state, O(Tq * d), plus one block of
scores, O(B * H * BLOCK_Q * BLOCK_K).
"""
from __future__ import annotations

import torch
from torch import Tensor

from multihead.kernels._common import apply_mask, causal_keep, compute_dtype, grouped_mask
from multihead.kernels.mods import NO_MODS, ScoreMods, rel_positions

BLOCK_Q = 256
BLOCK_K = 256


def attention(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, *, is_causal: bool, scale: float,
              mods: ScoreMods = NO_MODS, block_q: int | None = None,
              block_k: int | None = None) -> tuple[Tensor, Tensor]:
    """See multihead.kernels for the shared kernel contract. Returns (out, lse)."""
    B, H, Tq, d = q.shape
    H_kv, Tk, d_v = k.shape[1], k.shape[2], v.shape[-1]
    G = H // H_kv
    bq, bk = block_q or BLOCK_Q, block_k or BLOCK_K
    ct = compute_dtype(q.dtype)
    offset = Tk - Tq                                   # query i sees keys j <= i + offset
    mask5 = grouped_mask(mask, B, H, H_kv, Tq, Tk)     # (B, H_kv, G, Tq, Tk) view, or None
    out = torch.empty(B, H, Tq, d_v, dtype=ct, device=q.device)
    lse = torch.empty(B, H, Tq, dtype=ct, device=q.device)
    # K/V upcast once, not per query block: under autograd each per-block cast would round its
    # share of dK/dV to the input dtype and the blocks would then be summed in fp16/bf16. One
    # cast keeps the sum over query blocks in fp32, rounded once (and converts each key once).
    k, v = k.to(ct), v.to(ct)
    mods = mods.with_causal(is_causal)
    slopes = None if mods.alibi is None else mods.alibi.view(B, H_kv, G, 1, 1)

    for q0 in range(0, Tq, bq):
        q1 = min(q0 + bq, Tq)
        n = q1 - q0
        qb = (q[:, :, q0:q1].to(ct) * scale).reshape(B, H_kv, G * n, d)       # (B, H_kv, G*n, d)
        m = torch.full((B, H_kv, G * n, 1), float("-inf"), dtype=ct, device=q.device)
        l = torch.zeros(B, H_kv, G * n, 1, dtype=ct, device=q.device)
        acc = torch.zeros(B, H_kv, G * n, d_v, dtype=ct, device=q.device)
        # Causal: the block's last query (q1 - 1) sees keys < q1 + offset; later blocks are
        # skipped, and so are key blocks wholly outside a window's band.
        k_start, k_end = mods.key_range(q0, q1, offset, Tk)
        for k0 in range(k_start, k_end, bk):
            k1 = min(k0 + bk, k_end)
            s = torch.matmul(qb, k[:, :, k0:k1].transpose(-2, -1))     # (B, H_kv, G*n, kb)
            s5 = s.view(B, H_kv, G, n, k1 - k0)                               # (B, H_kv, G, n, kb)
            if mods.active:
                rel = rel_positions(q0, q1, k0, k1, offset, q.device)          # (n, kb)
                s5 = mods.apply(s5, rel, slopes, mods.window_cuts(q0, q1, k0, k1, offset))
                s = s5.view(B, H_kv, G * n, k1 - k0)
            if mask5 is not None:
                apply_mask(s5, mask5[:, :, :, q0:q1, k0:k1])
            if is_causal and k1 - 1 > q0 + offset:   # block straddles the diagonal
                apply_mask(s5, causal_keep(q0, q1, k0, k1, offset, q.device))
            m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
            m_safe = torch.where(torch.isneginf(m_new), torch.zeros_like(m_new), m_new)
            alpha = torch.exp(m - m_safe)                                     # 0 while m = -inf
            p = torch.exp(s - m_safe)                                         # (B, H_kv, G*n, kb)
            l = l * alpha + p.sum(dim=-1, keepdim=True)
            acc = acc * alpha + torch.matmul(p, v[:, :, k0:k1])        # (B, H_kv, G*n, d_v)
            m = m_new
        m = torch.where(torch.isneginf(m), torch.zeros_like(m), m)
        ob = acc / torch.where(l > 0, l, torch.ones_like(l))                  # empty rows stay 0
        out[:, :, q0:q1] = ob.view(B, H, n, d_v)
        lse[:, :, q0:q1] = (m + torch.log(l)).view(B, H, n)
    return out, lse.to(torch.float64 if ct == torch.float64 else torch.float32)
