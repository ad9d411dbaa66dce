"""Language-model loss on fixed token windows under a head mask.

The NLL itself is ``multihead.hf.perplexity``'s (fp64 sums); this module only applies the head
mask ``xi`` around it. Perplexity = exp(mean next-token NLL) over every predicted position of
every window: a window of T tokens contributes T - 1 predictions (token t+1 given tokens <= t).
"""
from __future__ import annotations

import math
from contextlib import nullcontext

import torch
from torch import nn

from multihead.heads.mask import head_mask
from multihead.hf import perplexity as nll


def _masked(model: nn.Module, xi: torch.Tensor | None):
    return nullcontext() if xi is None else head_mask(model, xi)


def window_nll(model: nn.Module, ids: torch.Tensor, xi: torch.Tensor | None = None) -> torch.Tensor:
    """Summed next-token NLL of each row of ``ids`` [B, T] -> float64 [B], under head mask ``xi``.

    ``xi`` is [L, H] (one mask for all rows) or [B, L, H] (one per row) or None (no mask).
    Differentiable in ``xi`` and the weights when grad is enabled.
    """
    with _masked(model, xi):
        return nll.window_nll(model, ids)


def mean_nll(model: nn.Module, windows: torch.Tensor, batch_size: int = 8,
             xi: torch.Tensor | None = None) -> float:
    """Mean next-token NLL (nats/token) over ``windows`` [N, T], in batches of ``batch_size`` rows."""
    with _masked(model, xi):
        return nll.mean_nll(model, windows, batch_size)


def perplexity(model: nn.Module, windows: torch.Tensor, batch_size: int = 8,
               xi: torch.Tensor | None = None) -> float:
    """exp(mean next-token NLL) over ``windows`` [N, T]."""
    return math.exp(mean_nll(model, windows, batch_size, xi))
