"""A head mask xi: multiply each query head's attention output by xi[layer, head].

    with head_mask(model, xi):          # xi [L, H] (or [B, L, H], one mask per sequence)
        loss = lm_loss(model, ids)

The mask is applied by a forward pre-hook on the output projection, whose input is the
concatenation of the heads' outputs, [B, T, H*d] -> view [B, T, H, d] -> * xi -> [B, T, H*d].
This touches nothing inside the attention computation, so it works for every attention
implementation (eager, sdpa, multihead) and is differentiable in xi: Michel et al.'s importance
is just the gradient of the loss with respect to xi at xi = 1. xi[l, h] = 0 removes head h of
layer l exactly as deleting its d columns of W_O would.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

import torch
from torch import nn

from multihead.heads.sites import AttentionSite, attention_sites


def _mask_hook(site: AttentionSite, xi_layer: torch.Tensor):
    """Pre-hook scaling head h of the o_proj input by xi_layer[..., h]; xi_layer is [H] or [B, H]."""
    def hook(module: nn.Module, args: tuple) -> tuple:
        x = args[0]                                                        # (B, T, H*d)
        heads = x.unflatten(-1, (site.n_heads, site.head_dim))             # (B, T, H, d)
        scale = xi_layer.to(x.dtype)
        scale = scale[:, None, :, None] if scale.dim() == 2 else scale[:, None]   # (B,1,H,1) | (H,1)
        return ((heads * scale).flatten(-2),) + tuple(args[1:])
    return hook


@contextmanager
def head_mask(model: nn.Module, xi: torch.Tensor) -> Iterator[None]:
    """Apply the head mask ``xi`` ([L, H], or [B, L, H] for one mask per batch row) inside the block."""
    sites = attention_sites(model)
    shape = tuple(xi.shape[-2:])
    if shape != (len(sites), sites[0].n_heads):
        raise ValueError(f"xi: expected shape [..., {len(sites)}, {sites[0].n_heads}] (layers, heads), got {tuple(xi.shape)}")
    handles = [s.o_proj.register_forward_pre_hook(_mask_hook(s, xi[..., s.layer, :])) for s in sites]
    try:
        yield
    finally:
        for h in handles:
            h.remove()
