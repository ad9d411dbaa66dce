"""multihead.softmax / log_softmax / logsumexp / softmax_jacobian: the worked numbers, stability, masks."""
from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import multihead as mh


def t(*xs, dtype=torch.float32):
    return torch.tensor(xs, dtype=dtype)


# --- the worked numbers from the issue / the reference text -------------------------------------

def test_worked_example_2_1_0():
    p = mh.softmax(t(2, 1, 0))
    assert [round(x, 3) for x in p.tolist()] == [0.665, 0.245, 0.090]
    # and the closed form: e^2 / (e^2 + e + 1)
    assert p[0].item() == pytest.approx(math.e ** 2 / (math.e ** 2 + math.e + 1), rel=1e-6)


def test_temperature_half_sharpens():
    p = mh.softmax(t(2, 1, 0), temperature=0.5)
    assert [round(x, 3) for x in p.tolist()] == [0.867, 0.117, 0.016]
    assert torch.allclose(p, mh.softmax(t(4, 2, 0)))      # tau divides the logits


def test_large_logits_equal_small_ones_where_naive_overflows():
    naive = torch.exp(t(1000, 999, 998)) / torch.exp(t(1000, 999, 998)).sum()
    assert naive.isnan().all()                            # inf / inf: why max subtraction exists
    assert torch.equal(mh.softmax(t(1000, 999, 998)), mh.softmax(t(2, 1, 0)))


def test_uniform_input_gives_uniform_output():
    assert torch.equal(mh.softmax(t(1, 1, 1, 1)), torch.full((4,), 0.25))
    assert torch.allclose(mh.softmax(torch.full((7,), -3.5)), torch.full((7,), 1 / 7))


def test_one_dominant_logit():
    p = mh.softmax(t(10, 0, 0, 0))
    assert p[0].item() == pytest.approx(0.99986, abs=5e-6)
    assert p[0].item() == pytest.approx(1 / (1 + 3 * math.exp(-10)), rel=1e-6)


@pytest.mark.parametrize("c", [-1e4, -7.25, 0.0, 3.0, 1e4])
def test_shift_invariance(c):
    x = torch.randn(5, 11, dtype=torch.float64)
    assert torch.allclose(mh.softmax(x + c), mh.softmax(x), atol=1e-12)
    assert torch.allclose(mh.logsumexp(x + c), mh.logsumexp(x) + c, atol=1e-9)


def test_fp16_logits_of_128_do_not_overflow():
    x = t(128, 127, 0, -128, dtype=torch.float16)
    assert torch.isinf(torch.exp(x)).any()               # exp(128) overflows fp16 (max 65504)
    p = mh.softmax(x)
    assert p.dtype == torch.float16 and torch.isfinite(p).all()
    ref = torch.softmax(x.double(), -1)
    assert torch.allclose(p.double(), ref, atol=1e-3)
    assert mh.logsumexp(x).item() == pytest.approx(torch.logsumexp(x.double(), -1).item(), abs=1e-4)


# --- dtypes, masks, agreement with torch --------------------------------------------------------

@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_matches_torch_and_keeps_dtype(dtype):
    g = torch.Generator().manual_seed(0)
    x = (torch.randn(3, 4, 50, generator=g) * 8).to(dtype)
    ref = torch.softmax(x.double(), dim=-1)
    tol = {torch.float16: 1e-3, torch.bfloat16: 4e-3, torch.float32: 1e-6, torch.float64: 1e-12}[dtype]
    for dim in (-1, 1):
        p = mh.softmax(x, dim=dim)
        assert p.dtype == dtype and p.shape == x.shape
        assert torch.allclose(p.double(), torch.softmax(x.double(), dim=dim), atol=tol)
    if dtype in (torch.float16, torch.bfloat16):
        # computed in fp32 and rounded once: as close as rounding the exact result (+ fp32 noise)
        assert (mh.softmax(x).double() - ref).abs().max() <= (ref.to(dtype).double() - ref).abs().max() + 1e-6
    ls = mh.log_softmax(x)
    assert ls.dtype == dtype
    assert torch.allclose(ls.double(), torch.log_softmax(x.double(), -1), atol=tol * 40, rtol=tol)
    lse = mh.logsumexp(x)
    assert lse.dtype == (torch.float64 if dtype == torch.float64 else torch.float32)
    assert torch.allclose(lse.double(), torch.logsumexp(x.double(), -1), atol=tol * 10)


def test_bool_mask_keeps_true_entries():
    x = t(2, 1, 0, 5)
    keep = torch.tensor([True, True, True, False])
    assert torch.allclose(mh.softmax(x, mask=keep), torch.cat([mh.softmax(t(2, 1, 0)), t(0)]))
    assert mh.logsumexp(x, mask=keep).item() == pytest.approx(mh.logsumexp(t(2, 1, 0)).item())
    ls = mh.log_softmax(x, mask=keep)
    assert ls[3].item() == -math.inf and torch.allclose(ls[:3], torch.log_softmax(t(2, 1, 0), -1))


def test_float_mask_is_added():
    x = t(2, 1, 0)
    bias = t(0, 1, float("-inf"))
    assert torch.allclose(mh.softmax(x, mask=bias), t(0.5, 0.5, 0))
    assert torch.allclose(mh.softmax(x, mask=bias, temperature=2.0), mh.softmax(t(1, 0.5, 0) + bias))


def test_fully_masked_row_is_zero_not_nan():
    x = torch.randn(3, 4)
    keep = torch.ones(3, 4, dtype=torch.bool)
    keep[1] = False
    p = mh.softmax(x, mask=keep)
    assert torch.equal(p[1], torch.zeros(4)) and not p.isnan().any()
    assert torch.allclose(p[[0, 2]].sum(-1), torch.ones(2))
    lse = mh.logsumexp(x, mask=keep)
    assert lse[1].item() == -math.inf and torch.isfinite(lse[[0, 2]]).all()
    assert torch.all(torch.isneginf(mh.log_softmax(x, mask=keep)[1]))
    # the same through an additive mask that overflows to -inf (finfo.min + finfo.min)
    lowest = torch.finfo(torch.float32).min
    bias = torch.zeros(3, 4)
    bias[1] = lowest
    p2 = mh.softmax(x, mask=bias + bias)
    assert torch.equal(p2[1], torch.zeros(4)) and not p2.isnan().any()
    # an fp16 row of all -inf
    assert torch.equal(mh.softmax(torch.full((5,), -math.inf, dtype=torch.float16)), torch.zeros(5, dtype=torch.float16))


def test_mask_broadcasts():
    x = torch.randn(2, 3, 5)
    keep = torch.tensor([True, False, True, True, False])   # (5,) -> every row
    p = mh.softmax(x, mask=keep)
    assert torch.all(p[..., ~keep] == 0) and torch.allclose(p.sum(-1), torch.ones(2, 3))


@pytest.mark.parametrize("kwargs,match", [
    ({"temperature": 0}, r"^temperature: expected a finite number > 0"),
    ({"temperature": -1.0}, r"^temperature"),
    ({"temperature": float("inf")}, r"^temperature"),
    ({"mask": torch.ones(4, dtype=torch.bool)}, r"^mask: shape \(4,\) does not broadcast"),
    ({"mask": torch.ones(3, dtype=torch.int32)}, r"^mask: expected dtype bool"),
    ({"mask": [True, False, True]}, r"^mask: expected a bool or float tensor"),
])
def test_bad_arguments_name_themselves(kwargs, match):
    with pytest.raises(ValueError, match=match):
        mh.softmax(torch.randn(2, 3), **kwargs)


@pytest.mark.parametrize("fn", [mh.softmax, mh.log_softmax, mh.logsumexp])
@pytest.mark.parametrize("dim,error,match", [
    (2, IndexError, r"^dim: expected an integer in \[-2, 1\] for x of shape \(2, 3\), got 2"),
    (-3, IndexError, r"^dim: expected an integer in \[-2, 1\]"),
    (5, IndexError, r"^dim: "),
    (1.0, TypeError, r"^dim: expected an integer, got 1.0"),
    (None, TypeError, r"^dim: expected an integer, got None"),
    ((0, 1), TypeError, r"^dim: expected an integer"),
    (True, TypeError, r"^dim: expected an integer"),
])
def test_bad_dim_names_dim(fn, dim, error, match):
    """A bad dim is torch's kind of error (IndexError / TypeError) naming dim, not 'tuple index
    out of range' from inside."""
    with pytest.raises(error, match=match):
        fn(torch.randn(2, 3), dim=dim)


def test_good_dims_match_torch():
    x = torch.randn(2, 3)
    for dim in (0, 1, -1, -2):
        assert torch.allclose(mh.softmax(x, dim=dim), torch.softmax(x, dim=dim))
        assert torch.allclose(mh.logsumexp(x, dim=dim), torch.logsumexp(x, dim=dim))
    assert torch.equal(mh.softmax(torch.tensor(3.0), dim=0), torch.softmax(torch.tensor(3.0), dim=0))


def test_integer_input_rejected():
    with pytest.raises(ValueError, match=r"^x: expected a floating-point tensor"):
        mh.softmax(torch.tensor([1, 2, 3]))


# --- the Jacobian --------------------------------------------------------------------------------

def test_jacobian_matches_autograd():
    x = torch.randn(6, dtype=torch.float64)
    p = mh.softmax(x)
    J = mh.softmax_jacobian(p)
    J_auto = torch.autograd.functional.jacobian(lambda z: torch.softmax(z, -1), x)
    assert torch.allclose(J, J_auto, atol=1e-12)
    assert torch.allclose(J, J.T) and torch.allclose(J.sum(-1), torch.zeros(6, dtype=J.dtype), atol=1e-12)
    # batched: [..., n] -> [..., n, n]
    P = mh.softmax(torch.randn(2, 3, 4))
    assert mh.softmax_jacobian(P).shape == (2, 3, 4, 4)
    # the worked example: diag(p) - p p^T at p = softmax(2, 1, 0)
    p0 = mh.softmax(t(2, 1, 0, dtype=torch.float64))
    J0 = mh.softmax_jacobian(p0)
    assert J0[0, 0].item() == pytest.approx(p0[0].item() * (1 - p0[0].item()))
    assert J0[0, 1].item() == pytest.approx(-p0[0].item() * p0[1].item())


# --- properties ----------------------------------------------------------------------------------

finite_rows = hnp.arrays("float64", st.tuples(st.integers(1, 4), st.integers(1, 12)),
                         elements=st.floats(-1e4, 1e4, allow_nan=False))


@settings(max_examples=60, deadline=None)
@given(finite_rows, st.floats(0.05, 20), st.floats(-1e3, 1e3))
def test_property_rows_sum_to_one_and_shift(x, tau, c):
    x = torch.from_numpy(x)
    p = mh.softmax(x, temperature=tau)
    assert torch.all(p >= 0) and torch.allclose(p.sum(-1), torch.ones(x.shape[0], dtype=x.dtype))
    assert torch.allclose(mh.softmax(x + c, temperature=tau), p, atol=1e-9)
    assert torch.allclose(torch.exp(mh.log_softmax(x, temperature=tau)), p, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(finite_rows, st.data())
def test_property_masked_rows(x, data):
    x = torch.from_numpy(x)
    keep = torch.tensor(data.draw(hnp.arrays("bool", x.shape)))
    p = mh.softmax(x, mask=keep)
    assert not p.isnan().any() and torch.all(p[~keep] == 0)
    has_any = keep.any(-1)
    assert torch.allclose(p.sum(-1), has_any.double())
    lse = mh.logsumexp(x, mask=keep)
    assert torch.equal(torch.isneginf(lse), ~has_any)
