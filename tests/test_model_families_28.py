"""Issue 28's model types: read where the architecture maps, refused by name with a reason otherwise.

Config shapes from the models' published config.json files (sources in each dict's comment)."""
import pytest

from multihead import cost
from multihead.cost.spec import hf_config
from multihead.cost.time import timing

# https://huggingface.co/moonshotai/Kimi-K2-Instruct/blob/main/config.json (the DeepSeek-V3 architecture)
KIMI_K2 = {"model_type": "kimi_k2", "architectures": ["DeepseekV3ForCausalLM"], "hidden_size": 7168,
           "intermediate_size": 18432, "moe_intermediate_size": 2048, "num_hidden_layers": 61,
           "num_attention_heads": 64, "num_key_value_heads": 64, "n_shared_experts": 1, "n_routed_experts": 384,
           "num_experts_per_tok": 8, "first_k_dense_replace": 1, "moe_layer_freq": 1, "kv_lora_rank": 512,
           "q_lora_rank": 1536, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
           "vocab_size": 163840, "tie_word_embeddings": False}
# https://huggingface.co/zai-org/GLM-4.5/blob/main/config.json
GLM45 = {"model_type": "glm4_moe", "hidden_size": 5120, "intermediate_size": 12288, "moe_intermediate_size": 1536,
         "num_hidden_layers": 92, "num_attention_heads": 96, "num_key_value_heads": 8, "head_dim": 128,
         "n_routed_experts": 160, "n_shared_experts": 1, "num_experts_per_tok": 8, "first_k_dense_replace": 3,
         "vocab_size": 151552, "attention_bias": True, "partial_rotary_factor": 0.5, "tie_word_embeddings": False}
# https://huggingface.co/MiniMaxAI/MiniMax-M2/blob/main/config.json
MINIMAX_M2 = {"model_type": "minimax_m2", "hidden_size": 3072, "intermediate_size": 1536, "num_hidden_layers": 62,
              "num_attention_heads": 48, "num_key_value_heads": 8, "head_dim": 128, "num_local_experts": 256,
              "num_experts_per_tok": 8, "vocab_size": 200064, "use_qk_norm": True, "tie_word_embeddings": False}
# https://huggingface.co/Qwen/Qwen3-VL-8B-Instruct/blob/main/config.json (text_config)
QWEN3_VL_TEXT = {"model_type": "qwen3_vl_text", "hidden_size": 4096, "intermediate_size": 12288,
                 "num_hidden_layers": 36, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
                 "vocab_size": 151936, "tie_word_embeddings": False}


@pytest.mark.parametrize("cfg, total, active, kind", [
    (KIMI_K2, 1.04e12, 32e9, "mla"),        # published: 1T total, 32B activated
    (GLM45, 355e9, 32e9, "moe"),            # published: 355B total, 32B active (with its MTP layer)
    (MINIMAX_M2, 230e9, 10e9, "moe"),       # published: 230B total, 10B active
])
def test_moe_families_read_with_their_published_sizes(cfg, total, active, kind):
    spec = cost.read_config(cfg, name=cfg["model_type"])
    assert (spec.mla is not None) == (kind == "mla") and spec.moe is not None
    counts = cost.counts.params.param_counts(spec)
    assert counts.total == pytest.approx(total, rel=0.06)
    assert cost.counts.params.non_embedding_params(spec, active=True)[0] == pytest.approx(active, rel=0.25)


def test_qwen3_vl_text_reads_as_qwen3():
    spec = cost.read_config(QWEN3_VL_TEXT, name="qwen3-vl-8b")
    dense = cost.catalog_model("Qwen3-8B")
    assert spec.moe is None and spec.qk_norm and spec.num_layers == dense.num_layers
    nested = cost.read_config({"model_type": "qwen3_vl", "text_config": {k: v for k, v in QWEN3_VL_TEXT.items()
                                                                          if k != "model_type"}}, name="vl")
    assert nested.model_type == "qwen3_vl_text" and nested.hidden_size == 4096


@pytest.mark.parametrize("model_type, words", [
    ("deepseek_v32", "DeepSeek Sparse Attention"), ("glm_moe_dsa", "DeepSeek Sparse Attention"),
    ("qwen3_5", "Gated DeltaNet"), ("nemotron_h", "Mamba-2"),
])
def test_refused_by_name_with_the_reason(model_type, words):
    with pytest.raises(ValueError) as err:
        cost.read_config({**KIMI_K2, "model_type": model_type}, name="m")
    assert f"model_type {model_type!r} is refused" in str(err.value) and words in str(err.value)
    assert set(hf_config.REFUSED) >= {"deepseek_v32", "glm_moe_dsa", "qwen3_5", "nemotron_h"}


def test_time_model_times_the_new_families():
    gpu = timing.make_gpu("H200-SXM", cost.gpu_catalog()["H200-SXM"])
    for cfg in (KIMI_K2, GLM45, MINIMAX_M2):
        spec = cost.read_config(cfg, name=cfg["model_type"])
        s = timing.Setup(spec, gpu, timing.load_constants(), tp=8, quantization=cost.spec.quantization.from_flag("fp8"))
        step = timing.decode_step(s, 16, 2048)
        assert 0 < step.total_s < 1
