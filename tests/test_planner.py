"""The planner against the reference text's numbers, its own invariants, and the library it plans for."""
from __future__ import annotations

import json

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

import multihead
from multihead import cost
from multihead.cost.counts import formulas as acc
from multihead import functional, layers
from multihead.cost import ModelSpec
from multihead.planner import (chunk_tokens, fewest_chunks, longest_fitting_context, memory_curve, plan,
                               resolve_device)

# The reference text's example (figures.md section 1), with the issue's explicit flags.
EXAMPLE = dict(params=13e9, layers=40, heads=40, kv_heads=8, head_dim=128, tokens=128000,
               gpu_memory_gb=80, effective_tflops=100, bandwidth_tbps=2)


@pytest.fixture(scope="module")
def example():
    return plan(**EXAMPLE, passes=3)


def test_example_memory_matches_the_text(example):
    p = example
    assert p.d_model == 5120 and p.attention_kind == "GQA-8"
    assert p.kv_cache_bytes_per_token == 163_840                       # 2*40*8*128*2 B, exactly
    assert p.kv_cache_bytes == 163_840 * 128_000                       # "~21 GB"
    assert p.kv_cache_bytes == pytest.approx(21e9, rel=0.01)
    assert p.score_matrix_bytes_per_layer == pytest.approx(1.3e12, rel=0.01)   # "~1.3 TB"
    assert p.weights_bytes == 26e9                                      # 13e9 * 2 B
    # "21 GB KV + ~26 GB weights + activations, about 50-60 GB in total: fits 80 GB"
    assert 50e9 <= p.total_memory_bytes <= 60e9
    assert p.fits and p.decision == "single_pass" and p.chunks == 1 and p.decision_fits


def test_example_compute_and_time_match_the_text(example):
    p = example
    assert p.attention_flops == 4 * 128_000 ** 2 * 5120 * 40            # the text's 4*T^2*D*L
    assert p.attention_flops == pytest.approx(1.3e16, rel=0.04)        # "~1.3e16"
    assert p.attention_prefill_seconds == pytest.approx(134, abs=0.5)  # "~134 s per pass"
    assert p.attention_prefill_seconds_all_passes == pytest.approx(400, rel=0.01)   # "3 x 134 ~ 400 s"
    assert p.chunked["chunks"] == 8 and p.chunked["chunk_tokens"] == 16_000
    assert p.chunked["attention_prefill_seconds"] == pytest.approx(17, abs=0.3)     # "~17 s"
    assert p.decode_kv_read_seconds == pytest.approx(10.5e-3, rel=0.01)             # "~10.5 ms"
    assert p.tokens_per_second_kv_only == pytest.approx(95, abs=1)                  # "~95 tokens/s"
    # decode also reads the weights once per token: (21 + 26) GB / 2 TB/s (the stated figures are effective),
    # plus the GPU-time model's fixed cost per layer (vLLM's, fitted; docs/gpu-time.md). One GPU: no
    # all-reduce; batch 1: the 26 GFLOPs at 100 TFLOP/s stay under the memory time.
    from multihead.cost.time.timing import load_constants
    c = load_constants()        # vLLM's newest family, and its host cost of the step's one sequence
    fixed = 40 * c.layer_overhead("vllm") + c.sequence_overhead_s.get("vllm@v1", 0.0)
    # the weights and the KV cache in one memory term: the default (merged) kernels, which cross-validation
    # kept (cost/time/decode_attention.py); the separate-kernel variant gives the same sum at batch 1
    assert p.decode_terms["memory_s"] + p.decode_terms["attention_s"] == pytest.approx(
        (p.kv_cache_bytes + 26e9) / 2e12, rel=1e-3)
    assert p.decode_terms["comm_s"] == 0 and p.decode_terms["bound"] == "memory"
    fixed = p.decode_terms["overhead_s"]      # the engine's fixed costs (cost/time/engine_costs.py, fitted)
    assert p.decode_seconds_per_token == pytest.approx((p.kv_cache_bytes + 26e9) / 2e12 + fixed, rel=1e-3)
    # prefill: the same GPU-time model as decode and the serving section's TTFT (issue 27), not the
    # text's count: max(linear + causal attention, memory) + fixed costs; the text's 134 s stays beside it
    from multihead.cost.time import timing
    assert p.prefill_seconds == timing.prefill(p.accounts.setup, 128_000).total_s
    t = p.compute.prefill_terms
    assert t["compute_s"] == pytest.approx(p.linear_prefill_seconds + p.attention_prefill_seconds_causal)
    assert p.prefill_seconds == pytest.approx(max(t["compute_s"], t["memory_s"]) + t["dequant_s"] + t["overhead_s"]
                                              + t["comm_s"]) and t["comm_s"] == 0 < t["overhead_s"]
    assert p.prefill_seconds_all_passes == pytest.approx(3 * p.prefill_seconds)


def test_causal_count_is_reported_and_about_half(example):
    p = example
    assert p.attention_flops_causal == 40 * acc.attention_flops(1, 40, 128_000, 128_000, 128, causal=True)
    assert p.attention_flops_causal / p.attention_flops == pytest.approx(0.5, abs=1e-4)
    assert p.attention_prefill_seconds_causal == pytest.approx(p.attention_prefill_seconds / 2, rel=1e-4)
    skip = plan(**EXAMPLE, causal_skip=True)
    assert skip.attention_prefill_seconds == pytest.approx(p.attention_prefill_seconds_causal)


def test_mha_does_not_fit_80gb():
    p = plan(**{**EXAMPLE, "kv_heads": 40})
    assert p.kv_cache_bytes == pytest.approx(105e9, rel=0.01)          # "105 GB, OOM on one card"
    assert not p.fits and p.decision != "single_pass"
    assert any(f.name == "fewer_kv_heads" for f in p.fallbacks)


def test_40gb_card_is_chunked_with_the_fewest_chunks_that_fit():
    p = plan(**{**EXAMPLE, "gpu_memory_gb": 40})
    assert not p.fits and p.decision == "chunked" and p.chunks > 1 and p.decision_fits
    # a GPU plan's one-pass decision reads the engine's account (issue 27: the same numbers as the
    # serving section): chunks no longer than the longest request it fits, one fewer would be longer
    st = p.accounts
    longest = p.to_dict()["serving"]["max_model_len_fit"]
    assert p.decided_by == "engine" and longest == st.engine.account.max_model_len_fit > 0
    assert chunk_tokens(p.tokens, p.chunks) <= longest < chunk_tokens(p.tokens, p.chunks - 1)
    assert not p.to_dict()["serving"]["fits"]
    # the text's own choice, eight 16k chunks, fits this card too
    eight = plan(**{**EXAMPLE, "gpu_memory_gb": 40}, chunks=8)
    assert eight.chunks == 8 and eight.decision_fits
    assert "cross-chunk" in p.chunking_loses


def test_requested_chunks_are_evaluated_not_chosen():
    p = plan(**EXAMPLE, chunks=8)
    assert p.decision == "chunked" and p.chunks == 8 and p.fits
    assert p.chunked["attention_flops"] == pytest.approx(p.attention_flops / 8)


def test_requested_chunks_that_do_not_fit_say_so(capsys):
    from multihead.planner import render

    p = plan(**{**EXAMPLE, "kv_heads": 40}, chunks=1)
    assert p.decision == "single_pass" and not p.decision_fits and "does not fit" in p.reason
    render(p)
    assert "ONE FULL PASS, WHICH DOES NOT FIT" in capsys.readouterr().out


def test_decision_warns_when_the_pass_is_longer_than_training():
    p = plan("Gemma-2-9B", tokens=32000, device="H100-SXM")       # fits in memory, but 32,000 > 8,192
    assert p.decision == "single_pass" and p.fits
    assert "longer than the 8,192 positions" in p.reason and "3.91x" in p.reason
    assert "positions" not in plan("Gemma-2-9B", tokens=8192, device="H100-SXM").reason


def test_attention_params_per_layer_include_biases():
    p = plan("GPT-2", tokens=512, device="H100-SXM")              # biases on q, k, v and o: 3*768 + 768
    assert p.attention_params_per_layer == 4 * 768 ** 2 + 4 * 768
    assert p.attention_params == 12 * p.attention_params_per_layer


def test_workspace_is_the_wider_sublayer_plus_logits():
    p = plan("GPT-2", tokens=512, device="H100-SXM", weights_dtype="fp32")
    mlp = 512 * (768 + 2 * 3072) * 4                               # plain MLP: D + 2I
    attn = 512 * (768 + 768) * 4 + 12 * 512 * (64 + 2) * 4        # x, q and the tiled state
    assert p.workspace_bytes == max(mlp, attn) + 50257 * 4


def test_exercise_answers():
    spec = ModelSpec(name="exercise", hidden_size=4096, num_layers=1, num_heads=32)
    assert spec.head_dim == 128
    assert cost.counts.params.attention_params_per_layer(spec) == 4 * 4096 ** 2 == 67_108_864
    common = dict(layers=1, heads=32, hidden=4096, params=1e9, tokens=1000, gpu_memory_gb=80,
                  effective_tflops=100, bandwidth_tbps=2)
    gqa, mha = plan(**common, kv_heads=8), plan(**common, kv_heads=32)
    assert gqa.kv_cache_bytes / mha.kv_cache_bytes == 0.25
    assert "H_kv/H = 8/32 = 0.25 of MHA's" in "\n".join(gqa.explain)
    assert "(MHA with d_k = D/H: 4*D^2 = 67,108,864)" in "\n".join(mha.explain)


def test_hidden_defaults_to_heads_times_head_dim():
    p = plan(**{k: v for k, v in EXAMPLE.items()})
    assert p.d_model == 40 * 128


def test_linear_flops_use_non_embedding_params():
    p = plan("Llama-2-7B", tokens=4096, device="A100-80GB")
    counts = cost.param_counts(cost.catalog_model("Llama-2-7B"))
    assert p.linear_flops == 2 * counts.non_embedding * 4096
    assert p.params == counts.total == p.params_published


def test_sliding_window_caps_the_kv_cache():
    mistral = plan("Mistral-7B-v0.1", tokens=32768, device="H100-SXM")
    assert mistral.kv_cache_bytes == acc.kv_cache_bytes(32, 8, 128, 4096, 2)      # window 4096 on all layers
    assert mistral.kv_cache_bytes_no_window == acc.kv_cache_bytes(32, 8, 128, 32768, 2)
    gemma = plan("Gemma-2-9B", tokens=8192, device="H100-SXM")
    # 21 sliding layers hold 4096 tokens, 21 full layers hold 8192
    assert gemma.kv_cache_bytes == (acc.kv_cache_bytes(21, 8, 256, 4096, 2) + acc.kv_cache_bytes(21, 8, 256, 8192, 2))
    short = plan("Mistral-7B-v0.1", tokens=1000, device="H100-SXM")
    assert short.kv_cache_bytes == short.kv_cache_bytes_no_window


def test_sliding_window_flops_count_the_pairs_a_window_keeps():
    spec = ModelSpec(name="w", hidden_size=64, num_layers=2, num_heads=4, num_kv_heads=2, sliding_window=5,
                     layer_types=["sliding_attention", "full_attention"], params=1e6)
    p = plan(spec, tokens=13, gpu_memory_gb=1, effective_tflops=1, bandwidth_tbps=1)
    T, w, H, d = 13, 5, 4, 16
    causal_window = sum(min(i + 1, w) for i in range(T))                # query i sees keys i-w+1 .. i
    full_causal = T * (T + 1) // 2
    assert p.attention_flops_causal == 4 * H * d * (causal_window + full_causal)
    assert p.attention_flops == 4 * H * d * (T * w + T * T)


def test_gemma_attention_width_is_heads_times_head_dim():
    p = plan("Gemma-2-9B", tokens=4096, device="H100-SXM")
    assert p.head_dim == 256 and p.d_model == 3584
    # 4096 tokens fit every window: 4 * T^2 * (H*d_k) * L, with H*d_k = 4096, not D = 3584
    assert p.attention_flops == acc.model_attention_flops(4096, 16 * 256, 42)


def test_position_interpolation_factor():
    p = plan("Llama-2-7B", tokens=16384, device="H100-SXM")
    pi = next(f for f in p.fallbacks if f.name == "position_interpolation")
    assert pi.effect["factor_needed"] == 4.0
    assert any("exceeds max_position_embeddings" in w for w in p.warnings)
    assert not any(f.name == "position_interpolation" for f in plan("Llama-2-7B", tokens=4096, device="H100-SXM").fallbacks)


def test_learned_positions_force_chunks():
    p = plan("GPT-2", tokens=4096, device="A100-40GB")
    assert p.decision == "chunked" and p.chunks == 4 and p.chunked["chunk_tokens"] == 1024


def test_does_not_fit_and_more_gpus():
    p = plan("Llama-3.1-70B", tokens=8192, device="RTX-4090")
    assert p.decision == "does_not_fit" and not p.decision_fits
    more = next(f for f in p.fallbacks if f.name == "more_gpus")
    n = more.effect["gpus"]
    assert n is not None and 64 % n == 0 and (8 % n == 0 or n % 8 == 0)
    assert plan("Llama-3.1-70B", tokens=8192, device="RTX-4090", gpus=n).fits
    assert any(f.name == "weight_quantization" for f in p.fallbacks)


def test_tensor_parallel_splits_and_checks_divisibility():
    one = plan("Llama-3.1-70B", tokens=8192, device="H100-SXM")
    two = plan("Llama-3.1-70B", tokens=8192, device="H100-SXM", gpus=2)
    assert two.weights_bytes == one.weights_bytes / 2 and two.kv_cache_bytes == one.kv_cache_bytes / 2
    assert two.attention_prefill_seconds == pytest.approx(one.attention_prefill_seconds / 2)
    sixteen = plan("Llama-3.1-70B", tokens=8192, device="H100-SXM", gpus=16)      # H_kv = 8 < 16: replicated
    assert sixteen.kv_cache_bytes == one.kv_cache_bytes / 8
    with pytest.raises(ValueError, match="gpus"):
        plan("Llama-3.1-70B", tokens=8192, device="H100-SXM", gpus=3)
    with pytest.raises(ValueError, match="gpus"):
        plan("Qwen2.5-7B", tokens=8192, device="H100-SXM", gpus=14)      # H=28 divides, H_kv=4 does not fit 14


def test_kv_quantization_fallback_halves_and_quarters():
    p = plan(**{**EXAMPLE, "kv_heads": 40})
    q = {r["kv_dtype"]: r for r in next(f for f in p.fallbacks if f.name == "kv_quantization").effect["options"]}
    assert q["int8"]["kv_cache_bytes"] == p.kv_cache_bytes / 2
    assert q["int4"]["kv_cache_bytes"] == p.kv_cache_bytes / 4
    assert plan(**{**EXAMPLE, "kv_heads": 40}, kv_dtype="int4").kv_cache_bytes == q["int4"]["kv_cache_bytes"]


def test_materialized_attention_is_charged_and_tiled_is_not():
    small = dict(EXAMPLE, tokens=4096)
    tiled = plan(**small)
    mat = plan(**small, attention="materialized")
    assert mat.total_memory_bytes > tiled.total_memory_bytes + tiled.score_matrix_bytes_per_layer * 0.99
    big = plan(**EXAMPLE, attention="materialized")
    assert not big.fits and any("materialized" in w for w in big.warnings)


def test_devices_catalog_explicit_and_profile(tmp_path):
    h100 = resolve_device("H100-SXM")
    assert h100.effective_flops("fp16") == 989e12 * h100.flops_efficiency
    explicit = resolve_device(None, gpu_memory_gb=80, effective_tflops=100, bandwidth_tbps=2)
    assert explicit.kind == "explicit" and explicit.effective_flops("bf16") == 1e14
    assert explicit.effective_bandwidth() == 2e12
    override = resolve_device("A100-80GB", gpu_memory_gb=40)
    assert override.memory_bytes == 40e9 and override.bandwidth_bytes_per_s == pytest.approx(2.039e12)
    prof = tmp_path / "profile.json"
    prof.write_text(json.dumps({"name": "this-cpu", "memory_bytes": 64e9, "bandwidth_bytes_per_s": 45e9,
                                "matmul_flops": {"fp32": 1.4e11}}))
    p = plan("SmolLM2-135M", tokens=2048, device=str(prof), weights_dtype="fp32")
    assert p.device == "this-cpu" and p.device_kind == "measured"
    assert p.attention_prefill_seconds == pytest.approx(p.attention_flops / 1.4e11)
    with pytest.raises(ValueError, match="missing --effective-tflops"):
        resolve_device(None, gpu_memory_gb=80, bandwidth_tbps=2)
    assert resolve_device("H100").name == resolve_device("h100-sxm").name == "H100-SXM"   # one alias rule
    with pytest.raises(ValueError, match="did you mean"):
        resolve_device("H100-SMX")


@pytest.mark.parametrize("bad, match", [
    (dict(tokens=-5), "tokens"), (dict(tokens=0), "tokens"), (dict(kv_heads=7), "kv_heads"),
    (dict(batch=0), "batch"), (dict(chunks=0), "chunks"), (dict(gpu_memory_gb=-1), "gpu-memory-gb"),
    (dict(kv_dtype="int3"), "kv-dtype"), (dict(heads=0), "positive"),
])
def test_bad_values_raise_clear_errors(bad, match):
    with pytest.raises(ValueError, match=match):
        plan(**{**EXAMPLE, **bad})


def test_memory_curve_and_longest_fitting_context(example):
    p = example
    grid = [1000, 10_000, 100_000, 1_000_000]
    curve = memory_curve(p, grid)
    assert curve == sorted(curve) and curve[2] < p.usable_memory_bytes < curve[3]
    limit = longest_fitting_context(p)
    assert memory_curve(p, [limit])[0] <= p.usable_memory_bytes < memory_curve(p, [limit + 1])[0]
    assert longest_fitting_context(p, kv_heads=40) < longest_fitting_context(p) < longest_fitting_context(p, kv_heads=1)
    assert fewest_chunks(p.accounts, 128_000) == 1


def test_gqa_quality_hook(tmp_path):
    summary = tmp_path / "summary.json"
    summary.write_text(json.dumps({"model": "SmolLM2-135M", "gqa_quality": [
        {"kv_heads": 1, "method": "mean-pool", "perplexity": 30.0, "baseline_perplexity": 20.0},
        {"kv_heads": "x"}]}))
    p = plan("SmolLM2-135M", tokens=2048, device="A100-40GB", quality_report=summary)
    notes = next(f for f in p.fallbacks if f.name == "fewer_kv_heads").notes
    measured = [n for n in notes if n.startswith("measured")]
    assert measured == ["measured: H_kv -> 1 (mean-pool): perplexity 30 vs 20 (+50.0%)"]
    other = plan(**EXAMPLE, quality_report=summary)
    assert any("on SmolLM2-135M (not this model)" in n for f in other.fallbacks for n in f.notes)
    summary.write_text("{not json")
    p = plan("SmolLM2-135M", tokens=2048, device="A100-40GB", quality_report=summary)
    assert not any(n.startswith("measured") for f in p.fallbacks for n in f.notes)
    p = plan("SmolLM2-135M", tokens=2048, device="A100-40GB", quality_report=tmp_path / "absent.json")
    assert not any(n.startswith("measured") for f in p.fallbacks for n in f.notes)


def test_json_has_the_issue_keys(example):
    d = json.loads(example.to_json())
    for key in ("kv_cache_bytes_per_token", "kv_cache_bytes", "weights_bytes", "score_matrix_bytes_per_layer",
                "attention_flops", "attention_flops_causal", "attention_prefill_seconds", "prefill_seconds",
                "decode_kv_read_seconds", "decode_seconds_per_token", "tokens_per_second", "total_memory_bytes",
                "fits", "decision", "chunks", "warnings", "fallbacks"):
        assert key in d, key
    assert d["decision"] == "single_pass" and d["fits"] is True


def test_explain_substitutes_the_numbers(example):
    text = "\n".join(example.explain)
    assert "2*40*8*128*2 B = 163,840 B" in text
    assert "4*128,000^2*5120*40*1 = 1.34e+16" in text
    assert "decision: single_pass" in text


# -- one source of truth: the planner's counts equal what the library allocates and computes --------
SMALL = [  # (D, H, H_kv, d_k, B, T)
    (64, 4, 4, 16, 1, 8), (64, 4, 2, 16, 2, 5), (48, 6, 1, 8, 1, 7), (96, 4, 2, 32, 3, 4),
]


def _small_plan(D, H, Hkv, dk, B, T, layers=1):
    return plan(hidden=D, layers=layers, heads=H, kv_heads=Hkv, head_dim=dk, params=1e6, tokens=T, batch=B,
                weights_dtype="fp32", kv_dtype="fp32", gpu_memory_gb=1, effective_tflops=1, bandwidth_tbps=1)


@pytest.mark.parametrize("D, H, Hkv, dk, B, T", SMALL)
def test_params_equal_multiheadattention(D, H, Hkv, dk, B, T):
    mha = layers.MultiHeadAttention(D, H, n_kv_heads=Hkv, head_dim=dk)
    p = _small_plan(D, H, Hkv, dk, B, T)
    assert p.attention_params_per_layer == sum(t.numel() for t in mha.parameters())


@pytest.mark.parametrize("D, H, Hkv, dk, B, T", SMALL)
def test_kv_bytes_equal_kvcache(D, H, Hkv, dk, B, T):
    cache = layers.KVCache(B, Hkv, T, dk, n_layers=3, dtype=torch.float32)
    assert _small_plan(D, H, Hkv, dk, B, T, layers=3).kv_cache_bytes == cache.nbytes


@pytest.mark.parametrize("D, H, Hkv, dk, B, T", SMALL)
@pytest.mark.parametrize("causal", [False, True])
def test_attention_flops_equal_flop_counter(D, H, Hkv, dk, B, T, causal):
    q = torch.randn(B, H, T, dk)
    k, v = torch.randn(B, Hkv, T, dk), torch.randn(B, Hkv, T, dk)
    with FlopCounterMode(display=False) as counter:
        functional.attention(q, k, v, is_causal=causal, backend="reference")
    # the reference computes every score and masks afterwards: the full (text's) count either way
    assert _small_plan(D, H, Hkv, dk, B, T).attention_flops == counter.get_total_flops()


def test_package_exports_plan_and_marks_needed_fallbacks(example):
    assert multihead.plan is plan
    assert not any(f.needed for f in example.fallbacks if f.name != "reuse_kv_across_passes")
    tight = plan(**{**EXAMPLE, "gpu_memory_gb": 40})
    assert all(f.needed for f in tight.fallbacks)


def test_measured_gqa_notes_do_not_depend_on_the_working_folder(tmp_path, monkeypatch):
    """The committed reports/heads/summary.json is found beside the package, so the GQA fallback's
    measured-quality notes are the same from any folder (they used to vanish outside the repo root)."""
    from multihead import planner
    kwargs = dict(tokens=128_000, device="A100-80GB")
    here = planner.plan("Llama-2-13B", **kwargs).to_dict()
    monkeypatch.chdir(tmp_path)
    elsewhere = planner.plan("Llama-2-13B", **kwargs).to_dict()
    assert here == elsewhere
    assert "SmolLM2-135M" in json.dumps(elsewhere)     # the measured lines are there at all
