"""The shipped models' facts the CLI checks arguments against before loading anything.

torch-free on purpose: every `multihead` command builds its parser from these (a command that
imported torch just to say "--kv-heads 5 is not one of [1, 3]" would take seconds to fail).
tests/test_models.py compares them with the loaded configs.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Shipped:
    """A shipped model's config.json values that arguments are checked against."""
    name: str
    heads: int              # num_attention_heads
    kv_heads: int           # num_key_value_heads
    positions: int          # max_position_embeddings

    def kv_divisors(self) -> list[int]:
        """KV-head counts a merge can reach: the divisors of kv_heads (each divides heads too)."""
        return [g for g in range(1, self.kv_heads + 1) if self.kv_heads % g == 0]


SMOLLM2 = Shipped("SmolLM2-135M-Instruct", heads=9, kv_heads=3, positions=8192)
MINILM = Shipped("all-MiniLM-L6-v2", heads=12, kv_heads=12, positions=512)
