"""The one shape type every measurement uses: one attention call.

    q [batch, heads, tq, head_dim] against k, v [batch, kv_heads, tk, head_dim]

A decode step is tq = 1 over a cache of tk keys (no mask: the query sees every key); a prefill
is tq = tk = T, causal or not. The work counted per call comes from ``multihead.cost.counts.formulas``.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import torch

from multihead.cost.counts import formulas
from multihead.cost.spec.units import dtype_bytes

TORCH_DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


@dataclass(frozen=True)
class AttnShape:
    """One attention call: q [batch, heads, tq, head_dim], k/v [batch, kv_heads, tk, head_dim]."""
    heads: int
    kv_heads: int
    head_dim: int
    tq: int
    tk: int
    causal: bool = True
    dtype: str = "fp32"
    batch: int = 1

    @classmethod
    def prefill(cls, heads: int, kv_heads: int, head_dim: int, tokens: int, dtype: str = "fp32",
                causal: bool = True, batch: int = 1) -> "AttnShape":
        return cls(heads, kv_heads, head_dim, tokens, tokens, causal, dtype, batch)

    @classmethod
    def decode(cls, heads: int, kv_heads: int, head_dim: int, cached: int, dtype: str = "fp32",
               batch: int = 1) -> "AttnShape":
        return cls(heads, kv_heads, head_dim, 1, cached, False, dtype, batch)

    @property
    def kind(self) -> str:
        return "decode" if self.tq == 1 else "prefill"

    @property
    def flops(self) -> int:
        return formulas.attention_flops(self.batch, self.heads, self.tq, self.tk, self.head_dim,
                                        causal=self.causal)

    @property
    def scores(self) -> int:
        """Scores the mask keeps: B H Tq Tk, or the causal pairs."""
        pairs = formulas.causal_pairs(self.tq, self.tk) if self.causal else self.tq * self.tk
        return self.batch * self.heads * pairs

    @property
    def rows(self) -> int:
        return self.batch * self.heads * self.tq

    @property
    def kv_bytes(self) -> float:
        """Bytes of K and V one call reads (one layer)."""
        return formulas.kv_cache_bytes(1, self.kv_heads, self.head_dim, self.tk,
                                       dtype_bytes(self.dtype), self.batch)

    @property
    def io_bytes(self) -> float:
        """Bytes of q, k, v and the output together."""
        return dtype_bytes(self.dtype) * self.batch * self.head_dim * (
            2 * self.heads * self.tq + 2 * self.kv_heads * self.tk)

    def label(self) -> str:
        if self.kind == "decode":
            return f"decode H{self.heads}/{self.kv_heads} d{self.head_dim} Tk={self.tk} {self.dtype}"
        mask = "causal" if self.causal else "full"
        return f"prefill H{self.heads}/{self.kv_heads} d{self.head_dim} T={self.tq} {mask} {self.dtype}"

    def to_dict(self) -> dict:
        return asdict(self)

    def inputs(self, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Random q [B, H, Tq, d], k and v [B, H_kv, Tk, d] in the shape's dtype."""
        g = torch.Generator().manual_seed(seed)
        dt = TORCH_DTYPES[self.dtype]
        q = torch.randn(self.batch, self.heads, self.tq, self.head_dim, generator=g).to(dt)
        kv = [torch.randn(self.batch, self.kv_heads, self.tk, self.head_dim, generator=g).to(dt) for _ in range(2)]
        return q, kv[0], kv[1]
