"""The decode fast path (kernels/fast_decode.fast_call): checks once per shape, exact every call.

A generation loop calls multihead.attention once per layer and token with one shape and a key
length that grows by one. The first call of a shape runs every check; later calls skip them. These
tests pin down that skipping them changes no result and lets no bad call through."""
from __future__ import annotations

import struct

import pytest
import torch

import multihead as mh
from multihead import functional
from multihead.kernels import fast_decode, fast_native
from tests.conftest import attention_fp64

pytestmark = pytest.mark.skipif(not fast_native.available(),
                                reason=f"C kernel unavailable: {fast_native.why_unavailable}")


def _qkv(H, H_kv, Tq, Tk, d=64, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(1, h, t, d, generator=g).to(dtype) for h, t in ((H, Tq), (H_kv, Tk), (H_kv, Tk)))


@pytest.fixture(autouse=True)
def fresh_plans(monkeypatch):
    """Each test starts with no remembered shape (other tests in this worker use the same ones)."""
    monkeypatch.setattr(fast_decode, "_PLANS", {})


@pytest.fixture
def no_checks(monkeypatch):
    """Make the full validation path fail loudly: a call that still reaches it raises."""
    def refuse(*args, **kwargs):
        raise AssertionError("the full checks ran")
    monkeypatch.setattr(functional, "_check_qkv", refuse)


def test_second_call_of_a_shape_skips_the_checks_and_stays_exact(monkeypatch):
    q, k, v = _qkv(9, 3, 1, 200, seed=1)
    functional.attention(q, k, v)                        # validates, remembers the shape
    calls = []
    real = functional._check_qkv
    monkeypatch.setattr(functional, "_check_qkv", lambda *a: calls.append(1) or real(*a))
    # a generation loop: same shape, one more key each step, new tensors each time
    for Tk in (200, 201, 257, 1024, 1025):
        q, k, v = _qkv(9, 3, 1, Tk, seed=Tk)
        out, lse = mh.attention(q, k, v, return_lse=True)
        ref, ref_lse = attention_fp64(q, k, v)
        assert (out.double() - ref).abs().max() < 2e-6
        assert (lse.double() - ref_lse).abs().max() < 2e-6
    assert calls == []                                  # every step took the fast path


def test_a_new_shape_or_a_changed_argument_is_checked_again(no_checks):
    q, k, v = _qkv(4, 2, 1, 50, seed=2)
    with pytest.raises(AssertionError, match="full checks"):
        mh.attention(q, k, v)                            # never seen: validated
    for kw in ({"scale": 0.3}, {"is_causal": True}, {"attn_mask": torch.ones(1, 1, 1, 50, dtype=torch.bool)},
               {"softcap": 5.0}, {"window_size": (8, 0)}, {"backend": "decode"}):
        with pytest.raises(AssertionError, match="full checks"):
            mh.attention(q, k, v, **kw)


def test_remembered_shape_still_refuses_what_the_checks_refuse():
    q, k, v = _qkv(4, 2, 1, 50, seed=3)
    mh.attention(q, k, v)
    with pytest.raises(ValueError, match="k: dtype"):
        mh.attention(q, k.double(), v)
    with pytest.raises(ValueError, match="v: expected shape"):
        mh.attention(q, k, v[:, :, :49])                 # Tk differs between k and v
    with pytest.raises(ValueError, match="k: expected Tk >= 1"):
        mh.attention(q, k[:, :, :0], v[:, :, :0])
    with pytest.raises(ValueError, match="softcap"):
        mh.attention(q, k, v, softcap=True)
    with pytest.raises(ValueError, match="scale"):
        mh.attention(q, k, v, scale=float("nan"))


def test_autograd_views_and_nan_after_the_shape_is_known():
    q, k, v = _qkv(4, 2, 1, 300, seed=4)
    mh.attention(q, k, v)
    # autograd: the differentiable backend runs, gradients flow
    qg = q.clone().requires_grad_()
    mh.attention(qg, k, v).sum().backward()
    assert qg.grad is not None and torch.isfinite(qg.grad).all()
    # a strided view of a bigger cache (last dim contiguous) and a non-contiguous last dim
    big = torch.randn(1, 2, 600, 64)
    kv = big[:, :, 100:400]
    ref, _ = attention_fp64(q, kv, kv)
    assert (mh.attention(q, kv, kv).double() - ref).abs().max() < 2e-6
    kt = torch.randn(1, 2, 64, 300).transpose(2, 3)      # stride(-1) != 1
    ref, _ = attention_fp64(q, kt, v)
    assert (mh.attention(q, kt, v).double() - ref).abs().max() < 2e-6
    # NaN in, NaN out
    qn = q.clone()
    qn[0, 1, 0, 3] = float("nan")
    out = mh.attention(qn, k, v)
    assert torch.isnan(out[0, 1]).all()                    # that query head's row, all of it
    assert torch.isfinite(out[0, 0]).all() and torch.isfinite(out[0, 2:]).all()


@pytest.mark.parametrize("H,H_kv,Tq,causal", [(9, 3, 1, False), (14, 2, 1, True), (3, 1, 1, False),
                                              (1, 1, 3, True), (7, 1, 1, True), (63, 1, 1, False),
                                              (6, 2, 2, True), (5, 5, 1, False)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_row_counts_that_are_not_multiples_of_four(H, H_kv, Tq, causal, dtype):
    """G * Tq = 3, 7, 63 (a 3-row tail after the 4-row loops of fast_decode.c), 6, 5 and 1 rows
    per KV head, causal or not, against the float64 oracle."""
    q, k, v = _qkv(H, H_kv, Tq, 1500, dtype=dtype, seed=H * 10 + Tq)
    out, lse = mh.attention(q, k, v, is_causal=causal, backend="fast_decode", return_lse=True)
    ref, ref_lse = attention_fp64(q, k, v, is_causal=causal)
    tol = 2e-6 if dtype == torch.float32 else 1e-2
    assert (out.double() - ref).abs().max() < tol
    assert (lse.double() - ref_lse).abs().max() < 1e-5


def test_the_fast_path_leaves_lse_out_unless_asked(monkeypatch):
    q, k, v = _qkv(8, 2, 1, 64, seed=5)
    mh.attention(q, k, v)
    seen = []
    real = fast_native.run_decode
    # the lse pointer: slot A_LSE (24) of the packed int64 arguments, 0 for none
    monkeypatch.setattr(fast_native, "run_decode",
                        lambda args, *a: seen.append(struct.unpack_from("=q", args, 24 * 8)[0]) or real(args, *a))
    mh.attention(q, k, v)
    out, lse = mh.attention(q, k, v, return_lse=True)
    assert seen == [0, lse.data_ptr()]


def test_query_layouts_and_the_default_scale_on_the_fast_path(no_checks):
    """The output buffer follows q where that is the same memory layout (a contiguous fp32 q of
    the output's shape, e.g. a [B, 1, H, d] projection transposed to [B, H, 1, d]) and is a fresh
    contiguous tensor otherwise; scale=None and the explicit default scale share one plan. Every
    call after the first skips the checks (no_checks) and matches the float64 oracle."""
    q, k, v = _qkv(8, 2, 1, 300, seed=6)
    fast_decode.remember(q, k, v, False, 1 / 8)          # what functional.attention files
    for qx in (q, q.transpose(1, 2).contiguous().transpose(1, 2),          # odd strides, size-1 dim
               torch.randn(1, 8, 1, 128)[..., 32:96]):                     # not contiguous
        for kw in ({}, {"scale": 1 / 8}):
            out = mh.attention(qx, k, v, **kw)
            ref, _ = attention_fp64(qx, k, v)
            assert out.shape == (1, 8, 1, 64) and out.dtype == torch.float32
            assert (out.double() - ref).abs().max() < 2e-6
    # a dense but permuted q (batch and heads swapped in memory): torch.empty_like would copy
    # that layout, so out must be allocated contiguous
    q2 = torch.randn(8, 2, 1, 64).permute(1, 0, 2, 3)
    k2, v2 = torch.randn(2, 2, 300, 64), torch.randn(2, 2, 300, 64)
    fast_decode.remember(q2.contiguous(), k2, v2, False, 1 / 8)
    out = mh.attention(q2, k2, v2)
    assert out.is_contiguous() and (out.double() - attention_fp64(q2, k2, v2)[0]).abs().max() < 2e-6
    # d != d_v and bf16: out is allocated by shape, not like q
    v2 = torch.randn(1, 2, 300, 32)
    fast_decode.remember(q, k, v2, False, 1 / 8)
    assert (mh.attention(q, k, v2).double() - attention_fp64(q, k, v2)[0]).abs().max() < 2e-6
    qb, kb, vb = (x.bfloat16() for x in (q, k, v))
    fast_decode.remember(qb, kb, vb, False, 1 / 8)
    out = mh.attention(qb, kb, vb)
    assert out.dtype == torch.bfloat16 and (out.double() - attention_fp64(qb, kb, vb)[0]).abs().max() < 1e-2


def test_a_decode_call_runs_on_a_small_thread_stack():
    """A small call's scratch is not on the caller's stack: a Python thread with a 64 KiB stack
    (threading.stack_size; the kernel before issue 32's stack scratch ran there) gets the answer,
    not a segmentation fault (32 KiB of stack arrays overflowed it)."""
    import subprocess
    import sys
    code = ("import threading, torch, multihead as mh\n"
            "q, k, v = torch.randn(1, 9, 1, 64), torch.randn(1, 3, 128, 64), torch.randn(1, 3, 128, 64)\n"
            "ref = mh.attention(q, k, v)\n"
            "threading.stack_size(65536)\n"
            "res = []\n"
            "t = threading.Thread(target=lambda: res.append(mh.attention(q, k, v)))\n"
            "t.start(); t.join()\n"
            "assert torch.equal(res[0], ref)\n"
            "print('ok')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", (r.returncode, r.stderr[-500:])
