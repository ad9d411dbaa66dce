"""The cost model's parameter counts against transformers' own, model by model (meta device: no weights).

Each catalog config is given, as a dict, both to ``multihead.cost.read_config`` and to
transformers (``AutoConfig.for_model`` + ``AutoModelForCausalLM.from_config`` on the meta device);
the totals must be equal, and the active count (k of E routed experts per MoE layer) must equal
transformers' total less the idle share of the parameters its expert modules hold.
"""
from __future__ import annotations

import os

import pytest

from multihead import cost

# Shares an xdist worker with the other tests that load transformers (pyproject: --dist loadgroup):
# one worker pays for its import and the SmolLM2 load.
pytestmark = pytest.mark.xdist_group("transformers")

ACCEPTANCE = ["Llama-3.1-8B", "Llama-3.1-70B", "Llama-3.1-405B", "Qwen2.5-7B", "Qwen2.5-72B", "Qwen3-8B",
              "Qwen3-30B-A3B", "Mixtral-8x7B", "DeepSeek-V2-Lite", "Gemma-2-9B", "Gemma-2-27B", "Gemma-3-1B",
              "Phi-3-mini-4k", "Phi-4", "GPT-2", "gpt-oss-20b"]
# not given to transformers: loading quantized weights needs kernels, counting does not
_NOT_FOR_TRANSFORMERS = {"quantization_config", "torch_dtype"}


def _meta_model(config: dict):
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    from conftest import require
    transformers = require("transformers")
    kwargs = {k: v for k, v in config.items() if k not in _NOT_FOR_TRANSFORMERS and k != "model_type"}
    hf_config = transformers.AutoConfig.for_model(config["model_type"], **kwargs)
    with torch.device("meta"):
        return transformers.AutoModelForCausalLM.from_config(hf_config)


def _unique_params(model) -> dict[str, int]:
    """name -> numel, each tensor once (a tied LM head is the embedding itself)."""
    seen, out = set(), {}
    for name, p in model.named_parameters(remove_duplicate=False):
        if id(p) not in seen:
            seen.add(id(p))
            out[name] = p.numel()
    return out


@pytest.mark.parametrize("name", ACCEPTANCE)
def test_total_and_active_equal_transformers(name):
    entry = cost.model_catalog()[name]
    spec = cost.read_config(entry["config"], name=name)
    counts = cost.param_counts(spec)
    params = _unique_params(_meta_model(entry["config"]))
    total = sum(params.values())
    assert counts.total == total, f"{name}: cost {counts.total:,} vs transformers {total:,}"
    assert counts.total == entry["params_published"]
    routed = sum(n for k, n in params.items() if ".experts." in k and "shared" not in k)
    if spec.moe:
        assert routed == counts.experts_total
        idle = routed * (1 - spec.moe.experts_per_token / spec.moe.num_experts)
        assert counts.active == pytest.approx(total - idle, rel=1e-12)
    else:
        assert routed == 0 and counts.active == total


# -- every family the reader knows, at toy sizes (fast): the same formula as transformers' modules ----
_BASE = dict(hidden_size=64, num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=2, intermediate_size=96,
             pad_token_id=0, bos_token_id=1, eos_token_id=2,
             vocab_size=300, max_position_embeddings=256)
TINY = {
    "llama": dict(_BASE, attention_bias=True, mlp_bias=True),
    "granite": dict(_BASE, tie_word_embeddings=True),
    "mistral": dict(_BASE, sliding_window=32),
    "qwen2": dict(_BASE, use_sliding_window=True, sliding_window=32, max_window_layers=2),
    "qwen3": dict(_BASE, head_dim=24),
    "phi3": dict(_BASE),
    "phi": dict(_BASE, num_key_value_heads=4),
    "gemma": dict(_BASE, head_dim=32),
    "gemma2": dict(_BASE, head_dim=32, sliding_window=16),
    "gemma3_text": dict(_BASE, head_dim=32, sliding_window=16, num_hidden_layers=7),
    "gpt2": dict(n_embd=64, n_layer=2, n_head=4, vocab_size=300, n_positions=128),
    "mixtral": dict(_BASE, num_local_experts=4, num_experts_per_tok=2),
    "qwen2_moe": dict(_BASE, num_experts=6, num_experts_per_tok=2, moe_intermediate_size=40,
                      shared_expert_intermediate_size=80, decoder_sparse_step=2, mlp_only_layers=[3]),
    "qwen3_moe": dict(_BASE, num_experts=6, num_experts_per_tok=2, moe_intermediate_size=40, head_dim=16),
    "deepseek_v2": dict(_BASE, num_key_value_heads=4, moe_intermediate_size=40, n_routed_experts=6, n_shared_experts=2,
                        num_experts_per_tok=2, first_k_dense_replace=1, kv_lora_rank=32, q_lora_rank=None,
                        qk_nope_head_dim=16, qk_rope_head_dim=8, v_head_dim=12, topk_method="greedy", n_group=1,
                        topk_group=1),
    "deepseek_v3": dict(_BASE, num_key_value_heads=4, moe_intermediate_size=40, n_routed_experts=8, n_shared_experts=1,
                        num_experts_per_tok=2, first_k_dense_replace=2, kv_lora_rank=32, q_lora_rank=48,
                        qk_nope_head_dim=16, qk_rope_head_dim=8, v_head_dim=12, n_group=2, topk_group=1),
    "gpt_oss": dict(_BASE, head_dim=16, num_local_experts=4, num_experts_per_tok=2, sliding_window=8,
                    layer_types=["sliding_attention", "full_attention"] * 2),
    "llama4_text": dict(_BASE, intermediate_size_mlp=128, num_local_experts=4, num_experts_per_tok=1,
                        interleave_moe_layer_step=2, attention_chunk_size=16, head_dim=16),
    "gptj": dict(n_embd=64, n_layer=2, n_head=4, n_inner=None, rotary_dim=8, vocab_size=300, n_positions=128),
    "falcon": dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_kv_heads=2, vocab_size=300,
                   new_decoder_architecture=True),
}
# Falcon's flags change its layout: multi-query (7B), the sequential block, biases, one norm in the new architecture
FALCON = {
    "multi_query parallel (7B)": dict(multi_query=True, new_decoder_architecture=False, parallel_attn=True),
    "sequential with biases": dict(multi_query=False, new_decoder_architecture=False, parallel_attn=False, bias=True),
    "new architecture, one norm, ffn width": dict(new_decoder_architecture=True, num_kv_heads=2,
                                                  num_ln_in_parallel_attn=1, ffn_hidden_size=96),
    "new architecture, one norm, sequential": dict(new_decoder_architecture=True, num_kv_heads=2,
                                                   num_ln_in_parallel_attn=1, parallel_attn=False),
}


@pytest.mark.parametrize("model_type", sorted(TINY))
def test_every_family_equals_transformers(model_type):
    config = {"model_type": model_type, **TINY[model_type]}
    spec = cost.read_config(config, name=model_type)
    params = _unique_params(_meta_model(config))
    counts = cost.param_counts(spec)
    assert counts.total == sum(params.values())
    routed = sum(n for k, n in params.items() if ".experts." in k and "shared" not in k)
    assert routed == counts.experts_total


def test_gemma3_multimodal_config_reads_its_text_config():
    """A Gemma-3 (vision) config.json: the language model comes from text_config, with a note."""
    text = {**TINY["gemma3_text"], "model_type": "gemma3_text"}
    nested = {"model_type": "gemma3", "text_config": text, "vision_config": {"model_type": "siglip_vision_model"},
              "torch_dtype": "bfloat16"}
    spec = cost.read_config(nested, name="gemma-3-it")
    assert cost.param_counts(spec) == cost.param_counts(cost.read_config(text))
    assert spec.dtype == "bf16" and any("vision tower is not counted" in n for n in spec.notes)


@pytest.mark.parametrize("variant", sorted(FALCON))
def test_falcon_layouts_equal_transformers(variant):
    config = {"model_type": "falcon", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
              "vocab_size": 300, **FALCON[variant]}
    spec = cost.read_config(config, name=variant)
    assert cost.param_counts(spec).total == sum(_unique_params(_meta_model(config)).values())


# the catalog's published configs of the gptj and falcon families, and the llama variants added with them
PUBLISHED = ["EleutherAI/gpt-j-6b", "tiiuae/falcon-7b", "tiiuae/falcon-40b", "tiiuae/falcon-180B",
             "meta-llama/Meta-Llama-3-8B", "meta-llama/Meta-Llama-3-70B", "Qwen/Qwen3-235B-A22B",
             "mistralai/Mixtral-8x22B-v0.1", "mistralai/Mixtral-8x22B-Instruct-v0.1",
             "mistralai/Mistral-7B-Instruct-v0.2", "mistralai/Mistral-7B-Instruct-v0.3"]


@pytest.mark.parametrize("model", PUBLISHED)
def test_published_configs_equal_transformers(model):
    from multihead.cost.spec.lookup import catalog_config
    config = catalog_config(model)
    spec = cost.read_config(config, name=model)
    assert cost.param_counts(spec).total == sum(_unique_params(_meta_model(config)).values())


def test_falcon_alibi_is_refused_by_name():
    config = {"model_type": "falcon", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
              "vocab_size": 300, "alibi": True}
    with pytest.raises(ValueError, match="alibi in a falcon config is refused: ALiBi positions"):
        cost.read_config(config, name="falcon-rw")
