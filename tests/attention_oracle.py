"""A float64 oracle for attention with flash-attention's score modifications, written the obvious
way (repeat K/V per query head, build every [Tq, Tk] mask in full), sharing no code with
multihead.kernels. Also the same attention in torch SDPA in the inputs' dtype (softcap applied by
hand to an explicit score matrix where SDPA cannot, see sdpa_mods)."""
from __future__ import annotations

import torch
import torch.nn.functional as F


def band_keep(tq: int, tk: int, window=(-1, -1), is_causal=False, device=None) -> torch.Tensor:
    """Bool [Tq, Tk]: query i (position i + Tk - Tq) may see key j under the window and causality."""
    pos = torch.arange(tq, device=device)[:, None] + (tk - tq)
    j = torch.arange(tk, device=device)[None, :]
    keep = torch.ones(tq, tk, dtype=torch.bool, device=device)
    left, right = window
    if is_causal:
        right = 0 if right < 0 else min(right, 0)
    if left >= 0:
        keep &= j >= pos - left
    if right >= 0:
        keep &= j <= pos + right
    return keep


def alibi_bias(slopes: torch.Tensor, B: int, H: int, tq: int, tk: int) -> torch.Tensor:
    """Float64 [B, H, Tq, Tk]: -slope[b, h] * |pos_i - j|."""
    pos = torch.arange(tq)[:, None] + (tk - tq)
    dist = (pos - torch.arange(tk)[None, :]).abs().double()
    return -slopes.double().expand(B, H)[:, :, None, None] * dist


def oracle(q, k, v, attn_mask=None, is_causal=False, scale=None, window=(-1, -1), softcap=0.0,
           alibi_slopes=None):
    """(out, lse) in float64; rows that see no key give 0 and -inf."""
    B, H, Tq, d = q.shape
    G = H // k.shape[1]
    Tk = k.shape[2]
    q, k, v = q.double(), k.double().repeat_interleave(G, 1), v.double().repeat_interleave(G, 1)
    s = q @ k.transpose(-2, -1) * (d ** -0.5 if scale is None else scale)
    if softcap:
        s = softcap * torch.tanh(s / softcap)
    if alibi_slopes is not None:
        s = s + alibi_bias(alibi_slopes, B, H, Tq, Tk)
    keep = band_keep(Tq, Tk, window, is_causal).expand(B, H, Tq, Tk)
    if attn_mask is not None and attn_mask.dtype == torch.bool:
        keep = keep & attn_mask
    elif attn_mask is not None:
        s = s + attn_mask.double()
    s = s.masked_fill(~keep, float("-inf"))
    m = s.amax(-1, keepdim=True)
    m = torch.where(torch.isinf(m), torch.zeros_like(m), m)
    e = torch.exp(s - m)
    l = e.sum(-1, keepdim=True)
    out = (e / torch.where(l > 0, l, torch.ones_like(l))) @ v
    return out, (m + torch.log(l)).squeeze(-1)


def sdpa_mods(q, k, v, attn_mask=None, is_causal=False, window=(-1, -1), softcap=0.0, alibi_slopes=None):
    """PyTorch's own attention in q's dtype: SDPA with the window / ALiBi as a float mask; with a
    softcap (which SDPA lacks) the scores are built, capped and softmaxed in q's dtype by torch ops."""
    B, H, Tq, d = q.shape
    G = H // k.shape[1]
    Tk = k.shape[2]
    k, v = k.repeat_interleave(G, 1), v.repeat_interleave(G, 1)
    keep = band_keep(Tq, Tk, window, is_causal).expand(B, H, Tq, Tk)
    if attn_mask is not None and attn_mask.dtype == torch.bool:
        keep = keep & attn_mask
    bias = torch.zeros(B, H, Tq, Tk, dtype=q.dtype).masked_fill(~keep, float("-inf"))
    if alibi_slopes is not None:
        bias = bias + alibi_bias(alibi_slopes, B, H, Tq, Tk).to(q.dtype)
    if attn_mask is not None and attn_mask.dtype != torch.bool:
        bias = bias + attn_mask.to(q.dtype)
    if not softcap:
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
        return torch.nan_to_num(out)          # SDPA gives NaN for rows that see nothing; we give 0
    s = (q @ k.transpose(-2, -1)) * d ** -0.5
    s = softcap * torch.tanh(s / softcap) + bias
    p = torch.softmax(s, dim=-1).nan_to_num()
    return p @ v
