"""Merge KV heads: turn H_kv key/value heads into G < H_kv shared ones (MHA -> GQA -> MQA).

Representation. ``merge_kv_heads`` keeps every projection's shape and ties the K/V rows of the
KV heads in one group to a single learnable [d, D] block (a torch parametrization): the weight
the model sees is W_full[h] = W_merged[group[h]]. Every query head in a group therefore reads the
same keys and values, which is exactly GQA's math (query head i reads KV head i // (H/G)); the
cache only needs the G distinct heads. For Llama-family models whose groups are contiguous,
``materialize_gqa`` then shrinks k_proj/v_proj to G heads and sets num_key_value_heads = G, which
runs the same numbers through transformers' own GQA path (the tests check they agree). Keeping
shapes means the same code converts BERT, whose attention has no GQA path at all.

Merge rule at registration (Ainslie et al. 2023, arXiv:2305.13245): the group mean,
W_merged[g] = mean over h in g of W[h] (biases likewise). RoPE rotates every head's keys by the
same position-dependent matrix, so mean-pooling before or after RoPE is the same.

Grouping. Contiguous groups are the default (what a plain GQA checkpoint uses). ``similar_groups``
instead chooses equal-size groups that minimise mean-pooling's own error on calibration text:
for a group S of m heads with activations x_h = X W_h^T (keys, and values), replacing each x_h by
the group mean loses sum_h ||x_h - mean||^2 = sum_h G_hh - (1/m) sum_{h,h'} G_hh', a function of
the heads' Gram matrix G only. Any grouping is a GQA layout: permuting heads (rows of W_Q, W_K,
W_V together with columns of W_O) changes nothing, so grouped heads can be made contiguous.
"""
from __future__ import annotations

import itertools

import torch
from torch import nn
from torch.nn.utils import parametrize

from multihead.heads.sites import AttentionSite, attention_sites

Batch = dict   # keyword arguments of one model call, e.g. {"input_ids": ids, "attention_mask": m}


class TiedKVHeads(nn.Module):
    """Parametrization W_full[h] = W_merged[group[h]] over rows grouped per KV head.

    forward: merged [G*d, *rest] -> full [H_kv*d, *rest]; right_inverse: the group mean.
    """

    def __init__(self, group: torch.Tensor, head_dim: int):
        super().__init__()
        self.register_buffer("group", group.clone().long())              # (H_kv,) values in [0, G)
        self.head_dim = head_dim
        self.n_groups = int(group.max()) + 1

    def forward(self, merged: torch.Tensor) -> torch.Tensor:
        blocks = merged.unflatten(0, (self.n_groups, self.head_dim))      # (G, d, *rest)
        return blocks[self.group].flatten(0, 1)                           # (H_kv*d, *rest)

    def right_inverse(self, full: torch.Tensor) -> torch.Tensor:
        heads = full.unflatten(0, (-1, self.head_dim))                    # (H_kv, d, *rest)
        sums = heads.new_zeros((self.n_groups,) + heads.shape[1:]).index_add_(0, self.group, heads)
        count = torch.bincount(self.group, minlength=self.n_groups).to(heads.dtype)
        return (sums / count.view(-1, *([1] * (heads.dim() - 1)))).flatten(0, 1)   # (G*d, *rest)


def contiguous_groups(n_kv_heads: int, n_groups: int) -> torch.Tensor:
    """group[h] = h // (H_kv / G): the layout of a GQA checkpoint."""
    if n_groups < 1 or n_kv_heads % n_groups:
        raise ValueError(f"kv_heads: expected a divisor of the model's {n_kv_heads} KV heads, got {n_groups}")
    return torch.arange(n_kv_heads) // (n_kv_heads // n_groups)


def merge_kv_heads(model: nn.Module, n_groups: int, groups: list[torch.Tensor] | None = None) -> list[torch.Tensor]:
    """Tie each layer's KV heads into ``n_groups`` groups, initialised to the group mean. In place.

    ``groups[l]`` ([H_kv] ints) picks layer l's grouping; default contiguous. Returns the groupings.
    """
    sites = attention_sites(model)
    if groups is None:
        groups = [contiguous_groups(s.n_kv_heads, n_groups) for s in sites]
    for site, group in zip(sites, groups):
        sizes = torch.bincount(group, minlength=n_groups)
        if group.numel() != site.n_kv_heads or len(sizes) != n_groups or (sizes != sizes[0]).any():
            raise ValueError(f"groups: expected {n_groups} equal groups of layer {site.layer}'s "
                             f"{site.n_kv_heads} KV heads, got {group.tolist()}")
        for proj in (site.k_proj, site.v_proj):
            for name in ("weight", "bias"):
                if getattr(proj, name, None) is not None:
                    parametrize.register_parametrization(proj, name, TiedKVHeads(group, site.head_dim))
    return groups


def merged_parameters(model: nn.Module) -> list[nn.Parameter]:
    """The free parameters of the tied K/V projections (the W_merged of every layer)."""
    return [p for s in attention_sites(model) for proj in (s.k_proj, s.v_proj)
            if parametrize.is_parametrized(proj) for p in proj.parametrizations.parameters()]


def site_merged_parameters(site: AttentionSite) -> list[nn.Parameter]:
    """The W_merged (and merged bias) parameters of one layer."""
    return [p for proj in (site.k_proj, site.v_proj) if parametrize.is_parametrized(proj)
            for p in proj.parametrizations.parameters()]


def materialize_gqa(model: nn.Module) -> None:
    """Shrink a merged Llama-family model's k_proj/v_proj to G heads and run it as real GQA. In place.

    Requires contiguous groups (query head i -> KV head i // (H/G), what repeat_kv and SDPA's
    enable_gqa compute). Afterwards the model's KV cache holds G heads per layer.
    """
    sites = attention_sites(model)
    if not all(hasattr(s.block, "num_key_value_groups") for s in sites):
        raise ValueError("model: materialize_gqa needs a Llama-family model (BERT has no GQA path)")
    n_groups = None
    for s in sites:
        for name in ("k_proj", "v_proj"):
            proj = getattr(s.block, name)
            if not parametrize.is_parametrized(proj):
                raise ValueError("model: call merge_kv_heads first")
            tie = proj.parametrizations.weight[0]
            if not torch.equal(tie.group, contiguous_groups(s.n_kv_heads, tie.n_groups)):
                raise ValueError("model: materialize_gqa needs contiguous groups (permute heads first)")
            n_groups = tie.n_groups
            small = nn.Linear(proj.in_features, n_groups * s.head_dim, bias=proj.bias is not None,
                              dtype=proj.weight.dtype)
            with torch.no_grad():
                small.weight.copy_(proj.parametrizations.weight.original)
                if proj.bias is not None:
                    small.bias.copy_(proj.parametrizations.bias.original)
            setattr(s.block, name, small)
        s.block.num_key_value_groups = s.n_heads // n_groups
    model.config.num_key_value_heads = n_groups


# ---------------------------------------------------------------- similarity grouping

@torch.no_grad()
def kv_gram(model: nn.Module, batches: list[Batch]) -> list[torch.Tensor]:
    """Per layer, the [H_kv, H_kv] Gram matrix of KV-head activations on ``batches``.

    G = G_K / tr(G_K) + G_V / tr(G_V) with G_K[h, h'] = sum over real tokens of <k_h, k_h'>, so
    keys and values weigh equally in the grouping cost. Padding tokens (attention_mask 0) are skipped.
    """
    sites = attention_sites(model)
    grams = {(s.layer, kind): torch.zeros(s.n_kv_heads, s.n_kv_heads, dtype=torch.float64)
             for s in sites for kind in "kv"}
    keep: list[torch.Tensor] = []

    def hook(site: AttentionSite, kind: str):
        def fn(module, args, out):
            heads = out.unflatten(-1, (site.n_kv_heads, site.head_dim)).double()   # (B, T, H_kv, d)
            heads = heads * keep[0][..., None, None]
            grams[(site.layer, kind)] += torch.einsum("bthd,btgd->hg", heads, heads)
        return fn

    handles = [p.register_forward_hook(hook(s, kind)) for s in sites
               for kind, p in (("k", s.k_proj), ("v", s.v_proj))]
    try:
        for batch in batches:
            ids = batch["input_ids"]
            keep[:] = [batch.get("attention_mask", torch.ones_like(ids)).double()]   # (B, T)
            model(**batch)
    finally:
        for h in handles:
            h.remove()
    return [grams[(s.layer, "k")] / grams[(s.layer, "k")].trace()
            + grams[(s.layer, "v")] / grams[(s.layer, "v")].trace() for s in sites]


def grouping_cost(gram: torch.Tensor, group: torch.Tensor) -> float:
    """Mean-pooling error sum_g [sum_{h in g} G_hh - (1/|g|) sum_{h,h' in g} G_hh'] of ``group``."""
    cost = 0.0
    for g in group.unique():
        idx = (group == g).nonzero().flatten()
        cost += float(gram[idx, idx].sum() - gram[idx][:, idx].sum() / len(idx))
    return cost


def similar_groups(gram: torch.Tensor, n_groups: int) -> torch.Tensor:
    """Equal-size grouping of the KV heads with (locally) minimal mean-pooling error.

    Starts from the contiguous grouping and applies the best cost-lowering swap of two heads in
    different groups until none is left (at most H_kv^2 / 2 candidates per step; H_kv <= 64 here).
    Never worse than contiguous, by construction.
    """
    group = contiguous_groups(gram.shape[0], n_groups)
    cost = grouping_cost(gram, group)
    while True:
        best = None
        for a, b in itertools.combinations(range(len(group)), 2):
            if group[a] == group[b]:
                continue
            trial = group.clone()
            trial[a], trial[b] = group[b], group[a]
            c = grouping_cost(gram, trial)
            if c < cost - 1e-12 and (best is None or c < best[0]):
                best = (c, trial)
        if best is None:
            return group
        cost, group = best
