"""The fast decode backend: a few queries against a long KV cache, streaming K and V once.

Decode is bound by memory traffic: every step reads the whole cache once, so the kernel is
arranged so that each byte of K and V is read exactly once, in large contiguous pieces, and
nothing of cache size is ever written.

Where it can (x86-64 with AVX2/FMA/F16C, a C compiler, no mask, d and d_v multiples of 8, at most
64 query rows per KV head), the work runs in the fused C kernel of fast_decode.c (``_native``):
one pass over each K/V row for all query rows of its group, the V rows prefetched while the
scores are computed, the key splits merged by log-sum-exp in C, three torch ops around one
ctypes call. Everywhere else the torch-op path below runs:

- GQA groups are batched: the G = H / H_kv query heads of a KV head (and its Tq queries) are the
  G*Tq columns of one matmul, so a KV block is read once for all of them and never repeated.
- Keys are walked in chunks of ``CHUNK`` positions for all KV heads at once. A chunk's scores
  [H_kv, C, G*Tq] are small (C*G*Tq per head, 1/32 of the chunk's K for G=4, d=128), so the
  softmax passes over them stay in cache.
- The scores are computed as K_c (q^T): a tall-skinny [C, d] x [d, G*Tq] product that reads K row
  by row; profiling showed it runs ~2x faster than q K_c^T on this CPU (MKL streams A, not B^T).
- bf16/fp16 caches are upcast chunk by chunk into one reused fp32 buffer that stays in cache:
  this CPU has no native bf16 matmul (a bf16 GEMM runs at ~0.3 GFLOP/s), so the arithmetic is
  fp32 while the memory traffic stays 2 bytes per element. The whole cache is never copied.
- Chunks are merged by log-sum-exp (flash-decoding): chunk c keeps its max m_c, its sum
  l_c = sum exp(s - m_c) and its unnormalized output o_c = sum exp(s - m_c) v; then

      m = max_c m_c      l = sum_c exp(m_c - m) l_c      out = sum_c exp(m_c - m) o_c / l

  which is exact (each term is rescaled to the common max). lse = m + log l.

With autograd on (an input requires grad) the call is handed to the differentiable decode
backend. Buffers are allocated once per call at chunk size, so no large allocation (and no page faults
of fresh memory, which cost more than the arithmetic here) happens inside the loop.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import torch
from torch import Tensor

from multihead.kernels import decode, fast_native
from multihead.kernels._common import compute_dtype, grouped_mask, register_attention_op

# Keys per chunk. The fp32 chunk of K for 8 KV heads at d=128 is 8*4096*128*4 B = 16 MiB of
# streamed input; its scores are 8*4096*G*Tq*4 B (0.5 MiB for G=4, Tq=1).
CHUNK = 4096


def attention(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, *, is_causal: bool, scale: float,
              chunk: int | None = None) -> tuple[Tensor, Tensor]:
    """See multihead.kernels for the shared kernel contract. Returns (out, lse).

    q [B, H, Tq, d], k [B, H_kv, Tk, d], v [B, H_kv, Tk, d_v] -> out [B, H, Tq, d_v] (compute
    dtype), lse [B, H, Tq]. Meant for small Tq (decode steps); correct for any Tq.
    """
    if torch.is_grad_enabled() and any(t is not None and t.requires_grad for t in (q, k, v, mask)):
        # Inference kernel (out= buffers, in-place updates): autograd takes the plain path.
        return decode.attention(q, k, v, mask, is_causal=is_causal, scale=scale)
    if torch.compiler.is_compiling():       # one opaque op for torch.compile (registered below)
        return torch.ops.multihead.fast_decode(q, k, v, mask, is_causal, scale)
    return _attention(q, k, v, mask, is_causal=is_causal, scale=scale, chunk=chunk)


def _attention(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, *, is_causal: bool, scale: float,
               chunk: int | None = None) -> tuple[Tensor, Tensor]:
    """The kernel itself (no autograd): the C kernel where supported, else the torch-op path."""
    if fast_native.supported(q, k, v, mask):
        return _native(q, k, v, is_causal=is_causal, scale=scale)
    B, H, Tq, d = q.shape
    H_kv, Tk, d_v = k.shape[1], k.shape[2], v.shape[-1]
    G = H // H_kv
    R = G * Tq                                            # query rows per KV head, ordered (g, t)
    ct = compute_dtype(q.dtype)
    C = max(1, min(chunk or CHUNK, Tk))
    n = -(-Tk // C)
    upcast = k.dtype != ct
    mask5 = grouped_mask(mask, B, H, H_kv, Tq, Tk)        # (B, H_kv, G, Tq, Tk) view, or None
    offset = Tk - Tq                                      # query t sees keys j <= t + offset
    # Causal only hides the last Tq - 1 keys (and everything for queries with t + offset < 0).
    causal_from = max(0, offset + 1) if is_causal else Tk
    lowest = torch.finfo(ct).min

    out = torch.empty(B, H, Tq, d_v, dtype=ct, device=q.device)
    lse = torch.empty(B, H, Tq, dtype=ct, device=q.device)
    # Per-chunk partials, merged at the end: max, sum and unnormalized output.
    M = torch.empty(n, H_kv, 1, R, dtype=ct, device=q.device)      # (n, H_kv, 1, R)
    L = torch.empty(n, H_kv, 1, R, dtype=ct, device=q.device)      # (n, H_kv, 1, R)
    O = torch.empty(n, H_kv, R, d_v, dtype=ct, device=q.device)    # (n, H_kv, R, d_v)
    S = torch.empty(H_kv, C, R, dtype=ct, device=q.device)         # (H_kv, C, R) scores of a chunk
    if upcast:
        Kf = torch.empty(H_kv, C, d, dtype=ct, device=q.device)
        Vf = torch.empty(H_kv, C, d_v, dtype=ct, device=q.device)

    for b in range(B):
        # q^T with the scale folded in: (H_kv, d, R), columns ordered (g, t) like the rows of S.
        qT = (q[b].to(ct) * scale).reshape(H_kv, R, d).transpose(1, 2)
        for i in range(n):
            k0, k1 = i * C, min(Tk, (i + 1) * C)
            c = k1 - k0
            kc, vc = k[b, :, k0:k1], v[b, :, k0:k1]                        # (H_kv, c, d) views
            if upcast:
                kc = Kf[:, :c].copy_(kc)
                vc = Vf[:, :c].copy_(vc)
            s = torch.bmm(kc, qT, out=S if c == C else S.new_empty(H_kv, c, R))   # (H_kv, c, R)
            if mask5 is not None or k1 > causal_from:
                _mask_chunk(s.view(H_kv, c, G, Tq), mask5, b, k0, k1, causal_from, offset)
            m = torch.amax(s, dim=1, keepdim=True, out=M[i])                      # (H_kv, 1, R)
            m.clamp_(min=lowest)          # a fully masked column: exp(-inf - lowest) = 0, not NaN
            s.sub_(m).exp_()
            torch.sum(s, dim=1, keepdim=True, out=L[i])
            torch.bmm(s.transpose(1, 2), vc, out=O[i])                    # (H_kv, R, d_v)

        m_all = M.amax(dim=0, keepdim=True)                               # (1, H_kv, 1, R)
        w = torch.exp(M - m_all)                                          # (n, H_kv, 1, R)
        l = (w * L).sum(dim=0)                                            # (H_kv, 1, R)
        o = torch.einsum("nhr,nhrd->hrd", w.squeeze(2), O)                # (H_kv, R, d_v)
        o.div_(torch.where(l > 0, l, torch.ones_like(l)).transpose(1, 2))  # empty rows stay 0
        out[b] = o.view(H, Tq, d_v)
        lse[b] = (m_all[0] + torch.log(l)).reshape(H, Tq)                 # -inf where l = 0
    return out, lse.to(torch.float64 if ct == torch.float64 else torch.float32)


def _mask_chunk(s4: Tensor, mask5: Tensor | None, b: int, k0: int, k1: int, causal_from: int,
                offset: int) -> None:
    """Set masked scores of one chunk to -inf in place. s4: (H_kv, c, G, Tq) view of the scores."""
    neg = float("-inf")
    if mask5 is not None:
        mc = mask5[b, :, :, :, k0:k1].permute(0, 3, 1, 2)                 # (H_kv, c, G, Tq)
        if mc.dtype == torch.bool:
            s4.masked_fill_(~mc, neg)
        else:
            s4.add_(mc)
    if k1 > causal_from:
        Tq = s4.shape[-1]
        kj = torch.arange(k0, k1, device=s4.device).view(-1, 1, 1)        # (c, 1, 1)
        ti = torch.arange(Tq, device=s4.device).view(1, 1, Tq)            # (1, 1, Tq)
        s4.masked_fill_(kj > ti + offset, neg)                            # broadcast over H_kv, G


# Below this many K+V elements per call the C kernel runs on the calling thread alone: waking a
# pool thread costs more than it saves. Measured with SmolLM2's shape (9/3 heads, d 64), torch
# on two threads, other processes paused: 128 keys (49k elements) 17-19 us on one thread or two;
# 1024 keys (393k) 58 us on two threads against 86 us on one (80 us on two when each call
# follows an SDPA call, whose OpenMP threads spin on the second core for a while).
SERIAL_ELEMENTS = 1 << 17


class _Plan(NamedTuple):
    """What a decode call of one shape needs besides the key length, strides and pointers."""
    out_shape: tuple[int, int, int, int]     # (B, H, Tq, d_v)
    lse_shape: tuple[int, int, int]          # (B, H, Tq)
    heads_kv: int                            # B * H_kv: KV heads of the whole batch
    elements_per_key: int                    # B * H_kv * (d + d_v): K+V elements per cached token
    args: tuple                              # mh_decode's leading arguments: dtype, B, H_kv, G, Tq, causal, d, d_v
    scale: float
    like_q: bool                             # fp32 q of out's shape: out may be torch.empty_like(q)


def _plan(q: Tensor, k: Tensor, v: Tensor, is_causal: bool, scale: float) -> _Plan:
    B, H, Tq, d = q.shape
    H_kv, d_v = k.shape[1], v.shape[3]
    return _Plan((B, H, Tq, d_v), (B, H, Tq), B * H_kv, B * H_kv * (d + d_v),
                 (fast_native.DTYPE_CODES[k.dtype], B, H_kv, H // H_kv, Tq, int(is_causal), d, d_v), scale,
                 q.dtype == torch.float32 and d == d_v)


def _launch(p: _Plan, q: Tensor, k: Tensor, v: Tensor, want_lse: bool, Tk: int, qs: tuple, ks: tuple,
            vs: tuple) -> tuple[Tensor, Tensor | None]:
    """One C call (fast_decode.c's mh_decode): q scaled and reordered, partials per (KV head, key
    split), their merge by lse. No torch op besides the outputs: at short caches the kernel itself
    takes microseconds. q, k, v: last dim contiguous (checked by the callers); qs, ks, vs their
    strides."""
    threads = torch.get_num_threads() if Tk * p.elements_per_key >= SERIAL_ELEMENTS else 1
    # Work items enough for 16 per thread (dynamic schedule: a thread the machine descheduled
    # leaves its share to the others), none shorter than 1024 keys; the merge is O(splits x d_v).
    # 32/8 heads at 131,072 keys, two threads, AVX2 path, one process (shared AMD EPYC, load 6.5):
    # 1 split per KV head (8 items) 47% of the read rate, 4 splits 67%, 8 splits 71%; bf16 at
    # 262,144 keys 42 / 46 / 48%.
    nsplit = max(1, min(-(-16 * threads // p.heads_kv), Tk // 1024))
    # dtype and device named: the C kernel writes fp32 through these pointers, whatever
    # torch.set_default_dtype / set_default_device say (a bf16 default was a heap overflow).
    # empty_like of a contiguous fp32 q of out's shape is the same layout, 0.5 us cheaper than
    # torch.empty's keyword arguments (of a ~12 us call at SmolLM2's 128 keys); it keeps q's
    # strides, which differ from out's contiguous ones only on dims of size 1.
    out = (torch.empty_like(q) if p.like_q and q.is_contiguous()
           else torch.empty(p.out_shape, dtype=torch.float32, device=_CPU))
    lse = torch.empty(p.lse_shape, dtype=torch.float32, device=_CPU) if want_lse else None
    fast_native.run_decode(fast_native.pack_decode(
        *p.args, Tk, qs[0], qs[1], qs[2], ks[0], ks[1], ks[2], vs[0], vs[1], vs[2], nsplit, threads,
        q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(), 0 if lse is None else lse.data_ptr(), p.scale), q, v)
    return out, lse


def _native(q: Tensor, k: Tensor, v: Tensor, *, is_causal: bool, scale: float) -> tuple[Tensor, Tensor]:
    """The fused C kernel for any call fast_native.supported() accepts."""
    if q.stride(3) != 1:
        q = q.contiguous()
    return _launch(_plan(q, k, v, is_causal, scale), q, k, v, True, k.shape[2], q.stride(), k.stride(), v.stride())


# Plans of the shapes that multihead.attention has validated and handed to the C kernel: a
# generation loop's checks are done once per shape, not per decode step (they took ~40 us a call).
# The key leaves out the key length Tk, which grows by one every step; what the checks need of it
# is tested per call in fast_call. A plan whose scale is the default 1/sqrt(d) is also filed under
# scale None, so that the usual call (no scale given) does not compute it again.
_PLANS: dict[tuple, _Plan] = {}
_CPU = torch.device("cpu")


def _key(q: Tensor, k: Tensor, v: Tensor, is_causal: bool, scale) -> tuple:
    ks, vs = k.shape, v.shape
    return (q.shape, ks[0], ks[1], ks[3], vs[0], vs[1], vs[3], q.dtype, k.dtype, v.dtype, is_causal, scale)


def remember(q: Tensor, k: Tensor, v: Tensor, is_causal: bool, scale: float) -> None:
    """Record a validated call that the C kernel takes (functional.attention, after its checks;
    ``scale`` as resolved there)."""
    if type(q) is Tensor and type(k) is Tensor and type(v) is Tensor and fast_native.supported(q, k, v, None):
        plan = _plan(q, k, v, is_causal, scale)
        _PLANS[_key(q, k, v, is_causal, scale)] = plan
        if scale == 1.0 / math.sqrt(q.shape[-1]):          # what fast_call resolves None to
            _PLANS[_key(q, k, v, is_causal, None)] = plan


def fast_call(q: Tensor, k: Tensor, v: Tensor, is_causal: bool, scale: float | None,
              want_lse: bool) -> tuple[Tensor, Tensor | None] | None:
    """(out, lse) for a call whose shape was validated before (lse None unless ``want_lse``), or
    None: then the caller runs the full checks. Per call only what may differ between calls of
    one shape is tested: Tk, the last-dim strides, the device, autograd and torch.compile. Each
    tensor attribute read costs 0.05-0.15 us here, so each is read once."""
    if type(q) is not Tensor or type(k) is not Tensor or type(v) is not Tensor:
        return None
    qsh, ksh, vsh = q.shape, k.shape, v.shape
    if len(qsh) != 4 or len(ksh) != 4 or len(vsh) != 4:
        return None
    p = _PLANS.get((qsh, ksh[0], ksh[1], ksh[3], vsh[0], vsh[1], vsh[3], q.dtype, k.dtype, v.dtype, is_causal,
                    scale))
    if p is None:                              # also d = 0: no plan has it (the full checks name it)
        return None
    Tk = ksh[2]
    if Tk <= 0 or Tk != vsh[2] or not (q.is_cpu and k.is_cpu and v.is_cpu) or torch.compiler.is_compiling():
        return None
    qs, ks, vs = q.stride(), k.stride(), v.stride()
    if qs[3] != 1 or ks[3] != 1 or vs[3] != 1:
        return None
    if torch.is_grad_enabled() and (q.requires_grad or k.requires_grad or v.requires_grad):
        return None
    return _launch(p, q, k, v, want_lse, Tk, qs, ks, vs)


# torch.compile sees the kernel as one custom op (kernels/_common.register_attention_op);
# eager calls skip its dispatch cost.
register_attention_op("fast_decode", _attention)
