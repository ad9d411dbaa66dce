"""What a serving engine needs to know about a model, read from its HF config.json (torch-free).

The serving account (``serving.py``) needs, per attention layer, what the engine caches and for
how long (full attention: every token; a sliding window: the window; chunked local attention:
the chunk; MLA: one latent vector per token instead of K and V per head), plus the sizes the
profile forward's activation peak depends on (hidden, MLP widths, vocabulary, experts). It reads
them with HF ``config.json`` field names; multimodal configs are read through ``text_config``.

Layer kinds follow each family's published rule (cited where it is applied):
- ``layer_types`` when the config lists them (gpt-oss, newer configs);
- Gemma-2: even layers slide (``sliding_window``), odd layers are global;
- Gemma-3: every ``sliding_window_pattern``-th layer (default 6) is global, the rest slide;
- Llama-4: ``no_rope_layers`` (default: every 4th layer is NoPE) are global, the others use
  chunked local attention of ``attention_chunk_size``;
- Qwen2/Qwen2-MoE/Qwen3 slide only with ``use_sliding_window: true``; Mistral/Phi-3 slide when
  ``sliding_window`` is set.
An attention kind this module does not know (linear attention, Mamba, ...) is refused by name.
"""
from __future__ import annotations

import json
from pathlib import Path

from multihead.cost.serving import CHUNKED, FULL, SLIDING, ServingShape

# Families whose config carries a `sliding_window` that is only used with use_sliding_window.
_SLIDING_OPT_IN = {"qwen2", "qwen2_moe", "qwen3", "qwen3_moe"}
# Layer types vLLM caches as full attention / as a window.
_FULL = {"full_attention", "attention", "global", "global_attention"}
_SLIDING = {"sliding_attention", "sliding_window", "local", "local_attention"}
_REFUSED = {"linear_attention", "mamba", "mamba2", "conv", "recurrent", "short_conv"}


class ServingModelError(ValueError):
    """The config describes something the serving account cannot represent (named in the message)."""


def text_config(cfg: dict) -> dict:
    """The decoder's config: ``text_config`` of a multimodal config, else the config itself."""
    return cfg.get("text_config") or cfg.get("language_config") or cfg


def _get(cfg: dict, *names, default=None):
    for n in names:
        if cfg.get(n) is not None:
            return cfg[n]
    return default


def _required(cfg: dict, *names) -> int:
    v = _get(cfg, *names)
    if v is None:
        raise ServingModelError(f"config.json: missing {' / '.join(names)}")
    if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
        raise ServingModelError(f"config.json: {names[0]} must be a positive integer, got {v!r}")
    return v


def _gemma_text_defaults(mt: str, t: dict) -> dict:
    """Gemma-3 text configs omit fields whose transformers defaults apply (Gemma3TextConfig)."""
    if mt != "gemma3_text":
        return t
    defaults = {"vocab_size": 262208, "num_attention_heads": 8, "num_key_value_heads": 4,
                "head_dim": 256, "sliding_window": 4096, "sliding_window_pattern": 6,
                "max_position_embeddings": 131072}
    return {**defaults, **{k: v for k, v in t.items() if v is not None}}


def _layer_kinds(mt: str, t: dict, n: int) -> list[tuple[str, int | None]]:
    """(kind, window) per layer by the family rules in the module docstring."""
    window = t.get("sliding_window")
    types = t.get("layer_types")
    if types:
        if len(types) != n:
            raise ServingModelError(f"config.json: layer_types has {len(types)} entries for {n} layers")
        out = []
        for kind in types:
            if kind in _FULL:
                out.append((FULL, None))
            elif kind in _SLIDING:
                out.append((SLIDING, _positive_window(window, "sliding_window")))
            elif kind in _REFUSED or kind not in _FULL | _SLIDING:
                raise ServingModelError(f"config.json: layer type {kind!r} is not an attention kind the "
                                        "serving account can represent (full, sliding)")
        return out
    if mt == "gemma2":
        w = _positive_window(window, "sliding_window")
        return [(SLIDING, w) if i % 2 == 0 else (FULL, None) for i in range(n)]
    if mt == "gemma3_text":
        pattern = int(t.get("sliding_window_pattern") or 6)
        w = _positive_window(window, "sliding_window")
        return [(FULL, None) if (i + 1) % pattern == 0 else (SLIDING, w) for i in range(n)]
    if mt == "llama4_text" and t.get("attention_chunk_size"):
        chunk = _positive_window(t["attention_chunk_size"], "attention_chunk_size")
        nope = t.get("no_rope_layers") or [int((i + 1) % 4 != 0) for i in range(n)]
        # no_rope_layers[i] == 1: the layer uses RoPE and chunked attention; 0: NoPE, global.
        return [(CHUNKED, chunk) if nope[i] else (FULL, None) for i in range(n)]
    slides = window is not None and (mt not in _SLIDING_OPT_IN or t.get("use_sliding_window"))
    if slides:
        w = _positive_window(window, "sliding_window")
        return [(SLIDING, w)] * n
    return [(FULL, None)] * n


def _positive_window(v, name: str) -> int:
    if not isinstance(v, int) or v <= 0:
        raise ServingModelError(f"config.json: {name} must be a positive integer, got {v!r}")
    return v


def from_config(cfg: dict, name: str = "model") -> ServingShape:
    """Read a HF config.json dict (multimodal ones through text_config); weights are left at 0
    (the cost model's parameter counts fill them: see ``shape_for``)."""
    t = text_config(cfg)
    mt = t.get("model_type") or cfg.get("model_type") or ""
    t = _gemma_text_defaults(mt, t)
    n = _required(t, "num_hidden_layers", "n_layer", "num_layers")
    hidden = _required(t, "hidden_size", "n_embd", "d_model")
    heads = _required(t, "num_attention_heads", "n_head")
    mla = t.get("kv_lora_rank") is not None
    experts = int(_get(t, "num_local_experts", "num_experts", "n_routed_experts", default=0) or 0)
    inter = int(_get(t, "intermediate_size", "n_inner", "ffn_dim", default=4 * hidden) or 4 * hidden)
    moe_inter = int(_get(t, "moe_intermediate_size", default=0) or 0) or (inter if experts else 0)
    return ServingShape(
        name=name, layer_kinds=tuple(_layer_kinds(mt, t, n)),
        num_kv_heads=1 if mla else int(_get(t, "num_key_value_heads", "num_kv_heads", default=heads)),
        head_dim=int(_get(t, "head_dim", default=hidden // heads)), num_heads=heads, hidden_size=hidden,
        intermediate_size=inter, vocab_size=_required(t, "vocab_size"),
        mla_latent=(t["kv_lora_rank"] + int(t.get("qk_rope_head_dim") or 0)) if mla else 0,
        experts_per_token=int(_get(t, "num_experts_per_tok", "experts_per_token", default=0) or 0) if experts else 0,
        moe_intermediate_size=moe_inter, multimodal="vision_config" in cfg)


def config_dtype(cfg: dict) -> str:
    """The checkpoint's dtype as config.json states it (torch_dtype / dtype; text_config's as fallback)."""
    t = text_config(cfg)
    return str(_get(cfg, "torch_dtype", "dtype", default=None) or _get(t, "torch_dtype", "dtype", default="bfloat16"))
