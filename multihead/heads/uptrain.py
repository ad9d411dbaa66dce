"""Uptraining: a few steps of next-token loss after a KV merge, to see how much comes back.

Ainslie et al. uptrain the converted model for ~5% of its pre-training steps; on this CPU we can
afford tens of steps, so this measures the start of that recovery, not its end. By default only
the tied K/V parameters train (W_merged of every layer: the sharing stays exact because the
parameters are the merged ones), with AdamW at a small learning rate on calibration windows.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import torch
from torch import nn

from multihead.heads.importance import frozen
from multihead.heads.lm import window_nll
from multihead.heads.merge_kv import merged_parameters


@dataclass
class UptrainResult:
    steps: int
    lr: float
    trained: str                                    # "kv" or "all"
    losses: list[float] = field(default_factory=list)   # mean NLL of each step's batch (nats/token)


def uptrain(model: nn.Module, windows: torch.Tensor, steps: int, lr: float = 1e-4, batch_rows: int = 2,
            train: str = "kv", seed: int = 0, progress: Callable[[int], None] | None = None) -> UptrainResult:
    """``steps`` AdamW steps of next-token loss on batches of ``batch_rows`` rows of ``windows`` [N, T].

    ``train``: "kv" trains only the merged K/V parameters, "all" every parameter. In place; the model
    is left in eval mode (no dropout in either case).
    """
    if train not in ("kv", "all"):
        raise ValueError(f"train: expected 'kv' or 'all', got {train!r}")
    if steps < 0 or lr <= 0:
        raise ValueError(f"steps/lr: expected steps >= 0 and lr > 0, got {steps}, {lr}")
    params = merged_parameters(model) if train == "kv" else list(model.parameters())
    if not params:
        raise ValueError("model: no merged K/V parameters to train (call merge_kv_heads first)")
    result = UptrainResult(steps, lr, train)
    gen = torch.Generator().manual_seed(seed)
    model.eval()
    with frozen(model):
        for p in params:
            p.requires_grad_(True)
        opt = torch.optim.AdamW(params, lr=lr, weight_decay=0.0)
        with torch.enable_grad():
            for _ in range(steps):
                rows = torch.randint(0, windows.shape[0], (batch_rows,), generator=gen)
                ids = windows[rows]                                        # (b, T)
                loss = window_nll(model, ids).sum() / (ids.numel() - ids.shape[0])
                opt.zero_grad()
                loss.backward()
                opt.step()
                result.losses.append(float(loss.detach()))
                if progress:
                    progress(1)
        for p in params:
            p.grad = None
    return result
