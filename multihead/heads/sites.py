"""Where the attention heads live inside a transformers model.

Every experiment in this package (ablate a head, prune heads, merge KV heads) needs the same
four projections of every attention layer. ``attention_sites(model)`` finds them by duck typing,
so one code path serves Llama-family decoders (``q_proj/k_proj/v_proj/o_proj``) and BERT
encoders (``query/key/value`` + ``output.dense``).

Layout both families share (and that the head mask relies on): the output projection's input is
[B, T, H*d] with head h in columns h*d .. (h+1)*d - 1, and K/V projection rows are grouped the
same way per KV head.
"""
from __future__ import annotations

from dataclasses import dataclass

from torch import nn


@dataclass
class AttentionSite:
    """One attention layer.

    ``block`` is the smallest module whose forward runs the projections, softmax(QK^T/sqrt(d))V
    and the output projection (LlamaAttention; BertAttention), so replaying ``block`` with
    captured inputs reproduces the layer's attention output.
    """
    layer: int
    block: nn.Module
    q_proj: nn.Linear        # weight [H*d, D]
    k_proj: nn.Linear        # weight [H_kv*d, D]
    v_proj: nn.Linear        # weight [H_kv*d, D]
    o_proj: nn.Linear        # weight [D, H*d]; its input is the concatenated head outputs
    n_heads: int
    n_kv_heads: int
    head_dim: int

    @property
    def group_size(self) -> int:
        """Query heads per KV head (H / H_kv): query head h reads KV head h // group_size."""
        return self.n_heads // self.n_kv_heads


def attention_sites(model: nn.Module) -> list[AttentionSite]:
    """All attention layers of ``model`` in depth order. Raises ValueError if none is recognised."""
    config = getattr(model, "config", None)
    n_heads = getattr(config, "num_attention_heads", None)
    if n_heads is None:
        raise ValueError(f"model: expected a Llama- or BERT-style transformers model, got {type(model).__name__}")
    sites: list[AttentionSite] = []
    for _, module in model.named_modules():
        if all(hasattr(module, n) for n in ("q_proj", "k_proj", "v_proj", "o_proj")):   # Llama family
            head_dim = getattr(module, "head_dim", None) or module.q_proj.out_features // n_heads
            n_kv = module.k_proj.out_features // head_dim
            sites.append(AttentionSite(len(sites), module, module.q_proj, module.k_proj, module.v_proj,
                                       module.o_proj, n_heads, n_kv, head_dim))
        elif hasattr(module, "self") and hasattr(module, "output") and hasattr(module.self, "query") \
                and hasattr(module.output, "dense"):                                       # BERT family
            s = module.self
            head_dim = s.query.out_features // n_heads
            n_kv = s.key.out_features // head_dim
            sites.append(AttentionSite(len(sites), module, s.query, s.key, s.value, module.output.dense,
                                       n_heads, n_kv, head_dim))
    if not sites:
        raise ValueError(f"model: expected a Llama- or BERT-style transformers model, got {type(model).__name__}")
    return sites
