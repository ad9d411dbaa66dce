"""``multihead gpu-time MODEL``: one serving point from the inputs a user states, with 80% intervals."""
import json

import pytest

from multihead.cli import main


def _json(capsys, *argv):
    assert main(["gpu-time", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_point_has_times_intervals_and_inputs(capsys):
    out = _json(capsys, "Llama-3.1-8B", "--gpu", "H100-SXM", "--concurrency", "8", "--input-len", "1024",
                "--output-len", "256")
    for k in ("ttft_s", "tpot_s", "request_latency_s", "output_tokens_per_s"):
        assert out[f"{k}_low"] < out[f"{k}_high"] and out[k] > 0
    assert out["engine"] == "vllm" and out["version_family"] == "v1-async" and out["batching"] == "continuous"
    assert out["interval"]["level"] == 0.8


def test_engine_version_changes_the_family(capsys):
    new = _json(capsys, "Llama-3.1-8B", "--engine-version", "0.10.2")
    old = _json(capsys, "Llama-3.1-8B", "--engine-version", "0.6.3")
    assert (new["version_family"], old["version_family"]) == ("v1", "v0")
    assert new["tpot_s"] != old["tpot_s"]


def test_static_batching_prefills_together(capsys):
    cont = _json(capsys, "Llama-3.1-8B", "--concurrency", "16")
    stat = _json(capsys, "Llama-3.1-8B", "--concurrency", "16", "--batching", "static")
    assert stat["ttft_s"] > cont["ttft_s"]


def test_data_parallel_replicas_share_the_requests(capsys):
    one = _json(capsys, "Llama-3.1-8B", "--concurrency", "32")
    two = _json(capsys, "Llama-3.1-8B", "--concurrency", "32", "--data-parallel-size", "2")
    assert two["requests_per_replica"] == 16 and two["output_tokens_per_s"] > one["output_tokens_per_s"]


def test_expert_parallel_and_dp_attention(capsys):
    out = _json(capsys, "Qwen/Qwen3-30B-A3B", "-tp", "4", "--expert-parallel-size", "4", "--engine", "sglang",
                "--data-parallel-size", "4", "--enable-dp-attention", "--concurrency", "64")
    assert out["enable_dp_attention"] and out["tpot_s"] > 0


@pytest.mark.parametrize("argv, flag", [
    (["Llama-3.1-8B", "--expert-parallel-size", "2", "-tp", "2"], "expert-parallel-size"),
    (["Llama-3.1-8B", "--enable-dp-attention", "--engine", "sglang"], "enable-dp-attention"),
    (["Llama-3.1-8B", "--enable-dp-attention", "--data-parallel-size", "2", "-tp", "2"], "enable-dp-attention"),
    (["Llama-3.1-8B", "--engine-version", "newest"], "engine_version"),
    (["Qwen/Qwen3-30B-A3B", "-tp", "4", "--expert-parallel-size", "3"], "expert-parallel-size"),
])
def test_refusals_are_one_line_naming_the_flag(capsys, argv, flag):
    assert main(["gpu-time", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert flag in err and "\n" not in err and "Traceback" not in err


def test_plan_takes_batching_and_expert_parallel_size(capsys):
    base = ["plan", "Qwen/Qwen3-30B-A3B", "--gpu", "H100-SXM", "--gpus", "2", "--max-model-len", "4096",
            "--input-len", "1024", "--output-len", "1024", "--concurrency", "32", "--json"]
    runs = {}
    for extra in ([], ["--batching", "static"], ["--expert-parallel-size", "2"]):
        assert main([*base, *extra]) == 0
        runs[tuple(extra)] = json.loads(capsys.readouterr().out)["serving"]["at"]
    assert runs[("--batching", "static")]["ttft_s"] > runs[()]["ttft_s"]       # the batch's prompts together
    assert runs[("--expert-parallel-size", "2")]["tpot_s"] >= runs[()]["tpot_s"]  # the slowest GPU's experts
    assert runs[()]["ttft_s_low"] < runs[()]["ttft_s"] < runs[()]["ttft_s_high"]


def test_plan_refuses_expert_parallel_for_a_dense_model_by_name(capsys):
    assert main(["plan", "Llama-3.1-8B", "--gpu", "H100-SXM", "--gpus", "2", "--max-model-len", "4096",
                 "--expert-parallel-size", "2", "--json"]) == 2
    out = capsys.readouterr()          # refused (session 17's audit), no longer a plan without its times
    assert not out.out and "expert-parallel-size" in out.err and "no routed experts" in out.err
