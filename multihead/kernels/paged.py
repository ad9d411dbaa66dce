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

Bounded memory: each page of a strided call carries a copy of its owner's Tq queries and its own
[H, Tq, d_v] output, so a call takes at most CHUNK_BYTES of that work (and, when the caller says
so, at most its score-byte limit of scores): a run of pages is cut into calls of at most that
many pages, and each call's partials are merged into a running (m, sum) per sequence at once, so
nothing grows with the number of pages times Tq. The sums per sequence read only that sequence's
partials (a NaN or inf in one sequence's keys, values or queries stays in that sequence).

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
CHUNK_BYTES = 32 * 1024**2  # page-batch work per kernel call: owners' q copies, outputs, scores (bytes)


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
              starts: list[int], ends: list[int], *, is_causal: bool, scale: float,
              edge_kernel=None, score_bytes: int | None = None) -> tuple[Tensor, Tensor]:
    """q [B, H, Tq, d] over the paged keys [starts[b], ends[b]) of each sequence, with ``kernel``
    (multihead.kernels' contract; chosen by the caller) on the whole pages and ``edge_kernel``
    (default: ``kernel``) on the gathered edges. Returns (out [B, H, Tq, d_v], lse [B, H, Tq]) in
    the compute dtype.

    Memory is bounded: one kernel call takes at most CHUNK_BYTES of page-batch work (its copies of
    the owners' queries, outputs and scores) and, with ``score_bytes``, at most that many bytes of
    scores; the partials of each call are merged into the running result at once (_Merge)."""
    B, H, Tq, d = q.shape
    P, d_v = k_pages.shape[2], v_pages.shape[-1]
    edge_kernel = kernel if edge_kernel is None else edge_kernel
    item = compute_dtype(q.dtype).itemsize
    per_page = item * H * Tq * (d + 2 * d_v + P)                    # q copy, out, out x w, scores
    step = max(1, CHUNK_BYTES // per_page)
    if score_bytes is not None:
        step = max(1, min(step, score_bytes // (item * H * Tq * P)))
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
    merge = _Merge(q, d_v)
    gathered: list[tuple[int, int]] = []              # (page id, sequence) of the small levels
    for level in range(max(map(len, uses.values()), default=0)):
        owner = {p: who[level] for p, who in uses.items() if len(who) > level}
        if level and len(owner) < MIN_STRIDED:
            gathered += sorted(owner.items())
            continue
        for lo, hi in _runs(sorted(owner)):
            for c in range(lo, hi, step):                                    # at most `step` pages a call
                c1 = min(hi, c + step)
                who = torch.tensor([owner.get(p, -1) for p in range(c, c1)], device=q.device)
                qs = q[who.clamp(min=0)]                                      # (n, H, Tq, d), n <= step
                ks, vs = k_pages[c:c1], v_pages[c:c1]                        # (n, H_kv, P, d) views
                o, lse = kernel(qs, ks, vs, None, is_causal=False, scale=scale)  # (n, H, Tq, d_v), (n, H, Tq)
                merge.add(o, lse, who)                                       # -1: not this level's, dropped
    for c in range(0, len(gathered), min(GATHER_PAGES, step)):
        ids, who = (torch.tensor(col, device=q.device) for col in zip(*gathered[c:c + min(GATHER_PAGES, step)]))
        o, lse = kernel(q[who], k_pages[ids], v_pages[ids], None, is_causal=False, scale=scale)
        merge.add(o, lse, who)
    outs, lses, seqs = [], [], []                     # the edges: at most two per sequence, merged together
    for b, t0, t1, causal in edges:
        kb, vb = gather(k_pages, block_table[b], t0, t1), gather(v_pages, block_table[b], t0, t1)
        o, lse = edge_kernel(q[b:b + 1], kb, vb, None, is_causal=causal, scale=scale)
        outs.append(o)
        lses.append(lse)
        seqs.append(b)
    if outs:
        merge.add(torch.cat(outs), torch.cat(lses), torch.tensor(seqs, device=q.device))
    return merge.result()


class _Merge:
    """The running log-sum-exp merge of partials (out [n, H, Tq, d_v], lse [n, H, Tq]) into their
    sequences (ids [n]; -1 is dropped), all sequences at once (no per-page loop).

    It keeps, per sequence, the largest lse m seen so far, sum_c w_c out_c and sum_c w_c with
    w_c = exp(lse_c - m); a later call with a larger m rescales both by exp(m_old - m_new). Each
    sequence's sum reads only its own partials: a NaN or inf in one sequence stays there."""

    def __init__(self, q: Tensor, d_v: int):
        B, H, Tq, _ = q.shape
        self.B, self.ct = B, compute_dtype(q.dtype)          # the kernels' out and lse dtype alike
        self.m = torch.full((B, H, Tq), float("-inf"), dtype=self.ct, device=q.device)
        self.out = torch.zeros(B, H, Tq, d_v, dtype=self.ct, device=q.device)      # sum_c w_c out_c
        self.total = torch.zeros(B, H, Tq, dtype=self.ct, device=q.device)         # sum_c w_c

    def add(self, o: Tensor, ls: Tensor, sid: Tensor) -> None:
        o, ls = o.to(self.ct), ls.to(self.ct)
        if bool((sid < 0).any()):                                      # pages nobody owns: drop them
            keep = sid >= 0
            sid, o, ls = sid[keep], o[keep], ls[keep]
        if not len(sid):
            return
        m_old = self.m
        m_new = m_old.scatter_reduce(0, sid.view(-1, 1, 1).expand_as(ls), ls, "amax")   # (B, H, Tq)
        base = torch.where(torch.isneginf(m_new), torch.zeros_like(m_new), m_new)
        w = torch.exp(ls - base[sid])                                  # (n, H, Tq); 0 for empty partials
        # exp(-inf - base) is 0 already unless base is very negative too (then 0 x inf = NaN): 0 by hand.
        rescale = torch.where(torch.isneginf(m_old), torch.zeros_like(m_old), torch.exp(m_old - base))
        self.out = self.out * rescale.unsqueeze(-1) + _sum_by_sequence(o * w.unsqueeze(-1), sid, self.B)
        self.total = self.total * rescale + _sum_by_sequence(w, sid, self.B)
        self.m = m_new

    def result(self) -> tuple[Tensor, Tensor]:
        out = self.out / torch.where(self.total > 0, self.total, torch.ones_like(self.total)).unsqueeze(-1)
        base = torch.where(torch.isneginf(self.m), torch.zeros_like(self.m), self.m)
        return out, base + torch.log(self.total)                       # log(0) = -inf: no key seen


def _sum_by_sequence(x: Tensor, sid: Tensor, B: int) -> Tensor:
    """Sum the rows of x [n, ...] into B rows by sequence id sid [n] (ids in [0, B)).

    One matmul with the [B, n] one-hot of the ids (index_add_ with repeated ids was ~50x slower
    here: it serializes on the shared rows). But 0 x NaN = NaN, so a non-finite row would reach
    every sequence's sum: when the result is not all finite (which it is whenever x is), the
    matmul is redone on x with its non-finite entries zeroed, and those entries are added back to
    their own sequence by index_add_ over the (few) rows holding them."""
    flat = x.flatten(1)                                                # (n, F)
    onehot = (sid.view(1, -1) == torch.arange(B, device=x.device).view(-1, 1)).to(x.dtype)   # (B, n)
    out = onehot @ flat                                                # (B, F)
    if not bool(torch.isfinite(out).all()):
        finite = torch.isfinite(flat)
        out = onehot @ torch.where(finite, flat, torch.zeros_like(flat))
        bad = ~finite.all(dim=1)                                       # rows with a NaN / inf
        out.index_add_(0, sid[bad], torch.where(finite[bad], torch.zeros_like(flat[bad]), flat[bad]))
    return out.view(B, *x.shape[1:])
