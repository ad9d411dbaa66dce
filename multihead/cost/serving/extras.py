"""What a serving engine loads beyond the cost model's parameter counts, read from config.json.

The decoder's shape (layers and their attention kinds, KV heads, MLA, MoE, parameters) is the cost
model's ``ModelSpec`` (``hf_config.read_config``). This module reads the rest a serving engine
holds: the vision tower and projector of a multimodal checkpoint, the text config inside a
multimodal wrapper, and transformers' defaults for fields a published text_config leaves out.
"""
from __future__ import annotations


def _get(d: dict, key: str, default):
    """d[key], or the default when it is absent or null (the config reader checked the types)."""
    value = d.get(key)
    return default if value is None else value


def text_config(cfg: dict) -> dict:
    """The decoder's config: ``text_config`` of a multimodal config, else the config itself."""
    return cfg.get("text_config") or cfg.get("language_config") or cfg


def gemma3_text_defaults(mt: str, t: dict) -> dict:
    """Gemma-3 text configs omit fields whose transformers defaults apply (Gemma3TextConfig)."""
    if mt != "gemma3_text":
        return t
    from multihead.cost.spec.hf_config import FAMILY_DEFAULTS     # the shape defaults: one table
    defaults = {**FAMILY_DEFAULTS["gemma3_text"], "sliding_window_pattern": 6, "rope_local_base_freq": 10000.0}
    return {**defaults, **{k: v for k, v in t.items() if v is not None}}


def vision_tower_params(cfg: dict) -> int:
    """Parameters of the vision tower and projector a multimodal checkpoint loads (0 without one).

    A ViT of ``num_hidden_layers`` blocks of width h and MLP width i: per block attention
    4 h^2 + 4 h (biased q, k, v, o; Pixtral: none), the MLP 2 h i + i + h (gated, SiLU: 3 h i),
    two norms 4 h; the patch embedding 3 p^2 h + h; a learned position table (image/patch)^2 h
    when the family has one; the projector a two-layer MLP from the merged vision features to the
    text width. Checked against the vLLM logs' weights (reports/serving/)."""
    v = cfg.get("vision_config")
    if not isinstance(v, dict):
        return 0
    h, i = int(_get(v, "hidden_size", 0)), int(_get(v, "intermediate_size", 0))
    n, p = int(_get(v, "num_hidden_layers", 0)), int(_get(v, "patch_size", 14))
    kind = str(v.get("model_type", ""))
    gated = kind == "pixtral"
    attn = 4 * h * h + (0 if gated else 4 * h)
    mlp = 3 * h * i if gated else 2 * h * i + i + h
    block = attn + mlp + (2 if gated else 4) * h
    side = int(_get(v, "image_size", 0)) // p
    positions = {"siglip_vision_model": side * side, "llama4_vision_model": side * side + 1,
                 "moonvit": int(_get(v, "init_pos_emb_height", 0)) * int(_get(v, "init_pos_emb_width", 0))}.get(kind, 0)
    tower = n * block + 3 * p * p * h + h + positions * h + 2 * h
    text_h = text_config(cfg).get("hidden_size", 0)
    return tower + _projector_params(cfg, v, h, text_h)


def _projector_params(cfg: dict, v: dict, h: int, text_h: int) -> int:
    """Vision features -> text width. Gemma-3: one h x D matrix; LLaVA-Next: features of several
    layers concatenated, then D x D; Mistral-3 / Kimi-VL: a 2x2 patch merge (4 h) then an MLP;
    Llama-4: the pixel-shuffle adapter's MLP, then one matrix."""
    mt = str(cfg.get("model_type", ""))
    if mt == "gemma3":
        return h * text_h + h
    if mt == "llava_next":
        layers = cfg.get("vision_feature_layer")
        k = len(layers) if isinstance(layers, list) else 1
        return k * h * text_h + text_h + text_h * text_h + text_h + text_h
    if mt == "mistral3":
        merge = int(_get(cfg, "spatial_merge_size", 2)) ** 2
        return merge * h * h + h + h * text_h + text_h * text_h
    if mt == "kimi_vl":
        merged = h * 4
        return 2 * h + merged * merged + merged + merged * text_h + text_h
    if mt == "llama4":
        shuffled = int(h / float(_get(v, "pixel_shuffle_ratio", 0.5)) ** 2)
        mid = int(_get(v, "projector_input_dim", text_h))
        out = int(_get(v, "projector_output_dim", text_h))
        return shuffled * mid + mid * out + int(_get(v, "vision_output_dim", out)) * text_h
    merged = h
    return merged * text_h + text_h * text_h
