"""multihead: softmax and multi-head attention for long-context LLM inference.

    import multihead as mh
    out = mh.attention(q, k, v, is_causal=True)          # q [B,H,T,d], k/v [B,H_kv,T,d]
    p = mh.softmax(logits, temperature=0.5, mask=keep)

Names are loaded on first use so that ``import multihead`` stays light (the CLI's ``plan``
never imports torch's kernels it does not need).
"""
from __future__ import annotations

import importlib

__version__ = "0.1.0"

_EXPORTS = {
    "softmax": "multihead.softmax_ops",
    "log_softmax": "multihead.softmax_ops",
    "logsumexp": "multihead.softmax_ops",
    "softmax_jacobian": "multihead.softmax_ops",
    "attention": "multihead.functional",
    "attention_varlen": "multihead.functional_kv",
    "attention_with_kvcache": "multihead.functional_kv",
    "MultiHeadAttention": "multihead.layers",
    "KVCache": "multihead.layers",
    "check_attention": "multihead.checker",
    "plan": "multihead.planner",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'multihead' has no attribute {name!r}")
