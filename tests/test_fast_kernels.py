"""The fast backends (fast_decode with its C kernel, fast_prefill); `multihead bench` is tests/test_bench.py.

Exactness is checked the same way as the core kernels: against a float64 oracle and torch SDPA
for fp32, and within 2x of PyTorch's own low-precision error for bf16/fp16. Block, chunk and split
sizes are forced small so that every edge (ragged tail, causal diagonal, empty chunk) is crossed.
"""
from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

import multihead as mh
from multihead.kernels import BACKENDS, fast_decode, fast_native, fast_prefill

HEADS = {"MHA": (4, 4), "GQA": (8, 2), "MQA": (4, 1)}
MASKS = ["none", "causal", "padding", "float", "causal+bool"]
NATIVE = fast_native.library() is not None


def oracle(q, k, v, mask=None, is_causal=False, scale=None):
    """float64 attention with bottom-right causal alignment; (out, lse), empty rows 0 / -inf."""
    B, H, Tq, d = q.shape
    H_kv, Tk = k.shape[1], k.shape[2]
    G = H // H_kv
    qq, kk, vv = q.double(), k.double().repeat_interleave(G, 1), v.double().repeat_interleave(G, 1)
    s = qq @ kk.transpose(-1, -2) * (scale if scale is not None else d ** -0.5)
    if mask is not None:
        s = s.masked_fill(~mask, -math.inf) if mask.dtype == torch.bool else s + mask.double()
    if is_causal:
        s = s.masked_fill(torch.arange(Tk)[None, :] > torch.arange(Tq)[:, None] + Tk - Tq, -math.inf)
    lse = torch.logsumexp(s, -1)
    return torch.exp(s - lse[..., None]).nan_to_num(0.0) @ vv, lse


def make(heads, tq, tk, mask_kind, d=16, dtype=torch.float32, seed=0, B=2):
    g = torch.Generator().manual_seed(seed)
    H, H_kv = HEADS[heads]
    q = torch.randn(B, H, tq, d, generator=g).to(dtype)
    k = torch.randn(B, H_kv, tk, d, generator=g).to(dtype)
    v = torch.randn(B, H_kv, tk, d, generator=g).to(dtype)
    mask, causal = None, "causal" in mask_kind
    if mask_kind in ("padding", "causal+bool"):
        keep = torch.rand(B, 1, tq, tk, generator=g) > 0.3
        keep[0, 0, 0] = False                                        # one fully masked row
        mask = keep
    elif mask_kind == "float":
        mask = torch.randn(1, H, tq, tk, generator=g).to(dtype)
    return q, k, v, mask, causal


def err(a, b):
    """Max abs difference; equal infinities (an empty row's lse = -inf) count as 0."""
    a, b = a.double(), b.double()
    same = (a == b) | (a.isnan() & b.isnan())
    return torch.where(same, 0.0, (a - b).abs()).max().item()


SIZES = {"fast_decode": [(1, 1), (3, 100), (5, 3)],
         "fast_prefill": [(1, 9), (33, 70), (70, 33)]}
SMALL = {"fast_decode": {"chunk": 16}, "fast_prefill": {"block_q": 16, "block_k": 24}}


@pytest.mark.parametrize("backend", ["fast_decode", "fast_prefill"])
@pytest.mark.parametrize("heads", list(HEADS))
@pytest.mark.parametrize("mask_kind", MASKS)
def test_fp32_matches_fp64_and_sdpa(backend, heads, mask_kind):
    for tq, tk in SIZES[backend]:
        q, k, v, mask, causal = make(heads, tq, tk, mask_kind)
        ref, ref_lse = oracle(q, k, v, mask, causal)
        out, lse = mh.attention(q, k, v, mask, is_causal=causal, return_lse=True, backend=backend)
        assert err(out, ref) < 2e-5, (tq, tk)
        assert torch.equal(torch.isneginf(lse), torch.isneginf(ref_lse))
        assert err(lse, ref_lse) < 2e-5
        # small blocks: every chunk / block edge and the diagonal are crossed
        o2, _ = BACKENDS[backend](q, k, v, None if mask is None else mask.reshape((1,) * (4 - mask.dim()) + mask.shape),
                                  is_causal=causal, scale=q.shape[-1] ** -0.5, **SMALL[backend])
        assert err(o2, ref) < 2e-5
        if not causal and mask_kind != "padding":                   # SDPA agrees where alignment does
            sd = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)
            assert err(out, sd) < 2e-5


@pytest.mark.parametrize("backend", ["fast_decode", "fast_prefill"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "fp16"])
@pytest.mark.parametrize("mask_kind", ["none", "causal", "padding"])
def test_low_precision_within_2x_of_pytorch(backend, dtype, mask_kind):
    tq, tk = (2, 150) if backend == "fast_decode" else (48, 48)
    q, k, v, mask, causal = make("GQA", tq, tk, mask_kind, d=32, dtype=dtype)
    ref, _ = oracle(q, k, v, mask, causal)
    ours = mh.attention(q, k, v, mask, is_causal=causal, backend=backend)
    assert ours.dtype == dtype
    # PyTorch's own low-precision result (math backend, explicit bottom-right mask for causal).
    m = mask
    if causal:
        cm = torch.arange(tk)[None, :] <= torch.arange(tq)[:, None] + tk - tq
        m = cm if m is None else (m & cm)
    theirs = F.scaled_dot_product_attention(q, k, v, attn_mask=m, enable_gqa=True).nan_to_num(0.0)
    keep = ~torch.isneginf(oracle(q, k, v, mask, causal)[1])[..., None]   # rows with some key
    assert err(ours * keep, ref * keep) <= 2 * err(theirs * keep, ref * keep) + 1e-3


@pytest.mark.parametrize("backend", ["fast_decode", "fast_prefill"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_fully_masked_rows_are_zero(backend, dtype):
    q, k, v, _, _ = make("GQA", 3, 40, "none", dtype=dtype)
    mask = torch.ones(2, 1, 3, 40, dtype=torch.bool)
    mask[1, :, 2] = False                                  # batch 1, query 2: no key
    out, lse = mh.attention(q, k, v, mask, return_lse=True, backend=backend)
    assert not out.isnan().any() and (out[1, :, 2] == 0).all() and torch.isneginf(lse[1, :, 2]).all()
    # causal with Tq > Tk: the first Tq - Tk queries see nothing (C kernel: lim = 0)
    q2 = torch.randn(1, 8, 6, 16).to(dtype)
    out, lse = mh.attention(q2, k[:1, :, :4], v[:1, :, :4], is_causal=True, return_lse=True, backend=backend)
    assert (out[:, :, :2] == 0).all() and torch.isneginf(lse[:, :, :2]).all() and not out.isnan().any()
    ref, _ = oracle(q2, k[:1, :, :4], v[:1, :, :4], is_causal=True)
    assert err(out, ref) < (2e-5 if dtype == torch.float32 else 2e-2)


@pytest.mark.skipif(not NATIVE, reason=f"C kernel unavailable: {fast_native.why_unavailable}")
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
@pytest.mark.parametrize("shape", [(1, 32, 8, 1, 3000, 128, 128), (2, 12, 4, 2, 777, 64, 24),
                                   (1, 5, 1, 3, 45, 8, 8), (1, 64, 1, 1, 70, 16, 16), (1, 8, 8, 4, 2, 32, 32),
                                   (1, 4, 4, 1, 101, 24, 40)])
def test_native_kernel_matches_oracle_and_torch_path(dtype, shape, cpu_path, monkeypatch):
    """The C kernel: GQA groups of any size (R = G*Tq rows, 4 at a time plus a remainder), d_v = 8
    (mod 16), an odd number of keys, a non-contiguous cache slice, causal Tq > 1, and fp16/bf16."""
    B, H, H_kv, Tq, Tk, d, dv = shape
    g = torch.Generator().manual_seed(1)
    q = torch.randn(B, H, Tq, d, generator=g).to(dtype)
    cache_k = torch.randn(B, H_kv, Tk + 7, d, generator=g).to(dtype)
    cache_v = torch.randn(B, H_kv, Tk + 7, dv, generator=g).to(dtype)
    k, v = cache_k[:, :, 3:3 + Tk], cache_v[:, :, 3:3 + Tk]          # KV-cache slices: non-contiguous
    assert fast_native.supported(q, k, v, None)
    for causal in (False, True):
        ref, ref_lse = oracle(q, k, v, is_causal=causal)
        out, lse = fast_decode.attention(q, k, v, None, is_causal=causal, scale=d ** -0.5)
        assert err(out, ref) < 5e-6 and err(lse, ref_lse) < 5e-6
        monkeypatch.setattr(fast_native, "supported", lambda *a: False)   # the torch path
        out_t, lse_t = fast_decode.attention(q, k, v, None, is_causal=causal, scale=d ** -0.5, chunk=100)
        monkeypatch.undo()
        assert err(out, out_t) < 5e-6 and err(lse, lse_t) < 5e-6


@pytest.fixture(params=fast_native.CPU_PATHS)
def cpu_path(request):
    """Every variant of the C kernels' inner loops that this CPU runs (fast_native.CPU_PATHS),
    selected in-process; the ones it cannot run are skipped, by name."""
    if not NATIVE:
        pytest.skip(f"C kernel unavailable: {fast_native.why_unavailable}")
    if request.param not in fast_native.cpu_paths():
        pytest.skip(f"this CPU cannot run the {request.param} path (it runs {fast_native.cpu_paths()})")
    with fast_native.use_cpu_path(request.param):
        assert fast_native.cpu_path() == request.param
        yield request.param


softmax_isa = cpu_path          # the prefill softmax step's tests: same paths


@pytest.mark.skipif(not NATIVE, reason=f"C kernel unavailable: {fast_native.why_unavailable}")
@pytest.mark.parametrize("heads", list(HEADS))
@pytest.mark.parametrize("mask_kind", MASKS)
def test_prefill_native_softmax_step_and_torch_path_agree(heads, mask_kind, softmax_isa, monkeypatch):
    """fast_prefill runs its softmax step in softmax_block.c where it can and in torch ops where it
    cannot; both paths, with blocks that cross every edge, against the float64 oracle."""
    for tq, tk in SIZES["fast_prefill"] + [(40, 40)]:
        q, k, v, mask, causal = make(heads, tq, tk, mask_kind)
        ref, ref_lse = oracle(q, k, v, mask, causal)
        m4 = None if mask is None else mask.reshape((1,) * (4 - mask.dim()) + mask.shape)
        run = lambda: fast_prefill.attention(q, k, v, m4, is_causal=causal, scale=q.shape[-1] ** -0.5,
                                             block_q=16, block_k=24)
        out, lse = run()
        monkeypatch.setattr(fast_native, "library", lambda: None)      # the torch path
        out_t, lse_t = run()
        monkeypatch.undo()
        for o, l in ((out, lse), (out_t, lse_t)):
            assert err(o, ref) < 2e-5 and err(l, ref_lse) < 2e-5, (tq, tk)
            assert torch.equal(torch.isneginf(l), torch.isneginf(ref_lse))


def test_softmax_block_step_against_its_formula(softmax_isa):
    """One online-softmax step: visible counts below 0, inside, past c; -inf scores; a row with
    nothing visible; c not a multiple of 8 or 16; a row stride wider than c."""
    g = torch.Generator().manual_seed(3)
    rows, c = 7, 29
    buf = torch.randn(rows, c + 5, generator=g) * 20
    buf[2, :] = -math.inf                                              # a fully user-masked row
    buf[3, 4] = -math.inf
    s = buf[:, :c]                                                     # ld = c + 5
    vis = torch.tensor([29, 0, 29, 17, -3, 40, 8], dtype=torch.int32)
    m = torch.tensor([-3.4e38, 5.0, -3.4e38, 100.0, 1.0, -3.4e38, 2.0])
    l = torch.tensor([0.0, 2.0, 0.0, 1.5, 3.0, 0.0, 0.5])
    s0, m0, l0, pad = s.double().clone(), m.double().clone(), l.double().clone(), buf[:, c:].clone()
    alpha = torch.empty(rows)
    fast_native.softmax_block(s, vis, m, l, alpha)
    cols = torch.arange(c)[None, :] < vis.clamp(0, c)[:, None].long()
    masked = s0.masked_fill(~cols, -math.inf)
    m_ref = torch.maximum(m0, masked.amax(-1)).clamp(min=torch.finfo(torch.float32).min)
    p_ref = torch.exp2(masked - m_ref[:, None])
    a_ref = torch.exp2(m0 - m_ref)
    # rtol: s - m rounded to fp32 at |s - m| ~ 80 moves 2^(s - m) by up to ~5e-6 relative
    assert torch.allclose(s.double(), p_ref, rtol=1e-5, atol=1e-30)
    assert (s[~cols] == 0).all() and (s[2] == 0).all() and not s.isnan().any()
    assert torch.allclose(m.double(), m_ref) and torch.allclose(alpha.double(), a_ref, rtol=1e-6)
    assert torch.allclose(l.double(), a_ref * l0 + p_ref.sum(-1), rtol=1e-6)
    assert torch.equal(buf[:, c:], pad)                                # columns past c untouched


def test_softmax_block_step_passes_nan_through(softmax_isa):
    """A NaN score makes its row's P, l (and so the output) NaN, on either path."""
    s = torch.randn(3, 37)
    s[1, 20] = float("nan")
    m, l, alpha = torch.full((3,), -3.4e38), torch.zeros(3), torch.empty(3)
    fast_native.softmax_block(s, None, m, l, alpha)
    assert torch.isnan(l[1]) and torch.isfinite(l[[0, 2]]).all() and torch.isfinite(s[[0, 2]]).all()


def test_native_limits_and_fallbacks():
    q, k, v = torch.randn(1, 4, 1, 12), torch.randn(1, 1, 30, 12), torch.randn(1, 1, 30, 12)
    assert not fast_native.supported(q, k, v, None)                   # d = 12 is not a multiple of 8
    q = torch.randn(1, 65, 1, 16)                                     # R = 65 rows > MAX_ROWS
    assert not fast_native.supported(q, torch.randn(1, 1, 30, 16), torch.randn(1, 1, 30, 16), None)
    assert not fast_native.supported(q.double(), k.double(), v.double(), None)
    for q, k, v in [(torch.randn(1, 4, 1, 12), k, v), (q, torch.randn(1, 1, 30, 16), torch.randn(1, 1, 30, 16))]:
        out = mh.attention(q, k, v, backend="fast_decode")             # handled by the torch path
        assert err(out, oracle(q, k, v)[0]) < 2e-5


def test_autograd_falls_back_to_differentiable_kernels():
    q = torch.randn(1, 4, 5, 16, requires_grad=True)
    k, v = torch.randn(1, 2, 9, 16), torch.randn(1, 2, 9, 16)
    grads = []
    for backend in ("tiled", "fast_prefill", "decode", "fast_decode"):
        out = mh.attention(q, k, v, is_causal=True, backend=backend)
        (g,) = torch.autograd.grad(out.square().sum(), q)
        grads.append(g)
    for g in grads[1:]:
        assert torch.allclose(g, grads[0], atol=1e-5)


def test_auto_picks_the_fast_backends(monkeypatch):
    from multihead.functional import choose_backend
    assert choose_backend(1, 32, 1, 131072) == "fast_decode"
    # a short cache: the C kernel wins at any length; without it, one matmul (reference) does
    assert choose_backend(1, 9, 1, 64) == ("fast_decode" if NATIVE else "reference")
    monkeypatch.setattr(fast_native, "library", lambda: None)
    assert choose_backend(1, 9, 1, 64) == "reference" and choose_backend(1, 9, 1, 4096) == "fast_decode"
    assert choose_backend(1, 32, 16384, 16384) == "fast_prefill"


@pytest.mark.parametrize("heads", ["GQA", "MQA"])     # H_kv = 2: heads split; H_kv = 1: query blocks dealt out
def test_prefill_worker_threads_match_oracle(heads, monkeypatch):
    from multihead.kernels import fast_prefill as fp
    monkeypatch.setattr(fp, "PARALLEL_MIN_PAIRS", 0)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        q, k, v, mask, causal = make(heads, 70, 90, "causal+bool")
        m4 = mask.reshape((1,) * (4 - mask.dim()) + mask.shape)
        out, lse = fp.attention(q, k, v, m4, is_causal=True, scale=0.25, block_q=16, block_k=32)
        assert torch.get_num_threads() == 2                      # restored after the call
    finally:
        torch.set_num_threads(before)
    ref, ref_lse = oracle(q, k, v, mask, True, scale=0.25)
    assert err(out, ref) < 2e-5 and err(lse, ref_lse) < 2e-5


@pytest.mark.parametrize("backend", ["fast_prefill", "auto"])
def test_prefill_under_inference_mode_matches_sdpa(backend):
    """torch.inference_mode() is thread-local: fast_prefill's worker threads must run in the
    caller's mode (they raised 'Inplace update to inference tensor outside InferenceMode')."""
    torch.manual_seed(0)
    q, k, v = (torch.randn(1, 8, 1024, 64) for _ in range(3))
    with torch.inference_mode():
        out = mh.attention(q, k, v, is_causal=True, backend=backend)
        ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert out.is_inference()
    torch.testing.assert_close(out, ref, atol=2e-5, rtol=2e-5)


@pytest.mark.parametrize("H,H_kv", [(4, 4), (4, 2), (8, 2)], ids=["MHA", "G2", "G4"])
def test_prefill_default_block_shapes_match_oracle(H, H_kv):
    """The default blocks (fast_prefill.block_shape: 1024 x 1024 for MHA, 512 x 1024 otherwise;
    the diagonal cut into stairs) with more than one query and key block and the causal diagonal
    crossing block edges."""
    from multihead.kernels import fast_prefill as fp
    bq, bk = fp.block_shape(H // H_kv)
    T = bq + bk + 37
    g = torch.Generator().manual_seed(H * 10 + H_kv)
    q, k, v = (torch.randn(1, h, T, 32, generator=g) for h in (H, H_kv, H_kv))
    out, lse = fp.attention(q, k, v, None, is_causal=True, scale=32 ** -0.5)
    ref, ref_lse = oracle(q, k, v, None, True)
    assert err(out, ref) < 2e-5 and err(lse, ref_lse) < 2e-5


@pytest.mark.parametrize("tq,tk", [(200, 200), (130, 333), (333, 130), (64, 1), (1, 64)])
@pytest.mark.parametrize("bq,bk,steps", [(64, 40, 4), (100, 64, 3), (64, 512, 1)])
def test_prefill_key_blocks_cover_each_visible_pair_once(tq, tk, bq, bk, steps, monkeypatch):
    """_key_blocks' plan for every query block: each (query, key) pair the causal mask keeps is
    computed exactly once, in key order per row, no block is wider than bk, and the pairs computed
    beyond the diagonal are at most one stair's triangle per stair (rise^2 / 2 + rise each)."""
    from types import SimpleNamespace
    from multihead.kernels import fast_prefill as fp
    monkeypatch.setattr(fp, "DIAG_STEPS", steps)
    p = SimpleNamespace(q=torch.empty(1, 1, tq, 1), k=torch.empty(1, 1, tk, 1), is_causal=True, bk=bk)
    offset = tk - tq
    for q0 in range(0, tq, bq):
        q1 = min(q0 + bq, tq)
        n = q1 - q0
        seen = torch.zeros(n, tk, dtype=torch.int64)
        last = torch.full((n,), -1)
        for t0, k0, k1 in fp._key_blocks(p, q0, q1):
            assert 0 <= t0 < n and 0 <= k0 < k1 <= tk and k1 - k0 <= bk
            seen[t0:, k0:k1] += 1
            assert (last[t0:] < k0).all()                 # keys in order for every row
            last[t0:] = k1 - 1
        keep = torch.arange(tk)[None, :] <= torch.arange(q0, q1)[:, None] + offset     # (n, tk)
        assert (seen[keep] == 1).all() and (seen <= 1).all()
        rise = (-(-n // steps) + 15) // 16 * 16 if steps > 1 else n
        stairs = -(-n // rise)
        assert int(seen[~keep].sum()) <= stairs * (rise * rise // 2 + rise)


@pytest.mark.parametrize("heads", list(HEADS))
@pytest.mark.parametrize("mask_kind", ["causal", "causal+bool", "float"])
@pytest.mark.parametrize("tq,tk", [(150, 150), (97, 260), (260, 97)])
@pytest.mark.parametrize("native", [True, False])
def test_prefill_diagonal_stairs_match_oracle(heads, mask_kind, tq, tk, native, monkeypatch):
    """The diagonal cut into stairs (64-query blocks, 4 stairs of 16 queries; rows in (query,
    group head) order; two KV heads per tile where H_kv = 2, so a stair's rows are strided
    views), a user mask, Tk != Tq both ways, fully masked rows, on the C softmax step and on the
    torch one."""
    from multihead.kernels import fast_prefill as fp
    if native and not NATIVE:
        pytest.skip(f"C kernel unavailable: {fast_native.why_unavailable}")
    monkeypatch.setattr(fp, "DIAG_STEPS", 4)
    if not native:
        monkeypatch.setattr(fast_native, "available", lambda: False)
    q, k, v, mask, causal = make(heads, tq, tk, mask_kind, seed=tq + tk)
    if mask_kind == "float":
        causal = True
        mask[..., 5, :] = -math.inf                                    # a fully masked row
    out, lse = fp.attention(q, k, v, mask, is_causal=causal, scale=0.3, block_q=64, block_k=40)
    ref, ref_lse = oracle(q, k, v, mask, causal, scale=0.3)
    assert err(out, ref) < 2e-5 and err(lse, ref_lse) < 2e-5


@pytest.mark.parametrize("llc_mib,G,expect", [(260, 1, (1024, 1024)), (260, 4, (512, 1024)),
                                               (32, 1, (1024, 1024)), (32, 4, (256, 1024)),
                                               (16, 1, (512, 1024)), (1, 4, (128, 1024))])
def test_prefill_blocks_fit_the_last_level_cache(llc_mib, G, expect, monkeypatch):
    """Two workers' score blocks [2, G * bq, bk] fp32 stay within half the last-level cache:
    32 MiB (a Zen CCX) halves GQA's query block, 16 MiB MHA's too; never below 128 queries."""
    from multihead.kernels import fast_prefill as fp
    monkeypatch.setattr(fp, "last_level_cache_bytes", lambda: llc_mib << 20)
    bq, bk = fp.block_shape(G, workers=2)
    assert (bq, bk) == expect
    assert bq == 128 or 2 * fp.HEADS_PER_TILE * G * bq * bk * 4 <= (llc_mib << 20) // 2


def test_prefill_tiles_keep_both_workers_busy():
    """The tile plan (fast_prefill._enough_tiles) against hand numbers: a causal 1024-query call
    of one KV head pair in 512-query blocks computes 512 x 512 and 512 x 1024 pairs, 1:2 (busiest
    worker 2 of an even 1.5: 1.33x), so it takes one head per tile (tiles 2, 2, 1, 1: 1.0x); one
    windowed chunk (512 queries,
    4608 keys, two KV heads) is one tile at the defaults (2.0x) and two tiles after; a 4k GQA call
    is left as it is (32 tiles)."""
    from multihead.kernels import fast_prefill as fp
    assert fp._makespan(1, 2, 1024, 1024, True, 512, 2, 2) == pytest.approx(4 / 3)
    assert fp._enough_tiles(1, 2, 1024, 1024, True, 512, 2, 2) == (512, 1)
    assert fp._makespan(1, 2, 1024, 1024, True, 512, 1, 2) == pytest.approx(1.0)
    assert fp._makespan(1, 2, 512, 4608, True, 512, 2, 2) == pytest.approx(2.0)
    assert fp._enough_tiles(1, 2, 512, 4608, True, 512, 2, 2) == (512, 1)
    assert fp._enough_tiles(1, 8, 4096, 4096, True, 512, 2, 2) == (512, 2)
    # One KV head, causal 1024 queries: 512-query blocks split 1:2, 256-query ones 1:2:3:4 -> 5:5.
    assert fp._enough_tiles(1, 1, 1024, 1024, True, 512, 1, 2) == (256, 1)
    assert fp._enough_tiles(1, 1, 100, 100, True, 512, 1, 2) == (128, 1)     # never below 128


def test_prefill_workers_leave_the_process_thread_count_alone(monkeypatch):
    """One thread per core without process-wide state: the tiles' threads run torch ops on one
    OpenMP thread each (OpenMP keeps that count per thread), torch.set_num_threads (process-wide:
    MKL's global count, torch's pools) is never called, and a thread watching
    torch.get_num_threads() while a call runs elsewhere sees its own count throughout."""
    import threading
    from multihead.kernels import fast_prefill as fp
    if fp._omp() is None:
        pytest.fail("torch's libgomp was not found: the thread-local path cannot be tested here")
    monkeypatch.setattr(fp, "PARALLEL_MIN_PAIRS", 0)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    in_tiles = []
    real_run = fp._run
    monkeypatch.setattr(fp, "_run", lambda *a: in_tiles.append(torch.get_num_threads()) or real_run(*a))

    def refuse(n):
        raise AssertionError("torch.set_num_threads called by the kernel")
    try:
        monkeypatch.setattr(torch, "set_num_threads", refuse)
        q, k, v, _, _ = make("GQA", 600, 600, "none")
        seen, done, failures = [], threading.Event(), []

        def call():
            try:
                for _ in range(3):
                    fp.attention(q, k, v, None, is_causal=True, scale=0.25, block_q=16, block_k=32)
            except AssertionError as e:
                failures.append(str(e))
            finally:
                done.set()
        worker = threading.Thread(target=call)
        worker.start()
        while not done.is_set():
            seen.append(torch.get_num_threads())
            done.wait(0.0005)              # let the workers have the GIL between their ops
        worker.join()
        monkeypatch.undo()
        assert failures == []
        assert done.is_set() and set(seen) == {2} and torch.get_num_threads() == 2
        assert in_tiles and set(in_tiles) == {1}       # 2 workers x 3 calls, each on one thread
    finally:
        torch.set_num_threads(before)


# A fork right after a prefill call: Python's join of the pool threads returns before their C-level
# exit, where MKL frees per-thread buffers under its allocator's lock; a fork in that window gave a
# child that spun forever in its first matmul (19 of 300 forks on the 2-core CI machine before the
# fix, 0 of 300 after; MKL team threads ending late: 1 in ~300 under load, 0 in 1,500 with serial MKL in the
# workers). 40 forks catch the first rate with probability 1 - 0.94^40 = 92%.
FORK_STRESS = """
import os, signal, sys, time, torch, multihead as mh
torch.set_num_threads(2)
k, v, q, a = torch.randn(1, 2, 2048, 64), torch.randn(1, 2, 2048, 64), torch.randn(1, 8, 256, 64), torch.randn(256, 256)
hung = 0
for i in range(40):
    mh.attention(q, k, v, backend="fast_prefill")
    pid = os.fork()
    if pid == 0:
        torch.bmm(a[None], a[None]).sum()
        os._exit(0)
    t0 = time.monotonic()
    while not os.waitpid(pid, os.WNOHANG)[0]:
        if time.monotonic() - t0 > 20:
            os.kill(pid, signal.SIGKILL); os.waitpid(pid, 0); hung += 1; break
        time.sleep(0.001)
print("hung", hung)
"""


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="no fork() on this platform")
def test_fork_right_after_prefill_calls_does_not_hang():
    import os
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    r = subprocess.run([sys.executable, "-c", FORK_STRESS], cwd=root, capture_output=True, text=True, timeout=600,
                       env={**os.environ, "PYTHONPATH": root})
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split() == ["hung", "0"], r.stdout


def test_prefill_workers_run_openmp_and_mkl_serially_and_restore_both():
    """Workers are one per core: torch's OpenMP AND MKL's own count are 1 inside them (MKL keeps a
    process-wide count from torch.set_num_threads; left alone, each worker's GEMMs started a
    2-thread MKL team, whose late exit made forks hang), and both are restored after."""
    import threading

    if fast_prefill._omp() is None or fast_prefill._mkl_local() is None:
        pytest.skip("torch without libgomp or MKL here: nothing to set")
    mkl_max = fast_prefill._torch_lib("libtorch_cpu.so").MKL_Get_Max_Threads
    seen = {}

    def worker():
        torch.set_num_threads(2)      # process-wide, as a user's program may have it
        outside = (fast_prefill._omp().omp_get_max_threads(), mkl_max())
        with fast_prefill._serial_torch_here():
            seen["inside"] = (fast_prefill._omp().omp_get_max_threads(), mkl_max())
        seen["after"] = (fast_prefill._omp().omp_get_max_threads(), mkl_max())
        seen["outside"] = outside

    before = torch.get_num_threads()
    try:
        t = threading.Thread(target=worker)
        t.start()
        t.join()
    finally:
        torch.set_num_threads(before)
    assert seen["outside"] == (2, 2) and seen["inside"] == (1, 1) and seen["after"] == (2, 2), seen


def test_cpu_path_override_is_validated_by_name(monkeypatch):
    """MULTIHEAD_CPU_PATH: a name that is no path, or a path this CPU cannot run, is a ValueError
    naming the variable (never a silent fallback); "torch" means no C kernel."""
    monkeypatch.setenv("MULTIHEAD_CPU_PATH", "avx9")
    with pytest.raises(ValueError, match="MULTIHEAD_CPU_PATH='avx9': not one of avx2, avx512, avx512bf16, torch"):
        fast_native.requested_path()
    monkeypatch.setattr(fast_native, "_cpu_flags", lambda: {"avx2", "fma", "f16c"})    # an AVX2-only CPU
    monkeypatch.setenv("MULTIHEAD_CPU_PATH", "avx512bf16")
    with pytest.raises(ValueError, match=r"MULTIHEAD_CPU_PATH=avx512bf16: this CPU cannot run it \(no avx512_bf16"):
        fast_native.requested_path()
    assert fast_native.cpu_paths() == ["avx2"]
    monkeypatch.setenv("MULTIHEAD_CPU_PATH", " AVX2 ")
    assert fast_native.requested_path() == "avx2"
    monkeypatch.setenv("MULTIHEAD_CPU_PATH", "torch")
    assert fast_native.requested_path() == "torch"
    monkeypatch.delenv("MULTIHEAD_CPU_PATH")
    assert fast_native.requested_path() is None


def test_bench_refuses_a_bad_cpu_path_before_running(monkeypatch, capsys):
    from multihead.cli import main
    monkeypatch.setenv("MULTIHEAD_CPU_PATH", "sse9")
    assert main(["bench", "--quick", "--no-memory"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "multihead bench: error: MULTIHEAD_CPU_PATH='sse9'" in err


@pytest.mark.skipif(not NATIVE, reason=f"C kernel unavailable: {fast_native.why_unavailable}")
@pytest.mark.parametrize("path", [*fast_native.CPU_PATHS, "torch"])
def test_cpu_path_env_chooses_the_path_at_load(path):
    """In a fresh process the variable decides the path once, at load; unset, the best one the CPU
    runs is taken; the kernels stay exact on it."""
    import os
    import subprocess
    import sys
    if path != "torch" and path not in fast_native.cpu_paths():
        pytest.skip(f"this CPU cannot run the {path} path")
    code = ("import torch, multihead as mh; from multihead.kernels import fast_native as f\n"
            "q, k, v = (torch.randn(1, h, t, 64).to(torch.bfloat16) for h, t in ((8, 1), (2, 300), (2, 300)))\n"
            "out = mh.attention(q, k, v, backend='fast_decode').float()\n"
            "ref = torch.nn.functional.scaled_dot_product_attention(q.double(), k.double(), v.double(), enable_gqa=True)\n"
            "print(f.cpu_path(), f.available(), float((out - ref).abs().max()))")
    env = {**os.environ, "MULTIHEAD_CPU_PATH": path}
    got = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert got.returncode == 0, got.stderr
    name, available, error = got.stdout.split()
    assert name == path and available == str(path != "torch") and float(error) < 2e-2
    env.pop("MULTIHEAD_CPU_PATH")
    got = subprocess.run([sys.executable, "-c", "from multihead.kernels import fast_native as f; print(f.cpu_path())"],
                         env=env, capture_output=True, text=True, timeout=300)
    assert got.stdout.split() == [fast_native.cpu_paths()[-1]]
