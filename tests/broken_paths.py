"""Planted bugs that hide in one path of a fast attention kernel (issue 15), next to correct
implementations of the same paths, for the checker's tests and for trying by hand:

    multihead check tests/broken_paths.py:online_no_rescale

Every function has the SDPA signature (q [B, H, Tq, d], k/v [B, H_kv, Tk, d], bool mask True =
attend or float mask added to the scores, is_causal aligned bottom-right). Like a real kernel
library, `dispatch` sends short key sequences to a plain materialized path and long ones to an
online-softmax (tiled) path, and one query row (Tq = 1) to a split-K decode path, so a bug in
one path is invisible to inputs that take another. Each bug is one line marked `# BUG:`.
PATH_BUGS maps each name to the checks that must fail, as broken_impls.BUGS does.
"""
from __future__ import annotations

import math

import torch

SHORT = 128        # Tk at or below: the materialized path
BLOCK = 64         # key block of the online softmax
SPLITS = 4         # parts of the split-K decode


def _wide(t: torch.Tensor) -> torch.dtype:
    """The dtype every path computes in: float64 for float64 inputs (docs/checker.md, the float64
    contract), float32 for float32, bfloat16 and float16."""
    return torch.float64 if t.dtype == torch.float64 else torch.float32


def _bias(q, k, attn_mask, is_causal, causal_offset=None):
    """Float [.., Tq, Tk] added to the scaled scores: 0 attend, -inf masked (bool masks), or the float mask."""
    Tq, Tk = q.shape[2], k.shape[2]
    bias = torch.zeros(Tq, Tk, dtype=_wide(q), device=q.device)
    if is_causal:
        off = Tk - Tq if causal_offset is None else causal_offset
        keep = torch.arange(Tk, device=q.device)[None, :] <= torch.arange(Tq, device=q.device)[:, None] + off
        bias = bias.masked_fill(~keep, float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            bias = bias.masked_fill(~attn_mask, float("-inf"))
        else:
            bias = bias + attn_mask.to(bias.dtype)
    return bias


def _expand(q, k, v):
    G = q.shape[1] // k.shape[1]
    return k.repeat_interleave(G, 1), v.repeat_interleave(G, 1)


def _scale(q, scale):
    return q.shape[-1] ** -0.5 if scale is None else scale


def materialized(q, k, v, bias, scale):
    """softmax(q k^T * scale + bias) v in float32 (float64 for float64 inputs); rows that see nothing give 0."""
    w = _wide(q)
    s = (q.to(w) @ k.to(w).transpose(-2, -1)) * scale + bias
    m = s.amax(-1, keepdim=True)
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    p = torch.exp(s - m)
    return ((p @ v.to(w)) / p.sum(-1, keepdim=True).clamp_min(1e-30)).to(q.dtype)


def online(q, k, v, bias, scale, *, rescale=True, tail=True, acc_dtype=None, safe_max=True):
    """FlashAttention-style online softmax over key blocks of BLOCK; bias [.., Tq, Tk]; the running
    sum and output in acc_dtype (default: the compute dtype, _wide)."""
    Tk = k.shape[2]
    w = _wide(q)
    acc_dtype = acc_dtype or w
    bias = bias.expand(*q.shape[:3], Tk)
    m = torch.full(q.shape[:3] + (1,), float("-inf"), dtype=w, device=q.device)
    l = torch.zeros(q.shape[:3] + (1,), dtype=acc_dtype, device=q.device)           # noqa: E741
    acc = torch.zeros(q.shape[:3] + (v.shape[-1],), dtype=acc_dtype, device=q.device)
    end = Tk if tail else Tk // BLOCK * BLOCK
    for j in range(0, end, BLOCK):
        s = (q.to(w) @ k[:, :, j:j + BLOCK].to(w).transpose(-2, -1)) * scale + bias[..., j:j + BLOCK]
        m_new = torch.maximum(m, s.amax(-1, keepdim=True))
        m_use = torch.where(torch.isfinite(m_new), m_new, torch.zeros_like(m_new)) if safe_max else m_new
        alpha, p = torch.exp(m - m_use), torch.exp(s - m_use)
        l = l * alpha.to(acc_dtype) + p.sum(-1, keepdim=True).to(acc_dtype)        # noqa: E741
        pv = (p @ v[:, :, j:j + BLOCK].to(w)).to(acc_dtype)
        acc = acc * alpha.to(acc_dtype) + pv if rescale else acc + pv
        m = m_new
    return (acc.to(w) / l.to(w).clamp_min(1e-30)).to(q.dtype)


def split_k(q, k, v, bias, scale, *, merge="lse"):
    """One query row: SPLITS parts of the keys, each (m_i, l_i, o_i), merged by log-sum-exp."""
    Tk = k.shape[2]
    w = _wide(q)
    bias = bias.expand(*q.shape[:3], Tk)
    bounds = [round(i * Tk / SPLITS) for i in range(SPLITS + 1)]
    parts = []
    for a, b in zip(bounds, bounds[1:]):
        if b > a:
            s = (q.to(w) @ k[:, :, a:b].to(w).transpose(-2, -1)) * scale + bias[..., a:b]
            m = s.amax(-1, keepdim=True)
            m = torch.where(torch.isfinite(m), m, torch.full_like(m, -1e30))
            p = torch.exp(s - m)
            parts.append((m, p.sum(-1, keepdim=True), (p @ v[:, :, a:b].to(w))))
    m_all = torch.stack([m for m, _, _ in parts]).amax(0)
    if merge == "lse":
        w = [torch.exp(m - m_all) for m, _, _ in parts]
    else:
        w = [torch.ones_like(m) for m, _, _ in parts]                 # (planted bug variant)
    num = sum(wi * o for wi, (_, _, o) in zip(w, parts))
    den = sum(wi * li for wi, (_, li, _) in zip(w, parts))
    return (num / den.clamp_min(1e-30)).to(q.dtype)


def dispatch(q, k, v, attn_mask=None, is_causal=False, scale=None):
    """The correct three-path kernel every entry below departs from by one line."""
    k, v = _expand(q, k, v)
    bias, s = _bias(q, k, attn_mask, is_causal), _scale(q, scale)
    if q.shape[2] == 1 and k.shape[2] > SHORT:
        return split_k(q, k, v, bias, s)
    if k.shape[2] > SHORT:
        return online(q, k, v, bias, s)
    return materialized(q, k, v, bias, s)


def correct_packed_gqa(q, k, v, attn_mask=None, is_causal=False, scale=None):
    """Packed GQA, as fast kernels do: the G query heads of a group folded into the query axis,
    [B, H_kv, G*Tq, d], so each KV head is read once; the mask rows are repeated per head."""
    B, H, Tq, d = q.shape
    Hk, Tk = k.shape[1], k.shape[2]
    G = H // Hk
    qp = q.reshape(B, Hk, G * Tq, d)                                  # row g*Tq + i = head kv*G+g, query i
    bias = _bias(q, k, attn_mask, is_causal).expand(B, H, Tq, Tk).reshape(B, Hk, G * Tq, Tk)
    return materialized(qp, k, v, bias, _scale(q, scale)).reshape(B, H, Tq, v.shape[-1])


def correct_split_k(q, k, v, attn_mask=None, is_causal=False, scale=None):
    """Split-K for every query row count (not only decode)."""
    k, v = _expand(q, k, v)
    return split_k(q, k, v, _bias(q, k, attn_mask, is_causal), _scale(q, scale))


def correct_online(q, k, v, attn_mask=None, is_causal=False, scale=None):
    k, v = _expand(q, k, v)
    return online(q, k, v, _bias(q, k, attn_mask, is_causal), _scale(q, scale))


# -- the three ----------------------------------------------------------------------------
def packed_gqa_causal_folded(q, k, v, attn_mask=None, is_causal=False, scale=None):
    B, H, Tq, d = q.shape
    Hk, Tk = k.shape[1], k.shape[2]
    G = H // Hk
    qp = q.reshape(B, Hk, G * Tq, d)
    bias = _bias(q, k, attn_mask, False).expand(B, H, Tq, Tk).reshape(B, Hk, G * Tq, Tk)
    if is_causal:
        keep = torch.ones(G * Tq, Tk, dtype=torch.bool).tril(Tk - Tq)  # BUG: over the G*Tq folded rows
        bias = bias.masked_fill(~keep, float("-inf"))
    return materialized(qp, k, v, bias, _scale(q, scale)).reshape(B, H, Tq, v.shape[-1])


def online_no_rescale(q, k, v, attn_mask=None, is_causal=False, scale=None):
    k, v = _expand(q, k, v)
    bias, s = _bias(q, k, attn_mask, is_causal), _scale(q, scale)
    if k.shape[2] > SHORT:
        return online(q, k, v, bias, s, rescale=False)                # BUG: acc + p @ v, not acc * alpha + p @ v
    return materialized(q, k, v, bias, s)


def padding_first_sequence(q, k, v, attn_mask=None, is_causal=False, scale=None):
    if attn_mask is not None and attn_mask.dim() == 4:
        attn_mask = attn_mask[:1]                                     # BUG: sequence 0's mask for the batch
    return dispatch(q, k, v, attn_mask, is_causal, scale)


# -- one path each -------------------------------------------------------------------------------
def split_k_merge_unweighted(q, k, v, attn_mask=None, is_causal=False, scale=None):
    """Decode only (Tq = 1 over more than SHORT keys)."""
    k, v = _expand(q, k, v)
    bias, s = _bias(q, k, attn_mask, is_causal), _scale(q, scale)
    if q.shape[2] == 1 and k.shape[2] > SHORT:
        return split_k(q, k, v, bias, s, merge="sum")                 # BUG: parts merged without exp(m_i - m)
    return dispatch(q, k, v, attn_mask, is_causal, scale)


def decode_hides_self(q, k, v, attn_mask=None, is_causal=False, scale=None):
    """Decode only: the new token does not see its own key."""
    off = k.shape[2] - 2 if q.shape[2] == 1 else None                 # BUG: decode limit Tk - 2, not Tk - 1
    k2, v2 = _expand(q, k, v)
    return materialized(q, k2, v2, _bias(q, k2, attn_mask, is_causal, off), _scale(q, scale))


def decode_ignores_mask(q, k, v, attn_mask=None, is_causal=False, scale=None):
    if q.shape[2] == 1:
        attn_mask = None                                              # BUG: the decode path drops the mask
    return dispatch(q, k, v, attn_mask, is_causal, scale)


def decode_first_cache(q, k, v, attn_mask=None, is_causal=False, scale=None):
    """Batch > 1 at decode only: every sequence reads sequence 0's cache."""
    if q.shape[2] == 1:
        k, v = k[:1].expand_as(k), v[:1].expand_as(v)                 # BUG: batch stride 0 in the decode path
    return dispatch(q, k, v, attn_mask, is_causal, scale)


def tail_block_dropped(q, k, v, attn_mask=None, is_causal=False, scale=None):
    """Long keys whose count is not a multiple of BLOCK only."""
    k, v = _expand(q, k, v)
    bias, s = _bias(q, k, attn_mask, is_causal), _scale(q, scale)
    if k.shape[2] > SHORT:
        return online(q, k, v, bias, s, tail=False)                   # BUG: stops at the last full block
    return materialized(q, k, v, bias, s)


def query_tail_dropped(q, k, v, attn_mask=None, is_causal=False, scale=None):
    """Prefill with more than 64 query rows, not a multiple of 64: the last query tile is skipped."""
    out = torch.zeros(*q.shape[:3], v.shape[-1], dtype=q.dtype)
    Tq, tile = q.shape[2], 64
    k2, v2 = _expand(q, k, v)
    bias = _bias(q, k2, attn_mask, is_causal).expand(*q.shape[:3], k.shape[2])
    for i in range(0, Tq - Tq % tile if Tq > tile else Tq, tile):     # BUG: the partial last tile is skipped
        out[:, :, i:i + tile] = materialized(q[:, :, i:i + tile], k2, v2, bias[:, :, i:i + tile], _scale(q, scale))
    return out


def bf16_accumulates_in_bf16(q, k, v, attn_mask=None, is_causal=False, scale=None):
    """bfloat16 inputs only: the online softmax keeps its running sum and output in bf16."""
    k, v = _expand(q, k, v)
    bias, s = _bias(q, k, attn_mask, is_causal), _scale(q, scale)
    if k.shape[2] > SHORT:
        acc = q.dtype if q.dtype == torch.bfloat16 else None          # BUG: should always be float32 (None)
        return online(q, k, v, bias, s, acc_dtype=acc)
    return materialized(q, k, v, bias, s)


def gqa_shift_groups(q, k, v, attn_mask=None, is_causal=False, scale=None):
    """Right for G = 1, 2, 4, 8: the KV head is found with a shift."""
    G = q.shape[1] // k.shape[1]
    idx = torch.arange(q.shape[1]) >> int(math.log2(G))               # BUG: h >> log2(G) is h // G only for G = 2^n
    idx = idx.clamp_max(k.shape[1] - 1)
    k, v = k.index_select(1, idx), v.index_select(1, idx)
    return dispatch(q, k, v, attn_mask, is_causal, scale)


def float_mask_as_bool(q, k, v, attn_mask=None, is_causal=False, scale=None):
    if attn_mask is not None and attn_mask.dtype != torch.bool:
        attn_mask = attn_mask.bool()                                  # BUG: nonzero (-inf) = attend, 0 = masked
    return dispatch(q, k, v, attn_mask, is_causal, scale)


def bias_scaled(q, k, v, attn_mask=None, is_causal=False, scale=None):
    k, v = _expand(q, k, v)
    s = _scale(q, scale)
    return materialized(q, k, v, _bias(q, k, attn_mask, is_causal) * s, s)   # BUG: (qk + bias) * scale


def online_nan_masked_block(q, k, v, attn_mask=None, is_causal=False, scale=None):
    """Long keys only: while a row's key blocks are all masked (left padding, fully masked rows)
    its running max is -inf."""
    k, v = _expand(q, k, v)
    bias, s = _bias(q, k, attn_mask, is_causal), _scale(q, scale)
    if k.shape[2] > SHORT:
        return online(q, k, v, bias, s, safe_max=False)               # BUG: exp(-inf - (-inf)) = NaN
    return materialized(q, k, v, bias, s)


def mixed_alignment(q, k, v, attn_mask=None, is_causal=False, scale=None):
    """Top-left in prefill (like torch SDPA), bottom-right at decode: two conventions at once."""
    off = None if q.shape[2] == 1 else 0                              # BUG: pick one convention for every Tq
    k2, v2 = _expand(q, k, v)
    return materialized(q, k2, v2, _bias(q, k2, attn_mask, is_causal, off), _scale(q, scale))


def mask_flattened_head_major(q, k, v, attn_mask=None, is_causal=False, scale=None):
    """(B, H) flattened b-major for q, k, v but h-major for the mask: right for B = 1 only."""
    B, H, Tq, d = q.shape
    k2, v2 = _expand(q, k, v)
    bias = _bias(q, k2, attn_mask, is_causal).expand(B, H, Tq, k.shape[2])
    flat = bias.transpose(0, 1).reshape(B * H, 1, Tq, -1)            # BUG: bias.reshape(B * H, ...) (b-major)
    out = materialized(q.reshape(B * H, 1, Tq, d), k2.reshape(B * H, 1, -1, d), v2.reshape(B * H, 1, -1, d),
                       flat, _scale(q, scale))
    return out.reshape(B, H, Tq, -1)


# name -> (implementation, signature, checks that must fail, check_attention keyword arguments)
PATH_BUGS = {
    "packed_gqa_causal_folded": (packed_gqa_causal_folded, "sdpa", {"gqa_masks"}, {}),
    "online_no_rescale": (online_no_rescale, "sdpa", {"long_keys"}, {}),
    "padding_first_sequence": (padding_first_sequence, "sdpa", {"padding"}, {}),
    "split_k_merge_unweighted": (split_k_merge_unweighted, "sdpa", {"decode"}, {}),
    "decode_hides_self": (decode_hides_self, "sdpa", {"causal_alignment"}, {}),
    "decode_ignores_mask": (decode_ignores_mask, "sdpa", {"decode"}, {}),
    "decode_first_cache": (decode_first_cache, "sdpa", {"decode"}, {}),
    "tail_block_dropped": (tail_block_dropped, "sdpa", {"long_keys"}, {}),
    "query_tail_dropped": (query_tail_dropped, "sdpa", {"long_keys"}, {}),
    "bf16_accumulates_in_bf16": (bf16_accumulates_in_bf16, "sdpa", {"dtypes"}, {}),
    "gqa_shift_groups": (gqa_shift_groups, "sdpa", {"gqa_grouping"}, {}),
    "float_mask_as_bool": (float_mask_as_bool, "sdpa", {"additive_mask"}, {}),
    "bias_scaled": (bias_scaled, "sdpa", {"additive_mask"}, {}),
    "online_nan_masked_block": (online_nan_masked_block, "sdpa", {"padding"}, {}),
    "mixed_alignment": (mixed_alignment, "sdpa", {"causal_alignment"}, {}),
    "mask_flattened_head_major": (mask_flattened_head_major, "sdpa", {"padding"}, {}),
}
CORRECT_PATHS = {"dispatch": dispatch, "correct_packed_gqa": correct_packed_gqa, "correct_split_k": correct_split_k,
                 "correct_online": correct_online}
