"""Attention over a paged KV cache, read in place: the pages are the key splits.

Layout (vLLM's and flash-attention's): ``k_pages``, ``v_pages`` [num_pages, page_size, H_kv, d];
sequence b's token t lives in page ``block_table[b, t // page_size]`` at slot
``t % page_size``. Sequence b's keys are the tokens [start_b, end_b) (start_b > 0 with left
padding); its Tq queries are the last Tq positions, end_b - Tq .. end_b - 1 (bottom-right causal).

Split-K decoding ("flash-decoding") already cuts the keys into splits whose partial results are
merged by log-sum-exp; here a split is a page. Every *whole* page that all of a sequence's queries
see goes through one ordinary kernel call in which the batch axis walks the page pool by stride:
pages p_lo..p_hi of the pool viewed as k [n, H_kv, page_size, d] (no copy; the head and token
strides are the pool's), each with its owner's queries. The C decode kernel reads each page
exactly once, in place. Pages of the pool range that no sequence owns are computed and dropped;
runs of owned page ids are split at gaps above MAX_GAP pages, so an unused stretch of the pool
costs at most that much. The few keys left at a sequence's edges (a partly used first page after
left padding, the last page, the last Tq - 1 keys that causality hides from earlier queries) are
gathered (at most two pages plus Tq keys) and attended by the same kernel. All partials of a
sequence are merged by their lse:

    m = max_c lse_c      w_c = exp(lse_c - m)      out = sum_c w_c out_c / sum_c w_c

Window, softcap and ALiBi calls gather the keys a sequence's window reaches instead (see
functional.attention_with_kvcache): exact, O(window) per sequence, but a copy.
"""
from __future__ import annotations

import torch
from torch import Tensor

from multihead.kernels._common import compute_dtype

MAX_GAP = 8     # unowned pages computed between two owned runs before the run is cut in two


def gather(pages: Tensor, table_row: Tensor, t0: int, t1: int) -> Tensor:
    """Tokens t0..t1-1 of one sequence from a page pool [num_pages, P, H_kv, d] -> [1, H_kv, t1-t0, d]."""
    P = pages.shape[1]
    t = torch.arange(t0, t1, device=pages.device)
    rows = pages[table_row[t // P].long(), t % P]                       # (t1-t0, H_kv, d), a copy
    return rows.transpose(0, 1).unsqueeze(0)


def write(pages: Tensor, block_table: Tensor, starts: Tensor, new: Tensor) -> None:
    """Write new tokens [B, H_kv, T, d] of sequence b at positions starts[b].. into the pool, in place."""
    B, _, T, _ = new.shape
    P = pages.shape[1]
    pos = starts.view(B, 1).long() + torch.arange(T, device=new.device)     # (B, T)
    page = torch.gather(block_table.long(), 1, pos // P)                     # (B, T)
    pages[page.reshape(-1), (pos % P).reshape(-1)] = new.transpose(1, 2).reshape(B * T, *new.shape[1::2])


def _runs(page_ids: list[int]) -> list[tuple[int, int]]:
    """Sorted distinct page ids -> ranges [lo, hi) covering them, cut where a gap exceeds MAX_GAP."""
    runs: list[tuple[int, int]] = []
    for p in page_ids:
        if runs and p - runs[-1][1] <= MAX_GAP:
            runs[-1] = (runs[-1][0], p + 1)
        else:
            runs.append((p, p + 1))
    return runs


def attention(kernel, q: Tensor, k_pages: Tensor, v_pages: Tensor, block_table: Tensor,
              starts: list[int], ends: list[int], *, is_causal: bool, scale: float) -> tuple[Tensor, Tensor]:
    """q [B, H, Tq, d] over the paged keys [starts[b], ends[b]) of each sequence, with ``kernel``
    (multihead.kernels' contract; chosen by the caller). Returns (out [B, H, Tq, d_v], lse [B, H, Tq])
    in the compute dtype."""
    B, H, Tq, _ = q.shape
    P = k_pages.shape[1]
    table = block_table.tolist()
    owner: dict[int, tuple[int, int]] = {}            # page id -> (sequence, page index in it)
    edges: list[tuple[int, int, int, bool]] = []      # (sequence, t0, t1, causal)
    for b in range(B):
        visible_to_all = ends[b] - (Tq - 1 if is_causal else 0)      # keys < this: every query
        first = -(-starts[b] // P)                                   # first whole page
        last = max(first, visible_to_all // P)                       # one past the last whole page
        for i in range(first, last):
            owner[table[b][i]] = (b, i)
        lead_end = first * P if last > first else starts[b]
        tail_start = last * P if last > first else starts[b]
        if starts[b] < lead_end:
            edges.append((b, starts[b], lead_end, False))
        if tail_start < ends[b]:
            edges.append((b, tail_start, ends[b], is_causal))
    outs: list[list[tuple[Tensor, Tensor]]] = [[] for _ in range(B)]
    for lo, hi in _runs(sorted(owner)):
        who = [owner.get(p, (0, -1))[0] for p in range(lo, hi)]
        qs = q[torch.tensor(who, device=q.device)]                           # (n, H, Tq, d)
        ks = k_pages[lo:hi].transpose(1, 2)                                  # (n, H_kv, P, d) view
        vs = v_pages[lo:hi].transpose(1, 2)
        o, lse = kernel(qs, ks, vs, None, is_causal=False, scale=scale)      # (n, H, Tq, d_v), (n, H, Tq)
        for j, p in enumerate(range(lo, hi)):
            if p in owner:
                outs[owner[p][0]].append((o[j], lse[j]))
    for b, t0, t1, causal in edges:
        kb, vb = gather(k_pages, block_table[b], t0, t1), gather(v_pages, block_table[b], t0, t1)
        o, lse = kernel(q[b:b + 1], kb, vb, None, is_causal=causal, scale=scale)
        outs[b].append((o[0], lse[0]))
    return _merge(outs, q, v_pages.shape[-1])


def _merge(outs: list[list[tuple[Tensor, Tensor]]], q: Tensor, d_v: int) -> tuple[Tensor, Tensor]:
    """Per sequence, merge its partial (out [H, Tq, d_v], lse [H, Tq]) by log-sum-exp."""
    B, H, Tq, _ = q.shape
    ct = compute_dtype(q.dtype)
    out = torch.zeros(B, H, Tq, d_v, dtype=ct, device=q.device)
    lse = torch.full((B, H, Tq), float("-inf"), dtype=torch.float64 if ct == torch.float64 else torch.float32,
                     device=q.device)
    for b, parts in enumerate(outs):
        if not parts:
            continue
        o = torch.stack([p[0] for p in parts])                              # (n, H, Tq, d_v)
        ls = torch.stack([p[1] for p in parts]).to(lse.dtype)               # (n, H, Tq)
        m = ls.amax(dim=0)
        m = torch.where(torch.isneginf(m), torch.zeros_like(m), m)          # (H, Tq)
        w = torch.exp(ls - m)                                               # 0 for empty parts
        total = w.sum(dim=0)
        out[b] = torch.einsum("nht,nhtd->htd", w.to(ct), o.to(ct)) / torch.where(
            total > 0, total, torch.ones_like(total)).unsqueeze(-1).to(ct)
        lse[b] = m + torch.log(total)
    return out, lse
