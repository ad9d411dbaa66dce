"""Bytes a model holds: its KV cache by layer group and its weights (quantization included).

KV per token and layer is 2 * H_kv * d elements for standard attention (a key and a value per KV
head) and kv_lora_rank + qk_rope_head_dim for MLA (the latent K and V are rebuilt from); sliding
and chunked layers stop growing at their window. Weights: the 16-bit parts at the serving dtype,
the quantized parts at ``Quantization.bytes_per_weight`` (cost/spec/quantization.py).
"""
from __future__ import annotations

from dataclasses import dataclass

from multihead.cost.counts.formulas import expected_distinct_experts, kv_cache_elements
from multihead.cost.spec.model import LayerKind, ModelSpec
from multihead.cost.counts.params import param_counts, total_params
from multihead.cost.spec.quantization import Quantization
from multihead.cost.spec.units import dtype_bytes


@dataclass(frozen=True)
class KVGroup:
    """Layers whose KV cache grows alike. ``elements_per_token``: per layer and token."""
    kind: LayerKind
    layers: int
    window: int | None           # None: grows with T
    elements_per_token: int
    latent: bool = False         # MLA: one latent for all heads, replicated on every GPU

    def tokens_held(self, tokens: int) -> int:
        """min(T, window): what a layer of this group keeps at context length T."""
        return tokens if self.window is None else min(tokens, self.window)


def kv_heads_per_gpu(n_kv_heads: int, gpus: int) -> int:
    """KV heads each GPU stores under tensor parallelism: H_kv / N, or one replicated head when N > H_kv."""
    return max(1, n_kv_heads // gpus)


def check_tensor_parallel(heads: int, kv_heads: int, gpus: int, latent: bool = False, flag: str = "gpus",
                          flags: str = "") -> None:
    """The one placement rule of tensor parallelism: N GPUs split the H query heads evenly and the
    H_kv KV heads evenly, or replicate each KV head over N / H_kv GPUs (MLA's latent: on every GPU);
    anything else leaves some GPU a fraction of a head. ValueError naming ``flag`` (``flags``: the
    command-line spellings, said in the message)."""
    said = f" ({flags})" if flags else ""
    if heads % gpus:
        raise ValueError(f"{flag}: expected a divisor of heads={heads} for tensor parallelism{said}, got {gpus}")
    if not latent and kv_heads % gpus and gpus % kv_heads:
        raise ValueError(f"{flag}: kv_heads={kv_heads} neither divides by {gpus} nor divides it; "
                         f"tensor parallelism{said} cannot place the KV heads")


def kv_layer_groups(s: ModelSpec, kv_heads: int | None = None, gpus: int = 1) -> tuple[KVGroup, ...]:
    """The layers by KV growth, per GPU: 2 * H_kv/N * d elements per token (MLA: its latent, all of it)."""
    if s.mla is not None:
        per, latent = s.mla.latent_dim, True
    else:
        per, latent = kv_cache_elements(1, kv_heads_per_gpu(kv_heads or s.num_kv_heads, gpus), s.head_dim, 1), False
    return tuple(KVGroup(g.kind, g.layers, g.window, per, latent) for g in s.layer_groups())


def kv_bytes_per_token(s: ModelSpec, kv_dtype: str, kv_heads: int | None = None, gpus: int = 1) -> float:
    """KV bytes one more token adds while every window still grows: sum over layers of elements * bytes
    (standard: 2 * L * H_kv * d * bytes; MLA: (kv_lora_rank + qk_rope_head_dim) * L * bytes)."""
    return sum(g.layers * g.elements_per_token for g in kv_layer_groups(s, kv_heads, gpus)) * dtype_bytes(kv_dtype)


def kv_bytes(s: ModelSpec, tokens: int, kv_dtype: str, batch: int = 1, kv_heads: int | None = None,
             gpus: int = 1) -> float:
    """KV cache bytes per GPU at context T: sum over groups of layers * elements * min(T, window) * B * bytes."""
    return sum(g.layers * g.elements_per_token * g.tokens_held(tokens)
               for g in kv_layer_groups(s, kv_heads, gpus)) * batch * dtype_bytes(kv_dtype)


@dataclass(frozen=True)
class WeightBytes:
    """Weights split by storage: 16-bit parts (embedding, LM head, norms, routers) and quantized parts."""
    plain_params: float
    plain_dtype: str
    quantized_params: float = 0.0
    bytes_per_quantized: float = 0.0
    quantization: Quantization | None = None

    @property
    def total(self) -> float:
        return self.plain_params * dtype_bytes(self.plain_dtype) + self.quantized_params * self.bytes_per_quantized

    @property
    def params(self) -> float:
        return self.plain_params + self.quantized_params


def quantized_params(s: ModelSpec, q: Quantization) -> float:
    """The parameters ``q`` stores in its format: the layers' projections ('linear') or the routed
    experts alone ('experts'); embeddings, norms and routers stay 16-bit (as vLLM loads them)."""
    c = param_counts(s)
    if c is None:        # a stated total: all but the embedding and LM head, when the vocabulary is known
        emb = s.vocab_size * s.hidden_size * (1 if s.tie_word_embeddings else 2) if s.vocab_size else 0
        return max(0.0, total_params(s) - emb) if q.targets == "linear" else 0.0
    if q.targets == "experts":
        return float(c.experts_total)
    layers = (c.n_dense_layers * (c.attention_per_layer + c.mlp_per_layer)
              + c.n_moe_layers * (c.attention_per_layer + c.shared_per_layer + c.num_experts * c.expert))
    return float(layers + (c.lm_head if q.lm_head else 0))


def weight_bytes(s: ModelSpec, dtype: str, quantization: Quantization | None = None,
                 gpus: int = 1) -> WeightBytes:
    """Weight bytes per GPU: total params * bytes, or with ``quantization`` the quantized part at
    bytes_per_weight (scales included) and the rest at ``dtype``. Tensor parallelism splits all by N."""
    total = total_params(s)
    if quantization is None:
        return WeightBytes(total / gpus, dtype)
    quant = quantized_params(s, quantization)
    return WeightBytes((total - quant) / gpus, dtype, quant / gpus,
                       quantization.bytes_per_weight(s.hidden_size), quantization)


def decode_weight_bytes(s: ModelSpec, w: WeightBytes, batch: int = 1) -> tuple[float, float]:
    """(bytes one decode step reads, experts read per MoE layer). Dense: every weight once. MoE: the
    routed experts a batch of B tokens touches, E * (1 - (1 - k/E)^B) in expectation (uniform
    routing), instead of all E."""
    c = param_counts(s)
    if s.moe is None or c is None or s.params is not None:
        return w.total, 0.0
    m = s.moe
    read = expected_distinct_experts(m.num_experts, m.experts_per_token, batch)
    # every quantization target ('linear' and 'experts') includes the routed experts
    per_param = w.bytes_per_quantized if w.quantization else dtype_bytes(w.plain_dtype)
    share = w.params / c.total                 # this GPU's share under tensor parallelism
    idle = c.n_moe_layers * (m.num_experts - read) * c.expert * per_param * share
    return w.total - idle, read
