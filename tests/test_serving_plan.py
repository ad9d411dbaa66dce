"""The serving account inside `multihead plan`: its own heading, its own JSON object, vLLM's flags."""
import json
import shlex

from multihead.cli import main

USER = ["plan", "Llama-3.1-70B", "--gpu", "H100-SXM", "--max-model-len", "131072"]


def _serving(capsys, argv):
    assert main(argv + ["--json"]) == 0
    return json.loads(capsys.readouterr().out)["serving"]


def test_plan_json_carries_the_serving_object(capsys):
    s = _serving(capsys, USER + ["--tensor-parallel-size", "4"])
    for key in ("kv_cache_tokens", "max_concurrency", "kv_cache_gib", "weights_gib", "activation_gib",
                "non_torch_gib", "max_model_len_fit"):
        assert key in s, key
    assert 2.5 <= s["max_concurrency"] <= 4.0 and s["max_model_len"] == 131072     # --tokens defaulted to it
    fp8 = _serving(capsys, USER + ["--tensor-parallel-size", "4", "--kv-cache-dtype", "fp8"])
    assert 6.0 <= fp8["max_concurrency"] <= 7.5


def test_gpus_and_memory_utilization_are_aliases_of_vllms_flags(capsys):
    a = _serving(capsys, USER + ["--gpus", "4", "--memory-utilization", "0.85"])
    b = _serving(capsys, USER + ["--tensor-parallel-size", "4", "--gpu-memory-utilization", "0.85"])
    assert a["kv_cache_tokens"] == b["kv_cache_tokens"] and a["gpu_memory_utilization"] == 0.85
    argv = shlex.split(b["command"]["text"])
    assert argv[argv.index("--gpu-memory-utilization") + 1] == "0.85"


def test_plan_text_has_a_serving_heading_and_the_command(capsys):
    assert main(USER + ["-tp", "4", "--emit", "sglang"]) == 0
    out = capsys.readouterr().out
    assert "Serving (vLLM v0.19 accounting, per GPU)" in out
    assert "python -m sglang.launch_server --model-path meta-llama/Llama-3.1-70B --tp-size 4" in out


def test_plan_refuses_more_stages_than_layers(capsys):
    assert main(USER + ["--pipeline-parallel-size", "81"]) == 2
    err = capsys.readouterr().err
    assert "pipeline-parallel-size" in err and "Traceback" not in err


def test_a_gpu_given_by_its_memory_gets_a_serving_account():
    from multihead import planner
    p = planner.plan("SmolLM2-135M", tokens=1024, gpu_memory_gb=8, effective_tflops=10, bandwidth_tbps=0.1)
    s = p.to_dict()["serving"]
    assert s["kv_cache_tokens"] > 0 and s["gpu"]          # a stated GPU: its memory is taken as physical
