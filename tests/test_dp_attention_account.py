"""SGLang's DP attention in the memory account (cost/serving/sglang.py), the plan and the launch command.

--tp-size T --dp-size D --enable-dp-attention: the attention runs in D groups of T / D GPUs, each with its
own token pool; the attention projections split over T / D GPUs, the token embedding whole, the rest over T.
"""
from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings, strategies as st

from multihead import planner
from multihead.cost.serving import sglang as G
from multihead.cost.serving.answer import Request, answer, serving_account
from multihead.cost.serving.fitted import catalog_config
from multihead.cost.serving.vllm import ServingShape
from multihead.planner.request import PlanRequest

MOE = "Qwen/Qwen3-235B-A22B-FP8"      # GQA, 4 KV heads
GIB = 1 << 30


def _shape(**kw) -> ServingShape:
    base = dict(name="toy", layer_kinds=(("full", None),) * 4, num_kv_heads=8, head_dim=128, num_heads=32,
                hidden_size=4096, intermediate_size=0, vocab_size=1000, embedding_bytes=2.0, lm_head_bytes=2.0,
                layer_bytes=40.0, replicated_bytes=1.0, attention_bytes=8.0)
    base.update(kw)
    return ServingShape(**base)


def test_weights_per_gpu_by_hand():
    s = _shape()
    # without DP attention: (2 + 2 + 40) / 4 + 1 = 12
    assert G.weights_per_gpu(s, G.SGLangArgs(tp_size=4)) == pytest.approx(12.0)
    # DP attention 2 (groups of 2 GPUs): attention 8 / 2 + embedding 2 whole + the rest (44 - 8 - 2 = 34) / 4 + 1
    assert G.weights_per_gpu(s, G.SGLangArgs(tp_size=4, dp_size=2, enable_dp_attention=True)) == pytest.approx(15.5)
    # DP attention 4 (groups of 1 GPU): 8 + 2 + 34 / 4 + 1 = 19.5
    assert G.weights_per_gpu(s, G.SGLangArgs(tp_size=4, dp_size=4, enable_dp_attention=True)) == pytest.approx(19.5)
    # --dp-size without --enable-dp-attention changes nothing here (replicas are the planner's)
    assert G.weights_per_gpu(s, G.SGLangArgs(tp_size=4, dp_size=4)) == pytest.approx(12.0)


@settings(max_examples=60, deadline=None)
@given(tp_log=st.integers(0, 4), dp_log=st.integers(0, 4), attn=st.floats(0, 30), emb=st.floats(0, 5))
def test_more_attention_groups_never_hold_fewer_weights(tp_log, dp_log, attn, emb):
    tp = 1 << tp_log
    dps = [d for d in (1, 2, 4, 8, 16) if d <= tp and tp % d == 0]
    s = _shape(attention_bytes=attn, embedding_bytes=emb, layer_bytes=40.0)
    held = [G.weights_per_gpu(s, G.SGLangArgs(tp_size=tp, dp_size=d, enable_dp_attention=d > 1)) for d in dps]
    assert all(b >= a - 1e-9 for a, b in zip(held, held[1:]))
    # never more than the whole model on one GPU
    assert held[-1] <= s.weight_bytes + 1e-9


def _serving(tp: int, dp: int | None, **kw):
    cfg = catalog_config(MOE)
    req = Request(model=MOE, gpu="H200-SXM", tensor_parallel_size=tp, max_model_len=8192, engine="sglang",
                  data_parallel_size=dp or 1, enable_dp_attention=dp is not None, **kw)
    return cfg, req, serving_account(cfg, req)[0]


def test_account_of_a_gqa_moe_by_hand():
    """Qwen3-235B (4 KV heads) on 4x H200: DP attention 4 puts all 4 KV heads of a token on its group's one
    GPU (4x the bytes per token of TP 4), and holds the attention and the embedding whole per GPU."""
    cfg, _, plain = _serving(4, None)
    _, _, dpa = _serving(4, 4)
    plain_t = {t["name"]: t["gib"] for t in plain.terms}
    dpa_t = {t["name"]: t["gib"] for t in dpa.terms}
    from multihead.cost.serving.shape import shape_for
    shape = shape_for(cfg, MOE, "bf16")
    # the page in one layer: 1 KV head x 128 x 2 (K, V) x 2 B = 512 B at TP 4; 4 heads = 2,048 B per group GPU
    assert plain.page_bytes == 512 and dpa.page_bytes == 2048
    extra = (shape.attention_bytes * (1 - 1 / 4) + shape.embedding_bytes * (1 - 1 / 4)) / GIB
    assert -dpa_t["weights"] - (-plain_t["weights"]) == pytest.approx(extra, abs=2e-4)
    # each group's pool: the static budget less the weights, in 94-layer cells of 2,048 B
    rest = dpa_t["static budget"] + dpa_t["weights"]
    assert dpa.kv_cache_tokens == int(rest * GIB // (2048 * 94))
    # four pools: the concurrency counts all of them
    assert dpa.max_concurrency == pytest.approx(round(4 * dpa.kv_cache_tokens / 8192, 4))


def test_mla_latent_is_on_every_gpu_with_or_without_dp_attention():
    model = "DeepSeek-V2-Lite"
    out = {}
    for dp in (None, 2):
        r = PlanRequest.from_json({"model": model, "gpu": "H100-SXM", "gpus": 2, "tokens": 4096, "engine": "sglang",
                                   "data_parallel_size": dp or 1, "enable_dp_attention": dp is not None})
        out[dp] = planner.report(r)["serving"]
    assert out[None]["page_bytes"] == out[2]["page_bytes"]          # the latent per token per layer is the same
    # so DP attention's two pools hold about twice the tokens (less the second copy of attention + embedding)
    assert 1.8 < out[2]["max_concurrency"] / out[None]["max_concurrency"] <= 2.0
    assert out[2]["sglang"]["max_total_num_tokens_all_groups"] == 2 * out[2]["kv_cache_tokens"]


def test_launch_command_and_per_group_flags():
    r = PlanRequest.from_json({"model": MOE, "gpu": "H200-SXM", "gpus": 4, "tokens": 8192, "engine": "sglang",
                               "data_parallel_size": 4, "enable_dp_attention": True})
    s = planner.report(r)["serving"]
    argv = s["command"]["argv"]
    assert argv[argv.index("--tp-size") + 1] == "4" and argv[argv.index("--dp-size") + 1] == "4"
    assert "--enable-dp-attention" in argv and s["command"]["nodes"] == 1
    assert s["sglang"]["chunked_prefill_size_per_group"] == s["sglang"]["chunked_prefill_size"] // 4
    assert "DP attention 4" in s["verdict"] and "4x H200-SXM" in s["verdict"]


def test_times_see_one_tp_group_holding_every_pool():
    """With DP attention the requests go to one TP group (no replicas) whose KV pools are all the groups'."""
    cfg, req, a = _serving(4, 4)
    at = answer(cfg, req, input_len=1000, output_len=1000, concurrency=64)["at"]
    assert at["data_parallel_size"] == 1 and at["gpus"] == 4 and at["queued"] == 0


@pytest.mark.parametrize("options,message", [
    ({"enable_dp_attention": True, "data_parallel_size": 2}, "enable_dp_attention: an SGLang flag"),
    ({"enable_dp_attention": True, "engine": "sglang"}, "enable_dp_attention: needs data_parallel_size"),
    ({"enable_dp_attention": True, "engine": "sglang", "data_parallel_size": 3}, "enable_dp_attention: needs"),
    ({"enable_dp_attention": True, "engine": "sglang", "data_parallel_size": 2, "search": True},
     "enable_dp_attention: the search"),
])
def test_refusals_name_the_flag(options, message):
    with pytest.raises(ValueError) as err:
        PlanRequest.from_json({"model": MOE, "gpu": "H200-SXM", "gpus": 4, **options})
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_library_refusals_name_the_flag():
    cfg = catalog_config(MOE)
    bad = Request(model=MOE, gpu="H200-SXM", tensor_parallel_size=4, max_model_len=8192, engine="vllm",
                  data_parallel_size=2, enable_dp_attention=True)
    with pytest.raises(ValueError, match="^enable-dp-attention: an SGLang flag"):
        serving_account(cfg, bad)
    with pytest.raises(ValueError, match="^enable-dp-attention: --data-parallel-size 3 must divide"):
        serving_account(cfg, dataclasses.replace(bad, engine="sglang", data_parallel_size=3))


def test_emit_vllm_for_a_dp_attention_plan_is_refused(capsys):
    from multihead.cli import main
    rc = main(["serving", MOE, "--gpu", "H200", "-tp", "4", "--engine", "sglang", "--max-model-len", "8192",
               "-dp", "2", "--enable-dp-attention", "--emit", "vllm"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "emit: DP attention is SGLang's" in err[0]
