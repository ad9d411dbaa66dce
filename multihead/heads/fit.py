"""Fit merged K/V projections to the original layer's output on calibration activations.

Why not the obvious least squares. Fitting one shared W' to the group's own activations,
min_W' sum_{h in g} ||X W'^T - X W_h^T||^2, has normal equations sum_h X^T X (W' - W_h) = 0, so
W' = mean_h W_h whatever X is: it *is* mean-pooling. What the model needs is not that the shared
keys resemble each head's keys, but that each query head's attention output stays the same; that
depends on the queries (through softmax(q k^T)) and on W_O (which mixes the heads' values).

What we optimise, per layer l, starting from the mean-pooled weights:

    min over W'_K, W'_V (and biases) of  sum_x ||O'_l(x) - O_l(x)||^2 / sum_x ||O_l(x)||^2

where O_l(x) is layer l's attention output after W_O (o_proj) on the *original* model's inputs to
layer l for calibration windows x, and O'_l the same with the tied K/V weights. Everything else
(RoPE, softmax, the query heads, W_O) is the model's own code, replayed from captured inputs.
It is a nonlinear least-squares problem (softmax), solved with L-BFGS (strong-Wolfe line search,
no learning rate to tune). Layers are fitted independently on the original model's activations,
so one capture pass serves all layers. Calibration windows must be disjoint from evaluation ones.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch
from torch import nn

from multihead.heads.importance import frozen
from multihead.heads.merge_kv import Batch, site_merged_parameters
from multihead.heads.sites import AttentionSite, attention_sites


@dataclass
class LayerCapture:
    """What one layer's attention block saw and produced on one calibration batch."""
    args: tuple
    kwargs: dict
    target: torch.Tensor       # o_proj output [B, T, D] of the original model
    keep: torch.Tensor         # [B, T] 1 for real tokens, 0 for padding


@torch.no_grad()
def capture_layers(model: nn.Module, batches: list[Batch]) -> list[list[LayerCapture]]:
    """Run the (unmerged) model on ``batches`` and record every attention block's inputs and output."""
    sites = attention_sites(model)
    store: list[list[LayerCapture]] = [[] for _ in sites]
    pending: dict[int, tuple] = {}

    def pre(site: AttentionSite):
        def fn(module, args, kwargs):
            # A replayed call must not read or grow a KV cache left over from the capture pass.
            kwargs = {k: (None if k in ("cache", "past_key_values", "past_key_value") else v)
                      for k, v in kwargs.items()}
            pending[site.layer] = (args, kwargs)
        return fn

    def post(site: AttentionSite, keep: list):
        def fn(module, args, out):
            a, kw = pending.pop(site.layer)
            store[site.layer].append(LayerCapture(a, kw, out.detach().clone(), keep[0]))
        return fn

    keep: list[torch.Tensor] = []
    handles = [s.block.register_forward_pre_hook(pre(s), with_kwargs=True) for s in sites]
    handles += [s.o_proj.register_forward_hook(post(s, keep)) for s in sites]
    try:
        for batch in batches:
            ids = batch["input_ids"]
            keep[:] = [batch.get("attention_mask", torch.ones_like(ids)).float()]
            model(**batch)
    finally:
        for h in handles:
            h.remove()
    return store


def replay_error(site: AttentionSite, captures: list[LayerCapture]) -> torch.Tensor:
    """Relative squared error sum ||O' - O||^2 / sum ||O||^2 of the block's o_proj output (scalar)."""
    out: list[torch.Tensor] = []
    handle = site.o_proj.register_forward_hook(lambda m, a, o: out.append(o))
    try:
        num = den = 0.0
        for c in captures:
            out.clear()
            site.block(*c.args, **c.kwargs)
            w = c.keep[..., None]                                          # (B, T, 1)
            num = num + (((out[0] - c.target) ** 2) * w).sum()
            den = den + ((c.target ** 2) * w).sum()
        return num / den
    finally:
        handle.remove()


@dataclass
class FitResult:
    layer: int
    error_before: float        # relative squared error of the mean-pooled weights
    error_after: float         # after the fit (never worse: we keep the better of the two)


def fit_merged_kv(model: nn.Module, captures: list[list[LayerCapture]], iters: int = 20,
                  progress: Callable[[int], None] | None = None) -> list[FitResult]:
    """Fit every merged layer's tied K/V weights to its captured outputs (see module docstring). In place.

    ``model`` must already be merged (``merge_kv_heads``); ``captures`` come from the unmerged model.
    ``progress`` is called once per layer.
    """
    results = []
    with frozen(model):
        for site in attention_sites(model):
            params = site_merged_parameters(site)
            if not params:
                raise ValueError("model: call merge_kv_heads before fit_merged_kv")
            start = [p.detach().clone() for p in params]
            for p in params:
                p.requires_grad_(True)
            opt = torch.optim.LBFGS(params, lr=1.0, max_iter=iters, history_size=10,
                                    line_search_fn="strong_wolfe")
            losses: list[float] = []

            def closure():
                opt.zero_grad()
                loss = replay_error(site, captures[site.layer])
                loss.backward()
                losses.append(float(loss.detach()))
                return loss

            with torch.enable_grad():
                opt.step(closure)
            before = losses[0]             # L-BFGS evaluates the start (mean-pooled) weights first
            for p in params:
                p.requires_grad_(False)
                p.grad = None
            with torch.no_grad():
                after = float(replay_error(site, captures[site.layer]))
                if not after <= before:            # a failed line search must not make it worse
                    for p, s in zip(params, start):
                        p.copy_(s)
                    after = before
            results.append(FitResult(site.layer, before, after))
            if progress:
                progress(1)
    return results
