"""The inputs of the path probes: shapes, score patterns and masks, built in float64.

A score pattern is written into the scores exactly: coordinate 0 of every query is 1 and
coordinate 0 of key j is b_j * sqrt(d), so the default scale 1/sqrt(d) adds b_j to every score
of key j (the other coordinates are random). Patterns:

    random            b = 0
    max grows late    b_j = 12 j / (Tk - 1): the running max grows in every key block, so an
                      online softmax must rescale its running output at every block
    max early         +12 on key 0 only: the max is in the first block for every row (the contrast)
    late spike        b = 0 except the last key (+10): the max appears in the last, partial block
    split-K           b_j = 8 on the first third of the keys: a split-K decode whose parts are
                      merged without their maxima weights the other parts far too much
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from multihead.checker.reference import causal_mask, normal


@dataclass(frozen=True)
class Case:
    label: str
    B: int
    H: int
    H_kv: int
    Tq: int
    Tk: int
    d: int = 8
    pattern: str = "random"
    mask: str = "none"     # none, causal, bool, bool per head, padding, padding+causal, -inf, min, bias
    dtype: torch.dtype | None = None   # None: the check's dtype
    v_mean: float = 0.0    # 1.0 makes outputs O(1) even when the weights are spread over thousands of keys


def score_bias(pattern: str, Tk: int) -> torch.Tensor:
    j = torch.arange(Tk, dtype=torch.float64)
    span = max(Tk - 1, 1)
    if pattern == "random":
        return torch.zeros(Tk, dtype=torch.float64)
    if pattern == "max grows late":
        return 12.0 * j / span
    if pattern == "max early":
        return torch.where(j == 0, 12.0, 0.0).to(torch.float64)
    if pattern == "late spike":
        return torch.where(j == Tk - 1, 10.0, 0.0).to(torch.float64)
    if pattern == "split-K (mass in one split)":
        return torch.where(j < max(Tk // 3, 1), 8.0, 0.0).to(torch.float64)
    raise ValueError(f"pattern: unknown {pattern!r}")


def qkv(case: Case, g: torch.Generator, dtype: torch.dtype = torch.float32):
    """float64 q [B, H, Tq, d], k/v [B, H_kv, Tk, d] with the case's score pattern, for inputs of
    ``dtype`` (reference.normal)."""
    B, H, Hk, Tq, Tk, d = case.B, case.H, case.H_kv, case.Tq, case.Tk, case.d
    q = normal(B, H, Tq, d, generator=g, dtype=dtype)
    k = normal(B, Hk, Tk, d, generator=g, dtype=dtype)
    v = normal(B, Hk, Tk, d, generator=g, dtype=dtype) + case.v_mean
    if case.pattern != "random":
        q[..., 0] = 1.0
        k[..., 0] = score_bias(case.pattern, Tk) * math.sqrt(d)
    return q, k, v


def causal_keep(Tq: int, Tk: int, alignment: str | None) -> torch.Tensor:
    return causal_mask(Tq, Tk, alignment or "bottom-right")


def padding_lengths(B: int, Tk: int) -> list[int]:
    """Distinct valid lengths per sequence: the full cache, then shorter ones."""
    fracs = (1.0, 0.55, 0.8, 0.3)
    return [max(1, int(Tk * fracs[b % len(fracs)]) - b // len(fracs)) for b in range(B)]


def padding_keep(B: int, Tk: int) -> torch.Tensor:
    """Bool [B, 1, 1, Tk]: even sequences right-padded, odd ones left-padded (as HF batches for
    generation), each with its own length."""
    keep = torch.zeros(B, 1, 1, Tk, dtype=torch.bool)
    for b, n in enumerate(padding_lengths(B, Tk)):
        if b % 2:
            keep[b, ..., Tk - n:] = True
        else:
            keep[b, ..., :n] = True
    return keep


def random_keep(g, shape, p: float = 0.6) -> torch.Tensor:
    """Random bool keep of `shape` [.., Tq, Tk] where every row keeps key 0 or its last key."""
    keep = torch.rand(*shape, generator=g) < p
    keep[..., 0] |= ~keep.any(-1)
    return keep


def alibi(H: int, Tq: int, Tk: int) -> torch.Tensor:
    """Float [1, H, Tq, Tk]: ALiBi-style bias -slope_h * (distance), -inf on future keys
    (aligned bottom-right): real-valued, so scaling it or reading it as bool changes the result."""
    pos = torch.arange(Tq, dtype=torch.float64)[:, None] + (Tk - Tq)
    dist = pos - torch.arange(Tk, dtype=torch.float64)[None, :]
    slopes = torch.tensor([2.0 ** -(1 + h % 4) for h in range(H)], dtype=torch.float64)
    bias = -slopes[:, None, None] * dist.abs()
    return bias.masked_fill(dist < 0, float("-inf"))[None]


def build_mask(case: Case, g, alignment: str | None, dtype: torch.dtype):
    """(mask for the target or None, is_causal, mask for the reference or None)."""
    B, H, Tq, Tk, kind = case.B, case.H, case.Tq, case.Tk, case.mask
    if kind == "none":
        return None, False, None
    if kind == "causal":
        return None, True, None
    if kind in ("bool", "bool per head"):      # one mask for the batch: per-sequence masks are `padding`
        keep = random_keep(g, (1, H if kind == "bool per head" else 1, Tq, Tk))
        return keep, False, keep
    if kind in ("padding", "padding+causal"):
        keep = padding_keep(B, Tk)
        if kind == "padding+causal":
            keep = keep & causal_keep(Tq, Tk, "bottom-right")
        return keep, False, keep
    if kind in ("-inf", "min"):
        keep = random_keep(g, (1, 1, Tq, Tk))
        fill = float("-inf") if kind == "-inf" else torch.finfo(dtype).min
        add = torch.zeros(keep.shape, dtype=torch.float64).masked_fill(~keep, fill)
        return add, False, add
    if kind == "bias":
        add = alibi(H, Tq, Tk)
        return add, False, add
    raise ValueError(f"mask: unknown kind {kind!r}")


def attended(case: Case, ref_mask, is_causal: bool, alignment: str | None) -> torch.Tensor:
    """Bool [B or 1, H or 1, Tq]: query rows that see at least one key (only those are compared;
    fully masked rows have their own check)."""
    keep = torch.ones(1, 1, case.Tq, case.Tk, dtype=torch.bool)
    if is_causal:
        keep = keep & causal_keep(case.Tq, case.Tk, alignment)
    if ref_mask is not None:
        keep = keep & (ref_mask if ref_mask.dtype == torch.bool else ref_mask > -1e30)
    return keep.any(-1)
