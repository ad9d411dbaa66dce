"""The serving account: each memory term, the paging arithmetic, the engine's checks, the real logs."""
import dataclasses
import json
import math

import pytest

from multihead.cost.serving import vllm as sv
from multihead.cost.serving import extras as sm
from multihead.cost.serving.shape import shape_for
from multihead.fits.serving_fit import CATALOG, engine_args_of, load_fit, load_runs

GIB = sv.GIB
ZERO_FIT = sv.Fit(0, 0, 0, 0, 0, 0, 0, 0)


def _shape(kinds, kv=8, d=128, heads=32, layer_gib=0.0, **kw):
    return sv.ServingShape("t", tuple(kinds), kv, d, heads, 4096, 14336, 128256,
                           layer_bytes=layer_gib * GIB, **kw)


def _config(model):
    index = json.loads((CATALOG / "configs" / "index.json").read_text())
    return json.loads((CATALOG / "configs" / index[model]["file"]).read_text())


# -- memory terms ----------------------------------------------------------------------------------
def test_requested_memory_is_physical_times_utilization():
    shape = _shape([(sv.FULL, None)] * 32)
    a = sv.account(shape, sv.EngineArgs(gpu_memory_utilization=0.5), ZERO_FIT, 80 * GIB)
    assert a.requested_gib == 40.0 and a.kv_cache_gib == 40.0


def test_weights_split_by_tensor_parallelism_and_pipeline_stages():
    shape = dataclasses.replace(_shape([(sv.FULL, None)] * 10, layer_gib=10.0),
                                embedding_bytes=1 * GIB, lm_head_bytes=2 * GIB, vision_bytes=0.5 * GIB)
    tp2 = sv.EngineArgs(tensor_parallel_size=2)
    assert sv.stage_weight_bytes(shape, tp2, range(10), 0) == pytest.approx(13.5 * GIB / 2)
    pp3 = sv.EngineArgs(pipeline_parallel_size=3)
    stages = sv.stage_layers(10, 3)
    assert [len(s) for s in stages] == [3, 4, 3]          # vLLM: the remainder goes before the last stage
    first, middle, last = (sv.stage_weight_bytes(shape, pp3, s, i) / GIB for i, s in enumerate(stages))
    assert (first, middle, last) == pytest.approx((3 + 1 + 0.5, 4, 3 + 2))


def test_activation_terms_scale_with_their_sizes():
    fit = sv.Fit(0.1, 1.0, 1.0, 1.0, 0.25, 0, 0, 0)
    dense = _shape([(sv.FULL, None)] * 4)
    args = sv.EngineArgs(max_num_batched_tokens=8192, max_num_seqs=1024)
    sampler = 1024 * 128256 * 4
    forward = 8192 * (2 * 4096 + 3 * 14336) * 2
    assert sv.activation_bytes(dense, args, fit) == pytest.approx(0.1 * GIB + max(sampler, forward))
    # only the last pipeline stage samples
    assert sv.activation_bytes(dense, args, fit, last_stage=False) == pytest.approx(0.1 * GIB + forward)
    moe = dataclasses.replace(dense, experts_per_token=8, moe_intermediate_size=768, multimodal=True)
    ws = 8192 * 8 * (max(2 * 768, 4096) + 768) * 2
    assert sv.activation_bytes(moe, args, fit) == pytest.approx(0.35 * GIB + max(sampler, forward) + ws)


def test_non_torch_grows_only_with_peers():
    fit = sv.Fit(0, 0, 0, 0, 0, 0.25, 1.7, 0.05)
    assert sv.non_torch_bytes(sv.EngineArgs(), fit) == pytest.approx(0.25 * GIB)
    assert sv.non_torch_bytes(sv.EngineArgs(tensor_parallel_size=4), fit) == pytest.approx((0.25 + 1.7 + 0.2) * GIB)
    assert sv.non_torch_bytes(sv.EngineArgs(pipeline_parallel_size=2), fit) == pytest.approx((0.25 + 1.7 + 0.1) * GIB)


def test_kv_bytes_per_token_layer_gqa_replication_and_mla():
    shape = _shape([(sv.FULL, None)], kv=8, d=128)
    assert sv.kv_bytes_per_token_layer(shape, 1, 2) == 2 * 8 * 128 * 2
    assert sv.kv_bytes_per_token_layer(shape, 4, 2) == 2 * 2 * 128 * 2
    assert sv.kv_bytes_per_token_layer(shape, 16, 2) == 2 * 1 * 128 * 2     # one head replicated
    mla = dataclasses.replace(shape, mla_latent=576)
    assert sv.kv_bytes_per_token_layer(mla, 8, 2) == 576 * 2                 # latent on every rank


# -- paging ----------------------------------------------------------------------------------------
def test_block_rounding_full_sliding_chunked():
    assert sv.blocks_for_request(sv.FULL, None, 8192, 8192, 16) == 512
    assert sv.blocks_for_request(sv.FULL, None, 8193, 8192, 16) == 513       # a partial block is a block
    assert sv.blocks_for_request(sv.SLIDING, 1024, 131072, 8192, 16) == math.ceil((1023 + 8192) / 16) + 1
    assert sv.blocks_for_request(sv.SLIDING, 4096, 8192, 8192, 16) == 513     # capped by the length
    assert sv.blocks_for_request(sv.CHUNKED, 8192, 131072, 8192, 16) == 1024


def test_kv_groups_follow_the_engine_rule():
    assert sv.kv_groups([(sv.FULL, None)] * 32) == (32, [(sv.FULL, None, 1)])
    size, groups = sv.kv_groups([(sv.SLIDING, 1024)] * 40 + [(sv.FULL, None)] * 8)   # Gemma-3 12B
    assert size == 8 and sorted(n for *_, n in groups) == [1, 5]
    size, groups = sv.kv_groups([(sv.SLIDING, 1024)] * 29 + [(sv.FULL, None)] * 5)   # 4B: padded group
    assert size == 5 and sum(n for *_, n in groups) == 7
    size, groups = sv.kv_groups([(sv.SLIDING, 128)] * 12 + [(sv.FULL, None)] * 13)   # < 1.5x: largest count
    assert size == 13 and sum(n for *_, n in groups) == 2


def test_tokens_and_concurrency_from_blocks():
    shape = _shape([(sv.FULL, None)] * 32, kv=32, d=128)           # 0.5 MiB per token
    args = sv.EngineArgs(gpu_memory_utilization=1.0, max_model_len=8192)
    page = 16 * 2 * 32 * 128 * 2
    total = 1000 * page * 32 + page                                  # 1000 blocks and a bit
    a = sv.account(shape, args, ZERO_FIT, total)
    assert a.num_gpu_blocks == 1000 and a.kv_cache_tokens == 16000
    assert a.max_concurrency == pytest.approx(1000 / 512, abs=1e-4)


def test_one_request_that_does_not_fit_is_worded_like_vllm():
    shape = _shape([(sv.FULL, None)] * 32, kv=32, d=128)
    a = sv.account(shape, sv.EngineArgs(gpu_memory_utilization=1.0, max_model_len=131072), ZERO_FIT, 8 * GIB)
    assert not a.fits and a.kv_cache_tokens == 0
    assert "To serve at least one request with the models's max seq len (131072)" in a.reason
    assert f"estimated maximum model length is {a.max_model_len_fit}" in a.reason
    assert 0 < a.max_model_len_fit < 131072
    assert a.max_model_len_fit == 8 * GIB // (2 * 32 * 128 * 2 * 32) // 16 * 16


def test_weights_larger_than_the_gpu():
    shape = _shape([(sv.FULL, None)] * 4, layer_gib=100.0)
    a = sv.account(shape, sv.EngineArgs(), ZERO_FIT, 80 * GIB)
    assert not a.fits and "CUDA out of memory while loading" in a.reason


@pytest.mark.parametrize("kw, flag", [
    ({"tensor_parallel_size": 3}, "tensor-parallel-size"),
    ({"pipeline_parallel_size": 99}, "pipeline-parallel-size"),
    ({"gpu_memory_utilization": 0.0}, "gpu-memory-utilization"),
    ({"gpu_memory_utilization": 1.2}, "gpu-memory-utilization"),
    ({"block_size": 24}, "block-size"),
])
def test_bad_engine_args_name_the_flag(kw, flag):
    with pytest.raises(ValueError, match=flag):
        sv.account(_shape([(sv.FULL, None)] * 32), sv.EngineArgs(**kw), ZERO_FIT, 80 * GIB)


# -- configs and logs ------------------------------------------------------------------------------
@pytest.mark.parametrize("model, kinds", [
    ("google/gemma-3-12b-it", {(sv.SLIDING, 1024): 40, (sv.FULL, None): 8}),
    ("google/gemma-2-2b-it", {(sv.SLIDING, 4096): 13, (sv.FULL, None): 13}),
    ("meta-llama/Llama-4-Scout-17B-16E-Instruct", {(sv.CHUNKED, 8192): 36, (sv.FULL, None): 12}),
    ("openai/gpt-oss-20b", {(sv.SLIDING, 128): 12, (sv.FULL, None): 12}),
    ("Qwen/Qwen2.5-7B-Instruct", {(sv.FULL, None): 28}),          # sliding_window without use_sliding_window
])
def test_layer_kinds_from_published_configs(model, kinds):
    shape = shape_for(_config(model), model, "bfloat16")
    counts = {}
    for k in shape.layer_kinds:
        counts[k] = counts.get(k, 0) + 1
    assert counts == kinds


def test_paging_reproduces_every_log_from_its_logged_budget():
    """Given the logged available KV memory, tokens and concurrency match each log to its rounding."""
    for run in load_runs()[:40]:
        model = run["model"]
        args = engine_args_of(run)
        shape = shape_for(_config(model), model, "bfloat16", args.tensor_parallel_size)
        fit = sv.Fit(run["activation_gib"], 0, 0, 0, 0, run["non_torch_gib"], 0, 0)
        shape = dataclasses.replace(shape, embedding_bytes=0, lm_head_bytes=0, vision_bytes=0, replicated_bytes=0,
                                    layer_bytes=run["weights_gib"] * GIB * args.tensor_parallel_size)
        a = sv.account(shape, args, fit, 81089 << 20)
        assert a.kv_cache_tokens == pytest.approx(run["kv_tokens"], rel=1e-3), run["log"]
        assert a.max_concurrency == pytest.approx(run["max_concurrency"], rel=1e-3), run["log"]


def test_committed_fit_is_what_the_fit_module_loads():
    """catalog/serving_fit.json is the fit of the committed logs: refitting reproduces every constant."""
    from multihead.fits.serving_fit import fit_rows, log_rows
    assert dataclasses.asdict(load_fit()) == dataclasses.asdict(fit_rows(log_rows()))


def test_unknown_attention_kind_is_refused():
    cfg = {"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 10,
           "layer_types": ["full_attention", "linear_attention"]}
    with pytest.raises(ValueError, match="linear_attention"):
        shape_for(cfg, "hybrid-linear", "bfloat16")


def test_vision_tower_and_rotary_cache_are_weights_the_engine_loads():
    """Gemma-3 12B: SigLIP (~417M) + projector, and a rotary cache of 131072 x 8 (linear scaling)
    + 131072 (local layers) positions x 256 x 2 B; its log says 23.31 GiB loaded."""
    cfg = _config("google/gemma-3-12b-it")
    assert 415e6 < sm.vision_tower_params(cfg) < 430e6
    shape = shape_for(cfg, "gemma-3-12b", "bfloat16")
    assert shape.replicated_bytes == (131072 * 8 + 131072) * 256 * 2
    assert shape.weight_bytes / GIB == pytest.approx(23.31, rel=0.01)
    scout = shape_for(_config("meta-llama/Llama-4-Scout-17B-16E-Instruct"), "scout", "bfloat16", 4)
    assert scout.replicated_bytes == 10485760 * 128 * 2           # llama3 scaling: max positions, unscaled
    assert sv.stage_weight_bytes(scout, sv.EngineArgs(tensor_parallel_size=4), range(48), 0) / GIB == \
        pytest.approx(53.12, rel=0.01)                            # its log, TP 4


def test_pipeline_stages_bind_at_the_fullest_stage():
    """PP: each stage sizes its own pool and the engine keeps the smallest block count; here the
    last stage holds the LM head, so it has the least room."""
    shape = dataclasses.replace(_shape([(sv.FULL, None)] * 12, kv=8, d=128, layer_gib=24.0),
                                embedding_bytes=1 * GIB, lm_head_bytes=4 * GIB)
    args = sv.EngineArgs(pipeline_parallel_size=3, gpu_memory_utilization=1.0)
    a = sv.account(shape, args, ZERO_FIT, 40 * GIB)
    assert a.weights_gib == pytest.approx(8 + 4)                     # 4 layers + the LM head
    page = 16 * 2 * 8 * 128 * 2
    assert a.num_gpu_blocks == int((40 - 12) * GIB // (page * 4))
    one = sv.account(dataclasses.replace(shape, lm_head_bytes=0), args, ZERO_FIT, 40 * GIB)
    assert one.num_gpu_blocks > a.num_gpu_blocks


def test_every_catalog_gpu_has_its_reported_physical_memory():
    """Each GPU of the planner's catalog has a physical-memory entry with its source, below the
    datasheet figure (the driver reserves some), and the issue's list of GPUs is there."""
    from multihead.catalog import entries
    from multihead.cost.time.device import GPU_MEMORY_JSON, catalog_gpu
    from multihead.cost.time.device import gpu_catalog as planner_gpus
    from multihead.cost.serving.answer import gpu_memory_bytes
    mem = entries(GPU_MEMORY_JSON)
    for name, entry in planner_gpus().items():
        key, total = gpu_memory_bytes(name)
        assert mem[key]["source"] and total < entry["memory_gb"] * 1.075e9, name
        assert total == catalog_gpu(name).reported_memory_bytes == mem[key]["bytes"], name    # one record
    wanted = {"H100-SXM", "H100-PCIe", "H100-NVL", "H200-SXM", "H20", "B200", "A100-40GB", "A100-80GB", "L40S",
              "L4", "A10G", "RTX-4090", "RTX-5090", "MI300X", "MI325X"}
    assert wanted <= set(mem) and wanted <= set(planner_gpus())
    assert gpu_memory_bytes("H100")[1] == 81089 << 20                 # 79.19 GiB, as the vLLM logs report
