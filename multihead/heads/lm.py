"""Language-model loss on fixed token windows, optionally under a head mask.

Perplexity = exp(mean next-token NLL) over every predicted position of every window: a window
of T tokens contributes T - 1 predictions (token t+1 given tokens <= t).
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from multihead.heads.mask import head_mask


def logits_nll(logits: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    """Summed next-token NLL per row: logits [B, T, V] predict ids[:, 1:] -> [B] (float32 or float64)."""
    if logits.dtype != torch.float64:
        logits = logits.float()                                            # bf16/fp16 logits: sum in fp32
    nll = F.cross_entropy(logits[:, :-1].flatten(0, 1), ids[:, 1:].flatten(), reduction="none")
    return nll.view(ids.shape[0], -1).sum(dim=1)                               # (B,)


def window_nll(model: nn.Module, ids: torch.Tensor, xi: torch.Tensor | None = None) -> torch.Tensor:
    """Summed next-token NLL of each row of ``ids`` [B, T] -> [B] (float32; float64 for a float64 model), under head mask ``xi``.

    ``xi`` is [L, H] (one mask for all rows) or [B, L, H] (one per row) or None (no mask).
    Differentiable in ``xi`` and the weights when grad is enabled.
    """
    def run() -> torch.Tensor:
        return logits_nll(model(input_ids=ids, use_cache=False).logits, ids)
    if xi is None:
        return run()
    with head_mask(model, xi):
        return run()


@torch.no_grad()
def mean_nll(model: nn.Module, windows: torch.Tensor, batch_size: int = 8,
             xi: torch.Tensor | None = None) -> float:
    """Mean next-token NLL (nats/token) over ``windows`` [N, T], in batches of ``batch_size`` rows."""
    total = 0.0
    for start in range(0, windows.shape[0], batch_size):
        total += float(window_nll(model, windows[start:start + batch_size], xi).sum())
    return total / (windows.shape[0] * (windows.shape[1] - 1))


def perplexity(model: nn.Module, windows: torch.Tensor, batch_size: int = 8,
               xi: torch.Tensor | None = None) -> float:
    """exp(mean next-token NLL) over ``windows`` [N, T]."""
    return math.exp(mean_nll(model, windows, batch_size, xi))
