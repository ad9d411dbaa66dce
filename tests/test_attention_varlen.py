"""attention_varlen (packed sequences) and attention_with_kvcache (per-sequence lengths, left
padding, in-place append, contiguous and paged caches), against the float64 oracle run on each
sequence alone."""
from __future__ import annotations

import pytest
import torch

import multihead as mh
from attention_oracle import oracle
from multihead.kernels import BACKENDS, paged

BACKEND_NAMES = sorted(BACKENDS) + ["auto"]


def packed(lq, lk, H=4, H_kv=2, d=16, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(sum(lq), H, d, generator=g).to(dtype)
    k = torch.randn(sum(lk), H_kv, d, generator=g).to(dtype)
    v = torch.randn(sum(lk), H_kv, d + 8, generator=g).to(dtype)         # d_v != d
    cu = lambda ls: torch.tensor([0] + torch.tensor(ls).cumsum(0).tolist(), dtype=torch.int32)   # noqa: E731
    return q, k, v, cu(lq), cu(lk)


def per_sequence(q, k, v, lq, lk):
    """Yield each sequence's (row slice, q [1, H, Tq, d], k, v [1, H_kv, Tk, *]) from packed tensors."""
    a = c = 0
    for i, (nq, nk) in enumerate(zip(lq, lk)):
        view = lambda t, s, n: t[s:s + n].transpose(0, 1).unsqueeze(0)   # noqa: E731
        yield i, slice(a, a + nq), view(q, a, nq), view(k, c, nk), view(v, c, nk)
        a, c = a + nq, c + nk


CASES = [([5, 17, 1, 40], [5, 30, 9, 40]),        # Tq <= Tk, a decode-like row, equal lengths
         ([33, 8], [12, 8]),                     # Tq > Tk: the first queries see nothing if causal
         ([3, 0, 4], [3, 6, 0])]                 # an empty query sequence and an empty key sequence


@pytest.mark.parametrize("backend", BACKEND_NAMES)
@pytest.mark.parametrize("lq,lk", CASES)
@pytest.mark.parametrize("causal,win,softcap,alibi", [(False, (-1, -1), 0.0, False), (True, (-1, -1), 0.0, True),
                                                      (True, (6, 0), 3.0, False), (False, (4, 2), 0.0, True)])
def test_varlen_equals_each_sequence_alone(lq, lk, causal, win, softcap, alibi, backend):
    q, k, v, cq, ck = packed(lq, lk)
    slopes = torch.rand(len(lq), q.shape[1]) * 0.3 if alibi else None
    out, lse = mh.attention_varlen(q, k, v, cq, ck, max(lq), max(lk), is_causal=causal, window_size=win,
                                   softcap=softcap, alibi_slopes=slopes, return_lse=True, backend=backend)
    assert out.shape == (sum(lq), q.shape[1], v.shape[-1]) and lse.shape == (q.shape[1], sum(lq))
    for i, rows, qi, ki, vi in per_sequence(q, k, v, lq, lk):
        if rows.stop == rows.start:
            continue
        if ki.shape[2] == 0:                                   # no keys: zeros and -inf
            assert (out[rows] == 0).all() and torch.isneginf(lse[:, rows]).all()
            continue
        s = None if slopes is None else slopes[i:i + 1]
        ref, ref_lse = oracle(qi, ki, vi, None, causal, None, win, softcap, s)
        assert (out[rows] - ref[0].transpose(0, 1)).abs().max() < 2e-5
        assert torch.equal(torch.isneginf(lse[:, rows]), torch.isneginf(ref_lse[0]))


def test_varlen_backward_and_low_precision():
    q, k, v, cq, ck = packed([20, 7], [30, 7], dtype=torch.bfloat16)
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    mh.attention_varlen(*leaves, cq, ck, is_causal=True).float().square().sum().backward()
    for t in leaves:
        assert t.grad is not None and t.grad.isfinite().all()
    # the packed gradient of each sequence equals that sequence run alone
    q1, k1, v1 = (t[:20].clone().requires_grad_() for t in (q, k, v))
    k1, v1 = (t[:30].clone().requires_grad_() for t in (k, v))
    mh.attention(q1.transpose(0, 1)[None], k1.transpose(0, 1)[None], v1.transpose(0, 1)[None],
                 is_causal=True).float().square().sum().backward()
    assert torch.equal(leaves[0].grad[:20], q1.grad) and torch.equal(leaves[1].grad[:30], k1.grad)


@pytest.mark.parametrize("bad,match", [
    (dict(cu_seqlens_q=torch.tensor([0, 5, 3], dtype=torch.int32)), r"^cu_seqlens_q: expected non-decreasing"),
    (dict(cu_seqlens_q=torch.tensor([0, 5.0, 8])), r"^cu_seqlens_q: expected an int32"),
    (dict(cu_seqlens_k=torch.tensor([0, 10], dtype=torch.int32)), r"^cu_seqlens_k: 1 sequences"),
    (dict(max_seqlen_q=4), r"^max_seqlen_q: expected an integer >= the longest sequence \(5\)"),
    (dict(q=torch.randn(8, 4)), r"^q: expected a float tensor \[total, heads, d\]"),
])
def test_varlen_errors_name_the_argument(bad, match):
    q, k, v, cq, ck = packed([5, 3], [5, 5])
    args = dict(q=q, k=k, v=v, cu_seqlens_q=cq, cu_seqlens_k=ck, max_seqlen_q=None, max_seqlen_k=None)
    args.update(bad)
    with pytest.raises(ValueError, match=match):
        mh.attention_varlen(**args)


def _pool(k_cache, v_cache, page, seed=0):
    """Copy a contiguous cache [B, H_kv, T, d] into a shuffled page pool; returns (k, v, block_table)."""
    B, H_kv, T, d = k_cache.shape
    per = T // page
    n_pages = B * per + 3                                        # a few pages nobody owns
    perm = torch.randperm(n_pages, generator=torch.Generator().manual_seed(seed))
    table = perm[:B * per].view(B, per).to(torch.int32)
    kp = torch.zeros(n_pages, H_kv, page, d)
    vp = torch.zeros(n_pages, H_kv, page, v_cache.shape[-1])
    for b in range(B):
        kp[table[b].long()] = k_cache[b].unflatten(1, (per, page)).transpose(0, 1)   # (per, H_kv, page, d)
        vp[table[b].long()] = v_cache[b].unflatten(1, (per, page)).transpose(0, 1)
    return kp, vp, table


@pytest.mark.parametrize("backend", BACKEND_NAMES)
@pytest.mark.parametrize("tq", [1, 4])
@pytest.mark.parametrize("causal,win,softcap", [(True, (-1, -1), 0.0), (False, (-1, -1), 0.0),
                                                (True, (40, 0), 0.0), (True, (-1, -1), 4.0)])
def test_kvcache_contiguous_and_paged(tq, causal, win, softcap, backend):
    """Per-sequence lengths and left padding, with new tokens appended in place: every layout
    equals the oracle on each sequence's own keys."""
    B, H, H_kv, T, d, page = 3, 4, 2, 192, 16, 16
    g = torch.Generator().manual_seed(tq)
    k_cache, v_cache = torch.randn(2, B, H_kv, T, d, generator=g)
    seqlens = torch.tensor([100, 170, 37], dtype=torch.int32)
    leftpad = torch.tensor([0, 21, 5], dtype=torch.int32)
    q = torch.randn(B, H, tq, d, generator=g)
    k_new, v_new = torch.randn(2, B, H_kv, tq, d, generator=g)
    kp, vp, table = _pool(k_cache, v_cache, page)
    kw = dict(cache_seqlens=seqlens, cache_leftpad=leftpad, is_causal=causal, window_size=win, softcap=softcap,
              backend=backend)
    kc, vc = k_cache.clone(), v_cache.clone()
    out = mh.attention_with_kvcache(q, kc, vc, k_new, v_new, **kw)
    out_paged = mh.attention_with_kvcache(q, kp, vp, k_new, v_new, block_table=table, **kw)
    for b in range(B):
        n, s = int(seqlens[b]), int(leftpad[b])
        assert torch.equal(kc[b, :, n:n + tq], k_new[b])                           # appended in place
        assert torch.equal(paged.gather(kp, table[b], n, n + tq)[0], k_new[b])
        keys = torch.cat([k_cache[b:b + 1, :, s:n], k_new[b:b + 1]], 2)
        vals = torch.cat([v_cache[b:b + 1, :, s:n], v_new[b:b + 1]], 2)
        ref, _ = oracle(q[b:b + 1], keys, vals, None, causal, None, win, softcap)
        assert (out[b] - ref[0]).abs().max() < 2e-5
        assert (out_paged[b] - ref[0]).abs().max() < 2e-5


def test_paged_decode_reads_pages_in_place(monkeypatch):
    """The whole pages reach the kernel as strided views of the pool (no gathered copy)."""
    B, H_kv, T, d, page = 2, 2, 256, 16, 32
    k_cache, v_cache = torch.randn(2, B, H_kv, T, d)
    kp, vp, table = _pool(k_cache, v_cache, page)
    seen = []

    def spy(q, k, v, mask, *, is_causal, scale):
        seen.append(k.untyped_storage().data_ptr() == kp.untyped_storage().data_ptr())
        return BACKENDS["reference"](q, k, v, mask, is_causal=is_causal, scale=scale)

    q = torch.randn(B, 4, 1, d)
    out, _ = paged.attention(spy, q, kp, vp, table, [0, 0], [T, T - 10], is_causal=True, scale=0.25)
    assert seen[0] and seen.count(True) >= 1
    for b, n in enumerate([T, T - 10]):
        ref, _ = oracle(q[b:b + 1], k_cache[b:b + 1, :, :n], v_cache[b:b + 1, :, :n], None, True, 0.25)
        assert (out[b] - ref[0]).abs().max() < 2e-5


@pytest.mark.parametrize("bad,match", [
    (dict(cache_seqlens=torch.tensor([200, 5])), r"^cache_seqlens: sequences need"),
    (dict(cache_seqlens=torch.tensor([1.0, 2.0])), r"^cache_seqlens: expected an int"),
    (dict(cache_leftpad=torch.tensor([0, 9]), cache_seqlens=torch.tensor([4, 8])), r"^cache_seqlens: .*left padding \[0, 9\]"),
    (dict(block_table=torch.zeros(2, 3)), r"^block_table: expected an int32"),
    (dict(k=torch.randn(2, 2, 3, 16)), r"^v: expected new tokens"),
])
def test_kvcache_errors_name_the_argument(bad, match):
    q, kc = torch.randn(2, 4, 3, 16), torch.randn(2, 2, 192, 16)
    args = dict(k=None, v=None, cache_seqlens=torch.tensor([10, 20]))
    args.update(bad)
    with pytest.raises(ValueError, match=match):
        mh.attention_with_kvcache(q, kc, kc.clone(), args.pop("k"), args.pop("v"), **args)


# --- the library audit: paged isolation, bounded memory, the score limit ---------------------------

def _interleaved(B=2, H_kv=2, T=64, d=16, page=4, seed=0):
    """A shuffled pool (_pool) whose sequences' pages mix: one strided kernel call holds pages of
    both sequences, so their partials meet in one merge."""
    g = torch.Generator().manual_seed(seed)
    k_cache, v_cache = torch.randn(2, B, H_kv, T, d, generator=g)
    return k_cache, v_cache, *_pool(k_cache, v_cache, page)


@pytest.mark.parametrize("backend", BACKEND_NAMES)
@pytest.mark.parametrize("tq,causal", [(1, False), (3, True)])
@pytest.mark.parametrize("where", ["k NaN", "v +inf", "q NaN"])
@pytest.mark.parametrize("chunk", ["default", "one page per call"])
def test_paged_nan_stays_in_its_sequence(where, tq, causal, backend, chunk, monkeypatch):
    """A NaN / inf in sequence 0's keys, values or queries leaves sequence 1 exactly as without it
    (the per-sequence sums were a one-hot matmul: 0 x NaN = NaN reached every sequence), and
    sequence 0 stays non-finite (NaN in, NaN out), with each call's partials merged at once or
    one page per call."""
    if chunk != "default":
        monkeypatch.setattr(paged, "CHUNK_BYTES", 1)
    k_cache, v_cache, kp, vp, table = _interleaved()
    q = torch.randn(2, 4, tq, 16, generator=torch.Generator().manual_seed(1))
    kw = dict(cache_seqlens=torch.tensor([45, 58]), block_table=table, is_causal=causal, backend=backend)
    clean = mh.attention_with_kvcache(q, kp, vp, **kw)
    k2, v2, q2 = kp.clone(), vp.clone(), q.clone()
    page = int(table[0, 3])                                   # a whole page only sequence 0 reads
    if where == "k NaN":
        k2[page, 0, 1, 0] = float("nan")
    elif where == "v +inf":
        v2[page, 0, 1, 0] = float("inf")
    else:
        q2[0, 0, 0, 0] = float("nan")
    out = mh.attention_with_kvcache(q2, k2, v2, **kw)
    assert torch.equal(out[1], clean[1])
    ref, _ = oracle(q[1:], k_cache[1:, :, :58], v_cache[1:, :, :58], None, causal)
    assert (out[1] - ref[0]).abs().max() < 2e-5
    assert not torch.isfinite(out[0]).all()


def test_paged_kernel_calls_are_bounded(monkeypatch):
    """A chunked prefill over many pages: each kernel call holds at most CHUNK_BYTES of page
    batch (q was copied once per page of the whole cache in one call: memory pages x Tq), and
    the result is still exact."""
    B, H, H_kv, T, d, page, tq = 2, 4, 2, 512, 16, 8, 24
    g = torch.Generator().manual_seed(2)
    k_cache, v_cache = torch.randn(2, B, H_kv, T, d, generator=g)
    kp, vp, table = _pool(k_cache, v_cache, page)
    q = torch.randn(B, H, tq, d, generator=g)
    per_page = 4 * H * tq * (2 * d + d + page)                # q copy, out, out x w, scores (fp32)
    monkeypatch.setattr(paged, "CHUNK_BYTES", 5 * per_page)
    pages_per_call = []

    def spy(q, k, v, mask, *, is_causal, scale):
        pages_per_call.append(q.shape[0])
        return BACKENDS["reference"](q, k, v, mask, is_causal=is_causal, scale=scale)

    ends = [T, T - 37]
    out, lse = paged.attention(spy, q, kp, vp, table, [0, 5], ends, is_causal=True, scale=d ** -0.5)
    assert max(pages_per_call) == 5 and len(pages_per_call) > 2 * T // page // 5
    for b, (s, e) in enumerate(zip([0, 5], ends)):
        ref, ref_lse = oracle(q[b:b + 1], k_cache[b:b + 1, :, s:e], v_cache[b:b + 1, :, s:e], None, True)
        assert (out[b] - ref[0]).abs().max() < 2e-5
        assert (lse[b] - ref_lse[0]).abs().max() < 2e-5


@pytest.mark.parametrize("backend", ["reference", "decode"])
def test_paged_score_limit_is_the_contiguous_one(backend):
    """reference / decode on a paged cache refuse above max_score_bytes() as on a contiguous one
    (the paged call compared nothing: it passed the page size as Tk), before writing the new
    tokens; at the limit both layouts run."""
    from multihead.functional import score_limit
    from multihead.cost.counts.formulas import score_matrix_bytes
    k_cache, v_cache, kp, vp, table = _interleaved()
    q = torch.randn(2, 4, 3, 16)
    k_new, v_new = torch.randn(2, 2, 2, 2, 16)
    kw = dict(cache_seqlens=40, is_causal=True, backend=backend)
    need = score_matrix_bytes(2, 4, 3, 42, 4)
    for kc, vc, bt in [(k_cache.clone(), v_cache.clone(), None), (kp.clone(), vp.clone(), table)]:
        before = kc.clone()
        with score_limit(need - 1):
            with pytest.raises(ValueError, match=rf"^backend: '{backend}' would materialize .*\[2, 4, 3, 42\]"):
                mh.attention_with_kvcache(q, kc, vc, k_new, v_new, block_table=bt, **kw)
        assert torch.equal(kc, before)                                   # nothing written
        with score_limit(need):
            mh.attention_with_kvcache(q, kc, vc, k_new, v_new, block_table=bt, **kw)


def test_paged_auto_stays_within_a_low_score_limit(monkeypatch):
    """Under a score limit far below the usual sizes, auto on a paged cache runs, exactly, and no
    reference / decode call holds more scores than the limit."""
    from multihead.functional import max_score_bytes, score_limit
    k_cache, v_cache, kp, vp, table = _interleaved()
    q = torch.randn(2, 4, 20, 16)
    seen = []
    for name in ("reference", "decode"):
        def spy(q, k, v, mask, *, is_causal, scale, _kernel=BACKENDS[name]):
            seen.append(q.shape[0] * q.shape[1] * q.shape[2] * k.shape[2] * 4 <= max_score_bytes())
            return _kernel(q, k, v, mask, is_causal=is_causal, scale=scale)
        monkeypatch.setitem(BACKENDS, name, spy)
    with score_limit(4 * 4 * 20 * 4 * 3):                  # three pages' scores of one sequence
        out = mh.attention_with_kvcache(q, kp, vp, cache_seqlens=torch.tensor([50, 64]), block_table=table,
                                         is_causal=True)
    assert seen and all(seen)
    for b, n in enumerate([50, 64]):
        ref, _ = oracle(q[b:b + 1], k_cache[b:b + 1, :, :n], v_cache[b:b + 1, :, :n], None, True)
        assert (out[b] - ref[0]).abs().max() < 2e-5
