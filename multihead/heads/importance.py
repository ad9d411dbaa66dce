"""Per-head importance, two ways.

* Ablation: I_h = L(xi with xi_h = 0) - L(xi = 1), the loss increase (nats/token) when query
  head h's output is zeroed and nothing else changes. Exact, one forward pass per head.
* Gradient (Michel et al. 2019, arXiv:1905.10650): I_h = E_x |dL(x)/dxi_h| at xi = 1, the
  first-order Taylor estimate of the same loss change, averaged per window in absolute value
  (so that windows where a head helps and windows where it hurts do not cancel). One forward
  and one backward pass per window for all heads at once.

Both return [L, H] float64 tensors; larger = more important.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterator

import torch
from torch import nn

from multihead.heads.lm import mean_nll, window_nll
from multihead.heads.mask import head_mask
from multihead.heads.replay import capture_layer_inputs, logits_from_layer, supports_replay
from multihead.heads.sites import attention_sites
from multihead.hf.perplexity import logits_nll

Progress = Callable[[int], None]   # called with the number of work items just finished


def heads_shape(model: nn.Module) -> tuple[int, int]:
    """(layers, query heads per layer)."""
    sites = attention_sites(model)
    return len(sites), sites[0].n_heads


@contextmanager
def frozen(model: nn.Module) -> Iterator[None]:
    """Turn off weight gradients (we only differentiate with respect to the head mask)."""
    flags = [(p, p.requires_grad) for p in model.parameters()]
    for p, _ in flags:
        p.requires_grad_(False)
    try:
        yield
    finally:
        for p, f in flags:
            p.requires_grad_(f)


@torch.no_grad()
def masked_nll(model: nn.Module, windows: torch.Tensor, masks: torch.Tensor, batch_rows: int = 8,
               progress: Progress | None = None) -> torch.Tensor:
    """Mean next-token NLL over ``windows`` [N, T] under each of ``masks`` [A, L, H] -> [A].

    The A*N (mask, window) pairs are run as rows of batches of ``batch_rows``, each row with its
    own mask, so many ablations share one matmul instead of A tiny ones.
    """
    n, t = windows.shape
    a = masks.shape[0]
    mask_of_row = torch.arange(a).repeat_interleave(n)                    # (A*N,)
    window_of_row = torch.arange(n).repeat(a)                             # (A*N,)
    sums = torch.zeros(a, dtype=torch.float64)
    for start in range(0, a * n, batch_rows):
        rows = slice(start, start + batch_rows)
        nll = window_nll(model, windows[window_of_row[rows]], masks[mask_of_row[rows]])   # (rows,)
        sums.index_add_(0, mask_of_row[rows], nll)
        if progress:
            progress(nll.shape[0])
    return sums / (n * (t - 1))


def ablation_importance(model: nn.Module, windows: torch.Tensor, batch_rows: int = 8,
                        progress: Progress | None = None) -> tuple[torch.Tensor, float]:
    """Loss increase when each query head alone is zeroed -> ([L, H], baseline mean NLL).

    Llama-family models reuse the unchanged layers below the ablated one (``replay``); others run
    one full forward per (head, window). ``progress`` is called with rows done; total L * H * N.
    """
    n_layers, n_heads = heads_shape(model)
    base = mean_nll(model, windows, batch_rows)
    masks = torch.ones(n_layers * n_heads, n_layers, n_heads)             # (L*H, L, H)
    idx = torch.arange(n_layers * n_heads)
    masks[idx, idx // n_heads, idx % n_heads] = 0.0                       # mask a removes head a
    if not supports_replay(model):
        nll = masked_nll(model, windows, masks, batch_rows, progress)      # (L*H,)
        return (nll - base).view(n_layers, n_heads), base
    n, t = windows.shape
    inputs = capture_layer_inputs(model, windows)
    sums = torch.zeros(n_layers, n_heads, dtype=torch.float64)
    head_of_row = torch.arange(n_heads).repeat_interleave(n)              # (H*N,) rows = (head, window)
    window_of_row = torch.arange(n).repeat(n_heads)
    with torch.no_grad():
        for layer in range(n_layers):
            for start in range(0, n_heads * n, batch_rows):
                rows = slice(start, start + batch_rows)
                heads, wins = head_of_row[rows], window_of_row[rows]
                with head_mask(model, masks[layer * n_heads + heads]):    # (R, L, H), zero only in `layer`
                    logits = logits_from_layer(model, inputs, layer, wins)
                sums[layer].index_add_(0, heads, logits_nll(logits, windows[wins]))
                if progress:
                    progress(len(heads))
    return sums / (n * (t - 1)) - base, base


def gradient_importance(model: nn.Module, windows: torch.Tensor,
                        progress: Progress | None = None) -> torch.Tensor:
    """Michel et al.'s I_h = mean over windows of |d(mean NLL of the window)/d xi_h| at xi = 1 -> [L, H].

    ``progress`` is called once per window (N in total).
    """
    n_layers, n_heads = heads_shape(model)
    total = torch.zeros(n_layers, n_heads, dtype=torch.float64)
    with frozen(model), torch.enable_grad():
        for i in range(windows.shape[0]):
            xi = torch.ones(n_layers, n_heads, requires_grad=True)
            ids = windows[i:i + 1]                                         # (1, T)
            loss = window_nll(model, ids, xi).sum() / (ids.shape[1] - 1)
            (grad,) = torch.autograd.grad(loss, xi)
            total += grad.abs().double()
            if progress:
                progress(1)
    return total / windows.shape[0]


def agreement(ablation: torch.Tensor, gradient: torch.Tensor, top_fraction: float = 0.1) -> dict:
    """How well the gradient map predicts the ablation map.

    Spearman of signed ablation vs gradient; Spearman of |ablation| vs gradient (the gradient
    importance is an absolute value, so it measures sensitivity, not whether removal helps or
    hurts); and the overlap of the two top-``top_fraction`` head sets.
    """
    a, g = ablation.flatten(), gradient.flatten()
    k = max(1, round(top_fraction * a.numel()))
    top_a, top_g = set(a.argsort(descending=True)[:k].tolist()), set(g.argsort(descending=True)[:k].tolist())
    return {"spearman": rank_correlation(a, g), "spearman_abs": rank_correlation(a.abs(), g),
            "top_k": k, "top_overlap": len(top_a & top_g)}


def rank_correlation(x: torch.Tensor, y: torch.Tensor) -> float:
    """Spearman's rho: Pearson correlation of the ranks (ties broken by position)."""
    rx = x.argsort().argsort().double()
    ry = y.argsort().argsort().double()
    rx, ry = rx - rx.mean(), ry - ry.mean()
    return float((rx * ry).sum() / (rx.norm() * ry.norm()))


def ranked_heads(importance: torch.Tensor) -> list[tuple[int, int]]:
    """(layer, head) pairs from least to most important."""
    n_heads = importance.shape[1]
    return [(int(i) // n_heads, int(i) % n_heads) for i in importance.flatten().argsort(stable=True)]
