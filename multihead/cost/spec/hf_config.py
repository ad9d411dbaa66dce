"""config.json -> ModelSpec, for the families the cost model represents; anything else refused by name.

One reader per family trait, field names exactly as HF writes them. A multimodal wrapper
(Gemma-3, Llama-4, Mistral-3, Kimi-VL) is read through its ``text_config`` (the vision tower is
not counted, and a note says so). A config whose ``model_type`` is not listed in ``FAMILIES`` is
refused with what is missing, never planned as a dense model: a planner that is silently wrong is
worse than none.
"""
from __future__ import annotations

from multihead.cost.spec import quantization as quant
from multihead.cost.spec.config_file import check_structure
from multihead.cost.spec.model import MAX_LAYERS, MAX_WIDTH, MLA, Bias, MlpKind, ModelSpec, MoE, NormKind, Positions
from multihead.cost.spec.positions import rope_scaling_of
from multihead.cost.spec.units import canonical_dtype

# GPT-2 names the same fields differently (transformers' GPT2Config.attribute_map).
_ALIASES = {"n_embd": "hidden_size", "n_layer": "num_hidden_layers", "n_head": "num_attention_heads",
            "n_positions": "max_position_embeddings", "n_inner": "intermediate_size"}
REQUIRED_FIELDS = ("hidden_size", "num_hidden_layers", "num_attention_heads")

# model_type -> the traits transformers builds it with (norms per layer, biases, MLP, tying default).
FAMILIES: dict[str, dict] = {
    "llama": {}, "mistral": {}, "granite": {}, "phi3": {},
    "qwen2": dict(attention_bias=Bias.QKV), "qwen3": dict(qk_norm=True),
    "qwen2_moe": dict(attention_bias=Bias.QKV, moe="qwen"), "qwen3_moe": dict(qk_norm=True, moe="qwen"),
    "mixtral": dict(moe="mixtral"),
    "gemma": dict(tie=True), "gemma2": dict(tie=True, norms=4), "gemma3_text": dict(tie=True, norms=4, qk_norm=True),
    "gpt2": dict(plain=True, attention_bias=Bias.ALL, norm=NormKind.LAYER, tie=True, learned=True),
    "phi": dict(plain=True, attention_bias=Bias.ALL, norm=NormKind.LAYER, norms=1, lm_head_bias=True),
    "deepseek_v2": dict(moe="deepseek", mla=True), "deepseek_v3": dict(moe="deepseek", mla=True),
    "gpt_oss": dict(attention_bias=Bias.ALL, sinks=True, moe="gpt_oss"),
    "llama4_text": dict(moe="llama4"),
    # session 5 (issue 28): families that are one of the above under another name
    "kimi_k2": dict(moe="deepseek", mla=True),                    # Kimi-K2: the DeepSeek-V3 architecture
    "glm4_moe": dict(attention_bias=Bias.QKV, moe="deepseek"),    # GLM-4.5/4.6: GQA + DeepSeek-style MoE
    "minimax_m2": dict(qk_norm=True, moe="mixtral"),              # MiniMax-M2: GQA, 256 routed experts, no shared
    "qwen3_vl_text": dict(qk_norm=True),                          # Qwen3-VL's language model (dense)
    "qwen3_vl_moe_text": dict(qk_norm=True, moe="qwen"),          # Qwen3-VL-MoE's language model
    # session 11 (issue 28): the older dense families the published TensorRT-LLM and vLLM tables still use
    "gptj": dict(plain=True, attention_bias=Bias.NONE, norm=NormKind.LAYER, norms=1, lm_head_bias=True,
                 inner4=True),                                    # GPT-J: parallel block, one LayerNorm, biased MLP
    "falcon": dict(plain=True, norm=NormKind.LAYER, tie=True, inner4=True),   # traits by its flags: _falcon
}
# families refused by name, with what the cost model lacks for them (issue 28)
_SPARSE = ("DeepSeek Sparse Attention: a lightning indexer picks 2,048 keys per query and keeps its own key "
           "cache, so the planner's attention count and KV bytes would both be wrong")
_STATE = ("layers keep a fixed-size recurrent state instead of a KV cache, which the memory account and the "
          "time model do not represent")
REFUSED: dict[str, str] = {
    "deepseek_v32": _SPARSE, "glm_moe_dsa": _SPARSE,
    "qwen3_5": "hybrid of Gated DeltaNet linear-attention and gated full-attention layers: the linear " + _STATE,
    "qwen3_next": "hybrid of Gated DeltaNet linear-attention and gated full-attention layers: the linear " + _STATE,
    "nemotron_h": "hybrid of Mamba-2 and attention layers (Nemotron-H): the Mamba-2 " + _STATE,
}
# a config of a known family with a flag the cost model does not represent: (model_type, key) -> reason
REFUSED_FLAGS: dict[tuple[str, str], str] = {
    ("falcon", "alibi"): "ALiBi positions (Falcon-RW): attention biases by distance instead of RoPE, which the "
                         "positions account (the length a model covers, the engines' rope overrides) does not represent",
}
# transformers' own defaults for shape fields published configs leave out (its config classes'
# signatures): a nested Gemma-3 text_config often states only hidden_size, layers and widths
FAMILY_DEFAULTS: dict[str, dict] = {
    "gemma3_text": dict(num_attention_heads=8, num_key_value_heads=4, head_dim=256, vocab_size=262208,
                        sliding_window=4096, max_position_embeddings=131072),
    "falcon": dict(vocab_size=65024, max_position_embeddings=2048),           # FalconConfig's defaults
}
# Every field that sizes something, with its bounds (HF's names), checked before any per-layer
# work: a bad value is refused by name, never turned into a loop, a list or a silent default.
_LONG = 1 << 40                     # token counts (positions, windows, chunks)
INT_FIELDS: dict[str, tuple[int, int]] = {
    "hidden_size": (1, MAX_WIDTH), "num_hidden_layers": (1, MAX_LAYERS), "num_attention_heads": (1, MAX_WIDTH),
    "num_key_value_heads": (1, MAX_WIDTH), "head_dim": (1, MAX_WIDTH), "intermediate_size": (1, MAX_WIDTH),
    "intermediate_size_mlp": (1, MAX_WIDTH), "vocab_size": (1, MAX_WIDTH),
    "max_position_embeddings": (1, _LONG), "sliding_window": (1, _LONG), "attention_chunk_size": (1, _LONG),
    "max_window_layers": (0, MAX_LAYERS), "sliding_window_pattern": (1, MAX_LAYERS),
    "num_experts": (0, MAX_WIDTH), "num_local_experts": (0, MAX_WIDTH), "n_routed_experts": (0, MAX_WIDTH),
    "num_experts_per_tok": (1, MAX_WIDTH), "experts_per_token": (1, MAX_WIDTH),
    "moe_intermediate_size": (1, MAX_WIDTH), "shared_expert_intermediate_size": (0, MAX_WIDTH),
    "n_shared_experts": (0, MAX_WIDTH), "decoder_sparse_step": (1, MAX_LAYERS),
    "first_k_dense_replace": (0, MAX_LAYERS), "moe_layer_freq": (1, MAX_LAYERS),
    "interleave_moe_layer_step": (1, MAX_LAYERS),
    "kv_lora_rank": (1, MAX_WIDTH), "q_lora_rank": (1, MAX_WIDTH), "qk_rope_head_dim": (1, MAX_WIDTH),
    "qk_nope_head_dim": (1, MAX_WIDTH), "v_head_dim": (1, MAX_WIDTH),
}
LAYER_LISTS = ("mlp_only_layers", "moe_layers")            # layer indices in [0, num_hidden_layers)
# a multimodal checkpoint's vision tower (cost/serving_model.py counts its parameters from these)
VISION_INT_FIELDS: dict[str, tuple[int, int]] = {
    "hidden_size": (1, MAX_WIDTH), "intermediate_size": (1, MAX_WIDTH), "num_hidden_layers": (1, MAX_LAYERS),
    "patch_size": (1, 1 << 12), "image_size": (1, 1 << 16), "init_pos_emb_height": (1, 1 << 12),
    "init_pos_emb_width": (1, 1 << 12), "projector_input_dim": (1, MAX_WIDTH),
    "projector_output_dim": (1, MAX_WIDTH), "vision_output_dim": (1, MAX_WIDTH)}
BOOL_FIELDS = ("use_sliding_window", "tie_word_embeddings", "attention_bias", "mlp_bias")
# transformers' rope_type names (modeling_rope_utils.ROPE_INIT_FUNCTIONS) and older spellings
ROPE_TYPES = ("default", "linear", "dynamic", "yarn", "longrope", "llama3", "su", "mrope")

# keys that change the shape: a family whose reader does not consume one refuses the config
_STRUCTURAL = {"num_local_experts": "moe", "num_experts": "moe", "n_routed_experts": "moe",
               "moe_intermediate_size": "moe", "kv_lora_rank": "mla", "q_lora_rank": "mla"}


def read_config(config: dict, name: str = "config.json", *, params: float | None = None,
                params_published: int | None = None, source: str = "") -> ModelSpec:
    """A ModelSpec from a HuggingFace config.json dict. Raises ValueError naming the field."""
    cfg, notes = _checked_fields(config, name)
    missing = [f for f in REQUIRED_FIELDS if cfg.get(f) is None]
    if missing:
        raise ValueError(f"{name}: missing required field {missing[0]!r}"
                         + (f" (also {', '.join(map(repr, missing[1:]))})" if missing[1:] else ""))
    model_type, traits = _family(cfg, name, notes)
    try:
        fields = _common(cfg, traits, notes)
        fields.update(_layers(cfg, model_type))
        if model_type == "llama4_text":           # dense layers use their own, wider MLP
            fields["intermediate_size"] = cfg.get("intermediate_size_mlp", cfg.get("intermediate_size"))
        if traits.get("mla"):
            fields.update(_mla(cfg))
        if traits.get("moe"):
            fields["moe"] = _MOE_READERS[traits["moe"]](cfg)
        return ModelSpec(name=name, model_type=model_type, params=params, params_published=params_published,
                         source=source or name, notes=notes, **fields)
    except KeyError as err:
        raise ValueError(f"{name}: missing field {err.args[0]!r} (a {model_type} config needs it)") from None
    except (ValueError, TypeError) as err:
        raise ValueError(f"{name}: {err}") from None


def check_config(config, name: str = "config.json") -> None:
    """The schema check alone (what read_config checks first): the file's structure and every sizing
    field of its language model. The config readers (cost.spec.config_file) call it on what they read."""
    _checked_fields(config, name)


def _checked_fields(config, name: str) -> tuple[dict, list[str]]:
    """(the language model's fields, notes), aliases resolved and transformers' defaults filled,
    after checking them: structure first, then every sizing field, before any per-layer work."""
    check_structure(config, name)
    try:
        _check_vision(config)
    except ValueError as err:
        raise ValueError(f"{name}: {err}") from None
    cfg, notes = _text_config(config)
    for alias, hf in _ALIASES.items():
        if alias in cfg and hf not in cfg:
            cfg[hf] = cfg[alias]
    if str(cfg.get("model_type", "")).lower() == "falcon":
        _falcon(cfg, notes)
    _fill_defaults(cfg, notes)
    try:
        check_fields(cfg)
    except ValueError as err:
        raise ValueError(f"{name}: {err}") from None
    return cfg, notes


def _check_vision(config: dict) -> None:
    """The vision tower's sizing fields (vision_config) and the wrapper's projector fields."""
    v = config.get("vision_config")
    if isinstance(v, dict):
        for key, (lo, hi) in VISION_INT_FIELDS.items():
            value = v.get(key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi):
                raise ValueError(f"vision_config.{key}: expected an integer in {lo:,}..{hi:,}, got {_show(value)}")
        ratio = v.get("pixel_shuffle_ratio")
        if ratio is not None and (isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or not 0 < ratio <= 1):
            raise ValueError(f"vision_config.pixel_shuffle_ratio: expected a number in (0, 1], got {_show(ratio)}")
        if v.get("model_type") is not None and not isinstance(v["model_type"], str):
            raise ValueError(f"vision_config.model_type: expected a string, got {_show(v['model_type'])}")
    merge = config.get("spatial_merge_size")
    if merge is not None and (isinstance(merge, bool) or not isinstance(merge, int) or not 1 <= merge <= 64):
        raise ValueError(f"spatial_merge_size: expected an integer in 1..64, got {_show(merge)}")
    layer = config.get("vision_feature_layer")
    if layer is not None and not (isinstance(layer, int) and not isinstance(layer, bool)) and not (
            isinstance(layer, list) and layer and all(isinstance(i, int) and not isinstance(i, bool) for i in layer)):
        raise ValueError(f"vision_feature_layer: expected a layer index or a list of them, got {_show(layer)}")


def check_fields(cfg: dict) -> None:
    """Every sizing field of a (text) config within its bounds, by name; before any per-layer work."""
    for key, (lo, hi) in INT_FIELDS.items():
        value = cfg.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi):
            raise ValueError(f"{key}: expected an integer in {lo:,}..{hi:,}, got {_show(value)}")
    layers = cfg.get("num_hidden_layers")
    for key in LAYER_LISTS:
        value = cfg.get(key)
        if value is None:
            continue
        if not isinstance(value, list) or any(isinstance(i, bool) or not isinstance(i, int) for i in value):
            raise ValueError(f"{key}: expected a list of layer indices, got {_show(value)}")
        out = [i for i in value if not 0 <= i < (layers or MAX_LAYERS)]
        if out:
            raise ValueError(f"{key}: layer {out[0]} is outside 0..{(layers or MAX_LAYERS) - 1} (num_hidden_layers)")
    for key in ("layer_types", "no_rope_layers"):
        value = cfg.get(key)
        if value is not None and not isinstance(value, list):
            raise ValueError(f"{key}: expected a list (one entry per layer), got {_show(value)}")
        if value and layers is not None and len(value) != layers:         # [] means the family's default
            raise ValueError(f"{key}: expected {layers} entries (num_hidden_layers), got {len(value):,}")
    if isinstance(cfg.get("layer_types"), list) and not all(isinstance(t, str) for t in cfg["layer_types"]):
        raise ValueError(f"layer_types: expected attention kinds (strings), got {_show(cfg['layer_types'])}")
    if isinstance(cfg.get("no_rope_layers"), list) and not all(i in (0, 1) and not isinstance(i, float)
                                                               for i in cfg["no_rope_layers"]):
        raise ValueError(f"no_rope_layers: expected 0 or 1 per layer, got {_show(cfg['no_rope_layers'])}")
    for key in BOOL_FIELDS:
        if cfg.get(key) is not None and not isinstance(cfg[key], bool):
            raise ValueError(f"{key}: expected true or false, got {_show(cfg[key])}")
    for key in ("model_type", "torch_dtype", "dtype"):
        if cfg.get(key) is not None and not isinstance(cfg[key], str):
            raise ValueError(f"{key}: expected a string, got {_show(cfg[key])}")
    prf = cfg.get("partial_rotary_factor")      # the rotated share of head_dim (the rotary cache's width)
    if prf is not None and (isinstance(prf, bool) or not isinstance(prf, (int, float)) or not 0 < prf <= 1):
        raise ValueError(f"partial_rotary_factor: expected a number in (0, 1], got {_show(prf)}")
    if cfg.get("quantization_config") is not None:
        quant.from_config(cfg["quantization_config"])              # its own fields, by name
    rope = _rope(cfg)
    if isinstance(rope, dict):
        kind = rope.get("rope_type", rope.get("type", "default"))
        if kind not in ROPE_TYPES:
            raise ValueError(f"rope_scaling.rope_type: {_show(kind)} is not a rope type transformers knows "
                             f"({', '.join(ROPE_TYPES)})")
        factor = rope.get("factor")        # transformers' rope validation: a float >= 1 (it stretches positions)
        if factor is not None and (isinstance(factor, bool) or not isinstance(factor, (int, float))
                                   or not 1 <= factor <= 1e6):
            raise ValueError(f"rope_scaling.factor: expected a number in 1..1e6 (a stretch of the positions), "
                             f"got {_show(factor)}")
        original = rope.get("original_max_position_embeddings")
        if original is not None and (isinstance(original, bool) or not isinstance(original, int)
                                     or not 1 <= original <= _LONG):
            raise ValueError(f"rope_scaling.original_max_position_embeddings: expected an integer in "
                             f"1..{_LONG:,}, got {_show(original)}")


def _show(value) -> str:
    """A value for an error message, at most 60 characters."""
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:57]}..."


def _text_config(config: dict) -> tuple[dict, list[str]]:
    """The language model's fields: the file itself, or its text_config (vision tower not counted)."""
    inner = config.get("text_config")
    if isinstance(inner, dict) and config.get("hidden_size") is None:
        cfg = {**inner}
        for key in ("torch_dtype", "dtype", "quantization_config", "tie_word_embeddings"):
            if key not in cfg and key in config:
                cfg[key] = config[key]
        if "model_type" not in inner:
            cfg["model_type"] = f"{config.get('model_type', '')}_text"
        return cfg, [f"text_config of a {config.get('model_type', 'multimodal')} model: the language model "
                     f"only (its vision tower is not counted)"]
    return dict(config), []


def _falcon(cfg: dict, notes: list[str]) -> None:
    """Falcon's own field names and flags as the standard fields (transformers' FalconConfig / FalconAttention):
    KV heads num_kv_heads with new_decoder_architecture (40B/180B), else 1 with multi_query (7B; FalconConfig's
    default), else every head; the MLP width ffn_hidden_size (absent: 4 * hidden_size, as the module builds it)."""
    for key in ("new_decoder_architecture", "multi_query", "parallel_attn", "bias", "alibi"):
        if cfg.get(key) is not None and not isinstance(cfg[key], bool):
            raise ValueError(f"{key}: expected true or false, got {_show(cfg[key])}")
    for key in ("num_kv_heads", "ffn_hidden_size", "num_ln_in_parallel_attn"):
        v = cfg.get(key)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= MAX_WIDTH):
            raise ValueError(f"{key}: expected an integer in 1..{MAX_WIDTH:,}, got {_show(v)}")
    if cfg.get("num_key_value_heads") is None:
        if cfg.get("new_decoder_architecture"):
            cfg["num_key_value_heads"] = cfg.get("num_kv_heads") or cfg.get("num_attention_heads")
        elif cfg.get("multi_query", True):
            cfg["num_key_value_heads"] = 1
            notes.append("num_key_value_heads: 1 (Falcon multi_query)")
    if cfg.get("intermediate_size") is None and cfg.get("ffn_hidden_size") is not None:
        cfg["intermediate_size"] = cfg["ffn_hidden_size"]


def _falcon_traits(cfg: dict) -> dict:
    """Falcon's biases and norms by its flags: q/k/v/o and MLP biases with ``bias``; two LayerNorms per layer in
    the new decoder architecture (ln_attn, ln_mlp; num_ln_in_parallel_attn), one in the parallel block (7B),
    two in the sequential one."""
    bias = bool(cfg.get("bias", False))
    if cfg.get("new_decoder_architecture") and (cfg.get("num_ln_in_parallel_attn") or 2) == 2:
        norms = 2                                   # ln_attn and ln_mlp
    else:                                           # input_layernorm, + post_attention_layernorm when sequential
        norms = 1 if cfg.get("parallel_attn", True) else 2
    return {**FAMILIES["falcon"], "attention_bias": Bias.ALL if bias else Bias.NONE, "mlp_bias": bias, "norms": norms}


def _fill_defaults(cfg: dict, notes: list[str]) -> None:
    model_type = {"gemma3": "gemma3_text"}.get(str(cfg.get("model_type", "")), str(cfg.get("model_type", "")))
    filled = {k: v for k, v in FAMILY_DEFAULTS.get(model_type, {}).items() if cfg.get(k) is None}
    cfg.update(filled)
    if filled:
        notes.append(f"{', '.join(f'{k} {v}' for k, v in filled.items())}: not in the file; transformers' "
                     f"{model_type} defaults")


def _family(cfg: dict, name: str, notes: list[str]) -> tuple[str, dict]:
    model_type = str(cfg.get("model_type", "")).lower()
    model_type = {"gemma3": "gemma3_text", "llama4": "llama4_text"}.get(model_type, model_type)
    if not model_type:
        unread = sorted(k for k in _STRUCTURAL if k in cfg)
        if unread:
            raise ValueError(f"{name}: no model_type, and {unread[0]!r} says this is not a dense model; "
                             f"give model_type (known: {', '.join(FAMILIES)})")
        notes.append("model_type: absent, so a dense Llama-style decoder is assumed (gated MLP, RMSNorm)")
        return "", {}
    if model_type in REFUSED:
        raise ValueError(f"{name}: model_type {model_type!r} is refused: {REFUSED[model_type]}")
    if model_type not in FAMILIES:
        arch = cfg.get("architectures")
        raise ValueError(f"{name}: model_type {model_type!r}{f' ({arch[0]})' if isinstance(arch, list) and arch else ''}"
                         f" is not a family the cost model represents, so it is refused rather than counted as a "
                         f"dense model (known: {', '.join(FAMILIES)})")
    for (family, key), reason in REFUSED_FLAGS.items():
        if model_type == family and cfg.get(key):
            raise ValueError(f"{name}: {key} in a {model_type} config is refused: {reason}")
    traits = _falcon_traits(cfg) if model_type == "falcon" else FAMILIES[model_type]
    for key, needs in _STRUCTURAL.items():
        if cfg.get(key) not in (None, 0) and not traits.get(needs):
            raise ValueError(f"{name}: {key!r} in a {model_type} config: the {model_type} reader does not "
                             f"represent {needs.upper()} layers")
    return model_type, traits


def _common(cfg: dict, traits: dict, notes: list[str]) -> dict:
    """The dense decoder's sizes and the family's traits."""
    plain = traits.get("plain", False)
    intermediate = cfg.get("intermediate_size")
    if intermediate is None and (traits.get("learned") or traits.get("inner4")):
        intermediate = 4 * cfg["hidden_size"]       # GPT-2, GPT-J, Falcon: an absent width means 4 * hidden
        notes.append("intermediate_size: n_inner / ffn_hidden_size is absent or null, so 4 * hidden_size "
                     "(as the model's module builds it)")
    if cfg.get("num_key_value_heads") is None and not traits.get("mla"):
        notes.append("num_key_value_heads: absent, so H_kv = H (MHA), as transformers assumes")
    dtype = cfg.get("torch_dtype", cfg.get("dtype"))
    if dtype is not None:
        dtype = canonical_dtype(dtype, "torch_dtype")
    bias = traits.get("attention_bias", Bias.ALL if cfg.get("attention_bias") else Bias.NONE)
    qc = cfg.get("quantization_config")
    return dict(
        hidden_size=cfg["hidden_size"], num_layers=cfg["num_hidden_layers"], num_heads=cfg["num_attention_heads"],
        num_kv_heads=cfg.get("num_key_value_heads"), head_dim=cfg.get("head_dim"), intermediate_size=intermediate,
        vocab_size=cfg.get("vocab_size"), max_position_embeddings=cfg.get("max_position_embeddings"),
        rope_scaling=rope_scaling_of(_rope(cfg)),
        tie_word_embeddings=bool(cfg.get("tie_word_embeddings", traits.get("tie", False))), dtype=dtype,
        mlp=MlpKind.PLAIN if plain else MlpKind.GATED,
        positions=Positions.LEARNED if traits.get("learned") else Positions.ROPE,
        attention_bias=bias, mlp_bias=traits.get("mlp_bias", plain or bool(cfg.get("mlp_bias", False))),
        lm_head_bias=traits.get("lm_head_bias", False), norm=traits.get("norm", NormKind.RMS),
        norms_per_layer=traits.get("norms", 2), qk_norm=traits.get("qk_norm", False),
        attention_sinks=traits.get("sinks", False),
        quantization=quant.from_config(qc) if qc is not None else None)


def _rope(cfg: dict):
    """rope_scaling, or transformers v5's rope_parameters (per layer kind: the full layers')."""
    if cfg.get("rope_scaling") is not None or not isinstance(cfg.get("rope_parameters"), dict):
        return cfg.get("rope_scaling")
    params = cfg["rope_parameters"]
    return params.get("full_attention", params) if "rope_type" not in params else params


def _layers(cfg: dict, model_type: str) -> dict:
    """Where the windows are: layer_types when the file has it, else the family's default pattern."""
    L, window = cfg["num_hidden_layers"], cfg.get("sliding_window")
    types = cfg.get("layer_types")
    chunk = cfg.get("attention_chunk_size") if model_type == "llama4_text" else None
    if model_type in ("qwen2", "qwen3", "qwen2_moe", "qwen3_moe", "qwen3_vl_text", "qwen3_vl_moe_text"):
        if not cfg.get("use_sliding_window", False):
            window, types = None, None                   # Qwen states a window it does not use
        elif types is None:                              # layers from max_window_layers on slide
            first = cfg.get("max_window_layers", L)
            types = ["sliding_attention" if i >= first else "full_attention" for i in range(L)]
    elif types is None and window is not None and model_type in ("gemma2", "gemma3_text"):
        every = 2 if model_type == "gemma2" else cfg.get("sliding_window_pattern", 6)
        types = ["sliding_attention" if (i + 1) % every else "full_attention" for i in range(L)]
    elif types is None and chunk:
        rope = cfg.get("no_rope_layers") or [int((i + 1) % 4 != 0) for i in range(L)]
        types = ["chunked_attention" if r else "full_attention" for r in rope]
    if types is not None and not isinstance(types, list):
        raise ValueError(f"layer_types: expected a list, got {types!r}")
    return dict(sliding_window=window, layer_types=types, attention_chunk_size=chunk)


def _mla(cfg: dict) -> dict:
    m = MLA(kv_lora_rank=cfg["kv_lora_rank"], qk_rope_head_dim=cfg["qk_rope_head_dim"],
            qk_nope_head_dim=cfg["qk_nope_head_dim"], v_head_dim=cfg["v_head_dim"], q_lora_rank=cfg.get("q_lora_rank"))
    for f in ("kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim"):
        if not isinstance(getattr(m, f), int) or getattr(m, f) <= 0:
            raise ValueError(f"{f}: expected a positive integer, got {getattr(m, f)!r}")
    # every head has its own K and V once decompressed (H_kv = H); d is the q/k head dim
    return dict(mla=m, num_kv_heads=cfg["num_attention_heads"], head_dim=m.qk_head_dim)


def _moe_qwen(cfg: dict) -> MoE:
    L, step = cfg["num_hidden_layers"], cfg.get("decoder_sparse_step") or 1     # bounds: check_fields
    dense = set(cfg.get("mlp_only_layers") or [])
    n = sum(1 for i in range(L) if (i + 1) % step == 0 and i not in dense) if cfg.get("num_experts") else 0
    shared = cfg.get("shared_expert_intermediate_size") or 0
    return MoE(cfg["num_experts"], cfg["num_experts_per_tok"], cfg["moe_intermediate_size"], n,
               shared_experts=1 if shared else 0, shared_intermediate_size=shared, shared_expert_gate=bool(shared),
               layout="every layer" if n == L else f"{n} of {L} layers")


def _moe_mixtral(cfg: dict) -> MoE:
    return MoE(cfg["num_local_experts"], cfg["num_experts_per_tok"], cfg["intermediate_size"],
               cfg["num_hidden_layers"])


def _moe_deepseek(cfg: dict) -> MoE:
    L, first, freq = cfg["num_hidden_layers"], cfg.get("first_k_dense_replace", 0), cfg.get("moe_layer_freq", 1)
    n = sum(1 for i in range(first, L) if i % freq == 0) if cfg.get("n_routed_experts") else 0
    return MoE(cfg["n_routed_experts"], cfg["num_experts_per_tok"], cfg["moe_intermediate_size"], n,
               shared_experts=cfg.get("n_shared_experts") or 0, shared_intermediate_size=cfg["moe_intermediate_size"],
               layout=f"layers {first}..{L - 1}; first {first} dense" if first else "every layer")


def _moe_gpt_oss(cfg: dict) -> MoE:
    return MoE(cfg["num_local_experts"], cfg.get("num_experts_per_tok", cfg.get("experts_per_token")),
               cfg["intermediate_size"], cfg["num_hidden_layers"], router_bias=True, expert_bias=True)


def _moe_llama4(cfg: dict) -> MoE:
    L, step = cfg["num_hidden_layers"], cfg.get("interleave_moe_layer_step", 1) or 1
    layers = cfg.get("moe_layers") or list(range(step - 1, L, step))
    return MoE(cfg["num_local_experts"], cfg["num_experts_per_tok"], cfg["intermediate_size"], len(layers),
               shared_experts=1, shared_intermediate_size=cfg["intermediate_size"],
               layout="every layer" if len(layers) == L else f"every {step}th layer ({len(layers)} of {L})")


_MOE_READERS = {"qwen": _moe_qwen, "mixtral": _moe_mixtral, "deepseek": _moe_deepseek, "gpt_oss": _moe_gpt_oss,
                "llama4": _moe_llama4}
