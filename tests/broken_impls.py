"""A catalogue of deliberately broken attention implementations, one per classic bug (and a few
with two at once), for the checker's tests and for trying `multihead check` by hand:

    multihead check tests/broken_impls.py:no_scale

Every function has the SDPA signature (q [B, H, Tq, d], k/v [B, H_kv, Tk, d], bool mask True =
attend) unless it says otherwise; `correct` is the same code with no bug. Each bug is a single
visible line marked `# BUG:`. BUGS maps each name to the checks that must fail.
"""
from __future__ import annotations

import math

import torch
from torch import nn


def _expand(k, n_heads):
    return k.repeat_interleave(n_heads // k.shape[1], dim=1)          # (B, H, Tk, d): h reads h // G


def _keep(q, k, attn_mask, is_causal, offset=None):
    """Bool [.., Tq, Tk], True = attend; causal aligned bottom-right unless offset is given."""
    Tq, Tk = q.shape[2], k.shape[2]
    keep = torch.ones(Tq, Tk, dtype=torch.bool)
    if is_causal:
        off = Tk - Tq if offset is None else offset
        keep = torch.arange(Tk)[None, :] <= torch.arange(Tq)[:, None] + off
    if attn_mask is not None:
        keep = keep & attn_mask
    return keep


def _softmax_rows(s):
    """Stable softmax over keys with rows that see nothing sent to 0 (not NaN)."""
    m = s.amax(-1, keepdim=True)
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    e = torch.exp(s - m)
    return e / e.sum(-1, keepdim=True).clamp_min(torch.finfo(s.dtype).tiny)


def correct(q, k, v, attn_mask=None, is_causal=False, scale=None):
    """The bug-free baseline every entry below departs from by one line."""
    k, v = _expand(k, q.shape[1]), _expand(v, q.shape[1])
    s = (q @ k.transpose(-2, -1)) * (scale if scale is not None else q.shape[-1] ** -0.5)   # (B, H, Tq, Tk)
    s = s.masked_fill(~_keep(q, k, attn_mask, is_causal), float("-inf"))
    return _softmax_rows(s) @ v                                                             # (B, H, Tq, d)


def no_scale(q, k, v, attn_mask=None, is_causal=False, scale=None):
    k, v = _expand(k, q.shape[1]), _expand(v, q.shape[1])
    s = q @ k.transpose(-2, -1)                                       # BUG: 1/sqrt(d_k) forgotten
    s = s.masked_fill(~_keep(q, k, attn_mask, is_causal), float("-inf"))
    return _softmax_rows(s) @ v


def scale_by_d(q, k, v, attn_mask=None, is_causal=False, scale=None):
    k, v = _expand(k, q.shape[1]), _expand(v, q.shape[1])
    s = (q @ k.transpose(-2, -1)) / q.shape[-1]                        # BUG: divides by d_k, not sqrt(d_k)
    s = s.masked_fill(~_keep(q, k, attn_mask, is_causal), float("-inf"))
    return _softmax_rows(s) @ v


def no_max_subtraction(q, k, v, attn_mask=None, is_causal=False, scale=None):
    k, v = _expand(k, q.shape[1]), _expand(v, q.shape[1])
    s = (q @ k.transpose(-2, -1)) * (scale if scale is not None else q.shape[-1] ** -0.5)
    s = s.masked_fill(~_keep(q, k, attn_mask, is_causal), float("-inf"))
    e = torch.exp(s)                                                  # BUG: exp of the raw logits
    return (e / e.sum(-1, keepdim=True).clamp_min(torch.finfo(s.dtype).tiny)) @ v


def causal_leak(q, k, v, attn_mask=None, is_causal=False, scale=None):
    k, v = _expand(k, q.shape[1]), _expand(v, q.shape[1])
    s = (q @ k.transpose(-2, -1)) * (scale if scale is not None else q.shape[-1] ** -0.5)
    off = k.shape[2] - q.shape[2] + 1                                 # BUG: off by one, sees the next token
    s = s.masked_fill(~_keep(q, k, attn_mask, is_causal, offset=off), float("-inf"))
    return _softmax_rows(s) @ v


def inverted_mask(q, k, v, attn_mask=None, is_causal=False, scale=None):
    k, v = _expand(k, q.shape[1]), _expand(v, q.shape[1])
    s = (q @ k.transpose(-2, -1)) * (scale if scale is not None else q.shape[-1] ** -0.5)
    if attn_mask is not None:
        attn_mask = ~attn_mask                                        # BUG: True read as "masked"
    s = s.masked_fill(~_keep(q, k, attn_mask, is_causal), float("-inf"))
    return _softmax_rows(s) @ v


def nan_masked_rows(q, k, v, attn_mask=None, is_causal=False, scale=None):
    k, v = _expand(k, q.shape[1]), _expand(v, q.shape[1])
    s = (q @ k.transpose(-2, -1)) * (scale if scale is not None else q.shape[-1] ** -0.5)
    s = s.masked_fill(~_keep(q, k, attn_mask, is_causal), float("-inf"))
    return torch.softmax(s, dim=-1) @ v                               # BUG: an all -inf row gives 0/0 = NaN


def top_left_causal(q, k, v, attn_mask=None, is_causal=False, scale=None):
    """Meant for decoding over a KV cache (bottom-right), but aligned top-left."""
    k, v = _expand(k, q.shape[1]), _expand(v, q.shape[1])
    s = (q @ k.transpose(-2, -1)) * (scale if scale is not None else q.shape[-1] ** -0.5)
    s = s.masked_fill(~_keep(q, k, attn_mask, is_causal, offset=0), float("-inf"))   # BUG: query i sees 0..i
    return _softmax_rows(s) @ v


def causal_offset_by_one(q, k, v, attn_mask=None, is_causal=False, scale=None):
    """Right when Tq == Tk, off by one as soon as there is a cache (Tq < Tk)."""
    k, v = _expand(k, q.shape[1]), _expand(v, q.shape[1])
    s = (q @ k.transpose(-2, -1)) * (scale if scale is not None else q.shape[-1] ** -0.5)
    Tq, Tk = q.shape[2], k.shape[2]
    off = Tk - Tq - 1 if Tk > Tq else 0                               # BUG: "- 1" for the cached part
    s = s.masked_fill(~_keep(q, k, attn_mask, is_causal, offset=off), float("-inf"))
    return _softmax_rows(s) @ v


def gqa_tile(q, k, v, attn_mask=None, is_causal=False, scale=None):
    g = q.shape[1] // k.shape[1]
    k, v = k.repeat(1, g, 1, 1), v.repeat(1, g, 1, 1)                 # BUG: head h reads KV head h % H_kv
    s = (q @ k.transpose(-2, -1)) * (scale if scale is not None else q.shape[-1] ** -0.5)
    s = s.masked_fill(~_keep(q, k, attn_mask, is_causal), float("-inf"))
    return _softmax_rows(s) @ v


def batch_mixing(q, k, v, attn_mask=None, is_causal=False, scale=None):
    """Keys of the whole batch packed into one sequence, as a careless cache might."""
    B, H, Tq, d = q.shape
    k, v = _expand(k, H), _expand(v, H)
    Tk = k.shape[2]
    s = (q @ k.transpose(-2, -1)) * (scale if scale is not None else d ** -0.5)
    s = s.masked_fill(~_keep(q, k, attn_mask, is_causal), float("-inf"))                   # (B, H, Tq, Tk)
    s_all = torch.einsum("bhqd,chkd->bhqck", q, k) * (scale if scale is not None else d ** -0.5)
    s_all = s_all.masked_fill(~_keep(q, k, None, is_causal)[:, None, :], float("-inf"))
    s_all = s_all.reshape(B, H, Tq, B * Tk)                           # BUG: every sequence's keys, one row
    s_all = s_all.masked_fill(~torch.isfinite(s).repeat(1, 1, 1, B), float("-inf"))
    w = _softmax_rows(s_all)
    v_all = v.permute(1, 0, 2, 3).reshape(1, H, B * Tk, -1)
    return w @ v_all


def weights_not_normalized(q, k, v, attn_mask=None, is_causal=False, scale=None):
    k, v = _expand(k, q.shape[1]), _expand(v, q.shape[1])
    s = (q @ k.transpose(-2, -1)) * (scale if scale is not None else q.shape[-1] ** -0.5)
    s = s.masked_fill(~_keep(q, k, attn_mask, is_causal), float("-inf"))
    return torch.softmax(s, dim=-2).nan_to_num(0.0) @ v               # BUG: softmax over queries, not keys


def no_scale_no_max(q, k, v, attn_mask=None, is_causal=False, scale=None):
    """Two bugs: the textbook formula typed in literally."""
    k, v = _expand(k, q.shape[1]), _expand(v, q.shape[1])
    s = q @ k.transpose(-2, -1)                                       # BUG 1: no 1/sqrt(d_k)
    s = s.masked_fill(~_keep(q, k, attn_mask, is_causal), float("-inf"))
    e = torch.exp(s)                                                  # BUG 2: no max subtraction
    return (e / e.sum(-1, keepdim=True).clamp_min(torch.finfo(s.dtype).tiny)) @ v


def gqa_tile_inverted_mask(q, k, v, attn_mask=None, is_causal=False, scale=None):
    """Two bugs: a port from nn.MultiheadAttention conventions to GQA."""
    g = q.shape[1] // k.shape[1]
    k, v = k.repeat(1, g, 1, 1), v.repeat(1, g, 1, 1)                 # BUG 1: h % H_kv
    s = (q @ k.transpose(-2, -1)) * (scale if scale is not None else q.shape[-1] ** -0.5)
    if attn_mask is not None:
        attn_mask = ~attn_mask                                        # BUG 2: True read as "masked"
    s = s.masked_fill(~_keep(q, k, attn_mask, is_causal), float("-inf"))
    return _softmax_rows(s) @ v


# -- HF-style attention functions: fn(module, query, key, value, attention_mask, scaling, ...) ------
def _hf(module, query, key, value, attention_mask, scaling, *, grouping="interleave", use_scaling=True,
        out_layout="transpose", softmax_dim=-1):
    g = module.num_key_value_groups
    if grouping == "interleave":
        key, value = key.repeat_interleave(g, dim=1), value.repeat_interleave(g, dim=1)
    else:
        key, value = key.repeat(1, g, 1, 1), value.repeat(1, g, 1, 1)
    w = query @ key.transpose(2, 3)
    if use_scaling:
        w = w * scaling
    if attention_mask is not None:
        w = w + attention_mask
    w = torch.softmax(w.to(torch.promote_types(w.dtype, torch.float32)), dim=softmax_dim).to(query.dtype)
    out = w @ value                                                   # (B, H, Tq, d)
    if out_layout == "transpose":
        out = out.transpose(1, 2).contiguous()                        # (B, Tq, H, d)
    else:
        out = out.reshape(out.shape[0], out.shape[2], out.shape[1], out.shape[3])
    return out, w


def hf_correct(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
    return _hf(module, query, key, value, attention_mask, scaling)


def hf_ignores_scaling(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
    return _hf(module, query, key, value, attention_mask, scaling, use_scaling=False)   # BUG: scaling unused


def hf_reshape_output(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
    return _hf(module, query, key, value, attention_mask, scaling, out_layout="reshape")  # BUG: no transpose


def hf_gqa_tile(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
    return _hf(module, query, key, value, attention_mask, scaling, grouping="tile")       # BUG: h % H_kv


def hf_softmax_over_queries(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
    return _hf(module, query, key, value, attention_mask, scaling, softmax_dim=-2)        # BUG: wrong axis


# -- modules with the MultiHeadAttention interface --------------------------------------------------
class SimpleMHA(nn.Module):
    """x [B, T, D] -> [B, T, D]; GQA when n_kv_heads < n_heads. The `bugs` switch on mistakes."""

    def __init__(self, d_model: int, n_heads: int, n_kv_heads: int | None = None, bugs: tuple[str, ...] = ()):
        super().__init__()
        self.d_model, self.n_heads = d_model, n_heads
        self.n_kv_heads = n_kv_heads or n_heads
        self.head_dim = d_model // n_heads
        self.bugs = set(bugs)
        g = torch.Generator().manual_seed(7)
        kv_dim = self.n_kv_heads * self.head_dim
        self.wq, self.wk = nn.Linear(d_model, d_model, bias=False), nn.Linear(d_model, kv_dim, bias=False)
        self.wv, self.wo = nn.Linear(d_model, kv_dim, bias=False), nn.Linear(d_model, d_model, bias=False)
        for lin in (self.wq, self.wk, self.wv, self.wo):
            with torch.no_grad():
                lin.weight.copy_(torch.randn(lin.weight.shape, generator=g) / math.sqrt(d_model))

    def forward(self, x, *, attn_mask=None, is_causal=False):
        B, T, D = x.shape
        H, Hkv, d = self.n_heads, self.n_kv_heads, self.head_dim
        q = self.wq(x).view(B, T, H, d).transpose(1, 2)               # (B, H, T, d)
        k = self.wk(x).view(B, T, Hkv, d).transpose(1, 2)             # (B, H_kv, T, d)
        v = self.wv(x).view(B, T, Hkv, d).transpose(1, 2)
        fn = no_max_subtraction if "no_max_subtraction" in self.bugs else correct
        if "causal_leak" in self.bugs:
            fn = causal_leak
        o = fn(q, k, v, attn_mask=attn_mask, is_causal=is_causal)     # (B, H, T, d)
        if "reshape_without_transpose" in self.bugs:
            o = o.reshape(B, T, D)                                    # BUG: heads and positions scrambled
        else:
            o = o.transpose(1, 2).reshape(B, T, D)                    # (B, T, H, d) -> (B, T, D)
        return self.wo(o)


class HeadWidthD(nn.Module):
    """A correct module whose head width is ``self.d`` and whose model width is no attribute at all
    (issue 25 item 4: `d` is also a usual name of the model width; the checker must find D = 64 from
    the weights, not call it with x [B, T, 16])."""

    def __init__(self, n_heads: int = 4, n_kv_heads: int = 2, d: int = 16):
        super().__init__()
        self.n_heads, self.n_kv_heads, self.d = n_heads, n_kv_heads, d
        g = torch.Generator().manual_seed(8)
        width, kv = n_heads * d, n_kv_heads * d
        self.q_proj, self.k_proj = nn.Linear(width, width, bias=False), nn.Linear(width, kv, bias=False)
        self.v_proj, self.o_proj = nn.Linear(width, kv, bias=False), nn.Linear(width, width, bias=False)
        for lin in (self.q_proj, self.k_proj, self.v_proj, self.o_proj):
            with torch.no_grad():
                lin.weight.copy_(torch.randn(lin.weight.shape, generator=g) / math.sqrt(width))

    def forward(self, x, *, attn_mask=None, is_causal=False):
        B, T, _ = x.shape
        q = self.q_proj(x).view(B, T, self.n_heads, self.d).transpose(1, 2)
        k = self.k_proj(x).view(B, T, self.n_kv_heads, self.d).transpose(1, 2)
        v = self.v_proj(x).view(B, T, self.n_kv_heads, self.d).transpose(1, 2)
        o = correct(q, k, v, attn_mask=attn_mask, is_causal=is_causal)
        return self.o_proj(o.transpose(1, 2).reshape(B, T, -1))


class ReshapeWithoutTranspose(SimpleMHA):
    def __init__(self, d_model: int, n_heads: int, n_kv_heads: int | None = None):
        super().__init__(d_model, n_heads, n_kv_heads, bugs=("reshape_without_transpose",))


class ReshapeAndNoMax(SimpleMHA):
    """Two bugs in one module."""
    def __init__(self, d_model: int, n_heads: int, n_kv_heads: int | None = None):
        super().__init__(d_model, n_heads, n_kv_heads, bugs=("reshape_without_transpose", "no_max_subtraction"))


class LeakyModule(SimpleMHA):
    def __init__(self, d_model: int, n_heads: int, n_kv_heads: int | None = None):
        super().__init__(d_model, n_heads, n_kv_heads, bugs=("causal_leak",))


# name -> (implementation, signature, checks that must fail, check_attention keyword arguments)
BUGS = {
    "no_scale": (no_scale, "sdpa", {"scale"}, {}),
    "scale_by_d": (scale_by_d, "sdpa", {"scale"}, {}),
    "no_max_subtraction": (no_max_subtraction, "sdpa", {"overflow"}, {}),
    "causal_leak": (causal_leak, "sdpa", {"causal_mask"}, {}),
    "inverted_mask": (inverted_mask, "sdpa", {"mask_polarity"}, {}),
    "nan_masked_rows": (nan_masked_rows, "sdpa", {"fully_masked_rows"}, {}),
    "top_left_causal": (top_left_causal, "sdpa", {"causal_alignment"}, {"expect_alignment": "bottom-right"}),
    "causal_offset_by_one": (causal_offset_by_one, "sdpa", {"causal_alignment"}, {}),
    "gqa_tile": (gqa_tile, "sdpa", {"gqa_grouping"}, {}),
    "batch_mixing": (batch_mixing, "sdpa", {"batch_independence"}, {}),
    "weights_not_normalized": (weights_not_normalized, "sdpa", {"normalization"}, {}),
    "no_scale_no_max": (no_scale_no_max, "sdpa", {"scale", "overflow"}, {}),
    "gqa_tile_inverted_mask": (gqa_tile_inverted_mask, "sdpa", {"gqa_grouping", "mask_polarity"}, {}),
    "hf_ignores_scaling": (hf_ignores_scaling, "hf", {"scale"}, {}),
    "hf_reshape_output": (hf_reshape_output, "hf", {"head_independence"}, {}),
    "hf_gqa_tile": (hf_gqa_tile, "hf", {"gqa_grouping"}, {}),
    "hf_softmax_over_queries": (hf_softmax_over_queries, "hf", {"normalization"}, {}),
    "reshape_without_transpose": (ReshapeWithoutTranspose, "module", {"head_layout"}, {}),
    "leaky_module": (LeakyModule, "module", {"causal_mask"}, {}),
    "reshape_and_no_max": (ReshapeAndNoMax, "module", {"head_layout", "overflow"}, {}),
}
