"""Hypothesis strategies for hostile inputs shared by the fuzz tests (issue 26's round): config.json
dicts built from real families' fields with hostile values put in."""
from __future__ import annotations

from hypothesis import strategies as st

FAMILY_BASES = {
    "llama": dict(model_type="llama", hidden_size=4096, num_hidden_layers=32, num_attention_heads=32,
                  num_key_value_heads=8, intermediate_size=14336, vocab_size=128256, max_position_embeddings=131072,
                  rope_scaling={"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192},
                  torch_dtype="bfloat16"),
    "gemma2": dict(model_type="gemma2", hidden_size=2304, num_hidden_layers=26, num_attention_heads=8,
                   num_key_value_heads=4, head_dim=256, intermediate_size=9216, vocab_size=256000,
                   sliding_window=4096, max_position_embeddings=8192),
    "gemma3": dict(model_type="gemma3", text_config=dict(hidden_size=2560, num_hidden_layers=34,
                                                          intermediate_size=10240, sliding_window=1024),
                   vision_config=dict(hidden_size=1152)),
    "qwen2": dict(model_type="qwen2", hidden_size=3584, num_hidden_layers=28, num_attention_heads=28,
                  num_key_value_heads=4, intermediate_size=18944, vocab_size=152064, max_position_embeddings=32768,
                  use_sliding_window=False, sliding_window=131072, max_window_layers=28),
    "qwen3_moe": dict(model_type="qwen3_moe", hidden_size=2048, num_hidden_layers=48, num_attention_heads=32,
                      num_key_value_heads=4, head_dim=128, intermediate_size=6144, vocab_size=151936,
                      num_experts=128, num_experts_per_tok=8, moe_intermediate_size=768, decoder_sparse_step=1,
                      mlp_only_layers=[], max_position_embeddings=40960),
    "mixtral": dict(model_type="mixtral", hidden_size=4096, num_hidden_layers=32, num_attention_heads=32,
                    num_key_value_heads=8, intermediate_size=14336, vocab_size=32000, num_local_experts=8,
                    num_experts_per_tok=2, max_position_embeddings=32768),
    "deepseek_v3": dict(model_type="deepseek_v3", hidden_size=7168, num_hidden_layers=61, num_attention_heads=128,
                        intermediate_size=18432, vocab_size=129280, n_routed_experts=256, num_experts_per_tok=8,
                        moe_intermediate_size=2048, n_shared_experts=1, first_k_dense_replace=3, kv_lora_rank=512,
                        q_lora_rank=1536, qk_rope_head_dim=64, qk_nope_head_dim=128, v_head_dim=128,
                        max_position_embeddings=163840,
                        quantization_config={"quant_method": "fp8", "weight_block_size": [128, 128]}),
    "llama4_text": dict(model_type="llama4_text", hidden_size=5120, num_hidden_layers=48, num_attention_heads=40,
                        num_key_value_heads=8, head_dim=128, intermediate_size=8192, intermediate_size_mlp=16384,
                        vocab_size=202048, num_local_experts=16, num_experts_per_tok=1, interleave_moe_layer_step=1,
                        attention_chunk_size=8192, max_position_embeddings=10485760, no_rope_layers=[]),
    "mistral3": dict(model_type="mistral3", spatial_merge_size=2,
                     text_config=dict(model_type="mistral", hidden_size=5120, num_hidden_layers=40,
                                      num_attention_heads=32, num_key_value_heads=8, head_dim=128,
                                      intermediate_size=32768, vocab_size=131072, max_position_embeddings=131072),
                     vision_config=dict(model_type="pixtral", hidden_size=1024, intermediate_size=4096,
                                        num_hidden_layers=24, patch_size=14, image_size=1540)),
    "llama4": dict(model_type="llama4",
                   text_config=dict(model_type="llama4_text", hidden_size=5120, num_hidden_layers=48,
                                    num_attention_heads=40, num_key_value_heads=8, head_dim=128,
                                    intermediate_size=8192, intermediate_size_mlp=16384, vocab_size=202048,
                                    num_local_experts=16, num_experts_per_tok=1, attention_chunk_size=8192,
                                    max_position_embeddings=10485760),
                   vision_config=dict(model_type="llama4_vision_model", hidden_size=1408, intermediate_size=5632,
                                      num_hidden_layers=34, patch_size=14, image_size=336, pixel_shuffle_ratio=0.5,
                                      projector_input_dim=4096, projector_output_dim=4096, vision_output_dim=4096)),
    "gpt2": dict(model_type="gpt2", n_embd=768, n_layer=12, n_head=12, vocab_size=50257, n_positions=1024),
    "gptq": dict(model_type="llama", hidden_size=4096, num_hidden_layers=32, num_attention_heads=32,
                 num_key_value_heads=8, intermediate_size=14336, vocab_size=128256,
                 quantization_config={"quant_method": "gptq", "bits": 4, "group_size": 128}),
    "bnb": dict(model_type="mistral", hidden_size=4096, num_hidden_layers=32, num_attention_heads=32,
                num_key_value_heads=8, intermediate_size=14336, vocab_size=32768,
                quantization_config={"quant_method": "bitsandbytes", "load_in_4bit": True}),
}

_scalars = st.one_of(
    st.none(), st.booleans(),
    st.integers(-3, 3), st.integers(-(2**70), 2**70), st.sampled_from([0, 1, 2, 10**5, 10**5 + 1, 2**24, 2**24 + 1,
                                                                      2**40, 2**63, 10**9]),
    st.floats(allow_nan=False, allow_infinity=False), st.sampled_from([0.5, 1e9, 1e300, -0.0, 4096.0]),
    st.text(max_size=6), st.sampled_from(["all", "zzz", "bfloat16", "full_attention", "sliding_attention", "1e9"]))
_values = st.recursive(_scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                         st.dictionaries(st.text(max_size=5), inner, max_size=3)),
                       max_leaves=6)
_FIELDS = sorted({k for base in FAMILY_BASES.values() for k in base} | {
    "layer_types", "rope_scaling", "rope_parameters", "quantization_config", "text_config", "model_type",
    "sliding_window_pattern", "moe_layers", "moe_layer_freq", "shared_expert_intermediate_size", "tie_word_embeddings",
    "attention_bias", "mlp_bias", "num_experts", "num_local_experts", "experts_per_token", "architectures"})
_VISION_FIELDS = ["hidden_size", "intermediate_size", "num_hidden_layers", "patch_size", "image_size",
                  "pixel_shuffle_ratio", "projector_input_dim", "projector_output_dim", "vision_output_dim",
                  "init_pos_emb_height", "init_pos_emb_width", "model_type"]
_FIELDS += ["spatial_merge_size", "vision_feature_layer", "vision_config"]
_QUANT = st.fixed_dictionaries({"quant_method": st.sampled_from(["gptq", "awq", "fp8", "bitsandbytes",
                                                                 "compressed-tensors", "mxfp4", "modelopt", "x"])},
                               optional={"bits": _scalars, "group_size": _scalars, "weight_block_size": _values,
                                         "load_in_4bit": _scalars, "load_in_8bit": _scalars, "zero_point": _scalars,
                                         "config_groups": _values, "bnb_4bit_quant_type": _scalars,
                                         "quantization": _values, "ignore": _values})
_ROPE = st.fixed_dictionaries({}, optional={"rope_type": st.one_of(_scalars, st.sampled_from(
    ["yarn", "linear", "dynamic", "llama3", "longrope", "default"])), "type": _scalars, "factor": _scalars,
    "original_max_position_embeddings": _scalars})


@st.composite
def hostile_configs(draw):
    """A real family's config with 1-4 fields replaced, removed or added with hostile values."""
    cfg = dict(draw(st.sampled_from(list(FAMILY_BASES.values()))))
    cfg = {k: (dict(v) if isinstance(v, dict) else v) for k, v in cfg.items()}
    for _ in range(draw(st.integers(1, 4))):
        nested = [k for k in ("text_config", "vision_config") if isinstance(cfg.get(k), dict)]
        where = draw(st.sampled_from(["top", *nested]))
        target = cfg if where == "top" else cfg[where]
        key = draw(st.sampled_from(_VISION_FIELDS if where == "vision_config" else _FIELDS))
        action = draw(st.sampled_from(["set", "set", "set", "drop", "quant", "rope"]))
        if action == "drop":
            target.pop(key, None)
        elif action == "quant":
            target["quantization_config"] = draw(_QUANT)
        elif action == "rope":
            target["rope_scaling"] = draw(_ROPE)
        else:
            target[key] = draw(_values)
    return cfg
