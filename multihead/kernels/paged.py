"""Attention over a paged KV cache, read in place: the pages are the key splits.

Layout: ``k_pages``, ``v_pages`` [num_pages, H_kv, page_size, d], multihead's [.., H, T, d] order
within a page (as vLLM's original PagedAttention kernel keeps heads outside the tokens of a block;
flash-attention's paged layout [num_pages, page_size, H_kv, d] puts them inside); sequence b's
token t lives in page ``block_table[b, t // page_size]`` at slot ``t % page_size``. Head-major
pages keep each (page, head) block contiguous: measured at 65536 keys, 32/8 heads, d=128, one
thread, token-major pages read 1.2x slower than a contiguous cache (each key row 4 KiB from the
next, so the hardware prefetcher, which stops at 4 KiB pages, cannot follow), head-major within noise. Sequence b's keys are the tokens [start_b, end_b) (start_b > 0 with left
padding); its Tq queries are the last Tq positions, end_b - Tq .. end_b - 1 (bottom-right causal).

Split-K decoding ("flash-decoding") already cuts the keys into splits whose partial results are
merged by log-sum-exp; here a split is a page. Every *whole* page that all of a sequence's queries
see goes through one ordinary kernel call in which the batch axis walks the page pool by stride:
pages p_lo..p_hi of the pool, k_pages[p_lo:p_hi] [n, H_kv, page_size, d] (a view, no copy), each with its owner's queries.

A page may be used more than once: sequences sharing a prefix share its pages (prefix caching),
two rows of the table may be identical, and a row may name a page twice. Each *use* (sequence,
page index) is one partial. The uses of the pool are laid out in levels: level 0 holds the first
use of every page id, level 1 the second use of the ids used at least twice, and so on; within a
level each page id has one use, so the level is strided runs of the pool like level 0. A level
with fewer than MIN_STRIDED pages (a page repeated within a row many times gives many small
levels) is not run by stride; its uses are gathered (copies of those pages, at most GATHER_PAGES
per call) instead. Pages of a run that the level does not use are computed and dropped; runs are
split at gaps above MAX_GAP pages, so an unused stretch of the pool costs at most that much. The few keys left at a sequence's edges (a partly used first page after
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
MIN_STRIDED = 8     # a level of uses with fewer pages is gathered rather than run by stride
GATHER_PAGES = 256  # pages copied per gathered kernel call (bounds the copy)


def gather(pages: Tensor, table_row: Tensor, t0: int, t1: int) -> Tensor:
    """Tokens t0..t1-1 of one sequence from a page pool [num_pages, H_kv, P, d] -> [1, H_kv, t1-t0, d]."""
    P = pages.shape[2]
    t = torch.arange(t0, t1, device=pages.device)
    rows = pages[table_row[t // P].long(), :, t % P]                    # (t1-t0, H_kv, d), a copy
    return rows.transpose(0, 1).unsqueeze(0)


def write(pages: Tensor, block_table: Tensor, starts: Tensor, new: Tensor) -> None:
    """Write new tokens [B, H_kv, T, d] of sequence b at positions starts[b].. into the pool, in place."""
    B, _, T, _ = new.shape
    P = pages.shape[2]
    pos = starts.view(B, 1).long() + torch.arange(T, device=new.device)     # (B, T)
    page = torch.gather(block_table.long(), 1, pos // P)                     # (B, T)
    pages[page.reshape(-1), :, (pos % P).reshape(-1)] = new.transpose(1, 2).reshape(B * T, *new.shape[1::2])


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
    P = k_pages.shape[2]
    table = block_table.tolist()
    uses: dict[int, list[int]] = {}                   # page id -> the sequences using it as a whole page
    edges: list[tuple[int, int, int, bool]] = []      # (sequence, t0, t1, causal)
    for b in range(B):
        visible_to_all = ends[b] - (Tq - 1 if is_causal else 0)      # keys < this: every query
        first = -(-starts[b] // P)                                   # first whole page
        last = max(first, visible_to_all // P)                       # one past the last whole page
        for i in range(first, last):
            uses.setdefault(table[b][i], []).append(b)
        lead_end = first * P if last > first else starts[b]
        tail_start = last * P if last > first else starts[b]
        if starts[b] < lead_end:
            edges.append((b, starts[b], lead_end, False))
        if tail_start < ends[b]:
            edges.append((b, tail_start, ends[b], is_causal))
    outs, lses, seqs = [], [], []                     # partial results and their sequence ids
    gathered: list[tuple[int, int]] = []              # (page id, sequence) of the small levels
    for level in range(max(map(len, uses.values()), default=0)):
        owner = {p: who[level] for p, who in uses.items() if len(who) > level}
        if level and len(owner) < MIN_STRIDED:
            gathered += sorted(owner.items())
            continue
        for lo, hi in _runs(sorted(owner)):
            who = torch.tensor([owner.get(p, -1) for p in range(lo, hi)], device=q.device)
            qs = q[who.clamp(min=0)]                                          # (n, H, Tq, d)
            ks, vs = k_pages[lo:hi], v_pages[lo:hi]                          # (n, H_kv, P, d) views
            o, lse = kernel(qs, ks, vs, None, is_causal=False, scale=scale)  # (n, H, Tq, d_v), (n, H, Tq)
            outs.append(o)
            lses.append(lse)
            seqs.append(who)                                                 # -1: not this level's, dropped
    for c in range(0, len(gathered), GATHER_PAGES):
        ids, who = (torch.tensor(col, device=q.device) for col in zip(*gathered[c:c + GATHER_PAGES]))
        o, lse = kernel(q[who], k_pages[ids], v_pages[ids], None, is_causal=False, scale=scale)
        outs.append(o)
        lses.append(lse)
        seqs.append(who)
    for b, t0, t1, causal in edges:
        kb, vb = gather(k_pages, block_table[b], t0, t1), gather(v_pages, block_table[b], t0, t1)
        o, lse = kernel(q[b:b + 1], kb, vb, None, is_causal=causal, scale=scale)
        outs.append(o)
        lses.append(lse)
        seqs.append(torch.tensor([b], device=q.device))
    return _merge(q, v_pages.shape[-1], outs, lses, seqs)


def _merge(q: Tensor, d_v: int, outs: list[Tensor], lses: list[Tensor],
           seqs: list[Tensor]) -> tuple[Tensor, Tensor]:
    """Merge partials (out [n, H, Tq, d_v], lse [n, H, Tq]) into their sequences (ids [n]; -1 is
    dropped) by log-sum-exp, all sequences at once (scatter by sequence id, no per-page loop)."""
    B, H, Tq, _ = q.shape
    ct = compute_dtype(q.dtype)
    lse_dtype = torch.float64 if ct == torch.float64 else torch.float32
    lse = torch.full((B, H, Tq), float("-inf"), dtype=lse_dtype, device=q.device)
    if not outs:
        return torch.zeros(B, H, Tq, d_v, dtype=ct, device=q.device), lse
    cat = (lambda ts: ts[0] if len(ts) == 1 else torch.cat(ts))   # noqa: E731  (no copy for one run)
    sid, o, ls = cat(seqs), cat(outs).to(ct), cat(lses).to(lse_dtype)
    if bool((sid < 0).any()):                                      # pages nobody owns: drop them
        keep = sid >= 0
        sid, o, ls = sid[keep], o[keep], ls[keep]
    m = lse.scatter_reduce(0, sid.view(-1, 1, 1).expand_as(ls), ls, "amax")       # (B, H, Tq)
    m = torch.where(torch.isneginf(m), torch.zeros_like(m), m)
    w = torch.exp(ls - m[sid])                                                  # 0 for empty partials
    # Sums per sequence as one matmul with the [B, n] one-hot of the ids (index_add_ with
    # repeated ids was ~50x slower here: it serializes on the shared rows).
    onehot = (sid.view(1, -1) == torch.arange(B, device=q.device).view(-1, 1))   # (B, n)
    total = (onehot.to(w.dtype) @ w.flatten(1)).view(B, H, Tq)                    # (B, H, Tq)
    out = (onehot.to(ct) @ (o * w.unsqueeze(-1).to(ct)).flatten(1)).view(B, H, Tq, d_v)
    out /= torch.where(total > 0, total, torch.ones_like(total)).unsqueeze(-1).to(ct)
    return out, m + torch.log(total)
