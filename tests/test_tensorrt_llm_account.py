"""TensorRT-LLM's memory account (cost/serving/tensorrt_llm.py) and its trtllm-serve command."""
import json
import shlex

import pytest
from hypothesis import given, settings, strategies as st

from multihead.cli import main
from multihead.cost.serving import answer as S
from multihead.cost.serving import tensorrt_llm as T
from multihead.cost.serving.fitted import load_fit
from multihead.cost.serving.vllm import GIB
from multihead.cost.spec.lookup import find_model
from multihead.engines import LaunchPlan, command

LLAMA = find_model("Llama-2-70B")


def _req(**kw):
    base = dict(model=LLAMA.model_id, gpu="H100-SXM", tensor_parallel_size=4, max_model_len=4096, engine="tensorrt-llm")
    return S.Request(**{**base, **kw})


def test_hand_numbers_llama2_70b_4x_h100():
    a, dtype = S.serving_account(LLAMA.config, _req(), spec=LLAMA.spec)
    terms = {t["name"]: t["gib"] for t in a.terms}
    fit = load_fit()
    total = S.gpu_memory_bytes("H100-SXM")[1]
    weights = -terms["weights"] * GIB                 # fp16 70B over 4 GPUs
    assert 31.5 < weights / GIB < 32.5 and dtype == "float16"
    non_torch = (fit.non_torch_gib + fit.nccl_gib + fit.nccl_per_gpu_gib * 4) * GIB
    assert abs(-terms["non-torch"] * GIB - non_torch) < 1e-3 * GIB
    free = total - weights - (-terms["runtime workspace"] * GIB) - non_torch
    per_token = 80 * 2 * (8 // 4) * 128 * 2           # layers x K,V x KV heads per GPU x head_dim x fp16 = 81,920 B
    tokens = int(0.9 * free // per_token)
    blocks = -(-tokens // 32)
    assert a.num_gpu_blocks == blocks and a.kv_cache_tokens == blocks * 32
    assert a.max_concurrency == pytest.approx(blocks / (4096 // 32), abs=1e-3)
    assert abs(terms["free after load"] - free / GIB) < 1e-3


@settings(max_examples=25, deadline=None)
@given(st.floats(0.05, 0.95), st.floats(0.05, 0.95))
def test_tokens_monotonic_in_the_fraction(f1, f2):
    lo, hi = sorted((f1, f2))
    a_lo, _ = S.serving_account(LLAMA.config, _req(kv_cache_free_gpu_memory_fraction=lo), spec=LLAMA.spec)
    a_hi, _ = S.serving_account(LLAMA.config, _req(kv_cache_free_gpu_memory_fraction=hi), spec=LLAMA.spec)
    assert a_lo.num_gpu_blocks <= a_hi.num_gpu_blocks


def test_max_tokens_caps_the_pool():
    shape = __import__("multihead.cost.serving.shape", fromlist=["shape_for"]).shape_for(
        LLAMA.config, LLAMA.model_id, "fp16", 4, None, LLAMA.spec)
    a = T.account(shape, T.TRTLLMArgs(tp_size=4, max_seq_len=4096, max_tokens=100_000), load_fit(), 80 * GIB)
    assert a.kv_cache_tokens == -(-100_000 // 32) * 32


@pytest.mark.parametrize("version,family", [(None, "1.x"), ("1.0.0", "1.x"), ("v1.2.0rc1", "1.x"), ("0.12.0", "0.x"),
                                            ("0.9", "0.x"), ("0.x", "0.x")])
def test_versions(version, family):
    assert T.resolve(version) == family


@pytest.mark.parametrize("version", ["0.5.0", "2.0", "abc"])
def test_unknown_version_refused(version):
    with pytest.raises(ValueError, match="^engine-version: TensorRT-LLM"):
        T.resolve(version)


def test_sglang_flag_refused_by_name():
    with pytest.raises(ValueError, match="^mem-fraction-static: SGLang's flag"):
        S.serving_account(LLAMA.config, _req(mem_fraction_static=0.8), spec=LLAMA.spec)


def test_fraction_one_refused():
    with pytest.raises(ValueError, match="kv-cache-free-gpu-memory-fraction"):
        S.serving_account(LLAMA.config, _req(kv_cache_free_gpu_memory_fraction=1.0), spec=LLAMA.spec)


def test_command_flags_1x_and_0x():
    plan = LaunchPlan("m", tensor_parallel_size=4, gpu_memory_utilization=0.85, max_model_len=32768,
                      max_num_batched_tokens=8192, kv_cache_dtype="fp8", expert_parallel_size=4)
    c = command("tensorrt-llm", plan)
    argv = shlex.split(c.line)
    assert argv[:2] == ["trtllm-serve", "m"]
    for flag, value in (("--tp_size", "4"), ("--pp_size", "1"), ("--max_batch_size", "1024"),
                        ("--max_num_tokens", "8192"), ("--max_seq_len", "32768"),
                        ("--kv_cache_free_gpu_memory_fraction", "0.85"), ("--ep_size", "4"), ("--backend", "pytorch"),
                        ("--extra_llm_api_options", T_EXTRA)):
        assert argv[argv.index(flag) + 1] == value
    assert "--enable_chunked_prefill" in argv and "  dtype: fp8" in c.setup
    old = command("tensorrt-llm", LaunchPlan("m", tensor_parallel_size=2, max_model_len=4096, engine_version="0.12.0",
                                             kv_cache_dtype="fp8"))
    flags0 = [a for a in old.argv if a.startswith("--")]
    assert set(flags0) <= {"--tp_size", "--pp_size", "--max_batch_size", "--max_num_tokens", "--max_seq_len",
                           "--kv_cache_free_gpu_memory_fraction"}       # 0.18.2's trtllm-serve page
    assert "fp8 KV cache" in old.note


T_EXTRA = "extra_llm_api_options.yaml"


def test_plan_end_to_end_static(capsys):
    assert main(["plan", "Llama-2-70B", "--gpu", "H100", "--gpus", "4", "--engine", "tensorrt-llm", "--batching",
                 "static", "--concurrency", "64", "--input-len", "128", "--output-len", "128", "--json"]) == 0
    s = json.loads(capsys.readouterr().out)["serving"]
    assert s["engine"] == "tensorrt-llm" and s["engine_version"] == "1.x" and s["fits"]
    assert s["tensorrt_llm"]["free_gpu_memory_fraction"] == 0.9 and s["command"]["argv"][0] == "trtllm-serve"
    assert s["at"]["concurrency"] == 64 and s["at"]["ttft_s"] > 0 and s["at"]["tpot_s"] > 0


@pytest.mark.parametrize("engine", ["vllm", "sglang", "tensorrt-llm"])
def test_static_batching_reaches_the_time_model(engine, capsys):
    out = {}
    for b in ("continuous", "static"):
        assert main(["plan", "Llama-2-70B", "--gpu", "H100", "--gpus", "4", "--engine", engine, "--batching", b,
                     "--concurrency", "64", "--input-len", "128", "--output-len", "128", "--json"]) == 0
        out[b] = json.loads(capsys.readouterr().out)["serving"]["at"]
    assert out["static"]["ttft_s"] != out["continuous"]["ttft_s"]


def test_plan_refuses_sglang_flag_with_trtllm(capsys):
    assert main(["plan", "Llama-2-70B", "--gpu", "H100", "--gpus", "4", "--engine", "tensorrt-llm",
                 "--mem-fraction-static", "0.8"]) == 2
    assert "mem-fraction-static" in capsys.readouterr().err


def test_cli_fraction_range_is_the_open_interval(capsys):
    """The flag's own check says (0, 1), the range the account takes: 1 is refused there, in one line."""
    from multihead.cli import main
    assert main(["serving", "Llama-3.1-8B", "--engine", "tensorrt-llm", "--kv-cache-free-gpu-memory-fraction", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert "--kv-cache-free-gpu-memory-fraction" in err and "(0, 1)" in err and len(err.splitlines()) == 1
