"""Attention over sequences of different lengths: packed (varlen) batches and KV caches.

    attention_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, ...)     flash_attn_varlen_func's model
    attention_with_kvcache(q, k_cache, v_cache, k, v, ...)          flash_attn_with_kvcache's model

Both run each sequence on its own keys only, so no work is spent on padding; the window,
softcap, ALiBi and backend arguments are multihead.attention's (functional.py).
"""
from __future__ import annotations

import torch
from torch import Tensor

from multihead.functional import (_FLOAT_DTYPES, SCORE_BACKENDS, _run, check_flag, check_scale, check_score_limit,
                                  choose_backend, max_score_bytes, score_mods)
from multihead.kernels import BACKENDS, paged
from multihead.kernels.mods import ScoreMods

__all__ = ["attention_varlen", "attention_with_kvcache"]


def _lengths(name: str, cu: Tensor, total: int, n: int | None) -> list[int]:
    """Validate cumulative sequence lengths [N + 1] (0, ..., total); return the N lengths."""
    if not isinstance(cu, Tensor) or cu.dim() != 1 or cu.dtype not in (torch.int32, torch.int64) or len(cu) < 2:
        got = tuple(cu.shape) if isinstance(cu, Tensor) else type(cu).__name__
        raise ValueError(f"{name}: expected an int32/int64 tensor [N + 1] of offsets (0, ..., total), got {got}")
    _has_values(name, cu)
    offsets = cu.tolist()
    lengths = [b - a for a, b in zip(offsets, offsets[1:])]
    if offsets[0] != 0 or offsets[-1] != total or min(lengths) < 0:
        raise ValueError(f"{name}: expected non-decreasing offsets from 0 to {total}, got {offsets}")
    if n is not None and len(lengths) != n:
        raise ValueError(f"{name}: {len(lengths)} sequences, but cu_seqlens_q has {n}")
    return lengths


def _has_values(name: str, t: Tensor) -> None:
    """Index tensors are read on the host: a meta tensor (shape only) cannot say its values."""
    if t.device.type == "meta":
        raise ValueError(f"{name}: a meta tensor has no values to read; pass it on the CPU or q's device")


def _check_packed(q: Tensor, k: Tensor, v: Tensor) -> None:
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, Tensor) or t.dim() != 3 or t.dtype not in _FLOAT_DTYPES or 0 in t.shape[1:]:
            got = tuple(t.shape) if isinstance(t, Tensor) else type(t).__name__
            raise ValueError(f"{name}: expected a float tensor [total, heads, d] (packed sequences), got {got}")
        if t.dtype != q.dtype or t.device != q.device:
            raise ValueError(f"{name}: dtype/device {t.dtype}/{t.device} do not match q's {q.dtype}/{q.device}")
    if q.shape[1] % k.shape[1] or q.shape[2] != k.shape[2] or v.shape[:2] != k.shape[:2]:
        raise ValueError(f"k: shapes q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}: need "
                         f"q [total_q, H, d], k [total_k, H_kv, d], v [total_k, H_kv, d_v] with H % H_kv == 0")


def _row(mods: ScoreMods, b: int) -> ScoreMods:
    """Sequence b's mods (its row of the ALiBi slopes)."""
    return mods if mods.alibi is None else ScoreMods(mods.left, mods.right, mods.softcap, mods.alibi[b:b + 1])


def attention_varlen(q: Tensor, k: Tensor, v: Tensor, cu_seqlens_q: Tensor, cu_seqlens_k: Tensor,
                     max_seqlen_q: int | None = None, max_seqlen_k: int | None = None, *,
                     is_causal: bool = False, scale: float | None = None, window_size=(-1, -1),
                     softcap: float = 0.0, alibi_slopes: Tensor | None = None, return_lse: bool = False,
                     backend: str = "auto") -> Tensor | tuple[Tensor, Tensor]:
    """Attention over N packed sequences of different lengths, none padded.

        q            [total_q, H, d]      sequence i's queries are rows cu_seqlens_q[i] .. [i+1]-1
        k, v         [total_k, H_kv, d], [total_k, H_kv, d_v]   (likewise with cu_seqlens_k)
        cu_seqlens_q, cu_seqlens_k   int32/int64 [N + 1], 0 = cu[0] <= ... <= cu[N] = total
        max_seqlen_q, max_seqlen_k   optional upper bounds on the lengths (checked, not needed)
        alibi_slopes [H] or [N, H]
        returns      out [total_q, H, d_v] in q's dtype; with return_lse also lse [H, total_q]

    Each sequence is one multihead.attention call on views of its rows (backend chosen by its
    own size), so the batch costs the sum of its sequences: no padding, no [N, T_max] anything.
    Causal and window alignment are per sequence, bottom-right as in multihead.attention.
    """
    _check_packed(q, k, v)
    lq = _lengths("cu_seqlens_q", cu_seqlens_q, q.shape[0], None)
    lk = _lengths("cu_seqlens_k", cu_seqlens_k, k.shape[0], len(lq))
    for name, bound, lengths in (("max_seqlen_q", max_seqlen_q, lq), ("max_seqlen_k", max_seqlen_k, lk)):
        if bound is not None and (isinstance(bound, bool) or not isinstance(bound, int) or bound < max(lengths)):
            raise ValueError(f"{name}: expected an integer >= the longest sequence ({max(lengths)}), got {bound!r}")
    check_flag("is_causal", is_causal)
    check_flag("return_lse", return_lse)
    scale = check_scale(scale, q.shape[-1])
    mods = score_mods(q, window_size, softcap, alibi_slopes, batch=len(lq))
    outs, lses = [], []
    q0 = k0 = 0
    for i, (nq, nk) in enumerate(zip(lq, lk)):
        qi = q[q0:q0 + nq].transpose(0, 1).unsqueeze(0)                     # (1, H, nq, d) view
        ki = k[k0:k0 + nk].transpose(0, 1).unsqueeze(0)                     # (1, H_kv, nk, d)
        vi = v[k0:k0 + nk].transpose(0, 1).unsqueeze(0)
        if nq and nk:
            o, lse = _run(qi, ki, vi, None, is_causal, scale, _row(mods, i), backend)
        elif nq:                                                             # no keys: 0, -inf
            o, lse = _empty(qi, v.shape[-1])
        q0, k0 = q0 + nq, k0 + nk
        if nq:
            outs.append(o[0].transpose(0, 1).to(q.dtype))                   # (nq, H, d_v)
            lses.append(lse[0])                                             # (H, nq)
    out = torch.cat(outs) if outs else q.new_zeros(0, q.shape[1], v.shape[-1])
    if not return_lse:
        return out
    lse_dtype = torch.float64 if q.dtype == torch.float64 else torch.float32     # the kernels' lse dtype
    return out, torch.cat(lses, dim=1) if lses else torch.zeros(q.shape[1], 0, dtype=lse_dtype, device=q.device)


def _empty(q: Tensor, d_v: int) -> tuple[Tensor, Tensor]:
    """(out, lse) of queries [B, H, Tq, d] that see no key: zeros and -inf."""
    B, H, Tq, _ = q.shape
    lse_dtype = torch.float64 if q.dtype == torch.float64 else torch.float32
    return (torch.zeros(B, H, Tq, d_v, dtype=lse_dtype, device=q.device),
            torch.full((B, H, Tq), float("-inf"), dtype=lse_dtype, device=q.device))


def _per_sequence(name: str, value, B: int, default: int | None) -> list[int]:
    """An int, an int tensor [B] or None (-> default) as B Python ints >= 0."""
    if value is None and default is not None:
        return [default] * B
    if isinstance(value, int) and not isinstance(value, bool):
        values = [value] * B
    elif isinstance(value, Tensor) and value.dtype in (torch.int32, torch.int64) and tuple(value.shape) == (B,):
        _has_values(name, value)
        values = value.tolist()
    else:
        got = tuple(value.shape) if isinstance(value, Tensor) else repr(value)
        raise ValueError(f"{name}: expected an int or an int32/int64 tensor [B] = [{B}], got {got}")
    if min(values) < 0:
        raise ValueError(f"{name}: expected lengths >= 0, got {values}")
    return values


def _check_cache(q: Tensor, k_cache: Tensor, v_cache: Tensor, block_table: Tensor | None) -> tuple[int, int]:
    """Validate the cache layout; return (H_kv, capacity in tokens per sequence)."""
    B, H, _, d = q.shape
    for name, t in (("k_cache", k_cache), ("v_cache", v_cache)):
        if not isinstance(t, Tensor) or t.dim() != 4 or t.dtype != q.dtype or t.device != q.device:
            got = f"{tuple(t.shape)} {t.dtype}" if isinstance(t, Tensor) else type(t).__name__
            raise ValueError(f"{name}: expected a 4-dim tensor in q's dtype {q.dtype} on {q.device}, got {got}")
    if block_table is None:
        H_kv, T_max, d_k = k_cache.shape[1:]
        want_b = B
    else:
        if not isinstance(block_table, Tensor) or block_table.dim() != 2 or block_table.shape[0] != B or \
                block_table.dtype not in (torch.int32, torch.int64):
            got = tuple(block_table.shape) if isinstance(block_table, Tensor) else type(block_table).__name__
            raise ValueError(f"block_table: expected an int32 tensor [B, max_pages] with B={B}, got {got}")
        _has_values("block_table", block_table)
        n_pages, H_kv, page, d_k = k_cache.shape
        T_max, want_b = block_table.shape[1] * page, n_pages
        if block_table.numel() and not 0 <= int(block_table.min()) <= int(block_table.max()) < n_pages:
            raise ValueError(f"block_table: page ids must lie in [0, {n_pages}) (the pool's pages)")
    layout = "[B, H_kv, T_max, d]" if block_table is None else "[num_pages, H_kv, page_size, d]"
    if k_cache.shape[0] != want_b or d_k != d or H_kv == 0 or H % H_kv or \
            v_cache.shape[:-1] != k_cache.shape[:-1]:
        raise ValueError(f"k_cache: expected {layout} with d={d} and H={H} a multiple of H_kv (v_cache alike "
                         f"but for d_v), got k_cache {tuple(k_cache.shape)}, v_cache {tuple(v_cache.shape)}")
    return H_kv, T_max


def attention_with_kvcache(q: Tensor, k_cache: Tensor, v_cache: Tensor, k: Tensor | None = None,
                           v: Tensor | None = None, *, cache_seqlens=None, cache_leftpad=None,
                           block_table: Tensor | None = None, is_causal: bool = False,
                           scale: float | None = None, window_size=(-1, -1), softcap: float = 0.0,
                           alibi_slopes: Tensor | None = None, return_lse: bool = False,
                           backend: str = "auto") -> Tensor | tuple[Tensor, Tensor]:
    """Attention of new queries to a KV cache whose sequences have their own lengths.

        q               [B, H, Tq, d]
        k_cache/v_cache contiguous: [B, H_kv, T_max, d] (one layer of multihead.KVCache);
                        paged (with block_table): [num_pages, H_kv, page_size, d] (see kernels/paged.py)
        block_table     int32 [B, max_pages]: sequence b's token t is in page block_table[b, t // page_size]
        k, v            optional new tokens [B, H_kv, T_new, d] (v: d_v), written IN PLACE at
                        positions cache_seqlens[b] .. + T_new - 1 before attending
        cache_seqlens   int or int tensor [B]: tokens already cached per sequence, left padding
                        included (default T_max, contiguous only); not updated here
        cache_leftpad   int or int tensor [B]: sequence b's first real token; keys before it are
                        ignored (a left-padded batch)
        returns         out [B, H, Tq, d_v] in q's dtype (with return_lse, lse [B, H, Tq])

    Sequence b attends to keys [cache_leftpad[b], cache_seqlens[b] + T_new), its Tq queries being
    the last Tq positions (bottom-right causal, window and ALiBi as in multihead.attention). Each
    sequence reads only its own keys. A paged cache is read in place, page by page, by the
    decode kernel (multihead.kernels.paged); with window / softcap / ALiBi, or under autograd, the
    keys a sequence's window reaches are gathered from its pages instead.
    """
    if not isinstance(q, Tensor) or q.dim() != 4 or q.dtype not in _FLOAT_DTYPES or 0 in q.shape:
        raise ValueError(f"q: expected a float tensor [B, H, Tq, d], got "
                         f"{tuple(q.shape) if isinstance(q, Tensor) else type(q).__name__}")
    B, H, Tq, d = q.shape
    H_kv, T_max = _check_cache(q, k_cache, v_cache, block_table)
    T_new = _check_new(k, v, k_cache, v_cache, B, H_kv, d)
    seqlens = _per_sequence("cache_seqlens", cache_seqlens, B, T_max if block_table is None and k is None else None)
    starts = _per_sequence("cache_leftpad", cache_leftpad, B, 0)
    ends = [n + T_new for n in seqlens]
    if max(ends) > T_max or any(s > e for s, e in zip(starts, ends)):
        raise ValueError(f"cache_seqlens: sequences need {ends} tokens (after {T_new} new) with left padding "
                         f"{starts}; the cache holds {T_max} per sequence")
    check_flag("is_causal", is_causal)
    check_flag("return_lse", return_lse)
    scale = check_scale(scale, d)
    mods = score_mods(q, window_size, softcap, alibi_slopes)
    if not isinstance(backend, str) or (backend != "auto" and backend not in BACKENDS):
        raise ValueError(f"backend: expected 'auto' or one of {sorted(BACKENDS)}, got {backend!r}")
    grad = torch.is_grad_enabled() and q.requires_grad
    in_place = block_table is not None and not mods.active and not grad
    if backend in SCORE_BACKENDS and not mods.active and (in_place or block_table is None):
        # the contiguous path's limit (one batched call for equal ranges, else one call per sequence),
        # checked before anything is written; paged calls hold less (bounded page batches)
        lengths = [e - s for s, e in zip(starts, ends)]
        same = len(set(starts)) == 1 and len(set(ends)) == 1
        check_score_limit(backend, B if same else 1, H, Tq, max(lengths), q.dtype)
    if T_new:
        _append(k_cache, v_cache, k, v, block_table, seqlens)
    if in_place:
        P = k_cache.shape[2]
        if backend == "auto":        # per call shape: a batch of pages, and an edge (<= 2 pages + Tq - 1 keys)
            name, edge = choose_backend(1, H, Tq, P, q.dtype), choose_backend(1, H, Tq, 2 * P + Tq - 1, q.dtype)
        else:
            name = edge = backend
        limit = max_score_bytes() if name in SCORE_BACKENDS else None
        out, lse = paged.attention(BACKENDS[name], q, k_cache, v_cache, block_table, starts, ends,
                                   is_causal=is_causal, scale=scale, edge_kernel=BACKENDS[edge], score_bytes=limit)
    else:
        out, lse = _each_sequence(q, k_cache, v_cache, block_table, starts, ends, is_causal, scale, mods, backend)
    out = out.to(q.dtype)
    return (out, lse) if return_lse else out


def _check_new(k, v, k_cache: Tensor, v_cache: Tensor, B: int, H_kv: int, d: int) -> int:
    """Validate the new tokens k, v [B, H_kv, T_new, d]; return T_new (0 without them)."""
    if k is None and v is None:
        return 0
    for name, t, cache in (("k", k, k_cache), ("v", v, v_cache)):
        want = (B, H_kv, cache.shape[-1])
        if not isinstance(t, Tensor) or t.dim() != 4 or (t.shape[0], t.shape[1], t.shape[3]) != want or \
                t.dtype != cache.dtype or t.device != cache.device:
            got = f"{tuple(t.shape)}" if isinstance(t, Tensor) else type(t).__name__
            raise ValueError(f"{name}: expected new tokens [B, H_kv, T_new, {cache.shape[-1]}] = "
                             f"[{B}, {H_kv}, T_new, ...] in the cache's dtype, got {got}")
    if k.shape[2] != v.shape[2]:
        raise ValueError(f"v: {v.shape[2]} new tokens but k has {k.shape[2]}")
    return k.shape[2]


def _append(k_cache: Tensor, v_cache: Tensor, k: Tensor, v: Tensor, block_table: Tensor | None,
            seqlens: list[int]) -> None:
    """Write the new tokens into the cache in place at each sequence's own position."""
    if block_table is not None:
        starts = torch.tensor(seqlens, device=k.device)
        paged.write(k_cache, block_table, starts, k)
        paged.write(v_cache, block_table, starts, v)
        return
    T_new = k.shape[2]
    for b, n in enumerate(seqlens):
        k_cache[b, :, n:n + T_new] = k[b]
        v_cache[b, :, n:n + T_new] = v[b]


def _each_sequence(q: Tensor, k_cache: Tensor, v_cache: Tensor, block_table: Tensor | None, starts: list[int],
                   ends: list[int], is_causal: bool, scale: float, mods: ScoreMods,
                   backend: str) -> tuple[Tensor, Tensor]:
    """One attention call per sequence on its own keys (views of a contiguous cache; for a paged
    one, the keys its window reaches gathered from its pages). Equal ranges: one batched call."""
    B, H, Tq, _ = q.shape
    if block_table is None and len(set(starts)) == 1 and len(set(ends)) == 1 and ends[0] > starts[0]:
        s, e = starts[0], ends[0]
        return _run(q, k_cache[:, :, s:e], v_cache[:, :, s:e], None, is_causal, scale, mods, backend)
    outs, lses = [], []
    for b in range(B):
        s, e = starts[b], ends[b]
        lo, hi = mods.with_causal(is_causal).key_range(0, Tq, e - s - Tq, e - s)   # the window's reach
        lo, hi = s + lo, s + hi
        if hi <= lo:
            o, lse = _empty(q[b:b + 1], v_cache.shape[-1])
        else:
            if block_table is None:
                kb, vb = k_cache[b:b + 1, :, lo:e], v_cache[b:b + 1, :, lo:e]
            else:
                kb, vb = paged.gather(k_cache, block_table[b], lo, e), paged.gather(v_cache, block_table[b], lo, e)
            o, lse = _run(q[b:b + 1], kb, vb, None, is_causal, scale, _row(mods, b), backend)
        outs.append(o)
        lses.append(lse)
    return torch.cat(outs), torch.cat(lses)
