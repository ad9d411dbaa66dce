"""Emitted launch commands parse back (shlex) into exactly the flags the plan chose."""
import shlex

import pytest

from multihead.engines import LaunchPlan, command


def _flags(argv: list[str]) -> dict[str, str]:
    out, i = {}, 0
    while i < len(argv):
        if argv[i].startswith("--"):
            out[argv[i]] = argv[i + 1]
            i += 2
        else:
            i += 1
    return out


PLAN = LaunchPlan("meta-llama/Llama-3.1-70B-Instruct", tensor_parallel_size=4, gpu_memory_utilization=0.9,
                  max_model_len=131072, max_num_batched_tokens=8192, max_num_seqs=6, kv_cache_dtype="fp8",
                  dtype="bfloat16", quantization="fp8", block_size=16)


def test_vllm_command_round_trips():
    cmd = command("vllm", PLAN)
    argv = shlex.split(cmd.line)
    assert argv[:3] == ["vllm", "serve", PLAN.model]
    assert _flags(argv) == {"--tensor-parallel-size": "4", "--pipeline-parallel-size": "1",
                            "--gpu-memory-utilization": "0.9", "--max-model-len": "131072",
                            "--max-num-batched-tokens": "8192", "--max-num-seqs": "6",
                            "--kv-cache-dtype": "fp8", "--dtype": "bfloat16", "--quantization": "fp8",
                            "--block-size": "16"}
    assert cmd.nodes == 1 and not cmd.setup


def test_sglang_command_uses_sglang_names():
    argv = shlex.split(command("sglang", PLAN).line)
    assert argv[:3] == ["python", "-m", "sglang.launch_server"]
    flags = _flags(argv)
    assert flags["--model-path"] == PLAN.model and flags["--tp-size"] == "4"
    assert flags["--context-length"] == "131072" and flags["--chunked-prefill-size"] == "8192"
    assert flags["--kv-cache-dtype"] == "fp8_e4m3" and flags["--max-running-requests"] == "6"
    assert flags["--page-size"] == "16" and flags["--mem-fraction-static"] == "0.9"


def test_multi_node_is_ray_for_vllm_and_nnodes_for_sglang():
    plan = LaunchPlan("deepseek-ai/DeepSeek-V3", tensor_parallel_size=8, pipeline_parallel_size=2, gpus_per_node=8)
    v = command("vllm", plan)
    assert v.nodes == 2 and "ray start --head --port=6379" in v.setup
    assert _flags(shlex.split(v.line))["--distributed-executor-backend"] == "ray"
    s = command("sglang", plan)
    flags = _flags(shlex.split(s.line))
    assert flags["--nnodes"] == "2" and flags["--node-rank"] == "0" and flags["--dist-init-addr"] == "$HEAD_IP:5000"


def test_model_names_with_shell_characters_are_quoted():
    cmd = command("vllm", LaunchPlan("/models/my model (v2)"))
    assert shlex.split(cmd.line)[2] == "/models/my model (v2)"


def test_unknown_engine_and_kv_dtype_are_refused():
    with pytest.raises(ValueError, match="emit"):
        command("tgi", PLAN)
    with pytest.raises(ValueError, match="kv-cache-dtype"):
        command("sglang", LaunchPlan("m", kv_cache_dtype="int8"))
