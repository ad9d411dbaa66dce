"""Perplexity as a growing fraction of query heads is removed, in a given order.

Removing a head = zeroing its output (xi_h = 0), which is what deleting its W_Q rows and W_O
columns would compute. Orders compared: least-important-first by a measured importance, versus
a seeded random order (the control: if importance carries information, its curve stays lower).
A KV head can be dropped from the cache only once every query head reading it is gone; the curve
also counts those ("KV heads freed"), which is what pruning saves in KV bytes.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
from torch import nn

from multihead.heads.importance import Progress, heads_shape, masked_nll, ranked_heads


def random_order(n_layers: int, n_heads: int, seed: int) -> list[tuple[int, int]]:
    """All (layer, head) pairs in a random order fixed by ``seed``."""
    gen = torch.Generator().manual_seed(seed)
    perm = torch.randperm(n_layers * n_heads, generator=gen)
    return [(int(i) // n_heads, int(i) % n_heads) for i in perm]


def removal_masks(order: list[tuple[int, int]], counts: list[int], n_layers: int, n_heads: int) -> torch.Tensor:
    """Masks [len(counts), L, H] with the first counts[i] heads of ``order`` zeroed in mask i."""
    masks = torch.ones(len(counts), n_layers, n_heads)
    for i, c in enumerate(counts):
        for layer, head in order[:c]:
            masks[i, layer, head] = 0.0
    return masks


def kv_heads_freed(mask: torch.Tensor, group_size: int) -> int:
    """KV heads whose whole group of query heads is removed in ``mask`` [L, H]."""
    groups = mask.unflatten(-1, (-1, group_size))                         # (L, H_kv, H/H_kv)
    return int((groups == 0).all(dim=-1).sum())


@dataclass
class PruneCurve:
    """Perplexity after removing the first k heads of each order, for k = counts."""
    fractions: list[float]
    counts: list[int]
    perplexity: dict[str, list[float]] = field(default_factory=dict)   # order name -> ppl per count
    kv_freed: dict[str, list[int]] = field(default_factory=dict)       # order name -> KV heads freed


def prune_curve(model: nn.Module, windows: torch.Tensor, orders: dict[str, list[tuple[int, int]]],
                fractions: list[float], group_size: int = 1, batch_rows: int = 8,
                progress: Progress | None = None) -> PruneCurve:
    """Evaluate every order at every fraction on ``windows`` [N, T].

    ``progress`` total = len(orders) * len(fractions) * N rows.
    """
    n_layers, n_heads = heads_shape(model)
    total = n_layers * n_heads
    for f in fractions:
        if not 0.0 <= f <= 1.0:
            raise ValueError(f"fractions: expected values in [0, 1], got {f}")
    counts = [round(f * total) for f in fractions]
    curve = PruneCurve(list(fractions), counts)
    for name, order in orders.items():
        masks = removal_masks(order, counts, n_layers, n_heads)
        nll = masked_nll(model, windows, masks, batch_rows, progress)
        curve.perplexity[name] = [math.exp(float(x)) for x in nll]
        curve.kv_freed[name] = [kv_heads_freed(m, group_size) for m in masks]
    return curve


def importance_orders(importance: dict[str, torch.Tensor], n_layers: int, n_heads: int,
                      random_seeds: list[int]) -> dict[str, list[tuple[int, int]]]:
    """Least-important-first order of each importance map, plus one random order per seed."""
    orders = {name: ranked_heads(imp) for name, imp in importance.items()}
    for s in random_seeds:
        orders[f"random (seed {s})"] = random_order(n_layers, n_heads, s)
    return orders
