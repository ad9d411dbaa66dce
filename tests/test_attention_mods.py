"""window_size, softcap and alibi_slopes in multihead.attention, every backend, against a float64
oracle and PyTorch's own attention in the same dtype (tests/attention_oracle.py).

The grid follows the shape of flash-attention's and PyTorch's attention suites: dtype x
MHA/GQA/MQA x causal x window x score modification x (Tq, Tk) with Tq = 1, Tq < Tk, Tq = Tk and
Tq > Tk. fp32 runs the full product (the score modification cycles through none / softcap /
ALiBi / both along the grid, so each meets every shape); fp16/bf16 run a subset, held to the
"at most 2x PyTorch's own error in that dtype" rule, forward and backward.
"""
from __future__ import annotations

import functools
import itertools

import pytest
import torch

import multihead as mh
from attention_oracle import oracle, sdpa_mods
from multihead.kernels import BACKENDS, window

HEADS = {"MHA": (4, 4), "GQA": (6, 2), "MQA": (3, 1)}
LENGTHS = [(1, 97), (7, 300), (128, 128), (300, 77)]
WINDOWS = [(-1, -1), (16, 0), (8, 24), (0, 0), (-1, 5)]
MODS = ["none", "softcap", "alibi", "softcap+alibi"]
ALL_BACKENDS = sorted(BACKENDS) + ["auto"]
DIFFERENTIABLE = ["reference", "tiled", "decode", "auto"]


def make(heads, tq, tk, mod, dtype=torch.float32, seed=0, B=2, d=32):
    H, H_kv = HEADS[heads]
    g = torch.Generator().manual_seed(seed + 31 * tq + tk + H_kv)
    q = (torch.randn(B, H, tq, d, generator=g) * 1.5).to(dtype)    # scores of a few units: softcap bites
    k = (torch.randn(B, H_kv, tk, d, generator=g) * 1.5).to(dtype)
    v = torch.randn(B, H_kv, tk, d, generator=g).to(dtype)
    softcap = 2.5 if "softcap" in mod else 0.0
    slopes = torch.rand(B, H, generator=g) * 0.2 if "alibi" in mod else None
    if slopes is not None and seed % 2:
        slopes = slopes[0]                                          # the [H] form
    return q, k, v, softcap, slopes


def err(a, b):
    return (a.double() - b.double()).abs().max().item()


# The inputs and what they are compared with (the float64 oracle, PyTorch's own attention) depend
# on the case, not on the backend under test: computed once per case and shared by its backends
# (the backend varies fastest in the collection order, so each case is computed about once per
# worker). The tensors are never modified: a backend that wrote into its inputs would fail the
# input check below.
@functools.lru_cache(maxsize=32)
def expected(heads, tq, tk, causal, win, mod, dtype=torch.float32):
    q, k, v, softcap, slopes = make(heads, tq, tk, mod, dtype)
    ref = oracle(q, k, v, None, causal, None, win, softcap, slopes)
    theirs = sdpa_mods(q, k, v, None, causal, win, softcap, slopes) if dtype != torch.float32 else None
    return (q, k, v, softcap, slopes), ref, theirs


def _unchanged(case, heads, tq, tk, mod, dtype=torch.float32):
    return all(torch.equal(a, b) for a, b in zip(case[:3], make(heads, tq, tk, mod, dtype)[:3]))


FP32 = [(h, tq, tk, c, w, MODS[i % len(MODS)]) for i, (h, (tq, tk), c, w)
        in enumerate(itertools.product(HEADS, LENGTHS, (False, True), WINDOWS))]


@pytest.mark.parametrize("backend", ALL_BACKENDS)
@pytest.mark.parametrize("heads,tq,tk,causal,win,mod", FP32,
                         ids=[f"{h}-q{a}-k{b}-{'c' if c else 'nc'}-w{w[0]}_{w[1]}-{m}" for h, a, b, c, w, m in FP32])
def test_fp32_matches_oracle(heads, tq, tk, causal, win, mod, backend):
    case, (ref, ref_lse), _ = expected(heads, tq, tk, causal, win, mod)
    q, k, v, softcap, slopes = case
    out, lse = mh.attention(q, k, v, is_causal=causal, window_size=win, softcap=softcap,
                            alibi_slopes=slopes, return_lse=True, backend=backend)
    assert out.dtype == torch.float32 and not out.isnan().any()
    assert err(out, ref) < 2e-5
    assert torch.equal(torch.isneginf(lse), torch.isneginf(ref_lse))   # rows the window empties
    finite = torch.isfinite(ref_lse)
    assert torch.allclose(lse[finite].double(), ref_lse[finite], atol=1e-4, rtol=1e-5)
    assert (out[~finite] == 0).all()
    assert _unchanged(case, heads, tq, tk, mod)


LOW = [(h, tq, tk, c, w, m) for (h, (tq, tk), c, (w, m)) in itertools.product(
    HEADS, [(1, 97), (64, 200), (150, 150)], (False, True),
    [((-1, -1), "softcap"), ((16, 0), "none"), ((8, 24), "softcap+alibi"), ((32, -1), "alibi")])]


@pytest.mark.parametrize("backend", ALL_BACKENDS)
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "fp16"])
@pytest.mark.parametrize("heads,tq,tk,causal,win,mod", LOW[::2],
                         ids=[f"{h}-q{a}-k{b}-{'c' if c else 'nc'}-w{w[0]}_{w[1]}-{m}" for h, a, b, c, w, m in LOW[::2]])
def test_low_precision_within_2x_of_pytorch(heads, tq, tk, causal, win, mod, dtype, backend):
    case, (ref, _), theirs = expected(heads, tq, tk, causal, win, mod, dtype)
    q, k, v, softcap, slopes = case
    out = mh.attention(q, k, v, is_causal=causal, window_size=win, softcap=softcap, alibi_slopes=slopes,
                       backend=backend)
    assert out.dtype == dtype
    assert err(out, ref) <= 2 * err(theirs, ref) + torch.finfo(dtype).eps / 4
    assert _unchanged(case, heads, tq, tk, mod, dtype)


def _grads(fn, leaves, dout):
    leaves = [t.detach().clone().requires_grad_() for t in leaves]
    fn(*leaves).backward(dout.to(leaves[0].dtype))
    return [t.grad.double() for t in leaves]


@functools.lru_cache(maxsize=8)
def expected_grads(heads, tq, tk, causal, win, mod, dtype):
    """(inputs, dout, oracle's float64 gradients, PyTorch's gradients in `dtype`), once per case."""
    q, k, v, softcap, slopes = make(heads, tq, tk, mod, dtype, B=1)
    dout = torch.randn(q.shape, generator=torch.Generator().manual_seed(5))
    kw = dict(window=win, softcap=softcap, alibi_slopes=slopes)
    ref = _grads(lambda a, b, c: oracle(a, b, c, None, causal, **kw)[0], [q.double(), k.double(), v.double()], dout)
    theirs = _grads(lambda a, b, c: sdpa_mods(a, b, c, None, causal, **kw), [q, k, v], dout)
    return (q, k, v, softcap, slopes), dout, ref, theirs


@pytest.mark.parametrize("backend", DIFFERENTIABLE)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16], ids=["fp32", "bf16", "fp16"])
@pytest.mark.parametrize("heads,tq,tk,causal,win,mod", LOW[1::2],
                         ids=[f"{h}-q{a}-k{b}-{'c' if c else 'nc'}-w{w[0]}_{w[1]}-{m}" for h, a, b, c, w, m in LOW[1::2]])
def test_backward_within_2x_of_pytorch(heads, tq, tk, causal, win, mod, dtype, backend):
    (q, k, v, softcap, slopes), dout, ref, theirs = expected_grads(heads, tq, tk, causal, win, mod, dtype)
    ours = _grads(lambda a, b, c: mh.attention(a, b, c, is_causal=causal, window_size=win, softcap=softcap,
                                               alibi_slopes=slopes, backend=backend), [q, k, v], dout)
    floor = 1e-5 if dtype == torch.float32 else torch.finfo(dtype).eps / 4
    for name, a, t, r in zip("qkv", ours, theirs, ref):
        assert err(a, r) <= 2 * err(t, r) + floor * max(1.0, r.abs().max().item()), name


@pytest.mark.parametrize("backend", ["fast_prefill", "fast_decode", "tiled", "reference"])
def test_window_with_user_masks(backend):
    """A window ANDs with a bool mask and adds to a float mask, on the band-slicing path too."""
    g = torch.Generator().manual_seed(9)
    q = torch.randn(1, 4, 90, 16, generator=g)
    k, v = torch.randn(2, 1, 2, 130, 16, generator=g)
    for mask in (torch.rand(1, 4, 90, 130, generator=g) > 0.2, torch.randn(1, 1, 90, 130, generator=g),
                 torch.rand(1, 1, 1, 130, generator=g) > 0.1):
        out = mh.attention(q, k, v, mask, is_causal=True, window_size=(20, -1), backend=backend)
        ref, _ = oracle(q, k, v, mask, True, None, (20, -1))
        assert err(out, ref) < 2e-5


def test_window_slices_keep_the_work_in_the_band(monkeypatch):
    """The band-slicing path hands the fast kernel only keys inside each chunk's band."""
    seen = []

    def spy(q, k, v, mask, *, is_causal, scale):
        seen.append((q.shape[2], k.shape[2]))
        return BACKENDS["reference"](q, k, v, mask, is_causal=is_causal, scale=scale)

    q = torch.randn(1, 2, 2000, 16)
    kv = torch.randn(1, 2, 2000, 16)
    out, _ = window.attention(spy, q, kv, kv, None, is_causal=True, scale=0.25,
                              mods=mh.functional.score_mods(q, (100, -1)))
    assert all(nk <= nq + 100 for nq, nk in seen)
    # O(Tq * (window + chunk)) pairs in all: a chunk is at most two calls (the band's left edge,
    # masked, and the keys every query of the chunk sees, unmasked), never Tq * Tk
    assert sum(nq * nk for nq, nk in seen) <= 2000 * (100 + window.CHUNK_Q + 1)
    assert 2000 <= sum(nq for nq, _ in seen) <= 2 * 2000
    ref, _ = oracle(q, kv, kv, None, True, 0.25, (100, -1))
    assert err(out, ref) < 2e-5


@pytest.mark.parametrize("kwargs,match", [
    ({"window_size": (3,)}, r"^window_size: expected \(left, right\)"),
    ({"window_size": (-2, 0)}, r"^window_size: .*left=-2"),
    ({"window_size": (0, 1.5)}, r"^window_size: .*right=1.5"),
    ({"softcap": -1.0}, r"^softcap: expected a finite number >= 0"),
    ({"softcap": float("inf")}, r"^softcap: "),
    ({"alibi_slopes": torch.ones(3)}, r"^alibi_slopes: expected a float tensor of shape \[H\] = \[4\]"),
    ({"alibi_slopes": torch.ones(4, dtype=torch.int64)}, r"^alibi_slopes: "),
])
def test_bad_mods_name_the_argument(kwargs, match):
    q = torch.randn(1, 4, 3, 8)
    with pytest.raises(ValueError, match=match):
        mh.attention(q, q[:, :2], q[:, :2], **kwargs)


def test_no_window_is_unchanged_and_causal_window_equals_mask():
    """window (-1, -1) is the plain call; (w, 0) equals is_causal with the band as a bool mask."""
    q, k, v, _, _ = make("GQA", 40, 60, "none")
    assert torch.equal(mh.attention(q, k, v, window_size=(-1, -1)), mh.attention(q, k, v))
    pos = torch.arange(40)[:, None] + 20
    band = (torch.arange(60)[None, :] >= pos - 7) & (torch.arange(60)[None, :] <= pos)
    a = mh.attention(q, k, v, window_size=(7, 0), backend="tiled")
    b = mh.attention(q, k, v, band, backend="reference")
    assert err(a, b) < 1e-6
