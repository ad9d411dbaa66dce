"""The cost model (multihead.cost): KV bytes per family, quantized weights, dtype resolution, positions,
refusals, bounds. Parameter counts against transformers are in test_cost_transformers.py."""
from __future__ import annotations

import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from multihead import cost
from multihead.cost.counts import formulas as f
from multihead.cost.spec import precision
from multihead.cost.spec.quantization import from_config, from_flag


def spec(name):
    return cost.catalog_model(name)


# -- KV bytes per token: the hand formula, family by family ------------------------------------------
def test_kv_dense_gqa_is_2_L_Hkv_d_bytes():
    assert cost.kv_bytes_per_token(spec("Llama-3.1-8B"), "bf16") == 2 * 32 * 8 * 128 * 2 == 131_072
    assert cost.kv_bytes_per_token(spec("Qwen2.5-72B"), "fp8") == 2 * 80 * 8 * 128 * 1


def test_kv_mla_is_the_latent_only():
    s = spec("DeepSeek-V2-Lite")          # (kv_lora_rank + qk_rope_head_dim) * L * 2 B (the 31,104)
    assert cost.kv_bytes_per_token(s, "bf16") == (512 + 64) * 27 * 2 == 31_104
    assert s.attention_kind == "MLA"
    # the latent is replicated on every tensor-parallel GPU
    assert cost.kv_bytes(s, 1000, "bf16", gpus=4) == cost.kv_bytes(s, 1000, "bf16")


def test_kv_sliding_caps_at_the_window():
    s = spec("Mistral-7B-v0.1")
    assert cost.kv_bytes(s, 32768, "bf16") == f.kv_cache_bytes(32, 8, 128, 4096, 2)
    assert cost.kv_bytes(s, 1000, "bf16") == f.kv_cache_bytes(32, 8, 128, 1000, 2)


@pytest.mark.parametrize("name, sliding, full, window", [
    ("Gemma-2-9B", 21, 21, 4096), ("Gemma-2-27B", 23, 23, 4096), ("Gemma-3-1B", 22, 4, 512),
    ("gpt-oss-20b", 12, 12, 128)])
def test_kv_hybrid_layers_by_kind(name, sliding, full, window):
    s = spec(name)
    groups = {g.kind.value: (g.layers, g.window) for g in cost.kv_layer_groups(s)}
    assert groups == {"sliding_attention": (sliding, window), "full_attention": (full, None)}
    per = 2 * s.num_kv_heads * s.head_dim * 2
    T = 100_000
    assert cost.kv_bytes(s, T, "bf16") == per * (sliding * window + full * T)
    assert cost.kv_bytes_per_token(s, "bf16") == per * s.num_layers


def test_kv_chunked_attention_llama4_style():
    cfg = {"model_type": "llama4_text", "hidden_size": 512, "num_hidden_layers": 8, "num_attention_heads": 8,
           "num_key_value_heads": 2, "head_dim": 64, "intermediate_size": 256, "intermediate_size_mlp": 512,
           "num_local_experts": 4, "num_experts_per_tok": 1, "vocab_size": 1000, "attention_chunk_size": 8192}
    s = cost.read_config(cfg)
    assert {(g.kind.value, g.layers, g.window) for g in cost.kv_layer_groups(s)} == {
        ("chunked_attention", 6, 8192), ("full_attention", 2, None)}
    assert cost.kv_bytes(s, 20_000, "bf16") == 2 * 2 * 64 * 2 * (6 * 8192 + 2 * 20_000)


@pytest.mark.parametrize("B, Hkv, T, d, L", [(1, 8, 16, 32, 3), (2, 1, 5, 8, 2), (3, 4, 7, 16, 1)])
def test_kv_equals_what_kvcache_allocates(B, Hkv, T, d, L):
    import torch
    from multihead.layers import KVCache
    s = cost.ModelSpec("t", hidden_size=Hkv * 2 * d, num_layers=L, num_heads=Hkv * 2, num_kv_heads=Hkv, head_dim=d)
    for dtype, name in ((torch.float32, "fp32"), (torch.bfloat16, "bf16")):
        cache = KVCache(B, Hkv, T, d, n_layers=L, dtype=dtype)
        allocated = cache.k.numel() * cache.k.element_size() + cache.v.numel() * cache.v.element_size()
        assert cost.kv_bytes(s, T, name, batch=B) == allocated == cache.nbytes


# -- weights: quantization and dtype resolution ------------------------------------------------------
def test_quantized_bytes_include_scales_and_zeros():
    gptq = from_config({"quant_method": "gptq", "bits": 4, "group_size": 128, "sym": True})
    assert gptq.bytes_per_weight(4096) == 0.5 + (2 + 0.5) / 128
    awq = from_config({"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True})
    assert awq.bytes_per_weight(4096) == gptq.bytes_per_weight(4096)
    ct = from_config({"quant_method": "compressed-tensors", "config_groups": {"group_0": {
        "targets": ["Linear"], "weights": {"num_bits": 8, "type": "float", "strategy": "channel", "symmetric": True}}},
        "ignore": ["lm_head"]})
    assert ct.bytes_per_weight(4096) == 1 + 2 / 4096 and not ct.lm_head and ct.fmt == "float"
    assert from_config({"quant_method": "mxfp4"}).bytes_per_weight(2880) == 4.25 / 8
    assert from_config({"quant_method": "fp8", "weight_block_size": [128, 128]}).bytes_per_weight(7168) == 1 + 4 / 16384
    nf4 = from_config({"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_use_double_quant": True})
    assert nf4.bytes_per_weight(4096) == pytest.approx((4 + 8 / 64 + 32 / (64 * 256)) / 8)
    with pytest.raises(ValueError, match="quant_method: 'hqq'"):
        from_config({"quant_method": "hqq"})


def test_embeddings_norms_and_routers_stay_16_bit():
    s = spec("Llama-3.1-8B")
    c = cost.param_counts(s)
    q = from_flag("gptq")
    w = cost.weight_bytes(s, "bf16", q)
    sixteen = c.embedding + c.lm_head + c.n_layers * c.norms_per_layer + c.final_norm
    assert w.plain_params == sixteen and w.quantized_params == c.total - sixteen
    assert w.total == sixteen * 2 + (c.total - sixteen) * q.bytes_per_weight(4096)
    moe = spec("Qwen3-30B-A3B")
    mc = cost.param_counts(moe)
    assert cost.weight_bytes(moe, "bf16", q).plain_params == (mc.embedding + mc.lm_head + mc.final_norm
                                                              + 48 * (mc.norms_per_layer + mc.router_per_layer))


def test_mxfp4_quantizes_the_experts_only():
    s = spec("gpt-oss-20b")
    p = precision.resolve(s)
    assert p.quantization.method == "mxfp4" and p.weights == "bf16"
    w = cost.weight_bytes(s, p.weights, p.quantization)
    assert w.quantized_params == cost.param_counts(s).experts_total
    assert "MoE 4/32 experts" in s.features() and any("mxfp4" in x for x in s.features())


def test_float32_configs_are_served_in_bf16_with_a_note():
    p = precision.resolve(spec("Gemma-2-27B"))
    assert (p.weights, p.activation, p.kv) == ("bf16", "bf16", "bf16")
    assert any("float32" in n and "bf16" in n for n in p.notes)
    assert precision.resolve(spec("Gemma-2-27B"), weights_dtype="fp32").weights == "fp32"


def test_weights_dtype_int4_quantizes_layers_not_embeddings():
    p = precision.resolve(spec("Llama-3.1-8B"), weights_dtype="int4")
    assert p.quantization.method == "gptq" and p.weights == "bf16" and p.notes


def test_moe_decode_reads_active_experts_at_batch_1():
    s = spec("Mixtral-8x7B")
    w = cost.weight_bytes(s, "bf16")
    read1, experts1 = cost.decode_weight_bytes(s, w, batch=1)
    assert experts1 == pytest.approx(2)
    assert read1 == pytest.approx(cost.param_counts(s).active * 2)
    read_big, experts_big = cost.decode_weight_bytes(s, w, batch=64)
    assert 7.99 < experts_big <= 8 and read_big == pytest.approx(w.total, rel=1e-6)


# -- positions ---------------------------------------------------------------------------------------
def _qwen_instruct(**over):
    cfg = dict(cost.model_catalog()["Qwen2.5-7B"]["config"], max_position_embeddings=32768)
    cfg.update(over)
    return cost.read_config(cfg)


def test_yarn_factor_decides_coverage():
    plain = _qwen_instruct()
    ext = cost.extension_needed(plain, 100_000)
    assert ext.factor == 3.06 and ext.base == 32768
    assert '"rope_type": "yarn", "factor": 3.06, "original_max_position_embeddings": 32768' in ext.snippet
    yarn = _qwen_instruct(rope_scaling={"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768})
    assert cost.coverage(yarn).covered == 131072 and cost.extension_needed(yarn, 100_000) is None
    more = cost.extension_needed(yarn, 200_000)
    assert more.factor == 6.11 and more.base == 32768


@pytest.mark.parametrize("name, covered", [("Llama-3.1-8B", 131072), ("DeepSeek-V2-Lite", 163840),
                                           ("gpt-oss-20b", 131072), ("Llama-2-7B", 4096), ("GPT-2", 1024)])
def test_covered_lengths(name, covered):
    assert cost.coverage(spec(name)).covered == covered


def test_linear_and_dynamic_scale_max_position_and_gemma3_is_already_scaled():
    lin = _qwen_instruct(rope_scaling={"rope_type": "linear", "factor": 2.0})
    assert cost.coverage(lin).covered == 65536
    dyn = _qwen_instruct(rope_scaling={"type": "dynamic", "factor": 4.0})
    assert cost.coverage(dyn).covered == 131072
    g3 = cost.read_config({"model_type": "gemma3_text", "hidden_size": 64, "num_hidden_layers": 6,
                           "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
                           "max_position_embeddings": 131072, "rope_scaling": {"rope_type": "linear", "factor": 8.0}})
    assert cost.coverage(g3).covered == 131072
    assert cost.extension_needed(spec("GPT-2"), 4096) is None       # learned: nothing to scale


# -- refusals and bad configs ------------------------------------------------------------------------
def test_gpt2_without_n_inner_is_4d():
    cfg = {"model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12, "vocab_size": 50257, "n_positions": 1024}
    s = cost.read_config(cfg)
    assert s.intermediate_size == 3072 and cost.param_counts(s).total == 124_439_808


@pytest.mark.parametrize("cfg, needle", [
    ({"model_type": "mamba", "architectures": ["MambaForCausalLM"]}, "model_type 'mamba' (MambaForCausalLM)"),
    ({"model_type": "llama", "num_local_experts": 8}, "'num_local_experts' in a llama config"),
    ({"num_local_experts": 8}, "no model_type, and 'num_local_experts'"),
    ({"model_type": "llama", "torch_dtype": "float99"}, "torch_dtype: expected one of"),
    ({"model_type": "llama", "rope_scaling": {"type": "yarn", "factor": -2}}, "rope_scaling.factor"),
    ({"model_type": "llama", "num_hidden_layers": 10 ** 9}, "num_hidden_layers: expected an integer in 1..100,000, got 1000000000"),
    ({"model_type": "mixtral", "num_local_experts": 8}, "missing field 'num_experts_per_tok'"),
    ({"model_type": "llama", "quantization_config": {"quant_method": "squeeze"}}, "quant_method: 'squeeze'"),
    ({"model_type": "llama", "layer_types": ["global"] * 2}, "layer_types: unknown attention kind 'global'"),
])
def test_bad_configs_name_the_field(cfg, needle):
    base = {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4}
    with pytest.raises(ValueError) as err:
        cost.read_config({**base, **cfg}, name="my.json")
    assert needle in str(err.value) and str(err.value).startswith("my.json")


def test_bad_files_name_the_file(tmp_path):
    binary = tmp_path / "weights.bin"
    binary.write_bytes(bytes(range(256)))
    with pytest.raises(ValueError, match="weights.bin is not text"):
        cost.load_config_file(binary)
    with pytest.raises(ValueError, match="/dev/null is not valid JSON|/dev/null is not a regular file"):
        cost.load_config_file("/dev/null")


def test_cost_imports_no_torch():
    import subprocess
    code = "import sys, multihead.cost; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


# -- closed forms against brute force ----------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(T=st.integers(1, 300), w=st.integers(1, 300), causal=st.booleans())
def test_window_and_chunk_pairs_equal_counting(T, w, causal):
    brute_window = sum(min(i + 1, w) for i in range(T)) if causal else T * min(T, w)
    assert f.window_pairs(T, w, causal) == brute_window
    if T <= 120:      # chunked: query i sees key j of its own chunk (j <= i when causal)
        brute_chunk = sum(1 for i in range(T) for j in range(T) if i // w == j // w and (j <= i or not causal))
        assert f.chunk_pairs(T, w, causal) == brute_chunk


def test_huge_sizes_are_closed_form():
    s = spec("Llama-3.1-8B")
    T = 10 ** 12
    assert cost.kv_bytes(s, T, "bf16") == 131_072 * T
    assert cost.spec_attention_flops(s, T, causal=True) == 32 * 32 * 4 * 128 * (T * (T + 1) // 2)


# -- the library allocates what the formulas say (layers.py reads cost.counts.formulas) ----------------------
@settings(max_examples=40, deadline=None)
@given(H_kv=st.integers(1, 4), G=st.integers(1, 4), d=st.sampled_from([4, 8, 16]), L=st.integers(1, 3),
       B=st.integers(1, 3), T=st.integers(1, 24), bias=st.booleans())
def test_formulas_equal_what_the_library_builds(H_kv, G, d, L, B, T, bias):
    import torch
    from multihead.layers import KVCache, MultiHeadAttention
    H = H_kv * G
    D = H * d
    mha = MultiHeadAttention(D, H, n_kv_heads=H_kv, head_dim=d, bias=bias)
    spec = cost.ModelSpec("p", hidden_size=D, num_layers=L, num_heads=H, num_kv_heads=H_kv, head_dim=d,
                          attention_bias="all" if bias else "none")
    assert cost.counts.params.attention_params_per_layer(spec) == sum(p.numel() for p in mha.parameters())
    cache = KVCache(B, H_kv, T, d, n_layers=L, dtype=torch.float16)
    allocated = cache.k.numel() * cache.k.element_size() + cache.v.numel() * cache.v.element_size()
    assert cost.kv_bytes(spec, T, "fp16", batch=B) == allocated
    assert cost.kv_bytes_per_token(spec, "fp16") * T * B == allocated
