"""The fast prefill backend: blocked online softmax sized for GEMM throughput on a CPU.

Prefill (many queries) is bound by matmul throughput, so the work is cut into few, large,
GEMM-shaped pieces and the softmax's elementwise passes are done in place on a score block that
stays in the last-level cache:

- GQA groups are batched: the G query heads of a KV head and a block of BLOCK_Q queries form the
  R = G * BLOCK_Q rows of one matmul against that KV head's key block, so every score block is
  one bmm over the H_kv heads, [H_kv, R, d] x [H_kv, d, BLOCK_K], M = R large enough for MKL to
  run near its peak, and K/V are never repeated.
- Causal: key blocks entirely above the diagonal are skipped; only blocks that straddle it are
  masked (about half the pairs are computed, as the causal FLOP count 2*B*H*T^2*d assumes).
- Online softmax (running max m, sum l, unnormalized accumulator acc), updated in place:

      m' = max(m, rowmax S)    P = exp(S - m')    alpha = exp(m - m')
      l' = alpha * l + rowsum P      acc' = alpha * acc + P V      out = acc / l, lse = m + log l

  S is overwritten by P (sub_, exp_), and acc is updated by one baddbmm_, so no score-sized
  temporary is allocated per block.
- bf16/fp16: K and V are upcast to fp32 once (each key block is reused by every query block, so
  converting per block would repeat the work T / BLOCK_Q times), queries per block. This CPU has
  no native bf16 matmul (~0.3 GFLOP/s), so fp32 GEMMs are the fast path for 16-bit inputs.

With autograd on, the call is handed to the differentiable tiled backend.
Extra memory: the fp32 copy of K/V for 16-bit inputs (2x their bytes), one score block
[H_kv, R, BLOCK_K] and the per-block state [H_kv, R, d_v]: linear in T.
"""
from __future__ import annotations

import torch
from torch import Tensor

from multihead.kernels import tiled
from multihead.kernels._common import compute_dtype, grouped_mask

# Queries per block (times G rows per KV head) and keys per block. With G=4, d=128 the score block
# [8, 4*128, 512] is 8 MiB of fp32: inside this CPU's 32 MiB L3, and each bmm is ~0.5 GFLOP.
BLOCK_Q = 128
BLOCK_K = 512


def attention(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, *, is_causal: bool, scale: float,
              block_q: int | None = None, block_k: int | None = None) -> tuple[Tensor, Tensor]:
    """See multihead.kernels for the shared kernel contract. Returns (out, lse).

    q [B, H, Tq, d], k [B, H_kv, Tk, d], v [B, H_kv, Tk, d_v] -> out [B, H, Tq, d_v] (compute
    dtype), lse [B, H, Tq].
    """
    if torch.is_grad_enabled() and any(t is not None and t.requires_grad for t in (q, k, v, mask)):
        # Inference kernel (out= buffers, in-place updates): autograd takes the plain path.
        return tiled.attention(q, k, v, mask, is_causal=is_causal, scale=scale)
    B, H, Tq, d = q.shape
    H_kv, Tk, d_v = k.shape[1], k.shape[2], v.shape[-1]
    G = H // H_kv
    ct = compute_dtype(q.dtype)
    bq, bk = block_q or BLOCK_Q, block_k or BLOCK_K
    offset = Tk - Tq                                      # query i sees keys j <= i + offset
    mask5 = grouped_mask(mask, B, H, H_kv, Tq, Tk)        # (B, H_kv, G, Tq, Tk) view, or None
    lowest = torch.finfo(ct).min
    dev = q.device

    out = torch.empty(B, H, Tq, d_v, dtype=ct, device=dev)
    lse = torch.empty(B, H, Tq, dtype=ct, device=dev)
    S = torch.empty(H_kv, G * bq * bk, dtype=ct, device=dev)        # one score block, reused
    for b in range(B):
        kb = k[b] if k.dtype == ct else k[b].to(ct)                  # (H_kv, Tk, d), upcast once
        vb = v[b] if v.dtype == ct else v[b].to(ct)                  # (H_kv, Tk, d_v)
        for q0 in range(0, Tq, bq):
            q1 = min(q0 + bq, Tq)
            n = q1 - q0
            R = G * n
            qb = (q[b, :, q0:q1].to(ct) * scale).reshape(H_kv, R, d)  # (H_kv, R, d) rows (g, t)
            # Causal: the block's last query sees keys < q1 + offset; later key blocks are skipped.
            k_end = min(Tk, q1 + offset) if is_causal else Tk
            m = torch.full((H_kv, R, 1), lowest, dtype=ct, device=dev)
            l = torch.zeros(H_kv, R, 1, dtype=ct, device=dev)
            acc = torch.zeros(H_kv, R, d_v, dtype=ct, device=dev)
            for k0 in range(0, max(k_end, 0), bk):
                k1 = min(k0 + bk, k_end)
                c = k1 - k0
                s = S[:, :R * c].view(H_kv, R, c)
                torch.bmm(qb, kb[:, k0:k1].transpose(1, 2), out=s)   # (H_kv, R, c)
                if mask5 is not None or (is_causal and k1 - 1 > q0 + offset):
                    _mask_block(s.view(H_kv, G, n, c), mask5, b, q0, q1, k0, k1, is_causal, offset)
                m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))   # (H_kv, R, 1)
                m_new.clamp_(min=lowest)       # fully masked rows: exp(-inf - lowest) = 0, not NaN
                s.sub_(m_new).exp_()                                  # P, in place of S
                alpha = torch.exp(m.sub_(m_new))                      # (H_kv, R, 1); 0 at start
                l.mul_(alpha).add_(s.sum(dim=-1, keepdim=True))
                acc.mul_(alpha).baddbmm_(s, vb[:, k0:k1])             # (H_kv, R, d_v)
                m = m_new
            acc.div_(torch.where(l > 0, l, torch.ones_like(l)))      # empty rows stay 0
            out[b, :, q0:q1] = acc.view(H, n, d_v)
            lse[b, :, q0:q1] = m.add_(torch.log(l)).view(H, n)       # -inf where l = 0
    return out, lse.to(torch.float64 if ct == torch.float64 else torch.float32)


def _mask_block(s4: Tensor, mask5: Tensor | None, b: int, q0: int, q1: int, k0: int, k1: int,
                is_causal: bool, offset: int) -> None:
    """Set masked scores of one block in place. s4: (H_kv, G, n, c) view of the scores."""
    neg = float("-inf")
    if mask5 is not None:
        mb = mask5[b, :, :, q0:q1, k0:k1]                                  # (H_kv, G, n, c)
        if mb.dtype == torch.bool:
            s4.masked_fill_(~mb, neg)
        else:
            s4.add_(mb)
    if is_causal and k1 - 1 > q0 + offset:
        qi = torch.arange(q0, q1, device=s4.device).view(-1, 1)            # (n, 1)
        kj = torch.arange(k0, k1, device=s4.device).view(1, -1)            # (1, c)
        s4.masked_fill_(kj > qi + offset, neg)                             # broadcast over H_kv, G
