"""Softmax, log-softmax and log-sum-exp that never overflow and never return NaN for a masked row.

    softmax(x)_i = exp(x_i - m) / sum_j exp(x_j - m),   m = max_j x_j

Subtracting the row maximum m changes nothing (the factor exp(-m) cancels between numerator and
denominator) but keeps every exponent <= 0, so exp() cannot overflow even for x = 1000 or for
fp16 logits of 128. Temperature tau divides the logits first: softmax(x / tau).

Masks follow PyTorch's scaled_dot_product_attention: a bool mask keeps the entries where it is
True; a float mask is added to the logits (use -inf to drop an entry). A row with nothing kept
gives all zeros from softmax, -inf from logsumexp and log_softmax, never NaN.

fp16 / bf16 inputs are computed in fp32 and returned in the input dtype (logsumexp stays fp32,
like the attention kernels' lse); fp32 and fp64 are computed in their own precision.
"""
from __future__ import annotations

import math
import numbers

import torch
from torch import Tensor

__all__ = ["softmax", "log_softmax", "logsumexp", "softmax_jacobian", "compute_dtype"]


def compute_dtype(dtype: torch.dtype) -> torch.dtype:
    """The dtype we accumulate in: fp32 for fp16/bf16 (and fp32), fp64 stays fp64."""
    return torch.float64 if dtype == torch.float64 else torch.float32


def _check_mask(x: Tensor, mask: Tensor | None) -> None:
    if mask is None:
        return
    if not isinstance(mask, Tensor):
        raise ValueError(f"mask: expected a bool or float tensor, got {type(mask).__name__}")
    if mask.device != x.device:
        raise ValueError(f"mask: expected device {x.device}, got {mask.device}")
    try:
        shape = torch.broadcast_shapes(mask.shape, x.shape)
    except RuntimeError:
        shape = None
    if shape != x.shape:
        raise ValueError(f"mask: shape {tuple(mask.shape)} does not broadcast to x's shape {tuple(x.shape)}")
    if mask.dtype != torch.bool and not mask.is_floating_point():
        raise ValueError(f"mask: expected dtype bool (True = keep) or a float dtype (additive), got {mask.dtype}")


def _check_dim(x: Tensor, dim) -> None:
    """``dim`` as torch takes it: one integer in [-n, n-1] for an n-dim x (a 0-dim x has [-1, 0]);
    a TypeError / IndexError naming ``dim`` otherwise, as torch.softmax raises."""
    if isinstance(dim, bool) or not isinstance(dim, numbers.Integral):
        raise TypeError(f"dim: expected an integer, got {dim!r}")
    n = max(x.dim(), 1)
    if not -n <= dim < n:
        raise IndexError(f"dim: expected an integer in [{-n}, {n - 1}] for x of shape {tuple(x.shape)}, got {dim}")


def _logits(x: Tensor, temperature: float, mask: Tensor | None, dim: int) -> tuple[Tensor, Tensor | float]:
    """(z, shift) with x / temperature + mask = z + shift along ``dim``, z in the compute dtype
    (-inf where dropped). ``shift`` is constant along ``dim``, so softmax(z) is the answer and
    logsumexp adds it back.

    Why the shift: x / tau overflows for a small temperature (2 / 1e-45 = inf, and inf - inf is
    NaN), so the row max m of the kept entries is subtracted first: (x - m) / tau <= 0 can only
    underflow to -inf (probability 0, the right limit), never overflow.
    """
    if not isinstance(x, Tensor) or not x.is_floating_point():
        raise ValueError(f"x: expected a floating-point tensor, got "
                         f"{x.dtype if isinstance(x, Tensor) else type(x).__name__}")
    _check_dim(x, dim)
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) \
            or not math.isfinite(temperature) or temperature <= 0:
        raise ValueError(f"temperature: expected a finite number > 0, got {temperature!r}")
    _check_mask(x, mask)
    ct = compute_dtype(x.dtype)
    z = x.to(ct)
    fmask = None
    if mask is not None and mask.dtype == torch.bool:
        z = z.masked_fill(~mask, float("-inf"))
    elif mask is not None:
        fmask = mask.to(ct)
    shift: Tensor | float = 0.0
    if temperature != 1.0:
        if fmask is not None:                                  # -inf in the mask drops the entry
            z = z.masked_fill(torch.isneginf(fmask), float("-inf"))
        m = _safe_max(z, dim)                                  # (..., 1, ...): kept entries' max
        d = z - m
        info = torch.finfo(ct)
        if not info.tiny <= temperature <= info.max:           # tau is not a normal number in ct
            z = (d.double() / temperature).to(ct)              # (0 or inf there): divide in fp64
        else:
            z = d / temperature
        shift = m.double() / temperature if temperature < 1 else m / temperature
    if fmask is not None:
        z = z + fmask
    return z, shift


def _safe_max(z: Tensor, dim: int) -> Tensor:
    """Row max, with 0 in place of -inf so that an all-masked row gives exp(-inf - 0) = 0, not NaN."""
    if z.dim() and z.shape[dim] == 0:          # an empty row: torch.softmax gives empty, logsumexp -inf
        shape = list(z.shape)
        shape[dim] = 1
        return z.new_zeros(shape)
    m = z.amax(dim=dim, keepdim=True)
    return torch.where(torch.isneginf(m), torch.zeros_like(m), m)


def logsumexp(x: Tensor, dim: int = -1, *, temperature: float = 1.0, mask: Tensor | None = None,
              keepdim: bool = False) -> Tensor:
    """log sum_j exp(x_j / tau) over ``dim``: m + log sum_j exp(x_j / tau - m).

    x: any shape; mask: broadcastable to x. Returns x's shape without ``dim`` (kept as size 1
    with keepdim), in fp32 (fp64 for fp64 input). A fully masked row gives -inf; a temperature so
    small that the true value exceeds the dtype's range gives +inf (never NaN for finite x).
    """
    z, shift = _logits(x, temperature, mask, dim)
    m = _safe_max(z, dim)
    s = torch.exp(z - m).sum(dim=dim, keepdim=True)
    out = m + torch.log(s)                      # log(0) = -inf for an all-masked row
    if isinstance(shift, Tensor):
        out = (out + shift).to(out.dtype)       # shift may be fp64 (m / tau overflows fp32 first)
    return out if keepdim else out.squeeze(dim)


def log_softmax(x: Tensor, dim: int = -1, *, temperature: float = 1.0, mask: Tensor | None = None) -> Tensor:
    """log softmax(x / tau) = x / tau - logsumexp(x / tau); -inf where masked. Same shape and dtype as x."""
    z, _ = _logits(x, temperature, mask, dim)   # shift-invariant: the shift cancels
    lse = logsumexp(z, dim, keepdim=True)
    # An all-masked row has lse = -inf and z = -inf; (-inf) - (-inf) is NaN, so force -inf there.
    out = torch.where(torch.isneginf(lse), torch.full_like(z, float("-inf")), z - lse)
    return out.to(x.dtype)


def softmax(x: Tensor, dim: int = -1, *, temperature: float = 1.0, mask: Tensor | None = None) -> Tensor:
    """softmax(x / tau) along ``dim``, max-subtracted; zeros for a row with nothing kept.

    x: any shape; mask: bool (True = keep) or additive float, broadcastable to x. Returns x's shape
    and dtype (computed in fp32 for fp16/bf16). Finite inputs never give NaN, whatever the
    temperature (a tiny one gives the one-hot argmax, ties shared); NaN in a row gives NaN there.
    """
    z, _ = _logits(x, temperature, mask, dim)
    e = torch.exp(z - _safe_max(z, dim))        # every exponent <= 0: no overflow
    s = e.sum(dim=dim, keepdim=True)
    # s = 0 only when every entry was masked; then e is all zeros too and 0 / 1 = 0.
    return (e / torch.where(s > 0, s, torch.ones_like(s))).to(x.dtype)


def softmax_jacobian(p: Tensor) -> Tensor:
    """d softmax / d x = diag(p) - p p^T, from the probabilities p (not the logits).

    Derivation: p_i = e^{x_i} / S, so dp_i/dx_j = p_i [i = j] - p_i p_j.
    p: [..., n] -> [..., n, n]; each row of the result sums to 0 (softmax ignores shifts).
    """
    if not isinstance(p, Tensor) or not p.is_floating_point() or p.dim() < 1:
        raise ValueError("p: expected a floating-point tensor of probabilities with at least 1 dim")
    return torch.diag_embed(p) - p.unsqueeze(-1) * p.unsqueeze(-2)   # (..., n, n)
