"""The formulas: parameters, bytes and FLOPs of a transformer decoder, each written once.

Symbols (``Dims``): B batch, T tokens (query rows), Tk keys, D = hidden_size, H query heads,
H_kv key/value heads, d = head_dim, L layers, I = intermediate_size, V = vocab_size, E experts,
k experts per token. ``layers.py`` (what the library allocates), the planner (what it predicts),
the heads experiments and the benchmarks all call these, so none can disagree.
Primitives take the symbols; ``*_of(spec)`` / spec-level functions unpack a ModelSpec into them.
"""
from __future__ import annotations

from dataclasses import dataclass

from multihead.cost.spec.model import LayerKind, MlpKind, ModelSpec


@dataclass(frozen=True)
class Dims:
    """One attention problem's sizes in the shared vocabulary ([B, H, T, d] queries, [B, H_kv, Tk, d] keys)."""
    B: int = 1
    H: int = 1
    H_kv: int = 1
    T: int = 1
    d: int = 1
    Tk: int | None = None          # keys (default T)
    L: int = 1

    @property
    def keys(self) -> int:
        return self.T if self.Tk is None else self.Tk


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


# -- attention primitives ----------------------------------------------------------------------------
def attention_params(d_model: int, n_heads: int, n_kv_heads: int, head_dim: int, bias: bool = False) -> int:
    """One attention layer's four projections: W_Q (D x H*d) and W_O (H*d x D) give 2*D*H*d;
    W_K, W_V (D x H_kv*d) give 2*D*H_kv*d (MHA with d = D/H: 4*D^2). Biases: H*d + 2*H_kv*d + D."""
    weights = 2 * d_model * n_heads * head_dim + 2 * d_model * n_kv_heads * head_dim
    biases = (n_heads * head_dim + 2 * n_kv_heads * head_dim + d_model) if bias else 0
    return weights + biases


def kv_cache_elements(n_layers: int, n_kv_heads: int, head_dim: int, tokens: int, batch: int = 1) -> int:
    """K and V (2) for every layer, KV head, dimension, token and sequence: 2*L*H_kv*d*T*B."""
    return 2 * n_layers * n_kv_heads * head_dim * tokens * batch


def kv_cache_bytes(n_layers: int, n_kv_heads: int, head_dim: int, tokens: int,
                   bytes_per_element: float, batch: int = 1) -> float:
    """KV cache bytes = 2 * L * H_kv * d * T * B * bytes (per token: tokens=1, batch=1)."""
    return kv_cache_elements(n_layers, n_kv_heads, head_dim, tokens, batch) * bytes_per_element


def score_matrix_bytes(batch: int, n_heads: int, tq: int, tk: int, bytes_per_element: float) -> float:
    """One layer's materialized score matrix [B, H, Tq, Tk]: B*H*Tq*Tk*bytes."""
    return batch * n_heads * tq * tk * bytes_per_element


def tiled_state_bytes(batch: int, n_heads: int, tokens: int, head_dim: int) -> float:
    """A tiled (FlashAttention-style) kernel's state per layer: an fp32 accumulator (d) plus running
    max and sum (2) per query row and head: B*H*T*(d+2)*4 bytes, O(T*d), never T^2."""
    return batch * n_heads * tokens * (head_dim + 2) * 4


def causal_pairs(tq: int, tk: int) -> int:
    """(query, key) pairs a bottom-right-aligned causal mask keeps. Query i (0-based) sees
    min(Tk, max(0, Tk - Tq + i + 1)) keys; for Tq = Tk = T: T(T+1)/2."""
    offset = tk - tq
    first = max(0, -offset)                  # rows before this one see no key at all
    rows = tq - first
    if rows <= 0:
        return 0
    lo, hi = offset + first + 1, min(offset + tq, tk)     # keys seen by the first row, clipped last row
    unclipped = max(0, hi - lo + 1)
    return (lo + hi) * unclipped // 2 + (rows - unclipped) * tk


def window_pairs(tokens: int, window: int | None, causal: bool) -> int:
    """Pairs one head of a T-token prefill computes when each query sees at most ``window`` keys.
    Causal: query i sees min(i+1, w): w(w+1)/2 + (T-w)*w once T > w. Full: T*min(T, w)."""
    if window is None or window >= tokens:
        return causal_pairs(tokens, tokens) if causal else tokens * tokens
    if not causal:
        return tokens * window
    return window * (window + 1) // 2 + (tokens - window) * window


def chunk_pairs(tokens: int, chunk: int, causal: bool) -> int:
    """Pairs of chunked local attention (Llama-4): queries see only their own chunk of c tokens.
    n = T // c full chunks and a remainder r: causal n*c(c+1)/2 + r(r+1)/2, full n*c^2 + r^2."""
    n, r = divmod(tokens, chunk)
    if causal:
        return n * chunk * (chunk + 1) // 2 + r * (r + 1) // 2
    return n * chunk * chunk + r * r


def attention_flops(batch: int, n_heads: int, tq: int, tk: int, head_dim: int, causal: bool = False) -> int:
    """FLOPs of softmax(Q K^T) V for one layer, a multiply-add counted as 2: Q K^T 2*Tq*Tk*d and
    P V 2*Tq*Tk*d per head, so 4*B*H*Tq*Tk*d (causal: only the kept pairs). Softmax not counted."""
    pairs = causal_pairs(tq, tk) if causal else tq * tk
    return 4 * batch * n_heads * head_dim * pairs


def model_attention_flops(tokens: int, d_model: int, n_layers: int, batch: int = 1) -> int:
    """The reference text's whole-model count: 4 * T^2 * D * L (D = H*d, no causal halving)."""
    return 4 * batch * tokens * tokens * d_model * n_layers


def linear_flops(non_embedding_params: float, tokens: int, batch: int = 1) -> float:
    """Every weight a token meets does one multiply-add per token: 2 * N * T * B."""
    return 2 * non_embedding_params * tokens * batch


def mlp_params(d_model: int, width: int, kind: MlpKind = MlpKind.GATED, bias: bool = False) -> int:
    """Gated (gate, up: D x I; down: I x D): 3*D*I (+ 2I + D biases); plain (fc, proj): 2*D*I (+ I + D)."""
    if kind is MlpKind.GATED:
        return 3 * d_model * width + ((2 * width + d_model) if bias else 0)
    return 2 * d_model * width + ((width + d_model) if bias else 0)


def expected_distinct_experts(num_experts: int, per_token: int, tokens: int) -> float:
    """Experts a batch of b tokens touches, routing uniform and independent: each token misses a
    given expert with probability 1 - k/E, so E * (1 - (1 - k/E)^b) (k at b=1, -> E as b grows)."""
    return num_experts * (1 - (1 - per_token / num_experts) ** tokens)


# -- whole-model attention, from a spec --------------------------------------------------------------
def attention_pairs(s: ModelSpec, tokens: int, causal: bool) -> int:
    """(query, key) pairs per head over all layers of a T-token prefill: full layers T^2 (causal
    T(T+1)/2), sliding layers at most w keys per query, chunked layers within their chunk."""
    total = 0
    for g in s.layer_groups():
        pairs = (chunk_pairs(tokens, g.window, causal) if g.kind is LayerKind.CHUNKED
                 else window_pairs(tokens, g.window, causal))
        total += g.layers * pairs
    return total


def pair_flops(s: ModelSpec, absorbed: bool = False) -> int:
    """FLOPs per (query, key) pair and head: 2*d for Q.K plus 2*d for P.V = 4d. MLA computed naively
    (K, V decompressed): 2*(nope+rope) + 2*v; absorbed into the latent (how engines decode):
    2*(kv_lora_rank + rope) + 2*kv_lora_rank."""
    if s.mla is None:
        return 4 * s.head_dim
    m = s.mla
    return 2 * (m.latent_dim + m.kv_lora_rank) if absorbed else 2 * (m.qk_head_dim + m.v_head_dim)


def spec_attention_flops(s: ModelSpec, tokens: int, batch: int = 1, causal: bool = False,
                         heads: int | None = None, absorbed: bool = False) -> int:
    """Attention FLOPs of a T-token prefill over all layers: B * H * pair_flops * pairs
    (dense full attention, causal=False: the reference text's 4 * T^2 * (H*d) * L * B)."""
    return batch * (heads or s.num_heads) * pair_flops(s, absorbed) * attention_pairs(s, tokens, causal)


def decode_attention_flops(s: ModelSpec, context: int, batch: int = 1, heads: int | None = None,
                           absorbed: bool = True) -> int:
    """One decode step's attention FLOPs: each layer's query meets min(context, window) keys."""
    keys = sum(g.layers * (context if g.window is None else min(context, g.window)) for g in s.layer_groups())
    return batch * (heads or s.num_heads) * pair_flops(s, absorbed) * keys
