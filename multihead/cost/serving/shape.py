"""A ServingShape from a config.json: the cost model's ModelSpec plus what the engine loads beyond it.

The layers, KV layout and parameter counts come from the cost model (``hf_config.read_config``,
``params.param_counts``, ``memory.weight_bytes``): one source for every count. The serving
account adds only what vLLM allocates at load time that a parameter count does not hold:
- the vision tower and projector of a multimodal checkpoint (``serving_model.vision_tower_params``);
- the rotary cos/sin cache, a [positions, rotary dim] buffer in the model dtype on every GPU
  (Llama-4 Scout: 10,485,760 positions -> 2.5 GiB, seen in its log's "Model loading took";
  Gemma-3's linear x8 scaling -> 1,048,576 positions, 0.5 GiB);
- mxfp4 MoE experts padded to multiples of 256 in both dimensions on Hopper (gpt-oss-20b TP2
  loads 7.01 GiB, 6.40 GiB unpadded; the padding accounts for 0.65 GiB).
"""
from __future__ import annotations

import math

from multihead.cost.serving import extras as serving_model
from multihead.cost.serving.vllm import ServingShape

MXFP4_PAD = 256


def read_spec(cfg: dict, name: str):
    """The cost model's ModelSpec: the one config reader (hf_config.read_config), which fills
    transformers' Gemma-3 text defaults itself (FAMILY_DEFAULTS) and says so in the spec's notes."""
    from multihead.cost.spec.hf_config import read_config
    return read_config(cfg, name)


def layer_kinds(spec) -> tuple[tuple[str, int | None], ...]:
    """(kind, window) per layer, in order: the spec's own reading (ModelSpec.layer_kinds), each kind
    in the account's short spelling (LayerKind.short)."""
    return tuple((kind.short, window) for kind, window in spec.layer_kinds())


def rotary_cache_bytes(spec, cfg: dict, act_bytes: float) -> float:
    """vLLM's cos/sin cache, one per distinct rotary embedding, positions x rotary dim in the model
    dtype, on every GPU. Positions: max_position_embeddings, times the factor for linear / dynamic
    scaling; YaRN: original_max_position_embeddings x factor. Gemma-3's sliding layers keep a
    second, unscaled cache (rope_local_base_freq). Llama-4 Scout: 10,485,760 x 128 x 2 B = 2.5 GiB."""
    if not spec.max_position_embeddings or spec.positions.value != "rope":
        return 0.0
    text = serving_model.text_config(cfg)
    text = serving_model.gemma3_text_defaults(str(text.get("model_type", "")), text)
    dim = spec.mla.qk_rope_head_dim if spec.mla else int(spec.head_dim * float(text.get("partial_rotary_factor") or 1.0))
    positions = spec.max_position_embeddings
    rs = spec.rope_scaling
    if rs is not None and rs.factor:
        if rs.rope_type in ("linear", "dynamic"):
            positions = int(positions * rs.factor)
        elif rs.rope_type in ("yarn", "deepseek_yarn") and rs.original_max_position_embeddings:
            positions = int(rs.original_max_position_embeddings * rs.factor)
    caches = positions + (spec.max_position_embeddings if text.get("rope_local_base_freq") else 0)
    return caches * dim * act_bytes


def _mxfp4_padding_bytes(spec, counts, q, tp: int) -> float:
    """Extra bytes of mxfp4 experts once vLLM pads hidden and per-GPU expert width up to 256."""
    if q is None or q.method != "mxfp4" or spec.moe is None:
        return 0.0
    d, i = spec.hidden_size, spec.moe.expert_intermediate_size / tp
    ratio = (math.ceil(d / MXFP4_PAD) * MXFP4_PAD * math.ceil(i / MXFP4_PAD) * MXFP4_PAD) / (d * i)
    experts = counts.experts_total * q.bytes_per_weight(d)
    return experts * (ratio - 1)


def shape_for(cfg: dict, name: str, dtype: str, tp: int = 1, quantization=None, spec=None) -> ServingShape:
    """Everything the serving account needs of ``cfg`` served at ``dtype`` (weights for the whole
    model; the account splits them by TP and stages). ``quantization``: a cost.quantization
    Quantization overriding the checkpoint's own (vLLM's --quantization); ``spec``: the ModelSpec
    of ``cfg`` when the caller has read it already."""
    from multihead.cost.counts.memory import weight_bytes
    from multihead.cost.counts.params import param_counts
    from multihead.cost.spec.units import dtype_bytes
    spec = spec or read_spec(cfg, name)
    counts = param_counts(spec)          # None for a stated total (--params): all of it in the layers
    q = quantization or spec.quantization
    act = dtype_bytes(dtype)
    total = weight_bytes(spec, dtype, q).total
    embedding, lm_head = (counts.embedding * act, counts.lm_head * act) if counts else (0.0, 0.0)
    padding = _mxfp4_padding_bytes(spec, counts, q, tp) if counts else 0.0
    attention = _attention_bytes(spec, counts, q, act)
    return ServingShape(
        name=name, layer_kinds=layer_kinds(spec), num_kv_heads=1 if spec.mla else spec.num_kv_heads,
        head_dim=spec.head_dim, num_heads=spec.num_heads, hidden_size=spec.hidden_size,
        intermediate_size=spec.intermediate_size or 0, vocab_size=spec.vocab_size or 0,
        mla_latent=spec.mla.latent_dim if spec.mla else 0,
        experts_per_token=spec.moe.experts_per_token if spec.moe else 0,
        moe_intermediate_size=spec.moe.expert_intermediate_size if spec.moe else 0,
        multimodal=isinstance(cfg.get("vision_config"), dict), embedding_bytes=embedding, lm_head_bytes=lm_head,
        layer_bytes=total - embedding - lm_head + padding,
        vision_bytes=serving_model.vision_tower_params(cfg) * act,
        replicated_bytes=rotary_cache_bytes(spec, cfg, act), max_position=spec.max_position_embeddings,
        attention_bytes=attention)


def _attention_bytes(spec, counts, q, act: float) -> float:
    """The attention projections of every decoder layer (q/k/v/o, MLA's down/up projections and inner
    norms), at the checkpoint's quantization when it quantizes the layers' linears ('linear'), else at the
    serving dtype (an 'experts' format leaves attention 16-bit): the part SGLang's DP attention shards over
    its attention-TP group only (cost/serving/sglang.py). 0 for a model given by a stated total."""
    if counts is None:
        return 0.0
    per = q.bytes_per_weight(spec.hidden_size) if q is not None and q.targets == "linear" else act
    return float(counts.attention_per_layer * counts.n_layers * per)
