"""The formulas: parameters, FLOPs and bytes of multi-head attention.

One formula, one place. ``layers.py`` (what the library allocates) and the planner (what it
predicts) both call these functions, so the two cannot disagree. Symbols follow the reference
text: B batch, T tokens, D = d_model, H query heads, H_kv key/value heads, d_k head dim,
L layers. Every function returns an exact integer count (or bytes as a float when the
element size is fractional, e.g. int4).
"""
from __future__ import annotations

import math

# Bytes per element of each storage format the planner knows. int4 packs two per byte.
DTYPE_BYTES: dict[str, float] = {
    "fp32": 4, "float32": 4,
    "fp16": 2, "float16": 2,
    "bf16": 2, "bfloat16": 2,
    "fp8": 1, "float8": 1,
    "int8": 1,
    "int4": 0.5,
}


def dtype_bytes(dtype: str) -> float:
    """Bytes per element of ``dtype`` ('fp16', 'bf16', 'fp32', 'fp8', 'int8', 'int4', or a torch dtype)."""
    name = str(dtype).removeprefix("torch.").lower()
    if name not in DTYPE_BYTES:
        raise ValueError(f"dtype: expected one of {sorted(set(DTYPE_BYTES))}, got {dtype!r}")
    return DTYPE_BYTES[name]


def attention_params(d_model: int, n_heads: int, n_kv_heads: int, head_dim: int, bias: bool = False) -> int:
    """Parameters of one attention layer's four projections.

    W_Q: D x H*d_k and W_O: H*d_k x D give 2*D*H*d_k; W_K, W_V: D x H_kv*d_k give 2*D*H_kv*d_k.
    For MHA with d_k = D/H this is 4*D^2. Biases add H*d_k (q) + 2*H_kv*d_k (k, v) + D (o).
    """
    weights = 2 * d_model * n_heads * head_dim + 2 * d_model * n_kv_heads * head_dim
    biases = (n_heads * head_dim + 2 * n_kv_heads * head_dim + d_model) if bias else 0
    return weights + biases


def kv_cache_elements(n_layers: int, n_kv_heads: int, head_dim: int, tokens: int, batch: int = 1) -> int:
    """Elements of a KV cache: K and V (2) for every layer, KV head, dimension, token and sequence."""
    return 2 * n_layers * n_kv_heads * head_dim * tokens * batch


def kv_cache_bytes(n_layers: int, n_kv_heads: int, head_dim: int, tokens: int,
                   bytes_per_element: float, batch: int = 1) -> float:
    """KV cache bytes = 2 * L * H_kv * d_k * T * B * bytes (per token: set tokens=1, batch=1)."""
    return kv_cache_elements(n_layers, n_kv_heads, head_dim, tokens, batch) * bytes_per_element


def score_matrix_bytes(batch: int, n_heads: int, tq: int, tk: int, bytes_per_element: float) -> float:
    """Bytes of one layer's materialized score matrix [B, H, Tq, Tk]."""
    return batch * n_heads * tq * tk * bytes_per_element


def causal_pairs(tq: int, tk: int) -> int:
    """Number of (query, key) pairs a bottom-right-aligned causal mask keeps.

    Query i (0-based) of Tq sees keys 0 .. Tk - Tq + i, i.e. min(Tk, max(0, Tk - Tq + i + 1)) keys.
    For Tq = Tk = T this is T(T+1)/2: a little more than half of T^2.
    """
    offset = tk - tq
    # Rows whose visible prefix is clipped at 0 (offset < 0) see nothing; the rest see offset + i + 1.
    first_visible = max(0, -offset)
    total = 0
    n_rows = tq - first_visible
    if n_rows > 0:
        lo = offset + first_visible + 1          # keys seen by the first non-empty row
        hi = offset + tq                         # keys seen by the last row
        hi_clip = min(hi, tk)
        # arithmetic series lo..hi_clip, then rows that already see all Tk keys
        n_unclipped = max(0, hi_clip - lo + 1)
        total += (lo + hi_clip) * n_unclipped // 2
        total += (n_rows - n_unclipped) * tk
    return total


def attention_flops(batch: int, n_heads: int, tq: int, tk: int, head_dim: int, causal: bool = False) -> int:
    """FLOPs of softmax(Q K^T) V for one layer, counting a multiply-add as 2.

    Q K^T: 2*Tq*Tk*d_k per head; P V: another 2*Tq*Tk*d_k; so 4*B*H*Tq*Tk*d_k. With a causal mask,
    only the kept pairs are needed: 4*B*H*d_k*causal_pairs(Tq, Tk) (about half for Tq = Tk).
    The softmax's exp/sum (O(B*H*Tq*Tk)) is not counted, as is customary.
    """
    pairs = causal_pairs(tq, tk) if causal else tq * tk
    return 4 * batch * n_heads * head_dim * pairs


def model_attention_flops(tokens: int, d_model: int, n_layers: int, batch: int = 1) -> int:
    """The reference text's count for a whole model: 4 * T^2 * D * L (with D = H * d_k, no causal halving)."""
    return 4 * batch * tokens * tokens * d_model * n_layers


def linear_flops(non_embedding_params: float, tokens: int, batch: int = 1) -> float:
    """Every weight is used in one multiply-add per token: 2 * N_non_embedding * T * B."""
    return 2 * non_embedding_params * tokens * batch


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def head_dim_of(d_model: int, n_heads: int) -> int:
    """d_k = D / H when a config does not state head_dim."""
    if d_model % n_heads:
        raise ValueError(f"head_dim: hidden_size {d_model} is not divisible by num_attention_heads {n_heads}; give head_dim")
    return d_model // n_heads


__all__ = [n for n in dir() if not n.startswith("_") and n not in {"annotations", "math"}]
